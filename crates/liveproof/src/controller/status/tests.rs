//! Each rule of [`status_from`] and [`status_refused`], on reports as `verify -o json` writes
//! them; and what kstatus computes from each status, by its rules (module docs).

use serde_json::{json, Value};

use super::*;

const T0: &str = "2026-07-12T10:05:00Z";
const T1: &str = "2026-07-12T10:06:00Z";
const T2: &str = "2026-07-12T10:07:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().expect("a time")
}

/// A report with one Deployment target, as `-o json` writes it.
fn report(verdict: &str, target: Value, extra: Value) -> Report {
    let mut target_json = json!({
        "kind": "Deployment", "namespace": "apps", "name": "web", "verdict": verdict,
        "evidence": [],
    });
    merge(&mut target_json, target);
    let mut report = json!({
        "schema": "liveproof/v1", "verdict": verdict, "generated_at": T0,
        "change": {"since": "2026-07-12T10:00:00Z"}, "targets": [target_json],
    });
    merge(&mut report, extra);
    serde_json::from_value(report).expect("a report")
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        into.extend(from);
    }
}

fn evidence(check: &str, status: &str, detail: &str) -> Value {
    json!({
        "check": check, "status": status, "observed": "o", "expected": "e",
        "source": "apps/Pod/web-1 .status", "detail": detail,
        "source_ref": {"apiVersion": "v1", "kind": "Pod", "namespace": "apps", "name": "web-1",
                       "field": ".status"},
    })
}

fn live() -> Report {
    report(
        "live",
        json!({"evidence": [evidence("pods_current", "pass", "every serving pod is current")],
               "live_since": "2026-07-12T10:03:10Z"}),
        json!({"lead_time_seconds": 190}),
    )
}

fn not_live() -> Report {
    report(
        "not_live",
        json!({"evidence": [
            evidence("spec_readback", "fail", "the template runs ghcr.io/acme/web:1.3.9"),
            evidence("pods_current", "fail", "2 pods of an old revision serve"),
            evidence("pod_restarted", "unknown", "no pod of the current revision"),
        ]}),
        json!({}),
    )
}

fn cond<'a>(status: &'a VerificationStatus, type_: &str) -> &'a Condition {
    condition(status, type_).unwrap_or_else(|| panic!("no {type_} in {status:?}"))
}

/// kstatus' `Compute` for a custom resource, as `generic.go` and `status.go` decide it (module
/// docs): what Flux's health check would say.
fn kstatus(generation: i64, status: Option<&VerificationStatus>) -> &'static str {
    let Some(status) = status else {
        // Rule 5, were the CRD's default not there; the default is `observedGeneration: 0`.
        return kstatus(generation, Some(&defaulted()));
    };
    if status.observed_generation.is_some_and(|g| g != generation) {
        return "InProgress";
    }
    for c in &status.conditions {
        if c.type_ == RECONCILING && c.status == "True" {
            return "InProgress";
        }
        if c.type_ == STALLED && c.status == "True" {
            return "Failed";
        }
    }
    match condition(status, READY).map(|c| c.status.as_str()) {
        Some("True") => "Current",
        Some(_) => "InProgress",
        None => "Current",
    }
}

/// The status the CRD's schema defaults an unjudged Verification to.
fn defaulted() -> VerificationStatus {
    let crd = serde_json::to_value(<super::super::Verification as kube::CustomResourceExt>::crd())
        .expect("JSON");
    let default = crd
        .pointer("/spec/versions/0/schema/openAPIV3Schema/properties/status/default")
        .cloned()
        .expect("the CRD defaults .status");
    serde_json::from_value(default).expect("a status")
}

/// Live: Ready True, the others False; verdict, liveSince, leadTimeSeconds and
/// lastVerifiedTime set; kstatus Current.
#[test]
fn live_is_ready() {
    let s = status_from(&live(), 3, at(T0), None);
    assert_eq!(s.observed_generation, Some(3));
    assert_eq!(s.verdict, Some(Verdict::Live));
    assert_eq!(cond(&s, READY).status, "True");
    assert_eq!(cond(&s, READY).reason, "Live");
    assert_eq!(cond(&s, RECONCILING).status, "False");
    assert_eq!(cond(&s, STALLED).status, "False");
    for c in &s.conditions {
        assert_eq!(c.observed_generation, Some(3), "{c:?}");
        assert_eq!(c.last_transition_time, T0, "{c:?}");
    }
    assert_eq!(s.live_since.as_deref(), Some("2026-07-12T10:03:10Z"));
    assert_eq!(s.lead_time_seconds, Some(190));
    assert_eq!(s.last_verified_time.as_deref(), Some(T0));
    assert_eq!(s.targets[0].verdict, Verdict::Live);
    assert_eq!(s.targets[0].reason, None);
    assert_eq!(kstatus(3, Some(&s)), "Current");
    // Judged for an older spec: InProgress until the new one is judged.
    assert_eq!(kstatus(4, Some(&s)), "InProgress");
}

/// Not live yet, nothing final: Reconciling True, Ready False with the verdict as reason, per
/// target its failing checks and the first one's words; kstatus InProgress.
#[test]
fn not_live_yet_is_reconciling() {
    let s = status_from(&not_live(), 1, at(T0), None);
    assert_eq!(s.verdict, Some(Verdict::NotLive));
    assert_eq!(cond(&s, READY).status, "False");
    assert_eq!(cond(&s, READY).reason, "NotLive");
    assert_eq!(cond(&s, RECONCILING).status, "True");
    assert_eq!(cond(&s, STALLED).status, "False");
    let t = &s.targets[0];
    assert_eq!(t.failing_checks, ["spec_readback", "pods_current"]);
    assert_eq!(
        t.reason.as_deref(),
        Some("spec_readback failed: the template runs ghcr.io/acme/web:1.3.9")
    );
    assert!(
        cond(&s, READY)
            .message
            .contains("apps/Deployment/web not_live: spec_readback failed"),
        "{}",
        cond(&s, READY).message
    );
    assert_eq!(s.live_since, None);
    assert_eq!(kstatus(1, Some(&s)), "InProgress");
    // Unproven is waited on too, with the first unknown check as the reason.
    let unproven = report(
        "unproven",
        json!({"evidence": [evidence("pod_restarted", "unknown", "RBAC denied reading pods")]}),
        json!({}),
    );
    let s = status_from(&unproven, 1, at(T0), None);
    assert_eq!(cond(&s, READY).reason, "Unproven");
    assert_eq!(cond(&s, RECONCILING).status, "True");
    assert_eq!(
        s.targets[0].reason.as_deref(),
        Some("pod_restarted unknown: RBAC denied reading pods")
    );
    assert_eq!(kstatus(1, Some(&s)), "InProgress");
}

/// A failure `--wait` stops on: Stalled True (reason FinalFailure, the stop note its message),
/// Reconciling False; kstatus Failed. An unknown nothing decides: Stalled, Undecidable.
#[test]
fn a_final_failure_is_stalled() {
    let mut r = not_live();
    r.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: false,
        elapsed_seconds: 42,
    });
    r.notes.push(
        "--wait stopped at a failure waiting will not fix: apps/Deployment/web: ProgressDeadlineExceeded"
            .into(),
    );
    let s = status_from(&r, 2, at(T0), None);
    assert_eq!(cond(&s, STALLED).status, "True");
    assert_eq!(cond(&s, STALLED).reason, "FinalFailure");
    assert!(
        cond(&s, STALLED)
            .message
            .contains("ProgressDeadlineExceeded"),
        "{}",
        cond(&s, STALLED).message
    );
    assert_eq!(cond(&s, RECONCILING).status, "False");
    assert_eq!(cond(&s, READY).status, "False");
    assert_eq!(kstatus(2, Some(&s)), "Failed");

    let mut r = report(
        "unproven",
        json!({"evidence": [evidence("pod_restarted", "unknown", "started in the change's second")]}),
        json!({}),
    );
    r.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: false,
        elapsed_seconds: 3,
    });
    let s = status_from(&r, 2, at(T0), None);
    assert_eq!(cond(&s, STALLED).reason, "Undecidable");
    assert_eq!(kstatus(2, Some(&s)), "Failed");
}

/// A spec that can never be live (a workload reached with no statement of what changed):
/// the judgement says so at once ([`liveproof_evidence::unprovable`]), and the status is
/// Stalled, reason Unprovable, its message naming the target and the ways to state the change
/// — not Reconciling until the spec's timeout.
#[test]
fn a_spec_that_can_never_be_live_is_stalled_at_once() {
    let mut spec = evidence(
        "spec_readback",
        "unknown",
        "nothing ties the running template to the change",
    );
    spec["expected"] = json!("a statement of what changed");
    let mut r = report(
        "unproven",
        json!({"evidence": [spec, evidence("pods_current", "pass", "every serving pod is current")]}),
        json!({}),
    );
    let stop = liveproof_evidence::unprovable(&r).expect("unprovable");
    r.notes.push(stop.note());
    r.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: false,
        elapsed_seconds: 0,
    });
    let s = status_from(&r, 2, at(T0), None);
    let stalled = cond(&s, STALLED);
    assert_eq!(stalled.status, "True");
    assert_eq!(stalled.reason, "Unprovable");
    for said in [
        "deployment/web in namespace apps can never be live",
        "--image REF",
    ] {
        assert!(stalled.message.contains(said), "{}", stalled.message);
    }
    assert_eq!(cond(&s, RECONCILING).status, "False");
    assert_eq!(kstatus(2, Some(&s)), "Failed");

    // A statement given (or the spec_readback decided): nothing unprovable.
    let r = report(
        "unproven",
        json!({"evidence": [evidence("spec_readback", "unknown", "the template was not read")]}),
        json!({}),
    );
    assert_eq!(liveproof_evidence::unprovable(&r), None);
}

/// The spec's timeout run out with the change not live: Stalled, TimedOut; kstatus Failed.
#[test]
fn a_timeout_run_out_is_stalled() {
    let mut r = not_live();
    r.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: true,
        elapsed_seconds: 300,
    });
    let s = status_from(&r, 1, at(T0), None);
    assert_eq!(cond(&s, STALLED).status, "True");
    assert_eq!(cond(&s, STALLED).reason, "TimedOut");
    assert!(cond(&s, STALLED).message.starts_with("not live after 300s"));
    assert_eq!(cond(&s, RECONCILING).status, "False");
    assert_eq!(kstatus(1, Some(&s)), "Failed");
}

/// A live Verification that stops being live (a `rollout undo`): Ready False, reason
/// NoLongerLive, with what fails now; its lastTransitionTime moves, liveSince goes; back to
/// Reconciling (it may come back). Judged again still not live, the reason stays.
#[test]
fn ready_goes_false_when_the_change_stops_being_live() {
    let was = status_from(&live(), 1, at(T0), None);
    let undone = status_from(&not_live(), 1, at(T1), Some(&was));
    let ready = cond(&undone, READY);
    assert_eq!(ready.status, "False");
    assert_eq!(ready.reason, "NoLongerLive");
    assert!(
        ready.message.contains("spec_readback failed"),
        "{}",
        ready.message
    );
    assert_eq!(ready.last_transition_time, T1);
    assert_eq!(cond(&undone, RECONCILING).status, "True");
    assert_eq!(cond(&undone, RECONCILING).last_transition_time, T1);
    // Stalled stayed False: its time stays.
    assert_eq!(cond(&undone, STALLED).last_transition_time, T0);
    assert_eq!(undone.live_since, None);
    assert_eq!(undone.lead_time_seconds, None);
    assert_eq!(kstatus(1, Some(&undone)), "InProgress");

    let still = status_from(&not_live(), 1, at(T2), Some(&undone));
    assert_eq!(cond(&still, READY).reason, "NoLongerLive");
    assert_eq!(cond(&still, READY).last_transition_time, T1);
    // A new spec that was never live is not "no longer" live.
    let new_spec = status_from(&not_live(), 2, at(T2), Some(&undone));
    assert_eq!(cond(&new_spec, READY).reason, "NotLive");
}

/// Judged again with nothing changed: the same status, every lastTransitionTime kept; only
/// lastVerifiedTime moves.
#[test]
fn nothing_changed_keeps_the_transition_times() {
    for report in [live(), not_live()] {
        let first = status_from(&report, 1, at(T0), None);
        let again = status_from(&report, 1, at(T2), Some(&first));
        assert_eq!(again.conditions, first.conditions);
        assert_eq!(again.last_verified_time.as_deref(), Some(T2));
        assert_eq!(
            VerificationStatus {
                last_verified_time: first.last_verified_time.clone(),
                ..again
            },
            first
        );
    }
    // A message that changes with the status held keeps the time too (metav1's rule).
    let first = status_from(&not_live(), 1, at(T0), None);
    let other = report(
        "not_live",
        json!({"evidence": [evidence("pods_current", "fail", "1 pod of an old revision serves")]}),
        json!({}),
    );
    let again = status_from(&other, 1, at(T2), Some(&first));
    assert_ne!(cond(&again, READY).message, cond(&first, READY).message);
    assert_eq!(cond(&again, READY).last_transition_time, T0);
}

/// Superseded: supersededBy set from the report, not Ready, and final (Stalled, Superseded).
#[test]
fn superseded_names_what_and_is_not_ready() {
    let r = report(
        "superseded",
        json!({"superseded_by": {
            "summary": "a later revision, created after the change, serves",
            "revision": "apps/web-6c8d", "images": ["ghcr.io/acme/web:1.5.0"],
            "at": "2026-07-12T10:30:00Z", "live": true}}),
        json!({}),
    );
    let s = status_from(&r, 1, at(T0), None);
    assert_eq!(s.verdict, Some(Verdict::Superseded));
    let by = s.superseded_by.as_ref().expect("supersededBy");
    assert_eq!(by.revision.as_deref(), Some("apps/web-6c8d"));
    assert_eq!(by.images, ["ghcr.io/acme/web:1.5.0"]);
    assert_eq!(by.live, Some(true));
    assert_eq!(s.targets[0].superseded_by.as_ref(), Some(by));
    assert!(s.targets[0]
        .reason
        .as_deref()
        .is_some_and(|r| r.starts_with("superseded by revision apps/web-6c8d")));
    assert_eq!(cond(&s, READY).status, "False");
    assert_eq!(cond(&s, READY).reason, "Superseded");
    assert_eq!(cond(&s, STALLED).status, "True");
    assert_eq!(cond(&s, STALLED).reason, "Superseded");
    assert_eq!(s.live_since, None);
    assert_eq!(kstatus(1, Some(&s)), "Failed");
}

/// liveSince is when the last target went live, and needs every target's time.
#[test]
fn live_since_is_the_last_target_to_go_live() {
    let mut r = live();
    let mut second_target = r.targets[0].clone();
    second_target.name = "worker".into();
    second_target.live_since = Some("2026-07-12T10:04:00+00:00".into());
    r.targets.push(second_target.clone());
    let s = status_from(&r, 1, at(T0), None);
    assert_eq!(s.live_since.as_deref(), Some("2026-07-12T10:04:00+00:00"));
    // A target that cannot be dated leaves it unknown, unless this run of live dated it.
    r.targets[1].live_since = None;
    let undated = status_from(&r, 1, at(T1), None);
    assert_eq!(undated.live_since, None);
    let kept = status_from(&r, 1, at(T1), Some(&s));
    assert_eq!(kept.live_since, s.live_since);
}

/// An invalid spec: no verdict, Stalled with verify's message and hint; kstatus Failed. A
/// target not found is waited for (a first deploy) until the timeout, then Stalled.
#[test]
fn a_refused_spec_or_missing_target_says_so() {
    let error: crate::controller::SpecError = crate::config::ConfigError::WaitWithoutSince.into();
    let refusal = Refusal::invalid_spec(&error);
    let s = status_refused(&refusal, 1, at(T0), None);
    assert_eq!(s.verdict, None);
    let stalled = cond(&s, STALLED);
    assert_eq!(stalled.status, "True");
    assert_eq!(stalled.reason, "InvalidSpec");
    assert!(
        stalled.message.starts_with("--wait needs a change time"),
        "{}",
        stalled.message
    );
    assert!(
        stalled.message.contains("; hint: add --since TIME"),
        "{}",
        stalled.message
    );
    assert_eq!(cond(&s, READY).status, "False");
    assert_eq!(cond(&s, RECONCILING).status, "False");
    assert_eq!(kstatus(1, Some(&s)), "Failed");

    let missing = |timed_out| Refusal {
        reason: RefusalReason::TargetNotFound { timed_out },
        message: "deployment \"wbe\" not found in namespace apps".into(),
        hint: Some("did you mean deployment/web?".into()),
    };
    let waiting = status_refused(&missing(false), 1, at(T0), None);
    assert_eq!(cond(&waiting, RECONCILING).status, "True");
    assert_eq!(cond(&waiting, READY).reason, "TargetNotFound");
    assert_eq!(kstatus(1, Some(&waiting)), "InProgress");
    let out = status_refused(&missing(true), 1, at(T1), Some(&waiting));
    assert_eq!(cond(&out, STALLED).status, "True");
    assert_eq!(cond(&out, STALLED).last_transition_time, T1);
    assert_eq!(cond(&out, READY).last_transition_time, T0);
    assert_eq!(kstatus(1, Some(&out)), "Failed");
}

/// Reconciling and Stalled are never both True, and exactly one of the three is, in every
/// status made (kstatus picks the first True of the two by list order).
#[test]
fn one_condition_is_true_at_a_time() {
    let mut stopped = not_live();
    stopped.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: false,
        elapsed_seconds: 1,
    });
    let made = [
        status_from(&live(), 1, at(T0), None),
        status_from(&not_live(), 1, at(T0), None),
        status_from(&stopped, 1, at(T0), None),
        status_refused(
            &Refusal::invalid_spec(&crate::config::ConfigError::WaitWithoutSince),
            1,
            at(T0),
            None,
        ),
    ];
    for s in &made {
        let types: Vec<&str> = s.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, [READY, RECONCILING, STALLED]);
        let on = s.conditions.iter().filter(|c| c.status == "True").count();
        assert_eq!(on, 1, "{s:?}");
    }
}

/// A Verification no controller has judged yet is not Current: the CRD defaults its status to
/// observedGeneration 0, which kstatus reads as InProgress.
#[test]
fn an_unjudged_verification_is_in_progress() {
    assert_eq!(defaulted().observed_generation, Some(0));
    assert_eq!(kstatus(1, None), "InProgress");
}

/// A long reason is cut, at a character.
#[test]
fn messages_are_bounded() {
    let long = "é".repeat(5000);
    let r = report(
        "not_live",
        json!({"evidence": [evidence("pods_current", "fail", &long)]}),
        json!({}),
    );
    let s = status_from(&r, 1, at(T0), None);
    for c in &s.conditions {
        assert!(
            c.message.chars().count() <= MAX_MESSAGE + 1,
            "{}",
            c.message.len()
        );
    }
    let reason = s.targets[0].reason.as_deref().expect("a reason");
    assert!(reason.ends_with('…'));
}
