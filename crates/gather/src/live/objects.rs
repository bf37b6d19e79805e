//! The object kinds the live gather reads, behind one enum so GETs, LISTs and watch events of
//! different kinds can travel together.

use std::fmt::Debug;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::NamespaceResourceScope;
use kube::api::{ApiResource, DynamicObject, TypeMeta};
use liveproof_evidence::{Observed, ResourceKind, TargetKind};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One object of a kind we gather.
#[derive(Debug, Clone)]
pub(crate) enum AnyObject {
    Deployment(Arc<Deployment>),
    StatefulSet(Arc<StatefulSet>),
    DaemonSet(Arc<DaemonSet>),
    ReplicaSet(Arc<ReplicaSet>),
    ControllerRevision(Arc<ControllerRevision>),
    Pod(Arc<Pod>),
    /// A kind the checks read as raw JSON (`Observed::others`): Helm storage, GitOps objects.
    Raw(ResourceKind, Box<DynamicObject>),
}

impl AnyObject {
    pub(crate) fn meta(&self) -> &ObjectMeta {
        match self {
            AnyObject::Deployment(o) => &o.metadata,
            AnyObject::StatefulSet(o) => &o.metadata,
            AnyObject::DaemonSet(o) => &o.metadata,
            AnyObject::ReplicaSet(o) => &o.metadata,
            AnyObject::ControllerRevision(o) => &o.metadata,
            AnyObject::Pod(o) => &o.metadata,
            AnyObject::Raw(_, o) => &o.metadata,
        }
    }

    pub(crate) fn resource(&self) -> ResourceKind {
        match self {
            AnyObject::Deployment(_) => ResourceKind::Deployment,
            AnyObject::StatefulSet(_) => ResourceKind::StatefulSet,
            AnyObject::DaemonSet(_) => ResourceKind::DaemonSet,
            AnyObject::ReplicaSet(_) => ResourceKind::ReplicaSet,
            AnyObject::ControllerRevision(_) => ResourceKind::ControllerRevision,
            AnyObject::Pod(_) => ResourceKind::Pod,
            AnyObject::Raw(kind, _) => *kind,
        }
    }

    pub(crate) fn namespace(&self) -> &str {
        self.meta().namespace.as_deref().unwrap_or("default")
    }

    pub(crate) fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }

    /// Identity for de-duplication: the uid, or namespace/name when the uid is missing.
    pub(crate) fn key(&self) -> (ResourceKind, String) {
        let id = match &self.meta().uid {
            Some(uid) if !uid.is_empty() => uid.clone(),
            _ => format!("{}/{}", self.namespace(), self.name()),
        };
        (self.resource(), id)
    }

    pub(crate) fn push_into(self, observed: &mut Observed) {
        match self {
            AnyObject::Deployment(o) => observed.deployments.push(o),
            AnyObject::StatefulSet(o) => observed.statefulsets.push(o),
            AnyObject::DaemonSet(o) => observed.daemonsets.push(o),
            AnyObject::ReplicaSet(o) => observed.replicasets.push(o),
            AnyObject::ControllerRevision(o) => observed.controller_revisions.push(o),
            AnyObject::Pod(o) => observed.pods.push(o),
            AnyObject::Raw(kind, o) => observed.others.push(raw_value(kind, *o)),
        }
    }

    /// Every gathered typed object moved out of `observed`, in kind order (raw ones stay in
    /// `others`).
    pub(crate) fn take_all(observed: &mut Observed) -> Vec<AnyObject> {
        let mut out = Vec::new();
        out.extend(
            std::mem::take(&mut observed.deployments)
                .into_iter()
                .map(Deployment::wrap),
        );
        out.extend(
            std::mem::take(&mut observed.statefulsets)
                .into_iter()
                .map(StatefulSet::wrap),
        );
        out.extend(
            std::mem::take(&mut observed.daemonsets)
                .into_iter()
                .map(DaemonSet::wrap),
        );
        out.extend(
            std::mem::take(&mut observed.replicasets)
                .into_iter()
                .map(ReplicaSet::wrap),
        );
        out.extend(
            std::mem::take(&mut observed.controller_revisions)
                .into_iter()
                .map(ControllerRevision::wrap),
        );
        out.extend(
            std::mem::take(&mut observed.pods)
                .into_iter()
                .map(Pod::wrap),
        );
        out
    }

    /// Every gathered typed object in `observed`, in kind order (raw ones are in `others`):
    /// shared with `observed`, not copied.
    pub(crate) fn all_in(observed: &Observed) -> Vec<AnyObject> {
        let mut out = Vec::new();
        out.extend(observed.deployments.iter().cloned().map(Deployment::wrap));
        out.extend(observed.statefulsets.iter().cloned().map(StatefulSet::wrap));
        out.extend(observed.daemonsets.iter().cloned().map(DaemonSet::wrap));
        out.extend(observed.replicasets.iter().cloned().map(ReplicaSet::wrap));
        out.extend(
            observed
                .controller_revisions
                .iter()
                .cloned()
                .map(ControllerRevision::wrap),
        );
        out.extend(observed.pods.iter().cloned().map(Pod::wrap));
        out
    }
}

/// An object as the gather keeps it: without the server's field-ownership bookkeeping
/// (`managedFields`: often the larger half of an object, no check reads it, and the offline
/// loader drops it too), and with the lists of its pod spec and status no longer than they are
/// (deserialised, a one-container list holds room for four containers of ~1 kB each: 30 MB of
/// nothing over 10,000 pods).
pub(crate) fn slim<K: Kind>(object: &mut K) {
    object.meta_mut().managed_fields = None;
    object.shrink();
}

fn shrink_pod_spec(spec: &mut k8s_openapi::api::core::v1::PodSpec) {
    spec.containers.shrink_to_fit();
    spec.init_containers.iter_mut().for_each(Vec::shrink_to_fit);
    spec.volumes.iter_mut().for_each(Vec::shrink_to_fit);
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        c.env.iter_mut().for_each(Vec::shrink_to_fit);
        c.ports.iter_mut().for_each(Vec::shrink_to_fit);
        c.volume_mounts.iter_mut().for_each(Vec::shrink_to_fit);
    }
}

/// The typed side: what kube's `Api<K>` needs, plus the way into [`AnyObject`].
pub(crate) trait Kind:
    kube::Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
    const RESOURCE: ResourceKind;
    /// The shared object as an [`AnyObject`].
    fn wrap(object: Arc<Self>) -> AnyObject;
    fn into_any(self) -> AnyObject {
        Self::wrap(Arc::new(self))
    }
    /// Lists no longer than they are (see [`slim`]).
    fn shrink(&mut self) {}
}

macro_rules! kind {
    ($ty:ident) => {
        impl Kind for $ty {
            const RESOURCE: ResourceKind = ResourceKind::$ty;
            fn wrap(object: Arc<Self>) -> AnyObject {
                AnyObject::$ty(object)
            }
        }
    };
}
macro_rules! kind_with_template {
    ($ty:ident, $template:expr) => {
        impl Kind for $ty {
            const RESOURCE: ResourceKind = ResourceKind::$ty;
            fn wrap(object: Arc<Self>) -> AnyObject {
                AnyObject::$ty(object)
            }
            fn shrink(&mut self) {
                let template: fn(&mut $ty) -> Option<&mut k8s_openapi::api::core::v1::PodSpec> =
                    $template;
                if let Some(spec) = template(self) {
                    shrink_pod_spec(spec);
                }
            }
        }
    };
}
kind_with_template!(Deployment, |d| d
    .spec
    .as_mut()
    .and_then(|s| s.template.spec.as_mut()));
kind_with_template!(StatefulSet, |d| d
    .spec
    .as_mut()
    .and_then(|s| s.template.spec.as_mut()));
kind_with_template!(DaemonSet, |d| d
    .spec
    .as_mut()
    .and_then(|s| s.template.spec.as_mut()));
kind_with_template!(ReplicaSet, |r| r
    .spec
    .as_mut()
    .and_then(|s| s.template.as_mut())
    .and_then(|t| t.spec.as_mut()));
kind!(ControllerRevision);

impl Kind for Pod {
    const RESOURCE: ResourceKind = ResourceKind::Pod;
    fn wrap(object: Arc<Self>) -> AnyObject {
        AnyObject::Pod(object)
    }
    fn shrink(&mut self) {
        if let Some(spec) = self.spec.as_mut() {
            shrink_pod_spec(spec);
        }
        if let Some(status) = self.status.as_mut() {
            for list in [
                &mut status.container_statuses,
                &mut status.init_container_statuses,
                &mut status.ephemeral_container_statuses,
            ] {
                list.iter_mut().for_each(Vec::shrink_to_fit);
            }
            status.conditions.iter_mut().for_each(Vec::shrink_to_fit);
        }
    }
}

/// The resource a workload target names; `None` for kinds gathered elsewhere (later).
pub(crate) fn workload_resource(kind: TargetKind) -> Option<ResourceKind> {
    kind.is_workload().then(|| kind.resource())
}

/// Where a workload's revisions live: ReplicaSets for a Deployment, ControllerRevisions for
/// a StatefulSet or DaemonSet.
pub(crate) fn revisions_of(workload: ResourceKind) -> Option<ResourceKind> {
    match workload {
        ResourceKind::Deployment => Some(ResourceKind::ReplicaSet),
        ResourceKind::StatefulSet | ResourceKind::DaemonSet => {
            Some(ResourceKind::ControllerRevision)
        }
        _ => None,
    }
}

/// The raw kinds, with the API resource each is read at.
pub(crate) const RAW_KINDS: [ResourceKind; 6] = [
    ResourceKind::Secret,
    ResourceKind::ConfigMap,
    ResourceKind::HelmRelease,
    ResourceKind::Kustomization,
    ResourceKind::GitRepository,
    ResourceKind::Application,
];

/// What `Api<DynamicObject>` needs to address a raw kind.
pub(crate) fn api_resource(kind: ResourceKind) -> ApiResource {
    let api_version = kind.api_version();
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    ApiResource {
        group: kind.group().to_string(),
        version: version.to_string(),
        api_version: api_version.to_string(),
        kind: kind.kind_name().to_string(),
        plural: kind.plural().to_string(),
    }
}

/// A raw object as JSON, with `apiVersion` and `kind` filled in (a LIST of a built-in kind
/// omits them on its items, and `Observed::others_of` matches on them).
pub(crate) fn raw_value(kind: ResourceKind, mut object: DynamicObject) -> Value {
    if object.types.as_ref().is_none_or(|t| t.kind.is_empty()) {
        object.types = Some(TypeMeta {
            api_version: kind.api_version().to_string(),
            kind: kind.kind_name().to_string(),
        });
    }
    // A DynamicObject is a JSON map; it always serializes.
    serde_json::to_value(object).unwrap_or(Value::Null)
}

/// The [`AnyObject::Raw`] for a raw JSON object of a kind we read.
pub(crate) fn raw_object(value: &Value) -> Option<AnyObject> {
    let kind_name = value.get("kind").and_then(Value::as_str)?;
    let group = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(|v| v.rsplit_once('/').map_or("", |(g, _)| g))?;
    let kind = RAW_KINDS
        .into_iter()
        .find(|k| k.kind_name() == kind_name && k.group() == group)?;
    let object: DynamicObject = serde_json::from_value(value.clone()).ok()?;
    Some(AnyObject::Raw(kind, Box::new(object)))
}

/// Sorts every list by namespace and name, drops duplicates (by uid) and duplicate denials,
/// so a snapshot does not depend on request order.
pub(crate) fn normalize(mut observed: Observed) -> Observed {
    // Each typed list in place: 10,000 pods are neither boxed nor copied to be sorted.
    sort_dedup(&mut observed.deployments);
    sort_dedup(&mut observed.statefulsets);
    sort_dedup(&mut observed.daemonsets);
    sort_dedup(&mut observed.replicasets);
    sort_dedup(&mut observed.controller_revisions);
    sort_dedup(&mut observed.pods);
    let mut others = std::mem::take(&mut observed.others);
    others.sort_by_key(raw_sort_key);
    let mut seen_raw = std::collections::BTreeSet::new();
    others.retain(|o| seen_raw.insert(raw_sort_key(o)));
    let mut denied: Vec<liveproof_evidence::Denied> = Vec::new();
    for d in std::mem::take(&mut observed.denied) {
        if !denied.contains(&d) {
            denied.push(d);
        }
    }
    Observed {
        deployments: std::mem::take(&mut observed.deployments),
        statefulsets: std::mem::take(&mut observed.statefulsets),
        daemonsets: std::mem::take(&mut observed.daemonsets),
        replicasets: std::mem::take(&mut observed.replicasets),
        controller_revisions: std::mem::take(&mut observed.controller_revisions),
        pods: std::mem::take(&mut observed.pods),
        nodes: std::mem::take(&mut observed.nodes),
        others,
        complete: std::mem::take(&mut observed.complete),
        denied,
        releases: std::mem::take(&mut observed.releases),
        ..Observed::default()
    }
}

/// Sorts objects of one kind by namespace, name and identity (the uid, or namespace/name
/// without one) and keeps the first of each identity.
fn sort_dedup<T: k8s_openapi::Metadata<Ty = ObjectMeta>>(items: &mut Vec<Arc<T>>) {
    fn identity(meta: &ObjectMeta) -> String {
        match &meta.uid {
            Some(uid) if !uid.is_empty() => uid.clone(),
            _ => format!(
                "{}/{}",
                meta.namespace.as_deref().unwrap_or("default"),
                meta.name.as_deref().unwrap_or_default()
            ),
        }
    }
    items.sort_by_cached_key(|o| {
        let meta = o.metadata();
        (
            meta.namespace.clone().unwrap_or_else(|| "default".into()),
            meta.name.clone().unwrap_or_default(),
            identity(meta),
        )
    });
    let mut seen = std::collections::HashSet::new();
    items.retain(|o| seen.insert(identity(o.metadata())));
}

/// Order and identity of a raw object: kind, API group, namespace, name (uid last, so two
/// objects that only share a name in a re-created form are both kept).
fn raw_sort_key(value: &Value) -> [String; 5] {
    let field = |ptr: &str| {
        value
            .pointer(ptr)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let group = field("/apiVersion")
        .rsplit_once('/')
        .map_or(String::new(), |(g, _)| g.to_string());
    [
        field("/kind"),
        group,
        field("/metadata/namespace"),
        field("/metadata/name"),
        field("/metadata/uid"),
    ]
}
