//! Small text helpers the renderers share.

use liveproof_evidence::{ChangeSummary, Status, TargetReport, Verdict, WaitRecord};

/// Evidence strings come from the cluster (object names, server version bodies), so a control
/// character in one must not reach a terminal as an escape sequence: show it escaped instead.
/// Newlines and tabs become spaces; callers that keep line breaks split on them first.
pub(crate) fn terminal_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(' '),
            '\r' => {}
            c if c.is_control() => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// Word-wrap one paragraph to `width` columns. A word longer than the width (a digest, a long
/// field path) is broken across lines at the width: every line fits, nothing is dropped.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut line_len = 0;
    let pieces = text.split_whitespace().flat_map(|word| {
        let chars: Vec<char> = word.chars().collect();
        chars
            .chunks(width)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
    });
    for word in pieces {
        let word = word.as_str();
        let word_len = word.chars().count();
        if line_len > 0 && line_len + 1 + word_len > width {
            lines.push(std::mem::take(&mut line));
            line_len = 0;
        }
        if line_len > 0 {
            line.push(' ');
            line_len += 1;
        }
        line.push_str(word);
        line_len += word_len;
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// "observed, expected expected": the one phrase every format uses for a value pair.
pub(crate) fn observed_vs_expected(observed: &str, expected: &str) -> String {
    match (observed.is_empty(), expected.is_empty()) {
        (false, false) => format!("{observed}, expected {expected}"),
        (true, false) => format!("expected {expected}"),
        (false, true) => observed.to_string(),
        (true, true) => String::new(),
    }
}

/// A verdict as text and fleet lines name it: `LIVE`, `NOT LIVE`, `UNPROVEN`, `SUPERSEDED`.
pub(crate) const fn verdict_label(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Live => "LIVE",
        Verdict::NotLive => "NOT LIVE",
        Verdict::Unproven => "UNPROVEN",
        Verdict::Superseded => "SUPERSEDED",
    }
}

/// Failures first, then what could not be established, then passes, then skips.
pub(crate) const fn status_rank(status: Status) -> u8 {
    match status {
        Status::Fail => 0,
        Status::Unknown => 1,
        Status::Pass => 2,
        Status::Skip => 3,
    }
}

/// `apps/inventory`, or just `inventory` for a cluster-scoped object.
pub(crate) fn qualified_name(target: &TargetReport) -> String {
    if target.namespace.is_empty() {
        target.name.clone()
    } else {
        format!("{}/{}", target.namespace, target.name)
    }
}

/// The next step worth printing for the whole report: from the first target as bad as the
/// overall verdict, else from any target that is not live.
pub(crate) fn report_next_step(
    targets: &[TargetReport],
    overall: Verdict,
) -> Option<&liveproof_evidence::Suggestion> {
    if overall == Verdict::Live {
        return None;
    }
    let with_step = |t: &&TargetReport| t.verdict != Verdict::Live && t.next_step.is_some();
    targets
        .iter()
        .filter(with_step)
        .find(|t| t.verdict == overall)
        .or_else(|| targets.iter().find(with_step))
        .and_then(|t| t.next_step.as_ref())
}

/// How a `--wait` ended, in the words every format uses.
pub(crate) fn wait_phrase(wait: &WaitRecord, verdict: Verdict) -> String {
    let secs = wait.elapsed_seconds;
    if wait.timed_out {
        format!("the --timeout ran out after {secs}s; this is the last evidence seen")
    } else if verdict == Verdict::Live {
        format!("live after {secs}s")
    } else {
        format!("stopped after {secs}s, before the --timeout: waiting longer would not change this")
    }
}

/// A commit as people quote it: its first seven characters.
pub(crate) fn short_commit(commit: &str) -> String {
    commit.chars().take(7).collect()
}

/// A span of whole seconds as people read it: `45s`, `27m 30s`, `2h 0m 5s`, `3d 1h 0m 0s`.
pub(crate) fn span(seconds: i64) -> String {
    let (d, h, m, s) = (
        seconds / 86_400,
        seconds % 86_400 / 3600,
        seconds % 3600 / 60,
        seconds % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m {s}s"),
        _ => format!("{d}d {h}h {m}m {s}s"),
    }
}

/// `2026-07-12T10:07:30Z`, as `10:07:30Z` when the change was on the same day.
fn shown_time(at: jiff::Timestamp, change: &ChangeSummary) -> String {
    let whole = jiff::Timestamp::from_second(at.as_second()).unwrap_or(at);
    let day = |t: jiff::Timestamp| t.strftime("%Y-%m-%d").to_string();
    let same_day = change
        .since
        .as_deref()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .is_some_and(|since| day(since) == day(at));
    if same_day {
        whole.strftime("%H:%M:%SZ").to_string()
    } else {
        whole.to_string()
    }
}

/// When a live target went live, and how long after the commit (or, without its time, the
/// change): `live since 10:07:30Z, 27m 30s after commit 3f2c1ab`. `None` when undated.
pub(crate) fn live_since_phrase(change: &ChangeSummary, target: &TargetReport) -> Option<String> {
    let at: jiff::Timestamp = target.live_since.as_deref()?.parse().ok()?;
    let mut phrase = format!("live since {}", shown_time(at, change));
    let commit = change.commit.as_deref().map(short_commit);
    let from = match (&change.committed_at, commit, &change.since) {
        (Some(t), Some(c), _) => Some((t, format!("commit {c}"))),
        (_, _, Some(t)) => Some((t, "the change".to_string())),
        _ => None,
    };
    if let Some((from, what)) = from {
        if let Ok(from) = from.parse::<jiff::Timestamp>() {
            let seconds = at.duration_since(from).as_secs();
            if seconds >= 0 {
                phrase.push_str(&format!(
                    ", {} after {}",
                    span(seconds),
                    terminal_safe(&what)
                ));
            }
        }
    }
    Some(phrase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_a_word_longer_than_the_width_and_drops_nothing() {
        let lines = wrap("a bb ccccccccccccc dd", 5);
        assert_eq!(lines, ["a bb", "ccccc", "ccccc", "ccc", "dd"]);
        assert!(lines.iter().all(|l| l.chars().count() <= 5));
    }

    #[test]
    fn terminal_safe_escapes_escape_sequences() {
        assert_eq!(terminal_safe("a\x1b[31mb\nc"), "a\\u{1b}[31mb c");
    }
}
