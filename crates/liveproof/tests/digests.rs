//! Seed 001 end to end, with a real OCI registry (CNCF distribution, built by `cargo xtask`) and the simulator
//! as the cluster: a `:latest` rebuild leaves templates byte-identical; exactly the pods on the
//! old digest are stale, per node platform; `--restart` patches only those, and nothing at all
//! when nothing is stale.

use liveproof_testkit::binary as common;

use std::time::Duration;

use liveproof_testkit::wait_for;

use liveproof_testkit::SimCluster;

use liveproof_evidence::{Check, Status};
use liveproof_testkit::registry::{push_multiarch, push_single, PushedIndex, RegistryServer};
use serde_json::{json, Value};

const NS: &str = "bots";

fn node(name: &str, arch: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/arch": arch}},
           "status": {"nodeInfo": {"operatingSystem": "linux", "architecture": arch, "kubeletVersion": "v1.33.2",
                                   "containerRuntimeVersion": "containerd://1.7.27", "kernelVersion": "6.1.0",
                                   "osImage": "Debian GNU/Linux 12", "bootID": "b", "machineID": "m", "systemUUID": "s",
                                   "kubeProxyVersion": "", "architecture_": null}}})
}

/// A Deployment rolled out long ago, its ReplicaSet, and one pod per `(node, running digest)`.
fn workload(
    name: &str,
    image: &str,
    pods: &[(&str, &str)],
    pull_secret: Option<&str>,
) -> Vec<Value> {
    let hash = "5d8f7c9b4";
    let mut spec = json!({"containers": [{"name": "app", "image": image}]});
    if let Some(secret) = pull_secret {
        spec["imagePullSecrets"] = json!([{"name": secret}]);
    }
    let template = |with_hash: bool| {
        let mut labels = json!({"app": name});
        if with_hash {
            labels["pod-template-hash"] = json!(hash);
        }
        json!({"metadata": {"labels": labels}, "spec": spec.clone()})
    };
    let uid = format!("uid-{name}");
    let mut out = vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": name, "namespace": NS, "uid": uid, "generation": 3},
               "spec": {"replicas": pods.len(), "selector": {"matchLabels": {"app": name}}, "template": template(false)},
               "status": {"observedGeneration": 3, "replicas": pods.len(), "updatedReplicas": pods.len(),
                          "readyReplicas": pods.len(), "availableReplicas": pods.len()}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": format!("{name}-{hash}"), "namespace": NS, "generation": 1,
                            "labels": {"app": name, "pod-template-hash": hash},
                            "annotations": {"deployment.kubernetes.io/revision": "3"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": uid}]},
               "spec": {"replicas": pods.len(), "selector": {"matchLabels": {"app": name, "pod-template-hash": hash}},
                        "template": template(true)},
               "status": {"observedGeneration": 1, "replicas": pods.len()}}),
    ];
    for (i, (node, digest)) in pods.iter().enumerate() {
        let repo = image.split(':').take(2).collect::<Vec<_>>().join(":");
        let repo = repo
            .rsplit_once(':')
            .map_or(repo.clone(), |(r, _)| r.to_string());
        out.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("{name}-{hash}-{i}"), "namespace": NS, "labels": {"app": name, "pod-template-hash": hash}},
            "spec": {"nodeName": node, "containers": spec["containers"].clone(), "imagePullSecrets": spec.get("imagePullSecrets").cloned().unwrap_or(json!([]))},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": image,
                                              "imageID": format!("{repo}@{digest}"),
                                              "state": {"running": {"startedAt": "2026-09-23T08:00:00Z"}}}]}}));
    }
    out
}

struct Story {
    registry: RegistryServer,
    cluster: SimCluster,
    old: PushedIndex,
    new: PushedIndex,
}

/// Three workloads on `:latest`: `panel` pulled before the rebuild (stale on both platforms),
/// `panel-fresh` after it (current: one pod records the platform digest, one the index digest),
/// `worker` a single-platform image that did not change; plus `ghost` whose tag does not exist.
async fn story() -> Story {
    let registry = RegistryServer::start();
    let pusher = registry.pusher();
    let old = push_multiarch(&pusher, "bots/userbot-panel", "latest", "september").await;
    let worker = push_single(&pusher, "bots/worker", "latest", "one").await;
    // The rebuild: same tag, new content.
    let new = push_multiarch(&pusher, "bots/userbot-panel", "latest", "october").await;
    let panel = format!("{}/bots/userbot-panel:latest", registry.host);
    let mut objects = vec![node("node-amd", "amd64"), node("node-arm", "arm64")];
    objects.extend(workload(
        "panel",
        &panel,
        &[
            ("node-amd", old.amd64.digest.as_str()),
            ("node-arm", old.arm64.digest.as_str()),
        ],
        None,
    ));
    objects.extend(workload(
        "panel-fresh",
        &panel,
        &[
            ("node-amd", new.amd64.digest.as_str()),
            ("node-arm", new.digest.as_str()),
        ],
        None,
    ));
    objects.extend(workload(
        "worker",
        &format!("{}/bots/worker:latest", registry.host),
        &[("node-amd", worker.digest.as_str())],
        None,
    ));
    let cluster = SimCluster::start(objects, NS).await;
    Story {
        registry,
        cluster,
        old,
        new,
    }
}

fn writes(cluster: &SimCluster) -> u64 {
    let log = cluster.sim.requests();
    ["patch", "update", "create", "delete"]
        .iter()
        .map(|v| log.count(v, "/"))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_the_pods_on_the_old_digest_are_stale() {
    let s = story().await;
    let host = s.registry.host.clone();
    let run = common::liveproof()
        .args(&["stale", "-n", NS])
        .kubeconfig(s.cluster.kubeconfig())
        .args(&["--insecure-registry", &host])
        .json()
        .run()
        .await;
    assert_eq!(
        run.code, 1,
        "stale workloads exit 1: {}{}",
        run.stdout, run.stderr
    );
    let verdicts = common::stale_rows(&run.stdout);
    assert_eq!(
        verdicts.get("panel").map(String::as_str),
        Some("stale"),
        "{verdicts:?}"
    );
    assert_eq!(
        verdicts.get("panel-fresh").map(String::as_str),
        Some("current"),
        "{verdicts:?}"
    );
    assert_eq!(
        verdicts.get("worker").map(String::as_str),
        Some("current"),
        "{verdicts:?}"
    );
    // The old pods' digests are named, and what each platform should run now.
    let panel = common::stale_row(&run.stdout, "panel");
    assert!(
        panel.running.contains(&s.old.arm64.digest.to_string())
            && panel.current.contains(&s.new.arm64.digest.to_string()),
        "{panel:?}"
    );
    assert_eq!(writes(&s.cluster), 0, "reading never writes");

    // verify's image_digest_current says the same, per workload.
    let run = common::liveproof()
        .args(&["verify", "deploy/panel", "deploy/panel-fresh", "-n", NS])
        .kubeconfig(s.cluster.kubeconfig())
        .args(&["--insecure-registry", &host])
        .since("2026-09-01T00:00:00Z")
        .json()
        .run()
        .await;
    let report = run.report();
    let digest_status = |i: usize| {
        report.targets[i]
            .evidence
            .iter()
            .find(|e| e.check == Check::ImageDigestCurrent)
            .map(|e| e.status)
    };
    assert_eq!(digest_status(0), Some(Status::Fail), "{}", run.stdout);
    assert_eq!(digest_status(1), Some(Status::Pass), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_patches_only_the_stale_workload() {
    let s = story().await;
    let host = s.registry.host.clone();
    let kc = s.cluster.kubeconfig().to_string();

    let dry = common::liveproof()
        .args(&["stale", "-n", NS])
        .kubeconfig(&kc)
        .args(&["--insecure-registry", &host, "--restart", "--dry-run"])
        .run()
        .await;
    assert!(
        dry.stdout
            .contains("would PATCH deployment bots/panel (strategic merge):"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("kubectl.kubernetes.io/restartedAt"),
        "{}",
        dry.stdout
    );
    assert_eq!(
        dry.stdout.matches("would PATCH").count(),
        1,
        "only the stale one: {}",
        dry.stdout
    );
    assert_eq!(writes(&s.cluster), 0, "--dry-run sends nothing");

    // -o json with --restart: one JSON document on stdout, nothing else, what would be
    // patched under `restart`.
    let json = common::liveproof()
        .args(&["stale", "-n", NS])
        .kubeconfig(&kc)
        .args(&["--insecure-registry", &host, "--restart", "--dry-run"])
        .json()
        .run()
        .await;
    let doc: serde_json::Value = serde_json::from_str(&json.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", json.stdout));
    assert_eq!(doc["schema"], "liveproof/stale/v1", "{doc}");
    assert_eq!(doc["restart"]["dry_run"], true, "{doc}");
    assert_eq!(
        doc["restart"]["patched"],
        serde_json::json!(["bots/deployment/panel"]),
        "{doc}"
    );
    assert_eq!(writes(&s.cluster), 0, "--dry-run sends nothing");

    let run = common::liveproof()
        .args(&["stale", "-n", NS])
        .kubeconfig(&kc)
        .args(&["--insecure-registry", &host, "--restart"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        writes(&s.cluster),
        1,
        "one patch, for the one stale workload: {:?}",
        s.cluster.sim.requests().snapshot()
    );
    let patched = s
        .cluster
        .sim
        .get("apps/v1", "Deployment", Some(NS), "panel")
        .expect("panel");
    assert!(
        patched
            .pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")
            .is_some(),
        "{patched}"
    );
    for untouched in ["panel-fresh", "worker"] {
        let d = s
            .cluster
            .sim
            .get("apps/v1", "Deployment", Some(NS), untouched)
            .expect("exists");
        assert!(
            d.pointer("/spec/template/metadata/annotations").is_none(),
            "{untouched} was touched: {d}"
        );
        assert_eq!(
            d["metadata"]["generation"], 3,
            "{untouched} generation moved"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_stale_means_no_request_at_all() {
    let s = story().await;
    let host = s.registry.host.clone();
    let run = common::liveproof()
        .args(&["stale", "deploy/panel-fresh", "deploy/worker", "-n", NS])
        .kubeconfig(s.cluster.kubeconfig())
        .args(&["--insecure-registry", &host, "--restart"])
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("nothing to restart"), "{}", run.stdout);
    assert_eq!(
        writes(&s.cluster),
        0,
        "{:?}",
        s.cluster.sim.requests().snapshot()
    );
    let _ = &s.new;
}

/// `-f`: only the workloads the repository declares are reached (seed 001: five more
/// workloads ran our images with no manifest here, and must never be restarted by it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_scope_what_is_checked_and_restarted() {
    let s = story().await;
    let host = s.registry.host.clone();
    let dir = tempfile::tempdir().expect("tempdir");
    let image = format!("{host}/bots/userbot-panel:latest");
    std::fs::write(
        dir.path().join("panel-fresh.yaml"),
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: panel-fresh\n  namespace: bots\nspec:\n  selector:\n    matchLabels: {{app: panel-fresh}}\n  template:\n    metadata:\n      labels: {{app: panel-fresh}}\n    spec:\n      containers:\n      - name: app\n        image: {image}\n"),
    )
    .expect("manifest");
    let run = common::liveproof()
        .args(&["stale", "-f", dir.path().to_str().expect("utf-8")])
        .kubeconfig(s.cluster.kubeconfig())
        .args(&["--insecure-registry", &host, "--restart"])
        .json()
        .run()
        .await;
    // `stale -o json --restart` is one JSON document: parsed whole, nothing cut out.
    let verdicts = common::stale_rows(&run.stdout);
    assert_eq!(
        verdicts.keys().cloned().collect::<Vec<_>>(),
        vec!["panel-fresh".to_string()],
        "{}",
        run.stdout
    );
    assert_eq!(
        writes(&s.cluster),
        0,
        "the stale `panel` is not the repository's to restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_trouble_is_unknown_never_current() {
    let s = story().await;
    // A tag the registry does not have, and a registry that does not answer.
    let missing = format!("{}/bots/ghost:latest", s.registry.host);
    let objects = workload(
        "ghost",
        &missing,
        &[(
            "node-amd",
            "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        )],
        None,
    )
    .into_iter()
    .chain(workload(
        "offline",
        "127.0.0.1:1/bots/offline:latest",
        &[(
            "node-amd",
            "sha256:2222222222222222222222222222222222222222222222222222222222222222",
        )],
        None,
    ))
    .chain([node("node-amd", "amd64")])
    .collect();
    let cluster = SimCluster::start(objects, NS).await;
    let run = common::liveproof()
        .args(&["stale", "-n", NS])
        .on(&cluster)
        .args(&[
            "--insecure-registry",
            &s.registry.host,
            "--insecure-registry",
            "127.0.0.1:1",
            "--restart",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 3, "unknown only: {}{}", run.stdout, run.stderr);
    // `stale -o json --restart` is one JSON document: parsed whole, nothing cut out.
    let verdicts = common::stale_rows(&run.stdout);
    assert_eq!(
        verdicts.get("ghost").map(String::as_str),
        Some("unknown"),
        "{}",
        run.stdout
    );
    assert_eq!(
        verdicts.get("offline").map(String::as_str),
        Some("unknown"),
        "{}",
        run.stdout
    );
    let ghost = common::stale_row(&run.stdout, "ghost");
    assert!(ghost.why.contains("no such manifest"), "{ghost:?}");
    let offline = common::stale_row(&run.stdout, "offline");
    assert!(
        offline.why.contains("cannot reach registry 127.0.0.1:1"),
        "{offline:?}"
    );
    assert_eq!(writes(&cluster), 0, "never a restart on a guess");
}

/// Basic auth (htpasswd): without credentials the tag cannot be read (unknown, with why);
/// with the pod's imagePullSecret it can. The password never appears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_secrets_authenticate_and_never_print() {
    let password = "s3cret-pull-pass";
    let registry = RegistryServer::start_with_htpasswd("puller", password);
    let pusher = registry.pusher();
    let old = push_single(&pusher, "bots/worker", "latest", "one").await;
    push_single(&pusher, "bots/worker", "latest", "two").await;
    let image = format!("{}/bots/worker:latest", registry.host);
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let dockerconfig =
        json!({"auths": {registry.host.clone(): {"auth": b64(&format!("puller:{password}"))}}})
            .to_string();
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
                        "metadata": {"name": "pull", "namespace": NS}, "data": {".dockerconfigjson": b64(&dockerconfig)}});
    let mut with_secret = workload(
        "worker",
        &image,
        &[("node-amd", old.digest.as_str())],
        Some("pull"),
    );
    with_secret.extend([node("node-amd", "amd64"), secret]);
    let cluster = SimCluster::start(with_secret, NS).await;
    let home = tempfile::tempdir().expect("tempdir");
    let env = [("DOCKER_CONFIG", home.path().to_str().expect("utf-8"))];
    let run = common::liveproof()
        .args(&[
            "stale",
            "-n",
            NS,
            "--kubeconfig",
            cluster.kubeconfig(),
            "--insecure-registry",
            &registry.host,
            "-o",
            "json",
        ])
        .envs(&env)
        .run()
        .await;
    assert_eq!(
        common::stale_rows(&run.stdout)
            .get("worker")
            .map(String::as_str),
        Some("stale"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stdout.contains(password) && !run.stderr.contains(password));

    let without = workload("worker", &image, &[("node-amd", old.digest.as_str())], None)
        .into_iter()
        .chain([node("node-amd", "amd64")])
        .collect();
    let cluster = SimCluster::start(without, NS).await;
    let run = common::liveproof()
        .args(&[
            "stale",
            "-n",
            NS,
            "--kubeconfig",
            cluster.kubeconfig(),
            "--insecure-registry",
            &registry.host,
            "-o",
            "json",
        ])
        .envs(&env)
        .run()
        .await;
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        common::stale_rows(&run.stdout)
            .get("worker")
            .map(String::as_str),
        Some("unknown"),
        "{}",
        run.stdout
    );
}

/// `--restart --wait`: the restarted workload is verified to live — its generation moved, new
/// pods started after the restart run what the tag is now. The test plays the Deployment
/// controller once the patch lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_then_wait_until_the_new_build_is_live() {
    let s = story().await;
    let host = s.registry.host.clone();
    let kc = s.cluster.kubeconfig().to_string();
    let args = [
        "stale",
        "deploy/panel",
        "-n",
        NS,
        "--kubeconfig",
        &kc,
        "--insecure-registry",
        &host,
        "--restart",
        "--wait",
        "--timeout",
        "60s",
    ];
    let restarting = common::liveproof().args(&args).run();
    let controller = async {
        let patched = wait_for("the restart patch", Duration::from_secs(50), || async {
            let d = s
                .cluster
                .sim
                .get("apps/v1", "Deployment", Some(NS), "panel")
                .expect("panel");
            d.pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")
                .is_some()
                .then_some(d)
        })
        .await;
        // Time passing is the point: the new pods start in a later second than the restart.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let started = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .expect("now")
            .to_string();
        let generation = patched["metadata"]["generation"].clone();
        let mut template = patched["spec"]["template"].clone();
        template["metadata"]["labels"]["pod-template-hash"] = json!("7f6d5c4b3");
        let image = template["spec"]["containers"][0]["image"].clone();
        s.cluster.sim.apply(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "panel-7f6d5c4b3", "namespace": NS, "generation": 1,
                         "labels": {"app": "panel", "pod-template-hash": "7f6d5c4b3"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "panel", "uid": "uid-panel"}]},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "panel", "pod-template-hash": "7f6d5c4b3"}}, "template": template},
            "status": {"observedGeneration": 1, "replicas": 2}}));
        let repo = format!("{host}/bots/userbot-panel");
        for (i, (node, digest)) in [
            ("node-amd", &s.new.amd64.digest),
            ("node-arm", &s.new.arm64.digest),
        ]
        .into_iter()
        .enumerate()
        {
            s.cluster.sim.apply(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("panel-7f6d5c4b3-{i}"), "namespace": NS, "labels": {"app": "panel", "pod-template-hash": "7f6d5c4b3"}},
                "spec": {"nodeName": node, "containers": [{"name": "app", "image": image.clone()}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                           "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": image.clone(),
                                                  "imageID": format!("{repo}@{digest}"), "state": {"running": {"startedAt": started}}}]}}));
        }
        for i in 0..2 {
            s.cluster
                .sim
                .delete("v1", "Pod", Some(NS), &format!("panel-5d8f7c9b4-{i}"));
        }
        let mut done = s
            .cluster
            .sim
            .get("apps/v1", "Deployment", Some(NS), "panel")
            .expect("panel");
        done["status"] = json!({"observedGeneration": generation, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2});
        s.cluster.sim.apply(done);
    };
    let (run, ()) = tokio::join!(restarting, controller);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("restarted deployment/bots/panel")
            || run.stdout.contains("restarted bots/deployment/panel"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("verdict: live"), "{}", run.stdout);
    assert!(
        run.stdout.contains("✓ image_digest_current"),
        "the new pods run the new build: {}",
        run.stdout
    );
}

/// `--image repo@sha256:INDEX`: a pod recording the index digest and one recording its
/// platform entry both run it (the index is resolved at the registry); another digest does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_given_by_digest_matches_the_index_or_its_platform_entry() {
    let s = story().await;
    let host = s.registry.host.clone();
    let verify = |image: String| {
        let kubeconfig = s.cluster.kubeconfig().to_string();
        let host = host.clone();
        async move {
            common::liveproof()
                .args(&["verify", "deploy/panel-fresh", "-n", NS])
                .kubeconfig(&kubeconfig)
                .since("2026-09-01T00:00:00Z")
                .args(&["--image", &image, "--insecure-registry", &host])
                .json()
                .run()
                .await
        }
    };
    let pod_spec = |run: &common::Run| {
        run.report().targets[0]
            .evidence
            .iter()
            .find(|e| e.check == Check::PodSpec)
            .map(|e| e.status)
    };
    // panel-fresh: node-amd records the amd64 entry's digest, node-arm the index digest.
    for image in [
        format!("{host}/bots/userbot-panel@{}", s.new.digest),
        format!("{host}/bots/userbot-panel:latest@{}", s.new.digest),
    ] {
        let run = verify(image).await;
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert_eq!(pod_spec(&run), Some(Status::Pass), "{}", run.stdout);
    }
    // The old build's index: neither it nor its entries run.
    let run = verify(format!("{host}/bots/userbot-panel@{}", s.old.digest)).await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(pod_spec(&run), Some(Status::Fail), "{}", run.stdout);
    let spec = run.report().targets[0].evidence[0].clone();
    assert_eq!(spec.check, Check::SpecReadback);
    assert_eq!(
        spec.status,
        Status::Skip,
        "a tag in the template says nothing of the digest: the pods decide"
    );
}
