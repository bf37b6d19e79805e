//! The CLI against the simulator as a cluster: the demo, `--wait`, the request budget, and
//! the side-by-side with the real kubectl that shows why liveproof exists.

use liveproof_testkit::binary as common;

use liveproof_testkit::wait_until_async;

use liveproof_testkit::SimCluster;

use std::path::PathBuf;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;
use liveproof_evidence::{Check, Status, Verdict};
use liveproof_sim::WatchExpiry;

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("rounds")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_is_not_live_then_live() {
    let run = common::liveproof().args(&["demo"]).run().await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let not_live = run
        .stdout
        .find("verdict: not_live")
        .expect("first verdict is not_live");
    let live = run
        .stdout
        .find("verdict: live")
        .expect("second verdict is live");
    assert!(not_live < live, "{}", run.stdout);
}

/// Seed 000: the GitOps controller never reconciled, the Deployment is still on the old tag.
/// `kubectl rollout status` says success at once, truthfully, about the old ReplicaSet; liveproof
/// reads the template back and says not live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_status_succeeds_where_verify_says_not_live() {
    let story = liveproof_testkit::story::scenarios_dir()
        .join("gitops-never-reconciled-template-on-old-tag/cluster.yaml");
    let cluster = SimCluster::from_file(&story, "apps").await;
    let home = tempfile::tempdir().expect("tempdir");
    let kubectl = liveproof_testkit::kubectl()
        .args(&[
            "rollout",
            "status",
            "deployment/inventory",
            "-n",
            "apps",
            "--timeout=20s",
        ])
        .env("KUBECONFIG", cluster.kubeconfig())
        .env("HOME", home.path())
        .env("KUBECACHEDIR", home.path().join("cache"))
        .timeout(Duration::from_secs(60))
        .run()
        .await;
    assert_eq!(
        kubectl.code, 0,
        "kubectl: {}{}",
        kubectl.stdout, kubectl.stderr
    );
    assert!(
        kubectl.stdout.contains("successfully rolled out"),
        "{}",
        kubectl.stdout
    );

    let run = common::liveproof()
        .args(&["verify", "deployment/inventory", "-n", "apps"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0"])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    let readback = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::SpecReadback)
        .expect("spec_readback");
    assert_eq!(readback.status, Status::Fail);
    assert!(readback.observed.contains("1.3.9"), "{readback:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_watches_until_the_reconcile_makes_it_live() {
    wait_until_live(false).await;
}

/// The server closes every watch after one event (as API servers and proxies do): the watch
/// is re-established from its resourceVersion and still sees the reconcile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_survives_watches_closed_by_the_server() {
    wait_until_live(true).await;
}

/// Watches dropped after every event, for the whole wait, while the rollout deletes the old
/// pods: each watch is re-opened from its last resourceVersion (with backoff) until the
/// deadline, never given up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_survives_watches_dropped_after_every_event_through_the_rollout() {
    wait_through_fault(
        |sim| sim.faults().close_watches_after(1),
        Duration::from_secs(12),
    )
    .await;
}

/// Every watch answered with an in-stream `ERROR` 410 Expired: the watcher lists again from
/// scratch (with backoff) instead of ending the wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_survives_watches_expiring_in_stream() {
    wait_through_fault(
        |sim| sim.faults().expire_watches(u64::MAX, WatchExpiry::InStream),
        Duration::from_secs(6),
    )
    .await;
}

/// Every watch request answered `410 Gone`: the same, re-list and re-watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_survives_watches_answered_410_gone() {
    wait_through_fault(
        |sim| sim.faults().expire_watches(u64::MAX, WatchExpiry::Status),
        Duration::from_secs(6),
    )
    .await;
}

/// Watches failing again and again mid-wait (every re-watch answered 503 for a while) do not
/// end the wait: they are retried with backoff until the deadline, and the rollout that comes
/// after they recover is seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_outlasts_watches_that_keep_failing_for_a_while() {
    let merged = now() - SignedDuration::from_secs(90);
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    // Each watch ends after one event, so touching the objects makes every scope watch again.
    cluster.sim.faults().close_watches_after(1);
    let since = merged.to_string();
    let args = [
        "verify",
        "apps/deploy/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--image",
        demo::NEW_IMAGE,
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let outage = async {
        wait_until_async("three watches opened", Duration::from_secs(30), || {
            cluster.sim.requests().count("watch", "/") >= 3
        })
        .await;
        cluster.sim.faults().fail_next(40, 503, None);
        touch_every_scope(&cluster.sim);
        // The outage lasting (retries failing again and again) is the point.
        tokio::time::sleep(Duration::from_secs(10)).await;
        demo::reconcile(&cluster.sim, now());
    };
    let (run, ()) = tokio::join!(waiting, outage);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.report().verdict, Verdict::Live);
    assert!(
        run.stderr.contains("still retrying"),
        "the failing watches were reported: {}",
        run.stderr
    );
}

/// Annotates the demo's Deployment, a ReplicaSet and a pod: one event on each watch.
fn touch_every_scope(sim: &liveproof_sim::SimHandle) {
    for (api, kind, name) in [
        ("apps/v1", "Deployment", "inventory"),
        ("apps/v1", "ReplicaSet", "inventory-6b7f9c8d4"),
        ("v1", "Pod", "inventory-6b7f9c8d4-x2k4p"),
    ] {
        let mut object = sim.get(api, kind, Some(demo::NS), name).expect(kind);
        object["metadata"]["annotations"]["liveproof.test/touched"] = "1".into();
        sim.apply(object);
    }
}

/// Watches still failing when `--timeout` runs out: an operational error naming the server
/// (exit 2), not the stale judgement of before the outage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_ends_with_an_error_when_watches_are_still_failing_at_the_timeout() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    cluster.sim.faults().close_watches_after(1);
    let args = [
        "verify",
        "apps/deploy/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        "1h",
        "--image",
        demo::NEW_IMAGE,
        "--wait",
        "--timeout",
        "12s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let outage = async {
        wait_until_async("three watches opened", Duration::from_secs(30), || {
            cluster.sim.requests().count("watch", "/") >= 3
        })
        .await;
        cluster.sim.faults().fail_next(u64::MAX, 503, None);
        touch_every_scope(&cluster.sim);
    };
    let (run, ()) = tokio::join!(waiting, outage);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&cluster.sim.url()) && run.stderr.contains("503"),
        "{}",
        run.stderr
    );
}

/// The "delete an old pod mid-wait" rollout under a watch fault: the rollout comes only after
/// `delay` (longer than the wait used to survive the fault), and the wait must still end
/// `live`.
async fn wait_through_fault(fault: impl Fn(&liveproof_sim::SimHandle), delay: Duration) {
    let merged = now() - SignedDuration::from_secs(90);
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    fault(&cluster.sim);
    let since = merged.to_string();
    let args = [
        "verify",
        "apps/deploy/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--image",
        demo::NEW_IMAGE,
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let reconcile = async {
        // The rollout coming only after `delay`, while the fault keeps hitting, is the point.
        tokio::time::sleep(delay).await;
        demo::reconcile(&cluster.sim, now());
    };
    let (run, ()) = tokio::join!(waiting, reconcile);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.report().verdict, Verdict::Live);
}

async fn wait_until_live(close_watches: bool) {
    let merged = now() - SignedDuration::from_secs(90);
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    if close_watches {
        cluster.sim.faults().close_watches_after(1);
    }
    let since = merged.to_string();
    let args = [
        "verify",
        "apps/deploy/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--image",
        demo::NEW_IMAGE,
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let reconcile = async {
        // Once verify is waiting (its watches open), play the controller.
        wait_until_async(
            "verify --wait watching the cluster",
            Duration::from_secs(60),
            || cluster.sim.requests().count("watch", "/") > 0,
        )
        .await;
        demo::reconcile(&cluster.sim, now());
    };
    let (run, ()) = tokio::join!(waiting, reconcile);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Live);
    let wait = report.wait.expect("the wait is recorded");
    assert!(!wait.timed_out && wait.elapsed_seconds < 60, "{wait:?}");
    // Progress went to stderr (a line per change when stderr is not a terminal).
    assert!(run.stderr.contains("waiting:"), "{}", run.stderr);
    assert!(
        run.stderr.contains("spec_readback"),
        "progress says what it waits for: {}",
        run.stderr
    );
    // It watched rather than polled: a handful of LISTs and watches, not a GET per tick.
    let gets = cluster
        .sim
        .requests()
        .count("get", "/apis/apps/v1/namespaces/apps/deployments");
    assert!(gets <= 2, "deployment GETs: {gets}");
    assert!(
        cluster.sim.requests().count("watch", "/") >= 1,
        "{:?}",
        cluster.sim.requests().snapshot()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_gives_up_at_the_timeout_with_the_last_evidence() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["verify", "apps/deploy/inventory"])
        .on(&cluster)
        .since(&since)
        .args(&["--image", demo::NEW_IMAGE, "--wait", "--timeout", "2s"])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::NotLive);
    assert!(run.stderr.contains("--timeout"), "{}", run.stderr);
    // The report itself says the wait ran out, and after how long: a pipeline reading only
    // stdout can tell "not live yet" from "not live, and waiting was not the problem".
    let wait = report.wait.expect("the wait is recorded");
    assert!(wait.timed_out, "{wait:?}");
    assert!((2..=3).contains(&wait.elapsed_seconds), "{wait:?}");
}

/// Waits on a story with a ten-minute timeout: the harness's own two-minute bound fails the
/// test if the timeout is waited out instead of the failure being seen as final.
async fn wait_on_story(story: &str) -> (common::Run, liveproof_evidence::Report) {
    let path = liveproof_testkit::story::scenarios_dir()
        .join(story)
        .join("cluster.yaml");
    let cluster = SimCluster::from_file(&path, "apps").await;
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "-n", "apps"])
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0", "--no-registry"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .args(&["--wait", "--timeout", "10m"])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.report();
    (run, report)
}

fn evidence(report: &liveproof_evidence::Report, check: Check) -> liveproof_evidence::Evidence {
    report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == check)
        .cloned()
        .unwrap_or_else(|| panic!("no {check} evidence"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_stops_early_on_a_crash_loop() {
    let (run, report) = wait_on_story("new-pod-crashloopbackoff-old-pods-serving").await;
    let pods = evidence(&report, Check::PodsCurrent);
    assert!(pods.detail.contains("CrashLoopBackOff"), "{pods:?}");
    assert!(
        run.stderr.contains("crash-looping"),
        "says why it stopped waiting: {}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_stops_early_on_a_final_failure() {
    let (run, report) = wait_on_story("progress-deadline-exceeded-image-never-pushed").await;
    let rollout = evidence(&report, Check::RolloutComplete);
    assert!(
        rollout.detail.contains("ProgressDeadlineExceeded"),
        "{rollout:?}"
    );
    assert!(run.stderr.contains("stopped waiting"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_counts_requests_and_gathers_with_few() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["-v", "verify", "apps/deploy/inventory"])
        .on(&cluster)
        .since(&since)
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    // One GET of the Deployment, one LIST of ReplicaSets, one LIST of pods by selector, one
    // LIST each of Services and EndpointSlices (traffic_current); and, because it is not
    // live, one LIST of Warning events per event API for the "why".
    assert!(run.stderr.contains("7 API requests"), "{}", run.stderr);
    assert_eq!(
        cluster
            .sim
            .requests()
            .count("list", "/api/v1/namespaces/apps/events"),
        1
    );
    assert_eq!(
        cluster
            .sim
            .requests()
            .count("list", "/apis/events.k8s.io/v1/namespaces/apps/events"),
        1
    );
    assert_eq!(
        cluster.sim.requests().total(),
        7,
        "{:?}",
        cluster.sim.requests().snapshot()
    );
    assert_eq!(
        cluster
            .sim
            .requests()
            .count("get", "/api/v1/namespaces/apps/pods/"),
        0,
        "no GET per pod"
    );
}

/// `liveproof sim` serves a cluster another process can verify against, until interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_subcommand_serves_fixtures_to_another_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let fixtures = liveproof_testkit::story::scenarios_dir()
        .join("gitops-reconciled-new-tag-rolled-out/cluster.yaml");
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(["sim", "--fixtures"])
        .arg(&fixtures)
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .args(["-n", "apps"])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof sim starts");
    wait_until_async(
        "liveproof sim writing its kubeconfig",
        Duration::from_secs(30),
        || kubeconfig.exists(),
    )
    .await;
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory"])
        .kubeconfig(&kubeconfig)
        .since("2026-07-12T10:00:00Z")
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0"])
        .json()
        .run()
        .await;
    server.kill().await.expect("stops");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.report().targets[0].namespace,
        "apps",
        "the kubeconfig's namespace applies"
    );
}

/// docs/design.md: a `kubectl-liveproof` binary on PATH makes `kubectl liveproof …` work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_as_a_kubectl_plugin() {
    let story = liveproof_testkit::story::scenarios_dir()
        .join("gitops-never-reconciled-template-on-old-tag/cluster.yaml");
    let cluster = SimCluster::from_file(&story, "apps").await;
    let plugin = PathBuf::from(env!("CARGO_BIN_EXE_kubectl-liveproof"));
    let bin_dir = plugin.parent().expect("bin dir").to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let home = tempfile::tempdir().expect("tempdir");
    let out = liveproof_testkit::kubectl()
        .args(&[
            "liveproof",
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--since",
            "2026-07-12T10:00:00Z",
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
        ])
        .on(&cluster)
        .env("PATH", path)
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(60))
        .run()
        .await;
    let stdout = &out.stdout;
    assert_eq!(out.code, 1, "{stdout}{}", out.stderr);
    assert!(stdout.contains("verdict: not_live"), "{stdout}");
}

/// A quiet but healthy watch (nothing changes, so the server sends nothing) is not a request
/// that timed out: with `--request-timeout 1s` the wait still ends at its own `--timeout`
/// with the last evidence, each watch opened once and never cut by the read timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_watch_outlives_the_request_timeout() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["verify", "apps/deploy/inventory"])
        .on(&cluster)
        .since(&since)
        .args(&[
            "--image",
            demo::NEW_IMAGE,
            "--wait",
            "--timeout",
            "6s",
            "--request-timeout",
            "1s",
            "-v",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.report().verdict, Verdict::NotLive);
    assert!(!run.stderr.contains("did not answer"), "{}", run.stderr);
    let watches: Vec<(String, String, u64)> = cluster
        .sim
        .requests()
        .snapshot()
        .into_iter()
        .filter(|(verb, _, _)| verb == "watch")
        .collect();
    assert!(!watches.is_empty(), "it watched");
    assert!(
        watches.iter().all(|(_, _, n)| *n == 1),
        "a watch was cut and re-opened: {watches:?}\n{}",
        run.stderr
    );
}

/// A first deploy: the Deployment does not exist when `--wait` starts. It is reported as
/// missing, waited for, noticed when it is created (through the watch), and proven live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_notices_a_workload_created_after_it_started() {
    let (created_later, present): (Vec<serde_json::Value>, Vec<serde_json::Value>) =
        demo::story_before(now() - SignedDuration::from_hours(96))
            .into_iter()
            .partition(|o| {
                matches!(
                    o["kind"].as_str(),
                    Some("Deployment" | "ReplicaSet" | "Pod")
                )
            });
    assert!(!created_later.is_empty());
    let cluster = SimCluster::start(present, demo::NS).await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let args = [
        "verify",
        "apps/deploy/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--image",
        demo::NEW_IMAGE,
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let deploy = async {
        // Once verify is waiting (its watches open), the first deploy lands.
        wait_until_async(
            "verify --wait watching the cluster",
            Duration::from_secs(60),
            || cluster.sim.requests().count("watch", "/") > 0,
        )
        .await;
        for object in created_later {
            cluster.sim.apply(object);
        }
        demo::reconcile(&cluster.sim, now());
    };
    let (run, ()) = tokio::join!(waiting, deploy);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.report().verdict, Verdict::Live);
    // It said what it was waiting for while the Deployment did not exist.
    assert!(
        run.stderr
            .contains("there is no Deployment named inventory in namespace apps"),
        "{}",
        run.stderr
    );
}

/// `-A` looked in every namespace, so a missing target says so — not "not in default".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_target_with_all_namespaces_says_every_namespace_was_searched() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["verify", "deploy/nowhere", "-A"])
        .on(&cluster)
        .since(&since)
        .json()
        .run()
        .await;
    // Not a verdict (exit 1 starts a rollback): an input error naming where it looked.
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("deployment nowhere not found")
            && run.stderr.contains("in every namespace")
            && !run.stderr.contains("default"),
        "{}",
        run.stderr
    );
}

/// A missing target's hint lists names as its kind is listed: a Helm release by `helm list`,
/// from the `name` labels of Helm's storage (not the Secrets' own names), a HelmRelease by
/// `kubectl get helmreleases`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_target_is_listed_as_its_kind_lists_its_names() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    for (target, said) in [
        (
            "release/inventry",
            "did you mean `inventory`? (helm list -n apps)",
        ),
        (
            "hr/inventry",
            "did you mean `inventory`? (kubectl get helmreleases -n apps)",
        ),
    ] {
        let run = common::liveproof()
            .args(&["verify", target, "-n", demo::NS])
            .on(&cluster)
            .since(&since)
            .run()
            .await;
        assert_eq!(run.code, 2, "{target}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(said), "{target}: {}", run.stderr);
    }
}

/// As kubectl: `-A` wins over `-n` (kubectl 1.37 lists every namespace and ignores `-n`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_namespaces_wins_over_namespace_as_in_kubectl() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "-n", "elsewhere", "-A"])
        .on(&cluster)
        .since(&since)
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.report();
    assert_eq!(report.targets[0].namespace, "apps", "{:?}", report.targets);
    // And kubectl itself does the same with the same flags.
    let out = liveproof_testkit::kubectl()
        .on(&cluster)
        .args(&["get", "deployments", "-n", "elsewhere", "-A", "-o", "name"])
        .run()
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("deployment.apps/inventory"),
        "{}",
        out.stdout
    );
}

/// A `KUBECONFIG` list with a file that does not exist is read as kubectl reads it: the
/// missing file is skipped; a list where every file is missing is an error naming them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_list_with_a_missing_file_skips_it_as_kubectl_does() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing");
    let list = format!("{}:{}", missing.display(), cluster.kubeconfig());
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let args = [
        "verify",
        "deploy/inventory",
        "--since",
        &since,
        "-o",
        "json",
    ];
    let run = common::liveproof()
        .args(&args)
        .env("KUBECONFIG", &list)
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.report().targets[0].namespace, "apps");
    let out = liveproof_testkit::kubectl()
        .args(&["get", "deployments", "-o", "name"])
        .env("KUBECONFIG", &list)
        .run()
        .await;
    assert_eq!(out.code, 0, "kubectl too: {}", out.stderr);

    let all_missing = format!(
        "{}:{}",
        missing.display(),
        dir.path().join("also").display()
    );
    let run = common::liveproof()
        .args(&args)
        .env("KUBECONFIG", &all_missing)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("KUBECONFIG") && run.stderr.contains(&missing.display().to_string()),
        "{}",
        run.stderr
    );
}

/// A namespace that does not exist is a usage error naming it, with a did-you-mean from the
/// namespaces that do — for verify, stale and release show alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_that_does_not_exist_is_a_usage_error_with_a_did_you_mean() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let k = cluster.kubeconfig();
    for args in [
        vec![
            "verify",
            "deploy/inventory",
            "-n",
            "aps",
            "--kubeconfig",
            k,
            "--since",
            &since,
        ],
        vec![
            "verify",
            "aps/deploy/inventory",
            "--kubeconfig",
            k,
            "--since",
            &since,
            "--image",
            demo::NEW_IMAGE,
            "--wait",
            "--timeout",
            "30s",
        ],
        vec!["stale", "aps/deploy/inventory", "--kubeconfig", k],
        vec![
            "release",
            "show",
            "inventory",
            "-n",
            "aps",
            "--kubeconfig",
            k,
        ],
    ] {
        let run = common::liveproof().args(&args).run().await;
        assert_eq!(run.code, 2, "{args:?}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("namespace `aps` does not exist")
                && run.stderr.contains("did you mean `apps`?"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

/// RBAC may refuse reading Namespaces: that must not block — the target is then reported
/// not found where it was looked for (exit 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_namespace_check_does_not_block() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    cluster.sim.deny("get", "namespaces", None);
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "-n", "elsewhere"])
        .on(&cluster)
        .since(&since)
        .json()
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("deployment elsewhere/inventory not found")
            && run.stderr.contains("in namespace elsewhere"),
        "{}",
        run.stderr
    );
    assert!(
        cluster
            .sim
            .requests()
            .count("get", "/api/v1/namespaces/elsewhere")
            >= 1
    );
}

/// `release show -A NAME` finds the release in whichever namespace holds it; two namespaces
/// holding one are listed, and -n is asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_show_all_namespaces_finds_the_release_or_asks_which() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let k = cluster.kubeconfig();
    let run = common::liveproof()
        .args(&["release", "show", "inventory", "-A"])
        .kubeconfig(k)
        .run()
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("inventory"), "{}", run.stdout);
    assert!(run.stdout.contains("apps"), "{}", run.stdout);

    let run = common::liveproof()
        .args(&["release", "show", "nowhere", "-A"])
        .kubeconfig(k)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("not found in any namespace"),
        "{}",
        run.stderr
    );

    let mut copy = cluster
        .sim
        .get(
            "v1",
            "Secret",
            Some(demo::NS),
            "sh.helm.release.v1.inventory.v34",
        )
        .expect("the demo's release storage");
    copy["metadata"]["namespace"] = serde_json::json!("staging");
    for field in ["uid", "resourceVersion", "creationTimestamp"] {
        if let Some(meta) = copy["metadata"].as_object_mut() {
            meta.remove(field);
        }
    }
    cluster.sim.apply(copy);
    let run = common::liveproof()
        .args(&["release", "show", "inventory", "-A"])
        .kubeconfig(k)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("apps, staging") && run.stderr.contains("-n"),
        "{}",
        run.stderr
    );
}

/// `snapshot -n aps`: an empty snapshot of a namespace that does not exist would let a
/// pipeline go on without a way back; it is a usage error with a did-you-mean instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_of_a_namespace_that_does_not_exist_is_refused() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let snapshots = dir.path().join("snapshots");
    let snapshots = snapshots.to_str().expect("utf-8");
    let k = cluster.kubeconfig();
    let base = [
        "snapshot",
        "--dir",
        snapshots,
        "--commit",
        "abcdef1",
        "--kubeconfig",
        k,
    ];
    let run = common::liveproof()
        .args(&[&base[..], &["-n", "aps"]].concat())
        .run()
        .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("namespace `aps` does not exist")
            && run.stderr.contains("did you mean `apps`?"),
        "{}",
        run.stderr
    );
    let run = common::liveproof()
        .args(&[&base[..], &["-n", "apps"]].concat())
        .run()
        .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        cluster
            .sim
            .requests()
            .count("get", "/api/v1/namespaces/apps"),
        0,
        "a snapshot that found something asks nothing more"
    );
}

/// Off a terminal a `--wait` that sees no change still says, at every heartbeat, how long it
/// has waited and what for (a silent CI log reads as a hung job), on stderr: stdout stays the
/// report alone. The interval is shortened for the test (`LIVEPROOF_TEST_HEARTBEAT_MS`); the
/// assertions are on the lines, not on how fast they come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_off_a_terminal_keeps_saying_how_long_and_what_for() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let run = common::liveproof()
        .args(&["verify", "apps/deploy/inventory"])
        .on(&cluster)
        .since(&since)
        .args(&["--image", demo::NEW_IMAGE, "--wait", "--timeout", "6s"])
        .env("LIVEPROOF_TEST_HEARTBEAT_MS", "1000")
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    // stdout is the report and nothing else.
    let report = run.report();
    assert!(report.wait.is_some_and(|w| w.timed_out), "{}", run.stdout);
    assert!(!run.stdout.contains("waiting"), "{}", run.stdout);

    let heartbeats: Vec<(u64, &str)> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("liveproof: still waiting: ["))
        .map(|rest| {
            let (elapsed, what) = rest.split_once("] ").unwrap_or_else(|| panic!("{rest}"));
            (seconds(elapsed), what)
        })
        .collect();
    assert!(heartbeats.len() >= 2, "heartbeats:\n{}", run.stderr);
    for pair in heartbeats.windows(2) {
        assert!(pair[0].0 < pair[1].0, "elapsed goes up: {pair:?}");
    }
    for (_, what) in &heartbeats {
        assert!(what.contains("inventory"), "says what it waits for: {what}");
    }
}

/// `42s`, `1m 5s`, `1h 2m 3s` (the heartbeat's elapsed time) in seconds.
fn seconds(elapsed: &str) -> u64 {
    elapsed
        .split_whitespace()
        .map(|part| {
            let (n, unit) = part.split_at(part.len() - 1);
            let n: u64 = n.parse().unwrap_or_else(|_| panic!("{elapsed}"));
            n * match unit {
                "h" => 3600,
                "m" => 60,
                "s" => 1,
                _ => panic!("{elapsed}"),
            }
        })
        .sum()
}

/// `--wait` judges from snapshot to snapshot only what the watch events touched: through a
/// rollout of 8 Deployments one after the other (the real kubectl sets each image and waits
/// for its rollout; the simulator's controllers roll them), it ends live with the report a
/// one-shot verify gives afterwards (the wait's own record aside), and it judged fewer targets
/// than judging all 8 on every snapshot would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_judges_again_only_what_changed_and_ends_as_a_fresh_verify_does() {
    use liveproof_testkit::fleet;
    let simulator = liveproof_sim::Simulator::new()
        .with_objects(fleet::deployments("bench", 8, 2, true))
        .with_controllers();
    let cluster = SimCluster::serve(simulator, "bench").await;
    let new_image = "registry.local/bench-app:2";
    let since = (now() - SignedDuration::from_secs(1)).to_string();
    let kc = cluster.kubeconfig();
    let args = |wait: bool| {
        let mut args = vec![
            "verify",
            "-l",
            fleet::SELECTOR,
            "-n",
            "bench",
            "--since",
            &since,
            "--image",
            new_image,
            "-o",
            "json",
            "--kubeconfig",
            kc,
        ];
        if wait {
            args.extend(["--wait", "--timeout", "2m", "-v"]);
        }
        args
    };
    let waiting = common::liveproof().args(&args(true)).run();
    let roll = async {
        wait_until_async(
            "verify --wait watching the cluster",
            Duration::from_secs(60),
            || cluster.sim.requests().count("watch", "/") >= 3,
        )
        .await;
        let set = format!("app={new_image}");
        for d in 0..8 {
            let deployment = format!("deploy/svc-{d}");
            for step in [
                vec!["-n", "bench", "set", "image", &deployment, &set],
                vec![
                    "-n",
                    "bench",
                    "rollout",
                    "status",
                    &deployment,
                    "--timeout",
                    "60s",
                ],
            ] {
                liveproof_testkit::kubectl::run(&cluster.kubeconfig, &step, None);
            }
        }
    };
    let (run, ()) = tokio::join!(waiting, roll);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let mut waited = run.report();
    assert_eq!(waited.verdict, Verdict::Live);
    assert!(waited.wait.take().is_some());

    let fresh = common::liveproof().args(&args(false)).run().await;
    assert_eq!(fresh.code, 0, "{}", fresh.stderr);
    // What only a wait records (when it saw each target live) and when each report was made
    // aside, the two are the same.
    let json = |r: &liveproof_evidence::Report| {
        let mut v = serde_json::to_value(r).expect("json");
        v["generated_at"] = serde_json::Value::Null;
        for t in v["targets"].as_array_mut().expect("targets") {
            if let Some(events) = t["timeline"].as_array_mut() {
                events.retain(|e| e["event"] != "observed_live");
            }
        }
        serde_json::to_string_pretty(&v).expect("json")
    };
    let (waited, fresh) = (json(&waited), json(&fresh.report()));
    let first_difference = waited.lines().zip(fresh.lines()).find(|(a, b)| a != b);
    assert_eq!(
        first_difference, None,
        "the waited report differs from a fresh verify's"
    );
    assert_eq!(waited, fresh);

    // "judged N snapshots: M target judgements": fewer than N x 8.
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("target judgements"))
        .unwrap_or_else(|| panic!("no judging line: {}", run.stderr));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    let (snapshots, judgements) = (numbers[numbers.len() - 3], numbers[numbers.len() - 2]);
    assert!(snapshots > 1, "{line}");
    assert!(judgements < snapshots * 8, "{line}");
}
