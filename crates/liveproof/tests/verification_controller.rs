//! `liveproof controller` on the real control plane (the peers' kube-apiserver,
//! kube-controller-manager and kubectl, with the kubelet stand-in): a Verification goes Ready
//! when the real deployment controller has rolled the change out, `kubectl wait` returns on it,
//! a hand-made `kubectl rollout undo` turns it not Ready with the reason and an Event, a
//! Verification naming a Deployment that does not exist says so, `/metrics` shows the verdicts,
//! and of two replicas with `--leader-elect` only the one holding the Lease judges. Run as
//! deploy/controller.yaml's own ServiceAccount (a TokenRequest token), it takes the Lease,
//! writes statuses and records Events with no request denied.
//!
//! And Flux gates on the real proof: a real kustomize-controller Kustomization whose
//! `healthChecks` name a Verification it applied from git waits while the controller says the
//! change is not live, and is Ready once the real rollout made it live; a Kustomization that
//! `dependsOn` it applies nothing until then.
//!
//! A missing peer fails this test with the command that builds it; it never skips.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use liveproof_testkit::e2e::control_plane::free_port;
use liveproof_testkit::e2e::world::{change_time, deployment, World};
use serde_json::Value;

fn crd_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/verification-crd.yaml")
}

/// A `liveproof controller` process, stopped (SIGKILL) when dropped.
struct Running {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Running {
    fn start(world: &World, name: &str, extra: &[&str]) -> Running {
        Running::on(world.kubeconfig(), world.plane.dir.path(), name, extra)
    }

    /// On the cluster `kubeconfig` names, its log in `dir`.
    fn on(kubeconfig: &str, dir: &Path, name: &str, extra: &[&str]) -> Running {
        let port = free_port().expect("a free port");
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("a log file");
        let child = Command::new(env!("CARGO_BIN_EXE_liveproof"))
            .args(["controller", "--kubeconfig", kubeconfig])
            .args(["--metrics-address", &format!("127.0.0.1:{port}")])
            .args(["--resync-period", "5s", "-v"])
            .args(extra)
            .env("POD_NAME", name)
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("liveproof controller starts");
        Running { child, port, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// GET `path` on the metrics address (None while it does not answer yet).
    fn get(&self, path: &str) -> Option<String> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
        let mut body = String::new();
        stream.read_to_string(&mut body).ok()?;
        Some(body)
    }

    /// Waits (up to 60 s) until `/metrics` holds a line that starts with `line` (a sample, never
    /// the `# HELP` text, which may quote one).
    async fn wait_metric(&self, line: &str) -> String {
        let got = liveproof_testkit::within_async(
            Duration::from_secs(60),
            Duration::from_millis(250),
            || {
                std::future::ready(
                    self.get("/metrics")
                        .filter(|m| m.lines().any(|l| l.starts_with(line))),
                )
            },
        )
        .await;
        got.unwrap_or_else(|| {
            panic!(
                "no {line} in /metrics:\n{:?}\nlog:\n{}",
                self.get("/metrics"),
                self.log()
            )
        })
    }

    /// SIGTERM, then its exit code.
    fn terminate(mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let stopped =
            liveproof_testkit::within(Duration::from_secs(30), Duration::from_millis(250), || {
                self.child.try_wait().ok().flatten()
            });
        if let Some(status) = stopped {
            return status.code();
        }
        panic!("the controller did not stop on SIGTERM:\n{}", self.log());
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn verification(name: &str, targets: &str, since: &str, image: &str) -> String {
    format!(
        "apiVersion: liveproof.dev/v1alpha1
kind: Verification
metadata: {{name: {name}, namespace: apps}}
spec:
  targets: [{targets}]
  since: {since}
  image: [{image}]
  noRegistry: true
  timeout: 10m
"
    )
}

fn status(world: &World, name: &str) -> Value {
    let json = world.kubectl(&["-n", "apps", "get", "verification", name, "-o", "json"]);
    serde_json::from_str::<Value>(&json).expect("JSON")["status"].clone()
}

fn ready(status: &Value) -> (String, String, String) {
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let c = conditions
        .iter()
        .find(|c| c["type"] == "Ready")
        .cloned()
        .unwrap_or_default();
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (s(&c["status"]), s(&c["reason"]), s(&c["message"]))
}

fn kubectl_ok(kubeconfig: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(liveproof_testkit::kubectl::kubectl_path())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A wrong flag is exit 2 before anything is read, naming the flag and how to fix it.
#[test]
fn a_wrong_flag_is_exit_2_naming_it() {
    for (args, flag) in [
        (&["--request-timeout", "soon"][..], "--request-timeout"),
        (&["--metrics-address", "8080"][..], "--metrics-address"),
        (&["--lease-namespace", "ops"][..], "--lease-namespace"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_liveproof"))
            .arg("controller")
            .args(args)
            .args(["--kubeconfig", "/nonexistent"])
            .output()
            .expect("liveproof runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("error: {flag}")), "{stderr}");
        assert!(stderr.contains("hint: "), "{stderr}");
    }
}

/// On the simulator (fast): a Deployment rolled out through the API turns its Verification
/// Ready, and `kubectl rollout undo` turns it not Ready (NoLongerLive), as on the real API
/// server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_simulator_a_rollout_and_its_undo_turn_ready_and_back() {
    // Its controllers roll out what the API changes; the custom types (Verification among
    // them) are served as on a cluster where their CRDs are installed.
    let simulator = liveproof_sim::Simulator::new()
        .with_controllers()
        .with_gitops_crds();
    let cluster = liveproof_testkit::SimCluster::serve(simulator, "apps").await;
    let kubeconfig = PathBuf::from(cluster.kubeconfig());
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        liveproof_testkit::kubectl::run(&kubeconfig, args, stdin)
    };
    let apply = |yaml: &str| kubectl(&["apply", "-f", "-"], Some(yaml));
    apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n");
    apply(&deployment("web", "ghcr.io/acme/web:v1", ""));
    let since = change_time().await;
    // The simulator's OpenAPI document has no Verification schema: kubectl is told not to
    // validate against it (the real API server validates with the CRD's).
    kubectl(
        &["create", "--validate=false", "-f", "-"],
        Some(&verification(
            "web-v2",
            "deploy/web",
            &since,
            "ghcr.io/acme/web:v2",
        )),
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let controller = Running::on(cluster.kubeconfig(), dir.path(), "sim", &[]);
    controller
        .wait_metric(r#"liveproof_verification_verdict{namespace="apps",name="web-v2",verdict="not_live"} 1"#)
        .await;
    kubectl(
        &[
            "-n",
            "apps",
            "set",
            "image",
            "deploy/web",
            "app=ghcr.io/acme/web:v2",
        ],
        None,
    );
    let waited = kubectl_ok(
        &kubeconfig,
        &[
            "-n",
            "apps",
            "wait",
            "--for=condition=Ready",
            "--timeout=60s",
            "verification/web-v2",
        ],
    );
    assert!(waited.is_ok(), "{waited:?}\nlog:\n{}", controller.log());
    kubectl(&["-n", "apps", "rollout", "undo", "deploy/web"], None);
    let undone = kubectl_ok(
        &kubeconfig,
        &[
            "-n",
            "apps",
            "wait",
            "--for=condition=Ready=false",
            "--timeout=60s",
            "verification/web-v2",
        ],
    );
    assert!(undone.is_ok(), "{undone:?}\nlog:\n{}", controller.log());
    let reason = kubectl(
        &[
            "-n",
            "apps",
            "get",
            "verification",
            "web-v2",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].reason}",
        ],
        None,
    );
    assert_eq!(reason, "NoLongerLive");
    assert_eq!(controller.terminate(), Some(0));
}

/// A cluster that does not serve the Verification CRD is said at once (exit 2, with how to
/// install it), not retried in a loop that never judges anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_without_the_crd_is_exit_2_saying_how_to_install_it() {
    let cluster = liveproof_testkit::SimCluster::start(Vec::new(), "apps").await;
    let kubeconfig = cluster.kubeconfig().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_liveproof"))
            .args(["controller", "--kubeconfig", &kubeconfig])
            .args([
                "--metrics-address",
                "127.0.0.1:0",
                "--request-timeout",
                "10s",
            ])
            .output()
            .expect("liveproof runs")
    })
    .await
    .expect("joined");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: cannot list Verifications"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: install the CRD (kubectl apply -f deploy/verification-crd.yaml)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_keeps_a_verification_true_on_the_real_control_plane() {
    let world = World::start().await;
    world.install_crds(&crd_file());
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("web", &v1, ""));
    world.wait_ready("deploy/web", "3").await;

    // The change, stated before it rolls out; and one naming a Deployment that is not there.
    let since = change_time().await;
    world.apply(&verification("web-v2", "deploy/web", &since, &v2));
    world.apply(&verification("typo", "deploy/wbe", &since, &v2));
    let by_ref = verification("by-ref", "deploy/web", &since, &v2) + "  commit: HEAD\n";
    world.apply(&by_ref);
    // Judged before the rollout: not live, Reconciling. Then the controller is killed and
    // another started: it resumes from the status, keeping its times and writing no Event
    // again (Ready did not change).
    let first = Running::start(&world, "one", &[]);
    first
        .wait_metric(r#"liveproof_verification_verdict{namespace="apps",name="web-v2",verdict="not_live"} 1"#)
        .await;
    let before = status(&world, "web-v2");
    assert_eq!(ready(&before).1, "NotLive", "{before:#}");
    drop(first);
    let controller = Running::start(&world, "two", &[]);
    controller
        .wait_metric("liveproof_controller_reconciles_total")
        .await;
    controller
        .wait_metric(r#"liveproof_verification_verdict{namespace="apps",name="web-v2",verdict="not_live"} 1"#)
        .await;
    let resumed = status(&world, "web-v2");
    assert_eq!(
        resumed["conditions"], before["conditions"],
        "{before:#}\n{resumed:#}"
    );
    world.set_image("web", &v2);

    // kubectl wait returns once the pods prove it.
    let waited = kubectl_ok(
        &world.plane.kubeconfig,
        &[
            "-n",
            "apps",
            "wait",
            "--for=condition=Ready",
            "--timeout=120s",
            "verification/web-v2",
        ],
    );
    assert!(
        waited.is_ok(),
        "{waited:?}\nstatus: {:#}\nlog:\n{}\n{}",
        status(&world, "web-v2"),
        controller.log(),
        world.state()
    );
    let live = status(&world, "web-v2");
    assert_eq!(live["verdict"], "live", "{live:#}");
    assert_eq!(live["observedGeneration"], 1, "{live:#}");
    assert!(live["liveSince"].is_string(), "{live:#}");
    let images = world.pod_images("web");
    assert!(
        images.lines().all(|i| i == v2),
        "live while old pods run:\n{images}"
    );

    // The missing Deployment is said, not retried silently: waited for (a first deploy) until
    // the timeout, Reconciling meanwhile, with verify's not-found message.
    let typo = status(&world, "typo");
    let (is_ready, reason, message) = ready(&typo);
    assert_eq!(
        (is_ready.as_str(), reason.as_str()),
        ("False", "TargetNotFound"),
        "{typo:#}"
    );
    assert!(message.contains("not found"), "{message}");
    assert!(typo.get("verdict").is_none(), "{typo:#}");

    controller
        .wait_metric(
            r#"liveproof_verification_verdict{namespace="apps",name="web-v2",verdict="live"} 1"#,
        )
        .await;
    controller
        .wait_metric(
            r#"liveproof_verification_verdict{namespace="apps",name="typo",verdict="refused"} 1"#,
        )
        .await;
    assert!(controller
        .get("/healthz")
        .is_some_and(|b| b.contains("200 OK")));
    assert!(controller
        .get("/readyz")
        .is_some_and(|b| b.contains("200 OK")));

    // A hand-made rollback: no longer live, with the reason, and an Event saying so.
    world.kubectl(&["-n", "apps", "rollout", "undo", "deploy/web"]);
    let undone = kubectl_ok(
        &world.plane.kubeconfig,
        &[
            "-n",
            "apps",
            "wait",
            "--for=condition=Ready=false",
            "--timeout=60s",
            "verification/web-v2",
        ],
    );
    assert!(undone.is_ok(), "{undone:?}\nlog:\n{}", controller.log());
    let not_live = status(&world, "web-v2");
    let (_, reason, message) = ready(&not_live);
    assert_eq!(reason, "NoLongerLive", "{not_live:#}");
    assert!(message.contains("apps/Deployment/web"), "{message}");
    let events = liveproof_testkit::within_async(
        Duration::from_secs(30),
        Duration::from_millis(250),
        || {
            let events = world.kubectl(&[
                "-n",
                "apps",
                "get",
                "events.events.k8s.io",
                "--field-selector",
                "regarding.name=web-v2",
                "-o",
                "jsonpath={range .items[*]}{.reason} {.type}{\"\\n\"}{end}",
            ]);
            std::future::ready(events.contains("NoLongerLive Warning").then_some(events))
        },
    )
    .await;
    let events = events.unwrap_or_else(|| panic!("no NoLongerLive Event:\n{}", controller.log()));
    assert!(events.contains("Live Normal"), "{events}");
    // One NotLive Event, from the first controller: the restart wrote none.
    assert_eq!(events.matches("NotLive Normal").count(), 1, "{events}");

    // SIGTERM stops it cleanly.
    assert_eq!(controller.terminate(), Some(0));

    // Two replicas with --leader-elect: one holds the Lease and judges, the other waits;
    // stopped, the leader releases the Lease and the other takes over.
    let lease = ["--leader-elect", "--lease-namespace", "apps"];
    let a = Running::start(&world, "replica-a", &lease);
    a.wait_metric("liveproof_controller_leader 1").await;
    let b = Running::start(&world, "replica-b", &lease);
    b.wait_metric("liveproof_controller_leader 0").await;
    let holder = world.field("lease/liveproof-controller", "{.spec.holderIdentity}");
    assert_eq!(holder, "replica-a");
    let standby = b.get("/metrics").unwrap_or_default();
    assert!(
        standby.contains("liveproof_controller_reconciles_total 0"),
        "{standby}"
    );
    assert!(
        standby.contains("liveproof_controller_status_writes_total 0"),
        "{standby}"
    );
    assert_eq!(a.terminate(), Some(0));
    b.wait_metric("liveproof_controller_leader 1").await;
    world
        .wait_field(
            "lease/liveproof-controller",
            "{.spec.holderIdentity}",
            "replica-b",
            Duration::from_secs(30),
        )
        .await;
    b.wait_metric("liveproof_controller_reconciles_total").await;
    assert_eq!(b.terminate(), Some(0));
}

/// The Kustomization `apps`' `{.status.conditions[?(@.type=="TYPE")].FIELD}`.
fn kustomization(world: &World, type_: &str, field: &str) -> String {
    kustomization_named(world, "apps", type_, field)
}

/// The Kustomization `name`'s `{.status.conditions[?(@.type=="TYPE")].FIELD}`.
fn kustomization_named(world: &World, name: &str, type_: &str, field: &str) -> String {
    world.kubectl(&[
        "-n",
        "flux-system",
        "get",
        "kustomization",
        name,
        "-o",
        &format!("jsonpath={{.status.conditions[?(@.type==\"{type_}\")].{field}}}"),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flux_waits_for_the_proof_the_controller_writes() {
    use liveproof_testkit::e2e::controllers::{Flux, GitServer};
    use liveproof_testkit::git::{git_at, Repo};

    let world = World::start().await;
    let git_root = world.plane.dir.path().join("git-server");
    let server = GitServer::start(&world.plane, &git_root).unwrap_or_else(|e| panic!("{e:#}"));
    let remote = format!("{}/apps.git", server.url);
    world.keep(Ok(server.process));
    for crd in [world.plane.peers.path("flux-crds.yaml"), crd_file()] {
        world.install_crds(&crd);
    }
    world.kubectl(&["create", "namespace", "flux-system"]);
    world.kubectl(&["create", "namespace", "apps"]);
    let flux = Flux::start(&world.plane).unwrap_or_else(|e| panic!("{e:#}"));
    world.keep(Ok(flux.source));
    world.keep(Ok(flux.kustomize));
    let (v1, v2) = world.two_builds("acme/web").await;
    world.apply(&deployment("web", &v1, ""));
    world.wait_ready("deploy/web", "3").await;

    // The change's Verification, in git beside what Flux applies.
    let since = change_time().await;
    let repo = Repo::new();
    repo.file(
        "apps/verification.yaml",
        &verification("web", "deploy/web", &since, &v2),
    );
    // What the next stage applies once the proof holds (a Kustomization that dependsOn `apps`).
    repo.file(
        "next/stage.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: next-stage, namespace: apps}\ndata: {stage: next}\n",
    );
    let now = jiff::Timestamp::now().to_string();
    for args in [
        &["add", "-A"][..],
        &["commit", "-q", "-m", "verify web v2"],
        &["push", "-q", &remote, "main"],
    ] {
        git_at(&repo.path(), args, &now);
    }
    let controller = Running::start(&world, "controller", &[]);
    world.apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: apps, namespace: flux-system}}
spec:
  url: {remote}
  ref: {{branch: main}}
  interval: 1h
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: apps, namespace: flux-system}}
spec:
  sourceRef: {{kind: GitRepository, name: apps}}
  path: ./apps
  prune: true
  interval: 1h
  timeout: 4m
  healthChecks:
  - {{apiVersion: liveproof.dev/v1alpha1, kind: Verification, name: web, namespace: apps}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: next, namespace: flux-system}}
spec:
  dependsOn: [{{name: apps}}]
  sourceRef: {{kind: GitRepository, name: apps}}
  path: ./next
  prune: true
  interval: 1h
  retryInterval: 5s
"
    ));

    // Judged not live by the controller (the pods still run v1): Flux's health check waits.
    let judged = liveproof_testkit::within_async(
        Duration::from_secs(120),
        Duration::from_millis(250),
        || {
            let s = kubectl_ok(
                &world.plane.kubeconfig,
                &["-n", "apps", "get", "verification", "web", "-o", "json"],
            )
            .ok()
            .and_then(|j| serde_json::from_str::<Value>(&j).ok())
            .map(|v| v["status"].clone())
            .filter(|s| ready(s).1 == "NotLive");
            std::future::ready(s)
        },
    )
    .await;
    assert!(judged.is_some(), "not judged:\n{}", controller.log());
    liveproof_testkit::within_async(Duration::from_secs(60), Duration::from_millis(250), || {
        std::future::ready(
            kustomization(&world, "Reconciling", "message")
                .contains("health checks")
                .then_some(()),
        )
    })
    .await
    .unwrap_or_else(|| panic!("no health check:\n{}", world.state()));
    assert_ne!(kustomization(&world, "Ready", "status"), "True");
    // The Kustomization that dependsOn it waits too: nothing of the next stage is applied.
    liveproof_testkit::within_async(Duration::from_secs(60), Duration::from_millis(250), || {
        std::future::ready(
            (kustomization_named(&world, "next", "Ready", "reason") == "DependencyNotReady")
                .then_some(()),
        )
    })
    .await
    .unwrap_or_else(|| panic!("next does not wait for apps:\n{}", world.state()));
    let next_stage = || {
        kubectl_ok(
            &world.plane.kubeconfig,
            &["-n", "apps", "get", "configmap", "next-stage", "-o", "name"],
        )
        .is_ok()
    };
    assert!(!next_stage(), "the next stage was applied before the proof");

    // The real rollout: the controller proves it, and the Kustomization is Ready.
    world.set_image("web", &v2);
    let ready_now = liveproof_testkit::within_async(
        Duration::from_secs(200),
        Duration::from_millis(500),
        || std::future::ready((kustomization(&world, "Ready", "status") == "True").then_some(())),
    )
    .await;
    assert!(
        ready_now.is_some(),
        "Ready: {} {}\nVerification: {:#}\nlog:\n{}",
        kustomization(&world, "Ready", "reason"),
        kustomization(&world, "Ready", "message"),
        status(&world, "web"),
        controller.log()
    );
    assert_eq!(status(&world, "web")["verdict"], "live");
    // And the stage that depends on it goes ahead.
    let applied = liveproof_testkit::within_async(
        Duration::from_secs(120),
        Duration::from_millis(500),
        || std::future::ready(next_stage().then_some(())),
    )
    .await;
    assert!(
        applied.is_some(),
        "next: {} {}",
        kustomization_named(&world, "next", "Ready", "reason"),
        kustomization_named(&world, "next", "Ready", "message")
    );
}

/// A Verification naming four Deployments reads those four (a GET each), never the whole
/// namespace's Deployments: verify's CLI LISTs a namespace from three targets, which for each of
/// hundreds of Verifications over thousands of pods re-read every pod (issue 35's bound; see
/// `benches/memory.rs --case controller`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verification_reads_its_own_targets_not_the_namespace() {
    use liveproof_testkit::fleet::{self, CHANGE_AT, IMAGE};
    let mut objects = fleet::deployments("shop", 20, 2, false);
    objects.push(serde_json::json!({
        "apiVersion": "liveproof.dev/v1alpha1", "kind": "Verification",
        "metadata": {"name": "four", "namespace": "shop", "generation": 1},
        "spec": {"targets": ["deploy/svc-0", "deploy/svc-1", "deploy/svc-2", "deploy/svc-3"],
                 "since": CHANGE_AT, "image": [IMAGE], "noRegistry": true, "timeout": "10m"}
    }));
    let simulator = liveproof_sim::Simulator::new()
        .with_gitops_crds()
        .with_objects(objects);
    let cluster = liveproof_testkit::SimCluster::serve(simulator, "shop").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let controller = Running::on(cluster.kubeconfig(), dir.path(), "sim", &[]);
    controller
        .wait_metric(
            r#"liveproof_verification_verdict{namespace="shop",name="four",verdict="live"} 1"#,
        )
        .await;
    let requests = cluster.sim.requests();
    let gets = (0..4)
        .map(|i| {
            requests.count(
                "get",
                &format!("/apis/apps/v1/namespaces/shop/deployments/svc-{i}"),
            )
        })
        .sum::<u64>();
    assert!(gets >= 4, "{:#?}", requests.snapshot());
    assert_eq!(
        requests.count("list", "/apis/apps/v1/namespaces/shop/deployments"),
        0,
        "{:#?}",
        requests.snapshot()
    );
    assert_eq!(controller.terminate(), Some(0));
}

/// deploy/controller.yaml's ServiceAccount, ClusterRole, Role and their bindings (not its
/// Deployment: the controller runs here, outside the cluster), as one JSON List for kubectl.
fn controller_rbac() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/controller.yaml");
    let text = std::fs::read_to_string(&path).expect("deploy/controller.yaml");
    let items: Vec<Value> = serde_norway::Deserializer::from_str(&text)
        .map(|doc| {
            let v: serde_norway::Value =
                serde::Deserialize::deserialize(doc).expect("the YAML parses");
            serde_json::to_value(v).expect("YAML as JSON")
        })
        .filter(|v| {
            [
                "Namespace",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding",
            ]
            .contains(&v["kind"].as_str().unwrap_or_default())
        })
        .collect();
    assert_eq!(items.len(), 6, "{items:#?}");
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

/// A kubeconfig for deploy/controller.yaml's ServiceAccount (a token from the TokenRequest
/// API), checked to be that identity.
fn service_account_kubeconfig(world: &World) -> PathBuf {
    let token = world.kubectl(&[
        "-n",
        "liveproof",
        "create",
        "token",
        "liveproof-controller",
        "--duration=1h",
    ]);
    let kubeconfig = world.plane.dir.path().join("controller.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {{server: \"{server}\", insecure-skip-tls-verify: true}}
users:
- name: liveproof-controller
  user: {{token: \"{token}\"}}
contexts:
- name: e2e
  context: {{cluster: e2e, user: liveproof-controller, namespace: liveproof}}
current-context: e2e
",
            server = world.plane.server,
            token = token.trim(),
        ),
    )
    .expect("a kubeconfig");
    let whoami = kubectl_ok(
        &kubeconfig,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert_eq!(
        whoami.as_deref(),
        Ok("system:serviceaccount:liveproof:liveproof-controller")
    );
    kubeconfig
}

/// The controller runs as deploy/controller.yaml's ServiceAccount on the real API server (a
/// token from the TokenRequest API, as the kubelet mounts one in its pod), and that identity
/// may do its whole job: take the Lease, read what verify reads, write a Verification's status
/// and record Events on it — and nothing in its log is forbidden. A rule missing from the file
/// (the Lease's `patch`, `verifications/status`) fails this test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_does_its_job_as_its_own_service_account() {
    let world = World::start().await;
    world.install_crds(&crd_file());
    world.kubectl_stdin(&["apply", "-f", "-"], Some(&controller_rbac()));
    let kubeconfig = service_account_kubeconfig(&world);

    // One Verification that is live (v1 runs) and one that is not (v2 never rolled out: its
    // "why" reads the Warning events too).
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let since = change_time().await;
    world.apply(&deployment("web", &v1, ""));
    world.wait_ready("deploy/web", "3").await;
    world.apply(&verification("web-v1", "deploy/web", &since, &v1));
    world.apply(&verification("web-v2", "deploy/web", &since, &v2));

    let controller = Running::on(
        kubeconfig.to_str().expect("utf-8 path"),
        world.plane.dir.path(),
        "as-service-account",
        &["--leader-elect", "--lease-namespace", "liveproof"],
    );
    controller
        .wait_metric("liveproof_controller_leader 1")
        .await;
    let holder = world.kubectl(&[
        "-n",
        "liveproof",
        "get",
        "lease",
        "liveproof-controller",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    assert_eq!(holder, "as-service-account", "{}", controller.log());
    controller
        .wait_metric(
            r#"liveproof_verification_verdict{namespace="apps",name="web-v1",verdict="live"} 1"#,
        )
        .await;
    controller
        .wait_metric(
            r#"liveproof_verification_verdict{namespace="apps",name="web-v2",verdict="not_live"} 1"#,
        )
        .await;
    // Written: the statuses on the server, and an Event on each.
    let live = liveproof_testkit::within_async(
        Duration::from_secs(60),
        Duration::from_millis(250),
        || {
            let s = status(&world, "web-v1");
            std::future::ready((s["verdict"] == "live").then_some(s))
        },
    )
    .await;
    assert!(live.is_some(), "no status written:\n{}", controller.log());
    assert_eq!(ready(&status(&world, "web-v2")).1, "NotLive");
    let events = liveproof_testkit::within_async(
        Duration::from_secs(30),
        Duration::from_millis(250),
        || {
            let events = world.kubectl(&[
                "-n",
                "apps",
                "get",
                "events.events.k8s.io",
                "-o",
                "jsonpath={range .items[*]}{.regarding.name} {.reason} {.reportingController}{\"\\n\"}{end}",
            ]);
            std::future::ready(
                (events.contains("web-v1 Live") && events.contains("web-v2 NotLive"))
                    .then_some(events),
            )
        },
    )
    .await;
    assert!(
        events.is_some(),
        "no Events recorded:\n{}",
        controller.log()
    );

    let metrics = controller.get("/metrics").unwrap_or_default();
    for line in metrics.lines() {
        let errors = line.starts_with("liveproof_controller_watch_errors")
            || line.starts_with("liveproof_controller_reconcile_errors");
        assert!(
            !errors || line.ends_with(" 0"),
            "{line}\n{}",
            controller.log()
        );
    }
    assert_eq!(controller.terminate(), Some(0));
    let log = std::fs::read_to_string(world.plane.dir.path().join("as-service-account.log"))
        .unwrap_or_default();
    assert!(!log.to_lowercase().contains("forbidden"), "denied:\n{log}");
}

/// A write the controller needs that RBAC denies is said at start, naming the permission as
/// `kubectl auth can-i` takes it (exit 2), instead of a controller waiting for a Lease it may
/// not renew: here deploy/controller.yaml's Lease rule without `patch`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_denied_a_write_it_needs_says_which_at_start() {
    let world = World::start().await;
    world.install_crds(&crd_file());
    let full = "\"verbs\":[\"get\",\"create\",\"update\",\"patch\"]";
    let rbac = controller_rbac();
    assert!(rbac.contains(full), "the Lease rule: {rbac}");
    let without_patch = rbac.replace(full, "\"verbs\":[\"get\",\"create\",\"update\"]");
    world.kubectl_stdin(&["apply", "-f", "-"], Some(&without_patch));
    let kubeconfig = service_account_kubeconfig(&world);
    let log = world.plane.dir.path().join("denied.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(["controller", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--metrics-address", "127.0.0.1:0"])
        .args(["--leader-elect", "--lease-namespace", "liveproof"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("a log file"))
        .spawn()
        .expect("liveproof controller starts");
    let exited =
        liveproof_testkit::within(Duration::from_secs(60), Duration::from_millis(250), || {
            child.try_wait().ok().flatten()
        });
    let _ = child.kill();
    let _ = child.wait();
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    let exited = exited.unwrap_or_else(|| panic!("still running after 60 s:\n{stderr}"));
    assert_eq!(exited.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("may not: patch leases.coordination.k8s.io -n liveproof"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("verifications"),
        "only what is denied: {stderr}"
    );
    assert!(stderr.contains("deploy/controller.yaml"), "{stderr}");
}
