//! `deploy/verification-crd.yaml` on the real API server (the peers' kube-apiserver and
//! kubectl): it is accepted and served; a Verification just created, before any controller has
//! judged it, reads as not observed (the schema's default status); a status made by
//! `status_from` is stored as written (nothing pruned), `kubectl get` prints its columns and
//! `kubectl wait --for=condition=Ready` returns on a live one.
//!
//! A missing peer fails this test with the command that builds it; it never skips.

use std::path::PathBuf;

use liveproof::controller::{status_from, Verification, VerificationStatus};
use liveproof_testkit::e2e::ControlPlane;
use serde_json::{json, Value};

fn crd_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/verification-crd.yaml")
}

/// A report as `verify -o json` writes it, for deployment apps/web.
fn report(verdict: &str, live_since: Option<&str>) -> liveproof_evidence::Report {
    let mut target = json!({
        "kind": "Deployment", "namespace": "apps", "name": "web", "verdict": verdict,
        "evidence": [{
            "check": "pods_current", "status": if verdict == "live" { "pass" } else { "fail" },
            "observed": "o", "expected": "e", "source": "apps/Pod/web-1 .metadata.labels",
            "detail": "2 pods of an old revision serve",
            "source_ref": {"apiVersion": "v1", "kind": "Pod", "namespace": "apps",
                           "name": "web-1", "field": ".metadata.labels"}
        }],
    });
    if let Some(at) = live_since {
        target["live_since"] = json!(at);
    }
    serde_json::from_value(json!({
        "schema": "liveproof/v1", "verdict": verdict, "change": {}, "targets": [target],
    }))
    .expect("a report")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_api_server_serves_the_verification_crd() {
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the control plane: {e:#}"));
    let kubectl = |args: &[&str]| liveproof_testkit::kubectl::run(&plane.kubeconfig, args, None);
    let kubectl_in = |args: &[&str], stdin: &str| {
        liveproof_testkit::kubectl::run(&plane.kubeconfig, args, Some(stdin))
    };
    let crd = crd_file();
    let crd = crd.to_str().expect("utf-8 path");
    kubectl(&["apply", "-f", crd]);
    kubectl(&[
        "wait",
        "--for=condition=established",
        "--timeout=60s",
        "-f",
        crd,
    ]);
    kubectl(&["create", "namespace", "apps"]);
    kubectl_in(
        &["apply", "-f", "-"],
        r#"
apiVersion: liveproof.dev/v1alpha1
kind: Verification
metadata:
  name: web-1-4
  namespace: apps
spec:
  targets: [deploy/web]
  since: 2026-07-12T10:00:00Z
  image: [ghcr.io/acme/web:1.4.0]
  expectEnv: [DB_URL]
  timeout: 10m
"#,
    );
    let read = |name: &str| -> Value {
        serde_json::from_str(&kubectl(&[
            "get",
            "verification",
            name,
            "-n",
            "apps",
            "-o",
            "json",
        ]))
        .expect("JSON")
    };

    // Not judged yet: the schema's default status says generation 1 is not observed (kstatus:
    // InProgress), not "no conditions" (kstatus: Current).
    let created = read("web-1-4");
    assert_eq!(created["metadata"]["generation"], json!(1), "{created:#}");
    assert_eq!(
        created["status"],
        json!({"observedGeneration": 0}),
        "{created:#}"
    );

    // The object as stored reads back into the type, and states the request verify would
    // make (targets in the Verification's namespace).
    let object: Verification = serde_json::from_value(created.clone()).expect("a Verification");
    let request = object.request().expect("a valid spec");
    assert_eq!(request.namespace(), Some("apps"));
    assert_eq!(object.spec.change.expect_env, ["DB_URL"]);

    // A status written through the status subresource is stored as written.
    let now = jiff::Timestamp::now();
    let waiting = status_from(&report("not_live", None), 1, now, None);
    let patch = |status: &VerificationStatus| {
        let body = json!({"status": status}).to_string();
        kubectl(&[
            "patch",
            "verification",
            "web-1-4",
            "-n",
            "apps",
            "--subresource=status",
            "--type=merge",
            "-p",
            &body,
        ]);
    };
    patch(&waiting);
    let stored: VerificationStatus =
        serde_json::from_value(read("web-1-4")["status"].clone()).expect("a status");
    assert_eq!(stored, waiting);

    let live = status_from(
        &report("live", Some("2026-07-12T10:03:10Z")),
        1,
        now,
        Some(&stored),
    );
    patch(&live);
    let stored: VerificationStatus =
        serde_json::from_value(read("web-1-4")["status"].clone()).expect("a status");
    assert_eq!(stored, live);
    kubectl(&[
        "wait",
        "--for=condition=Ready",
        "--timeout=10s",
        "-n",
        "apps",
        "verification/web-1-4",
    ]);
    // The printer columns, as `kubectl get` shows them (by the short name too).
    let table = kubectl(&["get", "verif", "-n", "apps"]);
    let header = table.lines().next().unwrap_or_default();
    for column in ["NAME", "VERDICT", "READY", "LIVE SINCE", "AGE"] {
        assert!(header.contains(column), "{table}");
    }
    let row = table.lines().nth(1).unwrap_or_default();
    assert!(row.starts_with("web-1-4"), "{table}");
    assert!(row.contains("live") && row.contains("True"), "{table}");
    let wide = kubectl(&["get", "verification", "-n", "apps", "-o", "wide"]);
    assert!(
        wide.contains("REASON") && wide.contains("LEAD TIME"),
        "{wide}"
    );

    // A spec the schema refuses is refused by the API server, naming the field.
    let refused = std::process::Command::new(liveproof_testkit::kubectl::kubectl_path())
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .args([
            "create",
            "-n",
            "apps",
            "-f",
            "-",
            "-o",
            "name",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().expect("stdin").write_all(
                b"apiVersion: liveproof.dev/v1alpha1\nkind: Verification\nmetadata: {name: bad}\nspec: {targets: deploy/web}\n",
            )?;
            child.wait_with_output()
        })
        .expect("kubectl runs");
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("spec.targets"), "{said}");
}
