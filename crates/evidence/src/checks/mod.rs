//! The checks: pure functions from [`Observed`] and a [`Change`] to evidence, and the
//! verdict rules of DESIGN.md.

mod digest;
mod expect;
mod gitops;
pub(crate) mod pods;
pub(crate) mod raw;
mod release;
pub(crate) mod workload;

pub use digest::{rows as digest_rows, short as short_digest, DigestRow, RowVerdict};
pub use gitops::{followed_workloads, helmrelease_release};
pub use release::ReleaseHistory;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;

use crate::model::ChangeSummary;
use crate::{
    Change, Check, Evidence, Observed, Report, ResourceKind, Status, Target, TargetReport, Verdict,
};
use workload::{Revision, UpdateStrategy, Workload};

pub use pods::CRASH_LOOP_RESTARTS;

/// A failure waiting will not fix, for `--wait` to stop on: ProgressDeadlineExceeded, or a
/// pod of the current revision crash-looping past [`CRASH_LOOP_RESTARTS`].
pub fn final_failure(
    observed: &Observed,
    targets: &[Target],
    default_namespace: &str,
) -> Option<String> {
    targets
        .iter()
        .filter(|t| t.kind.is_workload())
        .find_map(|t| {
            let ns = t.namespace_or(default_namespace);
            let w = Workload::find(observed, t.kind, ns, &t.name)?;
            let deadline = w
                .deployment
                .and_then(|d| d.status.as_ref())
                .and_then(|s| s.conditions.as_ref())
                .into_iter()
                .flatten()
                .any(|c| {
                    c.type_ == "Progressing"
                        && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
                });
            if deadline && w.generation_caught_up() == Some(true) {
                return Some(format!("{}: ProgressDeadlineExceeded", w.source()));
            }
            let Revision::Current(current) = w.current_revision(observed) else {
                return None;
            };
            w.pods(observed)
                .into_iter()
                .find(|p| current.is_current(p) && pods::is_crash_looping(p))
                .map(|p| {
                    format!(
                        "{}: pod {} is crash-looping ({})",
                        w.source(),
                        pods::name(p),
                        pods::not_ready_reason(p).unwrap_or_default()
                    )
                })
        })
}

/// Judges every target against what was observed. `default_namespace` applies to targets
/// that did not name one.
pub fn judge(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
) -> Report {
    let reports = targets
        .iter()
        .flat_map(|t| judge_target(observed, change, t, default_namespace))
        .collect();
    Report::new(
        ChangeSummary {
            since: change.since.map(|t| t.to_string()),
            commit: change.commit.clone(),
        },
        reports,
    )
}

/// An evidence item and, when it is what stands between the target and `live`, what to do.
struct Finding {
    evidence: Evidence,
    next_step: Option<String>,
}

impl Finding {
    fn new(
        check: Check,
        status: Status,
        observed: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        Finding {
            evidence: Evidence {
                check,
                status,
                observed: observed.into(),
                expected: expected.into(),
                source: String::new(),
                detail: String::new(),
            },
            next_step: None,
        }
    }
    fn source(mut self, source: impl Into<String>) -> Self {
        self.evidence.source = source.into();
        self
    }
    fn detail(mut self, detail: impl Into<String>) -> Self {
        self.evidence.detail = detail.into();
        self
    }
    fn next(mut self, step: impl Into<String>) -> Self {
        self.next_step = Some(step.into());
        self
    }
}

/// A workload target's report; for a Helm or GitOps target, its own report followed by one
/// per workload it leads to (each marked `via` it). A Helm or GitOps target is live only when
/// its own evidence holds and every workload it leads to is live.
fn judge_target(
    observed: &Observed,
    change: &Change,
    target: &Target,
    default_namespace: &str,
) -> Vec<TargetReport> {
    let namespace = target.namespace_or(default_namespace);
    if target.kind.is_workload() {
        let findings = workload_findings(observed, change, target, namespace);
        let verdict = verdict(&findings);
        return vec![target_report(target, namespace, findings, verdict)];
    }
    let own = gitops::findings(observed, change, target, namespace);
    let via = format!("{}/{}/{}", target.kind, namespace, target.name);
    let workloads: Vec<TargetReport> = followed_workloads(observed, target, default_namespace)
        .into_iter()
        .flat_map(|w| judge_target(observed, change, &w, default_namespace))
        .map(|mut r| {
            r.via = Some(via.clone());
            r
        })
        .collect();
    let own_verdict = if own.iter().any(|f| f.evidence.status == Status::Fail) {
        Verdict::NotLive
    } else if own.iter().any(|f| f.evidence.status == Status::Unknown) {
        Verdict::Unproven
    } else {
        Verdict::Live
    };
    let mut report = target_report(target, namespace, own, own_verdict);
    if own_verdict == Verdict::Live {
        // Its own evidence is status and storage: the running pods decide.
        report.verdict = workloads
            .iter()
            .map(|w| w.verdict)
            .min()
            .unwrap_or(Verdict::Unproven);
        report.next_step = match workloads.iter().find(|w| w.verdict != Verdict::Live) {
            Some(w) => w
                .next_step
                .as_ref()
                .map(|s| format!("{} {}/{}: {s}", w.kind, w.namespace, w.name)),
            None if workloads.is_empty() => Some(format!(
                "{} leads to no Deployment, StatefulSet or DaemonSet, so no running pod can prove the change: verify the workloads that consume it directly",
                target
            )),
            None => None,
        };
    } else if let Some(worst) = workloads.iter().map(|w| w.verdict).min() {
        report.verdict = report.verdict.min(worst);
    }
    std::iter::once(report).chain(workloads).collect()
}

fn target_report(
    target: &Target,
    namespace: &str,
    findings: Vec<Finding>,
    verdict: Verdict,
) -> TargetReport {
    let next_step = if verdict == Verdict::Live {
        None
    } else {
        next_step(&findings, verdict)
    };
    TargetReport {
        kind: target.kind.kind_name().to_string(),
        namespace: namespace.to_string(),
        name: target.name.clone(),
        verdict,
        via: None,
        evidence: findings.into_iter().map(|f| f.evidence).collect(),
        next_step,
        diagnostics: Vec::new(),
    }
}

/// DESIGN.md's rule: any fail → not live; live needs artifact proof (`pods_current` and
/// `pod_restarted` passed) and nothing unknown; everything else is unproven.
fn verdict(findings: &[Finding]) -> Verdict {
    let status_of = |check| {
        findings
            .iter()
            .find(|f| f.evidence.check == check)
            .map(|f| f.evidence.status)
    };
    if findings.iter().any(|f| f.evidence.status == Status::Fail) {
        return Verdict::NotLive;
    }
    let artifact_proof = status_of(Check::PodsCurrent) == Some(Status::Pass)
        && status_of(Check::PodRestarted) == Some(Status::Pass);
    let nothing_unknown = findings
        .iter()
        .all(|f| f.evidence.status != Status::Unknown);
    if artifact_proof && nothing_unknown {
        Verdict::Live
    } else {
        Verdict::Unproven
    }
}

/// The step attached to the first failing check (or, when nothing failed, the first unknown):
/// checks are ordered cheap-to-conclusive, so the first one is the root cause.
fn next_step(findings: &[Finding], verdict: Verdict) -> Option<String> {
    let wanted = if verdict == Verdict::NotLive {
        Status::Fail
    } else {
        Status::Unknown
    };
    findings
        .iter()
        .filter(|f| f.evidence.status == wanted)
        .find_map(|f| f.next_step.clone())
        .or_else(|| findings.iter().find_map(|f| f.next_step.clone()))
}

fn workload_findings(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
) -> Vec<Finding> {
    let kind = target.kind.kind_name();
    let resource = match target.kind {
        crate::TargetKind::Deployment => ResourceKind::Deployment,
        crate::TargetKind::StatefulSet => ResourceKind::StatefulSet,
        _ => ResourceKind::DaemonSet,
    };
    let source = format!("{namespace}/{kind}/{}", target.name);
    let Some(w) = Workload::find(observed, target.kind, namespace, &target.name) else {
        let (status, detail, next) = if let Some(d) = observed.denial(namespace, resource) {
            (
                Status::Unknown,
                format!("reading it was refused: {}", d.message),
                format!(
                    "grant get on {} in {namespace} (check: kubectl auth can-i get {} -n {namespace})",
                    resource.plural(),
                    resource.plural()
                ),
            )
        } else if namespace.is_empty() && observed.is_complete(namespace, resource) {
            // `-A` found it in no namespace (the gather's ALL_NAMESPACES).
            (
                Status::Fail,
                format!(
                    "there is no {kind} named {} in any namespace (looked in every namespace: -A)",
                    target.name
                ),
                format!(
                    "check the name (kubectl get {} -A), or whether the change created it at all; --wait waits for it to appear",
                    resource.plural()
                ),
            )
        } else if observed.is_complete(namespace, resource) {
            (
                Status::Fail,
                format!(
                    "there is no {kind} named {} in namespace {namespace} (looked only there)",
                    target.name
                ),
                format!(
                    "check the name and namespace (kubectl -n {namespace} get {}; -A looks in every namespace), or whether the change created it at all; --wait waits for it to appear",
                    resource.plural()
                ),
            )
        } else if namespace.is_empty() {
            (
                Status::Unknown,
                format!(
                    "the input holds no {kind} named {} in any namespace",
                    target.name
                ),
                format!(
                    "include it in the dump: kubectl get {} -A -o yaml",
                    resource.plural()
                ),
            )
        } else {
            (
                Status::Unknown,
                format!("the input holds no {kind} {namespace}/{}", target.name),
                format!(
                    "include it in the dump: kubectl -n {namespace} get {}/{} -o yaml",
                    target.kind, target.name
                ),
            )
        };
        return vec![Finding::new(
            Check::SpecReadback,
            status,
            "not found",
            format!("{kind} {}", target.name),
        )
        .source(source)
        .detail(detail)
        .next(next)];
    };

    let pods = w.pods(observed);
    let pods_readable = pods_readable(observed, &w, &pods);
    let revision = w.current_revision(observed);
    let mut findings = vec![
        spec_readback(&w, change),
        observed_generation(&w),
        rollout_complete(&w, &revision),
        pods_current(&w, &revision, &pods, &pods_readable),
        pod_spec(&w, change, &pods, &pods_readable),
        pod_restarted(&w, change, &pods, &pods_readable),
    ];
    findings.extend(digest::image_digest_current(
        observed,
        target,
        namespace,
        change.digests,
    ));
    findings
}

/// Whether the absence of pods means anything: `Err(why not)` when pods were not readable.
fn pods_readable(observed: &Observed, w: &Workload, pods: &[&Pod]) -> Result<(), (String, String)> {
    if let Some(d) = observed.denial(w.namespace, ResourceKind::Pod) {
        return Err((
            format!("listing pods was refused: {}", d.message),
            format!(
                "grant list on pods in {} (check: kubectl auth can-i list pods -n {})",
                w.namespace, w.namespace
            ),
        ));
    }
    if pods.is_empty() && !observed.is_complete(w.namespace, ResourceKind::Pod) {
        return Err((
            format!("the input holds no pods of {}", w.source()),
            format!(
                "include the pods in the dump: kubectl -n {} get pods -l {} -o yaml",
                w.namespace,
                crate::selector::describe(w.selector)
            ),
        ));
    }
    Ok(())
}

fn spec_readback(w: &Workload, change: &Change) -> Finding {
    let source = format!("{} .spec.template.spec.containers", w.source());
    let images: Vec<String> = w
        .template
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| format!("{}={}", c.name, c.image.as_deref().unwrap_or("<none>")))
        .collect();
    if !change.has_spec_expectations() {
        return Finding::new(Check::SpecReadback, Status::Skip, images.join(", "), "nothing given")
            .source(source)
            .detail("no --image, --expect-env or --expect-secret-ref given: the template's content was not held to anything");
    }
    let Some(spec) = w.template.spec.as_ref() else {
        return Finding::new(
            Check::SpecReadback,
            Status::Unknown,
            "no pod spec",
            "a pod template",
        )
        .source(source)
        .detail("the workload has no pod template spec to read back");
    };
    let findings = expect::evaluate(spec, change);
    let status = expect::worst(&findings);
    let finding = Finding::new(
        Check::SpecReadback,
        status,
        join(findings.iter().map(|f| f.observed.as_str())),
        join(findings.iter().map(|f| f.expected.as_str())),
    )
    .source(source);
    match status {
        Status::Fail => finding
            .detail(format!(
                "the {} itself does not carry the change: whatever applies the manifests (a GitOps controller, a pipeline) has not written it yet",
                w.kind.kind_name()
            ))
            .next(format!(
                "find out why the change never reached {}: if a GitOps controller owns it, check it reconciled the new revision; otherwise apply the manifest",
                w.source()
            )),
        Status::Unknown => finding
            .detail("part of the expectation cannot be read from the template (see observed)")
            .next("name the env var or secret key explicitly in the template, or drop that expectation"),
        _ => finding.detail("the pod template carries the expected content, read back from the API"),
    }
}

fn observed_generation(w: &Workload) -> Finding {
    let source = format!("{} .status.observedGeneration", w.source());
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
            .next(format!(
                "wait for the controller (liveproof verify {}/{} --wait --timeout 5m); if it never catches up, check the controller manager",
                w.kind, w.name
            )),
        _ => Finding::new(Check::ObservedGeneration, Status::Unknown, "not recorded", expected)
            .source(source)
            .detail("metadata.generation or status.observedGeneration is missing, so whether the controller saw the spec is unknown")
            .next(format!(
                "read the live object (kubectl -n {} get {}/{} -o yaml): a dump without status cannot show it",
                w.namespace, w.kind, w.name
            )),
    }
}

fn rollout_complete(w: &Workload, revision: &Revision) -> Finding {
    let source = format!("{} .status", w.source());
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
    let (counts, complete, failure) = match (w.deployment, w.statefulset, w.daemonset) {
        (Some(d), _, _) => {
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
        (_, Some(s), _) => {
            let st = s.status.clone().unwrap_or_default();
            let desired = desired.unwrap_or(1);
            let updated = st.updated_replicas.unwrap_or(0);
            let ready = st.ready_replicas.unwrap_or(0);
            let same_revision =
                st.current_revision.is_some() && st.current_revision == st.update_revision;
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
        (_, _, Some(d)) => {
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
        _ => ("no status".to_string(), false, None),
    };
    let expected = "all replicas updated and available".to_string();
    if let Some(failure) = failure {
        let next = if failure.starts_with("ProgressDeadlineExceeded") {
            format!("the rollout gave up; see why the new pods are not available: kubectl -n {} describe {}/{}", w.namespace, w.kind, w.name)
        } else {
            format!("delete the old pods so the controller replaces them, or change the update strategy of {}", w.source())
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
            .next(format!(
                "wait for the rollout (liveproof verify {}/{} -n {} --wait --timeout 5m)",
                w.kind, w.name, w.namespace
            ))
    }
}

fn pods_current(
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
            format!("wait for the rollout to replace them (liveproof verify {}/{} -n {} --wait --timeout 5m)", w.kind, w.name, w.namespace)
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

fn pod_spec(
    w: &Workload,
    change: &Change,
    pods: &[&Pod],
    readable: &Result<(), (String, String)>,
) -> Finding {
    let source = format!("{}/Pod .spec.containers", w.namespace);
    if !change.has_spec_expectations() {
        return Finding::new(Check::PodSpec, Status::Skip, "not checked", "nothing given")
            .source(source)
            .detail("no --image, --expect-env or --expect-secret-ref given");
    }
    if let Err((why, next)) = readable {
        return Finding::new(
            Check::PodSpec,
            Status::Unknown,
            "pods not read",
            "expectations on running pods",
        )
        .source(source)
        .detail(why.clone())
        .next(next.clone());
    }
    let serving: Vec<&&Pod> = pods.iter().filter(|p| pods::is_serving(p)).collect();
    if serving.is_empty() {
        return Finding::new(
            Check::PodSpec,
            Status::Unknown,
            "no serving pod",
            "expectations on running pods",
        )
        .source(source)
        .detail("no pod of the workload is serving, so no running container could be read");
    }
    let mut failing = Vec::new();
    let mut unknown = Vec::new();
    let mut expected = String::new();
    let mut sample = String::new();
    for pod in &serving {
        let Some(spec) = pod.spec.as_ref() else {
            unknown.push(format!("{}: no spec", pods::name(pod)));
            continue;
        };
        let findings = expect::evaluate(spec, change);
        expected = join(findings.iter().map(|f| f.expected.as_str()));
        let observed = join(findings.iter().map(|f| f.observed.as_str()));
        match expect::worst(&findings) {
            Status::Fail => failing.push(format!("{}: {observed}", pods::name(pod))),
            Status::Unknown => unknown.push(format!("{}: {observed}", pods::name(pod))),
            _ => sample = observed,
        }
    }
    if !failing.is_empty() {
        return Finding::new(Check::PodSpec, Status::Fail, failing.join("; "), expected)
            .source(source)
            .detail(format!(
                "{} of {} serving pod(s) do not show the expected content",
                failing.len(),
                serving.len()
            ))
            .next(format!(
                "the running pods predate the change; wait for or trigger the rollout of {}",
                w.source()
            ));
    }
    if !unknown.is_empty() {
        return Finding::new(
            Check::PodSpec,
            Status::Unknown,
            unknown.join("; "),
            expected,
        )
        .source(source)
        .detail("part of the expectation cannot be read from the running pods (see observed)");
    }
    Finding::new(Check::PodSpec, Status::Pass, format!("{} serving pod(s): {sample}", serving.len()), expected)
        .source(source)
        .detail("every serving pod's containers show the expected content (presence only, values never read)")
}

fn pod_restarted(
    w: &Workload,
    change: &Change,
    pods: &[&Pod],
    readable: &Result<(), (String, String)>,
) -> Finding {
    let source_of = |pod: &str, container: &str| {
        format!(
            "{}/Pod/{pod} .status.containerStatuses[{container}].state.running.startedAt",
            w.namespace
        )
    };
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
    let mut before: Vec<(String, String, Timestamp)> = Vec::new();
    let mut unreadable: Vec<(String, String)> = Vec::new();
    // The earliest start after the change: the pod closest to not having restarted.
    let mut earliest_after: Option<(Timestamp, String, String)> = None;
    let mut containers = 0;
    for pod in pods.iter().filter(|p| pods::is_serving(p)) {
        for c in pods::container_statuses(pod) {
            let Some(started) = pods::running_since(c) else {
                continue;
            };
            containers += 1;
            match started {
                None => unreadable.push((pods::name(pod).to_string(), c.name.clone())),
                Some(t) if t <= since => {
                    before.push((pods::name(pod).to_string(), c.name.clone(), t))
                }
                Some(t) => {
                    if earliest_after.as_ref().is_none_or(|(e, _, _)| t < *e) {
                        earliest_after = Some((t, pods::name(pod).to_string(), c.name.clone()));
                    }
                }
            }
        }
    }
    if let Some((pod, container, started)) = before.iter().min_by_key(|(_, _, t)| *t) {
        let others = if before.len() > 1 {
            format!(" (and {} more container(s))", before.len() - 1)
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
    if let Some((pod, container)) = unreadable.first() {
        return Finding::new(
            Check::PodRestarted,
            Status::Unknown,
            "start time not recorded",
            expected,
        )
        .source(source_of(pod, container))
        .detail(format!(
            "container {container} of pod {pod} is running but its startedAt is missing"
        ));
    }
    match (containers, earliest_after) {
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

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts.collect::<Vec<_>>().join("; ")
}
