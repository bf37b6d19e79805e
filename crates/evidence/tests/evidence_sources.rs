//! Where each piece of evidence says it was read: a person follows `source` to check it.

use liveproof_testkit::judge as common;

use liveproof_evidence::{judge, Change, Check, Observed, Status, Target, TargetKind};

use common::story as observed;

#[test]
fn pod_restarted_names_the_pod_that_started_earliest() {
    let observed = observed("gitops-reconciled-new-tag-rolled-out");
    let change = Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        ..Change::default()
    };
    let target = Target::new(TargetKind::Deployment, Some("apps"), "inventory");
    let report = judge(&observed, &change, &[target], "default");
    let restarted = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::PodRestarted)
        .expect("pod_restarted");
    assert_eq!(restarted.status, Status::Pass);
    assert!(
        restarted.observed.contains("2026-07-12T10:06:25Z"),
        "{restarted:?}"
    );
    // The pod that started at 10:06:25 is -tqtkw: the source names it, not another.
    assert_eq!(
        restarted.source_ref.name, "inventory-4dxbdm5glx-tqtkw",
        "{restarted:?}"
    );
}

#[test]
fn a_workload_missing_its_selector_is_refused_by_name() {
    let mut observed = Observed::default();
    let broken = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "inventory", "namespace": "apps"},
        "spec": {"replicas": 3, "template": {"spec": {"containers": []}}}
    });
    let err = observed
        .add_value(broken, "dump.yaml")
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("Deployment/inventory") && err.contains("spec.selector"),
        "{err}"
    );
}
