//! A real git repository for a test, told as a story: `Repo::new().file(..).commit(..)`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
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

    pub fn file(&self, path: &str, text: &str) -> &Repo {
        let full = self.dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
        self
    }

    /// Commits everything with fixed dates and identity; returns the SHA.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.dir.path(), args)
    }
}

pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-07-12T10:00:00Z")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_DATE", "2026-07-12T10:00:00Z")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Seed 002's HelmRelease: a chart from the repository, ChartVersion strategy.
pub fn helmrelease(strategy: Option<&str>) -> String {
    let strategy = strategy
        .map(|s| format!("      reconcileStrategy: {s}\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: inventory\n  namespace: apps\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: ./charts/inventory\n{strategy}      sourceRef:\n        kind: GitRepository\n        name: acmeco-apps\n"
    )
}

pub const CHART: &str = "apiVersion: v2\nname: inventory\nversion: 0.4.2\nappVersion: \"1.0\"\n";

pub const TEMPLATE_OLD: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    metadata:\n      annotations:\n        checksum/config: {{ include (print $.Template.BasePath \"/cm.yaml\") . | sha256sum }}\n    spec:\n      containers:\n        - name: app\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n          env:\n            - name: DB_URL\n              value: {{ .Values.dbUrl | quote }}\n";

pub const TEMPLATE_NEW: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    metadata:\n      annotations:\n        checksum/config: {{ include (print $.Template.BasePath \"/cm.yaml\") . | sha256sum }}\n    spec:\n      containers:\n        - name: app\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n          env:\n            - name: DB_URL\n              valueFrom:\n                secretKeyRef:\n                  name: inventory-db\n                  key: url\n";

/// Seed 002's repository at base: the HelmRelease and its chart, committed.
pub fn seed_002(strategy: Option<&str>) -> (Repo, String) {
    let repo = Repo::new();
    repo.file("clusters/prod/inventory.yaml", &helmrelease(strategy))
        .file("charts/inventory/Chart.yaml", CHART)
        .file(
            "charts/inventory/values.yaml",
            "image:\n  repository: ghcr.io/acme/inventory\n  tag: 1.0.0\n",
        )
        .file("charts/inventory/templates/deployment.yaml", TEMPLATE_OLD);
    let base = repo.commit("inventory chart");
    (repo, base)
}
