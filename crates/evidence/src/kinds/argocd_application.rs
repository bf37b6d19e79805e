//! An Argo CD Application (`application/`): its own sync and health, then the workloads its
//! status lists.

use super::answers::{Accepts, ExpectOn, ReadRequest, GITOPS_STORES_NO_MANIFEST};
use serde_json::Value;

use super::rules::KindRules;
use crate::checks::finding::Finding;
use crate::checks::gitops;
use crate::checks::gitops_final;
use crate::checks::raw::{str_at, time_at};
use crate::checks::superseded::applied::{Applied, Followed};
use crate::checks::superseded::gitops as superseded;
use crate::{
    Change, Moment, Observed, ResourceKind, SupersededBy, Target, TargetKind, TargetReport,
    TimelineEntry,
};

pub(crate) struct Rules;

const RESOURCE: ResourceKind = ResourceKind::Application;

impl KindRules for Rules {
    /// The Application (Argo CD renders Helm itself: no Helm storage).
    fn reads(&self, _observed: &Observed, target: &Target, ns: &str) -> Vec<ReadRequest> {
        vec![ReadRequest::object(RESOURCE, ns, &target.name)]
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
        let Some(app) = observed.find_other(RESOURCE, ns, &target.name) else {
            return Vec::new();
        };
        let dest = str_at(app, "/spec/destination/namespace").unwrap_or(ns);
        app.pointer("/status/resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| {
                // Argo CD writes the group of a core kind as "" or leaves it out.
                let group = str_at(r, "/group").unwrap_or_default();
                let kind = TargetKind::workload_named(str_at(r, "/kind")?, Some(group))?;
                let ns = str_at(r, "/namespace")
                    .filter(|n| !n.is_empty())
                    .unwrap_or(dest);
                Some(Target::new(kind, Some(ns), str_at(r, "/name")?))
            })
            .collect()
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        gitops::own_object(observed, RESOURCE, ns, &target.name, |app| {
            gitops::application(observed, change, app, ns)
        })
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<TimelineEntry> {
        let Some(app) = observed.find_other(RESOURCE, ns, &target.name) else {
            return Vec::new();
        };
        let applied = time_at(app, "/status/operationState/finishedAt")
            .filter(|_| str_at(app, "/status/operationState/phase") == Some("Succeeded"));
        applied
            .map(|at| {
                gitops::dated_at(
                    app,
                    RESOURCE,
                    ns,
                    Moment::GitopsApplied,
                    at,
                    ".status.operationState.finishedAt",
                )
            })
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
        let app = observed.find_other(RESOURCE, ns, &target.name)?;
        gitops_final::application(observed, change, app, ns)
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
        superseded::application_applied(observed, target, ns)
    }
}
