//! The `Verification` object (`liveproof.dev/v1alpha1`): what `verify` takes, as a namespaced
//! custom resource, and the request it stands for.
//!
//! The spec is the change statement `liveproof verify` and the MCP verify tool take, in
//! Kubernetes' camelCase. It is turned into the CLI's own [`VerifyArgs`] in plain Rust (no argv,
//! no second parser) and checked by [`VerifyRequest::parse`], as a tool call is: an invalid spec
//! is refused in the words `verify` refuses it with (exit 2).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::status::VerificationStatus;
use crate::cli::{
    ChangeArgs, ClusterArgs, Colour, Verbosity, VerifyArgs, DEFAULT_REPO, DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TIMEOUT,
};
use crate::config::{ConfigError, VerifyRequest};

/// Why a spec is refused: what `verify` refuses its command line for, in its words, or a
/// commit ref, which only a local repository resolves.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error(transparent)]
    Verify(#[from] ConfigError),
    #[error("commit `{given}` is a ref: a Verification has no git repository to resolve it in")]
    CommitRef { given: String },
}

impl liveproof_evidence::hint::Hinted for SpecError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            SpecError::Verify(inner) => inner.hint(),
            SpecError::CommitRef { .. } => Some(std::borrow::Cow::Borrowed(
                "give the commit's SHA (7 to 40 hex digits), e.g. commit: 3f2c1ab, with since: the time it merged",
            )),
        }
    }
}

/// What to verify, the change, and what counts as final: what `liveproof verify` takes, with
/// the same names in camelCase. Not available in a cluster: `--from` and `--snapshot` (a
/// Verification reads the cluster it lives in), `--kubeconfig` and `--context` (the
/// controller's own credentials), `-f`/`-k` (name the workloads in `targets`, or select them),
/// `--repo` (see `commit`), `--report`/`--record` (the status carries the verdict, `liveSince`
/// and the lead time; `liveproof verify verification/NAME` prints the report) and `--logs`
/// (logs can hold secrets, and a status is read by whoever may get the object).
#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "liveproof.dev",
    version = "v1alpha1",
    kind = "Verification",
    namespaced,
    doc = "A change, and the proof that it is live, kept true in the cluster. `liveproof controller` judges the targets as `liveproof verify --wait` does (the same checks, the same verdict) and writes the answer to `.status`: the Ready condition is True only while the change is live. Evidence too large for a status stays in the report: `liveproof verify verification/NAME` prints it.",
    status = "VerificationStatus",
    shortname = "verif",
    category = "liveproof",
    printcolumn = r#"{"name": "Verdict", "type": "string", "jsonPath": ".status.verdict", "description": "live, not_live, unproven or superseded"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "description": "True only while the change is live"}"#,
    printcolumn = r#"{"name": "Reason", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason", "priority": 1}"#,
    printcolumn = r#"{"name": "Live Since", "type": "date", "jsonPath": ".status.liveSince", "description": "when the evidence shows the change went live"}"#,
    printcolumn = r#"{"name": "Lead Time", "type": "integer", "jsonPath": ".status.leadTimeSeconds", "description": "seconds from the commit to live", "priority": 1}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct VerificationSpec {
    /// What to verify: TYPE/NAME or NAMESPACE/TYPE/NAME, as `liveproof verify` takes them.
    /// Kinds: deployment (deploy), statefulset (sts), daemonset (ds), rollout (ro, Argo
    /// Rollouts), release (a Helm release, read from its storage), helmrelease (hr, Flux),
    /// kustomization (ks, Flux), application (app, Argo CD), canary (Flagger), ksvc (Knative).
    /// A target naming no namespace is looked up in the Verification's own. A Helm or GitOps
    /// target is followed to the workloads it installs, and those are verified too. May be
    /// empty when `selector` is given. (`-f` manifests and `-k` are not available in a
    /// cluster: name the workloads here, or select them.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,

    /// A label selector, as `kubectl get -l` takes it (app=web, env in (prod,staging)): every
    /// Deployment, StatefulSet and DaemonSet it matches in the Verification's namespace is
    /// verified too. One matching nothing is an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,

    /// The change: when, which commit, and what must be running.
    #[serde(flatten)]
    pub change: ChangeSpec,

    /// What counts as final: how long the change may take to go live, as `verify --timeout`
    /// takes it (90s, 10m, 1h30m; default 5m). Once it has run out with the change not live,
    /// the failure is final (`Stalled`, reason `TimedOut`). A failure waiting will not fix (a
    /// Deployment's ProgressDeadlineExceeded, a crash-looping pod of the current revision, a
    /// Flux or Argo CD failure for the stated revision…) is final before it, as it ends
    /// `verify --wait`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// The change statement: `liveproof verify`'s flags of the same names (`since` is `--since`,
/// `expectEnv` is `--expect-env`, …), checked by the same rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSpec {
    /// When the change merged: an RFC 3339 time with its offset (2026-07-12T10:00:00Z), or how
    /// long ago as kubectl writes durations (10m, 2h, 1d), measured back from the
    /// Verification's creation so it does not move when the proof is checked again. A time in
    /// the future is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,

    /// The change's commit: a SHA (7 to 40 hex digits). A GitOps revision passes when it is
    /// this commit. (`--repo` is not available in a cluster: a ref such as HEAD or a branch
    /// cannot be resolved, a descendant revision cannot be shown to contain the commit, and the
    /// commit's time is not read; give `since` with it.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,

    /// The images (tag or digest) the workload must run, matched per container by repository;
    /// a digest (repo@sha256:…) is matched against the template and each serving pod's
    /// running digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image: Vec<String>,

    /// Env var NAMEs the running containers must define (values are never read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_env: Vec<String>,

    /// Secrets (SECRET or SECRET/KEY) the containers must reference, by env or volume
    /// (presence only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_secret_ref: Vec<String>,

    /// The chart version the installed Helm release must carry (release and helmrelease
    /// targets only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_version: Option<String>,

    /// Text (or re:REGEX) the installed release's manifest, or a workload's pod template as
    /// YAML, must contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<String>,

    /// Hold every tagged image to its tag's current digest, not only mutable ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub check_digests: bool,

    /// Never ask a registry what a tag resolves to (image_digest_current is left out).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_registry: bool,

    /// Registries (HOST[:PORT]) spoken to over plain HTTP, e.g. a local mirror.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insecure_registry: Vec<String>,

    /// URLs where the server reports its version; each must report `expectVersion`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub version_url: Vec<String>,

    /// The version the `versionUrl` servers must report: one for all, or one per URL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_version: Vec<String>,

    /// Read the version from this JSON field of the response (.version): one for all URLs, or
    /// one per URL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub version_json: Vec<String>,
}

/// `verify`'s arguments a Verification does not take, and what stands for them: the drift
/// test holds every other one to a field of the spec.
#[cfg(test)]
pub const VERIFY_NOT_IN_SPEC: &[(&str, &str)] = &[
    (
        "manifests",
        "-f reads files on one machine: name the workloads in targets, or select them",
    ),
    ("recursive", "goes with -f"),
    (
        "kustomize",
        "runs kubectl on one machine: name the workloads in targets",
    ),
    (
        "snapshot",
        "a snapshot directory is state kept on one machine",
    ),
    (
        "repo",
        "a local git repository: commit is a SHA, and since states the time",
    ),
    ("from", "a Verification reads the cluster it lives in"),
    ("kubeconfig", "the controller's own credentials"),
    ("context", "a Verification reads the cluster it lives in"),
    (
        "all_contexts",
        "a Verification reads the cluster it lives in",
    ),
    ("max_concurrency", "goes with all_contexts"),
    (
        "namespace",
        "the Verification's own namespace, or NAMESPACE/TYPE/NAME",
    ),
    (
        "all_namespaces",
        "a selector matches in the Verification's namespace",
    ),
    ("wait", "the controller always waits; timeout says how long"),
    (
        "output",
        "the status is the answer; verify verification/NAME prints the report",
    ),
    ("report", "writes a file on one machine"),
    ("report_format", "goes with report"),
    ("record_format", "goes with record"),
    ("record_repo_url", "goes with record"),
    ("record_env", "goes with record"),
    (
        "record",
        "appends to a file on one machine; the status carries liveSince and the lead time",
    ),
    ("quiet", "the status is the answer; nothing is printed"),
    (
        "superseded_ok",
        "an exit code for Jobs; the status says superseded itself",
    ),
    (
        "logs",
        "logs can hold anything, secrets included: never in a status",
    ),
    ("request_timeout", "the controller's own bound"),
    (
        "max_response_size",
        "the controller's memory is the operator's",
    ),
    (
        "max_release_size",
        "the controller's memory is the operator's",
    ),
    ("verbose", "the controller's own -v says what it logs"),
    ("color", "a status is never coloured"),
];

impl ChangeSpec {
    /// The CLI's change statement with the same values (`--repo` at its default: there is
    /// none in a cluster).
    fn to_args(&self) -> ChangeArgs {
        let ChangeSpec {
            since,
            commit,
            image,
            expect_env,
            expect_secret_ref,
            chart_version,
            expect,
            check_digests,
            no_registry,
            insecure_registry,
            version_url,
            expect_version,
            version_json,
        } = self.clone();
        ChangeArgs {
            since,
            commit,
            repo: DEFAULT_REPO.into(),
            image,
            expect_env,
            expect_secret_ref,
            chart_version,
            expect,
            check_digests,
            no_registry,
            insecure_registry,
            version_url,
            expect_version,
            version_json,
        }
    }
}

impl Verification {
    /// The CLI's verify arguments this Verification states: what `liveproof verify -o json
    /// --wait [--timeout T] -n NAMESPACE …` with the same flags would be given, every other one
    /// at its default. `since` given as a duration is measured back from the Verification's
    /// creation (`metadata.creationTimestamp`, when it has one), with `--since`'s own parser.
    pub fn args(&self) -> Result<VerifyArgs, ConfigError> {
        let mut change = self.spec.change.to_args();
        if let (Some(given), Some(created)) = (&change.since, &self.metadata.creation_timestamp) {
            // An RFC 3339 time stays as given (a later one is refused against the clock, not
            // against the creation); a duration ago becomes the time it stood for then.
            if given.trim().parse::<jiff::Timestamp>().is_err() {
                let at = crate::config::parse_since(given, created.0)?;
                change.since = Some(at.to_string());
            }
        }
        Ok(VerifyArgs {
            targets: self.spec.targets.clone(),
            selector: self.spec.selector.clone(),
            manifests: Vec::new(),
            recursive: false,
            kustomize: Vec::new(),
            snapshot: None,
            change,
            wait: true,
            timeout: self
                .spec
                .timeout
                .clone()
                .unwrap_or_else(|| DEFAULT_TIMEOUT.to_string()),
            output: liveproof_report::Format::Json.into(),
            report: Vec::new(),
            record: None,
            record_format: crate::cli::RecordFormat::Liveproof,
            record_repo_url: None,
            record_env: None,
            superseded_ok: false,
            quiet: false,
            report_format: None,
            logs: None,
            log: Verbosity::default(),
            colour: Colour::default(),
            cluster: ClusterArgs {
                namespace: self.metadata.namespace.clone(),
                all_namespaces: false,
                kubeconfig: None,
                context: Vec::new(),
                request_timeout: DEFAULT_REQUEST_TIMEOUT.to_string(),
                max_response_size: None,
            },
            all_contexts: false,
            max_concurrency: None,
            from: None,
            max_release_size: liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
        })
    }

    /// The request this Verification states, checked as `verify` checks its command line
    /// (what needs nothing read: the flags, the rules between them, which change flag applies
    /// to which target kind): an invalid spec is refused in `verify`'s words (its exit 2),
    /// which the status carries. A commit ref (HEAD, a branch) is refused too: there is no
    /// repository to resolve it in.
    pub fn request(&self) -> Result<VerifyRequest, SpecError> {
        self.request_at(jiff::Timestamp::now())
    }

    /// [`Verification::request`], checked at `now`.
    pub(crate) fn request_at(&self, now: jiff::Timestamp) -> Result<VerifyRequest, SpecError> {
        let request = VerifyRequest::parse_at(&self.args()?, now)?;
        // What `verify` checks once it has read the `-f` manifests: with none, nothing to read.
        crate::config::check_target_count(request.targets().len())?;
        crate::config::applicable(request.change(), request.targets(), false)?;
        if let Some(commit) = &self.spec.change.commit {
            if !liveproof_evidence::is_commit_sha(commit) {
                return Err(SpecError::CommitRef {
                    given: commit.clone(),
                });
            }
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args as _, Parser as _};
    use serde_json::{json, Value};

    use super::*;
    use crate::cli::{Cli, Command};

    /// `liveproof verify WORDS…` as clap parses it.
    fn clap_args(words: &[&str]) -> Result<VerifyArgs, clap::Error> {
        let argv = ["liveproof", "verify"].iter().chain(words);
        match Cli::try_parse_from(argv)?.command {
            Command::Verify(args) => Ok(*args),
            _ => unreachable!("verify parses as verify"),
        }
    }

    /// What clap says first: its message without `error: `.
    fn said(err: &clap::Error) -> String {
        let rendered = err.render().to_string();
        let first = rendered.split("\n\n").next().unwrap_or_default();
        first.trim().trim_start_matches("error: ").to_string()
    }

    /// A Verification as `kubectl apply` would send it, in namespace `apps`.
    fn verification(spec: Value, created: Option<&str>) -> Verification {
        let mut metadata = json!({"name": "web-1-4", "namespace": "apps"});
        if let Some(at) = created {
            metadata["creationTimestamp"] = json!(at);
        }
        serde_json::from_value(json!({
            "apiVersion": "liveproof.dev/v1alpha1",
            "kind": "Verification",
            "metadata": metadata,
            "spec": spec,
        }))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
    }

    /// A spec and the command line a person would type for it (after `verify -o json --wait
    /// -n apps`).
    const SAME: &[(&str, &[&str])] = &[
        (
            r#"{"targets": ["deploy/web"], "since": "2026-07-12T10:00:00Z"}"#,
            &["deploy/web", "--since", "2026-07-12T10:00:00Z"],
        ),
        (
            r#"{"targets": ["deploy/web", "payments/sts/ledger"], "since": "2026-07-12T12:00:00.250+02:00",
                "image": ["ghcr.io/acme/web:1.4.0", "ghcr.io/acme/ledger@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"],
                "timeout": "10m"}"#,
            &[
                "deploy/web",
                "payments/sts/ledger",
                "--since",
                "2026-07-12T12:00:00.250+02:00",
                "--image",
                "ghcr.io/acme/web:1.4.0",
                "--image",
                "ghcr.io/acme/ledger@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "--timeout",
                "10m",
            ],
        ),
        (
            r#"{"selector": "app=web,tier!=cache", "since": "2026-07-12T10:00:00Z",
                "expectEnv": ["DB_URL"], "expectSecretRef": ["db/password"]}"#,
            &[
                "-l",
                "app=web,tier!=cache",
                "--since",
                "2026-07-12T10:00:00Z",
                "--expect-env",
                "DB_URL",
                "--expect-secret-ref",
                "db/password",
            ],
        ),
        (
            r#"{"targets": ["release/web"], "commit": "3F2C1AB", "since": "2026-07-12T10:00:00Z",
                "chartVersion": "1.2.3", "expect": ["secretKeyRef", "re:replicas: [0-9]+"]}"#,
            &[
                "release/web",
                "--commit",
                "3F2C1AB",
                "--since",
                "2026-07-12T10:00:00Z",
                "--chart-version",
                "1.2.3",
                "--expect",
                "secretKeyRef",
                "--expect",
                "re:replicas: [0-9]+",
            ],
        ),
        (
            r#"{"targets": ["deploy/web"], "since": "2026-07-12T10:00:00Z", "image": ["a/b:1"],
                "versionUrl": ["https://web.example/version"], "expectVersion": ["1.4.0"],
                "versionJson": [".version"], "checkDigests": true,
                "insecureRegistry": ["reg.local:5000"]}"#,
            &[
                "deploy/web",
                "--since",
                "2026-07-12T10:00:00Z",
                "--image",
                "a/b:1",
                "--version-url",
                "https://web.example/version",
                "--expect-version",
                "1.4.0",
                "--version-json",
                ".version",
                "--check-digests",
                "--insecure-registry",
                "reg.local:5000",
            ],
        ),
        // A duration ago, with no creation time known, is measured from now as the CLI does.
        (
            r#"{"targets": ["ks/apps"], "since": "1h", "commit": "3f2c1ab9d0e4"}"#,
            &["ks/apps", "--since", "1h", "--commit", "3f2c1ab9d0e4"],
        ),
        // As kubectl takes them: the kind once, then its names.
        (
            r#"{"targets": ["deploy", "a", "b"], "since": "2026-07-12T10:00:00Z", "noRegistry": true}"#,
            &["deploy", "a", "b", "--since", "2026-07-12T10:00:00Z", "--no-registry"],
        ),
    ];

    /// Specs `verify` refuses, the command line it refuses them as, and the words: the
    /// status carries the same message `verify` exits 2 with.
    const REFUSED: &[(&str, &[&str], &str)] = &[
        (
            r#"{"targets": ["deploy/web"], "image": ["a/b:1"]}"#,
            &["deploy/web", "--image", "a/b:1"],
            "--wait needs a change time",
        ),
        (
            r#"{"targets": ["deploy/web"], "since": "yesterday"}"#,
            &["deploy/web", "--since", "yesterday"],
            "--since `yesterday` is neither an RFC 3339 time nor a duration ago",
        ),
        (
            r#"{"targets": ["deployment/web"], "since": "2026-07-12T10:00:00Z", "chartVersion": "1.2.3"}"#,
            &[
                "deployment/web",
                "--since",
                "2026-07-12T10:00:00Z",
                "--chart-version",
                "1.2.3",
            ],
            "--chart-version applies to",
        ),
        (
            r#"{"targets": ["deploy/web"], "since": "2026-07-12T10:00:00Z", "timeout": "soon"}"#,
            &[
                "deploy/web",
                "--since",
                "2026-07-12T10:00:00Z",
                "--timeout",
                "soon",
            ],
            "--timeout `soon` is not a duration",
        ),
        (
            r#"{"targets": ["frobnicator/web"], "since": "2026-07-12T10:00:00Z"}"#,
            &["frobnicator/web", "--since", "2026-07-12T10:00:00Z"],
            "frobnicator",
        ),
        (
            r#"{"targets": ["deploy/web"], "since": "2026-07-12T10:00:00Z", "expectEnv": ["DB_URL=hunter2"]}"#,
            &[
                "deploy/web",
                "--since",
                "2026-07-12T10:00:00Z",
                "--expect-env",
                "DB_URL=hunter2",
            ],
            "--expect-env `DB_URL=…` gives a value (not shown here)",
        ),
        (
            r#"{"targets": ["deploy/web"], "since": "2026-07-12T10:00:00Z", "versionUrl": ["https://web.example/v"]}"#,
            &[
                "deploy/web",
                "--since",
                "2026-07-12T10:00:00Z",
                "--version-url",
                "https://web.example/v",
            ],
            "--expect-version",
        ),
    ];

    fn argv<'a>(words: &[&'a str]) -> Vec<&'a str> {
        ["-o", "json", "--wait", "-n", "apps"]
            .iter()
            .chain(words)
            .copied()
            .collect()
    }

    /// The request a Verification makes is the request the CLI builds from the equivalent
    /// command line (`-o json --wait -n NAMESPACE` added): the same `VerifyArgs`, and the same
    /// targets, change, times, selector and bounds once checked.
    #[test]
    fn a_verification_is_the_request_the_cli_builds() {
        let now: jiff::Timestamp = "2026-07-12T11:00:00Z".parse().expect("a time");
        for (spec, words) in SAME {
            let spec: Value = serde_json::from_str(spec).expect("JSON");
            let object = verification(spec.clone(), None);
            let ours = object.args().expect("args");
            let words = argv(words);
            let cli = clap_args(&words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
            assert_eq!(ours, cli, "{spec}");
            let ours = object.request_at(now).map_err(|e| e.to_string());
            let cli = VerifyRequest::parse_at(&cli, now).map_err(|e| e.to_string());
            assert!(ours.is_ok(), "{spec}: {ours:?}");
            assert_eq!(ours, cli, "{spec}");
        }
    }

    /// What `verify` refuses, a Verification is refused for, in the same words (its exit 2),
    /// a value given with `expectEnv` not shown.
    #[test]
    fn an_invalid_spec_is_refused_in_verifys_words() {
        let now: jiff::Timestamp = "2026-07-12T11:00:00Z".parse().expect("a time");
        for (spec, words, says) in REFUSED {
            let spec: Value = serde_json::from_str(spec).expect("JSON");
            let ours = verification(spec.clone(), None)
                .request_at(now)
                .expect_err("refused")
                .to_string();
            // Refused by clap (a rule between flags), or once parsed, as `verify` refuses it.
            let cli = match clap_args(&argv(words)) {
                Err(clap) => said(&clap),
                Ok(cli) => VerifyRequest::parse_at(&cli, now)
                    .and_then(|r| {
                        crate::config::applicable(r.change(), r.targets(), false)?;
                        Ok(r)
                    })
                    .expect_err("verify refuses it")
                    .to_string(),
            };
            assert_eq!(ours, cli, "{spec}");
            assert!(ours.contains(says), "{spec}: {ours}");
            assert!(!ours.contains("hunter2"), "{ours}");
        }
    }

    /// `since: 10m` is ten minutes before the Verification was created, whenever it is checked:
    /// the same request as `--since` with that time.
    #[test]
    fn a_duration_ago_is_measured_from_the_creation() {
        let now: jiff::Timestamp = "2026-07-12T15:00:00Z".parse().expect("a time");
        let object = verification(
            json!({"targets": ["deploy/web"], "since": "10m", "image": ["a/b:1"]}),
            Some("2026-07-12T10:10:00Z"),
        );
        let cli = clap_args(&argv(&[
            "deploy/web",
            "--since",
            "2026-07-12T10:00:00Z",
            "--image",
            "a/b:1",
        ]))
        .expect("parses");
        assert_eq!(object.args().expect("args"), cli);
        let ours = object.request_at(now).expect("a request");
        assert_eq!(ours, VerifyRequest::parse_at(&cli, now).expect("a request"));
        // An RFC 3339 time after the creation is the time given (a Verification made before
        // the merge), checked against the clock only.
        let object = verification(
            json!({"targets": ["deploy/web"], "since": "2026-07-12T10:20:00Z", "image": ["a/b:1"]}),
            Some("2026-07-12T10:10:00Z"),
        );
        assert!(object.request_at(now).is_ok());
        // A bad duration is refused in --since's words.
        let object = verification(
            json!({"targets": ["deploy/web"], "since": "0m"}),
            Some("2026-07-12T10:10:00Z"),
        );
        let refused = object.request_at(now).expect_err("refused").to_string();
        assert!(
            refused.starts_with("--since `0m` is no time ago"),
            "{refused}"
        );
    }

    /// A commit ref only a local repository resolves is refused, saying so; a SHA is taken.
    #[test]
    fn a_commit_ref_is_refused() {
        use liveproof_evidence::hint::Hinted as _;
        let now: jiff::Timestamp = "2026-07-12T11:00:00Z".parse().expect("a time");
        let spec = |commit: &str| json!({"targets": ["ks/apps"], "since": "2026-07-12T10:00:00Z", "commit": commit});
        for given in ["HEAD", "main", "v1.4.0"] {
            let refused = verification(spec(given), None)
                .request_at(now)
                .expect_err("a ref is refused");
            assert_eq!(
                refused.to_string(),
                format!("commit `{given}` is a ref: a Verification has no git repository to resolve it in")
            );
            assert!(refused.hint().is_some_and(|h| h.contains("SHA")));
        }
        assert!(verification(spec("3f2c1ab"), None).request_at(now).is_ok());
    }

    /// Every `verify` argument is a field of the spec or named in [`VERIFY_NOT_IN_SPEC`] with
    /// what replaces it: a flag added to `verify` is not forgotten here.
    #[test]
    fn every_verify_argument_is_in_the_spec_or_said_why_not() {
        let schema = serde_json::to_value(schemars::schema_for!(VerificationSpec)).expect("JSON");
        let fields: Vec<String> = schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(|camel| {
                camel
                    .chars()
                    .flat_map(|c| {
                        let lower = c.to_ascii_lowercase();
                        (c.is_ascii_uppercase().then_some('_').into_iter()).chain([lower])
                    })
                    .collect()
            })
            .collect();
        let command = VerifyArgs::augment_args(clap::Command::new("verify"));
        let mut missing = Vec::new();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            let in_spec = fields.iter().any(|f| f == id);
            let said = VERIFY_NOT_IN_SPEC.iter().any(|(name, _)| *name == id);
            assert!(
                !(in_spec && said),
                "{id} is both in the spec and said not to be"
            );
            if !in_spec && !said {
                missing.push(id.to_string());
            }
        }
        assert!(
            missing.is_empty(),
            "verify arguments the spec neither has nor explains: {missing:?}"
        );
        // And nothing listed is stale.
        for (name, _) in VERIFY_NOT_IN_SPEC {
            assert!(
                command.get_arguments().any(|a| a.get_id() == *name),
                "{name} is no verify argument"
            );
        }
        for field in &fields {
            assert!(
                command
                    .get_arguments()
                    .any(|a| a.get_id() == field.as_str()),
                "spec field {field} is no verify argument"
            );
        }
    }
}
