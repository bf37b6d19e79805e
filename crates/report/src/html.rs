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
//! failed — so a failed deploy shows at a glance what happened when. Under the axis, each
//! revision's pods the judge kept (the current revision first): one lane per pod, from its
//! start to Ready to deleted or the check, an old revision's pod still serving marked, a
//! crash-looping pod's last crash crossed; past the judge's cap the rest are counted.
//!
//! Every text is escaped (object names, messages and logs come from the cluster); nothing the
//! other formats do not show is shown.

use std::fmt::Write as _;
use std::io::{self, Write};

use jiff::Timestamp;
use liveproof_evidence::lanes::{PodLane, PodLanes, RevisionLanes};
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
    // The pods' moments count as dated too (a pod Ready after the last mark), but not those
    // before the first mark: an old pod started days ago would squeeze the change to a point.
    let dated_end = marks
        .iter()
        .filter(|m| m.event != "checked")
        .map(|m| m.at)
        .chain(lane_moments(&target.pods).filter(|at| (start..=end).contains(at)))
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
    let lanes_top = axis_y + 34.0;
    let lanes_height = lanes_height(&target.pods);
    let height = if lanes_height > 0.0 {
        lanes_top + lanes_height + 22.0
    } else {
        axis_y + 52.0
    };
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
    let now = marks
        .iter()
        .find(|m| m.event == "checked")
        .map_or(end, |m| m.at);
    let axis = Axis {
        start,
        now,
        x: &x,
        clock: &clock,
    };
    pod_lanes(&target.pods, &axis, lanes_top, page)?;
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

/// Where the timeline puts a moment, for the pod lanes drawn under its axis.
struct Axis<'a> {
    start: Timestamp,
    /// When the report was made: where a pod that is still there ends.
    now: Timestamp,
    x: &'a dyn Fn(Timestamp) -> f64,
    clock: &'a dyn Fn(Timestamp) -> String,
}

impl Axis<'_> {
    /// `at` on the axis; a moment before its start (an old pod started days ago) at its start.
    fn x(&self, at: Timestamp) -> f64 {
        (self.x)(at.max(self.start))
    }
}

/// What the lanes date: each pod's start, Ready, deletion and last crash.
fn lane_moments(lanes: &PodLanes) -> impl Iterator<Item = Timestamp> + '_ {
    lanes
        .revisions
        .iter()
        .flat_map(|r| r.pods.iter())
        .flat_map(|p| [p.started, p.ready_at, p.gone, p.last_crash])
        .flatten()
}

const REVISION_ROW: f64 = 20.0;
const LANE_ROW: f64 = 24.0;
const MORE_ROW: f64 = 18.0;

fn lanes_height(lanes: &PodLanes) -> f64 {
    let mut height = 0.0;
    for r in &lanes.revisions {
        height += REVISION_ROW + LANE_ROW * r.pods.len() as f64;
        if r.more > 0 {
            height += MORE_ROW;
        }
    }
    if lanes.more_revisions > 0 {
        height += MORE_ROW;
    }
    height
}

/// Under the axis, one lane per pod grouped by revision (the current one first): a bar from
/// its start to Ready (starting, or never Ready: pending, crash-looping), then from Ready to
/// gone or the check (Ready, serving); an old revision's pod still serving is marked, and a
/// container's last crash is a cross at its time. At most what the judge kept, the rest
/// counted.
fn pod_lanes(lanes: &PodLanes, axis: &Axis, top: f64, page: &mut String) -> std::fmt::Result {
    if lanes.is_empty() {
        return Ok(());
    }
    writeln!(page, "<g class=\"lanes\">")?;
    let mut y = top;
    for revision in &lanes.revisions {
        let age = if revision.current { "new" } else { "old" };
        let total = revision.pods.len() + revision.more;
        let serving = revision.pods.iter().filter(|p| p.serving).count();
        let words = if revision.current {
            format!(
                "current revision {}: {total} {}, {serving} serving",
                revision.revision,
                plural(total, "pod")
            )
        } else if serving > 0 {
            format!(
                "old revision {}: {total} {}, {serving} still serving",
                revision.revision,
                plural(total, "pod")
            )
        } else {
            format!(
                "old revision {}: {total} {}",
                revision.revision,
                plural(total, "pod")
            )
        };
        writeln!(
            page,
            "<text class=\"revision {age}\" data-revision=\"{}\" x=\"{LEFT}\" y=\"{:.1}\">{}</text>",
            esc(&revision.revision),
            y + 14.0,
            esc(&words)
        )?;
        y += REVISION_ROW;
        for pod in &revision.pods {
            pod_lane(pod, revision, axis, y, page)?;
            y += LANE_ROW;
        }
        if revision.more > 0 {
            writeln!(
                page,
                "<text class=\"more\" x=\"{LEFT}\" y=\"{:.1}\">+{} more {} of {} not drawn</text>",
                y + 13.0,
                revision.more,
                plural(revision.more, "pod"),
                esc(&revision.revision)
            )?;
            y += MORE_ROW;
        }
    }
    if lanes.more_revisions > 0 {
        writeln!(
            page,
            "<text class=\"more\" x=\"{LEFT}\" y=\"{:.1}\">+{} older {} not drawn</text>",
            y + 13.0,
            lanes.more_revisions,
            plural(lanes.more_revisions, "revision")
        )?;
    }
    writeln!(page, "</g>")
}

fn pod_lane(
    pod: &PodLane,
    revision: &RevisionLanes,
    axis: &Axis,
    y: f64,
    page: &mut String,
) -> std::fmt::Result {
    let age = if revision.current { "new" } else { "old" };
    let state = if pod.serving {
        "serving"
    } else if pod.ready {
        "ready"
    } else {
        "not-ready"
    };
    let mut class = format!("lane {age} {state}");
    if pod.serving && !revision.current {
        class.push_str(" old-serving");
    }
    if pod.crash_looping {
        class.push_str(" crash");
    }
    if pod.gone.is_some() {
        class.push_str(" gone");
    }
    // What it is doing, in words beside its name.
    let mut words: Vec<String> = Vec::new();
    match (pod.serving, revision.current) {
        (true, false) => words.push("still serving (old revision)".into()),
        (true, true) => words.push("serving".into()),
        (false, _) if pod.ready => words.push("Ready, not serving".into()),
        (false, _) => words.push(format!(
            "not Ready: {}",
            pod.not_ready.as_deref().unwrap_or("no reason recorded")
        )),
    }
    if let Some(gone) = pod.gone {
        words.push(format!("deleted {}", (axis.clock)(gone)));
    }
    if pod.restarts > 0 && pod.ready {
        words.push(format!(
            "{} {}",
            pod.restarts,
            plural(pod.restarts as usize, "restart")
        ));
    }
    if let Some(started) = pod.started.filter(|at| *at < axis.start) {
        words.push(format!("started {started}"));
    }
    let moment =
        |at: Option<Timestamp>| at.map_or_else(|| "not recorded".to_string(), |t| t.to_string());
    let mut title = format!(
        "{} ({}): started {}",
        pod.name,
        revision.revision,
        moment(pod.started)
    );
    if pod.ready {
        let _ = write!(title, ", Ready {}", moment(pod.ready_at));
    }
    if let Some(gone) = pod.gone {
        let _ = write!(title, ", deleted {gone}");
    }
    if let Some(crash) = pod.last_crash {
        let _ = write!(title, ", last crash {crash}");
    }
    writeln!(
        page,
        "<g class=\"{class}\" data-pod=\"{}\" data-revision=\"{}\" data-state=\"{state}\"{}{}><title>{}</title><text x=\"{LEFT}\" y=\"{:.1}\">{} · {}</text>",
        esc(&pod.name),
        esc(&revision.revision),
        pod.started
            .map(|t| format!(" data-started=\"{t}\""))
            .unwrap_or_default(),
        pod.ready_at
            .map(|t| format!(" data-ready=\"{t}\""))
            .unwrap_or_default(),
        esc(&title),
        y + 10.0,
        esc(&pod.name),
        esc(&words.join(" · ")),
    )?;
    let bar_y = y + 13.0;
    let from = axis.x(pod.started.unwrap_or(axis.start));
    let to = axis.x(pod.gone.unwrap_or(axis.now).min(axis.now));
    let rect = |page: &mut String, class: &str, x1: f64, x2: f64| {
        writeln!(
            page,
            "<rect class=\"{class}\" x=\"{x1:.1}\" y=\"{bar_y:.1}\" width=\"{:.1}\" height=\"7\" rx=\"2\"/>",
            (x2 - x1).max(2.0)
        )
    };
    match (pod.ready, pod.ready_at) {
        (true, Some(ready)) => {
            let ready_x = axis.x(ready);
            rect(page, "starting", from, ready_x)?;
            rect(page, "up", ready_x, to.max(ready_x))?;
        }
        // Ready, but since when is not recorded: drawn Ready over its whole life.
        (true, None) => rect(page, "up undated", from, to)?,
        (false, _) => rect(page, "pending", from, to)?,
    }
    if let Some(gone) = pod.gone {
        let gx = axis.x(gone);
        writeln!(
            page,
            "<line class=\"gone-mark\" x1=\"{gx:.1}\" y1=\"{:.1}\" x2=\"{gx:.1}\" y2=\"{:.1}\"/>",
            bar_y - 3.0,
            bar_y + 10.0
        )?;
    }
    if let Some(crash) = pod.last_crash {
        let cx = axis.x(crash);
        writeln!(
            page,
            "<path class=\"crash-mark\" data-at=\"{crash}\" d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\"/>",
            cx - 4.0,
            bar_y - 1.0,
            cx + 4.0,
            bar_y + 8.0,
            cx - 4.0,
            bar_y + 8.0,
            cx + 4.0,
            bar_y - 1.0
        )?;
    }
    writeln!(page, "</g>")
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
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
svg.timeline .lanes text{font-size:11px}svg.timeline text.revision{font-weight:600}svg.timeline text.more{fill:#57606a;font-style:italic}
svg.timeline .lane rect.starting{fill:#d0d7de}svg.timeline .lane rect.up{fill:#8c959f}svg.timeline .lane.serving rect.up{fill:#1a7f37}
svg.timeline .lane.old-serving rect.up{fill:#bf8700}svg.timeline .lane.old-serving text{fill:#9a6700;font-weight:600}
svg.timeline .lane rect.pending{fill:#eaeef2;stroke:#8c959f;stroke-dasharray:2 2}svg.timeline .lane.crash rect.pending{fill:#ffd8d3;stroke:#cf222e}
svg.timeline .crash-mark{stroke:#cf222e;stroke-width:2}svg.timeline .gone-mark{stroke:#1f2328;stroke-width:2}
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

    fn lane(name: &str, started: &str, ready_at: Option<&str>, serving: bool) -> PodLane {
        PodLane {
            name: name.into(),
            started: Some(started.parse().expect("time")),
            ready_at: ready_at.map(|t| t.parse().expect("time")),
            ready: ready_at.is_some(),
            gone: None,
            serving,
            restarts: 0,
            not_ready: None,
            crash_looping: false,
            last_crash: None,
        }
    }

    /// A report of one target from the change at 10:00 to the check at 10:20, with `lanes`.
    fn page_with_lanes(lanes: PodLanes) -> String {
        let mut report: Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "not_live",
            "change": {"since": "2026-07-12T10:00:00Z"},
            "generated_at": "2026-07-12T10:20:00Z",
            "targets": [{
                "kind": "Deployment", "namespace": "apps", "name": "web", "verdict": "not_live",
                "evidence": [],
                "timeline": [{"event": "change", "at": "2026-07-12T10:00:00Z", "source": "--since"}]
            }]
        }))
        .expect("report");
        report.targets[0].pods = lanes;
        let mut out = Vec::new();
        render_html(&report, &mut out).expect("rendered");
        String::from_utf8(out).expect("UTF-8")
    }

    /// The lane of `pod`, from its group's opening to its close.
    fn lane_of<'a>(page: &'a str, pod: &str) -> &'a str {
        let start = page
            .find(&format!("data-pod=\"{pod}\""))
            .unwrap_or_else(|| panic!("no lane for {pod}:\n{page}"));
        let start = page[..start].rfind("<g ").expect("lane opened");
        let end = start + page[start..].find("</g>").expect("lane closed");
        &page[start..end]
    }

    /// Each pod is a lane under the axis, grouped by revision: a bar from its start to Ready
    /// and one from Ready to the check, each at its time; an old revision's pod still serving
    /// is marked so, and a crash-looping pod's bar is pending with its last crash crossed.
    #[test]
    fn each_pod_is_a_lane_at_its_times() {
        let mut crashing = lane("web-new-a", "2026-07-12T10:05:00Z", None, false);
        crashing.crash_looping = true;
        crashing.restarts = 5;
        crashing.not_ready = Some("app CrashLoopBackOff (5 restarts)".into());
        crashing.last_crash = Some("2026-07-12T10:15:00Z".parse().expect("time"));
        let page = page_with_lanes(PodLanes {
            revisions: vec![
                RevisionLanes {
                    revision: "ReplicaSet web-new".into(),
                    current: true,
                    pods: vec![
                        lane(
                            "web-new-b",
                            "2026-07-12T10:05:00Z",
                            Some("2026-07-12T10:10:00Z"),
                            true,
                        ),
                        crashing,
                    ],
                    more: 0,
                },
                RevisionLanes {
                    revision: "ReplicaSet web-old".into(),
                    current: false,
                    pods: vec![lane(
                        "web-old-a",
                        "2026-07-11T09:00:00Z",
                        Some("2026-07-11T09:00:12Z"),
                        true,
                    )],
                    more: 0,
                },
            ],
            more_revisions: 0,
        });
        // 20 minutes over 912 px: 10:05 at 252, 10:10 at 480, 10:15 at 708, the check at 936.
        let ready = lane_of(&page, "web-new-b");
        assert!(ready.contains("class=\"lane new serving\""), "{ready}");
        assert!(
            ready.contains("<rect class=\"starting\" x=\"252.0\" y=\"")
                && ready.contains("width=\"228.0\""),
            "{ready}"
        );
        assert!(
            ready.contains("<rect class=\"up\" x=\"480.0\" y=\"")
                && ready.contains("width=\"456.0\""),
            "{ready}"
        );
        let crash = lane_of(&page, "web-new-a");
        assert!(
            crash.contains("class=\"lane new not-ready crash\""),
            "{crash}"
        );
        assert!(
            crash.contains("<rect class=\"pending\" x=\"252.0\""),
            "{crash}"
        );
        assert!(crash.contains("width=\"684.0\""), "{crash}");
        assert!(
            crash.contains("class=\"crash-mark\" data-at=\"2026-07-12T10:15:00Z\" d=\"M704.0 "),
            "{crash}"
        );
        assert!(
            crash.contains("not Ready: app CrashLoopBackOff (5 restarts)"),
            "{crash}"
        );
        // The old pod started the day before: its lane starts at the axis's start.
        let old = lane_of(&page, "web-old-a");
        assert!(
            old.contains("class=\"lane old serving old-serving\""),
            "{old}"
        );
        assert!(old.contains("still serving (old revision)"), "{old}");
        assert!(old.contains("<rect class=\"up\" x=\"24.0\""), "{old}");
        assert!(
            page.contains(">current revision ReplicaSet web-new: 2 pods, 1 serving<"),
            "{page}"
        );
        assert!(
            page.contains(">old revision ReplicaSet web-old: 1 pod, 1 still serving<"),
            "{page}"
        );
        // The current revision is drawn first.
        assert!(page.find("web-new-b") < page.find("web-old-a"), "{page}");
    }

    /// Only the lanes the report carries are drawn, the rest counted: a revision of 2,000
    /// pods is 20 lanes and "+1980 more", whatever it holds.
    #[test]
    fn pods_past_the_cap_are_counted_not_drawn() {
        let pods = (0..20)
            .map(|i| {
                lane(
                    &format!("web-{i:02}"),
                    "2026-07-12T10:05:00Z",
                    Some("2026-07-12T10:06:00Z"),
                    true,
                )
            })
            .collect();
        let page = page_with_lanes(PodLanes {
            revisions: vec![RevisionLanes {
                revision: "ReplicaSet <web>".into(),
                current: true,
                pods,
                more: 1980,
            }],
            more_revisions: 2,
        });
        assert_eq!(page.matches("<g class=\"lane ").count(), 20, "{page}");
        assert!(
            page.contains(">+1980 more pods of ReplicaSet &lt;web&gt; not drawn<"),
            "{page}"
        );
        assert!(
            page.contains(">current revision ReplicaSet &lt;web&gt;: 2000 pods, 20 serving<"),
            "{page}"
        );
        assert!(page.contains(">+2 older revisions not drawn<"), "{page}");
        assert!(!page.contains("<web>"), "{page}");
    }

    /// A target the judge kept no pods for has no lanes (and the timeline keeps its height).
    #[test]
    fn no_pods_no_lanes() {
        let page = page_with_lanes(PodLanes::default());
        assert!(!page.contains("class=\"lanes\""), "{page}");
        assert!(page.contains("viewBox=\"0 0 960 218\""), "{page}");
    }
}
