//! How gather + judge scale with the cluster: N Deployments of M pods each, served by the
//! simulator, verified in one run. Prints wall time per run and the requests sent, so a change
//! that adds a request per pod shows up as a number, not a feeling.
//!
//! Run: `cargo bench -p liveproof --bench gather` (optionally `-- DEPLOYMENTS PODS RUNS`).

use std::time::{Duration, Instant};

use liveproof_evidence::{judge, Change, Target, TargetKind};
use liveproof_gather::{Cluster, ClusterOptions};
use liveproof_sim::Simulator;
use serde_json::{json, Value};

fn objects(deployments: usize, pods: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for d in 0..deployments {
        let name = format!("svc-{d}");
        let uid = format!("uid-{d}");
        let template = json!({"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app", "image": format!("registry.local/{name}:1")}]}});
        let mut rs_template = template.clone();
        rs_template["metadata"]["labels"]["pod-template-hash"] = json!("h1");
        out.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "bench", "uid": uid, "generation": 1},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name}}, "template": template},
            "status": {"observedGeneration": 1, "replicas": pods, "updatedReplicas": pods, "availableReplicas": pods}}));
        out.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("{name}-h1"), "namespace": "bench", "labels": {"app": name, "pod-template-hash": "h1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": uid}]},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name, "pod-template-hash": "h1"}}, "template": rs_template}}));
        for p in 0..pods {
            out.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{name}-h1-{p}"), "namespace": "bench", "labels": {"app": name, "pod-template-hash": "h1"}},
                "spec": {"containers": [{"name": "app", "image": format!("registry.local/{name}:1")}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                           "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "x", "imageID": "x",
                                                  "state": {"running": {"startedAt": "2026-07-12T10:05:00Z"}}}]}}));
        }
    }
    out
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (deployments, pods, runs) = (
        args.first().copied().unwrap_or(50),
        args.get(1).copied().unwrap_or(20),
        args.get(2).copied().unwrap_or(10),
    );
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let sim = Simulator::new().with_objects(objects(deployments, pods)).start().await?;
        let dir = tempfile::tempdir()?;
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig, "bench")?;
        let cluster = Cluster::connect(&ClusterOptions {
            kubeconfig: Some(kubeconfig),
            ..ClusterOptions::default()
        })
        .await?;
        let targets: Vec<Target> = (0..deployments)
            .map(|d| Target::new(TargetKind::Deployment, Some("bench"), &format!("svc-{d}")))
            .collect();
        let change = Change {
            since: Some("2026-07-12T10:00:00Z".parse()?),
            ..Change::default()
        };
        let mut times: Vec<Duration> = Vec::new();
        let before = sim.requests().total();
        for _ in 0..runs {
            let start = Instant::now();
            let observed = cluster.gather(&targets, false).await?;
            let report = judge(&observed, &change, &targets, "bench");
            times.push(start.elapsed());
            assert_eq!(report.targets.len(), deployments);
        }
        let requests = (sim.requests().total() - before) / runs as u64;
        times.sort();
        println!(
            "gather+judge: {deployments} deployments x {pods} pods, {runs} runs: median {:?}, min {:?}, max {:?}; {requests} requests per run",
            times[times.len() / 2],
            times[0],
            times[times.len() - 1]
        );
        sim.shutdown().await;
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
