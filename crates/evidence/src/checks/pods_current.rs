//! `pods_current`: every serving pod is of the current revision, and no old pod still serves.

use crate::pod::Pod;

use super::{pods, verify_again, Finding};
use crate::kinds::workload::Routed;
use crate::kinds::workload::{CurrentRevision, Revision, Workload};
use crate::suggestion::{Command, Suggestion};
use crate::{Check, ResourceKind, SourceRef, Status};

pub(crate) fn pods_current(
    w: &Workload,
    revision: &Revision,
    pods: &[&Pod],
    readable: &Result<(), (String, Suggestion)>,
) -> Finding {
    let expected = match revision {
        Revision::Current(c) => format!("every serving pod on {}", c.describe),
        _ => "every serving pod on the current revision".to_string(),
    };
    let source = match revision {
        Revision::Current(c) => SourceRef::objects(ResourceKind::Pod, w.namespace)
            .field(format!(".metadata.labels[{}]", c.label)),
        _ => w.source().field("revisions"),
    };
    let current = match revision {
        Revision::Current(c) => c,
        Revision::NotCreated(why) => return not_created(w, why, expected, source),
        Revision::Unknown(why, next) => {
            return Finding::new(
                Check::PodsCurrent,
                Status::Unknown,
                "current revision unknown",
                expected,
            )
            .source(source)
            .detail(why.clone())
            .next(
                next.clone()
                    .unwrap_or_else(|| Suggestion::text(why.clone())),
            );
        }
    };
    if let Some(finding) = without_pods(w, readable, &expected, source.clone()) {
        return finding;
    }
    let census = Census::of(current, pods, w.status.routed());
    census.judge(w, current, expected, source)
}

/// The controller has not created the current revision's object: every serving pod still
/// runs an earlier template.
fn not_created(w: &Workload, why: &str, expected: String, source: SourceRef) -> Finding {
    Finding::new(
        Check::PodsCurrent,
        Status::Fail,
        "no object for the current revision",
        expected,
    )
    .source(source)
    .detail(format!(
        "{why}; every pod that serves still runs an earlier template"
    ))
    .next(
        Suggestion::text(format!(
            "check {} is running and can act on {} (",
            w.kind.actor().name,
            w.source(),
        ))
        .command(w.kubectl(&["describe"], &[]))
        .then(")"),
    )
}

/// What is known before any pod is looked at: scaled to zero (from the spec alone, nothing runs
/// the change), or the pods could not be read.
fn without_pods(
    w: &Workload,
    readable: &Result<(), (String, crate::Suggestion)>,
    expected: &str,
    source: SourceRef,
) -> Option<Finding> {
    if w.desired == Some(0) {
        return Some(
            Finding::new(
                Check::PodsCurrent,
                Status::Fail,
                "0 replicas desired",
                expected,
            )
            .source(w.source().field(".spec.replicas"))
            .detail("the workload is scaled to zero: no pod runs the change")
            .next(
                Suggestion::text("scale it up (")
                    .command(w.kubectl(&["scale"], &["--replicas=1"]))
                    .then(") if it should serve"),
            ),
        );
    }
    let Err((why, next)) = readable else {
        return None;
    };
    Some(
        Finding::new(
            Check::PodsCurrent,
            Status::Unknown,
            "pods not read",
            expected,
        )
        .source(source)
        .detail(why.clone())
        .next(next.clone()),
    )
}

/// The pods counted against the current revision.
struct Census<'a> {
    /// Ready, not terminating, on the current revision.
    current_ready: usize,
    /// Of an older revision and still serving.
    old_serving: Vec<&'a Pod>,
    /// On the current revision but not Ready: `name (reason)`.
    not_ready: Vec<String>,
    /// Old pods that would serve but the workload routes no traffic to (an Argo Rollout's
    /// old ReplicaSet under `scaleDownDelaySeconds`).
    idle: usize,
    /// Where the workload routes traffic, when it decides that.
    routed: Option<Routed>,
}

impl<'a> Census<'a> {
    fn of(current: &CurrentRevision, pods: &[&'a Pod], routed: Option<Routed>) -> Census<'a> {
        let (on_current, old): (Vec<&Pod>, Vec<&Pod>) =
            pods.iter().partition(|p| current.is_current(p));
        let (old_routed, idle): (Vec<&Pod>, Vec<&Pod>) = old
            .into_iter()
            .filter(|p| pods::is_serving(p))
            .partition(|p| {
                routed
                    .as_ref()
                    .is_none_or(|r| r.serves(pods::label(p, r.label)))
            });
        Census {
            idle: idle.len(),
            current_ready: on_current
                .iter()
                .filter(|p| pods::is_ready(p) && !pods::is_terminating(p))
                .count(),
            old_serving: old_routed,
            not_ready: on_current
                .iter()
                .filter(|p| !pods::is_ready(p))
                .map(|p| match pods::not_ready_reason(p) {
                    Some(r) => format!("{} ({r})", pods::name(p)),
                    None => pods::name(p).to_string(),
                })
                .collect(),
            routed,
        }
    }

    /// Old pods still serving fail it; so does no Ready pod of the current revision.
    fn judge(
        &self,
        w: &Workload,
        current: &CurrentRevision,
        expected: String,
        source: SourceRef,
    ) -> Finding {
        let mut observed = format!(
            "{}/{} Ready on the current revision, {} old pod(s) serving",
            self.current_ready,
            w.desired.map_or_else(|| "?".to_string(), |d| d.to_string()),
            self.old_serving.len()
        );
        if let Some(routed) = &self.routed {
            let routes: Vec<String> = routed
                .weights
                .iter()
                .map(|(hash, weight)| format!("{hash} {weight}%"))
                .collect();
            observed.push_str(&format!(
                ", {} old pod(s) idle; traffic by {}: {}",
                self.idle,
                routed.source.trim_start_matches('.'),
                routes.join(", ")
            ));
        }
        let not_ready_note = if self.not_ready.is_empty() {
            String::new()
        } else {
            format!("; new pods not Ready: {}", self.not_ready.join(", "))
        };
        if !self.old_serving.is_empty() {
            return Finding::new(Check::PodsCurrent, Status::Fail, observed, expected)
                .source(source)
                .detail(format!(
                    "pods of an old revision still serve: {}{not_ready_note}",
                    self.old_pods(current).join(", ")
                ))
                .next(self.old_pods_next_step(w));
        }
        if self.current_ready == 0 {
            return Finding::new(Check::PodsCurrent, Status::Fail, observed, expected)
                .source(source)
                .detail(format!(
                    "no pod of the current revision is Ready{not_ready_note}"
                ))
                .next(match self.not_ready.first() {
                    Some(p) => Suggestion::text("see why: ").command(Command::kubectl([
                        "-n",
                        w.namespace,
                        "describe",
                        "pod",
                        p.split(' ').next().unwrap_or_default(),
                    ])),
                    None => Suggestion::text(format!("check why {} has no pods: ", w.source()))
                        .command(w.kubectl(&["describe"], &[])),
                });
        }
        Finding::new(Check::PodsCurrent, Status::Pass, observed, expected)
            .source(source)
            .detail(format!(
                "every serving pod belongs to {}{not_ready_note}",
                current.describe
            ))
    }

    /// `name (revision, state)` of each old pod still serving.
    fn old_pods(&self, current: &CurrentRevision) -> Vec<String> {
        self.old_serving
            .iter()
            .map(|p| {
                let rev = pods::label(p, current.label).unwrap_or("no revision label");
                let state = if pods::is_terminating(p) {
                    "Terminating, still running"
                } else {
                    "Ready"
                };
                let share = self
                    .routed
                    .as_ref()
                    .and_then(|r| r.weights.get(pods::label(p, r.label)?))
                    .map(|w| format!(", its revision gets {w}% of the traffic"))
                    .unwrap_or_default();
                format!("{} ({rev}, {state}{share})", pods::name(p))
            })
            .collect()
    }

    /// Wait for the rollout to replace the old pods, or, when the new ones are not Ready, see why.
    fn old_pods_next_step(&self, w: &Workload) -> Suggestion {
        match self.not_ready.first() {
            None => Suggestion::text("wait for the rollout to replace them (")
                .command(verify_again(w.kind.cli_name(), w.namespace, w.name))
                .then(")"),
            Some(p) => Suggestion::text("see why the new pods are not Ready: ").command(
                Command::kubectl([
                    "-n",
                    w.namespace,
                    "describe",
                    "pod",
                    p.split(' ').next().unwrap_or_default(),
                ]),
            ),
        }
    }
}
