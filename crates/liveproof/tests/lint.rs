//! `liveproof lint` through the binary, on real git repositories: seed 002's chart merged
//! without a version bump fails (exit 1), the bump passes (exit 0), SARIF is SARIF, and a bad
//! revision is a usage error naming it (exit 2).

use liveproof_testkit::binary as common;

use liveproof_testkit::git::git;

use std::path::Path;
use std::process::{Command, Output};

fn write(dir: &Path, path: &str, text: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(full, text).expect("write");
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

fn lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .arg("lint")
        .arg(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("liveproof runs")
}

const HELMRELEASE: &str = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: inventory\n  namespace: apps\nspec:\n  chart:\n    spec:\n      chart: ./charts/inventory\n      reconcileStrategy: ChartVersion   # <- the entire story, one line\n      sourceRef:\n        kind: GitRepository\n        name: acmeco-apps\n";

/// Seed 002: templates rewritten, Chart.yaml untouched.
fn seed_002() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "clusters/prod/inventory.yaml", HELMRELEASE);
    write(
        d,
        "charts/inventory/Chart.yaml",
        "apiVersion: v2\nname: inventory\nversion: 0.4.2\n",
    );
    write(
        d,
        "charts/inventory/templates/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    metadata:\n      annotations:\n        checksum/config: {{ .Values | toYaml | sha256sum }}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/inventory:1.4.2\n",
    );
    commit(d, "inventory");
    write(
        d,
        "charts/inventory/templates/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    metadata:\n      annotations:\n        checksum/config: {{ .Values | toYaml | sha256sum }}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/inventory:1.4.2\n          env:\n            - name: DB_URL\n              valueFrom:\n                secretKeyRef:\n                  name: inventory-db\n                  key: url\n",
    );
    commit(d, "read the database URL from a Secret");
    dir
}

#[test]
fn seed_002_fails_until_the_chart_version_is_bumped() {
    let repo = seed_002();
    let out = lint(repo.path(), &["--base", "HEAD~1", "--head", "HEAD"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("clusters/prod/inventory.yaml:10: error: HelmRelease apps/inventory"),
        "{stdout}"
    );
    assert!(stdout.contains("[chartversion-not-bumped]"), "{stdout}");
    assert!(
        stdout.contains("    fix: bump `version: 0.4.2`"),
        "{stdout}"
    );

    let json = lint(repo.path(), &["-o", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(v["schema"], "liveproof/lint/v1");
    assert_eq!(v["findings"][0]["id"], "chartversion-not-bumped");
    assert_eq!(v["findings"][0]["level"], "error");
    assert_eq!(v["findings"][0]["line"], 10);

    write(
        repo.path(),
        "charts/inventory/Chart.yaml",
        "apiVersion: v2\nname: inventory\nversion: 0.4.3\n",
    );
    commit(repo.path(), "bump");
    let out = lint(repo.path(), &["--base", "HEAD~2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("no findings"), "{stdout}");
}

#[test]
fn sarif_is_sarif_2_1_0_with_every_rule() {
    let repo = seed_002();
    let out = lint(repo.path(), &["-o", "sarif"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("sarif is JSON");
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "liveproof");
    // Where a code-scanning UI links the tool: the project's home, as Cargo.toml states it.
    assert_eq!(
        run["tool"]["driver"]["informationUri"],
        "https://github.com/liveproof/liveproof"
    );
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    for id in [
        "chartversion-not-bumped",
        "mutable-tag-no-restart",
        "config-without-restart",
        "gitops-suspended",
        "manual-promotion",
    ] {
        assert!(rules.contains(&id), "{id} in {rules:?}");
    }
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "chartversion-not-bumped");
    assert_eq!(result["level"], "error");
    assert!(result["message"]["text"].is_string());
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        "clusters/prod/inventory.yaml"
    );
    assert_eq!(location["region"]["startLine"], 10);
    let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
    assert_eq!(rules[index], "chartversion-not-bumped");
}

#[test]
fn an_unknown_revision_is_a_usage_error_naming_it() {
    let repo = seed_002();
    let out = lint(repo.path(), &["--base", "release/does-not-exist"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`release/does-not-exist`"), "{stderr}");

    let plain = tempfile::tempdir().expect("tempdir");
    let out = lint(plain.path(), &["--base", "main"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a git repository"));
}

/// `--base origin/main` in a checkout without it (a shallow CI clone): the hint's fetch is one
/// that brings it, `git fetch origin main`, not `git fetch origin origin/main` (which asks the
/// remote for a branch of that name and fails).
#[test]
fn an_unknown_remote_tracking_base_hints_the_fetch_that_brings_it() {
    let repo = seed_002();
    git(
        repo.path(),
        &[
            "remote",
            "add",
            "origin",
            "https://example.com/acme/shop.git",
        ],
    );
    let out = lint(repo.path(), &["--base", "origin/main"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`git fetch origin main`"), "{stderr}");
    assert!(!stderr.contains("origin origin/main"), "{stderr}");
}

/// A chart template (not YAML until rendered, so read as text) naming its Deployment literally
/// in a flow mapping or a block scalar: the finding names it, never `Deployment ?`.
#[test]
fn a_template_names_its_deployment_however_the_name_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(
        d,
        "charts/shop/Chart.yaml",
        "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
    );
    let container = "spec:\n  template:\n    metadata:\n      labels: {{ include \"shop.labels\" . }}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/shop:latest\n";
    write(
        d,
        "charts/shop/templates/panel.yaml",
        &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: panel, namespace: shop}}\n{container}"),
    );
    write(
        d,
        "charts/shop/templates/worker.yaml",
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: |-\n    worker\n{container}"
        ),
    );
    commit(d, "shop");
    let out = lint(d, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("warning: Deployment panel runs"),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning: Deployment worker runs"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("Deployment ?") && !stdout.contains("Deployment |-"),
        "{stdout}"
    );
}

#[test]
fn outside_git_everything_is_linted_with_a_note() {
    let plain = tempfile::tempdir().expect("tempdir");
    write(
        plain.path(),
        "apps/panel.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: panel\nspec:\n  template:\n    spec:\n      containers:\n        - name: panel\n          image: registry.example.com/panel:latest\n",
    );
    let out = lint(plain.path(), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "warnings do not fail: {stdout}");
    assert!(stdout.starts_with("note: "), "{stdout}");
    assert!(
        stdout.contains("apps/panel.yaml:10: warning: Deployment panel runs `registry.example.com/panel:latest`"),
        "{stdout}"
    );
    assert!(stdout.contains("[mutable-tag-no-restart]"), "{stdout}");
}

/// What a reviewer reads from `lint` on seed 002, text and JSON, snapshotted: a change of
/// wording, location or fix is a reviewed change.
#[test]
fn seed_002_as_rendered() {
    let repo = seed_002();
    let mut rendered = String::new();
    for args in [
        &["--base", "HEAD~1", "--head", "HEAD"][..],
        &["--base", "HEAD~1", "--head", "HEAD", "-o", "json"],
    ] {
        let out = lint(repo.path(), args);
        rendered.push_str(&format!(
            "$ liveproof lint REPO {}\nexit {}\n{}{}\n",
            args.join(" "),
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        ));
    }
    let path = repo.path().to_string_lossy().into_owned();
    let pattern = common::literal_pattern(&path);
    insta::with_settings!({filters => vec![(pattern.as_str(), "[REPO]")]}, {
        insta::assert_snapshot!(rendered);
    });
}

/// The official SARIF 2.1.0 schema (OASIS, errata 01), as `e2e/build-peers.sh` copies it out
/// of its pinned Go module; draft 04, as the schema declares.
fn sarif_validator() -> jsonschema::Validator {
    let peers =
        liveproof_testkit::e2e::control_plane::Peers::locate().expect("the peers and schemas");
    let path = peers.path("sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).expect("the SARIF schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    assert_eq!(
        schema["id"],
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    );
    jsonschema::draft4::new(&schema).expect("the SARIF schema compiles as draft 04")
}

fn assert_sarif_valid(validator: &jsonschema::Validator, what: &str, doc: &serde_json::Value) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: not SARIF 2.1.0: {errors:#?}");
}

/// Every SARIF document `lint` writes — an error finding, a warning outside git, no findings —
/// validates against the official schema; and the schema rejects what SARIF forbids, so the
/// check can fail.
#[test]
fn sarif_validates_against_the_official_2_1_0_schema() {
    let validator = sarif_validator();

    let repo = seed_002();
    let findings = lint(repo.path(), &["--base", "HEAD~1", "-o", "sarif"]);
    assert_eq!(findings.status.code(), Some(1));
    let findings: serde_json::Value = serde_json::from_slice(&findings.stdout).expect("json");
    assert_sarif_valid(&validator, "seed 002", &findings);

    write(
        repo.path(),
        "charts/inventory/Chart.yaml",
        "apiVersion: v2\nname: inventory\nversion: 0.4.3\n",
    );
    commit(repo.path(), "bump");
    let clean = lint(repo.path(), &["--base", "HEAD~2", "-o", "sarif"]);
    assert_eq!(clean.status.code(), Some(0));
    let clean: serde_json::Value = serde_json::from_slice(&clean.stdout).expect("json");
    assert_eq!(clean["runs"][0]["results"], serde_json::json!([]));
    assert_sarif_valid(&validator, "no findings", &clean);

    let plain = tempfile::tempdir().expect("tempdir");
    write(
        plain.path(),
        "apps/panel.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: panel\nspec:\n  template:\n    spec:\n      containers:\n        - name: panel\n          image: registry.example.com/panel:latest\n",
    );
    let warning = lint(plain.path(), &["-o", "sarif"]);
    assert_eq!(warning.status.code(), Some(0));
    let warning: serde_json::Value = serde_json::from_slice(&warning.stdout).expect("json");
    assert_eq!(warning["runs"][0]["results"][0]["level"], "warning");
    assert_sarif_valid(&validator, "outside git", &warning);

    let mut wrong_level = findings.clone();
    wrong_level["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(
        !validator.is_valid(&wrong_level),
        "`fatal` is no SARIF level"
    );
    let mut stray = findings.clone();
    stray["runs"][0]["verdict"] = "not_live".into();
    assert!(
        !validator.is_valid(&stray),
        "a run has no `verdict` property"
    );
    let mut no_line = findings;
    no_line["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert!(!validator.is_valid(&no_line), "lines start at 1");
}
