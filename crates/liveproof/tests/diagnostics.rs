//! When it is not live, say why — on the same evidence path: the new pods' reasons, Warning
//! events since the change, opt-in logs; and a live target costs no extra request.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use liveproof_evidence::Verdict;
use serde_json::{json, Value};

fn crashloop_story() -> Vec<Value> {
    let path = liveproof_testkit::story::scenarios_dir()
        .join("new-pod-crashloopbackoff-old-pods-serving/cluster.yaml");
    let mut objects = liveproof_gather::offline::read_objects(&path).expect("story");
    for o in &mut objects {
        if o["kind"] == "Pod" && o["metadata"]["name"] == "inventory-4dxbdm5glx-tqtkw" {
            let logs = json!({"inventory/previous": "connecting to db.apps.svc:5432\npanic: password authentication failed for user \"inventory\""}).to_string();
            o["metadata"]["annotations"] = json!({liveproof_sim::LOG_ANNOTATION: logs});
        }
    }
    objects.push(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bo", "namespace": "apps"},
        "involvedObject": {"kind": "Pod", "name": "inventory-4dxbdm5glx-tqtkw", "namespace": "apps"}, "type": "Warning",
        "reason": "BackOff", "message": "Back-off restarting failed container inventory", "count": 12,
        "firstTimestamp": "2026-07-12T10:07:00Z", "lastTimestamp": "2026-07-12T10:20:00Z"}));
    objects.push(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "old", "namespace": "apps"},
        "involvedObject": {"kind": "Deployment", "name": "inventory", "namespace": "apps"}, "type": "Warning",
        "reason": "FailedCreate", "message": "an older problem", "count": 1, "lastTimestamp": "2026-07-01T00:00:00Z"}));
    objects
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loop_explains_itself_with_events_and_opt_in_logs() {
    let cluster = SimCluster::start(crashloop_story(), "apps").await;
    let base = [
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        "2026-07-12T10:00:00Z",
    ];

    let run = common::liveproof()
        .args(&[&base[..], &["-o", "json"]].concat())
        .run()
        .await;
    assert_eq!(run.code, 1);
    let report = run.report();
    let diagnostics = &report.targets[0].diagnostics;
    let reasons: Vec<&str> = diagnostics.iter().map(|d| d.reason.as_str()).collect();
    assert!(reasons.contains(&"CrashLoopBackOff"), "{reasons:?}");
    let event = diagnostics
        .iter()
        .find(|d| d.kind == "event")
        .expect("the BackOff event");
    assert_eq!((event.reason.as_str(), event.count), ("BackOff", Some(12)));
    assert!(
        !reasons.contains(&"FailedCreate"),
        "events from before the change are left out: {reasons:?}"
    );
    assert!(
        diagnostics.iter().all(|d| d.lines.is_empty()),
        "no logs unless asked"
    );

    let run = common::liveproof()
        .args(&[&base[..], &["-o", "json", "--logs"]].concat())
        .run()
        .await;
    let report = run.report();
    let logs = report.targets[0]
        .diagnostics
        .iter()
        .find(|d| d.kind == "logs")
        .expect("logs with --logs");
    assert!(
        logs.lines
            .iter()
            .any(|l| l.contains("password authentication failed")),
        "{logs:?}"
    );

    // The text report ends each not-live target with a "why" block.
    let run = common::liveproof().args(&base).run().await;
    let why = run.stdout.find("  why:").expect("a why block");
    assert!(
        run.stdout[why..].contains("BackOff") && run.stdout[why..].contains("CrashLoopBackOff"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_target_costs_no_extra_request() {
    let path = liveproof_testkit::story::scenarios_dir()
        .join("gitops-reconciled-new-tag-rolled-out/cluster.yaml");
    let cluster = SimCluster::from_file(&path, "apps").await;
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "-n", "apps"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0", "--logs"])
        .json()
        .run()
        .await;
    assert_eq!(run.report().verdict, Verdict::Live, "{}", run.stdout);
    assert!(run.report().targets[0].diagnostics.is_empty());
    assert_eq!(
        cluster.sim.requests().total(),
        5,
        "GET, LIST replicasets, LIST pods, LIST services, LIST endpointslices only: {:?}",
        cluster.sim.requests().snapshot()
    );
}
