//! A StatefulSet: its current revision is `status.updateRevision`, its pods carry it in
//! `controller-revision-hash`; `OnDelete` and a partition keep old pods by design.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::workload::{Progress, WorkloadStatus, WorkloadType};
use crate::kinds::workload::{
    old_pods_stay, written, CurrentRevision, Revision, UpdateStrategy, Workload,
    CONTROLLER_REVISION_HASH,
};
use crate::{Observed, ResourceKind, TargetKind};

impl WorkloadType for StatefulSet {
    const KIND: TargetKind = TargetKind::StatefulSet;

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
        let strategy = spec.update_strategy.as_ref();
        let update_strategy = match strategy.and_then(|u| u.type_.as_deref()) {
            Some("OnDelete") => UpdateStrategy::OnDelete,
            _ => match strategy
                .and_then(|u| u.rolling_update.as_ref())
                .and_then(|r| r.partition)
            {
                Some(p) if p > 0 => UpdateStrategy::Partitioned(p),
                _ => UpdateStrategy::Rolling,
            },
        };
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
            update_strategy,
            status: self,
        })
    }
}

impl WorkloadStatus for StatefulSet {
    fn current_revision(&self, w: &Workload, observed: &Observed) -> Revision {
        let status = self.status.as_ref();
        let Some(update_revision) = status.and_then(|s| s.update_revision.clone()) else {
            return Revision::Unknown(format!("{} has no status.updateRevision", w.source()), None);
        };
        if w.generation_caught_up() == Some(false) {
            return Revision::NotCreated(w.not_created_reason(&format!(
                "status.updateRevision {update_revision} describes the previous spec"
            )));
        }
        // When the revisions were listed, the one named must exist.
        if observed.is_complete(w.namespace, ResourceKind::ControllerRevision)
            && !observed.controller_revisions.iter().any(|cr| {
                cr.metadata.name.as_deref() == Some(update_revision.as_str())
                    && cr.metadata.namespace.as_deref().unwrap_or(w.namespace) == w.namespace
            })
        {
            return Revision::NotCreated(format!(
                "ControllerRevision {update_revision} named by status.updateRevision does not exist yet"
            ));
        }
        let written = observed
            .controller_revisions
            .iter()
            .find(|cr| {
                cr.metadata.name.as_deref() == Some(update_revision.as_str())
                    && cr.metadata.namespace.as_deref().unwrap_or(w.namespace) == w.namespace
            })
            .and_then(|cr| written(ResourceKind::ControllerRevision, &cr.metadata, w.namespace));
        Revision::Current(CurrentRevision {
            label: CONTROLLER_REVISION_HASH,
            describe: format!("revision {update_revision}"),
            hash: update_revision,
            status_stale: None,
            written,
        })
    }

    fn progress(&self, w: &Workload) -> Progress {
        let st = self.status.clone().unwrap_or_default();
        let desired = w.desired.unwrap_or(1);
        let updated = st.updated_replicas.unwrap_or(0);
        let ready = st.ready_replicas.unwrap_or(0);
        // The controller moves currentRevision to updateRevision only for RollingUpdate
        // (completeRollingUpdate): under OnDelete it stays on the first revision forever,
        // so there every replica updated and ready is the whole rollout.
        let same_revision = w.update_strategy == UpdateStrategy::OnDelete
            || (st.current_revision.is_some() && st.current_revision == st.update_revision);
        Progress {
            counts: format!(
                "{updated}/{desired} updated, {ready} ready, currentRevision {}, updateRevision {}",
                st.current_revision.as_deref().unwrap_or("?"),
                st.update_revision.as_deref().unwrap_or("?")
            ),
            complete: updated == desired && ready == desired && (same_revision || desired == 0),
            stuck: old_pods_stay(w, updated < desired),
        }
    }

    fn revision_name(&self) -> Option<String> {
        self.status
            .as_ref()
            .and_then(|st| st.update_revision.clone())
    }
}
