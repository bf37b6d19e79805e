//! The checks: pure functions from [`Observed`] and a [`Change`] to evidence, and the
//! verdict rules of DESIGN.md.

mod declared;
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

/// Judges every target against what was observed, and every `--version-url` expectation of
/// `change` against what its server answered. `default_namespace` applies to targets that did
/// not name one.
pub fn judge(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
) -> Report {
    let reports = targets
        .iter()
        .flat_map(|t| judge_target(observed, change, t, default_namespace))
        .chain(crate::server::reports(observed, change))
        .collect();
    Report::new(
        ChangeSummary {
            since: change.since.map(|t| t.to_string()),
            commit: change.commit.clone(),
        },
        reports,
    )
}

/// The command that verifies a target again and waits for it, as next steps suggest it. The
/// CLI adds the flags the user gave (cluster, change, expectations) before it prints it, and
/// lengthens the timeout after a wait that ran out.
pub fn verify_again(kind: &str, namespace: &str, name: &str) -> String {
    format!(
        "liveproof verify {}/{name} -n {namespace} --wait --timeout 5m",
        kind.to_ascii_lowercase()
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
        return vec![judge_workload(observed, change, target, namespace, None)];
    }
    let own = gitops::findings(observed, change, target, namespace);
    let via = format!("{}/{}/{}", target.kind, namespace, target.name);
    // A release deployed after the change, or a GitOps revision that is the change's commit,
    // ties what it installed to the change: its workloads need no statement of their own.
    // When that evidence failed, the owner is not live and says why; only when it was not
    // checked at all (a Kustomization without --commit) is nothing tying them.
    let tied_by = own
        .iter()
        .find(|f| {
            matches!(
                f.evidence.check,
                Check::ReleaseRevision | Check::GitopsRevision
            ) && matches!(f.evidence.status, Status::Pass | Status::Fail)
        })
        .map(|f| format!("{via} ({} {})", f.evidence.check, f.evidence.status.name()));
    // `--expect` was held to the installed manifest; the workloads' templates are only a part of it.
    let followed_change = Change {
        manifest: Vec::new(),
        ..change.clone()
    };
    let workloads: Vec<TargetReport> = followed_workloads(observed, target, default_namespace)
        .into_iter()
        .map(|w| {
            let ns = w.namespace_or(default_namespace).to_string();
            judge_workload(observed, &followed_change, &w, &ns, tied_by.as_deref())
        })
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

/// A workload's report. `tied_by` names the Helm or GitOps evidence that ties its template to
/// the change when it was reached through one.
fn judge_workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    tied_by: Option<&str>,
) -> TargetReport {
    let findings = workload_findings(observed, change, target, namespace, tied_by);
    let verdict = verdict(&findings);
    target_report(target, namespace, findings, verdict)
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
    tied_by: Option<&str>,
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
        spec_readback(observed, &w, change, tied_by),
        observed_generation(&w),
        rollout_complete(&w, &revision),
        pods_current(&w, &revision, &pods, &pods_readable),
        pod_spec(observed, &w, change, &pods, &pods_readable),
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

/// How to state what changed, for a workload verified with no statement of it.
const STATE_THE_CHANGE: &str = "state what changed: --image REF, -f MANIFESTS, --expect-env NAME, --expect-secret-ref SECRET[/KEY] or --expect TEXT; or verify the GitOps/Helm object that deployed it (release/, helmrelease/, kustomization/, application/ with --commit)";

fn spec_readback(
    observed: &Observed,
    w: &Workload,
    change: &Change,
    tied_by: Option<&str>,
) -> Finding {
    let source = format!("{} .spec.template.spec.containers", w.source());
    let images: Vec<String> = w
        .template
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| format!("{}={}", c.name, c.image.as_deref().unwrap_or("<none>")))
        .collect();
    let declared = change.declared_for(w.kind, w.namespace, w.name);
    let stated =
        change.has_spec_expectations() || !change.manifest.is_empty() || declared.is_some();
    if !stated {
        if let Some(by) = tied_by.or(change.stated_by.as_deref()) {
            return Finding::new(Check::SpecReadback, Status::Skip, images.join(", "), "nothing given")
                .source(source)
                .detail(format!("no --image, -f, --expect-env, --expect-secret-ref or --expect given: the template is tied to the change by {by}"));
        }
        // Pods restarted after the change on the current template prove a rollout, not that
        // the rollout carried this change (any restart would pass): unproven until stated.
        return Finding::new(
            Check::SpecReadback,
            Status::Unknown,
            images.join(", "),
            "a statement of what changed",
        )
        .source(source)
        .detail("nothing ties the running template to the change: no --image, -f, --expect-env, --expect-secret-ref or --expect was given, and no GitOps/Helm evidence led here")
        .next(STATE_THE_CHANGE);
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
    let mut findings = expect::evaluate(spec, change, expect::Subject::Template { observed });
    findings.extend(template_text(w, change));
    let mut source = source;
    if let Some(d) = declared {
        source = format!("{} .spec.template", w.source());
        findings.push(declared_template(w, d));
    }
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

/// `--expect` on a workload: the text (or regex) in its pod template, rendered as YAML as it
/// reads back from the API.
fn template_text(w: &Workload, change: &Change) -> Vec<expect::Finding> {
    if change.manifest.is_empty() {
        return Vec::new();
    }
    let rendered = match serde_norway::to_string(w.template) {
        Ok(text) => text,
        Err(e) => {
            return vec![expect::Finding {
                status: Status::Unknown,
                expected: "the pod template as YAML".into(),
                observed: format!("cannot render it: {e}"),
            }]
        }
    };
    change
        .manifest
        .iter()
        .map(|e| {
            let found = e.is_match(&rendered);
            expect::Finding {
                status: if found { Status::Pass } else { Status::Fail },
                expected: format!("`{}` in the pod template", e.given),
                observed: if found {
                    format!("`{}` in the pod template", e.given)
                } else {
                    format!("`{}` not in the pod template", e.given)
                },
            }
        })
        .collect()
}

/// `-f`: every field the manifest declares in the pod template is what the live object has.
fn declared_template(w: &Workload, declared: &crate::DeclaredTemplate) -> expect::Finding {
    let live = match serde_json::to_value(w.template) {
        Ok(v) => v,
        Err(e) => {
            return expect::Finding {
                status: Status::Unknown,
                expected: format!("the template {} declares", declared.source),
                observed: format!("the live template cannot be read as JSON: {e}"),
            }
        }
    };
    match declared::first_difference(&declared.template, Some(&live), ".spec.template") {
        None => expect::Finding {
            status: Status::Pass,
            expected: format!(
                "every field {} declares in the pod template",
                declared.source
            ),
            observed: format!(
                "every field {} declares in the pod template",
                declared.source
            ),
        },
        Some(d) => expect::Finding {
            status: Status::Fail,
            expected: format!(
                "{} = {} (as {} declares)",
                d.path, d.declared, declared.source
            ),
            observed: format!("{} = {}", d.path, d.live),
        },
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
                "wait for the controller ({}); if it never catches up, check the controller manager",
                verify_again(w.kind.cli_name(), w.namespace, w.name)
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
                "wait for the rollout ({})",
                verify_again(w.kind.cli_name(), w.namespace, w.name)
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

fn pod_spec(
    observed_all: &Observed,
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
        let findings = expect::evaluate(
            spec,
            change,
            expect::Subject::Pod {
                pod,
                observed: observed_all,
            },
        );
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
    // (pod, container, what is missing): evidence never read is never a pass.
    let mut unreadable: Vec<(String, String, &str)> = Vec::new();
    // The earliest start after the change: the pod closest to not having restarted.
    let mut earliest_after: Option<(Timestamp, String, String)> = None;
    let mut containers = 0;
    for pod in pods.iter().filter(|p| pods::is_serving(p)) {
        let statuses = pods::container_statuses(pod);
        // Every container the pod declares must be accounted for, not only those with a status.
        for declared in pods::declared_containers(pod) {
            if !statuses.iter().any(|s| s.name == declared) {
                unreadable.push((
                    pods::name(pod).to_string(),
                    declared.to_string(),
                    "has no containerStatuses entry, so when it started is not recorded",
                ));
            }
        }
        if statuses.is_empty() {
            unreadable.push((
                pods::name(pod).to_string(),
                "*".to_string(),
                "records no container statuses at all",
            ));
        }
        for c in statuses {
            let Some(started) = pods::running_since(c) else {
                continue;
            };
            containers += 1;
            match started {
                None => unreadable.push((
                    pods::name(pod).to_string(),
                    c.name.clone(),
                    "is running but its startedAt is missing",
                )),
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
    if let Some((pod, container, missing)) = unreadable.first() {
        return Finding::new(
            Check::PodRestarted,
            Status::Unknown,
            "start time not recorded",
            expected,
        )
        .source(source_of(pod, container))
        .detail(format!(
            "container {container} of serving pod {pod} {missing}{}",
            if unreadable.len() > 1 {
                format!(" (and {} more)", unreadable.len() - 1)
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
