//! The commands the docs and the README show must be commands the CLI takes: each is parsed
//! by the real argument parser, so a renamed flag fails here before it fails in a pipeline.

use clap::Parser;

fn commands(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line
            .trim()
            .trim_start_matches("run: ")
            .trim_start_matches("$ ");
        let text = match current.take() {
            Some(mut prev) => {
                prev.push(' ');
                prev.push_str(trimmed);
                prev
            }
            None if trimmed.starts_with("liveproof ")
                || trimmed.starts_with("cargo run -q -p liveproof -- ") =>
            {
                trimmed.to_string()
            }
            None => continue,
        };
        if let Some(continued) = text.strip_suffix('\\') {
            current = Some(continued.trim_end().to_string());
        } else {
            out.push(text);
        }
    }
    out
}

/// Shell words, with variables replaced by a plausible value and redirections dropped.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let command = match command.strip_prefix("cargo run -q -p liveproof -- ") {
        Some(rest) => {
            out.push("liveproof".to_string());
            rest
        }
        None => command,
    };
    let mut skip_next = false;
    for raw in command.split_whitespace() {
        if skip_next {
            skip_next = false;
            continue;
        }
        if raw.starts_with('#') || matches!(raw, "&&" | "||" | ";") {
            break;
        }
        if matches!(raw, ">" | ">>" | "2>" | "|") {
            skip_next = raw != "|";
            if raw == "|" {
                break;
            }
            continue;
        }
        if raw.starts_with('>') || raw.starts_with("2>") || raw == "2>&1" {
            continue;
        }
        let word = raw.trim_matches('"').trim_matches('\'');
        let word = if word.contains("SHA") || word.contains("github.sha") {
            "3f2c1ab9d04e".to_string()
        } else if word.starts_with('$') {
            "/tmp/x".to_string()
        } else {
            word.to_string()
        };
        out.push(word);
    }
    out
}

fn check(path: &str) -> usize {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let text = std::fs::read_to_string(format!("{root}{path}")).expect("doc");
    let commands = commands(&text);
    for command in &commands {
        let args = words(command);
        if let Err(e) = liveproof::cli::Cli::try_parse_from(&args) {
            panic!("{path}: `{command}` is not a command the CLI takes:\n{e}");
        }
    }
    commands.len()
}

#[test]
fn the_workflow_doc_shows_real_commands() {
    let n = check("docs/github-actions.md");
    assert!(
        n >= 4,
        "snapshot, verify, rollback and the GitOps verify at least: {n}"
    );
}

#[test]
fn the_readme_shows_real_commands() {
    assert!(check("README.md") >= 6);
}

#[test]
fn the_fleet_doc_shows_real_commands() {
    assert!(check("docs/fleet.md") >= 2, "--context and --all-contexts");
}
