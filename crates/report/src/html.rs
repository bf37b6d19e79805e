//! `-o html`: one self-contained page a person would rather look at than read — no server, no
//! script, nothing fetched (inline CSS and SVG; a Content-Security-Policy that forbids any
//! request says so to the browser too). The answer first (the verdict, a table of the targets
//! with what failed), the next step, then per target its timeline drawn as SVG and its
//! evidence as the Markdown report shows it.
//!
//! The timeline is what the report dates, on one time axis: the change (`--since`, the
//! commit's time), the revision written, a Helm deploy or GitOps sync, the first and the last
//! serving pod Ready, a promotion, what the diagnosis dates (a container's last crash, a
//! Warning event), what superseded it, and the moment the report was made. A live target's
//! band runs from the change to `live_since` and is labelled with the lead time; a target that
//! is not live has a band from its revision to the check, labelled with the checks that
//! failed — so a failed deploy shows at a glance what happened when.
//!
//! Every text is escaped (object names, messages and logs come from the cluster); nothing the
//! other formats do not show is shown.

use std::fmt::Write as _;
use std::io::{self, Write};

use jiff::Timestamp;
use liveproof_evidence::{Report, Status, TargetReport, Verdict};

use crate::markdown::verdict_words;
use crate::textutil::{live_since_phrase, qualified_name, short_commit, span, wait_phrase};

/// The report as one HTML document.
pub fn render_html(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut page = String::new();
    page_into(report, &mut page).map_err(io::Error::other)?;
    let mut out = io::BufWriter::new(out);
    out.write_all(page.as_bytes())?;
    out.flush()
}

fn page_into(report: &Report, page: &mut String) -> std::fmt::Result {
    let verdict = report.verdict;
    writeln!(page, "<!DOCTYPE html>")?;
    writeln!(page, "<html lang=\"en\">")?;
    writeln!(page, "<head>")?;
    writeln!(page, "<meta charset=\"utf-8\">")?;
    // Nothing is fetched, ever: no script, no image, no font, no connection.
    writeln!(
        page,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
    )?;
    writeln!(
        page,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        page,
        "<title>liveproof: {}</title>",
        esc(verdict_words(verdict))
    )?;
    writeln!(page, "<style>{STYLE}</style>")?;
    writeln!(page, "</head>")?;
    writeln!(page, "<body>")?;
    writeln!(
        page,
        "<header id=\"verdict\" class=\"verdict {}\" data-verdict=\"{}\">",
        verdict.name(),
        verdict.name()
    )?;
    writeln!(
        page,
        "<h1>{} liveproof: {}</h1>",
        verdict_emoji(verdict),
        esc(verdict_words(verdict))
    )?;
    writeln!(page, "<p class=\"change\">{}</p>", change_line(report))?;
    if let Some(seconds) = report.lead_time_seconds {
        let from = match &report.change.commit {
            Some(commit) => format!("commit <code>{}</code>", esc(&short_commit(commit))),
            None => "the change".to_string(),
        };
        writeln!(
            page,
            "<p class=\"lead-time\" data-seconds=\"{seconds}\"><b>Lead time:</b> {} from {from} to live ({seconds} s)</p>",
            esc(&span(seconds)),
        )?;
    }
    writeln!(page, "</header>")?;
    for note in &report.notes {
        writeln!(page, "<p class=\"note\"><b>Note:</b> {}</p>", esc(note))?;
    }
    if report.targets.is_empty() {
        writeln!(page, "<p>No targets were verified.</p>")?;
    } else {
        summary_table(report, page)?;
    }
    next_steps(report, page)?;
    for (i, target) in report.targets.iter().enumerate() {
        target_section(report, target, i, page)?;
    }
    writeln!(page, "<footer>")?;
    if let Some(wait) = &report.wait {
        writeln!(
            page,
            "<p><b>Wait:</b> {}</p>",
            esc(&wait_phrase(wait, verdict))
        )?;
    }
    let made = [
        report
            .generated_at
            .as_deref()
            .map(|at| format!("made {}", esc(at))),
        report
            .liveproof_version
            .as_deref()
            .map(|v| format!("liveproof {}", esc(v))),
    ];
    let made: Vec<String> = made.into_iter().flatten().collect();
    if !made.is_empty() {
        writeln!(page, "<p class=\"made\">{}</p>", made.join(" · "))?;
    }
    writeln!(
        page,
        "<p id=\"exit\">Verdict: <code>{}</code> (exit {})</p>",
        verdict.name(),
        verdict.exit_code()
    )?;
    writeln!(page, "</footer>")?;
    writeln!(page, "</body>")?;
    writeln!(page, "</html>")
}

fn change_line(report: &Report) -> String {
    let change = &report.change;
    let mut parts = Vec::new();
    if let Some(since) = &change.since {
        parts.push(format!("since <time>{}</time>", esc(since)));
    }
    if let Some(commit) = &change.commit {
        parts.push(format!("commit <code>{}</code>", esc(commit)));
    }
    if let Some(at) = &change.committed_at {
        parts.push(format!("committed <time>{}</time>", esc(at)));
    }
    if change.since.is_none() {
        parts.push("no change time given".to_string());
    }
    format!("<b>Change:</b> {}", parts.join(" · "))
}

fn summary_table(report: &Report, page: &mut String) -> std::fmt::Result {
    writeln!(page, "<table id=\"targets\" class=\"targets\">")?;
    writeln!(
        page,
        "<thead><tr><th>target</th><th>verdict</th><th>failed</th><th>unknown</th><th>live since</th></tr></thead>"
    )?;
    writeln!(page, "<tbody>")?;
    for (i, target) in report.targets.iter().enumerate() {
        let since = live_since_phrase(&report.change, target)
            .map(|p| esc(p.trim_start_matches("live since ")))
            .unwrap_or_else(|| "—".into());
        writeln!(
            page,
            "<tr class=\"{}\"><td><a href=\"#target-{i}\">{}</a></td><td class=\"v\">{} {}</td><td>{}</td><td>{}</td><td>{since}</td></tr>",
            target.verdict.name(),
            target_name(target),
            verdict_emoji(target.verdict),
            esc(verdict_words(target.verdict)),
            checks_with(target, Status::Fail),
            checks_with(target, Status::Unknown),
        )?;
    }
    writeln!(page, "</tbody></table>")
}

fn next_steps(report: &Report, page: &mut String) -> std::fmt::Result {
    if let Some(step) = &report.next_step {
        return writeln!(
            page,
            "<p class=\"next-step\"><b>Next step:</b> {}</p>",
            esc(&step.to_string())
        );
    }
    let steps: Vec<(&TargetReport, String)> = report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live)
        .filter_map(|t| t.next_step.as_ref().map(|s| (t, s.to_string())))
        .collect();
    if steps.is_empty() {
        return Ok(());
    }
    writeln!(
        page,
        "<h2>Next {}</h2>",
        if steps.len() == 1 { "step" } else { "steps" }
    )?;
    writeln!(page, "<ul class=\"next-steps\">")?;
    for (target, step) in steps {
        writeln!(
            page,
            "<li><b>{} {}:</b> {}</li>",
            verdict_emoji(target.verdict),
            target_name(target),
            esc(&step)
        )?;
    }
    writeln!(page, "</ul>")
}

fn target_section(
    report: &Report,
    target: &TargetReport,
    i: usize,
    page: &mut String,
) -> std::fmt::Result {
    writeln!(
        page,
        "<section class=\"target {}\" id=\"target-{i}\" data-verdict=\"{}\">",
        target.verdict.name(),
        target.verdict.name()
    )?;
    writeln!(
        page,
        "<h2>{} {} — <span class=\"v\">{}</span></h2>",
        verdict_emoji(target.verdict),
        target_name(target),
        esc(&verdict_words(target.verdict).to_uppercase())
    )?;
    if let Some(by) = &target.superseded_by {
        writeln!(
            page,
            "<p class=\"superseded\"><b>Superseded by:</b> {} ({}). {}</p>",
            esc(&by.named()),
            esc(by.liveness()),
            esc(&by.summary)
        )?;
    }
    timeline_svg(report, target, i, page)?;
    if target.evidence.is_empty() {
        writeln!(page, "<p>No evidence was collected.</p>")?;
    } else {
        writeln!(page, "<table class=\"evidence\">")?;
        writeln!(
            page,
            "<thead><tr><th></th><th>check</th><th>observed</th><th>expected</th><th>source</th></tr></thead><tbody>"
        )?;
        let mut evidence: Vec<_> = target.evidence.iter().collect();
        evidence.sort_by_key(|e| crate::textutil::status_rank(e.status));
        for e in &evidence {
            let observed = if e.observed.is_empty() && e.expected.is_empty() && !e.detail.is_empty()
            {
                format!("<i>{}</i>", esc(&e.detail))
            } else {
                esc(&e.observed)
            };
            writeln!(
                page,
                "<tr class=\"{}\" data-check=\"{}\"><td>{}</td><td><code>{}</code></td><td>{observed}</td><td>{}</td><td><code>{}</code></td></tr>",
                status_name(e.status),
                e.check.name(),
                status_mark(e.status),
                e.check.name(),
                esc(&e.expected),
                esc(&e.source())
            )?;
        }
        writeln!(page, "</tbody></table>")?;
        let explained: Vec<_> = evidence
            .iter()
            .filter(|e| matches!(e.status, Status::Fail | Status::Unknown) && !e.detail.is_empty())
            .collect();
        if !explained.is_empty() {
            writeln!(page, "<ul class=\"details\">")?;
            for e in explained {
                writeln!(
                    page,
                    "<li>{} <code>{}</code>: {}</li>",
                    status_mark(e.status),
                    e.check.name(),
                    esc(&e.detail)
                )?;
            }
            writeln!(page, "</ul>")?;
        }
    }
    if target.verdict != Verdict::Live && !target.diagnostics.is_empty() {
        writeln!(page, "<h3>Why</h3>")?;
        writeln!(page, "<ul class=\"why\">")?;
        for d in &target.diagnostics {
            write!(page, "<li>{}", esc(&d.summary()))?;
            if !d.lines.is_empty() {
                write!(page, "<pre>{}</pre>", esc(&d.lines.join("\n")))?;
            }
            writeln!(page, "</li>")?;
        }
        writeln!(page, "</ul>")?;
    }
    writeln!(page, "</section>")
}

/// One dated point on a target's timeline.
struct Mark {
    at: Timestamp,
    /// The class and `data-event` (`change`, `template_written`, `crash`, `checked`, …).
    event: String,
    /// What it is, in a few words.
    label: String,
    /// Where the time was read.
    source: String,
    live_since: bool,
}

const WIDTH: f64 = 960.0;
const LEFT: f64 = 24.0;
const RIGHT: f64 = 24.0;
/// Rows of labels above the axis, so that close moments do not write over each other.
const LABEL_ROWS: usize = 4;
const ROW_HEIGHT: f64 = 30.0;
/// The room a broken axis leaves before the check.
const BREAK: f64 = 80.0;

fn marks(report: &Report, target: &TargetReport) -> Vec<Mark> {
    let mut marks = Vec::new();
    let mut push = |at: Option<Timestamp>, event: &str, label: String, source: String, live| {
        if let Some(at) = at {
            marks.push(Mark {
                at,
                event: event.to_string(),
                label,
                source,
                live_since: live,
            });
        }
    };
    if let (Some(commit), Some(at)) = (&report.change.commit, &report.change.committed_at) {
        // The commit is the change's time only when no --since gave one: the timeline holds it
        // then, and it is drawn once.
        let dated = target
            .timeline
            .iter()
            .any(|e| e.event.name() == "change" && &e.at == at);
        if !dated {
            push(
                at.parse().ok(),
                "commit",
                format!("commit {}", short_commit(commit)),
                "the commit's committer time".into(),
                false,
            );
        }
    }
    for e in &target.timeline {
        let label = match e.event.name() {
            "change" => "change".to_string(),
            "template_written" => "revision written".to_string(),
            "helm_deployed" => "Helm deployed".to_string(),
            "gitops_applied" => "GitOps applied".to_string(),
            "first_pod_ready" => "first pod Ready".to_string(),
            "last_pod_ready" => "last pod Ready".to_string(),
            "promoted" => "promoted".to_string(),
            "observed_live" => "seen live".to_string(),
            other => other.to_string(),
        };
        push(
            e.time(),
            e.event.name(),
            label,
            e.source.clone(),
            e.live_since,
        );
    }
    if target.verdict != Verdict::Live {
        for d in &target.diagnostics {
            let at = d.last_seen.as_deref().or(d.first_seen.as_deref());
            push(
                at.and_then(|a| a.parse().ok()),
                "diagnostic",
                d.reason.clone(),
                format!("{}: {}", d.object, d.message),
                false,
            );
        }
    }
    if let Some(by) = &target.superseded_by {
        push(
            by.at.as_deref().and_then(|a| a.parse().ok()),
            "superseded",
            "superseded".into(),
            by.named(),
            false,
        );
    }
    push(
        report.generated_at.as_deref().and_then(|a| a.parse().ok()),
        "checked",
        "checked".into(),
        "when liveproof made this report".into(),
        false,
    );
    marks.sort_by_key(|m| m.at);
    marks
}

/// The target's timeline as an inline SVG (or a line saying nothing was dated).
fn timeline_svg(
    report: &Report,
    target: &TargetReport,
    i: usize,
    page: &mut String,
) -> std::fmt::Result {
    let marks = marks(report, target);
    let (Some(first), Some(last)) = (marks.first(), marks.last()) else {
        return writeln!(
            page,
            "<p class=\"timeline none\">Nothing in this report dates the target.</p>"
        );
    };
    let (start, end) = (first.at, last.at);
    // A report made long after what it dates (a dump read a day later) would squeeze every
    // moment to the left: the axis is broken before the check, which sits at the right edge.
    let dated_end = marks
        .iter()
        .filter(|m| m.event != "checked")
        .map(|m| m.at)
        .max()
        .unwrap_or(end);
    let dated = (dated_end.as_second() - start.as_second()).max(60);
    let broken = end.as_second() - dated_end.as_second() > dated;
    let plot_end = if broken {
        WIDTH - RIGHT - BREAK
    } else {
        WIDTH - RIGHT
    };
    let axis_end = if broken { dated_end } else { end };
    let total = (axis_end.as_second() - start.as_second()).max(1) as f64;
    let plot = plot_end - LEFT;
    let x = |at: Timestamp| {
        if at > axis_end {
            WIDTH - RIGHT
        } else {
            LEFT + plot * ((at.as_second() - start.as_second()) as f64 / total)
        }
    };
    let many_days = total > 86_400.0;
    let clock = |at: Timestamp| {
        let s = at.to_string();
        // Past the break: the whole date, as the axis does not give it.
        if at > axis_end {
            return format!("{} {}", &s[..10], &s[11..16]);
        }
        // 2026-07-12T10:06:10Z → 10:06:10 (07-12 10:06 over days).
        if many_days {
            format!("{} {}", &s[5..10], &s[11..16])
        } else {
            s.get(11..19).unwrap_or(&s).to_string()
        }
    };

    let axis_y = ROW_HEIGHT * LABEL_ROWS as f64 + 46.0;
    let height = axis_y + 52.0;
    writeln!(
        page,
        "<svg class=\"timeline\" id=\"timeline-{i}\" role=\"img\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">"
    )?;
    writeln!(
        page,
        "<title>Timeline of {} {}</title>",
        esc(target.kind.name()),
        esc(&qualified_name(target))
    )?;

    // The band: from the change to live (the lead time), or from the revision to the check.
    let change_at = marks
        .iter()
        .find(|m| m.event == "change" || m.event == "commit")
        .map(|m| m.at);
    let live_at = marks.iter().find(|m| m.live_since).map(|m| m.at);
    let band_y = axis_y - 18.0;
    match (target.verdict, change_at, live_at) {
        (Verdict::Live, Some(from), Some(to)) => {
            let seconds = to.as_second() - from.as_second();
            writeln!(
                page,
                "<g class=\"band lead-time\" data-seconds=\"{seconds}\"><rect x=\"{:.1}\" y=\"{band_y}\" width=\"{:.1}\" height=\"12\" rx=\"3\"/><text x=\"{:.1}\" y=\"{:.1}\">lead time {}</text></g>",
                x(from),
                (x(to) - x(from)).max(2.0),
                x(from) + 4.0,
                band_y + 26.0 + 12.0,
                esc(&span(seconds.max(0)))
            )?;
        }
        (Verdict::NotLive | Verdict::Unproven, _, _) => {
            let from = marks
                .iter()
                .find(|m| m.event == "template_written")
                .or_else(|| marks.iter().find(|m| m.event == "change"))
                .map(|m| m.at);
            let to = marks.iter().find(|m| m.event == "checked").map(|m| m.at);
            if let (Some(from), Some(to)) = (from, to.or(Some(end))) {
                let failed: Vec<&str> = target
                    .evidence
                    .iter()
                    .filter(|e| e.status == Status::Fail)
                    .map(|e| e.check.name())
                    .collect();
                let words = if failed.is_empty() {
                    verdict_words(target.verdict).to_string()
                } else {
                    format!("{}: {}", verdict_words(target.verdict), failed.join(", "))
                };
                writeln!(
                    page,
                    "<g class=\"band {}\"><rect x=\"{:.1}\" y=\"{band_y}\" width=\"{:.1}\" height=\"12\" rx=\"3\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
                    target.verdict.name(),
                    x(from),
                    (x(to) - x(from)).max(2.0),
                    x(from) + 4.0,
                    band_y + 26.0 + 12.0,
                    esc(&words)
                )?;
            }
        }
        _ => {}
    }

    if broken {
        // The gap: two slashes across the axis, then its last stretch to the check.
        let gap = plot_end + BREAK / 2.0;
        writeln!(
            page,
            "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{axis_y}\" x2=\"{:.1}\" y2=\"{axis_y}\"/><g class=\"axis-break\"><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/></g><line class=\"axis\" x1=\"{:.1}\" y1=\"{axis_y}\" x2=\"{:.1}\" y2=\"{axis_y}\"/>",
            gap - 8.0,
            gap - 12.0,
            axis_y + 8.0,
            gap - 4.0,
            axis_y - 8.0,
            gap + 4.0,
            axis_y + 8.0,
            gap + 12.0,
            axis_y - 8.0,
            gap + 8.0,
            WIDTH - RIGHT
        )?;
    } else {
        writeln!(
            page,
            "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{axis_y}\" x2=\"{:.1}\" y2=\"{axis_y}\"/>",
            WIDTH - RIGHT
        )?;
    }
    // Each mark: a tick on the axis, a line up to its label's row, its label and time.
    let mut row_ends = [f64::MIN; LABEL_ROWS];
    for mark in &marks {
        let mx = x(mark.at);
        let label = if mark.live_since {
            format!("{} (live since)", mark.label)
        } else {
            mark.label.clone()
        };
        let when = clock(mark.at);
        // As wide as the longer of its two lines (the label, its time).
        let text_width =
            (label.chars().count().max(when.chars().count()).max(8) as f64) * 7.0 + 8.0;
        // Labels right of the tick, or left of it near the right edge.
        let anchor_end = mx + text_width > WIDTH;
        let (left, right) = if anchor_end {
            (mx - text_width, mx)
        } else {
            (mx, mx + text_width)
        };
        let row = (0..LABEL_ROWS)
            .find(|r| row_ends[*r] < left)
            .unwrap_or(LABEL_ROWS - 1);
        row_ends[row] = right;
        let label_y = 18.0 + ROW_HEIGHT * row as f64;
        let (tx, anchor) = if anchor_end {
            (mx - 4.0, "end")
        } else {
            (mx + 4.0, "start")
        };
        writeln!(
            page,
            "<g class=\"mark {}{}\" data-event=\"{}\" data-at=\"{}\"><title>{} {} — from {}</title><line x1=\"{mx:.1}\" y1=\"{:.1}\" x2=\"{mx:.1}\" y2=\"{:.1}\"/><circle cx=\"{mx:.1}\" cy=\"{axis_y}\" r=\"5\"/><text x=\"{tx:.1}\" y=\"{label_y:.1}\" text-anchor=\"{anchor}\">{}</text><text class=\"time\" x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text></g>",
            esc(&mark.event),
            if mark.live_since { " live-since" } else { "" },
            esc(&mark.event),
            mark.at,
            esc(&label),
            mark.at,
            esc(&mark.source),
            label_y - 12.0,
            axis_y,
            esc(&label),
            label_y + 13.0,
            esc(&when),
        )?;
    }
    writeln!(
        page,
        "<text class=\"time edge\" x=\"{LEFT}\" y=\"{:.1}\">{}</text><text class=\"time edge\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
        height - 4.0,
        esc(&start.to_string()),
        WIDTH - RIGHT,
        height - 4.0,
        esc(&end.to_string())
    )?;
    writeln!(page, "</svg>")?;
    if let (Verdict::Live, Some(why)) = (target.verdict, &target.live_since_unknown) {
        writeln!(
            page,
            "<p class=\"live-since-unknown\">Live since: unknown — {}</p>",
            esc(why)
        )?;
    }
    Ok(())
}

fn target_name(target: &TargetReport) -> String {
    let via = target
        .via
        .as_deref()
        .map(|v| format!(" (via {})", esc(v)))
        .unwrap_or_default();
    format!(
        "{} {}{via}",
        esc(target.kind.name()),
        esc(&qualified_name(target))
    )
}

fn checks_with(target: &TargetReport, status: Status) -> String {
    let names: Vec<String> = target
        .evidence
        .iter()
        .filter(|e| e.status == status)
        .map(|e| format!("<code>{}</code>", e.check.name()))
        .collect();
    if names.is_empty() {
        "—".into()
    } else {
        names.join(", ")
    }
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Unknown => "unknown",
        Status::Skip => "skip",
    }
}

/// Marks in glyphs every common font has (a headless browser may have no emoji font).
fn status_mark(status: Status) -> &'static str {
    match status {
        Status::Pass => "✓",
        Status::Fail => "✗",
        Status::Unknown => "?",
        Status::Skip => "–",
    }
}

fn verdict_emoji(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => "✓",
        Verdict::NotLive => "✗",
        Verdict::Unproven => "?",
        Verdict::Superseded => "↷",
    }
}

/// Text for HTML, in an element or an attribute: `&`, `<`, `>`, `"` and `'` escaped, control
/// characters (but line breaks and tabs) dropped.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1000px;padding:16px 24px;color:#1f2328;background:#fff}
h1{margin:.2em 0;font-size:26px}h2{font-size:19px;margin:1.4em 0 .4em}h3{font-size:16px}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;padding:0 3px;border-radius:3px}
pre{font:12px ui-monospace,monospace;background:#f6f8fa;padding:8px;overflow-x:auto;white-space:pre-wrap}
.verdict{border-left:8px solid #888;padding:8px 16px;background:#f6f8fa;border-radius:4px}
.verdict.live{border-color:#1a7f37;background:#e9f7ee}.verdict.not_live{border-color:#cf222e;background:#fdecec}
.verdict.unproven{border-color:#bf8700;background:#fff8e1}.verdict.superseded{border-color:#0969da;background:#eaf3ff}
table{border-collapse:collapse;width:100%;margin:.6em 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}
th{background:#f6f8fa}table.evidence td:nth-child(2){overflow-wrap:normal;white-space:nowrap}tr.fail td{background:#fff1f0}tr.unknown td{background:#fffbea}tr.skip td{color:#57606a}
section.target{border-top:1px solid #d0d7de;margin-top:1.6em}
section.live .v{color:#1a7f37}section.not_live .v{color:#cf222e}section.unproven .v{color:#9a6700}section.superseded .v{color:#0969da}
svg.timeline{display:block;max-width:100%;height:auto;background:#fbfbfc;border:1px solid #eaeef2;border-radius:4px;margin:.6em 0}
svg.timeline text{font:12px system-ui,sans-serif;fill:#1f2328}svg.timeline text.time{fill:#57606a;font-size:11px}
svg.timeline .axis{stroke:#8c959f;stroke-width:2}svg.timeline .axis-break line{stroke:#8c959f;stroke-width:2}
svg.timeline .mark line{stroke:#afb8c1;stroke-dasharray:3 3}svg.timeline .mark circle{fill:#57606a;stroke:#fff;stroke-width:2}
svg.timeline .mark.change circle,svg.timeline .mark.commit circle{fill:#8250df}
svg.timeline .mark.diagnostic circle{fill:#cf222e}svg.timeline .mark.checked circle{fill:#1f2328}
svg.timeline .mark.live-since circle{fill:#1a7f37;r:7}svg.timeline .mark.superseded circle{fill:#0969da}
svg.timeline .band rect{fill:#cf222e;opacity:.25}svg.timeline .band.lead-time rect{fill:#1a7f37;opacity:.35}
svg.timeline .band.unproven rect{fill:#bf8700}
footer{margin-top:2em;border-top:1px solid #d0d7de;color:#57606a}
";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Object names, messages and logs come from the cluster: none of them can become markup,
    /// in an element or in an attribute.
    #[test]
    fn cluster_text_cannot_become_markup() {
        let hostile = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>";
        let report: Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "not_live",
            "change": {"since": "2026-07-12T10:00:00Z", "commit": hostile},
            "generated_at": "2026-07-12T10:20:00Z",
            "notes": [hostile],
            "targets": [{
                "kind": "Deployment", "namespace": hostile, "name": hostile, "verdict": "not_live",
                "via": hostile,
                "evidence": [{"check": "pods_current", "status": "fail", "observed": hostile,
                              "expected": hostile, "source": hostile, "detail": hostile,
                              "source_ref": {"apiVersion": "v1", "kind": "Pod", "namespace": hostile,
                                             "name": hostile, "field": hostile}}],
                "diagnostics": [{"kind": "container", "object": hostile, "reason": hostile,
                                 "message": hostile, "last_seen": "2026-07-12T10:12:43Z",
                                 "lines": [hostile]}],
                "next_step": hostile,
                "timeline": [{"event": "change", "at": "2026-07-12T10:00:00Z", "source": hostile}]
            }]
        }))
        .expect("report");
        let mut out = Vec::new();
        render_html(&report, &mut out).expect("rendered");
        let page = String::from_utf8(out).expect("UTF-8");
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("\"'>"), "{page}");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;"),
            "{page}"
        );
    }

    /// The timeline places each dated moment at its time, the band of a target that is not
    /// live running from its revision to the check.
    #[test]
    fn the_timeline_draws_each_moment_at_its_time() {
        let report: Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "live",
            "change": {"since": "2026-07-12T10:00:00Z"},
            "generated_at": "2026-07-12T10:20:00Z",
            "lead_time_seconds": 600,
            "targets": [{
                "kind": "Deployment", "namespace": "apps", "name": "web", "verdict": "live",
                "evidence": [], "live_since": "2026-07-12T10:10:00Z",
                "timeline": [
                    {"event": "change", "at": "2026-07-12T10:00:00Z", "source": "--since"},
                    {"event": "last_pod_ready", "at": "2026-07-12T10:10:00Z",
                     "source": "apps/Pod/web-1 .status.conditions[Ready].lastTransitionTime",
                     "live_since": true}
                ]
            }]
        }))
        .expect("report");
        let mut out = Vec::new();
        render_html(&report, &mut out).expect("rendered");
        let page = String::from_utf8(out).expect("UTF-8");
        // 20 minutes over 912 px: the change at 24, live at 480, the check at 936.
        for (event, x) in [
            ("change", "24.0"),
            ("last_pod_ready", "480.0"),
            ("checked", "936.0"),
        ] {
            let at = page
                .find(&format!("data-event=\"{event}\""))
                .unwrap_or_else(|| panic!("{event}:\n{page}"));
            assert!(
                page[at..].contains(&format!("<circle cx=\"{x}\"")),
                "{event} not at {x}:\n{page}"
            );
        }
        assert!(
            page.contains("<g class=\"band lead-time\" data-seconds=\"600\"><rect x=\"24.0\" y=\"148\" width=\"456.0\""),
            "{page}"
        );
        assert!(page.contains(">lead time 10m 0s<"), "{page}");
    }
}
