//! A Deployment, StatefulSet or DaemonSet seen through what the checks need, and how its
//! current revision is worked out — the way its controller works it out.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::Metadata;
use serde_json::Value;

use super::pods;
use crate::selector;
use crate::suggestion::Command;
use crate::{Observed, ResourceKind, SourceRef, TargetKind};

/// The label a Deployment's ReplicaSets and pods carry their template hash in.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// The label StatefulSet and DaemonSet pods carry their ControllerRevision in.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
const DEPLOYMENT_REVISION: &str = "deployment.kubernetes.io/revision";

pub struct Workload<'a> {
    pub kind: TargetKind,
    pub namespace: &'a str,
    pub name: &'a str,
    pub meta: &'a ObjectMeta,
    pub template: &'a PodTemplateSpec,
    pub selector: &'a LabelSelector,
    pub generation: Option<i64>,
    pub observed_generation: Option<i64>,
    /// Replicas wanted (`spec.replicas`, default 1; a DaemonSet's `desiredNumberScheduled`).
    pub desired: Option<i32>,
    /// `OnDelete` (StatefulSet/DaemonSet) or a StatefulSet partition: old pods stay by design.
    pub update_strategy: UpdateStrategy,
    /// The object itself, by kind: what the kind's own checks read.
    pub object: WorkloadObject<'a>,
}

/// A workload object of one of the workload kinds. A new workload kind is a variant here, and
/// the compiler then asks every check that reads kind-specific status for its arm.
#[derive(Debug, Clone, Copy)]
pub enum WorkloadObject<'a> {
    Deployment(&'a Deployment),
    StatefulSet(&'a StatefulSet),
    DaemonSet(&'a DaemonSet),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateStrategy {
    Rolling,
    OnDelete,
    Partitioned(i32),
}

impl<'a> Workload<'a> {
    /// `kubectl -n NS BEFORE… KIND/NAME AFTER…`: a command about this workload, as next
    /// steps suggest it.
    pub(crate) fn kubectl(&self, before: &[&str], after: &[&str]) -> Command {
        let object = format!("{}/{}", self.kind, self.name);
        let words = before
            .iter()
            .copied()
            .chain([object.as_str()])
            .chain(after.iter().copied());
        Command::kubectl(["-n", self.namespace].into_iter().chain(words))
    }

    /// `kubectl -n NS get pods -l SELECTOR AFTER…`: a command about this workload's pods.
    pub(crate) fn kubectl_pods(&self, after: &[&str]) -> Command {
        let selector = selector::describe(self.selector);
        let words = ["-n", self.namespace, "get", "pods", "-l", selector.as_str()];
        Command::kubectl(words.into_iter().chain(after.iter().copied()))
    }

    /// The workload as a source: `apps/Deployment/inventory`.
    pub fn source(&self) -> SourceRef {
        SourceRef::object(self.kind.resource(), self.namespace, self.name)
    }

    pub fn find(
        observed: &'a Observed,
        kind: TargetKind,
        namespace: &'a str,
        name: &'a str,
    ) -> Option<Workload<'a>> {
        let is_it = |m: &ObjectMeta| {
            m.name.as_deref() == Some(name)
                && m.namespace.as_deref().unwrap_or(namespace) == namespace
        };
        match kind {
            TargetKind::Deployment => {
                let d = observed.deployments.iter().find(|d| is_it(&d.metadata))?;
                let spec = d.spec.as_ref()?;
                Some(Workload {
                    kind,
                    namespace,
                    name,
                    meta: &d.metadata,
                    template: &spec.template,
                    selector: &spec.selector,
                    generation: d.metadata.generation,
                    observed_generation: d.status.as_ref().and_then(|s| s.observed_generation),
                    desired: Some(spec.replicas.unwrap_or(1)),
                    update_strategy: UpdateStrategy::Rolling,
                    object: WorkloadObject::Deployment(d),
                })
            }
            TargetKind::StatefulSet => {
                let s = observed.statefulsets.iter().find(|s| is_it(&s.metadata))?;
                let spec = s.spec.as_ref()?;
                let strategy = spec.update_strategy.as_ref();
                let update_strategy = match strategy.and_then(|u| u.type_.as_deref()) {
                    Some("OnDelete") => UpdateStrategy::OnDelete,
                    _ => match strategy
                        .and_then(|u| u.rolling_update.as_ref())
                        .and_then(|r| r.partition)
                    {
                        Some(p) if p > 0 => UpdateStrategy::Partitioned(p),
                        _ => UpdateStrategy::Rolling,
                    },
                };
                Some(Workload {
                    kind,
                    namespace,
                    name,
                    meta: &s.metadata,
                    template: &spec.template,
                    selector: &spec.selector,
                    generation: s.metadata.generation,
                    observed_generation: s.status.as_ref().and_then(|s| s.observed_generation),
                    desired: Some(spec.replicas.unwrap_or(1)),
                    update_strategy,
                    object: WorkloadObject::StatefulSet(s),
                })
            }
            TargetKind::DaemonSet => {
                let d = observed.daemonsets.iter().find(|d| is_it(&d.metadata))?;
                let spec = d.spec.as_ref()?;
                let on_delete = spec
                    .update_strategy
                    .as_ref()
                    .and_then(|u| u.type_.as_deref())
                    == Some("OnDelete");
                Some(Workload {
                    kind,
                    namespace,
                    name,
                    meta: &d.metadata,
                    template: &spec.template,
                    selector: &spec.selector,
                    generation: d.metadata.generation,
                    observed_generation: d.status.as_ref().and_then(|s| s.observed_generation),
                    desired: d.status.as_ref().map(|s| s.desired_number_scheduled),
                    update_strategy: if on_delete {
                        UpdateStrategy::OnDelete
                    } else {
                        UpdateStrategy::Rolling
                    },
                    object: WorkloadObject::DaemonSet(d),
                })
            }
            TargetKind::Release
            | TargetKind::HelmRelease
            | TargetKind::Kustomization
            | TargetKind::Application => None,
        }
    }

    /// Whether the controller has processed the current spec; `None` when unreadable.
    pub fn generation_caught_up(&self) -> Option<bool> {
        Some(self.observed_generation? >= self.generation?)
    }

    fn owns(&self, meta: &ObjectMeta) -> bool {
        let kind = self.kind.kind_name();
        match meta.owner_references.as_deref() {
            Some(refs) if !refs.is_empty() => refs.iter().any(|r| {
                r.kind == kind
                    && match self.meta.uid.as_deref() {
                        Some(uid) => r.uid == uid,
                        None => r.name == self.name,
                    }
            }),
            // A hand-written dump may drop ownerReferences; fall back to the selector.
            _ => selector::matches(self.selector, meta.labels.as_ref()),
        }
    }

    /// The objects in its namespace this workload owns (its ReplicaSets or revisions).
    fn owned<'o, T: Metadata<Ty = ObjectMeta>>(&self, items: &'o [Arc<T>]) -> Vec<&'o T> {
        items
            .iter()
            .map(|o| &**o)
            .filter(|o| {
                o.metadata().namespace.as_deref().unwrap_or(self.namespace) == self.namespace
            })
            .filter(|o| self.owns(o.metadata()))
            .collect()
    }

    /// The pods this workload selects, in its namespace.
    pub fn pods(&self, observed: &'a Observed) -> Vec<&'a Pod> {
        observed.pods_selected(self.namespace, self.selector)
    }

    /// Works out the current revision and how its pods are labelled.
    pub fn current_revision(&self, observed: &'a Observed) -> Revision {
        match self.object {
            WorkloadObject::Deployment(_) => self.deployment_revision(observed),
            WorkloadObject::StatefulSet(s) => self.statefulset_revision(s, observed),
            WorkloadObject::DaemonSet(_) => self.daemonset_revision(observed),
        }
    }

    fn revision_input_missing(&self, observed: &Observed, kind: ResourceKind) -> Option<Revision> {
        if let Some(denied) = observed.denial(self.namespace, kind) {
            return Some(Revision::unknown(format!(
                "could not read {} in {}: {}",
                kind.plural(),
                self.namespace,
                denied.message
            )));
        }
        if observed.is_complete(self.namespace, kind) {
            return None;
        }
        Some(Revision::Unknown(
            format!("the input holds no {} of {}", kind.plural(), self.source()),
            Some(
                crate::Suggestion::text("include them (")
                    .command(Command::kubectl([
                        "-n",
                        self.namespace,
                        "get",
                        kind.plural(),
                        "-o",
                        "yaml",
                    ]))
                    .then(")"),
            ),
        ))
    }

    /// The ReplicaSet whose pod template equals the Deployment's, ignoring the hash label —
    /// the controller's own test (`EqualIgnoreHash`).
    fn deployment_revision(&self, observed: &Observed) -> Revision {
        let owned: Vec<&ReplicaSet> = self.owned(&observed.replicasets);
        if owned.is_empty() {
            if let Some(missing) = self.revision_input_missing(observed, ResourceKind::ReplicaSet) {
                return missing;
            }
        }
        let want = template_ignoring(self.template, POD_TEMPLATE_HASH);
        let current = owned.iter().find(|rs| {
            rs.spec
                .as_ref()
                .and_then(|s| s.template.as_ref())
                .is_some_and(|t| template_ignoring(t, POD_TEMPLATE_HASH) == want)
        });
        let Some(rs) = current else {
            return Revision::NotCreated(self.not_created_reason(&format!(
                "none of its {} ReplicaSet(s) carries the current pod template",
                owned.len()
            )));
        };
        let rs_name = rs.metadata.name.clone().unwrap_or_default();
        let hash = rs
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(POD_TEMPLATE_HASH))
            .cloned();
        let Some(hash) = hash else {
            return Revision::unknown(format!(
                "ReplicaSet {rs_name} has no {POD_TEMPLATE_HASH} label"
            ));
        };
        let revision = rs
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(DEPLOYMENT_REVISION))
            .map(|r| format!(" (revision {r})"))
            .unwrap_or_default();
        // Status read before the ReplicaSet controller caught up describes the previous spec
        // (Shopify/krane#325).
        let rs_gen = rs.metadata.generation;
        let rs_observed = rs.status.as_ref().and_then(|s| s.observed_generation);
        let status_stale = match (rs_gen, rs_observed) {
            (Some(g), Some(o)) if o < g => Some(format!(
                "ReplicaSet {rs_name} status.observedGeneration {o} < generation {g}"
            )),
            _ => None,
        };
        Revision::Current(CurrentRevision {
            label: POD_TEMPLATE_HASH,
            hash,
            describe: format!("ReplicaSet {rs_name}{revision}"),
            status_stale,
        })
    }

    fn not_created_reason(&self, what: &str) -> String {
        match self.generation_caught_up() {
            Some(false) => format!(
                "the {} controller has not acted on generation {} yet: {what}",
                self.kind.kind_name(),
                self.generation.unwrap_or_default()
            ),
            _ => format!("the controller has not rolled out the current template: {what}"),
        }
    }

    fn statefulset_revision(&self, statefulset: &StatefulSet, observed: &Observed) -> Revision {
        let status = statefulset.status.as_ref();
        let Some(update_revision) = status.and_then(|s| s.update_revision.clone()) else {
            return Revision::unknown(format!("{} has no status.updateRevision", self.source()));
        };
        if self.generation_caught_up() == Some(false) {
            return Revision::NotCreated(self.not_created_reason(&format!(
                "status.updateRevision {update_revision} describes the previous spec"
            )));
        }
        // When the revisions were listed, the one named must exist.
        if observed.is_complete(self.namespace, ResourceKind::ControllerRevision)
            && !observed.controller_revisions.iter().any(|cr| {
                cr.metadata.name.as_deref() == Some(update_revision.as_str())
                    && cr.metadata.namespace.as_deref().unwrap_or(self.namespace) == self.namespace
            })
        {
            return Revision::NotCreated(format!(
                "ControllerRevision {update_revision} named by status.updateRevision does not exist yet"
            ));
        }
        Revision::Current(CurrentRevision {
            label: CONTROLLER_REVISION_HASH,
            describe: format!("revision {update_revision}"),
            hash: update_revision,
            status_stale: None,
        })
    }

    /// The newest ControllerRevision the DaemonSet owns, provided it carries the current template.
    fn daemonset_revision(&self, observed: &Observed) -> Revision {
        let owned: Vec<&ControllerRevision> = self.owned(&observed.controller_revisions);
        if owned.is_empty() {
            if let Some(missing) =
                self.revision_input_missing(observed, ResourceKind::ControllerRevision)
            {
                return missing;
            }
            return Revision::NotCreated(self.not_created_reason("it owns no ControllerRevision"));
        }
        let Some(newest) = owned.iter().max_by_key(|cr| cr.revision) else {
            return Revision::unknown("no ControllerRevision");
        };
        let cr_name = newest.metadata.name.clone().unwrap_or_default();
        if self.generation_caught_up() == Some(false) {
            return Revision::NotCreated(self.not_created_reason(&format!(
                "the newest ControllerRevision {cr_name} may describe the previous spec"
            )));
        }
        // The revision stores the template as a replace-patch; compare it when present.
        if let Some(stored) = newest
            .data
            .as_ref()
            .and_then(|d| d.0.pointer("/spec/template"))
        {
            let mut stored = stored.clone();
            if let Some(obj) = stored.as_object_mut() {
                obj.remove("$patch");
            }
            // Read it through the same type as the DaemonSet's template, so what the type
            // drops (`creationTimestamp: null` before 1.33, unknown fields) drops on both sides.
            let stored = serde_json::from_value::<PodTemplateSpec>(stored).ok();
            if stored.is_none_or(|stored| {
                template_ignoring(&stored, CONTROLLER_REVISION_HASH)
                    != template_ignoring(self.template, CONTROLLER_REVISION_HASH)
            }) {
                return Revision::NotCreated(format!(
                    "the newest ControllerRevision {cr_name} does not carry the current pod template"
                ));
            }
        }
        let hash = newest
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
            .cloned()
            .or_else(|| {
                cr_name
                    .strip_prefix(&format!("{}-", self.name))
                    .map(str::to_string)
            });
        let Some(hash) = hash else {
            return Revision::unknown(format!(
                "ControllerRevision {cr_name} has no {CONTROLLER_REVISION_HASH} label"
            ));
        };
        Revision::Current(CurrentRevision {
            label: CONTROLLER_REVISION_HASH,
            hash,
            describe: format!(
                "ControllerRevision {cr_name} (revision {})",
                newest.revision
            ),
            status_stale: None,
        })
    }
}

pub enum Revision {
    Current(CurrentRevision),
    /// The controller has not created the object for the current template: not live.
    NotCreated(String),
    /// The input does not let us tell: why, and what would (else the why is the step).
    Unknown(String, Option<crate::Suggestion>),
}

impl Revision {
    fn unknown(why: impl Into<String>) -> Revision {
        Revision::Unknown(why.into(), None)
    }
}

pub struct CurrentRevision {
    /// The pod label that carries the revision.
    pub label: &'static str,
    pub hash: String,
    /// For messages: `ReplicaSet inventory-5f7c9 (revision 35)`.
    pub describe: String,
    /// Set when the revision object's status lags its spec, so its counts are not yet true.
    pub status_stale: Option<String>,
}

impl CurrentRevision {
    pub fn is_current(&self, pod: &Pod) -> bool {
        pods::label(pod, self.label) == Some(self.hash.as_str())
    }
}

fn template_ignoring(template: &PodTemplateSpec, label: &str) -> Value {
    template_ignoring_value(serde_json::to_value(template).unwrap_or(Value::Null), label)
}

fn template_ignoring_value(mut template: Value, label: &str) -> Value {
    if let Some(labels) = template
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(label);
        if labels.is_empty() {
            if let Some(meta) = template
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut)
            {
                meta.remove("labels");
            }
        }
    }
    if template
        .pointer("/metadata")
        .and_then(Value::as_object)
        .is_some_and(serde_json::Map::is_empty)
    {
        if let Some(obj) = template.as_object_mut() {
            obj.remove("metadata");
        }
    }
    template
}
