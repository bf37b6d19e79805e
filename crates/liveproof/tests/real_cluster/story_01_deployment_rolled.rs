use liveproof_evidence::{Check, Status, Verdict};
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{change_time, evidence, World};

use crate::paused_rollout;

/// Story 1: the real deployment controller rolls a Deployment after `kubectl set image`.
/// Paused, the new template is in the spec and no pod runs it: not_live. Resumed, `verify
/// --wait` ends live, and at that moment every Ready pod runs the new image and no old pod is
/// left serving. A new image that cannot be pulled makes the real controller report
/// ProgressDeadlineExceeded, which ends the wait as a final failure long before its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_1_a_deployment_rolled_by_the_real_controller() {
    let world = World::start().await;
    let (v2, since) = paused_rollout(&world, "progressDeadlineSeconds: 8").await;
    let paused = common::liveproof()
        .args(&["verify", "deploy/web", "-n", "apps"])
        .since(&since)
        .args(&["--image", &v2])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(paused.code, 1, "{}\n{}", paused.stdout, paused.stderr);
    assert_eq!(paused.report().verdict, Verdict::NotLive);
    assert_eq!(evidence(&paused, Check::SpecReadback).status, Status::Pass);
    assert_eq!(evidence(&paused, Check::PodsCurrent).status, Status::Fail);

    world.kubectl(&["-n", "apps", "rollout", "resume", "deploy/web"]);
    let waited = common::liveproof()
        .args(&["verify", "deploy/web", "-n", "apps"])
        .since(&since)
        .args(&[
            "--image",
            &v2,
            "--check-digests",
            "--insecure-registry",
            &world.registry.host,
            "--wait",
            "--timeout",
            "90s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(waited.code, 0, "{}\n{}", waited.stdout, waited.stderr);
    // At the moment it said live: no pod of the old template left, Terminating or not.
    let images = world.pod_images("web");
    assert!(
        images.lines().all(|i| i == v2),
        "live while an old pod is still there:\n{images}"
    );
    assert_eq!(evidence(&waited, Check::PodRestarted).status, Status::Pass);
    assert_eq!(
        evidence(&waited, Check::ImageDigestCurrent).status,
        Status::Pass
    );

    // A tag that was never pushed: the real controller gives up after 8 s.
    let missing = format!("{}/acme/web:v3-never-pushed", world.registry.host);
    let since = change_time().await;
    world.kubectl(&[
        "-n",
        "apps",
        "set",
        "image",
        "deploy/web",
        &format!("app={missing}"),
    ]);
    let failed = common::liveproof()
        .args(&["verify", "deploy/web", "-n", "apps"])
        .since(&since)
        .args(&["--image", &missing, "--wait", "--timeout", "100s"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let rollout = evidence(&failed, Check::RolloutComplete);
    assert_eq!(rollout.status, Status::Fail);
    assert!(
        rollout.observed.contains("ProgressDeadlineExceeded")
            || rollout.detail.contains("ProgressDeadlineExceeded"),
        "{rollout:?}"
    );
    assert!(
        failed.stderr.contains("waiting longer will not fix it"),
        "{}",
        failed.stderr
    );
}
