//! A Helm release (`release/`), read from its storage: its own evidence is the release's
//! history, and it leads to the workloads of its newest revision's manifest.

use super::answers::{Accepts, ExpectOn, Lister, ReadRequest, Restore, HELM_STORAGE};
use super::rules::{namespace, KindRules};
use crate::checks::finding::Finding;
use crate::checks::raw::str_at;
use crate::checks::release::{self, ReleaseHistory};
use crate::checks::superseded;
use crate::diagnostic::Diagnostic;
use crate::{
    Change, Observed, ResourceKind, SupersededBy, Target, TargetKind, TargetReport, TimelineEntry,
};

pub(crate) struct Rules;

impl KindRules for Rules {
    /// Its storage: every Secret and ConfigMap Helm keeps its revisions in.
    fn reads(&self, _observed: &Observed, target: &Target, ns: &str) -> Vec<ReadRequest> {
        vec![ReadRequest::helm_storage(ns, &target.name)]
    }

    fn leads_through(&self) -> &'static [ResourceKind] {
        &HELM_STORAGE
    }

    fn lister(&self) -> Lister {
        Lister::Helm
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            chart_version: true,
            expect: ExpectOn::Manifest,
        }
    }

    fn restore(&self) -> Restore {
        Restore::HelmRevision
    }

    /// Its newest revision, when Helm did not record it deployed.
    fn diagnose(
        &self,
        observed: &Observed,
        target: &Target,
        namespace: &str,
        _since: Option<jiff::Timestamp>,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let history = crate::ReleaseHistory::read(observed, namespace, &target.name);
        if let Some(r) = history.revisions.last() {
            let status = r.release.info.status.as_str();
            if status != "deployed" {
                out.push(Diagnostic::new(
                    "release",
                    r.object.to_string(),
                    status,
                    &r.release.info.description,
                ));
            }
        }
        out
    }
    fn leads_to(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<Target> {
        release::followed(&ReleaseHistory::read(observed, ns, &target.name))
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        let history = ReleaseHistory::read(observed, ns, &target.name);
        release::findings(observed, change, &history, target.kind.actor()).0
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<TimelineEntry> {
        release::deployed(&ReleaseHistory::read(observed, ns, &target.name))
            .into_iter()
            .collect()
    }

    fn helm_release(&self, _observed: &Observed, ns: &str, name: &str) -> Option<(String, String)> {
        Some((ns.to_string(), name.to_string()))
    }

    /// Either of Helm's storage drivers.
    fn stored_in(&self, _kind: TargetKind) -> Vec<ResourceKind> {
        vec![ResourceKind::Secret, ResourceKind::ConfigMap]
    }

    /// Its storage: `owner=helm`, `name=NAME`.
    fn namespaces_holding(
        &self,
        observed: &Observed,
        _kind: TargetKind,
        name: &str,
    ) -> Vec<String> {
        observed
            .others_of(ResourceKind::Secret)
            .chain(observed.others_of(ResourceKind::ConfigMap))
            .filter(|o| {
                str_at(o, "/metadata/labels/owner") == Some("helm")
                    && str_at(o, "/metadata/labels/name") == Some(name)
                    && liveproof_helm::is_release_storage(o)
            })
            .map(|o| namespace(str_at(o, "/metadata/namespace")))
            .collect()
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
}
