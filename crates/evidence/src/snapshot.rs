//! The pre-apply snapshot: what every workload and Helm release looked like before a deploy,
//! and what changed since. Pure: reading and writing the file is the CLI's job.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Observed, Target, TargetKind};

pub const SNAPSHOT_SCHEMA: &str = "liveproof/snapshot/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema: String,
    /// The commit the deploy is for; a verify or rollback for another commit is refused.
    pub commit: String,
    /// When it was taken: the change time for the verify that follows.
    pub taken_at: jiff::Timestamp,
    /// The namespaces it covers (`None` inside means all of them).
    pub scope: Scope,
    pub workloads: Vec<WorkloadState>,
    pub releases: Vec<ReleaseState>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Namespaces read; empty with `all_namespaces` for the whole cluster.
    pub namespaces: Vec<String>,
    pub all_namespaces: bool,
    /// When the snapshot was limited to given targets or manifests: exactly those.
    pub targets: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadState {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub generation: Option<i64>,
    /// sha256 of the pod template's canonical JSON: equal templates, equal hashes.
    pub template_hash: String,
    /// The full pod template, for rollback.
    pub template: Value,
    pub images: Vec<String>,
    /// `deployment.kubernetes.io/revision`, or a StatefulSet's/DaemonSet's update revision.
    pub revision: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseState {
    pub namespace: String,
    pub name: String,
    /// The newest revision number (from the storage object's `version` label).
    pub revision: i64,
    pub status: String,
}

impl WorkloadState {
    pub fn target(&self) -> Option<Target> {
        TargetKind::parse(&self.kind)
            .filter(|k| k.is_workload())
            .map(|k| Target::new(k, Some(&self.namespace), &self.name))
    }

    fn key(&self) -> (String, String, String) {
        (self.kind.clone(), self.namespace.clone(), self.name.clone())
    }
}

/// The state of every workload in `observed`.
pub fn workload_states(observed: &Observed) -> Vec<WorkloadState> {
    let mut out = Vec::new();
    let mut push = |kind: &str,
                    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
                    template: Value,
                    revision: Option<String>| {
        let images = template
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("image").and_then(Value::as_str).map(str::to_string))
            .collect();
        out.push(WorkloadState {
            kind: kind.to_string(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            generation: meta.generation,
            template_hash: template_hash(&template),
            template,
            images,
            revision,
        });
    };
    for w in observed.workload_objects() {
        let template = w
            .template
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .unwrap_or(Value::Null);
        push(
            w.kind.kind_name(),
            w.meta,
            template,
            w.status.revision_name(),
        );
    }
    out.sort_by_key(WorkloadState::key);
    out
}

/// sha256 of a template's JSON. The template comes from the typed object, whose field order is
/// fixed, so equal templates hash equal.
pub fn template_hash(template: &Value) -> String {
    use sha2::{Digest as _, Sha256};
    let bytes = serde_json::to_vec(template).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What changed between the snapshot and now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// Workloads whose generation or template differ, or that did not exist before.
    pub workloads: Vec<Target>,
    /// Releases whose newest revision moved (or that are new): `(namespace, name)`.
    pub releases: Vec<(String, String)>,
    /// Workloads in scope that did not change.
    pub untouched: Vec<Target>,
    /// Workloads in the snapshot that no longer exist.
    pub removed: Vec<Target>,
}

impl Snapshot {
    pub fn changes(
        &self,
        now_workloads: &[WorkloadState],
        now_releases: &[ReleaseState],
    ) -> Changes {
        let mut changes = Changes::default();
        for now in now_workloads {
            let Some(target) = now.target() else { continue };
            let before = self.workloads.iter().find(|b| b.key() == now.key());
            match before {
                Some(b)
                    if b.template_hash == now.template_hash && b.generation == now.generation =>
                {
                    changes.untouched.push(target);
                }
                _ => changes.workloads.push(target),
            }
        }
        for before in &self.workloads {
            if !now_workloads.iter().any(|n| n.key() == before.key()) {
                changes.removed.extend(before.target());
            }
        }
        for now in now_releases {
            let moved = self
                .releases
                .iter()
                .find(|b| b.namespace == now.namespace && b.name == now.name)
                .is_none_or(|b| b.revision != now.revision);
            if moved {
                changes
                    .releases
                    .push((now.namespace.clone(), now.name.clone()));
            }
        }
        changes
    }

    /// The snapshot's state of a workload, for rollback.
    pub fn workload(&self, target: &Target) -> Option<&WorkloadState> {
        self.workloads.iter().find(|w| {
            w.kind == target.kind.kind_name()
                && Some(w.namespace.as_str()) == target.namespace.as_deref()
                && w.name == target.name
        })
    }

    pub fn release(&self, namespace: &str, name: &str) -> Option<&ReleaseState> {
        self.releases
            .iter()
            .find(|r| r.namespace == namespace && r.name == name)
    }
}

/// Whether two commit spellings name the same commit: equal, or one a 7+ hex prefix of the other.
pub fn same_commit(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    let short = a.len().min(b.len());
    short >= 7 && (a.starts_with(&b) || b.starts_with(&a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_match_by_prefix_only_when_long_enough() {
        assert!(same_commit("3f2c1ab9d04e", "3f2c1ab"));
        assert!(same_commit("3F2C1AB", "3f2c1ab9d0"));
        assert!(!same_commit("3f2c1ab", "3f2c1ac"));
        assert!(!same_commit("3f2c", "3f2c1ab"));
    }
}
