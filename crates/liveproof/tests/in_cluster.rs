//! In a pod, with no kubeconfig, liveproof connects as kubectl does: to
//! `KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT`, trusting the mounted `ca.crt`, with the
//! mounted ServiceAccount token, in the mounted namespace. Played against the real API server
//! with a real token of the ServiceAccount `deploy/rbac-readonly.yaml` makes; the mount
//! directory is the only thing a test changes (`LIVEPROOF_TEST_SERVICEACCOUNT_DIR`).

use liveproof_testkit::binary as common;

use std::path::{Path, PathBuf};

use liveproof_evidence::Verdict;
use liveproof_testkit::e2e::{ControlPlane, Kubelet};
use liveproof_testkit::registry::{push_multiarch, RegistryServer};

/// The files the kubelet mounts for a pod's ServiceAccount, in `dir`.
fn mount(dir: &Path, token: &str, ca: &Path, namespace: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mount dir");
    std::fs::write(dir.join("token"), token.trim()).expect("token");
    std::fs::copy(ca, dir.join("ca.crt")).expect("ca.crt");
    std::fs::write(dir.join("namespace"), namespace).expect("namespace");
    dir.to_path_buf()
}

/// liveproof as a pod runs it: no kubeconfig anywhere (an empty HOME, no KUBECONFIG), the
/// service variables the kubelet sets, the ServiceAccount files in `mount`.
fn in_pod(plane: &ControlPlane, home: &Path, mount: &Path) -> common::Cli {
    let port = plane.server.rsplit(':').next().expect("server has a port");
    common::liveproof()
        .env("HOME", home)
        .env_remove("KUBECONFIG")
        .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        .env("KUBERNETES_SERVICE_PORT", port)
        .env("LIVEPROOF_TEST_SERVICEACCOUNT_DIR", mount)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_pod_the_mounted_service_account_is_used_as_kubectl_uses_it() {
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
    let registry = RegistryServer::start();
    let _kubelet = Kubelet::start(
        plane.client().await.expect("admin client"),
        registry.client(Default::default()),
        vec![registry.host.clone()],
    )
    .await
    .unwrap_or_else(|e| panic!("kubelet stand-in: {e:#}"));
    push_multiarch(&registry.pusher(), "acme/web", "v1", "build-1").await;
    let image = format!("{}/acme/web:v1", registry.host);
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        liveproof_testkit::kubectl::run(&plane.kubeconfig, args, stdin)
    };
    let root = liveproof_testkit::e2e::control_plane::repo_root();
    kubectl(
        &[
            "apply",
            "-f",
            &root.join("deploy/rbac-readonly.yaml").display().to_string(),
        ],
        None,
    );
    kubectl(&["create", "namespace", "apps"], None);
    kubectl(
        &["apply", "-f", "-"],
        Some(&format!(
            "apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: apps}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{{name: app, image: '{image}'}}]
"
        )),
    );
    kubectl(
        &[
            "-n",
            "apps",
            "rollout",
            "status",
            "deploy/web",
            "--timeout=90s",
        ],
        None,
    );
    // The API server's own CA bundle, what the kube-root-ca.crt ConfigMap (and so every pod's
    // ca.crt) carries here: the controller manager runs with --root-ca-file set to it.
    let ca = plane.dir.path().join("certs/apiserver.crt");
    let token = kubectl(
        &[
            "-n",
            "liveproof",
            "create",
            "token",
            "liveproof",
            "--duration=1h",
        ],
        None,
    );
    let home = tempfile::tempdir().expect("home");
    let pod = mount(&home.path().join("sa"), &token, &ca, "apps");

    // No -n: the namespace is the mounted one, as for kubectl in a pod.
    let live = in_pod(&plane, home.path(), &pod)
        .args(&["verify", "deploy/web", "--image", &image])
        .since("2020-01-01T00:00:00Z")
        .json()
        .run()
        .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    let report = live.report();
    assert_eq!(report.verdict, Verdict::Live);
    assert_eq!(report.targets[0].namespace, "apps");
    let json: serde_json::Value = live.json();
    assert_eq!(
        json["cluster"]["server"].as_str(),
        Some(plane.server.as_str()),
        "{json:#}"
    );
    assert!(
        !live.stdout.contains(token.trim()) && !live.stderr.contains(token.trim()),
        "the token was printed"
    );

    // The token is what authenticates: a ServiceAccount no role is bound to is refused, and
    // liveproof says so rather than calling the Deployment live.
    kubectl(&["-n", "apps", "create", "serviceaccount", "nobody"], None);
    let nobody = kubectl(&["-n", "apps", "create", "token", "nobody"], None);
    let refused_pod = mount(&home.path().join("nobody"), &nobody, &ca, "apps");
    let refused = in_pod(&plane, home.path(), &refused_pod)
        .args(&["verify", "deploy/web", "--image", &image])
        .since("2020-01-01T00:00:00Z")
        .run()
        .await;
    assert_ne!(refused.code, 0, "{}\n{}", refused.stdout, refused.stderr);
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        said.contains("forbidden") || said.contains("refused") || said.contains("RBAC"),
        "{said}"
    );
    assert!(!said.contains(nobody.trim()), "the token was printed");

    // The CA is what is trusted: another CA's bundle fails the TLS handshake (exit 2).
    // The controller manager's self-signed serving certificate: a CA that did not sign the
    // API server's.
    let foreign_ca = plane
        .dir
        .path()
        .join("kcm-certs/kube-controller-manager.crt");
    let untrusting_pod = mount(&home.path().join("untrusting"), &token, &foreign_ca, "apps");
    let untrusted = in_pod(&plane, home.path(), &untrusting_pod)
        .args(&["verify", "deploy/web"])
        .since("2020-01-01T00:00:00Z")
        .run()
        .await;
    assert_eq!(
        untrusted.code, 2,
        "{}\n{}",
        untrusted.stdout, untrusted.stderr
    );

    // Nothing mounted: exit 2 naming the mount and what to do.
    let empty = home.path().join("unmounted");
    std::fs::create_dir_all(&empty).expect("dir");
    let unmounted = in_pod(&plane, home.path(), &empty)
        .args(&["verify", "deploy/web"])
        .since("2020-01-01T00:00:00Z")
        .run()
        .await;
    assert_eq!(unmounted.code, 2, "{}", unmounted.stderr);
    assert!(
        unmounted.stderr.contains("ServiceAccount")
            && unmounted.stderr.contains("token")
            && unmounted.stderr.contains("hint:"),
        "{}",
        unmounted.stderr
    );
}

/// A FIFO as the mounted namespace file blocked liveproof forever (read as it was, unlike the
/// token and `ca.crt`): refused as they are, naming the file, before any request.
#[tokio::test]
async fn a_fifo_as_the_mounted_namespace_is_refused_not_waited_on() {
    let home = tempfile::tempdir().expect("home");
    let mount = home.path().join("sa");
    std::fs::create_dir_all(&mount).expect("mount dir");
    std::fs::write(mount.join("token"), "not-a-secret").expect("token");
    // Read as PEM before the namespace; never used to connect here.
    std::fs::write(
        mount.join("ca.crt"),
        "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
    )
    .expect("ca.crt");
    let namespace = mount.join("namespace");
    let made = std::process::Command::new("mkfifo")
        .arg(&namespace)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let run = common::liveproof()
        .env("HOME", home.path())
        .env_remove("KUBECONFIG")
        .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        .env("KUBERNETES_SERVICE_PORT", "1")
        .env("LIVEPROOF_TEST_SERVICEACCOUNT_DIR", &mount)
        .args(&["verify", "deploy/web", "--image", "acme/web:1"])
        .since("2020-01-01T00:00:00Z")
        .json();
    let run = tokio::time::timeout(std::time::Duration::from_secs(60), run.run())
        .await
        .expect("liveproof ended: the FIFO was not waited on");
    let doc = common::RunExt::error_document(&run);
    assert!(
        doc.error
            .message
            .contains(namespace.to_str().expect("utf-8"))
            && doc.error.message.contains("FIFO"),
        "{}",
        doc.error.message
    );
}
