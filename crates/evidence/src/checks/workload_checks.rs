//! A workload target's checks, in the order they are judged (cheap to conclusive, so the first
//! that fails is the root cause): `workload_findings` runs them. The rollout checks are in
//! `rollout.rs`, the pods' in `pods_current.rs` and `pod_restarted.rs`; the template checks
//! (what the change states, read back from the API and from the pods) are here.

use crate::pod::Pod;

use super::pod_restarted::{pod_restarted, TieBreak};
use super::pods_current::pods_current;
use super::rollout::{observed_generation, rollout_complete};
use super::timeline::Dating;
use super::traffic::traffic_current;
use super::{declared, digest, expect, pods, Finding};
use crate::kinds::workload::{Revision, Workload};
use crate::suggestion::{Command, Suggestion};
use crate::{Change, Check, Observed, ResourceKind, SourceRef, Status, Target};

/// What the Helm or GitOps target a workload was reached through says of the change it
/// installed, for a workload with no statement of its own.
#[derive(Debug, Clone)]
pub(crate) enum Tie {
    /// Its evidence ties what it installed to the change (`helmrelease/apps/inventory
    /// (release_revision pass)`): the workload needs no statement of its own.
    By(String),
    /// Its evidence shows that what it installed does not carry the stated change (the
    /// installed manifest lacks an `--expect` text, the release another chart version):
    /// `evidence` is that failure, read from the owner named `via`.
    Refuted {
        via: String,
        evidence: crate::Evidence,
    },
}

/// A workload's findings, and what its evidence dates (from the same revision and pods).
/// `tie` is what the target it was reached through says of the change, and `owner` that
/// target's kind, whose actor writes its template.
pub(crate) fn workload_findings(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    tie: Option<&Tie>,
    owner: Option<crate::TargetKind>,
) -> (Vec<Finding>, Dating) {
    let kind = target.kind.kind_name();
    let resource = target.kind.resource();
    let source = SourceRef::object(resource, namespace, &target.name);
    let Some(w) = Workload::find(observed, target.kind, namespace, &target.name) else {
        let present = observed.workloads().any(|(kind, meta, _)| {
            kind == target.kind
                && meta.name.as_deref() == Some(target.name.as_str())
                && meta.namespace.as_deref().unwrap_or(namespace) == namespace
        });
        let (status, detail, next) = if present {
            // There, but not readable as a workload: an Argo Rollout whose template lives in
            // another object (`spec.workloadRef`), which is not followed yet.
            (
                Status::Unknown,
                format!("{kind} {namespace}/{} has no pod template and selector of its own to judge (a spec.workloadRef is not followed)", target.name),
                Suggestion::text("verify the workload it refers to instead (")
                    .command(Command::kubectl([
                        "-n",
                        namespace,
                        "get",
                        &format!("{}/{}", target.kind, target.name),
                        "-o",
                        "jsonpath={.spec.workloadRef}",
                    ]))
                    .then(" names it)"),
            )
        } else if let Some(d) = observed.denial(namespace, resource) {
            (
                Status::Unknown,
                format!("reading it was refused: {}", d.message),
                d.next_step(),
            )
        } else if namespace.is_empty() && observed.is_complete(namespace, resource) {
            // `-A` found it in no namespace (the gather's ALL_NAMESPACES).
            (
                Status::Fail,
                format!(
                    "there is no {kind} named {} in any namespace (looked in every namespace: -A)",
                    target.name
                ),
                Suggestion::text("check the name (")
                    .command(Command::kubectl(["get", resource.plural(), "-A"]))
                    .then(
                        "), or whether the change created it at all; --wait waits for it to appear",
                    ),
            )
        } else if observed.is_complete(namespace, resource) {
            (
                Status::Fail,
                format!(
                    "there is no {kind} named {} in namespace {namespace} (looked only there)",
                    target.name
                ),
                Suggestion::text("check the name and namespace (")
                    .command(Command::kubectl(["-n", namespace, "get", resource.plural()]))
                    .then("; -A looks in every namespace), or whether the change created it at all; --wait waits for it to appear"),
            )
        } else if namespace.is_empty() {
            (
                Status::Unknown,
                format!(
                    "the input holds no {kind} named {} in any namespace",
                    target.name
                ),
                Suggestion::text("include it in the dump: ").command(Command::kubectl([
                    "get",
                    resource.plural(),
                    "-A",
                    "-o",
                    "yaml",
                ])),
            )
        } else {
            (
                Status::Unknown,
                format!("the input holds no {kind} {namespace}/{}", target.name),
                Suggestion::text("include it in the dump: ").command(Command::kubectl([
                    "-n",
                    namespace,
                    "get",
                    &format!("{}/{}", target.kind, target.name),
                    "-o",
                    "yaml",
                ])),
            )
        };
        let finding = Finding::new(
            Check::SpecReadback,
            status,
            if present {
                "no pod template of its own"
            } else {
                super::NOT_FOUND
            },
            format!("{kind} {}", target.name),
        )
        .source(source)
        .detail(detail)
        .next(next);
        return (vec![finding], Dating::change_only(change));
    };

    let pods = w.pods(observed);
    let pods_readable = pods_readable(observed, &w, &pods);
    let revision = w.current_revision(observed);
    let spec = spec_readback(observed, &w, change, tie, owner);
    let tie = TieBreak {
        shown_by: template_shows_change(&w, change, &spec.evidence),
        current: match &revision {
            Revision::Current(c) => Some(c),
            _ => None,
        },
    };
    // What the pods run and when they started counts for the pods that get traffic: an
    // Argo Rollout's old ReplicaSet idling under scaleDownDelaySeconds serves nothing.
    let routed = w.routed_pods(&pods);
    let running = pod_spec(observed, &w, change, &routed, &pods_readable);
    let tie = TieBreak {
        shown_by: tie.shown_by.or_else(|| {
            (running.evidence.status == Status::Pass).then(|| {
                format!(
                    "the pods run the stated change ({})",
                    running.evidence.expected
                )
            })
        }),
        ..tie
    };
    let restarted = pod_restarted(&w, change, &routed, &pods_readable, &tie);
    let mut findings = vec![
        spec,
        observed_generation(&w),
        rollout_complete(&w, &revision),
        pods_current(&w, &revision, &pods, &pods_readable),
        running,
        restarted,
    ];
    findings.extend(digest::image_digest_current(
        observed,
        target,
        namespace,
        change.digests,
    ));
    findings.push(traffic_current(
        observed,
        &w,
        &revision,
        &pods,
        &pods_readable,
    ));
    let dating = match &revision {
        Revision::Current(current) => Dating::of(&w, current, &pods, change),
        _ => Dating::change_only(change),
    };
    (findings, dating)
}

/// Whether the absence of pods means anything: `Err(why not)` when pods were not readable.
fn pods_readable(
    observed: &Observed,
    w: &Workload,
    pods: &[&Pod],
) -> Result<(), (String, Suggestion)> {
    if let Some(d) = observed.denial(w.namespace, ResourceKind::Pod) {
        return Err((
            format!("listing pods was refused: {}", d.message),
            d.next_step(),
        ));
    }
    if pods.is_empty() && !observed.is_complete(w.namespace, ResourceKind::Pod) {
        return Err((
            format!("the input holds no pods of {}", w.source()),
            Suggestion::text("include the pods in the dump: ")
                .command(w.kubectl_pods(&["-o", "yaml"])),
        ));
    }
    Ok(())
}

/// What in the workload's template shows the change, when something does: the stated
/// expectations read back from it (`spec_readback` passed), or a template that differs from
/// the one the snapshot recorded before the apply. What decides a pod start in the change's
/// own second.
pub(crate) fn template_shows_change(
    w: &Workload,
    change: &Change,
    spec: &crate::Evidence,
) -> Option<String> {
    if spec.status == Status::Pass {
        return Some(format!(
            "its template shows the stated change ({})",
            spec.expected
        ));
    }
    let before = change.prior_template(w.kind, w.namespace, w.name)?;
    let now = serde_json::to_value(w.template).ok()?;
    (crate::snapshot::template_hash(&now) != before).then(|| {
        "its template differs from the one the snapshot recorded before the change".to_string()
    })
}

/// How to state what changed, for a workload verified with no statement of it.
pub(crate) const STATE_THE_CHANGE: &str = "state what changed: --image REF, -f MANIFESTS, --expect-env NAME, --expect-secret-ref SECRET[/KEY] or --expect TEXT; or verify the GitOps/Helm object that deployed it (release/, helmrelease/, kustomization/, application/ with --commit)";

/// What `spec_readback` expects of a workload no statement of the change reaches.
pub(crate) const NO_STATEMENT: &str = "a statement of what changed";

pub(crate) fn spec_readback(
    observed: &Observed,
    w: &Workload,
    change: &Change,
    tie: Option<&Tie>,
    owner: Option<crate::TargetKind>,
) -> Finding {
    let source = w.source().field(".spec.template.spec.containers");
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
        if let Some(Tie::Refuted { via, evidence }) = tie {
            // The statement was held to what the owner installed, and that lacks it: so does
            // this template, which the owner installed. Read from the owner's evidence.
            return Finding::new(
                Check::SpecReadback,
                Status::Fail,
                format!(
                    "installed by {via}, whose {} failed: {}",
                    evidence.check, evidence.observed
                ),
                evidence.expected.clone(),
            )
            .source(evidence.source_ref.clone())
            .detail(format!(
                "what {via} installed does not carry the stated change ({} failed on it), so neither does this template, which it installed",
                evidence.check
            ));
        }
        let tied_by = match tie {
            Some(Tie::By(by)) => Some(by.as_str()),
            _ => None,
        };
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
            NO_STATEMENT,
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
    let mut findings =
        expect::evaluate(&spec.into(), change, expect::Subject::Template { observed });
    findings.extend(template_text(w, change));
    let mut source = source;
    if let Some(d) = declared {
        source = w.source().field(".spec.template");
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
        // Reached through an owner, its actor writes the template (Flagger the primary's,
        // Knative the revision's, Flux or Argo CD what they apply); verified directly, who
        // writes it is not known here.
        Status::Fail => match owner.map(crate::TargetKind::actor) {
            Some(actor) => finding
                .detail(format!(
                    "the {} itself does not carry the change: {}, which writes it, has not {}",
                    w.kind.kind_name(),
                    actor.name,
                    actor.done
                ))
                .next(format!(
                    "find out why {}: its own evidence above says where it stands",
                    actor.has_not()
                )),
            None => finding
                .detail(format!(
                    "the {} itself does not carry the change: whatever applies the manifests (a GitOps controller, a pipeline) has not written it yet",
                    w.kind.kind_name()
                ))
                .next(format!(
                    "find out why the change never reached {}: if a GitOps controller owns it, check it reconciled the new revision; otherwise apply the manifest",
                    w.source()
                )),
        },
        Status::Unknown => finding
            .detail("part of the expectation cannot be read from the template (see observed)")
            .next("name the env var or secret key explicitly in the template, or drop that expectation"),
        Status::Skip => finding.detail(
            "the template names the image by tag, which says nothing of the digest asked for: the digests the running pods record decide (pod_spec)",
        ),
        _ => finding.detail("the pod template carries the expected content, read back from the API"),
    }
}

/// `--expect` on a workload: the text (or regex) in its pod template, rendered as YAML as it
/// reads back from the API.
fn template_text(w: &Workload, change: &Change) -> Vec<expect::Outcome> {
    if change.manifest.is_empty() {
        return Vec::new();
    }
    // Env values and annotations can hold secrets liveproof never prints: they are removed
    // before matching, or a regex would answer yes/no about them.
    let mut visible = match serde_json::to_value(w.template) {
        Ok(v) => v,
        Err(e) => {
            return vec![expect::Outcome {
                status: Status::Unknown,
                expected: "the pod template as YAML".into(),
                observed: format!("cannot render it: {e}"),
            }]
        }
    };
    let redacted = redact_template(&mut visible);
    // What looks like a credential elsewhere (an argument, an annotation, a URL's password) is
    // redacted too, and an expectation not found may be in it: unknown, whatever it holds.
    let credentials = liveproof_redacted::credential::redact_json(&mut visible, ".spec.template");
    let rendered = match serde_norway::to_string(&visible) {
        Ok(text) => text,
        Err(e) => {
            return vec![expect::Outcome {
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
            let expected = format!("`{}` in the pod template", e.given);
            match expect::text_match(e, &rendered, !credentials.is_empty()) {
                expect::TextMatch::Found => expect::Outcome {
                    status: Status::Pass,
                    observed: expected.clone(),
                    expected,
                },
                expect::TextMatch::Hidden => expect::Outcome {
                    status: Status::Unknown,
                    expected,
                    observed: format!(
                        "`{}` not in the pod template as shown; values that look like credentials ({}) are redacted and never matched against, so whether it is there is unknown",
                        e.given,
                        expect::some_fields(&credentials)
                    ),
                },
                expect::TextMatch::Missing => expect::Outcome {
                    status: Status::Fail,
                    expected,
                    observed: if redacted {
                        format!(
                            "`{}` not in the pod template (env values are redacted before matching, so no expectation can test them)",
                            e.given
                        )
                    } else {
                        format!("`{}` not in the pod template", e.given)
                    },
                },
            }
        })
        .collect()
}

/// Replaces what liveproof never prints in a pod template (as JSON) — every container's env
/// `value`, and the `last-applied-configuration` annotation (`kubectl apply` copies whole
/// objects into it) — with `<redacted>`. True when something was replaced.
fn redact_template(template: &mut serde_json::Value) -> bool {
    const REDACTED: &str = "<redacted>";
    let mut replaced = false;
    if let Some(applied) = template
        .pointer_mut("/metadata/annotations")
        .and_then(serde_json::Value::as_object_mut)
        .and_then(|a| a.get_mut("kubectl.kubernetes.io/last-applied-configuration"))
    {
        *applied = REDACTED.into();
        replaced = true;
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        let containers = template
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(serde_json::Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            let env = container
                .get_mut("env")
                .and_then(serde_json::Value::as_array_mut);
            for var in env.into_iter().flatten() {
                if let Some(value) = var.get_mut("value") {
                    *value = REDACTED.into();
                    replaced = true;
                }
            }
        }
    }
    replaced
}

/// `-f`: every field the manifest declares in the pod template is what the live object has.
fn declared_template(w: &Workload, declared: &crate::DeclaredTemplate) -> expect::Outcome {
    let live = match serde_json::to_value(w.template) {
        Ok(v) => v,
        Err(e) => {
            return expect::Outcome {
                status: Status::Unknown,
                expected: format!("the template {} declares", declared.source),
                observed: format!("the live template cannot be read as JSON: {e}"),
            }
        }
    };
    match declared::first_difference(&declared.template, Some(&live), ".spec.template") {
        None => expect::Outcome {
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
        Some(d) => expect::Outcome {
            status: Status::Fail,
            expected: format!(
                "{} = {} (as {} declares)",
                d.path, d.declared, declared.source
            ),
            observed: if d.redacted {
                format!(
                    "{} = {}, which differs (values that look like credentials are not shown)",
                    d.path, d.live
                )
            } else {
                format!("{} = {}", d.path, d.live)
            },
        },
    }
}

pub(crate) fn pod_spec(
    observed_all: &Observed,
    w: &Workload,
    change: &Change,
    pods: &[&Pod],
    readable: &Result<(), (String, crate::Suggestion)>,
) -> Finding {
    let source = SourceRef::objects(ResourceKind::Pod, w.namespace).field(".spec.containers");
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

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts.collect::<Vec<_>>().join("; ")
}
