//! `traffic_current` on the simulator, with the real kubectl: a Service applied through the API
//! gets its EndpointSlice from the simulator's endpointslice controller (as a real cluster's
//! kube-controller-manager writes it), and verify reads where that Service routes. A Service
//! that still selects a pod outside the workload by a leftover label is not live, though every
//! pod the Deployment selects is current.

use liveproof_testkit::binary as common;

use std::path::Path;
use std::time::Duration;

use liveproof_evidence::{Check, Report, Status, Verdict};
use liveproof_testkit::wait_for;

async fn kubectl(kubeconfig: &Path, home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = liveproof_testkit::kubectl()
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .timeout(Duration::from_secs(45))
        .run()
        .await;
    (out.code, out.stdout, out.stderr)
}

/// The endpoints of Service `web`'s EndpointSlices in `apps`, a line each: `POD READY`.
async fn slice_endpoints(kubeconfig: &Path, home: &Path) -> String {
    let (_, out, _) = kubectl(
        kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "jsonpath={range .items[*].endpoints[*]}{.targetRef.name} {.conditions.ready}{\"\\n\"}{end}",
        ],
    )
    .await;
    out
}

async fn verify(kubeconfig: &Path, home: &Path, since: &str) -> (i32, Report, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args([
            "verify",
            "deploy/web",
            "-n",
            "apps",
            "--image",
            "registry.example/web:v2",
            "--since",
            since,
            "-o",
            "json",
        ])
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .output()
        .await
        .expect("liveproof runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let report: Report = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "a report ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report, stdout)
}

fn traffic(report: &Report) -> &liveproof_evidence::Evidence {
    report
        .targets
        .iter()
        .flat_map(|t| &t.evidence)
        .find(|e| e.check == Check::TrafficCurrent)
        .expect("a traffic_current item")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_routing_to_a_pod_by_a_leftover_label_is_not_live_on_the_simulator() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let kubeconfig = dir.path().join("kc");
    let mut server = common::sim_process(&["-n", "apps"], &kubeconfig).await;
    let since = jiff::Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(5))
        .expect("a time")
        .to_string();
    let manifests = dir.path().join("web.yaml");
    std::fs::write(
        &manifests,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\n\
         spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n\
         \x20 template:\n    metadata: {labels: {app: web, tier: frontend}}\n\
         \x20   spec: {containers: [{name: web, image: \"registry.example/web:v2\", ports: [{name: http, containerPort: 8080}]}]}\n---\n\
         apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: apps}\n\
         spec:\n  selector: {tier: frontend}\n  ports: [{name: http, port: 80, targetPort: http}]\n",
    )
    .expect("manifests");
    let (code, _, err) = kubectl(
        &kubeconfig,
        home,
        &["apply", "-f", manifests.to_str().expect("utf-8")],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "rollout",
            "status",
            "deploy/web",
            "--timeout=30s",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");

    // The endpointslice controller's slice: one ready endpoint per pod, each naming its pod.
    let kc = kubeconfig.clone();
    wait_for(
        "the Service's slice lists both pods",
        Duration::from_secs(30),
        || {
            let kc = kc.clone();
            async move {
                let out = slice_endpoints(&kc, home).await;
                (out.lines()
                    .filter(|l| l.starts_with("web-") && l.ends_with(" true"))
                    .count()
                    == 2)
                    .then_some(())
            }
        },
    )
    .await;
    let (code, report, out) = verify(&kubeconfig, home, &since).await;
    let e = traffic(&report);
    assert_eq!(e.status, Status::Pass, "{out}");
    assert_eq!(e.observed, "Service web: 2 ready endpoint(s), all current");
    assert_eq!((code, report.verdict), (0, Verdict::Live), "{out}");

    // A pod of the build before the Deployment, labelled tier=frontend alone: the Deployment
    // does not select it, the Service does.
    let (code, _, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "run",
            "web-legacy",
            "--image=registry.example/web:v1",
            "--labels=tier=frontend",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "patch",
            "pod",
            "web-legacy",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"phase":"Running","podIP":"10.244.9.9","conditions":[{"type":"Ready","status":"True"}]}}"#,
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let kc = kubeconfig.clone();
    wait_for(
        "the slice routes to the legacy pod",
        Duration::from_secs(30),
        || {
            let kc = kc.clone();
            async move {
                let out = slice_endpoints(&kc, home).await;
                out.lines().any(|l| l == "web-legacy true").then_some(())
            }
        },
    )
    .await;
    let (code, report, out) = verify(&kubeconfig, home, &since).await;
    let pods_current = report
        .targets
        .iter()
        .flat_map(|t| &t.evidence)
        .find(|e| e.check == Check::PodsCurrent)
        .expect("pods_current");
    assert_eq!(
        pods_current.status,
        Status::Pass,
        "the Deployment's own pods are current: {out}"
    );
    let e = traffic(&report);
    assert_eq!(e.status, Status::Fail, "{out}");
    assert!(
        e.observed
            .contains("pod web-legacy (not a pod of apps/Deployment/web"),
        "{}",
        e.observed
    );
    assert_eq!((code, report.verdict), (1, Verdict::NotLive), "{out}");
    server.kill().await.expect("the simulator stops");
}
