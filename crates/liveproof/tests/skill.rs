//! `liveproof skill`: the procedure an agent follows literally (seed 000). These tests pin what
//! must stay in it, so a later edit cannot quietly bring back the false positive: every step
//! ends on something observed, "deployed" is reserved for the verdict `live`, secret values are
//! never printed, no controller product is assumed, and every command it shows is one the
//! binary takes.

use std::process::{Command, Stdio};

use clap::Parser;

const BUNDLED: &str = include_str!("../SKILL.md");

/// Words that make a sentence an observation: something read, shown or reported.
const OBSERVATION_WORDS: &[&str] = &[
    "verdict", "`live`", "evidence", "observed", "reports", "reported", "shows", "show", "lists",
];

/// How a sentence that merely runs something starts.
const COMMAND_OPENINGS: &[&str] = &[
    "run ",
    "use ",
    "execute ",
    "call ",
    "liveproof ",
    "kubectl ",
];

fn skill_output() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .arg("skill")
        .stdin(Stdio::null())
        .output()
        .expect("liveproof runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The text outside fenced code blocks.
fn prose(markdown: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// One numbered step: its prose (joined into one line) and whether code came after the prose.
struct Step {
    number: String,
    prose: String,
    ends_in_code: bool,
}

/// The numbered steps: a line `N. …` at the margin starts one; the step runs over its
/// indented lines and fenced blocks until the next step or the next line at the margin.
fn steps(markdown: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut current: Option<Step> = None;
    let mut fenced = false;
    for line in markdown.lines() {
        let fence = line.trim_start().starts_with("```");
        if fenced || fence {
            if fence {
                fenced = !fenced;
            }
            if let Some(step) = current.as_mut() {
                step.ends_in_code = true;
            }
            continue;
        }
        let numbered = line
            .split_once(". ")
            .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if let Some((n, rest)) = numbered {
            steps.extend(current.take());
            current = Some(Step {
                number: n.to_string(),
                prose: rest.trim().to_string(),
                ends_in_code: false,
            });
        } else if line.trim().is_empty() {
            continue;
        } else if line.starts_with(' ') {
            if let Some(step) = current.as_mut() {
                step.prose.push(' ');
                step.prose.push_str(line.trim());
                step.ends_in_code = false;
            }
        } else {
            steps.extend(current.take());
        }
    }
    steps.extend(current);
    steps
}

fn last_sentence(prose: &str) -> &str {
    let prose = prose.trim().trim_end_matches('.');
    match prose.rfind(". ") {
        Some(i) => prose[i + 2..].trim(),
        None => prose,
    }
}

/// Words of a `liveproof …` line with placeholders replaced by plausible values.
fn words(command: &str) -> Vec<String> {
    let command = command.split(" #").next().unwrap_or(command);
    let mut out = Vec::new();
    for raw in command.split_whitespace() {
        let word = raw.trim_matches('"').trim_matches('\'');
        let mut value = String::new();
        let mut rest = word;
        // `<namespace>/sts/<name>`: each placeholder in a word is replaced on its own.
        while let Some(start) = rest.find('<') {
            let Some(len) = rest[start..].find('>') else {
                break;
            };
            value.push_str(&rest[..start]);
            value.push_str(placeholder(&rest[start + 1..start + len]));
            rest = &rest[start + len + 1..];
        }
        value.push_str(rest);
        if value.starts_with('$') {
            value = if value.contains("SHA") {
                "3f2c1ab9d04e".to_string()
            } else {
                "x".to_string()
            };
        }
        out.push(value);
    }
    out
}

fn placeholder(name: &str) -> &'static str {
    match name {
        "sha" => "3f2c1ab9d04e",
        "time" => "2026-07-12T10:00:00Z",
        "duration" => "10m",
        "namespace" => "apps",
        "image" => "ghcr.io/acme/inventory:1.4.0",
        "version" => "0.4.3",
        "path" | "dir" | "manifests-dir" => "/tmp/x",
        _ => "inventory",
    }
}

/// Every `liveproof …` line inside fenced code, continuation lines joined.
fn fenced_commands(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line.trim().trim_start_matches("$ ");
        if trimmed.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            continue;
        }
        let text = match pending.take() {
            Some(prev) => format!("{prev} {trimmed}"),
            None if trimmed.starts_with("liveproof ") => trimmed.to_string(),
            None => continue,
        };
        match text.strip_suffix('\\') {
            Some(cont) => pending = Some(cont.trim_end().to_string()),
            None => out.push(text),
        }
    }
    out
}

#[test]
fn the_skill_command_prints_the_bundled_document() {
    assert_eq!(skill_output(), BUNDLED);
}

#[test]
fn it_is_a_skill_document_named_liveproof() {
    let text = skill_output();
    let front = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(front, _)| front)
        .expect("front matter between --- lines");
    assert!(front.lines().any(|l| l == "name: liveproof"), "{front}");
    let description = front
        .lines()
        .find_map(|l| l.strip_prefix("description: "))
        .expect("a description");
    assert!(description.contains("deployed"), "{description}");
}

#[test]
fn every_step_ends_on_an_observation_never_on_a_command() {
    let text = skill_output();
    let steps = steps(&text);
    assert!(
        steps.len() >= 6,
        "the procedure has its steps: {}",
        steps.len()
    );
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(
            step.number,
            (i + 1).to_string(),
            "steps are numbered in order"
        );
        assert!(
            !step.ends_in_code,
            "step {} ends on a code block, not on an observation",
            step.number
        );
        let last = last_sentence(&step.prose);
        let lower = last.to_lowercase();
        assert!(
            OBSERVATION_WORDS.iter().any(|w| lower.contains(w)),
            "step {} ends on `{last}`, which observes nothing",
            step.number
        );
        assert!(
            !COMMAND_OPENINGS.iter().any(|c| lower.starts_with(c)),
            "step {} ends on running something: `{last}`",
            step.number
        );
        assert!(
            !last.starts_with('`'),
            "step {} ends on a bare command: `{last}`",
            step.number
        );
    }
}

#[test]
fn the_step_checker_rejects_a_step_that_ends_on_running_a_command() {
    let bad = "1. Push the tag and wait.\n\n   ```sh\n   liveproof verify deploy/x\n   ```\n\n\
               2. Read the image. Run `kubectl rollout status deploy/x`.\n";
    let steps = steps(bad);
    assert_eq!(steps.len(), 2);
    assert!(steps[0].ends_in_code);
    let last = last_sentence(&steps[1].prose).to_lowercase();
    assert!(COMMAND_OPENINGS.iter().any(|c| last.starts_with(c)));
    assert!(!OBSERVATION_WORDS.iter().any(|w| last.contains(w)));
}

#[test]
fn deployed_is_reported_only_on_the_verdict_live() {
    let text = prose(&skill_output()).replace('\n', " ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let rule = text
        .split(". ")
        .find(|s| s.contains("deployed") && s.contains("only when the verdict is `live`"))
        .unwrap_or_else(|| panic!("no sentence reserves \"deployed\" for `live`:\n{text}"));
    assert!(
        rule.contains("evidence"),
        "and the evidence is quoted: {rule}"
    );
    for verdict in [
        "`not_live`",
        "`unproven`",
        "`superseded`",
        "`next_step`",
        "`source`",
    ] {
        assert!(text.contains(verdict), "the procedure covers {verdict}");
    }
    assert!(
        text.contains("Never retry blindly"),
        "not_live is acted on, not retried"
    );
}

/// `superseded` is neither deployed nor a failure: the agent says what superseded it, "not
/// deployed as such, nothing to roll back", and never rolls it back.
#[test]
fn superseded_is_said_as_such_and_never_rolled_back() {
    let text = prose(&skill_output()).replace('\n', " ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let step = steps(&skill_output())
        .into_iter()
        .find(|s| s.prose.starts_with("On `superseded`"))
        .expect("a step for the verdict `superseded`");
    for said in [
        "superseded by <the later change>, not deployed as such, nothing to roll back",
        "`superseded_by`",
        "do not roll anything back",
        "whether that later change is live",
    ] {
        assert!(step.prose.contains(said), "{said} missing: {}", step.prose);
    }
    assert!(
        text.contains("Exit code 0 is `live`, 1 is `not_live`, 3 is `unproven`, 4 is `superseded`"),
        "{text}"
    );
    assert!(
        text.contains("Never roll back a `superseded` target"),
        "{text}"
    );
}

#[test]
fn it_forbids_printing_secret_values() {
    let text = prose(&skill_output()).replace('\n', " ");
    assert!(text.contains("Never print a secret value"), "{text}");
    assert!(
        text.contains("never reads a value"),
        "and says liveproof itself reads none"
    );
}

/// How the two rules meet: the procedure (the prose) names no controller product and no
/// product's target kind, so it holds whatever a user runs; the command examples show every
/// target kind liveproof takes (`canary/`, `rollout/`, `ksvc/` among them), each a command the
/// CLI parses, so an agent sees the form for the object it found without being told to assume
/// one.
#[test]
fn it_names_no_controller_product_outside_command_examples() {
    // The skill ships to every user; a product name in the procedure is an assumption that is
    // wrong for most of them (seed 000). liveproof's own target kinds may appear in commands.
    let text = prose(&skill_output());
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_lowercase)
        .collect();
    for (i, word) in words.iter().enumerate() {
        let product = match word.as_str() {
            "flux" | "fluxcd" | "argo" | "argocd" | "flagger" | "knative" => true,
            "cd" => i > 0 && words[i - 1] == "argo",
            _ => false,
        };
        assert!(!product, "a controller product is named: `{word}`");
    }
    for kind in [
        "helmrelease/",
        "application/",
        "kustomization/",
        "rollout/",
        "canary/",
        "ksvc/",
    ] {
        assert!(!text.contains(kind), "{kind} only inside command examples");
    }
}

/// Every target kind has its command example, so an agent that found a progressive-delivery,
/// serverless or GitOps object sees how to verify it (a new kind adds its example).
#[test]
fn every_target_kind_has_a_command_example() {
    let commands = fenced_commands(&skill_output());
    for spec in liveproof_evidence::KINDS {
        let shown = commands.iter().any(|c| {
            c.starts_with("liveproof verify ")
                && c.split_whitespace().any(|word| {
                    spec.spellings().any(|s| {
                        word.starts_with(&format!("{s}/")) || word.contains(&format!("/{s}/"))
                    })
                })
        });
        assert!(shown, "no `liveproof verify {}/…` example", spec.cli_name);
    }
}

/// What the skill says of `condition_fresh` is what the check reports: a condition from before
/// the change that the controller has yet to act on is `unknown` (it says nothing either way,
/// as a Canary's `Promoted` from an earlier promotion); a failure is a controller reporting one
/// or having applied nothing since. And an unread object is unknown, never a pass.
#[test]
fn it_says_of_condition_fresh_what_the_check_reports() {
    let all = steps(&skill_output());
    let unproven = all
        .iter()
        .find(|s| s.prose.starts_with("On `unproven`"))
        .expect("the unproven step");
    for said in [
        "a controller's condition that predates the change while the controller has yet to act on it (`condition_fresh` is then `unknown`",
        "says neither that this change was deployed nor that it was not",
        "a check passes only on what it read",
    ] {
        assert!(unproven.prose.contains(said), "{said} missing: {}", unproven.prose);
    }
    let not_live = all
        .iter()
        .find(|s| s.prose.starts_with("On `not_live`"))
        .expect("the not_live step");
    assert!(
        not_live.prose.contains(
            "a `condition_fresh` failure, where the controller reports a failure or has applied nothing since the change"
        ),
        "{}",
        not_live.prose
    );
}

#[test]
fn every_command_it_shows_is_one_the_binary_takes() {
    let text = skill_output();
    let commands = fenced_commands(&text);
    assert!(commands.len() >= 10, "{commands:?}");
    for sub in ["verify", "stale", "snapshot", "rollback"] {
        assert!(
            commands
                .iter()
                .any(|c| c.starts_with(&format!("liveproof {sub} "))),
            "the skill shows `liveproof {sub}`"
        );
    }
    assert!(commands.iter().any(|c| c.contains("-o json")));
    assert!(commands.iter().any(|c| c.contains("--wait --timeout")));
    for command in &commands {
        let args = words(command);
        if let Err(e) = liveproof::cli::Cli::try_parse_from(&args) {
            panic!("`{command}` is not a command the CLI takes:\n{e}");
        }
    }
}

#[test]
fn the_command_checker_rejects_a_flag_that_does_not_exist() {
    let args = words("liveproof verify deploy/<name> --commit <sha> --deployed-ok");
    assert!(liveproof::cli::Cli::try_parse_from(&args).is_err());
}
