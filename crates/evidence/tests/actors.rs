//! Issue 33: say which actor has not acted. A target that is not live says, in its details and
//! next steps, which controller has not done its part — Flagger has not promoted, Argo CD has
//! not synced, Flux's kustomize-controller has not applied, the Deployment controller has not
//! rolled out — as its kind's row of `KINDS` names it (`KindSpec::actor`), never a guess at "a
//! GitOps controller or a pipeline" where the kind knows. A workload reached through a target
//! names that target's actor, which writes its template.

use liveproof_testkit::judge as common;

use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::{
    Change, ExpectedImage, ManifestExpectation, Report, SecretRefExpectation, Status, Target,
    TargetKind, Verdict, KINDS,
};

/// A not-live story of `kind`: what is verified and the change its `args` state.
struct NotLive {
    kind: TargetKind,
    story: &'static str,
    namespace: &'static str,
    name: &'static str,
    change: Change,
}

fn since() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
        digests: DigestPolicy::Off,
        ..Change::default()
    }
}

fn image(image: &str) -> Change {
    Change {
        images: vec![ExpectedImage::parse(image).expect("an image")],
        ..since()
    }
}

fn committed(image_ref: &str) -> Change {
    Change {
        commit: Some("7453f92".into()),
        ..image(image_ref)
    }
}

/// One not-live story per target kind.
fn stories() -> Vec<NotLive> {
    let row = |kind, story, namespace, name, change| NotLive {
        kind,
        story,
        namespace,
        name,
        change,
    };
    vec![
        row(
            TargetKind::Deployment,
            "observed-generation-behind-no-replicaset-for-new-template",
            "apps",
            "inventory",
            image("ghcr.io/acme/inventory:1.4.0"),
        ),
        row(
            TargetKind::StatefulSet,
            "statefulset-update-revision-missing-controllerrevision",
            "payments",
            "ledger",
            image("ghcr.io/acme/ledger:3.2.0"),
        ),
        row(
            TargetKind::DaemonSet,
            "daemonset-newest-revision-not-current-template",
            "observability",
            "log-shipper",
            image("ghcr.io/acme/log-shipper:2.1.0"),
        ),
        row(
            TargetKind::Rollout,
            "argo-rollout-canary-paused-at-20-percent",
            "shop",
            "checkout",
            image("ghcr.io/acme/checkout:2.4.0"),
        ),
        row(
            TargetKind::Release,
            "helm-rollback-to-older-revision",
            "apps",
            "inventory",
            Change {
                manifest: vec![ManifestExpectation::parse("secretKeyRef").expect("text")],
                secret_refs: vec![
                    SecretRefExpectation::parse("inventory-db/password").expect("a ref")
                ],
                ..since()
            },
        ),
        row(
            TargetKind::HelmRelease,
            "helmrelease-not-yet-observed",
            "apps",
            "inventory",
            since(),
        ),
        row(
            TargetKind::Kustomization,
            "flux-kustomization-stale",
            "flux-system",
            "apps",
            committed("ghcr.io/acme/inventory:1.4.0"),
        ),
        row(
            TargetKind::Application,
            "argocd-synced-to-older-commit",
            "argocd",
            "inventory",
            committed("ghcr.io/acme/inventory:1.4.0"),
        ),
        row(
            TargetKind::Canary,
            "flagger-canary-succeeded-primary-never-updated",
            "test",
            "podinfo",
            image("ghcr.io/stefanprodan/podinfo:6.5.1"),
        ),
        row(
            TargetKind::KnativeService,
            "knative-service-latest-created-not-ready",
            "web",
            "hello",
            image("ghcr.io/acme/hello:1.1.0"),
        ),
    ]
}

fn judged(s: &NotLive) -> Report {
    let observed = common::story(s.story);
    let target = Target::new(s.kind, Some(s.namespace), s.name);
    common::judge(&observed, &s.change, &[target], s.namespace)
}

/// Every detail of a failing or unknown item and the next step of one report row.
fn said(report: &liveproof_evidence::TargetReport) -> String {
    report
        .evidence
        .iter()
        .filter(|e| matches!(e.status, Status::Fail | Status::Unknown))
        .map(|e| e.detail.clone())
        .chain(report.next_step.iter().map(ToString::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

const GENERIC: &str = "a GitOps controller, a pipeline";

#[test]
fn a_target_that_is_not_live_names_the_controller_that_has_not_acted() {
    let stories = stories();
    for spec in KINDS {
        assert!(
            stories.iter().any(|s| s.kind == spec.kind),
            "no not-live story names the actor of {}: add one here",
            spec.cli_name
        );
    }
    for s in &stories {
        let report = judged(s);
        assert_eq!(report.verdict, Verdict::NotLive, "{}: {report:#?}", s.story);
        let own = &report.targets[0];
        let actor = s.kind.actor();
        let text = said(own);
        assert!(
            text.contains(actor.name),
            "{} ({}) does not name {}:\n{text}",
            s.story,
            s.kind.cli_name(),
            actor.name
        );
        // Each workload it leads to names it too: its actor writes their templates.
        for w in &report.targets[1..] {
            let text = said(w);
            assert!(
                text.contains(actor.name) && !text.contains(GENERIC),
                "{}: {}/{}/{} (via {}) does not name {}:\n{text}",
                s.story,
                w.kind,
                w.namespace,
                w.name,
                s.kind.cli_name(),
                actor.name
            );
        }
    }
}

/// A Flagger primary that lacks the change: Flagger, which writes the primary, has not promoted
/// it — not "whatever applies the manifests (a GitOps controller, a pipeline)".
#[test]
fn a_flagger_primary_without_the_change_says_flagger_has_not_promoted() {
    let s = stories()
        .into_iter()
        .find(|s| s.kind == TargetKind::Canary)
        .expect("the Canary story");
    let report = judged(&s);
    let primary = report
        .targets
        .iter()
        .find(|t| t.name == "podinfo-primary")
        .expect("the primary");
    let spec = primary
        .evidence
        .iter()
        .find(|e| e.check == liveproof_evidence::Check::SpecReadback)
        .expect("spec_readback");
    assert_eq!(spec.status, Status::Fail);
    assert_eq!(
        spec.detail,
        "the Deployment itself does not carry the change: Flagger, which writes it, has not promoted the change"
    );
    let step = primary.next_step.as_ref().expect("a step").to_string();
    assert!(
        step.starts_with("Flagger has not promoted the change (canary/test/podinfo)"),
        "{step}"
    );
}

/// An owner that could not be judged has not been shown to fail: its workloads say whether it
/// acted is not established, never that it has not.
#[test]
fn an_owner_not_judged_is_not_said_to_have_failed() {
    let observed = common::story("flagger-canary-promoted-before-the-change-unproven");
    let target = Target::new(TargetKind::Canary, Some("test"), "podinfo");
    let report = common::judge(&observed, &since(), &[target], "test");
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    let step = report.targets[1]
        .next_step
        .as_ref()
        .expect("a step")
        .to_string();
    assert!(
        step.starts_with(
            "whether Flagger has promoted the change is not established (canary/test/podinfo)"
        ),
        "{step}"
    );
}

/// A Knative Service's own steps name it as the command line does (`ksvc`), never as core's
/// `service`, which is another object.
#[test]
fn a_knative_service_is_described_as_a_ksvc() {
    let s = stories()
        .into_iter()
        .find(|s| s.kind == TargetKind::KnativeService)
        .expect("the ksvc story");
    let report = judged(&s);
    let text = said(&report.targets[0]);
    assert!(
        text.contains("kubectl -n web describe ksvc hello"),
        "{text}"
    );
    assert!(!text.contains("describe service hello"), "{text}");
}
