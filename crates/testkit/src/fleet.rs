//! Clusters at scale, for the benchmarks: N Deployments of M pods each (with their
//! ReplicaSets), live for a change at [`CHANGE_AT`], labelled
//! `app.kubernetes.io/part-of=bench` so `-l` selects them all.

use serde_json::{json, Value};

/// The change time the workloads' pods started after.
pub const CHANGE_AT: &str = "2026-07-12T10:00:00Z";

/// The image every workload runs: `--image` with it states the change for all of them.
pub const IMAGE: &str = "registry.local/bench-app:1";

/// The label every workload carries: `-l app.kubernetes.io/part-of=bench` selects them all.
pub const SELECTOR: &str = "app.kubernetes.io/part-of=bench";

/// `deployments` Deployments named `svc-0`… in `namespace`, each with one ReplicaSet and
/// `pods` running, ready pods started after [`CHANGE_AT`] (or before it with `stale`: then
/// nothing is live, and `--wait` has to watch).
pub fn deployments(namespace: &str, deployments: usize, pods: usize, stale: bool) -> Vec<Value> {
    let started = if stale {
        "2026-07-12T09:00:00Z"
    } else {
        "2026-07-12T10:05:00Z"
    };
    let mut out = Vec::with_capacity(deployments * (pods + 2));
    for d in 0..deployments {
        let name = format!("svc-{d}");
        let uid = format!("{namespace}-uid-{d}");
        let image = IMAGE;
        let template = json!({"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app", "image": image}]}});
        let mut rs_template = template.clone();
        rs_template["metadata"]["labels"]["pod-template-hash"] = json!("h1");
        out.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "uid": uid, "generation": 1,
                         "labels": {"app.kubernetes.io/part-of": "bench"}},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name}}, "template": template},
            "status": {"observedGeneration": 1, "replicas": pods, "updatedReplicas": pods,
                       "readyReplicas": pods, "availableReplicas": pods}}));
        out.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("{name}-h1"), "namespace": namespace,
                         "uid": format!("{uid}-rs"),
                         "labels": {"app": name, "pod-template-hash": "h1"},
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                              "uid": uid, "controller": true}]},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name, "pod-template-hash": "h1"}},
                     "template": rs_template}}));
        for p in 0..pods {
            out.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{name}-h1-{p}"), "namespace": namespace,
                             "labels": {"app": name, "pod-template-hash": "h1"},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                  "name": format!("{name}-h1"), "uid": format!("{uid}-rs"),
                                                  "controller": true}]},
                "spec": {"containers": [{"name": "app", "image": image}]},
                "status": {"phase": "Running", "startTime": started,
                           "conditions": [{"type": "Ready", "status": "True"}],
                           "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                                  "image": image, "imageID": "",
                                                  "state": {"running": {"startedAt": started}}}]}}));
        }
    }
    out
}

/// A kubeconfig naming each `(context, server URL)` as a cluster of its own (token auth, as
/// the simulator takes), every context in `namespace`; the first is the current one.
pub fn kubeconfig(contexts: &[(&str, &str)], namespace: &str) -> String {
    let mut clusters = String::new();
    let mut named = String::new();
    for (context, server) in contexts {
        clusters.push_str(&format!(
            "- name: {context}\n  cluster:\n    server: {server}\n"
        ));
        named.push_str(&format!(
            "- name: {context}\n  context:\n    cluster: {context}\n    user: sim\n    namespace: {namespace}\n"
        ));
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}contexts:\n{named}current-context: {}\nusers:\n- name: sim\n  user:\n    token: liveproof-sim\n",
        contexts.first().map(|c| c.0).unwrap_or_default()
    )
}

/// `values` as one snapshot, what the judge reads.
pub fn observed(values: &[Value]) -> liveproof_evidence::Observed {
    let mut observed = liveproof_evidence::Observed::default();
    for v in values {
        observed.add_value(v.clone(), "test").expect("object");
    }
    observed
}

/// What a watch event on `v` (an object of `kind`) touched, for the incremental judge.
pub fn touched(kind: liveproof_evidence::ObjectKind, v: &Value) -> liveproof_evidence::ObjectRef {
    let text = |field: &str| v["metadata"][field].as_str().expect(field).to_string();
    liveproof_evidence::ObjectRef {
        kind,
        namespace: text("namespace"),
        name: text("name"),
        labels: vec![serde_json::from_value(v["metadata"]["labels"].clone()).unwrap_or_default()],
    }
}
