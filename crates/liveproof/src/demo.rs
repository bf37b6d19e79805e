//! `liveproof demo`: the "merged but never deployed" story on the built-in simulator, verified
//! through the same code path as a real cluster (kube client, kubeconfig, REST). The report
//! crate tells the story around the two reports ([`DemoOutcome`]).

use jiff::{SignedDuration, Timestamp};
use liveproof_evidence::{
    Change, ManifestExpectation, SecretRefExpectation, Target, TargetKind, Verdict,
};
use liveproof_gather::live::ClusterOptions;
use liveproof_report::{DemoOutcome, TextStyle};
use liveproof_sim::{SimHandle, Simulator};
use serde_json::{json, Value};

use crate::config::{Source, VerifyConfig};

/// The story's namespace, images and names, for tests that replay it.
pub const NS: &str = "apps";
pub const OLD_IMAGE: &str = "ghcr.io/acme/inventory:1.3.9";
pub const NEW_IMAGE: &str = "ghcr.io/acme/inventory:1.4.0";
const OLD_HASH: &str = "6b7f9c8d4";
const NEW_HASH: &str = "7c5d8f9b6";

/// The merge commit of the story: the GitOps source has fetched it; nothing else moved.
pub const COMMIT: &str = "3f2c1ab9d04e5c7a8b6f1e2d3c4b5a69788f9e0d";

/// Plays the story on a simulator and returns both reports.
pub async fn play(style: TextStyle) -> anyhow::Result<DemoOutcome> {
    // Whole seconds, as the API server writes times.
    let now = Timestamp::from_second(Timestamp::now().as_second())?;
    let merged = now - SignedDuration::from_secs(90);
    let four_days_ago = now - SignedDuration::from_hours(96);

    let sim = Simulator::new()
        .with_objects(story_before(four_days_ago))
        .start()
        .await?;
    let dir = tempfile::tempdir()?;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, NS)?;

    let expectations = ["secretKeyRef"]
        .iter()
        .filter_map(|e| ManifestExpectation::parse(e).ok())
        .collect();
    let change = Change {
        since: Some(merged),
        commit: Some(COMMIT[..7].to_string()),
        manifest: expectations,
        secret_refs: SecretRefExpectation::parse("inventory-db/password")
            .into_iter()
            .collect(),
        ..Change::default()
    };
    let source = Source::Live(ClusterOptions {
        kubeconfig: Some(kubeconfig),
        context: None,
        namespace: Some(NS.to_string()),
        request_timeout: None,
        deadline: None,
        ..ClusterOptions::default()
    });
    let config = VerifyConfig {
        style,
        ..VerifyConfig::new(
            vec![Target::new(TargetKind::HelmRelease, Some(NS), "inventory")],
            change,
            source,
        )
    };
    let command = format!(
        "liveproof verify helmrelease/inventory -n {NS} --commit {} \\\n    --since {merged} \\\n    --expect secretKeyRef --expect-secret-ref inventory-db/password",
        &COMMIT[..7]
    );
    let before = crate::verifier::produce(&config).await?;
    reconcile(&sim, Timestamp::from_second(Timestamp::now().as_second())?);
    let after = crate::verifier::produce(&config).await?;
    sim.shutdown().await;
    let as_expected = before.verdict == Verdict::NotLive && after.verdict == Verdict::Live;
    Ok(DemoOutcome {
        schema: "liveproof/demo/v1",
        command,
        before,
        after,
        as_expected,
    })
}

/// The pod template the chart renders: 0.4.2 (old image) reads the database password from an
/// inline value; 0.4.3 (new image) from the Secret, by reference.
fn template(image: &str, hash: Option<&str>) -> Value {
    let mut labels = json!({"app": "inventory"});
    if let Some(h) = hash {
        labels["pod-template-hash"] = json!(h);
    }
    let mut env = vec![json!({"name": "DATABASE_HOST", "value": "db.apps.svc"})];
    if image == NEW_IMAGE {
        env.push(json!({"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "inventory-db", "key": "password"}}}));
    }
    json!({
        "metadata": {"labels": labels},
        "spec": {"containers": [{
            "name": "app",
            "image": image,
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "env": env
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

/// The Flux source: it has fetched the merge commit (that part worked).
fn git_repository() -> Value {
    json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": "acmeco-apps", "namespace": NS, "generation": 1},
        "spec": {"url": "https://git.acme.example/acmeco/apps.git", "interval": "1m", "ref": {"branch": "main"}},
        "status": {"observedGeneration": 1,
                   "artifact": {"revision": format!("main@sha1:{COMMIT}"), "path": "gitrepository/apps/acmeco-apps/latest.tar.gz"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                                   "message": format!("stored artifact for revision 'main@sha1:{COMMIT}'")}]}
    })
}

/// The HelmRelease as helm-controller leaves it after handling `version` of the chart at `at`.
fn helmrelease(revision: i64, chart_version: &str, at: Timestamp) -> Value {
    let at = at.to_string();
    json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": "inventory", "namespace": NS, "generation": 7},
        "spec": {"interval": "5m", "releaseName": "inventory",
                 "chart": {"spec": {"chart": "./charts/inventory", "reconcileStrategy": "ChartVersion",
                                    "sourceRef": {"kind": "GitRepository", "name": "acmeco-apps"}}}},
        "status": {
            "observedGeneration": 7,
            "lastAttemptedRevision": chart_version,
            "history": [{"name": "inventory", "namespace": NS, "version": revision, "chartName": "inventory",
                         "chartVersion": chart_version, "status": "deployed", "lastDeployed": at}],
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "UpgradeSucceeded", "lastTransitionTime": at,
                 "message": format!("Helm upgrade succeeded for release {NS}/inventory.v{revision} with chart inventory@{chart_version}")},
                {"type": "Released", "status": "True", "reason": "UpgradeSucceeded", "lastTransitionTime": at,
                 "message": format!("Helm upgrade succeeded for release {NS}/inventory.v{revision} with chart inventory@{chart_version}")}
            ]
        }
    })
}

/// Release storage, encoded as Helm encodes it (JSON, gzip, base64, then the Secret's base64).
fn release_secret(
    revision: i64,
    chart_version: &str,
    image: &str,
    status: &str,
    at: Timestamp,
) -> Value {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "inventory", "namespace": NS, "labels": {"app": "inventory"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "inventory"}}, "template": template(image, None)}
    });
    let deployment_yaml = serde_norway::to_string(&deployment).unwrap_or_default();
    let manifest = format!(
        "---\n# Source: inventory/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: inventory\nspec:\n  selector:\n    app: inventory\n  ports:\n  - port: 80\n    targetPort: 8080\n---\n# Source: inventory/templates/deployment.yaml\n{deployment_yaml}"
    );
    let at = at.to_string();
    liveproof_helm::encode_secret(&json!({
        "name": "inventory", "namespace": NS, "version": revision,
        "info": {"first_deployed": "2025-12-06T09:13:44Z", "last_deployed": at, "deleted": "",
                 "description": "Upgrade complete", "status": status},
        "chart": {"metadata": {"name": "inventory", "version": chart_version, "apiVersion": "v2",
                               "appVersion": image.rsplit(':').next().unwrap_or_default()}},
        "config": {"replicas": 2},
        "manifest": manifest,
        "hooks": []
    }))
}

/// The cluster before the fix: HelmRelease Ready from four days ago, release v34 (chart 0.4.2),
/// the Deployment on the old template, its pods started at `started`.
pub fn story_before(started: Timestamp) -> Vec<Value> {
    let released = started - SignedDuration::from_secs(25);
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        git_repository(),
        helmrelease(34, "0.4.2", released),
        release_secret(34, "0.4.2", OLD_IMAGE, "deployed", released),
        deployment(OLD_IMAGE, 4),
        replicaset(OLD_IMAGE, OLD_HASH, 4, 2),
        pod(OLD_IMAGE, OLD_HASH, "x2k4p", started),
        pod(OLD_IMAGE, OLD_HASH, "m8q7z", started),
    ]
}

/// Plays Flux, Helm, the Deployment controller and the kubelet: what the version bump leaves
/// behind.
pub fn reconcile(sim: &SimHandle, now: Timestamp) {
    let released = now - SignedDuration::from_secs(20);
    if let Some(mut old) = sim.get("v1", "Secret", Some(NS), "sh.helm.release.v1.inventory.v34") {
        // Helm marks the previous revision superseded (the label; the JSON inside is kept).
        old["metadata"]["labels"]["status"] = json!("superseded");
        sim.apply(old);
    }
    sim.apply(release_secret(35, "0.4.3", NEW_IMAGE, "deployed", released));
    sim.apply(helmrelease(35, "0.4.3", released));
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
