//! What a not-live target's diagnostics read, against the simulator: Warning events from both
//! event APIs (server-side filtered), and container logs with tail, previous and sinceTime.

use liveproof_evidence::Observed;
use liveproof_gather::{Cluster, ClusterOptions};
use liveproof_testkit::SimCluster;
use serde_json::json;

async fn start() -> (SimCluster, Cluster) {
    let logs = json!({
        "app": "2026-07-12T10:06:01Z starting\n2026-07-12T10:06:02Z reading DB_PASSWORD from env\n2026-07-12T10:06:03Z panic: no such host db",
        "app/previous": "2026-07-12T10:05:00Z the run before"
    })
    .to_string();
    let objects = vec![
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "inventory-1", "namespace": "apps",
               "annotations": {liveproof_sim::LOG_ANNOTATION: logs}},
               "spec": {"containers": [{"name": "app", "image": "x"}]}}),
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "w1", "namespace": "apps"},
               "involvedObject": {"kind": "Pod", "name": "inventory-1"}, "type": "Warning", "reason": "BackOff", "message": "Back-off", "count": 3}),
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "n1", "namespace": "apps"},
               "involvedObject": {"kind": "Pod", "name": "inventory-1"}, "type": "Normal", "reason": "Pulled", "message": "pulled"}),
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "w2", "namespace": "apps"},
               "regarding": {"kind": "Deployment", "name": "inventory"}, "type": "Warning", "reason": "ProgressDeadlineExceeded", "note": "timed out",
               "eventTime": "2026-07-12T10:30:00.000000Z", "reportingController": "deployment-controller", "reportingInstance": "kcm", "action": "Progressing"}),
    ];
    let sim = SimCluster::start(objects, "apps").await;
    let cluster = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(sim.kubeconfig.clone()),
        ..ClusterOptions::default()
    })
    .await
    .expect("connect");
    (sim, cluster)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warning_events_from_both_apis_in_two_requests() {
    let (sim, cluster) = start().await;
    let mut observed = Observed::default();
    sim.sim.requests().reset();
    cluster.gather_warning_events("apps", &mut observed).await;
    let reasons: Vec<&str> = observed
        .others
        .iter()
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert_eq!(reasons.len(), 2, "Warnings only: {reasons:?}");
    assert!(
        reasons.contains(&"BackOff") && reasons.contains(&"ProgressDeadlineExceeded"),
        "{reasons:?}"
    );
    assert_eq!(
        sim.sim.requests().total(),
        2,
        "{:?}",
        sim.sim.requests().snapshot()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_logs_tail_and_previous() {
    let (_sim, cluster) = start().await;
    let lines = cluster
        .container_log("apps", "inventory-1", "app", 2, false)
        .await
        .expect("log");
    assert_eq!(lines.len(), 2);
    assert!(lines[1].ends_with("panic: no such host db"), "{lines:?}");
    let previous = cluster
        .container_log("apps", "inventory-1", "app", 25, true)
        .await
        .expect("previous");
    assert_eq!(
        previous,
        vec!["2026-07-12T10:05:00Z the run before".to_string()]
    );
    let err = cluster
        .container_log("apps", "inventory-1", "sidecar", 5, false)
        .await
        .expect_err("no such container");
    assert!(err.to_string().contains("sidecar"), "{err}");
}
