//! `-o markdown`: for `$GITHUB_STEP_SUMMARY` or a PR comment. GitHub-flavoured tables,
//! failures first, details listed under each table.

use std::io::{self, Write};

use liveproof_evidence::{Evidence, Report, Status, TargetReport, Verdict};

use crate::textutil::{qualified_name, status_rank, wait_phrase};

/// The report as GitHub-flavoured Markdown.
pub fn render_markdown(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    writeln!(
        out,
        "## {} liveproof: {}",
        verdict_emoji(report.verdict),
        verdict_words(report.verdict)
    )?;
    writeln!(out)?;
    writeln!(out, "{}", change_line(report))?;
    for note in &report.notes {
        writeln!(out)?;
        writeln!(out, "**Note:** {}", escape(note))?;
    }
    if report.targets.is_empty() {
        writeln!(out)?;
        writeln!(out, "No targets were verified.")?;
    }
    if let Some(step) = &report.next_step {
        writeln!(out)?;
        writeln!(out, "**Next step:** {}", escape(&step.to_string()))?;
    }
    for target in &report.targets {
        writeln!(out)?;
        write_target(&mut out, target)?;
    }
    if let Some(wait) = &report.wait {
        writeln!(out)?;
        writeln!(
            out,
            "**Wait:** {}",
            escape(&wait_phrase(wait, report.verdict))
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Verdict: `{}` (exit {})",
        report.verdict.name(),
        report.verdict.exit_code()
    )?;
    out.flush()
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

fn write_target(out: &mut impl Write, target: &TargetReport) -> io::Result<()> {
    writeln!(
        out,
        "### {} {} {}{} — {}",
        verdict_emoji(target.verdict),
        escape(target.kind.name()),
        escape(&qualified_name(target)),
        target
            .via
            .as_deref()
            .map(|v| format!(" (via {})", escape(v)))
            .unwrap_or_default(),
        verdict_words(target.verdict)
    )?;
    writeln!(out)?;
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
                format!("*{}*", escape(&e.detail))
            } else {
                escape(&e.observed)
            };
            writeln!(
                out,
                "| {} | `{}` | {} | {} | {} |",
                status_emoji(e.status),
                e.check.name(),
                observed,
                escape(&e.expected),
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
                    escape(&e.detail)
                )?;
            }
        }
    }
    if target.verdict != Verdict::Live && !target.diagnostics.is_empty() {
        writeln!(out)?;
        writeln!(out, "**Why:**")?;
        writeln!(out)?;
        for d in &target.diagnostics {
            writeln!(out, "- {}", escape(&d.summary()))?;
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
    if target.verdict != Verdict::Live {
        if let Some(step) = &target.next_step {
            writeln!(out)?;
            writeln!(out, "**Next step:** {}", escape(&step.to_string()))?;
        }
    }
    Ok(())
}

pub(crate) fn verdict_emoji(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => "✅",
        Verdict::NotLive => "❌",
        Verdict::Unproven => "⚠️",
    }
}

pub(crate) fn verdict_words(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => "live",
        Verdict::NotLive => "not live",
        Verdict::Unproven => "unproven",
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

/// A code span when the text can be one (no backtick, no line break), else escaped text.
/// Inside a table a `|` still needs its backslash, even in a code span (GFM).
fn code(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    if s.contains('`') || s.chars().any(char::is_control) {
        return escape(s);
    }
    format!("`{}`", s.replace('|', "\\|"))
}

/// Several clusters for a CI summary: the fleet's verdict and a table of its clusters, then
/// each cluster's report as one cluster's would read (or why it could not be verified).
pub fn render_fleet_markdown(
    fleet: &liveproof_evidence::fleet::FleetReport,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut buf = io::BufWriter::new(out);
    writeln!(
        buf,
        "# {} liveproof: {} across {} clusters",
        verdict_emoji(fleet.verdict),
        verdict_words(fleet.verdict),
        fleet.clusters.len()
    )?;
    writeln!(buf)?;
    writeln!(buf, "| cluster | verdict |")?;
    writeln!(buf, "|---|---|")?;
    for cluster in &fleet.clusters {
        let verdict = match &cluster.error {
            Some(_) => "⚠️ not verified (error)".to_string(),
            None => format!(
                "{} {}",
                verdict_emoji(cluster.verdict),
                verdict_words(cluster.verdict)
            ),
        };
        writeln!(buf, "| {} | {verdict} |", escape(&cluster.context))?;
    }
    for cluster in &fleet.clusters {
        writeln!(buf)?;
        writeln!(buf, "# Cluster {}", escape(&cluster.context))?;
        writeln!(buf)?;
        if let Some(report) = &cluster.report {
            render_markdown(report, &mut buf)?;
        } else if let Some(error) = &cluster.error {
            writeln!(buf, "**Not verified:** {}", escape(error))?;
        }
    }
    buf.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_cells_whole() {
        assert_eq!(escape("a|b\r\nc"), "a\\|b<br>c");
        assert_eq!(escape("<img src=x>"), "&lt;img src=x&gt;");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a`b"), "a\\`b");
    }
}
