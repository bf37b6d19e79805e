use std::time::Duration;

use liveproof_evidence::Verdict;
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::World;

use crate::paused_rollout;

/// Story 7, watches on the real API server: `verify --wait` outlives the server ending its
/// watches (they ask for `timeoutSeconds` 60) and the `410 Gone` a re-opened watch gets once
/// etcd has compacted its resourceVersion away, and still ends live when the rollout does.
/// The API server runs without its watch cache (watches go to etcd, which sends no
/// bookmarks) and compacts every 5 s; writes elsewhere move etcd's revision on meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_7_waiting_outlives_ended_and_expired_watches() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use liveproof_testkit::e2e::kube::api::{Api, PostParams};

    let world = World::start_with(&["--watch-cache=false", "--etcd-compaction-interval=5s"]).await;
    let (v2, since) = paused_rollout(&world, "").await;

    let client = world.plane.client().await.expect("admin client");
    let args = [
        "verify",
        "deploy/web",
        "-n",
        "apps",
        "--since",
        &since,
        "--image",
        &v2,
        "--wait",
        "--timeout",
        "240s",
        "-vv",
        "-o",
        "json",
    ];
    let verify = common::liveproof().args(&args).on(&world).run();
    let meanwhile = async {
        // Past the 60 s the server gives each watch, with etcd's revision moving on and
        // compacted every 5 s; then the rollout goes on.
        let churn: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        for n in 0..80 {
            let map: ConfigMap = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("churn-{n}")}, "data": {"n": n.to_string()}
            }))
            .expect("a ConfigMap");
            churn
                .create(&PostParams::default(), &map)
                .await
                .expect("churn write");
            // The pace is the point: writes spread over the wait, not one burst.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        world.kubectl(&["-n", "apps", "rollout", "resume", "deploy/web"]);
    };
    let (verify, ()) = tokio::join!(verify, meanwhile);
    assert_eq!(verify.code, 0, "{}\n{}", verify.stdout, verify.stderr);
    assert_eq!(verify.report().verdict, Verdict::Live);
    // Both happened, and were survived: an ended watch re-opened, an expired one listed again.
    assert!(
        verify.stderr.contains("expired (410); listing again"),
        "no watch expired:\n{}",
        verify.stderr
    );
    // Live means the new pods, not a stale view: no pod of the old template is left.
    let images = world.pod_images("web");
    assert!(images.lines().all(|i| i == v2), "{images}");
}
