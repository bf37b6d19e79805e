//! An Argo Rollout whose template lives in another object (`spec.workloadRef`) is there: it is
//! unproven (the reference is not followed), never "not found" and so never not_live.

use liveproof_evidence::{judge, Change, Observed, Status, Target, TargetKind, Verdict};
use serde_json::json;

#[test]
fn a_rollout_with_a_workload_ref_is_unproven_not_absent() {
    let mut observed = Observed::default();
    observed
        .add_value(
            json!({
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "metadata": {"name": "checkout", "namespace": "shop", "generation": 2},
                "spec": {
                    "replicas": 3,
                    "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout"},
                    "strategy": {"canary": {"steps": [{"setWeight": 50}]}}
                },
                "status": {"observedGeneration": "2", "phase": "Healthy"}
            }),
            "test",
        )
        .expect("a Rollout with a workloadRef is a valid object");
    // Listed in full: an object that is not there would be a failure.
    observed.mark_complete("shop", liveproof_evidence::ResourceKind::Rollout);
    let target = [Target::new(TargetKind::Rollout, Some("shop"), "checkout")];
    let report = judge(&observed, &Change::default(), &target, "shop");
    let t = &report.targets[0];
    assert_eq!(t.verdict, Verdict::Unproven, "{t:#?}");
    assert_eq!(t.evidence[0].status, Status::Unknown);
    assert!(t.evidence[0].detail.contains("workloadRef"), "{t:#?}");
}
