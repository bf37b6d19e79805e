//! One object, one verdict: a workload reached twice (given directly and reached through a
//! Helm or GitOps target, reached through two of them, or given twice) is judged once, against
//! every statement that applies to it, and reported once; and a workload a release installed
//! is never live on the release's tie when what the release installed fails the statement.
//! Pure: the judge on the corpus's seed-002 fix (release v35 deployed at 10:05:58, its pods
//! started after the change, its manifest with the secretKeyRef and a /healthz probe).

use liveproof_testkit::judge as common;

use liveproof_evidence::{
    Change, Check, ManifestExpectation, Report, Status, Target, TargetReport, Verdict,
};

use common::{judge, story as cluster};

const STORY: &str = "flux-chartversion-bumped-v35-live";

fn since_merge() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("RFC 3339")),
        ..Change::default()
    }
}

/// The change stated as text its installed manifest must contain.
fn expecting(text: &str) -> Change {
    let mut change = since_merge();
    change
        .manifest
        .push(ManifestExpectation::parse(text).expect("an expectation"));
    change
}

fn verify(change: &Change, given: &[&str]) -> Report {
    let targets: Vec<Target> = given
        .iter()
        .map(|t| Target::parse(t).expect("a target"))
        .collect();
    judge(&cluster(STORY), change, &targets, "apps")
}

/// Every report of `kind` apps/inventory: one, or the test says how many.
fn only<'a>(report: &'a Report, kind: &str) -> &'a TargetReport {
    let found: Vec<&TargetReport> = report
        .targets
        .iter()
        .filter(|t| t.kind == kind && t.namespace == "apps" && t.name == "inventory")
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{kind} apps/inventory reported {} times: {:?}",
        found.len(),
        found
            .iter()
            .map(|t| (t.via.clone(), t.verdict))
            .collect::<Vec<_>>()
    );
    found[0]
}

fn evidence(report: &TargetReport, check: Check) -> &liveproof_evidence::Evidence {
    report
        .evidence
        .iter()
        .find(|e| e.check == check)
        .unwrap_or_else(|| panic!("{} has no {check}", report.name))
}

/// The first case: the release was deployed after the change but its manifest lacks
/// the stated text. Its Deployment was called live ("nothing given") under a release that is
/// not; it is not live, read from the release's manifest, as it is when given alone.
#[test]
fn a_workload_of_a_release_that_fails_the_statement_is_not_live() {
    let report = verify(&expecting("path: /readyz"), &["helmrelease/inventory"]);
    let hr = only(&report, "HelmRelease");
    assert_eq!(hr.verdict, Verdict::NotLive);
    assert_eq!(
        evidence(hr, Check::ManifestContains).status,
        Status::Fail,
        "{hr:?}"
    );
    let deploy = only(&report, "Deployment");
    assert_eq!(deploy.verdict, Verdict::NotLive);
    let spec = evidence(deploy, Check::SpecReadback);
    assert_eq!(spec.status, Status::Fail, "{spec:?}");
    assert_eq!(
        spec.source(),
        "apps/Secret/sh.helm.release.v1.inventory.v35 .manifest",
        "read from the release's manifest"
    );
    assert!(spec.observed.contains("manifest_contains"), "{spec:?}");
    assert!(!spec.expected.contains("nothing given"), "{spec:?}");

    let alone = verify(&expecting("path: /readyz"), &["deployment/inventory"]);
    assert_eq!(only(&alone, "Deployment").verdict, Verdict::NotLive);
}

/// A release whose statement holds still ties its workloads: live, as before.
#[test]
fn a_workload_of_a_release_that_carries_the_statement_stays_live() {
    let report = verify(&expecting("secretKeyRef"), &["helmrelease/inventory"]);
    assert_eq!(report.verdict, Verdict::Live);
    let deploy = only(&report, "Deployment");
    assert_eq!(deploy.verdict, Verdict::Live);
    assert_eq!(evidence(deploy, Check::SpecReadback).status, Status::Skip);
}

/// The second case: both targets with `--expect`. One Deployment, judged against the
/// statement it was given with directly (its template lacks the text), shown under the
/// HelmRelease whichever order they were given in.
#[test]
fn a_workload_given_directly_and_reached_is_judged_once_against_its_statement() {
    for given in [
        ["helmrelease/inventory", "deployment/inventory"],
        ["deployment/inventory", "helmrelease/inventory"],
    ] {
        let report = verify(&expecting("path: /readyz"), &given);
        let deploy = only(&report, "Deployment");
        assert_eq!(deploy.verdict, Verdict::NotLive, "{given:?}");
        assert_eq!(deploy.via.as_deref(), Some("helmrelease/apps/inventory"));
        let spec = evidence(deploy, Check::SpecReadback);
        assert_eq!(spec.status, Status::Fail);
        assert_eq!(
            spec.source(),
            "apps/Deployment/inventory .spec.template.spec.containers",
            "held to its own template, as when given alone"
        );
        assert_eq!(report.verdict, Verdict::NotLive);
        let kinds: Vec<&str> = report.targets.iter().map(|t| t.kind.name()).collect();
        assert_eq!(kinds, ["HelmRelease", "Deployment"], "{given:?}");
    }
}

/// Both targets and no statement beyond the time: the release's tie is the statement that
/// applies to the Deployment, given directly or not. It was shown live and unproven in one
/// table, and the whole answer was unproven; it is live once, and so is the answer.
#[test]
fn a_workload_given_directly_without_a_statement_takes_the_release_tie() {
    let report = verify(
        &since_merge(),
        &["helmrelease/inventory", "deployment/inventory"],
    );
    let deploy = only(&report, "Deployment");
    assert_eq!(deploy.verdict, Verdict::Live);
    assert_eq!(
        deploy.live_since.as_deref(),
        Some("2026-07-12T10:06:58Z"),
        "{deploy:?}"
    );
    assert_eq!(report.verdict, Verdict::Live);

    // Alone, nothing ties it: unproven, as before.
    let alone = verify(&since_merge(), &["deployment/inventory"]);
    assert_eq!(only(&alone, "Deployment").verdict, Verdict::Unproven);
}

/// Reached through two targets (a HelmRelease and the release it installs): judged once,
/// shown once under the first, its `via` naming both; each target reads that one verdict.
#[test]
fn a_workload_reached_through_two_targets_is_reported_once() {
    let report = verify(
        &expecting("secretKeyRef"),
        &["helmrelease/inventory", "release/inventory"],
    );
    let deploy = only(&report, "Deployment");
    assert_eq!(
        deploy.via.as_deref(),
        Some("helmrelease/apps/inventory, release/apps/inventory")
    );
    assert_eq!(deploy.verdict, Verdict::Live);
    assert_eq!(only(&report, "HelmRelease").verdict, Verdict::Live);
    assert_eq!(only(&report, "Release").verdict, Verdict::Live);
    let kinds: Vec<&str> = report.targets.iter().map(|t| t.kind.name()).collect();
    assert_eq!(kinds, ["HelmRelease", "Deployment", "Release"]);

    // The second target's verdict follows the one report: a release that fails the statement
    // makes both not live, and the Deployment not live once.
    let report = verify(
        &expecting("path: /readyz"),
        &["helmrelease/inventory", "release/inventory"],
    );
    assert_eq!(only(&report, "Deployment").verdict, Verdict::NotLive);
    assert_eq!(only(&report, "Release").verdict, Verdict::NotLive);
}

/// Given twice (as the judge's callers may pass them): reported once.
#[test]
fn a_target_given_twice_is_reported_once() {
    for given in [
        ["helmrelease/inventory", "apps/helmrelease/inventory"],
        ["deployment/inventory", "apps/deployment/inventory"],
    ] {
        let report = verify(&expecting("secretKeyRef"), &given);
        for t in &report.targets {
            assert_eq!(
                report
                    .targets
                    .iter()
                    .filter(|o| o.kind == t.kind && o.name == t.name && o.namespace == t.namespace)
                    .count(),
                1,
                "{given:?}: {} {} twice",
                t.kind.name(),
                t.name
            );
        }
    }
}
