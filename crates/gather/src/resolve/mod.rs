//! What a `verify` command line names, read: `--commit` in `--repo`, the `-f`/`-k` manifests
//! (files, stdin, `kubectl kustomize`), the file `--record` appends to, `--from`'s path, and the
//! kubeconfig's contexts and namespace. The CLI's `config` checks the command line without
//! reading anything and hands over a [`ResolveInput`]; [`resolve`] reads, in the order the
//! errors must come (a command line wrong in two ways says the same first error every time),
//! stopping at each [`Checkpoint`] for the caller's checks on what it has read so far.
//!
//! Blocking: it runs git and kubectl and reads files (MCP calls it on a blocking thread).

mod commit;
mod error;
mod kubeconfig;
mod kustomize;
mod manifests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use liveproof_evidence::DeclaredTemplate;

use crate::live::ClusterOptions;

pub use error::ResolveError;

/// What to read, as the command line (checked, with nothing read) states it.
#[derive(Debug, Clone)]
pub struct ResolveInput {
    /// `--since`, when given.
    pub since: Option<Timestamp>,
    /// `--commit` as given: what git is asked, and what its errors name.
    pub commit_given: Option<String>,
    /// `--commit` as the change names it (a SHA lowercased; a ref as given, until git says the
    /// SHA it names now).
    pub commit: Option<String>,
    /// `--repo`: where `--commit` and `-f` with it are read.
    pub repo: PathBuf,
    /// `--snapshot` given: the change time is the snapshot's, and `--commit` is only matched.
    pub snapshot: bool,
    /// When the command started: a commit's time after it is refused.
    pub now: Timestamp,
    /// `-f PATH`, in the order given (`-` for stdin).
    pub manifests: Vec<PathBuf>,
    /// `-k DIR`, in the order given.
    pub kustomize: Vec<PathBuf>,
    /// `-R`: `-f DIR` reads every directory under it.
    pub recursive: bool,
    /// `-n` as given: the namespace of a declared workload that names none.
    pub namespace: Option<String>,
    /// `--request-timeout`: bounds `kubectl kustomize` too.
    pub request_timeout: Duration,
    /// `--record FILE`: checked to be a file it can append to.
    pub record: Option<PathBuf>,
    /// Where the objects come from.
    pub source: SourceRequest,
    /// `--context`, as given (more than once: a fleet).
    pub contexts: Vec<String>,
    /// `--all-contexts`.
    pub all_contexts: bool,
}

/// Where the objects come from, as the command line says.
#[derive(Debug, Clone)]
pub enum SourceRequest {
    /// `--from PATH`. `kubeconfig_namespace`: neither `-n` nor `-A` is given, so targets that
    /// name no namespace are read in the kubeconfig context's (`kubeconfig`, `--context`).
    Offline {
        path: PathBuf,
        kubeconfig: Option<PathBuf>,
        kubeconfig_namespace: bool,
    },
    /// One cluster: a context it names must be one the kubeconfig has.
    Cluster(ClusterOptions),
    /// Several clusters (`--context` more than once, `--all-contexts`), each with these options:
    /// their contexts are read and checked with the fleet.
    Fleet(ClusterOptions),
}

/// Where objects come from.
#[derive(Debug, Clone)]
pub enum Source {
    Live(ClusterOptions),
    Offline(PathBuf),
}

/// The change as read: its time, the commit it names, what its manifests declare.
#[derive(Debug, Clone, Default)]
pub struct ChangeRead {
    /// `--since`, or else the commit's committer time (unless a snapshot gives the time).
    pub since: Option<Timestamp>,
    /// Where `since` came from, when the commit gave it.
    pub since_origin: Option<String>,
    /// The commit the change names: [`ResolveInput::commit`], or the SHA a ref names now.
    pub commit: Option<String>,
    /// The commit's committer time, when `--repo` has it.
    pub commit_time: Option<Timestamp>,
    /// `-f` and `-k`: the pod templates the manifests declare.
    pub declared: Vec<DeclaredTemplate>,
}

/// Where [`resolve`] stops for the caller's checks on what it has read so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkpoint {
    /// `--commit` read ([`ChangeRead::since`], `commit`, `commit_time` are set).
    Commit,
    /// The `-f`/`-k` manifests read ([`ChangeRead::declared`] is set).
    Declared,
}

/// What the command line names, read.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub change: ChangeRead,
    pub source: Source,
    /// With `--from` and neither `-n` nor `-A`: the namespace of the kubeconfig context (none
    /// when there is no kubeconfig, or its context names none).
    pub namespace: Option<String>,
    /// Where `namespace` was taken from, for the verbose log.
    pub namespace_origin: Option<String>,
    /// The contexts to verify the same change in (empty: one cluster).
    pub fleet: Vec<String>,
}

/// Reads what `input` names, in this order, the first refusal ending it: `--commit` (then
/// `check(Checkpoint::Commit, ..)`), the `-f` and `-k` manifests (then
/// `check(Checkpoint::Declared, ..)`), `--record`, `--from`'s path, one cluster's `--context`,
/// `--from`'s namespace in the kubeconfig, the fleet's contexts.
pub fn resolve<E: From<ResolveError>>(
    input: &ResolveInput,
    mut check: impl FnMut(Checkpoint, &ChangeRead) -> Result<(), E>,
) -> Result<Resolved, E> {
    let mut change = ChangeRead {
        since: input.since,
        commit: input.commit.clone(),
        ..ChangeRead::default()
    };
    // With --snapshot the change time is the snapshot's; the commit is only matched.
    commit::resolve_commit(
        input.commit_given.as_ref(),
        &input.repo,
        &mut change,
        input.snapshot,
        input.now,
    )?;
    check(Checkpoint::Commit, &change)?;
    change.declared = manifests::declared_templates(input, change.commit.as_deref())?;
    check(Checkpoint::Declared, &change)?;
    if let Some(path) = &input.record {
        record_file(path)?;
    }
    let source = match &input.source {
        SourceRequest::Offline { path, .. } if !path.exists() => {
            return Err(ResolveError::FromMissing { path: path.clone() }.into())
        }
        SourceRequest::Offline { path, .. } => Source::Offline(path.clone()),
        SourceRequest::Fleet(options) => Source::Live(options.clone()),
        SourceRequest::Cluster(options) => {
            // A misspelled context is a usage error before anything is sent. A kubeconfig
            // that cannot be read is reported by the connection, with its own words.
            if let Ok(known) = crate::live::kubeconfig_contexts(options) {
                kubeconfig::unknown_context(&known, options.context.as_slice())?;
            }
            Source::Live(options.clone())
        }
    };
    let (namespace, namespace_origin) = match &input.source {
        SourceRequest::Offline {
            kubeconfig,
            kubeconfig_namespace: true,
            ..
        } => kubeconfig::offline_namespace(kubeconfig.as_ref(), &input.contexts)?,
        _ => (None, None),
    };
    let fleet = kubeconfig::fleet(input.all_contexts, &input.contexts, &source)?;
    Ok(Resolved {
        change,
        source,
        namespace,
        namespace_origin,
        fleet,
    })
}

/// The most read from stdin (`-f -`) or from `kubectl kustomize`: what a YAML file may be.
const MAX_MANIFEST_STREAM: u64 = crate::offline::MAX_YAML_FILE;

/// `--record FILE`: a file that can be appended to (created when missing), checked before any
/// work so a run never ends with a verdict it could not record.
fn record_file(path: &Path) -> Result<(), ResolveError> {
    let refuse = |reason: String| ResolveError::Record {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_dir() {
        return Err(refuse("is a directory".into()));
    }
    crate::files::check_record(path).map_err(|e| refuse(format!("cannot be appended to: {e}")))
}
