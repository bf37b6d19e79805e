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

/// One pass judged, once: the report (its targets that are not live explained from what the
/// pass holds) and, for `--wait`, what settles it before the change is live.
#[derive(Debug, Clone)]
pub struct Judgement {
    pub report: Report,
    /// A final failure or an undecidable unknown `--wait` stops on ([`super::settled`]).
    pub stop: Option<super::Settled>,
}

/// [`judge`] for a command: a manifest's workload that names no namespace is declared in
/// `default_namespace`; the report's targets that are not live are explained
/// ([`crate::diagnose::explain`], with `logs` when `--logs` was read); and whether the verdict
/// is settled for `--wait`. Pure, as [`judge`] is.
pub fn judgement(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
    logs: bool,
) -> Judgement {
    let mut change = change.clone();
    for d in &mut change.declared {
        if d.target.namespace.is_none() {
            d.target.namespace = Some(default_namespace.to_string());
        }
    }
    let mut report = judge(observed, &change, targets, default_namespace);
    crate::diagnose::explain(&mut report, observed, change.since, logs);
    super::settled::diagnose_final(observed, &change, targets, default_namespace, &mut report);
    let stop = super::settled(observed, &change, targets, default_namespace, &report);
    Judgement { report, stop }
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
        return vec![judge_workload(
            observed, change, target, namespace, None, None,
        )];
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
            judge_workload(
                observed,
                &followed_change,
                &w,
                &ns,
                tied_by.as_deref(),
                Some(target.kind),
            )
        })
        .map(|mut r| {
            r.via = Some(via.clone());
            r
        })
        .collect();
    // A workload the target's later revision replaced the change in is superseded; one where
    // it may have, undecided: unproven, not the not_live that would roll back that revision.
    for w in workloads.iter_mut().filter(|w| w.verdict != Verdict::Live) {
        match superseded::followed(observed, change, target, namespace, w) {
            Some(superseded::Followed::Superseded(by)) => supersede(w, *by),
            Some(superseded::Followed::Undecided(step)) if w.verdict == Verdict::NotLive => {
                w.verdict = Verdict::Unproven;
                w.next_step = Some(step);
            }
            _ => {}
        }
    }
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
            // Named by its actor (Flagger, Argo CD, …), and said only as far as its evidence
            // goes: an owner that could not be judged has not been shown to fail.
            let actor = target.kind.actor();
            let owner_said = if own_verdict == Verdict::NotLive {
                format!(
                    "{} ({via}), so its workloads cannot run it: ",
                    actor.has_not()
                )
            } else {
                format!(
                    "{} ({via}), so neither is whether its workloads run it: ",
                    actor.whether()
                )
            };
            // A workload a later change replaced keeps its own step: nothing to roll back.
            for w in workloads
                .iter_mut()
                .filter(|w| !matches!(w.verdict, Verdict::Live | Verdict::Superseded))
            {
                w.next_step = Some(owner_step.clone().after(owner_said.clone()));
            }
        }
    }
    if report.verdict != Verdict::Live {
        if let Some(by) = owner_superseded_by {
            // What its workloads run is the later change the owner deployed: not live for
            // the stated one because it was replaced, so theirs is the owner's verdict (one
            // that could not be judged stays unproven).
            for w in workloads
                .iter_mut()
                .filter(|w| w.verdict == Verdict::NotLive)
            {
                supersede(w, by.clone());
            }
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
/// the change when it was reached through one, and `owner` that target's kind.
fn judge_workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    tied_by: Option<&str>,
    owner: Option<crate::TargetKind>,
) -> TargetReport {
    let (mut findings, dating) =
        workload_findings(observed, change, target, namespace, tied_by, owner);
    let verdict = verdict(&findings);
    let superseded_by = (verdict != Verdict::Live)
        .then(|| superseded::workload(observed, change, target, namespace, &findings))
        .flatten();
    if superseded_by.is_none() && verdict == Verdict::NotLive {
        // Written and undone: spec_readback says so, rather than that it was never written.
        if let Some(undone) = superseded::undone(observed, change, target, namespace, &findings) {
            if let Some(f) = findings
                .iter_mut()
                .find(|f| f.evidence.check == Check::SpecReadback)
            {
                f.evidence.detail = undone.detail;
                f.next_step = Some(undone.next);
            }
        }
    }
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
    if let Some(kind) = report.kind.target() {
        report.next_step = Some(superseded_step(kind, &report.namespace, &report.name, &by));
    }
    report.superseded_by = Some(by);
}

/// The next step of a target superseded by `by`: nothing to roll back, and the command that
/// verifies the later change instead — the same target, held to the later change's own
/// statement (its commit, else its time; its images), never to the change it replaced.
pub fn superseded_step(
    kind: crate::TargetKind,
    namespace: &str,
    name: &str,
    by: &crate::SupersededBy,
) -> crate::Suggestion {
    let mut args = vec![
        "verify".to_string(),
        format!("{}/{name}", kind.cli_name()),
        "-n".to_string(),
        namespace.to_string(),
    ];
    // A commit states it for a GitOps revision and dates it; without one, its time dates it.
    match (&by.commit, &by.at) {
        (Some(commit), _) => args.extend(["--commit".to_string(), commit.clone()]),
        (None, Some(at)) => args.extend(["--since".to_string(), at.clone()]),
        (None, None) => {}
    }
    for image in &by.images {
        args.extend(["--image".to_string(), image.clone()]);
    }
    let command = crate::suggestion::Command::liveproof(args).stating_its_own_change();
    crate::Suggestion::text(format!(
        "nothing to roll back: superseded by {}, {}; verify the later change: ",
        by.named(),
        by.liveness()
    ))
    .command(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SourceRef, SupersededBy, TargetKind};

    fn later() -> SupersededBy {
        SupersededBy {
            summary: "ReplicaSet apps/web-6c8d, created after the change's, serves now".into(),
            revision: Some("apps/web-6c8d".into()),
            commit: None,
            images: vec!["ghcr.io/acme/web:1.5.0".into()],
            at: Some("2026-07-12T11:00:00Z".into()),
            live: Some(true),
            source_ref: Some(SourceRef::object(
                crate::ResourceKind::ReplicaSet,
                "apps",
                "web-6c8d",
            )),
        }
    }

    /// A superseded target is never told to roll back: its step names the later change and
    /// verifies it, stated as the later change (not as the one it replaced).
    #[test]
    fn a_superseded_target_is_told_to_verify_the_later_change() {
        let mut report = TargetReport {
            kind: TargetKind::Deployment.into(),
            namespace: "apps".into(),
            name: "web".into(),
            verdict: Verdict::NotLive,
            via: None,
            evidence: Vec::new(),
            next_step: Some(crate::Suggestion::text(
                "kubectl rollout undo deployment/web",
            )),
            diagnostics: Vec::new(),
            live_since: None,
            live_since_unknown: None,
            timeline: Vec::new(),
            superseded_by: None,
        };
        supersede(&mut report, later());
        assert_eq!(report.verdict, Verdict::Superseded);
        assert_eq!(report.superseded_by, Some(later()));
        let step = report.next_step.expect("a next step");
        assert_eq!(
            step.to_string(),
            "nothing to roll back: superseded by revision apps/web-6c8d, image ghcr.io/acme/web:1.5.0, \
             made 2026-07-12T11:00:00Z, itself live; verify the later change: liveproof verify \
             deployment/web -n apps --since 2026-07-12T11:00:00Z --image ghcr.io/acme/web:1.5.0"
        );
        let command = step
            .parts()
            .iter()
            .find_map(|p| match p {
                crate::suggestion::Part::Command(c) => Some(c),
                _ => None,
            })
            .expect("a command");
        assert!(command.states_own_change, "{command}");
    }

    /// A GitOps target superseded by a later commit is verified against that commit (which
    /// dates it too); a later change whose liveness is unknown says so.
    #[test]
    fn a_later_commit_is_verified_by_its_commit() {
        let by = SupersededBy {
            commit: Some("9b1e2f3c4d5e6f708192a3b4c5d6e7f801234567".into()),
            images: Vec::new(),
            revision: Some("main@sha1:9b1e2f3c".into()),
            live: None,
            ..later()
        };
        let step = superseded_step(TargetKind::Kustomization, "flux-system", "apps", &by);
        assert_eq!(
            step.to_string(),
            "nothing to roll back: superseded by revision main@sha1:9b1e2f3c, commit 9b1e2f3, \
             made 2026-07-12T11:00:00Z, whether it is live was not established; verify the later \
             change: liveproof verify kustomization/apps -n flux-system --commit \
             9b1e2f3c4d5e6f708192a3b4c5d6e7f801234567"
        );
    }
}
