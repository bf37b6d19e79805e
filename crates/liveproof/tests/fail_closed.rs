//! Fail closed on hostile or odd Helm storage and `--from` files (issue 14): `release show`
//! (CLI and MCP) never prints a Secret it cannot rule out, decode errors never quote stored
//! text, and deep nesting is refused up front instead of costing minutes.
//!
//! No timing asserts: the harness's own bound on each run is what proves there is no hang.

use liveproof_testkit::binary as common;

use std::path::Path;

use liveproof_evidence::{Check, Status, Verdict};
use serde_json::{json, Value};

/// Only a rendered Secret holds this, raw (`stringData`) and base64 (`data`).
const CANARY: &str = "c4n4ry-hunter2";
const CANARY_B64: &str = "YzRuNHJ5LWh1bnRlcjI=";

const CONFIGMAP: &str = "# Source: inventory/templates/flags.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory-flags\ndata:\n  mode: fast\n";

fn release_json(manifest: &str, last_deployed: &str) -> Value {
    json!({
        "name": "inventory", "namespace": "apps", "version": 3,
        "info": {"first_deployed": "2026-07-01T08:00:00Z", "last_deployed": last_deployed,
                 "deleted": "", "description": "Upgrade complete", "status": "deployed"},
        "chart": {"metadata": {"name": "inventory", "version": "0.4.3", "appVersion": "1.8.0"}},
        "config": {"replicas": 2},
        "manifest": manifest,
        "hooks": []
    })
}

fn write_dump(dir: &Path, release: &Value) -> String {
    let path = dir.join("dump.json");
    let list = json!({"apiVersion": "v1", "kind": "List",
                      "items": [liveproof_helm::encode_secret(release)]});
    std::fs::write(&path, serde_json::to_string(&list).expect("json")).expect("write dump");
    path.to_string_lossy().into_owned()
}

fn assert_no_canary(text: &str, what: &str) {
    for secret in [CANARY, CANARY_B64, "hunter2"] {
        assert!(!text.contains(secret), "{secret} leaked in {what}:\n{text}");
    }
}

/// A manifest with a Secret in every shape that once printed raw.
fn hostile_manifest() -> String {
    let secret = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {CANARY_B64}\nstringData:\n  raw: {CANARY}\n"
    );
    let item = secret.trim_end().replace('\n', "\n    ");
    let mut bomb = format!("kind: Secret\ndata:\n  password: {CANARY_B64}\na0: &a0 [{CANARY}]\n");
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 9].join(", ")
        ));
    }
    let deep = format!(
        "kind: Secret\ndata:\n  password: {CANARY_B64}\nx: {}{}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    [
        format!("---\n{CONFIGMAP}"),
        format!("---\napiVersion: v1\nkind: List\nitems:\n  - {item}\n"),
        format!("--- \n{secret}"),
        format!("---   # the db secret\n{secret}"),
        format!("---\n{secret}data:\n  again: {CANARY_B64}\n"),
        format!("---\nkind: Secret\ndata:\n\tpassword: {CANARY_B64}\n"),
        format!("---\n{bomb}"),
        format!("---\n{deep}"),
    ]
    .concat()
}

#[tokio::test]
async fn release_show_manifest_redacts_every_secret_it_cannot_rule_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = write_dump(
        dir.path(),
        &release_json(&hostile_manifest(), "2026-07-08T14:22:06Z"),
    );
    let run = common::liveproof()
        .args(&[
            "release",
            "show",
            "inventory",
            "-n",
            "apps",
            "--from",
            &dump,
            "--manifest",
        ])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_no_canary(&run.stdout, "stdout");
    assert_no_canary(&run.stderr, "stderr");
    // Provably not a Secret: printed as rendered. Unreadable: one line saying why.
    assert!(run.stdout.contains(CONFIGMAP), "{}", run.stdout);
    let notes: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("# liveproof: document "))
        .collect();
    assert_eq!(notes.len(), 4, "{}", run.stdout);
    // Numbered as a reader counts the documents (the duplicate key is in the fifth).
    assert!(
        notes[0].starts_with("# liveproof: document 5 not shown"),
        "{notes:?}"
    );
    for why in [
        "duplicate key",
        "a tab in the indentation",
        "repetition limit",
        "nested deeper than 128 levels",
    ] {
        assert!(notes.iter().any(|n| n.contains(why)), "{why}: {notes:?}");
    }
    assert_eq!(
        run.stdout
            .matches("# Secret data redacted by liveproof")
            .count(),
        3
    );
}

/// The MCP tool runs the same code, over a real stdio session.
#[tokio::test]
async fn mcp_release_show_redacts_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = write_dump(
        dir.path(),
        &release_json(&hostile_manifest(), "2026-07-08T14:22:06Z"),
    );
    let call = json!({"name": "release_show", "arguments": {
        "name": "inventory", "namespace": "apps", "section": "manifest", "from": dump}});
    let root = dir.path().to_str().expect("utf-8");
    let (run, replies) = common::mcp(&["--allow-from", root], &[call]).await;
    assert_no_canary(&run.stdout, "the MCP reply");
    assert_no_canary(&run.stderr, "the MCP server's stderr");
    let text = common::tool_text(&replies[0]);
    assert!(text.contains(CONFIGMAP), "{text}");
    assert!(text.contains("nested deeper than 128 levels"), "{text}");
}

/// A stored time with unbalanced quotes once leaked through the quote redaction.
#[tokio::test]
async fn decode_errors_name_the_field_never_the_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = write_dump(
        dir.path(),
        &release_json(CONFIGMAP, "x\" db_password=hunter2 \"y"),
    );
    for args in [
        &[
            "release",
            "show",
            "inventory",
            "-n",
            "apps",
            "--from",
            &dump,
        ][..],
        &[
            "verify",
            "release/inventory",
            "-n",
            "apps",
            "--from",
            &dump,
            "--since",
            "2026-07-12T10:00:00Z",
        ][..],
    ] {
        let run = common::liveproof().args(args).run().await;
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert_no_canary(&run.stdout, "stdout");
        assert_no_canary(&run.stderr, "stderr");
        assert!(
            run.stderr
                .contains("`.info.last_deployed` is not an RFC 3339 time"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("sh.helm.release.v1.inventory.v3"),
            "{}",
            run.stderr
        );
    }
}

/// A few KB of gzipped manifest nested 200,000 levels deep: `manifest_contains` says
/// `unknown` (never `pass`, though the text is in the manifest) instead of hanging.
#[tokio::test]
async fn a_deeply_nested_manifest_is_unknown_not_a_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deep = format!(
        "---\n# Source: inventory/templates/deep.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: {{a: {}1{}}}\n",
        "a: {".repeat(200_000),
        "}".repeat(200_000)
    );
    let release = release_json(&format!("---\n{CONFIGMAP}{deep}"), "2026-07-12T10:30:00Z");
    let dump = write_dump(dir.path(), &release);
    let size = std::fs::metadata(&dump).expect("dump").len();
    assert!(
        size < 16 * 1024,
        "the hostile Secret is small: {size} bytes"
    );
    let run = common::liveproof()
        .args(&["verify", "release/inventory", "-n", "apps", "--from", &dump])
        .since("2026-07-12T10:00:00Z")
        .args(&["--expect", "name: deep"])
        .json()
        .run()
        .await;
    let report = run.report();
    assert_ne!(report.verdict, Verdict::Live, "{}", run.stdout);
    let found = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ManifestContains)
        .expect("manifest_contains");
    assert_eq!(found.status, Status::Unknown, "{found:?}");
    assert!(
        found.detail.contains("nested deeper than 128 levels")
            && found.detail.contains("inventory/templates/deep.yaml"),
        "{found:?}"
    );
    // What is in a readable document is found and said, but the release stays unknown: the
    // document that could not be read may render a workload that is never followed.
    let run = common::liveproof()
        .args(&["verify", "release/inventory", "-n", "apps", "--from", &dump])
        .since("2026-07-12T10:00:00Z")
        .args(&["--expect", "name: inventory-flags"])
        .json()
        .run()
        .await;
    let report = run.report();
    let found = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ManifestContains)
        .expect("manifest_contains");
    assert_eq!(found.status, Status::Unknown, "{found:?}");
    assert!(
        found
            .observed
            .contains("`name: inventory-flags` in ConfigMap/inventory-flags"),
        "{found:?}"
    );
}

/// `--from` files nested 200,000 levels deep: exit 2 naming the file and document.
#[tokio::test]
async fn a_deeply_nested_from_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let flow = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let mapping = format!("{}1{}", "a: {".repeat(200_000), "}".repeat(200_000));
    for (name, text, document) in [
        (
            "flow.yaml",
            format!("{CONFIGMAP}---\nkind: ConfigMap\nx: {flow}\n"),
            2,
        ),
        (
            "mapping.yaml",
            format!("kind: ConfigMap\nx: {mapping}\n"),
            1,
        ),
        (
            "deep.json",
            format!("{{\"kind\": \"ConfigMap\", \"x\": {flow}}}"),
            1,
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        let run = common::liveproof()
            .args(&[
                "verify",
                "deploy/inventory",
                "-n",
                "apps",
                "--from",
                path.to_str().expect("utf-8"),
            ])
            .since("2026-07-12T10:00:00Z")
            .run()
            .await;
        assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "{name}: document {document}: nested deeper than 128 levels"
            )),
            "{name}: {}",
            run.stderr
        );
    }
}

/// A Deployment whose `replicas` holds what looks like a credential: the kind of file an
/// agent may point `from` at by mistake, or on purpose.
const TYPED: &str = concat!(
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\n  namespace: apps\n",
    "spec:\n  replicas: \"DB_PASSWORD=hunter2-typed\"\n",
    "  selector: {matchLabels: {app: inventory}}\n",
    "  template: {metadata: {labels: {app: inventory}}, spec: {containers: [{name: app, image: x}]}}\n",
);

/// Type errors in `--from`/`-f` files, CLI and MCP: the file, the document, the object and the
/// field, never the value.
#[tokio::test]
async fn type_errors_name_the_field_never_the_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("typed.yaml");
    std::fs::write(&path, format!("{CONFIGMAP}---\n{TYPED}")).expect("write");
    let file = path.to_str().expect("utf-8");
    let said = "typed.yaml: document 2: Deployment/inventory: not a valid Deployment: \
                `spec.replicas` has the wrong type (expected i32)";
    for args in [
        &[
            "verify",
            "deploy/inventory",
            "--from",
            file,
            "--since",
            "1h",
            "--image",
            "x",
        ][..],
        &["release", "show", "inventory", "-n", "apps", "--from", file][..],
    ] {
        let run = common::liveproof().args(args).run().await;
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert_no_canary(&run.stdout, "stdout");
        assert_no_canary(&run.stderr, "stderr");
        assert!(run.stderr.contains(said), "{args:?}: {}", run.stderr);
    }
    let root = dir.path().to_str().expect("utf-8");
    let (run, replies) = common::mcp(
        &["-vv", "--allow-from", root],
        &[
            json!({"name": "verify", "arguments": {"targets": ["deploy/inventory"], "from": file, "since": "1h"}}),
            // The arguments themselves are never quoted back either.
            json!({"name": "verify", "arguments": {"targets": "quoted-back?", "since": "1h"}}),
        ],
    )
    .await;
    assert_no_canary(&run.stdout, "the MCP replies");
    assert_no_canary(&run.stderr, "the MCP server's stderr");
    assert!(
        common::tool_text(&replies[0]).contains(said),
        "{}",
        replies[0]
    );
    assert_eq!(
        common::tool_text(&replies[1]),
        "verify arguments: `targets` has the wrong type (expected a sequence)"
    );
    assert!(
        !replies[1].to_string().contains("quoted-back?"),
        "{}",
        replies[1]
    );
}

/// `from` and `manifests` over MCP read only under `--allow-from`: not a file elsewhere, not
/// a symlink out of it, not a directory holding one; nothing at all without the flag.
#[tokio::test]
async fn mcp_reads_files_only_under_allow_from() {
    let allowed = tempfile::tempdir().expect("tempdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let secret = elsewhere.path().join("app.yaml");
    std::fs::write(&secret, TYPED).expect("write");
    let secret = secret.to_str().expect("utf-8").to_owned();
    let dump = write_dump(
        allowed.path(),
        &release_json(CONFIGMAP, "2026-07-12T10:30:00Z"),
    );
    let linked_dir = allowed.path().join("linked");
    std::fs::create_dir(&linked_dir).expect("mkdir");
    let link = linked_dir.join("out.yaml");
    std::os::unix::fs::symlink(&secret, &link).expect("symlink");
    let link = link.to_str().expect("utf-8").to_owned();
    let linked_dir = linked_dir.to_str().expect("utf-8").to_owned();
    let root = allowed.path().to_str().expect("utf-8");

    let verify_from = |from: &str| json!({"name": "verify", "arguments": {"targets": ["deploy/inventory"], "namespace": "apps", "from": from, "since": "1h"}});
    let calls = [
        verify_from(&secret),
        json!({"name": "release_show", "arguments": {"name": "inventory", "namespace": "apps", "from": secret}}),
        json!({"name": "stale", "arguments": {"namespace": "apps", "manifests": secret}}),
        verify_from(&link),
        verify_from(&linked_dir),
        verify_from("/etc/passwd"),
        // Each of verify's manifests counts, not only the first.
        json!({"name": "verify", "arguments": {"targets": ["deploy/inventory"], "namespace": "apps", "since": "1h", "manifests": [dump, secret]}}),
        json!({"name": "release_show", "arguments": {"name": "inventory", "namespace": "apps", "from": dump}}),
    ];
    let (run, replies) = common::mcp(&["--allow-from", root], &calls).await;
    assert_no_canary(&run.stdout, "the MCP replies");
    assert_no_canary(&run.stderr, "the MCP server's stderr");
    for (call, reply) in calls.iter().zip(&replies).take(7) {
        let text = common::tool_text(reply);
        assert_eq!(reply["isError"], true, "{call}: {reply}");
        assert!(
            text.contains("is not under a directory this server was started with (--allow-from)")
                && text.contains(root),
            "{call}: {text}"
        );
    }
    // What is under the root is read.
    assert_eq!(replies[7]["isError"], false, "{}", replies[7]);
    assert!(
        common::tool_text(&replies[7]).contains("inventory"),
        "{}",
        replies[7]
    );

    // Without --allow-from, no file at all, and the refusal names the flag.
    let (_, replies) = common::mcp(
        &[],
        &[json!({"name": "release_show", "arguments": {"name": "inventory", "namespace": "apps", "from": dump}})],
    )
    .await;
    let text = common::tool_text(&replies[0]);
    assert!(
        text.contains("started without --allow-from")
            && text.contains("liveproof mcp --allow-from DIR"),
        "{text}"
    );
}

/// MCP's `repo` is where git runs (commit times, ancestry, manifests as of a commit): only
/// under `--allow-from`, as files are. A repository elsewhere is refused before git runs.
#[tokio::test]
async fn mcp_runs_git_only_under_allow_from() {
    let allowed = tempfile::tempdir().expect("tempdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    liveproof_testkit::git::git_at(elsewhere.path(), &["init", "-q"], "2026-07-12T10:00:00Z");
    let root = allowed.path().to_str().expect("utf-8");
    let dump = write_dump(
        allowed.path(),
        &release_json(CONFIGMAP, "2026-07-12T10:30:00Z"),
    );
    let verify_in = |repo: &str| json!({"name": "verify", "arguments": {"targets": ["deploy/inventory"], "namespace": "apps", "from": dump, "commit": "HEAD", "repo": repo}});
    let outside = elsewhere.path().to_str().expect("utf-8");
    let (_, replies) = common::mcp(
        &["--allow-from", root],
        &[verify_in(outside), verify_in("/")],
    )
    .await;
    for reply in &replies {
        let text = common::tool_text(reply);
        assert_eq!(reply["isError"], true, "{reply}");
        assert!(
            text.contains("`repo`") && text.contains("git runs only there"),
            "{text}"
        );
    }
}
