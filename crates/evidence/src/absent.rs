//! Targets the cluster says do not exist. On a live cluster that is an input error (a typo, the
//! wrong namespace), never `not_live`, which a pipeline acts on; a `--from` dump lists nothing
//! in full, so there an absent object stays `unproven`.

use serde_json::Value;

use crate::{Observed, ResourceKind, Target, TargetKind};

/// A target looked for where its kind was read in full, and not there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    /// The target, with the namespace it was looked for in.
    pub target: Target,
    /// Where it was looked for; [`crate::ALL_NAMESPACES`] (`""`) for every namespace (`-A`).
    pub namespace: String,
    /// What was read there.
    pub resource: ResourceKind,
}

/// The resource a target of `kind` is read as: the object itself, or for `release/` the
/// storage Secrets of Helm's default driver.
pub fn resource_of(kind: TargetKind) -> ResourceKind {
    match kind {
        TargetKind::Deployment => ResourceKind::Deployment,
        TargetKind::StatefulSet => ResourceKind::StatefulSet,
        TargetKind::DaemonSet => ResourceKind::DaemonSet,
        TargetKind::Release => ResourceKind::Secret,
        TargetKind::HelmRelease => ResourceKind::HelmRelease,
        TargetKind::Kustomization => ResourceKind::Kustomization,
        TargetKind::Application => ResourceKind::Application,
    }
}

/// Of `targets` (namespaces resolved, see [`crate::resolve_targets`]), those `observed` proves
/// absent: their kind was read in full where they were looked for, nothing refused the read,
/// and no object of that name is there. A release is absent when neither of Helm's storage
/// drivers holds a revision of it.
pub fn absent_targets(observed: &Observed, targets: &[Target]) -> Vec<Absent> {
    targets
        .iter()
        .filter_map(|t| {
            let ns = t.namespace.as_deref().unwrap_or_default();
            let resource = resource_of(t.kind);
            let read_in_full =
                |r: ResourceKind| observed.is_complete(ns, r) && observed.denial(ns, r).is_none();
            let absent = match t.kind {
                kind if kind.is_workload() => {
                    read_in_full(resource) && !holds_workload(observed, kind, ns, &t.name)
                }
                TargetKind::Release => {
                    read_in_full(ResourceKind::Secret)
                        && read_in_full(ResourceKind::ConfigMap)
                        && !holds_release(observed, ns, &t.name)
                }
                _ => read_in_full(resource) && observed.find_other(resource, ns, &t.name).is_none(),
            };
            absent.then(|| Absent {
                target: t.clone(),
                namespace: ns.to_string(),
                resource,
            })
        })
        .collect()
}

/// Whether a workload of `kind` named `name` is in `namespace` (in any, for `-A`'s `""`).
fn holds_workload(observed: &Observed, kind: TargetKind, namespace: &str, name: &str) -> bool {
    observed.workloads().any(|(k, meta, _)| {
        k == kind
            && meta.name.as_deref() == Some(name)
            && (namespace == crate::ALL_NAMESPACES
                || meta.namespace.as_deref().unwrap_or(namespace) == namespace)
    })
}

fn holds_release(observed: &Observed, namespace: &str, name: &str) -> bool {
    let label = |o: &Value, key: &str| {
        o.pointer(&format!("/metadata/labels/{key}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    observed
        .others_of(ResourceKind::Secret)
        .chain(observed.others_of(ResourceKind::ConfigMap))
        .any(|o| {
            label(o, "owner").as_deref() == Some("helm")
                && label(o, "name").as_deref() == Some(name)
                && o.pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(namespace)
                    == namespace
        })
}
