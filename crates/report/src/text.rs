//! `-o text`: a readable evidence table per target, kept within 100 columns.
//!
//! ```text
//! Deployment apps/inventory — NOT LIVE
//!   ✗ pod_restarted         started 2026-07-08T14:22:31Z, expected after 2026-07-12T10:00:00Z
//!       from apps/Pod/inventory-7d9c-x2k4 .status.containerStatuses[app].state.running.startedAt
//!       this pod runs configuration read before the change
//! ```

use std::io::{self, Write};

use liveproof_evidence::{Evidence, Report, Status, TargetReport, Verdict};

use crate::textutil::{
    observed_vs_expected, qualified_name, report_next_step, terminal_safe, wrap,
};
use crate::TextStyle;

const WIDTH: usize = 100;
/// The longest check name, `image_digest_current`, so values line up in one column.
const CHECK_WIDTH: usize = 20;
/// `  ✓ ` + check name + two spaces.
const VALUE_INDENT: usize = 4 + CHECK_WIDTH + 2;
/// Source and detail sit under the check name, which leaves them most of the line.
const NOTE_INDENT: usize = 6;

/// The evidence table, coloured only if `style.color`.
pub fn render_text(report: &Report, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let paint = Paint(style.color);

    writeln!(out, "change: {}", change_line(report))?;
    if let Some(snap) = &report.snapshot {
        let list = |items: &[String]| {
            if items.is_empty() {
                "none".to_string()
            } else {
                terminal_safe(&items.join(", "))
            }
        };
        writeln!(
            out,
            "snapshot: commit {} taken {}",
            terminal_safe(&snap.commit),
            terminal_safe(&snap.taken_at)
        )?;
        writeln!(out, "  changed:   {}", list(&snap.changed))?;
        writeln!(out, "  untouched: {}", list(&snap.untouched))?;
        if !snap.removed.is_empty() {
            writeln!(out, "  removed:   {}", list(&snap.removed))?;
        }
        let with = |v: Verdict| {
            report
                .targets
                .iter()
                .filter(|t| t.verdict == v)
                .map(|t| format!("{} {}", t.kind, qualified_name(t)))
                .collect::<Vec<_>>()
        };
        writeln!(out, "  live:      {}", list(&with(Verdict::Live)))?;
        writeln!(out, "  failed:    {}", list(&with(Verdict::NotLive)))?;
        writeln!(out, "  unproven:  {}", list(&with(Verdict::Unproven)))?;
    }
    if report.targets.is_empty() {
        writeln!(out)?;
        writeln!(out, "no targets were verified")?;
    }
    let many = report.targets.len() > 1;
    for target in &report.targets {
        writeln!(out)?;
        write_target(&mut out, paint, target)?;
        if target.verdict != Verdict::Live && !target.diagnostics.is_empty() {
            writeln!(out, "  why:")?;
            for d in &target.diagnostics {
                write_wrapped(&mut out, "    - ", &terminal_safe(&d.summary()))?;
                for line in &d.lines {
                    writeln!(out, "      | {}", terminal_safe(line))?;
                }
            }
        }
        // With one target the closing next step is this one; with several, each keeps its own.
        if let (true, Verdict::NotLive | Verdict::Unproven, Some(step)) =
            (many, target.verdict, &target.next_step)
        {
            write_wrapped(&mut out, "  next step: ", &terminal_safe(step))?;
        }
    }

    writeln!(out)?;
    let verdict = report.verdict;
    writeln!(
        out,
        "verdict: {} (exit {})",
        paint.bold(verdict_color(verdict), verdict.name()),
        verdict.exit_code()
    )?;
    if let Some(step) = report_next_step(&report.targets, verdict) {
        write_wrapped(&mut out, "next step: ", &terminal_safe(step))?;
    }
    out.flush()
}

fn change_line(report: &Report) -> String {
    let change = &report.change;
    let mut parts = Vec::new();
    if let Some(since) = &change.since {
        parts.push(format!("since {}", terminal_safe(since)));
    }
    if let Some(commit) = &change.commit {
        parts.push(format!("commit {}", terminal_safe(commit)));
    }
    if change.since.is_none() {
        // Without a change time pods_current/pod_restarted cannot pass: say so up front.
        parts.push("no change time given".to_string());
    }
    parts.join(" · ")
}

fn write_target(out: &mut impl Write, paint: Paint, target: &TargetReport) -> io::Result<()> {
    let via = target
        .via
        .as_deref()
        .map(|v| format!(" (via {})", terminal_safe(v)))
        .unwrap_or_default();
    let title = format!(
        "{} {}{via}",
        terminal_safe(&target.kind),
        terminal_safe(&qualified_name(target))
    );
    let verdict = match target.verdict {
        Verdict::Live => "LIVE",
        Verdict::NotLive => "NOT LIVE",
        Verdict::Unproven => "UNPROVEN",
    };
    writeln!(
        out,
        "{} — {}",
        paint.bold("", &title),
        paint.bold(verdict_color(target.verdict), verdict)
    )?;
    if target.evidence.is_empty() {
        writeln!(out, "  (no evidence)")?;
    }
    for evidence in &target.evidence {
        write_evidence(out, paint, evidence)?;
    }
    Ok(())
}

fn write_evidence(out: &mut impl Write, paint: Paint, evidence: &Evidence) -> io::Result<()> {
    let (mark, color) = match evidence.status {
        Status::Pass => ("✓", GREEN),
        Status::Fail => ("✗", RED),
        Status::Unknown => ("?", YELLOW),
        Status::Skip => ("-", DIM),
    };
    let shows_detail = matches!(evidence.status, Status::Fail | Status::Unknown);
    let mut value = observed_vs_expected(
        &terminal_safe(&evidence.observed),
        &terminal_safe(&evidence.expected),
    );
    if value.is_empty() && !shows_detail {
        // A skip usually has nothing observed; its detail says why it was skipped.
        value = terminal_safe(&evidence.detail);
    }

    let name = format!("{:<CHECK_WIDTH$}", evidence.check.name());
    let lead = format!("  {} {}  ", paint.fg(color, mark), name);
    let lines = wrap(&value, WIDTH - VALUE_INDENT);
    match lines.split_first() {
        None => writeln!(out, "{}", lead.trim_end())?,
        Some((first, rest)) => {
            writeln!(out, "{lead}{first}")?;
            for line in rest {
                writeln!(out, "{:VALUE_INDENT$}{line}", "")?;
            }
        }
    }

    if !evidence.source.is_empty() {
        let source = terminal_safe(&evidence.source);
        for line in wrap(&format!("from {source}"), WIDTH - NOTE_INDENT) {
            writeln!(out, "{:NOTE_INDENT$}{}", "", paint.fg(DIM, &line))?;
        }
    }
    if shows_detail {
        // Detail may carry deliberate line breaks; keep them, wrap each paragraph.
        for paragraph in evidence.detail.lines() {
            for line in wrap(&terminal_safe(paragraph), WIDTH - NOTE_INDENT) {
                writeln!(out, "{:NOTE_INDENT$}{line}", "")?;
            }
        }
    }
    Ok(())
}

/// `label` then `text` wrapped to the width, continuation lines aligned under the text.
fn write_wrapped(out: &mut impl Write, label: &str, text: &str) -> io::Result<()> {
    let indent = label.chars().count();
    for (i, line) in wrap(text, WIDTH - indent).iter().enumerate() {
        if i == 0 {
            writeln!(out, "{label}{line}")?;
        } else {
            writeln!(out, "{:indent$}{line}", "")?;
        }
    }
    Ok(())
}

const GREEN: &str = "32";
const RED: &str = "31";
const YELLOW: &str = "33";
const DIM: &str = "2";

fn verdict_color(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => GREEN,
        Verdict::NotLive => RED,
        Verdict::Unproven => YELLOW,
    }
}

/// Plain ANSI SGR codes; each painted span is closed on its own line so wrapping and pagers
/// never carry a colour over.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn fg(self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn bold(self, code: &str, text: &str) -> String {
        match (self.0, code.is_empty()) {
            (false, _) => text.to_string(),
            (true, true) => format!("\x1b[1m{text}\x1b[0m"),
            (true, false) => format!("\x1b[1;{code}m{text}\x1b[0m"),
        }
    }
}
