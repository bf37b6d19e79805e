//! Which namespace each target is judged in.

use crate::{Observed, Target, TargetKind};

/// The namespace of a `-A` target found in none: it was looked for in every namespace.
pub const ALL_NAMESPACES: &str = "";

/// The targets to judge, each with its namespace filled in:
///
/// - a target that names its namespace keeps it;
/// - otherwise, without `-A`, it is in `default_ns`;
/// - with `-A` (`all_namespaces`), a workload target without a namespace becomes one target per
///   namespace where `observed` holds a workload of that kind and name (sorted by namespace);
///   when none holds one, its namespace is [`ALL_NAMESPACES`] (`""`): it was looked for in
///   every namespace, and the checks say so (the live gather marks `("", kind)` complete when
///   its all-namespaces LIST found nothing, so they say "does not exist").
///
/// Duplicates are removed; the order of first appearance is kept.
pub fn resolve_targets(
    observed: &Observed,
    targets: &[Target],
    default_ns: &str,
    all_namespaces: bool,
) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::with_capacity(targets.len());
    // A set beside the list: checking the list itself made 32,000 targets take seconds.
    let mut seen: std::collections::HashSet<Target> = std::collections::HashSet::new();
    let mut push = |t: Target| {
        if seen.insert(t.clone()) {
            out.push(t);
        }
    };
    for target in targets {
        if let Some(ns) = &target.namespace {
            push(Target::new(target.kind, Some(ns), &target.name));
            continue;
        }
        if !(all_namespaces && target.kind.is_workload()) {
            push(Target::new(target.kind, Some(default_ns), &target.name));
            continue;
        }
        let found = namespaces_holding(observed, target.kind, &target.name);
        if found.is_empty() {
            push(Target::new(target.kind, Some(ALL_NAMESPACES), &target.name));
        }
        for ns in found {
            push(Target::new(target.kind, Some(&ns), &target.name));
        }
    }
    out
}

/// The namespaces where `observed` holds a target of `kind` named `name`, sorted: a workload
/// or GitOps object of that name, or a Helm release's storage (`owner=helm`, `name=NAME`).
/// An object that names no namespace counts as in `default`, as kubectl applies it.
pub fn namespaces_holding(observed: &Observed, kind: TargetKind, name: &str) -> Vec<String> {
    let mut found = crate::kinds::rules(kind).namespaces_holding(observed, kind, name);
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(ns: &str, name: &str) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}}}
        })
    }

    #[test]
    fn fills_namespaces_and_expands_all_namespaces() {
        let mut observed = Observed::default();
        for (ns, name) in [("b", "web"), ("a", "web"), ("a", "other")] {
            observed
                .add_value(deployment(ns, name), "test")
                .expect("valid");
        }
        let targets = [
            Target::new(TargetKind::Deployment, None, "web"),
            Target::new(TargetKind::Deployment, Some("x"), "api"),
            Target::new(TargetKind::StatefulSet, None, "db"),
        ];
        let resolved = resolve_targets(&observed, &targets, "dflt", false);
        assert_eq!(
            resolved,
            [
                Target::new(TargetKind::Deployment, Some("dflt"), "web"),
                Target::new(TargetKind::Deployment, Some("x"), "api"),
                Target::new(TargetKind::StatefulSet, Some("dflt"), "db"),
            ]
        );
        let resolved = resolve_targets(&observed, &targets, "dflt", true);
        assert_eq!(
            resolved,
            [
                Target::new(TargetKind::Deployment, Some("a"), "web"),
                Target::new(TargetKind::Deployment, Some("b"), "web"),
                Target::new(TargetKind::Deployment, Some("x"), "api"),
                Target::new(TargetKind::StatefulSet, Some(ALL_NAMESPACES), "db"),
            ]
        );
    }

    #[test]
    fn namespaces_holding_finds_workloads_and_gitops_objects_by_kind_and_name() {
        let mut observed = Observed::default();
        for (ns, name) in [("b", "web"), ("a", "web"), ("a", "api")] {
            observed
                .add_value(deployment(ns, name), "test")
                .expect("valid");
        }
        let hr = serde_json::json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "web", "namespace": "flux-system"}
        });
        observed.add_value(hr, "test").expect("valid");
        let held = |kind, name| namespaces_holding(&observed, kind, name);
        assert_eq!(held(TargetKind::Deployment, "web"), ["a", "b"]);
        assert_eq!(held(TargetKind::HelmRelease, "web"), ["flux-system"]);
        assert!(held(TargetKind::StatefulSet, "web").is_empty());
        assert!(held(TargetKind::Release, "web").is_empty());
    }
}
