//! The judge: every target against what was observed — a workload by its checks, a Helm or
//! GitOps target by its own evidence and then the workloads it leads to. What `--wait` may
//! stop on is `settled.rs`.

use super::verdict::{target_report, verdict};
use super::workload_checks::workload_findings;
use super::{followed_workloads, gitops, superseded, timeline};
use crate::model::ChangeSummary;
use crate::{Change, Check, Observed, Report, Status, Target, TargetReport, Verdict};

/// Judges every target against what was observed, and every `--version-url` expectation of
/// `change` against what its server answered. `default_namespace` applies to targets that did
/// not name one.
pub fn judge(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
) -> Report {
    let reports = targets
        .iter()
        .flat_map(|t| judge_target(observed, change, t, default_namespace))
        .chain(crate::server::reports(observed, change))
        .collect();
    let mut report = Report::new(
        ChangeSummary {
            since: change.since.map(|t| t.to_string()),
            commit: change.commit.clone(),
            committed_at: change.commit_time.map(|t| t.to_string()),
        },
        reports,
    );
    report.date_lead_time();
    report
}

/// The command that verifies a target again and waits for it, as next steps suggest it. The
/// CLI adds the flags the user gave (cluster, change, expectations) before it prints it, and
/// lengthens the timeout after a wait that ran out.
pub fn verify_again(kind: &str, namespace: &str, name: &str) -> crate::suggestion::Command {
    crate::suggestion::Command::liveproof([
        "verify",
        &format!("{}/{name}", kind.to_ascii_lowercase()),
        "-n",
        namespace,
        "--wait",
        "--timeout",
        "5m",
    ])
}

/// A workload target's report; for a Helm or GitOps target, its own report followed by one
/// per workload it leads to (each marked `via` it). A Helm or GitOps target is live only when
/// its own evidence holds and every workload it leads to is live.
fn judge_target(
    observed: &Observed,
    change: &Change,
    target: &Target,
    default_namespace: &str,
) -> Vec<TargetReport> {
    let namespace = target.namespace_or(default_namespace);
    if target.kind.is_workload() {
        return vec![judge_workload(observed, change, target, namespace, None)];
    }
    let own = gitops::findings(observed, change, target, namespace);
    let via = format!("{}/{}/{}", target.kind, namespace, target.name);
    // A release deployed after the change, or a GitOps revision that is the change's commit,
    // ties what it installed to the change: its workloads need no statement of their own.
    // When that evidence failed, the owner is not live and says why; only when it was not
    // checked at all (a Kustomization without --commit) is nothing tying them.
    let tied_by = own
        .iter()
        .find(|f| {
            matches!(
                f.evidence.check,
                Check::ReleaseRevision | Check::GitopsRevision
            ) && matches!(f.evidence.status, Status::Pass | Status::Fail)
        })
        .map(|f| format!("{via} ({} {})", f.evidence.check, f.evidence.status.name()));
    let followed_change = gitops::followed_change(observed, change, target, namespace);
    let mut workloads: Vec<TargetReport> = followed_workloads(observed, target, default_namespace)
        .into_iter()
        .map(|w| {
            let ns = w.namespace_or(default_namespace).to_string();
            judge_workload(observed, &followed_change, &w, &ns, tied_by.as_deref())
        })
        .map(|mut r| {
            r.via = Some(via.clone());
            r
        })
        .collect();
    let own_verdict = if own.iter().any(|f| f.evidence.status == Status::Fail) {
        Verdict::NotLive
    } else if own.iter().any(|f| f.evidence.status == Status::Unknown) {
        Verdict::Unproven
    } else {
        Verdict::Live
    };
    let owner_superseded_by = (own_verdict != Verdict::Live
        || workloads.iter().any(|w| w.verdict != Verdict::Live))
    .then(|| superseded::owner(observed, change, target, namespace, &own, &workloads))
    .flatten();
    let mut report = target_report(target, namespace, own, own_verdict);
    // Dated once its verdict is final (below), from the workloads' own dating.
    let date = |report: &mut TargetReport, workloads: &[TargetReport]| {
        timeline::date_owner(observed, change, report, namespace, target, workloads);
    };
    if own_verdict == Verdict::Live {
        // Its own evidence is status and storage: the running pods decide.
        report.verdict = workloads
            .iter()
            .map(|w| w.verdict)
            .min()
            .unwrap_or(Verdict::Unproven);
        report.next_step = match workloads.iter().find(|w| w.verdict != Verdict::Live) {
            Some(w) => w
                .next_step
                .as_ref()
                .map(|s| s.clone().after(format!("{} {}/{}: ", w.kind, w.namespace, w.name))),
            None if workloads.is_empty() => Some(crate::Suggestion::text(format!(
                "{} leads to no {}, so no running pod can prove the change: verify the workloads that consume it directly",
                target,
                crate::TargetKind::workload_kinds("or", false)
            ))),
            None => None,
        };
    } else {
        if let Some(worst) = workloads.iter().map(|w| w.verdict).min() {
            report.verdict = report.verdict.min(worst);
        }
        // The owner has not deployed the change: restarting its workloads (what their own
        // evidence would suggest) deploys nothing. Their step is the owner's.
        if let Some(owner_step) = &report.next_step {
            for w in workloads.iter_mut().filter(|w| w.verdict != Verdict::Live) {
                w.next_step = Some(owner_step.clone().after(format!(
                    "{via} has not deployed the change, so its workloads cannot run it: "
                )));
            }
        }
    }
    if report.verdict != Verdict::Live {
        if let Some(by) = owner_superseded_by {
            supersede(&mut report, by);
        } else if report.verdict == Verdict::Superseded {
            // Its own evidence held and its workloads were each superseded: by the first's.
            report.superseded_by = workloads.iter().find_map(|w| w.superseded_by.clone());
        }
    }
    date(&mut report, &workloads);
    std::iter::once(report).chain(workloads).collect()
}

/// A workload's report. `tied_by` names the Helm or GitOps evidence that ties its template to
/// the change when it was reached through one.
fn judge_workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    tied_by: Option<&str>,
) -> TargetReport {
    let (findings, dating) = workload_findings(observed, change, target, namespace, tied_by);
    let verdict = verdict(&findings);
    let superseded_by = (verdict != Verdict::Live)
        .then(|| superseded::workload(observed, change, target, namespace, &findings))
        .flatten();
    let mut report = target_report(target, namespace, findings, verdict);
    if let Some(by) = superseded_by {
        supersede(&mut report, by);
    }
    dating.apply(&mut report, change);
    report
}

/// `report` is superseded by `by`: its verdict says so, and its next step is the later change's
/// (there is nothing to roll back for this one).
fn supersede(report: &mut TargetReport, by: crate::SupersededBy) {
    report.verdict = Verdict::Superseded;
    report.next_step = Some(crate::Suggestion::text(format!(
        "nothing to roll back: {}; verify that change on its own",
        by.summary
    )));
    report.superseded_by = Some(by);
}
