//! What `--repo` holds after the change's commit, as the gather read it: the evidence
//! `superseded` weighs when a GitOps revision or a later commit may have replaced the change
//! (checks/superseded/gitops.rs). Facts only: which commit states what is judged there.

use jiff::Timestamp;
use serde_json::Value;

/// The most later commits read for one `-f` path: the newest that touched it after the
/// change's commit (`git log --ancestry-path -n`).
pub const LATER_COMMITS: usize = 100;
/// The most manifest files read under one path as of one commit.
pub const MAX_FILES: usize = 500;
/// The most bytes of manifests read under one path as of one commit.
pub const MAX_BYTES: u64 = 32 << 20;
/// The most bytes of manifests read for one judgement, over every commit and path: a hundred
/// later commits of a large `-f -R` directory are not all held at once.
pub const MAX_TOTAL_BYTES: u64 = 64 << 20;

/// Manifests as of commits, and the commits after the change that touched the `-f` paths.
/// Empty when nothing was asked (no `--commit`, no GitOps revision past it, no `-f` read from
/// the repository).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub manifests: Vec<CommitManifests>,
    /// For each `-f` path read as of `--commit`: the commits after it, on `--repo`'s `HEAD`,
    /// that touched it, newest first (at most [`LATER_COMMITS`]); or why they could not be
    /// listed.
    pub later: Vec<(RepoPath, Result<Vec<String>, String>)>,
}

impl History {
    /// The manifests under `path` as of `commit` (named as it was asked), if they were read.
    pub fn manifests(&self, commit: &str, path: &RepoPath) -> Option<&CommitManifests> {
        self.manifests
            .iter()
            .find(|m| m.commit.eq_ignore_ascii_case(commit) && &m.path == path)
    }

    /// The later commits that touched `path`, if they were listed.
    pub fn later(&self, path: &RepoPath) -> Option<&Result<Vec<String>, String>> {
        self.later.iter().find(|(p, _)| p == path).map(|(_, l)| l)
    }
}

/// A path of `--repo` as the manifests under it are read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath {
    /// A file or directory, without a leading `./` or a trailing `/`; empty for all of it.
    pub path: String,
    /// The directories under it are read too (Flux builds them all; Argo CD with
    /// `directory.recurse`; `-f` with `-R`).
    pub recursive: bool,
    /// Relative to the repository's top (a GitOps object's path) rather than to the
    /// directory `--repo` names (an `-f` path).
    pub from_top: bool,
}

impl RepoPath {
    pub fn new(path: &str, recursive: bool, from_top: bool) -> RepoPath {
        let mut path = path.trim();
        while let Some(rest) = path.strip_prefix("./") {
            path = rest;
        }
        let path = path.trim_end_matches('/');
        RepoPath {
            path: if path == "." { "" } else { path }.to_string(),
            recursive,
            from_top,
        }
    }

    /// How messages name it: `apps/`, `deploy/shop.yaml`, `the repository's top`.
    pub fn describe(&self) -> String {
        if self.path.is_empty() {
            "the repository's top directory".into()
        } else {
            self.path.clone()
        }
    }
}

/// The manifests under one path as of one commit.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitManifests {
    /// The commit as the question named it (a SHA or a prefix of one, lower case).
    pub commit: String,
    pub path: RepoPath,
    /// What was read, or why it could not be (the commit is not in the repository, more
    /// files than [`MAX_FILES`], a file that is no YAML).
    pub read: Result<ReadManifests, String>,
}

/// The manifests of a commit, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadManifests {
    /// The commit's full SHA.
    pub sha: String,
    /// Its committer time: when the later change landed.
    pub committed: Timestamp,
    /// The size of the files read, in bytes.
    pub bytes: u64,
    /// Each file, by its path in the repository as git lists it, with its documents (a file
    /// without any, or `kustomization.yaml` without `kind`, is kept too: what builds the
    /// directory matters as much as what it declares).
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ManifestFile {
    pub path: String,
    pub documents: Vec<Value>,
}

impl ManifestFile {
    /// Whether kustomize reads this file as a directory's build instructions.
    pub fn is_kustomization(&self) -> bool {
        let name = self.path.rsplit('/').next().unwrap_or(&self.path);
        matches!(
            name,
            "kustomization.yaml" | "kustomization.yml" | "Kustomization"
        )
    }
}
