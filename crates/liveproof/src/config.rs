//! Arguments validated into what the commands run on: every bad flag is caught here, with
//! the flag named, before anything is sent to a cluster. For `verify` in two steps: parsing
//! ([`VerifyRequest::parse`]) reads nothing; resolving ([`VerifyRequest::resolve`]) hands what
//! to read to gather's resolver (git, the `-f` manifests, the kubeconfig's contexts) and checks
//! what it read. Nothing here reads a file, runs a process or opens a kubeconfig.

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::{
    Change, ExpectedImage, ManifestExpectation, SecretRefExpectation, Target,
};
use liveproof_gather::live::ClusterOptions;
use liveproof_gather::resolve::ResolveError;
use liveproof_report::{Format, Output, Render, TextStyle};

use crate::cli::{ChangeArgs, ClusterArgs, ColorChoice, VerifyArgs};

/// A usage error: exit 2, message names the flag.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Target(#[from] liveproof_evidence::TargetError),
    #[error("{flag}: {reason}")]
    Record {
        flag: &'static str,
        reason: String,
        hint: &'static str,
    },
    #[error("--context is given {given} times; only `verify` checks several clusters")]
    ManyContexts { given: usize },
    #[error("-o {format} with several clusters: a fleet's report is not drawn in {format}")]
    FleetFormat { format: String },
    #[error("--max-concurrency {given}: {reason}")]
    MaxConcurrency { given: usize, reason: &'static str },
    #[error("{given} targets: more than liveproof verifies in one run ({max})")]
    TooManyTargets { given: usize, max: usize },
    #[error("-l/--selector: {0}")]
    Selector(#[from] liveproof_evidence::selector::SelectorError),
    #[error("--since `{given}` {reason}")]
    Since { given: String, reason: String },
    #[error("--since {given} is not a number of seconds ago: it is as large as a Unix time{when}")]
    SinceUnixTime { given: String, when: String },
    #[error("--since {given} is in the future (now {now}): a change that has not happened yet cannot be live")]
    SinceFuture { given: String, now: String },
    #[error("--wait needs a change time: without one no pod can be shown to have started after the change, so the wait could only end at --timeout")]
    WaitWithoutSince,
    #[error("--commit `{given}` names no commit: give a SHA (7 to 40 hex digits) or a ref --repo resolves")]
    Commit { given: String },
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
    #[error("--report-format with {given} --report files: one format cannot be each file's")]
    ReportFormatOfMany { given: usize },
    #[error("--request-timeout `{given}` is not a duration: {reason}")]
    RequestTimeout { given: String, reason: String },
    /// A change flag given with a target kind it cannot apply to: refused, never ignored.
    #[error("{flag} applies to {applies_to} targets, not {target}")]
    NotApplicable {
        flag: &'static str,
        applies_to: &'static str,
        target: String,
        hint: &'static str,
    },
    /// A rule clap declares between arguments, broken (a request built without clap).
    #[error(transparent)]
    Rule(#[from] crate::rules::RuleError),
    /// `--max-release-size` out of its range, as clap's value parser refuses it.
    #[error("invalid value '{given}' for '--max-release-size <BYTES>': {reason}")]
    ReleaseSize { given: usize, reason: String },
    /// What reading the command line's files, git and kubeconfig refused (its own words).
    /// Boxed: it is the largest, and every `Result` here carries its size.
    #[error(transparent)]
    Resolve(Box<ResolveError>),
}

impl From<ResolveError> for ConfigError {
    fn from(error: ResolveError) -> ConfigError {
        ConfigError::Resolve(Box::new(error))
    }
}

use liveproof_evidence::hint::Hinted;

impl Hinted for ConfigError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            ConfigError::ManyContexts { .. } => Some(Cow::Borrowed("run this command once per context, or verify them all at once: liveproof verify --context A --context B …")),
            ConfigError::FleetFormat { format, .. } => Some(Cow::Owned(format!("-o json (a `clusters[]` section per cluster), or -o {format} with one --context"))),
            ConfigError::MaxConcurrency { .. } => Some(Cow::Borrowed("give how many clusters to verify at once, 1 to 256 (by default every context, up to 128)")),
            ConfigError::TooManyTargets { max, .. } => Some(Cow::Owned(format!("split the verify, by namespace (-n) or by label (-l), into runs of at most {max} targets"))),
            ConfigError::Since { .. } => Some(Cow::Borrowed(SINCE_EXAMPLES)),
            ConfigError::SinceFuture { .. } => Some(Cow::Borrowed(SINCE_EXAMPLES)),
            ConfigError::Record { hint, .. } => Some(Cow::Borrowed(hint)),
            ConfigError::SinceUnixTime { .. } => Some(Cow::Borrowed("give the change time as RFC 3339 (--since 2026-07-12T10:00:00Z; `date -u -d @SECONDS +%FT%TZ` converts a Unix time), or how long ago: --since 600 (seconds), --since 10m")),
            ConfigError::WaitWithoutSince => Some(Cow::Borrowed("add --since TIME (e.g. --since 30m or --since 2026-07-12T10:00:00Z), or --commit SHA with --repo holding it")),
            ConfigError::Commit { .. } => Some(Cow::Borrowed("e.g. --commit 3f2c1ab, --commit HEAD, --commit main or --commit v1.4.0")),
            ConfigError::Image { .. } => Some(Cow::Borrowed("e.g. --image ghcr.io/acme/inventory:1.4.0 or --image ghcr.io/acme/inventory@sha256:…")),
            ConfigError::Expect { .. } => Some(Cow::Borrowed("plain text is matched as is; `re:` starts a regular expression, e.g. --expect 're:secretKeyRef:\\s+name: inventory-db'")),
            ConfigError::Versions(..) => Some(Cow::Borrowed("give one --expect-version for all URLs or one per --version-url, in the same order")),
            ConfigError::VersionUrl { .. } => Some(Cow::Borrowed("give the http(s) URL the server reports its version at, e.g. --version-url https://shop.example/version")),
            ConfigError::Timeout { .. } => Some(Cow::Borrowed("e.g. --timeout 90s, 5m, 1h30m, or 300 (seconds); 0 for no limit (at most 24h)")),
            ConfigError::ReportExtension { .. } => Some(Cow::Borrowed("use .json, .yaml, .xml (JUnit), .md, .html or .txt, or say it: --report-format json|yaml|junit|markdown|html|text")),
            ConfigError::ReportFormatOfMany { .. } => Some(Cow::Borrowed("drop --report-format and let each file's extension say its format (.json, .yaml, .xml, .md, .html, .txt)")),
            ConfigError::RequestTimeout { .. } => Some(Cow::Borrowed("e.g. --request-timeout 10s, 1m, or 5 (seconds); 0 for no per-request limit")),
            ConfigError::NotApplicable { hint, .. } => Some(Cow::Borrowed(hint)),
            ConfigError::Rule(inner) => inner.hint(),
            ConfigError::ReleaseSize { .. } => Some(Cow::Owned(format!("give a number of bytes from 1 to {} (default {})", liveproof_helm::MAX_RELEASE_SIZE, liveproof_helm::DEFAULT_MAX_RELEASE_SIZE))),
            ConfigError::Target(inner) => inner.hint(),
            ConfigError::Selector(inner) => inner.hint(),
            ConfigError::Resolve(inner) => inner.hint(),
            ConfigError::Env { given, with_value: true } => Some(Cow::Owned(format!("--expect-env {given}: the check is that the template sets it; values are never compared or printed, as they can be secrets"))),
            ConfigError::Env { with_value: false, .. } => Some(Cow::Borrowed("give the name of a variable the container's template sets, e.g. --expect-env DB_URL (no spaces, no `=`)")),
            ConfigError::ChartVersion { .. }
            | ConfigError::SecretRef { .. } => None,
        }
    }
}

/// Where objects come from.
pub use liveproof_gather::resolve::Source;

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
    /// `-o`, with its template for jsonpath and custom-columns.
    pub format: Output,
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
    /// Each `--report FILE`, and the format written there.
    pub report: Vec<(std::path::PathBuf, Format)>,
    /// `--record FILE`: where the deployment record line is appended (checked writable).
    pub record: Option<std::path::PathBuf>,
    /// `--record-format`, and what it needs the record does not hold.
    pub record_format: crate::cli::RecordFormat,
    pub record_to: liveproof_evidence::dora::Destination,
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
            format: Format::Text.into(),
            style: TextStyle::plain(),
            max_release_size: liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
            repo: PathBuf::from("."),
            insecure_registries: Vec::new(),
            logs: None,
            snapshot: None,
            report: Vec::new(),
            record: None,
            record_format: crate::cli::RecordFormat::Liveproof,
            record_to: liveproof_evidence::dora::Destination::default(),
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
    report: Vec<(PathBuf, Format)>,
}

/// Two requests are equal when they ask the same, field by field: `--wait`'s deadline by its
/// `--timeout` (each request's clock starts when it is made).
impl PartialEq for VerifyRequest {
    fn eq(&self, other: &VerifyRequest) -> bool {
        let VerifyRequest {
            args,
            targets,
            change,
            since_origin,
            now,
            request_timeout,
            wait,
            selector,
            fleet_concurrency,
            report,
        } = self;
        *args == other.args
            && *targets == other.targets
            && *change == other.change
            && *since_origin == other.since_origin
            && *now == other.now
            && *request_timeout == other.request_timeout
            && wait.map(|w| w.timeout) == other.wait.map(|w| w.timeout)
            && *selector == other.selector
            && *fleet_concurrency == other.fleet_concurrency
            && *report == other.report
    }
}

impl VerifyRequest {
    /// Parses and checks `args`; reads nothing. The rules clap enforces between the arguments
    /// are checked here too: `args` built without clap (an MCP tool call) is held to them.
    pub fn parse(args: &VerifyArgs) -> Result<VerifyRequest, ConfigError> {
        VerifyRequest::parse_at(args, Timestamp::now())
    }

    /// [`VerifyRequest::parse`], with the command started at `now`.
    pub(crate) fn parse_at(
        args: &VerifyArgs,
        now: Timestamp,
    ) -> Result<VerifyRequest, ConfigError> {
        crate::rules::check(args)?;
        crate::cli::release_size(&args.max_release_size.to_string()).map_err(|reason| {
            ConfigError::ReleaseSize {
                given: args.max_release_size,
                reason,
            }
        })?;
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
            Some(n) if n > MAX_FLEET_CONCURRENCY => {
                return Err(ConfigError::MaxConcurrency {
                    given: n,
                    reason: "more than 256 clusters at once",
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
        let report = report_files(args)?;
        record_destination(args)?;
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

    /// The I/O a configuration needs (gather's resolver: `--commit` read in `--repo`, the `-f`
    /// and `-k` manifests, `--record`'s file, `--from`'s path, the kubeconfig's contexts), with
    /// the checks on what it read where they come: each first error stays the first.
    pub fn resolve(self, style: TextStyle) -> Result<VerifyConfig, ConfigError> {
        use liveproof_gather::resolve::{Checkpoint, ResolveInput, SourceRequest};
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
        let several_clusters = args.cluster.context.len() > 1 || args.all_contexts;
        let source = match &args.from {
            Some(path) => SourceRequest::Offline {
                path: path.clone(),
                kubeconfig: args.cluster.kubeconfig.clone(),
                kubeconfig_namespace: args.cluster.namespace.is_none()
                    && !args.cluster.all_namespaces,
            },
            None if several_clusters => SourceRequest::Fleet(ClusterOptions {
                kubeconfig: args.cluster.kubeconfig.clone(),
                context: None,
                namespace: namespace(&args.cluster),
                request_timeout: Some(request_timeout),
                deadline: None,
                response_budget: response_budget(&args.cluster),
            }),
            None => SourceRequest::Cluster(ClusterOptions::try_from(&args.cluster)?),
        };
        let input = ResolveInput {
            since: change.since,
            commit_given: args.change.commit.clone(),
            commit: change.commit.clone(),
            repo: args.change.repo.clone(),
            snapshot: args.snapshot.is_some(),
            now,
            manifests: args.manifests.clone(),
            kustomize: args.kustomize.clone(),
            recursive: args.recursive,
            namespace: args.cluster.namespace.clone(),
            request_timeout,
            record: args.record.clone(),
            source,
            contexts: args.cluster.context.clone(),
            all_contexts: args.all_contexts,
        };
        let resolved = liveproof_gather::resolve::resolve(&input, |at, read| match at {
            Checkpoint::Commit => {
                if wait.is_some() && read.since.is_none() && args.snapshot.is_none() {
                    return Err(ConfigError::WaitWithoutSince);
                }
                Ok(())
            }
            Checkpoint::Declared => {
                for d in &read.declared {
                    if !targets.contains(&d.target) {
                        targets.push(d.target.clone());
                    }
                }
                check_target_count(targets.len())?;
                // Reads the change flags only, which resolving does not touch.
                applicable(&change, &targets, args.snapshot.is_some())
            }
        })?;
        let read = resolved.change;
        change.since = read.since;
        change.commit = read.commit;
        change.commit_time = read.commit_time;
        change.declared = read.declared;
        since_origin = read.since_origin.or(since_origin);
        let source = resolved.source;
        // -n (as -A leaves it); else, with --from, the kubeconfig context's, read above.
        let (namespace, namespace_origin) = match namespace(&args.cluster) {
            Some(given) => (Some(given), None),
            None => (resolved.namespace, resolved.namespace_origin),
        };
        let fleet = resolved.fleet;
        if !fleet.is_empty() {
            fleet_format(&args)?;
        }
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
            format: args.output.clone(),
            style,
            since_origin,
            max_release_size: args.max_release_size,
            repo: args.change.repo.clone(),
            insecure_registries: args.change.insecure_registry.clone(),
            logs: args.logs.filter(|n| *n > 0),
            snapshot: args.snapshot.clone(),
            report,
            record: args.record.clone(),
            record_format: args.record_format,
            record_to: liveproof_evidence::dora::Destination {
                repo_url: args.record_repo_url.clone(),
                env: args.record_env.clone(),
            },
        })
    }
}

/// Every `--report FILE` with the format written there. `--report-format` says the format of
/// one file only: with several, each one's extension says its own.
fn report_files(args: &VerifyArgs) -> Result<Vec<(PathBuf, Format)>, ConfigError> {
    if args.report_format.is_some() && args.report.len() > 1 {
        return Err(ConfigError::ReportFormatOfMany {
            given: args.report.len(),
        });
    }
    args.report
        .iter()
        .map(|path| report_file(path, args.report_format))
        .collect()
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
        Some("html" | "htm") => Format::Html,
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
pub(crate) fn applicable(
    change: &Change,
    targets: &[Target],
    snapshot: bool,
) -> Result<(), ConfigError> {
    use liveproof_evidence::kind::{accepts, ExpectOn};
    if change.chart_version.is_some() {
        let other = targets
            .iter()
            .find(|t| !accepts(t.kind).chart_version)
            .map(Target::to_string);
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
        let without_manifest = targets.iter().find_map(|t| match accepts(t.kind).expect {
            ExpectOn::Refused(hint) => Some((t, hint)),
            ExpectOn::Manifest | ExpectOn::Template => None,
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

/// The most targets one run verifies (given, declared by `-f` and selected by `-l`
/// together): past it the run is refused up front rather than left to grow without bound.
pub const MAX_TARGETS: usize = 50_000;

/// Clusters of a fleet verified at once unless `--max-concurrency` says otherwise: every
/// context, up to this many. Each cluster's time is mostly waiting on its API server (round
/// trips, 300 ms and more to a far region), so a fleet read all at once takes about one
/// cluster's time; what their responses hold together is bounded apart (the fleet's body cap).
pub const DEFAULT_FLEET_CONCURRENCY: usize = 128;

/// The most `--max-concurrency` accepts.
pub const MAX_FLEET_CONCURRENCY: usize = 256;

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

/// A fleet's report is drawn only in what the fleet model draws: `-o` and `--report`'s format
/// are refused here, before any cluster is asked (never drawn as another format).
fn fleet_format(args: &VerifyArgs) -> Result<(), ConfigError> {
    let drawn = |format: &Format| <FleetReport as Render>::FORMATS.contains(format);
    if !drawn(&args.output.format()) {
        return Err(ConfigError::FleetFormat {
            format: args.output.format().name().to_string(),
        });
    }
    for (_, written) in report_files(args)? {
        if !drawn(&written) {
            return Err(ConfigError::FleetFormat {
                format: written.name().to_string(),
            });
        }
    }
    Ok(())
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

/// What `--record-format` needs that the record does not hold, checked before anything is
/// read: DevLake's repoUrl is required, its environment one of four; a repository URL never
/// carries credentials into the file.
fn record_destination(args: &VerifyArgs) -> Result<(), ConfigError> {
    use crate::cli::RecordFormat;
    if let Some(url) = &args.record_repo_url {
        let authority = url.split_once("://").map_or("", |(_, rest)| {
            rest.split(['/', '?', '#']).next().unwrap_or_default()
        });
        if url.split_once("://").is_none() || authority.is_empty() {
            return Err(ConfigError::Record {
                flag: "--record-repo-url",
                reason: "is not a URL".into(),
                hint: "give the repository's URL, such as https://github.com/acme/shop",
            });
        }
        if authority.contains('@') {
            return Err(ConfigError::Record {
                flag: "--record-repo-url",
                reason: "carries credentials (USER:PASSWORD@), which would be written to the record file".into(),
                hint: "give the URL without them, such as https://github.com/acme/shop",
            });
        }
    }
    match args.record_format {
        RecordFormat::Devlake if args.record_repo_url.is_none() => Err(ConfigError::Record {
            flag: "--record-format devlake",
            reason: "DevLake requires each deployment commit's repoUrl, which the record does not hold".into(),
            hint: "add --record-repo-url URL: the repository the commit is in, as DevLake knows it (https://github.com/acme/shop)",
        }),
        RecordFormat::Devlake => match &args.record_env {
            Some(env) if !liveproof_evidence::dora::DEVLAKE_ENVIRONMENTS.contains(&env.as_str()) => {
                Err(ConfigError::Record {
                    flag: "--record-env",
                    reason: format!("`{env}` is not a DevLake environment"),
                    hint: "give PRODUCTION, STAGING, TESTING or DEVELOPMENT (DevLake's own values; left out, DevLake takes PRODUCTION)",
                })
            }
            _ => Ok(()),
        },
        RecordFormat::Liveproof if args.record_repo_url.is_some() || args.record_env.is_some() => {
            Err(ConfigError::Record {
                flag: if args.record_repo_url.is_some() { "--record-repo-url" } else { "--record-env" },
                reason: "liveproof's own record has no such field".into(),
                hint: "add --record-format devlake or datadog, or drop the flag",
            })
        }
        RecordFormat::Liveproof | RecordFormat::Datadog => Ok(()),
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

/// What `--timeout 0` (kubectl's "no limit") waits: nothing liveproof does waits without a
/// bound, so it is the same day [`UNLIMITED_REQUEST`] gives a request.
pub const UNLIMITED_TIMEOUT: Duration = UNLIMITED_REQUEST;

/// `--timeout`: a duration such as `90s`, `1h30m` or `60` (seconds); `0` is kubectl's "no
/// limit", here [`UNLIMITED_TIMEOUT`] (said on stderr, as it is not what was typed).
pub fn parse_duration(given: &str) -> Result<Duration, ConfigError> {
    let d = crate::duration::parse(given).map_err(|reason| ConfigError::Timeout {
        given: given.to_string(),
        reason,
    })?;
    if d.is_zero() {
        tracing::warn!(
            "--timeout {given}: no limit, as kubectl reads 0, is at most 24h here (liveproof never waits without a bound)"
        );
        return Ok(UNLIMITED_TIMEOUT);
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
    --since 2h, --since 1h30m, --since 1d; a bare number is seconds: --since 600)";

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
    } else if text.bytes().all(|b| b.is_ascii_digit()) && !text.is_empty() {
        // A bare number is seconds ago, as --timeout and --request-timeout read one; but not
        // one as large as a Unix time, which moved the change time back to 1970 (every pod
        // would then look started after the change).
        let seconds: i64 = text
            .parse()
            .map_err(|_| err("is too long ago to be a number of seconds"))?;
        if seconds >= BARE_SECONDS_MAX {
            let when = Timestamp::from_second(seconds)
                .map(|t| format!(" (as a Unix time, --since {t})"))
                .unwrap_or_default();
            return Err(ConfigError::SinceUnixTime {
                given: given.to_string(),
                when,
            });
        }
        if seconds == 0 {
            return Err(err(
                "is no time ago: give how long ago the change was, e.g. 10m",
            ));
        }
        truncate_to_second(
            now.checked_sub(jiff::SignedDuration::from_secs(seconds))
                .map_err(|_| err("reaches back further than a timestamp can"))?,
        )
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

/// The smallest bare `--since` number refused as seconds ago: 10^9 seconds (31 years) is no
/// change's age, and every Unix time since 2001 is at least that.
const BARE_SECONDS_MAX: i64 = 1_000_000_000;

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
    /// a kubeconfig that is not there all parse; resolving is where they are read (gather's
    /// `tests/resolve.rs`).
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
        // 0 is kubectl's "no limit": the day nothing waits past.
        assert_eq!(parse_duration("0s").expect("parses"), UNLIMITED_TIMEOUT);
        assert_eq!(parse_duration("0").expect("parses"), UNLIMITED_TIMEOUT);
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
            // A bare number is seconds ago, as --timeout 60 is 60 seconds.
            ("60", "2026-07-12T11:59:00Z"),
            ("3600", "2026-07-12T11:00:00Z"),
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
            ("0", "no time ago"),
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
        // A Unix time is not seconds ago (1970 would make every pod look started after it).
        let err = parse_since("1783857600", now()).expect_err("a Unix time");
        let hint = err.hint().unwrap_or_default().to_string();
        let err = err.to_string();
        assert!(
            err.contains("Unix time") && err.contains("2026-07-12T12:00:00Z"),
            "{err}"
        );
        assert!(
            hint.contains("RFC 3339") && hint.contains("--since 600"),
            "{hint}"
        );
    }
}
