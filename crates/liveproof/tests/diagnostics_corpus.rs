//! The diagnostics corpus: every story under `test-data/scenarios/*/` whose `story.yaml` lists
//! `diagnostics` is run through the real CLI offline (`--from`) and live (against the simulator),
//! and each expected reason must appear in some target's `diagnostics`, with the message and
//! folded count the story records. Diagnostics never change a verdict, and never print a value
//! of a Secret the cluster holds. A live target gathers no diagnostics: no extra request.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use liveproof_evidence::diagnose::Diagnostic;
use liveproof_evidence::{Report, Verdict};
use serde::Deserialize;

#[derive(Deserialize)]
struct Story {
    args: Vec<String>,
    verdict: String,
    modes: Vec<String>,
    /// Reasons that must appear in some target's diagnostics.
    #[serde(default)]
    diagnostics: Vec<String>,
    /// reason → a substring of the message of some diagnostic with that reason.
    #[serde(default)]
    diagnostic_messages: BTreeMap<String, String>,
    /// reason → the count of some diagnostic with that reason (folded events sum their counts).
    #[serde(default)]
    diagnostic_counts: BTreeMap<String, i64>,
    /// Reasons that must not appear (events before the change, Normal events).
    #[serde(default)]
    diagnostics_absent: Vec<String>,
}

/// Values of the Secrets a story's cluster holds, decoded and as stored: none may be printed.
fn secret_values(cluster_yaml: &Path) -> Vec<String> {
    use base64::Engine as _;
    let objects = liveproof_gather::offline::read_objects(cluster_yaml).expect("fixture objects");
    let mut values = Vec::new();
    for o in objects.iter().filter(|o| o["kind"] == "Secret") {
        // Helm release storage is a Secret too; its payload is the release, not a credential.
        if o["type"] == "helm.sh/release.v1" {
            continue;
        }
        for field in ["data", "stringData"] {
            for v in o[field].as_object().into_iter().flat_map(|m| m.values()) {
                let Some(raw) = v.as_str() else { continue };
                values.push(raw.to_string());
                if field == "data" {
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(raw) {
                        values.push(String::from_utf8_lossy(&bytes).into_owned());
                    }
                }
            }
        }
    }
    values.retain(|v| v.len() >= 4);
    values
}

fn diagnostics(report: &Report) -> Vec<&Diagnostic> {
    report
        .targets
        .iter()
        .flat_map(|t| t.diagnostics.iter())
        .collect()
}

fn check(name: &str, mode: &str, story: &Story, secrets: &[String], stdout: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let report: Report = match serde_json::from_str(stdout) {
        Ok(r) => r,
        Err(e) => return vec![format!("{name} [{mode}]: not a report: {e}\n{stdout}")],
    };
    let all = diagnostics(&report);
    let listing = all
        .iter()
        .map(|d| format!("    {} {} {:?} | {}", d.kind, d.reason, d.count, d.message))
        .collect::<Vec<_>>()
        .join("\n");
    if report.verdict.name() != story.verdict {
        problems.push(format!(
            "{name} [{mode}]: verdict {} (story says {}); diagnostics never change a verdict",
            report.verdict, story.verdict
        ));
    }
    for reason in &story.diagnostics {
        if !all.iter().any(|d| d.reason == *reason) {
            problems.push(format!(
                "{name} [{mode}]: no diagnostic with reason {reason}; got:\n{listing}"
            ));
        }
    }
    for (reason, needle) in &story.diagnostic_messages {
        if !all
            .iter()
            .any(|d| d.reason == *reason && d.message.contains(needle.as_str()))
        {
            problems.push(format!(
                "{name} [{mode}]: no {reason} diagnostic whose message contains {needle:?}; got:\n{listing}"
            ));
        }
    }
    for (reason, count) in &story.diagnostic_counts {
        if !all
            .iter()
            .any(|d| d.reason == *reason && d.count == Some(*count))
        {
            problems.push(format!(
                "{name} [{mode}]: no {reason} diagnostic with count {count}; got:\n{listing}"
            ));
        }
    }
    for reason in &story.diagnostics_absent {
        if all.iter().any(|d| d.reason == *reason) {
            problems.push(format!(
                "{name} [{mode}]: {reason} should have been left out; got:\n{listing}"
            ));
        }
    }
    // Diagnostics belong to targets that are not live.
    for t in report.targets.iter().filter(|t| t.verdict == Verdict::Live) {
        if !t.diagnostics.is_empty() {
            problems.push(format!(
                "{name} [{mode}]: live target {}/{} carries diagnostics",
                t.namespace, t.name
            ));
        }
    }
    for secret in secrets {
        if stdout.contains(secret.as_str()) {
            problems.push(format!(
                "{name} [{mode}]: a Secret's value ({} chars) is printed",
                secret.len()
            ));
        }
    }
    problems
}

fn namespace_of(args: &[String]) -> String {
    args.windows(2)
        .find(|w| w[0] == "-n" || w[0] == "--namespace")
        .map(|w| w[1].clone())
        .unwrap_or_else(|| "default".to_string())
}

fn diagnostic_stories() -> Vec<(PathBuf, Story)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(liveproof_testkit::story::scenarios_dir())
        .expect("test-data/scenarios")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("story.yaml").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|dir| {
            let text = std::fs::read_to_string(dir.join("story.yaml")).expect("story.yaml");
            let story: Story = serde_norway::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: story.yaml: {e}", dir.display()));
            (!story.diagnostics.is_empty()).then_some((dir, story))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_diagnostics_story_explains_itself_offline_and_live() {
    let stories = diagnostic_stories();
    assert!(
        stories.len() >= 7,
        "only {} stories list diagnostics",
        stories.len()
    );
    let mut problems = Vec::new();
    let mut with_secret = 0;
    for (dir, story) in &stories {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let cluster_yaml = dir.join("cluster.yaml");
        let fixture = cluster_yaml.to_str().expect("utf-8 path");
        let secrets = secret_values(&cluster_yaml);
        if !secrets.is_empty() {
            with_secret += 1;
        }
        let base: Vec<&str> = std::iter::once("verify")
            .chain(story.args.iter().map(String::as_str))
            .collect();
        if story.modes.iter().any(|m| m == "offline") {
            let args = [&base[..], &["--from", fixture, "-o", "json"]].concat();
            let run = common::liveproof().args(&args).run().await;
            problems.extend(check(&name, "offline", story, &secrets, &run.stdout));
            // The text report's "why" block must not print a value either.
            let text = common::liveproof()
                .args(&[&base[..], &["--from", fixture]].concat())
                .run()
                .await;
            problems.extend(
                secrets
                    .iter()
                    .filter(|s| text.stdout.contains(s.as_str()))
                    .map(|_| format!("{name} [offline text]: a Secret's value is printed")),
            );
        }
        if story.modes.iter().any(|m| m == "live") {
            let cluster = SimCluster::from_file(&cluster_yaml, &namespace_of(&story.args)).await;
            let args = [
                &base[..],
                &["--kubeconfig", cluster.kubeconfig(), "-o", "json"],
            ]
            .concat();
            let run = common::liveproof().args(&args).run().await;
            problems.extend(check(&name, "live", story, &secrets, &run.stdout));
            // Opt-in logs must not leak a Secret's value either (the simulator serves none).
            let args = [
                &base[..],
                &["--kubeconfig", cluster.kubeconfig(), "-o", "json", "--logs"],
            ]
            .concat();
            let run = common::liveproof().args(&args).run().await;
            problems.extend(check(&name, "live --logs", story, &secrets, &run.stdout));
            cluster.sim.shutdown().await;
        }
    }
    assert!(
        with_secret >= 7,
        "the diagnostics stories should each hold a Secret value to not print ({with_secret})"
    );
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// A healthy target gathers nothing: the same requests as a plain verify, with or without
/// `--logs` (GET the Deployment, LIST its ReplicaSets, LIST its pods).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_corpus_story_costs_no_diagnostics_request() {
    let dir =
        liveproof_testkit::story::scenarios_dir().join("gitops-reconciled-new-tag-rolled-out");
    let text = std::fs::read_to_string(dir.join("story.yaml")).expect("story.yaml");
    let story: Story = serde_norway::from_str(&text).expect("story.yaml parses");
    assert_eq!(story.verdict, "live");
    let base: Vec<&str> = std::iter::once("verify")
        .chain(story.args.iter().map(String::as_str))
        .collect();
    let mut counts = Vec::new();
    for extra in [&[][..], &["--logs"][..], &["--logs=5"][..]] {
        let cluster =
            SimCluster::from_file(&dir.join("cluster.yaml"), &namespace_of(&story.args)).await;
        let args = [
            &base[..],
            &["--kubeconfig", cluster.kubeconfig(), "-o", "json"],
            extra,
        ]
        .concat();
        let run = common::liveproof().args(&args).run().await;
        let report = run.report();
        assert_eq!(report.verdict, Verdict::Live, "{}", run.stdout);
        assert!(diagnostics(&report).is_empty(), "{}", run.stdout);
        counts.push((
            extra.join(" "),
            cluster.sim.requests().total(),
            format!("{:?}", cluster.sim.requests().snapshot()),
        ));
        cluster.sim.shutdown().await;
    }
    for (flags, total, requests) in &counts {
        assert_eq!(
            *total, 5,
            "verify {flags}: GET, LIST replicasets, pods, services and endpointslices only: {requests}"
        );
    }
}
