//! Diffs and file contents at a revision, read with the `git` binary.
//!
//! Why the binary and not `gix`/`git2`: it is what every CI runner already has, it pulls in no C
//! dependency (libgit2) and no second Git implementation to keep in step with the user's
//! repository format, and it is the choice `liveproof_gather::git` made for `--commit`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::LintError;

/// A directory inside a git work tree.
#[derive(Debug, Clone)]
pub struct Repo {
    dir: PathBuf,
    /// The directory relative to the work tree's top, `""` or ending in `/` (`git rev-parse
    /// --show-prefix`): what turns our PATH-relative paths into `REV:path` object names.
    prefix: String,
}

/// [`Repo::fetch_command`] given the repository's remotes (`origin` is taken as one always: a
/// CI checkout has it).
pub(crate) fn fetch_command(rev: &str, remotes: &[String]) -> String {
    let name = rev.strip_prefix("refs/remotes/").unwrap_or(rev);
    let remote = std::iter::once("origin")
        .chain(remotes.iter().map(String::as_str))
        .find(|r| {
            name.strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('/'))
        });
    match remote {
        Some(remote) => format!("git fetch {remote} {}", &name[remote.len() + 1..]),
        None => format!("git fetch origin {rev}"),
    }
}

impl Repo {
    /// `Ok(None)` when `dir` is not inside a git work tree.
    pub fn open(dir: &Path) -> Result<Option<Repo>, LintError> {
        let out = git(dir, &["rev-parse", "--show-prefix"])?;
        if !out.status.success() {
            let stderr = stderr(&out);
            if stderr.contains("not a git repository") {
                return Ok(None);
            }
            return Err(failed(dir, "git rev-parse --show-prefix", stderr));
        }
        Ok(Some(Repo {
            dir: dir.to_path_buf(),
            prefix: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        }))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The commit `rev` names, as a full SHA; [`LintError::UnknownRevision`] naming `rev` when
    /// there is none.
    pub fn resolve(&self, rev: &str) -> Result<String, LintError> {
        self.try_resolve(rev)?
            .ok_or_else(|| LintError::UnknownRevision {
                repo: self.dir.clone(),
                rev: rev.to_string(),
                fetch: self.fetch_command(rev),
            })
    }

    /// The `git fetch` that brings `rev` here: a remote-tracking name (`origin/main`,
    /// `refs/remotes/upstream/v2`) is fetched from its remote by the branch's own name (`git
    /// fetch origin main`; `git fetch origin origin/main` fetches nothing of that name);
    /// anything else (a branch, a tag, a SHA) from `origin`.
    fn fetch_command(&self, rev: &str) -> String {
        let remotes: Vec<String> = git(&self.dir, &["remote"])
            .ok()
            .filter(|out| out.status.success())
            .map(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        fetch_command(rev, &remotes)
    }

    fn try_resolve(&self, rev: &str) -> Result<Option<String>, LintError> {
        // A leading '-' would be read as an option.
        if rev.is_empty() || rev.starts_with('-') || rev.contains(char::is_whitespace) {
            return Ok(None);
        }
        let spec = format!("{rev}^{{commit}}");
        let out = git(&self.dir, &["rev-parse", "--verify", "--quiet", &spec])?;
        if !out.status.success() {
            return Ok(None);
        }
        Ok(Some(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        ))
    }

    /// The default base: the merge-base of `head` with `origin/main` when that exists (what a
    /// pull request will be diffed against), else the parent of `head`; `None` for a root
    /// commit (then everything counts as changed).
    pub fn default_base(&self, head: &str) -> Result<Option<String>, LintError> {
        if self.try_resolve("origin/main")?.is_some() {
            let out = git(&self.dir, &["merge-base", "origin/main", head])?;
            if out.status.success() {
                return Ok(Some(
                    String::from_utf8_lossy(&out.stdout).trim().to_string(),
                ));
            }
        }
        self.try_resolve(&format!("{head}~1"))
    }

    /// Files under the directory changed between `base` and `head` (added, modified or
    /// deleted; renames as delete + add), relative to the directory.
    pub fn changed(&self, base: &str, head: &str) -> Result<Vec<String>, LintError> {
        let args = [
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--relative",
            base,
            head,
            "--",
        ];
        let out = git(&self.dir, &args)?;
        if !out.status.success() {
            return Err(failed(&self.dir, "git diff --name-only", stderr(&out)));
        }
        Ok(split_z(&out.stdout))
    }

    /// Every file under the directory at `rev`, relative to it.
    pub fn list(&self, rev: &str) -> Result<Vec<String>, LintError> {
        // In a subdirectory, ls-tree lists that subdirectory, relative to it.
        let out = git(&self.dir, &["ls-tree", "-r", "-z", "--name-only", rev])?;
        if !out.status.success() {
            return Err(failed(&self.dir, "git ls-tree", stderr(&out)));
        }
        Ok(split_z(&out.stdout))
    }

    /// The UTF-8 text of each path at `rev` that exists there and is at most `max_len` bytes;
    /// one `git cat-file --batch` for all of them.
    pub fn read(
        &self,
        rev: &str,
        paths: &[String],
        max_len: usize,
    ) -> Result<BTreeMap<String, String>, LintError> {
        let paths: Vec<&String> = paths.iter().filter(|p| !p.contains('\n')).collect();
        let mut files = BTreeMap::new();
        if paths.is_empty() {
            return Ok(files);
        }
        let input: String = paths
            .iter()
            .map(|p| format!("{rev}:{}{p}\n", self.prefix))
            .collect();
        // The one git runner (bounded, in English, no prompt); what is missing is said on
        // stdout, and git's complaints on stderr are not ours.
        let out = liveproof_process::git_with_input(
            Path::new("git"),
            liveproof_process::GIT_TIMEOUT,
            &self.dir,
            &["cat-file", "--batch"],
            Some(input.as_bytes()),
        )
        .map_err(|cause| match cause {
            liveproof_process::ProgramError::Start(source) => LintError::GitNotInstalled { source },
            cause => failed(&self.dir, "git cat-file --batch", format!("git {cause}")),
        })?;
        let mut rest = out.stdout.as_slice();
        for path in paths {
            // `<oid> <type> <size>\n<body>\n`, or `<name> missing\n`.
            let Some(end) = rest.iter().position(|&b| b == b'\n') else {
                break;
            };
            let header = String::from_utf8_lossy(&rest[..end]).into_owned();
            rest = &rest[end + 1..];
            let mut fields = header.split_whitespace();
            let (Some(_), Some(kind), Some(size)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Ok(size) = size.parse::<usize>() else {
                continue;
            };
            if rest.len() < size + 1 {
                return Err(failed(
                    &self.dir,
                    "git cat-file --batch",
                    "its output ended early".into(),
                ));
            }
            let body = &rest[..size];
            rest = &rest[size + 1..];
            if kind == "blob" && size <= max_len {
                if let Ok(text) = std::str::from_utf8(body) {
                    files.insert(path.clone(), text.to_string());
                }
            }
        }
        Ok(files)
    }
}

fn git(dir: &Path, args: &[&str]) -> Result<Output, LintError> {
    let program = Path::new("git");
    liveproof_process::git(program, liveproof_process::GIT_TIMEOUT, dir, args).map_err(|cause| {
        match cause {
            liveproof_process::ProgramError::Start(source) => LintError::GitNotInstalled { source },
            cause => LintError::Git {
                repo: dir.to_path_buf(),
                command: format!("git {}", args.first().copied().unwrap_or_default()),
                stderr: format!("git {cause}"),
            },
        }
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

fn failed(dir: &Path, command: &str, stderr: String) -> LintError {
    LintError::Git {
        repo: dir.to_path_buf(),
        command: command.to_string(),
        stderr,
    }
}

fn split_z(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

#[cfg(test)]
mod fetch_tests {
    use super::fetch_command;

    #[test]
    fn a_remote_tracking_name_is_fetched_from_its_remote_by_the_branch_name() {
        let remotes = ["origin".to_string(), "upstream".to_string()];
        for (rev, want) in [
            ("origin/main", "git fetch origin main"),
            ("refs/remotes/origin/main", "git fetch origin main"),
            ("upstream/release/v2", "git fetch upstream release/v2"),
            ("main", "git fetch origin main"),
            ("feature/x", "git fetch origin feature/x"),
            ("v1.4.0", "git fetch origin v1.4.0"),
        ] {
            assert_eq!(fetch_command(rev, &remotes), want, "{rev}");
        }
    }
}
