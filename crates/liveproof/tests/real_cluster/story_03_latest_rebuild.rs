use std::time::Duration;

use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{deployment, World};
use liveproof_testkit::registry::push_multiarch;

use crate::pod_uids;

/// Story 3, seed 001 for real: a multi-platform index (with attestation manifests) deployed as
/// `:latest`; a rebuild pushed to the same tag; the identical manifests re-applied restart
/// nothing. `stale` names exactly the two workloads on `:latest` (not the one on a pinned
/// tag); `stale --restart --wait` has the real controller roll them until verify is live;
/// a second run finds nothing stale and restarts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_3_a_latest_rebuild_is_found_stale_and_restarted() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let host = world.registry.host.clone();
    push_multiarch(&pusher, "acme/web", "latest", "build-1").await;
    push_multiarch(&pusher, "acme/api", "1.0.0", "build-1").await;
    let manifests = [
        deployment("web", &format!("{host}/acme/web:latest"), ""),
        deployment("worker", &format!("{host}/acme/web:latest"), ""),
        deployment("api", &format!("{host}/acme/api:1.0.0"), ""),
    ]
    .join("---\n");
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&manifests);
    for app in ["web", "worker", "api"] {
        world.wait_ready(&format!("deploy/{app}"), "3").await;
    }
    let before = [
        pod_uids(&world, "web"),
        pod_uids(&world, "worker"),
        pod_uids(&world, "api"),
    ];

    // The rebuild, then the redeploy of byte-identical manifests: nothing restarts.
    push_multiarch(&pusher, "acme/web", "latest", "build-2").await;
    world.apply(&manifests);
    // Time for a wrong restart to show is the point: nothing may change in it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = [
        pod_uids(&world, "web"),
        pod_uids(&world, "worker"),
        pod_uids(&world, "api"),
    ];
    assert_eq!(
        before, after,
        "re-applying the same manifests restarted pods"
    );

    let stale = common::liveproof()
        .args(&["stale", "-n", "apps", "--insecure-registry", &host])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(stale.code, 1, "{}\n{}", stale.stdout, stale.stderr);
    let rows = common::stale_rows(&stale.stdout);
    assert_eq!(
        rows.get("web").map(String::as_str),
        Some("stale"),
        "{rows:?}"
    );
    assert_eq!(
        rows.get("worker").map(String::as_str),
        Some("stale"),
        "{rows:?}"
    );
    assert_ne!(
        rows.get("api").map(String::as_str),
        Some("stale"),
        "{rows:?}"
    );

    let restarted = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
            "--wait",
            "--timeout",
            "120s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        restarted.code, 0,
        "{}\n{}",
        restarted.stdout, restarted.stderr
    );
    let doc: serde_json::Value =
        serde_json::from_str(&restarted.stdout).expect("one JSON document");
    let mut patched: Vec<String> = doc["restart"]["patched"]
        .as_array()
        .expect("patched")
        .iter()
        .map(|p| p.as_str().unwrap_or_default().to_string())
        .collect();
    patched.sort();
    assert_eq!(patched, ["apps/deployment/web", "apps/deployment/worker"]);
    assert_eq!(
        pod_uids(&world, "api"),
        before[2],
        "the pinned workload was not bounced"
    );

    let verify = common::liveproof()
        .args(&[
            "verify",
            "deploy/web",
            "deploy/worker",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
        ])
        .since(doc["restart"]["at"].as_str().expect("restart time"))
        .args(&[
            // A separate verify states the change itself (else unproven, by contract).
            "--image",
            &format!("{host}/acme/web:latest"),
            "--check-digests",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(verify.code, 0, "{}\n{}", verify.stdout, verify.stderr);

    let again = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let doc: serde_json::Value = serde_json::from_str(&again.stdout).expect("one JSON document");
    assert_eq!(doc["restart"]["patched"], serde_json::json!([]), "{doc}");
}
