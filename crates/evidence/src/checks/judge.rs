//! The judge: every target against what was observed — a workload by its checks, a Helm or
//! GitOps target by its own evidence and then the workloads it leads to. What `--wait` may
//! stop on is `settled.rs`.

use super::verdict::{target_report, verdict};
use super::workload_checks::{workload_findings, Tie};
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
    let reports = judge_targets(observed, change, targets, default_namespace)
        .into_iter()
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
    let change = stated(change, default_namespace);
    let mut report = judge(observed, &change, targets, default_namespace);
    crate::diagnose::explain(&mut report, observed, change.since, logs);
    super::settled::diagnose_final(observed, &change, targets, default_namespace, &mut report);
    let stop = super::settled(observed, &change, targets, default_namespace, &report);
    Judgement { report, stop }
}

/// The change as the judgement reads it: a declared target without a namespace is in the
/// command's default one.
pub(crate) fn stated(change: &Change, default_namespace: &str) -> Change {
    let mut change = change.clone();
    for d in &mut change.declared {
        if d.target.namespace.is_none() {
            d.target.namespace = Some(default_namespace.to_string());
        }
    }
    change
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

/// Which object a report is about, within one cluster: kind, namespace, name.
type Key = (crate::TargetKind, String, String);

fn key(target: &Target, namespace: &str) -> Key {
    (target.kind, namespace.to_string(), target.name.clone())
}

/// Every target's reports, each object judged and shown once. A workload reached through a
/// Helm or GitOps target (or through several, or also given directly) is judged once, against
/// every statement that applies to it: the flags it was given with directly, and the tie of
/// the first target that reached it. It is shown under that first target, its `via` naming
/// every target that reached it, and each of those targets' verdicts reads that one report.
fn judge_targets(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
) -> Vec<TargetReport> {
    let owners: Vec<Option<Owner>> = targets
        .iter()
        .map(|t| {
            (!t.kind.is_workload()).then(|| Owner::new(observed, change, t, default_namespace))
        })
        .collect();
    let direct: std::collections::BTreeSet<Key> = targets
        .iter()
        .filter(|t| t.kind.is_workload())
        .map(|t| key(t, t.namespace_or(default_namespace)))
        .collect();
    // Every target that reaches each workload, in the order they were given.
    let mut reached: std::collections::BTreeMap<Key, Vec<String>> = Default::default();
    for owner in owners.iter().flatten() {
        for (k, _) in &owner.workloads {
            let by = reached.entry(k.clone()).or_default();
            if !by.contains(&owner.via) {
                by.push(owner.via.clone());
            }
        }
    }
    // The reports of the workloads Helm/GitOps targets reach, which the targets read. One
    // given only directly is read by no target (`reached` holds every workload a target
    // reaches): only its key is kept, not a copy of its report (at 2,000 targets, a second
    // report's worth of memory).
    let mut judged: std::collections::BTreeMap<Key, TargetReport> = Default::default();
    let mut direct_shown = std::collections::BTreeSet::new();
    let mut owners_shown = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (target, owner) in targets.iter().zip(owners) {
        let Some(owner) = owner else {
            let namespace = target.namespace_or(default_namespace);
            let k = key(target, namespace);
            // Shown under the first target that reaches it; given twice, shown once.
            if reached.contains_key(&k) || !direct_shown.insert(k) {
                continue;
            }
            out.push(judge_workload(
                observed, change, target, namespace, None, None,
            ));
            continue;
        };
        // Given twice, shown once.
        if !owners_shown.insert(key(target, &owner.namespace)) {
            continue;
        }
        // The workloads first reached here are judged here, against every statement that
        // applies to them; the others were judged by an earlier target and are read.
        let mut home = Vec::new();
        for (k, w) in &owner.workloads {
            if judged.contains_key(k) {
                continue;
            }
            let by = reached.get(k).map(Vec::as_slice).unwrap_or_default();
            let ns = &k.1;
            // Given directly too: held to what it was given with (its template to `--expect`),
            // as it would be alone; the owner's tie stands in only for a missing statement.
            let own_change = if direct.contains(k) {
                change
            } else {
                &owner.followed_change
            };
            let mut report = judge_workload(
                observed,
                own_change,
                w,
                ns,
                owner.tie.as_ref(),
                Some(owner.target.kind),
            );
            report.via = Some(by.join(", "));
            judged.insert(k.clone(), report);
            home.push(k.clone());
        }
        let (report, finished) = owner.judge(observed, change, &judged, &home);
        out.push(report);
        // In the order they were reached, as `home` is.
        for (k, w) in home.into_iter().zip(finished) {
            judged.insert(k, w.clone());
            out.push(w);
        }
    }
    out
}

/// A Helm or GitOps target: its own evidence, and what it gives the workloads it leads to.
struct Owner<'a> {
    target: &'a Target,
    namespace: String,
    own: Vec<super::Finding>,
    /// `helmrelease/apps/inventory`.
    via: String,
    tie: Option<Tie>,
    /// The change the workloads it leads to are held to ([`gitops::followed_change`]).
    followed_change: Change,
    workloads: Vec<(Key, Target)>,
}

impl<'a> Owner<'a> {
    fn new(
        observed: &Observed,
        change: &Change,
        target: &'a Target,
        default_namespace: &str,
    ) -> Owner<'a> {
        let namespace = target.namespace_or(default_namespace);
        let own = gitops::findings(observed, change, target, namespace);
        let via = format!("{}/{}/{}", target.kind, namespace, target.name);
        // A release deployed after the change, or a GitOps revision that is the change's
        // commit, ties what it installed to the change: its workloads need no statement of
        // their own. When that evidence failed, the owner is not live and says why; only when
        // it was not checked at all (a Kustomization without --commit) is nothing tying them.
        let tied_by = own
            .iter()
            .find(|f| {
                matches!(
                    f.evidence.check,
                    Check::ReleaseRevision | Check::GitopsRevision
                ) && matches!(f.evidence.status, Status::Pass | Status::Fail)
            })
            .map(|f| format!("{via} ({} {})", f.evidence.check, f.evidence.status.name()));
        // A release deployed after the change whose installed content fails the statement held
        // to it (the manifest lacks an `--expect` text, the chart is another version) refutes
        // the tie: its workloads, which it installed, do not carry the change either, and are
        // never live on the tie alone. (A tie that failed already says the owner is not live.)
        let tie_held = own.iter().any(|f| {
            matches!(
                f.evidence.check,
                Check::ReleaseRevision | Check::GitopsRevision
            ) && f.evidence.status == Status::Pass
        });
        let refuted = own.iter().find(|f| {
            matches!(
                f.evidence.check,
                Check::ManifestContains | Check::ReleaseVersion
            ) && f.evidence.status == Status::Fail
        });
        let tie = match (refuted.filter(|_| tie_held), tied_by) {
            (Some(f), _) => Some(Tie::Refuted {
                via: via.clone(),
                evidence: f.evidence.clone(),
            }),
            (None, Some(by)) => Some(Tie::By(by)),
            (None, None) => None,
        };
        let followed_change = gitops::followed_change(observed, change, target, namespace);
        let workloads = followed_workloads(observed, target, default_namespace)
            .into_iter()
            .map(|w| (key(&w, w.namespace_or(default_namespace)), w))
            .collect();
        Owner {
            target,
            namespace: namespace.to_string(),
            own,
            via,
            tie,
            followed_change,
            workloads,
        }
    }

    /// Its report, and the reports of the workloads first reached through it (`home`, judged
    /// in `judged`) as they are shown under it. A Helm or GitOps target is live only when its
    /// own evidence holds and every workload it leads to is live; the workloads an earlier
    /// target reached count as they were judged there.
    fn judge(
        self,
        observed: &Observed,
        change: &Change,
        judged: &std::collections::BTreeMap<Key, TargetReport>,
        home: &[Key],
    ) -> (TargetReport, Vec<TargetReport>) {
        let target = self.target;
        let namespace = self.namespace.as_str();
        let via = &self.via;
        let own = self.own;
        let mut workloads: Vec<TargetReport> = self
            .workloads
            .iter()
            .filter_map(|(k, _)| judged.get(k).cloned())
            .collect();
        let is_home: Vec<bool> = self
            .workloads
            .iter()
            .filter(|(k, _)| judged.contains_key(k))
            .map(|(k, _)| home.contains(k))
            .collect();
        // A workload the target's later revision replaced the change in is superseded; one
        // where it may have, undecided: unproven, not the not_live that would roll back that
        // revision.
        for (w, _) in workloads
            .iter_mut()
            .zip(&is_home)
            .filter(|(w, home)| **home && w.verdict != Verdict::Live)
        {
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
                // Named by its actor (Flagger, Argo CD, …), and said only as far as its
                // evidence goes: an owner that could not be judged has not been shown to fail.
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
                for (w, _) in workloads.iter_mut().zip(&is_home).filter(|(w, home)| {
                    **home && !matches!(w.verdict, Verdict::Live | Verdict::Superseded)
                }) {
                    w.next_step = Some(owner_step.clone().after(owner_said.clone()));
                }
            }
        }
        if report.verdict != Verdict::Live {
            if let Some(by) = owner_superseded_by {
                // What its workloads run is the later change the owner deployed: not live for
                // the stated one because it was replaced, so theirs is the owner's verdict (one
                // that could not be judged stays unproven).
                for (w, _) in workloads
                    .iter_mut()
                    .zip(&is_home)
                    .filter(|(w, home)| **home && w.verdict == Verdict::NotLive)
                {
                    supersede(w, by.clone());
                }
                supersede(&mut report, by);
            } else if report.verdict == Verdict::Superseded {
                // Its own evidence held and its workloads were each superseded: by the first's.
                report.superseded_by = workloads.iter().find_map(|w| w.superseded_by.clone());
            }
        }
        // Dated once its verdict is final, from the workloads' own dating.
        timeline::date_owner(observed, change, &mut report, namespace, target, &workloads);
        let shown = workloads
            .into_iter()
            .zip(is_home)
            .filter_map(|(w, home)| home.then_some(w))
            .collect();
        (report, shown)
    }
}

/// A workload's report. `tie` is what the Helm or GitOps target it was reached through says
/// of the change when it was reached through one, and `owner` that target's kind.
pub(super) fn judge_workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    tie: Option<&Tie>,
    owner: Option<crate::TargetKind>,
) -> TargetReport {
    let (mut findings, dating) = workload_findings(observed, change, target, namespace, tie, owner);
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
            pods: Default::default(),
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
