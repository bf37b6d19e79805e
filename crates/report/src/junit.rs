//! `-o junit`: one `<testsuite>` per target, one `<testcase>` per check, so a CI system shows
//! each piece of evidence as a test. fail → `<failure>`, unknown → `<error>` (it could not be
//! established), skip → `<skipped>`. A superseded target failed nothing: what its checks found
//! not to hold is `<skipped>`, its message saying what superseded it (and that there is nothing
//! to roll back), so a CI system shows no failure for it.

use std::io::{self, Write};

use liveproof_evidence::{Evidence, Report, Status, TargetReport, Verdict};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::textutil::qualified_name;

/// The report as JUnit XML (quick-junit writes it: escaping, characters XML cannot carry
/// dropped, counts kept by the suites).
pub fn render_junit(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut junit = quick_junit::Report::new("liveproof");
    junit.add_test_suites(report.targets.iter().map(|t| suite(report, t, "")));
    write(&junit, out)
}

/// Several clusters: each cluster's suites, named after their cluster; a cluster that could
/// not be verified is a suite of its own whose one case is an error.
pub fn render_fleet_junit(
    fleet: &liveproof_evidence::fleet::FleetReport,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut junit = quick_junit::Report::new("liveproof");
    for cluster in &fleet.clusters {
        let prefix = format!("{}: ", cluster.context);
        if let Some(report) = &cluster.report {
            junit.add_test_suites(report.targets.iter().map(|t| suite(report, t, &prefix)));
        } else if let Some(error) = &cluster.error {
            let mut suite = TestSuite::new(attribute(&format!("{prefix}cluster")));
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(attribute(error));
            suite.add_test_case(TestCase::new("verified", status));
            junit.add_test_suite(suite);
        }
    }
    write(&junit, out)
}

/// The XML quick-junit writes, and a final newline.
fn write(junit: &quick_junit::Report, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    junit.serialize(&mut out).map_err(io::Error::other)?;
    writeln!(out)?;
    out.flush()
}

/// A target's suite, its name after `prefix` (a fleet's cluster, or nothing).
fn suite(report: &Report, target: &TargetReport, prefix: &str) -> TestSuite {
    let mut suite = TestSuite::new(attribute(&format!(
        "{prefix}{} {}",
        target.kind,
        qualified_name(target)
    )));
    let mut properties = vec![("verdict", target.verdict.name())];
    if let Some(since) = &report.change.since {
        properties.push(("change.since", since));
    }
    if let Some(commit) = &report.change.commit {
        properties.push(("change.commit", commit));
    }
    if let Some(via) = &target.via {
        properties.push(("via", via));
    }
    let mut properties: Vec<(&str, String)> = properties
        .into_iter()
        .map(|(name, value)| (name, value.to_string()))
        .collect();
    if let Some(step) = &target.next_step {
        let at = properties.len() - usize::from(target.via.is_some());
        properties.insert(at, ("next_step", step.to_string()));
    }
    if let Some(by) = &target.superseded_by {
        properties.push((
            "superseded_by",
            format!("{}, {}", by.named(), by.liveness()),
        ));
    }
    if let Some(committed) = &report.change.committed_at {
        properties.push(("change.committed_at", committed.clone()));
    }
    if let Some(since) = &target.live_since {
        properties.push(("live_since", since.clone()));
    }
    if let Some(why) = &target.live_since_unknown {
        properties.push(("live_since_unknown", why.clone()));
    }
    properties.extend(target.timeline.iter().map(|e| {
        (
            "timeline",
            format!("{} {} from {}", e.at, e.event.name(), e.source),
        )
    }));
    if let Some(seconds) = report.lead_time_seconds {
        properties.push(("lead_time_seconds", seconds.to_string()));
    }
    if let Some(wait) = &report.wait {
        properties.push(("wait.timed_out", wait.timed_out.to_string()));
        properties.push(("wait.elapsed_seconds", wait.elapsed_seconds.to_string()));
    }
    properties.extend(report.notes.iter().map(|n| ("note", n.clone())));
    suite.add_properties(
        properties
            .into_iter()
            .map(|(name, value)| Property::new(name, attribute(&value))),
    );

    // classname reads like a package path: liveproof.deployment.apps.inventory
    let kind = target.kind.name().to_ascii_lowercase();
    let classname = ["liveproof", &kind, &target.namespace, &target.name]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(".");
    // The "why" travels in every failure body, where CI shows it.
    let why: String = target
        .diagnostics
        .iter()
        .map(|d| {
            let mut text = format!("\nwhy: {}", d.summary());
            for line in &d.lines {
                text.push_str(&format!("\n  | {line}"));
            }
            text
        })
        .collect();
    // A superseded target's checks that did not hold are no failure: it was replaced.
    let superseded = (target.verdict == Verdict::Superseded).then(|| {
        let by = target
            .superseded_by
            .as_ref()
            .map(|by| format!("superseded by {}, {}", by.named(), by.liveness()))
            .unwrap_or_else(|| "superseded by a later change".to_string());
        format!("{by}: not deployed as such, nothing to roll back")
    });
    suite.add_test_cases(
        target
            .evidence
            .iter()
            .map(|e| case(&classname, e, &why, superseded.as_deref())),
    );
    suite
}

fn case(classname: &str, e: &Evidence, why: &str, superseded: Option<&str>) -> TestCase {
    let body = format!(
        "observed: {}\nexpected: {}\nsource: {}\ndetail: {}",
        e.observed,
        e.expected,
        e.source(),
        e.detail
    );
    let message = if e.detail.is_empty() {
        format!("observed: {}, expected: {}", e.observed, e.expected)
    } else {
        e.detail.clone()
    };
    let status = match (e.status, superseded) {
        (Status::Pass, _) => TestCaseStatus::success(),
        (Status::Fail | Status::Unknown, Some(superseded)) => {
            let mut status = TestCaseStatus::skipped();
            status
                .set_message(attribute(&format!("{superseded} ({message})")))
                .set_description(text(&format!("{body}{why}")));
            status
        }
        (Status::Fail | Status::Unknown, None) => {
            let (kind, ty) = match e.status {
                Status::Fail => (NonSuccessKind::Failure, "not_live"),
                _ => (NonSuccessKind::Error, "unknown"),
            };
            let mut status = TestCaseStatus::non_success(kind);
            status
                .set_message(attribute(&message))
                .set_type(ty)
                .set_description(text(&format!("{body}{why}")));
            status
        }
        (Status::Skip, _) => {
            let mut status = TestCaseStatus::skipped();
            if !e.detail.is_empty() {
                status.set_message(attribute(&e.detail));
            }
            status
        }
    };
    let mut case = TestCase::new(e.check.name(), status);
    case.set_classname(attribute(classname));
    // Passing evidence is still evidence: keep what was read, and where.
    if e.status == Status::Pass {
        case.set_system_out(text(&body));
    }
    case
}

/// An attribute value on one line ([`text`], line breaks made spaces: an XML reader turns a
/// raw one in an attribute into a space anyway).
pub(crate) fn attribute(value: &str) -> String {
    text(&value.replace(['\r', '\n', '\t'], " "))
}

/// Only characters XML 1.0 can carry. quick-junit drops control characters but passes the
/// noncharacters U+FFFE and U+FFFF, which no XML reader accepts.
pub(crate) fn text(value: &str) -> String {
    value
        .chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
                || c >= '\u{10000}'
        })
        .collect()
}
