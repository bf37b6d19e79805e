//! Seed 002 as lint's tests tell it: the HelmRelease, its chart and the template change, in a
//! real repository (the testkit's [`Repo`]). Those tests name this module `common`
//! (`use liveproof_testkit::lint_repo as common;`).

pub use crate::git::Repo;

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
