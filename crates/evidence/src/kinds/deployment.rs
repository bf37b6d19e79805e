//! A Deployment: its current revision is the ReplicaSet whose pod template equals its own.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::workload::{Progress, WorkloadStatus, WorkloadType};
use crate::kinds::workload::{
    same_template, template_ignoring, written, CurrentRevision, Revision, UpdateStrategy, Workload,
    POD_TEMPLATE_HASH,
};
use crate::replica_set::{PodTemplate, ReplicaSet};
use crate::suggestion::Suggestion;
use crate::{Observed, ResourceKind, TargetKind};

const DEPLOYMENT_REVISION: &str = "deployment.kubernetes.io/revision";

impl WorkloadType for Deployment {
    const KIND: TargetKind = TargetKind::Deployment;

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn template(&self) -> Option<&PodTemplateSpec> {
        self.spec.as_ref().map(|s| &s.template)
    }
    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        self.spec.as_mut().map(|s| &mut s.template)
    }
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.as_ref().map(|s| &s.selector)
    }

    fn view<'a>(&'a self, namespace: &'a str, name: &'a str) -> Option<Workload<'a>> {
        let spec = self.spec.as_ref()?;
        Some(Workload {
            kind: Self::KIND,
            namespace,
            name,
            meta: &self.metadata,
            template: &spec.template,
            selector: &spec.selector,
            generation: self.metadata.generation,
            observed_generation: self.status.as_ref().and_then(|s| s.observed_generation),
            desired: Some(spec.replicas.unwrap_or(1)),
            update_strategy: UpdateStrategy::Rolling,
            status: self,
        })
    }
}

impl WorkloadStatus for Deployment {
    /// The ReplicaSet whose pod template equals the Deployment's, ignoring the hash label —
    /// the controller's own test (`EqualIgnoreHash`).
    fn current_revision(&self, w: &Workload, observed: &Observed) -> Revision {
        replicaset_with_template(w, observed, POD_TEMPLATE_HASH, None)
    }

    fn progress(&self, w: &Workload) -> Progress {
        let s = self.status.clone().unwrap_or_default();
        let desired = w.desired.unwrap_or(1);
        let updated = s.updated_replicas.unwrap_or(0);
        let total = s.replicas.unwrap_or(0);
        let available = s.available_replicas.unwrap_or(0);
        Progress {
            counts: format!("{updated}/{desired} updated, {total} total, {available} available"),
            complete: updated == desired && total == desired && available == desired,
            stuck: self.gave_up().map(|failure| {
                (
                    failure,
                    Suggestion::text(
                        "the rollout gave up; see why the new pods are not available: ",
                    )
                    .command(w.kubectl(&["describe"], &[])),
                )
            }),
        }
    }

    fn gave_up(&self) -> Option<String> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .find(|c| {
                c.type_ == "Progressing" && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
            })
            .map(|c| {
                format!(
                    "ProgressDeadlineExceeded: {}",
                    c.message.as_deref().unwrap_or("ProgressDeadlineExceeded")
                )
            })
    }

    fn revision_name(&self) -> Option<String> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(DEPLOYMENT_REVISION))
            .cloned()
    }
}

/// The ReplicaSet `w` owns whose pod template is `w`'s, ignoring the hash `label` its
/// controller adds: the current revision of a workload whose revisions are ReplicaSets. Where
/// two match — templates that differ only in a value the API server would have filled in,
/// which a Rollout's controller hashes apart and the comparison does not — the one whose hash
/// is `prefer` (the controller's own current hash) is it.
pub(crate) fn replicaset_with_template(
    w: &Workload,
    observed: &Observed,
    label: &'static str,
    prefer: Option<&str>,
) -> Revision {
    let owned: Vec<&ReplicaSet> = w.owned_replicasets(observed);
    if owned.is_empty() {
        if let Some(missing) = w.revision_input_missing(observed, ResourceKind::ReplicaSet) {
            return missing;
        }
    }
    // Written as JSON only when a plain comparison cannot tell (see `same_template`).
    let want = std::cell::OnceCell::new();
    let carries = |t: &PodTemplateSpec| {
        same_template(w.template, t, label).unwrap_or_else(|| {
            template_ignoring(t, label)
                == *want.get_or_init(|| template_ignoring(w.template, label))
        })
    };
    // A template held that does not read back (never seen: it is what was decoded, written):
    // whether that ReplicaSet carries the template is not known, so neither is the revision.
    let mut unreadable = None;
    let mut matching: Vec<&ReplicaSet> = Vec::new();
    for &rs in &owned {
        match rs.template().map(PodTemplate::read) {
            Some(Ok(t)) if carries(&t) => matching.push(rs),
            Some(Err(e)) => {
                let name = rs.metadata.name.as_deref().unwrap_or_default();
                unreadable = Some(format!(
                    "the pod template of ReplicaSet {name} could not be read again: {e}"
                ));
            }
            _ => {}
        }
    }
    let hash_of = |rs: &ReplicaSet| {
        rs.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(label))
            .cloned()
    };
    let current = matching
        .iter()
        .find(|rs| prefer.is_some() && hash_of(rs).as_deref() == prefer)
        .or(matching.first());
    match (current, unreadable) {
        (Some(rs), _) => replicaset_revision(rs, label),
        (None, Some(why)) => Revision::Unknown(why, None),
        (None, None) => Revision::NotCreated(w.not_created_reason(&format!(
            "none of its {} ReplicaSet(s) carries the current pod template",
            owned.len()
        ))),
    }
}

/// A ReplicaSet as the current revision: its pods carry its `label` (the hash), and its
/// status counts only once its controller caught up with its spec.
pub(crate) fn replicaset_revision(rs: &ReplicaSet, label: &'static str) -> Revision {
    let rs_name = rs.metadata.name.clone().unwrap_or_default();
    let hash = rs
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(label))
        .cloned();
    let Some(hash) = hash else {
        return Revision::Unknown(format!("ReplicaSet {rs_name} has no {label} label"), None);
    };
    let revision = rs
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DEPLOYMENT_REVISION))
        .map(|r| format!(" (revision {r})"))
        .unwrap_or_default();
    // Status read before the ReplicaSet controller caught up describes the previous spec
    // (Shopify/krane#325).
    let rs_gen = rs.metadata.generation;
    let rs_observed = rs.status.as_ref().and_then(|s| s.observed_generation);
    let status_stale = match (rs_gen, rs_observed) {
        (Some(g), Some(o)) if o < g => Some(format!(
            "ReplicaSet {rs_name} status.observedGeneration {o} < generation {g}"
        )),
        _ => None,
    };
    Revision::Current(CurrentRevision {
        label,
        hash,
        describe: format!("ReplicaSet {rs_name}{revision}"),
        status_stale,
        written: written(ResourceKind::ReplicaSet, &rs.metadata, ""),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A ReplicaSet whose held template does not read back (never seen: what is held is what
    /// was decoded, written) leaves the current revision unknown, saying which, never "not
    /// created": that would turn a Deployment that serves its template into `not_live`.
    #[test]
    fn a_template_that_does_not_read_back_leaves_the_revision_unknown() {
        let mut observed = Observed::of_story("deployment-set-image-twice-superseded");
        let revision = |observed: &Observed| {
            let d = observed
                .workloads
                .of::<Deployment>()
                .iter()
                .find(|d| d.metadata.name.as_deref() == Some("inventory"))
                .expect("the Deployment");
            let w = d.view("apps", "inventory").expect("a view");
            d.current_revision(&w, observed)
        };
        match revision(&observed) {
            Revision::Current(c) => {
                assert_eq!(c.describe, "ReplicaSet inventory-6c8dq9zr2m (revision 36)")
            }
            _ => panic!("the story's current ReplicaSet is found"),
        }
        for rs in &mut observed.replicasets {
            Arc::make_mut(rs).spoil_template();
        }
        match revision(&observed) {
            Revision::Unknown(why, _) => assert!(
                why.starts_with("the pod template of ReplicaSet inventory-")
                    && why.contains("could not be read again"),
                "{why}"
            ),
            Revision::NotCreated(why) => panic!("not created: {why}"),
            Revision::Current(c) => panic!("current: {}", c.describe),
        }
    }
}
