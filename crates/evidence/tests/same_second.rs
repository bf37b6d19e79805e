//! Issue 20, point 1: a change applied in the same second as its change time. Start times are
//! recorded to the second; a pod of the current revision whose template shows the stated
//! change and that started in the change's own second counts as after it. A tie nothing
//! orders is unknown — never fail (exit 1 rolls a healthy deploy back), never pass.

use liveproof_testkit::judge as common;

use liveproof_evidence::snapshot::template_hash;
use liveproof_evidence::{
    judge, Change, Check, Evidence, ExpectedImage, Observed, Report, Status, Target, TargetKind,
    Verdict,
};

/// The first of the story's three new pods started at 10:06:25 (the others 10:06:41, 10:06:58).
const FIRST_START: &str = "2026-07-12T10:06:25Z";

fn inventory() -> Target {
    Target::new(TargetKind::Deployment, Some("apps"), "inventory")
}

fn rolled_out() -> Observed {
    common::story("expect-env-present-rolled-out")
}

fn at(since: &str) -> Change {
    Change {
        since: Some(since.parse().expect("a time")),
        ..Change::default()
    }
}

fn with_image(since: &str, image: &str) -> Change {
    Change {
        images: vec![ExpectedImage::parse(image).expect("image")],
        ..at(since)
    }
}

fn verify(observed: &Observed, change: &Change) -> Report {
    judge(observed, change, &[inventory()], "default")
}

fn evidence(report: &Report, check: Check) -> &Evidence {
    report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == check)
        .unwrap_or_else(|| panic!("{check} in {report:#?}"))
}

#[test]
fn a_start_in_the_changes_second_counts_as_after_when_the_template_shows_the_change() {
    let observed = rolled_out();
    for since in [FIRST_START, "2026-07-12T10:06:25.730Z"] {
        let report = verify(
            &observed,
            &with_image(since, "ghcr.io/acme/inventory:1.4.0"),
        );
        assert_eq!(
            report.verdict,
            Verdict::Live,
            "--since {since}: {report:#?}"
        );
        let restarted = evidence(&report, Check::PodRestarted);
        assert_eq!(restarted.status, Status::Pass, "{restarted:?}");
        assert!(
            restarted
                .detail
                .contains("1 started in the change's own second")
                && restarted.detail.contains("current revision"),
            "the evidence says why the tie counts: {restarted:?}"
        );
    }
}

#[test]
fn a_start_in_an_earlier_second_still_fails() {
    let observed = rolled_out();
    let report = verify(
        &observed,
        &with_image("2026-07-12T10:06:26Z", "ghcr.io/acme/inventory:1.4.0"),
    );
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
    let restarted = evidence(&report, Check::PodRestarted);
    assert_eq!(restarted.status, Status::Fail, "{restarted:?}");
    assert_eq!(restarted.observed, format!("started {FIRST_START}"));
}

#[test]
fn a_tie_nothing_in_the_template_orders_is_unknown_with_how_to_give_a_finer_time() {
    let observed = rolled_out();
    // A restart-only or ConfigMap change: the template shows nothing of it.
    let change = Change {
        stated_by: Some("the restart".into()),
        ..at(FIRST_START)
    };
    let report = verify(&observed, &change);
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    let restarted = evidence(&report, Check::PodRestarted);
    assert_eq!(restarted.status, Status::Unknown, "{restarted:?}");
    assert!(
        restarted.observed.contains("in the change's own second")
            && restarted
                .detail
                .contains("nothing in its template shows the change"),
        "{restarted:?}"
    );
    let next = report.targets[0]
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(next.contains("date -u +%FT%T.%3NZ"), "{next}");
}

#[test]
fn a_template_that_differs_from_the_snapshots_shows_the_change() {
    let observed = rolled_out();
    let prior = |hash: String| Change {
        stated_by: Some("the snapshot of 3f2c1ab".into()),
        prior_templates: vec![(inventory(), hash)],
        ..at("2026-07-12T10:06:25.412Z")
    };
    let report = verify(&observed, &prior("an older template's hash".into()));
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    assert!(
        evidence(&report, Check::PodRestarted)
            .detail
            .contains("differs from the one the snapshot recorded"),
        "{report:#?}"
    );
    // The same template as before: nothing shows the change, so the tie stays unknown.
    let template = observed
        .workloads
        .of::<k8s_openapi::api::apps::v1::Deployment>()
        .iter()
        .find(|d| d.metadata.name.as_deref() == Some("inventory"))
        .and_then(|d| d.spec.as_ref())
        .map(|s| serde_json::to_value(&s.template).expect("json"))
        .expect("the story's Deployment");
    let report = verify(&observed, &prior(template_hash(&template)));
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    assert_eq!(
        evidence(&report, Check::PodRestarted).status,
        Status::Unknown
    );
}

#[test]
fn conditions_in_the_changes_second_are_unknown_not_failed() {
    // helm-controller's Ready and Released changed at 14:22:06 on 8 July in this story.
    let observed = common::story("flux-chartversion-not-bumped");
    let target = Target::new(TargetKind::HelmRelease, Some("apps"), "inventory");
    let at_second = judge(
        &observed,
        &at("2026-07-08T14:22:06Z"),
        std::slice::from_ref(&target),
        "default",
    );
    let fresh = at_second.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ConditionFresh)
        .expect("condition_fresh");
    assert_eq!(fresh.status, Status::Unknown, "{fresh:?}");
    assert!(fresh.detail.contains("own second"), "{fresh:?}");
    let a_second_later = judge(&observed, &at("2026-07-08T14:22:07Z"), &[target], "default");
    assert_eq!(
        a_second_later.targets[0]
            .evidence
            .iter()
            .find(|e| e.check == Check::ConditionFresh)
            .map(|e| e.status),
        Some(Status::Fail)
    );
}
