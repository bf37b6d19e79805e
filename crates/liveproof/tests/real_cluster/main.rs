//! The stories on the real control plane: etcd, kube-apiserver and kube-controller-manager
//! built from their pinned Go modules (`e2e/build-peers.sh`), the real registry, the real
//! kubectl and Helm, and the kubelet stand-in (crates/testkit/src/e2e/kubelet.rs) where no
//! machine here can run containers. Each test starts its own control plane.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

mod story_01_deployment_rolled;
mod story_02_statefulsets_and_daemonset;
mod story_03_latest_rebuild;
mod story_04_helm;
mod story_05_rbac_roles;
mod story_06_snapshot_rollback;
mod story_07_watches_outlive_the_server;
mod story_08_simulator_fidelity;
mod story_09_pipeline_verdicts;
mod story_10_endpointslices;
mod story_11_live_since;
mod story_12_superseded;

use std::time::Duration;

use liveproof_testkit::e2e::world::{change_time, deployment, World};

/// Deployment `web` (3 replicas of acme/web:v1) rolled out, then paused and set to v2: the
/// new template is in the spec and no pod runs it. Returns v2's reference and the change time.
async fn paused_rollout(world: &World, extra_spec: &str) -> (String, String) {
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("web", &v1, extra_spec));
    world.wait_ready("deploy/web", "3").await;
    let since = change_time().await;
    world.kubectl(&["-n", "apps", "rollout", "pause", "deploy/web"]);
    world.kubectl(&[
        "-n",
        "apps",
        "set",
        "image",
        "deploy/web",
        &format!("app={v2}"),
    ]);
    (v2, since)
}

/// The pods of `app=NAME`: `name uid` lines.
fn pod_uids(world: &World, app: &str) -> String {
    world.pods(app, "{.metadata.name} {.metadata.uid}")
}

/// The real Helm CLI (`helm` is Helm 4, `helm3` Helm 3) against this cluster, with its own
/// cache and config homes; fails the test when it fails.
fn helm(world: &World, which: &str, driver: &str, args: &[&str]) -> String {
    let home = world.plane.dir.path().join(format!("helm-home-{which}"));
    let out = std::process::Command::new(world.plane.peers.path(which))
        .args(args)
        .arg("--kubeconfig")
        .arg(world.kubeconfig())
        .env("HELM_DRIVER", driver)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("helm runs");
    assert!(
        out.status.success(),
        "{which} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn chart() -> String {
    liveproof_testkit::e2e::control_plane::repo_root()
        .join("e2e/charts/web")
        .display()
        .to_string()
}

async fn wait_rolled_out(world: &World, ns: &str, name: &str) {
    world
        .wait_for(
            &[
                "-n",
                ns,
                "get",
                &format!("deploy/{name}"),
                "-o",
                "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}",
            ],
            "2/2/2",
            Duration::from_secs(90),
        )
        .await;
}
