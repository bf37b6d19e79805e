//! The change time as a person gives it: RFC 3339 with any offset or a duration ago (as
//! kubectl writes durations), never a time without an offset or in the future, printed to the
//! second; and `--wait` refused up front when nothing could ever become live without one.

use liveproof_testkit::binary as common;

use common::{liveproof, RunExt};
use jiff::{SignedDuration, Timestamp};
use liveproof_testkit::story::scenarios_dir;

/// A dump whose pods started at 10:06 on 2026-07-12 and whose verdict is live after 10:00.
fn live_dump() -> String {
    scenarios_dir()
        .join("gitops-reconciled-new-tag-rolled-out/cluster.yaml")
        .to_str()
        .expect("utf-8 path")
        .to_string()
}

async fn verify(since: &str, extra: &[&str]) -> common::Run {
    let dump = live_dump();
    let mut args = vec![
        "verify",
        "deployment/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "--image",
        "ghcr.io/acme/inventory:1.4.0",
        "--since",
        since,
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    liveproof().args(&args).run().await
}

#[tokio::test]
async fn an_offset_other_than_z_is_the_same_instant() {
    let run = verify("2026-07-12T12:00:00+02:00", &[]).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(report.change.since.as_deref(), Some("2026-07-12T10:00:00Z"));
    // The pods started at 10:06Z; 12:30+02:00 is 10:30Z, after them: not live.
    let later = verify("2026-07-12T12:30:00+02:00", &[]).await;
    assert_eq!(
        later.code, 1,
        "pods of 10:06Z predate 10:30Z:\n{}",
        later.stdout
    );
}

#[tokio::test]
async fn a_duration_ago_is_now_minus_it_to_the_second() {
    let before = Timestamp::now();
    let run = verify("1h30m", &[]).await;
    let after = Timestamp::now();
    // The pods started in July: an hour and a half ago they were long running.
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let since: Timestamp = run
        .report()
        .change
        .since
        .expect("a change time")
        .parse()
        .expect("RFC 3339");
    let ago = SignedDuration::from_mins(90);
    let earliest = Timestamp::from_second((before - ago).as_second()).expect("valid");
    assert!(
        since >= earliest && since <= after - ago,
        "{since} is not 1h30m before the run"
    );
    assert_eq!(since.subsec_nanosecond(), 0, "printed to the second");
    assert!(!run
        .stdout
        .contains(&format!("{}.", since.strftime("%H:%M:%S"))));
}

#[tokio::test]
async fn the_text_report_prints_times_to_the_second() {
    let dump = live_dump();
    let run = liveproof()
        .args(&[
            "verify",
            "deployment/inventory",
            "-n",
            "apps",
            "--from",
            &dump,
        ])
        .since("10m")
        .run()
        .await;
    let change = run
        .stdout
        .lines()
        .find(|l| l.starts_with("change: since "))
        .unwrap_or_else(|| panic!("no change line:\n{}", run.stdout));
    let time = change
        .trim_start_matches("change: since ")
        .split_whitespace()
        .next()
        .expect("a time");
    assert_eq!(time.len(), "2026-07-12T10:00:00Z".len(), "{change}");
}

#[tokio::test]
async fn no_offset_a_date_and_junk_are_refused_with_examples() {
    for (given, says) in [
        ("2026-07-12T10:00:00", "has no offset"),
        ("2026-07-12", "date without a time"),
        ("yesterday", "neither an RFC 3339 time nor a duration"),
        ("10 minutes", "neither"),
        ("5x", "not a duration"),
    ] {
        let run = verify(given, &[]).await;
        assert_eq!(run.code, 2, "{given}: {}{}", run.stdout, run.stderr);
        // No report on a usage error: the error document, saying the same.
        let doc = run.error_document();
        assert!(doc.error.message.contains(says), "{given}: {doc:?}");
        assert!(
            doc.error.hint.is_some_and(|h| h.contains("--since 10m")),
            "{given}"
        );
        for needle in [says, "--since", "hint:", "--since 10m", "+02:00"] {
            assert!(
                run.stderr.contains(needle),
                "{given}: no `{needle}`:\n{}",
                run.stderr
            );
        }
    }
}

#[tokio::test]
async fn a_time_in_the_future_is_refused_not_judged() {
    let tomorrow = (Timestamp::now() + SignedDuration::from_hours(24))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let run = verify(&tomorrow, &[]).await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let doc = run.error_document();
    assert!(doc.error.message.contains("in the future"), "{doc:?}");
    assert!(
        run.stderr.contains("in the future") && run.stderr.contains(&tomorrow),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("restart"), "{}", run.stderr);
}

#[tokio::test]
async fn wait_without_a_change_time_is_refused_before_any_request() {
    // A kubeconfig pointing nowhere: the refusal must come first, and at once.
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\n\
         contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n",
    )
    .expect("write");
    let run = liveproof()
        .args(&["verify", "deploy/api"])
        .kubeconfig(&kubeconfig)
        .args(&[
            "--image",
            "ghcr.io/acme/api:2",
            "--wait",
            "--timeout",
            "10m",
        ])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    for needle in ["--wait needs a change time", "--since", "--commit"] {
        assert!(
            run.stderr.contains(needle),
            "no `{needle}`:\n{}",
            run.stderr
        );
    }
    assert!(
        !run.stderr.contains("127.0.0.1:9"),
        "no request was sent:\n{}",
        run.stderr
    );
}

/// `--wait` records when it saw each target live (`observed_live`, liveproof's clock). It is
/// `live_since` only where the cluster dates nothing: ledger-0's Ready condition records no
/// time in one story, so the observation dates it; in the other, the last Ready transition does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_records_when_it_saw_each_target_live() {
    use liveproof_evidence::Moment;
    for (story, dated_by_cluster) in [
        ("statefulset-rolled-out", true),
        ("live-pod-ready-time-not-recorded", false),
    ] {
        let cluster = liveproof_testkit::SimCluster::from_file(
            &scenarios_dir().join(story).join("cluster.yaml"),
            "payments",
        )
        .await;
        let before = Timestamp::now();
        let run = liveproof()
            .story(story)
            .on(&cluster)
            .args(&["--wait", "--timeout", "30s"])
            .json()
            .run()
            .await;
        let after = Timestamp::now();
        let report = run.report();
        assert_eq!(report.verdict.name(), "live", "{story}: {}", run.stderr);
        let target = &report.targets[0];
        let observed: Vec<_> = target
            .timeline
            .iter()
            .filter(|e| e.event == Moment::ObservedLive)
            .collect();
        assert_eq!(observed.len(), 1, "{story}: {:#?}", target.timeline);
        let seen = observed[0].time().expect("a time");
        assert!(before <= seen && seen <= after, "{story}: {seen}");
        let since = target.live_since.as_deref().expect("dated");
        if dated_by_cluster {
            assert_eq!(since, "2026-07-12T10:05:10Z", "{story}");
            assert!(!observed[0].live_since, "{story}");
        } else {
            assert_eq!(since, observed[0].at, "{story}");
            assert!(observed[0].live_since, "{story}");
        }
        cluster.sim.shutdown().await;
    }
}
