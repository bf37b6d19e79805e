//! The deploy pipeline of seed 001, end to end on the simulator: snapshot → apply (one
//! workload rolls out, one never becomes ready, one untouched) → a separate `verify --snapshot`
//! process → rollback → verify again. Every exit status is asserted, and exactly which objects
//! the simulator saw written — so an inverted success test can never come back unnoticed.

use liveproof_testkit::binary as common;

use liveproof_testkit::wait_until_async;

use liveproof_testkit::SimCluster;

use std::path::Path;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use liveproof_evidence::{Report, Verdict};
use serde_json::{json, Value};

const NS: &str = "shop";
const COMMIT: &str = "9c1e5b7a2d4f";
/// The apply steps that roll web out completely, before api is touched.
const WEB_ONLY: usize = 8;

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("now")
}

fn template(name: &str, image: &str, hash: Option<&str>) -> Value {
    let mut labels = json!({"app": name});
    if let Some(h) = hash {
        labels["pod-template-hash"] = json!(h);
    }
    json!({"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": image}]}})
}

fn deployment(name: &str, image: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": NS, "uid": format!("uid-{name}"), "generation": 1},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name, image, None)},
           "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                      "readyReplicas": replicas, "availableReplicas": replicas}})
}

fn replicaset(name: &str, image: &str, hash: &str, revision: u32, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
           "metadata": {"name": format!("{name}-{hash}"), "namespace": NS, "generation": 1,
                        "labels": {"app": name, "pod-template-hash": hash},
                        "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": format!("uid-{name}")}]},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name, "pod-template-hash": hash}},
                    "template": template(name, image, Some(hash))},
           "status": {"observedGeneration": 1, "replicas": replicas}})
}

fn pod(name: &str, image: &str, hash: &str, i: usize, started: Timestamp, ready: bool) -> Value {
    let state = if ready {
        json!({"running": {"startedAt": started.to_string()}})
    } else {
        json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container"}})
    };
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": format!("{name}-{hash}-{i}"), "namespace": NS, "labels": {"app": name, "pod-template-hash": hash}},
           "spec": {"containers": [{"name": "app", "image": image}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
                      "containerStatuses": [{"name": "app", "ready": ready, "restartCount": if ready { 0 } else { 4 },
                                             "image": image, "imageID": "", "state": state}]}})
}

/// Three healthy workloads, rolled out weeks ago.
fn before() -> Vec<Value> {
    let weeks_ago = now() - SignedDuration::from_hours(24 * 21);
    let mut out = Vec::new();
    for (name, replicas) in [("web", 2), ("api", 2), ("cache", 1)] {
        let image = format!("registry.shop.example/{name}:1.0");
        out.push(deployment(name, &image, replicas));
        out.push(replicaset(name, &image, "a1", 1, replicas));
        for i in 0..replicas as usize {
            out.push(pod(name, &image, "a1", i, weeks_ago, true));
        }
    }
    out
}

/// What the apply does, in the order it lands: both Deployments' new templates, then what
/// the controllers and kubelets make of them (web rolls out; api's new pod crash-loops).
enum Step {
    Apply(Value),
    /// Set a Deployment's status once its generation is known.
    Status(&'static str, Value),
    Delete(String),
}

fn apply_steps() -> Vec<Step> {
    let started = now() + SignedDuration::from_secs(1);
    let mut steps = vec![
        Step::Apply(deployment("web", "registry.shop.example/web:2.0", 2)),
        Step::Apply(replicaset(
            "web",
            "registry.shop.example/web:2.0",
            "b2",
            2,
            2,
        )),
    ];
    for i in 0..2 {
        steps.push(Step::Apply(pod(
            "web",
            "registry.shop.example/web:2.0",
            "b2",
            i,
            started,
            true,
        )));
        steps.push(Step::Delete(format!("web-a1-{i}")));
    }
    steps.push(Step::Apply(replicaset(
        "web",
        "registry.shop.example/web:1.0",
        "a1",
        1,
        0,
    )));
    steps.push(Step::Status(
        "web",
        json!({"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}),
    ));
    // WEB_ONLY steps so far.
    steps.push(Step::Apply(deployment(
        "api",
        "registry.shop.example/api:2.0",
        2,
    )));
    steps.push(Step::Apply(replicaset(
        "api",
        "registry.shop.example/api:2.0",
        "b2",
        2,
        1,
    )));
    steps.push(Step::Apply(pod(
        "api",
        "registry.shop.example/api:2.0",
        "b2",
        0,
        started,
        false,
    )));
    steps.push(Step::Status(
        "api",
        json!({"replicas": 3, "updatedReplicas": 1, "readyReplicas": 2, "availableReplicas": 2}),
    ));
    steps
}

fn set_status(sim: &liveproof_sim::SimHandle, name: &str, status: Value) {
    let mut d = sim
        .get("apps/v1", "Deployment", Some(NS), name)
        .expect("deployment");
    let mut status = status;
    status["observedGeneration"] = d["metadata"]["generation"].clone();
    d["status"] = status;
    sim.apply(d);
}

/// Plays `kubectl apply` and the controllers, stopping after `limit` steps (a killed apply).
fn apply(sim: &liveproof_sim::SimHandle, limit: usize) {
    for step in apply_steps().into_iter().take(limit) {
        match step {
            Step::Apply(mut obj) => {
                // kubectl apply sends the spec; status is the controllers' (set below).
                if obj["kind"] == "Deployment" {
                    if let Some(current) = sim.get(
                        "apps/v1",
                        "Deployment",
                        Some(NS),
                        obj["metadata"]["name"].as_str().unwrap_or_default(),
                    ) {
                        obj["status"] = current["status"].clone();
                        obj["metadata"]["generation"] = current["metadata"]["generation"].clone();
                    }
                }
                sim.apply(obj);
            }
            Step::Status(name, status) => set_status(sim, name, status),
            Step::Delete(name) => {
                sim.delete("v1", "Pod", Some(NS), &name);
            }
        }
    }
}

fn writes(sim: &liveproof_sim::SimHandle) -> Vec<(String, String, u64)> {
    sim.requests()
        .snapshot()
        .into_iter()
        .filter(|(verb, _, _)| matches!(verb.as_str(), "create" | "update" | "patch" | "delete"))
        .collect()
}

struct Pipeline {
    cluster: SimCluster,
    dir: tempfile::TempDir,
}

impl Pipeline {
    async fn start() -> Pipeline {
        Pipeline {
            cluster: SimCluster::start(before(), NS).await,
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn dir(&self) -> &str {
        self.dir.path().to_str().expect("utf-8")
    }

    async fn run(&self, args: &[&str]) -> common::Run {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--kubeconfig", self.cluster.kubeconfig()]);
        common::liveproof().args(&all).run().await
    }

    async fn snapshot(&self) {
        let run = self
            .run(&["snapshot", "--dir", self.dir(), "--commit", COMMIT])
            .await;
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("3 workload(s)"), "{}", run.stdout);
        let current = self.dir.path().join("current");
        assert!(std::fs::symlink_metadata(&current)
            .expect("current")
            .file_type()
            .is_symlink());
        assert!(self.dir.path().join(COMMIT).join("snapshot.json").is_file());
        assert!(current.join("snapshot.json").is_file());
    }

    async fn verify(&self) -> (common::Run, Report) {
        self.cluster.sim.requests().reset();
        let run = self
            .run(&[
                "verify",
                "--snapshot",
                self.dir(),
                "--commit",
                COMMIT,
                "-o",
                "json",
            ])
            .await;
        assert!(
            writes(&self.cluster.sim).is_empty(),
            "verify wrote: {:?}",
            writes(&self.cluster.sim)
        );
        let report = run.report();
        (run, report)
    }
}

fn verdict_of(report: &Report, name: &str) -> Option<Verdict> {
    report
        .targets
        .iter()
        .find(|t| t.name == name && t.kind == "Deployment")
        .map(|t| t.verdict)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_apply_verify_rollback_verify() {
    let p = Pipeline::start().await;
    p.snapshot().await;
    apply(&p.cluster.sim, usize::MAX);

    // The verify job: its own process, reading only the snapshot and the cluster.
    let (run, report) = p.verify().await;
    assert_eq!(run.code, 1, "api never became ready: {}", run.stdout);
    let snap = report.snapshot.as_ref().expect("snapshot summary");
    assert_eq!(
        snap.changed,
        vec!["shop/deployment/api", "shop/deployment/web"],
        "{snap:?}"
    );
    assert_eq!(snap.untouched, vec!["shop/deployment/cache"], "{snap:?}");
    assert_eq!(
        verdict_of(&report, "web"),
        Some(Verdict::Live),
        "{}",
        run.stdout
    );
    assert_eq!(
        verdict_of(&report, "api"),
        Some(Verdict::NotLive),
        "{}",
        run.stdout
    );

    // Rollback: only api is touched; the test plays the controller undoing it.
    p.cluster.sim.requests().reset();
    let args = [
        "rollback",
        "--snapshot",
        p.dir(),
        "--commit",
        COMMIT,
        "--timeout",
        "30s",
    ];
    let rollback = p.run(&args);
    let controller = async {
        wait_until_async("the rollback patch", Duration::from_secs(25), || {
            let api = p
                .cluster
                .sim
                .get("apps/v1", "Deployment", Some(NS), "api")
                .expect("api");
            api["spec"]["template"]["spec"]["containers"][0]["image"]
                == "registry.shop.example/api:1.0"
        })
        .await;
        // The Deployment controller finds the old ReplicaSet's template again and scales it up.
        p.cluster.sim.delete("v1", "Pod", Some(NS), "api-b2-0");
        p.cluster.sim.apply(replicaset(
            "api",
            "registry.shop.example/api:2.0",
            "b2",
            2,
            0,
        ));
        set_status(
            &p.cluster.sim,
            "api",
            json!({"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}),
        );
    };
    let (run, ()) = tokio::join!(rollback, controller);
    assert_eq!(
        run.code, 0,
        "rollback succeeded: {}{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.contains("rolled back shop/deployment/api")
            && run.stdout.contains("rollback succeeded"),
        "{}",
        run.stdout
    );
    let written = writes(&p.cluster.sim);
    assert_eq!(written.len(), 1, "exactly one write: {written:?}");
    assert!(
        written[0].0 == "patch" && written[0].1.ends_with("/deployments/api"),
        "{written:?}"
    );
    for untouched in ["web", "cache"] {
        assert!(!written
            .iter()
            .any(|(_, path, _)| path.ends_with(&format!("/deployments/{untouched}"))));
    }

    // Verify again: the commit's change to api is not live (it was rolled back): exit 1.
    let (run, report) = p.verify().await;
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(verdict_of(&report, "web"), Some(Verdict::Live));
    assert_eq!(verdict_of(&report, "api"), Some(Verdict::NotLive));
}

/// The apply job was killed after its first object: verify still runs and finds what changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_runs_whatever_happened_to_the_apply() {
    let p = Pipeline::start().await;
    p.snapshot().await;
    apply(&p.cluster.sim, 1);
    let (run, report) = p.verify().await;
    assert_eq!(run.code, 1, "{}", run.stdout);
    let snap = report.snapshot.as_ref().expect("summary");
    assert_eq!(
        snap.changed,
        vec!["shop/deployment/web"],
        "only web's template landed: {snap:?}"
    );
    assert_eq!(
        verdict_of(&report, "web"),
        Some(Verdict::NotLive),
        "the controller has not acted: {}",
        run.stdout
    );
}

/// The exit status tells the truth, each way (the inverted `[ -s "$failed_file" ]` of seed 001).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_exit_status_tells_the_truth() {
    // Nothing failed: nothing to roll back, exit 0, no write.
    let p = Pipeline::start().await;
    p.snapshot().await;
    apply(&p.cluster.sim, WEB_ONLY);
    p.cluster.sim.requests().reset();
    let run = p
        .run(&["rollback", "--snapshot", p.dir(), "--commit", COMMIT])
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("nothing to roll back"),
        "{}",
        run.stdout
    );
    assert!(writes(&p.cluster.sim).is_empty());

    // A failure whose rollback never takes (no controller acts): exit 1, "rollback failed".
    let p = Pipeline::start().await;
    p.snapshot().await;
    apply(&p.cluster.sim, usize::MAX);
    let run = p
        .run(&[
            "rollback",
            "--snapshot",
            p.dir(),
            "--commit",
            COMMIT,
            "--timeout",
            "2s",
        ])
        .await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("rollback failed"), "{}", run.stdout);

    // --dry-run: says what it would patch, sends nothing, exits 1 (the failure is still there).
    let p = Pipeline::start().await;
    p.snapshot().await;
    apply(&p.cluster.sim, usize::MAX);
    p.cluster.sim.requests().reset();
    let run = p
        .run(&[
            "rollback",
            "--snapshot",
            p.dir(),
            "--commit",
            COMMIT,
            "--dry-run",
        ])
        .await;
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("would PATCH deployment shop/api"),
        "{}",
        run.stdout
    );
    assert!(writes(&p.cluster.sim).is_empty());
}

/// Helm's storage of release `cart` at `revision`, installing nothing liveproof follows.
fn release(revision: i64, status: &str, at: Timestamp) -> Value {
    liveproof_helm::encode_secret(&json!({
        "name": "cart", "namespace": NS, "version": revision,
        "info": {"first_deployed": "2026-01-05T09:00:00Z", "last_deployed": at.to_string(),
                 "deleted": "", "description": "Upgrade complete", "status": status},
        "chart": {"metadata": {"name": "cart", "version": format!("0.{revision}.0"), "apiVersion": "v2"}},
        "config": {},
        "manifest": "",
        "hooks": []
    }))
}

/// A release that failed since the snapshot is Helm's to roll back: `rollback` says which
/// revision of the snapshot to return to, and writes nothing itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_release_is_left_to_helm_at_its_snapshot_revision() {
    let p = Pipeline::start().await;
    p.cluster.sim.apply(release(
        1,
        "deployed",
        now() - SignedDuration::from_hours(24),
    ));
    p.snapshot().await;
    p.cluster.sim.apply(release(
        1,
        "superseded",
        now() - SignedDuration::from_hours(24),
    ));
    p.cluster.sim.apply(release(2, "failed", now()));
    p.cluster.sim.requests().reset();
    let run = p
        .run(&[
            "rollback",
            "--snapshot",
            p.dir(),
            "--commit",
            COMMIT,
            "--timeout",
            "2s",
        ])
        .await;
    assert!(
        run.stdout.contains(
            "release shop/cart failed: run `helm rollback cart 1 -n shop` (liveproof does not re-implement Helm)"
        ),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(writes(&p.cluster.sim).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_of_another_commit_is_refused() {
    let p = Pipeline::start().await;
    p.snapshot().await;
    for command in ["verify", "rollback"] {
        let run = p
            .run(&[command, "--snapshot", p.dir(), "--commit", "0123456789ab"])
            .await;
        assert_eq!(run.code, 2, "{command}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(COMMIT) && run.stderr.contains("0123456789ab"),
            "{}",
            run.stderr
        );
    }
    let missing = tempfile::tempdir().expect("tempdir");
    let run = p
        .run(&[
            "verify",
            "--snapshot",
            missing.path().to_str().expect("utf-8"),
            "--commit",
            COMMIT,
        ])
        .await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no snapshot") && run.stderr.contains("liveproof snapshot"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_snapshot_dir_fails_before_any_request() {
    let p = Pipeline::start().await;
    let file = p.dir.path().join("not-a-dir");
    std::fs::write(&file, "x").expect("file");
    let under_a_file = file.join("snapshots");
    p.cluster.sim.requests().reset();
    let run = p
        .run(&[
            "snapshot",
            "--dir",
            under_a_file.to_str().expect("utf-8"),
            "--commit",
            COMMIT,
        ])
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("cannot write there"), "{}", run.stderr);
    assert_eq!(
        p.cluster.sim.requests().total(),
        0,
        "not one request before the dir is known good"
    );
    assert!(!Path::new(&under_a_file).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_writes_a_second_format_beside_the_first() {
    let p = Pipeline::start().await;
    p.snapshot().await;
    apply(&p.cluster.sim, usize::MAX);
    let junit = p.dir.path().join("verify.xml");
    let run = p
        .run(&[
            "verify",
            "--snapshot",
            p.dir(),
            "--commit",
            COMMIT,
            "-o",
            "markdown",
            "--report",
            junit.to_str().expect("utf-8"),
        ])
        .await;
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("## ❌ liveproof: not live"),
        "{}",
        run.stdout
    );
    let xml = std::fs::read_to_string(&junit).expect("report written");
    assert!(
        xml.starts_with("<?xml") && xml.contains("<testsuite") && xml.contains("pods_current"),
        "{xml}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_changed_since_the_snapshot_is_unproven_never_live() {
    // The apply never ran (or a controller has not reconciled yet): zero changed targets.
    let p = Pipeline::start().await;
    p.snapshot().await;
    let (run, report) = p.verify().await;
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert_eq!(report.verdict, Verdict::Unproven);
    assert!(report.targets.is_empty());
    let step = report.next_step.expect("says what to check").to_string();
    assert!(
        step.contains("apply ran") && step.contains("reconciled"),
        "{step}"
    );
    let text = p
        .run(&["verify", "--snapshot", p.dir(), "--commit", COMMIT])
        .await;
    assert_eq!(text.code, 3);
    assert!(
        text.stdout.contains("next step: nothing in the snapshot"),
        "{}",
        text.stdout
    );

    p.cluster.sim.requests().reset();
    let rollback = p
        .run(&["rollback", "--snapshot", p.dir(), "--commit", COMMIT])
        .await;
    assert_eq!(rollback.code, 3, "{}{}", rollback.stdout, rollback.stderr);
    assert!(
        rollback
            .stdout
            .contains("nothing to roll back, and nothing is proven"),
        "{}",
        rollback.stdout
    );
    assert!(writes(&p.cluster.sim).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_snapshot_job_keeps_the_pre_apply_snapshot() {
    use std::os::unix::fs::PermissionsExt;
    let p = Pipeline::start().await;
    p.snapshot().await;
    let file = p.dir.path().join(COMMIT).join("snapshot.json");
    let mode = std::fs::metadata(&file)
        .expect("written")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o600,
        "a snapshot holds pod templates: owner only"
    );
    let pre_apply = std::fs::read(&file).expect("read");

    // The apply runs, then the snapshot job is retried (after it): the way back must survive.
    apply(&p.cluster.sim, usize::MAX);
    let retried = p
        .run(&["snapshot", "--dir", p.dir(), "--commit", COMMIT])
        .await;
    assert_eq!(retried.code, 0, "{}{}", retried.stdout, retried.stderr);
    assert!(
        retried.stdout.contains("kept the snapshot"),
        "{}",
        retried.stdout
    );
    assert_eq!(
        std::fs::read(&file).expect("read"),
        pre_apply,
        "not overwritten"
    );
    let (_, report) = p.verify().await;
    assert_eq!(
        verdict_of(&report, "api"),
        Some(Verdict::NotLive),
        "still judged against the pre-apply state"
    );

    // Asked explicitly, it is replaced (and then nothing changed since).
    let replaced = p
        .run(&[
            "snapshot",
            "--dir",
            p.dir(),
            "--commit",
            COMMIT,
            "--overwrite",
        ])
        .await;
    assert_eq!(replaced.code, 0, "{}{}", replaced.stdout, replaced.stderr);
    assert_ne!(
        std::fs::read(&file).expect("read"),
        pre_apply,
        "--overwrite replaces it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn temp_files_of_a_killed_run_are_removed_by_the_next() {
    let p = Pipeline::start().await;
    // What a run killed mid-write leaves: a temp snapshot, a temp `current`, a probe — of a
    // process that no longer runs (PIDs are below /proc/sys/kernel/pid_max; this one is not).
    let dead = 4_194_304_u32 + 7;
    let commit_dir = p.dir.path().join(COMMIT);
    std::fs::create_dir_all(&commit_dir).expect("dir");
    let leftovers = [
        commit_dir.join(format!(".snapshot.json.tmp-{dead}")),
        p.dir.path().join(format!(".current.tmp-{dead}")),
        p.dir.path().join(format!(".liveproof-probe-{dead}")),
        // As they are named now: a random part after the PID.
        commit_dir.join(format!(".snapshot.json.tmp-{dead}.a1B2c3")),
        p.dir.path().join(format!(".current.tmp-{dead}.d4E5f6")),
        p.dir.path().join(format!(".liveproof-probe-{dead}.g7H8i9")),
    ];
    for path in &leftovers {
        std::fs::write(path, vec![0u8; 1 << 20]).expect("write");
    }
    let mine = p.dir.path().join("notes.txt");
    std::fs::write(&mine, "not liveproof's").expect("write");
    p.snapshot().await;
    for path in &leftovers {
        assert!(!path.exists(), "{} left behind", path.display());
    }
    assert!(mine.exists(), "only liveproof's own temp files are removed");
}

/// `snapshot --dir snap` with `snap/<commit>` a symlink to another folder replaced that
/// folder's `snapshot.json`, with `--overwrite` and without (a file there that was not a
/// snapshot was replaced through the link too). Refused with exit 2 naming the link; the
/// other folder is left as it was, and nothing is published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_at_the_commit_folder_is_refused_never_written_through() {
    let p = Pipeline::start().await;
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let victim = elsewhere.path().join("snapshot.json");
    std::fs::write(&victim, "precious").expect("write");
    let link = p.dir.path().join(COMMIT);
    std::os::unix::fs::symlink(elsewhere.path(), &link).expect("symlink");
    for extra in [&[][..], &["--overwrite"][..]] {
        let args = [
            &["snapshot", "--dir", p.dir(), "--commit", COMMIT][..],
            extra,
        ]
        .concat();
        let run = p.run(&args).await;
        assert_eq!(run.code, 2, "{extra:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(link.to_str().expect("utf-8"))
                && run.stderr.contains("symbolic link"),
            "{extra:?}: {}",
            run.stderr
        );
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
        assert!(std::fs::symlink_metadata(p.dir.path().join("current")).is_err());
    }
    let left: Vec<_> = std::fs::read_dir(elsewhere.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "nothing else written there: {left:?}");
}
