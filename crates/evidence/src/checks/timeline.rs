//! When a target went live: the moments its evidence dates (its timeline) and, for a live
//! target, `live_since` — the earliest time the evidence shows it live. A target is live when
//! every pod it serves from is of the current revision, so it is live from the moment the last
//! of them became Ready (its Ready condition's `lastTransitionTime`), or, for a workload that
//! routes by revision, from its full promotion when that came later. A time that is not
//! recorded leaves `live_since` out and says why; it is never filled in.

use jiff::Timestamp;

use crate::pod::Pod;

use super::pods;
use crate::kinds::workload::{CurrentRevision, Workload};
use crate::order::{order, Order};
use crate::{
    Change, Moment, Observed, ResourceKind, SourceRef, TargetReport, TimelineEntry, Verdict,
};

/// The change time, with where it came from.
fn change_entry(change: &Change) -> Option<TimelineEntry> {
    let since = change.since?;
    Some(TimelineEntry {
        event: Moment::Change,
        at: since.to_string(),
        source: change
            .since_source
            .clone()
            .unwrap_or_else(|| "the change time".to_string()),
        source_ref: None,
        live_since: false,
    })
}

/// What a workload's evidence dates, worked out beside its checks (from the same revision and
/// pods): its timeline, and the moment it is live from should its verdict be live (or why that
/// moment cannot be told).
pub(crate) struct Dating {
    timeline: Vec<TimelineEntry>,
    live_from: Result<TimelineEntry, String>,
    /// Each revision's pods, to draw.
    lanes: crate::lanes::PodLanes,
}

impl Dating {
    /// Nothing but the change: a workload not found, or with no current revision.
    pub(crate) fn change_only(change: &Change) -> Dating {
        Dating {
            timeline: change_entry(change).into_iter().collect(),
            live_from: Err("its current revision is not known".into()),
            lanes: crate::lanes::PodLanes::default(),
        }
    }

    /// The workload's dating: the change, the current revision's creation, its first and last
    /// serving pods' Ready transitions, a promotion.
    pub(crate) fn of(
        w: &Workload,
        current: &CurrentRevision,
        pods: &[&Pod],
        change: &Change,
    ) -> Dating {
        let mut timeline: Vec<TimelineEntry> = change_entry(change).into_iter().collect();
        timeline.extend(current.written.as_deref().cloned());
        let ready_entry = |event, pod, at| {
            TimelineEntry::read(
                event,
                at,
                SourceRef::object(ResourceKind::Pod, w.namespace, pods::name(pod))
                    .field(".status.conditions[Ready].lastTransitionTime"),
            )
        };
        let mut first: Option<(Timestamp, &Pod)> = None;
        let mut last: Option<(Timestamp, &Pod)> = None;
        let mut dated = 0;
        let mut undated: Option<&str> = None;
        let serving = w
            .routed_pods(pods)
            .into_iter()
            .filter(|p| current.is_current(p) && pods::is_ready(p) && !pods::is_terminating(p));
        for pod in serving {
            let Some(at) = pods::ready_since(pod).flatten() else {
                undated.get_or_insert(pods::name(pod));
                continue;
            };
            dated += 1;
            if first.is_none_or(|(t, _)| at < t) {
                first = Some((at, pod));
            }
            if last.is_none_or(|(t, _)| at > t) {
                last = Some((at, pod));
            }
        }
        let last = last.map(|(at, pod)| ready_entry(Moment::LastPodReady, pod, at));
        if dated > 1 {
            timeline.extend(first.map(|(at, pod)| ready_entry(Moment::FirstPodReady, pod, at)));
        }
        timeline.extend(last.clone());
        let promoted = w.status.promoted(w);
        timeline.extend(promoted.clone());
        let live_from = match (undated, last) {
            (Some(pod), _) => Err(format!(
                "serving pod {pod} records no lastTransitionTime on its Ready condition, so when the last pod became Ready cannot be told"
            )),
            (None, None) => Err("no serving pod of the current revision is Ready".into()),
            // A promotion counts only when it is this change's: a `Completed` condition older
            // than the change describes an earlier rollout.
            (None, Some(last)) => Ok(promoted
                .filter(|p| {
                    let this_change = match (p.time(), change.since) {
                        (Some(at), Some(since)) => order(at, since) != Order::Before,
                        _ => false,
                    };
                    this_change && p.time() > last.time()
                })
                .unwrap_or(last)),
        };
        Dating {
            timeline,
            live_from,
            lanes: crate::lanes::collect(w, current, pods),
        }
    }

    /// Onto the workload's report: its timeline, and `live_since` when it is live.
    pub(crate) fn apply(self, report: &mut TargetReport, change: &Change) {
        report.timeline = self.timeline;
        report.pods = self.lanes;
        report.sort_timeline();
        if report.verdict != Verdict::Live {
            return;
        }
        match self.live_from {
            Ok(moment) => set_live_since(report, change, moment),
            Err(why) => report.live_since_unknown = Some(why),
        }
    }
}

/// Dates a Helm or GitOps target's report from its own dated moments and the workloads it led
/// to: it is live from when the last of them went live.
pub(crate) fn date_owner(
    observed: &Observed,
    change: &Change,
    report: &mut TargetReport,
    namespace: &str,
    target: &crate::Target,
    workloads: &[TargetReport],
) {
    report.timeline.extend(change_entry(change));
    report
        .timeline
        .extend(super::gitops::dated(observed, target, namespace));
    let moments = |event| {
        workloads
            .iter()
            .flat_map(|w| w.timeline.iter())
            .filter(move |e| e.event == event)
            .filter_map(|e| Some((e.time()?, e)))
    };
    let first = moments(Moment::FirstPodReady)
        .chain(moments(Moment::LastPodReady))
        .min_by_key(|(at, _)| *at)
        .map(|(_, e)| TimelineEntry {
            event: Moment::FirstPodReady,
            ..e.clone()
        });
    let last = moments(Moment::LastPodReady)
        .max_by_key(|(at, _)| *at)
        .map(|(_, e)| e.clone());
    if first.as_ref().map(|e| &e.at) != last.as_ref().map(|e| &e.at) {
        report.timeline.extend(first);
    }
    report.timeline.extend(last.map(|e| TimelineEntry {
        live_since: false,
        ..e
    }));
    report.sort_timeline();
    if report.verdict != Verdict::Live {
        return;
    }
    let mut latest: Option<(Timestamp, &TimelineEntry)> = None;
    for w in workloads {
        let moment = w.timeline.iter().find(|e| e.live_since);
        let Some((at, moment)) = moment.and_then(|e| Some((e.time()?, e))) else {
            report.live_since_unknown = Some(format!(
                "{} {}/{}: {}",
                w.kind,
                w.namespace,
                w.name,
                w.live_since_unknown
                    .as_deref()
                    .unwrap_or("its live_since is not known")
            ));
            return;
        };
        if latest.is_none_or(|(t, _)| at > t) {
            latest = Some((at, moment));
        }
    }
    // Pods Ready on the new revision serve nothing until the traffic is moved to them: a
    // promotion dated after the change and after the pods is when the target went live.
    let promoted = report
        .timeline
        .iter()
        .filter(|e| e.event == Moment::Promoted)
        .filter_map(|e| Some((e.time()?, e)))
        .filter(|(at, _)| {
            change
                .since
                .is_none_or(|since| order(*at, since) != Order::Before)
        })
        .max_by_key(|(at, _)| *at)
        .map(|(at, e)| (at, e.clone()));
    match latest {
        Some((at, moment)) => {
            let moment = match promoted {
                Some((promoted_at, promotion)) if promoted_at > at => promotion,
                _ => moment.clone(),
            };
            set_live_since(report, change, moment);
        }
        None => report.live_since_unknown = Some("it leads to no workload to date".into()),
    }
}

/// Sets `live_since` to `moment`, unless the cluster dates it before the change: a pod that
/// started after the change cannot have become Ready before it, so the two clocks disagree
/// and neither is taken.
fn set_live_since(report: &mut TargetReport, change: &Change, moment: TimelineEntry) {
    if let (Some(at), Some(since)) = (moment.time(), change.since) {
        if order(at, since) == Order::Before {
            report.live_since_unknown = Some(format!(
                "{} records {at}, before the change ({since}): the cluster's clock and the change time disagree",
                moment.source
            ));
            return;
        }
    }
    report.set_live_since(moment);
}

/// When `--wait` first saw each target live, in its latest unbroken run of live judgements
/// (a target that fell back is seen anew): sharper than what the cluster dates after the fact
/// when the cluster dates nothing. Pure: the caller says when each judgement was made.
#[derive(Debug, Default)]
pub struct SeenLive(std::collections::BTreeMap<String, Timestamp>);

impl SeenLive {
    /// `report` was judged at `now`.
    pub fn observe(&mut self, report: &crate::Report, now: Timestamp) {
        for t in &report.targets {
            if t.verdict == crate::Verdict::Live {
                self.0.entry(t.key()).or_insert(now);
            } else {
                self.0.remove(&t.key());
            }
        }
    }

    /// Each target seen live gets its `observed_live` moment; the lead time is worked out
    /// again with them.
    pub fn record(&self, report: &mut crate::Report) {
        for t in &mut report.targets {
            if let Some(at) = self.0.get(&t.key()) {
                t.observed_live(*at);
            }
        }
        report.date_lead_time();
    }
}
