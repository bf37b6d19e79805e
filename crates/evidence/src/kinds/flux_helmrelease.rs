//! A Flux HelmRelease (`helmrelease/`): its own status and the Helm release it installs, then
//! the workloads of that release's newest revision.

use super::rules::KindRules;
use crate::checks::finding::Finding;
use crate::checks::gitops::{self, helmrelease_release};
use crate::checks::gitops_final;
use crate::checks::release::{self, ReleaseHistory};
use crate::checks::superseded;
use crate::{
    Change, Moment, Observed, ResourceKind, SupersededBy, Target, TargetReport, TimelineEntry,
};

pub(crate) struct Rules;

const RESOURCE: ResourceKind = ResourceKind::HelmRelease;

impl KindRules for Rules {
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
        let Some(hr) = observed.find_other(RESOURCE, ns, &target.name) else {
            return Vec::new();
        };
        let (storage_ns, name) = helmrelease_release(hr, ns);
        release::followed(&ReleaseHistory::read(observed, &storage_ns, &name))
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        gitops::own_object(observed, RESOURCE, ns, &target.name, |hr| {
            gitops::helmrelease(observed, change, hr, ns)
        })
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<TimelineEntry> {
        let Some(hr) = observed.find_other(RESOURCE, ns, &target.name) else {
            return Vec::new();
        };
        let (storage_ns, name) = helmrelease_release(hr, ns);
        let mut out: Vec<TimelineEntry> =
            release::deployed(&ReleaseHistory::read(observed, &storage_ns, &name))
                .into_iter()
                .collect();
        out.extend(gitops::dated_ready(hr, RESOURCE, ns, Moment::GitopsApplied));
        out
    }

    fn gave_up(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Option<String> {
        let hr = observed.find_other(RESOURCE, ns, &target.name)?;
        gitops_final::helmrelease(observed, change, hr, ns)
    }

    fn helm_release(&self, observed: &Observed, ns: &str, name: &str) -> Option<(String, String)> {
        let hr = observed.find_other(RESOURCE, ns, name)?;
        Some(helmrelease_release(hr, ns))
    }

    fn superseded_owner(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
        _own: &[Finding],
        _workloads: &[TargetReport],
    ) -> Option<SupersededBy> {
        superseded::helm::superseded(observed, change, target, ns)
    }

    /// `spec.chart.spec.chart`.
    fn chart_path(&self, observed: &Observed, ns: &str, name: &str) -> Option<String> {
        let hr = observed.find_other(RESOURCE, ns, name)?;
        crate::checks::raw::str_at(hr, "/spec/chart/spec/chart").map(str::to_string)
    }
}
