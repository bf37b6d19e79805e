use std::time::Duration;

use liveproof_evidence::{Check, Status};
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{change_time, evidence, World};
use liveproof_testkit::within_async;

/// Story 10: the real endpointslice controller (in kube-controller-manager) writes the slices
/// `traffic_current` reads. A pod of the build before the Deployment, labelled
/// `tier=frontend` alone, is not the Deployment's (its selector is `app=web`), but the Service
/// `web` selects `tier=frontend` and routes to it: not live, though every pod the Deployment
/// selects is current. Once the pod is gone, `verify --wait` sees the slice change and ends
/// live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_10_a_service_routing_to_a_pod_by_a_leftover_label() {
    let world = World::start().await;
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let since = change_time().await;
    world.apply(&format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: web-legacy
  namespace: apps
  labels: {{tier: frontend}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {v1}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: apps
spec:
  selector: {{tier: frontend}}
  ports:
  - {{name: http, port: 80, targetPort: 8080}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web, tier: frontend}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {v2}
"
    ));
    world.wait_ready("deploy/web", "2").await;
    // The controller's slice: both Deployment pods and the legacy pod, ready.
    let ready_endpoints = || {
        let names = world.kubectl(&[
            "-n",
            "apps",
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "jsonpath={range .items[*].endpoints[?(@.conditions.ready==true)]}{.targetRef.name}{\"\\n\"}{end}",
        ]);
        let mut names: Vec<String> = names.lines().map(str::to_owned).collect();
        names.sort();
        names
    };
    let listed = within_async(Duration::from_secs(60), Duration::from_millis(250), || {
        std::future::ready((ready_endpoints().len() >= 3).then_some(()))
    })
    .await;
    assert!(
        listed.is_some(),
        "the endpointslice controller never listed 3 ready endpoints: {:?}\n{}",
        ready_endpoints(),
        world.state()
    );
    assert!(
        ready_endpoints().contains(&"web-legacy".to_string()),
        "{:?}",
        ready_endpoints()
    );

    let verify = |extra: &'static [&'static str]| {
        common::liveproof()
            .args(&["verify", "deploy/web", "-n", "apps"])
            .since(&since)
            .args(&["--image", &v2])
            .args(extra)
            .json()
            .on(&world)
            .run()
    };
    let routed_old = verify(&[]).await;
    world.expect_exit(&routed_old, 1);
    assert_eq!(
        evidence(&routed_old, Check::PodsCurrent).status,
        Status::Pass,
        "every pod the Deployment selects is current"
    );
    let traffic = evidence(&routed_old, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Fail, "{}", routed_old.stdout);
    assert!(
        traffic
            .observed
            .contains("Service web → pod web-legacy (not a pod of apps/Deployment/web"),
        "{}",
        traffic.observed
    );

    // The legacy pod goes; the controller takes it out of the slice, and the wait sees it.
    let waited = verify(&["--wait", "--timeout", "60s"]);
    let delete = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        world.kubectl(&["-n", "apps", "delete", "pod", "web-legacy", "--wait=false"]);
    };
    let (waited, ()) = tokio::join!(waited, delete);
    world.expect_exit(&waited, 0);
    let traffic = evidence(&waited, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Pass, "{}", waited.stdout);
    assert_eq!(
        traffic.observed,
        "Service web: 2 ready endpoint(s), all current"
    );
}
