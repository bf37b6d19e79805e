//! `pod_restarted`: every serving pod started after the change (a rollout that never
//! restarted anything proves nothing).
//!
//! Start times are stamped to the second, and so are most change times: a container that
//! started in the change's own second is a tie ([`crate::order`]). A tie is decided by what the
//! pod shows: when its template shows the stated change and the pod belongs to the current
//! revision, it started after the change (it runs what the change wrote). Otherwise nothing
//! orders it, and the check is `unknown` — never `fail`, which a pipeline rolls back on.

use crate::pod::Pod;
use jiff::Timestamp;

use super::{pods, Finding};
use crate::kinds::workload::{CurrentRevision, Workload};
use crate::order::{order, Order};
use crate::suggestion::Suggestion;
use crate::{Change, Check, ResourceKind, SourceRef, Status};

/// What can decide a start in the change's own second.
pub(crate) struct TieBreak<'a> {
    /// What in the workload's template shows the change, when something does (the stated
    /// expectations read back, a template that differs from the snapshot's).
    pub shown_by: Option<String>,
    /// The current revision: only its pods run the template that shows the change.
    pub current: Option<&'a CurrentRevision>,
}

impl TieBreak<'_> {
    /// Whether `pod`, started in the change's second, counts as started after it.
    fn decides(&self, pod: &Pod) -> bool {
        self.shown_by.is_some() && self.current.is_some_and(|c| c.is_current(pod))
    }
}

pub(crate) fn pod_restarted(
    w: &Workload,
    change: &Change,
    pods: &[&Pod],
    readable: &Result<(), (String, crate::Suggestion)>,
    tie: &TieBreak,
) -> Finding {
    let Some(since) = change.since else {
        return Finding::new(
            Check::PodRestarted,
            Status::Unknown,
            "not compared",
            "started after the change",
        )
        .source(
            SourceRef::objects(ResourceKind::Pod, w.namespace)
                .field(".status.containerStatuses[].state.running.startedAt"),
        )
        .detail(
            "no change time was given, so whether the pods started after the change cannot be told",
        )
        .next(super::GIVE_THE_CHANGE_TIME);
    };
    let expected = format!("after {since}");
    if let Err((why, next)) = readable {
        return Finding::new(
            Check::PodRestarted,
            Status::Unknown,
            "pods not read",
            expected,
        )
        .source(SourceRef::objects(ResourceKind::Pod, w.namespace))
        .detail(why.clone())
        .next(next.clone());
    }
    Starts::of(pods, since, tie).judge(w, since, tie, expected)
}

/// A start in the change's own second that no later event will order, for `--wait`: a
/// container of a serving pod of the current revision (old revisions' pods are replaced as the
/// rollout goes on), when nothing in the template shows the change (the caller knows: then the
/// tie cannot count as after). Only a new start of that pod, which the change will not cause,
/// could decide it. `(pod, container, started)`.
pub(crate) fn undecidable_tie(
    w: &Workload,
    observed: &crate::Observed,
    since: Timestamp,
) -> Option<(String, String, Timestamp)> {
    let crate::kinds::workload::Revision::Current(current) = w.current_revision(observed) else {
        return None;
    };
    let pods = w.pods(observed);
    w.routed_pods(&pods)
        .into_iter()
        .filter(|p| pods::is_serving(p) && current.is_current(p))
        .find_map(|p| {
            pods::container_statuses(p).iter().find_map(|c| {
                let started = pods::running_since(c)??;
                (order(started, since) == Order::Tie)
                    .then(|| (pods::name(p).to_string(), c.name.clone(), started))
            })
        })
}

/// One serving container's start: `(pod, container, started)`.
type Start = (String, String, Timestamp);

/// The serving containers' start times against the change time.
#[derive(Default)]
struct Starts {
    /// Each that started before the change.
    before: Vec<Start>,
    /// Each that started in the change's own second with nothing to order it.
    ties: Vec<Start>,
    /// How many started in the change's second and count as after it (their template shows it).
    ties_decided: usize,
    /// (pod, container, what is missing): evidence never read is never a pass.
    unreadable: Vec<(String, String, &'static str)>,
    /// The earliest start after the change: the pod closest to not having restarted.
    earliest_after: Option<Start>,
    /// Running containers seen.
    running: usize,
}

impl Starts {
    fn of(pods: &[&Pod], since: Timestamp, tie: &TieBreak) -> Starts {
        let mut starts = Starts::default();
        for pod in pods.iter().filter(|p| pods::is_serving(p)) {
            starts.add(pod, since, tie);
        }
        starts
    }

    fn add(&mut self, pod: &Pod, since: Timestamp, tie: &TieBreak) {
        let name = pods::name(pod).to_string();
        let statuses = pods::container_statuses(pod);
        // Every container the pod declares must be accounted for, not only those with a status.
        for declared in pods::declared_containers(pod) {
            if !statuses.iter().any(|s| s.name == declared) {
                self.unreadable.push((
                    name.clone(),
                    declared.to_string(),
                    "has no containerStatuses entry, so when it started is not recorded",
                ));
            }
        }
        if statuses.is_empty() {
            self.unreadable.push((
                name.clone(),
                "*".to_string(),
                "records no container statuses at all",
            ));
        }
        for c in statuses {
            let Some(started) = pods::running_since(c) else {
                continue;
            };
            self.running += 1;
            let Some(t) = started else {
                self.unreadable.push((
                    name.clone(),
                    c.name.clone(),
                    "is running but its startedAt is missing",
                ));
                continue;
            };
            let start = (name.clone(), c.name.clone(), t);
            let order = order(t, since);
            match order {
                Order::Before => self.before.push(start),
                Order::Tie if !tie.decides(pod) => self.ties.push(start),
                Order::Tie | Order::After => {
                    if order == Order::Tie {
                        self.ties_decided += 1;
                    }
                    if self.earliest_after.as_ref().is_none_or(|(_, _, e)| t < *e) {
                        self.earliest_after = Some(start);
                    }
                }
            }
        }
    }

    /// A container that started before the change fails it; one whose start is not recorded,
    /// or that started in the change's second with nothing to order it, makes it unknown; no
    /// running container fails it; else it passes.
    fn judge(self, w: &Workload, since: Timestamp, tie: &TieBreak, expected: String) -> Finding {
        let source_of = |pod: &str, container: &str| {
            SourceRef::object(ResourceKind::Pod, w.namespace, pod).field(format!(
                ".status.containerStatuses[{container}].state.running.startedAt"
            ))
        };
        let more = |n: usize, what: &str| {
            if n > 1 {
                format!(" (and {} more {what})", n - 1)
            } else {
                String::new()
            }
        };
        if let Some((pod, container, started)) = self.before.iter().min_by_key(|(_, _, t)| *t) {
            return Finding::new(
                Check::PodRestarted,
                Status::Fail,
                format!("started {started}{}", more(self.before.len(), "container(s)")),
                expected,
            )
            .source(source_of(pod, container))
            .detail(format!(
                "pod {pod} started before the change, so it runs configuration read before the change"
            ))
            .next(
                Suggestion::text("restart the workload so its pods read the change: ")
                    .command(w.status.restart(w)),
            );
        }
        if let Some((pod, container, missing)) = self.unreadable.first() {
            return Finding::new(
                Check::PodRestarted,
                Status::Unknown,
                "start time not recorded",
                expected,
            )
            .source(source_of(pod, container))
            .detail(format!(
                "container {container} of serving pod {pod} {missing}{}",
                more(self.unreadable.len(), "")
            ))
            .next(
                Suggestion::text("read the pods again (")
                    .command(w.kubectl_pods(&["-o", "yaml"]))
                    .then("): a pod's status records each container's start once the kubelet reports it"),
            );
        }
        if let Some((pod, container, started)) = self.ties.first() {
            let why = match (&tie.shown_by, tie.current) {
                (None, _) => "nothing in its template shows the change (a ConfigMap or Secret's contents, a rebuilt tag or a restart leave no trace there)".to_string(),
                (Some(_), _) => "it does not belong to the current revision, whose template shows the change".to_string(),
            };
            return Finding::new(
                Check::PodRestarted,
                Status::Unknown,
                format!(
                    "started {started}, in the change's own second{}",
                    more(self.ties.len(), "container(s)")
                ),
                expected,
            )
            .source(source_of(pod, container))
            .detail(format!(
                "pod {pod} started in the same second as the change ({since}), and {why}: start times are recorded to the second, so which came first cannot be told"
            ))
            .next("give the change time to the sub-second (record it before the apply with T=$(date -u +%FT%T.%3NZ) and pass --since \"$T\"), or state what the template must show (--image, -f, --expect-env, --expect-secret-ref) so the running template decides");
        }
        match (self.running, self.earliest_after) {
            (0, _) | (_, None) => Finding::new(
                Check::PodRestarted,
                Status::Fail,
                "no running container",
                expected,
            )
            .source(
                SourceRef::objects(ResourceKind::Pod, w.namespace)
                    .field(".status.containerStatuses"),
            )
            .detail(format!(
                "no container of {} is running, so nothing runs the change",
                w.source()
            ))
            .next(
                Suggestion::text("see why the pods are not running: ").command(w.kubectl_pods(&[])),
            ),
            (n, Some((pod, container, earliest))) => {
                let detail = match (self.ties_decided, &tie.shown_by) {
                    (0, _) | (_, None) => "every serving container started after the change, so it runs what the change put in place".to_string(),
                    (ties, Some(shown)) => format!(
                        "every serving container started after the change; {ties} started in the change's own second and count as after it, as their pods are of the current revision and {shown}"
                    ),
                };
                Finding::new(
                    Check::PodRestarted,
                    Status::Pass,
                    format!("{n} serving container(s), earliest started {earliest}"),
                    expected,
                )
                .source(source_of(&pod, &container))
                .detail(detail)
            }
        }
    }
}
