use std::time::Duration;

use liveproof_evidence::Verdict;
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{change_time, deployment, World};
use liveproof_testkit::registry::push_multiarch;
use liveproof_testkit::within_async;

/// Waits until Deployment apps/`name` runs `image` alone: every replica updated and Ready, and
/// no pod of another template left (Terminating ones included).
async fn wait_runs_only(world: &World, name: &str, image: &str) {
    world
        .wait_field(
            &format!("deploy/{name}"),
            "{.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}",
            "3/3/3",
            Duration::from_secs(90),
        )
        .await;
    let only = within_async(Duration::from_secs(30), Duration::from_millis(250), || {
        let images = world.pod_images(name);
        std::future::ready(
            (images.lines().count() == 3 && images.lines().all(|i| i == image)).then_some(()),
        )
    })
    .await;
    assert!(
        only.is_some(),
        "{}\n{}",
        world.pod_images(name),
        world.state()
    );
}

/// Issue 33 on the real control plane, no GitOps: `kubectl set image` to 1.1, rolled out,
/// then to 1.2, rolled out. The real deployment controller made a ReplicaSet for each; the
/// one for 1.1 was created after the change and a newer one (1.2), created after it, serves.
/// `verify --image 1.1` says superseded (exit 4), naming that ReplicaSet, 1.2 and that 1.2 is
/// live, instead of not_live (exit 1), which a pipeline would roll back on, reverting 1.2 too;
/// `rollback --dry-run` from the snapshot taken before 1.1 proposes nothing. Then `kubectl
/// rollout undo` takes it back to 1.1's ReplicaSet (reused: created before 1.2's change time):
/// verifying 1.2 is not_live, not superseded — an undo is no later change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_12_a_change_replaced_by_a_later_one_is_superseded_and_not_rolled_back() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let at = |tag: &str| format!("{}/acme/promo:{tag}", world.registry.host);
    for (tag, build) in [("1.0", "build-0"), ("1.1", "build-1"), ("1.2", "build-2")] {
        push_multiarch(&pusher, "acme/promo", tag, build).await;
    }
    let (v10, v11, v12) = (at("1.0"), at("1.1"), at("1.2"));
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("promo", &v10, ""));
    wait_runs_only(&world, "promo", &v10).await;
    let dir = world.plane.dir.path().join("snapshots");
    let dir = dir.to_str().expect("utf-8");
    let commit = "5a7e1c0ffee12345";
    let snap = common::liveproof()
        .args(&["snapshot", "--dir", dir, "--commit", commit, "-n", "apps"])
        .on(&world)
        .run()
        .await;
    world.expect_exit(&snap, 0);

    let since = change_time().await;
    world.set_image("promo", &v11);
    wait_runs_only(&world, "promo", &v11).await;
    let rs_of = |image: &str| {
        world.kubectl(&[
            "-n",
            "apps",
            "get",
            "rs",
            "-l",
            "app=promo",
            "-o",
            &format!(
                "jsonpath={{range .items[?(@.spec.template.spec.containers[0].image==\"{image}\")]}}{{.metadata.name}}{{end}}"
            ),
        ])
    };
    let rs_11 = rs_of(&v11);
    // Creation times are whole seconds: a later change in 1.1's own second could not be
    // ordered after it (a tie is never "after").
    let since_12 = change_time().await;
    world.set_image("promo", &v12);
    wait_runs_only(&world, "promo", &v12).await;
    let rs_12 = rs_of(&v12);
    assert!(!rs_11.is_empty() && !rs_12.is_empty() && rs_11 != rs_12);

    let verify = |since: &str, image: &str| {
        common::liveproof()
            .args(&["verify", "deployment/promo", "-n", "apps"])
            .since(since)
            .args(&["--image", image])
            .json()
            .on(&world)
            .run()
    };
    let superseded = verify(&since, &v11).await;
    world.expect_exit(&superseded, 4);
    let report = superseded.report();
    assert_eq!(report.verdict, Verdict::Superseded);
    let by = report.targets[0]
        .superseded_by
        .clone()
        .unwrap_or_else(|| panic!("no superseded_by: {}", superseded.stdout));
    assert_eq!(
        by.revision.as_deref(),
        Some(format!("apps/{rs_12} (revision 3)").as_str()),
        "{by:#?}"
    );
    assert_eq!(by.images, std::slice::from_ref(&v12));
    assert_eq!(by.live, Some(true), "{by:#?}");
    assert_eq!(
        by.source_ref.map(|s| (s.kind, s.name)),
        Some(("ReplicaSet".to_string(), rs_12.clone()))
    );

    // The pipeline's rollback, from the snapshot taken before 1.1, proposes nothing.
    let rollback = common::liveproof()
        .args(&[
            "rollback",
            "--snapshot",
            dir,
            "--commit",
            commit,
            "-n",
            "apps",
            "--dry-run",
        ])
        .on(&world)
        .run()
        .await;
    world.expect_exit(&rollback, 0);
    assert!(
        !rollback.stdout.contains("would PATCH"),
        "{}",
        rollback.stdout
    );
    assert!(
        rollback.stdout.contains("nothing to roll back"),
        "{}",
        rollback.stdout
    );

    // `rollout undo`: back to 1.1's ReplicaSet, reused with a bumped revision but created
    // before 1.2's change time. 1.2 was undone, not replaced by a later change.
    world.kubectl(&["-n", "apps", "rollout", "undo", "deploy/promo"]);
    wait_runs_only(&world, "promo", &v11).await;
    assert_eq!(rs_of(&v11), rs_11, "the undo reused 1.1's ReplicaSet");
    let undone = verify(&since_12, &v12).await;
    world.expect_exit(&undone, 1);
    let report = undone.report();
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(report.targets[0].superseded_by, None, "{}", undone.stdout);
    // And 1.1 is live again, as what runs.
    world.expect_exit(&verify(&since, &v11).await, 0);
}
