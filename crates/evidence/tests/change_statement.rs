//! Issue 10: no expectation is ever silently ignored, and a workload is live only when
//! something states what changed in it — a flag, `-f` manifests, a snapshot, or the Helm/GitOps
//! evidence of the object that deployed it.

use liveproof_testkit::judge as common;

use liveproof_evidence::digest::{Platform, ResolvedTag};
use liveproof_evidence::{
    judge, Change, Check, DeclaredTemplate, Evidence, ExpectedImage, ManifestExpectation, Observed,
    Report, Status, Target, TargetKind, Verdict,
};

const INDEX: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
/// What every ledger pod of the story records in its imageID.
const RUNNING: &str = "sha256:b52deb99e5a319565f6483c707c0a010dadf2a9d88b4e44d82d2fe8b00c96c95";
const OTHER: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

fn since() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        ..Change::default()
    }
}

fn ledger() -> Target {
    Target::new(TargetKind::StatefulSet, Some("payments"), "ledger")
}

fn verify_ledger(observed: &Observed, change: &Change) -> Report {
    judge(observed, change, &[ledger()], "default")
}

fn evidence(report: &Report, check: Check) -> &Evidence {
    report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == check)
        .unwrap_or_else(|| panic!("{check} in {report:#?}"))
}

fn with_images(images: &[&str]) -> Change {
    Change {
        images: images
            .iter()
            .map(|i| ExpectedImage::parse(i).expect("image"))
            .collect(),
        ..since()
    }
}

#[test]
fn a_workload_with_nothing_stated_is_unproven_with_the_ways_to_state_it() {
    let observed = common::story("statefulset-rolled-out");
    let report = verify_ledger(&observed, &since());
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    assert_eq!(
        evidence(&report, Check::SpecReadback).status,
        Status::Unknown
    );
    let next = report.targets[0]
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    for way in [
        "--image",
        "-f MANIFESTS",
        "--expect-env",
        "--expect-secret-ref",
        "--expect TEXT",
        "GitOps/Helm",
    ] {
        assert!(next.contains(way), "{way} missing from {next}");
    }
    // The same rollout, with the change stated, is live.
    let report = verify_ledger(&observed, &with_images(&["ghcr.io/acme/ledger:3.2.0"]));
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
}

#[test]
fn a_snapshot_states_the_change() {
    let observed = common::story("statefulset-rolled-out");
    let change = Change {
        stated_by: Some("the snapshot".into()),
        ..since()
    };
    let report = verify_ledger(&observed, &change);
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    assert_eq!(evidence(&report, Check::SpecReadback).status, Status::Skip);
}

#[test]
fn a_gitops_revision_of_the_commit_states_the_change_for_its_workloads() {
    let observed = common::story("flux-kustomization-applied-live");
    let target = Target::new(TargetKind::Kustomization, Some("flux-system"), "apps");
    let with_commit = Change {
        commit: Some("7453f92".into()),
        ..since()
    };
    let report = judge(
        &observed,
        &with_commit,
        std::slice::from_ref(&target),
        "default",
    );
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    // Without --commit the Kustomization's revision is not checked: nothing ties the template.
    let report = judge(&observed, &since(), &[target], "default");
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    let workload = report
        .targets
        .iter()
        .find(|t| t.kind == "Deployment")
        .expect("followed");
    assert!(workload
        .evidence
        .iter()
        .any(|e| e.check == Check::SpecReadback && e.status == Status::Unknown));
}

#[test]
fn expect_on_a_workload_is_held_to_its_pod_template() {
    let observed = common::story("statefulset-rolled-out");
    let expect = |given: &str| Change {
        manifest: vec![ManifestExpectation::parse(given).expect("expectation")],
        ..since()
    };
    let report = verify_ledger(&observed, &expect("image: ghcr.io/acme/ledger:3.2.0"));
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    assert_eq!(evidence(&report, Check::SpecReadback).status, Status::Pass);
    let report = verify_ledger(&observed, &expect(r"re:image: \S+:3\.1\.4"));
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
    let spec = evidence(&report, Check::SpecReadback);
    assert_eq!(spec.status, Status::Fail);
    assert!(
        spec.observed.contains("not in the pod template"),
        "{spec:?}"
    );
}

#[test]
fn declared_templates_are_compared_field_by_field() {
    let observed = common::story("statefulset-rolled-out");
    let declare = |image: &str| Change {
        declared: vec![DeclaredTemplate {
            target: ledger(),
            template: serde_json::json!({"metadata": {"labels": {"app": "ledger"}},
                "spec": {"containers": [{"name": "ledger", "image": image}]}}),
            source: "k8s/ledger.yaml".into(),
            given: "k8s/".into(),
            repo_path: None,
        }],
        ..since()
    };
    let report = verify_ledger(&observed, &declare("ghcr.io/acme/ledger:3.2.0"));
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    let report = verify_ledger(&observed, &declare("ghcr.io/acme/ledger:3.3.0"));
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
    let spec = evidence(&report, Check::SpecReadback);
    assert!(
        spec.observed
            .contains(".spec.template.spec.containers[ledger].image = ghcr.io/acme/ledger:3.2.0"),
        "{spec:?}"
    );
    assert!(
        spec.expected.contains("ghcr.io/acme/ledger:3.3.0")
            && spec.expected.contains("k8s/ledger.yaml"),
        "{spec:?}"
    );
}

/// The ledger image as an index whose linux/amd64 entry is what the pods run.
fn with_index(observed: &mut Observed, index: &str, entry: &str) {
    observed.tags.insert(
        format!("ghcr.io/acme/ledger@{index}"),
        Ok(ResolvedTag {
            digest: index.to_string(),
            platforms: vec![(
                Platform {
                    os: "linux".into(),
                    architecture: "amd64".into(),
                    variant: None,
                },
                entry.to_string(),
            )],
        }),
    );
}

#[test]
fn an_image_digest_matches_the_running_digest_index_or_platform() {
    let mut observed = common::story("statefulset-rolled-out");
    // The digest the pods record (a platform manifest's) given directly.
    let report = verify_ledger(
        &observed,
        &with_images(&[&format!("ghcr.io/acme/ledger@{RUNNING}")]),
    );
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    assert_eq!(evidence(&report, Check::PodSpec).status, Status::Pass);
    // The index digest (what a build prints) whose platform entry the pods run, with its tag.
    with_index(&mut observed, INDEX, RUNNING);
    let report = verify_ledger(
        &observed,
        &with_images(&[&format!("ghcr.io/acme/ledger:3.2.0@{INDEX}")]),
    );
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
    // Another index, whose entries the pods do not run: not live, from the pods.
    with_index(&mut observed, OTHER, INDEX);
    let report = verify_ledger(
        &observed,
        &with_images(&[&format!("ghcr.io/acme/ledger@{OTHER}")]),
    );
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
    // The template names a tag: it says nothing of the digest, so it is no ✓ for it either
    // way; the pods' recorded digests decide.
    let spec = evidence(&report, Check::SpecReadback);
    assert_eq!(spec.status, Status::Skip, "{spec:?}");
    assert!(
        spec.observed.contains("says nothing of digest") && spec.detail.contains("pod_spec"),
        "{spec:?}"
    );
    assert_eq!(evidence(&report, Check::PodSpec).status, Status::Fail);
    // A digest the registry was not asked about, that the pods do not record: unknown, not pass.
    let fresh = common::story("statefulset-rolled-out");
    let report = verify_ledger(
        &fresh,
        &with_images(&[&format!("ghcr.io/acme/ledger@{OTHER}")]),
    );
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    assert_eq!(evidence(&report, Check::PodSpec).status, Status::Unknown);
    // The right digest under another tag is not the image asked for.
    let report = verify_ledger(
        &fresh,
        &with_images(&[&format!("ghcr.io/acme/ledger:3.1.4@{RUNNING}")]),
    );
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
}

/// A template pinned to a platform entry, with `--image` naming the index: whether the entry is
/// the index's is the registry's to say. Not asked (`--no-registry`) or not answering, the
/// template is unknown, never a failure that would roll back the very image asked for.
#[test]
fn a_template_pinned_to_a_platform_entry_waits_for_the_registry_to_say_whose() {
    let mut observed = common::story("statefulset-rolled-out");
    let sts = std::sync::Arc::make_mut(
        &mut observed
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::StatefulSet>()[0],
    );
    let containers = &mut sts
        .spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
        .expect("a pod spec")
        .containers;
    containers[0].image = Some(format!("ghcr.io/acme/ledger@{RUNNING}"));
    let change = with_images(&[&format!("ghcr.io/acme/ledger@{INDEX}")]);
    let spec = |observed: &Observed| {
        evidence(&verify_ledger(observed, &change), Check::SpecReadback).clone()
    };
    let unasked = spec(&observed);
    assert_eq!(unasked.status, Status::Unknown, "{unasked:?}");
    assert!(unasked.observed.contains("registry"), "{unasked:?}");
    let mut refused = observed.clone();
    refused.tags.insert(
        format!("ghcr.io/acme/ledger@{INDEX}"),
        Err("401 Unauthorized".into()),
    );
    assert_eq!(spec(&refused).status, Status::Unknown);
    let mut resolved = observed.clone();
    with_index(&mut resolved, INDEX, RUNNING);
    assert_eq!(spec(&resolved).status, Status::Pass);
    let mut another = observed;
    with_index(&mut another, INDEX, OTHER);
    assert_eq!(spec(&another).status, Status::Fail);
}

#[test]
fn workload_flags_on_a_gitops_target_hold_the_workloads_it_leads_to() {
    let observed = common::story("flux-kustomization-applied-live");
    let target = Target::new(TargetKind::Kustomization, Some("flux-system"), "apps");
    for change in [
        Change {
            commit: Some("7453f92".into()),
            ..with_images(&["ghcr.io/acme/inventory:9.9.9"])
        },
        Change {
            commit: Some("7453f92".into()),
            env: vec!["NOT_SET_ANYWHERE".into()],
            ..since()
        },
    ] {
        let report = judge(&observed, &change, std::slice::from_ref(&target), "default");
        assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
        let workload = report
            .targets
            .iter()
            .find(|t| t.kind == "Deployment")
            .expect("followed");
        assert!(
            workload
                .evidence
                .iter()
                .any(|e| e.check == Check::SpecReadback && e.status == Status::Fail),
            "{workload:#?}"
        );
    }
}

#[test]
fn a_template_pinned_to_a_platform_entry_of_the_given_index_carries_it() {
    let mut observed = common::story("statefulset-rolled-out");
    let container = std::sync::Arc::make_mut(
        &mut observed
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::StatefulSet>()[0],
    )
    .spec
    .as_mut()
    .and_then(|s| s.template.spec.as_mut())
    .map(|s| &mut s.containers[0])
    .expect("a container");
    container.image = Some(format!("ghcr.io/acme/ledger@{RUNNING}"));
    with_index(&mut observed, INDEX, RUNNING);
    with_index(&mut observed, OTHER, INDEX);
    let report = verify_ledger(
        &observed,
        &with_images(&[&format!("ghcr.io/acme/ledger@{INDEX}")]),
    );
    assert_eq!(
        evidence(&report, Check::SpecReadback).status,
        Status::Pass,
        "{report:#?}"
    );
    let report = verify_ledger(
        &observed,
        &with_images(&[&format!("ghcr.io/acme/ledger@{OTHER}")]),
    );
    assert_eq!(
        evidence(&report, Check::SpecReadback).status,
        Status::Fail,
        "{report:#?}"
    );
}
