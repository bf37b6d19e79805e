//! `pod_restarted`: every serving pod started after the change (a rollout that never
//! restarted anything proves nothing).

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;

use super::workload::Workload;
use super::{pods, Finding};
use crate::{Change, Check, Status};

pub(crate) fn pod_restarted(
    w: &Workload,
    change: &Change,
    pods: &[&Pod],
    readable: &Result<(), (String, String)>,
) -> Finding {
    let Some(since) = change.since else {
        return Finding::new(Check::PodRestarted, Status::Unknown, "not compared", "started after the change")
            .source(format!("{}/Pod .status.containerStatuses[].state.running.startedAt", w.namespace))
            .detail("no change time was given, so whether the pods started after the change cannot be told")
            .next("give the change time: --since 2026-07-12T10:00:00Z, or --commit SHA (its committer time, read from --repo)");
    };
    let expected = format!("after {since}");
    if let Err((why, next)) = readable {
        return Finding::new(
            Check::PodRestarted,
            Status::Unknown,
            "pods not read",
            expected,
        )
        .source(format!("{}/Pod", w.namespace))
        .detail(why.clone())
        .next(next.clone());
    }
    Starts::of(pods, since).judge(w, expected)
}

/// The serving containers' start times against the change time.
#[derive(Default)]
struct Starts {
    /// (pod, container, started) of each that started at or before the change.
    before: Vec<(String, String, Timestamp)>,
    /// (pod, container, what is missing): evidence never read is never a pass.
    unreadable: Vec<(String, String, &'static str)>,
    /// The earliest start after the change: the pod closest to not having restarted.
    earliest_after: Option<(Timestamp, String, String)>,
    /// Running containers seen.
    running: usize,
}

impl Starts {
    fn of(pods: &[&Pod], since: Timestamp) -> Starts {
        let mut starts = Starts::default();
        for pod in pods.iter().filter(|p| pods::is_serving(p)) {
            starts.add(pod, since);
        }
        starts
    }

    fn add(&mut self, pod: &Pod, since: Timestamp) {
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
            match started {
                None => self.unreadable.push((
                    name.clone(),
                    c.name.clone(),
                    "is running but its startedAt is missing",
                )),
                Some(t) if t <= since => self.before.push((name.clone(), c.name.clone(), t)),
                Some(t) => {
                    if self.earliest_after.as_ref().is_none_or(|(e, _, _)| t < *e) {
                        self.earliest_after = Some((t, name.clone(), c.name.clone()));
                    }
                }
            }
        }
    }

    /// A container that started before the change fails it; one whose start is not recorded
    /// makes it unknown; no running container fails it; else it passes.
    fn judge(self, w: &Workload, expected: String) -> Finding {
        let source_of = |pod: &str, container: &str| {
            format!(
                "{}/Pod/{pod} .status.containerStatuses[{container}].state.running.startedAt",
                w.namespace
            )
        };
        if let Some((pod, container, started)) = self.before.iter().min_by_key(|(_, _, t)| *t) {
            let others = if self.before.len() > 1 {
                format!(" (and {} more container(s))", self.before.len() - 1)
            } else {
                String::new()
            };
            return Finding::new(
                Check::PodRestarted,
                Status::Fail,
                format!("started {started}{others}"),
                expected,
            )
            .source(source_of(pod, container))
            .detail(format!(
                "pod {pod} started before the change, so it runs configuration read before the change"
            ))
            .next(format!(
                "restart the workload so its pods read the change: kubectl -n {} rollout restart {}/{}",
                w.namespace, w.kind, w.name
            ));
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
                if self.unreadable.len() > 1 {
                    format!(" (and {} more)", self.unreadable.len() - 1)
                } else {
                    String::new()
                }
            ))
            .next(format!(
                "read the pods again (kubectl -n {} get pods -l {} -o yaml): a pod's status records each container's start once the kubelet reports it",
                w.namespace,
                crate::selector::describe(w.selector)
            ));
        }
        match (self.running, self.earliest_after) {
            (0, _) | (_, None) => Finding::new(
                Check::PodRestarted,
                Status::Fail,
                "no running container",
                expected,
            )
            .source(format!("{}/Pod .status.containerStatuses", w.namespace))
            .detail(format!(
                "no container of {} is running, so nothing runs the change",
                w.source()
            ))
            .next(format!(
                "see why the pods are not running: kubectl -n {} get pods -l {}",
                w.namespace,
                crate::selector::describe(w.selector)
            )),
            (n, Some((earliest, pod, container))) => {
                Finding::new(Check::PodRestarted, Status::Pass, format!("{n} serving container(s), earliest started {earliest}"), expected)
                    .source(source_of(&pod, &container))
                    .detail("every serving container started after the change, so it runs what the change put in place")
            }
        }
    }
}
