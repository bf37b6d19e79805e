//! `-o text`: a one-line summary per target, then a readable evidence table per target, kept
//! within the style's width (the terminal's, or 100 columns).
//!
//! ```text
//! Deployment apps/inventory — NOT LIVE
//!   ✗ pod_restarted         started 2026-07-08T14:22:31Z, expected after 2026-07-12T10:00:00Z
//!       from apps/Pod/inventory-7d9c-x2k4 .status.containerStatuses[app].state.running.startedAt
//!       this pod runs configuration read before the change
//! ```
//!
//! A superseded target names what replaced it under its heading, before its evidence:
//!
//! ```text
//! Deployment apps/web — SUPERSEDED
//!   superseded by: revision apps/web-6c8d, image ghcr.io/acme/web:1.5.0, made
//!                  2026-07-12T11:00:00Z (itself live)
//!       from apps/ReplicaSet/web-6c8d
//!       ReplicaSet apps/web-6c8d, created after the change's, serves now
//! ```

use std::io::{self, Write};

use liveproof_evidence::{Evidence, Report, Status, SupersededBy, TargetReport, Verdict};

use crate::textutil::{
    live_since_phrase, observed_vs_expected, qualified_name, report_next_step, short_commit, span,
    terminal_safe, verdict_label, wait_phrase, wrap,
};
use crate::TextStyle;

/// The longest check name, `image_digest_current`, so values line up in one column.
const CHECK_WIDTH: usize = 20;
/// `  ✓ ` + check name + two spaces.
const VALUE_INDENT: usize = 4 + CHECK_WIDTH + 2;
/// Source and detail sit under the check name, which leaves them most of the line.
const NOTE_INDENT: usize = 6;

/// The evidence table, coloured only if `style.color`, every line within `style.width`.
/// From this many targets, text shows the evidence of the targets that are not live only,
/// and closes with the counts.
pub const MANY_TARGETS: usize = 10;

pub fn render_text(report: &Report, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
    let page = Page {
        paint: Paint(style.color),
        width: style.width.max(TextStyle::MIN_WIDTH),
        wide: false,
    };
    page.report(report, out)
}

/// How wide `-o wide` draws the values column at most: a longer value pushes its own line's
/// source further, not every line's.
const WIDE_VALUE_COLUMN: usize = 72;

/// The width of `-o wide`: lines are not wrapped (kubectl's wide tables are not).
const UNWRAPPED: usize = usize::MAX / 4;

/// `-o wide`: the text report with what text folds away shown — every target's evidence
/// however many there are, every target's timeline (not only a live one's), the source of each
/// check in a column beside it — and no line wrapped.
pub fn render_wide(report: &Report, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
    let page = Page {
        paint: Paint(style.color),
        width: UNWRAPPED,
        wide: true,
    };
    page.report(report, out)
}

impl Page {
    fn report(self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let page = self;
        let mut out = io::BufWriter::new(out);

        page.wrapped(&mut out, "change: ", &change_line(report))?;
        for note in &report.notes {
            page.wrapped(&mut out, "note: ", &terminal_safe(note))?;
        }
        if let Some(snap) = &report.snapshot {
            let list = |items: &[String]| {
                if items.is_empty() {
                    "none".to_string()
                } else {
                    terminal_safe(&items.join(", "))
                }
            };
            page.wrapped(
                &mut out,
                "snapshot: ",
                &format!(
                    "commit {} taken {}",
                    terminal_safe(&snap.commit),
                    terminal_safe(&snap.taken_at)
                ),
            )?;
            page.wrapped(&mut out, "  changed:    ", &list(&snap.changed))?;
            page.wrapped(&mut out, "  untouched:  ", &list(&snap.untouched))?;
            if !snap.removed.is_empty() {
                page.wrapped(&mut out, "  removed:    ", &list(&snap.removed))?;
            }
            let with = |v: Verdict| {
                report
                    .targets
                    .iter()
                    .filter(|t| t.verdict == v)
                    .map(|t| format!("{} {}", t.kind, qualified_name(t)))
                    .collect::<Vec<_>>()
            };
            page.wrapped(&mut out, "  live:       ", &list(&with(Verdict::Live)))?;
            page.wrapped(&mut out, "  failed:     ", &list(&with(Verdict::NotLive)))?;
            page.wrapped(&mut out, "  unproven:   ", &list(&with(Verdict::Unproven)))?;
            page.wrapped(
                &mut out,
                "  superseded: ",
                &list(&with(Verdict::Superseded)),
            )?;
        }
        if report.targets.is_empty() {
            writeln!(out)?;
            writeln!(out, "no targets were verified")?;
        } else {
            // One line per target first (verdict, what failed), so the answer is on screen before
            // the evidence that backs it.
            writeln!(out)?;
            // The verdict column is as wide as the widest verdict in it.
            let column = report
                .targets
                .iter()
                .map(|t| verdict_label(t.verdict).len())
                .max()
                .unwrap_or_default()
                .max(verdict_label(Verdict::NotLive).len());
            for target in &report.targets {
                page.summary_line(&mut out, target, &report.change, column)?;
            }
        }
        let many = report.targets.len() > 1;
        // Past MANY_TARGETS the summary lines above already say which are live: the evidence
        // follows only for the others, and the counts close the report.
        let crowd = report.targets.len() > MANY_TARGETS && !page.wide;
        let live = report
            .targets
            .iter()
            .filter(|t| t.verdict == Verdict::Live)
            .count();
        if crowd && live > 0 {
            writeln!(out)?;
            writeln!(
            out,
            "(the evidence of the {live} live targets is left out here: -o json holds all of it)"
        )?;
        }
        for target in &report.targets {
            if crowd && target.verdict == Verdict::Live {
                continue;
            }
            writeln!(out)?;
            page.target(&mut out, target)?;
            if target.verdict != Verdict::Live && !target.diagnostics.is_empty() {
                writeln!(out, "  why:")?;
                for d in &target.diagnostics {
                    page.wrapped(&mut out, "    - ", &terminal_safe(&d.summary()))?;
                    for line in &d.lines {
                        page.wrapped(&mut out, "      | ", &terminal_safe(line))?;
                    }
                }
            }
            // With one target the closing next step is this one; with several, each keeps its own.
            if let (true, Verdict::NotLive | Verdict::Unproven | Verdict::Superseded, Some(step)) =
                (many, target.verdict, &target.next_step)
            {
                page.wrapped(&mut out, "  next step: ", &terminal_safe(&step.to_string()))?;
            }
        }

        writeln!(out)?;
        if crowd {
            let count = |v: Verdict| report.targets.iter().filter(|t| t.verdict == v).count();
            writeln!(
                out,
                "targets: {} — {live} live, {} not live, {} unproven, {} superseded",
                report.targets.len(),
                count(Verdict::NotLive),
                count(Verdict::Unproven),
                count(Verdict::Superseded)
            )?;
        }
        let verdict = report.verdict;
        if let Some(seconds) = report.lead_time_seconds {
            let commit = report.change.commit.as_deref().unwrap_or_default();
            page.wrapped(
                &mut out,
                "lead time: ",
                &format!(
                    "{} from commit {} to live ({seconds}s)",
                    span(seconds),
                    terminal_safe(&short_commit(commit))
                ),
            )?;
        }
        if let Some(wait) = &report.wait {
            page.wrapped(&mut out, "wait: ", &wait_phrase(wait, verdict))?;
        }
        writeln!(
            out,
            "verdict: {} (exit {})",
            page.paint.bold(verdict_color(verdict), verdict.name()),
            verdict.exit_code()
        )?;
        if let Some(step) = report
            .next_step
            .as_ref()
            .or_else(|| report_next_step(&report.targets, verdict))
        {
            page.wrapped(&mut out, "next step: ", &terminal_safe(&step.to_string()))?;
        }
        out.flush()
    }
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

/// `revision apps/web-6c8d, image ghcr.io/acme/web:1.5.0, made 2026-07-12T11:00:00Z (itself
/// live)`, safe for a terminal.
fn superseded_by(by: &SupersededBy) -> String {
    terminal_safe(&format!("{} ({})", by.named(), by.liveness()))
}

fn title(target: &TargetReport) -> String {
    let via = target
        .via
        .as_deref()
        .map(|v| format!(" (via {})", terminal_safe(v)))
        .unwrap_or_default();
    format!(
        "{} {}{via}",
        terminal_safe(target.kind.name()),
        terminal_safe(&qualified_name(target))
    )
}

/// One text page: its colours and its width.
#[derive(Clone, Copy)]
struct Page {
    paint: Paint,
    width: usize,
    /// `-o wide`: nothing folded, each check's source in a column beside it.
    wide: bool,
}

impl Page {
    /// `NOT LIVE  HelmRelease apps/inventory — failed: condition_fresh, release_revision`; a
    /// superseded target's line names what superseded it instead of the checks that show it.
    /// The verdict is padded to `column`.
    fn summary_line(
        self,
        out: &mut impl Write,
        target: &TargetReport,
        change: &liveproof_evidence::ChangeSummary,
        column: usize,
    ) -> io::Result<()> {
        let with = |status: Status| -> Vec<&str> {
            target
                .evidence
                .iter()
                .filter(|e| e.status == status)
                .map(|e| e.check.name())
                .collect()
        };
        let mut line = title(target);
        let (failed, unknown) = (with(Status::Fail), with(Status::Unknown));
        if let (Verdict::Superseded, Some(by)) = (target.verdict, &target.superseded_by) {
            line.push_str(&format!(" — superseded by {}", superseded_by(by)));
        } else {
            if !failed.is_empty() {
                line.push_str(&format!(" — failed: {}", failed.join(", ")));
            }
            if !unknown.is_empty() {
                line.push_str(&format!(" — unknown: {}", unknown.join(", ")));
            }
        }
        if let Some(since) = live_since_phrase(change, target) {
            line.push_str(&format!(" — {since}"));
        }
        let verdict = verdict_label(target.verdict);
        let label = format!("  {verdict:<column$}  ");
        let painted = format!(
            "  {}{}  ",
            self.paint.bold(verdict_color(target.verdict), verdict),
            " ".repeat(column.saturating_sub(verdict.len()))
        );
        let lines = wrap(&line, self.width - label.chars().count());
        for (i, text) in lines.iter().enumerate() {
            if i == 0 {
                writeln!(out, "{painted}{text}")?;
            } else {
                writeln!(out, "{:indent$}{text}", "", indent = label.chars().count())?;
            }
        }
        Ok(())
    }

    fn target(self, out: &mut impl Write, target: &TargetReport) -> io::Result<()> {
        let verdict = verdict_label(target.verdict);
        let heading = format!("{} — {verdict}", title(target));
        let lines = wrap(&heading, self.width);
        for (i, line) in lines.iter().enumerate() {
            // The verdict word is painted where it ends the heading.
            let painted = match line.strip_suffix(verdict) {
                Some(head) if i + 1 == lines.len() => format!(
                    "{}{}",
                    self.paint.bold("", head),
                    self.paint.bold(verdict_color(target.verdict), verdict)
                ),
                _ => self.paint.bold("", line),
            };
            writeln!(out, "{painted}")?;
        }
        if let Some(by) = &target.superseded_by {
            self.superseded(out, by)?;
        }
        if target.evidence.is_empty() {
            writeln!(out, "  (no evidence)")?;
        }
        // Wide: the values in one column, as wide as the widest, the sources beside it.
        let column = target
            .evidence
            .iter()
            .map(|e| evidence_value(e).chars().count())
            .max()
            .unwrap_or(0)
            .min(WIDE_VALUE_COLUMN);
        for evidence in &target.evidence {
            self.evidence(out, evidence, column)?;
        }
        self.timeline(out, target)
    }

    /// What superseded the target: the later change, whether it is live, where it was read and
    /// the detector's own words.
    fn superseded(self, out: &mut impl Write, by: &SupersededBy) -> io::Result<()> {
        self.wrapped(out, "  superseded by: ", &superseded_by(by))?;
        if let Some(source) = &by.source_ref {
            let source = terminal_safe(&source.to_string());
            for line in wrap(&format!("from {source}"), self.width - NOTE_INDENT) {
                writeln!(out, "{:NOTE_INDENT$}{}", "", self.paint.fg(DIM, &line))?;
            }
        }
        if by.named() != by.summary {
            for line in wrap(&terminal_safe(&by.summary), self.width - NOTE_INDENT) {
                writeln!(out, "{:NOTE_INDENT$}{line}", "")?;
            }
        }
        Ok(())
    }

    /// What the evidence dates of a live target, oldest first, each with where it was read;
    /// the moment `live_since` is marked. (JSON dates every target.)
    fn timeline(self, out: &mut impl Write, target: &TargetReport) -> io::Result<()> {
        if target.timeline.is_empty() || (target.verdict != Verdict::Live && !self.wide) {
            return Ok(());
        }
        writeln!(out, "  timeline:")?;
        for e in &target.timeline {
            let mark = if e.live_since { " (live since)" } else { "" };
            self.wrapped(
                out,
                "    ",
                &terminal_safe(&format!("{} {}{mark}", e.at, e.event.name())),
            )?;
            self.wrapped(out, "        from ", &terminal_safe(&e.source))?;
        }
        if let Some(why) = &target.live_since_unknown {
            self.wrapped(
                out,
                "    ",
                &format!("live since: unknown — {}", terminal_safe(why)),
            )?;
        }
        Ok(())
    }

    /// A check's line: its mark, name and value; `column` is how wide the values are drawn
    /// when wide (the source follows them on the line).
    fn evidence(self, out: &mut impl Write, evidence: &Evidence, column: usize) -> io::Result<()> {
        let (mark, color) = match evidence.status {
            Status::Pass => ("✓", GREEN),
            Status::Fail => ("✗", RED),
            Status::Unknown => ("?", YELLOW),
            Status::Skip => ("-", DIM),
        };
        let shows_detail = matches!(evidence.status, Status::Fail | Status::Unknown);
        let value = evidence_value(evidence);

        let name = format!("{:<CHECK_WIDTH$}", evidence.check.name());
        let lead = format!("  {} {}  ", self.paint.fg(color, mark), name);
        if self.wide {
            let source = terminal_safe(&evidence.source());
            let pad = column.saturating_sub(value.chars().count());
            let line = if source.is_empty() {
                format!("{lead}{value}")
            } else {
                format!(
                    "{lead}{value}{:pad$}   {}",
                    "",
                    self.paint.fg(DIM, &format!("from {source}"))
                )
            };
            writeln!(out, "{}", line.trim_end())?;
            if shows_detail {
                for paragraph in evidence.detail.lines() {
                    writeln!(out, "{:NOTE_INDENT$}{}", "", terminal_safe(paragraph))?;
                }
            }
            return Ok(());
        }
        let lines = wrap(&value, self.width - VALUE_INDENT);
        match lines.split_first() {
            None => writeln!(out, "{}", lead.trim_end())?,
            Some((first, rest)) => {
                writeln!(out, "{lead}{first}")?;
                for line in rest {
                    writeln!(out, "{:VALUE_INDENT$}{line}", "")?;
                }
            }
        }

        let source = evidence.source();
        if !source.is_empty() {
            let source = terminal_safe(&source);
            for line in wrap(&format!("from {source}"), self.width - NOTE_INDENT) {
                writeln!(out, "{:NOTE_INDENT$}{}", "", self.paint.fg(DIM, &line))?;
            }
        }
        if shows_detail {
            // Detail may carry deliberate line breaks; keep them, wrap each paragraph.
            for paragraph in evidence.detail.lines() {
                for line in wrap(&terminal_safe(paragraph), self.width - NOTE_INDENT) {
                    writeln!(out, "{:NOTE_INDENT$}{line}", "")?;
                }
            }
        }
        Ok(())
    }

    /// `label` then `text` wrapped to the width, continuation lines aligned under the text.
    fn wrapped(self, out: &mut impl Write, label: &str, text: &str) -> io::Result<()> {
        let indent = label.chars().count();
        for (i, line) in wrap(text, self.width - indent).iter().enumerate() {
            if i == 0 {
                writeln!(out, "{label}{line}")?;
            } else {
                writeln!(out, "{:indent$}{line}", "")?;
            }
        }
        Ok(())
    }
}

/// What a check's line says: observed against expected, or (a skip with nothing observed)
/// why it was skipped; safe for a terminal.
fn evidence_value(evidence: &Evidence) -> String {
    let value = observed_vs_expected(
        &terminal_safe(&evidence.observed),
        &terminal_safe(&evidence.expected),
    );
    if value.is_empty() && !matches!(evidence.status, Status::Fail | Status::Unknown) {
        // A skip usually has nothing observed; its detail says why it was skipped.
        return terminal_safe(&evidence.detail);
    }
    value
}

const GREEN: &str = "32";
const RED: &str = "31";
const YELLOW: &str = "33";
const CYAN: &str = "36";
const DIM: &str = "2";

fn verdict_color(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => GREEN,
        Verdict::NotLive => RED,
        Verdict::Unproven => YELLOW,
        Verdict::Superseded => CYAN,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn target(name: &str, verdict: &str) -> serde_json::Value {
        json!({"kind": "Deployment", "namespace": "shop", "name": name, "verdict": verdict,
               "evidence": [{"check": "pod_restarted", "status": if verdict == "live" { "pass" } else { "fail" },
                             "observed": format!("evidence-of-{name}"), "expected": "after the change",
                             "source": format!("shop/Pod/{name}-1"),
                             "source_ref": {"apiVersion": "v1", "kind": "Pod", "namespace": "shop",
                                            "name": format!("{name}-1"), "field": ""},
                             "detail": ""}]})
    }

    fn rendered(targets: Vec<serde_json::Value>, verdict: &str) -> String {
        let report: Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": verdict,
            "change": {"since": "2026-07-12T10:00:00Z"}, "targets": targets
        }))
        .expect("report");
        let mut out = Vec::new();
        render_text(&report, TextStyle::plain(), &mut out).expect("render");
        String::from_utf8(out).expect("utf-8")
    }

    /// `verify --snapshot` lists what changed by verdict: a superseded target under
    /// `superseded:`, not under `failed:` (nothing is rolled back for it).
    #[test]
    fn a_snapshot_lists_superseded_targets_apart_from_failed_ones() {
        let report: Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "not_live",
            "change": {"since": "2026-07-12T10:00:00Z"},
            "snapshot": {"commit": "3f2c1ab", "taken_at": "2026-07-12T09:59:00Z",
                         "changed": ["shop/deployment/web", "shop/deployment/cart"],
                         "untouched": [], "removed": []},
            "targets": [target("web", "superseded"), target("cart", "not_live")]
        }))
        .expect("report");
        let mut out = Vec::new();
        render_text(&report, TextStyle::plain(), &mut out).expect("render");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(
            text.contains("\n  failed:     Deployment shop/cart\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  superseded: Deployment shop/web\n"),
            "{text}"
        );
    }

    #[test]
    fn many_targets_show_the_evidence_of_those_not_live_and_end_with_counts() {
        let mut targets: Vec<_> = (0..11)
            .map(|i| target(&format!("svc-{i}"), "live"))
            .collect();
        targets.push(target("cart", "not_live"));
        let text = rendered(targets, "not_live");
        for i in 0..11 {
            assert!(
                text.contains(&format!("Deployment shop/svc-{i}")),
                "summary line of svc-{i}"
            );
            assert!(
                !text.contains(&format!("evidence-of-svc-{i}")),
                "no evidence of live svc-{i}:\n{text}"
            );
        }
        assert!(text.contains("evidence-of-cart"), "{text}");
        assert!(
            text.contains("the evidence of the 11 live targets is left out here"),
            "{text}"
        );
        assert!(
            text.contains("targets: 12 — 11 live, 1 not live, 0 unproven, 0 superseded"),
            "{text}"
        );

        // A few targets keep all their evidence and no counts line.
        let few = rendered(
            vec![target("a", "live"), target("b", "not_live")],
            "not_live",
        );
        assert!(
            few.contains("evidence-of-a") && few.contains("evidence-of-b"),
            "{few}"
        );
        assert!(!few.contains("targets: "), "{few}");
    }

    /// `-o wide` shows what text folds away: the evidence of every target however many, each
    /// check's source on its own line, a timeline that is not live's, no line wrapped.
    #[test]
    fn wide_folds_nothing_away() {
        let mut targets: Vec<_> = (0..11)
            .map(|i| target(&format!("svc-{i}"), "live"))
            .collect();
        let mut cart = target("cart", "not_live");
        cart["timeline"] = json!([{"event": "template_written", "at": "2026-07-12T10:06:10Z",
                                   "source": "shop/ReplicaSet/cart-6c8d .metadata.creationTimestamp"}]);
        cart["evidence"][0]["observed"] = json!("x ".repeat(80).trim());
        targets.push(cart);
        let report: Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "not_live",
            "change": {"since": "2026-07-12T10:00:00Z"}, "targets": targets
        }))
        .expect("report");
        let mut out = Vec::new();
        render_wide(&report, TextStyle::plain(), &mut out).expect("render");
        let wide = String::from_utf8(out).expect("utf-8");
        for i in 0..11 {
            assert!(
                wide.contains(&format!(
                    "  ✓ pod_restarted         evidence-of-svc-{i}, expected after the change   from shop/Pod/svc-{i}-1\n"
                )),
                "svc-{i}:\n{wide}"
            );
        }
        assert!(!wide.contains("is left out here"), "{wide}");
        assert!(
            wide.contains("    2026-07-12T10:06:10Z template_written\n"),
            "{wide}"
        );
        // The long value stays on one line, its source after it.
        assert!(
            wide.lines()
                .any(|l| l.starts_with("  ✗ pod_restarted         x x")
                    && l.ends_with("from shop/Pod/cart-1")),
            "{wide}"
        );
        // The same report as text folds them.
        let text = rendered(
            serde_json::from_value::<Report>(serde_json::to_value(&report).expect("json"))
                .expect("report")
                .targets
                .iter()
                .map(|t| serde_json::to_value(t).expect("json"))
                .collect(),
            "not_live",
        );
        assert!(text.contains("is left out here"), "{text}");
    }
}
