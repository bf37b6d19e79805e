//! `liveproof verify verification/NAME`: the Verification object read from the live cluster,
//! verified with what its spec states — the same report (text and JSON) as `verify` gives for
//! the equivalent flags — on the simulator and on the real API server. Change flags (and other
//! ways to name targets) with it are refused (exit 2, naming them): the object states the change.

use liveproof_testkit::binary as common;

use liveproof_testkit::e2e::control_plane::repo_root;
use liveproof_testkit::e2e::ControlPlane;
use liveproof_testkit::{Run, SimCluster};
use serde_json::{json, Value};

const SINCE: &str = "2026-07-12T10:00:00Z";

/// Deployment shop/cart with one pod of its only revision, started at 10:05, running
/// `127.0.0.1:1/cart:1` (a registry that refuses at once: nothing here asks it).
fn cart() -> Vec<Value> {
    let labels = json!({"app": "cart"});
    let image = "127.0.0.1:1/cart:1";
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "cart", "namespace": "shop", "uid": "uid-cart", "generation": 1},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": image}]}}},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "cart-h1", "namespace": "shop", "uid": "rs-cart",
                         "labels": {"app": "cart", "pod-template-hash": "h1"},
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "cart", "uid": "uid-cart", "controller": true}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "cart", "pod-template-hash": "h1"}},
                     "template": {"metadata": {"labels": {"app": "cart", "pod-template-hash": "h1"}},
                                  "spec": {"containers": [{"name": "app", "image": image}]}}}}),
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "cart-h1-a", "namespace": "shop",
                         "labels": {"app": "cart", "pod-template-hash": "h1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "cart-h1", "uid": "rs-cart", "controller": true}]},
            "spec": {"containers": [{"name": "app", "image": image}]},
            "status": {"phase": "Running", "startTime": "2026-07-12T10:05:00Z",
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                              "image": image,
                                              "imageID": format!("127.0.0.1:1/cart@sha256:{}", "a".repeat(64)),
                                              "state": {"running": {"startedAt": "2026-07-12T10:05:00Z"}}}]}}),
    ]
}

/// A Verification in shop, as `kubectl apply` stores it.
fn verification(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "liveproof.dev/v1alpha1", "kind": "Verification",
           "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"),
                        "generation": 1, "creationTimestamp": "2026-07-12T10:10:00Z"},
           "spec": spec,
           "status": {"observedGeneration": 0}})
}

fn objects() -> Vec<Value> {
    let mut objects = cart();
    objects.push(verification(
        "cart-1",
        json!({"targets": ["deploy/cart"], "since": SINCE, "image": ["127.0.0.1:1/cart:1"]}),
    ));
    objects.push(verification(
        "cart-2",
        json!({"targets": ["deploy/cart"], "since": SINCE, "image": ["127.0.0.1:1/cart:2"]}),
    ));
    objects.push(verification(
        "by-ref",
        json!({"targets": ["deploy/cart"], "commit": "HEAD"}),
    ));
    objects
}

async fn liveproof(args: &[&str], kubeconfig: &str) -> Run {
    common::liveproof()
        .args(args)
        .args(&["--kubeconfig", kubeconfig])
        .run()
        .await
}

/// A report with what differs between two runs of the same verify taken out (when it ran).
fn steady(run: &Run) -> Value {
    let mut report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    if let Some(map) = report.as_object_mut() {
        map.remove("generated_at");
    }
    report
}

#[tokio::test]
async fn verify_verification_renders_the_report_of_the_equivalent_flags() {
    let cluster = SimCluster::start(objects(), "shop").await;
    let kc = cluster.kubeconfig();
    for (object, image, code) in [
        ("cart-1", "127.0.0.1:1/cart:1", 0),
        ("cart-2", "127.0.0.1:1/cart:2", 1),
    ] {
        let flags = liveproof(
            &[
                "verify",
                "deploy/cart",
                "-n",
                "shop",
                "--since",
                SINCE,
                "--image",
                image,
                "-o",
                "json",
            ],
            kc,
        )
        .await;
        assert_eq!(flags.code, code, "{}", flags.stderr);
        for target in [
            format!("verification/{object}"),
            format!("shop/verif/{object}"),
        ] {
            let ours = liveproof(&["verify", &target, "-n", "shop", "-o", "json"], kc).await;
            assert_eq!(ours.code, code, "{target}: {}", ours.stderr);
            assert_eq!(steady(&ours), steady(&flags), "{target}");
        }
        // kubectl's `KIND NAME`, the namespace from the kubeconfig's context (shop), text.
        let text = liveproof(&["verify", "verification", object, "--color", "never"], kc).await;
        let flags_text = liveproof(
            &[
                "verify",
                "deploy/cart",
                "--since",
                SINCE,
                "--image",
                image,
                "--color",
                "never",
            ],
            kc,
        )
        .await;
        assert_eq!(text.code, code, "{}", text.stderr);
        assert_eq!(text.stdout, flags_text.stdout);
    }
    // --wait is this run's: a live one ends at once, as `verify --wait` does with the flags.
    let waited = liveproof(
        &[
            "verify",
            "verification/cart-1",
            "--wait",
            "--timeout",
            "30s",
            "-o",
            "json",
        ],
        kc,
    )
    .await;
    assert_eq!(waited.code, 0, "{}", waited.stderr);
    assert!(waited.report().wait.is_some(), "{}", waited.stdout);
}

#[tokio::test]
async fn verify_verification_refuses_change_flags_other_targets_and_bad_objects() {
    let cluster = SimCluster::start(objects(), "shop").await;
    let kc = cluster.kubeconfig();
    let refused = |run: &Run, words: &[&str]| {
        assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert!(run.stderr.contains("\nhint: "), "{}", run.stderr);
        for word in words {
            assert!(run.stderr.contains(word), "{word} in {}", run.stderr);
        }
    };
    let run = liveproof(
        &[
            "verify",
            "verification/cart-1",
            "--image",
            "127.0.0.1:1/cart:9",
            "--since",
            "10m",
        ],
        kc,
    )
    .await;
    refused(
        &run,
        &[
            "--since, --image with verification/cart-1",
            "states the change",
        ],
    );
    let run = liveproof(&["verify", "verification/cart-1", "-l", "app=cart"], kc).await;
    refused(&run, &["-l/--selector"]);
    // No name: said as such, not as an unknown kind.
    for bare in ["verification/", "shop/verif/"] {
        let run = liveproof(&["verify", bare], kc).await;
        refused(
            &run,
            &["a Verification needs its name", "verification/NAME"],
        );
        assert!(!run.stderr.contains("unknown kind"), "{}", run.stderr);
    }
    let run = liveproof(
        &[
            "verify",
            "verification/cart-1",
            "deploy/cart",
            "--since",
            SINCE,
        ],
        kc,
    )
    .await;
    refused(
        &run,
        &["verification/cart-1 is verified on its own, not with deploy/cart"],
    );
    let run = liveproof(&["verify", "verification/cart-9"], kc).await;
    refused(&run, &["verification cart-9 not found in namespace shop"]);
    let run = liveproof(&["verify", "verification/by-ref"], kc).await;
    refused(
        &run,
        &[
            "verification shop/by-ref: its spec is refused",
            "`HEAD` is a ref",
        ],
    );
    // -o json: the error document, as for any exit 2.
    let run = liveproof(
        &[
            "verify",
            "verification/cart-1",
            "--commit",
            "3f2c1ab",
            "-o",
            "json",
        ],
        kc,
    )
    .await;
    assert_eq!(run.code, 2);
    let doc: Value = serde_json::from_str(&run.stdout).expect("an error document");
    assert!(
        doc.to_string()
            .contains("--commit with verification/cart-1"),
        "{doc}"
    );
}

/// On the real API server: the CRD applied, a Verification created with kubectl, and
/// `verify verification/NAME` gives the report `verify` gives for the same flags.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_verification_reads_the_object_from_the_real_api_server() {
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the control plane: {e:#}"));
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        liveproof_testkit::kubectl::run(&plane.kubeconfig, args, stdin)
    };
    let crd = repo_root().join("deploy/verification-crd.yaml");
    kubectl(&["apply", "-f", crd.to_str().expect("utf-8")], None);
    kubectl(
        &[
            "wait",
            "--for=condition=established",
            "--timeout=60s",
            "crd/verifications.liveproof.dev",
        ],
        None,
    );
    kubectl(&["create", "namespace", "apps"], None);
    kubectl(
        &[
            "-n",
            "apps",
            "create",
            "deployment",
            "web",
            "--image=127.0.0.1:1/web:1.4.0",
        ],
        None,
    );
    kubectl(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: liveproof.dev/v1alpha1\nkind: Verification\nmetadata: {name: web-1-4, namespace: apps}\n\
             spec: {targets: [deploy/web], since: \"2026-07-12T10:00:00Z\", image: [\"127.0.0.1:1/web:1.4.0\"]}\n",
        ),
    );
    let kc = plane.kubeconfig.to_str().expect("utf-8");
    let flags = liveproof(
        &[
            "verify",
            "apps/deploy/web",
            "--since",
            SINCE,
            "--image",
            "127.0.0.1:1/web:1.4.0",
            "-o",
            "json",
        ],
        kc,
    )
    .await;
    let ours = liveproof(&["verify", "apps/verification/web-1-4", "-o", "json"], kc).await;
    // No kubelet runs here: no pod serves, so not live — the same answer both ways.
    assert_eq!(ours.code, flags.code, "{}\n{}", ours.stderr, flags.stderr);
    assert_eq!(ours.code, 1, "{}", ours.stderr);
    assert_eq!(steady(&ours), steady(&flags));
    let missing = liveproof(&["verify", "apps/verification/nope"], kc).await;
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("verification nope not found in namespace apps"),
        "{}",
        missing.stderr
    );
}
