//! Each workload kind in its own file: how its object reads as a [`Workload`], how its
//! controller records the current revision, and how far its rollout got. The kind's row of
//! [`KINDS`](crate::KINDS) names these through [`WorkloadFns`], so the checks, `-l`, the
//! snapshot and `--from` reach every workload kind through the table, never by a match.
//!
//! A new workload kind is a file here implementing [`WorkloadType`] and [`WorkloadStatus`],
//! its `KINDS` row with `workload: Some(fns::<Type>())`, and the list `Observed` holds it in.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde_json::Value;

use self::workload::{Revision, Workload};
use crate::suggestion::Suggestion;
use crate::{Observed, TargetKind};

pub(crate) mod answers;
pub mod argo_rollout;
pub(crate) mod argocd_application;
pub mod asked;
pub(crate) mod daemonset;
pub(crate) mod deployment;
pub(crate) mod flagger_canary;
pub(crate) mod flux_helmrelease;
pub(crate) mod flux_kustomization;
pub(crate) mod helm_release;
pub(crate) mod knative_service;
pub(crate) mod rules;
pub(crate) mod statefulset;
pub(crate) mod workload;

/// The rules `kind` is judged by: its own evidence, what it leads to, what `--wait` stops on.
pub(crate) fn rules(kind: TargetKind) -> &'static dyn rules::KindRules {
    match kind {
        TargetKind::Deployment
        | TargetKind::StatefulSet
        | TargetKind::DaemonSet
        | TargetKind::Rollout => &rules::WorkloadRules,
        TargetKind::Release => &helm_release::Rules,
        TargetKind::HelmRelease => &flux_helmrelease::Rules,
        TargetKind::Kustomization => &flux_kustomization::Rules,
        TargetKind::Application => &argocd_application::Rules,
        TargetKind::Canary => &flagger_canary::Rules,
        TargetKind::KnativeService => &knative_service::Rules,
    }
}

/// What the checks read of a workload object beyond its common view ([`Workload`]).
pub(crate) trait WorkloadStatus: Sync {
    /// The current revision and the label its pods carry, the way the kind's controller
    /// works it out.
    fn current_revision(&self, w: &Workload, observed: &Observed) -> Revision;

    /// How far the controller says the rollout got (`rollout_complete`).
    fn progress(&self, w: &Workload) -> Progress;

    /// When a progressive rollout was fully promoted, as its controller dates it: a target
    /// routed by revision is live only from then on.
    fn promoted(&self, _w: &Workload) -> Option<crate::TimelineEntry> {
        None
    }

    /// A failure the controller reports that waiting will not fix (`--wait` stops on it).
    fn gave_up(&self) -> Option<String> {
        None
    }

    /// The revision the kind names for its template, for `snapshot`: a Deployment's
    /// `deployment.kubernetes.io/revision`, a StatefulSet's update revision.
    fn revision_name(&self) -> Option<String> {
        None
    }

    /// The command that restarts its pods: `kubectl rollout restart KIND/NAME`, unless its
    /// controller has its own.
    fn restart(&self, w: &Workload) -> crate::suggestion::Command {
        w.kubectl(&["rollout", "restart"], &[])
    }

    /// Which revisions the workload itself sends traffic to, when it decides that (an Argo
    /// Rollout's active selector or canary weights); `None`: every Ready pod serves. This is
    /// the controller's own word: it picks the pods the pod checks look at, and
    /// `traffic_current` holds it to what routes ([`named_services`](Self::named_services),
    /// [`traffic_split`](Self::traffic_split)).
    fn routed(&self) -> Option<Routed> {
        None
    }

    /// The Services the workload's own controller points at its revisions (an Argo Rollout's
    /// stable, canary, active and preview Services), each with the spec field naming it:
    /// `traffic_current` reads every one of them and its EndpointSlices, whatever its selector
    /// matches, and one it cannot read makes it `unknown`.
    fn named_services(&self) -> Vec<NamedService<'_>> {
        Vec::new()
    }

    /// The split the workload's controller set on a traffic router, every destination listed
    /// (an Argo canary's `status.canary.weights`): `traffic_current` holds the weights to add
    /// up to 100 and to give a share to the current revision alone.
    fn traffic_split(&self) -> Option<TrafficSplit> {
        None
    }
}

/// A Service a workload's controller points at one of its revisions.
pub(crate) struct NamedService<'a> {
    pub name: &'a str,
    /// The spec field naming it: `.spec.strategy.blueGreen.activeService`.
    pub field: &'static str,
    /// Whether traffic reaches its endpoints.
    pub share: Share,
}

/// Whether a named Service carries traffic. Most do (clients or a router reach them); a
/// ping-pong canary's Services are reached only through the traffic router, and the side the
/// router gives 0% carries none, whatever its selector still matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Share {
    /// Its endpoints get traffic: each must be a current pod.
    Routed,
    /// It gets none, and why (where that was read): its endpoints are shown, not held.
    Idle(String),
    /// Whether it gets any is not recorded, and why: an endpoint on an old pod is unknown.
    NotRecorded(String),
}

/// The weights a controller set on a traffic router, by destination.
pub(crate) struct TrafficSplit {
    /// The pod label carrying the revision each destination names.
    pub label: &'static str,
    pub destinations: Vec<Destination>,
    /// The status field it was read from: `.status.canary.weights`.
    pub source: &'static str,
}

/// One destination of a [`TrafficSplit`].
pub(crate) struct Destination {
    /// Where it is listed: `stable`, `canary`, `additional[0]`.
    pub role: String,
    /// Percent of the traffic.
    pub weight: i32,
    /// The revision it sends to (empty when not recorded).
    pub hash: String,
    /// The Service it sends through, when recorded.
    pub service: Option<String>,
}

impl TrafficSplit {
    /// Each revision's share, summed over the destinations naming it.
    pub fn by_revision(&self) -> std::collections::BTreeMap<String, i32> {
        let mut out = std::collections::BTreeMap::new();
        for d in self.destinations.iter().filter(|d| !d.hash.is_empty()) {
            *out.entry(d.hash.clone()).or_insert(0) += d.weight;
        }
        out
    }
}

/// The revisions a workload routes traffic to: by the pod label carrying the revision, each
/// hash with its share in percent (0: routed none), and the status field that says so.
pub(crate) struct Routed {
    pub label: &'static str,
    pub weights: std::collections::BTreeMap<String, i32>,
    pub source: &'static str,
}

impl Routed {
    /// Whether a pod with `hash` gets traffic.
    pub fn serves(&self, hash: Option<&str>) -> bool {
        hash.is_some_and(|h| self.weights.get(h).is_some_and(|w| *w > 0))
    }
}

/// A rollout's state as its controller reports it.
pub(crate) struct Progress {
    /// The counts, as evidence shows them: `3/3 updated, 3 total, 3 available`.
    pub counts: String,
    pub complete: bool,
    /// Why it will not complete on its own, and what would.
    pub stuck: Option<(String, Suggestion)>,
}

/// A workload kind's object type: where `Observed` keeps it and how it reads as a
/// [`Workload`].
pub(crate) trait WorkloadType:
    serde::de::DeserializeOwned + WorkloadStatus + 'static
{
    const KIND: TargetKind;

    fn held(observed: &Observed) -> &[Arc<Self>];
    fn held_mut(observed: &mut Observed) -> &mut Vec<Arc<Self>>;
    fn meta(&self) -> &ObjectMeta;
    fn template(&self) -> Option<&PodTemplateSpec>;
    /// The selector of its pods (what the gather lists its pods by).
    fn selector(&self) -> Option<&LabelSelector>;
    /// The common view, `None` without a spec.
    fn view<'a>(&'a self, namespace: &'a str, name: &'a str) -> Option<Workload<'a>>;
}

/// One workload object, of any workload kind, as the walks over all of them read it.
pub(crate) struct Listed<'a> {
    pub kind: TargetKind,
    pub meta: &'a ObjectMeta,
    pub template: Option<&'a PodTemplateSpec>,
    pub selector: Option<&'a LabelSelector>,
    pub status: &'a dyn WorkloadStatus,
}

/// The functions a workload kind's `KINDS` row carries (see [`fns`]).
#[derive(Clone, Copy)]
pub struct WorkloadFns {
    pub(crate) find: for<'a> fn(&'a Observed, &'a str, &'a str) -> Option<Workload<'a>>,
    pub(crate) list: for<'a> fn(&'a Observed) -> Vec<Listed<'a>>,
    pub(crate) add: fn(&mut Observed, Value) -> Result<(), JsonPathError>,
}

pub(crate) type JsonPathError = serde_path_to_error::Error<serde_json::Error>;

impl fmt::Debug for WorkloadFns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WorkloadFns")
    }
}

/// The row functions of workload type `T`.
pub(crate) const fn fns<T: WorkloadType>() -> WorkloadFns {
    WorkloadFns {
        find: find::<T>,
        list: list::<T>,
        add: add::<T>,
    }
}

fn find<'a, T: WorkloadType>(
    observed: &'a Observed,
    namespace: &'a str,
    name: &'a str,
) -> Option<Workload<'a>> {
    T::held(observed)
        .iter()
        .find(|o| {
            let m = o.meta();
            m.name.as_deref() == Some(name)
                && m.namespace.as_deref().unwrap_or(namespace) == namespace
        })
        .and_then(|o| o.view(namespace, name))
}

fn list<T: WorkloadType>(observed: &Observed) -> Vec<Listed<'_>> {
    T::held(observed)
        .iter()
        .map(|o| {
            let o: &T = o;
            Listed {
                kind: T::KIND,
                meta: o.meta(),
                template: o.template(),
                selector: o.selector(),
                status: o,
            }
        })
        .collect()
}

fn add<T: WorkloadType>(observed: &mut Observed, value: Value) -> Result<(), JsonPathError> {
    let object: T = serde_path_to_error::deserialize(value)?;
    T::held_mut(observed).push(Arc::new(object));
    Ok(())
}
