//! What a kind's own evidence is, one implementation per kind (the workload kinds share one):
//! the judge, `--wait` and the timeline ask a target's kind through [`rules`](super::rules),
//! never by a match on it.

use super::answers::{Accepts, ExpectOn, Lister, ReadRequest, Restore};
use crate::checks::finding::Finding;
use crate::checks::raw::str_at;
use crate::checks::superseded::applied::{Applied, Followed};
use crate::diagnostic::Diagnostic;
use crate::{
    Change, Observed, ResourceKind, SupersededBy, Target, TargetKind, TargetReport, TimelineEntry,
};

/// A kind's evidence rules. Workload kinds are judged by their pods (`workload_findings`);
/// the rest by their own object or storage, then the workloads they lead to.
pub(crate) trait KindRules: Sync {
    /// What the gather reads for `target` in `ns`, given what it read so far (`observed`): its
    /// own object or storage first, then what that references once it is there. Described,
    /// not done: the gather executes them, each once however many targets ask for it.
    fn reads(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<ReadRequest>;

    /// The resources whose objects decide which workloads it leads to (its own, what it
    /// follows to them): a `--wait` reads its workloads again when one of these changes.
    fn leads_through(&self) -> &'static [ResourceKind] {
        &[]
    }

    /// How its names are listed in the hint of a target that is not found.
    fn lister(&self) -> Lister {
        Lister::Kubectl
    }

    /// The change flags it can be held to (`--chart-version`, `--expect`).
    fn accepts(&self) -> Accepts;

    /// What `rollback` puts back when it failed.
    fn restore(&self) -> Restore {
        Restore::Nothing
    }

    /// The workloads it leads to, in the order its object lists them (the caller sorts).
    fn leads_to(&self, _observed: &Observed, _target: &Target, _ns: &str) -> Vec<Target> {
        Vec::new()
    }

    /// Workloads its own evidence compares with, beyond those it leads to (a Canary's target).
    fn compares_with(&self, _observed: &Observed, _target: &Target, _ns: &str) -> Vec<Target> {
        Vec::new()
    }

    /// Its own evidence (a workload: none here, its checks are `workload_findings`).
    fn findings(
        &self,
        _observed: &Observed,
        _change: &Change,
        _target: &Target,
        _ns: &str,
    ) -> Vec<Finding> {
        Vec::new()
    }

    /// The change the workloads it leads to are held to (`change` already without
    /// `--expect`'s manifest).
    fn followed_change(
        &self,
        _observed: &Observed,
        change: Change,
        _target: &Target,
        _ns: &str,
    ) -> Change {
        change
    }

    /// What it dates of its own: a release deployed, a GitOps apply, a promotion.
    fn dated(&self, _observed: &Observed, _target: &Target, _ns: &str) -> Vec<TimelineEntry> {
        Vec::new()
    }

    /// A failure of its own that waiting will not fix (`--wait` stops on it).
    fn gave_up(
        &self,
        _observed: &Observed,
        _change: &Change,
        _target: &Target,
        _ns: &str,
    ) -> Option<String> {
        None
    }

    /// The Helm release it installs, `(storage namespace, release name)`, for a target named
    /// `name` in `ns`.
    fn helm_release(
        &self,
        _observed: &Observed,
        _ns: &str,
        _name: &str,
    ) -> Option<(String, String)> {
        None
    }

    /// The later change that replaced the stated one in it (and so in the workloads it leads
    /// to), if its history shows one: `own` is its own evidence, `workloads` the reports of the
    /// workloads it leads to, already judged.
    fn superseded_owner(
        &self,
        _observed: &Observed,
        _change: &Change,
        _target: &Target,
        _ns: &str,
        _own: &[Finding],
        _workloads: &[TargetReport],
    ) -> Option<SupersededBy> {
        None
    }

    /// What replaced the stated change in `workload`, a workload it (`owner`) leads to, not
    /// live: its later revision, or undecided.
    fn superseded_followed(
        &self,
        _observed: &Observed,
        _change: &Change,
        _owner: &Target,
        _ns: &str,
        _workload: &TargetReport,
    ) -> Option<Followed> {
        None
    }

    /// What a GitOps target applied, as its status says, and where its manifests are.
    fn gitops_applied<'a>(
        &self,
        _observed: &'a Observed,
        _target: &Target,
        _ns: &str,
    ) -> Option<Applied<'a>> {
        None
    }

    /// What its controller or Helm recorded about it, when it is not live (`diagnose`): the
    /// workloads' reasons are their pods' and events.
    fn diagnose(
        &self,
        _observed: &Observed,
        _target: &Target,
        _ns: &str,
        _since: Option<jiff::Timestamp>,
    ) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// The resources a target of `kind` is stored in: read in full and holding none of that
    /// name, it is absent.
    fn stored_in(&self, kind: TargetKind) -> Vec<ResourceKind> {
        vec![kind.resource()]
    }

    /// The namespaces where `observed` holds a target of `kind` named `name`, unsorted: a
    /// Helm or GitOps object, kept raw: its kind's resource, by name.
    fn namespaces_holding(&self, observed: &Observed, kind: TargetKind, name: &str) -> Vec<String> {
        observed
            .others_of(kind.resource())
            .filter(|o| str_at(o, "/metadata/name") == Some(name))
            .map(|o| namespace(str_at(o, "/metadata/namespace")))
            .collect()
    }

    /// The chart it deploys, as a path in its source repository (what `--commit` did to it is
    /// read from `--repo`), for a target named `name` in `ns`.
    fn chart_path(&self, _observed: &Observed, _ns: &str, _name: &str) -> Option<String> {
        None
    }
}

/// An object's namespace; one that names none counts as in `default`, as kubectl applies it.
pub(crate) fn namespace(ns: Option<&str>) -> String {
    ns.unwrap_or("default").to_string()
}

/// The workload kinds: judged by their pods, leading nowhere.
pub(crate) struct WorkloadRules;

impl KindRules for WorkloadRules {
    /// None here: the workload plan reads workloads (by name, or a LIST per namespace).
    fn reads(&self, _observed: &Observed, _target: &Target, _ns: &str) -> Vec<ReadRequest> {
        Vec::new()
    }

    fn accepts(&self) -> Accepts {
        Accepts {
            chart_version: false,
            expect: ExpectOn::Template,
        }
    }

    fn restore(&self) -> Restore {
        Restore::PodTemplate
    }

    fn namespaces_holding(&self, observed: &Observed, kind: TargetKind, name: &str) -> Vec<String> {
        kind.spec()
            .workload
            .map(|fns| (fns.namespaces)(observed, name))
            .unwrap_or_default()
    }
}
