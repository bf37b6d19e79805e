//! Diffs and file contents at a revision, read with the `git` binary.
//!
//! Why the binary and not `gix`/`git2`: it is what every CI runner already has, it pulls in no C
//! dependency (libgit2) and no second Git implementation to keep in step with the user's
//! repository format, and it is the choice `liveproof_gather::git` made for `--commit`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::LintError;

/// A directory inside a git work tree.
#[derive(Debug, Clone)]
pub struct Repo {
    dir: PathBuf,
    /// The directory relative to the work tree's top, `""` or ending in `/` (`git rev-parse
    /// --show-prefix`): what turns our PATH-relative paths into `REV:path` object names.
    prefix: String,
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
            })
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
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(["cat-file", "--batch"])
            .env("LC_ALL", "C")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| LintError::GitNotInstalled { source })?;
        let input: String = paths
            .iter()
            .map(|p| format!("{rev}:{}{p}\n", self.prefix))
            .collect();
        let mut stdin = child.stdin.take();
        // Written from its own thread: git answers while we write, and a full pipe both ways
        // would deadlock.
        let writer = std::thread::spawn(move || {
            if let Some(stdin) = stdin.as_mut() {
                let _ = stdin.write_all(input.as_bytes());
            }
        });
        let io = |source| LintError::Io {
            path: self.dir.clone(),
            source,
        };
        let Some(stdout) = child.stdout.take() else {
            return Err(failed(&self.dir, "git cat-file --batch", String::new()));
        };
        let mut reader = BufReader::new(stdout);
        for path in paths {
            let mut header = String::new();
            if reader.read_line(&mut header).map_err(io)? == 0 {
                break;
            }
            // `<oid> <type> <size>`, or `<name> missing`.
            let mut fields = header.split_whitespace();
            let (Some(_), Some(kind), Some(size)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Ok(size) = size.parse::<usize>() else {
                continue;
            };
            let mut body = vec![0; size];
            reader.read_exact(&mut body).map_err(io)?;
            let mut newline = [0u8; 1];
            reader.read_exact(&mut newline).map_err(io)?;
            if kind == "blob" && size <= max_len {
                if let Ok(text) = String::from_utf8(body) {
                    files.insert(path.clone(), text);
                }
            }
        }
        let _ = writer.join();
        let _ = child.wait();
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
