//! A Flux Kustomization (`kustomization/`): its own status and source, then the workloads of
//! its inventory.

use super::answers::{Accepts, ExpectOn, ReadRequest, GITOPS_STORES_NO_MANIFEST};
use super::rules::KindRules;
use crate::checks::finding::Finding;
use crate::checks::gitops;
use crate::checks::gitops_final;
use crate::checks::raw::str_at;
use crate::checks::superseded::applied::{Applied, Followed};
use crate::checks::superseded::gitops as superseded;
use crate::{
    Change, Moment, Observed, ResourceKind, SupersededBy, Target, TargetReport, TimelineEntry,
};

pub(crate) struct Rules;

const RESOURCE: ResourceKind = ResourceKind::Kustomization;

impl KindRules for Rules {
    /// The Kustomization, then its GitRepository (when its source is one).
    fn reads(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<ReadRequest> {
        let mut reads = vec![ReadRequest::object(RESOURCE, ns, &target.name)];
        if let Some(ks) = observed.find_other(RESOURCE, ns, &target.name) {
            reads.extend(ReadRequest::git_repository(
                ks.pointer("/spec/sourceRef"),
                ns,
            ));
        }
        reads
    }

    fn leads_through(&self) -> &'static [ResourceKind] {
        &[RESOURCE]
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            chart_version: false,
            expect: ExpectOn::Refused(GITOPS_STORES_NO_MANIFEST),
        }
    }

    fn diagnose(
        &self,
        observed: &Observed,
        target: &Target,
        ns: &str,
        since: Option<jiff::Timestamp>,
    ) -> Vec<crate::diagnostic::Diagnostic> {
        crate::diagnose::controller(observed, RESOURCE, target, ns, since)
    }
    fn leads_to(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<Target> {
        observed
            .find_other(RESOURCE, ns, &target.name)
            .and_then(|k| k.pointer("/status/inventory/entries")?.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|e| gitops::inventory_workload(str_at(e, "/id")?))
            .collect()
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        gitops::own_object(observed, RESOURCE, ns, &target.name, |ks| {
            gitops::kustomization(observed, change, ks, ns)
        })
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<TimelineEntry> {
        observed
            .find_other(RESOURCE, ns, &target.name)
            .and_then(|ks| gitops::dated_ready(ks, RESOURCE, ns, Moment::GitopsApplied))
            .into_iter()
            .collect()
    }

    fn gave_up(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Option<String> {
        let ks = observed.find_other(RESOURCE, ns, &target.name)?;
        gitops_final::kustomization(observed, change, ks, ns)
    }

    fn superseded_owner(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
        own: &[Finding],
        workloads: &[TargetReport],
    ) -> Option<SupersededBy> {
        superseded::owner(observed, change, target, ns, own, workloads)
    }

    fn superseded_followed(
        &self,
        observed: &Observed,
        change: &Change,
        owner: &Target,
        ns: &str,
        workload: &TargetReport,
    ) -> Option<Followed> {
        superseded::followed(observed, change, owner, ns, workload)
    }

    fn gitops_applied<'a>(
        &self,
        observed: &'a Observed,
        target: &Target,
        ns: &str,
    ) -> Option<Applied<'a>> {
        superseded::kustomization_applied(observed, target, ns)
    }
}
