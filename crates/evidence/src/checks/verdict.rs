//! The verdict rules of docs/design.md, for one target's findings: the verdict, and the next step
//! that goes with it.

use super::Finding;
use crate::{Check, Status, Target, TargetReport, Verdict};

pub(crate) fn target_report(
    target: &Target,
    namespace: &str,
    findings: Vec<Finding>,
    verdict: Verdict,
) -> TargetReport {
    let next_step = if verdict == Verdict::Live {
        None
    } else {
        next_step(&findings, verdict)
    };
    TargetReport {
        kind: target.kind.into(),
        namespace: namespace.to_string(),
        name: target.name.clone(),
        verdict,
        via: None,
        evidence: findings.into_iter().map(|f| f.evidence).collect(),
        next_step,
        diagnostics: Vec::new(),
        live_since: None,
        live_since_unknown: None,
        timeline: Vec::new(),
        superseded_by: None,
        pods: Default::default(),
    }
}

/// docs/design.md's rule: any fail → not live; live needs artifact proof (`pods_current` and
/// `pod_restarted` passed) and nothing unknown; everything else is unproven.
pub(crate) fn verdict(findings: &[Finding]) -> Verdict {
    let status_of = |check| {
        findings
            .iter()
            .find(|f| f.evidence.check == check)
            .map(|f| f.evidence.status)
    };
    if findings.iter().any(|f| f.evidence.status == Status::Fail) {
        return Verdict::NotLive;
    }
    let artifact_proof = status_of(Check::PodsCurrent) == Some(Status::Pass)
        && status_of(Check::PodRestarted) == Some(Status::Pass);
    let nothing_unknown = findings
        .iter()
        .all(|f| f.evidence.status != Status::Unknown);
    if artifact_proof && nothing_unknown {
        Verdict::Live
    } else {
        Verdict::Unproven
    }
}

/// The step attached to the first failing check (or, when nothing failed, the first unknown):
/// checks are ordered cheap-to-conclusive, so the first one is the root cause.
pub(crate) fn next_step(findings: &[Finding], verdict: Verdict) -> Option<crate::Suggestion> {
    let wanted = if verdict == Verdict::NotLive {
        Status::Fail
    } else {
        Status::Unknown
    };
    findings
        .iter()
        .filter(|f| f.evidence.status == wanted)
        .find_map(|f| f.next_step.clone())
        .or_else(|| findings.iter().find_map(|f| f.next_step.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finding of `check` with `status`, and a next step named after both.
    fn f(check: Check, status: Status) -> Finding {
        Finding::new(check, status, "", "").next(format!("fix {check} ({})", status.name()))
    }

    fn bare(check: Check, status: Status) -> Finding {
        Finding::new(check, status, "", "")
    }

    use Check::{
        ImageDigestCurrent as Digest, PodRestarted as Restarted, PodsCurrent as Current,
        RolloutComplete as Rollout,
    };
    use Status::{Fail, Pass, Skip, Unknown};

    /// docs/design.md's verdict rules, one row each: the findings, the verdict, the next step.
    #[test]
    fn the_verdict_and_next_step_rules() {
        let rows: Vec<(&str, Vec<Finding>, Verdict, Option<&str>)> = vec![
            (
                "not_live: any check failed, even with artifact proof",
                vec![
                    f(Rollout, Pass),
                    f(Current, Pass),
                    f(Restarted, Pass),
                    f(Digest, Fail),
                ],
                Verdict::NotLive,
                Some("fix image_digest_current (fail)"),
            ),
            (
                "not_live: a failure outranks an unknown before it; its step is the failure's",
                vec![f(Rollout, Unknown), f(Current, Fail), f(Restarted, Pass)],
                Verdict::NotLive,
                Some("fix pods_current (fail)"),
            ),
            (
                "not_live: of several failures, the first (the root cause) gives the step",
                vec![f(Rollout, Fail), f(Current, Fail), f(Restarted, Fail)],
                Verdict::NotLive,
                Some("fix rollout_complete (fail)"),
            ),
            (
                "live: pods_current and pod_restarted passed, nothing unknown",
                vec![f(Rollout, Pass), f(Current, Pass), f(Restarted, Pass)],
                Verdict::Live,
                None,
            ),
            (
                "live: a skipped check is neither proof nor doubt",
                vec![f(Current, Pass), f(Restarted, Pass), f(Digest, Skip)],
                Verdict::Live,
                None,
            ),
            (
                "unproven: status-tier checks alone never make a target live",
                vec![f(Rollout, Pass)],
                Verdict::Unproven,
                Some("fix rollout_complete (pass)"),
            ),
            (
                "unproven: no pod_restarted (no change time), whatever else passed",
                vec![f(Rollout, Pass), f(Current, Pass)],
                Verdict::Unproven,
                Some("fix rollout_complete (pass)"),
            ),
            (
                "unproven: pod_restarted unknown; the unknown gives the step",
                vec![f(Rollout, Pass), f(Current, Pass), f(Restarted, Unknown)],
                Verdict::Unproven,
                Some("fix pod_restarted (unknown)"),
            ),
            (
                "unproven: artifact proof, but a check needed for the verdict is unknown",
                vec![f(Current, Pass), f(Restarted, Pass), f(Digest, Unknown)],
                Verdict::Unproven,
                Some("fix image_digest_current (unknown)"),
            ),
            (
                "unproven: an unknown without a step falls back to the first step given",
                vec![bare(Current, Unknown), f(Restarted, Pass)],
                Verdict::Unproven,
                Some("fix pod_restarted (pass)"),
            ),
            (
                "unproven: no findings at all",
                vec![],
                Verdict::Unproven,
                None,
            ),
        ];
        for (rule, findings, want_verdict, want_step) in rows {
            let got = verdict(&findings);
            assert_eq!(got, want_verdict, "{rule}");
            let target = Target::new(crate::TargetKind::Deployment, Some("apps"), "api");
            let report = target_report(&target, "apps", findings, got);
            assert_eq!(
                report
                    .next_step
                    .as_ref()
                    .map(ToString::to_string)
                    .as_deref(),
                want_step,
                "{rule}"
            );
        }
    }
}
