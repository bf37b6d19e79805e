//! Issue 36 §1 and §4. A failure waiting will not fix (the ones docs/design.md lists under
//! `--wait`: a crash loop, ProgressDeadlineExceeded, an aborted Rollout, a Knative
//! RevisionFailed, …) has the diagnosis for its next step, the reason first — never "wait for
//! the rollout". And a request no statement of the change can ever make live is known as such
//! ([`unprovable`], [`unprovable_by_flags`]), apart from what is only unproven for now.

use liveproof_testkit::judge as common;

use liveproof_evidence::{
    judgement, unprovable, unprovable_by_flags, Change, DeclaredTemplate, ExpectedImage, Settled,
    Target, TargetKind, Verdict,
};

use common::{decoded, story};

fn since() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
        digests: liveproof_evidence::digest::DigestPolicy::Off,
        ..Change::default()
    }
}

fn image(image: &str) -> Change {
    Change {
        images: vec![ExpectedImage::parse(image).expect("an image")],
        ..since()
    }
}

fn target(kind: TargetKind, ns: &str, name: &str) -> Vec<Target> {
    vec![Target::new(kind, Some(ns), name)]
}

/// The story judged as `verify` judges one pass: the report with its next steps, and what
/// settles a `--wait`.
fn judged(
    name: &str,
    change: &Change,
    targets: &[Target],
) -> (liveproof_evidence::Report, Option<Settled>) {
    let observed = decoded(story(name));
    let j = judgement(&observed, change, targets, "default", false);
    (j.report, j.stop)
}

/// Every target that is not live has a next step, and none says to wait.
fn no_step_waits(report: &liveproof_evidence::Report) -> Vec<String> {
    report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live)
        .map(|t| {
            let step = t.next_step.as_ref().expect("a next step");
            assert!(
                !step.proposes_waiting() && !step.to_string().contains("--wait"),
                "{} {}: a final failure's step says to wait: {step}",
                t.kind,
                t.name
            );
            step.to_string()
        })
        .collect()
}

#[test]
fn a_crash_loops_next_step_is_its_logs_not_a_wait() {
    let (report, stop) = judged(
        "new-pod-crashloopbackoff-old-pods-serving",
        &image("ghcr.io/acme/inventory:1.4.0"),
        &target(TargetKind::Deployment, "apps", "inventory"),
    );
    assert!(
        matches!(&stop, Some(Settled::Failed(r)) if r.contains("crash-looping")),
        "{stop:?}"
    );
    let [step] = no_step_waits(&report).try_into().expect("one target");
    // The reason first, then where to see why: the container's previous logs and the pod.
    assert!(
        step.starts_with(
            "apps/Deployment/inventory: pod inventory-4dxbdm5glx-tqtkw is crash-looping (inventory CrashLoopBackOff (5 restarts); its last run ended Error (exit code 1)): waiting longer will not fix it; "
        ),
        "{step}"
    );
    for command in [
        "kubectl -n apps logs inventory-4dxbdm5glx-tqtkw -c inventory --previous",
        "kubectl -n apps describe pod inventory-4dxbdm5glx-tqtkw",
    ] {
        assert!(step.contains(command), "{step}");
    }
}

/// An OOMKilled container crash-looping: the step says how its last run ended, as the kubelet
/// recorded it.
#[test]
fn a_crash_loops_step_says_how_the_container_last_ended() {
    let (report, _) = judged(
        "diag-oomkilled",
        &image("ghcr.io/acme/inventory:1.4.0"),
        &target(TargetKind::Deployment, "apps", "inventory"),
    );
    let [step] = no_step_waits(&report).try_into().expect("one target");
    assert!(
        step.contains(
            "its last run ended OOMKilled (exit code 137)): waiting longer will not fix it"
        ),
        "{step}"
    );
}

/// The other final failures docs/design.md lists under `--wait`: each settles the wait as a
/// failure, and its step is where to see why.
#[test]
fn the_other_final_failures_have_a_diagnosis_for_their_step() {
    for (name, change, targets, says) in [
        (
            "progress-deadline-exceeded-image-never-pushed",
            image("ghcr.io/acme/inventory:1.4.0"),
            target(TargetKind::Deployment, "apps", "inventory"),
            "kubectl -n apps describe deployment/inventory",
        ),
        (
            "argo-rollout-canary-aborted",
            image("ghcr.io/acme/checkout:2.4.0"),
            target(TargetKind::Rollout, "shop", "checkout"),
            "kubectl -n shop describe rollout/checkout",
        ),
        (
            "knative-service-latest-created-not-ready",
            image("ghcr.io/acme/hello:1.1.0"),
            target(TargetKind::KnativeService, "web", "hello"),
            "describe ksvc hello",
        ),
    ] {
        let (report, stop) = judged(name, &change, &targets);
        assert!(matches!(stop, Some(Settled::Failed(_))), "{name}: {stop:?}");
        let steps = no_step_waits(&report);
        assert!(steps.iter().any(|s| s.contains(says)), "{name}: {steps:?}");
    }
}

/// A workload reached with no statement of what changed can never be live: directly, or
/// through a GitOps object that was not asked which revision it applied. Stated, or tied by
/// the GitOps revision, it is not.
#[test]
fn a_workload_no_statement_reaches_is_unprovable() {
    let inventory = target(TargetKind::Deployment, "apps", "inventory");
    let (report, _) = judged("expect-env-present-rolled-out", &since(), &inventory);
    let Some(Settled::Unprovable { message, hint }) = unprovable(&report) else {
        panic!("not unprovable: {report:?}");
    };
    assert!(
        message.starts_with("deployment/inventory in namespace apps can never be live"),
        "{message}"
    );
    assert!(hint.contains("--image REF, -f MANIFESTS"), "{hint}");
    let (report, _) = judged(
        "expect-env-present-rolled-out",
        &image("ghcr.io/acme/inventory:1.4.0"),
        &inventory,
    );
    assert_eq!(unprovable(&report), None);

    // Through a Kustomization without --commit: nothing asks it which revision it applied.
    let apps = target(TargetKind::Kustomization, "flux-system", "apps");
    let (report, _) = judged("flux-kustomization-applied-live", &since(), &apps);
    let Some(Settled::Unprovable { message, hint }) = unprovable(&report) else {
        panic!("not unprovable: {report:?}");
    };
    assert!(
        message.contains("reached through kustomization/flux-system/apps"),
        "{message}"
    );
    assert!(hint.contains("--commit"), "{hint}");
    // With the commit, the revision ties its workloads to the change.
    let committed = Change {
        commit: Some("7453f92".into()),
        ..since()
    };
    let (report, _) = judged("flux-kustomization-applied-live", &committed, &apps);
    assert_eq!(report.verdict, Verdict::Live);
    assert_eq!(unprovable(&report), None);
}

/// Unproven for now is not unprovable: a stated workload whose pods were not read yet, a
/// Deployment not there yet (a first deploy).
#[test]
fn unproven_for_now_is_not_unprovable() {
    let observed = liveproof_evidence::Observed::default();
    let j = judgement(
        &observed,
        &image("ghcr.io/acme/inventory:1.4.0"),
        &target(TargetKind::Deployment, "apps", "inventory"),
        "default",
        false,
    );
    assert_ne!(j.report.verdict, Verdict::Live);
    assert_eq!(unprovable(&j.report), None);
}

/// What the flags alone show: a workload target and no statement, whether the change is
/// dated by a time or a commit. A statement, `-f` declaring the workload, or a GitOps target
/// (only its reads can tell) is not refused by the flags.
#[test]
fn the_flags_alone_show_a_workload_with_no_statement() {
    let web = target(TargetKind::Deployment, "apps", "web");
    let Some(Settled::Unprovable { message, .. }) = unprovable_by_flags(&since(), &web) else {
        panic!("not refused");
    };
    assert!(
        message.contains("a change time says when it changed, not what"),
        "{message}"
    );
    let committed = Change {
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        ..since()
    };
    let Some(Settled::Unprovable { message, .. }) = unprovable_by_flags(&committed, &web) else {
        panic!("not refused");
    };
    assert!(
        message.starts_with("deployment/web in namespace apps can never be live")
            && message.contains("a Deployment records no commit"),
        "{message}"
    );
    assert_eq!(
        unprovable_by_flags(&image("ghcr.io/acme/web:2"), &web),
        None
    );
    let declared = Change {
        declared: vec![DeclaredTemplate {
            target: Target::new(TargetKind::Deployment, None, "web"),
            template: serde_json::json!({"spec": {"containers": [{"name": "web"}]}}),
            source: "k8s/web.yaml".into(),
            given: "k8s/web.yaml".into(),
            repo_path: None,
        }],
        ..since()
    };
    assert_eq!(unprovable_by_flags(&declared, &web), None);
    let app = target(TargetKind::Application, "argocd", "web");
    assert_eq!(unprovable_by_flags(&since(), &app), None);
}
