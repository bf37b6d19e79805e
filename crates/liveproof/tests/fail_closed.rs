//! Fail closed on hostile or odd Helm storage and `--from` files (issue 14): `release show`
//! (CLI and MCP) never prints a Secret it cannot rule out, decode errors never quote stored
//! text, and deep nesting is refused up front instead of costing minutes.
//!
//! No timing asserts: the harness's own bound on each run is what proves there is no hang.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use liveproof_evidence::{Check, Status, Verdict};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt as _;

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
    let run = common::liveproof(&[
        "release",
        "show",
        "inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "--manifest",
    ])
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
    let request = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "release_show", "arguments": {
            "name": "inventory", "namespace": "apps", "section": "manifest", "from": dump}}
    });
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .arg("mcp")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof mcp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    // As an MCP client does: the handshake, then the call.
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fail_closed", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    stdin
        .write_all(format!("{initialize}\n{initialized}\n{request}\n").as_bytes())
        .await
        .expect("request sent");
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the MCP server answered and exited within 120s")
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_canary(&stdout, "the MCP reply");
    assert_no_canary(&stderr, "the MCP server's stderr");
    let reply: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == 1)
        .unwrap_or_else(|| panic!("no reply to the call: {stdout}\n{stderr}"));
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {reply}"));
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
        let run = common::liveproof(args).await;
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
    let run = common::liveproof(&[
        "verify",
        "release/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "--since",
        "2026-07-12T10:00:00Z",
        "--expect",
        "name: deep",
        "-o",
        "json",
    ])
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
    let run = common::liveproof(&[
        "verify",
        "release/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "--since",
        "2026-07-12T10:00:00Z",
        "--expect",
        "name: inventory-flags",
        "-o",
        "json",
    ])
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
        let run = common::liveproof(&[
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--from",
            path.to_str().expect("utf-8"),
            "--since",
            "2026-07-12T10:00:00Z",
        ])
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
