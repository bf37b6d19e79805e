//! The scenario corpus, pure tier: every story under `test-data/scenarios/*/` whose modes
//! include `offline` is judged from its `cluster.yaml` exactly as `liveproof verify --from`
//! would, and must give the verdict and the fail/unknown sets its `story.yaml` records. A
//! story's arguments are read by the CLI's own parser into the CLI's own request
//! ([`liveproof::VerifyRequest`], no I/O), so a story states what a user would type.
//! (`corpus.rs` runs the same stories through the binary, offline and against the simulator.)
//!
//! One test case per story (libtest-mimic), named after its folder: a story fails alone, with
//! the evidence that explains it, and runs alone (`cargo test -p liveproof --test
//! corpus_judged -- NAME`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use libtest_mimic::{Arguments, Failed, Trial};
use liveproof_evidence::{judge, Observed, Report, Status};
use liveproof_testkit::story::checks_with;
use liveproof_testkit::Story;
use serde::Deserialize as _;

/// Fewer stories than this means the corpus was not found or lost stories.
const MIN_STORIES: usize = 40;

fn load_cluster(path: &Path) -> Result<Observed, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut observed = Observed::default();
    for (i, doc) in serde_norway::Deserializer::from_str(&text).enumerate() {
        let what = format!("{} document {}", path.display(), i + 1);
        let value = serde_norway::Value::deserialize(doc).map_err(|e| format!("{what}: {e}"))?;
        if value.is_null() {
            continue; // an empty document, e.g. after a trailing `---`
        }
        let json: serde_json::Value =
            serde_json::to_value(value).map_err(|e| format!("{what}: not JSON: {e}"))?;
        observed.add_value(json, &what).map_err(|e| e.to_string())?;
    }
    // As the gatherer does before judging (here without a deadline).
    observed.decode_releases_with(|obj| {
        liveproof_evidence::releases::decoded(liveproof_helm::read_release(
            obj,
            &liveproof_helm::Limits::default(),
        ))
    });
    Ok(observed)
}

fn render_evidence(report: &Report) -> String {
    let mut out = String::new();
    for t in &report.targets {
        let via = t
            .via
            .as_deref()
            .map(|v| format!(" (via {v})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    {}/{}/{} → {}{via}",
            t.namespace, t.kind, t.name, t.verdict
        );
        for e in &t.evidence {
            let _ = writeln!(
                out,
                "      {:<20} {:<8} {} | {}",
                e.check.name(),
                e.status.name(),
                e.observed,
                e.detail
            );
        }
    }
    out
}

/// Judges one story; `Ok(None)` when it matches, `Ok(Some(diff))` when it does not.
fn judged(story: &Story) -> Result<Option<String>, String> {
    let request = liveproof::VerifyRequest::from_argv(&story.args).map_err(|e| format!("{e:#}"))?;
    if request.change().commit.is_some() && request.change().since.is_none() {
        return Err("--commit without --since: the CLI would read the commit's time from git, which a story cannot hold".into());
    }
    let observed = load_cluster(&story.cluster_yaml())?;
    let namespace = request.namespace().unwrap_or("default");
    let report = judge(&observed, request.change(), request.targets(), namespace);

    let want_fail: BTreeSet<String> = story.fail.iter().cloned().collect();
    let want_unknown: BTreeSet<String> = story.unknown.iter().cloned().collect();
    let got_fail = checks_with(&report, Status::Fail);
    let got_unknown = checks_with(&report, Status::Unknown);
    let got_verdict = report.verdict.name();

    let superseded: Vec<String> = story
        .superseded_by
        .iter()
        .flat_map(|(key, want)| {
            let got = report
                .targets
                .iter()
                .find(|t| &format!("{}/{}/{}", t.kind, t.namespace, t.name) == key);
            match got {
                None => vec![format!("{key}: no such target in the report")],
                Some(t) => want
                    .differences(t.superseded_by.as_ref())
                    .into_iter()
                    .map(|d| format!("{key} superseded_by {d}"))
                    .collect(),
            }
        })
        .collect();
    if got_verdict == story.verdict
        && got_fail == want_fail
        && got_unknown == want_unknown
        && superseded.is_empty()
    {
        return Ok(None);
    }
    let mut diff = String::new();
    for problem in &superseded {
        let _ = writeln!(diff, "  {problem}");
    }
    let _ = writeln!(
        diff,
        "  expected: verdict {:<9} fail {:?} unknown {:?}",
        story.verdict, want_fail, want_unknown
    );
    let _ = writeln!(
        diff,
        "  got:      verdict {:<9} fail {:?} unknown {:?}",
        got_verdict, got_fail, got_unknown
    );
    diff.push_str(&render_evidence(&report));
    Ok(Some(diff))
}

/// A story that says what it records: a story told, a known verdict, known modes.
fn well_formed(story: &Story) -> Result<(), String> {
    if story.story.trim().is_empty() {
        return Err("story.yaml tells no story".into());
    }
    if !["live", "not_live", "unproven", "superseded"].contains(&story.verdict.as_str()) {
        return Err(format!(
            "verdict `{}` is not live|not_live|unproven|superseded",
            story.verdict
        ));
    }
    if let Some(m) = story.modes.iter().find(|m| *m != "offline" && *m != "live") {
        return Err(format!("mode `{m}` is not offline|live"));
    }
    Ok(())
}

fn run_story(story: &Story) -> Result<(), Failed> {
    well_formed(story)?;
    match judged(story)? {
        None => Ok(()),
        Some(diff) => Err(format!("does not match what it records:\n{diff}").into()),
    }
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let trials = match Story::all() {
        Ok(stories) => {
            let count = stories.len();
            let mut trials: Vec<Trial> = stories
                .into_iter()
                .map(|story| {
                    // A live-only story is judged through the CLI against the simulator, and
                    // one with a history through the CLI, which asks git about it.
                    let ignored = !story.runs("offline") || !story.history.is_empty();
                    Trial::test(story.name.clone(), move || run_story(&story))
                        .with_ignored_flag(ignored)
                })
                .collect();
            trials.push(Trial::test("the corpus holds its stories", move || {
                if count < MIN_STORIES {
                    return Err(format!("only {count} stories (at least {MIN_STORIES})").into());
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
