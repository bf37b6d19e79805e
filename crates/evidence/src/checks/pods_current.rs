//! `pods_current`: every serving pod is of the current revision, and no old pod still serves.

use k8s_openapi::api::core::v1::Pod;

use super::workload::{Revision, Workload};
use super::{pods, verify_again, Finding};
use crate::{Check, Status};

pub(crate) fn pods_current(
    w: &Workload,
    revision: &Revision,
    pods: &[&Pod],
    readable: &Result<(), (String, String)>,
) -> Finding {
    let expected = match revision {
        Revision::Current(c) => format!("every serving pod on {}", c.describe),
        _ => "every serving pod on the current revision".to_string(),
    };
    let source = match revision {
        Revision::Current(c) => format!("{}/Pod .metadata.labels[{}]", w.namespace, c.label),
        _ => format!("{} revisions", w.source()),
    };
    let current = match revision {
        Revision::Current(c) => c,
        Revision::NotCreated(why) => {
            return Finding::new(Check::PodsCurrent, Status::Fail, "no object for the current revision", expected)
                .source(source)
                .detail(format!("{why}; every pod that serves still runs an earlier template"))
                .next(format!(
                    "check the {} controller is running and can act on {} (kubectl -n {} describe {}/{})",
                    w.kind.kind_name(),
                    w.source(),
                    w.namespace,
                    w.kind,
                    w.name
                ));
        }
        Revision::Unknown(why) => {
            return Finding::new(
                Check::PodsCurrent,
                Status::Unknown,
                "current revision unknown",
                expected,
            )
            .source(source)
            .detail(why.clone())
            .next(why.clone());
        }
    };
    // Read from the spec alone: no pod needs to be seen to know nothing runs the change.
    if w.desired == Some(0) {
        return Finding::new(
            Check::PodsCurrent,
            Status::Fail,
            "0 replicas desired",
            expected,
        )
        .source(format!("{} .spec.replicas", w.source()))
        .detail("the workload is scaled to zero: no pod runs the change")
        .next(format!(
            "scale it up (kubectl -n {} scale {}/{} --replicas=1) if it should serve",
            w.namespace, w.kind, w.name
        ));
    }
    if let Err((why, next)) = readable {
        return Finding::new(
            Check::PodsCurrent,
            Status::Unknown,
            "pods not read",
            expected,
        )
        .source(source)
        .detail(why.clone())
        .next(next.clone());
    }
    let (on_current, old): (Vec<&Pod>, Vec<&Pod>) =
        pods.iter().partition(|p| current.is_current(p));
    let old_serving: Vec<&&Pod> = old.iter().filter(|p| pods::is_serving(p)).collect();
    let current_ready: Vec<&&Pod> = on_current
        .iter()
        .filter(|p| pods::is_ready(p) && !pods::is_terminating(p))
        .collect();
    let not_ready: Vec<String> = on_current
        .iter()
        .filter(|p| !pods::is_ready(p))
        .map(|p| match pods::not_ready_reason(p) {
            Some(r) => format!("{} ({r})", pods::name(p)),
            None => pods::name(p).to_string(),
        })
        .collect();
    let observed = format!(
        "{}/{} Ready on the current revision, {} old pod(s) serving",
        current_ready.len(),
        w.desired.map_or_else(|| "?".to_string(), |d| d.to_string()),
        old_serving.len()
    );
    let not_ready_note = if not_ready.is_empty() {
        String::new()
    } else {
        format!("; new pods not Ready: {}", not_ready.join(", "))
    };
    if !old_serving.is_empty() {
        let names: Vec<String> = old_serving
            .iter()
            .map(|p| {
                let rev = pods::label(p, current.label).unwrap_or("no revision label");
                let state = if pods::is_terminating(p) {
                    "Terminating, still running"
                } else {
                    "Ready"
                };
                format!("{} ({rev}, {state})", pods::name(p))
            })
            .collect();
        let next = if not_ready.is_empty() {
            format!(
                "wait for the rollout to replace them ({})",
                verify_again(w.kind.cli_name(), w.namespace, w.name)
            )
        } else {
            format!(
                "see why the new pods are not Ready: kubectl -n {} describe pod {}",
                w.namespace,
                not_ready[0].split(' ').next().unwrap_or_default()
            )
        };
        return Finding::new(Check::PodsCurrent, Status::Fail, observed, expected)
            .source(source)
            .detail(format!(
                "pods of an old revision still serve: {}{not_ready_note}",
                names.join(", ")
            ))
            .next(next);
    }
    if current_ready.is_empty() {
        return Finding::new(Check::PodsCurrent, Status::Fail, observed, expected)
            .source(source)
            .detail(format!(
                "no pod of the current revision is Ready{not_ready_note}"
            ))
            .next(match not_ready.first() {
                Some(p) => format!(
                    "see why: kubectl -n {} describe pod {}",
                    w.namespace,
                    p.split(' ').next().unwrap_or_default()
                ),
                None => format!(
                    "check why {} has no pods: kubectl -n {} describe {}/{}",
                    w.source(),
                    w.namespace,
                    w.kind,
                    w.name
                ),
            });
    }
    Finding::new(Check::PodsCurrent, Status::Pass, observed, expected)
        .source(source)
        .detail(format!(
            "every serving pod belongs to {}{not_ready_note}",
            current.describe
        ))
}
