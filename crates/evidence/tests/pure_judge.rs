//! The judge reads nothing but the snapshot: no clock, no process, no file. The same snapshot
//! judged twice, a second apart, gives the same report byte for byte; Helm storage the
//! gatherer did not decode is unreadable, never skipped.

use liveproof_testkit::judge as common;

use liveproof_evidence::{
    judge, Change, Check, ManifestExpectation, Observed, Status, Target, TargetKind,
};

fn change() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        chart_version: Some("0.4.3".into()),
        manifest: vec![ManifestExpectation::parse("secretKeyRef").expect("expectation")],
        ..Change::default()
    }
}

fn target() -> Target {
    Target::new(TargetKind::HelmRelease, Some("apps"), "inventory")
}

#[test]
fn one_snapshot_judged_twice_across_a_sleep_gives_the_same_report() {
    let observed = common::story("flux-chartversion-bumped-v35-live");
    let first = judge(&observed, &change(), &[target()], "apps");
    // Longer than the one-second resolution every timestamp in a report has.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = judge(&observed, &change(), &[target()], "apps");
    let json = |r| serde_json::to_string_pretty(r).expect("json");
    assert_eq!(json(&first), json(&second));
    // And the report judged something: the release was read.
    let release = first.targets.iter().flat_map(|t| &t.evidence);
    let manifest = release
        .clone()
        .find(|e| e.check == Check::ManifestContains)
        .expect("manifest_contains");
    assert_eq!(manifest.status, Status::Pass, "{first:#?}");
}

#[test]
fn release_storage_the_gatherer_did_not_decode_is_unreadable_not_absent() {
    let decoded = common::story("flux-chartversion-bumped-v35-live");
    let undecoded = Observed {
        releases: Default::default(),
        ..decoded
    };
    let report = judge(&undecoded, &change(), &[target()], "apps");
    let revision = report
        .targets
        .iter()
        .flat_map(|t| &t.evidence)
        .find(|e| e.check == Check::ReleaseRevision)
        .expect("release_revision");
    assert_eq!(revision.status, Status::Unknown, "{report:#?}");
    assert!(
        revision.detail.contains("was not decoded"),
        "{}",
        revision.detail
    );
    assert_ne!(report.verdict, liveproof_evidence::Verdict::Live);
}
