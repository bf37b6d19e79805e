//! `liveproof lint`: before the merge, find the changes that will not deploy, or will deploy
//! silently wrong (a chart built from an unchanged version, a `:latest` image nothing restarts,
//! configuration read at start with nothing to restart the pods, a GitOps object that will not
//! reconcile).
//!
//! Gather, then judge: [`gather`] is the only I/O (the `git` binary, or the file system when
//! PATH is not a repository) and builds an [`Input`]; [`lint`] is a pure function from it to a
//! [`Linted`], which `liveproof-report` renders as text, JSON or SARIF. Nothing is rendered or
//! interpolated: Helm templates are read as text, environment placeholders stay placeholders, and
//! no Secret value is ever read (only the names a pod template refers to).

mod gather;
pub mod git;
mod kustomize;
mod rules;
mod yaml;

use std::borrow::Cow;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use gather::{gather, Changed, Input, Options};
pub use rules::{lint, Rule, RULES};

/// How bad a finding is. `Error` fails the lint (exit 1): the change will not reach a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One thing that will not deploy, where it was found, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hazard {
    /// The rule's id, e.g. `chartversion-not-bumped` (see [`RULES`]).
    pub id: String,
    pub level: Level,
    /// Relative to the linted PATH, with `/` separators.
    pub file: String,
    /// 1-based.
    pub line: usize,
    pub message: String,
    /// One sentence: how to make the change deploy.
    pub fix: String,
}

/// What [`lint`] found, and what it could not judge (`notes`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Linted {
    /// The base revision the diff started from (a full SHA), when there was one.
    pub base: Option<String>,
    /// The head revision linted (a full SHA), when PATH is a git repository.
    pub head: Option<String>,
    pub findings: Vec<Hazard>,
    /// What limited the analysis (no git history, a rule that needs a diff), for the reader.
    pub notes: Vec<String>,
}

impl Linted {
    /// True when a finding is an error: the lint fails (exit 1).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::Error)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LintError {
    #[error("cannot run `git`: {source}")]
    GitNotInstalled {
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a git repository, so there is no `{flag}` to diff against", path.display())]
    NotARepository { path: PathBuf, flag: &'static str },
    #[error("unknown revision `{rev}` in the repository at {}", repo.display())]
    UnknownRevision {
        repo: PathBuf,
        rev: String,
        /// The `git fetch` that brings it here (`git fetch origin main` for `origin/main`).
        fetch: String,
    },
    #[error("`{command}` in {} failed: {stderr}", repo.display())]
    Git {
        repo: PathBuf,
        command: String,
        stderr: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
}

impl liveproof_evidence::hint::Hinted for LintError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            LintError::GitNotInstalled { .. } => Some(Cow::Borrowed("install git (liveproof lint reads diffs with it)")),
            LintError::NotARepository { .. } => Some(Cow::Borrowed("run it inside the repository, or drop --base/--head to lint every file as changed")),
            LintError::UnknownRevision { fetch, .. } => Some(Cow::Owned(format!("check the spelling, or fetch it first (`{fetch}`; CI checkouts are often shallow: fetch-depth: 0)"))),
            LintError::NotADirectory(..) => Some(Cow::Borrowed("PATH is the root of the repository (or of the GitOps tree) to lint")),
            LintError::Git { .. }
            | LintError::Io { .. } => None,
        }
    }
}
