use std::time::Duration;

use liveproof_evidence::{Check, Status};
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{change_time, evidence, World};

fn statefulset(name: &str, image: &str, strategy: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
  namespace: apps
spec:
  replicas: 3
  serviceName: {name}
  updateStrategy: {strategy}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: {image}
"
    )
}

/// Story 2: StatefulSets with a partition and with OnDelete, and a DaemonSet on both
/// platforms, judged on the real controllers' ControllerRevisions and revision hashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_2_statefulsets_and_a_daemonset_on_the_real_controllers() {
    let world = World::start().await;
    let (v1, v2) = world.two_builds("acme/db").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let daemonset = format!(
        "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: apps
spec:
  selector:
    matchLabels: {{app: agent}}
  template:
    metadata:
      labels: {{app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: {v1}
"
    );
    world.apply(
        &[
            statefulset(
                "db",
                &v1,
                "{type: RollingUpdate, rollingUpdate: {partition: 2}}",
            ),
            statefulset("cache", &v1, "{type: OnDelete}"),
            daemonset,
        ]
        .join("---\n"),
    );
    for (kind, name, field, want) in [
        ("sts", "db", "readyReplicas", "3"),
        ("sts", "cache", "readyReplicas", "3"),
        ("ds", "agent", "numberReady", "2"),
    ] {
        world
            .wait_for(
                &[
                    "-n",
                    "apps",
                    "get",
                    &format!("{kind}/{name}"),
                    "-o",
                    &format!("jsonpath={{.status.{field}}}"),
                ],
                want,
                Duration::from_secs(90),
            )
            .await;
    }

    let since = change_time().await;
    for target in ["sts/db", "sts/cache", "ds/agent"] {
        world.kubectl(&["-n", "apps", "set", "image", target, &format!("app={v2}")]);
    }
    // The partition: only db-2 moves; db-0 and db-1 stay on the old revision by design.
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "sts/db",
                "-o",
                "jsonpath={.status.updatedReplicas}",
            ],
            "1",
            Duration::from_secs(60),
        )
        .await;
    let partitioned = common::liveproof()
        .args(&["verify", "sts/db", "-n", "apps"])
        .since(&since)
        .args(&["--image", &v2])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        partitioned.code, 1,
        "{}\n{}",
        partitioned.stdout, partitioned.stderr
    );
    let rollout = evidence(&partitioned, Check::RolloutComplete);
    assert!(
        rollout.detail.contains("rollingUpdate.partition 2"),
        "{rollout:?}"
    );
    let current = evidence(&partitioned, Check::PodsCurrent);
    assert_eq!(current.status, Status::Fail, "{current:?}");
    assert!(
        current.observed.contains("db-0") || current.detail.contains("db-0"),
        "{current:?}"
    );

    // OnDelete: nothing moves until the pods are deleted.
    let on_delete = common::liveproof()
        .args(&["verify", "sts/cache", "-n", "apps"])
        .since(&since)
        .args(&["--image", &v2])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        on_delete.code, 1,
        "{}\n{}",
        on_delete.stdout, on_delete.stderr
    );
    assert!(
        evidence(&on_delete, Check::RolloutComplete)
            .detail
            .contains("updateStrategy OnDelete"),
        "{}",
        on_delete.stdout
    );

    // Lowering the partition and deleting the OnDelete pods: the controllers finish, live.
    world.kubectl(&[
        "-n",
        "apps",
        "patch",
        "sts/db",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}"#,
    ]);
    world.kubectl(&[
        "-n",
        "apps",
        "delete",
        "pods",
        "-l",
        "app=cache",
        "--wait=false",
    ]);
    let live = common::liveproof()
        .args(&["verify", "sts/db", "sts/cache", "ds/agent", "-n", "apps"])
        .since(&since)
        .args(&[
            "--image",
            &v2,
            "--insecure-registry",
            &world.registry.host,
            "--check-digests",
            "--wait",
            "--timeout",
            "120s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    // The DaemonSet ran on both platforms, and each pod's digest is current for its node.
    let nodes = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=agent",
        "-o",
        "jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}",
    ]);
    let mut nodes: Vec<&str> = nodes.lines().collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["node-amd64", "node-arm64"]);
    let report = live.report();
    let agent = report
        .targets
        .iter()
        .find(|t| t.name == "agent")
        .expect("the DaemonSet's report");
    let digests = agent
        .evidence
        .iter()
        .find(|e| e.check == Check::ImageDigestCurrent)
        .expect("image_digest_current");
    assert_eq!(digests.status, Status::Pass, "{digests:?}");
}
