//! The tools: their schemas, the CLI request each call deserialises into, and running it
//! through the CLI's own code paths. No command line is built and nothing is parsed twice: a
//! call's arguments become the CLI's argument structs in plain Rust
//! ([`verify::VerifyInput::into_args`] and its kin), checked by the functions the CLI calls.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::allow::{AllowList, Reads};
use super::release::ReleaseInput;
use super::stale::{RestartInput, StaleInput};
use super::verify::VerifyInput;
use super::{release, stale, verify};
use crate::cli::{ReleaseShowArgs, StaleArgs, VerifyArgs};
use crate::progress::ProgressSink;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Verify,
    ReleaseShow,
    Stale,
    RestartStale,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Verify => "verify",
            Tool::ReleaseShow => "release_show",
            Tool::Stale => "stale",
            Tool::RestartStale => "restart_stale",
        }
    }

    fn offered(allow_writes: bool) -> Vec<Tool> {
        let mut tools = vec![Tool::Verify, Tool::ReleaseShow, Tool::Stale];
        if allow_writes {
            tools.push(Tool::RestartStale);
        }
        tools
    }
}

/// A tool call, decoded: the CLI's own arguments for the command it runs.
#[derive(Debug)]
pub struct Call {
    tool: Tool,
    request: Request,
}

/// The CLI arguments a call stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Verify(Box<VerifyArgs>),
    ReleaseShow(Box<ReleaseShowArgs>),
    /// `stale`, and `stale --restart` for restart_stale.
    Stale(Box<StaleArgs>),
}

impl Call {
    /// Why this call may not run under the operator's `allowed` list: a kubeconfig, file,
    /// repository, `version_url` or `logs` it names that the list does not allow.
    pub fn refusal(&self, allowed: &AllowList) -> Option<String> {
        let reads = match &self.request {
            Request::Verify(args) => Reads::of_verify(args),
            Request::ReleaseShow(args) => Reads::of_release(args),
            Request::Stale(args) => Reads::of_stale(args),
        };
        allowed.refusal(&reads)
    }

    /// The command line this call stands for, for the server's log (no secret in it).
    fn shown(&self) -> String {
        match &self.request {
            Request::Verify(args) => verify::shown(args),
            Request::ReleaseShow(args) => release::shown(args),
            Request::Stale(args) => stale::shown(args),
        }
    }

    #[cfg(test)]
    pub fn request(&self) -> &Request {
        &self.request
    }
}

pub enum Prepared {
    Unknown,
    /// Not run: the message says why (bad arguments, writes not allowed).
    Refused(String),
    Ready(Call),
}

pub fn names(allow_writes: bool) -> Vec<&'static str> {
    Tool::offered(allow_writes)
        .into_iter()
        .map(Tool::name)
        .collect()
}

pub fn tool_error(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

fn tool_result(text: String, structured: Option<Value>) -> Value {
    let mut result = json!({"content": [{"type": "text", "text": text}], "isError": false});
    if let (Some(s), Some(object)) = (structured, result.as_object_mut()) {
        object.insert("structuredContent".into(), s);
    }
    result
}

pub fn prepare(name: &str, arguments: Value, allow_writes: bool) -> Prepared {
    let tool =
        match name {
            "verify" => Tool::Verify,
            "release_show" => Tool::ReleaseShow,
            "stale" => Tool::Stale,
            "restart_stale" if allow_writes => Tool::RestartStale,
            "restart_stale" => return Prepared::Refused(
                "restart_stale writes to the cluster (it restarts the stale workloads), and this \
                 server is read-only.\nhint: start the server with `liveproof mcp --allow-writes` \
                 to offer it; `stale` reports the same workloads without touching them"
                    .into(),
            ),
            _ => return Prepared::Unknown,
        };
    let request = match tool {
        Tool::Verify => decode::<VerifyInput>(tool, arguments)
            .and_then(VerifyInput::into_args)
            .map(|args| Request::Verify(Box::new(args))),
        Tool::ReleaseShow => decode::<ReleaseInput>(tool, arguments)
            .map(|input| Request::ReleaseShow(Box::new(input.into_args()))),
        Tool::Stale => decode::<StaleInput>(tool, arguments)
            .map(|input| Request::Stale(Box::new(input.into_args(None)))),
        Tool::RestartStale => decode::<RestartInput>(tool, arguments)
            .map(|input| Request::Stale(Box::new(input.into_args()))),
    };
    match request {
        Ok(request) => Prepared::Ready(Call { tool, request }),
        Err(message) => Prepared::Refused(message),
    }
}

/// The arguments as `T`, or which one is wrong and how, quoting no value given (a client may
/// have put anything there).
fn decode<T: DeserializeOwned + schemars::JsonSchema>(
    tool: Tool,
    arguments: Value,
) -> Result<T, String> {
    // A field the schema does not name is refused, as serde's `deny_unknown_fields` would
    // (which cannot be used with a flattened statement): never silently ignored.
    let schema = input_schema::<T>();
    if let (Some(given), Some(known)) = (arguments.as_object(), schema["properties"].as_object()) {
        if let Some(unknown) = given.keys().find(|k| !known.contains_key(*k)) {
            let mut names: Vec<&str> = known.keys().map(String::as_str).collect();
            names.sort_unstable();
            let hint = match liveproof_evidence::closest(unknown, names.iter().copied()) {
                Some(near) => format!("did you mean `{near}`? "),
                None => String::new(),
            };
            return Err(format!(
                "{} arguments: has the unknown field `{unknown}`\nhint: {hint}it takes {}",
                tool.name(),
                names.join(", ")
            ));
        }
    }
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let problem = liveproof_redacted::parse::data_problem(&e.inner().to_string());
        match e.path().to_string().as_str() {
            "." => format!("{} arguments: {problem}", tool.name()),
            field => format!("{} arguments: `{field}` {problem}", tool.name()),
        }
    })
}

/// Runs a call, reading a `version_url` only as `reach` allows; never fails: an error or even
/// a panic becomes an `isError` result, and the server keeps serving.
pub async fn run(
    call: Call,
    reach: &liveproof_gather::reach::Reach,
    structured: bool,
    progress: Option<ProgressSink>,
) -> Value {
    match AssertUnwindSafe(execute(&call, reach, structured, progress))
        .catch_unwind()
        .await
    {
        Ok(Ok(result)) => result,
        Ok(Err(message)) => tool_error(&message),
        Err(_) => {
            tracing::error!("{} panicked: liveproof {}", call.tool.name(), call.shown());
            tool_error(&format!(
                "internal error: {} failed unexpectedly (see the server's stderr); the server \
                 keeps serving",
                call.tool.name()
            ))
        }
    }
}

/// The CLI's words for an error: what `liveproof` prints after `error: `.
fn cli_error(err: &anyhow::Error) -> String {
    crate::error_text(err)
}

async fn execute(
    call: &Call,
    reach: &liveproof_gather::reach::Reach,
    structured: bool,
    progress: Option<ProgressSink>,
) -> Result<Value, String> {
    tracing::info!("{}: liveproof {}", call.tool.name(), call.shown());
    // What runs is the library, given the CLI's own arguments, checked as the CLI checks them
    // (clap's rules between them too); what comes back is its typed result.
    match &call.request {
        Request::Verify(args) => {
            // Parsing reads nothing; resolving reads files (`-f`, a kubeconfig) and runs git:
            // on a blocking thread, so one slow call never stalls the server's other calls.
            let request =
                crate::config::VerifyRequest::parse(args).map_err(|e| cli_error(&e.into()))?;
            let config = tokio::task::spawn_blocking(move || {
                request.resolve(liveproof_report::TextStyle::plain())
            })
            .await
            .map_err(|e| format!("internal error: {e}"))?
            .map_err(|e| cli_error(&e.into()))?;
            let config = crate::config::VerifyConfig {
                progress,
                version_reach: Some(reach.clone()),
                ..config
            };
            let report = crate::one_cluster::report(&config)
                .await
                .map_err(|e| cli_error(&e))?;
            let mut out = Vec::new();
            liveproof_report::render_json(&verify::masked(report), &mut out)
                .map_err(|e| format!("internal error: output: {e}"))?;
            json_result(out, structured)
        }
        Request::ReleaseShow(args) => {
            // Redacted values say they are never shown here: the tool has no --show-values.
            let text = crate::release::shown(args, liveproof_report::ValuesNote::NeverOverMcp)
                .await
                .map_err(|e| cli_error(&e))?;
            Ok(tool_result(text, None))
        }
        Request::Stale(args) => {
            let stale = crate::stale::check(args).await.map_err(|e| cli_error(&e))?;
            // `stale -o json` is one document, with `restart` after --restart.
            let mut out = Vec::new();
            liveproof_report::render_stale_json(&stale.rows, stale.restart.as_ref(), &mut out)
                .map_err(|e| format!("internal error: output: {e}"))?;
            json_result(out, structured)
        }
    }
}

/// The JSON the CLI printed: the text content as printed, and the parsed value as the
/// structured content.
fn json_result(out: Vec<u8>, structured: bool) -> Result<Value, String> {
    let text = String::from_utf8(out).map_err(|e| format!("internal error: output: {e}"))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("internal error: output: {e}"))?;
    Ok(tool_result(
        text.trim_end().to_string(),
        structured.then_some(value),
    ))
}

/// `tools/list`: each tool with its input schema, annotations and — when the protocol has
/// structured content — its output schema.
pub fn list(allow_writes: bool, structured: bool) -> Vec<Value> {
    Tool::offered(allow_writes)
        .into_iter()
        .map(|tool| {
            let (title, description, input, output, read_only) = describe(tool);
            let mut entry = json!({
                "name": tool.name(),
                "title": title,
                "description": description,
                "inputSchema": input,
                "annotations": {
                    "title": title,
                    "readOnlyHint": read_only,
                    "destructiveHint": !read_only,
                    "idempotentHint": read_only,
                    "openWorldHint": true,
                },
            });
            if let (true, Some(output), Some(object)) = (structured, output, entry.as_object_mut())
            {
                object.insert("outputSchema".into(), output);
            }
            entry
        })
        .collect()
}

type Description = (&'static str, &'static str, Value, Option<Value>, bool);

fn describe(tool: Tool) -> Description {
    match tool {
        Tool::Verify => (
            "Verify a change is live",
            "Collect the evidence that a change is live in Kubernetes and judge it: the same \
             liveproof/v1 report as `liveproof verify -o json`. verdict `live` only when \
             artifact evidence proves it (every serving pod on the current revision and started \
             after the change, every expectation given passed); `not_live` when a check failed; \
             `unproven` when evidence is missing (next_step says what to do); `superseded` when \
             the evidence shows a later change replaced it: not deployed as such, nothing to roll \
             back (the target's `superseded_by` names the later change and whether it is live; \
             next_step verifies it). Give the change as \
             `commit` or `since`, plus what it must show (`image`, `expect`, `chart_version`, \
             `expect_env`, `expect_secret_ref`). A live target carries `live_since` (when its \
             last serving pod became Ready, with a dated `timeline`); with a `commit` whose time \
             is known, a live report carries `lead_time_seconds`. A `version_url` is read only \
             under what the operator allowed (`liveproof mcp --allow-version-url`). Read-only.",
            input_schema::<VerifyInput>(),
            // The schema `liveproof schema` prints, derived from the report types.
            Some(crate::schema::report_schema()),
            true,
        ),
        Tool::ReleaseShow => (
            "Show an installed Helm release",
            "Decode an installed Helm release from its storage Secret/ConfigMap, without helm: \
             `liveproof release show`. section metadata (chart, version, status, times; the \
             default), manifest (the rendered manifest; rendered Secrets redacted), values \
             (always redacted over MCP) or history (every revision). Read-only.",
            input_schema::<ReleaseInput>(),
            None,
            true,
        ),
        Tool::Stale => (
            "Find stale workloads",
            "Compare the digest each pod runs with what its tag resolves to now (for the pod's \
             node platform): the rows of `liveproof stale -o json`. A rebuild pushed to the same \
             tag leaves the pod template unchanged, so the old build keeps serving; rows with \
             verdict `stale` are those workloads. Scope: `targets`, the workloads `manifests` \
             declares, or every workload in `namespace` (or all namespaces). Read-only.",
            input_schema::<StaleInput>(),
            Some(stale_schema(false)),
            true,
        ),
        Tool::RestartStale => (
            "Restart stale workloads",
            "WRITES to the cluster: `liveproof stale --restart`. Finds the stale workloads as \
             `stale` does and restarts only those (one PATCH of the pod template's \
             kubectl.kubernetes.io/restartedAt annotation each, as `kubectl rollout restart`); \
             nothing else is touched, and nothing at all when none is stale. Returns the rows \
             and, under `restart`, what was patched (or with dry_run, what would be). Verify \
             afterwards with `verify`.",
            input_schema::<RestartInput>(),
            Some(stale_schema(true)),
            false,
        ),
    }
}

/// A tool's input schema, derived from its typed arguments (their doc comments are the
/// descriptions; unknown fields are refused, as serde refuses them).
fn input_schema<T: schemars::JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(T).to_value();
    schema["additionalProperties"] = Value::Bool(false);
    schema
}

fn stale_schema(restart: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "schema": {"const": "liveproof/stale/v1"},
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string"},
                        "namespace": {"type": "string"},
                        "workload": {"type": "string"},
                        "container": {"type": "string"},
                        "image": {"type": "string"},
                        "running": {"type": "array", "items": {"type": "string"}},
                        "current": {"type": "array", "items": {"type": "string"}},
                        "platforms": {"type": "array", "items": {"type": "string"}},
                        "verdict": {"type": "string", "enum": ["stale", "unknown", "current"]},
                        "why": {"type": "string"},
                    },
                    "required": ["kind", "namespace", "workload", "container", "image", "verdict"],
                },
            },
        },
        "required": ["schema", "rows"],
    });
    if restart {
        let lines = json!({"type": "array", "items": {"type": "string"}});
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert(
                "restart".into(),
                json!({
                    "type": "object",
                    "properties": {
                        "dry_run": {"type": "boolean"},
                        "patched": lines,
                        "failed": lines,
                        "output": lines,
                    },
                    "required": ["dry_run", "patched", "failed", "output"],
                }),
            );
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.push("restart".into());
        }
    }
    schema
}

#[cfg(test)]
pub(in crate::mcp) mod tests {
    use super::*;

    /// The verify tool's description says what each verdict means, so an agent reading only it
    /// knows `superseded` is no failure and nothing to roll back.
    #[test]
    fn the_verify_description_names_every_verdict() {
        use liveproof_evidence::Verdict;
        let (_, description, ..) = describe(Tool::Verify);
        let verdicts = [
            Verdict::Live,
            Verdict::NotLive,
            Verdict::Unproven,
            Verdict::Superseded,
        ];
        // A verdict added later must be listed here (and so described): the match is exhaustive.
        for verdict in verdicts {
            match verdict {
                Verdict::Live | Verdict::NotLive | Verdict::Unproven | Verdict::Superseded => {}
            }
            let name = format!("`{}`", verdict.name());
            assert!(description.contains(&name), "{name} missing: {description}");
        }
        for said in [
            "superseded_by",
            "nothing to roll back",
            "not deployed as such",
        ] {
            assert!(description.contains(said), "{said} missing: {description}");
        }
    }

    /// The verify tool's `targets` description names every kind of the kind table, with its
    /// short names, as `verify --help` does.
    #[test]
    fn the_targets_description_names_every_kind_of_the_table() {
        let schema = input_schema::<VerifyInput>();
        let description = schema["properties"]["targets"]["description"]
            .as_str()
            .expect("a description");
        for kind in liveproof_evidence::KINDS {
            for name in std::iter::once(&kind.cli_name).chain(kind.short) {
                assert!(
                    description.contains(name),
                    "{name} missing from: {description}"
                );
            }
        }
    }

    pub(in crate::mcp) fn ready(name: &str, arguments: Value) -> Call {
        match prepare(name, arguments, true) {
            Prepared::Ready(call) => call,
            Prepared::Refused(m) => panic!("refused: {m}"),
            Prepared::Unknown => panic!("unknown tool {name}"),
        }
    }

    /// The verify arguments a call deserialised into.
    pub(in crate::mcp) fn verify_args(call: &Call) -> &VerifyArgs {
        match call.request() {
            Request::Verify(args) => args,
            other => panic!("not verify: {other:?}"),
        }
    }

    fn stale_args(call: &Call) -> &StaleArgs {
        match call.request() {
            Request::Stale(args) => args,
            other => panic!("not stale: {other:?}"),
        }
    }

    /// A reach that reads nothing: what the server has without `--allow-version-url`.
    fn nowhere() -> liveproof_gather::reach::Reach {
        liveproof_gather::reach::Reach::allow_list(Vec::new())
    }

    #[test]
    fn values_can_never_become_flags() {
        let call = ready(
            "verify",
            json!({"targets": ["--from=/etc", "deploy/a"], "since": "--wait", "namespace": "apps"}),
        );
        let args = verify_args(&call);
        assert_eq!(args.targets, ["--from=/etc", "deploy/a"]);
        assert_eq!(args.change.since.as_deref(), Some("--wait"));
        assert!(args.from.is_none() && !args.wait);
        assert_eq!(args.output, liveproof_report::Format::Json);
    }

    #[test]
    fn verify_takes_a_selector_instead_of_targets() {
        let call = ready(
            "verify",
            json!({"selector": "app.kubernetes.io/part-of=shop", "namespace": "shop", "since": "30m"}),
        );
        let args = verify_args(&call);
        assert_eq!(
            args.selector.as_deref(),
            Some("app.kubernetes.io/part-of=shop")
        );
        assert!(args.targets.is_empty());
        assert!(crate::config::VerifyRequest::parse(args).is_ok());
        // Neither targets nor a selector: the CLI's own refusal, in clap's words.
        let call = ready("verify", json!({"since": "30m"}));
        let refused = crate::config::VerifyRequest::parse(verify_args(&call))
            .expect_err("refused")
            .to_string();
        assert_eq!(
            refused,
            "the following required arguments were not provided:\n  <TARGET>..."
        );
    }

    /// A `version_url` outside the operator's allow-list is refused before anything is sent,
    /// the URL shown with its credentials masked, saying how the operator allows one.
    #[test]
    fn a_version_url_is_refused_unless_allowed() {
        use liveproof_gather::reach::{AllowedUrl, Reach};
        let allowing = |reach: Reach| AllowList {
            kubeconfigs: Vec::new(),
            roots: Vec::new(),
            reach,
            logs: false,
        };
        let call = ready(
            "verify",
            json!({"targets": ["deploy/web"], "since": "1h",
                   "version_url": ["https://ops:s3cret@status.example.com/version?token=s3cret"],
                   "expect_version": ["1.4.0"]}),
        );
        let why = call.refusal(&allowing(nowhere())).expect("refused");
        assert!(why.contains("--allow-version-url"), "{why}");
        assert!(!why.contains("s3cret"), "{why}");
        let allowed = |entry: &str| {
            allowing(Reach::allow_list(vec![
                AllowedUrl::parse(entry).expect("an entry")
            ]))
        };
        assert_eq!(call.refusal(&allowed("status.example.com")), None);
        assert!(call
            .refusal(&allowed("https://status.example.com/v2"))
            .is_some());
        // No version_url: nothing to refuse.
        let plain = ready("verify", json!({"targets": ["deploy/web"], "since": "1h"}));
        assert_eq!(plain.refusal(&allowing(nowhere())), None);
    }

    #[test]
    fn release_show_never_shows_values() {
        let call = ready(
            "release_show",
            json!({"name": "inventory", "section": "values"}),
        );
        let Request::ReleaseShow(args) = call.request() else {
            panic!("not release show")
        };
        assert!(args.values && !args.show_values);
        assert!(!args.manifest && !args.metadata && !args.history);
    }

    #[test]
    fn restart_stale_is_stale_restart() {
        let call = ready(
            "restart_stale",
            json!({"targets": ["apps/deploy/bot"], "dry_run": true}),
        );
        let args = stale_args(&call);
        assert!(args.restart && args.dry_run);
        let call = ready("stale", json!({"namespace": "bots"}));
        assert!(!stale_args(&call).restart);
    }

    #[test]
    fn wait_is_bounded() {
        assert!(matches!(
            prepare(
                "verify",
                json!({"targets": ["deploy/a"], "wait_seconds": 100_000}),
                false
            ),
            Prepared::Refused(_)
        ));
        let call = ready(
            "verify",
            json!({"targets": ["deploy/a"], "wait_seconds": 30}),
        );
        let args = verify_args(&call);
        assert!(args.wait);
        assert_eq!(args.timeout, "30s");
    }

    /// The server's log line says the command a call stands for, and never an `expect_env`
    /// value (a mistake the call is refused for: the value can be the secret itself).
    #[test]
    fn the_call_log_shows_the_command_line_without_a_value() {
        let call = ready(
            "verify",
            json!({"targets": ["deploy/a"], "namespace": "apps", "since": "1h",
                   "expect_env": ["DB_PASSWORD=canary-f00d"], "wait_seconds": 30}),
        );
        let shown = call.shown();
        assert_eq!(
            shown,
            "verify --output=json --namespace=apps --timeout=30s --since=1h \
             --expect-env=DB_PASSWORD=*** --wait -- deploy/a"
        );
    }

    #[tokio::test]
    async fn bad_input_is_a_tool_error_with_the_cli_message() {
        let result = run(
            ready("verify", json!({"targets": ["pod/x"]})),
            &nowhere(),
            true,
            None,
        )
        .await;
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().expect("text");
        let expected = liveproof_evidence::hint::Hinted::with_hint(
            &liveproof_evidence::Target::parse("pod/x").expect_err("pod is no target kind"),
        )
        .to_string();
        assert_eq!(text, expected);

        let result = run(
            ready(
                "verify",
                json!({"targets": ["deploy/x"], "since": "yesterday", "from": "/nonexistent"}),
            ),
            &nowhere(),
            true,
            None,
        )
        .await;
        let text = result["content"][0]["text"].as_str().expect("text");
        assert!(text.starts_with("--since `yesterday`"), "{text}");

        // What clap refuses on the command line is refused in its words, without the
        // terminal's help pointer.
        let result = run(
            ready(
                "verify",
                json!({"targets": ["deploy/x"], "from": "/tmp", "since": "-5m"}),
            ),
            &nowhere(),
            true,
            None,
        )
        .await;
        let text = result["content"][0]["text"].as_str().expect("text");
        assert!(text.contains("-5m"), "{text}");
        assert!(!text.contains("For more information"), "{text}");
        let result = run(
            ready(
                "verify",
                json!({"targets": ["deploy/x"], "from": "/tmp", "since": "1h", "wait_seconds": 5}),
            ),
            &nowhere(),
            true,
            None,
        )
        .await;
        let text = result["content"][0]["text"].as_str().expect("text");
        assert!(
            text.starts_with("the argument '--wait' cannot be used with '--from <PATH>'")
                || text.starts_with("the argument '--from <PATH>' cannot be used with '--wait'"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn offline_verify_is_the_cli_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dump = dir.path().join("empty.yaml");
        std::fs::write(&dump, "apiVersion: v1\nkind: List\nitems: []\n").expect("write");
        let result = run(
            ready(
                "verify",
                json!({"targets": ["apps/deploy/inventory"], "from": dump, "since": "2026-07-12T10:00:00Z"}),
            ),
            &nowhere(),
            true,
            None,
        )
        .await;
        assert_eq!(result["isError"], false, "{result}");
        let structured = &result["structuredContent"];
        assert_eq!(structured["schema"], "liveproof/v1");
        let text = result["content"][0]["text"].as_str().expect("text");
        let parsed: Value = serde_json::from_str(text).expect("text is the JSON");
        assert_eq!(&parsed, structured);
        // Without structured content (protocol before 2025-06-18) the text still carries it.
        let result = run(
            ready(
                "verify",
                json!({"targets": ["apps/deploy/inventory"], "from": dump}),
            ),
            &nowhere(),
            false,
            None,
        )
        .await;
        assert!(result.get("structuredContent").is_none());
    }
}

#[cfg(test)]
mod schema_tests {
    use super::*;
    use crate::cli::ChangeArgs;
    use tests::{ready, verify_args};

    /// The input schemas are derived from the typed inputs: every field described, unknown
    /// fields refused, the bounds the inputs enforce stated.
    #[test]
    fn input_schemas_come_from_the_typed_inputs() {
        for tool in Tool::offered(true) {
            let (_, _, input, _, _) = describe(tool);
            assert_eq!(input["type"], "object", "{}", tool.name());
            assert_eq!(input["additionalProperties"], false, "{}", tool.name());
            let properties = input["properties"].as_object().expect("properties");
            for (name, property) in properties {
                assert!(
                    property["description"]
                        .as_str()
                        .is_some_and(|d| !d.is_empty()),
                    "{}.{name} has no description: {property}",
                    tool.name()
                );
            }
        }
        let verify = input_schema::<VerifyInput>();
        // Targets, a selector or both: the CLI refuses neither (tested above), as schemas
        // cannot say "one of" without a schema of their own.
        assert!(verify["properties"].get("targets").is_some());
        assert!(verify["properties"].get("selector").is_some());
        assert_eq!(
            verify["properties"]["wait_seconds"]["maximum"],
            super::verify::MAX_WAIT_SECONDS
        );
        assert_eq!(
            verify["properties"]["logs"]["maximum"],
            super::verify::MAX_LOG_LINES
        );
        let release = input_schema::<ReleaseInput>();
        assert!(release["properties"].get("show_values").is_none());
        assert_eq!(release["required"], json!(["name"]));
        let restart = input_schema::<RestartInput>();
        assert!(restart["properties"].get("dry_run").is_some());
        assert!(input_schema::<StaleInput>()["properties"]
            .get("dry_run")
            .is_none());
    }

    /// Every argument `liveproof verify` takes is a field of the verify tool, or is named in
    /// [`VERIFY_NOT_OVER_MCP`] with the reason it is not: a statement added to the CLI and
    /// forgotten here fails this test, so an agent can state every change a person can.
    ///
    /// [`VERIFY_NOT_OVER_MCP`]: super::verify::VERIFY_NOT_OVER_MCP
    #[test]
    fn the_verify_tool_takes_every_statement_the_cli_takes() {
        use super::verify::VERIFY_NOT_OVER_MCP;
        use clap::CommandFactory as _;
        let cli = crate::cli::Cli::command();
        let verify = cli.find_subcommand("verify").expect("verify");
        let schema = input_schema::<VerifyInput>();
        let properties = schema["properties"].as_object().expect("properties");
        let mut missing = Vec::new();
        for arg in verify.get_arguments() {
            let id = arg.get_id().as_str();
            // `-n/-A/--kubeconfig/--context` and the change statement are spelt like clap's
            // ids, the fleet's repeated `--context` as one `context`; targets as `targets`.
            let field = id;
            let excused = VERIFY_NOT_OVER_MCP.iter().any(|(name, _)| *name == id);
            if !properties.contains_key(field) && !excused {
                missing.push(id.to_string());
            }
        }
        assert!(
            missing.is_empty(),
            "verify arguments the MCP tool lacks: {missing:?}"
        );
        // And each excuse is still about an argument the CLI has.
        for (name, _) in VERIFY_NOT_OVER_MCP {
            assert!(
                verify.get_arguments().any(|a| a.get_id() == *name),
                "{name} is excused but the CLI has no such argument"
            );
        }
        // The new statements reach the CLI's arguments as the CLI holds them.
        let call = ready(
            "verify",
            json!({"targets": ["deploy/web"], "manifests": ["k8s/web.yaml"],
                   "version_url": ["https://web.example/version"], "expect_version": ["1.4.0"],
                   "version_json": [".version"], "max_release_size": 1024,
                   "request_timeout": "5s", "logs": 40}),
        );
        let args = verify_args(&call);
        assert_eq!(args.manifests, [std::path::PathBuf::from("k8s/web.yaml")]);
        assert_eq!(args.change.version_url, ["https://web.example/version"]);
        assert_eq!(args.change.expect_version, ["1.4.0"]);
        assert_eq!(args.change.version_json, [".version"]);
        assert_eq!(args.max_release_size, 1024);
        assert_eq!(args.cluster.request_timeout, "5s");
        assert_eq!(args.logs, Some(40));
    }

    /// The verify tool's change statement is the CLI's own type: what an agent states reaches
    /// the CLI's arguments unchanged, every field, and a misspelt field is refused with the
    /// nearest name, never ignored.
    #[test]
    fn the_change_statement_is_the_clis_own_type() {
        let statement = json!({
            "since": "2026-07-12T10:00:00Z", "commit": "HEAD", "repo": "/src/app",
            "image": ["ghcr.io/acme/web:1.4.0"], "expect_env": ["DB_URL"],
            "expect_secret_ref": ["web-db/password"], "chart_version": "1.2.3",
            "expect": ["--wait"], "check_digests": true, "insecure_registry": ["reg.local:5000"],
            "version_url": ["https://web.example/version"], "expect_version": ["1.4.0"],
            "version_json": [".version"],
        });
        let stated: ChangeArgs = serde_json::from_value(statement.clone()).expect("a statement");
        let mut arguments = statement;
        arguments["targets"] = json!(["release/web"]);
        let call = ready("verify", arguments);
        assert_eq!(verify_args(&call).change, stated);

        let Prepared::Refused(message) = prepare(
            "verify",
            json!({"targets": ["deploy/web"], "sinse": "1h"}),
            false,
        ) else {
            panic!("a misspelt field was taken")
        };
        assert!(
            message.contains("unknown field `sinse`") && message.contains("did you mean `since`?"),
            "{message}"
        );
        // restart_stale (stale's scope flattened in) refuses a misspelt field the same way:
        // a `dryrun` taken silently would restart for real.
        let Prepared::Refused(message) = prepare(
            "restart_stale",
            json!({"targets": ["deploy/web"], "dryrun": true}),
            true,
        ) else {
            panic!("a misspelt dry_run was taken")
        };
        assert!(message.contains("did you mean `dry_run`?"), "{message}");
    }
}
