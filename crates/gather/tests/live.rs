//! The live gather against the API simulator: what is read, how many requests it takes, and
//! what happens when the cluster refuses or is not there.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::resolve_targets;
use liveproof_evidence::{Observed, ResourceKind, Target, TargetKind};
use liveproof_gather::{Cluster, ClusterOptions, GatherError};
use liveproof_testkit::SimCluster;
use serde_json::{json, Value};

fn deployment(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "generation": 2},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": format!("ghcr.io/acme/{name}:1.4.0")}]}
            }
        }
    })
}

fn replicaset(ns: &str, app: &str, hash: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{app}-{hash}"), "namespace": ns,
            "labels": {"app": app, "pod-template-hash": hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app,
                                  "uid": "00000000-0000-0000-0000-000000000001", "controller": true}]
        },
        "spec": {
            "selector": {"matchLabels": {"app": app, "pod-template-hash": hash}},
            "template": {
                "metadata": {"labels": {"app": app, "pod-template-hash": hash}},
                "spec": {"containers": [{"name": "app", "image": "ghcr.io/acme/app:1"}]}
            }
        }
    })
}

fn pod(ns: &str, app: &str, hash: &str, suffix: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{app}-{hash}-{suffix}"), "namespace": ns,
            "labels": {"app": app, "pod-template-hash": hash}
        },
        "spec": {"containers": [{"name": "app", "image": "ghcr.io/acme/app:1"}]}
    })
}

/// The story: `apps/inventory` rolled from `old` to `new`; one pod of the old ReplicaSet
/// is still there; an unrelated `billing` pod shares the namespace.
fn inventory_story() -> Vec<Value> {
    vec![
        deployment("apps", "inventory"),
        replicaset("apps", "inventory", "old"),
        replicaset("apps", "inventory", "new"),
        pod("apps", "inventory", "new", "a"),
        pod("apps", "inventory", "new", "b"),
        pod("apps", "inventory", "old", "c"),
        pod("apps", "billing", "x", "z"),
    ]
}

/// The simulator (with its kubeconfig) and the gatherer connected to it.
struct Harness {
    kube: SimCluster,
    cluster: Cluster,
}

async fn harness(objects: Vec<Value>) -> Harness {
    let kube = SimCluster::start(objects, "apps").await;
    let cluster = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(kube.kubeconfig.clone()),
        context: None,
        namespace: None,
        request_timeout: None,
        deadline: None,
        ..ClusterOptions::default()
    })
    .await
    .expect("connects");
    Harness { kube, cluster }
}

fn deploy(name: &str) -> Target {
    Target::new(TargetKind::Deployment, None, name)
}

fn pod_names(observed: &Observed) -> Vec<&str> {
    observed
        .pods
        .iter()
        .filter_map(|p| p.metadata.name.as_deref())
        .collect()
}

#[tokio::test]
async fn gathers_the_workload_its_replicasets_its_pods_and_its_routing_in_five_requests() {
    let h = harness(inventory_story()).await;
    assert_eq!(h.cluster.default_namespace(), "apps", "from the context");
    assert_eq!(h.cluster.request_count(), 0, "connect sends nothing");

    let observed = h
        .cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect("gathers");

    assert_eq!(observed.workloads.of::<Deployment>().len(), 1);
    assert_eq!(observed.replicasets.len(), 2);
    assert_eq!(
        pod_names(&observed),
        ["inventory-new-a", "inventory-new-b", "inventory-old-c"]
    );
    assert!(observed.denied.is_empty(), "{:?}", observed.denied);
    assert!(observed.is_complete("apps", ResourceKind::ReplicaSet));
    assert!(observed.is_complete("apps", ResourceKind::Pod));
    assert!(!observed.is_complete("apps", ResourceKind::ControllerRevision));

    assert!(observed.is_complete("apps", ResourceKind::Service));
    assert!(observed.is_complete("apps", ResourceKind::EndpointSlice));

    // 1 GET + 1 LIST of ReplicaSets + 1 LIST of pods + 1 LIST each of Services and
    // EndpointSlices (traffic_current), as both sides count it.
    assert_eq!(h.cluster.request_count(), 5);
    let log = h.kube.sim.requests();
    assert_eq!(log.total(), 5, "{:?}", log.snapshot());
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/services"), 1);
    assert_eq!(
        log.count(
            "list",
            "/apis/discovery.k8s.io/v1/namespaces/apps/endpointslices"
        ),
        1
    );
    assert_eq!(
        log.count("get", "/apis/apps/v1/namespaces/apps/deployments/inventory"),
        1
    );
    assert_eq!(
        log.count("list", "/apis/apps/v1/namespaces/apps/replicasets"),
        1
    );
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/pods"), 1);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn two_deployments_in_one_namespace_are_a_get_each_and_a_pod_list_per_selector() {
    let mut objects = inventory_story();
    objects.push(deployment("apps", "billing"));
    let h = harness(objects).await;
    let targets = [deploy("inventory"), deploy("billing")];
    let observed = h.cluster.gather(&targets, false).await.expect("gathers");

    assert_eq!(observed.workloads.of::<Deployment>().len(), 2);
    let log = h.kube.sim.requests();
    assert_eq!(
        log.count("get", "/apis/apps/v1/namespaces/apps/deployments/"),
        2
    );
    assert_eq!(
        log.count("list", "/apis/apps/v1/namespaces/apps/replicasets"),
        1
    );
    // One pod LIST per distinct selector, never one GET per pod.
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/pods"), 2);
    assert_eq!(log.count("get", "/api/v1/namespaces/apps/pods/"), 0);
    // And one LIST each of Services and EndpointSlices for the namespace.
    assert_eq!(h.cluster.request_count(), 7);
    h.kube.sim.shutdown().await;
}

/// From three targets of a kind in a namespace, the namespace is listed once per kind
/// (paginated) and only what the targets name or select is kept: three requests for three
/// Deployments as for three thousand.
#[tokio::test]
async fn three_deployments_in_one_namespace_are_one_list_per_kind() {
    let mut objects = inventory_story();
    objects.push(deployment("apps", "billing"));
    objects.push(deployment("apps", "search"));
    objects.push(deployment("apps", "stranger"));
    objects.push(pod("apps", "stranger", "s", "1"));
    let h = harness(objects).await;
    let targets = [deploy("inventory"), deploy("billing"), deploy("search")];
    let observed = h.cluster.gather(&targets, false).await.expect("gathers");

    let mut names: Vec<&str> = observed
        .workloads
        .of::<Deployment>()
        .iter()
        .filter_map(|d| d.metadata.name.as_deref())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["billing", "inventory", "search"],
        "not the stranger"
    );
    assert_eq!(
        pod_names(&observed),
        [
            "billing-x-z",
            "inventory-new-a",
            "inventory-new-b",
            "inventory-old-c"
        ],
        "the pods the targets select, not the stranger's"
    );
    assert!(observed.is_complete("apps", ResourceKind::Pod));
    let log = h.kube.sim.requests();
    assert_eq!(
        log.count("list", "/apis/apps/v1/namespaces/apps/deployments"),
        1,
        "{:?}",
        log.snapshot()
    );
    assert_eq!(
        log.count("get", "/apis/apps/v1/namespaces/apps/deployments/"),
        0
    );
    assert_eq!(
        log.count("list", "/apis/apps/v1/namespaces/apps/replicasets"),
        1
    );
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/pods"), 1);
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/services"), 1);
    assert_eq!(h.cluster.request_count(), 5);

    // The same three, gathered one by one, are read into the same objects.
    let alone = h
        .cluster
        .clone()
        .with_batch_at(usize::MAX)
        .gather(&targets, false)
        .await
        .expect("gathers");
    assert_eq!(pod_names(&alone), pod_names(&observed));
    assert_eq!(
        alone.workloads.of::<Deployment>(),
        observed.workloads.of::<Deployment>()
    );
    assert_eq!(alone.replicasets, observed.replicasets);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_missing_target_is_absent_and_authoritatively_so() {
    let h = harness(inventory_story()).await;
    let observed = h
        .cluster
        .gather(
            &[Target::new(TargetKind::Deployment, Some("apps"), "gone")],
            false,
        )
        .await
        .expect("a 404 is not an error");
    assert!(observed.workloads.of::<Deployment>().is_empty());
    assert!(observed.is_complete("apps", ResourceKind::Deployment));
    assert!(observed.pods.is_empty() && observed.replicasets.is_empty());
    assert_eq!(h.cluster.request_count(), 1, "nothing to follow");
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_refused_pod_list_is_recorded_not_an_error() {
    let h = harness(inventory_story()).await;
    h.kube.sim.deny("list", "pods", Some("apps"));
    let observed = h
        .cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect("RBAC denial is evidence, not an error");
    assert!(observed.pods.is_empty());
    assert!(!observed.is_complete("apps", ResourceKind::Pod));
    let denied = observed
        .denial("apps", ResourceKind::Pod)
        .expect("denial recorded");
    assert_eq!(denied.verb, "list");
    assert_eq!(denied.namespace.as_deref(), Some("apps"));
    // The rest was still read.
    assert_eq!(observed.workloads.of::<Deployment>().len(), 1);
    assert_eq!(observed.replicasets.len(), 2);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_refused_workload_get_is_recorded() {
    let h = harness(inventory_story()).await;
    h.kube.sim.deny("get", "deployments", None);
    let observed = h
        .cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect("gathers");
    let denied = observed
        .denial("apps", ResourceKind::Deployment)
        .expect("denial recorded");
    assert_eq!(denied.verb, "get");
    assert!(!observed.is_complete("apps", ResourceKind::Deployment));
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn transient_failures_are_retried_and_counted() {
    let h = harness(inventory_story()).await;
    h.kube.sim.faults().fail_next(2, 503, None);
    let observed = h
        .cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect("retried past two 503s");
    assert_eq!(observed.pods.len(), 3);
    assert_eq!(h.cluster.request_count(), 7, "5 reads + 2 retries");

    h.kube.sim.faults().fail_next(1, 429, Some(1));
    let started = std::time::Instant::now();
    h.cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect("retried after Retry-After");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After honoured"
    );

    // Bounded: a server that keeps failing is an error, after a few tries.
    h.kube.sim.faults().fail_next(100, 500, None);
    let before = h.cluster.request_count();
    let err = h
        .cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect_err("keeps failing");
    assert_eq!(h.cluster.request_count() - before, 4, "1 try + 3 retries");
    assert!(matches!(err, GatherError::Api { code: 500, .. }), "{err:?}");
    assert!(
        err.to_string().contains("Deployment apps/inventory"),
        "{err}"
    );
    h.kube.sim.faults().clear();
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn an_unreachable_cluster_is_an_error_naming_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    // Port 1 on loopback: nothing listens there.
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1\n\
         contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n\
         current-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .expect("write");
    let cluster = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(kubeconfig),
        context: None,
        namespace: Some("apps".into()),
        request_timeout: None,
        deadline: None,
        ..ClusterOptions::default()
    })
    .await
    .expect("connect sends nothing");
    assert_eq!(cluster.default_namespace(), "apps", "-n wins");
    let err = cluster
        .gather(&[deploy("inventory")], false)
        .await
        .expect_err("unreachable");
    let msg = err.to_string();
    assert!(matches!(err, GatherError::Unreachable { .. }), "{err:?}");
    assert!(msg.contains("http://127.0.0.1:1"), "{msg}");
    assert!(
        err.hint()
            .is_some_and(|h| h.contains("kubectl cluster-info")),
        "{msg}"
    );
}

#[tokio::test]
async fn a_bad_kubeconfig_or_context_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing");
    let err = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(missing.clone()),
        ..ClusterOptions::default()
    })
    .await
    .expect_err("missing kubeconfig");
    assert!(
        err.to_string().contains(&missing.display().to_string()),
        "{err}"
    );

    let h = harness(vec![]).await;
    let err = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(h.kube.kubeconfig.clone()),
        context: Some("prod".into()),
        namespace: None,
        request_timeout: None,
        deadline: None,
        ..ClusterOptions::default()
    })
    .await
    .expect_err("unknown context");
    assert!(err.to_string().contains("prod"), "{err}");
    assert!(err.hint().is_some(), "{err}");
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn all_namespaces_finds_the_target_in_every_namespace() {
    let mut objects = inventory_story();
    objects.push(deployment("staging", "inventory"));
    objects.push(pod("staging", "inventory", "s", "a"));
    let h = harness(objects).await;
    let targets = [deploy("inventory")];
    let observed = h.cluster.gather(&targets, true).await.expect("gathers");
    assert_eq!(observed.workloads.of::<Deployment>().len(), 2);
    assert_eq!(
        pod_names(&observed),
        [
            "inventory-new-a",
            "inventory-new-b",
            "inventory-old-c",
            "inventory-s-a"
        ]
    );
    let resolved = resolve_targets(&observed, &targets, h.cluster.default_namespace(), true);
    assert_eq!(
        resolved,
        [
            Target::new(TargetKind::Deployment, Some("apps"), "inventory"),
            Target::new(TargetKind::Deployment, Some("staging"), "inventory"),
        ]
    );
    let log = h.kube.sim.requests();
    assert_eq!(log.count("list", "/apis/apps/v1/deployments"), 1);
    // 1 LIST across namespaces + per namespace 1 ReplicaSet LIST, 1 pod LIST, 1 Service LIST
    // and 1 EndpointSlice LIST.
    assert_eq!(h.cluster.request_count(), 9, "{:?}", log.snapshot());

    // Found nowhere: absent, authoritatively, in every namespace (not only the default one).
    let observed = h
        .cluster
        .gather(&[deploy("nowhere")], true)
        .await
        .expect("gathers");
    assert!(observed.is_complete(liveproof_evidence::ALL_NAMESPACES, ResourceKind::Deployment));
    assert_eq!(
        resolve_targets(&observed, &[deploy("nowhere")], "apps", true),
        [Target::new(TargetKind::Deployment, Some(""), "nowhere")]
    );
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn watch_yields_a_fresh_snapshot_when_a_pod_appears() {
    let h = harness(inventory_story()).await;
    let mut snapshots = h
        .cluster
        .watch(&[deploy("inventory")], false)
        .await
        .expect("watch starts");
    let first = snapshots
        .next()
        .await
        .expect("initial snapshot")
        .expect("ok");
    assert_eq!(first.pods.len(), 3);

    h.kube.sim.apply(pod("apps", "inventory", "new", "d"));
    h.kube.sim.apply(pod("apps", "billing", "x", "y"));
    let updated = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(snapshot) = snapshots.next().await {
            let snapshot = snapshot.expect("no watch error");
            if snapshot.pods.len() == 4 {
                return Some(snapshot);
            }
            assert!(snapshot.pods.len() <= 4, "{:?}", pod_names(&snapshot));
        }
        None
    })
    .await
    .expect("an update within the timeout")
    .expect("stream still open");
    assert!(pod_names(&updated).contains(&"inventory-new-d"));
    assert!(!pod_names(&updated).contains(&"billing-x-y"));
    assert!(updated.is_complete("apps", ResourceKind::Pod));

    // A deleted pod leaves the next snapshot.
    h.kube
        .sim
        .delete("v1", "Pod", Some("apps"), "inventory-old-c")
        .expect("deleted");
    let after_delete = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(snapshot) = snapshots.next().await {
            let snapshot = snapshot.expect("no watch error");
            if !pod_names(&snapshot).contains(&"inventory-old-c") {
                return Some(snapshot);
            }
        }
        None
    })
    .await
    .expect("an update within the timeout")
    .expect("stream still open");
    assert_eq!(after_delete.pods.len(), 3);
    // Watches, not polling: no repeated GETs of the deployment.
    assert_eq!(
        h.kube
            .sim
            .requests()
            .count("get", "/apis/apps/v1/namespaces/apps/deployments/inventory"),
        1
    );
    drop(snapshots);
    h.kube.sim.shutdown().await;
}

// ---- Helm and GitOps targets ----

fn target(ns: &str, kind: TargetKind, name: &str) -> Target {
    Target::new(kind, Some(ns), name)
}

/// A Helm release revision's storage Secret, as Helm writes it, stored in `storage_ns`.
fn release_secret(
    storage_ns: &str,
    release_ns: &str,
    name: &str,
    version: i64,
    manifest: &str,
) -> Value {
    let mut secret = liveproof_helm::encode_secret(&json!({
        "name": name, "namespace": release_ns, "version": version,
        "info": {"status": "deployed", "last_deployed": "2026-07-12T10:05:00Z"},
        "chart": {"metadata": {"name": name, "version": "1.0.0"}},
        "manifest": manifest,
    }));
    secret["metadata"]["namespace"] = json!(storage_ns);
    secret
}

const SERVICE_ONLY: &str =
    "---\n# Source: x/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: x\n";

fn helmrelease(ns: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": ns, "generation": 1},
        "spec": spec,
    })
}

fn git_repository(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"url": "https://example.invalid/platform.git", "interval": "1m"},
        "status": {"artifact": {"revision": "main@sha1:3f2c1ab"}}
    })
}

fn application(ns: &str, name: &str, resources: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"destination": {"namespace": "apps"}},
        "status": {"resources": resources, "sync": {"revision": "3f2c1ab"}}
    })
}

fn other_names(observed: &Observed, kind: ResourceKind) -> Vec<String> {
    observed
        .others_of(kind)
        .map(|o| {
            format!(
                "{}/{}",
                o["metadata"]["namespace"].as_str().unwrap_or("?"),
                o["metadata"]["name"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

#[tokio::test]
async fn a_release_target_lists_exactly_its_storage_in_two_requests() {
    let h = harness(vec![
        release_secret("apps", "apps", "inventory", 33, SERVICE_ONLY),
        release_secret("apps", "apps", "inventory", 34, SERVICE_ONLY),
        release_secret("apps", "apps", "billing", 1, SERVICE_ONLY),
    ])
    .await;
    let observed = h
        .cluster
        .gather(
            &[Target::new(TargetKind::Release, None, "inventory")],
            false,
        )
        .await
        .expect("gathers");
    assert_eq!(
        other_names(&observed, ResourceKind::Secret),
        [
            "apps/sh.helm.release.v1.inventory.v33",
            "apps/sh.helm.release.v1.inventory.v34"
        ]
    );
    assert_eq!(observed.others.len(), 2);
    assert!(observed.is_complete("apps", ResourceKind::Secret));
    assert!(observed.is_complete("apps", ResourceKind::ConfigMap));
    let log = h.kube.sim.requests();
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/secrets"), 1);
    assert_eq!(log.count("list", "/api/v1/namespaces/apps/configmaps"), 1);
    assert_eq!(h.cluster.request_count(), 2, "{:?}", log.snapshot());
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_helmrelease_brings_its_git_repository_and_the_release_it_manages() {
    let chart = json!({"spec": {"chart": "./charts/x", "sourceRef": {"kind": "GitRepository", "name": "platform"}}});
    let h = harness(vec![
        helmrelease("flux", "inventory", json!({"chart": chart})),
        helmrelease(
            "flux",
            "payments",
            json!({"chart": chart, "releaseName": "pay"}),
        ),
        helmrelease(
            "flux",
            "search",
            json!({"chart": chart, "targetNamespace": "apps"}),
        ),
        git_repository("flux", "platform"),
        release_secret("flux", "flux", "inventory", 3, SERVICE_ONLY),
        release_secret("flux", "flux", "pay", 1, SERVICE_ONLY),
        // Stored in the HelmRelease's namespace, installed into the target namespace.
        release_secret("flux", "apps", "apps-search", 2, SERVICE_ONLY),
        // What wrong naming rules would pick.
        release_secret("flux", "flux", "payments", 1, SERVICE_ONLY),
        release_secret("flux", "flux", "search", 1, SERVICE_ONLY),
        release_secret("apps", "apps", "apps-search", 1, SERVICE_ONLY),
    ])
    .await;
    let targets = [
        target("flux", TargetKind::HelmRelease, "inventory"),
        target("flux", TargetKind::HelmRelease, "payments"),
        target("flux", TargetKind::HelmRelease, "search"),
    ];
    let observed = h.cluster.gather(&targets, false).await.expect("gathers");
    assert_eq!(
        other_names(&observed, ResourceKind::HelmRelease),
        ["flux/inventory", "flux/payments", "flux/search"]
    );
    assert_eq!(
        other_names(&observed, ResourceKind::GitRepository),
        ["flux/platform"]
    );
    assert_eq!(
        other_names(&observed, ResourceKind::Secret),
        [
            "flux/sh.helm.release.v1.apps-search.v2",
            "flux/sh.helm.release.v1.inventory.v3",
            "flux/sh.helm.release.v1.pay.v1",
        ]
    );
    assert!(observed.is_complete("flux", ResourceKind::Secret));
    assert!(observed.denied.is_empty(), "{:?}", observed.denied);
    // 3 HelmRelease GETs, then 1 GitRepository GET (shared) and per release 2 storage LISTs.
    let log = h.kube.sim.requests();
    assert_eq!(
        log.count(
            "get",
            "/apis/source.toolkit.fluxcd.io/v1/namespaces/flux/gitrepositories/platform"
        ),
        1
    );
    assert_eq!(h.cluster.request_count(), 10, "{:?}", log.snapshot());
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn kustomization_and_application_targets_land_raw() {
    let h = harness(vec![
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux"},
            "spec": {"path": "./apps", "sourceRef": {"kind": "GitRepository", "name": "platform"}}
        }),
        git_repository("flux", "platform"),
        application("argocd", "inventory", json!([])),
    ])
    .await;
    let targets = [
        target("flux", TargetKind::Kustomization, "apps"),
        target("argocd", TargetKind::Application, "inventory"),
    ];
    let observed = h.cluster.gather(&targets, false).await.expect("gathers");
    assert_eq!(
        other_names(&observed, ResourceKind::Kustomization),
        ["flux/apps"]
    );
    assert_eq!(
        other_names(&observed, ResourceKind::GitRepository),
        ["flux/platform"]
    );
    assert_eq!(
        other_names(&observed, ResourceKind::Application),
        ["argocd/inventory"]
    );
    // No Helm storage for Argo CD: it renders charts itself.
    assert_eq!(h.kube.sim.requests().count("list", "/api/v1/"), 0);
    assert_eq!(h.cluster.request_count(), 3);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_missing_object_or_an_uninstalled_crd_is_absent_and_complete() {
    // No Flux at all: the HelmRelease type itself is not served.
    let h = harness(inventory_story()).await;
    let observed = h
        .cluster
        .gather(
            &[target("flux", TargetKind::HelmRelease, "inventory")],
            false,
        )
        .await
        .expect("a missing CRD is not an error");
    assert!(observed.others.is_empty());
    assert!(observed.is_complete("flux", ResourceKind::HelmRelease));
    // The GET's 404 names nothing, so discovery is asked whether the type is served at all.
    assert_eq!(
        h.cluster.request_count(),
        2,
        "the GET and its discovery; nothing to follow"
    );
    h.kube.sim.shutdown().await;

    // Flux installed, that HelmRelease not there.
    let h = harness(vec![helmrelease("flux", "other", json!({}))]).await;
    let observed = h
        .cluster
        .gather(
            &[target("flux", TargetKind::HelmRelease, "inventory")],
            false,
        )
        .await
        .expect("a 404 is not an error");
    assert!(observed.others.is_empty());
    assert!(observed.is_complete("flux", ResourceKind::HelmRelease));
    assert_eq!(h.cluster.request_count(), 1);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_refused_storage_list_is_recorded_as_denied() {
    let h = harness(vec![release_secret(
        "apps",
        "apps",
        "inventory",
        1,
        SERVICE_ONLY,
    )])
    .await;
    h.kube.sim.deny("list", "secrets", Some("apps"));
    let observed = h
        .cluster
        .gather(
            &[Target::new(TargetKind::Release, None, "inventory")],
            false,
        )
        .await
        .expect("RBAC denial is evidence, not an error");
    let denied = observed
        .denial("apps", ResourceKind::Secret)
        .expect("denial recorded");
    assert_eq!(denied.verb, "list");
    assert!(!observed.is_complete("apps", ResourceKind::Secret));
    assert!(observed.is_complete("apps", ResourceKind::ConfigMap));
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn an_application_leads_to_its_deployment_its_replicasets_and_its_pods() {
    let mut objects = inventory_story();
    objects.push(application(
        "argocd",
        "inventory",
        json!([
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "apps", "name": "inventory"},
            {"group": "", "version": "v1", "kind": "Service", "namespace": "apps", "name": "inventory"}
        ]),
    ));
    let h = harness(objects).await;
    let observed = h
        .cluster
        .gather(
            &[target("argocd", TargetKind::Application, "inventory")],
            false,
        )
        .await
        .expect("gathers");
    assert_eq!(observed.workloads.of::<Deployment>().len(), 1);
    assert_eq!(observed.replicasets.len(), 2);
    assert_eq!(
        pod_names(&observed),
        ["inventory-new-a", "inventory-new-b", "inventory-old-c"]
    );
    assert_eq!(observed.others.len(), 1);
    // 1 Application GET, then as for a workload target: 1 GET, 1 ReplicaSet LIST, 1 pod LIST,
    // 1 Service LIST, 1 EndpointSlice LIST.
    assert_eq!(
        h.cluster.request_count(),
        6,
        "{:?}",
        h.kube.sim.requests().snapshot()
    );
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_release_leads_to_the_workloads_its_newest_manifest_names() {
    let manifest = "---\n# Source: inventory/templates/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\n";
    let mut objects = inventory_story();
    objects.push(release_secret("apps", "apps", "inventory", 1, SERVICE_ONLY));
    objects.push(release_secret("apps", "apps", "inventory", 2, manifest));
    let h = harness(objects).await;
    let observed = h
        .cluster
        .gather(
            &[Target::new(TargetKind::Release, None, "inventory")],
            false,
        )
        .await
        .expect("gathers");
    assert_eq!(observed.workloads.of::<Deployment>().len(), 1);
    assert_eq!(observed.pods.len(), 3);
    // 2 storage LISTs, then 1 GET, 1 ReplicaSet LIST, 1 pod LIST, 1 Service LIST, 1
    // EndpointSlice LIST.
    assert_eq!(h.cluster.request_count(), 7);
    h.kube.sim.shutdown().await;
}

async fn next_matching(
    snapshots: &mut liveproof_gather::ObservedStream,
    what: &str,
    pred: impl Fn(&Observed) -> bool,
) -> Observed {
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(snapshot) = snapshots.next().await {
            let snapshot = snapshot.expect("no watch error");
            if pred(&snapshot) {
                return Some(snapshot.observed);
            }
        }
        None
    })
    .await
    .unwrap_or_else(|_| panic!("{what} within the timeout"))
    .expect("stream still open")
}

#[tokio::test]
async fn watch_sees_a_helmrelease_status_change() {
    let hr = helmrelease("flux", "inventory", json!({}));
    let h = harness(vec![
        hr.clone(),
        release_secret("flux", "flux", "inventory", 1, SERVICE_ONLY),
    ])
    .await;
    let mut snapshots = h
        .cluster
        .watch(
            &[target("flux", TargetKind::HelmRelease, "inventory")],
            false,
        )
        .await
        .expect("watch starts");
    let first = snapshots.next().await.expect("initial").expect("ok");
    assert_eq!(
        other_names(&first, ResourceKind::HelmRelease),
        ["flux/inventory"]
    );
    assert_eq!(other_names(&first, ResourceKind::Secret).len(), 1);

    let mut updated = hr;
    updated["status"] = json!({"conditions": [{"type": "Ready", "status": "True",
        "reason": "UpgradeSucceeded", "lastTransitionTime": "2026-07-12T10:06:00Z"}]});
    h.kube.sim.apply(updated);
    let snapshot = next_matching(&mut snapshots, "the new HelmRelease status", |s| {
        s.find_other(ResourceKind::HelmRelease, "flux", "inventory")
            .and_then(|hr| hr.pointer("/status/conditions/0/reason"))
            .is_some_and(|r| r == "UpgradeSucceeded")
    })
    .await;
    assert_eq!(other_names(&snapshot, ResourceKind::HelmRelease).len(), 1);
    assert_eq!(other_names(&snapshot, ResourceKind::Secret).len(), 1);

    // A new revision's storage Secret shows up too.
    h.kube
        .sim
        .apply(release_secret("flux", "flux", "inventory", 2, SERVICE_ONLY));
    next_matching(&mut snapshots, "the new release revision", |s| {
        other_names(s, ResourceKind::Secret).len() == 2
    })
    .await;
    drop(snapshots);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn watch_follows_a_workload_an_application_starts_naming() {
    let mut objects = inventory_story();
    let app = application("argocd", "inventory", json!([]));
    objects.push(app.clone());
    let h = harness(objects).await;
    let mut snapshots = h
        .cluster
        .watch(
            &[target("argocd", TargetKind::Application, "inventory")],
            false,
        )
        .await
        .expect("watch starts");
    let first = snapshots.next().await.expect("initial").expect("ok");
    assert!(first.workloads.of::<Deployment>().is_empty());

    let mut synced = app;
    synced["status"]["resources"] = json!([
        {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "apps", "name": "inventory"}
    ]);
    h.kube.sim.apply(synced);
    let snapshot = next_matching(&mut snapshots, "the followed deployment's pods", |s| {
        s.workloads.of::<Deployment>().len() == 1 && s.pods.len() == 3
    })
    .await;
    assert_eq!(snapshot.replicasets.len(), 2);
    assert!(snapshot.is_complete("apps", ResourceKind::Pod));
    drop(snapshots);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn watch_without_flux_installed_keeps_going_without_errors() {
    let h = harness(inventory_story()).await;
    let targets = [
        target("flux", TargetKind::HelmRelease, "inventory"),
        deploy("inventory"),
    ];
    let mut snapshots = h
        .cluster
        .watch(&targets, false)
        .await
        .expect("watch starts");
    let first = snapshots.next().await.expect("initial").expect("ok");
    assert!(first.is_complete("flux", ResourceKind::HelmRelease));
    h.kube.sim.apply(pod("apps", "inventory", "new", "d"));
    let snapshot = next_matching(&mut snapshots, "the new pod", |s| s.pods.len() == 4).await;
    assert!(
        snapshot.is_complete("flux", ResourceKind::HelmRelease),
        "still absent"
    );
    // The HelmRelease watch ended at its 404 instead of retrying.
    assert!(
        h.kube
            .sim
            .requests()
            .count("watch", "/apis/helm.toolkit.fluxcd.io/")
            + h.kube
                .sim
                .requests()
                .count("list", "/apis/helm.toolkit.fluxcd.io/")
            <= 2,
        "{:?}",
        h.kube.sim.requests().snapshot()
    );
    drop(snapshots);
    h.kube.sim.shutdown().await;
}

#[tokio::test]
async fn a_helmrelease_with_a_target_namespace_leads_to_the_workloads_installed_there() {
    let manifest = "---\n# Source: inventory/templates/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\n";
    let mut objects = inventory_story();
    objects.push(helmrelease(
        "flux",
        "inventory",
        json!({"targetNamespace": "apps"}),
    ));
    // Stored in the HelmRelease's namespace; the manifest's objects go to the target namespace.
    objects.push(release_secret(
        "flux",
        "apps",
        "apps-inventory",
        1,
        manifest,
    ));
    let h = harness(objects).await;
    let observed = h
        .cluster
        .gather(
            &[target("flux", TargetKind::HelmRelease, "inventory")],
            false,
        )
        .await
        .expect("gathers");
    assert_eq!(observed.workloads.of::<Deployment>().len(), 1);
    assert_eq!(observed.pods.len(), 3);
    // 1 HelmRelease GET, 2 storage LISTs, then 1 GET, 1 ReplicaSet LIST, 1 pod LIST, 1
    // Service LIST, 1 EndpointSlice LIST.
    assert_eq!(
        h.cluster.request_count(),
        8,
        "{:?}",
        h.kube.sim.requests().snapshot()
    );
    h.kube.sim.shutdown().await;
}
