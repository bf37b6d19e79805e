//! `--wait`'s judge between snapshots: only the targets a watch event touched are judged
//! again, the others keep their reports. Pure, as [`super::judge`] is, and equal to it: a
//! touched object that maps to no target (or to something other than a workload, its pods,
//! ReplicaSets or ControllerRevisions) re-judges everything, and a Helm or GitOps target is
//! always judged whole. A caller that ends a wait on it confirms with the full judgement first.

use std::collections::BTreeMap;

use super::judge::{judge, judge_workload};
use crate::kinds::workload::Workload;
use crate::{selector, Change, Observed, Report, Target};

/// What an object in a watch event was, for the targets it may concern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectKind {
    /// A workload object (Deployment, StatefulSet, …): the target of that name.
    Workload,
    Pod,
    ReplicaSet,
    ControllerRevision,
    /// Anything else (a Service, an EndpointSlice, a Node, a raw kind): every target.
    Other,
}

/// One object a watch event applied or deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub kind: ObjectKind,
    pub namespace: String,
    pub name: String,
    /// Its labels, and its old labels too when an update changed them (a deleted object
    /// carries the labels it had).
    pub labels: Vec<BTreeMap<String, String>>,
}

/// What changed since the last snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// Unknown or wide (the first snapshot, a new scope, a version tick): judge everything.
    All,
    Objects(Vec<ObjectRef>),
}

/// The last report, kept to be updated target by target.
#[derive(Debug, Clone)]
pub struct Rejudge {
    report: Report,
    /// Per target, its report's index (`None`: given twice, shown once).
    slots: Vec<Option<usize>>,
    /// A Helm or GitOps target reaches workloads through its own objects: judge it all.
    whole: bool,
    /// Target judgements made so far, for the wait's info line.
    pub judged: usize,
}

impl Rejudge {
    /// The first judgement, of everything ([`judge`]).
    pub fn new(observed: &Observed, change: &Change, targets: &[Target], ns: &str) -> Self {
        let whole = targets.iter().any(|t| !t.kind.is_workload());
        let mut seen = std::collections::BTreeSet::new();
        let mut next = 0;
        let slots = targets
            .iter()
            .map(|t| {
                seen.insert((t.kind, t.namespace_or(ns), t.name.as_str()))
                    .then(|| {
                        next += 1;
                        next - 1
                    })
            })
            .collect();
        Rejudge {
            report: judge(observed, change, targets, ns),
            slots,
            whole,
            judged: targets.len(),
        }
    }

    /// The report now, after `touched`: `observed`, `change`, `targets` and `ns` are the
    /// ones [`Rejudge::new`] was given (only `observed` moves).
    pub fn update(
        &mut self,
        observed: &Observed,
        change: &Change,
        targets: &[Target],
        ns: &str,
        touched: &Touched,
    ) -> &Report {
        let picked = match touched {
            Touched::Objects(objects) if !self.whole => pick(observed, targets, ns, objects),
            _ => None,
        };
        let Some(picked) = picked else {
            self.report = judge(observed, change, targets, ns);
            self.judged += targets.len();
            return &self.report;
        };
        let mut reports = std::mem::take(&mut self.report.targets);
        let shown = self.slots.iter().flatten().count();
        reports.truncate(shown);
        for (i, target) in targets.iter().enumerate() {
            let Some(slot) = self.slots[i].filter(|_| picked[i]) else {
                continue;
            };
            let namespace = target.namespace_or(ns);
            reports[slot] = judge_workload(observed, change, target, namespace, None, None);
            self.judged += 1;
        }
        reports.extend(crate::server::reports(observed, change));
        self.report = Report::new(self.report.change.clone(), reports);
        self.report.date_lead_time();
        &self.report
    }

    pub fn report(&self) -> &Report {
        &self.report
    }
}

/// Which targets `objects` touch, or `None` for all of them.
fn pick(
    observed: &Observed,
    targets: &[Target],
    ns: &str,
    objects: &[ObjectRef],
) -> Option<Vec<bool>> {
    let workloads: Vec<Option<Workload<'_>>> = targets
        .iter()
        .map(|t| Workload::find(observed, t.kind, t.namespace_or(ns), &t.name))
        .collect();
    // A target whose workload is not there is judged each time (it is cheap, and it may be
    // what just arrived).
    let mut picked: Vec<bool> = workloads.iter().map(Option::is_none).collect();
    for object in objects {
        let in_namespace = |i: usize| targets[i].namespace_or(ns) == object.namespace;
        let mut any = false;
        match object.kind {
            ObjectKind::Other => return None,
            ObjectKind::Workload => {
                for (i, t) in targets.iter().enumerate() {
                    if in_namespace(i) && t.name == object.name {
                        picked[i] = true;
                        any = true;
                    }
                }
            }
            ObjectKind::Pod | ObjectKind::ReplicaSet | ObjectKind::ControllerRevision => {
                for (i, w) in workloads.iter().enumerate() {
                    let Some(w) = w else { continue };
                    if in_namespace(i)
                        && object
                            .labels
                            .iter()
                            .any(|l| selector::matches(w.selector, Some(l)))
                    {
                        picked[i] = true;
                        any = true;
                    }
                }
                // A Service routing to it may route to other targets' pods too.
                if object.kind == ObjectKind::Pod && routed(observed, object) {
                    return None;
                }
            }
        }
        if !any {
            return None;
        }
    }
    Some(picked)
}

/// Whether a Service in the object's namespace selects it.
fn routed(observed: &Observed, object: &ObjectRef) -> bool {
    observed.services.iter().any(|s| {
        s.metadata.namespace.as_deref() == Some(object.namespace.as_str())
            && s.spec
                .as_ref()
                .and_then(|spec| spec.selector.as_ref())
                .is_some_and(|sel| {
                    !sel.is_empty()
                        && object
                            .labels
                            .iter()
                            .any(|l| sel.iter().all(|(k, v)| l.get(k) == Some(v)))
                })
    })
}
