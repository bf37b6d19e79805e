//! What `--wait` says while it waits: one line per judgement, on stderr (and to an MCP
//! client's progress notifications).

use liveproof_evidence::absent::Absent;
use liveproof_evidence::{Check, Report, Status, Verdict};

/// What a waiting person wants to read: per target not yet live, the pods and the first
/// thing still missing.
pub fn waiting_line(report: &Report, absent: &[Absent]) -> String {
    let parts: Vec<String> = report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live)
        .map(|t| {
            let pods = t
                .evidence
                .iter()
                .find(|e| e.check == Check::PodsCurrent)
                .map(|e| e.observed.clone());
            let blocking = t
                .evidence
                .iter()
                .find(|e| {
                    matches!(e.status, Status::Fail | Status::Unknown)
                        && e.check != Check::PodsCurrent
                })
                .map(|e| {
                    let missing = absent.iter().any(|a| {
                        t.kind.target() == Some(a.target.kind)
                            && a.target.name == t.name
                            && a.target.namespace.as_deref().unwrap_or_default() == t.namespace
                    });
                    if missing {
                        // A target that does not exist (yet): say where it was looked for.
                        e.detail.clone()
                    } else {
                        format!("{}: {}", e.check, e.observed)
                    }
                });
            let what: Vec<String> = pods.into_iter().chain(blocking).collect();
            format!("{} {}/{}: {}", t.kind, t.namespace, t.name, what.join("; "))
        })
        .collect();
    /// Targets named in one progress line; past this, a count (2,000 targets are not a line).
    const NAMED: usize = 3;
    match parts.len() {
        0 => "live".to_string(),
        n if n <= NAMED => parts.join(" | "),
        n => format!(
            "{} of {} targets not live yet: {} | and {} more",
            n,
            report.targets.len(),
            parts[..NAMED].join(" | "),
            n - NAMED
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// While waiting, a target the cluster says is not there (yet) is told by where it was
    /// looked for, known from the absent targets, not from the words of its evidence.
    #[test]
    fn a_wait_for_a_target_not_there_yet_says_where_it_was_looked_for() {
        use liveproof_evidence::{
            Evidence, ReportKind, ResourceKind, SourceRef, Target, TargetKind, TargetReport,
        };
        let looked = "there is no Deployment named web in namespace apps (looked only there)";
        let report = Report::new(
            Default::default(),
            vec![TargetReport {
                kind: ReportKind::Target(TargetKind::Deployment),
                namespace: "apps".into(),
                name: "web".into(),
                verdict: Verdict::NotLive,
                via: None,
                evidence: vec![Evidence {
                    check: Check::SpecReadback,
                    status: Status::Fail,
                    observed: "nothing".into(),
                    expected: "Deployment web".into(),
                    source_ref: SourceRef::object(ResourceKind::Deployment, "apps", "web"),
                    detail: looked.into(),
                }],
                diagnostics: Vec::new(),
                next_step: None,
                live_since: None,
                live_since_unknown: None,
                timeline: Vec::new(),
                superseded_by: None,
                pods: Default::default(),
            }],
        );
        let absent = [Absent {
            target: Target::new(TargetKind::Deployment, Some("apps"), "web"),
            namespace: "apps".into(),
            resource: ResourceKind::Deployment,
        }];
        assert_eq!(
            waiting_line(&report, &absent),
            format!("Deployment apps/web: {looked}")
        );
        assert_eq!(
            waiting_line(&report, &[]),
            "Deployment apps/web: spec_readback: nothing"
        );
    }
}
