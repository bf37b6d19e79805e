//! The scenario corpus through the real CLI, offline (`--from`) and live (through the
//! simulator's REST API): both must give the verdict and failing checks the story records,
//! and so the same verdict as each other. One test case per story, named after its folder:
//! a story fails alone, and runs alone (`cargo test -p liveproof --test corpus -- NAME`).
//! Every evidence item of either report says where it was read twice, in prose (`source`) and
//! as data (`source_ref`), and the two must agree.

mod common;

use common::RunExt;

use liveproof_testkit::SimCluster;

use std::collections::BTreeSet;

use libtest_mimic::{Arguments, Failed, Trial};
use liveproof_evidence::{Report, Status};
use liveproof_testkit::story::checks_with;
use liveproof_testkit::Story;

/// Fewer stories, or fewer of them run against the simulator, means the corpus lost some
/// (or a story lost its `live` mode).
const MIN_STORIES: usize = 24;

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let trials = match Story::all() {
        Ok(stories) => {
            let live = stories.iter().filter(|s| s.runs("live")).count();
            let count = stories.len();
            let mut trials: Vec<Trial> = stories
                .into_iter()
                .map(|story| Trial::test(story.name.clone(), move || run_story(&story)))
                .collect();
            trials.push(Trial::test("the corpus holds its stories", move || {
                if count < MIN_STORIES || live < MIN_STORIES {
                    return Err(format!(
                        "{count} stories, {live} of them live: fewer than {MIN_STORIES}"
                    )
                    .into());
                }
                Ok(())
            }));
            trials
        }
        Err(e) => vec![Trial::test("the corpus loads", move || {
            Err(e.clone().into())
        })],
    };
    libtest_mimic::run(&args, trials).exit_code()
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

fn mismatch(mode: &str, story: &Story, report: &Report) -> Option<String> {
    let fail = checks_with(report, Status::Fail);
    let unknown = checks_with(report, Status::Unknown);
    let want_fail: BTreeSet<String> = story.fail.iter().cloned().collect();
    let want_unknown: BTreeSet<String> = story.unknown.iter().cloned().collect();
    if report.verdict.name() == story.verdict && fail == want_fail && unknown == want_unknown {
        return None;
    }
    Some(format!(
        "[{mode}] expected {} fail={want_fail:?} unknown={want_unknown:?}\n  got {} fail={fail:?} unknown={unknown:?}\n{}",
        story.verdict,
        report.verdict,
        describe(report)
    ))
}

/// Runs one story in each of its modes; every mismatch is reported at once.
fn run_story(story: &Story) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    let problems = runtime.block_on(story_problems(story));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

async fn story_problems(story: &Story) -> Vec<String> {
    let mut problems = Vec::new();
    let mut verdicts = Vec::new();
    if story.runs("offline") {
        let run = common::liveproof()
            .story(&story.name)
            .offline()
            .json()
            .run()
            .await;
        let report = run.report();
        if run.code != i32::from(report.verdict.exit_code()) {
            problems.push(format!(
                "[offline] exit {} for a {} report",
                run.code, report.verdict
            ));
        }
        problems.extend(mismatch("offline", story, &report));
        problems.extend(
            run.source_ref_problems()
                .into_iter()
                .map(|p| format!("[offline] {p}")),
        );
        verdicts.push(report.verdict);
    }
    if story.runs("live") {
        let cluster = SimCluster::from_file(&story.cluster_yaml(), &story.namespace()).await;
        let run = common::liveproof()
            .story(&story.name)
            .on(&cluster)
            .json()
            .run()
            .await;
        let report = run.report();
        if run.code != i32::from(report.verdict.exit_code()) {
            problems.push(format!(
                "[live] exit {} for a {} report",
                run.code, report.verdict
            ));
        }
        problems.extend(mismatch("live", story, &report));
        problems.extend(
            run.source_ref_problems()
                .into_iter()
                .map(|p| format!("[live] {p}")),
        );
        verdicts.push(report.verdict);
        cluster.sim.shutdown().await;
    }
    if verdicts.windows(2).any(|w| w[0] != w[1]) {
        problems.push(format!("offline and live verdicts differ: {verdicts:?}"));
    }
    problems
}
