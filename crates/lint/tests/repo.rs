//! The rules against real git repositories (seed 002's chart, seed 001's `:latest`).

use liveproof_testkit::lint_repo as common;

use common::{seed_002, Repo, TEMPLATE_NEW};
use liveproof_lint::{gather, lint, Changed, Hazard, Level, LintError, Linted, Options};

fn run(repo: &Repo, base: Option<&str>) -> Linted {
    let input = gather(&Options {
        path: repo.path(),
        base: base.map(str::to_string),
        head: None,
    })
    .expect("gather");
    lint(&input)
}

fn ids(report: &Linted) -> Vec<(&str, Level, &str, usize)> {
    report
        .findings
        .iter()
        .map(|f: &Hazard| (f.id.as_str(), f.level, f.file.as_str(), f.line))
        .collect()
}

#[test]
fn chartversion_not_bumped_is_an_error_at_the_helmreleases_chart_line() {
    let (repo, base) = seed_002(None);
    repo.file("charts/inventory/templates/deployment.yaml", TEMPLATE_NEW);
    repo.commit("read the database URL from a Secret");
    let report = run(&repo, Some(&base));
    let chart = report
        .findings
        .iter()
        .find(|f| f.id == "chartversion-not-bumped")
        .expect("finding");
    assert_eq!(chart.level, Level::Error);
    assert_eq!(chart.file, "clusters/prod/inventory.yaml");
    assert_eq!(chart.line, 10, "the `chart: ./charts/inventory` line");
    assert!(
        chart.message.contains("templates/deployment.yaml"),
        "{}",
        chart.message
    );
    assert!(chart.message.contains("0.4.2"), "{}", chart.message);
    assert!(
        chart.fix.contains("charts/inventory/Chart.yaml"),
        "{}",
        chart.fix
    );
    assert!(report.has_errors());
    // The default base (HEAD~1) is the same diff.
    assert!(run(&repo, None)
        .findings
        .iter()
        .any(|f| f.id == "chartversion-not-bumped"));
}

#[test]
fn a_version_bump_clears_it() {
    let (repo, base) = seed_002(Some("ChartVersion"));
    repo.file("charts/inventory/templates/deployment.yaml", TEMPLATE_NEW)
        .file(
            "charts/inventory/Chart.yaml",
            &common::CHART.replace("0.4.2", "0.4.3"),
        );
    repo.commit("read the database URL from a Secret, bump the chart");
    let report = run(&repo, Some(&base));
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.id == "chartversion-not-bumped"),
        "{report:#?}"
    );
    assert!(!report.has_errors());
}

#[test]
fn revision_strategy_needs_no_bump() {
    let (repo, base) = seed_002(Some("Revision"));
    repo.file("charts/inventory/templates/deployment.yaml", TEMPLATE_NEW);
    repo.commit("template only");
    let report = run(&repo, Some(&base));
    assert!(!report
        .findings
        .iter()
        .any(|f| f.id == "chartversion-not-bumped"));
}

#[test]
fn explicit_chartversion_points_at_the_strategy_line_and_values_count() {
    let (repo, base) = seed_002(Some("ChartVersion"));
    repo.file(
        "charts/inventory/values.yaml",
        "image:\n  repository: ghcr.io/acme/inventory\n  tag: 1.0.1\n",
    );
    repo.commit("new image tag in values");
    let report = run(&repo, Some(&base));
    assert_eq!(
        ids(&report),
        vec![(
            "chartversion-not-bumped",
            Level::Error,
            "clusters/prod/inventory.yaml",
            11
        )]
    );
}

#[test]
fn the_secret_ref_in_the_template_has_its_checksum_so_no_config_finding() {
    let (repo, base) = seed_002(Some("Revision"));
    repo.file("charts/inventory/templates/deployment.yaml", TEMPLATE_NEW);
    repo.commit("template only");
    assert!(run(&repo, Some(&base)).findings.is_empty());
    // Without the checksum annotation, the template (read as text) is flagged.
    repo.file(
        "charts/inventory/templates/deployment.yaml",
        &TEMPLATE_NEW.replace("checksum/config", "example.com/note"),
    );
    repo.commit("drop checksum");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![(
            "config-without-restart",
            Level::Warning,
            "charts/inventory/templates/deployment.yaml",
            17
        )]
    );
    assert!(report.findings[0].message.contains("Secret `inventory-db`"));
}

const LATEST: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: panel\n  namespace: apps\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - name: panel\n          image: registry.example.com/panel:latest\n          imagePullPolicy: Always\n";

#[test]
fn latest_without_a_restart_path_is_a_warning_and_an_error_for_a_rebuild_only_change() {
    let repo = Repo::new();
    repo.file("apps/panel.yaml", LATEST)
        .file("README.md", "x\n");
    let base = repo.commit("panel");
    repo.file("README.md", "y\n");
    repo.commit("unrelated");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![(
            "mutable-tag-no-restart",
            Level::Warning,
            "apps/panel.yaml",
            12
        )]
    );
    // The file changes, the pod template does not: a rebuild behind the same tag.
    repo.file(
        "apps/panel.yaml",
        &LATEST.replace("replicas: 1", "replicas: 2"),
    );
    repo.commit("scale");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![(
            "mutable-tag-no-restart",
            Level::Error,
            "apps/panel.yaml",
            12
        )]
    );
    let _ = base;
}

#[test]
fn a_restart_path_in_the_repository_clears_latest() {
    for restart in [
        "kubectl -n apps rollout restart deployment/panel\n",
        "liveproof stale -f apps --restart\n",
    ] {
        let repo = Repo::new();
        repo.file("apps/panel.yaml", LATEST)
            .file("deploy.sh", restart);
        repo.commit("panel");
        assert!(run(&repo, None).findings.is_empty(), "{restart}");
    }
    let repo = Repo::new();
    repo.file(
        "apps/panel.yaml",
        &LATEST.replace(
            "registry.example.com/panel:latest",
            "registry.example.com/panel:latest # {\"$imagepolicy\": \"apps:panel\"}",
        ),
    );
    repo.commit("automation");
    assert!(run(&repo, None).findings.is_empty());
}

const SECRET_ENV: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\nspec:\n  template:\n    metadata:\n      annotations: {}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/inventory:1.4.2\n          env:\n            - name: DB_URL\n              valueFrom:\n                secretKeyRef:\n                  name: inventory-db\n                  key: url\n";

#[test]
fn secret_key_ref_without_checksum_is_config_without_restart() {
    let repo = Repo::new();
    repo.file("apps/inventory.yaml", SECRET_ENV);
    repo.commit("inventory");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![(
            "config-without-restart",
            Level::Warning,
            "apps/inventory.yaml",
            16
        )]
    );
    assert!(!report.has_errors());
    repo.file(
        "apps/inventory.yaml",
        &SECRET_ENV.replace(
            "annotations: {}",
            "annotations:\n        checksum/config: 0a1b2c",
        ),
    );
    repo.commit("checksum");
    assert!(run(&repo, None).findings.is_empty());
    repo.file(
        "apps/inventory.yaml",
        &SECRET_ENV.replace(
            "  name: inventory\n",
            "  name: inventory\n  annotations:\n    reloader.stakater.com/auto: \"true\"\n",
        ),
    );
    repo.commit("reloader");
    assert!(run(&repo, None).findings.is_empty());
}

#[test]
fn a_suspended_kustomization_over_the_change_is_an_error() {
    let repo = Repo::new();
    repo.file(
        "clusters/prod/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps\n  suspend: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    )
    .file("apps/web.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: \"1\"\n")
    .file("other/x.yaml", "a: 1\n");
    repo.commit("apps");
    repo.file("other/x.yaml", "a: 2\n");
    repo.commit("unrelated");
    assert_eq!(
        ids(&run(&repo, None)),
        vec![(
            "gitops-suspended",
            Level::Warning,
            "clusters/prod/apps.yaml",
            9
        )]
    );
    repo.file(
        "apps/web.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: \"2\"\n",
    );
    repo.commit("change web");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![(
            "gitops-suspended",
            Level::Error,
            "clusters/prod/apps.yaml",
            9
        )]
    );
    assert!(report.has_errors());
}

#[test]
fn kustomize_overlays_pin_images_and_generators_hash_config() {
    let repo = Repo::new();
    let deployment = SECRET_ENV
        .replace("ghcr.io/acme/inventory:1.4.2", "ghcr.io/acme/inventory")
        .replace("valueFrom:\n                secretKeyRef:\n                  name: inventory-db\n                  key: url", "valueFrom:\n                configMapKeyRef:\n                  name: inventory-config\n                  key: url");
    repo.file(
        "apps/base/kustomization.yaml",
        "resources:\n  - deployment.yaml\n",
    )
    .file("apps/base/deployment.yaml", &deployment);
    repo.commit("base");
    let report = run(&repo, None);
    let got: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        got,
        vec!["mutable-tag-no-restart", "config-without-restart"],
        "{report:#?}"
    );
    repo.file(
        "apps/prod/kustomization.yaml",
        "resources:\n  - ../base\nimages:\n  - name: ghcr.io/acme/inventory\n    newTag: 1.4.2\nconfigMapGenerator:\n  - name: inventory-config\n    literals:\n      - url=postgres://db\n",
    );
    repo.commit("prod overlay pins the tag, generates the config");
    assert!(
        run(&repo, None).findings.is_empty(),
        "{:#?}",
        run(&repo, None)
    );
}

#[test]
fn argo_cd_application_without_automated_sync_over_the_change() {
    let repo = Repo::new();
    repo.file(
        "argocd/web.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://example.invalid/repo.git\n    targetRevision: main\n    path: apps/web\n  destination:\n    server: https://kubernetes.default.svc\n",
    )
    .file("apps/web/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n");
    repo.commit("web");
    repo.file(
        "apps/web/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata: {}\n",
    );
    repo.commit("change");
    assert_eq!(
        ids(&run(&repo, None)),
        vec![("argocd-manual-sync", Level::Warning, "argocd/web.yaml", 8)]
    );
}

#[test]
fn unknown_revisions_and_missing_repositories_are_named() {
    let (repo, _) = seed_002(None);
    let err = gather(&Options {
        path: repo.path(),
        base: Some("no-such-branch".to_string()),
        head: None,
    })
    .expect_err("unknown base");
    assert!(matches!(&err, LintError::UnknownRevision { rev, .. } if rev == "no-such-branch"));
    assert!(err.to_string().contains("`no-such-branch`"), "{err}");

    let plain = tempfile::tempdir().expect("tempdir");
    let err = gather(&Options {
        path: plain.path().to_path_buf(),
        base: Some("main".to_string()),
        head: None,
    })
    .expect_err("not a repository");
    assert!(matches!(err, LintError::NotARepository { .. }));
}

#[test]
fn without_git_everything_counts_as_changed_with_a_note() {
    let plain = tempfile::tempdir().expect("tempdir");
    std::fs::write(plain.path().join("panel.yaml"), LATEST).expect("write");
    let input = gather(&Options {
        path: plain.path().to_path_buf(),
        base: None,
        head: None,
    })
    .expect("gather");
    assert_eq!(input.changed, Changed::Everything);
    let report = lint(&input);
    assert_eq!(report.notes.len(), 1, "{:?}", report.notes);
    assert_eq!(
        ids(&report),
        vec![("mutable-tag-no-restart", Level::Warning, "panel.yaml", 12)]
    );
}

/// A deeply nested YAML file (libyaml's time grows with the square of the depth) is not parsed:
/// a note names it and its line, never its text, and the other files are still linted.
#[test]
fn a_file_nested_past_the_limit_is_named_in_a_note_and_not_parsed() {
    let (repo, base) = seed_002(None);
    let depth = 200;
    let nested = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: {}canary-value{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    repo.file("clusters/prod/deep.yaml", &nested);
    repo.file("charts/inventory/templates/deployment.yaml", TEMPLATE_NEW);
    repo.commit("a deep file beside the template change");
    let report = run(&repo, Some(&base));
    let note = report
        .notes
        .iter()
        .find(|n| n.contains("clusters/prod/deep.yaml"))
        .unwrap_or_else(|| panic!("a note names the file: {:?}", report.notes));
    assert!(
        note.contains("nested deeper than 128 levels (line 6)"),
        "{note}"
    );
    assert!(!note.contains("canary-value"), "{note}");
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.id == "chartversion-not-bumped"),
        "the rest is linted: {report:?}"
    );
    // Outside git too.
    let plain = tempfile::tempdir().expect("tempdir");
    std::fs::write(plain.path().join("deep.yaml"), &nested).expect("write");
    let input = gather(&Options {
        path: plain.path().to_path_buf(),
        base: None,
        head: None,
    })
    .expect("gather");
    assert!(
        input
            .notes
            .iter()
            .any(|n| n.starts_with("deep.yaml: not read")),
        "{:?}",
        input.notes
    );
}

const CANARY_ROLLOUT: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: checkout\n  namespace: shop\nspec:\n  replicas: 4\n  selector:\n    matchLabels: {app: checkout}\n  template:\n    metadata:\n      labels: {app: checkout}\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/acme/checkout:1.0.0\n  strategy:\n    canary:\n      steps:\n      - setWeight: 20\n      - pause: {duration: 1m}\n      - setWeight: 50\n      - pause: {}\n";

#[test]
fn a_rollout_that_waits_for_a_promotion_nobody_runs_is_reported_like_a_missing_bump() {
    let repo = Repo::new();
    repo.file("apps/checkout.yaml", CANARY_ROLLOUT)
        .file("other/x.yaml", "a: 1\n");
    repo.commit("checkout");
    repo.file("other/x.yaml", "a: 2\n");
    repo.commit("unrelated");
    // Nothing it runs changed: a warning, at the pause without a duration (the timed one is
    // not a gate).
    assert_eq!(
        ids(&run(&repo, None)),
        vec![("manual-promotion", Level::Warning, "apps/checkout.yaml", 23)]
    );
    repo.file(
        "apps/checkout.yaml",
        &CANARY_ROLLOUT.replace("checkout:1.0.0", "checkout:1.1.0"),
    );
    repo.commit("release 1.1.0");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![("manual-promotion", Level::Error, "apps/checkout.yaml", 23)]
    );
    assert!(
        report.findings[0].message.contains("canary step 4"),
        "{report:?}"
    );
    assert!(
        report.findings[0]
            .fix
            .contains("kubectl argo rollouts promote checkout"),
        "{report:?}"
    );

    // The pipeline promotes it: nothing to report.
    repo.file(
        ".github/workflows/deploy.yml",
        "jobs:\n  deploy:\n    steps:\n    - run: kubectl argo rollouts promote -n shop checkout\n",
    );
    repo.commit("promote in CI");
    assert!(run(&repo, None).findings.is_empty());
}

#[test]
fn blue_green_without_auto_promotion_and_flagger_confirm_gates_are_manual_promotions() {
    let repo = Repo::new();
    repo.file(
        "apps/web.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: web\nspec:\n  strategy:\n    blueGreen:\n      activeService: web\n      previewService: web-preview\n      autoPromotionEnabled: false\n      autoPromotionSeconds: 300\n",
    )
    .file(
        "apps/api.yaml",
        "apiVersion: flagger.app/v1beta1\nkind: Canary\nmetadata:\n  name: api\nspec:\n  targetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: api\n  analysis:\n    interval: 1m\n    webhooks:\n    - name: gate\n      type: confirm-promotion\n      url: http://flagger-loadtester.test/gate/check\n",
    )
    .file(
        "apps/timed.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: timed\nspec:\n  strategy:\n    blueGreen:\n      activeService: timed\n      autoPromotionSeconds: 300\n",
    );
    repo.commit("progressive");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![
            ("manual-promotion", Level::Error, "apps/api.yaml", 14),
            ("manual-promotion", Level::Error, "apps/web.yaml", 10),
        ]
    );
    assert!(
        report.findings[1]
            .message
            .contains("autoPromotionSeconds is ignored"),
        "{report:?}"
    );
}

/// Flagger's other holds: a webhook gating each traffic step, and a suspended Canary.
#[test]
fn flagger_traffic_gates_and_suspended_canaries_are_manual_promotions() {
    let repo = Repo::new();
    let canary = |name: &str, tail: &str| {
        format!("apiVersion: flagger.app/v1beta1\nkind: Canary\nmetadata:\n  name: {name}\nspec:\n  targetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: {name}\n{tail}")
    };
    repo.file(
        "apps/stepped.yaml",
        &canary(
            "stepped",
            "  analysis:\n    interval: 1m\n    webhooks:\n    - name: step\n      type: confirm-traffic-increase\n      url: http://flagger-loadtester.test/gate/check\n",
        ),
    )
    .file(
        "apps/held.yaml",
        &canary("held", "  suspend: true\n  analysis:\n    interval: 1m\n"),
    )
    .file(
        "apps/free.yaml",
        &canary(
            "free",
            "  analysis:\n    interval: 1m\n    webhooks:\n    - name: load\n      type: rollout\n      url: http://flagger-loadtester.test/\n",
        ),
    );
    repo.commit("flagger");
    let report = run(&repo, None);
    assert_eq!(
        ids(&report),
        vec![
            ("manual-promotion", Level::Error, "apps/held.yaml", 10),
            ("manual-promotion", Level::Error, "apps/stepped.yaml", 14),
        ]
    );
    assert!(
        report.findings[0].message.contains("spec.suspend"),
        "{report:?}"
    );
}
