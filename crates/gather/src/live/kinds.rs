//! The kinds the live gather reads, as one table.
//!
//! [`with_kind_table!`] names every [`ResourceKind`] once: read typed (a `k8s_openapi` type,
//! or evidence's own, with the `Observed` list it lands in), read raw (JSON in
//! `Observed::others`), or read apart (nodes). Everything that used to be a hand-kept match
//! over the kinds is expanded from it: the [`AnyObject`] enum and its matches, and through
//! [`dispatch!`] the GET, LIST and watch of a kind, the listing of every workload and the
//! restart PATCH. What a typed kind is beyond its place in the table (what kube decodes it
//! from, its metadata, the pod template it carries, for slimming) is its [`Kind`] impl below:
//! a pod is decoded as [`ApiPod`] and held as evidence's lean pod, a ReplicaSet as evidence's
//! (its template held as text), every other kind as sent.
//! What a workload is called, where it lives in the API, what records its revisions and how its
//! pods are selected is evidence's (its `KINDS` row and its file under `kinds/`).
//!
//! The workload kinds come from evidence ([`liveproof_evidence::with_workload_types!`], the one
//! list of their types), each read as sent with its pod template slimmed ([`Kind`] from
//! [`WorkloadObject`]): a new workload kind is read typed without a line here. The gather's own
//! typed resources (ReplicaSet, ControllerRevision, Pod, Service, EndpointSlice) are its lines
//! in the table with a `Kind` impl below. A `ResourceKind` the table leaves out does not
//! compile (the dispatch match is exhaustive), a table line without a `Kind` impl does not
//! either, and a workload kind of `KINDS` that is not typed here fails
//! `every_workload_kind_is_typed`.

use std::fmt::Debug;
use std::sync::Arc;

pub(crate) use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodSpec;
pub(crate) use k8s_openapi::api::core::v1::Service;
pub(crate) use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::NamespaceResourceScope;
use kube::api::DynamicObject;
// The pod the checks read, decoded straight from the server's JSON: never `k8s_openapi`'s,
// over 4 KiB a pod before any field is set.
pub(crate) use liveproof_evidence::pod::Pod;
// A ReplicaSet with its pod template held as text: `k8s_openapi`'s is 2,288 bytes before any
// field is set, and `--wait` holds 4,000 at the end of a rollout of 2,000 Deployments.
pub(crate) use liveproof_evidence::replica_set::ReplicaSet;
use liveproof_evidence::{Observed, ResourceKind, WorkloadObject};
use serde::de::DeserializeOwned;

use super::lean::Lean;
use super::meta::Meta;

/// The table: calls `$callback! { { $args } workloads: [..] typed: [..] apart: [..] }`. The
/// workload kinds are evidence's list ([`liveproof_evidence::with_workload_types!`]); every
/// resource of evidence's `RESOURCES` neither typed nor apart is read raw.
macro_rules! with_kind_table {
    ($callback:ident ! { $($args:tt)* }) => {
        liveproof_evidence::with_workload_types! { kind_table! { $callback { $($args)* } } }
    };
}

/// [`with_kind_table!`] given evidence's workload types.
macro_rules! kind_table {
    ({ $callback:ident { $($args:tt)* } } [$($wl:ident => $wty:path),* $(,)?]) => {
        $callback! {
            { $($args)* }
            // Evidence's workload kinds, read as their object types (`Kind` below, from
            // their pod template) into `Observed::workloads`, a list per type; first, in
            // `KINDS`' order, which is the order snapshots and prunes walk them in.
            workloads: [$($wl => $wty),*]
            // Then the gather's own typed resources, as `k8s_openapi` types or evidence's lean
            // pod and ReplicaSet, each a `Kind`, into its own list of `Observed`, in this order.
            typed: [
                ReplicaSet => replicasets,
                ControllerRevision => controller_revisions,
                Pod => pods,
                Service => services,
                EndpointSlice => endpoint_slices,
            ]
            // Every other resource is read as JSON into `Observed::others`: Helm storage,
            // GitOps objects, Flagger Canaries, Knative Services and Revisions.
            // Cluster-scoped, read by `Cluster::gather_nodes` alone: no GET, LIST or watch here.
            apart: [Node]
        }
    };
}

/// `$typed` with `$T` the [`Kind`] whose objects `$resource` names; for a raw kind `$raw`, for
/// one read apart `$apart` (or `else => $other` for both). The one match from a
/// [`ResourceKind`] to its type, exhaustive over the table.
macro_rules! dispatch {
    ($resource:expr, $T:ident => $typed:expr, raw => $raw:expr, apart => $apart:expr $(,)?) => {
        with_kind_table!(dispatch_match! { ($resource) $T ($typed) ($raw) ($apart) })
    };
    ($resource:expr, $T:ident => $typed:expr, else => $other:expr $(,)?) => {
        with_kind_table!(dispatch_match! { ($resource) $T ($typed) ($other) })
    };
}

/// [`dispatch!`]'s expansion, given the table.
macro_rules! dispatch_match {
    (
        { ($resource:expr) $T:ident ($typed:expr) ($raw:expr) ($apart:expr) }
        workloads: [$($wl:ident => $wty:path),*]
        typed: [$($ty:ident => $field:ident),* $(,)?]
        apart: [$($a:ident),* $(,)?]
    ) => {
        match $resource {
            $(::liveproof_evidence::ResourceKind::$wl => {
                type $T = $wty;
                $typed
            })*
            $(::liveproof_evidence::ResourceKind::$ty => {
                type $T = $crate::live::kinds::$ty;
                $typed
            })*
            $(::liveproof_evidence::ResourceKind::$a)|* => $apart,
            _ => $raw,
        }
    };
    (
        { ($resource:expr) $T:ident ($typed:expr) ($other:expr) }
        workloads: [$($wl:ident => $wty:path),*]
        typed: [$($ty:ident => $field:ident),* $(,)?]
        apart: [$($a:ident),* $(,)?]
    ) => {
        match $resource {
            $(::liveproof_evidence::ResourceKind::$wl => {
                type $T = $wty;
                $typed
            })*
            $(::liveproof_evidence::ResourceKind::$ty => {
                type $T = $crate::live::kinds::$ty;
                $typed
            })*
            _ => $other,
        }
    };
}

/// `$body` once per typed kind, in the table's order, with `$T` that kind.
macro_rules! for_each_typed_kind {
    ($T:ident => $body:block) => {
        with_kind_table!(for_each_typed_kind_expand! { $T $body })
    };
}

/// [`for_each_typed_kind!`]'s expansion, given the table.
macro_rules! for_each_typed_kind_expand {
    (
        { $T:ident $body:block }
        workloads: [$($wl:ident => $wty:path),*]
        typed: [$($ty:ident => $field:ident),* $(,)?]
        apart: [$($a:ident),* $(,)?]
    ) => {
        $({
            type $T = $wty;
            $body
        })*
        $({
            type $T = $crate::live::kinds::$ty;
            $body
        })*
    };
}

/// The enum, the table's own facts of each typed kind ([`InTable`]) and the kind lists.
macro_rules! kinds_from_table {
    (
        {}
        workloads: [$($wl:ident => $wty:path),*]
        typed: [$($ty:ident => $field:ident),* $(,)?]
        apart: [$($a:ident),* $(,)?]
    ) => {
        /// One object of a kind we gather: GETs, LISTs and watch events of different kinds
        /// travel together as these.
        #[derive(Debug, Clone)]
        pub(crate) enum AnyObject {
            $($wl(Arc<$wty>),)*
            $($ty(Arc<$ty>),)*
            /// A kind the checks read as raw JSON (`Observed::others`): Helm storage, GitOps
            /// objects.
            Raw(ResourceKind, Box<DynamicObject>),
        }

        impl AnyObject {
            pub(crate) fn meta(&self) -> Meta<'_> {
                match self {
                    $(AnyObject::$wl(o) => o.meta_view(),)*
                    $(AnyObject::$ty(o) => o.meta_view(),)*
                    AnyObject::Raw(_, o) => Meta::Object(&o.metadata),
                }
            }

            pub(crate) fn resource(&self) -> ResourceKind {
                match self {
                    $(AnyObject::$wl(_) => ResourceKind::$wl,)*
                    $(AnyObject::$ty(_) => ResourceKind::$ty,)*
                    AnyObject::Raw(kind, _) => *kind,
                }
            }

            pub(crate) fn push_into(self, observed: &mut Observed) {
                match self {
                    $(AnyObject::$wl(o) => <$wty>::held_mut(observed).push(o),)*
                    $(AnyObject::$ty(o) => $ty::held_mut(observed).push(o),)*
                    AnyObject::Raw(kind, o) => {
                        observed.others.push(super::meta::raw_value(kind, *o))
                    }
                }
            }
        }

        $(impl InTable for $wty {
            const RESOURCE: ResourceKind = ResourceKind::$wl;
            fn wrap(object: Arc<Self>) -> AnyObject {
                AnyObject::$wl(object)
            }
            fn held(observed: &Observed) -> &[Arc<Self>] {
                observed.workloads.of::<Self>()
            }
            fn held_mut(observed: &mut Observed) -> &mut Vec<Arc<Self>> {
                observed.workloads.of_mut::<Self>()
            }
        }

        /// A workload kind is held as sent, its pod template slimmed.
        impl Kind for $wty {
            type Wire = Lean<Self>;

            fn from_wire(Lean(mut wire): Lean<Self>) -> Self {
                wire.shrink();
                wire
            }

            fn meta_view(&self) -> Meta<'_> {
                Meta::Object(k8s_openapi::Metadata::metadata(self))
            }

            fn pod_spec_mut(&mut self) -> Option<&mut PodSpec> {
                WorkloadObject::pod_template_mut(self).and_then(|t| t.spec.as_mut())
            }
        })*

        $(impl InTable for $ty {
            const RESOURCE: ResourceKind = ResourceKind::$ty;
            fn wrap(object: Arc<Self>) -> AnyObject {
                AnyObject::$ty(object)
            }
            fn held(observed: &Observed) -> &[Arc<Self>] {
                &observed.$field
            }
            fn held_mut(observed: &mut Observed) -> &mut Vec<Arc<Self>> {
                &mut observed.$field
            }
        })*

        /// The typed kinds, in the table's order.
        #[cfg(test)]
        pub(crate) const TYPED_KINDS: &[ResourceKind] =
            &[$(ResourceKind::$wl,)* $(ResourceKind::$ty),*];
        /// The kinds read apart.
        const APART_KINDS: &[ResourceKind] = &[$(ResourceKind::$a),*];
    };
}

with_kind_table! { kinds_from_table! {} }

/// The raw kinds, what `Api<DynamicObject>` reads: every resource of evidence's `RESOURCES`
/// neither typed nor read apart.
pub(crate) fn raw_kinds() -> impl Iterator<Item = ResourceKind> {
    liveproof_evidence::RESOURCES
        .iter()
        .map(|r| r.resource)
        .filter(|&r| dispatch!(r, T => T::RESOURCE != r, else => !APART_KINDS.contains(&r)))
}

/// Every resource: typed, raw or apart.
#[cfg(test)]
fn all_kinds() -> impl Iterator<Item = ResourceKind> {
    liveproof_evidence::RESOURCES.iter().map(|r| r.resource)
}

/// What the table says of a typed kind, implemented from it: its [`ResourceKind`], its
/// [`AnyObject`] variant and its list in `Observed`. A [`Kind`] needs it, so a kind cannot be
/// gathered typed without its line in the table.
pub(crate) trait InTable: Sized {
    const RESOURCE: ResourceKind;
    /// The shared object as an [`AnyObject`].
    fn wrap(object: Arc<Self>) -> AnyObject;
    /// Its objects in `observed`.
    fn held(observed: &Observed) -> &[Arc<Self>];
    fn held_mut(observed: &mut Observed) -> &mut Vec<Arc<Self>>;
}

/// A kind the gather reads typed: what it decodes from the API (`Wire`, what kube's `Api`
/// needs), what it holds of each object read (itself), its line in the table ([`InTable`]),
/// and what it is beyond that.
pub(crate) trait Kind:
    InTable + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
    /// What `Api<Wire>` decodes a GET, each item of a LIST page and each watch event into: the
    /// kind itself without its `managedFields` ([`Lean`], skipped as it is decoded), or for a
    /// pod, evidence's lean pod with what kube reads of it ([`ApiPod`]).
    type Wire: kube::Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static;

    /// What is held of one object read, as soon as it is decoded: without the server's
    /// field-ownership bookkeeping (`managedFields`: often the larger half of an object, no
    /// check reads it, and the offline loader drops it too), and with the lists of its pod spec
    /// and status no longer than they are (deserialised, a one-container list holds room for
    /// four containers of ~1 kB each: 30 MB of nothing over 10,000 pods).
    fn from_wire(wire: Self::Wire) -> Self;

    /// Its metadata, as the gather reads it (name, namespace, uid, resourceVersion, labels).
    fn meta_view(&self) -> Meta<'_>;

    fn into_any(self) -> AnyObject {
        Self::wrap(Arc::new(self))
    }

    /// The pod spec it carries (a workload's template), for [`Kind::shrink`].
    fn pod_spec_mut(&mut self) -> Option<&mut PodSpec> {
        None
    }

    /// Lists no longer than they are (see [`Kind::from_wire`]).
    fn shrink(&mut self) {
        if let Some(spec) = self.pod_spec_mut() {
            shrink_pod_spec(spec);
        }
    }
}

/// [`Kind`]'s reading of a kind held as the API sends it, with an `ObjectMeta`.
macro_rules! held_as_sent {
    () => {
        type Wire = Lean<Self>;

        fn from_wire(Lean(mut wire): Lean<Self>) -> Self {
            wire.shrink();
            wire
        }

        fn meta_view(&self) -> Meta<'_> {
            Meta::Object(&self.metadata)
        }
    };
}

impl Kind for ReplicaSet {
    held_as_sent!();
}

impl Kind for ControllerRevision {
    held_as_sent!();
}

impl Kind for Service {
    held_as_sent!();
}

impl Kind for EndpointSlice {
    held_as_sent!();
}

impl Kind for Pod {
    type Wire = ApiPod;

    fn from_wire(wire: ApiPod) -> Pod {
        let mut pod = wire.pod;
        pod.shrink();
        pod
    }

    fn meta_view(&self) -> Meta<'_> {
        Meta::Pod(&self.metadata)
    }

    fn shrink(&mut self) {
        if let Some(spec) = self.spec.as_mut() {
            spec.containers.shrink_to_fit();
            spec.init_containers.iter_mut().for_each(Vec::shrink_to_fit);
            spec.volumes.iter_mut().for_each(Vec::shrink_to_fit);
            for c in spec
                .containers
                .iter_mut()
                .chain(spec.init_containers.iter_mut().flatten())
            {
                c.env.iter_mut().for_each(Vec::shrink_to_fit);
            }
        }
        if let Some(status) = self.status.as_mut() {
            for list in [
                &mut status.container_statuses,
                &mut status.init_container_statuses,
            ] {
                list.iter_mut().for_each(Vec::shrink_to_fit);
            }
            status.conditions.iter_mut().for_each(Vec::shrink_to_fit);
        }
    }
}

/// A pod as kube's `Api` reads it: evidence's lean [`Pod`], decoded straight from the server's
/// JSON (never `k8s_openapi`'s, over 4 KiB a pod before any field is set), and beside it the
/// `ObjectMeta` kube itself reads of an object (a watch resumes from its `resourceVersion`):
/// name, namespace, uid and resourceVersion, nothing else. The gather reads the pod, never that
/// copy.
#[derive(Debug, Clone)]
pub(crate) struct ApiPod {
    meta: ObjectMeta,
    pod: Pod,
}

impl<'de> serde::Deserialize<'de> for ApiPod {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ApiPod, D::Error> {
        let pod = Pod::deserialize(deserializer)?;
        let m = &pod.metadata;
        let meta = ObjectMeta {
            name: m.name.clone(),
            namespace: m.namespace.clone(),
            uid: m.uid.clone(),
            resource_version: m.resource_version.clone(),
            ..ObjectMeta::default()
        };
        Ok(ApiPod { meta, pod })
    }
}

impl k8s_openapi::Resource for ApiPod {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = NamespaceResourceScope;
}

impl k8s_openapi::Metadata for ApiPod {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.meta
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

fn shrink_pod_spec(spec: &mut PodSpec) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use liveproof_evidence::{TargetKind, KINDS};
    use serde_json::json;

    /// The typed kind `resource` dispatches to, if it is typed.
    fn typed_as(resource: ResourceKind) -> Option<ResourceKind> {
        dispatch!(resource, T => Some(T::RESOURCE), else => None)
    }

    #[test]
    fn every_workload_kind_is_typed() {
        for spec in KINDS.iter().filter(|k| k.workload.is_some()) {
            assert_eq!(
                typed_as(spec.resource),
                Some(spec.resource),
                "{}: a workload kind of evidence's KINDS, not typed in the gather's table",
                spec.kind_name
            );
            let revisions = spec.revisions;
            assert!(
                revisions.is_some_and(|r| typed_as(r).is_some()),
                "{}: a workload whose revisions ({revisions:?}) are not a typed kind",
                spec.kind_name
            );
            assert_eq!(TargetKind::workload_of(spec.resource), Some(spec.kind));
        }
    }

    /// Each kind of the table dispatches to itself, and what evidence takes into a typed list
    /// of `Observed` the table reads typed, into that list (and back out in kind order).
    #[test]
    fn every_kind_evidence_holds_typed_is_typed_here() {
        for kind in all_kinds() {
            let typed = typed_as(kind);
            assert_eq!(typed.is_some(), TYPED_KINDS.contains(&kind), "{kind:?}");
            assert!(
                typed.is_none_or(|t| t == kind),
                "{kind:?} dispatches to {typed:?}"
            );
            assert!(
                typed.is_none() || !raw_kinds().any(|r| r == kind),
                "{kind:?}: typed and raw"
            );
            let mut observed = Observed::default();
            // Enough of an object for evidence to take any kind (a workload needs its spec).
            let object = json!({
                "apiVersion": kind.api_version(),
                "kind": kind.kind_name(),
                "metadata": {"name": "inventory", "namespace": "shop"},
                "spec": {"selector": {}, "template": {}},
            });
            observed.add_value(object, "test").expect("a valid object");
            let raw = observed.others.len() + observed.nodes.len();
            let taken = AnyObject::take_all(&mut observed);
            match typed {
                Some(_) => {
                    assert_eq!(raw, 0, "{kind:?}: typed here, raw in evidence");
                    assert_eq!(taken.len(), 1, "{kind:?}: not held where the table says");
                    assert_eq!(taken[0].resource(), kind);
                    assert_eq!(taken[0].name(), "inventory");
                }
                None => assert!(
                    taken.is_empty() && raw == 1,
                    "{kind:?}: evidence holds it in a typed list, the gather's table does not"
                ),
            }
        }
    }

    /// A pod is decoded straight into evidence's lean pod, its managedFields, annotations and
    /// env values never held; beside it, kube's watcher reads the pod's name, namespace, uid
    /// and resourceVersion, and the gather reads the held pod as any object (its `Meta`).
    #[test]
    fn a_pod_is_read_as_evidences_lean_pod() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
        use kube::Resource as _;
        let sent = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1", "resourceVersion": "42",
                         "labels": {"app": "web"}, "annotations": {"note": "x"},
                         "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "spec": {"containers": [{"name": "app", "image": "web:1",
                                     "env": [{"name": "TOKEN", "value": "hunter2"}]}]},
        });
        let wire: ApiPod = serde_json::from_value(sent.clone()).expect("a pod");
        let kube_reads = wire.meta();
        assert_eq!(kube_reads.name.as_deref(), Some("web-1"));
        assert_eq!(kube_reads.namespace.as_deref(), Some("shop"));
        assert_eq!(kube_reads.uid.as_deref(), Some("u1"));
        assert_eq!(kube_reads.resource_version.as_deref(), Some("42"));
        let held = Pod::from_wire(wire);
        assert_eq!(held, serde_json::from_value::<Pod>(sent).expect("a pod"));
        assert!(
            !format!("{held:?}").contains("hunter2"),
            "an env value is never held"
        );
        let meta = held.meta_view();
        assert_eq!(
            (meta.name(), meta.resource_version()),
            (Some("web-1"), Some("42"))
        );
        let web = LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            ..LabelSelector::default()
        };
        assert!(meta.selected_by(&web));
        assert_eq!(
            held.clone().into_any().key(),
            (ResourceKind::Pod, "u1".into())
        );
    }

    #[test]
    fn each_typed_kind_wraps_as_itself() {
        let mut seen = Vec::new();
        for_each_typed_kind!(T => {
            let object: T = serde_json::from_value(json!({"metadata": {"name": "x"}}))
                .expect("a bare object");
            let any = object.into_any();
            assert_eq!(any.resource(), T::RESOURCE);
            let mut observed = Observed::default();
            any.push_into(&mut observed);
            assert_eq!(T::held(&observed).len(), 1);
            seen.push(T::RESOURCE);
        });
        assert_eq!(seen, TYPED_KINDS);
    }
}
