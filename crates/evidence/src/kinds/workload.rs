//! A Deployment, StatefulSet or DaemonSet seen through what the checks need, and how its
//! current revision is worked out — the way its controller works it out.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::pod::Pod;
use crate::replica_set::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::Metadata;
use serde_json::Value;

use crate::checks::pods;
use crate::selector;
use crate::suggestion::Command;
use crate::suggestion::Suggestion;
use crate::{Observed, ResourceKind, SourceRef, TargetKind};
use std::fmt;

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
                self.owned_replicasets(observed),
            )),
            ResourceKind::ControllerRevision => Some(RevisionObjects::ControllerRevisions(
                self.owned_controller_revisions(observed),
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

    /// The ReplicaSets in its namespace it owns.
    pub(crate) fn owned_replicasets<'o>(&self, observed: &'o Observed) -> Vec<&'o ReplicaSet> {
        self.owned(&observed.replicasets, &observed.replicaset_owners)
    }

    /// The ControllerRevisions in its namespace it owns.
    pub(crate) fn owned_controller_revisions<'o>(
        &self,
        observed: &'o Observed,
    ) -> Vec<&'o ControllerRevision> {
        self.owned(
            &observed.controller_revisions,
            &observed.controller_revision_owners,
        )
    }

    /// The objects in its namespace this workload owns, of `items` (whose owner index is
    /// `index`): the index's candidates, each tested as a scan would.
    fn owned<'o, T: Metadata<Ty = ObjectMeta>>(
        &self,
        items: &'o [Arc<T>],
        index: &crate::index::OwnerIndex,
    ) -> Vec<&'o T> {
        let owner = crate::index::Owner {
            namespace: self.namespace,
            kind: self.kind.kind_name(),
            uid: self.meta.uid.as_deref(),
            name: self.name,
        };
        index
            .candidates(items, &owner)
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
            return Some(Revision::Unknown(
                format!(
                    "could not read {} in {}: {}",
                    kind.plural(),
                    self.namespace,
                    denied.message
                ),
                Some(denied.next_step()),
            ));
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

/// Whether two pod templates are the same ignoring `label` (as [`template_ignoring`] compares
/// them), told without writing either as JSON where that is plain: equal as read, but for
/// `label`, they are the same; containers of other names or images, they are not (the API
/// server fills in no name and no image). `None`: only the comparison of [`template_ignoring`]
/// can tell. `--wait` compares each target's template with its ReplicaSets' on every change.
pub(crate) fn same_template(a: &PodTemplateSpec, b: &PodTemplateSpec, label: &str) -> Option<bool> {
    fn containers(t: &PodTemplateSpec, init: bool) -> &[k8s_openapi::api::core::v1::Container] {
        let spec = t.spec.as_ref();
        match init {
            false => spec.map(|s| s.containers.as_slice()),
            true => spec.and_then(|s| s.init_containers.as_deref()),
        }
        .unwrap_or_default()
    }
    let same_images = |init: bool| {
        let images = |t| containers(t, init).iter().map(|c| (&c.name, &c.image));
        images(a).eq(images(b))
    };
    if !(same_images(false) && same_images(true)) {
        return Some(false);
    }
    let without_label = |t: &PodTemplateSpec| {
        let mut meta = t.metadata.clone();
        if let Some(labels) = meta.as_mut().and_then(|m| m.labels.as_mut()) {
            labels.remove(label);
        }
        meta
    };
    (a.spec == b.spec && without_label(a) == without_label(b)).then_some(true)
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

/// What the checks read of a workload object beyond its common view ([`Workload`]).
pub(crate) trait WorkloadStatus: Sync {
    /// The current revision and the label its pods carry, the way the kind's controller
    /// works it out.
    fn current_revision(&self, w: &Workload, observed: &Observed) -> Revision;

    /// How far the controller says the rollout got (`rollout_complete`).
    fn progress(&self, w: &Workload) -> Progress;

    /// When a progressive rollout was fully promoted, as its controller dates it: a target
    /// routed by revision is live only from then on.
    fn promoted(&self, _w: &Workload) -> Option<crate::TimelineEntry> {
        None
    }

    /// A failure the controller reports that waiting will not fix (`--wait` stops on it).
    fn gave_up(&self) -> Option<String> {
        None
    }

    /// The revision the kind names for its template, for `snapshot`: a Deployment's
    /// `deployment.kubernetes.io/revision`, a StatefulSet's update revision.
    fn revision_name(&self) -> Option<String> {
        None
    }

    /// The command that restarts its pods: `kubectl rollout restart KIND/NAME`, unless its
    /// controller has its own.
    fn restart(&self, w: &Workload) -> crate::suggestion::Command {
        w.kubectl(&["rollout", "restart"], &[])
    }

    /// Which revisions the workload itself sends traffic to, when it decides that (an Argo
    /// Rollout's active selector or canary weights); `None`: every Ready pod serves. This is
    /// the controller's own word: it picks the pods the pod checks look at, and
    /// `traffic_current` holds it to what routes ([`named_services`](Self::named_services),
    /// [`traffic_split`](Self::traffic_split)).
    fn routed(&self) -> Option<Routed> {
        None
    }

    /// The Services the workload's own controller points at its revisions (an Argo Rollout's
    /// stable, canary, active and preview Services), each with the spec field naming it:
    /// `traffic_current` reads every one of them and its EndpointSlices, whatever its selector
    /// matches, and one it cannot read makes it `unknown`.
    fn named_services(&self) -> Vec<NamedService<'_>> {
        Vec::new()
    }

    /// The split the workload's controller set on a traffic router, every destination listed
    /// (an Argo canary's `status.canary.weights`): `traffic_current` holds the weights to add
    /// up to 100 and to give a share to the current revision alone.
    fn traffic_split(&self) -> Option<TrafficSplit> {
        None
    }
}

/// A Service a workload's controller points at one of its revisions.
pub(crate) struct NamedService<'a> {
    pub name: &'a str,
    /// The spec field naming it: `.spec.strategy.blueGreen.activeService`.
    pub field: &'static str,
    /// Whether traffic reaches its endpoints.
    pub share: Share,
}

/// Whether a named Service carries traffic. Most do (clients or a router reach them); a
/// ping-pong canary's Services are reached only through the traffic router, and the side the
/// router gives 0% carries none, whatever its selector still matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Share {
    /// Its endpoints get traffic: each must be a current pod.
    Routed,
    /// It gets none, and why (where that was read): its endpoints are shown, not held.
    Idle(String),
    /// Whether it gets any is not recorded, and why: an endpoint on an old pod is unknown.
    NotRecorded(String),
}

/// The weights a controller set on a traffic router, by destination.
pub(crate) struct TrafficSplit {
    /// The pod label carrying the revision each destination names.
    pub label: &'static str,
    pub destinations: Vec<Destination>,
    /// The status field it was read from: `.status.canary.weights`.
    pub source: &'static str,
}

/// One destination of a [`TrafficSplit`].
pub(crate) struct Destination {
    /// Where it is listed: `stable`, `canary`, `additional[0]`.
    pub role: String,
    /// Percent of the traffic.
    pub weight: i32,
    /// The revision it sends to (empty when not recorded).
    pub hash: String,
    /// The Service it sends through, when recorded.
    pub service: Option<String>,
}

impl TrafficSplit {
    /// Each revision's share, summed over the destinations naming it.
    pub fn by_revision(&self) -> std::collections::BTreeMap<String, i32> {
        let mut out = std::collections::BTreeMap::new();
        for d in self.destinations.iter().filter(|d| !d.hash.is_empty()) {
            *out.entry(d.hash.clone()).or_insert(0) += d.weight;
        }
        out
    }
}

/// The revisions a workload routes traffic to: by the pod label carrying the revision, each
/// hash with its share in percent (0: routed none), and the status field that says so.
pub(crate) struct Routed {
    pub label: &'static str,
    pub weights: std::collections::BTreeMap<String, i32>,
    pub source: &'static str,
}

impl Routed {
    /// Whether a pod with `hash` gets traffic.
    pub fn serves(&self, hash: Option<&str>) -> bool {
        hash.is_some_and(|h| self.weights.get(h).is_some_and(|w| *w > 0))
    }
}

/// A rollout's state as its controller reports it.
pub(crate) struct Progress {
    /// The counts, as evidence shows them: `3/3 updated, 3 total, 3 available`.
    pub counts: String,
    pub complete: bool,
    /// Why it will not complete on its own, and what would.
    pub stuck: Option<(String, Suggestion)>,
}

/// A workload kind's object type: how it reads as a [`Workload`]. `Observed` keeps its
/// objects in [`Observed::workloads`], a list per type.
pub(crate) trait WorkloadType:
    serde::de::DeserializeOwned + WorkloadStatus + Send + fmt::Debug + 'static
{
    const KIND: TargetKind;

    fn meta(&self) -> &ObjectMeta;
    fn template(&self) -> Option<&PodTemplateSpec>;
    /// The template, to slim as it is read (see [`WorkloadObject`]).
    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec>;
    /// The selector of its pods (what the gather lists its pods by).
    fn selector(&self) -> Option<&LabelSelector>;
    /// The common view, `None` without a spec.
    fn view<'a>(&'a self, namespace: &'a str, name: &'a str) -> Option<Workload<'a>>;
}

/// What the gather asks of a workload kind's object type beyond what kube's `Api` needs (each
/// type of [`with_workload_types!`](crate::with_workload_types)): the pod template it
/// carries, whose lists it shrinks to their length as each object is read.
pub trait WorkloadObject {
    fn pod_template_mut(&mut self) -> Option<&mut PodTemplateSpec>;
}

impl<T: WorkloadType> WorkloadObject for T {
    fn pod_template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        self.template_mut()
    }
}

/// One workload object, of any workload kind, as the walks over all of them read it.
pub(crate) struct Listed<'a> {
    pub kind: TargetKind,
    pub meta: &'a ObjectMeta,
    pub template: Option<&'a PodTemplateSpec>,
    pub selector: Option<&'a LabelSelector>,
    pub status: &'a dyn WorkloadStatus,
}

/// The functions a workload kind's `KINDS` row carries (see [`fns`]).
#[derive(Clone, Copy)]
pub struct WorkloadFns {
    pub(crate) find: for<'a> fn(&'a Observed, &'a str, &'a str) -> Option<Workload<'a>>,
    pub(crate) list: for<'a> fn(&'a Observed) -> Vec<Listed<'a>>,
    /// The namespaces of its objects named so (`default` for one that names none), unsorted.
    pub(crate) namespaces: fn(&Observed, &str) -> Vec<String>,
    pub(crate) add: fn(&mut Observed, Value) -> Result<(), JsonPathError>,
}

pub(crate) type JsonPathError = serde_path_to_error::Error<serde_json::Error>;

impl fmt::Debug for WorkloadFns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WorkloadFns")
    }
}

/// The row functions of workload type `T`.
pub(crate) const fn fns<T: WorkloadType>() -> WorkloadFns {
    WorkloadFns {
        find: find::<T>,
        list: list::<T>,
        namespaces: namespaces::<T>,
        add: add::<T>,
    }
}

fn find<'a, T: WorkloadType>(
    observed: &'a Observed,
    namespace: &'a str,
    name: &'a str,
) -> Option<Workload<'a>> {
    named::<T>(observed, name)
        .find(|o| o.meta().namespace.as_deref().unwrap_or(namespace) == namespace)
        .and_then(|o| o.view(namespace, name))
}

fn namespaces<T: WorkloadType>(observed: &Observed, name: &str) -> Vec<String> {
    named::<T>(observed, name)
        .map(|o| super::rules::namespace(o.meta().namespace.as_deref()))
        .collect()
}

/// The workloads of type `T` named `name`, in every namespace, through the store's index.
fn named<'a, T: WorkloadType>(
    observed: &'a Observed,
    name: &str,
) -> impl Iterator<Item = &'a Arc<T>> {
    observed
        .workloads
        .named::<T>(name, |o| o.meta().name.as_deref())
}

fn list<T: WorkloadType>(observed: &Observed) -> Vec<Listed<'_>> {
    observed
        .workloads
        .of::<T>()
        .iter()
        .map(|o| {
            let o: &T = o;
            Listed {
                kind: T::KIND,
                meta: o.meta(),
                template: o.template(),
                selector: o.selector(),
                status: o,
            }
        })
        .collect()
}

fn add<T: WorkloadType>(observed: &mut Observed, value: Value) -> Result<(), JsonPathError> {
    let object: T = serde_path_to_error::deserialize(value)?;
    observed.workloads.push(Arc::new(object));
    Ok(())
}

impl Observed {
    /// The Deployments, StatefulSets and DaemonSets whose labels `selector` matches, in
    /// `namespace` (every namespace when `None`), as targets in their namespace: what
    /// `-l/--selector` verifies. Sorted.
    pub fn workloads_matching(
        &self,
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
        namespace: Option<&str>,
    ) -> Vec<crate::Target> {
        let mut out: Vec<crate::Target> = self
            .workloads()
            .filter_map(|(kind, meta, _)| {
                let ns = meta.namespace.as_deref().unwrap_or("default");
                let name = meta.name.as_deref()?;
                (namespace.is_none_or(|n| n == ns)
                    && crate::selector::matches(selector, meta.labels.as_ref()))
                .then(|| crate::Target::new(kind, Some(ns), name))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Every workload of every workload kind: its kind, metadata and pod template (when it
    /// has a spec), through the kinds' rows — the one walk over the workload kinds.
    pub fn workloads(
        &self,
    ) -> impl Iterator<
        Item = (
            crate::TargetKind,
            &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            Option<&k8s_openapi::api::core::v1::PodTemplateSpec>,
        ),
    > {
        self.workload_objects()
            .into_iter()
            .map(|w| (w.kind, w.meta, w.template))
    }

    /// Every workload of every workload kind with the selector of its pods (`None` without a
    /// spec): what the gather lists their revisions and pods by.
    pub fn workload_selectors(
        &self,
    ) -> impl Iterator<
        Item = (
            crate::TargetKind,
            &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
        ),
    > {
        self.workload_objects()
            .into_iter()
            .map(|w| (w.kind, w.meta, w.selector))
    }

    /// [`Observed::workloads`] with each one's status, for the kind's own reading of it.
    pub(crate) fn workload_objects(&self) -> Vec<Listed<'_>> {
        crate::KINDS
            .iter()
            .filter_map(|k| k.workload)
            .flat_map(|fns| (fns.list)(self))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(value: Value) -> PodTemplateSpec {
        serde_json::from_value(value).expect("a pod template")
    }

    /// Where the plain comparison answers, it answers as the JSON comparison does; it leaves
    /// to that only what it cannot tell (a value the API server fills in), and it tells the
    /// two cases a rollout is made of: the same template, another image.
    #[test]
    fn same_template_answers_as_the_json_comparison_or_not_at_all() {
        let base = json!({
            "metadata": {"labels": {"app": "web", POD_TEMPLATE_HASH: "aaa"}},
            "spec": {"containers": [{"name": "web", "image": "shop/web:1"}]}
        });
        let variant = |pointer: &str, value: Value| {
            let mut t = base.clone();
            *t.pointer_mut(pointer).expect("the field") = value;
            template(t)
        };
        let mut defaulted = base.clone();
        defaulted["spec"]["dnsPolicy"] = json!("ClusterFirst");
        let mut env = base.clone();
        env["spec"]["containers"][0]["env"] = json!([{"name": "MODE", "value": "a"}]);
        let a = template(base.clone());
        let cases = [
            (template(base.clone()), Some(true)),
            (
                variant("/metadata/labels/pod-template-hash", json!("bbb")),
                Some(true),
            ),
            (
                variant("/spec/containers/0/image", json!("shop/web:2")),
                Some(false),
            ),
            (
                variant("/spec/containers/0/name", json!("api")),
                Some(false),
            ),
            (variant("/metadata/labels/app", json!("api")), None),
            (template(defaulted), None),
            (template(env), None),
        ];
        for (b, plain) in cases {
            let json = template_ignoring(&a, POD_TEMPLATE_HASH)
                == template_ignoring(&b, POD_TEMPLATE_HASH);
            let said = same_template(&a, &b, POD_TEMPLATE_HASH);
            assert_eq!(said, plain, "{b:?}");
            if let Some(said) = said {
                assert_eq!(said, json, "{b:?}");
            }
        }
        // What it leaves undecided, the JSON comparison decides both ways.
        let mut defaulted = base.clone();
        defaulted["spec"]["dnsPolicy"] = json!("ClusterFirst");
        assert_eq!(
            template_ignoring(&a, POD_TEMPLATE_HASH),
            template_ignoring(&template(defaulted), POD_TEMPLATE_HASH)
        );
    }
}
