//! A Flagger Canary (`flagger.app/v1beta1`), read by the field names of flagger's
//! `pkg/apis/flagger/v1beta1` (`CanaryStatus`: `phase`, `canaryWeight`, `failedChecks`,
//! `iterations`, `lastAppliedSpec`, `lastPromotedSpec`, `conditions[type=Promoted]`).
//!
//! A Canary owns no pods of its own. It points at a target (`spec.targetRef`, a Deployment or
//! DaemonSet) where the change is applied, and on promotion Flagger copies the target's pod
//! template onto `<target>-primary` (`pkg/canary/deployment_controller.go` `Promote`), whose
//! pods serve once promotion finished: the apex Service `<target>` and `<target>-primary` select
//! them, `<target>-canary` selects the target's. So the Canary is judged by its own evidence
//! (phase, the Promoted condition, the primary's template against the target's, the canary
//! weight) and then followed to the primary, verified as a workload like any other.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::Value;

use crate::checks::finding::Finding;
use crate::checks::raw::{self, condition, i64_at, str_at};
use crate::kinds::workload::Workload;
use crate::order::{order, Order};
use crate::suggestion::{Command, Suggestion};
use crate::{Change, Check, Observed, ResourceKind, SourceRef, Status, Target, TargetKind};

/// The annotation Flagger sets to a fresh UUID on the primary's template at each promotion
/// (`pkg/canary/util.go` `makeAnnotations`), so that the primary rolls.
const FLAGGER_ID: &str = "flagger-id";
/// Labels and annotations carrying this are Flux's own bookkeeping, which Flagger does not
/// copy to the primary (`toolkitMarker`).
const TOOLKIT_MARKER: &str = "toolkit.fluxcd.io";
/// What Flagger appends to the target's name (and to the selector label's value, tracked
/// ConfigMaps and Secrets, anti-affinity values) for the primary's copy.
const PRIMARY_SUFFIX: &str = "-primary";

/// The phases in which an analysis or promotion is under way: not finished, waiting may fix it.
const UNDER_WAY: &[&str] = &[
    "Initializing",
    "Waiting",
    "Progressing",
    "WaitingPromotion",
    "Promoting",
    "Finalising",
];

/// The Canary's target: `(kind, name)` of `spec.targetRef`, a workload kind liveproof verifies.
fn target_ref(canary: &Value) -> Option<(TargetKind, &str)> {
    let kind = str_at(canary, "/spec/targetRef/kind")?;
    let group = str_at(canary, "/spec/targetRef/apiVersion").map(crate::api_group);
    let kind = TargetKind::workload_named(kind, group)?;
    // Flagger's controllers are for Deployments and DaemonSets; a Service target has no pods.
    matches!(kind, TargetKind::Deployment | TargetKind::DaemonSet)
        .then_some(())
        .and(Some((kind, str_at(canary, "/spec/targetRef/name")?)))
}

/// The workload that serves once promotion finished: `<target>-primary`.
pub(crate) fn primary(canary: &Value, ns: &str) -> Option<Target> {
    let (kind, name) = target_ref(canary)?;
    Some(Target::new(
        kind,
        Some(ns),
        &format!("{name}{PRIMARY_SUFFIX}"),
    ))
}

/// The target Deployment or DaemonSet itself: read, to compare its template with the
/// primary's, never verified (Flagger scales it to zero after promotion).
pub(crate) fn target(canary: &Value, ns: &str) -> Option<Target> {
    let (kind, name) = target_ref(canary)?;
    Some(Target::new(kind, Some(ns), name))
}

/// The failure `--wait` stops on: phase Failed (Flagger rolled the canary back; waiting will
/// not promote it).
pub(crate) fn gave_up(canary: &Value) -> Option<String> {
    (str_at(canary, "/status/phase") == Some("Failed")).then(|| {
        let checks = i64_at(canary, "/status/failedChecks").unwrap_or(0);
        format!("phase Failed after {checks} failed check(s): Flagger rolled the canary back")
    })
}

/// The Canary's own evidence; the primary's pods are judged as the workload it leads to.
pub(crate) fn findings(
    observed: &Observed,
    change: &Change,
    canary: &Value,
    ns: &str,
) -> Vec<Finding> {
    vec![
        no_observed_generation(canary, ns),
        promoted_fresh(canary, ns, change),
        phase(canary, ns),
        primary_template(observed, canary, ns),
        traffic(observed, canary, ns),
    ]
}

fn source(canary: &Value, ns: &str) -> SourceRef {
    SourceRef::object(ResourceKind::Canary, ns, raw::name(canary))
}

fn describe(canary: &Value, ns: &str) -> Command {
    Command::kubectl(["-n", ns, "describe", "canary", raw::name(canary)])
}

/// Flagger writes no `observedGeneration`: whether it saw the current spec is not recorded.
fn no_observed_generation(canary: &Value, ns: &str) -> Finding {
    Finding::new(
        Check::ObservedGeneration,
        Status::Skip,
        "not recorded by Flagger",
        ">= metadata.generation",
    )
    .source(source(canary, ns).field(".status"))
    .detail("Flagger's CanaryStatus has no observedGeneration, so whether it processed the current spec cannot be read; the phase, the Promoted condition's time and the primary's template below say how far it got")
}

/// `condition_fresh` over `Promoted`: Flagger leaves it True from the last promotion until it
/// notices a change (its own docs wait for Progressing first), so it counts only when it
/// changed after the change.
fn promoted_fresh(canary: &Value, ns: &str, change: &Change) -> Finding {
    let source = source(canary, ns).field(".status.conditions[Promoted]");
    let expected = match change.since {
        Some(s) => format!("Promoted True, changed after {s}"),
        None => "Promoted True, changed after the change".to_string(),
    };
    let Some(c) = condition(canary, "Promoted") else {
        return Finding::new(Check::ConditionFresh, Status::Unknown, "no Promoted condition", expected)
            .source(source)
            .detail("the Canary has no Promoted condition: Flagger has not initialised it yet, or the input lacks its status")
            .next(Suggestion::text("see what Flagger did: ").command(describe(canary, ns)));
    };
    let when = c
        .last_transition
        .map_or_else(|| "?".to_string(), |t| t.to_string());
    let observed = format!("Promoted={} ({}) since {when}", c.status, c.reason);
    let finding = |status| {
        Finding::new(
            Check::ConditionFresh,
            status,
            observed.clone(),
            expected.clone(),
        )
        .source(source.clone())
    };
    if c.status != "True" {
        return finding(Status::Fail)
            .detail(format!(
                "Promoted={} {}: {}",
                c.status,
                c.reason,
                if c.message.is_empty() {
                    "the promotion has not finished"
                } else {
                    c.message
                }
            ))
            .next(
                Suggestion::text("wait for the analysis to finish, or see where it stands: ")
                    .command(describe(canary, ns)),
            );
    }
    match (change.since, c.last_transition) {
        (None, _) => finding(Status::Unknown)
            .detail("no change time was given, so whether this promotion is the change's cannot be told")
            .next(crate::checks::GIVE_THE_CHANGE_TIME),
        (_, None) => finding(Status::Unknown).detail("the Promoted condition has no lastTransitionTime"),
        (Some(since), Some(at)) => match order(at, since) {
            Order::After => finding(Status::Pass).detail("Flagger promoted after the change (status tier: the primary's pods below are the proof)"),
            Order::Tie => finding(Status::Unknown).detail(format!(
                "Promoted last changed at {at}, in the change's own second ({since}): which came first cannot be told; give the change time to the sub-second"
            )),
            Order::Before => finding(Status::Unknown)
                .detail(format!(
                    "Promoted last changed at {at}, before the change: it describes an earlier promotion. Flagger notices a change of its target on its next check (then the phase turns Progressing), so this alone says neither that the change was promoted nor that it was not"
                ))
                .next(Suggestion::text("wait for Flagger to analyse and promote the change: ").command(
                    crate::checks::verify_again("canary", ns, raw::name(canary)),
                )),
        },
    }
}

/// `rollout_complete` from `status.phase`: Succeeded (or Initialized, the first deploy, which
/// Flagger promotes without analysis) is done; an analysis under way is not yet; Failed will
/// not be.
fn phase(canary: &Value, ns: &str) -> Finding {
    let source = source(canary, ns).field(".status.phase");
    let expected = "phase Succeeded or Initialized, canary weight 0";
    let Some(phase) = str_at(canary, "/status/phase") else {
        return Finding::new(Check::RolloutComplete, Status::Unknown, "phase not recorded", expected)
            .source(source)
            .detail("the Canary has no status.phase: Flagger has not reconciled it, or the input lacks its status");
    };
    let weight = i64_at(canary, "/status/canaryWeight").unwrap_or(0);
    let iterations = i64_at(canary, "/status/iterations").unwrap_or(0);
    let failed = i64_at(canary, "/status/failedChecks").unwrap_or(0);
    let observed = format!(
        "phase {phase}, canary weight {weight}%, {iterations} iteration(s), {failed} failed check(s)"
    );
    let finding = |status| {
        Finding::new(Check::RolloutComplete, status, observed.clone(), expected)
            .source(source.clone())
    };
    match phase {
        "Succeeded" | "Initialized" => finding(Status::Pass).detail("Flagger reports the promotion finished (status tier: the primary's pods below are the proof)"),
        "Failed" => finding(Status::Fail)
            .detail(gave_up(canary).unwrap_or_default())
            .next(Suggestion::text("see why the analysis failed: ").command(describe(canary, ns))),
        "Waiting" | "WaitingPromotion" => finding(Status::Fail)
            .detail(format!("phase {phase}: Flagger waits for a confirm-rollout, confirm-promotion or confirm-traffic-increase webhook to open its gate"))
            .next(Suggestion::text("open the gate when the new version is good (the webhook in the Canary's analysis), then verify again: ").command(describe(canary, ns))),
        p if UNDER_WAY.contains(&p) => finding(Status::Fail)
            .detail(format!("phase {phase}: the analysis or promotion is under way, so the primary does not run the change yet"))
            .next(Suggestion::run(crate::checks::verify_again("canary", ns, raw::name(canary)))),
        _ => finding(Status::Fail)
            .detail(format!("phase {phase}: the Canary is not serving a promoted version"))
            .next(Suggestion::text("see what Flagger did: ").command(describe(canary, ns))),
    }
}

/// `spec_readback`: the primary's pod template is the target's, as Flagger copies it on
/// promotion (fluxcd/flagger#379: phase Succeeded while the primary kept the old template).
fn primary_template(observed: &Observed, canary: &Value, ns: &str) -> Finding {
    let expected = "the primary's pod template is the target's (Flagger's rewrites ignored)";
    let (Some(target), Some(primary)) = (target(canary, ns), primary(canary, ns)) else {
        return Finding::new(
            Check::SpecReadback,
            Status::Unknown,
            format!("targetRef {}", str_at(canary, "/spec/targetRef/kind").unwrap_or("not given")),
            expected,
        )
        .source(source(canary, ns).field(".spec.targetRef"))
        .detail("the Canary's targetRef is not a Deployment or DaemonSet, so there is no primary whose pods liveproof can verify");
    };
    fn look<'a>(
        observed: &'a Observed,
        t: &'a Target,
        ns: &'a str,
    ) -> (Option<&'a PodTemplateSpec>, bool) {
        let found = Workload::find(observed, t.kind, ns, &t.name).map(|w| w.template);
        (found, observed.is_complete(ns, t.kind.resource()))
    }
    let primary_source =
        SourceRef::object(primary.kind.resource(), ns, &primary.name).field(".spec.template");
    let (primary_template, primary_listed) = look(observed, &primary, ns);
    let (target_template, target_listed) = look(observed, &target, ns);
    let missing = |t: &Target, listed: bool| {
        let status = if listed {
            Status::Fail
        } else {
            Status::Unknown
        };
        let detail = if listed {
            format!(
                "{} {ns}/{} does not exist: Flagger has not initialised the Canary",
                t.kind.kind_name(),
                t.name
            )
        } else {
            format!("the input holds no {} {ns}/{}", t.kind.kind_name(), t.name)
        };
        Finding::new(
            Check::SpecReadback,
            status,
            crate::checks::NOT_FOUND,
            expected,
        )
        .source(SourceRef::object(t.kind.resource(), ns, &t.name))
        .detail(detail)
        .next(Suggestion::text("see what Flagger did: ").command(describe(canary, ns)))
    };
    let Some(primary_template) = primary_template else {
        return missing(&primary, primary_listed);
    };
    let Some(target_template) = target_template else {
        return missing(&target, target_listed);
    };
    match template_difference(primary_template, target_template) {
        None => Finding::new(
            Check::SpecReadback,
            Status::Pass,
            format!("{} has {}'s template", primary.name, target.name),
            expected,
        )
        .source(primary_source)
        .detail("the primary runs the template of the target the change was applied to"),
        Some(difference) => Finding::new(
            Check::SpecReadback,
            Status::Fail,
            format!("{} differs from {} at {difference}", primary.name, target.name),
            expected,
        )
        .source(primary_source)
        .detail(format!(
            "the primary's template is not the target's: Flagger has not promoted the target's current template (phase {}), so the pods that serve run another one",
            str_at(canary, "/status/phase").unwrap_or("not reported")
        ))
        .next(Suggestion::text("see where the analysis stands: ").command(describe(canary, ns))),
    }
}

/// Where the primary's template differs from the target's, beyond what Flagger rewrites:
/// `flagger-id`, Flux's labels and annotations, and `-primary` appended to the selector label's
/// value and to tracked ConfigMap/Secret names. An image shows both references; other values
/// are not shown (an env value may be sensitive).
pub(crate) fn template_difference(
    primary: &PodTemplateSpec,
    target: &PodTemplateSpec,
) -> Option<String> {
    let normalise = |t: &PodTemplateSpec| {
        let mut v = serde_json::to_value(t).unwrap_or(Value::Null);
        for field in ["/metadata/labels", "/metadata/annotations"] {
            if let Some(map) = v.pointer_mut(field).and_then(Value::as_object_mut) {
                map.retain(|k, _| k != FLAGGER_ID && !k.contains(TOOLKIT_MARKER));
            }
        }
        v
    };
    first_difference(&normalise(primary), &normalise(target), String::new())
}

fn first_difference(primary: &Value, target: &Value, at: String) -> Option<String> {
    match (primary, target) {
        (Value::Object(p), Value::Object(t)) => {
            let keys: std::collections::BTreeSet<&String> = p.keys().chain(t.keys()).collect();
            keys.into_iter().find_map(|k| {
                let empty = Value::Null;
                first_difference(
                    p.get(k).unwrap_or(&empty),
                    t.get(k).unwrap_or(&empty),
                    format!("{at}.{k}"),
                )
            })
        }
        (Value::Array(p), Value::Array(t)) if p.len() == t.len() => p
            .iter()
            .zip(t)
            .enumerate()
            .find_map(|(i, (p, t))| first_difference(p, t, format!("{at}[{i}]"))),
        (Value::String(p), Value::String(t))
            if p == t || p.strip_suffix(PRIMARY_SUFFIX) == Some(t.as_str()) =>
        {
            None
        }
        (Value::String(p), Value::String(t)) if at.ends_with(".image") => {
            Some(format!("{at} (primary {p}, target {t})"))
        }
        (p, t) if p == t => None,
        // An empty list or map and an absent one are the same template.
        (Value::Null, v) | (v, Value::Null) if is_empty(v) => None,
        _ => Some(at),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// `traffic_current`: once promoted, everything goes to the primary: canary weight 0, and the
/// apex Service (what clients call; Flagger points it at the primary on promotion) selecting the
/// primary's pods and not the target's. During an analysis the canary weight goes to the
/// target's pods, which the primary's checks below do not see. The apex Service is what carries
/// a promotion, so a Canary whose apex Service was not read is `unknown`, never `pass`.
fn traffic(observed: &Observed, canary: &Value, ns: &str) -> Finding {
    let expected = "canary weight 0, and the apex Service selecting only the primary's pods";
    let source = source(canary, ns).field(".status.canaryWeight");
    let (Some(target), Some(primary)) = (target(canary, ns), primary(canary, ns)) else {
        return Finding::new(Check::TrafficCurrent, Status::Unknown, "no primary", expected)
            .source(source)
            .detail("the Canary's targetRef is not a Deployment or DaemonSet, so what it routes to cannot be told");
    };
    let Some(weight) = i64_at(canary, "/status/canaryWeight") else {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Unknown,
            "canaryWeight not recorded",
            expected,
        )
        .source(source)
        .detail("the Canary's status has no canaryWeight, so how traffic is split cannot be told");
    };
    if weight > 0 {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Fail,
            format!("canary weight {weight}%: {weight}% to {}, {}% to {}", target.name, 100 - weight, primary.name),
            expected,
        )
        .source(source)
        .detail(format!(
            "Flagger is shifting traffic: {}% still goes to {} {ns}/{}, which runs the template from before the promotion, and {weight}% to the canary pods of {}",
            100 - weight,
            primary.kind.kind_name(),
            primary.name,
            target.name
        ))
        .next(Suggestion::run(crate::checks::verify_again("canary", ns, raw::name(canary))));
    }
    // The apex Service: `spec.service.name`, else the target's name (`GetServiceNames`).
    let apex = str_at(canary, "/spec/service/name")
        .filter(|n| !n.is_empty())
        .unwrap_or(&target.name);
    let apex_source = SourceRef::object(ResourceKind::Service, ns, apex).field(".spec.selector");
    let weighed = format!("canary weight 0%, Service {apex}");
    let finding = |status, observed: String| {
        Finding::new(Check::TrafficCurrent, status, observed, expected).source(apex_source.clone())
    };
    let service = observed.services.iter().find(|s| {
        s.metadata.name.as_deref() == Some(apex)
            && s.metadata.namespace.as_deref().unwrap_or(ns) == ns
    });
    let Some(service) = service else {
        return if let Some(d) = observed.denial(ns, ResourceKind::Service) {
            finding(
                Status::Unknown,
                format!("canary weight 0%; Service {apex} not read"),
            )
            .detail(format!(
                "the apex Service {apex} carries the promotion, and reading it was refused: {}",
                d.message
            ))
            .next(d.next_step())
        } else if observed.is_complete(ns, ResourceKind::Service) {
            finding(Status::Fail, format!("canary weight 0%; Service {apex} does not exist"))
                .detail(format!(
                    "the apex Service {apex}, which Flagger points at the primary on promotion, does not exist: Flagger has not initialised the Canary's routing, so no traffic reaches the primary through it"
                ))
                .next(Suggestion::text("see what Flagger did: ").command(describe(canary, ns)))
        } else {
            finding(Status::Unknown, format!("canary weight 0%; the input holds no Service {ns}/{apex}"))
                .detail(format!(
                    "the apex Service {apex} carries the promotion and the input does not hold it: a canary weight of 0 alone does not say the primary gets the traffic"
                ))
                .next(Suggestion::text("include it in the dump: ").command(Command::kubectl([
                    "-n",
                    ns,
                    "get",
                    &format!("service/{apex}"),
                    "-o",
                    "yaml",
                ])))
        };
    };
    let labels = |t: &Target| {
        Workload::find(observed, t.kind, ns, &t.name).map(|w| {
            w.template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.clone())
                .unwrap_or_default()
        })
    };
    let Some(primary_labels) = labels(&primary) else {
        return finding(Status::Unknown, format!("{weighed}: {} not read", primary.name))
            .detail(format!(
                "the input holds no {} {ns}/{}, so whether the apex Service {apex} selects its pods cannot be told",
                primary.kind.kind_name(),
                primary.name
            ));
    };
    let selector = service
        .spec
        .as_ref()
        .and_then(|s| s.selector.clone())
        .unwrap_or_default();
    let selects = |labels: &std::collections::BTreeMap<String, String>| {
        !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    };
    let shown: Vec<String> = selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let shown = if shown.is_empty() {
        "no selector".to_string()
    } else {
        shown.join(",")
    };
    if !selects(&primary_labels) {
        return finding(Status::Fail, format!("{weighed} selects {shown}, not the pods of {}", primary.name))
            .detail(format!(
                "the apex Service {apex} does not select the pods of {}: Flagger has not routed it to the primary",
                primary.name
            ))
            .next(Suggestion::text("see what Flagger did: ").command(describe(canary, ns)));
    }
    // The target's pods are the canary's: an apex selecting them too splits traffic by replica
    // count, whatever the weight says.
    if labels(&target).is_some_and(|l| selects(&l)) {
        return finding(Status::Fail, format!("{weighed} selects {shown}, the pods of {} and of {}", primary.name, target.name))
            .detail(format!(
                "the apex Service {apex} selects the canary pods of {} as well as the primary's: traffic reaches both, whatever the canary weight says",
                target.name
            ))
            .next(Suggestion::text("see what Flagger did: ").command(describe(canary, ns)));
    }
    finding(Status::Pass, format!("{weighed} selects {shown}: the pods of {}", primary.name))
        .detail("promotion finished: the apex Service routes to the primary's pods only, whose endpoints are checked below")
}

/// The Canary's rules: its own evidence, then its primary, compared with its target.
pub(crate) struct Rules;

impl super::rules::KindRules for Rules {
    /// The Canary (its target and `-primary` Deployments are workloads, read by the workload
    /// plan).
    fn reads(
        &self,
        _observed: &Observed,
        target: &Target,
        ns: &str,
    ) -> Vec<super::answers::ReadRequest> {
        vec![super::answers::ReadRequest::object(
            ResourceKind::Canary,
            ns,
            &target.name,
        )]
    }

    fn leads_through(&self) -> &'static [ResourceKind] {
        &[ResourceKind::Canary]
    }

    fn accepts(&self) -> super::answers::Accepts {
        super::answers::Accepts {
            chart_version: false,
            expect: super::answers::ExpectOn::Refused(super::answers::LEADS_TO_ONE_WORKLOAD),
        }
    }

    fn diagnose(
        &self,
        observed: &Observed,
        target: &Target,
        ns: &str,
        since: Option<jiff::Timestamp>,
    ) -> Vec<crate::diagnostic::Diagnostic> {
        crate::diagnose::controller(observed, ResourceKind::Canary, target, ns, since)
    }
    fn leads_to(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<Target> {
        observed
            .find_other(ResourceKind::Canary, ns, &target.name)
            .and_then(|c| primary(c, ns))
            .into_iter()
            .collect()
    }

    fn compares_with(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<Target> {
        observed
            .find_other(ResourceKind::Canary, ns, &target.name)
            .and_then(|c| self::target(c, ns))
            .into_iter()
            .collect()
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        crate::checks::gitops::own_object(observed, ResourceKind::Canary, ns, &target.name, |c| {
            findings(observed, change, c, ns)
        })
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<crate::TimelineEntry> {
        observed
            .find_other(ResourceKind::Canary, ns, &target.name)
            .and_then(|c| {
                crate::checks::gitops::dated_ready(
                    c,
                    ResourceKind::Canary,
                    ns,
                    crate::Moment::GitopsApplied,
                )
            })
            .into_iter()
            .collect()
    }

    fn gave_up(
        &self,
        observed: &Observed,
        _change: &Change,
        target: &Target,
        ns: &str,
    ) -> Option<String> {
        let obj = observed.find_other(ResourceKind::Canary, ns, &target.name)?;
        gave_up(obj).map(|f| format!("{ns}/Canary/{}: {f}", target.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(v: Value) -> PodTemplateSpec {
        serde_json::from_value(v).expect("a template")
    }

    /// What Flagger rewrites on promotion is not a difference; an image is, and shows both.
    #[test]
    fn the_primary_is_compared_ignoring_what_flagger_rewrites() {
        let target = template(json!({
            "metadata": {"labels": {"app": "podinfo", "kustomize.toolkit.fluxcd.io/name": "apps"},
                         "annotations": {"prometheus.io/scrape": "true"}},
            "spec": {"containers": [{"name": "app", "image": "ghcr.io/stefanprodan/podinfo:6.5.1",
                "envFrom": [{"configMapRef": {"name": "podinfo-env"}}]}]}
        }));
        let primary = template(json!({
            "metadata": {"labels": {"app": "podinfo-primary"},
                         "annotations": {"prometheus.io/scrape": "true", "flagger-id": "5d1c-…"}},
            "spec": {"containers": [{"name": "app", "image": "ghcr.io/stefanprodan/podinfo:6.5.1",
                "envFrom": [{"configMapRef": {"name": "podinfo-env-primary"}}]}]}
        }));
        assert_eq!(template_difference(&primary, &target), None);
        let mut old = serde_json::to_value(&primary).expect("json");
        old["spec"]["containers"][0]["image"] = json!("ghcr.io/stefanprodan/podinfo:6.5.0");
        let diff = template_difference(&template(old), &target).expect("a difference");
        assert!(
            diff.contains("podinfo:6.5.0") && diff.contains("podinfo:6.5.1"),
            "{diff}"
        );
        let mut env = serde_json::to_value(&primary).expect("json");
        env["spec"]["containers"][0]["env"] = json!([{"name": "TOKEN", "value": "s3cret"}]);
        let diff = template_difference(&template(env), &target).expect("a difference");
        assert!(!diff.contains("s3cret"), "a value is never shown: {diff}");
    }

    #[test]
    fn a_failed_canary_stops_the_wait() {
        let failed = json!({"status": {"phase": "Failed", "failedChecks": 5}});
        assert!(gave_up(&failed).is_some_and(|g| g.contains("5 failed")));
        assert_eq!(gave_up(&json!({"status": {"phase": "Progressing"}})), None);
    }

    /// The Canary's traffic_current in `observed` (the promoted story's Canary).
    fn traffic_of(observed: &Observed) -> crate::Evidence {
        let canary = observed
            .find_other(ResourceKind::Canary, "test", "podinfo")
            .expect("the story's Canary");
        traffic(observed, canary, "test").evidence
    }

    fn without_apex(mut observed: Observed) -> Observed {
        observed
            .services
            .retain(|s| s.metadata.name.as_deref() != Some("podinfo"));
        observed
    }

    /// Issue 33: a canary weight of 0 is not a promotion. The apex Service carries it: not read
    /// (a dump without it, a refused list) is unknown, absent from a full listing fails, and it
    /// passes only selecting the primary's pods and not the canary's.
    #[test]
    fn traffic_passes_only_on_the_apex_service_read() {
        let story = Observed::of_story("flagger-canary-promoted-primary-current");
        let e = traffic_of(&story);
        assert_eq!(e.status, Status::Pass, "{e:#?}");
        assert_eq!(e.source_ref.name, "podinfo");

        let dump = without_apex(story.clone());
        let e = traffic_of(&dump);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(
            e.observed.contains("holds no Service test/podinfo"),
            "{}",
            e.observed
        );

        let mut listed = dump.clone();
        listed.mark_complete("test", ResourceKind::Service);
        let e = traffic_of(&listed);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(e.detail.contains("does not exist"), "{}", e.detail);

        let mut refused = dump;
        refused.denied.push(crate::Denied {
            namespace: Some("test".into()),
            resource: ResourceKind::Service,
            verb: "list".into(),
            message: "services is forbidden".into(),
        });
        let e = traffic_of(&refused);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(e.detail.contains("refused"), "{}", e.detail);

        // An apex selecting by a label the target's pods carry too reaches the canary pods.
        let mut both = story.clone();
        for s in both.services.iter_mut().map(std::sync::Arc::make_mut) {
            if s.metadata.name.as_deref() == Some("podinfo") {
                s.spec.as_mut().expect("spec").selector =
                    Some([("app.kubernetes.io/name".to_string(), "podinfo".to_string())].into());
            }
        }
        for d in both
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::Deployment>()
            .iter_mut()
            .map(std::sync::Arc::make_mut)
        {
            let labels = d
                .spec
                .as_mut()
                .and_then(|s| s.template.metadata.as_mut())
                .and_then(|m| m.labels.as_mut())
                .expect("template labels");
            labels.insert("app.kubernetes.io/name".into(), "podinfo".into());
        }
        let e = traffic_of(&both);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(
            e.detail.contains("as well as the primary's"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn the_primary_is_the_targets_name_with_primary() {
        let canary = json!({"spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"}}});
        assert_eq!(
            primary(&canary, "test"),
            Some(Target::new(
                TargetKind::Deployment,
                Some("test"),
                "podinfo-primary"
            ))
        );
        let service = json!({"spec": {"targetRef": {"apiVersion": "v1", "kind": "Service", "name": "podinfo"}}});
        assert_eq!(primary(&service, "test"), None);
    }
}
