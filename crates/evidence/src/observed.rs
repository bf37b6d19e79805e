//! The snapshot the gather phase builds and the checks read: the same type whether it came
//! from the API server or from `--from` files.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::Value;

use crate::pod::Pod;
use crate::replica_set::ReplicaSet;
use crate::{api_group, ResourceKind};

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
    /// The objects of every workload kind, a list per kind (`workloads.of::<Deployment>()`).
    pub workloads: crate::WorkloadStore,
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
    /// `replicasets` and `controller_revisions` by owner, built when first asked
    /// ([`crate::index`]).
    pub replicaset_owners: crate::index::OwnerIndex,
    pub controller_revision_owners: crate::index::OwnerIndex,
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

impl Observed {
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
