//! The scenario corpus through the real CLI, offline (`--from`) and live (through the
//! simulator's REST API): both must give the verdict and failing checks the story records,
//! and so the same verdict as each other.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use liveproof_evidence::{Report, Status};
use serde::Deserialize;

#[derive(Deserialize)]
struct Story {
    args: Vec<String>,
    verdict: String,
    #[serde(default)]
    fail: Vec<String>,
    #[serde(default)]
    unknown: Vec<String>,
    modes: Vec<String>,
}

fn checks_with(report: &Report, status: Status) -> BTreeSet<String> {
    report
        .targets
        .iter()
        .flat_map(|t| t.evidence.iter())
        .filter(|e| e.status == status)
        .map(|e| e.check.name().to_string())
        .collect()
}

fn describe(report: &Report) -> String {
    report
        .targets
        .iter()
        .flat_map(|t| {
            t.evidence.iter().map(move |e| {
                format!(
                    "    {}/{} {} {} {} | {}",
                    t.namespace,
                    t.name,
                    e.check,
                    e.status.name(),
                    e.observed,
                    e.detail
                )
            })
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn mismatch(name: &str, mode: &str, story: &Story, report: &Report) -> Option<String> {
    let fail = checks_with(report, Status::Fail);
    let unknown = checks_with(report, Status::Unknown);
    let want_fail: BTreeSet<String> = story.fail.iter().cloned().collect();
    let want_unknown: BTreeSet<String> = story.unknown.iter().cloned().collect();
    if report.verdict.name() == story.verdict && fail == want_fail && unknown == want_unknown {
        return None;
    }
    Some(format!(
        "{name} [{mode}]: expected {} fail={want_fail:?} unknown={want_unknown:?}\n  got {} fail={fail:?} unknown={unknown:?}\n{}",
        story.verdict,
        report.verdict,
        describe(report)
    ))
}

fn namespace_of(args: &[String]) -> String {
    args.windows(2)
        .find(|w| w[0] == "-n" || w[0] == "--namespace")
        .map(|w| w[1].clone())
        .unwrap_or_else(|| "default".to_string())
}

/// Runs one story in each of its modes: the problems found, and how many live runs were made.
async fn run_story(dir: &Path) -> (Vec<String>, usize) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let story: Story = serde_norway::from_str(
        &std::fs::read_to_string(dir.join("story.yaml")).expect("story.yaml"),
    )
    .expect("story.yaml parses");
    let cluster_yaml = dir.join("cluster.yaml");
    let fixture = cluster_yaml.to_str().expect("utf-8 path");
    let mut problems = Vec::new();
    let mut verdicts = Vec::new();
    let mut live_runs = 0;

    let base: Vec<&str> = std::iter::once("verify")
        .chain(story.args.iter().map(String::as_str))
        .collect();
    if story.modes.iter().any(|m| m == "offline") {
        let mut args = base.clone();
        args.extend(["--from", fixture, "-o", "json"]);
        let run = common::liveproof(&args).await;
        let report = run.report();
        assert_eq!(
            run.code,
            i32::from(report.verdict.exit_code()),
            "{name}: exit code follows the verdict"
        );
        problems.extend(mismatch(&name, "offline", &story, &report));
        verdicts.push(report.verdict);
    }
    if story.modes.iter().any(|m| m == "live") {
        let cluster = common::Cluster::from_file(&cluster_yaml, &namespace_of(&story.args)).await;
        let mut args = base.clone();
        args.extend(["--kubeconfig", cluster.kubeconfig(), "-o", "json"]);
        let run = common::liveproof(&args).await;
        let report = run.report();
        assert_eq!(
            run.code,
            i32::from(report.verdict.exit_code()),
            "{name}: exit code follows the verdict"
        );
        problems.extend(mismatch(&name, "live", &story, &report));
        verdicts.push(report.verdict);
        live_runs += 1;
        cluster.sim.shutdown().await;
    }
    if verdicts.windows(2).any(|w| w[0] != w[1]) {
        problems.push(format!(
            "{name}: offline and live verdicts differ: {verdicts:?}"
        ));
    }
    (problems, live_runs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_story_gives_its_verdict_offline_and_live() {
    let mut dirs: Vec<_> = std::fs::read_dir(common::scenarios_dir())
        .expect("test-data/scenarios")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("story.yaml").exists())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 24,
        "the corpus shrank to {} stories",
        dirs.len()
    );
    let mut problems = Vec::new();
    let mut live_runs = 0;
    for dir in &dirs {
        let (found, live) = run_story(dir).await;
        problems.extend(found);
        live_runs += live;
    }
    // Stories that ran against the simulator, not only offline (a story whose modes lost
    // `live` would lower it).
    assert!(live_runs >= 24, "only {live_runs} stories ran live");
    assert!(
        problems.is_empty(),
        "{} mismatch(es):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
