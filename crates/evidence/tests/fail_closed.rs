//! Missing evidence is `unknown`, never a pass: every check accounts for every serving pod and
//! every container it declares, not only for the statuses that happen to be present.

mod common;

use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::{
    judge, Change, Check, ExpectedImage, Observed, Report, Status, Target, TargetKind, Verdict,
};

fn inventory() -> Target {
    Target::new(TargetKind::Deployment, Some("apps"), "inventory")
}

fn change() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        images: vec![ExpectedImage::parse("ghcr.io/acme/inventory:1.4.0").expect("image")],
        digests: DigestPolicy::Off,
        ..Change::default()
    }
}

fn verify(observed: &Observed) -> Report {
    judge(observed, &change(), &[inventory()], "default")
}

fn status(report: &Report, check: Check) -> Status {
    report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == check)
        .map(|e| e.status)
        .unwrap_or_else(|| panic!("{check} in {report:#?}"))
}

/// The story's Ready pods (all on the current revision, started after the change).
fn ready_pods(observed: &mut Observed) -> Vec<&mut k8s_openapi::api::core::v1::Pod> {
    observed
        .pods
        .iter_mut()
        .map(std::sync::Arc::make_mut)
        .filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
        .collect()
}

#[test]
fn the_story_is_live_to_begin_with() {
    let observed = common::story("gitops-reconciled-new-tag-rolled-out");
    assert_eq!(verify(&observed).verdict, Verdict::Live);
}

#[test]
fn a_ready_pod_without_container_statuses_is_unknown_not_a_pass() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    let pods = ready_pods(&mut observed);
    assert!(pods.len() > 1);
    if let Some(status) = pods.into_iter().next().and_then(|p| p.status.as_mut()) {
        status.container_statuses = None;
    }
    let report = verify(&observed);
    assert_eq!(
        status(&report, Check::PodRestarted),
        Status::Unknown,
        "{report:#?}"
    );
    assert_eq!(report.verdict, Verdict::Unproven);
}

#[test]
fn a_container_with_no_status_entry_is_unknown_not_a_pass() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    let pods = ready_pods(&mut observed);
    // A second container the pod runs, whose status the dump lacks.
    if let Some(spec) = pods.into_iter().next().and_then(|p| p.spec.as_mut()) {
        let mut sidecar = spec.containers[0].clone();
        sidecar.name = "proxy".into();
        spec.containers.push(sidecar);
    }
    let report = verify(&observed);
    let restarted = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::PodRestarted)
        .expect("pod_restarted");
    assert_eq!(restarted.status, Status::Unknown, "{report:#?}");
    assert!(restarted.detail.contains("proxy"), "{}", restarted.detail);
    assert_eq!(report.verdict, Verdict::Unproven);
}

#[test]
fn a_digest_never_read_is_unknown_not_a_match() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    // The tag resolves to exactly what the pods record: every row is current.
    observed.tags.insert(
        "ghcr.io/acme/inventory:1.4.0".into(),
        Ok(liveproof_evidence::digest::ResolvedTag {
            digest: "sha256:2dc7ac3690538cfc3066f742c59f6b3ad37d711d3c2dd2b2da532bf6cd873f35"
                .into(),
            platforms: Vec::new(),
        }),
    );
    let rows =
        liveproof_evidence::digest_rows(&observed, &inventory(), "apps", DigestPolicy::AllTags);
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| r.verdict == liveproof_evidence::RowVerdict::Current),
        "{rows:#?}"
    );
    let pods = ready_pods(&mut observed);
    if let Some(status) = pods.into_iter().next().and_then(|p| p.status.as_mut()) {
        status.container_statuses = None;
    }
    let rows =
        liveproof_evidence::digest_rows(&observed, &inventory(), "apps", DigestPolicy::AllTags);
    assert!(
        rows.iter()
            .all(|r| r.verdict != liveproof_evidence::RowVerdict::Current),
        "a pod whose digest was not read cannot make the workload current: {rows:#?}"
    );
}

/// A container whose image is no reference a runtime could pull is never left out of the
/// digest check (a row skipped is a workload that looks current): its row is unknown.
#[test]
fn an_image_no_runtime_could_pull_is_an_unknown_digest_row_not_a_skipped_one() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    let deployment = std::sync::Arc::make_mut(&mut observed.deployments[0]);
    let containers = deployment
        .spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
        .map(|s| &mut s.containers)
        .expect("a pod template");
    containers[0].image = Some("ghcr.io/Acme/Inventory:1.4.0".into());
    let rows =
        liveproof_evidence::digest_rows(&observed, &inventory(), "apps", DigestPolicy::AllTags);
    assert!(
        rows.iter()
            .any(|r| r.image == "ghcr.io/Acme/Inventory:1.4.0"
                && r.verdict == liveproof_evidence::RowVerdict::Unknown),
        "{rows:#?}"
    );
}
