//! Each revision's pods as the judgement read them — when each started, became Ready and went
//! (or is going) away, whether it serves, how it crashed — for a report that draws them
//! (`-o html`'s pod lanes). In process only: never serialized, so the JSON contract and every
//! format but the drawing are unchanged. Bounded: at most [`LANES_PER_REVISION`] pods of a
//! revision and [`REVISIONS`] revisions are kept, the rest counted.

use jiff::Timestamp;

use crate::checks::pods;
use crate::kinds::workload::{CurrentRevision, Workload};
use crate::pod::Pod;

/// The most pods of one revision kept: a 2,000-pod target draws 20 lanes and "+1980 more".
pub const LANES_PER_REVISION: usize = 20;
/// The most revisions kept (the current one first, then the newest).
pub const REVISIONS: usize = 6;

/// The pods of a workload's revisions, the current revision first. Never serialized, and not
/// part of a report's equality: two reports that say the same thing are equal whether or not
/// they carry what to draw.
#[derive(Debug, Clone, Default)]
pub struct PodLanes {
    pub revisions: Vec<RevisionLanes>,
    /// Revisions with pods not kept (past [`REVISIONS`]).
    pub more_revisions: usize,
}

impl PartialEq for PodLanes {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PodLanes {}

impl PodLanes {
    pub fn is_empty(&self) -> bool {
        self.revisions.is_empty()
    }
}

/// One revision's pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionLanes {
    /// `ReplicaSet inventory-4dxbdm5glx`, or the revision label's value (`controller-revision-hash=web-7d9c`).
    pub revision: String,
    /// Whether it is the workload's current revision (the one the change is judged on).
    pub current: bool,
    /// Oldest first, at most [`LANES_PER_REVISION`].
    pub pods: Vec<PodLane>,
    /// Pods of the revision not kept.
    pub more: usize,
}

/// One pod, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodLane {
    pub name: String,
    /// `.status.startTime`, or `.metadata.creationTimestamp` when that is not recorded.
    pub started: Option<Timestamp>,
    /// When it became Ready (its Ready condition's `lastTransitionTime`), if Ready now.
    pub ready_at: Option<Timestamp>,
    /// Ready now (whether or not the time is recorded).
    pub ready: bool,
    /// `.metadata.deletionTimestamp`: when it was asked to go.
    pub gone: Option<Timestamp>,
    /// Whether it answers requests now: it gets the workload's traffic and is Ready (or
    /// Terminating with its containers still running).
    pub serving: bool,
    /// Its containers' restarts, summed.
    pub restarts: i32,
    /// Why it is not Ready, in a few words (`app CrashLoopBackOff (5 restarts)`).
    pub not_ready: Option<String>,
    /// Whether a container is crash-looping past the threshold.
    pub crash_looping: bool,
    /// When a container last terminated (`lastState.terminated.finishedAt`, the latest).
    pub last_crash: Option<Timestamp>,
}

impl PodLane {
    fn of(pod: &Pod, serving: bool) -> PodLane {
        let status = pod.status.as_ref();
        let statuses = pods::container_statuses(pod);
        let ready = pods::is_ready(pod);
        PodLane {
            name: pods::name(pod).to_string(),
            started: status
                .and_then(|s| s.start_time.as_ref())
                .or(pod.metadata.creation_timestamp.as_ref())
                .map(|t| t.0),
            ready_at: pods::ready_since(pod).flatten(),
            ready,
            gone: pod.metadata.deletion_timestamp.as_ref().map(|t| t.0),
            serving,
            restarts: statuses.iter().map(|c| c.restart_count.max(0)).sum(),
            not_ready: if ready {
                None
            } else {
                pods::not_ready_reason(pod)
            },
            crash_looping: pods::is_crash_looping(pod),
            last_crash: statuses
                .iter()
                .filter_map(|c| {
                    c.last_state
                        .as_ref()?
                        .terminated
                        .as_ref()?
                        .finished_at
                        .as_ref()
                })
                .map(|t| t.0)
                .max(),
        }
    }
}

/// The lanes of workload `w`'s `pods` (all it selects, of every revision), grouped by the
/// revision label of `current`.
pub(crate) fn collect(w: &Workload, current: &CurrentRevision, all: &[&Pod]) -> PodLanes {
    let routed = w.routed_pods(all);
    let routed = |p: &Pod| routed.iter().any(|r| std::ptr::eq(*r, p));
    // revision key → (name, pods)
    let mut groups: Vec<(String, String, Vec<&Pod>)> = Vec::new();
    for pod in all {
        let key = pods::label(pod, current.label)
            .unwrap_or_default()
            .to_string();
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, members)) => members.push(pod),
            None => groups.push((key.clone(), revision_name(pod, current.label), vec![pod])),
        }
    }
    let newest = |members: &[&Pod]| {
        members
            .iter()
            .filter_map(|p| PodLane::of(p, false).started)
            .max()
    };
    // The current revision first, then the newest.
    groups.sort_by(|a, b| {
        let current_first = (b.0 == current.hash).cmp(&(a.0 == current.hash));
        current_first
            .then_with(|| newest(&b.2).cmp(&newest(&a.2)))
            .then_with(|| a.1.cmp(&b.1))
    });
    let more_revisions = groups.len().saturating_sub(REVISIONS);
    let revisions = groups
        .into_iter()
        .take(REVISIONS)
        .map(|(key, revision, members)| {
            let mut lanes: Vec<PodLane> = members
                .iter()
                .map(|p| PodLane::of(p, routed(p) && pods::is_serving(p)))
                .collect();
            lanes.sort_by(|a, b| a.started.cmp(&b.started).then_with(|| a.name.cmp(&b.name)));
            let more = lanes.len().saturating_sub(LANES_PER_REVISION);
            lanes.truncate(LANES_PER_REVISION);
            RevisionLanes {
                revision,
                current: key == current.hash,
                pods: lanes,
                more,
            }
        })
        .collect();
    PodLanes {
        revisions,
        more_revisions,
    }
}

/// The revision a pod belongs to, by name: its owning ReplicaSet, or its revision label.
fn revision_name(pod: &Pod, label: &str) -> String {
    let owner = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == "ReplicaSet");
    match (owner, pods::label(pod, label)) {
        (Some(o), _) => format!("ReplicaSet {}", o.name),
        (None, Some(hash)) => format!("{label}={hash}"),
        (None, None) => format!("no {label} label"),
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::judge;
    use crate::{Change, ExpectedImage, Observed, Target, TargetKind};

    fn crash_loop() -> crate::TargetReport {
        let observed = Observed::of_story("new-pod-crashloopbackoff-old-pods-serving");
        let change = Change {
            since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
            images: vec![ExpectedImage::parse("ghcr.io/acme/inventory:1.4.0").expect("image")],
            ..Change::default()
        };
        let target = Target::new(TargetKind::Deployment, None, "inventory");
        let report = judge(&observed, &change, &[target], "apps");
        report.targets.into_iter().next().expect("one target")
    }

    /// The judge keeps each revision's pods: the new one crash-looping and not serving, the
    /// old ones Ready and still serving, with their times as read.
    #[test]
    fn the_pods_are_kept_per_revision() {
        let report = crash_loop();
        let revisions = &report.pods.revisions;
        let names: Vec<(&str, bool)> = revisions
            .iter()
            .map(|r| (r.revision.as_str(), r.current))
            .collect();
        assert_eq!(
            names,
            [
                ("ReplicaSet inventory-4dxbdm5glx", true),
                ("ReplicaSet inventory-8sktb26vtc", false)
            ]
        );
        let new = &revisions[0].pods;
        assert!(!new.is_empty());
        for pod in new {
            assert!(pod.name.starts_with("inventory-4dxbdm5glx-"), "{pod:?}");
            assert!(pod.crash_looping && !pod.ready && !pod.serving, "{pod:?}");
            assert!(pod.restarts >= 3, "{pod:?}");
            assert!(
                pod.not_ready
                    .as_deref()
                    .is_some_and(|r| r.contains("CrashLoopBackOff")),
                "{pod:?}"
            );
        }
        let old = &revisions[1].pods;
        assert!(!old.is_empty());
        for pod in old {
            assert!(pod.ready && pod.serving && pod.gone.is_none(), "{pod:?}");
            assert!(pod.ready_at.is_some() && pod.started.is_some(), "{pod:?}");
        }
        assert_eq!(
            old[0].started,
            Some("2026-07-08T14:22:19Z".parse().expect("time"))
        );
        assert_eq!(
            old[0].ready_at,
            Some("2026-07-08T14:22:31Z".parse().expect("time"))
        );
    }

    /// A revision of many pods keeps the first [`super::LANES_PER_REVISION`] and counts the rest.
    #[test]
    fn a_revision_of_many_pods_is_capped() {
        let mut observed = Observed::of_story("new-pod-crashloopbackoff-old-pods-serving");
        let template = observed
            .pods
            .iter()
            .find(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("inventory-8sktb26vtc-"))
            })
            .map(|p| (**p).clone())
            .expect("an old pod");
        for i in 0..30 {
            let mut pod = template.clone();
            pod.metadata.name = Some(format!("inventory-8sktb26vtc-x{i:02}"));
            pod.metadata.uid = Some(format!("uid-x{i:02}"));
            observed.pods.push(std::sync::Arc::new(pod));
        }
        let change = Change {
            since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
            ..Change::default()
        };
        let target = Target::new(TargetKind::Deployment, None, "inventory");
        let report = judge(&observed, &change, &[target], "apps");
        let old = &report.targets[0].pods.revisions[1];
        assert_eq!(old.pods.len(), super::LANES_PER_REVISION);
        let all = observed
            .pods
            .iter()
            .filter(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("inventory-8sktb26vtc-"))
            })
            .count();
        assert_eq!(old.more, all - super::LANES_PER_REVISION);
    }
}
