//! `-l/--selector`: verify and stale take every workload whose labels match, in -n or with -A,
//! live (the simulator) and offline (`--from`) alike; a selector that matches nothing or that
//! kubectl would refuse is an error (exit 2) saying so.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use serde_json::{json, Value};

/// A Deployment `name` in `ns` labelled `part-of`, with one pod started after the change; its
/// image's registry (127.0.0.1:1) refuses connections at once.
fn workload(ns: &str, name: &str, part_of: &str) -> Vec<Value> {
    let labels = json!({"app": name});
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{name}"), "generation": 1,
                         "labels": {"app.kubernetes.io/part-of": part_of}},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": format!("127.0.0.1:1/{name}:1")}]}}},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("{name}-h1"), "namespace": ns,
                         "labels": {"app": name, "pod-template-hash": "h1"},
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": format!("uid-{name}"), "controller": true}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name, "pod-template-hash": "h1"}},
                     "template": {"metadata": {"labels": {"app": name, "pod-template-hash": "h1"}},
                                  "spec": {"containers": [{"name": "app", "image": format!("127.0.0.1:1/{name}:1")}]}}}}),
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("{name}-h1-a"), "namespace": ns,
                         "labels": {"app": name, "pod-template-hash": "h1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{name}-h1"), "uid": format!("rs-{name}"), "controller": true}]},
            "spec": {"containers": [{"name": "app", "image": format!("127.0.0.1:1/{name}:1")}]},
            "status": {"phase": "Running", "startTime": "2026-07-12T10:05:00Z",
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                              "image": format!("127.0.0.1:1/{name}:1"),
                                              "imageID": format!("127.0.0.1:1/{name}@sha256:{}", "a".repeat(64)),
                                              "state": {"running": {"startedAt": "2026-07-12T10:05:00Z"}}}]}}),
    ]
}

fn shop() -> Vec<Value> {
    let mut objects = Vec::new();
    for (ns, name, part_of) in [
        ("shop", "cart", "shop"),
        ("shop", "checkout", "shop"),
        ("shop", "search", "shop"),
        ("shop", "billing", "finance"),
        ("web", "storefront", "shop"),
    ] {
        objects.extend(workload(ns, name, part_of));
    }
    objects
}

fn names(report: &liveproof_evidence::Report) -> Vec<String> {
    let mut names: Vec<String> = report
        .targets
        .iter()
        .map(|t| format!("{}/{}", t.namespace, t.name))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn verify_takes_every_workload_the_selector_matches_live_and_offline() {
    let cluster = SimCluster::start(shop(), "shop").await;
    let kubeconfig = cluster.kubeconfig();
    // `verify ARGS… --since … -o json` against the simulator.
    let verify = |args: &[&str]| {
        let mut all = vec!["verify"];
        all.extend_from_slice(args);
        all.extend([
            "--since",
            "2026-07-12T10:00:00Z",
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig,
        ]);
        all.iter()
            .map(|a| (*a).to_string())
            .collect::<Vec<String>>()
    };
    let run_with = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::liveproof().args(&args).run().await
    };
    cluster.sim.requests().reset();
    let run = run_with(verify(&[
        "-l",
        "app.kubernetes.io/part-of=shop",
        "-n",
        "shop",
    ]))
    .await;
    let report = run.report();
    assert_eq!(
        names(&report),
        ["shop/cart", "shop/checkout", "shop/search"],
        "{}",
        run.stderr
    );
    // What the selector listed is what is judged: the Deployments are read once, not
    // listed for their names and then read again.
    let requests = cluster.sim.requests();
    assert_eq!(
        requests.count("list", "/apis/apps/v1/namespaces/shop/deployments")
            + requests.count("get", "/apis/apps/v1/namespaces/shop/deployments"),
        1,
        "{:?}",
        requests.snapshot()
    );
    assert_eq!(run.code, i32::from(report.verdict.exit_code()));

    let all = run_with(verify(&["-l", "app.kubernetes.io/part-of in (shop)", "-A"])).await;
    assert_eq!(
        names(&all.report()),
        [
            "shop/cart",
            "shop/checkout",
            "shop/search",
            "web/storefront"
        ],
        "{}",
        all.stderr
    );

    let with_target = run_with(verify(&[
        "deploy/billing",
        "-l",
        "app.kubernetes.io/part-of!=shop",
        "-n",
        "shop",
    ]))
    .await;
    assert_eq!(
        names(&with_target.report()),
        ["shop/billing"],
        "once, not twice"
    );

    let dump = tempfile::tempdir().expect("tempdir");
    let path = dump.path().join("cluster.json");
    std::fs::write(
        &path,
        serde_json::to_string(&json!({"kind": "List", "apiVersion": "v1", "items": shop()}))
            .expect("json"),
    )
    .expect("write");
    let offline = common::liveproof()
        .args(&[
            "verify",
            "-l",
            "app.kubernetes.io/part-of=shop",
            "-n",
            "shop",
        ])
        .since("2026-07-12T10:00:00Z")
        .args(&["--from", path.to_str().expect("utf-8")])
        .json()
        .run()
        .await;
    assert_eq!(
        names(&offline.report()),
        ["shop/cart", "shop/checkout", "shop/search"],
        "{}",
        offline.stderr
    );
    cluster.sim.shutdown().await;
}

#[tokio::test]
async fn stale_checks_every_workload_the_selector_matches() {
    let cluster = SimCluster::start(shop(), "shop").await;
    let run = common::liveproof()
        .args(&[
            "stale",
            "-l",
            "app.kubernetes.io/part-of=finance",
            "-n",
            "shop",
        ])
        .on(&cluster)
        .json()
        .args(&["--check-digests", "--insecure-registry", "127.0.0.1:1"])
        .run()
        .await;
    let rows = common::stale_rows(&run.stdout);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        ["billing"],
        "{}",
        run.stderr
    );
    cluster.sim.shutdown().await;
}

#[tokio::test]
async fn a_selector_matching_nothing_or_malformed_is_an_error_saying_so() {
    let cluster = SimCluster::start(shop(), "shop").await;
    let kubeconfig = cluster.kubeconfig();
    let select = |command: &'static str, selector: &'static str| {
        let mut args = vec![
            command,
            "-l",
            selector,
            "-n",
            "shop",
            "--kubeconfig",
            kubeconfig,
        ];
        if command == "verify" {
            args.extend(["--since", "2026-07-12T10:00:00Z"]);
        }
        args
    };
    for command in ["verify", "stale"] {
        let run = common::liveproof()
            .args(&select(command, "team=nobody"))
            .run()
            .await;
        assert_eq!(run.code, 2, "{command}: {}", run.stdout);
        assert!(
            run.stderr.contains("no Deployment, StatefulSet, DaemonSet or Rollout in namespace shop has labels matching `team=nobody`"),
            "{command}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains("kubectl get deploy,sts,ds,ro -n shop --show-labels"),
            "{}",
            run.stderr
        );

        let run = common::liveproof()
            .args(&select(command, "team in nobody"))
            .run()
            .await;
        assert_eq!(run.code, 2, "{command}: {}", run.stdout);
        assert!(
            run.stderr.contains(
                "label selector `team in nobody`: `team in nobody`: the values go in parentheses"
            ),
            "{command}: {}",
            run.stderr
        );
    }
    let run = common::liveproof()
        .args(&["stale", "deploy/cart", "-l", "app=cart"])
        .kubeconfig(kubeconfig)
        .run()
        .await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    cluster.sim.shutdown().await;
}
