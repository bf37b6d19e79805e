//! Next steps a user can paste: every `liveproof` command a report suggests is one the CLI
//! takes, carries the flags the user gave, names the plugin when run as the plugin, and after
//! a wait that ran out suggests a longer one rather than the same.

use liveproof_testkit::binary as common;

use clap::Parser;
use liveproof::cli::Cli;
use liveproof_testkit::story::scenarios_dir;
use liveproof_testkit::SimCluster;
use serde::Deserialize;

#[derive(Deserialize)]
struct Story {
    args: Vec<String>,
}

/// The `liveproof …` commands in a next step (up to `)`, `` ` ``, `;` or the end).
fn suggested(step: &str, program: &str) -> Vec<String> {
    let needle = format!("{program} ");
    step.match_indices(&needle)
        .map(|(at, _)| {
            let tail = &step[at..];
            let end = tail.find([')', '`', ';']).unwrap_or(tail.len());
            tail[..end].trim().to_string()
        })
        .collect()
}

/// Shell words of a suggested command (single quotes as the suggestions write them).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

fn parses(command: &str) -> Result<(), String> {
    let words = words(command);
    Cli::try_parse_from(&words)
        .map(|_| ())
        .map_err(|e| format!("`{command}` does not parse: {e}"))
}

#[tokio::test]
async fn every_suggested_command_in_the_corpus_parses() {
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("story.yaml")) else {
            continue;
        };
        let story: Story = serde_norway::from_str(&text).expect("story.yaml");
        let cluster = dir.join("cluster.yaml");
        let mut args: Vec<&str> = vec!["verify"];
        args.extend(story.args.iter().map(String::as_str));
        args.extend(["--from", cluster.to_str().expect("utf-8"), "-o", "json"]);
        let run = common::liveproof().args(&args).run().await;
        if run.code == 2 {
            continue;
        }
        for target in run.report().targets {
            for command in target
                .next_step
                .iter()
                .flat_map(|s| suggested(&s.to_string(), "liveproof"))
            {
                checked += 1;
                if let Err(e) = parses(&command) {
                    failures.push(format!("{}: {e}", dir.display()));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= 3,
        "only {checked} suggested commands in the whole corpus"
    );
}

/// A Deployment whose controller has not acted (observedGeneration behind): the next step is
/// to wait for it with liveproof.
async fn stuck() -> SimCluster {
    let path = scenarios_dir()
        .join("observed-generation-behind-no-replicaset-for-new-template/cluster.yaml");
    SimCluster::from_file(&path, "apps").await
}

fn next_step(run: &common::Run) -> String {
    run.report()
        .targets
        .into_iter()
        .find_map(|t| t.next_step.map(|s| s.to_string()))
        .unwrap_or_else(|| panic!("no next step:\n{}{}", run.stdout, run.stderr))
}

#[tokio::test]
async fn suggestions_carry_the_flags_the_user_gave() {
    let cluster = stuck().await;
    let run = common::liveproof()
        .args(&["verify", "deployment/inventory"])
        .on(&cluster)
        .since("2026-07-12T12:00:00+02:00")
        .args(&[
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
            "--insecure-registry",
            "localhost:5000",
            "--no-registry",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let step = next_step(&run);
    let commands = suggested(&step, "liveproof");
    let [command] = commands.as_slice() else {
        panic!("one liveproof command expected in: {step}");
    };
    parses(command).unwrap_or_else(|e| panic!("{e}"));
    for flag in [
        format!("--kubeconfig {}", cluster.kubeconfig()),
        "-n apps".to_string(),
        "--since 2026-07-12T10:00:00Z".to_string(),
        "--image ghcr.io/acme/inventory:1.4.0".to_string(),
        // How the registry is spoken to is part of what the verdict meant.
        "--insecure-registry localhost:5000".to_string(),
        "--no-registry".to_string(),
    ] {
        assert!(command.contains(&flag), "`{flag}` missing from: {command}");
    }
}

#[tokio::test]
async fn the_plugin_suggests_kubectl_liveproof() {
    let cluster = stuck().await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubectl-liveproof"))
        .args([
            "verify",
            "deployment/inventory",
            "--kubeconfig",
            cluster.kubeconfig(),
            "--since",
            "2026-07-12T10:00:00Z",
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
            "-o",
            "json",
        ])
        .env_remove("KUBECONFIG")
        .output()
        .await
        .expect("the plugin runs");
    let report: liveproof_evidence::Report = serde_json::from_slice(&out.stdout).expect("a report");
    let step = report
        .targets
        .into_iter()
        .find_map(|t| t.next_step.map(|s| s.to_string()))
        .expect("a next step");
    assert!(
        step.contains("kubectl liveproof verify deployment/inventory"),
        "{step}"
    );
    assert!(
        !step
            .replace("kubectl liveproof", "")
            .contains("liveproof verify"),
        "{step}"
    );
}

#[tokio::test]
async fn after_a_wait_ran_out_it_never_suggests_the_same_wait() {
    let cluster = stuck().await;
    let run = common::liveproof()
        .args(&["verify", "deployment/inventory"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .args(&[
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
            "--wait",
            "--timeout",
            "2s",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let step = next_step(&run);
    for command in suggested(&step, "liveproof") {
        if command.contains("--wait") {
            let words = words(&command);
            let timeout = words
                .iter()
                .position(|w| w == "--timeout")
                .and_then(|i| words.get(i + 1))
                .unwrap_or_else(|| panic!("--wait without --timeout: {command}"));
            // Twice the 2s that ran out, not the same wait, nor a fixed default.
            assert_eq!(timeout, "4s", "{command}");
        }
    }
}
