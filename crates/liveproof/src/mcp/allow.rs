//! What the operator lets a tool call read: which kubeconfigs it may name, under which
//! directories its files and git repository must be, which `version_url`s it may read, and
//! whether it may show container logs. Checked on the call's typed request, each path
//! canonical (symlinks and `..` resolved) and compared component by component with canonical
//! roots (`Path::starts_with`: `/srv/allowed-evil` is not under `/srv/allowed`), before
//! anything is read.

use std::path::{Path, PathBuf};

use liveproof_gather::reach::Reach;

use crate::cli::{ReleaseShowArgs, StaleArgs, VerifyArgs, DEFAULT_REPO};

/// The operator's allow-list (`liveproof mcp --kubeconfig/--allow-from/--allow-version-url/
/// --allow-logs`).
#[derive(Debug, Clone)]
pub struct AllowList {
    /// The kubeconfigs a call may name ([`allowed_kubeconfigs`]), canonical.
    pub kubeconfigs: Vec<PathBuf>,
    /// Where `from`, `manifests` and `repo` may be (`--allow-from`), canonical; none by default.
    pub roots: Vec<PathBuf>,
    /// What `version_url` may read (`--allow-version-url`); nothing by default.
    pub reach: Reach,
    /// Whether `logs` may show container logs (`--allow-logs`); not by default.
    pub logs: bool,
}

/// What a call would read on the server's machine, or reach from it, taken from its request.
#[derive(Debug, Default)]
pub struct Reads<'a> {
    kubeconfig: Option<&'a Path>,
    /// Files and directories, each with the argument that names it (`from`, `manifests`).
    files: Vec<(&'static str, &'a Path)>,
    /// Where git runs (`repo`), when the call names one.
    repo: Option<&'a Path>,
    version_urls: &'a [String],
    logs: bool,
}

impl<'a> Reads<'a> {
    pub fn of_verify(args: &'a VerifyArgs) -> Reads<'a> {
        let repo = &args.change.repo;
        Reads {
            kubeconfig: args.cluster.kubeconfig.as_deref(),
            files: args
                .from
                .iter()
                .map(|p| ("from", p.as_path()))
                .chain(args.manifests.iter().map(|p| ("manifests", p.as_path())))
                .collect(),
            // Left out, git runs in the server's own directory.
            repo: (repo != Path::new(DEFAULT_REPO)).then_some(repo.as_path()),
            version_urls: &args.change.version_url,
            logs: args.logs.is_some(),
        }
    }

    pub fn of_release(args: &'a ReleaseShowArgs) -> Reads<'a> {
        Reads {
            kubeconfig: args.cluster.kubeconfig.as_deref(),
            files: args.from.iter().map(|p| ("from", p.as_path())).collect(),
            ..Reads::default()
        }
    }

    pub fn of_stale(args: &'a StaleArgs) -> Reads<'a> {
        Reads {
            kubeconfig: args.cluster.kubeconfig.as_deref(),
            files: args
                .manifests
                .iter()
                .map(|p| ("manifests", p.as_path()))
                .collect(),
            ..Reads::default()
        }
    }
}

impl AllowList {
    /// Why a call that reads `reads` may not run, if it reaches past this list: its
    /// kubeconfig, then its files and repository, then its `version_url`s, then its logs.
    /// Nothing is read or sent to decide (the paths are resolved, not opened); a path is
    /// echoed only as the caller sent it, a URL with its credentials masked.
    pub fn refusal(&self, reads: &Reads<'_>) -> Option<String> {
        self.kubeconfig_refusal(reads.kubeconfig)
            .or_else(|| self.files_refusal(&reads.files, reads.repo))
            .or_else(|| self.version_url_refusal(reads.version_urls))
            .or_else(|| self.logs_refusal(reads.logs))
    }

    fn kubeconfig_refusal(&self, given: Option<&Path>) -> Option<String> {
        let given = given?;
        if canonical(given).is_some_and(|c| self.kubeconfigs.contains(&c)) {
            return None;
        }
        let given = given.display();
        Some(format!(
            "kubeconfig `{given}` is not one this server was started with: a tool call may name \
             only the operator's kubeconfigs ($KUBECONFIG, ~/.kube/config, or `liveproof mcp \
             --kubeconfig PATH`)\nhint: leave `kubeconfig` out to use the server's default, or \
             ask the operator to start the server with --kubeconfig {given}"
        ))
    }

    /// Each file named, and for a directory every manifest in it (a symlinked file in it
    /// followed), must be under a root; so must the git repository.
    fn files_refusal(&self, files: &[(&str, &Path)], repo: Option<&Path>) -> Option<String> {
        for (argument, given) in files {
            if self.roots.is_empty() {
                return Some(format!(
                    "`{argument}` names files, and this server reads none: it was started without \
                     --allow-from\nhint: leave `{argument}` out to read the cluster, or ask the \
                     operator to start the server with `liveproof mcp --allow-from DIR` for the \
                     directory that holds the manifests"
                ));
            }
            // A directory is read recursively, a symlinked file in it followed: each counts.
            let expanded = liveproof_gather::offline::manifest_files(given);
            if !self.inside(given) || !expanded.iter().all(|f| self.inside(f)) {
                return Some(format!(
                    "`{argument}` `{}` is not under a directory this server was started with \
                     (--allow-from), or does not exist: a tool call may read only there\nhint: \
                     name a file under {}, or ask the operator to add its directory with \
                     --allow-from",
                    given.display(),
                    self.roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        // `repo` is where git runs (commit times, ancestry, manifests as of a commit): under
        // the same roots, or the server's own directory when it is left out.
        let repo = repo?;
        (!self.inside(repo)).then(|| {
            format!(
                "`repo` `{}` is not under a directory this server was started with \
                 (--allow-from), or does not exist: git runs only there\nhint: leave `repo` \
                 out to use the server's own directory, or ask the operator to add the \
                 repository's directory with --allow-from",
                repo.display()
            )
        })
    }

    /// Whether `path`, resolved, is one of the roots or under one, component by component.
    fn inside(&self, path: &Path) -> bool {
        canonical(path).is_some_and(|c| self.roots.iter().any(|root| c.starts_with(root)))
    }

    /// A `version_url` the operator's `--allow-version-url` does not allow. Nothing is sent;
    /// the URL is shown with its credentials masked. (Redirects and the addresses a name
    /// resolves to are held to the same rule when it is read.)
    fn version_url_refusal(&self, urls: &[String]) -> Option<String> {
        urls.iter().find_map(|given| {
            // One that is no URL is the CLI's to refuse, in its words.
            let url = url::Url::parse(given).ok()?;
            let why = self.reach.refusal(&url)?;
            Some(format!(
                "`version_url` `{}` is refused: {why}\nhint: leave `version_url` out, or ask \
                 the operator to start the server with `liveproof mcp --allow-version-url \
                 URL` naming the endpoint (a URL prefix or a host; a link-local or cloud \
                 metadata address only when named itself)",
                liveproof_redacted::DisplaySafeUrl::new(given)
            ))
        })
    }

    /// `logs` without `--allow-logs`: container logs can hold anything, secrets included.
    fn logs_refusal(&self, asked: bool) -> Option<String> {
        (asked && !self.logs).then(|| {
            "`logs` shows container log lines, which can hold anything, secrets included, and \
             this server was started without --allow-logs\nhint: leave `logs` out (the report \
             still says why each container is not ready), or ask the operator to start the \
             server with `liveproof mcp --allow-logs`"
                .to_string()
        })
    }
}

/// `path` with symlinks and `..` resolved, if it exists.
fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// The kubeconfigs tool calls may name: those given to `liveproof mcp --kubeconfig`, the files
/// `KUBECONFIG` lists, and `~/.kube/config` — each that exists, canonical.
pub fn allowed_kubeconfigs(given: &[PathBuf]) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = given.to_vec();
    if let Some(list) = std::env::var_os("KUBECONFIG") {
        candidates.extend(std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".kube/config"));
    }
    candidates.iter().filter_map(|p| canonical(p)).collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use serde_json::json;

    use super::*;
    use crate::mcp::tools::tests::ready;

    fn write(path: &Path) -> &Path {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(path, "apiVersion: v1\nkind: List\nitems: []\n").expect("write");
        path
    }

    fn text(path: &Path) -> &str {
        path.to_str().expect("utf-8")
    }

    /// Every path a call names is resolved (symlinks, `..`) and compared with the roots
    /// component by component: a string prefix would let `/x/allowed-evil` pass for
    /// `/x/allowed`, and a symlink under a root reach a file outside it.
    #[test]
    fn paths_are_compared_canonically() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(tmp.path()).expect("canonical");
        let root = base.join("allowed");
        let inside = write(&root.join("app.yaml")).to_path_buf();
        let sibling = write(&base.join("allowed-evil/app.yaml")).to_path_buf();
        let outside = write(&base.join("elsewhere/secret.yaml")).to_path_buf();
        let link = root.join("link.yaml");
        symlink(&outside, &link).expect("symlink");
        let clean_dir = root.join("clean");
        write(&clean_dir.join("a.yaml"));
        write(&clean_dir.join("nested/b.yaml"));
        let mixed_dir = root.join("mixed");
        write(&mixed_dir.join("a.yaml"));
        std::fs::create_dir_all(mixed_dir.join("nested")).expect("mkdir");
        symlink(&outside, mixed_dir.join("nested/out.yaml")).expect("symlink");
        let kubeconfig = write(&base.join("kube/config")).to_path_buf();
        let kubeconfig_link = base.join("kube-link");
        symlink(&kubeconfig, &kubeconfig_link).expect("symlink");
        let allowed = AllowList {
            kubeconfigs: vec![kubeconfig.clone()],
            roots: vec![root.clone()],
            reach: Reach::allow_list(Vec::new()),
            logs: false,
        };
        let verify = |arguments: serde_json::Value| {
            let mut arguments = arguments;
            arguments["targets"] = json!(["deploy/web"]);
            ready("verify", arguments).refusal(&allowed)
        };
        let from = |path: &Path| verify(json!({"from": text(path)}));
        let manifests = |paths: &[&Path]| {
            verify(json!({"manifests": paths.iter().map(|p| text(p)).collect::<Vec<_>>()}))
        };

        // Under the root: read, however it is spelt.
        assert_eq!(from(&inside), None);
        assert_eq!(from(&root.join("clean/../app.yaml")), None);
        assert_eq!(manifests(&[&clean_dir]), None);
        // A sibling whose name starts with the root's: refused.
        let refused = from(&sibling).expect("refused");
        assert!(
            refused
                .contains("is not under a directory this server was started with (--allow-from)"),
            "{refused}"
        );
        assert!(refused.contains(text(&root)), "{refused}");
        // A symlink under the root to a file outside it: refused.
        assert!(from(&link).is_some());
        // `..` climbing out of the root: refused.
        assert!(from(&root.join("../elsewhere/secret.yaml")).is_some());
        assert!(from(&root.join("../allowed-evil/app.yaml")).is_some());
        // A directory with one manifest (deep in it) linked outside: refused, as is the list
        // that names it after an allowed one.
        assert!(manifests(&[&mixed_dir]).is_some());
        assert!(manifests(&[&inside, &mixed_dir]).is_some());
        // The root itself holds `link.yaml`: read as a directory, it is refused too.
        assert!(from(&root).is_some());
        // What does not exist cannot be resolved: refused, not guessed.
        assert!(from(&root.join("missing.yaml")).is_some());

        // release_show's `from` and stale's `manifests` are held to the same roots.
        let release = |path: &Path| {
            ready("release_show", json!({"name": "web", "from": text(path)})).refusal(&allowed)
        };
        assert_eq!(release(&inside), None);
        assert!(release(&sibling).is_some());
        let stale =
            |path: &Path| ready("stale", json!({"manifests": text(path)})).refusal(&allowed);
        assert_eq!(stale(&clean_dir), None);
        assert!(stale(&mixed_dir).is_some());

        // git runs only under a root too: the sibling is not one.
        let repo = |path: &Path| verify(json!({"commit": "HEAD", "repo": text(path)}));
        assert_eq!(repo(&root), None);
        let refused = repo(&base.join("allowed-evil")).expect("refused");
        assert!(refused.contains("git runs only there"), "{refused}");
        assert!(repo(&root.join("..")).is_some());

        // A kubeconfig is the operator's when it resolves to one: through a symlink or `..`
        // too; a file beside it is not.
        let kc = |path: &Path| verify(json!({"kubeconfig": text(path)}));
        assert_eq!(kc(&kubeconfig), None);
        assert_eq!(kc(&kubeconfig_link), None);
        assert_eq!(kc(&base.join("kube/../kube/config")), None);
        let refused = kc(&inside).expect("refused");
        assert!(
            refused.contains("is not one this server was started with"),
            "{refused}"
        );
    }

    /// `logs` is refused unless the operator allowed it, saying how; allowed, it passes.
    #[test]
    fn logs_need_allow_logs() {
        let mut allowed = AllowList {
            kubeconfigs: Vec::new(),
            roots: Vec::new(),
            reach: Reach::allow_list(Vec::new()),
            logs: false,
        };
        let call = ready("verify", json!({"targets": ["deploy/web"], "logs": 25}));
        let refused = call.refusal(&allowed).expect("refused");
        assert!(refused.contains("--allow-logs"), "{refused}");
        assert!(refused.contains("\nhint: "), "{refused}");
        // No logs asked (or 0): nothing to refuse.
        let none = ready("verify", json!({"targets": ["deploy/web"], "logs": 0}));
        assert_eq!(none.refusal(&allowed), None);
        allowed.logs = true;
        assert_eq!(call.refusal(&allowed), None);
    }
}
