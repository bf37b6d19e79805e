use std::time::Duration;

use liveproof_evidence::Verdict;
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{change_time, deployment, World};

/// When it went live, on the real controllers: a real git commit's committer time is the change,
/// the Deployment controller rolls the new template out and the kubelet stand-in marks each
/// pod Ready. `live_since` is the last serving pod's Ready transition as kubectl reads it, the
/// lead time is the seconds from the commit to it, `--record` appends the same, and a target
/// that is not live carries neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_11_live_since_and_the_lead_time_from_a_real_commit() {
    let world = World::start().await;
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("web", &v1, ""));
    world.wait_ready("deploy/web", "3").await;

    // The change: a commit made now (git records whole seconds), then applied.
    let repo = liveproof_testkit::git::Repo::new();
    let committed = change_time().await;
    liveproof_testkit::git::git_at(
        &repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "web v2"],
        &committed,
    );
    let sha = repo.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%cI"])
            .parse::<jiff::Timestamp>()
            .expect("a committer time")
            .to_string(),
        committed
    );
    world.set_image("web", &v2);
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "deploy/web",
                "-o",
                "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}",
            ],
            "3/3/3",
            Duration::from_secs(90),
        )
        .await;
    let repo_dir = repo.path().display().to_string();
    let record = tempfile::tempdir().expect("tempdir");
    let record_file = record.path().join("deployments.jsonl");
    let verify = |image: &str, timeout: &str| {
        common::liveproof()
            .args(&["verify", "deploy/web", "-n", "apps", "--image", image])
            .args(&["--commit", &sha, "--repo", &repo_dir])
            .arg("--record")
            .arg(&record_file)
            .args(&["--wait", "--timeout", timeout])
            .json()
            .on(&world)
    };
    let live = verify(&v2, "60s").run().await;
    world.expect_exit(&live, 0);
    let report = live.report();

    // What kubectl reads: each v2 pod's Ready transition (none is Terminating: it said live).
    let ready = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={range .items[*]}{.spec.containers[0].image} {.metadata.deletionTimestamp} {.status.conditions[?(@.type==\"Ready\")].lastTransitionTime}{\"\\n\"}{end}",
    ]);
    let last_ready: jiff::Timestamp = ready
        .lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            match fields.as_slice() {
                [image, at] if *image == v2 => at.parse().ok(),
                _ => None,
            }
        })
        .max()
        .unwrap_or_else(|| panic!("no Ready v2 pod:\n{ready}"));
    let target = &report.targets[0];
    assert_eq!(
        target.live_since.as_deref(),
        Some(last_ready.to_string().as_str()),
        "{ready}\n{:#?}",
        target.timeline
    );
    let committed: jiff::Timestamp = committed.parse().expect("a time");
    let lead = last_ready.duration_since(committed).as_secs();
    assert!(lead > 0, "{lead}");
    assert_eq!(report.lead_time_seconds, Some(lead));
    assert_eq!(
        report.change.committed_at.as_deref(),
        Some(committed.to_string().as_str())
    );
    // --wait saw it too, on its own clock, no earlier than the cluster dates it.
    let seen = target
        .timeline
        .iter()
        .find(|e| e.event == liveproof_evidence::Moment::ObservedLive)
        .and_then(|e| e.time())
        .unwrap_or_else(|| panic!("no observed_live: {:#?}", target.timeline));
    assert!(
        seen.as_second() >= last_ready.as_second(),
        "{seen} < {last_ready}"
    );

    // An image the pods do not run: not live, undated, no lead time.
    let stale = verify(&v1, "3s").run().await;
    world.expect_exit(&stale, 1);
    let stale = stale.report();
    assert_eq!(stale.targets[0].live_since, None);
    assert_eq!(stale.lead_time_seconds, None);

    // One record line per run, the lead time in the live one.
    let lines: Vec<liveproof_evidence::record::DeploymentRecord> =
        std::fs::read_to_string(&record_file)
            .expect("the record")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a record line"))
            .collect();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(lines[0].lead_time_seconds, Some(lead));
    assert_eq!(lines[0].live_since, target.live_since);
    assert_eq!(
        (lines[1].verdict, lines[1].lead_time_seconds),
        (Verdict::NotLive, None)
    );
}
