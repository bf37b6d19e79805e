//! `-o markdown`: for a PR comment or `$GITHUB_STEP_SUMMARY`, as GitHub renders it. The
//! answer first (a heading with the verdict, a table of the targets with what failed and
//! what is unknown), then what to do (each step's commands in a code block, to copy), then
//! the evidence, each target's folded in a `<details>` block. A superseded target is named
//! with what superseded it in a table of its own, under the targets', and again in its
//! evidence. Several clusters: a table of the clusters, then a section per cluster drawn the
//! same way.
//!
//! GitHub's renderer needs blank lines around a table and inside `<details>` (after
//! `<summary>`, before `</details>`), or it shows the Markdown as text; a `|` in a cell is
//! escaped even inside a code span; `<summary>` holds HTML text, not Markdown.

use std::io::{self, Write};

use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::suggestion::{Part, WAIT_FOR_IT};
use liveproof_evidence::{
    Evidence, Report, Status, Suggestion, SupersededBy, TargetReport, Verdict,
};

use crate::textutil::{
    live_since_phrase, qualified_name, short_commit, span, status_rank, wait_phrase,
};

/// The report as GitHub-flavoured Markdown.
pub fn render_markdown(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    writeln!(
        out,
        "## {} liveproof: {}",
        verdict_emoji(report.verdict),
        verdict_words(report.verdict)
    )?;
    write_report_body(&mut out, report, 3)?;
    writeln!(out)?;
    write_verdict_line(&mut out, report.verdict, report.verdict.exit_code())?;
    out.flush()
}

/// `Verdict: `not_live` (exit 1)`: the last line, as the text report's.
fn write_verdict_line(out: &mut impl Write, verdict: Verdict, exit: u8) -> io::Result<()> {
    writeln!(out, "Verdict: `{}` (exit {exit})", verdict.name())
}

/// Everything under a report's heading but its verdict line; its own headings at `level`.
fn write_report_body(out: &mut impl Write, report: &Report, level: usize) -> io::Result<()> {
    let heading = "#".repeat(level);
    writeln!(out)?;
    writeln!(out, "{}", change_line(report))?;
    for note in &report.notes {
        writeln!(out)?;
        writeln!(out, "**Note:** {}", words(note))?;
    }
    if report.targets.is_empty() {
        writeln!(out)?;
        writeln!(out, "No targets were verified.")?;
    } else {
        writeln!(out)?;
        write_summary_table(out, &report.targets)?;
        write_superseded_table(out, &report.targets)?;
        write_live_since_table(out, report)?;
    }

    let steps: Vec<(&TargetReport, &Suggestion)> = report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live)
        .filter_map(|t| t.next_step.as_ref().map(|step| (t, step)))
        .collect();
    if let Some(step) = &report.next_step {
        writeln!(out)?;
        write_step(out, "**Next step:**", step)?;
    } else if !steps.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{heading} Next {}",
            if steps.len() == 1 { "step" } else { "steps" }
        )?;
        for (target, step) in steps {
            writeln!(out)?;
            let lead = format!(
                "**{} {} {}:**",
                verdict_emoji(target.verdict),
                escape(target.kind.name()),
                escape(&qualified_name(target))
            );
            write_step(out, &lead, step)?;
        }
    }

    if !report.targets.is_empty() {
        writeln!(out)?;
        writeln!(out, "{heading} Evidence")?;
        for target in &report.targets {
            writeln!(out)?;
            write_target(out, target)?;
        }
    }
    if let Some(wait) = &report.wait {
        writeln!(out)?;
        writeln!(
            out,
            "**Wait:** {}",
            escape(&wait_phrase(wait, report.verdict))
        )?;
    }
    Ok(())
}

fn change_line(report: &Report) -> String {
    let change = &report.change;
    let mut parts = Vec::new();
    if let Some(since) = &change.since {
        parts.push(format!("since {}", escape(since)));
    }
    if let Some(commit) = &change.commit {
        parts.push(format!("commit {}", code(commit)));
    }
    if change.since.is_none() {
        parts.push("no change time given".to_string());
    }
    format!("**Change:** {}", parts.join(" · "))
}

/// One row per target: what it is, its verdict, and the checks that failed or are unknown
/// (what keeps it from being live), so a reviewer need not open anything to see the answer.
fn write_summary_table(out: &mut impl Write, targets: &[TargetReport]) -> io::Result<()> {
    writeln!(out, "| target | verdict | failed | unknown |")?;
    writeln!(out, "|---|---|---|---|")?;
    for target in targets {
        writeln!(
            out,
            "| {} | {} {} | {} | {} |",
            target_cell(target),
            verdict_emoji(target.verdict),
            verdict_words(target.verdict),
            checks_with(target, Status::Fail),
            checks_with(target, Status::Unknown),
        )?;
    }
    Ok(())
}

/// What superseded each superseded target and whether that later change is live itself: only
/// when some target is superseded.
fn write_superseded_table(out: &mut impl Write, targets: &[TargetReport]) -> io::Result<()> {
    let superseded: Vec<(&TargetReport, &SupersededBy)> = targets
        .iter()
        .filter(|t| t.verdict == Verdict::Superseded)
        .filter_map(|t| t.superseded_by.as_ref().map(|by| (t, by)))
        .collect();
    if superseded.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "| target | superseded by | the later change |")?;
    writeln!(out, "|---|---|---|")?;
    for (target, by) in superseded {
        let live = match by.live {
            Some(true) => "✅ live",
            Some(false) => "❌ not live",
            None => "❓ not established",
        };
        writeln!(
            out,
            "| {} | {} | {live} |",
            target_cell(target),
            later_change(by)
        )?;
    }
    Ok(())
}

/// The later change, as a cell or a paragraph: what names it in code spans (revision,
/// commit, images), then when it was made; its summary when none of it is known.
fn later_change(by: &SupersededBy) -> String {
    let mut parts = Vec::new();
    if let Some(revision) = &by.revision {
        parts.push(format!("revision {}", code(revision)));
    }
    if let Some(commit) = &by.commit {
        let commit = if liveproof_evidence::is_commit_sha(commit) {
            short_commit(commit)
        } else {
            commit.clone()
        };
        parts.push(format!("commit {}", code(&commit)));
    }
    if !by.images.is_empty() {
        let images: Vec<String> = by.images.iter().map(|i| code(i)).collect();
        let word = if images.len() == 1 { "image" } else { "images" };
        parts.push(format!("{word} {}", images.join(", ")));
    }
    if let Some(at) = &by.at {
        parts.push(format!("made {}", escape(at)));
    }
    if parts.is_empty() {
        cell(&by.summary)
    } else {
        parts.join(", ")
    }
}

/// When each live target went live and where that time was read, then the lead time: only
/// when some target is live.
fn write_live_since_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let live: Vec<&TargetReport> = report
        .targets
        .iter()
        .filter(|t| t.verdict == Verdict::Live)
        .filter(|t| t.live_since.is_some() || t.live_since_unknown.is_some())
        .collect();
    if live.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "| target | live since | read from |")?;
    writeln!(out, "|---|---|---|")?;
    for target in live {
        let (when, from) = match (
            live_since_phrase(&report.change, target),
            target.timeline.iter().find(|e| e.live_since),
        ) {
            (Some(phrase), Some(moment)) => (
                escape(phrase.trim_start_matches("live since ")),
                format!("{} {}", moment.event.name(), code(&moment.source)),
            ),
            _ => (
                "unknown".to_string(),
                escape(target.live_since_unknown.as_deref().unwrap_or_default()),
            ),
        };
        writeln!(out, "| {} | {when} | {from} |", target_cell(target))?;
    }
    if let Some(seconds) = report.lead_time_seconds {
        writeln!(out)?;
        writeln!(
            out,
            "**Lead time:** {} from commit {} to live ({seconds} s)",
            span(seconds),
            code(&short_commit(
                report.change.commit.as_deref().unwrap_or_default()
            ))
        )?;
    }
    Ok(())
}

/// `Deployment apps/web`, and the Helm or GitOps target it was reached from.
fn target_cell(target: &TargetReport) -> String {
    let via = target
        .via
        .as_deref()
        .map(|v| format!(" (via {})", escape(v)))
        .unwrap_or_default();
    format!(
        "{} {}{via}",
        escape(target.kind.name()),
        escape(&qualified_name(target))
    )
}

/// The names of the target's checks with `status`, as code spans; `—` for none.
fn checks_with(target: &TargetReport, status: Status) -> String {
    let names: Vec<String> = target
        .evidence
        .iter()
        .filter(|e| e.status == status)
        .map(|e| format!("`{}`", e.check.name()))
        .collect();
    if names.is_empty() {
        "—".to_string()
    } else {
        names.join(", ")
    }
}

/// A next step: its words as a paragraph after `lead`, its commands in a code block to copy
/// (never a code span with escaped backticks). Where the words held a command, they say "the
/// command below" (or, for one in brackets or at the end, nothing).
fn write_step(out: &mut impl Write, lead: &str, step: &Suggestion) -> io::Result<()> {
    let (prose, commands) = step_words(step);
    if prose.is_empty() {
        writeln!(out, "{lead}")?;
    } else {
        writeln!(out, "{lead} {}", words(&prose))?;
    }
    if !commands.is_empty() {
        writeln!(out)?;
        write_code_block(out, "sh", &commands)?;
    }
    Ok(())
}

/// The step's words with its commands taken out, and its commands, in order.
fn step_words(step: &Suggestion) -> (String, Vec<String>) {
    let parts = step.parts();
    let mut prose = String::new();
    let mut commands = Vec::new();
    // A closing bracket or backtick the command before it took away with its opening one.
    let mut skip_close: Option<char> = None;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Text(text) => {
                let text = match skip_close.take() {
                    Some(close) => text.strip_prefix(close).unwrap_or(text),
                    None => text,
                };
                prose.push_str(text);
            }
            Part::WaitForIt => prose.push_str(WAIT_FOR_IT),
            Part::Command(command) => {
                commands.push(command.to_string());
                let next = match parts.get(i + 1) {
                    Some(Part::Text(t)) => Some(t.as_str()),
                    _ => None,
                };
                let wrapped = [('(', ')'), ('`', '`')].into_iter().find(|(open, close)| {
                    prose.ends_with(*open) && next.is_some_and(|t| t.starts_with(*close))
                });
                match wrapped {
                    // `scale it up (CMD) if it should serve` → `scale it up if it should serve`.
                    Some(('(', close)) => {
                        prose.pop();
                        let trimmed = prose.trim_end().len();
                        prose.truncate(trimmed);
                        skip_close = Some(close);
                    }
                    // `read it with `CMD` and fix …` → `read it with the command below and fix …`.
                    Some((_, close)) => {
                        prose.pop();
                        prose.push_str("the command below");
                        skip_close = Some(close);
                    }
                    None if i + 1 == parts.len() => {}
                    // `CMD, then verify again` → `run the command below, then verify again`.
                    None if prose.trim().is_empty() => prose.push_str("run the command below"),
                    None => prose.push_str("the command below"),
                }
            }
        }
    }
    let mut prose = prose.trim_end().trim_end_matches([':', ',']).to_string();
    if !commands.is_empty() && !prose.is_empty() {
        prose.push(':');
    }
    (prose, commands)
}

/// A fenced code block, its fence longer than any run of backticks in the lines (CommonMark),
/// so no content can close it.
fn write_code_block(out: &mut impl Write, info: &str, lines: &[String]) -> io::Result<()> {
    let longest_run = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest_run + 1).max(3));
    writeln!(out, "{fence}{info}")?;
    for line in lines {
        // One command a line, whatever it holds.
        writeln!(out, "{}", line.replace(['\n', '\r'], " "))?;
    }
    writeln!(out, "{fence}")
}

/// A target's evidence, folded: the summary says the verdict and the counts, the block holds
/// the evidence table, what failed or is unknown and why, and the cluster's own words.
fn write_target(out: &mut impl Write, target: &TargetReport) -> io::Result<()> {
    writeln!(out, "<details>")?;
    writeln!(
        out,
        "<summary>{} {} {}{} — {}{}</summary>",
        verdict_emoji(target.verdict),
        html(target.kind.name()),
        html(&qualified_name(target)),
        target
            .via
            .as_deref()
            .map(|v| format!(" (via {})", html(v)))
            .unwrap_or_default(),
        verdict_words(target.verdict),
        counts(target)
    )?;
    writeln!(out)?;
    if let Some(by) = &target.superseded_by {
        let from = by
            .source_ref
            .as_ref()
            .map(|s| format!(", read from {}", code(&s.to_string())))
            .unwrap_or_default();
        writeln!(
            out,
            "**Superseded by:** {} ({}{from}). {}",
            later_change(by),
            by.liveness(),
            words(&by.summary)
        )?;
        writeln!(out)?;
    }
    if target.evidence.is_empty() {
        writeln!(out, "No evidence was collected.")?;
    } else {
        let mut evidence: Vec<&Evidence> = target.evidence.iter().collect();
        // Stable: within a status, the order the checks ran in.
        evidence.sort_by_key(|e| status_rank(e.status));

        writeln!(out, "| | check | observed | expected | source |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for e in &evidence {
            let observed = if e.observed.is_empty() && e.expected.is_empty() && !e.detail.is_empty()
            {
                // A skip usually has nothing observed; its detail says why it was skipped.
                format!("*{}*", cell(&e.detail))
            } else {
                cell(&e.observed)
            };
            writeln!(
                out,
                "| {} | `{}` | {} | {} | {} |",
                status_emoji(e.status),
                e.check.name(),
                observed,
                cell(&e.expected),
                code(&e.source())
            )?;
        }

        let explained: Vec<&&Evidence> = evidence
            .iter()
            .filter(|e| matches!(e.status, Status::Fail | Status::Unknown) && !e.detail.is_empty())
            .collect();
        if !explained.is_empty() {
            writeln!(out)?;
            for e in explained {
                writeln!(
                    out,
                    "- {} `{}`: {}",
                    status_emoji(e.status),
                    e.check.name(),
                    words(&e.detail)
                )?;
            }
        }
    }
    if target.verdict != Verdict::Live && !target.diagnostics.is_empty() {
        writeln!(out)?;
        writeln!(out, "**Why:**")?;
        writeln!(out)?;
        for d in &target.diagnostics {
            writeln!(out, "- {}", words(&d.summary()))?;
            if !d.lines.is_empty() {
                writeln!(out)?;
                writeln!(out, "  ```text")?;
                for line in &d.lines {
                    writeln!(out, "  {}", line.replace("```", "'''"))?;
                }
                writeln!(out, "  ```")?;
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "</details>")
}

/// `: 2 failed, 1 unknown, 3 passed` (statuses with none left out).
fn counts(target: &TargetReport) -> String {
    let words = [
        (Status::Fail, "failed"),
        (Status::Unknown, "unknown"),
        (Status::Pass, "passed"),
        (Status::Skip, "skipped"),
    ];
    let said: Vec<String> = words
        .iter()
        .filter_map(|(status, word)| {
            let n = target
                .evidence
                .iter()
                .filter(|e| e.status == *status)
                .count();
            (n > 0).then(|| format!("{n} {word}"))
        })
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(": {}", said.join(", "))
    }
}

pub(crate) fn verdict_emoji(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => "✅",
        Verdict::NotLive => "❌",
        Verdict::Unproven => "⚠️",
        Verdict::Superseded => "⏭️",
    }
}

pub(crate) fn verdict_words(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => "live",
        Verdict::NotLive => "not live",
        Verdict::Unproven => "unproven",
        Verdict::Superseded => "superseded",
    }
}

fn status_emoji(status: Status) -> &'static str {
    match status {
        Status::Pass => "✅",
        Status::Fail => "❌",
        Status::Unknown => "❓",
        Status::Skip => "➖",
    }
}

/// Escape text for a table cell or a paragraph: `|` cannot end a cell, a newline cannot end a
/// row, and cluster-supplied text must not turn into emphasis, links or HTML.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => out.push_str("<br>"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '~' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Words for a paragraph: their `code spans` kept as code spans (checks quote flags, fields
/// and text that way), the rest escaped ([`escape`]). Backticks that do not pair up are
/// escaped with the rest.
pub(crate) fn words(s: &str) -> String {
    with_code_spans(s, |span| format!("`{span}`"))
}

/// [`words`] for a table cell, where even a code span's `|` needs its backslash (GFM).
fn cell(s: &str) -> String {
    with_code_spans(s, code)
}

fn with_code_spans(s: &str, span: fn(&str) -> String) -> String {
    if !s.matches('`').count().is_multiple_of(2) {
        return escape(s);
    }
    s.split('`')
        .enumerate()
        .map(|(i, part)| match i % 2 {
            0 => escape(part),
            // A span over lines or control characters cannot be one: escaped, marks dropped.
            _ if part.chars().any(char::is_control) => escape(part),
            _ if part.is_empty() => String::new(),
            _ => span(part),
        })
        .collect()
}

/// A code span when the text can be one (no line break, no control character), else escaped
/// text. Backticks inside take a longer run of them around (CommonMark), with a space inside
/// when it starts or ends with one. Inside a table a `|` still needs its backslash, even in a
/// code span (GFM).
fn code(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    if s.chars().any(char::is_control) {
        return escape(s);
    }
    let longest_run = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest_run + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{}{pad}{ticks}", s.replace('|', "\\|"))
}

/// Text inside an HTML element (`<summary>`): there Markdown is not read, so only `&`, `<`
/// and `>` need escaping, and a backslash would show.
fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Several clusters: the fleet's verdict, a table of the clusters (each one's verdict and its
/// targets' counts), then a section per cluster drawn as one cluster's report is (or why it
/// could not be verified).
pub fn render_fleet_markdown(fleet: &FleetReport, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    writeln!(
        out,
        "## {} liveproof: {} across {} clusters",
        verdict_emoji(fleet.verdict),
        verdict_words(fleet.verdict),
        fleet.clusters.len()
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "| cluster | verdict | live | not live | unproven | superseded |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for cluster in &fleet.clusters {
        let (verdict, counts) = match (&cluster.report, &cluster.error) {
            (None, _) => (
                "⚠️ not verified (error)".to_string(),
                ["—"; 4].map(str::to_string),
            ),
            (Some(report), _) => (
                format!(
                    "{} {}",
                    verdict_emoji(cluster.verdict),
                    verdict_words(cluster.verdict)
                ),
                [
                    Verdict::Live,
                    Verdict::NotLive,
                    Verdict::Unproven,
                    Verdict::Superseded,
                ]
                .map(|verdict| {
                    let n = report
                        .targets
                        .iter()
                        .filter(|t| t.verdict == verdict)
                        .count();
                    n.to_string()
                }),
            ),
        };
        let [live, not_live, unproven, superseded] = counts;
        writeln!(
            out,
            "| {} | {verdict} | {live} | {not_live} | {unproven} | {superseded} |",
            escape(&cluster.context)
        )?;
    }
    for cluster in &fleet.clusters {
        writeln!(out)?;
        match (&cluster.report, &cluster.error) {
            (Some(report), _) => {
                writeln!(
                    out,
                    "### Cluster {}: {} {}",
                    escape(&cluster.context),
                    verdict_emoji(report.verdict),
                    verdict_words(report.verdict)
                )?;
                write_report_body(&mut out, report, 4)?;
            }
            (_, error) => {
                writeln!(
                    out,
                    "### Cluster {}: ⚠️ not verified",
                    escape(&cluster.context)
                )?;
                writeln!(out)?;
                let error = error.as_deref().unwrap_or("no report was made");
                writeln!(out, "**Not verified:** {}", words(error))?;
            }
        }
    }
    // One verdict, the fleet's: a cluster's own is in its heading.
    writeln!(out)?;
    write_verdict_line(&mut out, fleet.verdict, fleet.exit_code())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    use liveproof_evidence::suggestion::Command;

    fn step_said(step: Suggestion) -> (String, Vec<String>) {
        step_words(&step)
    }

    /// A step reads as a sentence without its commands, which go below it.
    #[test]
    fn a_step_says_its_commands_below_it() {
        let restart = || Command::kubectl(["-n", "apps", "rollout", "restart", "deploy/web"]);
        let cases = [
            // In brackets: taken out with them.
            (
                Suggestion::text("scale it up (")
                    .command(restart())
                    .then(") if it should serve"),
                "scale it up if it should serve:",
            ),
            // In backticks: named in its place.
            (
                Suggestion::text("read the manifest with `")
                    .command(restart())
                    .then("` and fix the chart"),
                "read the manifest with the command below and fix the chart:",
            ),
            // At the end: the colon points at it.
            (Suggestion::text("see why: ").command(restart()), "see why:"),
            // First: run it.
            (
                Suggestion::run(restart()).then(", then verify again"),
                "run the command below, then verify again:",
            ),
            // Only a command: no words at all.
            (Suggestion::run(restart()), ""),
            // A bracket the command does not close stays.
            (
                Suggestion::text("verify its workload instead (")
                    .command(restart())
                    .then(" names it)"),
                "verify its workload instead (the command below names it):",
            ),
            (
                Suggestion::text("wait for it (")
                    .command(restart())
                    .then(")")
                    .wait_for_it(),
                "wait for it (and wait for it: --wait):",
            ),
        ];
        for (step, prose) in cases {
            let (said, commands) = step_said(step);
            assert_eq!(said, prose);
            assert_eq!(commands, ["kubectl -n apps rollout restart deploy/web"]);
        }
        let (said, commands) = step_said(Suggestion::text("bump the chart version"));
        assert_eq!(
            (said.as_str(), commands.len()),
            ("bump the chart version", 0)
        );
    }

    /// No command can close its code block early, backticks and all.
    #[test]
    fn a_code_block_outlasts_any_backticks_in_it() {
        let mut out = Vec::new();
        write_code_block(&mut out, "sh", &["echo ````x` \nrm".to_string()]).expect("written");
        let text = String::from_utf8(out).expect("UTF-8");
        assert_eq!(text, "`````sh\necho ````x`  rm\n`````\n");
    }

    /// A check's quoted words stay code; cluster text stays inert around them.
    #[test]
    fn code_spans_in_words_are_kept() {
        assert_eq!(
            words("bump `version:` in Chart.yaml <b>"),
            "bump `version:` in Chart.yaml &lt;b&gt;"
        );
        assert_eq!(cell("missing `a|b`"), "missing `a\\|b`");
        assert_eq!(words("a ` b"), "a \\` b");
        assert_eq!(words("x `line\nbreak` y"), "x line<br>break y");
    }

    #[test]
    fn escape_keeps_cells_whole() {
        assert_eq!(escape("a|b\r\nc"), "a\\|b<br>c");
        assert_eq!(escape("<img src=x>"), "&lt;img src=x&gt;");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
    }
}
