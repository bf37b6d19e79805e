//! The verify tool's arguments: deserialised, then made into the CLI's own [`VerifyArgs`] in
//! plain Rust (no command line, no second parse), which [`VerifyRequest::parse`] checks as it
//! checks the CLI's — clap's rules between arguments included.
//!
//! [`VerifyRequest::parse`]: crate::config::VerifyRequest::parse

use std::path::PathBuf;

use serde::Deserialize;

use crate::cli::{
    ChangeArgs, ClusterArgs, Colour, Verbosity, VerifyArgs, DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TIMEOUT,
};

/// The longest `wait_seconds` accepted: an agent's call should not hold a session for hours.
pub const MAX_WAIT_SECONDS: u64 = 3600;

/// The most log lines `logs` asks for, per container.
pub const MAX_LOG_LINES: u32 = 1000;

/// The `targets` argument's description: its forms, every kind of the kind table
/// ([`liveproof_evidence::kind::targets_help`]), and what is followed.
fn targets_description() -> String {
    format!(
        "What to verify: KIND/NAME or NAMESPACE/KIND/NAME. {} A Helm or GitOps target is \
         followed to the workloads it installs, a Canary to its `-primary`, a Knative Service to \
         its latest revision's Deployment, and those are verified too.\n\
         May be empty when `selector` is given.",
        liveproof_evidence::kind::targets_help()
    )
}

/// `verify`'s arguments.
// Not `deny_unknown_fields` (serde cannot with `flatten`): `decode` refuses a field the schema
// does not have instead.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct VerifyInput {
    /// What to verify: KIND/NAME or NAMESPACE/KIND/NAME (the schema's description, with the
    /// kinds of the kind table, is [`targets_description`]).
    #[serde(default)]
    #[schemars(description = targets_description())]
    pub targets: Vec<String>,
    /// A label selector, as `kubectl get -l` takes it (app=web, env in (prod,staging)): every
    /// Deployment, StatefulSet and DaemonSet it matches in `namespace` (or every namespace
    /// with `all_namespaces`) is verified too. One matching nothing is an error.
    pub selector: Option<String>,
    /// Namespace for targets that name none (default: the kubeconfig context's).
    pub namespace: Option<String>,
    /// Look targets that name no namespace up in every namespace.
    #[serde(default)]
    pub all_namespaces: bool,
    /// The change: when, which commit, and what must be running. The same statement, with the
    /// same names, as `liveproof verify`'s flags (`since` is `--since`, `expect_env` is
    /// `--expect-env`, ...).
    #[serde(flatten)]
    pub change: ChangeArgs,
    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    pub context: Option<String>,
    /// Offline: read objects from this file or directory of YAML/JSON (what `kubectl get -o
    /// yaml` prints) instead of a cluster. Objects it lacks make their checks unknown.
    pub from: Option<PathBuf>,
    /// Manifests (files or directories of YAML/JSON, on the server's machine, under its
    /// --allow-from directories) that state the change: each workload they declare must run
    /// its declared template.
    #[serde(default)]
    pub manifests: Vec<PathBuf>,
    /// With a directory in `manifests`: every directory under it too (kubectl's -R); without
    /// it only the directory's top level is read.
    #[serde(default)]
    pub recursive: bool,
    /// Largest decoded Helm release accepted, in bytes (default 64 MiB, at most 512 MiB).
    #[schemars(range(min = 1, max = 536_870_912))]
    pub max_release_size: Option<u64>,
    /// Bound on each request to the API server or a registry, e.g. 30s.
    pub request_timeout: Option<String>,
    /// Watch up to this many seconds until the verdict is live or superseded, or a failure is
    /// final (0: judge once).
    #[schemars(range(max = 3600))]
    pub wait_seconds: Option<u64>,
    /// When a workload is not live: the last N log lines of each crashing or not-ready
    /// container (0: none). Only when the operator started the server with `liveproof mcp
    /// --allow-logs` (logs can hold anything, secrets included); what looks like a credential
    /// in them is masked.
    #[schemars(range(max = 1000))]
    pub logs: Option<u32>,
}

/// The CLI's verify arguments the verify tool does not take, and why: the drift test holds
/// every other one to a field of [`VerifyInput`].
#[cfg(test)]
pub const VERIFY_NOT_OVER_MCP: &[(&str, &str)] = &[
    ("output", "the tool always answers JSON"),
    ("report", "writes a file; the tool returns the report"),
    ("report_format", "goes with report"),
    ("record_format", "goes with record"),
    ("record_repo_url", "goes with record"),
    ("record_env", "goes with record"),
    (
        "record",
        "appends to a file on the server's machine; the report carries live_since and the lead time",
    ),
    ("wait", "wait_seconds says both whether and how long"),
    ("timeout", "wait_seconds says both whether and how long"),
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
    ("quiet", "the tool answers the report; nothing is printed to silence"),
    (
        "superseded_ok",
        "an exit code for Jobs; the tool answers the verdict itself, superseded included",
    ),
    ("verbose", "the server's own -v says what it logs"),
    ("color", "the tool answers JSON, never coloured text"),
];

impl VerifyInput {
    /// The CLI's verify arguments this call states: what `liveproof verify -o json` with the
    /// same flags would be given, every other one at its default. Refused: only a
    /// `wait_seconds` or `logs` past its bound (the schema's; a client may not have read it).
    pub fn into_args(self) -> Result<VerifyArgs, String> {
        let (wait, timeout) = match self.wait_seconds {
            None | Some(0) => (false, DEFAULT_TIMEOUT.to_string()),
            Some(s) if s > MAX_WAIT_SECONDS => {
                return Err(format!(
                    "verify arguments: wait_seconds {s} is more than {MAX_WAIT_SECONDS}"
                ))
            }
            Some(s) => (true, format!("{s}s")),
        };
        let logs = match self.logs {
            None | Some(0) => None,
            Some(n) if n > MAX_LOG_LINES => {
                return Err(format!(
                    "verify arguments: logs {n} is more than {MAX_LOG_LINES}"
                ))
            }
            Some(n) => Some(i64::from(n)),
        };
        Ok(VerifyArgs {
            targets: self.targets,
            selector: self.selector,
            manifests: self.manifests,
            recursive: self.recursive,
            kustomize: Vec::new(),
            snapshot: None,
            change: self.change,
            wait,
            timeout,
            output: liveproof_report::Format::Json.into(),
            report: Vec::new(),
            record: None,
            record_format: crate::cli::RecordFormat::Liveproof,
            record_repo_url: None,
            record_env: None,
            superseded_ok: false,
            quiet: false,
            report_format: None,
            logs,
            log: Verbosity::default(),
            colour: Colour::default(),
            cluster: ClusterArgs {
                namespace: self.namespace,
                all_namespaces: self.all_namespaces,
                kubeconfig: self.kubeconfig,
                context: self.context.into_iter().collect(),
                request_timeout: self
                    .request_timeout
                    .unwrap_or_else(|| DEFAULT_REQUEST_TIMEOUT.to_string()),
                max_response_size: None,
            },
            all_contexts: false,
            max_concurrency: None,
            from: self.from,
            // One past what this machine can address is past the bound too: refused as such.
            max_release_size: self
                .max_release_size
                .map_or(liveproof_helm::DEFAULT_MAX_RELEASE_SIZE, |n| {
                    usize::try_from(n).unwrap_or(usize::MAX)
                }),
        })
    }
}

/// A verify call as the command line it stands for, for the server's log: the program name
/// left out, an `--expect-env NAME=VALUE` (a mistake the call is refused for) showing the name
/// alone, as the value can be the secret itself.
pub fn shown(args: &VerifyArgs) -> String {
    let mut words: Vec<String> = vec!["verify".into(), "--output=json".into()];
    let mut opt = |flag: &str, value: Option<String>| {
        if let Some(v) = value {
            words.push(format!("--{flag}={v}"));
        }
    };
    let k = &args.cluster;
    opt("namespace", k.namespace.clone());
    opt(
        "kubeconfig",
        k.kubeconfig.as_ref().map(|p| p.display().to_string()),
    );
    for context in &k.context {
        opt("context", Some(context.clone()));
    }
    opt("selector", args.selector.clone());
    opt("from", args.from.as_ref().map(|p| p.display().to_string()));
    for path in &args.manifests {
        opt("filename", Some(path.display().to_string()));
    }
    if args.max_release_size != liveproof_helm::DEFAULT_MAX_RELEASE_SIZE {
        opt("max-release-size", Some(args.max_release_size.to_string()));
    }
    if k.request_timeout != DEFAULT_REQUEST_TIMEOUT {
        opt("request-timeout", Some(k.request_timeout.clone()));
    }
    if args.wait {
        opt("timeout", Some(args.timeout.clone()));
    }
    opt("logs", args.logs.map(|n| n.to_string()));
    for (flag, value) in args.change.flags() {
        words.push(match (flag, value) {
            ("expect-env", Some(env)) if env.contains('=') => {
                let name = env.split_once('=').map_or(env.as_str(), |(name, _)| name);
                format!("--expect-env={name}=***")
            }
            (flag, Some(value)) => format!("--{flag}={value}"),
            (flag, None) => format!("--{flag}"),
        });
    }
    for (flag, on) in [
        ("all-namespaces", k.all_namespaces),
        ("recursive", args.recursive),
        ("wait", args.wait),
    ] {
        if on {
            words.push(format!("--{flag}"));
        }
    }
    if !args.targets.is_empty() {
        words.push("--".into());
        words.extend(args.targets.iter().cloned());
    }
    words.join(" ")
}

/// The report as the tool returns it: each diagnostic's message and log lines with what looks
/// like a credential masked, as `release show` masks a manifest (`password=…`, a URL's
/// password and query values, a private key). Logs and termination messages can hold
/// anything, and an agent's transcript is no place for a secret.
pub fn masked(mut report: liveproof_evidence::Report) -> liveproof_evidence::Report {
    let mask = |text: &str| {
        let urls = liveproof_redacted::mask_urls(text);
        liveproof_redacted::credential::mask_credentials(&urls).into_owned()
    };
    for target in &mut report.targets {
        for d in &mut target.diagnostics {
            d.message = mask(&d.message);
            for line in &mut d.lines {
                *line = mask(line);
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;
    use serde_json::{json, Value};

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::config::VerifyRequest;
    use crate::mcp::tools::tests::{ready, verify_args};

    /// `liveproof verify WORDS…` as clap parses it.
    fn clap_args(words: &[&str]) -> Result<VerifyArgs, clap::Error> {
        let argv = ["liveproof", "verify"].iter().chain(words);
        match Cli::try_parse_from(argv)?.command {
            Command::Verify(args) => Ok(*args),
            _ => unreachable!("verify parses as verify"),
        }
    }

    /// What clap says first: its message without `error: `, the usage or the tip.
    fn said(err: &clap::Error) -> String {
        let rendered = err.render().to_string();
        let first = rendered.split("\n\n").next().unwrap_or_default();
        first.trim().trim_start_matches("error: ").to_string()
    }

    /// A tool call and the command line a person would type for it.
    const SAME: &[(&str, &[&str])] = &[
        (
            r#"{"targets": ["deploy/web"], "since": "1h"}"#,
            &["deploy/web", "--since", "1h"],
        ),
        (
            r#"{"selector": "app=web,tier!=cache", "namespace": "apps",
                "since": "2026-07-12T10:00:00Z", "image": ["ghcr.io/acme/web:1.4.0"]}"#,
            &[
                "-l",
                "app=web,tier!=cache",
                "-n",
                "apps",
                "--since",
                "2026-07-12T10:00:00Z",
                "--image",
                "ghcr.io/acme/web:1.4.0",
            ],
        ),
        (
            r#"{"targets": ["deploy/a", "sts/b"], "all_namespaces": true, "kubeconfig": "/k/config",
                "context": "prod", "commit": "HEAD", "repo": "/src/app"}"#,
            &[
                "deploy/a",
                "sts/b",
                "-A",
                "--kubeconfig",
                "/k/config",
                "--context",
                "prod",
                "--commit",
                "HEAD",
                "--repo",
                "/src/app",
            ],
        ),
        (
            r#"{"targets": ["release/web"], "from": "/d/dump.yaml", "manifests": ["k8s/", "more.yaml"],
                "recursive": true, "expect": ["secretKeyRef"], "chart_version": "1.2.3",
                "expect_env": ["DB_URL"], "expect_secret_ref": ["db/password"], "no_registry": true,
                "since": "90s"}"#,
            &[
                "release/web",
                "--from",
                "/d/dump.yaml",
                "-f",
                "k8s/",
                "-f",
                "more.yaml",
                "-R",
                "--expect",
                "secretKeyRef",
                "--chart-version",
                "1.2.3",
                "--expect-env",
                "DB_URL",
                "--expect-secret-ref",
                "db/password",
                "--no-registry",
                "--since",
                "90s",
            ],
        ),
        (
            r#"{"targets": ["deploy/web"], "version_url": ["https://web.example/version"],
                "expect_version": ["1.4.0"], "version_json": [".version"], "check_digests": true,
                "insecure_registry": ["reg.local:5000"], "max_release_size": 1024,
                "request_timeout": "5s", "image": ["a/b:1"]}"#,
            &[
                "deploy/web",
                "--version-url",
                "https://web.example/version",
                "--expect-version",
                "1.4.0",
                "--version-json",
                ".version",
                "--check-digests",
                "--insecure-registry",
                "reg.local:5000",
                "--max-release-size",
                "1024",
                "--request-timeout",
                "5s",
                "--image",
                "a/b:1",
            ],
        ),
        (
            r#"{"targets": ["deploy/web"], "since": "10m", "wait_seconds": 90, "logs": 40,
                "image": ["a/b:1"]}"#,
            &[
                "deploy/web",
                "--since",
                "10m",
                "--wait",
                "--timeout",
                "90s",
                "--logs",
                "40",
                "--image",
                "a/b:1",
            ],
        ),
        // As kubectl takes them: the kind once, then its names.
        (
            r#"{"targets": ["deploy", "a", "b"], "image": ["a/b:1"]}"#,
            &["deploy", "a", "b", "--image", "a/b:1"],
        ),
        // A value is a value, whatever it looks like.
        (
            r#"{"targets": ["--from=/etc"], "since": "--wait", "image": ["-x"]}"#,
            &["--since=--wait", "--image=-x", "--", "--from=/etc"],
        ),
        // Logs of 0 and wait_seconds of 0 are none.
        (
            r#"{"targets": ["deploy/web"], "wait_seconds": 0, "logs": 0, "image": ["a/b:1"]}"#,
            &["deploy/web", "--image", "a/b:1"],
        ),
    ];

    /// Calls the command line refuses, and the words it refuses them with.
    const REFUSED: &[(&str, &[&str])] = &[
        (r#"{"since": "30m"}"#, &["--since", "30m"]),
        (
            r#"{"targets": ["deploy/x"], "from": "/tmp", "wait_seconds": 5, "since": "1h"}"#,
            &[
                "deploy/x",
                "--from",
                "/tmp",
                "--wait",
                "--timeout",
                "5s",
                "--since",
                "1h",
            ],
        ),
        (
            r#"{"targets": ["deploy/x"], "check_digests": true, "no_registry": true}"#,
            &["deploy/x", "--check-digests", "--no-registry"],
        ),
        (
            r#"{"targets": ["deploy/x"], "version_url": ["https://web.example/version"]}"#,
            &["deploy/x", "--version-url", "https://web.example/version"],
        ),
        (
            r#"{"targets": ["deploy/x"], "version_json": [".version"]}"#,
            &["deploy/x", "--version-json", ".version"],
        ),
        (
            r#"{"targets": ["deploy/x"], "max_release_size": 0}"#,
            &["deploy/x", "--max-release-size", "0"],
        ),
        (
            r#"{"targets": ["deploy/x"], "max_release_size": 536870913}"#,
            &["deploy/x", "--max-release-size", "536870913"],
        ),
    ];

    /// The request a tool call makes is the request the CLI builds from the equivalent command
    /// line (`-o json` added, as the tool answers JSON), field by field: the same `VerifyArgs`,
    /// and the same targets, change, times, selector and bounds once checked.
    #[test]
    fn a_tool_call_is_the_request_the_cli_builds() {
        let now = jiff::Timestamp::now();
        for (input, words) in SAME {
            let input: Value = serde_json::from_str(input).expect("JSON");
            let call = ready("verify", input.clone());
            let from_tool = verify_args(&call);
            let words: Vec<&str> = ["-o", "json"].iter().chain(*words).copied().collect();
            let from_cli = clap_args(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
            assert_eq!(from_tool, &from_cli, "{input}");
            // Checked, the same request (or the same refusal: `--from=/etc` is no target).
            let tool = VerifyRequest::parse_at(from_tool, now).map_err(|e| e.to_string());
            let cli = VerifyRequest::parse_at(&from_cli, now).map_err(|e| e.to_string());
            assert_eq!(tool, cli, "{input}");
        }
        // What the command line refuses, the tool refuses in the same words.
        for (input, words) in REFUSED {
            let input: Value = serde_json::from_str(input).expect("JSON");
            let call = ready("verify", input.clone());
            let ours = VerifyRequest::parse_at(verify_args(&call), now)
                .expect_err("refused")
                .to_string();
            let words: Vec<&str> = ["-o", "json"].iter().chain(*words).copied().collect();
            let clap = clap_args(&words).expect_err("clap refuses it");
            assert_eq!(ours, said(&clap), "{input}");
        }
    }

    /// What a call leaves out is what the command line leaves out: clap's defaults and the
    /// tool's are the same (`-o json` aside: the tool always answers JSON).
    #[test]
    fn defaults_agree() {
        let call = ready("verify", json!({"targets": ["deploy/web"]}));
        let cli = clap_args(&["deploy/web"]).expect("parses");
        assert_eq!(
            &VerifyArgs {
                output: liveproof_report::Format::Text.into(),
                ..verify_args(&call).clone()
            },
            &cli
        );
        // Nothing stated: ChangeArgs' serde default is clap's.
        assert_eq!(ChangeArgs::default(), cli.change);

        let parsed = |words: &[&str]| {
            let argv = std::iter::once("liveproof").chain(words.iter().copied());
            Cli::try_parse_from(argv).expect("parses").command
        };
        let call = ready("stale", json!({}));
        let Command::Stale(cli) = parsed(&["stale", "-o", "json"]) else {
            unreachable!("stale")
        };
        assert_eq!(
            call.request(),
            &crate::mcp::tools::Request::Stale(Box::new(cli))
        );
        // release_show's default section is the metadata, which the CLI shows when no
        // section is named.
        let call = ready("release_show", json!({"name": "web"}));
        let Command::Release(crate::cli::ReleaseCommand::Show(cli)) =
            parsed(&["release", "show", "web", "--metadata"])
        else {
            unreachable!("release show")
        };
        assert_eq!(
            call.request(),
            &crate::mcp::tools::Request::ReleaseShow(Box::new(cli))
        );
    }

    /// Over MCP a diagnostic's message and log lines are shown with what looks like a
    /// credential masked, as `release show` masks a manifest; the rest as it is.
    #[test]
    fn log_lines_are_masked_as_a_manifest_is() {
        use liveproof_evidence::diagnose::Diagnostic;
        let mut report: liveproof_evidence::Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "not_live", "generated_at": "2026-07-12T10:00:00Z",
            "change": {}, "targets": [{"kind": "Deployment", "namespace": "apps", "name": "web",
                "verdict": "not_live", "evidence": []}]
        }))
        .expect("a report");
        let diagnostic: Diagnostic = serde_json::from_value(json!({
            "kind": "logs", "object": "apps/Pod/web-1 [app]", "reason": "Logs",
            "message": "exit code 1: connecting with DB_PASSWORD=canary-0a1b",
            "lines": ["starting", "dsn postgres://web:canary-0a1b@db/web", "token: canary-0a1b"]
        }))
        .expect("a diagnostic");
        report.targets[0].diagnostics.push(diagnostic);
        let masked = masked(report);
        let shown = serde_json::to_string(&masked).expect("JSON");
        assert!(!shown.contains("canary-0a1b"), "{shown}");
        let d = &masked.targets[0].diagnostics[0];
        assert_eq!(d.message, "exit code 1: connecting with DB_PASSWORD=***");
        assert_eq!(d.lines[0], "starting");
        assert!(
            d.lines[1].starts_with("dsn postgres://web:***@db/web"),
            "{}",
            d.lines[1]
        );
    }
}
