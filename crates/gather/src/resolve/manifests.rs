//! `-f PATH` and `-k DIR`: the pod templates the manifests declare, read from the work tree, from
//! `--repo` as of `--commit`, from stdin (`-f -`), or as `kubectl kustomize` builds them.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::Target;

use super::{ResolveError, ResolveInput};

/// `-f PATH` and `-k DIR`: the pod templates the manifests declare — from the work tree, or
/// with `--commit` as of that commit in `--repo` (so uncommitted edits do not count); `-f -`
/// from stdin; `-k DIR` as `kubectl kustomize DIR` builds it.
pub(super) fn declared_templates(
    input: &ResolveInput,
    commit: Option<&str>,
) -> Result<Vec<liveproof_evidence::DeclaredTemplate>, ResolveError> {
    let mut out: Vec<liveproof_evidence::DeclaredTemplate> = Vec::new();
    for path in &input.manifests {
        let hinted = |reason: String, hint: Option<Cow<'_, str>>| ResolveError::Manifests {
            path: path.clone(),
            reason,
            hint: hint.map(Cow::into_owned),
        };
        let (observed, source, repo_path) = read_manifests(input, path, commit)?;
        let before = out.len();
        add_declared(
            &mut out,
            input.namespace.as_deref(),
            &observed,
            &source,
            &path.display().to_string(),
        )
        .map_err(|reason| hinted(reason, None))?;
        for d in &mut out[before..] {
            d.repo_path.clone_from(&repo_path);
        }
        if out.len() == before {
            return Err(hinted(
                format!("declares no {}", liveproof_evidence::TargetKind::workload_kinds("or", false)),
                Some("-f takes the manifests the repository applies (plain YAML, not Helm templates); for a Helm chart verify release/NAME or helmrelease/NAME".into()),
            ));
        }
    }
    for dir in &input.kustomize {
        let refuse = |reason: String, hint: Option<String>| ResolveError::Kustomize {
            dir: dir.clone(),
            reason,
            hint,
        };
        let built = super::kustomize::kustomize(dir, input.request_timeout)
            .map_err(|(reason, hint)| refuse(reason, hint))?;
        let observed = crate::offline::load_files(vec![(
            PathBuf::from(format!("kubectl kustomize {}", dir.display())),
            built,
        )])
        .map_err(|e| refuse(e.to_string(), e.hint().map(Cow::into_owned)))?;
        let before = out.len();
        let source = format!("kubectl kustomize {}", dir.display());
        add_declared(
            &mut out,
            input.namespace.as_deref(),
            &observed,
            &source,
            &format!("-k {}", dir.display()),
        )
        .map_err(|reason| refuse(reason, None))?;
        if out.len() == before {
            return Err(refuse(
                format!("builds no {}", liveproof_evidence::TargetKind::workload_kinds("or", false)),
                Some("-k takes a directory holding a kustomization.yaml whose resources include the workloads".into()),
            ));
        }
    }
    Ok(out)
}

/// Each workload `observed` holds with a pod template, as a declared template read from
/// `source` (given on the command line as `given`), in `default_namespace` (`-n`) when it
/// names none.
fn add_declared(
    out: &mut Vec<liveproof_evidence::DeclaredTemplate>,
    default_namespace: Option<&str>,
    observed: &liveproof_evidence::Observed,
    source: &str,
    given: &str,
) -> Result<(), String> {
    for (kind, meta, template) in observed.workloads() {
        let (Some(name), Some(template)) = (meta.name.as_deref(), template) else {
            continue;
        };
        let namespace = meta.namespace.as_deref().or(default_namespace);
        let template = serde_json::to_value(template)
            .map_err(|e| format!("{kind}/{name}: the pod template: {e}"))?;
        out.push(liveproof_evidence::DeclaredTemplate {
            target: Target::new(kind, namespace, name),
            template,
            source: source.to_string(),
            given: given.to_string(),
            repo_path: None,
        });
    }
    Ok(())
}

/// The objects `-f path` names, where they were read (for the evidence's `source`), and with
/// `commit` the path in `--repo` they were read at: stdin for `-`; the path as of `commit` in
/// `--repo`; or the work tree (a directory's top level, every level with `-R`, as kubectl). A
/// relative path that is not there from the working directory but is in `--repo` is read
/// there, and stderr says so. A URL is refused.
fn read_manifests(
    input: &ResolveInput,
    path: &Path,
    commit: Option<&str>,
) -> Result<
    (
        liveproof_evidence::Observed,
        String,
        Option<liveproof_evidence::history::RepoPath>,
    ),
    ResolveError,
> {
    let hinted = |reason: String, hint: Option<String>| ResolveError::Manifests {
        path: path.to_path_buf(),
        reason,
        hint,
    };
    let text = path.to_string_lossy();
    if text.contains("://") {
        // Named without its credentials: a URL can carry a password or a token.
        let shown = liveproof_redacted::DisplaySafeUrl::new(text.as_ref()).to_string();
        let hinted = |reason: String, hint: Option<String>| ResolveError::Manifests {
            path: PathBuf::from(&shown),
            reason,
            hint,
        };
        return Err(hinted(
            "is a URL, and liveproof reads no remote manifests: what it verifies against must be what you reviewed".into(),
            Some(format!("download it first, e.g. `curl -fsSLo manifest.yaml '{}'`, then -f manifest.yaml", liveproof_redacted::DisplaySafeUrl::new(text.as_ref()))),
        ));
    }
    if text == "-" {
        if let Some(commit) = commit {
            return Err(hinted(
                format!("stdin is not in the repository, and with --commit {commit} -f reads the manifests as committed"),
                Some("name the file in --repo, or leave --commit out and give --since".into()),
            ));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin().lock(), super::MAX_MANIFEST_STREAM + 1),
            &mut bytes,
        )
        .map_err(|e| hinted(format!("reading stdin: {e}"), None))?;
        let observed = crate::offline::load_files(vec![(PathBuf::from("-"), bytes)])
            .map_err(|e| hinted(e.to_string(), e.hint().map(Cow::into_owned)))?;
        return Ok((observed, "stdin".into(), None));
    }
    let path = &in_repo(path, &input.repo, commit.is_some());
    let hinted = |reason: String, hint: Option<String>| ResolveError::Manifests {
        path: path.clone(),
        reason,
        hint,
    };
    match commit {
        Some(commit) => {
            let relative = repo_relative(&input.repo, path)?;
            let mut files = crate::git::files_at(&input.repo, commit, &relative).map_err(|e| {
                hinted(
                    format!("cannot read it as of --commit {commit}: {e}"),
                    e.hint().map(Cow::into_owned),
                )
            })?;
            if !input.recursive {
                let all = files.len();
                // Each is named as git names the blob: `SHA:./path/in/repo`.
                files.retain(|(file, _)| {
                    let name = file.to_string_lossy();
                    let name = name.split_once(':').map_or(&*name, |(_, n)| n);
                    at_top_level(Path::new(name.trim_start_matches("./")), &relative)
                });
                if !files.is_empty() {
                    not_recursed(all - files.len()).map_err(|(r, h)| hinted(r, Some(h)))?;
                }
            }
            if files.is_empty() {
                return Err(hinted(
                    format!(
                        "no .yaml, .yml or .json file there in commit {commit} of {}",
                        input.repo.display()
                    ),
                    Some(match input.recursive {
                        true => "-f with --commit reads the manifests as committed; commit them, or check --repo".into(),
                        false => "-f with --commit reads the manifests as committed; commit them, or check --repo (add -R to read the directories under it)".into(),
                    }),
                ));
            }
            let observed = crate::offline::load_files(files)
                .map_err(|e| hinted(e.to_string(), e.hint().map(Cow::into_owned)))?;
            let repo_path =
                liveproof_evidence::history::RepoPath::new(&relative, input.recursive, false);
            Ok((
                observed,
                format!("{} at {commit}", path.display()),
                Some(repo_path),
            ))
        }
        None if path.is_dir() && !input.recursive => {
            let files = top_level_files(path).map_err(|e| hinted(e, None))?;
            if files.is_empty() {
                return Err(hinted(
                    "no .yaml, .yml or .json file at its top level".into(),
                    Some("-R reads every directory under it too, as kubectl's -f DIR -R".into()),
                ));
            }
            let all = crate::offline::manifest_files(path).len();
            not_recursed(all.saturating_sub(files.len())).map_err(|(r, h)| hinted(r, Some(h)))?;
            let observed = crate::offline::load_files(files)
                .map_err(|e| hinted(e.to_string(), e.hint().map(Cow::into_owned)))?;
            Ok((observed, path.display().to_string(), None))
        }
        None => {
            let observed = crate::offline::load(path).map_err(|e| {
                let missing = matches!(e, crate::offline::LoadError::NotFound { .. });
                let hint = match did_you_mean_in_repo(path, &input.repo) {
                    Some(there) if missing => Some(format!("did you mean {}?", there.display())),
                    _ => e.hint().map(Cow::into_owned),
                };
                hinted(e.to_string(), hint)
            })?;
            Ok((observed, path.display().to_string(), None))
        }
    }
}

/// Manifests under `-f DIR`'s subdirectories, which kubectl reads only with `-R`: refused
/// rather than left out, since a workload left out is a workload not verified, and a verdict
/// over the rest would be `live` for a change that may not be.
fn not_recursed(skipped: usize) -> Result<(), (String, String)> {
    if skipped == 0 {
        return Ok(());
    }
    Err((
        format!("{skipped} manifest file(s) in directories under it would not be read (kubectl reads them only with -R)"),
        "add -R to verify what they declare too, or name the files to verify".into(),
    ))
}

/// A relative `-f` path that is not there from the working directory, but is in `--repo`
/// (with `--commit`: any relative path not there, as git reads it from the repository): the
/// path in `--repo`, said on stderr. Any other path as given.
fn in_repo(path: &Path, repo: &Path, committed: bool) -> PathBuf {
    if path.is_absolute() || path.exists() || repo == Path::new(".") {
        return path.to_path_buf();
    }
    let there = repo.join(path);
    if committed || there.exists() {
        tracing::warn!(
            "-f {}: not found from the working directory; reading {} (in --repo)",
            path.display(),
            there.display()
        );
        return there;
    }
    path.to_path_buf()
}

/// Where a relative `path` would be in `repo`, for a did-you-mean.
fn did_you_mean_in_repo(path: &Path, repo: &Path) -> Option<PathBuf> {
    (path.is_relative() && repo != Path::new(".")).then(|| repo.join(path))
}

/// Whether `file` (relative to the repository, as git lists it) is directly in `dir` (or is
/// `dir` itself, a file): `-f DIR` without `-R` reads only the directory's top level.
fn at_top_level(file: &Path, dir: &str) -> bool {
    let dir = dir.trim_start_matches("./").trim_end_matches('/');
    if file == Path::new(dir) {
        return true;
    }
    let parent = file.parent().unwrap_or(Path::new(""));
    match dir {
        "" | "." => parent == Path::new(""),
        dir => parent == Path::new(dir),
    }
}

/// The manifest files directly in `dir`, read, in name order.
fn top_level_files(dir: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() && crate::offline::is_manifest_name(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let size = std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        // The exact limit per format is the loader's; this only keeps a huge file unread.
        if size > crate::offline::MAX_JSON_FILE {
            return Err(format!(
                "{}: {size} bytes is more than liveproof reads",
                path.display()
            ));
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push((path, bytes));
    }
    Ok(files)
}

/// `path` relative to the `--repo` directory, for `git ls-tree` run there.
fn repo_relative(repo: &std::path::Path, path: &std::path::Path) -> Result<String, ResolveError> {
    let err = |reason: String, hint: Option<&str>| ResolveError::Manifests {
        path: path.to_path_buf(),
        reason,
        hint: hint.map(str::to_string),
    };
    let absolute = |p: &std::path::Path| {
        std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .map_err(|e| err(format!("{}: {e}", p.display()), None))
    };
    let repo_abs = absolute(repo)?;
    let path_abs = absolute(path)?;
    let relative = path_abs.strip_prefix(&repo_abs).map_err(|_| ResolveError::Manifests {
        path: path.to_path_buf(),
        reason: format!("outside --repo {}", repo.display()),
        hint: Some(match did_you_mean_in_repo(path, repo) {
            Some(there) => format!("did you mean {}? -f with --commit reads the manifests from the repository that holds the commit", there.display()),
            None => "-f with --commit reads the manifests from the repository that holds the commit: pass --repo".into(),
        }),
    })?;
    let text = relative.to_string_lossy().into_owned();
    Ok(if text.is_empty() { ".".into() } else { text })
}
