//! Why a target is not live, in the cluster's own words: the reasons its new pods give, the
//! Warning events about it since the change, opt-in log lines, and what GitOps controllers and
//! Helm recorded. Diagnostics explain; they never change a verdict. Names only, never values.

use std::collections::BTreeMap;

use crate::pod::Pod;
use jiff::Timestamp;
use serde_json::Value;

use crate::checks::raw::{condition, str_at, time_at};
use crate::kinds::workload::{revision_objects, RevisionObjects};
use crate::{Observed, ResourceKind, Target};

pub use crate::diagnostic::Diagnostic;

/// How many events a target reports at most (newest first).
pub const EVENT_CAP: usize = 10;

pub use crate::facts::Logs;

/// The diagnostics of a workload: its not-Ready pods' container and scheduling reasons (for
/// pods of any revision that are not Ready), logs when gathered, and Warning events about the
/// workload, its ReplicaSets/revisions and its pods since `since`.
pub fn workload(
    observed: &Observed,
    target: &Target,
    namespace: &str,
    since: Option<Timestamp>,
    logs: Option<&Logs>,
) -> Vec<Diagnostic> {
    let Some(w) =
        crate::kinds::workload::Workload::find(observed, target.kind, namespace, &target.name)
    else {
        return Vec::new();
    };
    let pods = w.pods(observed);
    let mut out = Vec::new();
    for pod in pods.iter().filter(|p| !crate::checks::pods::is_ready(p)) {
        out.extend(pod_reasons(namespace, pod, logs.is_some()));
        let name = pod.metadata.name.clone().unwrap_or_default();
        for ((ns, p, container), lines) in logs.into_iter().flatten() {
            if ns == namespace && *p == name {
                let mut d = Diagnostic::new(
                    "logs",
                    format!("{ns}/Pod/{p} [{container}]"),
                    "Logs",
                    &format!("last {} line(s)", lines.len()),
                );
                d.lines = lines.clone();
                out.push(d);
            }
        }
    }
    let mut names: Vec<(String, String)> =
        vec![(w.kind.kind_name().to_string(), w.name.to_string())];
    names.extend(
        pods.iter()
            .filter_map(|p| Some(("Pod".to_string(), p.metadata.name.clone()?))),
    );
    // What records its revisions is a fact of its kind's row.
    let revision_kind = target.kind.spec().revisions;
    let owned_by = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        meta.owner_references
            .iter()
            .flatten()
            .any(|r| r.name == w.name && r.kind == w.kind.kind_name())
    };
    match revision_kind.and_then(|k| revision_objects(observed, k, owned_by)) {
        Some(RevisionObjects::ReplicaSets(owned)) => names.extend(
            owned
                .into_iter()
                .filter_map(|r| Some(("ReplicaSet".into(), r.metadata.name.clone()?))),
        ),
        Some(RevisionObjects::ControllerRevisions(owned)) => names.extend(
            owned
                .into_iter()
                .filter_map(|r| Some(("ControllerRevision".into(), r.metadata.name.clone()?))),
        ),
        None => {}
    }
    out.extend(events(observed, namespace, &names, since));
    out
}

/// Which container logs `--logs` reads for a workload that is not live: each not-ready
/// container of its not-Ready pods, `previous` when it has restarted (its last run crashed).
pub fn log_requests(
    observed: &Observed,
    target: &Target,
    namespace: &str,
) -> Vec<(String, String, String, bool)> {
    let Some(w) =
        crate::kinds::workload::Workload::find(observed, target.kind, namespace, &target.name)
    else {
        return Vec::new();
    };
    w.pods(observed)
        .into_iter()
        .filter(|p| !crate::checks::pods::is_ready(p))
        .flat_map(|p| {
            let name = p.metadata.name.clone().unwrap_or_default();
            crate::checks::pods::container_statuses(p)
                .iter()
                .filter(|c| !c.ready)
                .map(move |c| {
                    (
                        namespace.to_string(),
                        name.clone(),
                        c.name.clone(),
                        c.restart_count > 0,
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Why a pod is not Ready: its containers' waiting and last-terminated reasons, and an
/// unschedulable PodScheduled condition.
///
/// A termination message is log output (`terminationMessagePolicy: FallbackToLogsOnError` puts
/// the log tail there, and a program may write anything to its message file): it is shown
/// only when `with_logs` (`--logs`), as logs are.
pub fn pod_reasons(namespace: &str, pod: &Pod, with_logs: bool) -> Vec<Diagnostic> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let mut out = Vec::new();
    let status = pod.status.as_ref();
    if let Some(c) = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False")
    {
        out.push(Diagnostic::new(
            "scheduling",
            format!("{namespace}/Pod/{name}"),
            c.reason.as_deref().unwrap_or("Unschedulable"),
            c.message.as_deref().unwrap_or_default(),
        ));
    }
    for c in status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
    {
        if c.ready {
            continue;
        }
        let object = format!("{namespace}/Pod/{name} [{}]", c.name);
        if let Some(w) = c.state.as_ref().and_then(|s| s.waiting.as_ref()) {
            let mut d = Diagnostic::new(
                "container",
                object.clone(),
                w.reason.as_deref().unwrap_or("Waiting"),
                w.message.as_deref().unwrap_or_default(),
            );
            if c.restart_count > 0 {
                d.count = Some(i64::from(c.restart_count));
            }
            out.push(d);
        }
        if let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) {
            let said = match t.message.as_deref().filter(|m| !m.trim().is_empty()) {
                Some(m) if with_logs => format!(": {m}"),
                Some(_) => " (its termination message can hold log output: --logs shows it)".into(),
                None => String::new(),
            };
            let message = format!("exit code {}{said}", t.exit_code);
            let mut d = Diagnostic::new(
                "container",
                object,
                t.reason.as_deref().unwrap_or("Terminated"),
                &message,
            );
            d.last_seen = t.finished_at.as_ref().map(|f| f.0.to_string());
            out.push(d);
        }
    }
    out
}

/// An event in either API's shape, read the same way.
struct EventView {
    kind: String,
    name: String,
    type_: String,
    reason: String,
    message: String,
    count: i64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
}

fn event_view(e: &Value) -> Option<EventView> {
    let api = str_at(e, "/apiVersion").unwrap_or_default();
    if str_at(e, "/kind") != Some("Event") {
        return None;
    }
    if api.starts_with("events.k8s.io/") {
        let last = time_at(e, "/series/lastObservedTime")
            .or_else(|| time_at(e, "/deprecatedLastTimestamp"))
            .or_else(|| time_at(e, "/eventTime"));
        Some(EventView {
            kind: str_at(e, "/regarding/kind")?.to_string(),
            name: str_at(e, "/regarding/name")?.to_string(),
            type_: str_at(e, "/type").unwrap_or_default().to_string(),
            reason: str_at(e, "/reason").unwrap_or_default().to_string(),
            message: str_at(e, "/note").unwrap_or_default().to_string(),
            count: e
                .pointer("/series/count")
                .or_else(|| e.get("deprecatedCount"))
                .and_then(Value::as_i64)
                .unwrap_or(1),
            first: time_at(e, "/deprecatedFirstTimestamp").or_else(|| time_at(e, "/eventTime")),
            last,
        })
    } else {
        Some(EventView {
            kind: str_at(e, "/involvedObject/kind")?.to_string(),
            name: str_at(e, "/involvedObject/name")?.to_string(),
            type_: str_at(e, "/type").unwrap_or_default().to_string(),
            reason: str_at(e, "/reason").unwrap_or_default().to_string(),
            message: str_at(e, "/message").unwrap_or_default().to_string(),
            count: e.get("count").and_then(Value::as_i64).unwrap_or(1),
            first: time_at(e, "/firstTimestamp").or_else(|| time_at(e, "/eventTime")),
            last: time_at(e, "/lastTimestamp").or_else(|| time_at(e, "/eventTime")),
        })
    }
}

/// Warning events about `objects` in `namespace` since `since`, folded by (object, reason,
/// message) with their counts summed, newest first, at most [`EVENT_CAP`].
pub fn events(
    observed: &Observed,
    namespace: &str,
    objects: &[(String, String)],
    since: Option<Timestamp>,
) -> Vec<Diagnostic> {
    // (object, reason, message) → (count, first seen, last seen)
    type Seen = (i64, Option<Timestamp>, Option<Timestamp>);
    let mut folded: BTreeMap<(String, String, String), Seen> = BTreeMap::new();
    for e in &observed.others {
        if str_at(e, "/metadata/namespace").unwrap_or(namespace) != namespace {
            continue;
        }
        let Some(v) = event_view(e) else { continue };
        if v.type_ != "Warning" || !objects.iter().any(|(k, n)| *k == v.kind && *n == v.name) {
            continue;
        }
        if let (Some(since), Some(last)) = (since, v.last) {
            if last < since {
                continue;
            }
        }
        let key = (
            format!("{namespace}/{}/{}", v.kind, v.name),
            v.reason,
            v.message,
        );
        let entry = folded.entry(key).or_insert((0, v.first, v.last));
        entry.0 += v.count.max(1);
        entry.1 = match (entry.1, v.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        entry.2 = match (entry.2, v.last) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    let mut out: Vec<Diagnostic> = folded
        .into_iter()
        .map(|((object, reason, message), (count, first, last))| {
            let mut d = Diagnostic::new("event", object, &reason, &message);
            d.count = Some(count);
            d.first_seen = first.map(|t| t.to_string());
            d.last_seen = last.map(|t| t.to_string());
            d
        })
        .collect();
    out.sort_by(|a, b| b.last_seen.cmp(&a.last_seen));
    out.truncate(EVENT_CAP);
    out
}

/// What a GitOps controller or Helm recorded about a target that is not live.
pub fn gitops(
    observed: &Observed,
    target: &Target,
    namespace: &str,
    since: Option<Timestamp>,
) -> Vec<Diagnostic> {
    crate::kinds::rules(target.kind).diagnose(observed, target, namespace, since)
}

/// What the controller of `target`'s object (of `resource`) recorded about it: its failed
/// conditions and attempts, an Argo CD operation's failure, and Warning events about it.
pub(crate) fn controller(
    observed: &Observed,
    resource: ResourceKind,
    target: &Target,
    namespace: &str,
    since: Option<Timestamp>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(obj) = observed.find_other(resource, namespace, &target.name) else {
        return out;
    };
    let object = format!("{namespace}/{}/{}", resource.kind_name(), target.name);
    let mut said: Vec<(String, String)> = Vec::new();
    // Promoted: a Flagger Canary's.
    for t in ["Ready", "Released", "Promoted", "Reconciling", "Stalled"] {
        if let Some(c) = condition(obj, t) {
            let bad = matches!(t, "Ready" | "Released" | "Promoted") && c.status == "False"
                || t == "Stalled" && c.status == "True";
            // Ready often repeats Released's reason and message: say it once.
            let key = (c.reason.to_string(), c.message.to_string());
            if bad && !said.contains(&key) {
                said.push(key);
                out.push(Diagnostic::new(
                    "controller",
                    object.clone(),
                    c.reason,
                    &format!("{}={}: {}", c.type_, c.status, c.message),
                ));
            }
        }
    }
    for field in ["installFailures", "upgradeFailures"] {
        if let Some(n) = obj
            .pointer(&format!("/status/{field}"))
            .and_then(Value::as_i64)
            .filter(|n| *n > 0)
        {
            let mut d = Diagnostic::new(
                "controller",
                object.clone(),
                field,
                &format!("{n} failed attempt(s)"),
            );
            d.count = Some(n);
            out.push(d);
        }
    }
    if let (Some(applied), Some(attempted)) = (
        str_at(obj, "/status/lastAppliedRevision"),
        str_at(obj, "/status/lastAttemptedRevision"),
    ) {
        if applied != attempted {
            out.push(Diagnostic::new(
                "controller",
                object.clone(),
                "RevisionNotApplied",
                &format!("attempted {attempted}, applied {applied}"),
            ));
        }
    }
    if let Some(message) = str_at(obj, "/status/operationState/message").filter(|m| !m.is_empty()) {
        let phase = str_at(obj, "/status/operationState/phase").unwrap_or("Unknown");
        if phase != "Succeeded" {
            out.push(Diagnostic::new(
                "controller",
                object.clone(),
                phase,
                message,
            ));
        }
    }
    for r in obj
        .pointer("/status/operationState/syncResult/resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let status = str_at(r, "/status").unwrap_or_default();
        if status != "Synced" && !status.is_empty() {
            let what = format!(
                "{}/{}/{}",
                str_at(r, "/namespace").unwrap_or(namespace),
                str_at(r, "/kind").unwrap_or("?"),
                str_at(r, "/name").unwrap_or("?")
            );
            out.push(Diagnostic::new(
                "controller",
                what,
                status,
                str_at(r, "/message").unwrap_or_default(),
            ));
        }
    }
    // Warning events about the GitOps object itself (UpgradeFailed, OperationCompleted, …).
    out.extend(events(
        observed,
        namespace,
        &[(resource.kind_name().to_string(), target.name.clone())],
        since,
    ));
    out
}

/// The "why" of every target of `report` that is not live, from what `observed` holds (pod
/// statuses, Warning events, with `logs` (`--logs`) the log lines read, what controllers and
/// Helm recorded). It fills `diagnostics` and nothing else: it never changes a verdict.
pub fn explain(
    report: &mut crate::Report,
    observed: &Observed,
    since: Option<Timestamp>,
    logs: bool,
) {
    for t in report
        .targets
        .iter_mut()
        .filter(|t| t.verdict != crate::Verdict::Live)
    {
        let Some(kind) = t.kind.target() else {
            continue;
        };
        let target = Target::new(kind, Some(&t.namespace), &t.name);
        t.diagnostics = if kind.is_workload() {
            // Termination messages are logs: only with --logs.
            workload(
                observed,
                &target,
                &t.namespace,
                since,
                logs.then_some(&observed.logs),
            )
        } else {
            gitops(observed, &target, &t.namespace, since)
        };
    }
}
