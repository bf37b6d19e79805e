//! The scenario corpus, pure tier: every story under `test-data/scenarios/*/` whose modes
//! include `offline` is judged from its `cluster.yaml` exactly as `liveproof verify --from`
//! would, and must give the verdict and the fail/unknown sets its `story.yaml` records.
//! (Live-mode parity runs the same stories through the CLI against the simulator.)
//!
//! One test case per story (libtest-mimic), named after its folder: a story fails alone, with
//! the evidence that explains it, and runs alone (`cargo test -p liveproof-evidence --test
//! corpus -- NAME`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use libtest_mimic::{Arguments, Failed, Trial};
use liveproof_evidence::{
    judge, Change, ExpectedImage, ManifestExpectation, Observed, Report, SecretRefExpectation,
    Status, Target,
};
use liveproof_testkit::Story;
use serde::Deserialize as _;

/// Fewer stories than this means the corpus was not found or lost stories.
const MIN_STORIES: usize = 40;

/// What `liveproof verify` would be asked, parsed from a story's `args`.
struct Invocation {
    targets: Vec<Target>,
    namespace: String,
    change: Change,
}

fn parse_args(args: &[String]) -> Result<Invocation, String> {
    let mut targets = Vec::new();
    let mut namespace = "default".to_string();
    let mut change = Change::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        // `--flag=value` and `--flag value` are both what a shell would pass.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if arg.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        if !flag.starts_with('-') {
            targets.push(Target::parse(arg).map_err(|e| e.to_string())?);
            continue;
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag {
            // Switches, taking no value.
            "--no-registry" => change.digests = liveproof_evidence::digest::DigestPolicy::Off,
            "--check-digests" => change.digests = liveproof_evidence::digest::DigestPolicy::AllTags,
            "-n" | "--namespace" => namespace = value()?,
            "--since" => {
                let v = value()?;
                change.since = Some(
                    v.parse()
                        .map_err(|e| format!("--since {v}: not RFC 3339: {e}"))?,
                );
            }
            // The CLI reads the committer time of --commit from a repository unless --since is
            // given too; stories always give both, so the commit is only matched.
            "--commit" => {
                let v = value()?;
                if !liveproof_evidence::is_commit_sha(&v) {
                    return Err(format!("--commit {v}: not 7 to 40 hex digits"));
                }
                change.commit = Some(v.to_ascii_lowercase());
            }
            "--chart-version" => change.chart_version = Some(value()?),
            "--expect" => {
                let v = value()?;
                change.manifest.push(
                    ManifestExpectation::parse(&v).map_err(|e| format!("--expect {v}: {e}"))?,
                );
            }
            "--image" => {
                let v = value()?;
                change.images.push(
                    ExpectedImage::parse(&v)
                        .ok_or_else(|| format!("--image {v}: bad reference"))?,
                );
            }
            "--expect-env" => change.env.push(value()?),
            "--expect-secret-ref" => {
                let v = value()?;
                change.secret_refs.push(
                    SecretRefExpectation::parse(&v)
                        .ok_or_else(|| format!("--expect-secret-ref {v}: not SECRET[/KEY]"))?,
                );
            }
            other => {
                return Err(format!(
                    "flag {other} is not understood by the corpus runner"
                ))
            }
        }
    }
    if targets.is_empty() {
        return Err("no target in args".into());
    }
    if change.commit.is_some() && change.since.is_none() {
        return Err("--commit without --since: the CLI would read the commit's time from git, which a story cannot hold".into());
    }
    Ok(Invocation {
        targets,
        namespace,
        change,
    })
}

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

fn statuses(report: &Report, status: Status) -> BTreeSet<String> {
    report
        .targets
        .iter()
        .flat_map(|t| t.evidence.iter())
        .filter(|e| e.status == status)
        .map(|e| e.check.name().to_string())
        .collect()
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
    let inv = parse_args(&story.args)?;
    let observed = load_cluster(&story.cluster_yaml())?;
    let report = judge(&observed, &inv.change, &inv.targets, &inv.namespace);

    let want_fail: BTreeSet<String> = story.fail.iter().cloned().collect();
    let want_unknown: BTreeSet<String> = story.unknown.iter().cloned().collect();
    let got_fail = statuses(&report, Status::Fail);
    let got_unknown = statuses(&report, Status::Unknown);
    let got_verdict = report.verdict.name();

    if got_verdict == story.verdict && got_fail == want_fail && got_unknown == want_unknown {
        return Ok(None);
    }
    let mut diff = String::new();
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
    if !["live", "not_live", "unproven"].contains(&story.verdict.as_str()) {
        return Err(format!(
            "verdict `{}` is not live|not_live|unproven",
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
                    // A live-only story is judged through the CLI against the simulator.
                    let ignored = !story.runs("offline");
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
