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

/// The lines of `markdown`'s section under `heading` (up to the next heading of its level or
/// above).
fn section<'a>(markdown: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let ends = |line: &str| {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        hashes > 0 && hashes <= level && line[hashes..].starts_with(' ')
    };
    let mut lines = markdown.lines().skip_while(|l| l.trim_end() != heading);
    let Some(_) = lines.next() else {
        panic!("no `{heading}` section");
    };
    lines.take_while(|l| !ends(l)).collect()
}

fn doc(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    std::fs::read_to_string(format!("{root}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Each kind of `KINDS` has its row in the design doc's Targets table: its command-line name
/// as `NAME/NAME` and each short name as `SHORT/`, so a kind added to the table is documented.
#[test]
fn the_design_doc_lists_every_kind() {
    let design = doc("docs/design.md");
    let rows: Vec<Vec<&str>> = section(&design, "## Targets")
        .into_iter()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    for kind in liveproof_evidence::KINDS {
        let form = format!("`{}/NAME`", kind.cli_name);
        let row = rows
            .iter()
            .find(|cells| cells.get(1) == Some(&form.as_str()))
            .unwrap_or_else(|| {
                panic!("docs/design.md's Targets table has no {form} row (its KINDS row)")
            });
        let aliases = row.get(2).copied().unwrap_or_default();
        for short in kind.short {
            assert!(
                aliases.contains(&format!("`{short}/`")),
                "docs/design.md's {form} row does not say its short name `{short}/`: {aliases:?}"
            );
        }
    }
    assert_eq!(
        rows.len(),
        liveproof_evidence::KINDS.len(),
        "a Targets row for a kind KINDS does not have"
    );
}

/// The `crates/…` paths in backticks in `lines`, as written: placeholders (`NAME.rs`) left out,
/// a `:line` suffix dropped.
fn crate_paths<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .filter(|w| w.starts_with("crates/"))
        .map(|w| w.split([':', ' ']).next().unwrap_or(w))
        .filter(|w| !w.contains("NAME") && !w.contains('*') && !w.contains('{'))
        .collect()
}

/// Every `crates/…` path the development guide's Layout section (its tables and where a change
/// goes) and the design doc's Architecture section name exists: a file moved or renamed fails
/// here, not in a reader's editor.
#[test]
fn the_layout_names_files_that_exist() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../"));
    let development = doc("docs/development.md");
    let design = doc("docs/design.md");
    let named: Vec<(&str, &str)> = crate_paths(&section(&development, "## Layout"))
        .into_iter()
        .map(|p| ("docs/development.md", p))
        .chain(
            crate_paths(&section(&design, "## Architecture"))
                .into_iter()
                .map(|p| ("docs/design.md", p)),
        )
        .collect();
    assert!(named.len() > 20, "the sections name their files: {named:?}");
    let missing: Vec<String> = named
        .iter()
        .filter(|(_, path)| !root.join(path).exists())
        .map(|(doc, path)| format!("{doc}: {path}"))
        .collect();
    assert!(
        missing.is_empty(),
        "named but not there:\n{}",
        missing.join("\n")
    );
}

/// The README and every `docs/*.md`, each with its repository path.
fn markdown_docs() -> Vec<(String, String)> {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../"));
    let mut paths = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").file_name())
        .filter_map(|n| n.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths.into_iter().map(|p| (doc(&p), p)).collect()
}

/// The cells of a table row: split on each `|` not escaped as `\|` (GitHub splits inside code
/// spans too), the outer pipes dropped.
fn cells(row: &str) -> usize {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row
        .strip_suffix('|')
        .filter(|r| !r.ends_with('\\'))
        .unwrap_or(row);
    let mut count = 1;
    let mut escaped = false;
    for c in row.chars() {
        if c == '|' && !escaped {
            count += 1;
        }
        escaped = c == '\\' && !escaped;
    }
    count
}

/// Every Markdown table (outside code fences) in the README and `docs/` has, in each row, as
/// many cells as its header: a stray `|` shifts the rest of its row into a column that is not
/// there, and GitHub drops the cell past the last.
#[test]
fn every_table_row_has_as_many_cells_as_its_header() {
    let mut wrong = Vec::new();
    let mut tables = 0;
    for (text, path) in markdown_docs() {
        let mut fenced = false;
        let mut header: Option<usize> = None;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fenced = !fenced;
                header = None;
                continue;
            }
            if fenced || !trimmed.starts_with('|') {
                header = None;
                continue;
            }
            let count = cells(trimmed);
            match header {
                None => {
                    header = Some(count);
                    tables += 1;
                }
                Some(want) if want != count => wrong.push(format!(
                    "{path}:{}: {count} cells under a header of {want}: {}",
                    n + 1,
                    line.chars().take(80).collect::<String>()
                )),
                Some(_) => {}
            }
        }
    }
    assert!(tables >= 10, "the docs have their tables: {tables}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_row_counts_its_cells_as_github_does() {
    assert_eq!(cells("| a | b | c |"), 3);
    assert_eq!(cells("|---|---|"), 2);
    assert_eq!(cells("| `a \\| b` | c |"), 2);
    assert_eq!(cells("| a, | b | c |"), 3);
    assert_eq!(cells("a | b"), 2);
}
