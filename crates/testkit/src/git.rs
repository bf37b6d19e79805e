//! Real git repositories for tests: git run with a fixed identity and date and no user or
//! system configuration read, so a commit's SHA is the same on every machine.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The date commits carry unless a test says otherwise.
pub const DATE: &str = "2026-07-12T10:00:00Z";

/// Runs `git ARGS` in `repo` as a test author committing at `date` (RFC 3339); its stdout,
/// trimmed. Fails the test when git fails.
pub fn git_at(repo: &Path, args: &[&str], date: &str) -> String {
    git_with(repo, args, date, &[])
}

/// [`git_at`] at [`DATE`].
pub fn git(repo: &Path, args: &[&str]) -> String {
    git_at(repo, args, DATE)
}

/// [`git_at`] with more environment (`GIT_DIR`, a hook's variables).
pub fn git_with(repo: &Path, args: &[&str], date: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "liveproof tests")
        .env("GIT_AUTHOR_EMAIL", "tests@example.invalid")
        .env("GIT_COMMITTER_NAME", "liveproof tests")
        .env("GIT_COMMITTER_EMAIL", "tests@example.invalid")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .envs(env.iter().copied())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository in a temporary directory, told as a story: `Repo::new().file(..).commit(..)`.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Default for Repo {
    fn default() -> Repo {
        Repo::new()
    }
}

impl Repo {
    /// An empty repository on branch `main`.
    pub fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Writes `text` at `path` in the work tree (directories made as needed).
    pub fn file(&self, path: &str, text: &str) -> &Repo {
        let full = self.dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
        self
    }

    /// Commits everything at [`DATE`]; the commit's SHA.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// `git ARGS` here, at [`DATE`]: its stdout, trimmed.
    pub fn git(&self, args: &[&str]) -> String {
        git(self.dir.path(), args)
    }
}
