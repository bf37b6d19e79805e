use std::time::Duration;

use liveproof_evidence::Verdict;
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{deployment, World};
use liveproof_testkit::registry::push_multiarch;
use liveproof_testkit::within_async;

use crate::pod_uids;

/// Story 6, the pipeline on the real controllers: snapshot; an apply that breaks one workload
/// (an image that cannot be pulled) and fixes another; `verify --snapshot` in a separate
/// process says which; `rollback` puts back exactly the broken one, and it is live again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_6_snapshot_apply_verify_rollback() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let host = world.registry.host.clone();
    push_multiarch(&pusher, "acme/web", "v1", "build-1").await;
    push_multiarch(&pusher, "acme/web", "v2", "build-2").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let v1 = format!("{host}/acme/web:v1");
    world.apply(&[deployment("front", &v1, ""), deployment("back", &v1, "")].join("---\n"));
    for app in ["front", "back"] {
        world.wait_ready(&format!("deploy/{app}"), "3").await;
    }
    let dir = world.plane.dir.path().join("snapshots");
    let dir = dir.to_str().expect("utf-8");
    let commit = "89abcdef01234567";
    let snap = common::liveproof()
        .args(&["snapshot", "--dir", dir, "--commit", commit, "-n", "apps"])
        .on(&world)
        .run()
        .await;
    assert_eq!(snap.code, 0, "{}\n{}", snap.stdout, snap.stderr);
    // No pause: a pod that starts in the snapshot's own second is ordered by its template
    // (it differs from the snapshot's), not by waiting for the next second.

    world.apply(
        &[
            deployment("front", &format!("{host}/acme/web:v2"), ""),
            deployment("back", &format!("{host}/acme/web:v2-never-pushed"), ""),
        ]
        .join("---\n"),
    );
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "deploy/front",
                "-o",
                "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}",
            ],
            "3/3",
            Duration::from_secs(60),
        )
        .await;
    // The old pods end their 2 s grace period (until then they serve, and it is not live).
    let gone = within_async(Duration::from_secs(30), Duration::from_millis(250), || {
        std::future::ready((pod_uids(&world, "front").lines().count() == 3).then_some(()))
    })
    .await;
    assert!(gone.is_some(), "{}", world.state());
    let verify = common::liveproof()
        .args(&[
            "verify",
            "--snapshot",
            dir,
            "--commit",
            commit,
            "-n",
            "apps",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(verify.code, 1, "{}\n{}", verify.stdout, verify.stderr);
    let report = verify.report();
    let verdict_of = |name: &str| {
        report
            .targets
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.verdict)
            .unwrap_or_else(|| panic!("{name} not in {}", verify.stdout))
    };
    assert_eq!(verdict_of("front"), Verdict::Live, "{}", verify.stdout);
    assert_eq!(verdict_of("back"), Verdict::NotLive, "{}", verify.stdout);

    let front_pods = pod_uids(&world, "front");
    let rollback = common::liveproof()
        .args(&[
            "rollback",
            "--snapshot",
            dir,
            "--commit",
            commit,
            "-n",
            "apps",
            "--timeout",
            "90s",
        ])
        .on(&world)
        .run()
        .await;
    assert_eq!(rollback.code, 0, "{}\n{}", rollback.stdout, rollback.stderr);
    assert_eq!(
        pod_uids(&world, "front"),
        front_pods,
        "front was live: never touched"
    );
    let images = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "deploy/back",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    assert_eq!(images.trim(), v1, "back is back on the snapshot's template");
}
