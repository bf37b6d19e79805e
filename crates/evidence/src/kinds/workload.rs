//! A Deployment, StatefulSet or DaemonSet seen through what the checks need, and how its
//! current revision is worked out — the way its controller works it out.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::pod::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::Metadata;
use serde_json::Value;

use super::WorkloadStatus;
use crate::checks::pods;
use crate::selector;
use crate::suggestion::Command;
use crate::suggestion::Suggestion;
use crate::{Observed, ResourceKind, SourceRef, TargetKind};

/// The label a Deployment's ReplicaSets and pods carry their template hash in.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// The label StatefulSet and DaemonSet pods carry their ControllerRevision in.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";

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
    /// The object itself: what its kind's own file reads of its status.
    pub(crate) status: &'a dyn WorkloadStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateStrategy {
    Rolling,
    OnDelete,
    Partitioned(i32),
}

impl<'a> Workload<'a> {
    /// The objects recording its revisions (of `kind`, its kind row's `revisions`) that it
    /// owns; `None` when `kind` records none.
    pub(crate) fn owned_revisions<'o>(
        &self,
        observed: &'o Observed,
        kind: ResourceKind,
    ) -> Option<RevisionObjects<'o>> {
        match kind {
            ResourceKind::ReplicaSet => Some(RevisionObjects::ReplicaSets(
                self.owned(&observed.replicasets),
            )),
            ResourceKind::ControllerRevision => Some(RevisionObjects::ControllerRevisions(
                self.owned(&observed.controller_revisions),
            )),
            _ => None,
        }
    }

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

    /// The workload of `kind` named `name` in `namespace`, through its kind's row.
    pub fn find(
        observed: &'a Observed,
        kind: TargetKind,
        namespace: &'a str,
        name: &'a str,
    ) -> Option<Workload<'a>> {
        (kind.spec().workload?.find)(observed, namespace, name)
    }

    /// Whether the controller has processed the current spec; `None` when unreadable.
    pub fn generation_caught_up(&self) -> Option<bool> {
        Some(self.observed_generation? >= self.generation?)
    }

    pub(crate) fn owns(&self, meta: &ObjectMeta) -> bool {
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
    pub(crate) fn owned<'o, T: Metadata<Ty = ObjectMeta>>(
        &self,
        items: &'o [Arc<T>],
    ) -> Vec<&'o T> {
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

    /// Of `pods`, those the workload sends traffic to: all of them, unless the workload
    /// routes by revision (an Argo Rollout), then those of a revision with a share.
    pub fn routed_pods(&self, pods: &[&'a Pod]) -> Vec<&'a Pod> {
        match self.status.routed() {
            None => pods.to_vec(),
            Some(routed) => pods
                .iter()
                .copied()
                .filter(|p| routed.serves(pods::label(p, routed.label)))
                .collect(),
        }
    }

    /// Works out the current revision and how its pods are labelled.
    pub fn current_revision(&self, observed: &'a Observed) -> Revision {
        self.status.current_revision(self, observed)
    }

    pub(crate) fn revision_input_missing(
        &self,
        observed: &Observed,
        kind: ResourceKind,
    ) -> Option<Revision> {
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

    pub(crate) fn not_created_reason(&self, what: &str) -> String {
        match self.generation_caught_up() {
            Some(false) => format!(
                "{} has not acted on generation {} yet: {what}",
                self.kind.actor().name,
                self.generation.unwrap_or_default()
            ),
            _ => format!("{}: {what}", self.kind.actor().has_not()),
        }
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
    /// When the revision's object was created (the template written), when recorded.
    /// (Boxed: the enum it lives in stays small.)
    pub written: Option<Box<crate::TimelineEntry>>,
}

/// The creation of a revision's object (`kind` `meta`), as a timeline entry: when its template
/// was written. `None` when no `creationTimestamp` is recorded.
pub(crate) fn written(
    kind: ResourceKind,
    meta: &ObjectMeta,
    namespace: &str,
) -> Option<Box<crate::TimelineEntry>> {
    let created = meta.creation_timestamp.as_ref()?.0;
    let ns = meta.namespace.as_deref().unwrap_or(namespace);
    let name = meta.name.as_deref().unwrap_or_default();
    Some(Box::new(crate::TimelineEntry::read(
        crate::Moment::TemplateWritten,
        created,
        SourceRef::object(kind, ns, name).field(".metadata.creationTimestamp"),
    )))
}

impl CurrentRevision {
    pub fn is_current(&self, pod: &Pod) -> bool {
        pods::label(pod, self.label) == Some(self.hash.as_str())
    }
}

/// A pod template to compare with another: without the hash `label` its controller adds and
/// without the values the API server fills in (see `pod_defaults`).
pub(crate) fn template_ignoring(template: &PodTemplateSpec, label: &str) -> Value {
    template_ignoring_value(serde_json::to_value(template).unwrap_or(Value::Null), label)
}

fn template_ignoring_value(mut template: Value, label: &str) -> Value {
    crate::checks::pod_defaults::strip(&mut template);
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

/// Why old pods stay under the workload's update strategy when `lagging` (not every replica
/// updated): `OnDelete` or a partition, and what would replace them.
pub(crate) fn old_pods_stay(w: &Workload, lagging: bool) -> Option<(String, Suggestion)> {
    let why = match w.update_strategy {
        UpdateStrategy::OnDelete if lagging => "updateStrategy OnDelete: the controller replaces a pod only when it is deleted, so old pods stay forever".to_string(),
        UpdateStrategy::Partitioned(p) if lagging => format!(
            "rollingUpdate.partition {p}: pods with ordinal < {p} stay on the old revision until the partition is lowered"
        ),
        _ => return None,
    };
    Some((
        why,
        Suggestion::text(format!(
            "delete the old pods so the controller replaces them, or change the update strategy of {}",
            w.source()
        )),
    ))
}

/// The objects that record a workload's revisions, of the resource its kind row names.
pub(crate) enum RevisionObjects<'o> {
    ReplicaSets(Vec<&'o ReplicaSet>),
    ControllerRevisions(Vec<&'o ControllerRevision>),
}

/// Of the objects recording revisions of `kind` (a kind row's `revisions`), those `pick`
/// keeps, in `observed`'s order; `None` when `kind` records none.
pub(crate) fn revision_objects(
    observed: &Observed,
    kind: ResourceKind,
    pick: impl Fn(&ObjectMeta) -> bool,
) -> Option<RevisionObjects<'_>> {
    match kind {
        ResourceKind::ReplicaSet => Some(RevisionObjects::ReplicaSets(
            observed
                .replicasets
                .iter()
                .map(|r| &**r)
                .filter(|r| pick(&r.metadata))
                .collect(),
        )),
        ResourceKind::ControllerRevision => Some(RevisionObjects::ControllerRevisions(
            observed
                .controller_revisions
                .iter()
                .map(|r| &**r)
                .filter(|r| pick(&r.metadata))
                .collect(),
        )),
        _ => None,
    }
}
