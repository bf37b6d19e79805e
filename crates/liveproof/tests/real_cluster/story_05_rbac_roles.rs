use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::World;
use liveproof_testkit::registry::push_multiarch;

use crate::{chart, helm, wait_rolled_out};

/// A kubeconfig for the `liveproof/liveproof` ServiceAccount of deploy/rbac-readonly.yaml,
/// with a token the real API server issued for it (TokenRequest).
fn service_account_kubeconfig(world: &World) -> std::path::PathBuf {
    let token = world.kubectl(&[
        "-n",
        "liveproof",
        "create",
        "token",
        "liveproof",
        "--duration=1h",
    ]);
    let path = world.plane.dir.path().join("liveproof-sa.kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: {}
    insecure-skip-tls-verify: true
users:
- name: liveproof
  user:
    token: {}
contexts:
- name: e2e
  context:
    cluster: e2e
    user: liveproof
    namespace: apps
current-context: e2e
",
            world.plane.server,
            token.trim()
        ),
    )
    .expect("write kubeconfig");
    path
}

/// Whether `text` says a read was refused: the server's words for it, or 403 as a number of its
/// own. A 403 inside a digest, a pod name, a port or a timestamp is not a refusal (CI once
/// failed on one), so the digits count only between characters that cannot continue a token.
fn mentions_refusal(text: &str) -> Option<&'static str> {
    for word in ["forbidden", "Forbidden", "denied", "was refused"] {
        if text.contains(word) {
            return Some(word);
        }
    }
    let continues =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || ".:_-".contains(c));
    text.match_indices("403")
        .any(|(at, _)| {
            !continues(text[..at].chars().next_back()) && !continues(text[at + 3..].chars().next())
        })
        .then_some("403")
}

fn assert_not_refused(run: &common::Run, what: &str) {
    for text in [&run.stdout, &run.stderr] {
        if let Some(word) = mentions_refusal(text) {
            panic!(
                "{what} was refused something ({word}):\n{}\n{}",
                run.stdout, run.stderr
            );
        }
    }
}

#[test]
fn a_refusal_is_told_from_digits_that_happen_to_be_403() {
    assert_eq!(
        mentions_refusal("pods is forbidden: User cannot list"),
        Some("forbidden")
    );
    assert_eq!(
        mentions_refusal("HTTP 403 from the API server"),
        Some("403")
    );
    assert_eq!(mentions_refusal("got 403, giving up"), Some("403"));
    for innocent in [
        "sha256:cfb05b403df0…",
        "web-5dd9d47db5-x403a",
        "127.0.0.1:40312",
        "2026-12-04T07:29:55.403623Z",
        "/tmp/.tmp403abc/kubeconfig",
    ] {
        assert_eq!(mentions_refusal(innocent), None, "{innocent}");
    }
}

/// Story 5: deploy/rbac-readonly.yaml on the real API server with RBAC, and a ServiceAccount
/// token: verify, stale, snapshot and release show are refused nothing; a restart is refused
/// by the server until deploy/rbac-restart.yaml is applied, which allows exactly that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_5_the_read_only_role_is_enough_and_the_restart_role_is_exactly_the_restart() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let host = world.registry.host.clone();
    push_multiarch(&pusher, "acme/web", "latest", "build-1").await;
    let image = format!("image={host}/acme/web:latest");
    helm(
        &world,
        "helm",
        "secret",
        &[
            "install",
            "web",
            &chart(),
            "-n",
            "apps",
            "--create-namespace",
            "--set",
            &image,
        ],
    );
    wait_rolled_out(&world, "apps", "web").await;
    push_multiarch(&pusher, "acme/web", "latest", "build-2").await;
    let root = liveproof_testkit::e2e::control_plane::repo_root();
    world.kubectl(&[
        "apply",
        "-f",
        &root.join("deploy/rbac-readonly.yaml").display().to_string(),
    ]);
    let sa = service_account_kubeconfig(&world);
    let since = "2020-01-01T00:00:00Z";

    let verify = common::liveproof()
        .args(&["verify", "release/web", "deploy/web", "-n", "apps"])
        .since(since)
        .args(&["--insecure-registry", &host, "--check-digests", "--logs"])
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    assert_ne!(verify.code, 2, "{}\n{}", verify.stdout, verify.stderr);
    assert_not_refused(&verify, "verify");
    let stale = common::liveproof()
        .args(&["stale", "-n", "apps", "--insecure-registry", &host])
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    assert_eq!(
        stale.code, 1,
        "web runs the old :latest: {}\n{}",
        stale.stdout, stale.stderr
    );
    assert_not_refused(&stale, "stale");
    let dir = world.plane.dir.path().join("snapshots");
    let snapshot = common::liveproof()
        .args(&[
            "snapshot",
            "--dir",
            dir.to_str().expect("utf-8"),
            "--commit",
            "0123456789abcdef",
            "-n",
            "apps",
        ])
        .kubeconfig(&sa)
        .run()
        .await;
    assert_eq!(snapshot.code, 0, "{}\n{}", snapshot.stdout, snapshot.stderr);
    assert_not_refused(&snapshot, "snapshot");
    for section in ["--metadata", "--manifest", "--values", "--history"] {
        let show = common::liveproof()
            .args(&["release", "show", "web", "-n", "apps", section])
            .kubeconfig(&sa)
            .run()
            .await;
        assert_eq!(show.code, 0, "{section}: {}\n{}", show.stdout, show.stderr);
        assert_not_refused(&show, "release show");
    }

    // A write without the restart role: the server refuses it, and liveproof says so.
    let refused = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
        ])
        .kubeconfig(&sa)
        .run()
        .await;
    assert_ne!(refused.code, 0, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("forbidden") || refused.stderr.contains("forbidden"),
        "{}\n{}",
        refused.stdout,
        refused.stderr
    );
    world.kubectl(&[
        "apply",
        "-f",
        &root.join("deploy/rbac-restart.yaml").display().to_string(),
    ]);
    let restarted = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
        ])
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    assert_eq!(
        restarted.code, 0,
        "{}\n{}",
        restarted.stdout, restarted.stderr
    );
    // Exactly the restart: the role allows patching workloads and nothing else it adds.
    let as_sa = "--as=system:serviceaccount:liveproof:liveproof";
    let can = |verb_resource: &[&str]| {
        let mut args = vec!["auth", "can-i"];
        args.extend_from_slice(verb_resource);
        args.extend([as_sa, "-n", "apps"]);
        liveproof_testkit::kubectl()
            .kubeconfig(world.kubeconfig())
            .args(&args)
            .run()
    };
    assert_eq!(can(&["patch", "deployments"]).await.stdout.trim(), "yes");
    for denied in [
        ["delete", "pods"],
        ["update", "deployments"],
        ["create", "deployments"],
        ["patch", "secrets"],
    ] {
        assert_eq!(can(&denied).await.stdout.trim(), "no", "{denied:?}");
    }
}
