//! The scenario corpus through the real CLI, offline (`--from`) and live (through the
//! simulator's REST API): both must give the verdict and failing checks the story records,
//! and so the same verdict as each other. One test case per story, named after its folder:
//! a story fails alone, and runs alone (`cargo test -p liveproof --test corpus -- NAME`).
//! Every evidence item of either report says where it was read twice, in prose (`source`) and
//! as data (`source_ref`), and the two must agree.

use liveproof_testkit::binary as common;

use common::RunExt;

use liveproof_testkit::SimCluster;

use std::collections::BTreeSet;

use libtest_mimic::{Arguments, Failed, Trial};
use liveproof_evidence::{Report, Status, Verdict};
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

/// When it went live: each target the story dates reports that `live_since`, a target that is
/// not live carries none, and the lead time is the story's (none unless the report is live).
fn dating_problems(mode: &str, story: &Story, report: &Report) -> Vec<String> {
    let mut problems = Vec::new();
    for t in &report.targets {
        let key = format!("{}/{}/{}", t.kind, t.namespace, t.name);
        let want = story.live_since.get(&key);
        if t.verdict != Verdict::Live
            && (t.live_since.is_some() || !t.timeline.iter().all(|e| !e.live_since))
        {
            problems.push(format!(
                "[{mode}] {key} is {} but has live_since {:?}",
                t.verdict, t.live_since
            ));
        }
        if want.is_some() && t.live_since.as_ref() != want {
            problems.push(format!(
                "[{mode}] {key}: live_since {:?}, the story says {want:?} ({:?})",
                t.live_since, t.live_since_unknown
            ));
        }
        if let Some(since) = &t.live_since {
            let marked: Vec<_> = t.timeline.iter().filter(|e| e.live_since).collect();
            if marked.len() != 1 || &marked[0].at != since {
                problems.push(format!("[{mode}] {key}: live_since {since} is not the one timeline entry marked live_since: {marked:?}"));
            }
        }
    }
    problems.extend(once_problems(mode, story, report));
    for (key, want) in &story.superseded_by {
        let got = report
            .targets
            .iter()
            .find(|t| &format!("{}/{}/{}", t.kind, t.namespace, t.name) == key);
        match got {
            None => problems.push(format!("[{mode}] {key}: no such target in the report")),
            Some(t) => problems.extend(
                want.differences(t.superseded_by.as_ref())
                    .into_iter()
                    .map(|d| format!("[{mode}] {key} superseded_by {d}")),
            ),
        }
    }
    if report.verdict != Verdict::Live && report.lead_time_seconds.is_some() {
        problems.push(format!(
            "[{mode}] a {} report has a lead time",
            report.verdict
        ));
    }
    if report.lead_time_seconds != story.lead_time_seconds {
        problems.push(format!(
            "[{mode}] lead_time_seconds {:?}, the story says {:?}",
            report.lead_time_seconds, story.lead_time_seconds
        ));
    }
    problems
}

/// One object, one verdict: no object is reported twice (given directly and reached through
/// a Helm or GitOps target, or reached through two), and each target the story names has the
/// verdict it says.
fn once_problems(mode: &str, story: &Story, report: &Report) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for t in &report.targets {
        let key = format!("{}/{}/{}", t.kind, t.namespace, t.name);
        if !seen.insert(key.clone()) {
            problems.push(format!("[{mode}] {key} is reported more than once"));
        }
    }
    for (key, want) in &story.verdicts {
        let got: Vec<&str> = report
            .targets
            .iter()
            .filter(|t| &format!("{}/{}/{}", t.kind, t.namespace, t.name) == key)
            .map(|t| t.verdict.name())
            .collect();
        if got != [want.as_str()] {
            problems.push(format!(
                "[{mode}] {key}: verdicts {got:?}, the story says {want}"
            ));
        }
    }
    problems
}

/// The story's run: with `committed_at`, its commit made in a repository of its own at that
/// time and named with `--commit`; with a `history`, those commits made there and the change's
/// named (the repository lives as long as the run).
fn story_cli(story: &Story) -> (liveproof_testkit::Cli, Option<liveproof_testkit::git::Repo>) {
    let cli = common::liveproof().story(&story.name);
    if let Some((repo, sha)) = story.repository() {
        let cli = cli.args(&["--commit", &sha]).arg("--repo").arg(repo.path());
        return (cli, Some(repo));
    }
    match &story.committed_at {
        None => (cli, None),
        Some(at) => {
            let repo = liveproof_testkit::git::Repo::new();
            liveproof_testkit::git::git_at(
                &repo.path(),
                &["commit", "-q", "--allow-empty", "-m", "the change"],
                at,
            );
            let sha = repo.git(&["rev-parse", "HEAD"]);
            let cli = cli.args(&["--commit", &sha]).arg("--repo").arg(repo.path());
            (cli, Some(repo))
        }
    }
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

/// A story whose answer is settled: `--wait` with a timeout far longer than the harness's own
/// bound on a run ends at once, with the story's verdict, not timed out, and a note that says
/// why (with `reason` in it).
async fn wait_problems(story: &Story, cluster: &SimCluster, reason: &str) -> Vec<String> {
    let (cli, _repo) = story_cli(story);
    let run = cli
        .on(cluster)
        .args(&["--wait", "--timeout", "10m"])
        .json()
        .run()
        .await;
    let report = run.report();
    let mut problems = Vec::new();
    if report.verdict.name() != story.verdict || run.code != i32::from(report.verdict.exit_code()) {
        problems.push(format!(
            "[wait] exit {} with a {} report, the story says {}",
            run.code, report.verdict, story.verdict
        ));
    }
    if report.wait.is_none_or(|w| w.timed_out) {
        problems.push(format!(
            "[wait] not stopped before its timeout: {:?}",
            report.wait
        ));
    }
    if !report.notes.iter().any(|n| n.contains(reason)) {
        problems.push(format!(
            "[wait] no note says why it stopped with {reason:?}: {:?}\n{}",
            report.notes, run.stderr
        ));
    }
    problems
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
        let (cli, _repo) = story_cli(story);
        let run = cli.offline().json().run().await;
        let report = run.report();
        if run.code != i32::from(report.verdict.exit_code()) {
            problems.push(format!(
                "[offline] exit {} for a {} report",
                run.code, report.verdict
            ));
        }
        problems.extend(mismatch("offline", story, &report));
        problems.extend(dating_problems("offline", story, &report));
        problems.extend(
            run.source_ref_problems()
                .into_iter()
                .map(|p| format!("[offline] {p}")),
        );
        verdicts.push(report.verdict);
    }
    if story.runs("live") {
        let cluster = SimCluster::from_file(&story.cluster_yaml(), &story.namespace()).await;
        let (cli, _repo) = story_cli(story);
        let run = cli.on(&cluster).json().run().await;
        let report = run.report();
        if run.code != i32::from(report.verdict.exit_code()) {
            problems.push(format!(
                "[live] exit {} for a {} report",
                run.code, report.verdict
            ));
        }
        problems.extend(mismatch("live", story, &report));
        problems.extend(dating_problems("live", story, &report));
        problems.extend(
            run.source_ref_problems()
                .into_iter()
                .map(|p| format!("[live] {p}")),
        );
        verdicts.push(report.verdict);
        if let Some(reason) = &story.wait_stops {
            problems.extend(wait_problems(story, &cluster, reason).await);
        }
        cluster.sim.shutdown().await;
    }
    if verdicts.windows(2).any(|w| w[0] != w[1]) {
        problems.push(format!("offline and live verdicts differ: {verdicts:?}"));
    }
    problems
}
