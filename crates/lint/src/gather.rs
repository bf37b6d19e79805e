//! The one phase with I/O: which files changed, and their text at head (and base).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::git::Repo;
use crate::LintError;

/// Larger files are not manifests anyone reviews; they are skipped rather than read.
const MAX_FILE_LEN: usize = 1024 * 1024;

/// What to lint.
#[derive(Debug, Clone)]
pub struct Options {
    /// The directory to lint (a repository, or a directory in one).
    pub path: PathBuf,
    /// Diff from here. Default: the merge-base with `origin/main` if that exists, else `HEAD~1`.
    pub base: Option<String>,
    /// Lint the files as of this revision. Default: `HEAD` (committed state; the work tree's
    /// uncommitted edits are not linted, as CI would not see them either).
    pub head: Option<String>,
}

/// Which files changed between base and head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// No history to diff (not a repository, or a root commit): every file counts as changed.
    Everything,
    /// Paths relative to the linted directory.
    Paths(BTreeSet<String>),
}

impl Changed {
    pub fn contains(&self, path: &str) -> bool {
        match self {
            Changed::Everything => true,
            Changed::Paths(paths) => paths.contains(path),
        }
    }

    /// Changed files under `dir/` (every file there when everything changed).
    pub fn under<'a>(&'a self, dir: &str, head: &'a BTreeMap<String, String>) -> Vec<&'a str> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        match self {
            Changed::Everything => head
                .keys()
                .filter(|p| p.starts_with(&prefix))
                .map(String::as_str)
                .collect(),
            Changed::Paths(paths) => paths
                .iter()
                .filter(|p| p.starts_with(&prefix))
                .map(String::as_str)
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Changed::Paths(p) if p.is_empty())
    }
}

/// Everything the rules judge; built by [`gather`], or by hand in tests.
#[derive(Debug, Clone)]
pub struct Input {
    /// The text of each linted file at head, by path relative to PATH.
    pub head: BTreeMap<String, String>,
    /// The text at base of the changed files and of every `Chart.yaml`, where they existed.
    /// `None` when there is no base to compare with.
    pub base: Option<BTreeMap<String, String>>,
    pub changed: Changed,
    pub base_rev: Option<String>,
    pub head_rev: Option<String>,
    /// What limited the gathering, said to the reader.
    pub notes: Vec<String>,
}

/// Files worth reading: manifests, chart files, and the scripts and CI workflows that might
/// restart a workload.
pub(crate) fn is_scanned(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(ext, "yaml" | "yml" | "tpl" | "sh" | "bash" | "mk")
        || matches!(
            name,
            "Makefile" | "makefile" | "justfile" | "Justfile" | "Taskfile"
        )
}

/// Reads what [`crate::lint`] needs. Errors: `--base`/`--head` outside a repository, an unknown
/// revision (named), git failing.
pub fn gather(options: &Options) -> Result<Input, LintError> {
    let path = &options.path;
    if !path.is_dir() {
        return Err(LintError::NotADirectory(path.clone()));
    }
    let Some(repo) = Repo::open(path)? else {
        if options.base.is_some() {
            return Err(LintError::NotARepository {
                path: path.clone(),
                flag: "--base",
            });
        }
        if options.head.is_some() {
            return Err(LintError::NotARepository {
                path: path.clone(),
                flag: "--head",
            });
        }
        let mut head = BTreeMap::new();
        walk(path, path, &mut head)?;
        let mut notes = vec![format!(
            "{} is not a git repository: every file is linted as changed, and rules that \
             need a diff (chartversion-not-bumped) cannot judge",
            path.display()
        )];
        drop_too_deep(&mut head, "", &mut notes);
        return Ok(Input {
            head,
            base: None,
            changed: Changed::Everything,
            base_rev: None,
            head_rev: None,
            notes,
        });
    };
    let mut notes = Vec::new();
    let head_name = options.head.as_deref().unwrap_or("HEAD");
    let head_rev = repo.resolve(head_name)?;
    let base_rev = match &options.base {
        Some(base) => Some(repo.resolve(base)?),
        None => {
            let base = repo.default_base(&head_rev)?;
            if base.is_none() {
                notes.push(format!(
                    "{head_name} has no parent and there is no origin/main: every file is linted \
                     as changed; pass --base REF to diff against a revision"
                ));
            }
            base
        }
    };
    let listed: Vec<String> = repo
        .list(&head_rev)?
        .into_iter()
        .filter(|p| is_scanned(p))
        .collect();
    let mut head = repo.read(&head_rev, &listed, MAX_FILE_LEN)?;
    drop_too_deep(&mut head, "", &mut notes);
    let (changed, base) = match &base_rev {
        Some(base_rev) => {
            let changed: BTreeSet<String> =
                repo.changed(base_rev, &head_rev)?.into_iter().collect();
            let wanted: Vec<String> = changed
                .iter()
                .filter(|p| is_scanned(p))
                .chain(head.keys().filter(|p| is_chart_yaml(p)))
                .cloned()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let mut base = repo.read(base_rev, &wanted, MAX_FILE_LEN)?;
            drop_too_deep(&mut base, &format!(" at {}", short(base_rev)), &mut notes);
            (Changed::Paths(changed), Some(base))
        }
        None => (Changed::Everything, None),
    };
    Ok(Input {
        head,
        base,
        changed,
        base_rev,
        head_rev: Some(head_rev),
        notes,
    })
}

/// Drops YAML files nested past [`liveproof_helm::yaml::MAX_NESTING`] before any parser sees
/// them (libyaml's cost grows with the square of the depth: a small file could hold the CPU
/// for minutes), saying so in a note that names the file and line, never the text.
fn drop_too_deep(files: &mut BTreeMap<String, String>, at: &str, notes: &mut Vec<String>) {
    use liveproof_helm::yaml::{check_nesting, MAX_NESTING};
    files.retain(|path, text| {
        if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
            return true;
        }
        match check_nesting(text, MAX_NESTING) {
            Ok(()) => true,
            Err(too_deep) => {
                notes.push(format!(
                    "{path}{at}: not read: {too_deep}; Kubernetes manifests are far shallower, \
                     so check what produced this file"
                ));
                false
            }
        }
    });
}

fn short(rev: &str) -> &str {
    rev.get(..12).unwrap_or(rev)
}

pub(crate) fn is_chart_yaml(path: &str) -> bool {
    path == "Chart.yaml" || path.ends_with("/Chart.yaml")
}

fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) -> Result<(), LintError> {
    let io = |source| LintError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        let file_type = entry.file_type().map_err(io)?;
        if file_type.is_dir() {
            if !matches!(name.as_ref(), ".git" | "target" | "node_modules") {
                walk(root, &path, files)?;
            }
        } else if file_type.is_file() {
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if !is_scanned(&rel) {
                continue;
            }
            let len = entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
            if len > MAX_FILE_LEN as u64 {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path) {
                files.insert(rel, text);
            }
        }
    }
    Ok(())
}
