//! An Argo Rollout (`rollouts.argoproj.io/v1alpha1`), read by the field names of argo-rollouts'
//! `pkg/apis/rollouts/v1alpha1/types.go`.
//!
//! Its status says `Healthy` while old pods still run under `scaleDownDelaySeconds`
//! (argoproj/argo-rollouts#1180, #3836), so what is read here is structural: the current
//! revision is the ReplicaSet carrying the Rollout's template (its pods labelled
//! `rollouts-pod-template-hash`); it is fully promoted when `stableRS == currentPodHash`, a
//! canary's `currentStepIndex` is past its last step and a blue-green's
//! `blueGreen.activeSelector` is the current hash; and the pods that serve are the hashes the
//! Rollout routes traffic to (`WorkloadStatus::routed`), not every Ready pod.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::deployment::replicaset_with_template;
use crate::kinds::workload::{
    Destination, NamedService, Progress, Revision, Routed, Share, TrafficSplit, UpdateStrategy,
    Workload, WorkloadStatus, WorkloadType,
};
use crate::suggestion::Suggestion;
use crate::{Observed, TargetKind};

/// The label Argo Rollouts puts on a Rollout's ReplicaSets and pods.
pub const ROLLOUTS_POD_TEMPLATE_HASH: &str = "rollouts-pod-template-hash";

/// An Argo Rollout: the fields liveproof reads, the rest kept as they came.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollout {
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<RolloutSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RolloutStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PodTemplateSpec>,
    /// The template comes from another object (`spec.workloadRef`): not followed yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_ref: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RolloutStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blue_green: Option<BlueGreenStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_routing: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_service: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_service: Option<String>,
    /// A ping-pong canary (ALB, Istio or a plugin router): two Services the controller takes
    /// turns pointing at the stable revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_pong: Option<PingPong>,
}

/// `spec.strategy.canary.pingPong`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PingPong {
    #[serde(default)]
    pub ping_service: String,
    #[serde(default)]
    pub pong_service: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_service: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_service: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_promotion_enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// A string in Argo Rollouts' API (some older objects have a number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_pod_hash: Option<String>,
    #[serde(default, rename = "stableRS", skip_serializing_if = "Option::is_none")]
    pub stable_rs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_step_index: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_conditions: Option<Vec<PauseCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<RolloutCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blue_green: Option<BlueGreenStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseCondition {
    #[serde(default)]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutCondition {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<TrafficWeights>,
    /// Which of a ping-pong canary's Services is the stable one: `ping` or `pong`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_ping_pong: Option<String>,
}

/// The weights the controller set on the traffic router: stable, canary and the `additional`
/// destinations (an experiment's ReplicaSets, say), each a share of the same 100%.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrafficWeights {
    pub canary: WeightDestination,
    pub stable: WeightDestination,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional: Vec<WeightDestination>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightDestination {
    #[serde(default)]
    pub weight: i32,
    #[serde(default)]
    pub pod_template_hash: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub service_name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_selector: Option<String>,
}

impl k8s_openapi::Resource for Rollout {
    const API_VERSION: &'static str = "argoproj.io/v1alpha1";
    const GROUP: &'static str = "argoproj.io";
    const KIND: &'static str = "Rollout";
    const VERSION: &'static str = "v1alpha1";
    const URL_PATH_SEGMENT: &'static str = "rollouts";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for Rollout {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// What a Rollout without a status or strategy reads as: every field unset.
static NO_STATUS: LazyLock<RolloutStatus> = LazyLock::new(RolloutStatus::default);
static NO_STRATEGY: LazyLock<RolloutStrategy> = LazyLock::new(RolloutStrategy::default);

impl Rollout {
    fn status(&self) -> &RolloutStatus {
        self.status.as_ref().unwrap_or(&NO_STATUS)
    }

    fn strategy(&self) -> &RolloutStrategy {
        self.spec
            .as_ref()
            .and_then(|s| s.strategy.as_ref())
            .unwrap_or(&NO_STRATEGY)
    }

    /// The canary's steps, when it is a canary.
    fn steps(&self) -> Option<usize> {
        self.strategy()
            .canary
            .as_ref()
            .map(|c| c.steps.as_ref().map_or(0, Vec::len))
    }

    /// A ping-pong canary's Services, by side when `status.canary.stablePingPong` says which
    /// is stable (the controller flips it on each promotion, `promoteStable`); the traffic
    /// router sends the stable weight to the stable side and the canary weight to the other
    /// (`GetStableAndCanaryServices`).
    fn ping_pong(&self) -> Option<Sides<'_>> {
        let pp = self.strategy().canary.as_ref()?.ping_pong.as_ref()?;
        let (ping, pong) = (pp.ping_service.as_str(), pp.pong_service.as_str());
        let stable = self
            .status()
            .canary
            .as_ref()
            .and_then(|c| c.stable_ping_pong.as_deref());
        Some(match stable {
            Some("ping") => Sides::Known {
                stable: ping,
                canary: pong,
            },
            Some("pong") => Sides::Known {
                stable: pong,
                canary: ping,
            },
            _ => Sides::Unsaid { ping, pong },
        })
    }

    fn condition(&self, type_: &str) -> Option<&RolloutCondition> {
        self.status()
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == type_)
    }

    /// Why it waits for somebody: a pause with no end, or `spec.paused`.
    fn paused(&self) -> Option<String> {
        if self.spec.as_ref().and_then(|s| s.paused) == Some(true) {
            return Some("spec.paused is true".into());
        }
        let reasons: Vec<&str> = self
            .status()
            .pause_conditions
            .iter()
            .flatten()
            .map(|p| p.reason.as_str())
            .collect();
        (!reasons.is_empty()).then(|| format!("paused ({})", reasons.join(", ")))
    }
}

impl WorkloadType for Rollout {
    const KIND: TargetKind = TargetKind::Rollout;

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn template(&self) -> Option<&PodTemplateSpec> {
        self.spec.as_ref().and_then(|s| s.template.as_ref())
    }
    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        self.spec.as_mut().and_then(|s| s.template.as_mut())
    }
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.as_ref().and_then(|s| s.selector.as_ref())
    }

    fn view<'a>(&'a self, namespace: &'a str, name: &'a str) -> Option<Workload<'a>> {
        let spec = self.spec.as_ref()?;
        Some(Workload {
            kind: Self::KIND,
            namespace,
            name,
            meta: &self.metadata,
            template: spec.template.as_ref()?,
            selector: spec.selector.as_ref()?,
            generation: self.metadata.generation,
            observed_generation: self
                .status
                .as_ref()
                .and_then(|s| s.observed_generation.as_ref())
                .and_then(|g| match g {
                    Value::String(s) => s.parse().ok(),
                    other => other.as_i64(),
                }),
            desired: Some(spec.replicas.unwrap_or(1)),
            update_strategy: UpdateStrategy::Rolling,
            status: self,
        })
    }
}

impl WorkloadStatus for Rollout {
    /// The Services the controller switches between revisions by `rollouts-pod-template-hash`
    /// (`rollout/service.go`): a blue-green's active and preview, a canary's stable and canary
    /// (with or without traffic routing), a ping-pong canary's ping and pong. Traffic reaches
    /// the Rollout through them, so their endpoints, not `status.blueGreen.activeSelector`, say
    /// which pods serve. Of ping and pong, only the router reaches either: the side it gives
    /// 0% is idle, and after a promotion that side still selects the old revision until the
    /// next rollout re-points it (`reconcilePingAndPongService` runs only before promotion).
    fn named_services(&self) -> Vec<NamedService<'_>> {
        let strategy = self.strategy();
        let canary = strategy.canary.iter().flat_map(|c| {
            [
                (&c.stable_service, ".spec.strategy.canary.stableService"),
                (&c.canary_service, ".spec.strategy.canary.canaryService"),
            ]
        });
        let blue_green = strategy.blue_green.iter().flat_map(|b| {
            [
                (&b.active_service, ".spec.strategy.blueGreen.activeService"),
                (
                    &b.preview_service,
                    ".spec.strategy.blueGreen.previewService",
                ),
            ]
        });
        let mut out: Vec<NamedService<'_>> = canary
            .chain(blue_green)
            .filter_map(|(name, field)| {
                let name = name.as_deref().filter(|n| !n.is_empty())?;
                Some(NamedService {
                    name,
                    field,
                    share: Share::Routed,
                })
            })
            .collect();
        let field_of = |name: &str| {
            let pp = self
                .strategy()
                .canary
                .as_ref()
                .and_then(|c| c.ping_pong.as_ref());
            if pp.is_some_and(|pp| pp.ping_service == name) {
                ".spec.strategy.canary.pingPong.pingService"
            } else {
                ".spec.strategy.canary.pingPong.pongService"
            }
        };
        let canary_weight = self
            .status()
            .canary
            .as_ref()
            .and_then(|c| c.weights.as_ref())
            .map(|w| w.canary.weight);
        match self.ping_pong() {
            Some(Sides::Known { stable, canary }) => {
                let canary_share = match canary_weight {
                    Some(0) => Share::Idle(format!(
                        "the canary side: status.canary.stablePingPong names {stable} stable, and status.canary.weights.canary gives {canary} 0% of the traffic router's traffic"
                    )),
                    Some(_) => Share::Routed,
                    None => Share::NotRecorded(format!(
                        "the canary side ({stable} is stable by status.canary.stablePingPong), and no status.canary.weights say what the traffic router gives it"
                    )),
                };
                out.push(NamedService {
                    name: stable,
                    field: field_of(stable),
                    share: Share::Routed,
                });
                out.push(NamedService {
                    name: canary,
                    field: field_of(canary),
                    share: canary_share,
                });
            }
            Some(Sides::Unsaid { ping, pong }) => {
                for name in [ping, pong] {
                    out.push(NamedService {
                        name,
                        field: field_of(name),
                        share: Share::NotRecorded(
                            "status.canary.stablePingPong does not say whether ping or pong is the stable side the traffic router sends to".into(),
                        ),
                    });
                }
            }
            None => {}
        }
        out.retain(|n| !n.name.is_empty());
        out
    }

    /// A canary with traffic routing: every destination of `status.canary.weights`.
    fn traffic_split(&self) -> Option<TrafficSplit> {
        self.strategy().canary.as_ref()?.traffic_routing.as_ref()?;
        let w = self.status().canary.as_ref()?.weights.as_ref()?;
        let destination = |role: String, d: &WeightDestination| Destination {
            role,
            weight: d.weight,
            hash: d.pod_template_hash.clone(),
            service: Some(d.service_name.clone()).filter(|s| !s.is_empty()),
        };
        let mut destinations = vec![
            destination("stable".into(), &w.stable),
            destination("canary".into(), &w.canary),
        ];
        // A ping-pong router sends the stable weight to the stable side, the canary weight to
        // the other; `serviceName` records only `stableService`/`canaryService`.
        if let Some(Sides::Known { stable, canary }) = self.ping_pong() {
            for (d, side) in destinations.iter_mut().zip([stable, canary]) {
                d.service.get_or_insert_with(|| side.to_string());
            }
        }
        destinations.extend(
            w.additional
                .iter()
                .enumerate()
                .map(|(i, d)| destination(format!("additional[{i}]"), d)),
        );
        Some(TrafficSplit {
            label: ROLLOUTS_POD_TEMPLATE_HASH,
            destinations,
            source: ".status.canary.weights",
        })
    }

    /// The ReplicaSet carrying the Rollout's template (ignoring the hash label), as for a
    /// Deployment; its hash is what `status.currentPodHash` names once the controller caught up.
    fn current_revision(&self, w: &Workload, observed: &Observed) -> Revision {
        let current = self.status().current_pod_hash.as_deref();
        replicaset_with_template(w, observed, ROLLOUTS_POD_TEMPLATE_HASH, current)
    }

    fn progress(&self, w: &Workload) -> Progress {
        let s = self.status();
        let desired = w.desired.unwrap_or(1);
        let updated = s.updated_replicas.unwrap_or(0);
        let available = s.available_replicas.unwrap_or(0);
        let current = s.current_pod_hash.clone().unwrap_or_default();
        let stable = s.stable_rs.clone().unwrap_or_default();
        let mut facts = vec![format!(
            "phase {}",
            s.phase.as_deref().unwrap_or("not reported")
        )];
        let promoted = !current.is_empty() && current == stable;
        facts.push(match promoted {
            true => format!("stableRS {stable} is the current hash"),
            false => format!(
                "stableRS {} is not the current hash {}",
                or_none(&stable),
                or_none(&current)
            ),
        });
        let mut complete = promoted;
        if let Some(steps) = self.steps() {
            let at = s.current_step_index.unwrap_or(steps as i32);
            facts.push(format!("step {at}/{steps}"));
            complete &= at >= steps as i32;
            if let Some(weights) = s.canary.as_ref().and_then(|c| c.weights.as_ref()) {
                let additional: i32 = weights.additional.iter().map(|d| d.weight).sum();
                facts.push(if weights.additional.is_empty() {
                    format!(
                        "canary weight {}%, stable {}%",
                        weights.canary.weight, weights.stable.weight
                    )
                } else {
                    format!(
                        "canary weight {}%, stable {}%, additional {additional}%",
                        weights.canary.weight, weights.stable.weight
                    )
                });
            }
        }
        if self.strategy().blue_green.is_some() {
            let active = s
                .blue_green
                .as_ref()
                .and_then(|b| b.active_selector.clone())
                .unwrap_or_default();
            facts.push(format!("activeSelector {}", or_none(&active)));
            complete &= !current.is_empty() && active == current;
        }
        facts.push(format!(
            "{updated}/{desired} updated, {available} available"
        ));
        complete &= updated >= desired && available >= desired;
        // The condition's status, not its reason: Completed=False also carries reason
        // RolloutCompleted.
        if let Some(c) = self.condition("Completed") {
            facts.push(format!("Completed={}", c.status));
        }
        let paused = self.paused();
        let gave_up = self.gave_up();
        complete &= paused.is_none() && gave_up.is_none();
        let stuck = gave_up
            .map(|why| {
                (
                    why,
                    Suggestion::text("see why the rollout stopped: ")
                        .command(w.kubectl(&["describe"], &[])),
                )
            })
            .or_else(|| {
                paused.map(|why| {
                    (
                        format!("{why}: Argo Rollouts holds the rollout at this step until it is promoted or its pause ends"),
                        Suggestion::text("promote it when the new version is good (")
                            .command(crate::suggestion::Command::kubectl([
                                "argo", "rollouts", "promote", w.name, "-n", w.namespace,
                            ]))
                            .then("), then verify again"),
                    )
                })
            });
        Progress {
            counts: facts.join(", "),
            complete,
            stuck,
        }
    }

    /// `Completed` turning True is the full promotion: the controller sets it False when a
    /// new rollout starts and True once stable is the current revision (`utils/conditions`).
    fn promoted(&self, w: &Workload) -> Option<crate::TimelineEntry> {
        let completed = self.condition("Completed").filter(|c| c.status == "True")?;
        let at = completed.last_transition_time.as_deref()?.parse().ok()?;
        Some(crate::TimelineEntry::read(
            crate::Moment::Promoted,
            at,
            w.source()
                .field(".status.conditions[Completed].lastTransitionTime"),
        ))
    }

    fn gave_up(&self) -> Option<String> {
        let s = self.status();
        if s.abort == Some(true) {
            return Some(format!(
                "the rollout was aborted{}",
                s.message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ));
        }
        if s.phase.as_deref() == Some("Degraded") {
            return Some(format!(
                "phase Degraded{}",
                s.message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ));
        }
        None
    }

    fn revision_name(&self) -> Option<String> {
        self.status
            .as_ref()
            .and_then(|s| s.current_pod_hash.clone())
    }

    /// `kubectl rollout restart` does not know a Rollout; its plugin restarts it through
    /// `spec.restartAt`.
    fn restart(&self, w: &Workload) -> crate::suggestion::Command {
        crate::suggestion::Command::kubectl([
            "argo",
            "rollouts",
            "restart",
            w.name,
            "-n",
            w.namespace,
        ])
    }

    /// Blue-green: the active selector's hash alone. A canary with traffic routing: the hashes
    /// its weights give traffic (stable, canary and every additional destination). A basic
    /// canary routes by replica count through the Services, so every Ready pod serves (`None`).
    fn routed(&self) -> Option<Routed> {
        let s = self.status();
        let strategy = self.strategy();
        if strategy.blue_green.is_some() {
            let active = s.blue_green.as_ref()?.active_selector.clone()?;
            return Some(Routed {
                label: ROLLOUTS_POD_TEMPLATE_HASH,
                weights: BTreeMap::from([(active, 100)]),
                source: ".status.blueGreen.activeSelector",
            });
        }
        if let Some(split) = self.traffic_split() {
            return Some(Routed {
                label: split.label,
                weights: split.by_revision(),
                source: split.source,
            });
        }
        strategy.canary.as_ref()?.traffic_routing.as_ref()?;
        // Without weights reported, a fully promoted rollout sends everything to stable.
        let stable = s.stable_rs.clone()?;
        (s.current_pod_hash.as_deref() == Some(stable.as_str())).then(|| Routed {
            label: ROLLOUTS_POD_TEMPLATE_HASH,
            weights: BTreeMap::from([(stable, 100)]),
            source: ".status.stableRS",
        })
    }
}

/// A ping-pong canary's two Services.
enum Sides<'a> {
    /// As `status.canary.stablePingPong` says.
    Known { stable: &'a str, canary: &'a str },
    /// The status does not say which is stable.
    Unsaid { ping: &'a str, pong: &'a str },
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "(none)"
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Target;
    use std::sync::Arc;

    fn story(name: &str) -> Observed {
        Observed::of_story(name)
    }

    fn rollout(observed: &Observed) -> &Rollout {
        observed
            .workloads
            .of::<Rollout>()
            .first()
            .expect("the story's Rollout")
    }

    #[test]
    fn observed_generation_is_read_as_a_string_or_a_number() {
        let mut observed = story("argo-rollout-canary-promoted-old-pods-idle");
        let view = |o: &Observed| {
            rollout(o)
                .view("shop", "checkout")
                .and_then(|w| w.observed_generation)
        };
        assert_eq!(view(&observed), Some(7));
        let mut r = rollout(&observed).clone();
        r.status.as_mut().expect("status").observed_generation = Some(serde_json::json!(6));
        *observed.workloads.of_mut::<Rollout>() = vec![Arc::new(r.clone())];
        assert_eq!(view(&observed), Some(6));
        r.status.as_mut().expect("status").observed_generation = Some(serde_json::json!("x"));
        *observed.workloads.of_mut::<Rollout>() = vec![Arc::new(r)];
        assert_eq!(
            view(&observed),
            None,
            "unreadable is unknown, never caught up"
        );
    }

    /// `Completed=False` carries reason `RolloutCompleted` too: the status decides.
    #[test]
    fn completed_false_is_not_complete_whatever_its_reason() {
        let observed = story("argo-rollout-canary-promoted-old-pods-idle");
        let mut r = rollout(&observed).clone();
        let w = r.view("shop", "checkout").expect("a view");
        assert!(r.progress(&w).complete);
        let status = r.status.as_mut().expect("status");
        status.stable_rs = Some(OLD_HASH.into());
        let w = r.view("shop", "checkout").expect("a view");
        assert!(!r.progress(&w).complete, "stableRS not the current hash");
    }

    const OLD_HASH: &str = "5c6d7f8b9";

    /// Two ReplicaSets whose templates differ only where the API server fills in a default
    /// (a Rollout once set `terminationGracePeriodSeconds: 30` explicitly, say) compare equal;
    /// the one the controller calls current (`status.currentPodHash`) is the current revision,
    /// whichever comes first.
    #[test]
    fn of_two_equal_templates_the_controllers_current_hash_is_current() {
        let mut observed = story("argo-rollout-canary-promoted-old-pods-idle");
        let r = rollout(&observed).clone();
        let current = r.status().current_pod_hash.clone().expect("a current hash");
        let original = observed
            .replicasets
            .iter()
            .find(|rs| {
                rs.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(ROLLOUTS_POD_TEMPLATE_HASH))
                    == Some(&current)
            })
            .expect("the current ReplicaSet")
            .clone();
        let mut twin = (*original).clone();
        twin.metadata.name = Some("checkout-7f7f7f7f7f".into());
        twin.label_with_template(ROLLOUTS_POD_TEMPLATE_HASH, "7f7f7f7f7f");
        observed.replicasets.insert(0, Arc::new(twin));
        let w = r.view("shop", "checkout").expect("a view");
        match r.current_revision(&w, &observed) {
            Revision::Current(c) => assert_eq!(c.hash, current),
            _ => panic!("no current revision"),
        }
    }

    /// `--wait` stops on an aborted rollout, and keeps waiting on a paused one: somebody may
    /// promote it.
    #[test]
    fn wait_stops_on_an_abort_not_on_a_pause() {
        let target = [Target::new(TargetKind::Rollout, Some("shop"), "checkout")];
        let aborted = story("argo-rollout-canary-aborted");
        let change = crate::Change::default();
        let failure =
            crate::final_failure(&aborted, &change, &target, "default").expect("a final failure");
        assert!(failure.contains("aborted"), "{failure}");
        let paused = story("argo-rollout-canary-paused-at-20-percent");
        assert_eq!(
            crate::final_failure(&paused, &change, &target, "default"),
            None
        );
    }

    /// The serving pods of a blue-green are the active selector's alone; a basic canary (no
    /// traffic routing) sends to every Ready pod.
    #[test]
    fn routing_follows_the_strategy() {
        let observed = story("argo-rollout-bluegreen-awaiting-promotion");
        let routed = rollout(&observed).routed().expect("blue-green routes");
        assert!(routed.serves(Some(OLD_HASH)));
        assert!(!routed.serves(Some("7b9f4d6c8")));
        assert!(!routed.serves(None));
        let observed = story("argo-rollout-canary-paused-at-20-percent");
        let mut r = rollout(&observed).clone();
        let routed = r.routed().expect("weights");
        assert_eq!(routed.weights.get(OLD_HASH), Some(&80));
        r.spec
            .as_mut()
            .and_then(|s| s.strategy.as_mut())
            .and_then(|s| s.canary.as_mut())
            .expect("a canary")
            .traffic_routing = None;
        assert!(r.routed().is_none(), "a basic canary routes by replicas");
    }

    /// `status.canary.weights.additional[]` is read as Argo Rollouts writes it: each
    /// destination's share counts toward its hash, so the old pods it names serve.
    #[test]
    fn every_weight_listed_routes_additional_ones_too() {
        let observed = story("argo-rollout-canary-weights-additional-to-old-hash");
        let r = rollout(&observed);
        let weights = r
            .status()
            .canary
            .as_ref()
            .and_then(|c| c.weights.as_ref())
            .expect("weights");
        assert_eq!(weights.additional.len(), 1);
        assert_eq!(weights.additional[0].service_name, "checkout-baseline");
        let routed = r.routed().expect("weights");
        assert_eq!(routed.weights.get(OLD_HASH), Some(&50));
        assert!(routed.serves(Some(OLD_HASH)));
        let split = r.traffic_split().expect("a split");
        let roles: Vec<&str> = split.destinations.iter().map(|d| d.role.as_str()).collect();
        assert_eq!(roles, ["stable", "canary", "additional[0]"]);
        let names: Vec<&str> = r.named_services().iter().map(|n| n.name).collect();
        assert_eq!(names, ["checkout-stable", "checkout-canary"]);
    }

    /// A Rollout's pods started before the change: the restart it is told to run is the
    /// plugin's, which `kubectl rollout restart` (Deployments' own) is not.
    #[test]
    fn a_rollout_is_restarted_through_its_plugin() {
        let observed = story("argo-rollout-canary-promoted-old-pods-idle");
        let target = [Target::new(TargetKind::Rollout, Some("shop"), "checkout")];
        let change = crate::Change {
            since: Some("2026-07-12T12:00:00Z".parse().expect("a time")),
            ..Default::default()
        };
        let report = crate::judge(&observed, &change, &target, "shop");
        let restarted = report.targets[0]
            .evidence
            .iter()
            .find(|e| e.check == crate::Check::PodRestarted)
            .expect("pod_restarted");
        assert_eq!(restarted.status, crate::Status::Fail);
        let next = report.targets[0]
            .next_step
            .as_ref()
            .expect("a next step")
            .to_string();
        assert!(
            next.contains("kubectl argo rollouts restart checkout -n shop"),
            "{next}"
        );
    }

    /// Live from the full promotion when it came after the pods were Ready; a `Completed`
    /// condition older than the change describes an earlier rollout, and the pods date it.
    #[test]
    fn live_since_is_the_promotion_when_it_is_this_changes() {
        let judged = |completed: &str| {
            let mut observed = story("argo-rollout-canary-promoted-old-pods-idle");
            let mut rollout = (*observed.workloads.of::<Rollout>()[0]).clone();
            for c in rollout
                .status
                .iter_mut()
                .flat_map(|s| s.conditions.iter_mut().flatten())
            {
                if c.type_ == "Completed" {
                    c.last_transition_time = Some(completed.to_string());
                }
            }
            observed.workloads.of_mut::<Rollout>()[0] = std::sync::Arc::new(rollout);
            let change = crate::Change {
                since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
                images: vec![
                    crate::ExpectedImage::parse("ghcr.io/acme/checkout:2.4.0").expect("an image")
                ],
                ..Default::default()
            };
            let target = [Target::new(TargetKind::Rollout, Some("shop"), "checkout")];
            let report = crate::judge(&observed, &change, &target, "shop");
            assert_eq!(report.verdict, crate::Verdict::Live, "{report:#?}");
            report.targets[0].live_since.clone()
        };
        assert_eq!(
            judged("2026-07-12T10:05:00Z").as_deref(),
            Some("2026-07-12T10:05:00Z")
        );
        // Its last new pod became Ready at 10:04:00.
        assert_eq!(
            judged("2026-07-10T09:00:00Z").as_deref(),
            Some("2026-07-12T10:04:00Z")
        );
    }
}
