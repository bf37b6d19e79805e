//! The rollout checks: the controller has seen the newest spec (`observed_generation`) and has
//! finished rolling it out (`rollout_complete`), for each kind's update strategy.

use super::{verify_again, Finding};
use crate::kinds::workload::{Revision, Workload};
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
                "{} has not processed generation {g} yet; its status describes generation {o}",
                w.kind.actor().name
            ))
            .next(
                Suggestion::text(format!("wait for {} (", w.kind.actor().name))
                    .command(verify_again(w.kind.cli_name(), w.namespace, w.name))
                    .then("); if it never catches up, check that it runs"),
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
    let progress = w.status.progress(w);
    let (counts, complete) = (progress.counts, progress.complete);
    let expected = "all replicas updated and available".to_string();
    if let Some((failure, next)) = progress.stuck {
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
            .detail(format!(
                "the rollout has not finished: {} to every replica yet",
                w.kind.actor().has_not()
            ))
            .next(
                Suggestion::text("wait for the rollout (")
                    .command(verify_again(w.kind.cli_name(), w.namespace, w.name))
                    .then(")"),
            )
    }
}
