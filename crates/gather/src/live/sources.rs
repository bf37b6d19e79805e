//! The first phase for Helm and GitOps targets: the objects they are made of, read raw into
//! [`Observed::others`].
//!
//! What each kind reads is its rules' to say ([`kind::reads`], in the kind's file under
//! evidence's `kinds/`): a Helm release's storage, a HelmRelease or Kustomization and the
//! GitRepository it names, a Knative Service and its latest created Revision, … This file
//! executes those reads: an object by GET, Helm's storage by one LIST of Secrets and one of
//! ConfigMaps (Helm's two drivers) by `owner=helm,name=NAME`.
//!
//! What a read depends on is read in a later round, so each object is read once however many
//! targets lead to it. The workloads these objects name are then gathered like workload
//! targets (see [`followed`]).

use std::collections::BTreeSet;

use futures::future::join_all;
use kube::api::{Api, DynamicObject, ListParams};
use liveproof_evidence::kind::{self, ReadRequest, HELM_STORAGE};
use liveproof_evidence::{Denied, Observed, ResourceKind, Target};
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

impl SourceRead {
    /// What executing `request` reads: one GET, or one LIST per storage resource, in order.
    fn of(request: ReadRequest) -> Vec<SourceRead> {
        match request {
            ReadRequest::Object {
                resource,
                namespace,
                name,
            } => vec![SourceRead::Object {
                resource,
                namespace,
                name,
            }],
            ReadRequest::HelmStorage { namespace, release } => HELM_STORAGE
                .iter()
                .map(|&resource| SourceRead::Storage {
                    resource,
                    namespace: namespace.clone(),
                    release: release.clone(),
                })
                .collect(),
        }
    }
}

/// The reads `target` leads to, given what has been read so far (`observed`), as its kind's
/// rules describe them ([`kind::reads`]): the target's own object or storage first, then what
/// that object references once it is there. Empty for workload targets (read by the workload
/// plan, `plan::plan_lookups`).
pub(crate) fn source_reads(
    target: &Target,
    default_ns: &str,
    observed: &Observed,
) -> Vec<SourceRead> {
    kind::reads(observed, target, default_ns)
        .into_iter()
        .flat_map(SourceRead::of)
        .collect()
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
                    super::page::lister(&api),
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
    use liveproof_evidence::TargetKind;
    use serde_json::json;

    #[test]
    fn a_helmrelease_leads_to_its_git_repository_and_storage_once_read() {
        let target = Target::new(TargetKind::HelmRelease, None, "inventory");
        let mut observed = Observed::default();
        assert_eq!(
            source_reads(&target, "flux", &observed),
            [SourceRead::Object {
                resource: ResourceKind::HelmRelease,
                namespace: "flux".into(),
                name: "inventory".into()
            }]
        );
        observed.others.push(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "inventory", "namespace": "flux"},
            "spec": {"chart": {"spec": {"chart": "./charts/inventory",
                "sourceRef": {"kind": "GitRepository", "name": "platform"}}}}
        }));
        let reads = source_reads(&target, "flux", &observed);
        assert!(reads.contains(&SourceRead::Object {
            resource: ResourceKind::GitRepository,
            namespace: "flux".into(),
            name: "platform".into()
        }));
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
}
