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

/// A GitOps object leads to the Rollouts it deployed as it leads to Deployments: by kind *and*
/// API group, from an Argo CD Application's resource list and a Kustomization's inventory. A
/// `Rollout` of another group is not Argo's.
#[test]
fn gitops_objects_lead_to_their_rollouts_by_kind_and_group() {
    let mut observed = Observed::default();
    observed
        .add_value(
            json!({
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": {"name": "shop", "namespace": "argocd"},
                "spec": {"destination": {"namespace": "shop"}},
                "status": {"resources": [
                    {"group": "argoproj.io", "kind": "Rollout", "name": "checkout"},
                    {"group": "apps", "kind": "Deployment", "name": "cart"},
                    {"group": "example.io", "kind": "Rollout", "name": "other"},
                    {"kind": "Service", "name": "checkout"}
                ]}
            }),
            "test",
        )
        .expect("an Application");
    observed
        .add_value(
            json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                "kind": "Kustomization",
                "metadata": {"name": "shop", "namespace": "flux-system"},
                "status": {"inventory": {"entries": [
                    {"id": "shop_checkout_argoproj.io_Rollout", "v": "v1alpha1"},
                    {"id": "shop_other_example.io_Rollout", "v": "v1"}
                ]}}
            }),
            "test",
        )
        .expect("a Kustomization");
    let app = Target::new(TargetKind::Application, Some("argocd"), "shop");
    assert_eq!(
        liveproof_evidence::followed_workloads(&observed, &app, "argocd"),
        [
            Target::new(TargetKind::Deployment, Some("shop"), "cart"),
            Target::new(TargetKind::Rollout, Some("shop"), "checkout"),
        ]
    );
    let ks = Target::new(TargetKind::Kustomization, Some("flux-system"), "shop");
    assert_eq!(
        liveproof_evidence::followed_workloads(&observed, &ks, "flux-system"),
        [Target::new(TargetKind::Rollout, Some("shop"), "checkout")]
    );
}
