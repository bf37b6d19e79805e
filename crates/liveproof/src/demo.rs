//! `liveproof demo`: the "merged but never deployed" story on the built-in simulator, verified
//! through the same code path as a real cluster (kube client, kubeconfig, REST).

use std::io::Write;

use jiff::{SignedDuration, Timestamp};
use liveproof_evidence::{Change, ExpectedImage, Target, TargetKind, Verdict};
use liveproof_gather::live::ClusterOptions;
use liveproof_report::{Format, TextStyle};
use liveproof_sim::{SimHandle, Simulator};
use serde_json::{json, Value};

use crate::config::{Source, VerifyConfig};

/// The story's namespace, images and names, for tests that replay it.
pub const NS: &str = "apps";
pub const OLD_IMAGE: &str = "ghcr.io/acme/inventory:1.3.9";
pub const NEW_IMAGE: &str = "ghcr.io/acme/inventory:1.4.0";
const OLD_HASH: &str = "6b7f9c8d4";
const NEW_HASH: &str = "7c5d8f9b6";

pub async fn run(format: Format, style: TextStyle, out: &mut dyn Write) -> anyhow::Result<u8> {
    // Whole seconds, as the API server writes times.
    let now = Timestamp::now().round(jiff::Unit::Second)?;
    let merged = now - SignedDuration::from_secs(90);
    let four_days_ago = now - SignedDuration::from_hours(96);

    let sim = Simulator::new()
        .with_objects(story_before(four_days_ago))
        .start()
        .await?;
    let dir = tempfile::tempdir()?;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, NS)?;

    let config = VerifyConfig {
        targets: vec![Target::new(TargetKind::Deployment, Some(NS), "inventory")],
        change: Change {
            since: Some(merged),
            images: ExpectedImage::parse(NEW_IMAGE).into_iter().collect(),
            ..Change::default()
        },
        source: Source::Live(ClusterOptions {
            kubeconfig: Some(kubeconfig),
            context: None,
            namespace: Some(NS.to_string()),
        }),
        all_namespaces: false,
        namespace: Some(NS.to_string()),
        wait: None,
        format,
        style,
        since_origin: None,
        max_release_size: 64 * 1024 * 1024,
        repo: std::path::PathBuf::from("."),
    };
    let command =
        format!("liveproof verify apps/deployment/inventory --since {merged} --image {NEW_IMAGE}");

    writeln!(
        out,
        "liveproof demo — the deploy that merged but never deployed\n\n\
         The PR moving inventory to {NEW_IMAGE} merged at {merged}.\n\
         CI is green, the GitOps controller says it succeeded, `kubectl rollout status` returns at\n\
         once. But the controller never reconciled: the Deployment still runs {OLD_IMAGE},\n\
         in pods started four days ago. (A simulated cluster at {}; nothing leaves this machine.)\n\n\
         $ {command}\n",
        sim.url()
    )?;
    let before = crate::verify::run(&config, out).await?;

    writeln!(
        out,
        "\nNow the controller reconciles: a new ReplicaSet, new pods started just now, the old ones gone.\n\n$ {command}\n"
    )?;
    reconcile(&sim, Timestamp::now().round(jiff::Unit::Second)?);
    let after = crate::verify::run(&config, out).await?;

    sim.shutdown().await;
    let as_expected = before == Verdict::NotLive.exit_code() && after == Verdict::Live.exit_code();
    writeln!(
        out,
        "\n{}",
        if as_expected {
            "demo: not_live before the reconcile, live after it — as it should be."
        } else {
            "demo: the verdicts did not come out as the story says they should (see above)."
        }
    )?;
    Ok(if as_expected { 0 } else { 1 })
}

fn template(image: &str, hash: Option<&str>) -> Value {
    let mut labels = json!({"app": "inventory"});
    if let Some(h) = hash {
        labels["pod-template-hash"] = json!(h);
    }
    json!({
        "metadata": {"labels": labels},
        "spec": {"containers": [{
            "name": "app",
            "image": image,
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "inventory-db", "key": "password"}}}]
        }]}
    })
}

fn deployment(image: &str, generation: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "inventory", "namespace": NS, "uid": "5b0c3c4e-1d2a-4f57-9a51-0f3c1d1e2a01",
                     "generation": generation, "labels": {"app": "inventory"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "inventory"}},
                 "strategy": {"type": "RollingUpdate"}, "template": template(image, None)},
        "status": {"observedGeneration": generation, "replicas": 2, "updatedReplicas": 2,
                   "readyReplicas": 2, "availableReplicas": 2,
                   "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                                  {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    })
}

fn replicaset(image: &str, hash: &str, revision: u32, replicas: i32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": format!("inventory-{hash}"), "namespace": NS, "generation": 1,
                     "labels": {"app": "inventory", "pod-template-hash": hash},
                     "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "inventory",
                                          "uid": "5b0c3c4e-1d2a-4f57-9a51-0f3c1d1e2a01", "controller": true}]},
        "spec": {"replicas": replicas,
                 "selector": {"matchLabels": {"app": "inventory", "pod-template-hash": hash}},
                 "template": template(image, Some(hash))},
        "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
    })
}

fn pod(image: &str, hash: &str, suffix: &str, started: Timestamp) -> Value {
    let started = started.to_string();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("inventory-{hash}-{suffix}"), "namespace": NS,
                     "labels": {"app": "inventory", "pod-template-hash": hash},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": format!("inventory-{hash}"), "uid": format!("rs-{hash}"), "controller": true}]},
        "spec": template(image, Some(hash))["spec"].clone(),
        "status": {"phase": "Running", "startTime": started,
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": started}],
                   "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": image,
                                          "imageID": format!("{image}@sha256:{}", hash.repeat(7).get(..64).unwrap_or_default()),
                                          "started": true,
                                          "state": {"running": {"startedAt": started}}}]}
    })
}

/// The cluster before the reconcile: inventory on the old image, in pods started at `started`.
pub fn story_before(started: Timestamp) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        deployment(OLD_IMAGE, 4),
        replicaset(OLD_IMAGE, OLD_HASH, 4, 2),
        pod(OLD_IMAGE, OLD_HASH, "x2k4p", started),
        pod(OLD_IMAGE, OLD_HASH, "m8q7z", started),
    ]
}

/// Plays the Deployment controller and the kubelet: what a reconcile leaves behind.
pub fn reconcile(sim: &SimHandle, now: Timestamp) {
    let stored = sim.apply(deployment(NEW_IMAGE, 4));
    let generation = stored
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(5);
    sim.apply(deployment(NEW_IMAGE, generation));
    sim.apply(replicaset(NEW_IMAGE, NEW_HASH, 5, 2));
    sim.apply(pod(NEW_IMAGE, NEW_HASH, "r5t2w", now));
    sim.apply(pod(NEW_IMAGE, NEW_HASH, "h4n9c", now));
    for suffix in ["x2k4p", "m8q7z"] {
        sim.delete(
            "v1",
            "Pod",
            Some(NS),
            &format!("inventory-{OLD_HASH}-{suffix}"),
        );
    }
    sim.apply(replicaset(OLD_IMAGE, OLD_HASH, 4, 0));
}
