//! A Verification's `.status`, made from a verify report by a pure function: same report,
//! generation, time and previous status in, same status out.
//!
//! # Why these conditions: kstatus
//!
//! Flux's kustomize-controller (`healthChecks`, `wait: true`, and so `dependsOn`) and
//! cli-utils' applier (kpt) read a custom resource's health with kstatus (read from
//! `fluxcd/cli-utils` `pkg/kstatus/status`, commit 967855fb, `generic.go` and `status.go`);
//! `kubectl wait --for=condition=Ready` reads the Ready condition itself.
//! `Compute` decides, for a kind it has no rules of its own for, in this order:
//!
//! 1. `metadata.deletionTimestamp` set: Terminating.
//! 2. `checkGeneration`: `status.observedGeneration` present and not `metadata.generation`:
//!    InProgress (`LatestGenerationNotObserved`). Absent, the check is skipped.
//! 3. The first condition, in list order, that is `Reconciling=True` (InProgress) or
//!    `Stalled=True` (Failed).
//! 4. `checkReadyCondition`: `Ready=True` is Current; `Ready=False` or `Unknown` InProgress.
//! 5. Otherwise, no condition it knows: **Current**.
//!
//! So [`status_from`] holds to:
//! - `observedGeneration` is the generation of the spec that was judged, on the status and
//!   on each condition: a spec changed since is InProgress until it is judged (rule 2).
//! - While the change can still go live: `Reconciling=True`, `Stalled=False`, `Ready=False`:
//!   InProgress (rule 3), so a Flux health check keeps waiting.
//! - On a final failure (the `--wait` stop reason, the spec's `timeout` run out, superseded, an
//!   invalid spec): `Stalled=True`, `Reconciling=False`, `Ready=False`: Failed (rule 3), so
//!   Flux stops waiting and says why.
//! - Live: `Ready=True`, the others False: Current (rule 4).
//! - `Reconciling` and `Stalled` are never both True (rule 3 would pick by list order).
//!
//! Rule 5 would make a Verification no controller has judged yet Current — a `live` nobody
//! proved. The CRD's schema therefore defaults `.status` to `{observedGeneration: 0}` (see
//! [`VerificationStatus`]): generation 1 against 0 is InProgress by rule 2 until the controller
//! writes its first status.
//!
//! `lastTransitionTime` moves only when a condition's status does (metav1.Condition's rule):
//! a reason or message that changes keeps it.

use std::borrow::Cow;

use jiff::Timestamp;
use liveproof_evidence::hint::Hinted;
use liveproof_evidence::{Report, Status, TargetReport, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `Ready`: True only while the change is live.
pub const READY: &str = "Ready";
/// `Reconciling`: True while the change can still go live.
pub const RECONCILING: &str = "Reconciling";
/// `Stalled`: True on a failure waiting will not fix.
pub const STALLED: &str = "Stalled";

/// The longest message a condition or a target's reason carries: a status is read on every
/// `kubectl get`, and the whole report is `liveproof verify verification/NAME`'s.
const MAX_MESSAGE: usize = 1024;

/// What the controller last proved about the Verification's change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Not judged yet is not live: without this default kstatus would call a Verification with no
// status Current (module docs).
#[schemars(extend("default" = {"observedGeneration": 0}))]
pub struct VerificationStatus {
    /// The `metadata.generation` of the spec this status judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// The verdict, as `liveproof verify` answers it: live, not_live, unproven or superseded.
    /// Absent when the spec or its targets were refused (see the Stalled condition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,

    /// Ready (True only while live), Reconciling (True while it can still go live) and
    /// Stalled (True on a final failure), each with the generation it describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,

    /// When the evidence shows the change went live (RFC 3339): the latest of the targets'
    /// `live_since`, each the last serving pod's Ready transition (or a promotion after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_since: Option<String>,

    /// Seconds from the commit to live, when the commit's time is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_time_seconds: Option<i64>,

    /// When superseded: the later change that replaced this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<SupersededStatus>,

    /// Each target (and each workload a Helm or GitOps target led to): its verdict, the
    /// checks that failed, and why it is not live.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetStatus>,

    /// When the targets were last judged (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_verified_time: Option<String>,
}

/// A condition, as `metav1.Condition` has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Ready, Reconciling or Stalled.
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    /// Why, in one CamelCase word.
    pub reason: String,
    /// Why, for a person.
    #[serde(default)]
    pub message: String,
    /// The generation this condition describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When the status last changed (RFC 3339).
    pub last_transition_time: String,
}

/// One target's verdict, in a status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetStatus {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// The Helm or GitOps target this workload was reached from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    pub verdict: Verdict,
    /// The checks that failed (pods_current, pod_restarted, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_checks: Vec<String>,
    /// Why it is not live: the first failing (else unknown) check and what it read, or what
    /// superseded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<SupersededStatus>,
}

/// The later change that replaced the stated one, as the report names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupersededStatus {
    /// What replaced it, in one sentence.
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// When the later change was made (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Whether the later change is itself live, when that could be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<bool>,
}

impl From<&liveproof_evidence::SupersededBy> for SupersededStatus {
    fn from(s: &liveproof_evidence::SupersededBy) -> SupersededStatus {
        SupersededStatus {
            summary: capped(&s.summary),
            revision: s.revision.clone(),
            commit: s.commit.clone(),
            images: s.images.clone(),
            at: s.at.clone(),
            live: s.live,
        }
    }
}

/// Why a Verification was not judged: what `verify` exits 2 for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: RefusalReason,
    /// `verify`'s `error:` message.
    pub message: String,
    /// `verify`'s `hint:`, when it has one.
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    /// The spec is refused as `verify` refuses its command line: only a new spec helps.
    InvalidSpec,
    /// A target does not exist. As `verify --wait` waits for a first deploy, it is waited for
    /// until the spec's `timeout`; `timed_out` once that ran out.
    TargetNotFound { timed_out: bool },
}

impl RefusalReason {
    fn name(self) -> &'static str {
        match self {
            RefusalReason::InvalidSpec => "InvalidSpec",
            RefusalReason::TargetNotFound { .. } => "TargetNotFound",
        }
    }

    fn is_final(self) -> bool {
        match self {
            RefusalReason::InvalidSpec => true,
            RefusalReason::TargetNotFound { timed_out } => timed_out,
        }
    }
}

impl Refusal {
    /// A spec `verify` refuses ([`SpecError`](super::object::SpecError)), in its words.
    pub fn invalid_spec<E: Hinted + std::fmt::Display>(error: &E) -> Refusal {
        Refusal {
            reason: RefusalReason::InvalidSpec,
            message: error.to_string(),
            hint: error.hint().map(Cow::into_owned),
        }
    }

    fn shown(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{}; hint: {hint}", self.message),
            None => self.message.clone(),
        }
    }
}

/// Where the judgement stands, as the conditions say it.
enum Standing {
    Live,
    /// Can still go live: `Reconciling`.
    Waiting {
        reason: &'static str,
    },
    /// Will not go live for this spec: `Stalled`.
    Final {
        reason: &'static str,
        message: String,
    },
}

/// The status a verify report makes for the Verification at `generation`, judged at `now`.
/// `previous` keeps each condition's `lastTransitionTime` while its status holds, and tells a
/// change that stopped being live (reason `NoLongerLive`) from one that never was.
///
/// The report says what is final, as `verify --wait` records it: its `wait` record with
/// `timed_out` (the spec's `timeout` ran out), or without it and not live (stopped at a failure
/// waiting will not fix, or an unknown no later event decides; the stop note, which the wait
/// appends last to the report's notes, is the message). A superseded change is final too:
/// a later change replaced it.
pub fn status_from(
    report: &Report,
    generation: i64,
    now: Timestamp,
    previous: Option<&VerificationStatus>,
) -> VerificationStatus {
    let summary = not_live_summary(report);
    let standing = match (report.verdict, report.wait) {
        (Verdict::Live, _) => Standing::Live,
        (Verdict::Superseded, _) => Standing::Final {
            reason: "Superseded",
            message: summary.clone(),
        },
        (_, Some(wait)) if wait.timed_out => Standing::Final {
            reason: "TimedOut",
            message: format!(
                "not live after {}s (the spec's timeout): {summary}",
                wait.elapsed_seconds
            ),
        },
        (verdict, Some(_)) => Standing::Final {
            reason: if report
                .notes
                .last()
                .is_some_and(|n| n.starts_with(liveproof_evidence::UNPROVABLE_NOTE))
            {
                "Unprovable"
            } else if verdict == Verdict::NotLive {
                "FinalFailure"
            } else {
                "Undecidable"
            },
            message: match report.notes.last() {
                Some(note) => format!("{note}; {summary}"),
                None => summary.clone(),
            },
        },
        (Verdict::NotLive, None) => Standing::Waiting { reason: "NotLive" },
        (_, None) => Standing::Waiting { reason: "Unproven" },
    };
    let was_live = previous.is_some_and(|p| {
        condition(p, READY).is_some_and(|c| {
            c.status == "True"
                || (c.reason == "NoLongerLive" && p.observed_generation == Some(generation))
        })
    });
    let not_ready = |reason: &'static str| {
        if was_live {
            "NoLongerLive"
        } else {
            reason
        }
    };
    let (ready, reconciling, stalled) = match &standing {
        Standing::Live => {
            let message = "the change is live: the serving pods prove it".to_string();
            (
                (true, "Live", message.clone()),
                (false, "Live", message.clone()),
                (false, "Live", message),
            )
        }
        Standing::Waiting { reason } => {
            let message = format!("waiting for the change to be live: {summary}");
            (
                (false, not_ready(reason), message.clone()),
                (true, *reason, message.clone()),
                (false, *reason, message),
            )
        }
        Standing::Final { reason, message } => (
            (false, not_ready(reason), message.clone()),
            (false, *reason, message.clone()),
            (true, *reason, message.clone()),
        ),
    };
    let live = matches!(standing, Standing::Live);
    let conditions = conditions(
        [
            (READY, ready),
            (RECONCILING, reconciling),
            (STALLED, stalled),
        ],
        generation,
        now,
        previous,
    );
    let targets: Vec<TargetStatus> = report.targets.iter().map(target_status).collect();
    let live_since = if live {
        latest_live_since(report).or_else(|| {
            // Still in the same run of live, when this judgement cannot date it: the date
            // read before stands.
            previous
                .filter(|p| p.verdict == Some(Verdict::Live))
                .and_then(|p| p.live_since.clone())
        })
    } else {
        None
    };
    VerificationStatus {
        observed_generation: Some(generation),
        verdict: Some(report.verdict),
        conditions,
        live_since,
        lead_time_seconds: report.lead_time_seconds.filter(|_| live),
        superseded_by: report
            .targets
            .iter()
            .find_map(|t| t.superseded_by.as_ref())
            .filter(|_| report.verdict == Verdict::Superseded)
            .map(SupersededStatus::from),
        targets,
        last_verified_time: Some(second(now)),
    }
}

/// The status of a Verification that was not judged: its spec refused, or a target not found
/// (the `verify` exit 2). No verdict: none was reached.
pub fn status_refused(
    refusal: &Refusal,
    generation: i64,
    now: Timestamp,
    previous: Option<&VerificationStatus>,
) -> VerificationStatus {
    let reason = refusal.reason.name();
    let message = refusal.shown();
    let stalled = refusal.reason.is_final();
    let conditions = conditions(
        [
            (READY, (false, reason, message.clone())),
            (RECONCILING, (!stalled, reason, message.clone())),
            (STALLED, (stalled, reason, message)),
        ],
        generation,
        now,
        previous,
    );
    VerificationStatus {
        observed_generation: Some(generation),
        verdict: None,
        conditions,
        live_since: None,
        lead_time_seconds: None,
        superseded_by: None,
        targets: Vec::new(),
        last_verified_time: Some(second(now)),
    }
}

/// The condition of `type_` in `status`.
pub fn condition<'a>(status: &'a VerificationStatus, type_: &str) -> Option<&'a Condition> {
    status.conditions.iter().find(|c| c.type_ == type_)
}

/// The three conditions, in kstatus' order, each keeping its `lastTransitionTime` from
/// `previous` while its status holds.
fn conditions(
    wanted: [(&str, (bool, &str, String)); 3],
    generation: i64,
    now: Timestamp,
    previous: Option<&VerificationStatus>,
) -> Vec<Condition> {
    wanted
        .into_iter()
        .map(|(type_, (on, reason, message))| {
            let status = if on { "True" } else { "False" };
            let last_transition_time = previous
                .and_then(|p| condition(p, type_))
                .filter(|c| c.status == status)
                .map_or_else(|| second(now), |c| c.last_transition_time.clone());
            Condition {
                type_: type_.to_string(),
                status: status.to_string(),
                reason: reason.to_string(),
                message: capped(&message),
                observed_generation: Some(generation),
                last_transition_time,
            }
        })
        .collect()
}

fn target_status(t: &TargetReport) -> TargetStatus {
    let failing_checks = t
        .evidence
        .iter()
        .filter(|e| e.status == Status::Fail)
        .map(|e| e.check.name().to_string())
        .collect();
    TargetStatus {
        kind: t.kind.name().to_string(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
        via: t.via.clone(),
        verdict: t.verdict,
        failing_checks,
        reason: target_reason(t).map(|r| capped(&r)),
        live_since: t.live_since.clone(),
        superseded_by: t.superseded_by.as_ref().map(SupersededStatus::from),
    }
}

/// Why a target is not live: what replaced it, the first failing check, else the first
/// unknown one, in the report's own words.
fn target_reason(t: &TargetReport) -> Option<String> {
    if t.verdict == Verdict::Live {
        return None;
    }
    if let Some(s) = &t.superseded_by {
        return Some(format!("superseded by {}", s.named()));
    }
    let first = |status: Status| t.evidence.iter().find(|e| e.status == status);
    if let Some(e) = first(Status::Fail) {
        return Some(format!("{} failed: {}", e.check.name(), e.detail));
    }
    if let Some(e) = first(Status::Unknown) {
        return Some(format!("{} unknown: {}", e.check.name(), e.detail));
    }
    Some("no check failed, but nothing read proves the change live".to_string())
}

/// The targets that are not live, and why, in one line.
fn not_live_summary(report: &Report) -> String {
    let lines: Vec<String> = report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live)
        .map(|t| {
            let reason = target_reason(t).unwrap_or_default();
            format!(
                "{}/{}/{} {}: {reason}",
                t.namespace,
                t.kind,
                t.name,
                t.verdict.name()
            )
        })
        .collect();
    if lines.is_empty() {
        format!("{} (no target reported)", report.verdict.name())
    } else {
        lines.join("; ")
    }
}

/// When the last target went live, when every target's time is known.
fn latest_live_since(report: &Report) -> Option<String> {
    let mut latest: Option<(Timestamp, &String)> = None;
    for t in &report.targets {
        let text = t.live_since.as_ref()?;
        let at: Timestamp = text.parse().ok()?;
        if latest.is_none_or(|(l, _)| at > l) {
            latest = Some((at, text));
        }
    }
    latest.map(|(_, text)| text.clone())
}

/// A time as Kubernetes stamps one: RFC 3339, to the second.
fn second(at: Timestamp) -> String {
    Timestamp::from_second(at.as_second())
        .unwrap_or(at)
        .to_string()
}

/// At most [`MAX_MESSAGE`] characters, cut at a character.
fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
