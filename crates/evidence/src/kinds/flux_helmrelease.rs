//! A Flux HelmRelease (`helmrelease/`): its own status and the Helm release it installs, then
//! the workloads of that release's newest revision.

use super::answers::{Accepts, ExpectOn, ReadRequest, HELM_STORAGE};
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
    /// The HelmRelease, then its chart's GitRepository (when the chart comes from one) and the
    /// storage of the Helm release it manages.
    fn reads(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<ReadRequest> {
        let mut reads = vec![ReadRequest::object(RESOURCE, ns, &target.name)];
        if let Some(hr) = observed.find_other(RESOURCE, ns, &target.name) {
            reads.extend(ReadRequest::git_repository(
                hr.pointer("/spec/chart/spec/sourceRef"),
                ns,
            ));
            let (storage_ns, release) = helmrelease_release(hr, ns);
            reads.push(ReadRequest::helm_storage(&storage_ns, &release));
        }
        reads
    }

    fn leads_through(&self) -> &'static [ResourceKind] {
        const THROUGH: [ResourceKind; 3] = [RESOURCE, HELM_STORAGE[0], HELM_STORAGE[1]];
        &THROUGH
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            chart_version: true,
            expect: ExpectOn::Manifest,
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
