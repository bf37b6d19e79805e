//! The tools: their schemas, the command line each call stands for, and running it through
//! the CLI's own code paths.

use std::panic::AssertUnwindSafe;

use clap::Parser;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::cli::{ChangeArgs, Cli, Command, ReleaseCommand};
use crate::progress::ProgressSink;

/// The longest `wait_seconds` accepted: an agent's call should not hold a session for hours.
const MAX_WAIT_SECONDS: u64 = 3600;

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

/// A validated tool call: the liveproof command line it runs.
#[derive(Debug)]
pub struct Call {
    tool: Tool,
    argv: Vec<String>,
    /// What a `version_url` read may reach; nothing until [`Call::reaching`] says.
    reach: Option<liveproof_gather::reach::Reach>,
}

impl Call {
    /// Why this call may not run with the kubeconfig it names, if it names one outside
    /// `allowed` (canonical paths). The path is not echoed beyond what the caller sent, and the
    /// file is never opened.
    pub fn kubeconfig_refusal(&self, allowed: &[std::path::PathBuf]) -> Option<String> {
        let given = self
            .argv
            .iter()
            .find_map(|a| a.strip_prefix("--kubeconfig="))?;
        let canonical = std::fs::canonicalize(given).ok();
        if canonical.is_some_and(|c| allowed.contains(&c)) {
            return None;
        }
        Some(format!(
            "kubeconfig `{given}` is not one this server was started with: a tool call may name \
             only the operator's kubeconfigs ($KUBECONFIG, ~/.kube/config, or `liveproof mcp \
             --kubeconfig PATH`)\nhint: leave `kubeconfig` out to use the server's default, or \
             ask the operator to start the server with --kubeconfig {given}"
        ))
    }
}

impl Call {
    /// Why this call may not read a `version_url` it names: one `reach` (the operator's
    /// `--allow-version-url`) does not allow. Nothing is sent; the URL is shown with its
    /// credentials masked. (Redirects and the addresses a name resolves to are held to the
    /// same rule when it is read.)
    pub fn version_url_refusal(&self, reach: &liveproof_gather::reach::Reach) -> Option<String> {
        self.argv
            .iter()
            .filter_map(|a| a.strip_prefix("--version-url="))
            .find_map(|given| {
                // One that is no URL is the CLI's to refuse, in its words.
                let url = url::Url::parse(given).ok()?;
                let why = reach.refusal(&url)?;
                Some(format!(
                    "`version_url` `{}` is refused: {why}\nhint: leave `version_url` out, or ask \
                     the operator to start the server with `liveproof mcp --allow-version-url \
                     URL` naming the endpoint (a URL prefix or a host; a link-local or cloud \
                     metadata address only when named itself)",
                    liveproof_redacted::DisplaySafeUrl::new(given)
                ))
            })
    }

    /// This call, reading a `version_url` only as `reach` allows.
    pub fn reaching(mut self, reach: &liveproof_gather::reach::Reach) -> Call {
        self.reach = Some(reach.clone());
        self
    }
}

impl Call {
    /// Why this call may not read the files it names (`from`, `manifests`, the git `repo`), if
    /// any of them is outside `roots` (canonical paths, `liveproof mcp --allow-from`): the path itself, or
    /// for a directory any manifest in it, after symlinks are followed. Nothing is read.
    pub fn files_refusal(&self, roots: &[std::path::PathBuf]) -> Option<String> {
        // Every path given: `manifests` is a list over verify, and each of its paths counts.
        let given = [("from", "--from="), ("manifests", "--filename=")]
            .into_iter()
            .flat_map(|(argument, flag)| {
                self.argv
                    .iter()
                    .filter_map(move |a| Some((argument, a.strip_prefix(flag)?)))
            });
        for (argument, given) in given {
            if roots.is_empty() {
                return Some(format!(
                    "`{argument}` names files, and this server reads none: it was started without \
                     --allow-from\nhint: leave `{argument}` out to read the cluster, or ask the \
                     operator to start the server with `liveproof mcp --allow-from DIR` for the \
                     directory that holds the manifests"
                ));
            }
            let inside = |path: &std::path::Path| {
                std::fs::canonicalize(path).is_ok_and(|c| roots.iter().any(|r| c.starts_with(r)))
            };
            // A directory is read recursively, a symlinked file in it followed: each counts.
            let files = liveproof_gather::offline::manifest_files(std::path::Path::new(given));
            if !inside(std::path::Path::new(given)) || !files.iter().all(|f| inside(f)) {
                return Some(format!(
                    "`{argument}` `{given}` is not under a directory this server was started with \
                     (--allow-from), or does not exist: a tool call may read only there\nhint: \
                     name a file under {}, or ask the operator to add its directory with \
                     --allow-from",
                    roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        // `repo` is where git runs (commit times, ancestry, manifests as of a commit): under
        // the same roots, or the server's own directory when it is left out.
        if let Some(given) = self.argv.iter().find_map(|a| a.strip_prefix("--repo=")) {
            let inside =
                std::fs::canonicalize(given).is_ok_and(|c| roots.iter().any(|r| c.starts_with(r)));
            if !inside {
                return Some(format!(
                    "`repo` `{given}` is not under a directory this server was started with \
                     (--allow-from), or does not exist: git runs only there\nhint: leave `repo` \
                     out to use the server's own directory, or ask the operator to add the \
                     repository's directory with --allow-from"
                ));
            }
        }
        None
    }
}

/// The kubeconfigs tool calls may name: those given to `liveproof mcp --kubeconfig`, the files
/// `KUBECONFIG` lists, and `~/.kube/config` — each that exists, canonical.
pub fn allowed_kubeconfigs(given: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut candidates: Vec<std::path::PathBuf> = given.to_vec();
    if let Some(list) = std::env::var_os("KUBECONFIG") {
        candidates.extend(std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(std::path::Path::new(&home).join(".kube/config"));
    }
    candidates
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect()
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
    let argv = match tool {
        Tool::Verify => decode::<VerifyInput>(tool, arguments).and_then(|i| i.argv()),
        Tool::ReleaseShow => decode::<ReleaseInput>(tool, arguments).map(|i| i.argv()),
        Tool::Stale => decode::<StaleInput>(tool, arguments).map(|i| i.argv(None)),
        Tool::RestartStale => decode::<RestartInput>(tool, arguments).map(RestartInput::argv),
    };
    match argv {
        Ok(argv) => Prepared::Ready(Call {
            tool,
            argv,
            reach: None,
        }),
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

/// Runs a call; never fails: an error or even a panic becomes an `isError` result, and the
/// server keeps serving.
pub async fn run(call: Call, structured: bool, progress: Option<ProgressSink>) -> Value {
    match AssertUnwindSafe(execute(&call, structured, progress))
        .catch_unwind()
        .await
    {
        Ok(Ok(result)) => result,
        Ok(Err(message)) => tool_error(&message),
        Err(_) => {
            tracing::error!(
                "{} panicked: liveproof {}",
                call.tool.name(),
                shown(&call.argv)
            );
            tool_error(&format!(
                "internal error: {} failed unexpectedly (see the server's stderr); the server \
                 keeps serving",
                call.tool.name()
            ))
        }
    }
}

/// A call's command line for the server's log, its program name left out: an
/// `--expect-env NAME=VALUE` (a mistake the call is refused for) shows the name alone, as
/// the value can be the secret itself.
fn shown(argv: &[String]) -> String {
    argv.iter()
        .skip(1)
        .map(|word| match word.strip_prefix("--expect-env=") {
            Some(env) if env.contains('=') => {
                let name = env.split_once('=').map_or(env, |(name, _)| name);
                format!("--expect-env={name}=***")
            }
            _ => word.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The CLI's words for an error: what `liveproof` prints after `error: `.
fn cli_error(err: &anyhow::Error) -> String {
    crate::error_text(err)
}

async fn execute(
    call: &Call,
    structured: bool,
    progress: Option<ProgressSink>,
) -> Result<Value, String> {
    tracing::info!("{}: liveproof {}", call.tool.name(), shown(&call.argv));
    // clap validates the call as the CLI would (its flag rules and messages); what runs then is
    // the library, and what comes back is its typed result.
    let cli = Cli::try_parse_from(&call.argv).map_err(|e| clap_message(&e))?;
    match cli.command {
        Command::Verify(args) => {
            // Parsing reads nothing; resolving reads files (`-f`, a kubeconfig) and runs git:
            // on a blocking thread, so one slow call never stalls the server's other calls.
            let request =
                crate::config::VerifyRequest::parse(&args).map_err(|e| cli_error(&e.into()))?;
            let config = tokio::task::spawn_blocking(move || {
                request.resolve(liveproof_report::TextStyle::plain())
            })
            .await
            .map_err(|e| format!("internal error: {e}"))?
            .map_err(|e| cli_error(&e.into()))?;
            // Fail closed: a call no reach was given to reads no URL.
            let reach = call
                .reach
                .clone()
                .unwrap_or_else(|| liveproof_gather::reach::Reach::allow_list(Vec::new()));
            let config = crate::config::VerifyConfig {
                progress,
                version_reach: Some(reach),
                ..config
            };
            let report = crate::verifier::report(&config)
                .await
                .map_err(|e| cli_error(&e))?;
            let mut out = Vec::new();
            liveproof_report::render_json(&report, &mut out)
                .map_err(|e| format!("internal error: output: {e}"))?;
            json_result(out, structured)
        }
        Command::Release(ReleaseCommand::Show(args)) => {
            // Redacted values say they are never shown here: the tool has no --show-values.
            let text = crate::release::shown(&args, liveproof_report::ValuesNote::NeverOverMcp)
                .await
                .map_err(|e| cli_error(&e))?;
            Ok(tool_result(text, None))
        }
        Command::Stale(args) => {
            let stale = crate::stale::check(&args)
                .await
                .map_err(|e| cli_error(&e))?;
            // `stale -o json` is one document, with `restart` after --restart.
            let mut out = Vec::new();
            liveproof_report::render_stale_json(&stale.rows, stale.restart.as_ref(), &mut out)
                .map_err(|e| format!("internal error: output: {e}"))?;
            json_result(out, structured)
        }
        _ => Err(format!(
            "internal error: {} built an unexpected command line",
            call.tool.name()
        )),
    }
}

/// clap's message without its usage and help-pointer lines (they name a terminal's --help).
fn clap_message(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let kept: Vec<&str> = rendered
        .lines()
        .filter(|l| !l.starts_with("For more information"))
        .collect();
    let text = kept.join("\n");
    text.trim()
        .strip_prefix("error: ")
        .unwrap_or(text.trim())
        .to_string()
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

/// A command line, built so no value can be read as a flag: options as `--flag=value`,
/// positional arguments after `--`.
struct Argv(Vec<String>);

impl Argv {
    fn new(words: &[&str]) -> Argv {
        Argv(
            std::iter::once("liveproof")
                .chain(words.iter().copied())
                .map(str::to_string)
                .collect(),
        )
    }

    fn opt(&mut self, flag: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.0.push(format!("--{flag}={v}"));
        }
    }

    fn each(&mut self, flag: &str, values: &[String]) {
        for v in values {
            self.opt(flag, Some(v));
        }
    }

    fn flag(&mut self, flag: &str, on: bool) {
        if on {
            self.0.push(format!("--{flag}"));
        }
    }

    fn positional(mut self, values: &[String]) -> Vec<String> {
        if !values.is_empty() {
            self.0.push("--".into());
            self.0.extend(values.iter().cloned());
        }
        self.0
    }
}

/// Cluster access, as kubectl: `-n`, `-A`, `--kubeconfig`, `--context`.
fn cluster(
    argv: &mut Argv,
    namespace: Option<&str>,
    all_namespaces: bool,
    kubeconfig: Option<&str>,
    context: Option<&str>,
) {
    argv.opt("namespace", namespace);
    argv.flag("all-namespaces", all_namespaces);
    argv.opt("kubeconfig", kubeconfig);
    argv.opt("context", context);
}

/// `verify`'s arguments.
// Not `deny_unknown_fields` (serde cannot with `flatten`): `decode` refuses a field the schema
// does not have instead.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
struct VerifyInput {
    /// What to verify: KIND/NAME or NAMESPACE/KIND/NAME. Kinds: deployment (deploy),
    /// statefulset (sts), daemonset (ds), rollout (ro, Argo Rollouts), release (a Helm release, read from its storage),
    /// helmrelease (hr, Flux), kustomization (ks, Flux), application (app, Argo CD), canary
    /// (Flagger), ksvc (kservice, Knative). A Helm or GitOps target is followed to the workloads
    /// it installs, a Canary to its `-primary`, a Knative Service to its latest revision's
    /// Deployment, and those are verified too.
    /// May be empty when `selector` is given.
    #[serde(default)]
    targets: Vec<String>,
    /// A label selector, as `kubectl get -l` takes it (app=web, env in (prod,staging)): every
    /// Deployment, StatefulSet and DaemonSet it matches in `namespace` (or every namespace
    /// with `all_namespaces`) is verified too. One matching nothing is an error.
    selector: Option<String>,
    /// Namespace for targets that name none (default: the kubeconfig context's).
    namespace: Option<String>,
    /// Look targets that name no namespace up in every namespace.
    #[serde(default)]
    all_namespaces: bool,
    /// The change: when, which commit, and what must be running. The same statement, with the
    /// same names, as `liveproof verify`'s flags (`since` is `--since`, `expect_env` is
    /// `--expect-env`, ...).
    #[serde(flatten)]
    change: ChangeArgs,
    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    context: Option<String>,
    /// Offline: read objects from this file or directory of YAML/JSON (what `kubectl get -o
    /// yaml` prints) instead of a cluster. Objects it lacks make their checks unknown.
    from: Option<String>,
    /// Manifests (files or directories of YAML/JSON, on the server's machine, under its
    /// --allow-from directories) that state the change: each workload they declare must run
    /// its declared template.
    #[serde(default)]
    manifests: Vec<String>,
    /// With a directory in `manifests`: every directory under it too (kubectl's -R); without
    /// it only the directory's top level is read.
    #[serde(default)]
    recursive: bool,
    /// Largest decoded Helm release accepted, in bytes (default 64 MiB, at most 512 MiB).
    #[schemars(range(min = 1, max = 536_870_912))]
    max_release_size: Option<u64>,
    /// Bound on each request to the API server or a registry, e.g. 30s.
    request_timeout: Option<String>,
    /// Watch up to this many seconds until the verdict is live or superseded, or a failure is
    /// final (0: judge once).
    #[schemars(range(max = 3600))]
    wait_seconds: Option<u64>,
}

/// The CLI's verify arguments the verify tool does not take, and why: the drift test holds
/// every other one to a field of [`VerifyInput`].
#[cfg(test)]
const VERIFY_NOT_OVER_MCP: &[(&str, &str)] = &[
    ("output", "the tool always answers JSON"),
    ("report", "writes a file; the tool returns the report"),
    ("report_format", "goes with report"),
    (
        "record",
        "appends to a file on the server's machine; the report carries live_since and the lead time",
    ),
    ("wait", "wait_seconds says both whether and how long"),
    ("timeout", "wait_seconds says both whether and how long"),
    (
        "logs",
        "container logs can hold anything, secrets included; a client reads them with kubectl",
    ),
    (
        "snapshot",
        "a snapshot directory is state kept between two commands on one machine",
    ),
    (
        "all_contexts",
        "one cluster a call; a fleet is one call per context",
    ),
    ("max_concurrency", "goes with all_contexts"),
    (
        "kustomize",
        "runs kubectl on the server's machine; a client builds it (`kubectl kustomize DIR`) and names the output in `manifests`",
    ),
    (
        "max_response_size",
        "the server's memory is the operator's: every call reads within the default bound",
    ),
    (
        "superseded_ok",
        "an exit code for Jobs; the tool answers the verdict itself, superseded included",
    ),
    ("verbose", "the server's own -v says what it logs"),
    ("color", "the tool answers JSON, never coloured text"),
];

impl VerifyInput {
    fn argv(&self) -> Result<Vec<String>, String> {
        let mut argv = Argv::new(&["verify", "--output=json"]);
        cluster(
            &mut argv,
            self.namespace.as_deref(),
            self.all_namespaces,
            self.kubeconfig.as_deref(),
            self.context.as_deref(),
        );
        argv.opt("selector", self.selector.as_deref());
        argv.0.extend(self.change.to_args());
        argv.opt("from", self.from.as_deref());
        argv.each("filename", &self.manifests);
        argv.flag("recursive", self.recursive);
        argv.opt(
            "max-release-size",
            self.max_release_size.map(|n| n.to_string()).as_deref(),
        );
        argv.opt("request-timeout", self.request_timeout.as_deref());
        match self.wait_seconds {
            None | Some(0) => {}
            Some(s) if s > MAX_WAIT_SECONDS => {
                return Err(format!(
                    "verify arguments: wait_seconds {s} is more than {MAX_WAIT_SECONDS}"
                ))
            }
            Some(s) => {
                argv.flag("wait", true);
                argv.opt("timeout", Some(&format!("{s}s")));
            }
        }
        Ok(argv.positional(&self.targets))
    }
}

/// What `release_show` shows.
#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Section {
    /// Chart, version, status and times (`helm get metadata`).
    #[default]
    Metadata,
    /// The rendered manifest (`helm get manifest`; rendered Secrets redacted).
    Manifest,
    /// The user-supplied values, always redacted over MCP.
    Values,
    /// Every revision (`helm history`).
    History,
}

/// `release_show`'s arguments (never a way to show values).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReleaseInput {
    /// The release name.
    name: String,
    /// The release's namespace (default: the kubeconfig context's).
    namespace: Option<String>,
    /// A revision other than the newest.
    #[schemars(range(min = 1))]
    revision: Option<i64>,
    /// What to show.
    #[serde(default)]
    section: Section,
    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    context: Option<String>,
    /// Read objects from this file or directory of YAML/JSON (what `kubectl get -o yaml`
    /// prints) instead of a cluster.
    from: Option<String>,
}

impl ReleaseInput {
    /// Never `--show-values`: over MCP, values are always redacted.
    fn argv(&self) -> Vec<String> {
        let mut argv = Argv::new(&["release", "show"]);
        cluster(
            &mut argv,
            self.namespace.as_deref(),
            false,
            self.kubeconfig.as_deref(),
            self.context.as_deref(),
        );
        argv.opt("revision", self.revision.map(|r| r.to_string()).as_deref());
        argv.flag(
            match self.section {
                Section::Metadata => "metadata",
                Section::Manifest => "manifest",
                Section::Values => "values",
                Section::History => "history",
            },
            true,
        );
        argv.opt("from", self.from.as_deref());
        argv.positional(std::slice::from_ref(&self.name))
    }
}

/// `stale`'s arguments: its scope.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct StaleInput {
    /// Workloads to check: KIND/NAME or NAMESPACE/KIND/NAME (deployment, statefulset,
    /// daemonset).
    #[serde(default)]
    targets: Vec<String>,
    /// The namespace to check (default: the kubeconfig context's).
    namespace: Option<String>,
    /// Check every workload in every namespace.
    #[serde(default)]
    all_namespaces: bool,
    /// Check only the workloads these manifests declare (a file or a directory of YAML/JSON).
    manifests: Option<String>,
    /// Check every tagged image, not only mutable ones (no tag, `:latest`).
    #[serde(default)]
    check_digests: bool,
    /// Registries (HOST[:PORT]) spoken to over plain HTTP.
    #[serde(default)]
    insecure_registry: Vec<String>,
    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    context: Option<String>,
}

impl StaleInput {
    /// `restart`: `Some(dry_run)` for restart_stale.
    fn argv(&self, restart: Option<bool>) -> Vec<String> {
        let mut argv = Argv::new(&["stale", "--output=json"]);
        cluster(
            &mut argv,
            self.namespace.as_deref(),
            self.all_namespaces,
            self.kubeconfig.as_deref(),
            self.context.as_deref(),
        );
        argv.opt("filename", self.manifests.as_deref());
        argv.flag("check-digests", self.check_digests);
        argv.each("insecure-registry", &self.insecure_registry);
        if let Some(dry_run) = restart {
            argv.flag("restart", true);
            argv.flag("dry-run", dry_run);
        }
        argv.positional(&self.targets)
    }
}

/// `restart_stale`'s arguments: `stale`'s scope, and `dry_run`. (Not `deny_unknown_fields`,
/// which serde cannot with `flatten`: `decode` refuses a field the schema does not have.)
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
struct RestartInput {
    #[serde(flatten)]
    scope: StaleInput,
    /// Say what would be patched, without sending anything.
    #[serde(default)]
    dry_run: bool,
}

impl RestartInput {
    fn argv(self) -> Vec<String> {
        self.scope.argv(Some(self.dry_run))
    }
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
mod tests {
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

    pub(super) fn ready(name: &str, arguments: Value) -> Call {
        match prepare(name, arguments, true) {
            Prepared::Ready(call) => call,
            Prepared::Refused(m) => panic!("refused: {m}"),
            Prepared::Unknown => panic!("unknown tool {name}"),
        }
    }

    #[test]
    fn values_can_never_become_flags() {
        let call = ready(
            "verify",
            json!({"targets": ["--from=/etc", "deploy/a"], "since": "--wait", "namespace": "apps"}),
        );
        let cli = Cli::try_parse_from(&call.argv).expect("parses");
        let Command::Verify(args) = cli.command else {
            panic!("not verify")
        };
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
        let cli = Cli::try_parse_from(&call.argv).expect("parses");
        let Command::Verify(args) = cli.command else {
            panic!("not verify")
        };
        assert_eq!(
            args.selector.as_deref(),
            Some("app.kubernetes.io/part-of=shop")
        );
        assert!(args.targets.is_empty());
        // Neither targets nor a selector: the CLI's own refusal, as a tool error.
        let call = ready("verify", json!({"since": "30m"}));
        assert!(Cli::try_parse_from(&call.argv).is_err());
    }

    /// A `version_url` outside the operator's allow-list is refused before anything is sent,
    /// the URL shown with its credentials masked, saying how the operator allows one.
    #[test]
    fn a_version_url_is_refused_unless_allowed() {
        use liveproof_gather::reach::{AllowedUrl, Reach};
        let call = ready(
            "verify",
            json!({"targets": ["deploy/web"], "since": "1h",
                   "version_url": ["https://ops:s3cret@status.example.com/version?token=s3cret"],
                   "expect_version": ["1.4.0"]}),
        );
        let why = call
            .version_url_refusal(&Reach::allow_list(Vec::new()))
            .expect("refused");
        assert!(why.contains("--allow-version-url"), "{why}");
        assert!(!why.contains("s3cret"), "{why}");
        let allowed =
            |entry: &str| Reach::allow_list(vec![AllowedUrl::parse(entry).expect("an entry")]);
        assert_eq!(
            call.version_url_refusal(&allowed("status.example.com")),
            None
        );
        assert!(call
            .version_url_refusal(&allowed("https://status.example.com/v2"))
            .is_some());
        // No version_url: nothing to refuse.
        let plain = ready("verify", json!({"targets": ["deploy/web"], "since": "1h"}));
        assert_eq!(
            plain.version_url_refusal(&Reach::allow_list(Vec::new())),
            None
        );
    }

    #[test]
    fn release_show_never_shows_values() {
        let call = ready(
            "release_show",
            json!({"name": "inventory", "section": "values"}),
        );
        assert!(call.argv.iter().all(|a| a != "--show-values"));
        let cli = Cli::try_parse_from(&call.argv).expect("parses");
        let Command::Release(ReleaseCommand::Show(args)) = cli.command else {
            panic!("not release show")
        };
        assert!(args.values && !args.show_values);
    }

    #[test]
    fn restart_stale_is_stale_restart() {
        let call = ready(
            "restart_stale",
            json!({"targets": ["apps/deploy/bot"], "dry_run": true}),
        );
        let cli = Cli::try_parse_from(&call.argv).expect("parses");
        let Command::Stale(args) = cli.command else {
            panic!("not stale")
        };
        assert!(args.restart && args.dry_run);
        let call = ready("stale", json!({"namespace": "bots"}));
        assert!(!call.argv.iter().any(|a| a == "--restart"));
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
        assert!(call.argv.iter().any(|a| a == "--timeout=30s"));
    }

    #[tokio::test]
    async fn bad_input_is_a_tool_error_with_the_cli_message() {
        let result = run(ready("verify", json!({"targets": ["pod/x"]})), true, None).await;
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
            true,
            None,
        )
        .await;
        let text = result["content"][0]["text"].as_str().expect("text");
        assert!(text.starts_with("--since `yesterday`"), "{text}");

        // What clap refuses is its message, without the terminal's help pointer.
        let result = run(
            ready(
                "verify",
                json!({"targets": ["deploy/x"], "from": "/tmp", "since": "-5m"}),
            ),
            true,
            None,
        )
        .await;
        let text = result["content"][0]["text"].as_str().expect("text");
        assert!(text.contains("-5m"), "{text}");
        assert!(!text.contains("For more information"), "{text}");
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
    use tests::ready;

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
            MAX_WAIT_SECONDS
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
    #[test]
    fn the_verify_tool_takes_every_statement_the_cli_takes() {
        use clap::CommandFactory as _;
        let cli = Cli::command();
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
        // The new statements reach the CLI as the CLI spells them.
        let call = ready(
            "verify",
            json!({"targets": ["deploy/web"], "manifests": ["k8s/web.yaml"],
                   "version_url": ["https://web.example/version"], "expect_version": ["1.4.0"],
                   "version_json": [".version"], "max_release_size": 1024,
                   "request_timeout": "5s"}),
        );
        let cli = Cli::try_parse_from(&call.argv).expect("parses");
        let Command::Verify(args) = cli.command else {
            panic!("not verify")
        };
        assert_eq!(args.manifests, [std::path::PathBuf::from("k8s/web.yaml")]);
        assert_eq!(args.change.version_url, ["https://web.example/version"]);
        assert_eq!(args.change.expect_version, ["1.4.0"]);
        assert_eq!(args.change.version_json, [".version"]);
        assert_eq!(args.max_release_size, 1024);
    }

    /// The verify tool's change statement is the CLI's own type: what an agent states reaches
    /// the command line unchanged, every field, and a misspelt field is refused with the
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
        let cli = Cli::try_parse_from(&call.argv).expect("parses");
        let Command::Verify(args) = cli.command else {
            panic!("not verify")
        };
        assert_eq!(args.change, stated);
        // Printed back as flags and parsed again, the statement is the same.
        let mut argv = vec![
            "liveproof".to_string(),
            "verify".into(),
            "release/web".into(),
        ];
        argv.extend(stated.to_args());
        let Command::Verify(again) = Cli::try_parse_from(&argv).expect("parses").command else {
            panic!("not verify")
        };
        assert_eq!(again.change, stated);

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
