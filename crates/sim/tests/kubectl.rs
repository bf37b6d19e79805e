//! Fidelity against the real `kubectl`: it must not notice it talks to the simulator.
//!
//! kubectl comes from `LIVEPROOF_KUBECTL`, else from the peers cache `cargo xtask` builds it into
//! (the pinned k8s.io/kubernetes). `/usr/bin/kubectl` may be a gcloud dispatcher, so PATH is not used.

use liveproof_testkit::sim_http as common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use liveproof_sim::SimHandle;
use serde_json::{json, Value};

use liveproof_testkit::kubectl::kubectl_path;
use liveproof_testkit::within_async;

struct Kubectl {
    bin: PathBuf,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Kubectl {
    fn new(sim: &SimHandle) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig, "apps")
            .expect("write kubeconfig");
        Self {
            bin: kubectl_path(),
            dir,
            kubeconfig,
        }
    }

    /// Starts kubectl with its own HOME and discovery cache; output goes to files.
    fn spawn(&self, args: &[&str], tag: &str) -> (Child, PathBuf, PathBuf) {
        let out = self.dir.path().join(format!("{tag}.out"));
        let err = self.dir.path().join(format!("{tag}.err"));
        let child = Command::new(&self.bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.dir.path())
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .env_remove("KUBECTL_EXTERNAL_DIFF")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.bin.display()));
        (child, out, err)
    }

    /// Runs kubectl to completion, killing it after `timeout`.
    async fn run_for(&self, args: &[&str], timeout: Duration) -> Output {
        let (child, out, err) = self.spawn(
            args,
            &format!(
                "run-{}",
                args.join("_")
                    .replace(['/', '=', ' ', '{', '}', '"', ':'], "")
            ),
        );
        let code = wait(child, timeout).await;
        let o = Output {
            code,
            stdout: read(&out),
            stderr: read(&err),
        };
        assert!(
            o.code.is_some(),
            "kubectl {args:?} timed out; stderr: {}",
            o.stderr
        );
        o
    }

    async fn run(&self, args: &[&str]) -> Output {
        self.run_for(args, Duration::from_secs(20)).await
    }

    async fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args).await;
        assert_eq!(o.code, Some(0), "kubectl {args:?} failed: {}", o.stderr);
        o.stdout
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The exit code, or None (and the process killed) after `timeout`.
async fn wait(mut child: Child, timeout: Duration) -> Option<i32> {
    let status = within_async(timeout, Duration::from_millis(50), || {
        std::future::ready(child.try_wait().expect("try_wait"))
    })
    .await;
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status.and_then(|status| status.code())
}

/// What `path` holds once `pred` holds of it, or at `timeout`.
async fn poll_until(path: &Path, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
    within_async(timeout, Duration::from_millis(100), || {
        let s = read(path);
        std::future::ready(pred(&s).then_some(s))
    })
    .await
    .unwrap_or_else(|| read(path))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_json_table_and_field_selector() {
    let sim = common::start().await;
    let k = Kubectl::new(&sim);

    let list: Value = serde_json::from_str(
        &k.ok(&["get", "pods", "-l", "app=inventory", "-o", "json"])
            .await,
    )
    .expect("json");
    assert_eq!(
        common::names(&list),
        ["inventory-7d9c8b6f5d-q8m7z", "inventory-7d9c8b6f5d-x4k2p"]
    );
    assert_eq!(
        list["items"][0]["metadata"]["labels"]["pod-template-hash"],
        "7d9c8b6f5d"
    );
    // kubectl asked for aggregated discovery, got plain JSON and fell back to the legacy endpoints.
    assert!(
        sim.requests().count("get", "/api/v1") >= 1,
        "{:?}",
        sim.requests().snapshot()
    );

    let table = k.ok(&["get", "deploy"]).await;
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{table}"
    );
    assert_eq!(lines[1][..4], ["inventory", "2/2", "2", "2"], "{table}");

    let pods = k.ok(&["get", "pods"]).await;
    assert!(
        pods.lines()
            .next()
            .is_some_and(|h| h.split_whitespace().collect::<Vec<_>>()
                == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]),
        "{pods}"
    );
    assert!(
        pods.lines()
            .any(|l| l.starts_with("report-builder") && l.contains("Pending")),
        "{pods}"
    );

    let running = k
        .ok(&[
            "get",
            "pods",
            "--field-selector",
            "status.phase=Running",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(
        running.lines().collect::<Vec<_>>(),
        [
            "pod/inventory-7d9c8b6f5d-q8m7z",
            "pod/inventory-7d9c8b6f5d-x4k2p"
        ]
    );

    let all = k
        .ok(&["get", "pods", "-A", "-l", "app=inventory", "-o", "name"])
        .await;
    assert_eq!(all.lines().count(), 3, "{all}");

    // A custom resource known only from the fixtures resolves by its plural.
    let hr = k.ok(&["get", "helmreleases", "-o", "name"]).await;
    assert_eq!(hr.trim(), "helmrelease.helm.toolkit.fluxcd.io/inventory");

    let missing = k.run(&["get", "deploy", "nope"]).await;
    assert_eq!(missing.code, Some(1));
    assert!(
        missing
            .stderr
            .contains("deployments.apps \"nope\" not found"),
        "{}",
        missing.stderr
    );

    let bad = k
        .run(&["get", "pods", "--field-selector", "spec.foo=bar"])
        .await;
    assert_eq!(bad.code, Some(1));
    assert!(
        bad.stderr.contains("field label not supported: spec.foo"),
        "{}",
        bad.stderr
    );

    sim.deny("list", "pods", Some("apps"));
    let denied = k.run(&["get", "pods"]).await;
    assert_eq!(denied.code, Some(1));
    assert!(
        denied
            .stderr
            .contains("cannot list resource \"pods\" in API group \"\" in the namespace \"apps\""),
        "{}",
        denied.stderr
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_merge_and_strategic() {
    let sim = common::start().await;
    let k = Kubectl::new(&sim);
    let out = k
        .ok(&["patch", "deployment", "inventory", "--type", "merge", "-p",
            r#"{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2025-05-03T10:00:00Z"}}}}}"#])
        .await;
    assert_eq!(out.trim(), "deployment.apps/inventory patched");
    let d = sim
        .get("apps/v1", "Deployment", Some("apps"), "inventory")
        .expect("deployment");
    assert_eq!(
        d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"],
        "2025-05-03T10:00:00Z"
    );
    assert_eq!(d["metadata"]["generation"], 3);

    let out = k
        .ok(&["patch", "deployment", "inventory", "--type", "strategic", "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"inventory","env":[{"name":"LOG_LEVEL","value":"debug"}]}]}}}}"#])
        .await;
    assert_eq!(out.trim(), "deployment.apps/inventory patched");
    let d = sim
        .get("apps/v1", "Deployment", Some("apps"), "inventory")
        .expect("deployment");
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["env"][0], json!({"name": "LOG_LEVEL", "value": "debug"}));
    assert_eq!(c["env"][1]["name"], "DB_PASSWORD");
    assert_eq!(c["image"], "registry.example.com/shop/inventory:1.4.2");
    assert_eq!(
        sim.requests().count(
            "patch",
            "/apis/apps/v1/namespaces/apps/deployments/inventory"
        ),
        2
    );

    // Patching to the same content is a no-op the server does not version.
    let rv = sim.resource_version();
    let again = k
        .ok(&[
            "patch",
            "deployment",
            "inventory",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"app":"inventory"}}}"#,
        ])
        .await;
    assert_eq!(
        again.trim(),
        "deployment.apps/inventory patched (no change)"
    );
    assert_eq!(sim.resource_version(), rv);

    let json_patch = k
        .ok(&[
            "patch",
            "deployment",
            "inventory",
            "--type",
            "json",
            "-p",
            r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#,
        ])
        .await;
    assert_eq!(json_patch.trim(), "deployment.apps/inventory patched");
    let got = k
        .ok(&[
            "get",
            "deployment",
            "inventory",
            "-o",
            "jsonpath={.spec.replicas}",
        ])
        .await;
    assert_eq!(got, "3");
    sim.shutdown().await;
}

fn rollout_state(sim: &SimHandle, updated: i64, available: i64, observed: i64) {
    let mut d = sim
        .get("apps/v1", "Deployment", Some("apps"), "inventory")
        .expect("deployment");
    d["status"]["updatedReplicas"] = json!(updated);
    d["status"]["availableReplicas"] = json!(available);
    d["status"]["readyReplicas"] = json!(available);
    d["status"]["replicas"] = json!(2);
    d["status"]["observedGeneration"] = json!(observed);
    sim.apply(d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_status_completes_and_waits() {
    let sim = common::start().await;
    let k = Kubectl::new(&sim);
    let done = k
        .run(&["rollout", "status", "deployment/inventory", "--timeout=10s"])
        .await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert!(
        done.stdout.contains("successfully rolled out"),
        "{}",
        done.stdout
    );

    // A rollout in progress: kubectl must block until the controller finishes it.
    rollout_state(&sim, 1, 1, 2);
    let (child, out, err) = k.spawn(
        &["rollout", "status", "deployment/inventory", "--timeout=15s"],
        "rollout",
    );
    let waiting = poll_until(&out, Duration::from_secs(5), |s| s.contains("Waiting")).await;
    assert!(
        waiting.contains("1 out of 2 new replicas have been updated"),
        "{waiting} / {}",
        read(&err)
    );
    rollout_state(&sim, 2, 1, 2);
    rollout_state(&sim, 2, 2, 2);
    let code = wait(child, Duration::from_secs(15)).await;
    assert_eq!(
        code,
        Some(0),
        "stdout: {} stderr: {}",
        read(&out),
        read(&err)
    );
    assert!(
        read(&out).contains("successfully rolled out"),
        "{}",
        read(&out)
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_watch_sees_an_added_pod() {
    let sim = common::start().await;
    let k = Kubectl::new(&sim);
    let (child, out, err) = k.spawn(&["get", "pods", "--watch", "-o", "name"], "watch");
    let initial = poll_until(&out, Duration::from_secs(10), |s| s.lines().count() >= 3).await;
    assert!(
        initial.contains("pod/report-builder"),
        "{initial} / {}",
        read(&err)
    );
    sim.apply(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "inventory-7d9c8b6f5d-new01", "namespace": "apps", "labels": {"app": "inventory"}},
        "spec": {"containers": [{"name": "inventory", "image": "registry.example.com/shop/inventory:1.4.2"}]},
        "status": {"phase": "Pending"}}));
    let seen = poll_until(&out, Duration::from_secs(10), |s| {
        s.contains("pod/inventory-7d9c8b6f5d-new01")
    })
    .await;
    assert!(
        seen.contains("pod/inventory-7d9c8b6f5d-new01"),
        "{seen} / {}",
        read(&err)
    );
    assert_eq!(
        wait(child, Duration::from_millis(100)).await,
        None,
        "still watching until killed"
    );
    assert!(
        sim.requests()
            .count("watch", "/api/v1/namespaces/apps/pods")
            >= 1
    );
    sim.shutdown().await;
}

/// With the Flux and Argo CD types installed, kubectl lists them even when empty, by plural
/// and by short name; without them, it says the server has no such resource type — the two
/// situations a real cluster presents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitops_types_served_with_or_without_objects() {
    // No fixtures: no object of any GitOps kind exists.
    let sim = liveproof_sim::Simulator::new()
        .with_gitops_crds()
        .start()
        .await
        .expect("starts");
    let k = Kubectl::new(&sim);
    for args in [
        &["get", "helmreleases", "-A"][..],
        &["get", "hr", "-A"],
        &["get", "kustomizations.kustomize.toolkit.fluxcd.io", "-A"],
        &["get", "gitrepositories", "-A"],
        &["get", "helmcharts", "-A"],
        &["get", "applications.argoproj.io", "-A"],
    ] {
        let out = k.run(args).await;
        assert_eq!(out.code, Some(0), "kubectl {args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("No resources found"),
            "kubectl {args:?}: {}",
            out.stderr
        );
    }

    let bare = liveproof_sim::Simulator::new()
        .start()
        .await
        .expect("starts");
    let k = Kubectl::new(&bare);
    let out = k.run(&["get", "helmreleases", "-A"]).await;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the server doesn't have a resource type"),
        "{}",
        out.stderr
    );
}

const WEB_V1: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - {name: MODE, value: blue}
        - {name: DEBUG, value: \"1\"}
      - name: sidecar
        image: envoy:1.30
";

impl Kubectl {
    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write manifest");
        path.to_str().expect("utf-8 path").to_owned()
    }
}

/// `kubectl apply -f` (client-side: create, then GET and a three-way strategic merge patch),
/// `create -f` and `scale` work as on a cluster, with kubectl's default validation (the
/// simulator's OpenAPI v3 says it validates fields itself; no `--validate=false`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_create_and_scale() {
    let sim = common::start().await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("web.yaml", WEB_V1);
    let out = k.ok(&["apply", "-f", &manifest]).await;
    assert_eq!(out.trim(), "deployment.apps/web created");
    assert!(sim.requests().count("get", "/openapi/v3") >= 1);
    let d = sim
        .get("apps/v1", "Deployment", Some("apps"), "web")
        .expect("created");
    let last: Value = serde_json::from_str(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .expect("last-applied annotation"),
    )
    .expect("last-applied is JSON");
    assert_eq!(
        last["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );

    // The file changes the image and replicas and drops one env var: the three-way patch
    // merges containers by name and deletes what the last applied version had.
    let v2 = WEB_V1
        .replace("image: nginx:1.27", "image: nginx:1.28")
        .replace("replicas: 2", "replicas: 3")
        .replace("        - {name: DEBUG, value: \"1\"}\n", "");
    let manifest = k.file("web.yaml", &v2);
    let out = k.ok(&["apply", "-f", &manifest]).await;
    assert_eq!(out.trim(), "deployment.apps/web configured");
    assert_eq!(
        sim.requests()
            .count("patch", "/apis/apps/v1/namespaces/apps/deployments/web"),
        1
    );
    let d = sim
        .get("apps/v1", "Deployment", Some("apps"), "web")
        .expect("deployment");
    let containers = &d["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "nginx:1.28");
    assert_eq!(
        containers[0]["env"],
        json!([{"name": "MODE", "value": "blue"}])
    );
    assert_eq!(containers[1]["image"], "envoy:1.30");
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["metadata"]["generation"], 2);
    assert!(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .is_some_and(|a| a.contains("nginx:1.28") && !a.contains("DEBUG")),
        "{d}"
    );
    let same = k.ok(&["apply", "-f", &manifest]).await;
    assert_eq!(same.trim(), "deployment.apps/web unchanged");

    // Server-side dry runs (`kubectl diff`, `--dry-run=server`) answer and keep nothing.
    let rv = sim.resource_version();
    let v3 = k.file("web3.yaml", &v2.replace("nginx:1.28", "nginx:1.29"));
    let diff = k.run(&["diff", "-f", &v3]).await;
    assert_eq!(diff.code, Some(1), "{}", diff.stderr);
    assert!(
        diff.stdout.contains("-        image: nginx:1.28")
            || diff.stdout.contains("-      - image: nginx:1.28"),
        "{}",
        diff.stdout
    );
    assert!(diff.stdout.contains("image: nginx:1.29"), "{}", diff.stdout);
    let out = k.ok(&["apply", "--dry-run=server", "-f", &v3]).await;
    assert_eq!(
        out.trim(),
        "deployment.apps/web configured (server dry run)"
    );
    let out = k
        .ok(&["delete", "deployment", "web", "--dry-run=server"])
        .await;
    assert!(out.contains("(server dry run)"), "{out}");
    assert_eq!(sim.resource_version(), rv, "a dry run changed the store");
    let d = sim
        .get("apps/v1", "Deployment", Some("apps"), "web")
        .expect("still there");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );

    let cm = k.file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\ndata: {mode: blue}\n",
    );
    let out = k.ok(&["create", "-f", &cm]).await;
    assert_eq!(out.trim(), "configmap/web-config created");
    let again = k.run(&["create", "-f", &cm]).await;
    assert_eq!(again.code, Some(1));
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);

    // Typed generators send protobuf bodies: refused with what to do instead, not a parse error.
    let typed = k
        .run(&["create", "deployment", "api", "--image", "nginx:1.27"])
        .await;
    assert_eq!(typed.code, Some(1));
    assert!(
        typed.stderr.contains("JSON request bodies only")
            && typed
                .stderr
                .contains("--dry-run=client -o yaml | kubectl apply -f -"),
        "{}",
        typed.stderr
    );

    let out = k.ok(&["scale", "deployment/web", "--replicas", "5"]).await;
    assert_eq!(out.trim(), "deployment.apps/web scaled");
    assert_eq!(
        sim.requests().count(
            "patch",
            "/apis/apps/v1/namespaces/apps/deployments/web/scale"
        ),
        1
    );
    let scale: Value = serde_json::from_str(
        &k.ok(&[
            "get",
            "--raw",
            "/apis/apps/v1/namespaces/apps/deployments/web/scale",
        ])
        .await,
    )
    .expect("Scale JSON");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["selector"], "app=web");
    sim.shutdown().await;
}

fn inventory_replicasets(sim: &SimHandle) -> Vec<Value> {
    sim.objects()
        .into_iter()
        .filter(|o| o["kind"] == "ReplicaSet" && o["metadata"]["labels"]["app"] == "inventory")
        .collect()
}

fn pods_of(sim: &SimHandle, rs: &str) -> Vec<Value> {
    sim.objects()
        .into_iter()
        .filter(|o| o["kind"] == "Pod" && o["metadata"]["ownerReferences"][0]["name"] == rs)
        .collect()
}

/// The ReplicaSet carrying `revision`; panics naming the revisions there are.
fn rs_at_revision(sim: &SimHandle, revision: &str) -> Value {
    let all = inventory_replicasets(sim);
    all.iter()
        .find(|rs| rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == revision)
        .cloned()
        .unwrap_or_else(|| panic!("no ReplicaSet at revision {revision}: {all:#?}"))
}

async fn rolled_out(k: &Kubectl) {
    let out = k
        .run_for(
            &[
                "rollout",
                "status",
                "deployment/inventory",
                "--timeout",
                "30s",
            ],
            Duration::from_secs(40),
        )
        .await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("successfully rolled out"),
        "{}",
        out.stdout
    );
}

/// With the built-in controller, `set image`, `rollout restart`, `rollout undo` and `scale` move
/// as on a cluster: a ReplicaSet per template (hash label, revision, owner), pods started now
/// with the configured digest, old pods Terminating then gone, and `rollout status` finishing on
/// its own. Loaded objects stay as loaded until the API changes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_rolls_out_set_image_restart_undo_and_scale() {
    let digest = format!("sha256:{}", "5".repeat(64));
    let new_image = "registry.example.com/shop/inventory:1.5.0";
    let sim = common::start_with(
        liveproof_sim::Simulator::new()
            .with_controllers()
            .with_termination_grace(Duration::from_secs(1))
            .with_image_digest(new_image, &digest),
    )
    .await;
    let k = Kubectl::new(&sim);
    let rv = sim.resource_version();
    // Longer than the controllers' tick: that nothing changes is the point, and no condition
    // can be waited for.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        sim.resource_version(),
        rv,
        "the controller leaves loaded objects alone"
    );

    // Whole seconds, as the pods' times are written.
    let before = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).expect("time");
    let out = k
        .ok(&[
            "set",
            "image",
            "deployment/inventory",
            &format!("inventory={new_image}"),
        ])
        .await;
    assert_eq!(out.trim(), "deployment.apps/inventory image updated");
    rolled_out(&k).await;

    let deploy = sim
        .get("apps/v1", "Deployment", Some("apps"), "inventory")
        .expect("deployment");
    let rs = rs_at_revision(&sim, "3");
    let rs_name = rs["metadata"]["name"].as_str().expect("name").to_owned();
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .expect("hash label");
    assert_eq!(rs_name, format!("inventory-{hash}"));
    assert_ne!(hash, "7d9c8b6f5d", "a new template gets a new hash");
    assert_eq!(
        rs["metadata"]["ownerReferences"][0]["uid"],
        deploy["metadata"]["uid"]
    );
    assert_eq!(
        rs["spec"]["template"]["spec"]["containers"][0]["image"],
        new_image
    );
    assert_eq!(
        deploy["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    let status = &deploy["status"];
    assert_eq!(
        status["observedGeneration"],
        deploy["metadata"]["generation"]
    );
    for field in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(status[field], 2, "{field}: {status}");
    }
    let progressing = status["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Progressing"))
        .expect("Progressing condition");
    assert_eq!(progressing["reason"], "NewReplicaSetAvailable");
    let pods = pods_of(&sim, &rs_name);
    assert_eq!(pods.len(), 2, "{pods:#?}");
    for pod in &pods {
        assert_eq!(pod["metadata"]["labels"]["pod-template-hash"], hash);
        let c = &pod["status"]["containerStatuses"][0];
        assert_eq!(
            c["imageID"],
            format!("registry.example.com/shop/inventory@{digest}")
        );
        assert_eq!(c["ready"], true);
        let started: jiff::Timestamp = c["state"]["running"]["startedAt"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .expect("startedAt");
        assert!(started >= before, "{started} < {before}");
    }
    // The old ReplicaSet is scaled to zero; its pods terminate, then are gone.
    let old = rs_at_revision(&sim, "2");
    assert_eq!(old["spec"]["replicas"], 0);
    let old_name = old["metadata"]["name"].as_str().expect("name").to_owned();
    let gone = within_async(Duration::from_secs(10), Duration::from_millis(100), || {
        let left = pods_of(&sim, &old_name);
        assert!(
            left.iter()
                .all(|p| p["metadata"]["deletionTimestamp"].is_string()),
            "old pods left serving: {left:#?}"
        );
        std::future::ready(left.is_empty().then_some(()))
    })
    .await;
    assert!(
        gone.is_some(),
        "old pods never went: {:#?}",
        pods_of(&sim, &old_name)
    );

    let out = k.ok(&["rollout", "restart", "deployment/inventory"]).await;
    assert_eq!(out.trim(), "deployment.apps/inventory restarted");
    rolled_out(&k).await;
    let restarted = rs_at_revision(&sim, "4");
    assert!(restarted["spec"]["template"]["metadata"]["annotations"]
        ["kubectl.kubernetes.io/restartedAt"]
        .is_string());
    assert_eq!(
        pods_of(&sim, restarted["metadata"]["name"].as_str().expect("name")).len(),
        2
    );

    // Undo goes back to the set-image template: that ReplicaSet is reused as revision 5.
    let out = k.ok(&["rollout", "undo", "deployment/inventory"]).await;
    assert_eq!(out.trim(), "deployment.apps/inventory rolled back");
    rolled_out(&k).await;
    let back = rs_at_revision(&sim, "5");
    assert_eq!(back["metadata"]["name"], rs_name.as_str());
    let serving: Vec<Value> = pods_of(&sim, &rs_name)
        .into_iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .collect();
    assert_eq!(serving.len(), 2, "{serving:#?}");
    let history = k.ok(&["rollout", "history", "deployment/inventory"]).await;
    let revisions: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(revisions, ["2", "4", "5"], "{history}");

    let out = k
        .ok(&["scale", "deployment/inventory", "--replicas", "3"])
        .await;
    assert_eq!(out.trim(), "deployment.apps/inventory scaled");
    rolled_out(&k).await;
    let serving = pods_of(&sim, &rs_name)
        .into_iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .count();
    assert_eq!(serving, 3);
    sim.shutdown().await;
}

fn web_objects(sim: &SimHandle, kind: &str) -> Vec<Value> {
    sim.objects()
        .into_iter()
        .filter(|o| o["kind"] == kind && o["metadata"]["labels"]["app"] == "web")
        .collect()
}

/// A Deployment applied with kubectl gets its first ReplicaSet and pods; `rollout pause` holds a
/// template change back until `rollout resume`; deleting the Deployment takes its ReplicaSets
/// and pods with it. `kubectl get rs` prints the ReplicaSet columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_pause_resume_and_cascading_delete() {
    let sim = common::start_with(liveproof_sim::Simulator::new().with_controllers()).await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("web.yaml", WEB_V1);
    k.ok(&["apply", "-f", &manifest]).await;
    let out = k
        .run_for(
            &["rollout", "status", "deployment/web", "--timeout", "30s"],
            Duration::from_secs(40),
        )
        .await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_eq!(web_objects(&sim, "ReplicaSet").len(), 1);
    assert_eq!(web_objects(&sim, "Pod").len(), 2);
    let table = k.ok(&["get", "rs", "-l", "app=web"]).await;
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        ["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
        "{table}"
    );
    assert_eq!(rows[1][1..4], ["2", "2", "2"], "{table}");

    k.ok(&["rollout", "pause", "deployment/web"]).await;
    k.ok(&["set", "image", "deployment/web", "web=nginx:1.28"])
        .await;
    // Longer than the controllers' tick: a paused rollout creating nothing is the point.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        web_objects(&sim, "ReplicaSet").len(),
        1,
        "paused: nothing rolls"
    );
    k.ok(&["rollout", "resume", "deployment/web"]).await;
    let out = k
        .run_for(
            &["rollout", "status", "deployment/web", "--timeout", "30s"],
            Duration::from_secs(40),
        )
        .await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_eq!(web_objects(&sim, "ReplicaSet").len(), 2);

    let out = k.ok(&["delete", "deployment", "web", "--wait=false"]).await;
    assert!(out.starts_with("deployment.apps \"web\" deleted"), "{out}");
    let deleted = within_async(Duration::from_secs(10), Duration::from_millis(100), || {
        std::future::ready(
            (web_objects(&sim, "ReplicaSet").is_empty() && web_objects(&sim, "Pod").is_empty())
                .then_some(()),
        )
    })
    .await;
    assert!(deleted.is_some(), "{:#?}", sim.objects());
    sim.shutdown().await;
}

const DB: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: apps}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: \"postgres:16\"}]
";

/// (pod name, controller-revision-hash) of the db pods not Terminating, by name.
fn db_pods(sim: &SimHandle) -> Vec<(String, String)> {
    let mut pods: Vec<(String, String)> = sim
        .objects()
        .into_iter()
        .filter(|o| {
            o["kind"] == "Pod"
                && o["metadata"]["labels"]["app"] == "db"
                && o["metadata"]["deletionTimestamp"].is_null()
        })
        .map(|p| {
            (
                p["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                p["metadata"]["labels"]["controller-revision-hash"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    pods.sort();
    pods
}

async fn sts_rolled_out(k: &Kubectl) -> String {
    let out = k
        .run_for(
            &["rollout", "status", "statefulset/db", "--timeout", "30s"],
            Duration::from_secs(40),
        )
        .await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    out.stdout
}

/// StatefulSets roll too: ordinal pods on a ControllerRevision, a template change replacing
/// them from the highest ordinal down, `rollout undo` going back through the revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_rolls_a_statefulset_and_undoes_it() {
    let sim = common::start_with(
        liveproof_sim::Simulator::new()
            .with_controllers()
            .with_termination_grace(Duration::from_millis(300)),
    )
    .await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("db.yaml", DB);
    k.ok(&["apply", "-f", &manifest]).await;
    sts_rolled_out(&k).await;
    let first = db_pods(&sim);
    let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
    let rev1 = first[0].1.clone();
    assert!(first.iter().all(|(_, r)| *r == rev1), "{first:?}");

    k.ok(&["set", "image", "statefulset/db", "db=postgres:17"])
        .await;
    let out = sts_rolled_out(&k).await;
    assert!(out.contains("3 new pods have been updated"), "{out}");
    let second = db_pods(&sim);
    let rev2 = second[0].1.clone();
    assert_ne!(rev2, rev1);
    assert!(second.iter().all(|(_, r)| *r == rev2), "{second:?}");
    let sts = sim
        .get("apps/v1", "StatefulSet", Some("apps"), "db")
        .expect("statefulset");
    assert_eq!(sts["status"]["updateRevision"], rev2.as_str());
    assert_eq!(sts["status"]["currentRevision"], rev2.as_str());
    assert_eq!(sts["status"]["updatedReplicas"], 3);
    let cr = sim
        .get("apps/v1", "ControllerRevision", Some("apps"), &rev2)
        .expect("the revision the pods name exists");
    assert_eq!(cr["revision"], 2);

    k.ok(&["rollout", "undo", "statefulset/db"]).await;
    sts_rolled_out(&k).await;
    let third = db_pods(&sim);
    assert!(third.iter().all(|(_, r)| *r == rev1), "{third:?}");
    let image = k
        .ok(&[
            "get",
            "sts",
            "db",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, "postgres:16");
    sim.shutdown().await;
}

const AGENT: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: apps}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: \"fluent-bit:3.0\"}]
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
";

/// (node, controller-revision-hash) of the agent pods not Terminating, by node.
fn agent_pods(sim: &SimHandle) -> Vec<(String, String)> {
    let mut pods: Vec<(String, String)> = sim
        .objects()
        .into_iter()
        .filter(|o| {
            o["kind"] == "Pod"
                && o["metadata"]["labels"]["app"] == "agent"
                && o["metadata"]["deletionTimestamp"].is_null()
        })
        .map(|p| {
            (
                p["spec"]["nodeName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                p["metadata"]["labels"]["controller-revision-hash"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    pods.sort();
    pods
}

/// DaemonSets roll too: a pod per node on the current ControllerRevision's hash, replaced one
/// node at a time on a template change, and back on `rollout undo`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_rolls_a_daemonset_and_undoes_it() {
    let sim = common::start_with(
        liveproof_sim::Simulator::new()
            .with_controllers()
            .with_termination_grace(Duration::from_millis(300)),
    )
    .await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("agent.yaml", AGENT);
    k.ok(&["apply", "-f", &manifest]).await;
    let status = ["rollout", "status", "daemonset/agent", "--timeout", "30s"];
    let out = k.run_for(&status, Duration::from_secs(40)).await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let first = agent_pods(&sim);
    let nodes: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(nodes, ["node-a", "node-b"]);
    let rev1 = first[0].1.clone();

    k.ok(&["set", "image", "daemonset/agent", "agent=fluent-bit:3.1"])
        .await;
    let out = k.run_for(&status, Duration::from_secs(40)).await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let second = agent_pods(&sim);
    assert_eq!(second.len(), 2, "{second:?}");
    let rev2 = second[0].1.clone();
    assert_ne!(rev2, rev1);
    assert!(second.iter().all(|(_, r)| *r == rev2), "{second:?}");
    let ds = sim
        .get("apps/v1", "DaemonSet", Some("apps"), "agent")
        .expect("daemonset");
    assert_eq!(ds["status"]["updatedNumberScheduled"], 2);
    assert_eq!(ds["status"]["numberAvailable"], 2);

    k.ok(&["rollout", "undo", "daemonset/agent"]).await;
    let out = k.run_for(&status, Duration::from_secs(40)).await;
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let third = agent_pods(&sim);
    assert!(
        third.len() == 2 && third.iter().all(|(_, r)| *r == rev1),
        "{third:?}"
    );
    sim.shutdown().await;
}
