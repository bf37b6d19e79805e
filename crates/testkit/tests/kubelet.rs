//! The kubelet stand-in on its own, against the real API server and the real registry: nodes
//! of both platforms, binding, pulls resolved for the node's platform (index digest as
//! containerd reports it), a pull that fails, a crash loop, grace periods, and a running
//! container that keeps what it pulled when its tag moves.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use liveproof_testkit::e2e::kube::api::{Api, DeleteParams, PostParams};
use liveproof_testkit::e2e::{ControlPlane, Kubelet};
use liveproof_testkit::registry::{push_multiarch, RegistryServer};
use liveproof_testkit::within_async;
use serde_json::{json, Value};

async fn pod_json(api: &Api<Pod>, name: &str) -> Option<Value> {
    api.get_opt(name)
        .await
        .expect("GET pod")
        .map(|p| serde_json::to_value(p).expect("JSON"))
}

/// Polls pod `name` until `done` holds, for up to 60 s.
async fn until(api: &Api<Pod>, name: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let read = move || async move { pod_json(api, name).await.unwrap_or(Value::Null) };
    let done = &done;
    let found = within_async(
        Duration::from_secs(60),
        Duration::from_millis(200),
        || async move {
            let pod = read().await;
            done(&pod).then_some(pod)
        },
    )
    .await;
    match found {
        Some(pod) => pod,
        None => panic!("pod {name}: never {what}: {:#}", read().await),
    }
}

fn pod(name: &str, image: &str, extra: Value) -> Pod {
    let mut spec = json!({"containers": [{"name": "app", "image": image}],
        "terminationGracePeriodSeconds": 3});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("a pod")
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubelet_standin_plays_the_nodes() {
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
    let registry = RegistryServer::start();
    let pusher = registry.pusher();
    let pushed = push_multiarch(&pusher, "acme/web", "v1", "build-1").await;
    let client = plane.client().await.expect("client");
    let _kubelet = Kubelet::start(
        client.clone(),
        registry.client(Default::default()),
        vec![registry.host.clone()],
    )
    .await
    .expect("the stand-in starts");

    // Two Ready, untainted nodes, one per platform.
    let nodes: Api<Node> = Api::all(client.clone());
    for (name, arch) in liveproof_testkit::e2e::kubelet::NODES {
        let node = serde_json::to_value(nodes.get(name).await.expect("node")).expect("JSON");
        assert_eq!(str_at(&node, "/metadata/labels/kubernetes.io~1arch"), arch);
        assert_eq!(str_at(&node, "/status/nodeInfo/architecture"), arch);
        assert!(node.pointer("/spec/taints").is_none(), "{node:#}");
        assert_eq!(str_at(&node, "/status/conditions/0/type"), "Ready");
        assert_eq!(str_at(&node, "/status/conditions/0/status"), "True");
    }

    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let image = format!("{}/acme/web:v1", registry.host);
    // Bound to the arm64 node its selector asks for, then Running and Ready.
    pods.create(
        &PostParams::default(),
        &pod(
            "arm",
            &image,
            json!({"nodeSelector": {"kubernetes.io/arch": "arm64"}}),
        ),
    )
    .await
    .expect("create");
    let running = until(&pods, "arm", "Ready", |p| {
        str_at(p, "/status/conditions/3/status") == "True"
    })
    .await;
    assert_eq!(str_at(&running, "/spec/nodeName"), "node-arm64");
    assert_eq!(str_at(&running, "/status/phase"), "Running");
    let status = &running["status"]["containerStatuses"][0];
    let image_id = format!("{}/acme/web@{}", registry.host, pushed.digest);
    assert_eq!(str_at(status, "/imageID"), image_id, "the index digest");
    let started: jiff::Timestamp = str_at(status, "/state/running/startedAt")
        .parse()
        .expect("startedAt");
    assert!(jiff::Timestamp::now().as_second() - started.as_second() < 30);

    // The tag moves: the running container keeps what it pulled.
    push_multiarch(&pusher, "acme/web", "v1", "build-2").await;
    // Time for a kubelet that wrongly re-pulled to show it: what is checked is that nothing
    // changes, which no condition can wait for.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = pod_json(&pods, "arm").await.expect("still there");
    assert_eq!(
        str_at(&after, "/status/containerStatuses/0/imageID"),
        image_id
    );

    // A tag never pushed: ErrImagePull, then ImagePullBackOff; never Ready.
    let missing = format!("{}/acme/web:never-pushed", registry.host);
    pods.create(&PostParams::default(), &pod("missing", &missing, json!({})))
        .await
        .expect("create");
    let waiting = |reason: &'static str| {
        move |p: &Value| str_at(p, "/status/containerStatuses/0/state/waiting/reason") == reason
    };
    until(&pods, "missing", "ErrImagePull", waiting("ErrImagePull")).await;
    let backoff = until(
        &pods,
        "missing",
        "ImagePullBackOff",
        waiting("ImagePullBackOff"),
    )
    .await;
    assert_eq!(str_at(&backoff, "/status/conditions/3/status"), "False");

    // The marker env var: a crash loop with a growing restart count.
    pods.create(
        &PostParams::default(),
        &pod(
            "crash",
            &image,
            json!({"containers": [{"name": "app", "image": image,
                "env": [{"name": liveproof_testkit::e2e::kubelet::CRASH_ENV, "value": "1"}]}]}),
        ),
    )
    .await
    .expect("create");
    let crashing = until(&pods, "crash", "restarted twice", |p| {
        p.pointer("/status/containerStatuses/0/restartCount")
            .and_then(Value::as_i64)
            .is_some_and(|n| n >= 2)
    })
    .await;
    assert_eq!(
        str_at(
            &crashing,
            "/status/containerStatuses/0/state/waiting/reason"
        ),
        "CrashLoopBackOff"
    );
    assert!(crashing
        .pointer("/status/containerStatuses/0/lastState/terminated")
        .is_some());

    // Deleted with a 3 s grace period: Terminating but still running and Ready meanwhile,
    // then gone.
    let deleted_at = Instant::now();
    pods.delete("arm", &DeleteParams::default())
        .await
        .expect("delete");
    // Inside the 3 s grace period on purpose: the pod must still be running and Ready there.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let terminating = pod_json(&pods, "arm").await.expect("still there");
    assert!(terminating.pointer("/metadata/deletionTimestamp").is_some());
    assert_eq!(str_at(&terminating, "/status/conditions/3/status"), "True");
    until(&pods, "arm", "gone", Value::is_null).await;
    assert!(
        deleted_at.elapsed() >= Duration::from_secs(2),
        "ended before its grace period"
    );
}
