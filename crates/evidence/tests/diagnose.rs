//! Diagnostics read from fixture objects: the reasons new pods give, Warning events folded and
//! capped, and what controllers and Helm recorded.

use liveproof_testkit::judge as common;

use liveproof_evidence::diagnose::{self, Logs, EVENT_CAP};
use liveproof_evidence::{Target, TargetKind};
use serde_json::json;

use common::story;

fn inventory() -> Target {
    Target::new(TargetKind::Deployment, Some("apps"), "inventory")
}

#[test]
fn a_crash_looping_pod_says_so() {
    let observed = story("new-pod-crashloopbackoff-old-pods-serving");
    let found = diagnose::workload(&observed, &inventory(), "apps", None, Some(&Logs::new()));
    let crash = found
        .iter()
        .find(|d| d.reason == "CrashLoopBackOff")
        .expect("the waiting reason");
    assert_eq!(crash.kind, "container");
    assert!(
        crash.object.starts_with("apps/Pod/") && crash.object.ends_with(']'),
        "{crash:?}"
    );
    assert_eq!(crash.count, Some(5), "restarts: {crash:?}");
}

#[test]
fn a_live_workload_has_nothing_to_say() {
    let observed = story("gitops-reconciled-new-tag-rolled-out");
    assert!(
        diagnose::workload(&observed, &inventory(), "apps", None, Some(&Logs::new())).is_empty()
    );
}

#[test]
fn warning_events_are_folded_filtered_and_capped() {
    let mut observed = story("new-pod-crashloopbackoff-old-pods-serving");
    let pod = observed
        .pods
        .iter()
        .find(|p| {
            p.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.contains("4dxbdm5glx"))
        })
        .and_then(|p| p.metadata.name.clone())
        .expect("a new pod");
    // Core v1, the same event twice (folded), one Normal (ignored), one before the change.
    for (reason, ty, count, last) in [
        ("BackOff", "Warning", 7, "2026-07-12T10:20:00Z"),
        ("BackOff", "Warning", 3, "2026-07-12T10:25:00Z"),
        ("Pulled", "Normal", 1, "2026-07-12T10:05:00Z"),
        ("FailedMount", "Warning", 1, "2026-07-01T00:00:00Z"),
    ] {
        observed.others.push(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": format!("e-{reason}-{count}"), "namespace": "apps"},
            "involvedObject": {"kind": "Pod", "name": pod, "namespace": "apps"}, "type": ty, "reason": reason,
            "message": "Back-off restarting failed container inventory", "count": count,
            "firstTimestamp": "2026-07-12T10:06:00Z", "lastTimestamp": last}));
    }
    // events.k8s.io/v1 about the Deployment.
    observed.others.push(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "d1", "namespace": "apps"},
        "regarding": {"kind": "Deployment", "name": "inventory", "namespace": "apps"}, "type": "Warning", "reason": "ProgressDeadlineExceeded",
        "note": "ReplicaSet \"inventory-4dxbdm5glx\" has timed out progressing.", "eventTime": "2026-07-12T10:30:00.000000Z",
        "series": {"count": 2, "lastObservedTime": "2026-07-12T10:31:00.000000Z"}}));
    // An event about another workload's pod: not ours.
    observed.others.push(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "x", "namespace": "apps"},
        "involvedObject": {"kind": "Pod", "name": "billing-1"}, "type": "Warning", "reason": "BackOff", "message": "m", "lastTimestamp": "2026-07-12T10:40:00Z"}));
    let since = "2026-07-12T10:00:00Z".parse().ok();
    let events: Vec<_> =
        diagnose::workload(&observed, &inventory(), "apps", since, Some(&Logs::new()))
            .into_iter()
            .filter(|d| d.kind == "event")
            .collect();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(
        events[0].reason, "ProgressDeadlineExceeded",
        "newest first: {events:#?}"
    );
    assert_eq!(events[0].count, Some(2));
    assert_eq!(events[1].reason, "BackOff");
    assert_eq!(events[1].count, Some(10), "7 + 3 folded");
    assert_eq!(events[1].last_seen.as_deref(), Some("2026-07-12T10:25:00Z"));

    for i in 0..20 {
        observed.others.push(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": format!("n{i}"), "namespace": "apps"},
            "involvedObject": {"kind": "Deployment", "name": "inventory"}, "type": "Warning", "reason": format!("R{i}"), "message": "m",
            "lastTimestamp": format!("2026-07-12T11:{i:02}:00Z")}));
    }
    let events = diagnose::events(
        &observed,
        "apps",
        &[("Deployment".into(), "inventory".into())],
        since,
    );
    assert_eq!(events.len(), EVENT_CAP);
    assert_eq!(events[0].reason, "R19");
}

#[test]
fn controllers_and_helm_say_what_failed() {
    let observed = story("flux-kustomization-newest-revision-failed-to-apply");
    let ks = observed
        .others
        .iter()
        .find(|o| o["kind"] == "Kustomization")
        .expect("ks");
    let name = ks["metadata"]["name"].as_str().expect("name");
    let ns = ks["metadata"]["namespace"].as_str().expect("ns");
    let found = diagnose::gitops(
        &observed,
        &Target::new(TargetKind::Kustomization, Some(ns), name),
        ns,
        None,
    );
    assert!(
        found.iter().any(|d| d.reason == "RevisionNotApplied"),
        "{found:#?}"
    );

    let helm = story("helm-upgrade-failed");
    let found = diagnose::gitops(
        &helm,
        &Target::new(TargetKind::Release, Some("apps"), "inventory"),
        "apps",
        None,
    );
    assert!(
        found
            .iter()
            .any(|d| d.kind == "release" && d.reason == "failed" && !d.message.is_empty()),
        "{found:#?}"
    );
}

/// Diagnostics explain; they never change a verdict. Each story judged, then explained with
/// its Warning events and log lines: the report is the same but for the diagnostics it gained,
/// whatever its verdict (issue 34's plan, §2.3: the verdict is computed once).
#[test]
fn explain_never_changes_a_verdict() {
    use liveproof_evidence::{Change, ExpectedImage};
    let image = || vec![ExpectedImage::parse("ghcr.io/acme/inventory:1.4.0").expect("image")];
    let since = "2026-07-12T10:00:00Z".parse().ok();
    let helmrelease = Target::new(TargetKind::HelmRelease, Some("apps"), "inventory");
    let mut explained = 0;
    for (name, target, kind, images) in [
        (
            "new-pod-crashloopbackoff-old-pods-serving",
            inventory(),
            "Deployment",
            image(),
        ),
        (
            "diag-crashloop-with-events-folded",
            inventory(),
            "Deployment",
            image(),
        ),
        ("diag-oomkilled", inventory(), "Deployment", image()),
        ("diag-unschedulable", inventory(), "Deployment", image()),
        (
            "diag-flux-helmrelease-ready-false",
            helmrelease.clone(),
            "HelmRelease",
            Vec::new(),
        ),
        (
            "flux-helmrelease-upgrade-out-of-retries",
            helmrelease,
            "HelmRelease",
            Vec::new(),
        ),
        (
            "gitops-reconciled-new-tag-rolled-out",
            inventory(),
            "Deployment",
            image(),
        ),
    ] {
        let mut observed = story(name);
        // A Warning event about the workload and a log line of each pod's containers.
        observed
            .others
            .push(json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "inventory.1", "namespace": "apps"},
            "involvedObject": {"kind": kind, "name": "inventory", "namespace": "apps"},
            "type": "Warning", "reason": "Failed", "message": "it failed", "count": 2,
            "lastTimestamp": "2026-07-12T10:20:00Z"}));
        for pod in &observed.pods.clone() {
            for c in pod.spec.iter().flat_map(|s| &s.containers) {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let key = ("apps".to_string(), name, c.name.clone());
                observed.logs.insert(key, vec!["panic: no database".into()]);
            }
        }
        let change = Change {
            since,
            images,
            ..Change::default()
        };
        let judged = liveproof_evidence::judge(&observed, &change, &[target], "apps");
        let mut report = judged.clone();
        diagnose::explain(&mut report, &observed, since, true);
        assert_eq!(report.verdict, judged.verdict, "{name}");
        if report != judged {
            explained += 1;
        }
        for t in &mut report.targets {
            t.diagnostics.clear();
        }
        let mut bare = judged;
        for t in &mut bare.targets {
            t.diagnostics.clear();
        }
        assert_eq!(
            report, bare,
            "{name}: explain changed more than the diagnostics"
        );
    }
    assert!(
        explained >= 5,
        "the stories that are not live gain diagnostics: {explained}"
    );
}
