//! What a pod's status says about whether it serves, and since when.

use crate::pod::{ContainerStatus, Pod};
use jiff::Timestamp;

pub fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or("?")
}

pub fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// When a Ready pod became Ready: its Ready condition's `lastTransitionTime`. `None` when the
/// pod is not Ready; `Some(None)` when it is but the time is not recorded.
pub fn ready_since(pod: &Pod) -> Option<Option<Timestamp>> {
    let ready = pod
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?;
    Some(ready.last_transition_time.as_ref().map(|t| t.0))
}

pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

pub fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default()
}

/// A running container: the process that serves, whatever the pod's conditions say.
pub fn running_since(status: &ContainerStatus) -> Option<Option<Timestamp>> {
    let running = status.state.as_ref()?.running.as_ref()?;
    Some(running.started_at.as_ref().map(|t| t.0))
}

/// The names of the containers the pod's spec declares (not init or ephemeral ones).
pub fn declared_containers(pod: &Pod) -> impl Iterator<Item = &str> {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| c.name.as_str())
}

pub fn has_running_container(pod: &Pod) -> bool {
    container_statuses(pod)
        .iter()
        .any(|c| running_since(c).is_some())
}

/// Whether the pod is (or may still be) answering requests. A Terminating pod whose
/// containers still run keeps serving through its grace period; `kubectl rollout status`
/// does not count it (kubernetes/kubectl#1628), we do.
pub fn is_serving(pod: &Pod) -> bool {
    let finished = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|p| p == "Succeeded" || p == "Failed");
    !finished && (is_ready(pod) || (is_terminating(pod) && has_running_container(pod)))
}

/// Why a pod is not Ready, in a few words: `app CrashLoopBackOff (5 restarts)`.
pub fn not_ready_reason(pod: &Pod) -> Option<String> {
    let reasons: Vec<String> = container_statuses(pod)
        .iter()
        .filter(|c| !c.ready)
        .map(|c| {
            let waiting = c.state.as_ref().and_then(|s| s.waiting.as_ref());
            let terminated = c.state.as_ref().and_then(|s| s.terminated.as_ref());
            let reason = waiting
                .and_then(|w| w.reason.clone())
                .or_else(|| terminated.and_then(|t| t.reason.clone()))
                .unwrap_or_else(|| {
                    if c.state.as_ref().and_then(|s| s.running.as_ref()).is_some() {
                        "running, not ready".to_string()
                    } else {
                        "not running".to_string()
                    }
                });
            if c.restart_count > 0 {
                format!("{} {reason} ({} restarts)", c.name, c.restart_count)
            } else {
                format!("{} {reason}", c.name)
            }
        })
        .collect();
    if reasons.is_empty() {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        return phase.map(|p| format!("phase {p}"));
    }
    Some(reasons.join(", "))
}

/// Restarts at or past which a waiting container counts as crash-looping for good.
pub const CRASH_LOOP_RESTARTS: i32 = 3;

/// A container stuck in CrashLoopBackOff past the threshold: waiting will not fix it.
pub fn is_crash_looping(pod: &Pod) -> bool {
    crash_looping_container(pod).is_some()
}

/// The name of the first container of `pod` stuck in CrashLoopBackOff past the threshold.
pub fn crash_looping_container(pod: &Pod) -> Option<&str> {
    container_statuses(pod)
        .iter()
        .find(|c| {
            c.restart_count >= CRASH_LOOP_RESTARTS
                && c.state
                    .as_ref()
                    .and_then(|s| s.waiting.as_ref())
                    .and_then(|w| w.reason.as_deref())
                    == Some("CrashLoopBackOff")
        })
        .map(|c| c.name.as_str())
}
