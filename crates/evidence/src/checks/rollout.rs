//! The rollout checks: the controller has seen the newest spec (`observed_generation`) and has
//! finished rolling it out (`rollout_complete`), for each kind's update strategy.

use super::workload::{Revision, UpdateStrategy, Workload, WorkloadObject};
use super::{verify_again, Finding};
use crate::suggestion::Suggestion;
use crate::{Check, Status};

pub(crate) fn observed_generation(w: &Workload) -> Finding {
    let source = w.source().field(".status.observedGeneration");
    let expected = match w.generation {
        Some(g) => format!(">= generation {g}"),
        None => ">= metadata.generation".to_string(),
    };
    match (w.generation, w.observed_generation) {
        (Some(g), Some(o)) if o >= g => Finding::new(Check::ObservedGeneration, Status::Pass, format!("observedGeneration {o}"), expected)
            .source(source)
            .detail("the controller has processed the current spec"),
        (Some(g), Some(o)) => Finding::new(Check::ObservedGeneration, Status::Fail, format!("observedGeneration {o}"), expected)
            .source(source)
            .detail(format!(
                "the controller has not processed generation {g} yet; its status describes generation {o}"
            ))
            .next(
                Suggestion::text("wait for the controller (")
                    .command(verify_again(w.kind.cli_name(), w.namespace, w.name))
                    .then("); if it never catches up, check the controller manager"),
            ),
        _ => Finding::new(Check::ObservedGeneration, Status::Unknown, "not recorded", expected)
            .source(source)
            .detail("metadata.generation or status.observedGeneration is missing, so whether the controller saw the spec is unknown")
            .next(
                Suggestion::text("read the live object (")
                    .command(w.kubectl(&["get"], &["-o", "yaml"]))
                    .then("): a dump without status cannot show it"),
            ),
    }
}

pub(crate) fn rollout_complete(w: &Workload, revision: &Revision) -> Finding {
    let source = w.source().field(".status");
    if w.generation_caught_up() == Some(false) {
        return Finding::new(
            Check::RolloutComplete,
            Status::Unknown,
            "status describes an earlier spec",
            "rollout of the current generation",
        )
        .source(source)
        .detail(
            "the replica counts in status were computed before the controller saw the current spec",
        );
    }
    if let Revision::Current(current) = revision {
        if let Some(stale) = &current.status_stale {
            return Finding::new(Check::RolloutComplete, Status::Unknown, stale.clone(), "the new revision's status caught up")
                .source(source)
                .detail("the new ReplicaSet's status was read before its controller caught up, so its counts describe its previous spec");
        }
    }
    let desired = w.desired;
    let (counts, complete, failure) = match w.object {
        WorkloadObject::Deployment(d) => {
            let s = d.status.clone().unwrap_or_default();
            let desired = desired.unwrap_or(1);
            let updated = s.updated_replicas.unwrap_or(0);
            let total = s.replicas.unwrap_or(0);
            let available = s.available_replicas.unwrap_or(0);
            let deadline = s
                .conditions
                .iter()
                .flatten()
                .find(|c| {
                    c.type_ == "Progressing"
                        && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
                })
                .map(|c| {
                    c.message
                        .clone()
                        .unwrap_or_else(|| "ProgressDeadlineExceeded".into())
                });
            (
                format!("{updated}/{desired} updated, {total} total, {available} available"),
                updated == desired && total == desired && available == desired,
                deadline.map(|m| format!("ProgressDeadlineExceeded: {m}")),
            )
        }
        WorkloadObject::StatefulSet(s) => {
            let st = s.status.clone().unwrap_or_default();
            let desired = desired.unwrap_or(1);
            let updated = st.updated_replicas.unwrap_or(0);
            let ready = st.ready_replicas.unwrap_or(0);
            // The controller moves currentRevision to updateRevision only for RollingUpdate
            // (completeRollingUpdate): under OnDelete it stays on the first revision forever,
            // so there every replica updated and ready is the whole rollout.
            let same_revision = w.update_strategy == UpdateStrategy::OnDelete
                || (st.current_revision.is_some() && st.current_revision == st.update_revision);
            let strategy_note = match w.update_strategy {
                UpdateStrategy::OnDelete if updated < desired => Some(
                    "updateStrategy OnDelete: the controller replaces a pod only when it is deleted, so old pods stay forever".to_string(),
                ),
                UpdateStrategy::Partitioned(p) if updated < desired => Some(format!(
                    "rollingUpdate.partition {p}: pods with ordinal < {p} stay on the old revision until the partition is lowered"
                )),
                _ => None,
            };
            (
                format!("{updated}/{desired} updated, {ready} ready, currentRevision {}, updateRevision {}",
                    st.current_revision.as_deref().unwrap_or("?"),
                    st.update_revision.as_deref().unwrap_or("?")),
                updated == desired && ready == desired && (same_revision || desired == 0),
                strategy_note,
            )
        }
        WorkloadObject::DaemonSet(d) => {
            let st = d.status.clone().unwrap_or_default();
            let desired = st.desired_number_scheduled;
            let updated = st.updated_number_scheduled.unwrap_or(0);
            let available = st.number_available.unwrap_or(0);
            let strategy_note = (w.update_strategy == UpdateStrategy::OnDelete && updated < desired).then(|| {
                "updateStrategy OnDelete: the controller replaces a pod only when it is deleted, so old pods stay forever".to_string()
            });
            (
                format!("{updated}/{desired} updated, {available} available"),
                updated == desired && available == desired,
                strategy_note,
            )
        }
    };
    let expected = "all replicas updated and available".to_string();
    if let Some(failure) = failure {
        let next = if failure.starts_with("ProgressDeadlineExceeded") {
            Suggestion::text("the rollout gave up; see why the new pods are not available: ")
                .command(w.kubectl(&["describe"], &[]))
        } else {
            Suggestion::text(format!("delete the old pods so the controller replaces them, or change the update strategy of {}", w.source()))
        };
        return Finding::new(Check::RolloutComplete, Status::Fail, counts, expected)
            .source(source)
            .detail(failure)
            .next(next);
    }
    if complete {
        Finding::new(Check::RolloutComplete, Status::Pass, counts, expected)
            .source(source)
            .detail("the controller reports the rollout complete (a status field: the pod checks below are the proof)")
    } else {
        Finding::new(Check::RolloutComplete, Status::Fail, counts, expected)
            .source(source)
            .detail("the rollout has not finished: not every replica runs the current template yet")
            .next(
                Suggestion::text("wait for the rollout (")
                    .command(verify_again(w.kind.cli_name(), w.namespace, w.name))
                    .then(")"),
            )
    }
}
