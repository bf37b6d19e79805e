//! `--wait`'s judge between snapshots: only the targets a watch event touched are judged
//! again, the others keep their reports. Pure, as [`super::judge`] is, and equal to it: a
//! touched object that maps to no target (or to something other than a workload, its pods,
//! ReplicaSets or ControllerRevisions) re-judges everything, and a Helm or GitOps target is
//! always judged whole. What settles a wait (a workload's final failure) is kept per target the
//! same way. A caller that ends a wait on it confirms with the full judgement first.

use std::collections::{BTreeMap, HashMap};

use super::judge::{judge, judge_workload};
use super::settled::{workload_final, Settled};
use super::traffic::selects;
use crate::kinds::workload::Workload;
use crate::{selector, Change, Observed, Report, Target, Verdict};

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

/// The last report, kept to be updated target by target, with what settles it.
#[derive(Debug, Clone)]
pub struct Rejudge {
    /// The change as [`judgement`](super::judgement) states it (declared targets in `ns`).
    change: Change,
    ns: String,
    targets: Vec<Target>,
    report: Report,
    /// Per target, its report's index (`None`: given twice, shown once).
    slots: Vec<Option<usize>>,
    /// Per target, its workload's failure waiting will not fix, kept as its report is.
    failures: Vec<Option<String>>,
    /// A Helm or GitOps target reaches workloads through its own objects: judge it all.
    whole: bool,
    /// Target judgements made so far, for the wait's info line.
    pub judged: usize,
}

impl Rejudge {
    /// The first judgement, of everything ([`judge`]).
    pub fn new(observed: &Observed, change: &Change, targets: &[Target], ns: &str) -> Self {
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
        let mut rejudge = Rejudge {
            change: super::judge::stated(change, ns),
            ns: ns.to_string(),
            targets: targets.to_vec(),
            report: Report::new(Default::default(), Vec::new()),
            slots,
            failures: vec![None; targets.len()],
            whole: targets.iter().any(|t| !t.kind.is_workload()),
            judged: 0,
        };
        rejudge.judge_all(observed);
        rejudge
    }

    fn judge_all(&mut self, observed: &Observed) {
        // The last report goes before the next is made: at 2,000 targets a report is some
        // 20 MB, and both at once were the peak of a wait.
        self.report.targets = Vec::new();
        self.report = judge(observed, &self.change, &self.targets, &self.ns);
        if !self.whole {
            self.failures = self
                .targets
                .iter()
                .map(|t| workload_final(observed, t, t.namespace_or(&self.ns)))
                .collect();
        }
        self.judged += self.targets.len();
    }

    /// The report now, after `touched`. `targets` are the ones [`Rejudge::new`] was given
    /// unless completion found others (a selector's new workload): then all are judged again.
    pub fn update(
        &mut self,
        observed: &Observed,
        targets: &[Target],
        touched: &Touched,
    ) -> &Report {
        if targets != self.targets.as_slice() {
            let judged = self.judged;
            self.report.targets = Vec::new();
            *self = Rejudge::new(observed, &self.change, targets, &self.ns);
            self.judged += judged;
            return &self.report;
        }
        let picked = match touched {
            Touched::Objects(objects) if !self.whole => {
                pick(observed, &self.targets, &self.ns, objects)
            }
            _ => None,
        };
        let Some(picked) = picked else {
            self.judge_all(observed);
            return &self.report;
        };
        let mut reports = std::mem::take(&mut self.report.targets);
        let shown = self.slots.iter().flatten().count();
        reports.truncate(shown);
        for (i, target) in self.targets.iter().enumerate() {
            if !picked[i] {
                continue;
            }
            let namespace = target.namespace_or(&self.ns);
            self.failures[i] = workload_final(observed, target, namespace);
            let Some(slot) = self.slots[i] else { continue };
            reports[slot] = judge_workload(observed, &self.change, target, namespace, None, None);
            self.judged += 1;
        }
        reports.extend(crate::server::reports(observed, &self.change));
        self.report = Report::new(self.report.change.clone(), reports);
        self.report.date_lead_time();
        &self.report
    }

    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The targets it judges, as the last update gave them.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// What settles the report now ([`settled`](super::settled)), from the failures kept per
    /// target: the first target's in target order, as the full judgement finds it.
    pub fn settled(&self, observed: &Observed) -> Option<Settled> {
        if self.whole {
            return super::settled(
                observed,
                &self.change,
                &self.targets,
                &self.ns,
                &self.report,
            );
        }
        match self.report.verdict {
            Verdict::NotLive => self
                .failures
                .iter()
                .flatten()
                .next()
                .map(|reason| Settled::Failed(super::raw::shown(reason))),
            _ => super::settled(
                observed,
                &self.change,
                &self.targets,
                &self.ns,
                &self.report,
            ),
        }
    }
}

/// Which targets `objects` touch, or `None` for all of them. The targets are looked up by name
/// and by their workloads' selectors ([`selector::Terms`]): a snapshot of a rollout touches
/// thousands of pods, and matching each against 2,000 selectors was most of the wait's time.
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
    let mut terms = selector::Terms::default();
    for (i, w) in workloads.iter().enumerate() {
        if let Some(w) = w {
            terms.push(i, w.selector);
        }
    }
    let mut by_name: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, t) in targets.iter().enumerate() {
        by_name
            .entry((t.namespace_or(ns), t.name.as_str()))
            .or_default()
            .push(i);
    }
    // A target whose workload is not there is judged each time (it is cheap, and it may be
    // what just arrived).
    let mut picked: Vec<bool> = workloads.iter().map(Option::is_none).collect();
    for object in objects {
        let in_namespace = |i: usize| targets[i].namespace_or(ns) == object.namespace;
        let mut any = false;
        match object.kind {
            ObjectKind::Other => return None,
            ObjectKind::Workload => {
                let named = by_name.get(&(object.namespace.as_str(), object.name.as_str()));
                for &i in named.into_iter().flatten() {
                    picked[i] = true;
                    any = true;
                }
            }
            ObjectKind::Pod | ObjectKind::ReplicaSet | ObjectKind::ControllerRevision => {
                for labels in &object.labels {
                    let candidates = terms.candidates(|key| labels.get(key).map(String::as_str));
                    for i in candidates {
                        let Some(w) = &workloads[i] else { continue };
                        if in_namespace(i) && selector::matches(w.selector, Some(labels)) {
                            picked[i] = true;
                            any = true;
                        }
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
                    !sel.is_empty() && object.labels.iter().any(|l| selects(sel, Some(l)))
                })
    })
}
