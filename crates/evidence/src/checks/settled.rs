//! What `--wait` may stop on before the change is live: a failure the controllers recorded for
//! the change that waiting will not fix (the verdict stays `not_live`), or an unknown no later
//! event can decide (it stays `unproven`). docs/design.md ("Waiting and time bounds") lists
//! which states are final and which are transient.

use super::release::ReleaseHistory;
use super::{gitops, pod_restarted, pods, raw, workload_checks};
use crate::kinds::workload::{Revision, Workload};
use crate::order::{order, Order};
use crate::suggestion::{Command, Suggestion};
use crate::{Change, Check, Observed, Report, Status, Target, TargetKind, TargetReport, Verdict};

/// Why a `--wait` may end before the change is live: waiting longer cannot change the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// A failure waiting will not fix, in the controller's own words: `not_live` stands.
    Failed(String),
    /// An unknown nothing later can decide (a tie no later event orders): `unproven` stands.
    Undecidable(String),
    /// The request itself can never be live: a workload reached with no statement of what
    /// changed ([`unprovable`]). Not a state of the cluster: `verify --wait` refuses it (exit
    /// 2, `hint` the ways to state the change), the controller stalls on it.
    Unprovable { message: String, hint: String },
}

/// How a note of an [`Settled::Unprovable`] stop begins: the controller's `Stalled` reason
/// tells it from the other stops by it.
pub const UNPROVABLE_NOTE: &str = "--wait cannot end live:";

impl Settled {
    /// What settled it: the object and the controller's message, or the tie.
    pub fn reason(&self) -> &str {
        match self {
            Settled::Failed(reason) | Settled::Undecidable(reason) => reason,
            Settled::Unprovable { message, .. } => message,
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
            Settled::Unprovable { message, .. } => {
                format!("stopped waiting: {message}; waiting cannot make it live")
            }
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
            Settled::Unprovable { message, hint } => {
                format!("{UNPROVABLE_NOTE} {message}; {hint}")
            }
        }
    }
}

/// Whether `report` (the judgement of `observed`) is settled for `--wait`: not live with a
/// failure that is final for the stated change ([`final_failure`]), or unproven with an unknown
/// nothing later can decide ([`final_unknown`]). (A request that can never be live is
/// [`unprovable`]'s: what waits for live asks it first; a rollback's wait does not.) A verdict and its reason always agree: a final failure
/// ends only a `not_live` report, an undecidable unknown only an `unproven` one.
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
        .map(|f| f.reason)
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

/// A workload target's own failure waiting will not fix ([`final_failure`] of that target
/// alone): what `--wait`'s incremental judge keeps per target.
pub(crate) fn workload_final(observed: &Observed, t: &Target, ns: &str) -> Option<String> {
    workload_failure(observed, t, ns).map(|f| f.reason)
}

/// A workload's own failure waiting will not fix, and where to see why.
struct WorkloadFailure {
    reason: String,
    see: Suggestion,
    /// A pod crash-looping: its logs say more than any step a check gave.
    crash_loop: bool,
}

impl WorkloadFailure {
    /// Its next step: the reason, then where to see why.
    fn step(&self) -> Suggestion {
        final_step(&self.reason, self.see.clone())
    }
}

/// A workload's own failure waiting will not fix: its controller gave up on the spec it
/// observed, or a pod of its current revision crash-loops.
fn workload_failure(observed: &Observed, t: &Target, ns: &str) -> Option<WorkloadFailure> {
    let w = Workload::find(observed, t.kind, ns, &t.name)?;
    if let Some(failure) = w.status.gave_up() {
        if w.generation_caught_up() == Some(true) {
            return Some(WorkloadFailure {
                reason: format!("{}: {failure}", w.source()),
                see: Suggestion::text("see why in its conditions and events (")
                    .command(Command::kubectl([
                        "-n",
                        w.namespace,
                        "describe",
                        &format!("{}/{}", w.kind.cli_name(), w.name),
                    ]))
                    .then(")"),
                crash_loop: false,
            });
        }
    }
    let Revision::Current(current) = w.current_revision(observed) else {
        return None;
    };
    w.pods(observed)
        .into_iter()
        .find(|p| current.is_current(p) && pods::is_crash_looping(p))
        .map(|p| {
            let pod = pods::name(p);
            let mut logs = vec!["-n", w.namespace, "logs", pod];
            let container = pods::crash_looping_container(p);
            if let Some(c) = container {
                logs.extend(["-c", c]);
            }
            logs.push("--previous");
            // The container's own reason: how its last run ended (OOMKilled, Error, exit 1).
            let ended = pods::container_statuses(p)
                .iter()
                .filter(|c| Some(c.name.as_str()) == container)
                .find_map(|c| c.last_state.as_ref()?.terminated.as_ref())
                .map(|t| {
                    format!(
                        "; its last run ended {} (exit code {})",
                        t.reason.as_deref().unwrap_or("Terminated"),
                        t.exit_code
                    )
                })
                .unwrap_or_default();
            WorkloadFailure {
                reason: format!(
                    "{}: pod {pod} is crash-looping ({}{ended})",
                    w.source(),
                    pods::not_ready_reason(p).unwrap_or_default()
                ),
                see: Suggestion::text("see why it crashes in its last logs (")
                    .command(Command::kubectl(logs))
                    .then(") and its events (")
                    .command(Command::kubectl([
                        "-n",
                        w.namespace,
                        "describe",
                        "pod",
                        pod,
                    ]))
                    .then(")"),
                crash_loop: true,
            }
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

/// A request `--wait` can never see live, from its judgement: a workload reached whose
/// `spec_readback` wants a statement of what changed and nothing could ever give one — reached
/// directly (no `--image`, `-f`, `--expect-env`, `--expect-secret-ref`, `--expect`), or through a
/// Helm or GitOps object whose own revision evidence was not asked for (a Kustomization or an
/// Application without `--commit`). docs/design.md's verdict rules: it cannot be live. Unproven
/// for now is not this: pods not read yet, a first deploy, a denied read, or an owner whose
/// revision evidence is still `unknown` (it may pass and tie the workload to the change).
pub fn unprovable(report: &Report) -> Option<Settled> {
    if report.verdict >= Verdict::Superseded {
        return None;
    }
    report
        .targets
        .iter()
        .filter(|t| !matches!(t.verdict, Verdict::Live | Verdict::Superseded))
        .find_map(|t| {
            let kind = t.kind.target().filter(|k| k.is_workload())?;
            let spec = status_of(t, Check::SpecReadback)?;
            if spec.status != Status::Unknown || spec.expected != workload_checks::NO_STATEMENT {
                return None;
            }
            let named = format!("{kind}/{} in namespace {}", t.name, t.namespace);
            let Some(via) = &t.via else {
                return Some(Settled::Unprovable {
                    message: format!(
                        "{named} can never be live for this change: nothing ties its running template to it (a change time or a commit says when it changed, not what; only a statement of what changed can be read back from what it runs)"
                    ),
                    hint: workload_checks::STATE_THE_CHANGE.to_string(),
                });
            };
            // The owner's revision evidence may still pass (a sync not done yet): only when it
            // was never asked for is nothing ever going to tie the workload to the change.
            let owner = report
                .targets
                .iter()
                .find(|o| o.via.is_none() && owner_via(o).as_deref() == Some(via.as_str()))?;
            let pending = owner.evidence.iter().any(|e| {
                matches!(e.check, Check::ReleaseRevision | Check::GitopsRevision)
                    && e.status == Status::Unknown
            });
            (!pending).then(|| Settled::Unprovable {
                message: format!(
                    "{named}, reached through {via}, can never be live for this change: {via} was not asked which revision it applied (no --commit or --chart-version), and nothing else ties the workload's running template to the change"
                ),
                hint: format!(
                    "give {via} the change's --commit (or --chart-version), or {}",
                    workload_checks::STATE_THE_CHANGE
                ),
            })
        })
}

/// How a Helm or GitOps target's workloads name it in their `via`.
fn owner_via(t: &TargetReport) -> Option<String> {
    let kind = t.kind.target().filter(|k| !k.is_workload())?;
    Some(format!("{kind}/{}/{}", t.namespace, t.name))
}

/// [`unprovable`] from the flags alone, before anything is read: each workload named as a
/// target with no statement of what changed for it. `None` when the flags state one, or when
/// only the cluster can tell (a Helm or GitOps target: what it reaches, and whether its
/// revision evidence ties them).
pub fn unprovable_by_flags(change: &Change, targets: &[Target]) -> Option<Settled> {
    let stated =
        change.has_spec_expectations() || !change.manifest.is_empty() || change.stated_by.is_some();
    if stated {
        return None;
    }
    targets
        .iter()
        .filter(|t| t.kind.is_workload())
        // `-f` declares it (its namespace is resolved later): it is stated.
        .find(|t| {
            !change
                .declared
                .iter()
                .any(|d| d.target.kind == t.kind && d.target.name == t.name)
        })
        .map(|t| {
            let named = match &t.namespace {
                Some(ns) => format!("{}/{} in namespace {ns}", t.kind, t.name),
                None => format!("{}/{}", t.kind, t.name),
            };
            let dated = if change.commit.is_some() {
                format!(
                    "a {} records no commit: --commit says when it changed, not what",
                    t.kind.kind_name()
                )
            } else {
                "a change time says when it changed, not what".to_string()
            };
            Settled::Unprovable {
                message: format!(
                    "{named} can never be live for this change: nothing ties its running template to it ({dated}; only a statement of what changed can be read back from what it runs)"
                ),
                hint: workload_checks::STATE_THE_CHANGE.to_string(),
            }
        })
}

/// The failures of `report`'s targets that waiting will not fix, answered by their diagnosis:
/// a workload crash-looping gets a next step that names the reason first and then where to
/// see why (the container's previous logs, `kubectl describe pod`); one its controller gave up
/// on, or a Helm, GitOps, Flagger or Knative target's own final failure, whose step would wait,
/// gets the reason and `kubectl describe` — never a step to wait for the rollout. An owner
/// whose step was one of its workloads' says that workload's new step. The same targets
/// [`final_failure`] stops `--wait` on.
pub(crate) fn diagnose_final(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
    report: &mut Report,
) {
    let deployed_owners: Vec<String> = targets
        .iter()
        .filter(|t| !t.kind.is_workload())
        .filter(|t| deployed(observed, change, t, t.namespace_or(default_namespace)))
        .map(|t| {
            format!(
                "{}/{}/{}",
                t.kind,
                t.namespace_or(default_namespace),
                t.name
            )
        })
        .collect();
    let mut answered: Vec<(String, String, Suggestion)> = Vec::new();
    for t in report
        .targets
        .iter_mut()
        .filter(|t| t.verdict == Verdict::NotLive)
    {
        let Some(kind) = t.kind.target() else {
            continue;
        };
        let target = Target::new(kind, Some(&t.namespace), &t.name);
        if kind.is_workload() {
            if t.via.as_ref().is_some_and(|v| !deployed_owners.contains(v)) {
                continue;
            }
            if let Some(failure) = workload_failure(observed, &target, &t.namespace) {
                // A controller that gave up already has its step say where to see why.
                if !failure.crash_loop
                    && !t
                        .next_step
                        .as_ref()
                        .is_none_or(Suggestion::proposes_waiting)
                {
                    continue;
                }
                let step = failure.step();
                if let Some(via) = &t.via {
                    let named = format!("{} {}/{}: ", t.kind, t.namespace, t.name);
                    answered.push((via.clone(), named, step.clone()));
                }
                t.next_step = Some(step);
            }
        } else if let Some(reason) = owner_failure(observed, change, &target, &t.namespace) {
            if t.next_step
                .as_ref()
                .is_none_or(Suggestion::proposes_waiting)
            {
                t.next_step = Some(final_step(
                    &reason,
                    Suggestion::text("see why in its conditions and events (")
                        .command(Command::kubectl([
                            "-n",
                            &t.namespace,
                            "describe",
                            &format!("{}/{}", kind.cli_name(), t.name),
                        ]))
                        .then(")"),
                ));
            }
        }
    }
    for t in report.targets.iter_mut().filter(|t| {
        t.verdict == Verdict::NotLive
            && t.next_step
                .as_ref()
                .is_some_and(Suggestion::proposes_waiting)
    }) {
        let Some(via) = owner_via(t) else {
            continue;
        };
        if let Some((_, named, step)) = answered.iter().find(|(v, _, _)| *v == via) {
            t.next_step = Some(step.clone().after(named.clone()));
        }
    }
}

/// A final failure's step: its reason first, that waiting will not fix it, then `see`.
fn final_step(reason: &str, see: Suggestion) -> Suggestion {
    see.after(format!(
        "{}: waiting longer will not fix it; ",
        raw::shown(reason).trim_end()
    ))
}
