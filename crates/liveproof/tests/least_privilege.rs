//! The narrower RBAC variants on the real API server (etcd, kube-apiserver with RBAC,
//! kube-controller-manager, the kubelet stand-in), as the `liveproof/liveproof` ServiceAccount
//! with a token the server issued:
//!
//! - `deploy/rbac-namespaced/` (`kubectl apply -k`): verify judges a workload in `apps`, is
//!   refused in another namespace and names the Role rule that would allow it there;
//!   `liveproof auth` says yes in `apps`, no elsewhere (exit 1), naming the rules.
//! - `deploy/rbac-no-secrets.yaml`: verify judges a Deployment; a `release/` target is
//!   unproven, naming the Secrets rule and the variant that leaves it out; `auth` without
//!   targets is satisfied, `auth release/web` is not.
//!
//! A missing peer fails this test with the command that builds it; it never skips.

use std::path::PathBuf;

use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::control_plane::repo_root;
use liveproof_testkit::e2e::world::{deployment, World};
use serde_json::Value;

const SA: &str = "system:serviceaccount:liveproof:liveproof";

/// A kubeconfig for the `liveproof/liveproof` ServiceAccount, with a token the real API server
/// issued for it (TokenRequest), defaulting to namespace apps.
fn service_account_kubeconfig(world: &World) -> PathBuf {
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

/// Everything a run said, with JSON's escaped quotes read as quotes (a next step in `-o json`
/// quotes its rule's `""`).
fn said(run: &common::Run) -> String {
    format!("{}\n{}", run.stdout, run.stderr).replace("\\\"", "\"")
}

fn assert_says(run: &common::Run, words: &str) {
    assert!(
        said(run).contains(words),
        "expected `{words}` in:\n{}\n{}",
        run.stdout,
        run.stderr
    );
}

fn auth_reads(run: &common::Run) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("auth -o json: {e}\n{}\n{}", run.stdout, run.stderr));
    assert_eq!(doc["schema"], "liveproof/auth/v1");
    assert_eq!(doc["identity"], SA, "{doc}");
    doc["reads"].as_array().expect("reads").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namespaced_and_the_no_secrets_roles_verify_what_they_grant_and_name_what_they_do_not()
{
    let world = World::start().await;
    let (v1, _) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    world.kubectl(&["create", "namespace", "other"]);
    world.apply(&deployment("web", &v1, ""));
    world.apply(&deployment("web", &v1, "").replace("namespace: apps", "namespace: other"));
    world.wait_ready("deploy/web", "3").await;
    let root = repo_root();
    let since = "2020-01-01T00:00:00Z";

    // ---- deploy/rbac-namespaced/: apps only.
    world.kubectl(&[
        "apply",
        "-k",
        &root.join("deploy/rbac-namespaced").display().to_string(),
    ]);
    let sa = service_account_kubeconfig(&world);
    let verify = |ns: &'static str, target: &'static str| {
        common::liveproof()
            .args(&["verify", target, "-n", ns, "--image", &v1])
            .since(since)
            .json()
            .kubeconfig(&sa)
            .run()
    };
    let home = verify("apps", "deploy/web").await;
    world.expect_exit(&home, 0);
    let away = verify("other", "deploy/web").await;
    world.expect_exit(&away, 3);
    assert_says(
        &away,
        &format!("the identity {SA} cannot get deployments in namespace other; a Role rule {{apiGroups: [\"apps\"], resources: [\"deployments\"], verbs: [\"get\"]}} allows it"),
    );
    assert_says(&away, "auth can-i get deployments.apps -n other)");

    let auth = |args: &'static [&'static str]| {
        common::liveproof()
            .args(&["auth"])
            .args(args)
            .kubeconfig(&sa)
            .run()
    };
    let in_apps = auth(&["-n", "apps", "-o", "json"]).await;
    world.expect_exit(&in_apps, 0);
    let reads = auth_reads(&in_apps);
    let read = |reads: &[Value], can_i: &str, ns: Option<&str>| -> Value {
        reads
            .iter()
            .find(|r| r["can_i"] == can_i && r["namespace"].as_str() == ns)
            .unwrap_or_else(|| panic!("no {can_i} in {ns:?}: {reads:#?}"))
            .clone()
    };
    assert_eq!(read(&reads, "list pods", Some("apps"))["allowed"], true);
    // Cluster-scoped: a Role cannot grant them, and no verify needs them every time.
    let nodes = read(&reads, "list nodes", None);
    assert_eq!(
        (&nodes["allowed"], &nodes["required"]),
        (&Value::Bool(false), &Value::Bool(false))
    );
    let in_other = auth(&["-n", "other"]).await;
    world.expect_exit(&in_other, 1);
    assert_says(
        &in_other,
        "list pods -n other: Role rule {apiGroups: [\"\"], resources: [\"pods\"], verbs: [\"list\"]}",
    );

    // ---- deploy/rbac-no-secrets.yaml, instead (the same ServiceAccount and token).
    world.kubectl(&[
        "-n",
        "apps",
        "delete",
        "role,rolebinding",
        "liveproof-verify",
    ]);
    world.kubectl(&[
        "apply",
        "-f",
        &root
            .join("deploy/rbac-no-secrets.yaml")
            .display()
            .to_string(),
    ]);
    let deployment = verify("apps", "deploy/web").await;
    world.expect_exit(&deployment, 0);
    let elsewhere = verify("other", "deploy/web").await;
    world.expect_exit(&elsewhere, 0);
    let release = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(since)
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    world.expect_exit(&release, 3);
    assert_says(
        &release,
        &format!("the identity {SA} cannot list secrets in namespace apps; a Role rule {{apiGroups: [\"\"], resources: [\"secrets\"], verbs: [\"list\"]}} allows it"),
    );
    assert_says(&release, "deploy/rbac-no-secrets.yaml leaves Secrets out");

    let any = auth(&["-A"]).await;
    world.expect_exit(&any, 0);
    assert_says(&any, "list secrets");
    let for_release = auth(&["release/web", "-n", "apps", "-o", "json"]).await;
    world.expect_exit(&for_release, 1);
    let reads = auth_reads(&for_release);
    let secrets = read(&reads, "list secrets", Some("apps"));
    assert_eq!(
        (&secrets["allowed"], &secrets["required"]),
        (&Value::Bool(false), &Value::Bool(true))
    );
    assert_eq!(
        secrets["rule"],
        "{apiGroups: [\"\"], resources: [\"secrets\"], verbs: [\"list\"]}"
    );
    assert_eq!(
        read(&reads, "list configmaps", Some("apps"))["allowed"],
        true
    );
}
