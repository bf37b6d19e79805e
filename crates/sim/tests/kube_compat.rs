//! The `kube` crate, configured from the simulator's kubeconfig, cannot tell it from a real server.

use liveproof_testkit::sim_http as common;

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher;
use kube::{Api, Client};
use liveproof_sim::{SimHandle, Simulator};
use serde_json::json;

async fn client(sim: &SimHandle) -> Client {
    let kubeconfig =
        Kubeconfig::from_yaml(&sim.kubeconfig_yaml("apps")).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    assert_eq!(config.default_namespace, "apps");
    Client::try_from(config).expect("client")
}

#[tokio::test]
async fn list_get_patch_and_errors() {
    for item_types in [true, false] {
        let sim = common::start_with(Simulator::new().with_list_item_types(item_types)).await;
        let client = client(&sim).await;
        let pods: Api<Pod> = Api::default_namespaced(client.clone());
        let list = pods
            .list(&ListParams::default().labels("app=inventory"))
            .await
            .expect("list");
        let names: Vec<_> = list
            .items
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        assert_eq!(
            names,
            ["inventory-7d9c8b6f5d-q8m7z", "inventory-7d9c8b6f5d-x4k2p"]
        );
        assert_eq!(
            list.metadata.resource_version,
            Some(sim.resource_version().to_string())
        );
        let running = pods
            .list(&ListParams::default().fields("status.phase=Running"))
            .await
            .expect("list");
        assert_eq!(running.items.len(), 2);
        let paged = pods
            .list(&ListParams::default().limit(1))
            .await
            .expect("page");
        assert_eq!(paged.items.len(), 1);
        assert!(paged.metadata.continue_.is_some());

        let deploys: Api<Deployment> = Api::namespaced(client.clone(), "apps");
        let d = deploys.get("inventory").await.expect("get");
        assert_eq!(d.metadata.generation, Some(2));
        assert_eq!(d.status.and_then(|s| s.available_replicas), Some(2));

        let patched = deploys
            .patch(
                "inventory",
                &PatchParams::default(),
                &Patch::Strategic(json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "now"}}}}})),
            )
            .await
            .expect("patch");
        assert_eq!(patched.metadata.generation, Some(3));
        let merged = deploys
            .patch(
                "inventory",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"team": "shop"}}})),
            )
            .await
            .expect("merge patch");
        assert_eq!(
            merged
                .metadata
                .labels
                .and_then(|l| l.get("team").cloned())
                .as_deref(),
            Some("shop")
        );

        match deploys.get("missing").await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 404);
                assert_eq!(status.reason, "NotFound");
            }
            other => panic!("expected a 404 Status, got {other:?}"),
        }
        sim.deny("list", "deployments", Some("apps"));
        match deploys.list(&ListParams::default()).await {
            Err(kube::Error::Api(status)) => assert_eq!(status.code, 403),
            other => panic!("expected a 403 Status, got {other:?}"),
        }
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn runtime_watcher_sees_a_controller_update() {
    let sim = common::start().await;
    let deploys: Api<Deployment> = Api::namespaced(client(&sim).await, "apps");
    let mut stream = watcher(deploys, watcher::Config::default()).boxed();
    // The initial list arrives as Init / InitApply / InitDone.
    let mut initial = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("no timeout")
            .expect("watch ok")
            .expect("stream open");
        match ev {
            watcher::Event::InitApply(d) => initial.push(d.metadata.name.unwrap_or_default()),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    assert_eq!(initial, ["inventory"]);
    let mut d = sim
        .get("apps/v1", "Deployment", Some("apps"), "inventory")
        .expect("fixture");
    d["spec"]["replicas"] = json!(5);
    sim.apply(d);
    let ev = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("no timeout")
        .expect("watch ok")
        .expect("stream open");
    match ev {
        watcher::Event::Apply(d) => {
            assert_eq!(d.spec.and_then(|s| s.replicas), Some(5));
            assert_eq!(d.metadata.generation, Some(3));
        }
        other => panic!("expected Apply, got {other:?}"),
    }
    sim.shutdown().await;
}
