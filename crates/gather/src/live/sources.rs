//! The first phase for Helm and GitOps targets: the objects they are made of, read raw into
//! [`Observed::others`].
//!
//! - `release/NAME`: its storage, one LIST of Secrets and one of ConfigMaps (Helm's two drivers)
//!   by `owner=helm,name=NAME` in the target's namespace;
//! - `helmrelease/NAME`: the HelmRelease, its chart's GitRepository (when the chart comes from
//!   one), and the storage of the Helm release it manages (see [`helm_release_of`]);
//! - `kustomization/NAME`: the Kustomization and its GitRepository;
//! - `application/NAME`: the Application (Argo CD renders Helm itself: no Helm storage);
//! - `canary/NAME`: the Flagger Canary (its target and `-primary` are workloads);
//! - `ksvc/NAME`: the Knative Service and its latest created Revision (the revision's
//!   Deployment is a workload).
//!
//! What a read depends on is read in a later round, so each object is read once however many
//! targets lead to it. The workloads these objects name are then gathered like workload
//! targets (see [`followed`]).

use std::collections::BTreeSet;

use futures::future::join_all;
use kube::api::{Api, DynamicObject, ListParams};
use liveproof_evidence::{Denied, Observed, ResourceKind, Target, TargetKind};
use serde_json::Value;

use super::objects::{api_resource, raw_value};
use super::{Cluster, GatherError};

/// Reads are planned from what earlier rounds found; the chain is at most two deep (a
/// HelmRelease, then its GitRepository and storage), so this bound is never reached.
const MAX_ROUNDS: usize = 3;

/// One read a non-workload target leads to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SourceRead {
    /// GET one object of a raw kind.
    Object {
        resource: ResourceKind,
        namespace: String,
        name: String,
    },
    /// LIST a Helm release's storage objects (`Secret` or `ConfigMap`) by label selector.
    Storage {
        resource: ResourceKind,
        namespace: String,
        release: String,
    },
}

impl SourceRead {
    pub(crate) fn resource(&self) -> ResourceKind {
        match self {
            SourceRead::Object { resource, .. } | SourceRead::Storage { resource, .. } => *resource,
        }
    }

    pub(crate) fn namespace(&self) -> &str {
        match self {
            SourceRead::Object { namespace, .. } | SourceRead::Storage { namespace, .. } => {
                namespace
            }
        }
    }

    fn verb(&self) -> &'static str {
        match self {
            SourceRead::Object { .. } => "get",
            SourceRead::Storage { .. } => "list",
        }
    }
}

impl std::fmt::Display for SourceRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceRead::Object {
                resource,
                namespace,
                name,
            } => write!(f, "{} {namespace}/{name}", resource.kind_name()),
            SourceRead::Storage {
                resource,
                namespace,
                release,
            } => write!(
                f,
                "{} in namespace {namespace} holding Helm release {release}",
                resource.plural()
            ),
        }
    }
}

/// The label selector Helm's storage drivers find a release's revisions by.
pub(crate) fn storage_selector(release: &str) -> String {
    format!("owner=helm,name={release}")
}

fn storage(namespace: &str, release: &str) -> [SourceRead; 2] {
    [ResourceKind::Secret, ResourceKind::ConfigMap].map(|resource| SourceRead::Storage {
        resource,
        namespace: namespace.to_string(),
        release: release.to_string(),
    })
}

fn object(resource: ResourceKind, namespace: &str, name: &str) -> SourceRead {
    SourceRead::Object {
        resource,
        namespace: namespace.to_string(),
        name: name.to_string(),
    }
}

/// The reads `target` leads to, given what has been read so far (`observed`): the target's own
/// object or storage first, then what that object references once it is there. Empty for
/// workload targets.
pub(crate) fn source_reads(
    target: &Target,
    default_ns: &str,
    observed: &Observed,
) -> Vec<SourceRead> {
    let ns = target.namespace_or(default_ns);
    let name = target.name.as_str();
    let mut reads = Vec::new();
    if target.kind.is_workload() {
        // Read by the workload plan (`plan::plan_lookups`), not here.
        return reads;
    }
    match target.kind {
        TargetKind::Release => reads.extend(storage(ns, name)),
        TargetKind::HelmRelease => {
            reads.push(object(ResourceKind::HelmRelease, ns, name));
            if let Some(hr) = observed.find_other(ResourceKind::HelmRelease, ns, name) {
                reads.extend(git_repository(hr.pointer("/spec/chart/spec/sourceRef"), ns));
                let (release, storage_ns) = helm_release_of(hr, ns);
                reads.extend(storage(&storage_ns, &release));
            }
        }
        TargetKind::Kustomization => {
            reads.push(object(ResourceKind::Kustomization, ns, name));
            if let Some(ks) = observed.find_other(ResourceKind::Kustomization, ns, name) {
                reads.extend(git_repository(ks.pointer("/spec/sourceRef"), ns));
            }
        }
        TargetKind::Application => reads.push(object(ResourceKind::Application, ns, name)),
        // Its target and `-primary` Deployments are workloads, read by the workload plan.
        TargetKind::Canary => reads.push(object(ResourceKind::Canary, ns, name)),
        // The Service, then the Revision made from its current spec (the digests it resolved);
        // that revision's Deployment is a workload, read by the workload plan.
        TargetKind::KnativeService => {
            reads.push(object(ResourceKind::KnativeService, ns, name));
            if let Some(revision) = observed
                .find_other(ResourceKind::KnativeService, ns, name)
                .and_then(|k| k.pointer("/status/latestCreatedRevisionName"))
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                reads.push(object(ResourceKind::KnativeRevision, ns, revision));
            }
        }
        // The workload kinds, returned above: which they are is `KINDS`' to say. A source
        // kind left out here reads nothing (`every_source_kind_is_read`).
        _ => {}
    }
    reads
}

/// The GitRepository a Flux `sourceRef` names (its namespace defaults to the referrer's), if it
/// names one.
fn git_repository(source_ref: Option<&Value>, default_ns: &str) -> Option<SourceRead> {
    let source_ref = source_ref?;
    if source_ref.get("kind").and_then(Value::as_str) != Some("GitRepository") {
        return None;
    }
    let name = source_ref.get("name").and_then(Value::as_str)?;
    let ns = source_ref
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(default_ns);
    Some(object(ResourceKind::GitRepository, ns, name))
}

/// `(release name, storage namespace)`: the one rule, shared with the checks.
pub(crate) fn helm_release_of(hr: &Value, hr_namespace: &str) -> (String, String) {
    let (storage_ns, name) = liveproof_evidence::helmrelease_release(hr, hr_namespace);
    (name, storage_ns)
}

/// How a raw read ended.
enum RawRead {
    Got(Vec<Value>),
    /// The object does not exist (404 on the object).
    Absent,
    /// The API server does not serve the resource type (404 on the type: the CRD is not
    /// installed).
    NotInstalled,
    Denied(String),
}

impl Cluster {
    /// Reads every object the non-workload `targets` lead to into `observed`.
    pub(crate) async fn read_sources(
        &self,
        targets: &[Target],
        observed: &mut Observed,
    ) -> Result<(), GatherError> {
        let mut done: BTreeSet<SourceRead> = BTreeSet::new();
        for _ in 0..MAX_ROUNDS {
            let reads: BTreeSet<SourceRead> = targets
                .iter()
                .flat_map(|t| source_reads(t, &self.default_ns, observed))
                .filter(|r| !done.contains(r))
                .collect();
            if reads.is_empty() {
                break;
            }
            let results = join_all(reads.iter().map(|r| self.read_source(r))).await;
            for (read, result) in reads.iter().zip(results) {
                record(observed, read, result?, &self.endpoint.server);
            }
            done.extend(reads);
        }
        Ok(())
    }

    async fn read_source(&self, read: &SourceRead) -> Result<RawRead, GatherError> {
        let what = read.to_string();
        let ar = api_resource(read.resource());
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), read.namespace(), &ar);
        let result = match read {
            SourceRead::Object { resource, name, .. } => api
                .get(name)
                .await
                .map(|o| RawRead::Got(vec![raw_value(*resource, o)])),
            SourceRead::Storage {
                resource, release, ..
            } => {
                let lp = ListParams::default().labels(&storage_selector(release));
                let listed = super::pager::list_pages(
                    &lp,
                    self.request_timeout(),
                    |page: ListParams| {
                        let api = api.clone();
                        async move { api.list(&page).await }
                    },
                    |o| Some(raw_value(*resource, o)),
                )
                .await;
                match listed {
                    Ok(objects) => Ok(RawRead::Got(objects)),
                    Err(super::pager::PageError::Api(e)) => Err(e),
                    Err(super::pager::PageError::Endless(why)) => {
                        return Err(self.incomplete(&what, why))
                    }
                }
            }
        };
        match result {
            Ok(read) => Ok(read),
            Err(kube::Error::Api(status)) if status.code == 404 => {
                // An object's 404 names it; a path the server does not serve does not. A 404
                // that names nothing is only "not installed" when discovery agrees: a proxy, a
                // gateway or a wrong server path answers 404 too, and reading that as "the
                // HelmRelease does not exist" would fail a live release (and trigger rollbacks).
                let names_object = status.details.as_ref().is_some_and(|d| !d.name.is_empty());
                match read {
                    SourceRead::Object { .. } if names_object => Ok(RawRead::Absent),
                    _ if !self.serves(read.resource()).await? => Ok(RawRead::NotInstalled),
                    _ => Err(GatherError::UnexplainedNotFound {
                        server: self.endpoint.server.clone(),
                        what,
                        message: status.message.clone(),
                    }),
                }
            }
            Err(err) => match self.denied_or_error::<std::convert::Infallible>(&what, err)? {
                super::Read::Got(never) => match never {},
                super::Read::Denied(message) => Ok(RawRead::Denied(message)),
            },
        }
    }
}

impl Cluster {
    /// Whether the API server serves `resource`, by discovery of its group version (one GET,
    /// asked only after a 404 that named no object). `false` only when discovery says so.
    async fn serves(&self, resource: ResourceKind) -> Result<bool, GatherError> {
        let ar = api_resource(resource);
        let found = if ar.group.is_empty() {
            self.client.list_core_api_resources(&ar.version).await
        } else {
            self.client.list_api_group_resources(&ar.api_version).await
        };
        match found {
            Ok(list) => Ok(list.resources.iter().any(|r| r.name == ar.plural)),
            // The group version itself is not served: its CRDs are not installed.
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
            Err(err) => Err(self.kube_error(&format!("the discovery of {}", ar.api_version), err)),
        }
    }
}

fn record(
    observed: &mut Observed,
    read: &SourceRead,
    result: RawRead,
    server: &liveproof_redacted::DisplaySafeUrl,
) {
    let ns = read.namespace();
    let resource = read.resource();
    match result {
        RawRead::Got(values) => {
            observed.others.extend(values);
            if matches!(read, SourceRead::Storage { .. }) {
                observed.mark_complete(ns, resource);
            }
        }
        RawRead::Absent => observed.mark_complete(ns, resource),
        RawRead::NotInstalled => {
            tracing::warn!(
                "the API server at {server} does not serve {} ({}): is the CRD installed? \
                 reading {read}: treated as absent",
                resource.plural(),
                resource.api_version()
            );
            observed.mark_complete(ns, resource);
        }
        RawRead::Denied(message) => observed.denied.push(Denied {
            namespace: Some(ns.to_string()),
            resource,
            verb: read.verb().to_string(),
            message,
        }),
    }
}

/// The workloads the non-workload `targets` lead to in `observed` (namespaces filled in),
/// without duplicates, in first-seen order: [`liveproof_evidence::workloads_to_read`], so
/// gathering reads exactly what judging will verify or compare.
pub(crate) fn followed(observed: &Observed, targets: &[Target], default_ns: &str) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for target in targets.iter().filter(|t| !t.kind.is_workload()) {
        for workload in liveproof_evidence::workloads_to_read(observed, target, default_ns) {
            if workload.kind.is_workload() && seen.insert(workload.clone()) {
                out.push(workload);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helm_release_is_named_and_stored_as_helm_controller_does() {
        let hr = json!({"metadata": {"name": "inventory", "namespace": "flux"}, "spec": {}});
        assert_eq!(
            helm_release_of(&hr, "flux"),
            ("inventory".into(), "flux".into())
        );

        let hr = json!({"metadata": {"name": "inventory"}, "spec": {"targetNamespace": "apps"}});
        assert_eq!(
            helm_release_of(&hr, "flux"),
            ("apps-inventory".into(), "flux".into()),
            "stored in the HelmRelease's namespace, not the target namespace"
        );

        let hr = json!({"metadata": {"name": "inventory"},
            "spec": {"targetNamespace": "apps", "releaseName": "inv", "storageNamespace": "store"}});
        assert_eq!(helm_release_of(&hr, "flux"), ("inv".into(), "store".into()));

        // What was installed wins over what the spec says now.
        let hr = json!({"metadata": {"name": "inventory"},
        "spec": {"releaseName": "renamed"},
        "status": {"storageNamespace": "old-store", "history": [
            {"name": "old", "namespace": "apps", "version": 3},
            {"name": "inv", "namespace": "apps", "version": 4}
        ]}});
        assert_eq!(
            helm_release_of(&hr, "flux"),
            ("inv".into(), "old-store".into())
        );

        let long = "a-helm-release-whose-name-is-far-longer-than-fifty-three-chars";
        let hr = json!({"metadata": {"name": long}, "spec": {}});
        let (name, _) = helm_release_of(&hr, "flux");
        assert_eq!(name.len(), 53);
    }

    #[test]
    fn a_helmrelease_leads_to_its_git_repository_and_storage_once_read() {
        let target = Target::new(TargetKind::HelmRelease, None, "inventory");
        let mut observed = Observed::default();
        assert_eq!(
            source_reads(&target, "flux", &observed),
            [object(ResourceKind::HelmRelease, "flux", "inventory")]
        );
        observed.others.push(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "inventory", "namespace": "flux"},
            "spec": {"chart": {"spec": {"chart": "./charts/inventory",
                "sourceRef": {"kind": "GitRepository", "name": "platform"}}}}
        }));
        let reads = source_reads(&target, "flux", &observed);
        assert!(reads.contains(&object(ResourceKind::GitRepository, "flux", "platform")));
        assert!(reads.contains(&SourceRead::Storage {
            resource: ResourceKind::Secret,
            namespace: "flux".into(),
            release: "inventory".into()
        }));
        assert_eq!(reads.len(), 4, "{reads:?}");
    }

    #[test]
    fn every_source_kind_is_read() {
        for spec in liveproof_evidence::KINDS {
            let target = Target::new(spec.kind, None, "inventory");
            let reads = source_reads(&target, "flux", &Observed::default());
            assert_eq!(
                reads.is_empty(),
                spec.workload.is_some(),
                "{}: {reads:?}",
                spec.kind_name
            );
        }
    }

    #[test]
    fn only_git_repositories_are_followed() {
        let oci = json!({"kind": "OCIRepository", "name": "x"});
        assert_eq!(git_repository(Some(&oci), "flux"), None);
        let git = json!({"kind": "GitRepository", "name": "x", "namespace": "src"});
        assert_eq!(
            git_repository(Some(&git), "flux"),
            Some(object(ResourceKind::GitRepository, "src", "x"))
        );
    }
}
