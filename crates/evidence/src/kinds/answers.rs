//! The answers a kind's [`KindRules`](super::rules::KindRules) give the gather, the flag
//! checks and `rollback` (asked through [`asked`](super::asked)): reads described, not done,
//! and what the kind accepts and restores.

use serde_json::Value;

use crate::checks::raw::str_at;
use crate::ResourceKind;

/// One read a non-workload target leads to, described, not done: the gather executes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadRequest {
    /// GET one object.
    Object {
        resource: ResourceKind,
        namespace: String,
        name: String,
    },
    /// A Helm release's storage in `namespace`: every object of [`HELM_STORAGE`] labelled
    /// `owner=helm,name=RELEASE`.
    HelmStorage { namespace: String, release: String },
}

impl ReadRequest {
    pub(crate) fn object(resource: ResourceKind, namespace: &str, name: &str) -> Self {
        ReadRequest::Object {
            resource,
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    pub(crate) fn helm_storage(namespace: &str, release: &str) -> Self {
        ReadRequest::HelmStorage {
            namespace: namespace.to_string(),
            release: release.to_string(),
        }
    }

    /// The GitRepository a Flux `sourceRef` names (its namespace defaults to the referrer's),
    /// if it names one.
    pub(crate) fn git_repository(source_ref: Option<&Value>, default_ns: &str) -> Option<Self> {
        let source_ref = source_ref?;
        if str_at(source_ref, "/kind") != Some("GitRepository") {
            return None;
        }
        let name = str_at(source_ref, "/name")?;
        let ns = str_at(source_ref, "/namespace")
            .filter(|ns| !ns.is_empty())
            .unwrap_or(default_ns);
        Some(Self::object(ResourceKind::GitRepository, ns, name))
    }
}

/// The resources Helm's storage drivers keep a release in, in the order they are read:
/// Secrets (the default driver), then ConfigMaps.
pub const HELM_STORAGE: [ResourceKind; 2] = [ResourceKind::Secret, ResourceKind::ConfigMap];

/// How a kind's names are listed, for the hint of a target that is not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lister {
    /// `kubectl get PLURAL`: the kind's own objects.
    Kubectl,
    /// `helm list`: the releases Helm's storage holds (their objects' `name` label).
    Helm,
}

/// What `rollback` puts back for a target of the kind that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restore {
    /// Nothing of its own: what it leads to is rolled back by whoever applies it.
    Nothing,
    /// Its Helm revision as of the snapshot: left to Helm, with the command.
    HelmRevision,
    /// Its pod template as of the snapshot.
    PodTemplate,
}

/// The change flags a target of the kind can be held to (`--image`, `--expect-env` and
/// `--expect-secret-ref` apply to every kind: a Helm or GitOps target's workloads are held to
/// them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepts {
    /// `--chart-version`: it installs a chart whose version is recorded.
    pub chart_version: bool,
    /// `--expect`: what it is held to, or why it cannot be.
    pub expect: ExpectOn,
}

/// What `--expect`'s manifests are compared with for a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectOn {
    /// The manifest Helm installed.
    Manifest,
    /// The workload's pod template.
    Template,
    /// Refused: it stores no rendered manifest; the hint says what to verify it with.
    Refused(&'static str),
}

/// The hint refusing `--expect` for a Kustomization or an Application.
pub(crate) const GITOPS_STORES_NO_MANIFEST: &str = "a Kustomization or Application stores no rendered manifest: verify it with --commit, and hold its workloads to --image, --expect-env or --expect-secret-ref";

/// The hint refusing `--expect` for a Canary or a Knative Service.
pub(crate) const LEADS_TO_ONE_WORKLOAD: &str = "a Canary or Knative Service stores no rendered manifest: hold the workload it leads to with --image, --expect-env or --expect-secret-ref";
