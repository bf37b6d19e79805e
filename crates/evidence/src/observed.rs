//! The snapshot the gather phase builds and the checks read: the same type whether it came
//! from the API server or from `--from` files.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::Value;

use crate::pod::Pod;

/// The resources the workload checks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// Argo Rollouts `argoproj.io/v1alpha1`.
    Rollout,
    ReplicaSet,
    ControllerRevision,
    Pod,
    Node,
    /// Helm release storage (driver `secret`, the default).
    Secret,
    /// Helm release storage (driver `configmap`).
    ConfigMap,
    /// Flux `helm.toolkit.fluxcd.io/v2`.
    HelmRelease,
    /// Flux `kustomize.toolkit.fluxcd.io/v1`.
    Kustomization,
    /// Flux `source.toolkit.fluxcd.io/v1`.
    GitRepository,
    /// Argo CD `argoproj.io/v1alpha1`.
    Application,
    /// Flagger `flagger.app/v1beta1`.
    Canary,
    /// Knative `serving.knative.dev/v1` `Service` (`ksvc`), another kind than core's Service.
    KnativeService,
    /// Knative `serving.knative.dev/v1` `Revision`: the digests a ksvc's revision resolved.
    KnativeRevision,
    /// What routes traffic to a workload's pods (`traffic_current`).
    Service,
    /// `discovery.k8s.io/v1`: the endpoints a Service routes to.
    EndpointSlice,
}

impl ResourceKind {
    /// The group/version we read it at.
    pub const fn api_version(self) -> &'static str {
        match self {
            ResourceKind::Deployment
            | ResourceKind::StatefulSet
            | ResourceKind::DaemonSet
            | ResourceKind::ReplicaSet
            | ResourceKind::ControllerRevision => "apps/v1",
            ResourceKind::Pod
            | ResourceKind::Node
            | ResourceKind::Secret
            | ResourceKind::ConfigMap
            | ResourceKind::Service => "v1",
            ResourceKind::EndpointSlice => "discovery.k8s.io/v1",
            ResourceKind::HelmRelease => "helm.toolkit.fluxcd.io/v2",
            ResourceKind::Kustomization => "kustomize.toolkit.fluxcd.io/v1",
            ResourceKind::GitRepository => "source.toolkit.fluxcd.io/v1",
            ResourceKind::Application | ResourceKind::Rollout => "argoproj.io/v1alpha1",
            ResourceKind::Canary => "flagger.app/v1beta1",
            ResourceKind::KnativeService | ResourceKind::KnativeRevision => {
                "serving.knative.dev/v1"
            }
        }
    }

    /// The API group, `""` for core.
    pub fn group(self) -> &'static str {
        api_group(self.api_version())
    }

    /// Served by every API server (core, `apps`, `discovery.k8s.io`), not by a CRD a
    /// controller installs.
    pub fn is_builtin(self) -> bool {
        matches!(self.group(), "" | "apps" | "discovery.k8s.io")
    }

    pub const fn kind_name(self) -> &'static str {
        match self {
            ResourceKind::Deployment => "Deployment",
            ResourceKind::StatefulSet => "StatefulSet",
            ResourceKind::DaemonSet => "DaemonSet",
            ResourceKind::ReplicaSet => "ReplicaSet",
            ResourceKind::ControllerRevision => "ControllerRevision",
            ResourceKind::Pod => "Pod",
            ResourceKind::Node => "Node",
            ResourceKind::Secret => "Secret",
            ResourceKind::ConfigMap => "ConfigMap",
            ResourceKind::HelmRelease => "HelmRelease",
            ResourceKind::Kustomization => "Kustomization",
            ResourceKind::GitRepository => "GitRepository",
            ResourceKind::Application => "Application",
            ResourceKind::Canary => "Canary",
            ResourceKind::KnativeService => "Service",
            ResourceKind::KnativeRevision => "Revision",
            ResourceKind::Rollout => "Rollout",
            ResourceKind::Service => "Service",
            ResourceKind::EndpointSlice => "EndpointSlice",
        }
    }

    /// The plural resource name, as RBAC and the REST path spell it.
    pub const fn plural(self) -> &'static str {
        match self {
            ResourceKind::Deployment => "deployments",
            ResourceKind::StatefulSet => "statefulsets",
            ResourceKind::DaemonSet => "daemonsets",
            ResourceKind::ReplicaSet => "replicasets",
            ResourceKind::ControllerRevision => "controllerrevisions",
            ResourceKind::Pod => "pods",
            ResourceKind::Node => "nodes",
            ResourceKind::Secret => "secrets",
            ResourceKind::ConfigMap => "configmaps",
            ResourceKind::HelmRelease => "helmreleases",
            ResourceKind::Kustomization => "kustomizations",
            ResourceKind::GitRepository => "gitrepositories",
            ResourceKind::Application => "applications",
            ResourceKind::Canary => "canaries",
            ResourceKind::KnativeService => "services",
            ResourceKind::KnativeRevision => "revisions",
            ResourceKind::Rollout => "rollouts",
            ResourceKind::Service => "services",
            ResourceKind::EndpointSlice => "endpointslices",
        }
    }
}

/// The API group of an `apiVersion`: `apps` of `apps/v1`, `""` of core's `v1`.
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// A read the cluster refused (RBAC 403): the checks that need it become `unknown` and name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub namespace: Option<String>,
    pub resource: ResourceKind,
    pub verb: String,
    pub message: String,
}

/// Everything gathered, before any judgement.
///
/// The objects are shared (`Arc`): `--wait` keeps what its watches hold and hands out a
/// snapshot per change, and a snapshot is then pointers to the same objects, not a copy of
/// every one of them.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub deployments: Vec<Arc<Deployment>>,
    pub statefulsets: Vec<Arc<StatefulSet>>,
    pub daemonsets: Vec<Arc<DaemonSet>>,
    pub rollouts: Vec<Arc<crate::Rollout>>,
    pub replicasets: Vec<Arc<ReplicaSet>>,
    pub controller_revisions: Vec<Arc<ControllerRevision>>,
    pub pods: Vec<Arc<Pod>>,
    /// The Services of the workloads' namespaces, and their EndpointSlices: what routes
    /// traffic to the pods (`traffic_current`).
    pub services: Vec<Arc<Service>>,
    pub endpoint_slices: Vec<Arc<EndpointSlice>>,
    pub nodes: Vec<Node>,
    /// Objects of kinds the workload checks do not read (kept for later stages, e.g. Helm
    /// storage Secrets or GitOps objects), as their raw JSON.
    pub others: Vec<Value>,
    /// `(namespace, kind)` pairs that were LISTed in full from the API: there, an absent
    /// object really is absent. A `--from` dump lists nothing in full, so a missing object
    /// there is unknown, never "none exist".
    pub complete: BTreeSet<(String, ResourceKind)>,
    /// Reads the cluster refused.
    pub denied: Vec<Denied>,
    /// The Helm storage objects among `others`, decoded by the gatherer (under
    /// `--max-release-size` and the command's deadline): the judge never decodes one.
    pub releases: crate::facts::Releases,
    /// What each image reference (`ImageRef` as `repository:tag`) resolves to in its registry
    /// now, or why it could not be resolved. Only references the digest policy covers.
    pub tags: std::collections::BTreeMap<String, Result<crate::facts::ResolvedTag, String>>,
    /// Container logs read for diagnostics (`--logs`): `(namespace, pod, container)` → lines.
    pub logs: crate::facts::Logs,
    /// What the change's commit did to a chart, read from git when `--repo` holds it: the
    /// evidence behind the ChartVersion diagnosis.
    pub chart_changes: Vec<ChartChange>,
    /// Whether each GitOps revision the objects name contains the change's commit, as
    /// `--repo`'s history tells, by the revision's commit (lower case, as written there). A
    /// revision missing here was not traced (no `--commit`, or not a commit): it is judged by
    /// equality alone, and a revision that is not the commit is then unknown, never failed.
    pub containment: std::collections::BTreeMap<String, Containment>,
    /// What `--repo` holds after the change's commit (manifests as of later commits), read
    /// for `superseded` when a GitOps revision or `-f` points there.
    pub history: crate::history::History,
    /// What each `--version-url` answered, by URL, in the order read (see
    /// [`server::judge`](crate::server::judge) for how readings pair with expectations).
    pub versions: Vec<(
        liveproof_redacted::DisplaySafeUrl,
        crate::facts::VersionReading,
    )>,
    /// `pods` by namespace and label, built when first asked ([`Observed::pods_selected`]).
    pub pod_index: crate::pod_index::PodIndex,
}

/// Whether a GitOps revision contains the change's commit: the commit itself or a descendant
/// of it. A busy main moves past a change before the controller applies it; the revision it
/// applies still carries the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// The revision is a descendant of the commit.
    Contains,
    /// It is not: an older commit, or one on another branch.
    Lacks,
    /// The repository cannot tell: why, and the command that would let it.
    Unknown { why: String, fix: String },
}

/// What one commit changed under one chart directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartChange {
    pub commit: String,
    /// The chart directory in the repository, e.g. `charts/inventory`.
    pub chart_path: String,
    /// Files under it the commit changed.
    pub files: Vec<String>,
    /// Whether the commit changed the `version:` line of its `Chart.yaml`.
    pub version_changed: bool,
}

/// An object that could not be taken into the snapshot.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    #[error("{what}: no `kind` field; is this a Kubernetes object?")]
    NoKind { what: String },
    #[error("{what}: {kind}/{name} has no {field}, which every {kind} must have")]
    Missing {
        what: String,
        kind: String,
        name: String,
        field: &'static str,
    },
    // Named by field, never by value: serde's message quotes the value (`invalid type: string
    // "DB_PASSWORD=…"`), and a manifest's values may be secrets.
    #[error("{what}: not a valid {kind}: `{field}` {problem}")]
    Invalid {
        what: String,
        kind: String,
        /// Where in the object: `spec.template.spec.containers[0].ports[0].containerPort`.
        field: String,
        /// What is wrong there, quoting none of it: `has the wrong type (expected i32)`.
        problem: String,
    },
}

impl crate::hint::Hinted for ObjectError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            ObjectError::Invalid { .. } => Some(
                "fix that field in the file; the Kubernetes API reference gives its type".into(),
            ),
            ObjectError::NoKind { .. } | ObjectError::Missing { .. } => None,
        }
    }
}

/// `value` as a `T`, or where and why not.
fn typed<T: serde::de::DeserializeOwned>(
    value: Value,
) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(value)
}

impl Observed {
    /// Takes one object (or a `kind: List` of them) in its JSON form, as `kubectl get -o json`
    /// prints it. `what` names where it came from, for errors.
    pub fn add_value(&mut self, value: Value, what: &str) -> Result<(), ObjectError> {
        // `kubectl get -o yaml` of several objects prints a List; so does `*List` kinds.
        crate::objects::each_object(value, what, &mut |object, what| {
            self.add_object(object, what)
        })
    }

    /// [`Observed::add_value`] of one object, or of a List without an `items` array (which
    /// holds none).
    fn add_object(&mut self, mut value: Value, what: &str) -> Result<(), ObjectError> {
        // The server's field-ownership bookkeeping is often the larger half of an object and
        // no check reads it (kubectl hides it too).
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| ObjectError::NoKind {
                what: what.to_string(),
            })?
            .to_string();
        let name = value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        // A List without an `items` array holds no object.
        if crate::objects::is_list(&value) {
            return Ok(());
        }
        // The typed structs fill a missing required field with a default, which would turn a
        // broken document into a quietly wrong workload: refuse what no API server returns.
        let group = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(api_group);
        let workload =
            crate::TargetKind::workload_named(&kind, group).and_then(|k| k.spec().workload);
        let required: &[(&str, &'static str)] = match kind.as_str() {
            // A Rollout may take its template from another object (`spec.workloadRef`).
            _ if workload.is_some() && value.pointer("/spec/workloadRef").is_some() => {
                &[("/metadata/name", "metadata.name"), ("/spec", "spec")]
            }
            _ if workload.is_some() => &[
                ("/metadata/name", "metadata.name"),
                ("/spec", "spec"),
                ("/spec/selector", "spec.selector"),
                ("/spec/template", "spec.template"),
            ],
            "ReplicaSet" | "Pod" | "ControllerRevision" | "Node" | "Service" | "EndpointSlice" => {
                &[("/metadata/name", "metadata.name")]
            }
            _ => &[],
        };
        if let Some((_, field)) = required
            .iter()
            .find(|(ptr, _)| value.pointer(ptr).is_none_or(Value::is_null))
        {
            return Err(ObjectError::Missing {
                what: what.to_string(),
                kind,
                name,
                field,
            });
        }
        let invalid = |err: serde_path_to_error::Error<serde_json::Error>| ObjectError::Invalid {
            what: format!("{what}: {kind}/{name}"),
            kind: kind.clone(),
            field: err.path().to_string(),
            problem: liveproof_redacted::parse::data_problem(&err.inner().to_string()),
        };
        match kind.as_str() {
            _ if workload.is_some() => {
                if let Some(fns) = workload {
                    (fns.add)(self, value).map_err(invalid)?;
                }
            }
            "ReplicaSet" => self
                .replicasets
                .push(Arc::new(typed(value).map_err(invalid)?)),
            "ControllerRevision" => self
                .controller_revisions
                .push(Arc::new(typed(value).map_err(invalid)?)),
            "Pod" => self.pods.push(Arc::new(typed(value).map_err(invalid)?)),
            // Knative's `serving.knative.dev` Service is another kind of the same name.
            "Service" if group == Some("") => {
                self.services.push(Arc::new(typed(value).map_err(invalid)?))
            }
            "EndpointSlice" if group == Some("discovery.k8s.io") => self
                .endpoint_slices
                .push(Arc::new(typed(value).map_err(invalid)?)),
            "Node" => self.nodes.push(typed(value).map_err(invalid)?),
            _ => self.others.push(value),
        }
        Ok(())
    }

    /// The pods in `namespace` (or without one) that `selector` matches, in order: through an
    /// index of the pods built on first use and again whenever `pods` changed length or moved.
    pub fn pods_selected(
        &self,
        namespace: &str,
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Vec<&Pod> {
        self.pod_index.selected(&self.pods, namespace, selector)
    }

    /// Marks `(namespace, kind)` as listed in full.
    pub fn mark_complete(&mut self, namespace: &str, kind: ResourceKind) {
        self.complete.insert((namespace.to_string(), kind));
    }

    pub fn is_complete(&self, namespace: &str, kind: ResourceKind) -> bool {
        self.complete.contains(&(namespace.to_string(), kind))
    }

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
    pub(crate) fn workload_objects(&self) -> Vec<crate::kinds::Listed<'_>> {
        crate::KINDS
            .iter()
            .filter_map(|k| k.workload)
            .flat_map(|fns| (fns.list)(self))
            .collect()
    }

    /// Objects kept raw (`others`) of `kind` — matched by kind and API group, any version.
    pub fn others_of(&self, kind: ResourceKind) -> impl Iterator<Item = &Value> {
        let group = kind.group();
        self.others.iter().filter(move |o| {
            o.get("kind").and_then(Value::as_str) == Some(kind.kind_name())
                && o.get("apiVersion").and_then(Value::as_str).map(api_group) == Some(group)
        })
    }

    /// The raw object of `kind` named `name` in `namespace`.
    pub fn find_other(&self, kind: ResourceKind, namespace: &str, name: &str) -> Option<&Value> {
        self.others_of(kind).find(|o| {
            o.pointer("/metadata/name").and_then(Value::as_str) == Some(name)
                && o.pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(namespace)
                    == namespace
        })
    }

    /// The refusal that kept `kind` in `namespace` from being read, if any.
    pub fn denial(&self, namespace: &str, kind: ResourceKind) -> Option<&Denied> {
        self.denied
            .iter()
            .find(|d| d.resource == kind && d.namespace.as_deref().is_none_or(|ns| ns == namespace))
    }
}

#[cfg(test)]
impl Observed {
    /// A corpus story's objects (`test-data/scenarios/NAME/cluster.yaml`), for unit tests.
    pub(crate) fn of_story(name: &str) -> Observed {
        use serde::Deserialize as _;
        let path = format!(
            "{}/../../test-data/scenarios/{name}/cluster.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("the story's cluster.yaml");
        let mut observed = Observed::default();
        for doc in serde_norway::Deserializer::from_str(&text) {
            let value = serde_json::Value::deserialize(doc).expect("YAML");
            observed.add_value(value, &path).expect("an object");
        }
        observed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"}})
    }

    #[test]
    fn a_list_and_the_lists_in_it_are_taken_in_item_by_item() {
        let mut observed = Observed::default();
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [
            pod("web-1"),
            {"apiVersion": "v1", "kind": "ServiceList", "items": [
                {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"}},
            ]},
            pod("web-2"),
        ]});
        observed.add_value(list, "dump.json").expect("taken");
        let names: Vec<_> = observed
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        assert_eq!(names, ["web-1", "web-2"]);
        assert_eq!(observed.services.len(), 1);
        assert!(observed.others.is_empty(), "{:?}", observed.others);
    }

    #[test]
    fn an_item_without_kind_is_refused_by_its_place_in_the_list() {
        let mut observed = Observed::default();
        let list = json!({"kind": "List", "items": [pod("web-1"), {"kind": "PodList", "items": [
            {"metadata": {"name": "web-2"}},
        ]}]});
        let err = observed.add_value(list, "dump.json").expect_err("no kind");
        assert!(
            matches!(&err, ObjectError::NoKind { what } if what == "dump.json: items[1]: items[0]"),
            "{err}"
        );
    }

    #[test]
    fn a_list_without_items_holds_no_object() {
        let mut observed = Observed::default();
        for list in [
            json!({"apiVersion": "v1", "kind": "List"}),
            json!({"apiVersion": "v1", "kind": "PodList", "items": null}),
            json!({"apiVersion": "v1", "kind": "List", "items": []}),
        ] {
            observed
                .add_value(list, "dump.json")
                .expect("nothing to take");
        }
        assert!(observed.pods.is_empty());
        assert!(observed.others.is_empty(), "{:?}", observed.others);
    }
}
