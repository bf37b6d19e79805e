//! Arguments validated into what the commands run on: every bad flag is caught here, with
//! the flag named, before anything is sent to a cluster. For `verify` in two steps: parsing
//! ([`VerifyRequest::parse`]) reads nothing; resolving ([`VerifyRequest::resolve`]) does the
//! local I/O a configuration needs (git, the `-f` manifests, the kubeconfig's contexts).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::{
    Change, ExpectedImage, ManifestExpectation, SecretRefExpectation, Target,
};
use liveproof_gather::live::ClusterOptions;
use liveproof_report::{Format, Render, TextStyle};

use crate::cli::{ChangeArgs, ClusterArgs, ColorChoice, VerifyArgs};

/// A usage error: exit 2, message names the flag.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Target(#[from] liveproof_evidence::TargetError),
    #[error("--context is given {given} times; only `verify` checks several clusters")]
    ManyContexts { given: usize },
    #[error("-o {format} with several clusters: a fleet's report is not drawn in {format}")]
    FleetFormat { format: String },
    #[error("--context {name}: the kubeconfig has no such context{}", if known.is_empty() { String::new() } else { format!(" (it has: {})", known.join(", ")) })]
    UnknownContext {
        name: String,
        /// The nearest context the kubeconfig has.
        suggestion: Option<String>,
        /// Every context it has (up to 20).
        known: Vec<String>,
    },
    #[error("--max-concurrency {given}: {reason}")]
    MaxConcurrency { given: usize, reason: &'static str },
    #[error("{given} targets: more than liveproof verifies in one run ({max})")]
    TooManyTargets { given: usize, max: usize },
    #[error("--all-contexts: the kubeconfig names no context")]
    NoContexts,
    #[error("--all-contexts: {0}")]
    Contexts(#[source] liveproof_gather::GatherError),
    #[error("-l/--selector: {0}")]
    Selector(#[from] liveproof_evidence::selector::SelectorError),
    #[error("--since `{given}` {reason}")]
    Since { given: String, reason: String },
    #[error("--since {given} is in the future (now {now}): a change that has not happened yet cannot be live")]
    SinceFuture { given: String, now: String },
    #[error("--commit {commit}: its committer time {at} is in the future (now {now}); the committer's clock was probably wrong")]
    CommitFuture {
        commit: String,
        at: String,
        now: String,
    },
    #[error("--wait needs a change time: without one no pod can be shown to have started after the change, so the wait could only end at --timeout")]
    WaitWithoutSince,
    #[error("--commit `{given}` names no commit: give a SHA (7 to 40 hex digits) or a ref --repo resolves")]
    Commit { given: String },
    #[error("--commit {commit}: {source}")]
    CommitTime {
        commit: String,
        #[source]
        source: liveproof_gather::git::GitError,
    },
    #[error("--image `{given}` is not an image reference: {reason}")]
    Image { given: String, reason: String },
    #[error("--expect `{given}`: {reason}")]
    Expect { given: String, reason: String },
    #[error("--chart-version `{given}` is empty or has spaces")]
    ChartVersion { given: String },
    #[error("--version-url/--expect-version/--version-json: {0}")]
    Versions(String),
    #[error("--version-url `{given}`: {reason}")]
    VersionUrl { given: String, reason: String },
    #[error("{}", if *with_value { format!("--expect-env `{given}=…` gives a value (not shown here): it takes the variable's name alone") } else { format!("--expect-env `{given}` is not an env var name") })]
    Env { given: String, with_value: bool },
    #[error("--expect-secret-ref `{given}` is not SECRET or SECRET/KEY")]
    SecretRef { given: String },
    #[error("--timeout `{given}` is not a duration: {reason}")]
    Timeout { given: String, reason: String },
    #[error("--report {}: {extension} names no report format", path.display())]
    ReportExtension { path: PathBuf, extension: String },
    #[error("--record {}: {reason}", path.display())]
    Record { path: PathBuf, reason: String },
    #[error("--request-timeout `{given}` is not a duration: {reason}")]
    RequestTimeout { given: String, reason: String },
    #[error("--from {}: no such file or directory", path.display())]
    FromMissing { path: PathBuf },
    /// A change flag given with a target kind it cannot apply to: refused, never ignored.
    #[error("{flag} applies to {applies_to} targets, not {target}")]
    NotApplicable {
        flag: &'static str,
        applies_to: &'static str,
        target: String,
        hint: &'static str,
    },
    #[error("-k {}: {reason}", dir.display())]
    Kustomize {
        dir: PathBuf,
        reason: String,
        hint: Option<String>,
    },
    #[error("-f {}: {reason}", path.display())]
    Manifests {
        path: PathBuf,
        reason: String,
        /// How to fix it: the hint of the error that `reason` says, or our own.
        hint: Option<String>,
    },
    #[error("--from reads one dump, and --context is given {given} times")]
    FromContexts { given: usize },
    #[error("--from with --kubeconfig/--context (for the context's namespace): {0}")]
    FromKubeconfig(#[source] liveproof_gather::GatherError),
}

use liveproof_evidence::hint::Hinted;

impl Hinted for ConfigError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            ConfigError::ManyContexts { .. } => Some(Cow::Borrowed("run this command once per context, or verify them all at once: liveproof verify --context A --context B …")),
            ConfigError::FleetFormat { format, .. } => Some(Cow::Owned(format!("-o json (a `clusters[]` section per cluster), or -o {format} with one --context"))),
            ConfigError::UnknownContext { suggestion, .. } => Some(Cow::Owned(format!("{}see `kubectl config get-contexts`", suggestion.as_ref().map(|s| format!("did you mean `{s}`? ")).unwrap_or_default()))),
            ConfigError::MaxConcurrency { .. } => Some(Cow::Borrowed("give how many clusters to verify at once, 1 to 64 (default 16)")),
            ConfigError::TooManyTargets { max, .. } => Some(Cow::Owned(format!("split the verify, by namespace (-n) or by label (-l), into runs of at most {max} targets"))),
            ConfigError::NoContexts => Some(Cow::Borrowed("check `kubectl config get-contexts`, or name clusters with --context")),
            ConfigError::Since { .. } => Some(Cow::Borrowed(SINCE_EXAMPLES)),
            ConfigError::SinceFuture { .. } => Some(Cow::Borrowed(SINCE_EXAMPLES)),
            ConfigError::CommitFuture { .. } => Some(Cow::Borrowed("pass the merge time yourself: --since 2026-07-12T10:00:00Z or --since 30m")),
            ConfigError::WaitWithoutSince => Some(Cow::Borrowed("add --since TIME (e.g. --since 30m or --since 2026-07-12T10:00:00Z), or --commit SHA with --repo holding it")),
            ConfigError::Commit { .. } => Some(Cow::Borrowed("e.g. --commit 3f2c1ab, --commit HEAD, --commit main or --commit v1.4.0")),
            ConfigError::Image { .. } => Some(Cow::Borrowed("e.g. --image ghcr.io/acme/inventory:1.4.0 or --image ghcr.io/acme/inventory@sha256:…")),
            ConfigError::Expect { .. } => Some(Cow::Borrowed("plain text is matched as is; `re:` starts a regular expression, e.g. --expect 're:secretKeyRef:\\s+name: inventory-db'")),
            ConfigError::Versions(..) => Some(Cow::Borrowed("give one --expect-version for all URLs or one per --version-url, in the same order")),
            ConfigError::VersionUrl { .. } => Some(Cow::Borrowed("give the http(s) URL the server reports its version at, e.g. --version-url https://shop.example/version")),
            ConfigError::Timeout { .. } => Some(Cow::Borrowed("e.g. --timeout 90s, 5m, 1h30m, or 300 (seconds)")),
            ConfigError::ReportExtension { .. } => Some(Cow::Borrowed("use .json, .yaml, .xml (JUnit), .md or .txt, or say it: --report-format json|yaml|junit|markdown|text")),
            ConfigError::Record { .. } => Some(Cow::Borrowed("give --record a file (it is created if missing) in a directory that exists and you can write, e.g. --record deployments.jsonl")),
            ConfigError::RequestTimeout { .. } => Some(Cow::Borrowed("e.g. --request-timeout 10s, 1m, or 5 (seconds); 0 for no per-request limit")),
            ConfigError::FromMissing { .. } => Some(Cow::Borrowed("--from takes a file or a directory of .yaml, .yml or .json manifests, e.g. written by `kubectl get deploy,rs,pods -o yaml > dump.yaml`")),
            ConfigError::NotApplicable { hint, .. } => Some(Cow::Borrowed(hint)),
            ConfigError::FromContexts { .. } => Some(Cow::Borrowed("with --from, --context only names the kubeconfig context whose namespace targets without one are read in: give it once, or use -n")),
            ConfigError::Target(inner) => inner.hint(),
            ConfigError::Selector(inner) => inner.hint(),
            ConfigError::CommitTime { source, .. } => source.hint(),
            ConfigError::Contexts(inner) | ConfigError::FromKubeconfig(inner) => inner.hint(),
            ConfigError::Manifests { hint, .. } | ConfigError::Kustomize { hint, .. } => {
                hint.as_deref().map(Cow::Borrowed)
            }
            ConfigError::Env { given, with_value: true } => Some(Cow::Owned(format!("--expect-env {given}: the check is that the template sets it; values are never compared or printed, as they can be secrets"))),
            ConfigError::Env { with_value: false, .. } => Some(Cow::Borrowed("give the name of a variable the container's template sets, e.g. --expect-env DB_URL (no spaces, no `=`)")),
            ConfigError::ChartVersion { .. }
            | ConfigError::SecretRef { .. } => None,
        }
    }
}

/// Where objects come from.
#[derive(Debug, Clone)]
pub enum Source {
    Live(ClusterOptions),
    Offline(PathBuf),
}

#[derive(Debug, Clone)]
pub struct VerifyConfig {
    pub targets: Vec<Target>,
    pub change: Change,
    pub source: Source,
    pub all_namespaces: bool,
    /// `-n`: the namespace for targets that name none (offline; live asks the kubeconfig too).
    pub namespace: Option<String>,
    /// `--wait --timeout`: when the whole command must be done.
    pub wait: Option<crate::deadline::Deadline>,
    /// `--request-timeout`: bounds each API, registry and --version-url request.
    pub request_timeout: Duration,
    pub format: Format,
    pub style: TextStyle,
    /// `--max-release-size`.
    pub max_release_size: usize,
    /// `--repo`: where `--commit` is read from.
    pub repo: std::path::PathBuf,
    /// `--insecure-registry`: registries spoken to over plain HTTP.
    pub insecure_registries: Vec<String>,
    /// `--logs N`: log lines per not-ready container in the diagnostics (off when `None`).
    pub logs: Option<i64>,
    /// `--snapshot DIR`: verify what changed since the snapshot there.
    pub snapshot: Option<std::path::PathBuf>,
    /// `--report FILE`, and the format written there.
    pub report: Option<(std::path::PathBuf, Format)>,
    /// `--record FILE`: where the deployment record line is appended (checked writable).
    pub record: Option<std::path::PathBuf>,
    /// What the change time was taken from, for the verbose log.
    pub since_origin: Option<String>,
    /// Where `namespace` was taken from when no `-n` gave it (offline: the kubeconfig
    /// context's namespace), for the verbose log.
    pub namespace_origin: Option<String>,
    /// `--context` given more than once, or `--all-contexts`: the contexts to verify the same
    /// change in, each with the options of `source` (empty: one cluster, `source`'s).
    pub fleet: Vec<String>,
    /// `--max-concurrency`: how many of the fleet's clusters are verified at once.
    pub fleet_concurrency: usize,
    /// `-l/--selector`: the workloads whose labels match are targets too (as given, and
    /// parsed: it was checked when the configuration was made).
    pub selector: Option<(String, liveproof_evidence::selector::LabelSelector)>,
    /// Whether each GitOps revision seen contains `--commit`, traced in `--repo` once per
    /// command (a `--wait` judges many snapshots naming the same revisions).
    pub containment: ContainmentCache,
    /// What `--commit` did to each chart a HelmRelease names, read from `--repo` once per
    /// command (about six git processes a chart; a `--wait` judged every snapshot with them).
    pub chart_facts: ChartFactsCache,
    /// What `--repo` holds after `--commit` (manifests as of later commits, the later commits
    /// that touched each `-f` path), read once per command.
    pub history: HistoryCache,
    /// The Helm releases decoded so far, by storage object and resourceVersion: shared with
    /// the gather, so a `--wait` decodes each revision once. One cluster's: a fleet gives each
    /// cluster its own, as the same object and resourceVersion may hold another release there.
    pub decode_cache: std::sync::Arc<liveproof_gather::releases::DecodeCache>,
    /// Where `--wait`'s progress goes besides stderr (an MCP client's progress notifications).
    pub progress: Option<crate::progress::ProgressSink>,
    /// What a `--version-url` read may reach: `None` for the URLs the user typed (any of
    /// them; a redirect not to a link-local or metadata address), or the MCP operator's
    /// allow-list.
    pub version_reach: Option<liveproof_gather::reach::Reach>,
}

/// Git's answers about charts, by chart path, shared by every snapshot a command judges
/// (`None`: the repository has no such facts, and is not asked again).
pub type ChartFactsCache = std::sync::Arc<
    std::sync::Mutex<std::collections::BTreeMap<String, Option<liveproof_evidence::ChartChange>>>,
>;

/// Git's answers about what came after `--commit`, shared by every snapshot a command judges:
/// the manifests as of a commit under a path (by `commit`, `path` and how it is read), and
/// the later commits that touched each `-f` path.
#[derive(Debug, Clone, Default)]
pub struct HistoryCache {
    pub manifests: GitAnswers<liveproof_evidence::history::CommitManifests>,
    pub later: GitAnswers<Result<Vec<String>, String>>,
}

/// Answers git gave, by what was asked, shared by every snapshot a command judges.
pub type GitAnswers<V> = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, V>>>;

/// Git's answers about revisions, shared by every snapshot a command judges.
pub type ContainmentCache = std::sync::Arc<
    std::sync::Mutex<std::collections::BTreeMap<String, liveproof_evidence::Containment>>,
>;

/// Colour as `--color` and `NO_COLOR` say; the width of the terminal stdout is, or 100 columns
/// when it is a pipe or a file (a CI log, a PR comment).
pub fn text_style(choice: ColorChoice, stdout_is_terminal: bool) -> TextStyle {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && !no_color,
    };
    let base = if color {
        TextStyle::colored()
    } else {
        TextStyle::plain()
    };
    let columns = stdout_is_terminal
        .then(|| terminal_size::terminal_size_of(std::io::stdout()))
        .flatten()
        .map(|(terminal_size::Width(w), _)| usize::from(w));
    match columns {
        Some(w) => base.with_width(w),
        None => base,
    }
}

impl VerifyConfig {
    /// A verification of `targets` against `change`, read from `source`, with every other
    /// setting as the CLI's defaults leave it (plain text, no wait, no expectations beyond
    /// `change`): what a command that verifies on its own behalf starts from, setting the
    /// fields it needs (`wait`, `insecure_registries`, …) with struct update syntax.
    pub fn new(targets: Vec<Target>, change: Change, source: Source) -> VerifyConfig {
        let (namespace, request_timeout) = match &source {
            Source::Live(options) => (options.namespace.clone(), options.request_timeout),
            Source::Offline(_) => (None, None),
        };
        VerifyConfig {
            targets,
            change,
            source,
            all_namespaces: false,
            namespace,
            wait: None,
            request_timeout: request_timeout
                .unwrap_or(liveproof_gather::live::DEFAULT_REQUEST_TIMEOUT),
            format: Format::Text,
            style: TextStyle::plain(),
            max_release_size: liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
            repo: PathBuf::from("."),
            insecure_registries: Vec::new(),
            logs: None,
            snapshot: None,
            report: None,
            record: None,
            since_origin: None,
            namespace_origin: None,
            selector: None,
            containment: ContainmentCache::default(),
            chart_facts: ChartFactsCache::default(),
            history: HistoryCache::default(),
            decode_cache: Default::default(),
            progress: None,
            version_reach: None,
            fleet: Vec::new(),
            fleet_concurrency: DEFAULT_FLEET_CONCURRENCY,
        }
    }

    /// [`VerifyRequest::parse`], then [`VerifyRequest::resolve`].
    pub fn from_args(args: &VerifyArgs, style: TextStyle) -> Result<VerifyConfig, ConfigError> {
        VerifyRequest::parse(args)?.resolve(style)
    }
}

/// A `verify` command line, parsed and checked: each flag's syntax, and the rules between flags
/// that need nothing read. Making one reads no file, runs no process and opens no kubeconfig;
/// [`VerifyRequest::resolve`] does that I/O (git for `--commit`, the `-f` manifests, the
/// kubeconfig's contexts) and checks what needs it.
#[derive(Debug)]
pub struct VerifyRequest {
    args: VerifyArgs,
    targets: Vec<Target>,
    change: Change,
    since_origin: Option<String>,
    /// When the command started: `--since 10m` and a commit's time are measured from it.
    now: Timestamp,
    request_timeout: Duration,
    /// `--wait`'s deadline: the clock starts when the command does.
    wait: Option<crate::deadline::Deadline>,
    selector: Option<(String, liveproof_evidence::selector::LabelSelector)>,
    fleet_concurrency: usize,
    report: Option<(PathBuf, Format)>,
}

impl VerifyRequest {
    /// Parses and checks `args`; reads nothing.
    pub fn parse(args: &VerifyArgs) -> Result<VerifyRequest, ConfigError> {
        let now = Timestamp::now();
        let targets = Target::parse_all(&args.targets)?;
        let (change, since_origin) = change(&args.change, now)?;
        let several_clusters = args.cluster.context.len() > 1 || args.all_contexts;
        let fleet_concurrency = match args.max_concurrency {
            None => DEFAULT_FLEET_CONCURRENCY,
            Some(0) => {
                return Err(ConfigError::MaxConcurrency {
                    given: 0,
                    reason: "at least one cluster must be verified at a time",
                })
            }
            Some(n) if n > 64 => {
                return Err(ConfigError::MaxConcurrency {
                    given: n,
                    reason: "more than 64 clusters at once",
                })
            }
            // Given for one cluster it would be silently ignored: refused instead.
            Some(n) if !several_clusters || args.from.is_some() => {
                return Err(ConfigError::MaxConcurrency {
                    given: n,
                    reason: "only applies to several clusters (--context given more than once, or --all-contexts)",
                })
            }
            Some(n) => n,
        };
        let request_timeout = request_timeout(&args.cluster)?;
        // The clock starts now: --timeout bounds the whole command, the first gather included.
        let wait = if args.wait {
            // Without a change time pod_restarted can never pass, so waiting could only time
            // out: refuse now. A snapshot supplies its own time, and --commit is read for one.
            if change.since.is_none() && change.commit.is_none() && args.snapshot.is_none() {
                return Err(ConfigError::WaitWithoutSince);
            }
            Some(crate::deadline::Deadline::starting_now(parse_duration(
                &args.timeout,
            )?))
        } else {
            None
        };
        let selector = match &args.selector {
            Some(text) => Some((text.clone(), liveproof_evidence::selector::parse(text)?)),
            None => None,
        };
        let report = args
            .report
            .as_ref()
            .map(|path| report_file(path, args.report_format))
            .transpose()?;
        Ok(VerifyRequest {
            args: args.clone(),
            targets,
            change,
            since_origin,
            now,
            request_timeout,
            wait,
            selector,
            fleet_concurrency,
            report,
        })
    }

    /// The request a `verify` command line states (its words after `liveproof verify`),
    /// parsed by the CLI's own parser and checked as [`VerifyRequest::parse`] checks it: no
    /// file, process or kubeconfig is read. The story corpus reads stories with it.
    pub fn from_argv<S: AsRef<str>>(args: &[S]) -> anyhow::Result<VerifyRequest> {
        use clap::Parser as _;
        let argv = ["liveproof", "verify"]
            .into_iter()
            .chain(args.iter().map(AsRef::as_ref));
        let cli = crate::cli::Cli::try_parse_from(argv)?;
        let crate::cli::Command::Verify(args) = cli.command else {
            anyhow::bail!("not a verify command line");
        };
        Ok(VerifyRequest::parse(&args)?)
    }

    /// What to verify, as given.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// The change and what it must show.
    pub fn change(&self) -> &Change {
        &self.change
    }

    /// `-n`, when given (else the kubeconfig's namespace, read when resolved).
    pub fn namespace(&self) -> Option<&str> {
        self.args.cluster.namespace.as_deref()
    }

    /// The I/O a configuration needs, then the checks that need it: `--commit` read in
    /// `--repo`, the `-f` manifests, `--from`'s path, and the kubeconfig's contexts.
    pub fn resolve(self, style: TextStyle) -> Result<VerifyConfig, ConfigError> {
        let VerifyRequest {
            args,
            mut targets,
            mut change,
            mut since_origin,
            now,
            request_timeout,
            wait,
            selector,
            fleet_concurrency,
            report,
        } = self;
        // With --snapshot the change time is the snapshot's; the commit is only matched.
        resolve_commit(
            &args.change,
            &mut change,
            &mut since_origin,
            args.snapshot.is_some(),
            now,
        )?;
        if wait.is_some() && change.since.is_none() && args.snapshot.is_none() {
            return Err(ConfigError::WaitWithoutSince);
        }
        change.declared = declared_templates(&args, change.commit.as_deref(), request_timeout)?;
        for d in &change.declared {
            if !targets.contains(&d.target) {
                targets.push(d.target.clone());
            }
        }
        check_target_count(targets.len())?;
        applicable(&change, &targets, args.snapshot.is_some())?;
        if let Some(path) = &args.record {
            record_file(path)?;
        }
        let source = match &args.from {
            Some(path) if !path.exists() => {
                return Err(ConfigError::FromMissing { path: path.clone() })
            }
            Some(path) => Source::Offline(path.clone()),
            None if args.cluster.context.len() > 1 || args.all_contexts => {
                Source::Live(ClusterOptions {
                    kubeconfig: args.cluster.kubeconfig.clone(),
                    context: None,
                    namespace: namespace(&args.cluster),
                    request_timeout: Some(request_timeout),
                    deadline: None,
                    response_budget: response_budget(&args.cluster),
                })
            }
            None => {
                let options = ClusterOptions::try_from(&args.cluster)?;
                // A misspelled context is a usage error before anything is sent. A kubeconfig
                // that cannot be read is reported by the connection, with its own words.
                if let Ok(known) = liveproof_gather::live::kubeconfig_contexts(&options) {
                    unknown_context(&known, options.context.as_slice())?;
                }
                Source::Live(options)
            }
        };
        let (namespace, namespace_origin) = match (&source, namespace(&args.cluster)) {
            (Source::Offline(_), None) if !args.cluster.all_namespaces => {
                offline_namespace(&args.cluster)?
            }
            (_, given) => (given, None),
        };
        let fleet = fleet(&args, &source)?;
        Ok(VerifyConfig {
            fleet,
            fleet_concurrency,
            selector,
            containment: ContainmentCache::default(),
            chart_facts: ChartFactsCache::default(),
            history: HistoryCache::default(),
            decode_cache: Default::default(),
            progress: None,
            version_reach: None,
            targets,
            change,
            source,
            all_namespaces: args.cluster.all_namespaces,
            namespace,
            namespace_origin,
            wait,
            request_timeout,
            format: args.output,
            style,
            since_origin,
            max_release_size: args.max_release_size,
            repo: args.change.repo.clone(),
            insecure_registries: args.change.insecure_registry.clone(),
            logs: args.logs.filter(|n| *n > 0),
            snapshot: args.snapshot.clone(),
            report,
            record: args.record.clone(),
        })
    }
}

/// `--record FILE`: a file that can be appended to (created when missing), checked before any
/// work so a run never ends with a verdict it could not record.
fn record_file(path: &std::path::Path) -> Result<(), ConfigError> {
    let refuse = |reason: String| ConfigError::Record {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_dir() {
        return Err(refuse("is a directory".into()));
    }
    liveproof_gather::files::check_record(path).map_err(|e| refuse(format!("cannot be appended to: {e}")))
}

/// `--report FILE`: the format `--report-format` names, else the one its extension names; an
/// extension that names none is refused rather than guessed.
fn report_file(
    path: &std::path::Path,
    explicit: Option<Format>,
) -> Result<(PathBuf, Format), ConfigError> {
    if let Some(f) = explicit {
        return Ok((path.to_path_buf(), f));
    }
    let extension = path.extension().and_then(|e| e.to_str());
    let by_extension = match extension.map(str::to_ascii_lowercase).as_deref() {
        Some("json") => Format::Json,
        Some("yaml" | "yml") => Format::Yaml,
        Some("xml") => Format::Junit,
        Some("md" | "markdown") => Format::Markdown,
        Some("txt" | "text") => Format::Text,
        _ => {
            return Err(ConfigError::ReportExtension {
                path: path.to_path_buf(),
                extension: extension
                    .map(|e| format!("`.{e}`"))
                    .unwrap_or_else(|| "no extension".into()),
            })
        }
    };
    Ok((path.to_path_buf(), by_extension))
}

/// Every change flag applies to every target it is given with, or the command is refused:
/// `--chart-version` is about an installed chart (release/, helmrelease/); `--expect` about an
/// installed manifest (release/, helmrelease/) or a pod template (workloads). `--image`,
/// `--expect-env` and `--expect-secret-ref` apply to every kind: a Helm or GitOps target's
/// workloads are held to them.
fn applicable(change: &Change, targets: &[Target], snapshot: bool) -> Result<(), ConfigError> {
    use liveproof_evidence::TargetKind;
    if change.chart_version.is_some() {
        let helm = |t: &&Target| matches!(t.kind, TargetKind::Release | TargetKind::HelmRelease);
        let other = targets.iter().find(|t| !helm(t)).map(Target::to_string);
        let other = other.or_else(|| snapshot.then(|| "the workloads --snapshot verifies".into()));
        if let Some(target) = other {
            return Err(ConfigError::NotApplicable {
                flag: "--chart-version",
                applies_to: "release/, helmrelease/",
                target,
                hint: "verify the release that installs it (release/NAME or helmrelease/NAME) with --chart-version, and the workload with --image or -f",
            });
        }
    }
    if !change.manifest.is_empty() {
        // The kinds that store no rendered manifest, and what to verify them with instead.
        let without_manifest = targets.iter().find_map(|t| match t.kind {
            TargetKind::Kustomization | TargetKind::Application => Some((t, "a Kustomization or Application stores no rendered manifest: verify it with --commit, and hold its workloads to --image, --expect-env or --expect-secret-ref")),
            TargetKind::Canary | TargetKind::KnativeService => Some((t, "a Canary or Knative Service stores no rendered manifest: hold the workload it leads to with --image, --expect-env or --expect-secret-ref")),
            _ => None,
        });
        if let Some((t, hint)) = without_manifest {
            return Err(ConfigError::NotApplicable {
                flag: "--expect",
                applies_to: "release/, helmrelease/ (the installed manifest) and deployment/, statefulset/, daemonset/ (the pod template)",
                target: t.to_string(),
                hint,
            });
        }
    }
    Ok(())
}

/// `-f PATH` and `-k DIR`: the pod templates the manifests declare — from the work tree, or
/// with `--commit` as of that commit in `--repo` (so uncommitted edits do not count); `-f -`
/// from stdin; `-k DIR` as `kubectl kustomize DIR` builds it.
fn declared_templates(
    args: &VerifyArgs,
    commit: Option<&str>,
    request_timeout: Duration,
) -> Result<Vec<liveproof_evidence::DeclaredTemplate>, ConfigError> {
    let mut out: Vec<liveproof_evidence::DeclaredTemplate> = Vec::new();
    for path in &args.manifests {
        let hinted = |reason: String, hint: Option<Cow<'_, str>>| ConfigError::Manifests {
            path: path.clone(),
            reason,
            hint: hint.map(Cow::into_owned),
        };
        let (observed, source, repo_path) = read_manifests(args, path, commit)?;
        let before = out.len();
        add_declared(
            &mut out,
            args,
            &observed,
            &source,
            &path.display().to_string(),
        )
        .map_err(|reason| hinted(reason, None))?;
        for d in &mut out[before..] {
            d.repo_path.clone_from(&repo_path);
        }
        if out.len() == before {
            return Err(hinted(
                format!("declares no {}", liveproof_evidence::TargetKind::workload_kinds("or", false)),
                Some("-f takes the manifests the repository applies (plain YAML, not Helm templates); for a Helm chart verify release/NAME or helmrelease/NAME".into()),
            ));
        }
    }
    for dir in &args.kustomize {
        let refuse = |reason: String, hint: Option<String>| ConfigError::Kustomize {
            dir: dir.clone(),
            reason,
            hint,
        };
        let built =
            kustomize(dir, request_timeout).map_err(|(reason, hint)| refuse(reason, hint))?;
        let observed = liveproof_gather::offline::load_files(vec![(
            PathBuf::from(format!("kubectl kustomize {}", dir.display())),
            built,
        )])
        .map_err(|e| refuse(e.to_string(), e.hint().map(Cow::into_owned)))?;
        let before = out.len();
        let source = format!("kubectl kustomize {}", dir.display());
        add_declared(
            &mut out,
            args,
            &observed,
            &source,
            &format!("-k {}", dir.display()),
        )
        .map_err(|reason| refuse(reason, None))?;
        if out.len() == before {
            return Err(refuse(
                format!("builds no {}", liveproof_evidence::TargetKind::workload_kinds("or", false)),
                Some("-k takes a directory holding a kustomization.yaml whose resources include the workloads".into()),
            ));
        }
    }
    Ok(out)
}

/// Each workload `observed` holds with a pod template, as a declared template read from
/// `source` (given on the command line as `given`).
fn add_declared(
    out: &mut Vec<liveproof_evidence::DeclaredTemplate>,
    args: &VerifyArgs,
    observed: &liveproof_evidence::Observed,
    source: &str,
    given: &str,
) -> Result<(), String> {
    for (kind, meta, template) in observed.workloads() {
        let (Some(name), Some(template)) = (meta.name.as_deref(), template) else {
            continue;
        };
        let namespace = meta
            .namespace
            .as_deref()
            .or(args.cluster.namespace.as_deref());
        let template = serde_json::to_value(template)
            .map_err(|e| format!("{kind}/{name}: the pod template: {e}"))?;
        out.push(liveproof_evidence::DeclaredTemplate {
            target: Target::new(kind, namespace, name),
            template,
            source: source.to_string(),
            given: given.to_string(),
            repo_path: None,
        });
    }
    Ok(())
}

/// The most read from stdin (`-f -`) or from `kubectl kustomize`: what a YAML file may be.
const MAX_MANIFEST_STREAM: u64 = liveproof_gather::offline::MAX_YAML_FILE;

/// The objects `-f path` names, where they were read (for the evidence's `source`), and with
/// `commit` the path in `--repo` they were read at: stdin for `-`; the path as of `commit` in
/// `--repo`; or the work tree (a directory's top level, every level with `-R`, as kubectl). A
/// relative path that is not there from the working directory but is in `--repo` is read
/// there, and stderr says so. A URL is refused.
fn read_manifests(
    args: &VerifyArgs,
    path: &Path,
    commit: Option<&str>,
) -> Result<
    (
        liveproof_evidence::Observed,
        String,
        Option<liveproof_evidence::history::RepoPath>,
    ),
    ConfigError,
> {
    let hinted = |reason: String, hint: Option<String>| ConfigError::Manifests {
        path: path.to_path_buf(),
        reason,
        hint,
    };
    let text = path.to_string_lossy();
    if text.contains("://") {
        // Named without its credentials: a URL can carry a password or a token.
        let shown = liveproof_redacted::DisplaySafeUrl::new(text.as_ref()).to_string();
        let hinted = |reason: String, hint: Option<String>| ConfigError::Manifests {
            path: PathBuf::from(&shown),
            reason,
            hint,
        };
        return Err(hinted(
            "is a URL, and liveproof reads no remote manifests: what it verifies against must be what you reviewed".into(),
            Some(format!("download it first, e.g. `curl -fsSLo manifest.yaml '{}'`, then -f manifest.yaml", liveproof_redacted::DisplaySafeUrl::new(text.as_ref()))),
        ));
    }
    if text == "-" {
        if let Some(commit) = commit {
            return Err(hinted(
                format!("stdin is not in the repository, and with --commit {commit} -f reads the manifests as committed"),
                Some("name the file in --repo, or leave --commit out and give --since".into()),
            ));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin().lock(), MAX_MANIFEST_STREAM + 1),
            &mut bytes,
        )
        .map_err(|e| hinted(format!("reading stdin: {e}"), None))?;
        let observed = liveproof_gather::offline::load_files(vec![(PathBuf::from("-"), bytes)])
            .map_err(|e| hinted(e.to_string(), e.hint().map(Cow::into_owned)))?;
        return Ok((observed, "stdin".into(), None));
    }
    let path = &in_repo(path, &args.change.repo, commit.is_some());
    let hinted = |reason: String, hint: Option<String>| ConfigError::Manifests {
        path: path.clone(),
        reason,
        hint,
    };
    match commit {
        Some(commit) => {
            let relative = repo_relative(&args.change.repo, path)?;
            let mut files = liveproof_gather::git::files_at(&args.change.repo, commit, &relative)
                .map_err(|e| {
                hinted(
                    format!("cannot read it as of --commit {commit}: {e}"),
                    e.hint().map(Cow::into_owned),
                )
            })?;
            if !args.recursive {
                let all = files.len();
                // Each is named as git names the blob: `SHA:./path/in/repo`.
                files.retain(|(file, _)| {
                    let name = file.to_string_lossy();
                    let name = name.split_once(':').map_or(&*name, |(_, n)| n);
                    at_top_level(Path::new(name.trim_start_matches("./")), &relative)
                });
                if !files.is_empty() {
                    not_recursed(all - files.len()).map_err(|(r, h)| hinted(r, Some(h)))?;
                }
            }
            if files.is_empty() {
                return Err(hinted(
                    format!(
                        "no .yaml, .yml or .json file there in commit {commit} of {}",
                        args.change.repo.display()
                    ),
                    Some(match args.recursive {
                        true => "-f with --commit reads the manifests as committed; commit them, or check --repo".into(),
                        false => "-f with --commit reads the manifests as committed; commit them, or check --repo (add -R to read the directories under it)".into(),
                    }),
                ));
            }
            let observed = liveproof_gather::offline::load_files(files)
                .map_err(|e| hinted(e.to_string(), e.hint().map(Cow::into_owned)))?;
            let repo_path =
                liveproof_evidence::history::RepoPath::new(&relative, args.recursive, false);
            Ok((
                observed,
                format!("{} at {commit}", path.display()),
                Some(repo_path),
            ))
        }
        None if path.is_dir() && !args.recursive => {
            let files = top_level_files(path).map_err(|e| hinted(e, None))?;
            if files.is_empty() {
                return Err(hinted(
                    "no .yaml, .yml or .json file at its top level".into(),
                    Some("-R reads every directory under it too, as kubectl's -f DIR -R".into()),
                ));
            }
            let all = liveproof_gather::offline::manifest_files(path).len();
            not_recursed(all.saturating_sub(files.len())).map_err(|(r, h)| hinted(r, Some(h)))?;
            let observed = liveproof_gather::offline::load_files(files)
                .map_err(|e| hinted(e.to_string(), e.hint().map(Cow::into_owned)))?;
            Ok((observed, path.display().to_string(), None))
        }
        None => {
            let observed = liveproof_gather::offline::load(path).map_err(|e| {
                let missing = matches!(e, liveproof_gather::offline::LoadError::NotFound { .. });
                let hint = match did_you_mean_in_repo(path, &args.change.repo) {
                    Some(there) if missing => Some(format!("did you mean {}?", there.display())),
                    _ => e.hint().map(Cow::into_owned),
                };
                hinted(e.to_string(), hint)
            })?;
            Ok((observed, path.display().to_string(), None))
        }
    }
}

/// Manifests under `-f DIR`'s subdirectories, which kubectl reads only with `-R`: refused
/// rather than left out, since a workload left out is a workload not verified, and a verdict
/// over the rest would be `live` for a change that may not be.
fn not_recursed(skipped: usize) -> Result<(), (String, String)> {
    if skipped == 0 {
        return Ok(());
    }
    Err((
        format!("{skipped} manifest file(s) in directories under it would not be read (kubectl reads them only with -R)"),
        "add -R to verify what they declare too, or name the files to verify".into(),
    ))
}

/// A relative `-f` path that is not there from the working directory, but is in `--repo`
/// (with `--commit`: any relative path not there, as git reads it from the repository): the
/// path in `--repo`, said on stderr. Any other path as given.
fn in_repo(path: &Path, repo: &Path, committed: bool) -> PathBuf {
    if path.is_absolute() || path.exists() || repo == Path::new(".") {
        return path.to_path_buf();
    }
    let there = repo.join(path);
    if committed || there.exists() {
        tracing::warn!(
            "-f {}: not found from the working directory; reading {} (in --repo)",
            path.display(),
            there.display()
        );
        return there;
    }
    path.to_path_buf()
}

/// Where a relative `path` would be in `repo`, for a did-you-mean.
fn did_you_mean_in_repo(path: &Path, repo: &Path) -> Option<PathBuf> {
    (path.is_relative() && repo != Path::new(".")).then(|| repo.join(path))
}

/// Whether `file` (relative to the repository, as git lists it) is directly in `dir` (or is
/// `dir` itself, a file): `-f DIR` without `-R` reads only the directory's top level.
fn at_top_level(file: &Path, dir: &str) -> bool {
    let dir = dir.trim_start_matches("./").trim_end_matches('/');
    if file == Path::new(dir) {
        return true;
    }
    let parent = file.parent().unwrap_or(Path::new(""));
    match dir {
        "" | "." => parent == Path::new(""),
        dir => parent == Path::new(dir),
    }
}

/// The manifest files directly in `dir`, read, in name order.
fn top_level_files(dir: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() && liveproof_gather::offline::is_manifest_name(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let size = std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        // The exact limit per format is the loader's; this only keeps a huge file unread.
        if size > liveproof_gather::offline::MAX_JSON_FILE {
            return Err(format!(
                "{}: {size} bytes is more than liveproof reads",
                path.display()
            ));
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push((path, bytes));
    }
    Ok(files)
}

/// How long `kubectl kustomize` may take at most, whatever --request-timeout says: it reads
/// local files (remote bases are fetched by kubectl, and bounded here too).
const KUSTOMIZE_TIMEOUT: Duration = Duration::from_secs(120);

/// `kubectl kustomize DIR`'s output, run with the real kubectl (`LIVEPROOF_KUBECTL`, else
/// `kubectl` on PATH), bounded; or why not and what to do, in our words.
fn kustomize(dir: &Path, request_timeout: Duration) -> Result<Vec<u8>, (String, Option<String>)> {
    if !dir.is_dir() {
        return Err((
            "not a directory".into(),
            Some(
                "-k takes the directory holding a kustomization.yaml, as `kubectl apply -k DIR`"
                    .into(),
            ),
        ));
    }
    let kubectl = std::env::var_os("LIVEPROOF_KUBECTL")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "kubectl".into());
    let mut command = std::process::Command::new(&kubectl);
    command
        .arg("kustomize")
        .arg(dir)
        .stdin(std::process::Stdio::null());
    let bounds = liveproof_process::Bounds {
        stdin: None,
        capture_stderr: true,
        timeout: request_timeout.min(KUSTOMIZE_TIMEOUT),
        max_output: usize::try_from(MAX_MANIFEST_STREAM).unwrap_or(usize::MAX),
    };
    let shown = PathBuf::from(&kubectl);
    let done = liveproof_process::run(command, bounds).map_err(|e| match e {
        liveproof_process::ProgramError::Start(ref io) if io.kind() == std::io::ErrorKind::NotFound => (
            format!("-k builds the kustomization with kubectl, and there is none (`{}` not found)", shown.display()),
            Some("install kubectl, or set LIVEPROOF_KUBECTL to its path; or build it yourself: kubectl kustomize DIR | liveproof verify -f - …".to_string()),
        ),
        e => (format!("`{} kustomize` failed: {e}", shown.display()), None),
    })?;
    if !done.status.success() {
        let said = String::from_utf8_lossy(&done.stderr);
        let said = said.trim();
        let first = said.lines().next().unwrap_or("no message");
        return Err((
            format!(
                "`kubectl kustomize {}` failed ({}): {first}",
                dir.display(),
                done.status
            ),
            Some("check that it builds: kubectl kustomize DIR".into()),
        ));
    }
    Ok(done.stdout)
}

/// `path` relative to the `--repo` directory, for `git ls-tree` run there.
fn repo_relative(repo: &std::path::Path, path: &std::path::Path) -> Result<String, ConfigError> {
    let err = |reason: String, hint: Option<&str>| ConfigError::Manifests {
        path: path.to_path_buf(),
        reason,
        hint: hint.map(str::to_string),
    };
    let absolute = |p: &std::path::Path| {
        std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .map_err(|e| err(format!("{}: {e}", p.display()), None))
    };
    let repo_abs = absolute(repo)?;
    let path_abs = absolute(path)?;
    let relative = path_abs.strip_prefix(&repo_abs).map_err(|_| ConfigError::Manifests {
        path: path.to_path_buf(),
        reason: format!("outside --repo {}", repo.display()),
        hint: Some(match did_you_mean_in_repo(path, repo) {
            Some(there) => format!("did you mean {}? -f with --commit reads the manifests from the repository that holds the commit", there.display()),
            None => "-f with --commit reads the manifests from the repository that holds the commit: pass --repo".into(),
        }),
    })?;
    let text = relative.to_string_lossy().into_owned();
    Ok(if text.is_empty() { ".".into() } else { text })
}

/// The first of `wanted` the kubeconfig does not have (its contexts are `known`), as the error
/// that names the contexts it has and the nearest.
fn unknown_context(known: &[String], wanted: &[String]) -> Result<(), ConfigError> {
    match wanted.iter().find(|c| !known.contains(c)) {
        None => Ok(()),
        Some(name) => Err(ConfigError::UnknownContext {
            name: name.clone(),
            suggestion: liveproof_evidence::closest(name, known.iter().map(String::as_str))
                .map(str::to_string),
            known: known.iter().take(20).cloned().collect(),
        }),
    }
}

/// The most targets one run verifies (given, declared by `-f` and selected by `-l`
/// together): past it the run is refused up front rather than left to grow without bound.
pub const MAX_TARGETS: usize = 50_000;

/// Clusters of a fleet verified at once unless `--max-concurrency` says otherwise.
pub const DEFAULT_FLEET_CONCURRENCY: usize = 16;

/// `n` targets, checked against [`MAX_TARGETS`].
pub fn check_target_count(n: usize) -> Result<(), ConfigError> {
    if n > MAX_TARGETS {
        return Err(ConfigError::TooManyTargets {
            given: n,
            max: MAX_TARGETS,
        });
    }
    Ok(())
}

/// What `--request-timeout 0` (no per-request limit, as kubectl) bounds a request to: nothing
/// liveproof does waits without a bound, but a day is past any request's patience.
pub const UNLIMITED_REQUEST: Duration = Duration::from_secs(24 * 3600);

/// `--request-timeout`, checked: a duration, a bare number of seconds, or `0` for no
/// per-request limit ([`UNLIMITED_REQUEST`]).
pub fn request_timeout(args: &ClusterArgs) -> Result<Duration, ConfigError> {
    let given = crate::duration::parse(&args.request_timeout).map_err(|reason| {
        ConfigError::RequestTimeout {
            given: args.request_timeout.clone(),
            reason,
        }
    })?;
    Ok(if given.is_zero() {
        UNLIMITED_REQUEST
    } else {
        given
    })
}

/// `-n`, unless `-A` is given: as kubectl, `--all-namespaces` wins over `--namespace`.
pub fn namespace(args: &ClusterArgs) -> Option<String> {
    if args.all_namespaces {
        if let Some(ns) = &args.namespace {
            tracing::info!("-n {ns} ignored: -A looks in every namespace (as kubectl)");
        }
        return None;
    }
    args.namespace.clone()
}

/// `--from` with no `-n`: the namespace of the kubeconfig context live mode would use
/// (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`; `--context` or the current one), and where
/// it came from. Read from the file only; no kubeconfig, or a context that names no namespace,
/// is `None` (the dump then decides). A kubeconfig or context named on the command line must
/// exist, as live.
fn offline_namespace(args: &ClusterArgs) -> Result<(Option<String>, Option<String>), ConfigError> {
    if args.context.len() > 1 {
        return Err(ConfigError::FromContexts {
            given: args.context.len(),
        });
    }
    let options = ClusterOptions {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.first().cloned(),
        ..ClusterOptions::default()
    };
    if options.kubeconfig.is_some() || options.context.is_some() {
        let known = liveproof_gather::live::kubeconfig_contexts(&options)
            .map_err(ConfigError::FromKubeconfig)?;
        unknown_context(&known, options.context.as_slice())?;
    }
    Ok(match liveproof_gather::live::context_namespace(&options) {
        Some(found) => (
            Some(found.namespace),
            Some(format!(
                "the namespace of the kubeconfig context `{}`",
                found.context
            )),
        ),
        None => (None, None),
    })
}

/// The contexts `verify` checks the change in: `--context` given more than once, or every
/// context of the kubeconfig with `--all-contexts`; none for one cluster.
fn fleet(args: &VerifyArgs, source: &Source) -> Result<Vec<String>, ConfigError> {
    let contexts = if args.all_contexts {
        let Source::Live(options) = source else {
            return Ok(Vec::new());
        };
        let contexts =
            liveproof_gather::live::kubeconfig_contexts(options).map_err(ConfigError::Contexts)?;
        if contexts.is_empty() {
            return Err(ConfigError::NoContexts);
        }
        contexts
    } else if args.cluster.context.len() > 1 {
        let mut contexts = args.cluster.context.clone();
        contexts.dedup();
        // A misspelled context is a usage error now, not a cluster error later.
        if let Source::Live(options) = source {
            if let Ok(known) = liveproof_gather::live::kubeconfig_contexts(options) {
                unknown_context(&known, &contexts)?;
            }
        }
        contexts
    } else {
        return Ok(Vec::new());
    };
    // What a fleet's report is drawn in is the fleet model's to say; the others are refused
    // here, before any cluster is asked (never drawn as another format).
    let drawn = |format: &Format| <FleetReport as Render>::FORMATS.contains(format);
    if !drawn(&args.output) {
        return Err(ConfigError::FleetFormat {
            format: args.output.name().to_string(),
        });
    }
    if let Some(path) = &args.report {
        let (_, written) = report_file(path, args.report_format)?;
        if !drawn(&written) {
            return Err(ConfigError::FleetFormat {
                format: written.name().to_string(),
            });
        }
    }
    Ok(contexts)
}

/// How to reach the cluster, from the kubectl-style flags (the request timeout checked): the one
/// conversion every command that reaches a cluster uses.
impl TryFrom<&ClusterArgs> for ClusterOptions {
    type Error = ConfigError;

    fn try_from(args: &ClusterArgs) -> Result<ClusterOptions, ConfigError> {
        if args.context.len() > 1 {
            return Err(ConfigError::ManyContexts {
                given: args.context.len(),
            });
        }
        Ok(ClusterOptions {
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.first().cloned(),
            namespace: namespace(args),
            request_timeout: Some(request_timeout(args)?),
            deadline: None,
            response_budget: response_budget(args),
        })
    }
}

/// `--max-response-size`, for one cluster (a fleet divides it: see `fleet`).
pub fn response_budget(args: &ClusterArgs) -> liveproof_gather::ResponseBudget {
    liveproof_gather::ResponseBudget {
        total: args
            .max_response_size
            .unwrap_or(liveproof_gather::DEFAULT_MAX_RESPONSE_SIZE),
        shared_by: 1,
    }
}

pub fn parse_duration(given: &str) -> Result<Duration, ConfigError> {
    positive_duration(given).map_err(|reason| ConfigError::Timeout {
        given: given.to_string(),
        reason,
    })
}

/// A duration such as `90s`, `1h30m` or `60` (seconds), more than zero.
fn positive_duration(given: &str) -> Result<Duration, String> {
    let d = crate::duration::parse(given)?;
    if d.is_zero() {
        return Err("it must be more than zero".into());
    }
    Ok(d)
}

/// Pairs the version flags: one value for all URLs, or one per URL in order.
fn versions(
    args: &ChangeArgs,
) -> Result<Vec<liveproof_evidence::server::VersionExpectation>, ConfigError> {
    let urls = &args.version_url;
    let pick = |values: &[String], what: &str, i: usize| -> Result<Option<String>, ConfigError> {
        match values.len() {
            0 => Ok(None),
            1 => Ok(Some(values[0].clone())),
            n if n == urls.len() => Ok(Some(values[i].clone())),
            n => Err(ConfigError::Versions(format!(
                "{n} {what} for {} URL(s)",
                urls.len()
            ))),
        }
    };
    urls.iter()
        .enumerate()
        .map(|(i, url)| {
            check_version_url(url)?;
            let expect = pick(&args.expect_version, "--expect-version", i)?.unwrap_or_default();
            let json_path = pick(&args.version_json, "--version-json", i)?;
            if let Some(path) = &json_path {
                liveproof_evidence::server::parse_json_path(path)
                    .map_err(|e| ConfigError::Versions(format!("--version-json `{path}`: {e}")))?;
            }
            Ok(liveproof_evidence::server::VersionExpectation {
                url: url.as_str().into(),
                expect,
                json_path,
            })
        })
        .collect()
}

/// A `--version-url` must be an absolute http(s) URL with a host. Errors show it redacted: a
/// URL can carry a password or a token.
fn check_version_url(given: &str) -> Result<(), ConfigError> {
    let shown = liveproof_redacted::DisplaySafeUrl::new(given).to_string();
    let refuse = |reason: String| ConfigError::VersionUrl {
        given: shown.clone(),
        reason,
    };
    let parsed = url::Url::parse(given).map_err(|e| refuse(format!("not a URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(refuse(format!(
            "`{}:` is not http or https",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(refuse("it names no host".into()));
    }
    Ok(())
}

/// What `--since` takes, for every error about it.
const SINCE_EXAMPLES: &str =
    "give an RFC 3339 time with its offset (--since 2026-07-12T10:00:00Z, \
    --since 2026-07-12T12:00:00.250+02:00) or how long ago, as kubectl takes durations (--since 10m, \
    --since 2h, --since 1h30m, --since 1d)";

/// `--since`: an RFC 3339 time with any offset, or a duration ago (`10m`, `2h`, `1h30m`, as
/// kubectl takes durations), relative to `now`. An RFC 3339 time keeps its fractional
/// seconds: a finer change time is what orders a pod start in the change's own second
/// (`liveproof_evidence::order`). A duration ago is "about then": it is kept to the second. A
/// time after `now` is refused.
pub fn parse_since(given: &str, now: Timestamp) -> Result<Timestamp, ConfigError> {
    let text = given.trim();
    let err = |reason: &str| ConfigError::Since {
        given: given.to_string(),
        reason: reason.to_string(),
    };
    let at = if let Ok(at) = text.parse::<Timestamp>() {
        at
    } else if let Some(ago) = parse_ago(text) {
        let ago = ago.map_err(|reason| err(&reason))?;
        truncate_to_second(
            now.checked_sub(ago)
                .map_err(|_| err("reaches back further than a timestamp can"))?,
        )
    } else if text.parse::<jiff::civil::Date>().is_ok() && !text.contains(['T', 't', ' ']) {
        return Err(err(
            "is a date without a time: add a time and an offset, e.g. 2026-07-12T10:00:00Z",
        ));
    } else if text.parse::<jiff::civil::DateTime>().is_ok() {
        return Err(err(
            "has no offset, so it could be any time zone's: add `Z` for UTC or the offset, e.g. 2026-07-12T10:00:00Z",
        ));
    } else {
        return Err(err("is neither an RFC 3339 time nor a duration ago"));
    };
    if at > now {
        return Err(ConfigError::SinceFuture {
            given: given.to_string(),
            now: truncate_to_second(now).to_string(),
        });
    }
    Ok(at)
}

/// `10m`, `2h`, `1h30m`, `90s`: a duration as kubectl writes one (digits and a unit, no
/// sign). `None` when `text` is not shaped like one; `Some(Err)` when it is but is unusable.
fn parse_ago(text: &str) -> Option<Result<jiff::SignedDuration, String>> {
    let shaped = text.starts_with(|c: char| c.is_ascii_digit())
        && text.ends_with(|c: char| c.is_ascii_alphabetic())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
    if !shaped {
        return None;
    }
    // Days are taken (`1d`, 24 hours); years and months, whose length depends on the date,
    // are not units.
    let duration = crate::duration::parse(text)
        .and_then(|d| jiff::SignedDuration::try_from(d).map_err(|_| "is too long ago".into()));
    Some(match duration {
        Ok(d) if d.is_zero() => {
            Err("is no time ago: give how long ago the change was, e.g. 10m".into())
        }
        Ok(d) => Ok(d),
        Err(reason) => Err(format!("is not a duration: {reason}")),
    })
}

/// Drops sub-second precision (Kubernetes times have none).
fn truncate_to_second(at: Timestamp) -> Timestamp {
    Timestamp::from_second(at.as_second()).unwrap_or(at)
}

/// The change statement as given: every flag's syntax checked, nothing read. A `--commit` ref
/// (HEAD, a branch, a tag) stays as given until [`resolve_commit`] asks git for its SHA.
fn change(args: &ChangeArgs, now: Timestamp) -> Result<(Change, Option<String>), ConfigError> {
    let since = args
        .since
        .as_deref()
        .map(|given| parse_since(given, now))
        .transpose()?;
    let origin = since.map(|_| "--since".to_string());
    let commit = match &args.commit {
        None => None,
        Some(c) => {
            // A SHA prefix names a commit by itself; anything else (HEAD, a branch, a tag) is a
            // ref only `--repo` can resolve.
            let by_ref = !liveproof_evidence::is_commit_sha(c);
            if by_ref && (c.is_empty() || c.starts_with('-') || c.contains(char::is_whitespace)) {
                return Err(ConfigError::Commit { given: c.clone() });
            }
            Some(if by_ref {
                c.clone()
            } else {
                c.to_ascii_lowercase()
            })
        }
    };
    let images = args
        .image
        .iter()
        .map(|i| {
            ExpectedImage::parse(i).map_err(|e| ConfigError::Image {
                given: i.clone(),
                reason: e.reason,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    for e in &args.expect_env {
        let valid = !e.is_empty() && !e.contains('=') && !e.contains(char::is_whitespace);
        if !valid {
            // NAME=VALUE: the value can be a secret, and is never echoed.
            let name = e.split_once('=').map_or(e.as_str(), |(name, _)| name);
            return Err(ConfigError::Env {
                given: name.to_string(),
                with_value: e.contains('='),
            });
        }
    }
    let secret_refs = args
        .expect_secret_ref
        .iter()
        .map(|s| {
            SecretRefExpectation::parse(s)
                .ok_or_else(|| ConfigError::SecretRef { given: s.clone() })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let manifest = args
        .expect
        .iter()
        .map(|e| {
            ManifestExpectation::parse(e).map_err(|reason| ConfigError::Expect {
                given: e.clone(),
                reason,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let chart_version = match &args.chart_version {
        Some(v) if v.trim().is_empty() || v.contains(char::is_whitespace) => {
            return Err(ConfigError::ChartVersion { given: v.clone() })
        }
        Some(v) => Some(v.clone()),
        None => None,
    };
    Ok((
        Change {
            since,
            since_source: None,
            commit,
            commit_time: None,
            images,
            env: args.expect_env.clone(),
            secret_refs,
            chart_version,
            manifest,
            digests: if args.no_registry {
                DigestPolicy::Off
            } else if args.check_digests {
                DigestPolicy::AllTags
            } else {
                DigestPolicy::Mutable
            },
            declared: Vec::new(),
            stated_by: None,
            prior_templates: Vec::new(),
            versions: versions(args)?,
        },
        origin,
    ))
}

/// `--commit` read in `--repo`: a ref becomes the SHA it names now, and without `--since` (or
/// a snapshot's time) the commit's committer time becomes the change time.
fn resolve_commit(
    args: &ChangeArgs,
    change: &mut Change,
    origin: &mut Option<String>,
    commit_time_known: bool,
    now: Timestamp,
) -> Result<(), ConfigError> {
    let Some(c) = &args.commit else {
        return Ok(());
    };
    let by_ref = !liveproof_evidence::is_commit_sha(c);
    // A snapshot supplies the change time itself: a SHA is then only matched, and its time
    // read for the lead time when the repository has it.
    if !by_ref && commit_time_known {
        change.commit_time = liveproof_gather::git::commit_time(&args.repo, c)
            .ok()
            .map(|info| info.committed);
        return Ok(());
    }
    match liveproof_gather::git::commit_time(&args.repo, c) {
        Ok(info) => {
            change.commit_time = Some(info.committed);
            if change.since.is_none() && !commit_time_known {
                if info.committed > now {
                    return Err(ConfigError::CommitFuture {
                        commit: c.clone(),
                        at: info.committed.to_string(),
                        now: truncate_to_second(now).to_string(),
                    });
                }
                change.since = Some(info.committed);
                *origin = Some(format!(
                    "committer time of {} in {}",
                    info.sha,
                    args.repo.display()
                ));
            }
            // A ref moves: the change is the commit it names now, by its SHA.
            if by_ref {
                change.commit = Some(info.sha);
            }
            Ok(())
        }
        // An explicit --since makes the commit's time unnecessary; a SHA still names it.
        Err(_) if change.since.is_some() && !by_ref => Ok(()),
        Err(source) => Err(ConfigError::CommitTime {
            commit: c.clone(),
            source,
        }),
    }
}

/// The configuration `liveproof ARGS…` (a `verify` command line) makes, for unit tests.
#[cfg(test)]
pub(crate) fn verify_config(args: &[&str]) -> VerifyConfig {
    use clap::Parser as _;
    let cli = crate::cli::Cli::try_parse_from(args).expect("parses");
    let crate::cli::Command::Verify(args) = cli.command else {
        panic!("not verify: {args:?}")
    };
    VerifyConfig::from_args(&args, TextStyle::plain()).expect("config")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parsing reads nothing: paths that do not exist, a ref no repository was asked about and
    /// a kubeconfig that is not there all parse; resolving is where they are read (and here
    /// refused: the first read, git's, fails).
    #[test]
    fn parsing_a_request_reads_nothing() {
        use clap::Parser as _;
        let cli = crate::cli::Cli::try_parse_from([
            "liveproof",
            "verify",
            "deploy/web",
            "-f",
            "/nonexistent/liveproof/web.yaml",
            "--commit",
            "HEAD",
            "--repo",
            "/nonexistent/liveproof/repo",
            "--kubeconfig",
            "/nonexistent/liveproof/kubeconfig",
            "--context",
            "prod",
            "--wait",
            "--timeout",
            "5m",
        ])
        .expect("parses");
        let crate::cli::Command::Verify(args) = cli.command else {
            panic!("not verify")
        };
        let request = VerifyRequest::parse(&args).expect("parsing reads none of those paths");
        assert_eq!(request.change.commit.as_deref(), Some("HEAD"));
        assert!(request.change.since.is_none());
        let error = request
            .resolve(TextStyle::plain())
            .expect_err("resolving reads them");
        assert!(matches!(error, ConfigError::CommitTime { .. }), "{error}");
    }

    /// `--image` is read as runtimes read a reference, and a refusal says what is wrong with
    /// it, not only that something is.
    #[test]
    fn an_image_no_runtime_would_pull_is_refused_saying_why() {
        for (given, why) in [
            ("ghcr.io/Acme/inventory:1.4.0", "must be lowercase"),
            ("ghcr.io/acme/inventory@sha256:abc", "sha256"),
            ("ghcr.io/acme/inventory:-1", "tag"),
        ] {
            let args = crate::cli::ChangeArgs {
                image: vec![given.into()],
                ..Default::default()
            };
            let err = change(&args, Timestamp::now()).expect_err(given);
            let text = err.to_string();
            assert!(text.starts_with(&format!("--image `{given}`")), "{text}");
            assert!(text.contains(why), "{given}: {text}");
            assert!(err.hint().is_some(), "{given}: a hint with an example");
        }
    }

    #[test]
    fn a_bad_version_url_is_refused_without_showing_its_secrets() {
        for (given, reason) in [
            (
                "ftp://bob:s3cret@shop.example/v",
                "`ftp:` is not http or https",
            ),
            ("https://bob:s3cret@", "not a URL"),
            (
                "mailto:bob:s3cret@shop.example",
                "`mailto:` is not http or https",
            ),
            ("bob:s3cret@shop.example/v", "is not http or https"),
            ("shop.example/version?token=s3cret", "not a URL"),
        ] {
            let err = check_version_url(given).expect_err(given).to_string();
            assert!(err.contains(reason), "{given}: {err}");
            assert!(!err.contains("s3cret"), "{given}: {err}");
        }
        assert!(check_version_url("https://bob:s3cret@shop.example/v?token=x").is_ok());
        assert!(check_version_url("http://127.0.0.1:8080/version").is_ok());
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("90s").expect("parses"),
            Duration::from_secs(90)
        );
        assert_eq!(
            parse_duration("1h30m").expect("parses"),
            Duration::from_secs(5400)
        );
        // A bare number is seconds, as kubectl reads it.
        assert_eq!(
            parse_duration("10").expect("parses"),
            std::time::Duration::from_secs(10)
        );
        assert!(parse_duration("0s").is_err());
    }

    fn now() -> Timestamp {
        "2026-07-12T12:00:00.123456789Z".parse().expect("valid")
    }

    #[test]
    fn since_takes_rfc3339_with_any_offset() {
        let utc = parse_since("2026-07-12T10:00:00Z", now()).expect("parses");
        let cest = parse_since("2026-07-12T12:00:00+02:00", now()).expect("parses");
        assert_eq!(utc, cest);
        assert_eq!(utc.to_string(), "2026-07-12T10:00:00Z");
    }

    #[test]
    fn since_keeps_the_fractional_seconds_it_is_given() {
        // `date -u +%FT%T.%3NZ`: the finer time is what orders a start in the change's second.
        let at = parse_since("2026-07-12T10:00:00.250Z", now()).expect("parses");
        assert_eq!(at.to_string(), "2026-07-12T10:00:00.25Z");
        let at = parse_since("2026-07-12T12:00:00.1+02:00", now()).expect("parses");
        assert_eq!(at.subsec_nanosecond(), 100_000_000);
    }

    #[test]
    fn since_takes_a_duration_ago_to_the_second() {
        for (given, expected) in [
            ("10m", "2026-07-12T11:50:00Z"),
            ("2h", "2026-07-12T10:00:00Z"),
            ("1h30m", "2026-07-12T10:30:00Z"),
            ("90s", "2026-07-12T11:58:30Z"),
            ("1d", "2026-07-11T12:00:00Z"),
            ("1d2h", "2026-07-11T10:00:00Z"),
        ] {
            let at = parse_since(given, now()).expect(given);
            assert_eq!(at.to_string(), expected, "{given}");
        }
    }

    #[test]
    fn since_refuses_no_offset_date_only_future_and_junk() {
        for (given, needle) in [
            ("2026-07-12T10:00:00", "has no offset"),
            ("2026-07-12", "date without a time"),
            ("yesterday", "neither"),
            ("0s", "no time ago"),
            ("1y", "`y` is not a unit"),
            ("2mo", "`mo` is not a unit"),
        ] {
            let err = parse_since(given, now()).expect_err(given);
            let hint = err.hint().unwrap_or_default();
            let err = err.to_string();
            assert!(
                err.contains(needle) && !err.contains("hint:") && hint.contains("--since 10m"),
                "{given}: {err}"
            );
        }
        let err = parse_since("2026-07-12T12:05:00Z", now())
            .expect_err("future")
            .to_string();
        assert!(err.contains("in the future"), "{err}");
    }
}
