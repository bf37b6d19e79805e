//! What reading a command line's files, git and kubeconfig can refuse: exit 2, the flag named,
//! and a hint (the same words `config`'s errors said when it read them itself).

use std::borrow::Cow;
use std::path::PathBuf;

use liveproof_evidence::hint::Hinted;

/// A usage error found by reading what the command line names: exit 2, message names the flag.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("--context {name}: the kubeconfig has no such context{}", if known.is_empty() { String::new() } else { format!(" (it has: {})", known.join(", ")) })]
    UnknownContext {
        name: String,
        /// The nearest context the kubeconfig has.
        suggestion: Option<String>,
        /// Every context it has (up to 20).
        known: Vec<String>,
    },
    #[error("--all-contexts: the kubeconfig names no context")]
    NoContexts,
    #[error("--all-contexts: {0}")]
    Contexts(#[source] crate::GatherError),
    #[error("--commit {commit}: its committer time {at} is in the future (now {now}); the committer's clock was probably wrong")]
    CommitFuture {
        commit: String,
        at: String,
        now: String,
    },
    #[error("--commit {commit}: {source}")]
    CommitTime {
        commit: String,
        #[source]
        source: crate::git::GitError,
    },
    #[error("--record {}: {reason}", path.display())]
    Record { path: PathBuf, reason: String },
    #[error("--from {}: no such file or directory", path.display())]
    FromMissing { path: PathBuf },
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
    FromKubeconfig(#[source] crate::GatherError),
}

impl Hinted for ResolveError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            ResolveError::UnknownContext { suggestion, .. } => Some(Cow::Owned(format!("{}see `kubectl config get-contexts`", suggestion.as_ref().map(|s| format!("did you mean `{s}`? ")).unwrap_or_default()))),
            ResolveError::NoContexts => Some(Cow::Borrowed("check `kubectl config get-contexts`, or name clusters with --context")),
            ResolveError::CommitFuture { .. } => Some(Cow::Borrowed("pass the merge time yourself: --since 2026-07-12T10:00:00Z or --since 30m")),
            ResolveError::Record { .. } => Some(Cow::Borrowed("give --record a file (it is created if missing) in a directory that exists and you can write, e.g. --record deployments.jsonl")),
            ResolveError::FromMissing { .. } => Some(Cow::Borrowed("--from takes a file or a directory of .yaml, .yml or .json manifests, e.g. written by `kubectl get deploy,rs,pods -o yaml > dump.yaml`")),
            ResolveError::FromContexts { .. } => Some(Cow::Borrowed("with --from, --context only names the kubeconfig context whose namespace targets without one are read in: give it once, or use -n")),
            ResolveError::CommitTime { source, .. } => source.hint(),
            ResolveError::Contexts(inner) | ResolveError::FromKubeconfig(inner) => inner.hint(),
            ResolveError::Manifests { hint, .. } | ResolveError::Kustomize { hint, .. } => {
                hint.as_deref().map(Cow::Borrowed)
            }
        }
    }
}
