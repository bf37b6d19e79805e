//! `--commit SHA`: the committer time of the change, read with the `git` binary.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Output;

use jiff::Timestamp;
use liveproof_evidence::history::{self, CommitManifests, ManifestFile, ReadManifests, RepoPath};
use liveproof_evidence::{ChartChange, Containment};

/// A commit resolved in a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    /// The full object name.
    pub sha: String,
    /// The committer time (`%cI`): when the commit landed, which is what "since" means for a
    /// merge; the author time can be days older.
    pub committed: Timestamp,
}

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run `git`: {source}")]
    NotInstalled {
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a git repository", repo.display())]
    NotARepository { repo: PathBuf, stderr: String },
    #[error("commit `{commit}` not found in the repository at {}", repo.display())]
    CommitNotFound { repo: PathBuf, commit: String },
    #[error("`{command}` in {} failed: {stderr}", repo.display())]
    Failed {
        repo: PathBuf,
        command: String,
        stderr: String,
    },
    #[error("`{command}` in {}: {cause}", repo.display())]
    Bounded {
        repo: PathBuf,
        command: String,
        cause: String,
    },
    #[error("`git show` printed an unreadable committer time `{printed}` for {sha}: {source}")]
    BadTime {
        sha: String,
        printed: String,
        #[source]
        source: jiff::Error,
    },
}

use liveproof_evidence::hint::Hinted;

impl Hinted for GitError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            GitError::NotInstalled { .. } => Some(Cow::Borrowed("install git, or pass the change time with --since")),
            GitError::NotARepository { .. } => Some(Cow::Borrowed("pass --repo DIR for the repository that holds the commit, or pass --since")),
            GitError::CommitNotFound { .. } => Some(Cow::Borrowed("give its SHA (7 to 40 hex digits) or a ref the repository has (HEAD, a branch, a tag); fetch it (`git fetch`) if it is new, or pass --since")),
            GitError::Bounded { .. } => Some(Cow::Borrowed("git did not answer in time; check the repository (a network file system, a lock left by another git), or pass --since")),
            GitError::Failed { .. }
            | GitError::BadTime { .. } => None,
        }
    }
}

/// Resolves `commit` (a full or abbreviated SHA, or any revision git accepts) in `repo` and
/// returns its committer time.
pub fn commit_time(repo: &Path, commit: &str) -> Result<CommitInfo, GitError> {
    let not_found = || GitError::CommitNotFound {
        repo: repo.to_path_buf(),
        commit: commit.to_string(),
    };
    // A leading '-' would be read as an option.
    if commit.is_empty() || commit.starts_with('-') || commit.contains(char::is_whitespace) {
        return Err(not_found());
    }
    let revision = format!("{commit}^{{commit}}");
    let out = git(repo, &["rev-parse", "--verify", "--quiet", &revision])?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        // `--quiet` keeps git silent about a missing revision; whatever it does say is about
        // the repository itself (not one, or the directory does not exist).
        if stderr.contains("not a git repository") || stderr.contains("cannot change to") {
            return Err(GitError::NotARepository {
                repo: repo.to_path_buf(),
                stderr,
            });
        }
        if stderr.is_empty() {
            return Err(not_found());
        }
        return Err(GitError::Failed {
            repo: repo.to_path_buf(),
            command: "git rev-parse".to_string(),
            stderr,
        });
    }
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = git(repo, &["show", "-s", "--format=%cI", &sha])?;
    if !out.status.success() {
        return Err(GitError::Failed {
            repo: repo.to_path_buf(),
            command: "git show".to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let committed = printed
        .parse::<Timestamp>()
        .map_err(|source| GitError::BadTime {
            sha: sha.clone(),
            printed: printed.clone(),
            source,
        })?;
    Ok(CommitInfo { sha, committed })
}

/// The manifest files (`.yaml`, `.yml`, `.json`) under `path` as of `commit`, with their
/// content: `path` is a file or a directory relative to `repo` (`./` allowed), as `git
/// ls-tree` reads it there. The work tree is not read, so uncommitted edits do not count.
pub fn files_at(
    repo: &Path,
    commit: &str,
    path: &str,
) -> Result<Vec<(PathBuf, Vec<u8>)>, GitError> {
    let info = commit_time(repo, commit)?;
    let path = path.trim_start_matches("./").trim_end_matches('/');
    // Run in `repo`: paths are relative to it, as ls-tree prints them too.
    let mut args = vec!["ls-tree", "-r", "-z", "--name-only", &info.sha, "--"];
    if !path.is_empty() && path != "." {
        args.push(path);
    }
    let out = git(repo, &args)?;
    if !out.status.success() {
        return Err(failed(repo, "git ls-tree", &out));
    }
    let names: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    let mut files = Vec::new();
    for name in names {
        let named_exactly = name == path;
        if !named_exactly && !crate::offline::is_manifest_name(Path::new(&name)) {
            continue;
        }
        // `./`: relative to the directory git runs in, not the repository root.
        let object = format!("{}:./{name}", info.sha);
        let out = git(repo, &["cat-file", "blob", &object])?;
        if !out.status.success() {
            return Err(failed(repo, "git cat-file", &out));
        }
        // Named as git names it (`SHA:PATH`), which keeps the extension JSON is told by.
        files.push((PathBuf::from(object), out.stdout));
    }
    Ok(files)
}

/// What `commit` changed under the chart directory `chart_path` (relative to the repository
/// root, `./` allowed): the files, and whether the `version:` line of its Chart.yaml changed.
/// The evidence behind the ChartVersion diagnosis (seed 002).
pub fn chart_change(repo: &Path, commit: &str, chart_path: &str) -> Result<ChartChange, GitError> {
    let info = commit_time(repo, commit)?;
    let chart = chart_path
        .trim_start_matches("./")
        .trim_end_matches('/')
        .to_string();
    // --root: the first commit of a repository has no parent to diff against.
    let out = git(
        repo,
        &[
            "diff-tree",
            "--root",
            "--no-commit-id",
            "--name-only",
            "-r",
            &info.sha,
            "--",
            &chart,
        ],
    )?;
    if !out.status.success() {
        return Err(failed(repo, "git diff-tree", &out));
    }
    let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    let chart_yaml = format!("{chart}/Chart.yaml");
    // Chart.yaml before and after the commit (absent before a root commit or a new chart),
    // compared by the rule lint uses too.
    let before = blob(repo, &format!("{}^:{chart_yaml}", info.sha))?;
    let after = blob(repo, &format!("{}:{chart_yaml}", info.sha))?;
    let version_changed =
        liveproof_helm::chart_version_changed(before.as_deref(), after.as_deref());
    Ok(ChartChange {
        commit: info.sha,
        chart_path: chart,
        files,
        version_changed,
    })
}

/// Whether `revision` (a GitOps controller's applied commit) contains `commit` (the change):
/// the same commit or a descendant of it, as `git merge-base --is-ancestor` tells in `repo`.
/// Never a guess: a revision the repository does not hold, history too shallow to reach the
/// commit, or no repository at all is [`Containment::Unknown`] with the command that fixes it.
pub fn containment(repo: &Path, commit: &str, revision: &str) -> Containment {
    let shown = repo.display();
    let unknown = |why: String, fix: String| Containment::Unknown { why, fix };
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex(commit) || !hex(revision) {
        return unknown(
            format!("`{revision}` is not a commit git can look up"),
            "compare the revision by hand".into(),
        );
    }
    let resolves = |object: &str| -> Result<bool, GitError> {
        let out = git(repo, &["cat-file", "-e", &format!("{object}^{{commit}}")])?;
        if !out.status.success() && !String::from_utf8_lossy(&out.stderr).trim().is_empty() {
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            if stderr.contains("not a git repository") || stderr.contains("cannot change to") {
                return Err(GitError::NotARepository {
                    repo: repo.to_path_buf(),
                    stderr,
                });
            }
        }
        Ok(out.status.success())
    };
    let fetch =
        format!("git -C {shown} fetch origin (or pass --repo with a clone that holds both)");
    for (object, what) in [(commit, "the change's commit"), (revision, "the revision")] {
        match resolves(object) {
            Ok(true) => {}
            Ok(false) => {
                return unknown(
                    format!("{what} {object} is not in the repository at {shown}"),
                    fetch,
                )
            }
            Err(GitError::NotARepository { .. }) => {
                return unknown(
                    format!("{shown} is not a git repository, so whether {revision} descends from {commit} cannot be told"),
                    "run verify in a clone of the repository the controller follows, or pass --repo DIR".into(),
                )
            }
            Err(e) => return unknown(e.with_hint().to_string(), fetch),
        }
    }
    let is_ancestor = |older: &str, newer: &str| -> Result<Option<bool>, GitError> {
        let out = git(repo, &["merge-base", "--is-ancestor", older, newer])?;
        Ok(match out.status.code() {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        })
    };
    match is_ancestor(commit, revision) {
        Ok(Some(true)) => return Containment::Contains,
        Ok(Some(false)) => {}
        Ok(None) | Err(_) => {
            return unknown(
                format!("git merge-base could not compare {commit} and {revision} in {shown}"),
                fetch,
            )
        }
    }
    // An older revision (the change descends from it) lacks the change whatever is cut off;
    // otherwise a shallow clone may just not reach back to where the two meet.
    if let Ok(Some(true)) = is_ancestor(revision, commit) {
        return Containment::Lacks;
    }
    let shallow = git(repo, &["rev-parse", "--is-shallow-repository"])
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "true")
        .unwrap_or(false);
    if shallow {
        return unknown(
            format!("the clone at {shown} is shallow: its history may not reach from {revision} back to {commit}"),
            format!("git -C {shown} fetch --unshallow"),
        );
    }
    Containment::Lacks
}

/// The manifests under `path` as of `commit` (a SHA, a prefix of one, or a ref), each file
/// with its documents: what `superseded` compares between the change's commit and a later one.
/// Never more than [`history::MAX_FILES`] files or [`history::MAX_BYTES`] bytes, read with two
/// git processes (`ls-tree`, then `cat-file --batch`); what cannot be read is said in
/// [`CommitManifests::read`], never taken for "no manifests".
pub fn manifests_at(repo: &Path, commit: &str, path: &RepoPath) -> CommitManifests {
    manifests_within(repo, commit, path, history::MAX_BYTES)
}

/// [`manifests_at`], reading at most `max_bytes` (what is left of a command's budget).
pub fn manifests_within(
    repo: &Path,
    commit: &str,
    path: &RepoPath,
    max_bytes: u64,
) -> CommitManifests {
    CommitManifests {
        commit: commit.to_ascii_lowercase(),
        path: path.clone(),
        read: read_manifests(repo, commit, path, (history::MAX_FILES, max_bytes)),
    }
}

/// [`manifests_at`]'s reading, within `(files, bytes)`.
fn read_manifests(
    repo: &Path,
    commit: &str,
    path: &RepoPath,
    (max_files, max_bytes): (usize, u64),
) -> Result<ReadManifests, String> {
    let said = |e: GitError| e.with_hint().to_string();
    let info = commit_time(repo, commit).map_err(said)?;
    let mut args = vec!["ls-tree", "-r", "-z", "-l"];
    if path.from_top {
        args.push("--full-tree");
    }
    args.extend([info.sha.as_str(), "--"]);
    if !path.path.is_empty() {
        args.push(&path.path);
    }
    let out = git(repo, &args).map_err(said)?;
    if !out.status.success() {
        return Err(said(failed(repo, "git ls-tree", &out)));
    }
    let within = |name: &str| {
        if name == path.path || path.recursive {
            return true;
        }
        match name.rsplit_once('/') {
            Some((dir, _)) => dir == path.path,
            None => path.path.is_empty(),
        }
    };
    // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`, NUL-terminated.
    let mut entries: Vec<(String, String, u64)> = Vec::new();
    for entry in out.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, name)) = entry.split_once('\t') else {
            continue;
        };
        let fields: Vec<&str> = meta.split_whitespace().collect();
        let [_, "blob", object, size] = fields.as_slice() else {
            continue;
        };
        let file = name.rsplit('/').next().unwrap_or(name);
        let manifest = crate::offline::is_manifest_name(Path::new(name)) || file == "Kustomization";
        if !within(name) || !(manifest || name == path.path) {
            continue;
        }
        entries.push((
            name.to_string(),
            object.to_string(),
            size.parse().unwrap_or(u64::MAX),
        ));
    }
    let shown = format!(
        "{} at {}",
        path.describe(),
        &info.sha[..info.sha.len().min(7)]
    );
    if entries.len() > max_files {
        return Err(format!(
            "{} manifest files under {shown}, more than the {max_files} liveproof compares",
            entries.len(),
        ));
    }
    let total = entries
        .iter()
        .fold(0u64, |sum, (_, _, size)| sum.saturating_add(*size));
    if total > max_bytes {
        return Err(format!(
            "{total} bytes of manifests under {shown}, more than the {max_bytes} liveproof compares"
        ));
    }
    let mut objects: Vec<&str> = entries
        .iter()
        .map(|(_, object, _)| object.as_str())
        .collect();
    objects.sort_unstable();
    objects.dedup();
    let blobs = blobs(repo, &objects).map_err(said)?;
    let mut files = Vec::with_capacity(entries.len());
    for (name, object, _) in &entries {
        let bytes = blobs
            .get(object.as_str())
            .cloned()
            .ok_or_else(|| format!("git cat-file did not return {name} ({object}) of {shown}"))?;
        let documents = crate::offline::parse_documents(Path::new(name), bytes)
            .map_err(|e| e.with_hint().to_string())?;
        files.push(ManifestFile {
            path: name.clone(),
            documents,
        });
    }
    Ok(ReadManifests {
        sha: info.sha,
        committed: info.committed,
        files,
        bytes: total,
    })
}

/// The contents of the blobs `objects`, by object name, in one `git cat-file --batch`.
fn blobs(
    repo: &Path,
    objects: &[&str],
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, GitError> {
    let mut out = std::collections::BTreeMap::new();
    if objects.is_empty() {
        return Ok(out);
    }
    let input: String = objects.iter().map(|o| format!("{o}\n")).collect();
    let done = liveproof_process::git_with_input(
        Path::new("git"),
        liveproof_process::GIT_TIMEOUT,
        repo,
        &["cat-file", "--batch"],
        Some(input.as_bytes()),
    )
    .map_err(|cause| GitError::Bounded {
        repo: repo.to_path_buf(),
        command: "git cat-file".into(),
        cause: format!("git {cause}"),
    })?;
    if !done.status.success() {
        return Err(failed(repo, "git cat-file --batch", &done));
    }
    // Each object: `<object> SP <type> SP <size> LF <contents> LF` (or `<object> SP missing LF`).
    let mut rest = done.stdout.as_slice();
    while let Some(end) = rest.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        let fields: Vec<&str> = header.split(' ').collect();
        let [object, _, size] = fields.as_slice() else {
            continue;
        };
        let Some(size) = size.parse::<usize>().ok().filter(|s| *s <= rest.len()) else {
            break;
        };
        out.insert(object.to_string(), rest[..size].to_vec());
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    Ok(out)
}

/// The commits after `commit` on `repo`'s `HEAD` that touched `path`, newest first, at most
/// `limit`: `git log --ancestry-path COMMIT..HEAD -- PATH`, so each descends from the commit
/// (and is not the commit itself). None when `HEAD` does not descend from it.
pub fn later_commits(
    repo: &Path,
    commit: &str,
    path: &RepoPath,
    limit: usize,
) -> Result<Vec<String>, GitError> {
    let info = commit_time(repo, commit)?;
    let range = format!("{}..HEAD", info.sha);
    let limit = limit.to_string();
    let pathspec = match (path.from_top, path.path.as_str()) {
        (true, p) => format!(":(top){p}"),
        (false, "") => ".".to_string(),
        (false, p) => p.to_string(),
    };
    let out = git(
        repo,
        &[
            "log",
            "--ancestry-path",
            "--format=%H",
            "-n",
            &limit,
            &range,
            "--",
            &pathspec,
        ],
    )?;
    if !out.status.success() {
        return Err(failed(repo, "git log --ancestry-path", &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// The text of `REV:PATH`; `None` when that revision or path does not exist (a root commit's
/// parent, a chart new in the commit). Any other failure is an error, never taken for absence:
/// absence reads as "the version changed".
fn blob(repo: &Path, object: &str) -> Result<Option<String>, GitError> {
    let exists = git(repo, &["rev-parse", "--verify", "--quiet", object])?;
    if !exists.status.success() {
        return Ok(None);
    }
    let out = git(repo, &["cat-file", "blob", object])?;
    if !out.status.success() {
        return Err(failed(repo, "git cat-file", &out));
    }
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}

fn failed(repo: &Path, command: &str, out: &Output) -> GitError {
    GitError::Failed {
        repo: repo.to_path_buf(),
        command: command.to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
}

fn git(repo: &Path, args: &[&str]) -> Result<Output, GitError> {
    run_git(Path::new("git"), liveproof_process::GIT_TIMEOUT, repo, args)
}

/// `program` (git) `-C repo args…`, bounded ([`liveproof_process::git`]).
fn run_git(
    program: &Path,
    timeout: std::time::Duration,
    repo: &Path,
    args: &[&str],
) -> Result<Output, GitError> {
    tracing::debug!(repo = %repo.display(), ?args, "running git");
    liveproof_process::git(program, timeout, repo, args).map_err(|cause| match cause {
        liveproof_process::ProgramError::Start(source) => GitError::NotInstalled { source },
        cause => GitError::Bounded {
            repo: repo.to_path_buf(),
            command: format!("git {}", args.first().copied().unwrap_or_default()),
            cause: format!("git {cause}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn run(repo: &Path, args: &[&str], date: &str) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env("GIT_AUTHOR_DATE", "2026-07-01T08:00:00Z")
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A git that never answers ends at its bound, its process group killed, saying so.
    #[test]
    fn a_git_that_hangs_ends_at_its_bound() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let fake = dir.path().join("git");
        std::fs::write(&fake, "#!/bin/sh\nsleep 1000\n").expect("script");
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let started = std::time::Instant::now();
        let err = run_git(
            &fake,
            std::time::Duration::from_millis(300),
            dir.path(),
            &["rev-parse", "HEAD"],
        )
        .expect_err("bounded");
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        let text = err.to_string();
        assert!(
            text.contains("`git rev-parse`") && text.contains("did not finish within 0.3s"),
            "{text}"
        );
        assert!(
            err.hint()
                .is_some_and(|h| h.contains("did not answer in time")),
            "{err}"
        );
    }

    fn repo_with_commits() -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path();
        run(repo, &["init", "-q"], "2026-07-12T10:00:00Z");
        run(
            repo,
            &["commit", "-q", "--allow-empty", "-m", "first"],
            "2026-07-10T09:30:00+02:00",
        );
        let first = run(repo, &["rev-parse", "HEAD"], "2026-07-12T10:00:00Z");
        run(
            repo,
            &["commit", "-q", "--allow-empty", "-m", "second"],
            "2026-07-12T10:00:00Z",
        );
        let second = run(repo, &["rev-parse", "HEAD"], "2026-07-12T10:00:00Z");
        (dir, first, second)
    }

    /// Seed 002 in a real repository: a chart committed, then a template changed without a
    /// version bump, then the bump.
    #[test]
    fn chart_change_sees_a_template_change_without_a_version_bump() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path();
        let chart = repo.join("charts/inventory");
        std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
        let write = |path: &str, text: &str| std::fs::write(repo.join(path), text).expect("write");
        write(
            "charts/inventory/Chart.yaml",
            "apiVersion: v2\nname: inventory\nversion: 0.4.2\n",
        );
        write(
            "charts/inventory/templates/deployment.yaml",
            "env:\n- name: DB_PASSWORD\n  value: inline\n",
        );
        run(repo, &["init", "-q"], "2026-07-01T10:00:00Z");
        run(repo, &["add", "-A"], "2026-07-01T10:00:00Z");
        run(
            repo,
            &["commit", "-q", "-m", "chart"],
            "2026-07-01T10:00:00Z",
        );
        write(
            "charts/inventory/templates/deployment.yaml",
            "env:\n- name: DB_PASSWORD\n  valueFrom: {secretKeyRef: {name: inventory-db, key: password}}\n",
        );
        run(
            repo,
            &["commit", "-q", "-am", "secret ref"],
            "2026-07-12T10:00:00Z",
        );
        let change = run(repo, &["rev-parse", "HEAD"], "2026-07-12T10:00:00Z");
        let facts =
            chart_change(repo, &change[..7], "./charts/inventory").expect("reads the commit");
        assert_eq!(facts.commit, change);
        assert_eq!(facts.chart_path, "charts/inventory");
        assert_eq!(
            facts.files,
            vec!["charts/inventory/templates/deployment.yaml".to_string()]
        );
        assert!(!facts.version_changed);

        write(
            "charts/inventory/Chart.yaml",
            "apiVersion: v2\nname: inventory\nversion: 0.4.3\n",
        );
        run(
            repo,
            &["commit", "-q", "-am", "bump"],
            "2026-07-12T11:00:00Z",
        );
        let bump = run(repo, &["rev-parse", "HEAD"], "2026-07-12T11:00:00Z");
        let facts = chart_change(repo, &bump, "charts/inventory").expect("reads the bump");
        assert!(facts.version_changed);
        // The same version quoted and commented: Flux builds no new chart, and lint agrees.
        write(
            "charts/inventory/Chart.yaml",
            "apiVersion: v2\nname: inventory\nversion: \"0.4.3\" # same\n",
        );
        run(
            repo,
            &["commit", "-q", "-am", "requote"],
            "2026-07-12T12:00:00Z",
        );
        let requote = run(repo, &["rev-parse", "HEAD"], "2026-07-12T12:00:00Z");
        let facts = chart_change(repo, &requote, "charts/inventory").expect("reads it");
        assert_eq!(facts.files, vec!["charts/inventory/Chart.yaml".to_string()]);
        assert!(!facts.version_changed, "re-quoting the version is no bump");
        // The first commit of a repository has no parent: still read.
        let first = run(
            repo,
            &["rev-list", "--max-parents=0", "HEAD"],
            "2026-07-12T11:00:00Z",
        );
        let facts = chart_change(repo, &first, "charts/inventory").expect("root commit");
        assert_eq!(facts.files.len(), 2);
    }

    #[test]
    fn reads_the_committer_time_not_the_author_time() {
        let (dir, first, second) = repo_with_commits();
        let info = commit_time(dir.path(), &first[..7]).expect("resolves a short sha");
        assert_eq!(info.sha, first);
        assert_eq!(
            info.committed,
            "2026-07-10T07:30:00Z".parse::<Timestamp>().expect("ts")
        );
        let info = commit_time(dir.path(), &second).expect("resolves");
        assert_eq!(
            info.committed,
            "2026-07-12T10:00:00Z".parse::<Timestamp>().expect("ts")
        );
    }

    #[test]
    fn unknown_commit_names_the_repo_and_hints() {
        let (dir, _, _) = repo_with_commits();
        let err = commit_time(dir.path(), "deadbeefdeadbeef").expect_err("unknown");
        assert!(matches!(err, GitError::CommitNotFound { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("deadbeefdeadbeef") && msg.contains(&dir.path().display().to_string())
        );
        assert!(!msg.contains("hint:"), "{msg}");
        assert!(err.hint().is_some_and(|h| h.contains("fetch it")), "{err}");
        // Option injection is refused as not found, not run.
        let err = commit_time(dir.path(), "--output=/tmp/x").expect_err("option");
        assert!(matches!(err, GitError::CommitNotFound { .. }), "{err:?}");
    }

    /// main: first ← second (the change) ← third; a branch off first: side.
    #[test]
    fn a_revision_contains_the_commits_it_descends_from() {
        let (dir, first, second) = repo_with_commits();
        let repo = dir.path();
        run(
            repo,
            &["commit", "-q", "--allow-empty", "-m", "third"],
            "2026-07-12T11:00:00Z",
        );
        let third = run(repo, &["rev-parse", "HEAD"], "2026-07-12T11:00:00Z");
        run(
            repo,
            &["checkout", "-q", "-b", "side", &first],
            "2026-07-12T11:00:00Z",
        );
        run(
            repo,
            &["commit", "-q", "--allow-empty", "-m", "side"],
            "2026-07-12T11:30:00Z",
        );
        let side = run(repo, &["rev-parse", "HEAD"], "2026-07-12T11:30:00Z");
        assert_eq!(containment(repo, &second, &second), Containment::Contains);
        assert_eq!(
            containment(repo, &second[..7], &third),
            Containment::Contains,
            "a descendant"
        );
        assert_eq!(
            containment(repo, &second, &first),
            Containment::Lacks,
            "older"
        );
        assert_eq!(
            containment(repo, &second, &side),
            Containment::Lacks,
            "another branch"
        );
        let missing = "0123456789abcdef0123456789abcdef01234567";
        let Containment::Unknown { why, fix } = containment(repo, &second, missing) else {
            panic!("a revision the repository lacks is unknown");
        };
        assert!(
            why.contains(missing) && fix.contains("fetch"),
            "{why} / {fix}"
        );
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let Containment::Unknown { why, fix } = containment(elsewhere.path(), &second, &third)
        else {
            panic!("no repository is unknown");
        };
        assert!(
            why.contains("not a git repository") && fix.contains("--repo"),
            "{why}"
        );
    }

    /// A shallow clone of main at `third` cannot reach `first`'s other branch: that is not
    /// "lacks", it is "cannot tell" with the fetch that would tell.
    #[test]
    fn shallow_history_is_unknown_not_lacking() {
        let (dir, first, second) = repo_with_commits();
        let repo = dir.path();
        run(
            repo,
            &["checkout", "-q", "-b", "side", &first],
            "2026-07-12T11:00:00Z",
        );
        run(
            repo,
            &["commit", "-q", "--allow-empty", "-m", "side"],
            "2026-07-12T11:30:00Z",
        );
        let side = run(repo, &["rev-parse", "HEAD"], "2026-07-12T11:30:00Z");
        let clone = tempfile::tempdir().expect("tempdir");
        let url = format!("file://{}", repo.display());
        let target = clone.path().join("c");
        let out = Command::new("git")
            .args(["clone", "-q", "--no-single-branch", "--depth", "1", &url])
            .arg(&target)
            .output()
            .expect("git clone");
        assert!(out.status.success(), "{out:?}");
        let Containment::Unknown { why, fix } = containment(&target, &second, &side) else {
            panic!("shallow history cannot say lacks");
        };
        assert!(
            why.contains("shallow") && fix.contains("--unshallow"),
            "{why} / {fix}"
        );
    }

    /// B writes apps/ (a Deployment, a kustomization.yaml without kind, a README, a file in a
    /// subdirectory); C changes the Deployment; X, on a branch off B, changes it too; D changes
    /// only the README.
    fn manifest_history() -> (tempfile::TempDir, [String; 4]) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path();
        let write = |path: &str, text: &str| {
            let full = repo.join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(full, text).expect("write");
        };
        let commit = |message: &str, date: &str| {
            run(repo, &["add", "-A"], date);
            run(repo, &["commit", "-q", "-m", message], date);
            run(repo, &["rev-parse", "HEAD"], date)
        };
        run(repo, &["init", "-q", "-b", "main"], "2026-07-12T09:00:00Z");
        write("apps/shop.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\n---\nkind: Service\napiVersion: v1\nmetadata: {name: shop}\n");
        write("apps/kustomization.yaml", "resources: [shop.yaml]\n");
        write("apps/README.md", "shop\n");
        write(
            "apps/sub/extra.json",
            "{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\"}",
        );
        let b = commit("b", "2026-07-12T10:00:00Z");
        write(
            "apps/shop.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop, labels: {v: c}}\n",
        );
        let c = commit("c", "2026-07-12T10:05:00Z");
        run(
            repo,
            &["checkout", "-q", "-b", "side", &b],
            "2026-07-12T10:06:00Z",
        );
        write("apps/shop.yaml", "kind: Deployment\n");
        let x = commit("x", "2026-07-12T10:06:00Z");
        run(repo, &["checkout", "-q", "main"], "2026-07-12T10:07:00Z");
        write("apps/README.md", "shop, again\n");
        let d = commit("d", "2026-07-12T10:07:00Z");
        (dir, [b, c, x, d])
    }

    #[test]
    fn manifests_as_of_a_commit_are_each_file_with_its_documents() {
        let (dir, [b, c, ..]) = manifest_history();
        let repo = dir.path();
        let flux = RepoPath::new("./apps/", true, true);
        let read = manifests_at(repo, &b[..7], &flux);
        assert_eq!(read.commit, b[..7]);
        let read = read.read.expect("read");
        assert_eq!(
            (read.sha.as_str(), read.committed.to_string().as_str()),
            (b.as_str(), "2026-07-12T10:00:00Z")
        );
        let names: Vec<&str> = read.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "apps/kustomization.yaml",
                "apps/shop.yaml",
                "apps/sub/extra.json"
            ]
        );
        assert_eq!(read.files[1].documents.len(), 2, "both documents");
        // Three small files: their sizes, as ls-tree gives them.
        assert!((100..1000).contains(&read.bytes), "{}", read.bytes);
        assert!(read.files[0].is_kustomization());
        assert_eq!(
            read.files[0].documents,
            [serde_json::json!({"resources": ["shop.yaml"]})]
        );
        // Argo CD without directory.recurse: the top level only.
        let top = manifests_at(repo, &c, &RepoPath::new("apps", false, true))
            .read
            .expect("read");
        assert_eq!(top.files.len(), 2);
        assert_eq!(top.files[1].documents[0]["metadata"]["labels"]["v"], "c");
        // A file, as -f names it.
        let file = manifests_at(repo, &c, &RepoPath::new("apps/shop.yaml", false, false))
            .read
            .expect("read");
        assert_eq!(file.files.len(), 1);
        // Past the bounds, or not there: said, never "no manifests".
        let err = read_manifests(repo, &b, &flux, (2, history::MAX_BYTES)).expect_err("3 files");
        assert!(
            err.contains("3 manifest files under apps at") && err.contains("more than the 2"),
            "{err}"
        );
        let err = read_manifests(repo, &b, &flux, (10, 20)).expect_err("bytes");
        assert!(err.contains("bytes of manifests under apps"), "{err}");
        let err = manifests_at(repo, "0123456789abcdef", &flux)
            .read
            .expect_err("no such commit");
        assert!(
            err.contains("0123456789abcdef") && err.contains("hint:"),
            "{err}"
        );
        let broken = tempfile::tempdir().expect("tempdir");
        run(broken.path(), &["init", "-q"], "2026-07-12T10:00:00Z");
        std::fs::write(broken.path().join("bad.yaml"), "a: [b\n").expect("write");
        run(broken.path(), &["add", "-A"], "2026-07-12T10:00:00Z");
        run(
            broken.path(),
            &["commit", "-q", "-m", "bad"],
            "2026-07-12T10:00:00Z",
        );
        let err = manifests_at(broken.path(), "HEAD", &RepoPath::new("", true, true))
            .read
            .expect_err("no YAML");
        assert!(err.contains("bad.yaml"), "{err}");
    }

    #[test]
    fn later_commits_are_those_after_the_commit_on_head_that_touched_the_path() {
        let (dir, [b, c, _x, d]) = manifest_history();
        let repo = dir.path();
        let shop = RepoPath::new("apps/shop.yaml", false, false);
        assert_eq!(
            later_commits(repo, &b[..7], &shop, 100).expect("listed"),
            std::slice::from_ref(&c)
        );
        let apps = RepoPath::new("apps", true, true);
        assert_eq!(
            later_commits(repo, &b, &apps, 100).expect("listed"),
            [d.clone(), c.clone()]
        );
        assert_eq!(later_commits(repo, &b, &apps, 1).expect("listed"), [d]);
        assert!(later_commits(repo, &c, &shop, 100)
            .expect("listed")
            .is_empty());
        assert!(matches!(
            later_commits(repo, "0123456789abcdef", &shop, 100),
            Err(GitError::CommitNotFound { .. })
        ));
    }

    #[test]
    fn not_a_repository() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = commit_time(dir.path(), "HEAD").expect_err("not a repo");
        assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
        let err = commit_time(&dir.path().join("missing"), "HEAD").expect_err("missing dir");
        assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
    }
}
