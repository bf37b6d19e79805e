//! What `--wait` may stop on before the change is live: a failure the controllers recorded for
//! the change that waiting will not fix (the verdict stays `not_live`), or an unknown no later
//! event can decide (it stays `unproven`). docs/design.md ("Waiting and time bounds") lists
//! which states are final and which are transient.

use super::release::ReleaseHistory;
use super::{gitops, pod_restarted, pods, raw, workload_checks};
use crate::kinds::workload::{Revision, Workload};
use crate::order::{order, Order};
use crate::{Change, Check, Observed, Report, Status, Target, TargetKind, TargetReport, Verdict};

/// Why a `--wait` may end before the change is live: waiting longer cannot change the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// A failure waiting will not fix, in the controller's own words: `not_live` stands.
    Failed(String),
    /// An unknown nothing later can decide (a tie no later event orders): `unproven` stands.
    Undecidable(String),
}

impl Settled {
    /// What settled it: the object and the controller's message, or the tie.
    pub fn reason(&self) -> &str {
        match self {
            Settled::Failed(reason) | Settled::Undecidable(reason) => reason,
        }
    }

    /// What the wait says on stderr when it stops on this.
    pub fn stopping(&self) -> String {
        match self {
            Settled::Failed(reason) => format!(
                "stopped waiting: {}; waiting longer will not fix it",
                reason.trim_end()
            ),
            Settled::Undecidable(reason) => format!(
                "stopped waiting: {}; waiting longer will not decide it",
                reason.trim_end()
            ),
        }
    }

    /// The note a report carries when its wait ended on this, before the `--timeout`
    /// (without the line break a controller's message may end with).
    pub fn note(&self) -> String {
        match self {
            Settled::Failed(reason) => format!(
                "--wait stopped at a failure waiting will not fix: {}",
                reason.trim_end()
            ),
            Settled::Undecidable(reason) => format!(
                "--wait stopped at an unknown no later event can decide: {}",
                reason.trim_end()
            ),
        }
    }
}

/// Whether `report` (the judgement of `observed`) is settled for `--wait`: not live with a
/// failure that is final for the stated change ([`final_failure`]), or unproven with an unknown
/// nothing later can decide ([`final_unknown`]). A verdict and its reason always agree: a final
/// failure ends only a `not_live` report, an undecidable unknown only an `unproven` one.
pub fn settled(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
    report: &Report,
) -> Option<Settled> {
    match report.verdict {
        Verdict::NotLive => final_failure(observed, change, targets, default_namespace)
            .map(|reason| Settled::Failed(raw::shown(&reason))),
        Verdict::Unproven => final_unknown(observed, change, report)
            .map(|reason| Settled::Undecidable(raw::shown(&reason))),
        Verdict::Superseded | Verdict::Live => None,
    }
}

/// A failure waiting will not fix, for `--wait` to stop on, with the controller's own message:
/// a workload's ProgressDeadlineExceeded or an Argo Rollout aborted or Degraded (for the spec
/// its controller observed), a pod of the current revision crash-looping past
/// [`CRASH_LOOP_RESTARTS`](super::CRASH_LOOP_RESTARTS), a Flagger Canary whose analysis failed,
/// a Knative Service whose revision failed, and the Flux and Argo CD failures of
/// [`gitops_final`] for the stated revision. The workloads a Helm or GitOps target leads to
/// count as named ones once it has deployed the change ([`deployed`]).
pub fn final_failure(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
) -> Option<String> {
    let owned = targets
        .iter()
        .filter(|t| !t.kind.is_workload())
        .find_map(|t| owner_failure(observed, change, t, t.namespace_or(default_namespace)));
    if owned.is_some() {
        return owned;
    }
    let followed: Vec<Target> = targets
        .iter()
        .filter(|t| !t.kind.is_workload())
        .filter(|t| deployed(observed, change, t, t.namespace_or(default_namespace)))
        .flat_map(|t| gitops::followed_workloads(observed, t, default_namespace))
        .collect();
    targets
        .iter()
        .filter(|t| t.kind.is_workload())
        .chain(&followed)
        .find_map(|t| workload_failure(observed, t, t.namespace_or(default_namespace)))
}

/// Whether a Helm or GitOps target has deployed the stated change to its workloads: its own
/// revision evidence held (a release revision deployed after the change; Argo CD or Flux synced
/// to the commit or a descendant of it). Until then its workloads run what it deployed before,
/// which the coming deploy replaces: their failures are not final for the change. Argo CD's
/// health reads a Deployment's counts, never its pods (a DaemonSet that rolls on delete is
/// Healthy whatever its pods do): a crash loop under an app it calls Healthy or Progressing is
/// found here.
fn deployed(observed: &Observed, change: &Change, t: &Target, ns: &str) -> bool {
    let own = gitops::findings(observed, change, t, ns);
    let mut revision = own
        .iter()
        .filter(|f| {
            matches!(
                f.evidence.check,
                Check::ReleaseRevision | Check::GitopsRevision
            )
        })
        .peekable();
    revision.peek().is_some() && revision.all(|f| f.evidence.status == Status::Pass)
}

/// A workload's own failure waiting will not fix: its controller gave up on the spec it
/// observed, or a pod of its current revision crash-loops.
fn workload_failure(observed: &Observed, t: &Target, ns: &str) -> Option<String> {
    let w = Workload::find(observed, t.kind, ns, &t.name)?;
    if let Some(failure) = w.status.gave_up() {
        if w.generation_caught_up() == Some(true) {
            return Some(format!("{}: {failure}", w.source()));
        }
    }
    let Revision::Current(current) = w.current_revision(observed) else {
        return None;
    };
    w.pods(observed)
        .into_iter()
        .find(|p| current.is_current(p) && pods::is_crash_looping(p))
        .map(|p| {
            format!(
                "{}: pod {} is crash-looping ({})",
                w.source(),
                pods::name(p),
                pods::not_ready_reason(p).unwrap_or_default()
            )
        })
}

/// A Helm, GitOps, Flagger or Knative target's own final failure.
fn owner_failure(observed: &Observed, change: &Change, t: &Target, ns: &str) -> Option<String> {
    crate::kinds::rules(t.kind).gave_up(observed, change, t, ns)
}

/// An unknown no later event can decide, for `--wait` to stop on as `unproven`: a time recorded
/// once, in the change's own second, that nothing in the cluster will ever order against the
/// change —
/// - a container of a serving pod of the current revision that started in that second, when
///   nothing in the template shows the change (only a new start of that pod would decide it,
///   and the change will not cause one);
/// - a Helm release's newest revision deployed in that second (a deploy time is written once;
///   only a later revision, another change, would be judged instead).
///
/// Not final: a condition in the change's second (the controller rewrites it on its next
/// reconcile, and Argo CD's next sync moves `finishedAt`), and everything not a tie.
pub fn final_unknown(observed: &Observed, change: &Change, report: &Report) -> Option<String> {
    let since = change.since?;
    if report.verdict != Verdict::Unproven {
        return None;
    }
    report
        .targets
        .iter()
        .filter(|t| t.verdict == Verdict::Unproven)
        .find_map(|t| {
            let kind = t.kind.target()?;
            if kind.is_workload() {
                workload_tie(observed, change, t, kind, since)
            } else {
                release_tie(observed, t, kind, since)
            }
        })
}

fn status_of(t: &TargetReport, check: Check) -> Option<&crate::Evidence> {
    t.evidence.iter().find(|e| e.check == check)
}

fn workload_tie(
    observed: &Observed,
    change: &Change,
    t: &TargetReport,
    kind: TargetKind,
    since: jiff::Timestamp,
) -> Option<String> {
    if status_of(t, Check::PodRestarted)?.status != Status::Unknown {
        return None;
    }
    let w = Workload::find(observed, kind, &t.namespace, &t.name)?;
    // A template that shows the change decides a tie on a current pod (it counts as after).
    let spec = status_of(t, Check::SpecReadback)?;
    let shown = workload_checks::template_shows_change(&w, change, spec).is_some()
        || status_of(t, Check::PodSpec).is_some_and(|e| e.status == Status::Pass);
    if shown {
        return None;
    }
    let (pod, container, started) = pod_restarted::undecidable_tie(&w, observed, since)?;
    Some(format!(
        "{}: container {container} of pod {pod} started at {started}, in the change's own second ({since}), and nothing in its template shows the change: start times are recorded to the second, and only a new start of that pod could order it; a change time to the sub-second (--since) or a statement the template shows (--image, -f) would decide it",
        w.source()
    ))
}

fn release_tie(
    observed: &Observed,
    t: &TargetReport,
    kind: TargetKind,
    since: jiff::Timestamp,
) -> Option<String> {
    if status_of(t, Check::ReleaseRevision)?.status != Status::Unknown {
        return None;
    }
    let (storage_ns, name) =
        crate::kinds::rules(kind).helm_release(observed, &t.namespace, &t.name)?;
    let history = ReleaseHistory::read(observed, &storage_ns, &name);
    let newest = history.newest()?;
    let info = &newest.release.info;
    let deployed = info.last_deployed?;
    (info.status == liveproof_helm::ReleaseStatus::Deployed && order(deployed, since) == Order::Tie)
        .then(|| {
            format!(
                "{} was deployed at {deployed}, in the change's own second ({since}): a revision's deploy time is written once, so nothing later orders it; a change time to the sub-second (--since) would decide it",
                ReleaseHistory::describe(newest)
            )
        })
}
