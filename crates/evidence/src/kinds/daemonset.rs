//! A DaemonSet: its current revision is its newest ControllerRevision, provided that stores
//! its current template; its pods carry it in `controller-revision-hash`.

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::workload::{Progress, WorkloadStatus, WorkloadType};
use crate::kinds::workload::{
    old_pods_stay, template_ignoring, written, CurrentRevision, Revision, UpdateStrategy, Workload,
    CONTROLLER_REVISION_HASH,
};
use crate::{Observed, ResourceKind, TargetKind};

impl WorkloadType for DaemonSet {
    const KIND: TargetKind = TargetKind::DaemonSet;

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
        let on_delete = spec
            .update_strategy
            .as_ref()
            .and_then(|u| u.type_.as_deref())
            == Some("OnDelete");
        Some(Workload {
            kind: Self::KIND,
            namespace,
            name,
            meta: &self.metadata,
            template: &spec.template,
            selector: &spec.selector,
            generation: self.metadata.generation,
            observed_generation: self.status.as_ref().and_then(|s| s.observed_generation),
            desired: self.status.as_ref().map(|s| s.desired_number_scheduled),
            update_strategy: if on_delete {
                UpdateStrategy::OnDelete
            } else {
                UpdateStrategy::Rolling
            },
            status: self,
        })
    }
}

impl WorkloadStatus for DaemonSet {
    /// The newest ControllerRevision the DaemonSet owns, provided it carries the current
    /// template.
    fn current_revision(&self, w: &Workload, observed: &Observed) -> Revision {
        let owned: Vec<&ControllerRevision> = w.owned_controller_revisions(observed);
        if owned.is_empty() {
            if let Some(missing) =
                w.revision_input_missing(observed, ResourceKind::ControllerRevision)
            {
                return missing;
            }
            return Revision::NotCreated(w.not_created_reason("it owns no ControllerRevision"));
        }
        let Some(newest) = owned.iter().max_by_key(|cr| cr.revision) else {
            return Revision::Unknown("no ControllerRevision".into(), None);
        };
        let cr_name = newest.metadata.name.clone().unwrap_or_default();
        if w.generation_caught_up() == Some(false) {
            return Revision::NotCreated(w.not_created_reason(&format!(
                "the newest ControllerRevision {cr_name} may describe the previous spec"
            )));
        }
        // The revision stores the template as a replace-patch; compare it when present.
        if let Some(stored) = newest
            .data
            .as_ref()
            .and_then(|d| d.0.pointer("/spec/template"))
        {
            let mut stored = stored.clone();
            if let Some(obj) = stored.as_object_mut() {
                obj.remove("$patch");
            }
            // Read it through the same type as the DaemonSet's template, so what the type
            // drops (`creationTimestamp: null` before 1.33, unknown fields) drops on both sides.
            let stored = serde_json::from_value::<PodTemplateSpec>(stored).ok();
            if stored.is_none_or(|stored| {
                template_ignoring(&stored, CONTROLLER_REVISION_HASH)
                    != template_ignoring(w.template, CONTROLLER_REVISION_HASH)
            }) {
                return Revision::NotCreated(format!(
                    "the newest ControllerRevision {cr_name} does not carry the current pod template"
                ));
            }
        }
        let hash = newest
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
            .cloned()
            .or_else(|| {
                cr_name
                    .strip_prefix(&format!("{}-", w.name))
                    .map(str::to_string)
            });
        let Some(hash) = hash else {
            return Revision::Unknown(
                format!("ControllerRevision {cr_name} has no {CONTROLLER_REVISION_HASH} label"),
                None,
            );
        };
        Revision::Current(CurrentRevision {
            label: CONTROLLER_REVISION_HASH,
            hash,
            describe: format!(
                "ControllerRevision {cr_name} (revision {})",
                newest.revision
            ),
            status_stale: None,
            written: written(
                ResourceKind::ControllerRevision,
                &newest.metadata,
                w.namespace,
            ),
        })
    }

    fn progress(&self, w: &Workload) -> Progress {
        let st = self.status.clone().unwrap_or_default();
        let desired = st.desired_number_scheduled;
        let updated = st.updated_number_scheduled.unwrap_or(0);
        let available = st.number_available.unwrap_or(0);
        Progress {
            counts: format!("{updated}/{desired} updated, {available} available"),
            complete: updated == desired && available == desired,
            stuck: old_pods_stay(w, updated < desired),
        }
    }
}
