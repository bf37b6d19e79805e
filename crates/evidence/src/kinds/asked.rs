//! What the gather, `verify`'s flag checks, `rollback` and the command line's help ask of a
//! target's kind, each answered by the kind's `KindRules` (`rules.rs`): what to
//! read for it, how its names are listed, which change flags it takes, what a rollback puts
//! back. Outside `kinds/`, nothing matches on a target kind to know these.

pub use super::answers::{Accepts, ExpectOn, Lister, ReadRequest, Restore, HELM_STORAGE};
use crate::{Observed, ResourceKind, Target, TargetKind, KINDS};

/// The reads `target` leads to, given what has been read so far (`observed`): its own object
/// or storage first, then what that object references once it is there. Empty for a workload
/// (the workload plan reads those).
pub fn reads(observed: &Observed, target: &Target, default_ns: &str) -> Vec<ReadRequest> {
    let ns = target.namespace_or(default_ns);
    super::rules(target.kind).reads(observed, target, ns)
}

/// Whether a change to an object of `resource` may change which workloads a Helm or GitOps
/// target leads to: a `--wait` reads those again when one changes.
pub fn is_source(resource: ResourceKind) -> bool {
    KINDS
        .iter()
        .any(|k| super::rules(k.kind).leads_through().contains(&resource))
}

/// How names of `kind` are listed when a target of it is not found.
pub fn lister(kind: TargetKind) -> Lister {
    super::rules(kind).lister()
}

/// The change flags `kind` can be held to.
pub fn accepts(kind: TargetKind) -> Accepts {
    super::rules(kind).accepts()
}

/// What `rollback` puts back for a failed target of `kind`.
pub fn restore(kind: TargetKind) -> Restore {
    super::rules(kind).restore()
}

/// The kinds a target can name, for `verify --help` and the MCP `targets` description:
/// `Kinds: deployment (deploy), …, ksvc (kservice, Knative).`, every kind of [`KINDS`] in
/// its order, with its short names and who it is for.
pub fn targets_help() -> String {
    let kinds: Vec<String> = KINDS
        .iter()
        .map(|k| {
            let said: Vec<&str> = k.short.iter().copied().chain(k.note).collect();
            match said.as_slice() {
                [] => k.cli_name.to_string(),
                said => format!("{} ({})", k.cli_name, said.join(", ")),
            }
        })
        .collect();
    format!("Kinds: {}.", kinds.join(", "))
}

/// What completes a target's TYPE: every spelling of every kind, then `/`.
pub fn target_prefixes() -> Vec<String> {
    TargetKind::spellings().map(|s| format!("{s}/")).collect()
}

#[cfg(test)]
mod tests {
    use super::super::answers::{GITOPS_STORES_NO_MANIFEST, LEADS_TO_ONE_WORKLOAD};
    use super::*;
    use serde_json::json;

    fn target(kind: TargetKind) -> Target {
        Target::new(kind, None, "inventory")
    }

    #[test]
    fn every_kind_reads_its_own_object_or_storage_first_and_a_workload_nothing() {
        for k in KINDS {
            let reads = reads(&Observed::default(), &target(k.kind), "shop");
            if k.workload.is_some() {
                assert_eq!(reads, [], "{}", k.cli_name);
                continue;
            }
            let own = match k.resource {
                ResourceKind::Secret => ReadRequest::helm_storage("shop", "inventory"),
                resource => ReadRequest::object(resource, "shop", "inventory"),
            };
            assert_eq!(reads, [own], "{}", k.cli_name);
        }
    }

    #[test]
    fn a_helmrelease_reads_its_git_repository_and_storage_once_read() {
        let mut observed = Observed::default();
        observed.others.push(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "inventory", "namespace": "flux"},
            "spec": {"targetNamespace": "apps", "chart": {"spec": {"chart": "./charts/inventory",
                "sourceRef": {"kind": "GitRepository", "name": "platform"}}}}
        }));
        assert_eq!(
            reads(&observed, &target(TargetKind::HelmRelease), "flux"),
            [
                ReadRequest::object(ResourceKind::HelmRelease, "flux", "inventory"),
                ReadRequest::object(ResourceKind::GitRepository, "flux", "platform"),
                ReadRequest::helm_storage("flux", "apps-inventory"),
            ]
        );
    }

    #[test]
    fn a_kustomization_reads_its_git_repository_and_a_ksvc_its_latest_revision() {
        let mut observed = Observed::default();
        observed.others.push(json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "inventory", "namespace": "flux"},
            "spec": {"sourceRef": {"kind": "GitRepository", "name": "platform", "namespace": "src"}}
        }));
        observed.others.push(json!({
            "apiVersion": "serving.knative.dev/v1", "kind": "Service",
            "metadata": {"name": "inventory", "namespace": "flux"},
            "status": {"latestCreatedRevisionName": "inventory-00002"}
        }));
        assert_eq!(
            reads(&observed, &target(TargetKind::Kustomization), "flux"),
            [
                ReadRequest::object(ResourceKind::Kustomization, "flux", "inventory"),
                ReadRequest::object(ResourceKind::GitRepository, "src", "platform"),
            ]
        );
        assert_eq!(
            reads(&observed, &target(TargetKind::KnativeService), "flux"),
            [
                ReadRequest::object(ResourceKind::KnativeService, "flux", "inventory"),
                ReadRequest::object(ResourceKind::KnativeRevision, "flux", "inventory-00002"),
            ]
        );
    }

    #[test]
    fn only_git_repositories_are_followed() {
        let oci = json!({"kind": "OCIRepository", "name": "x"});
        assert_eq!(ReadRequest::git_repository(Some(&oci), "flux"), None);
        let git = json!({"kind": "GitRepository", "name": "x", "namespace": "src"});
        assert_eq!(
            ReadRequest::git_repository(Some(&git), "flux"),
            Some(ReadRequest::object(ResourceKind::GitRepository, "src", "x"))
        );
    }

    #[test]
    fn the_sources_are_what_non_workload_kinds_are_read_as_and_helm_storage() {
        for k in KINDS {
            let own = is_source(k.resource);
            assert_eq!(own, k.workload.is_none(), "{}", k.cli_name);
            // What a kind's own read names decides what it leads to: a source.
            for read in reads(&Observed::default(), &target(k.kind), "shop") {
                match read {
                    ReadRequest::Object { resource, .. } => assert!(is_source(resource)),
                    ReadRequest::HelmStorage { .. } => {
                        assert!(HELM_STORAGE.into_iter().all(is_source))
                    }
                }
            }
        }
        assert!(is_source(ResourceKind::KnativeRevision));
        for resource in [
            ResourceKind::GitRepository,
            ResourceKind::ReplicaSet,
            ResourceKind::Pod,
        ] {
            assert!(!is_source(resource), "{resource:?}");
        }
    }

    #[test]
    fn only_a_helm_release_lists_with_helm() {
        for k in KINDS {
            let expected = match k.kind {
                TargetKind::Release => Lister::Helm,
                _ => Lister::Kubectl,
            };
            assert_eq!(lister(k.kind), expected, "{}", k.cli_name);
        }
    }

    #[test]
    fn chart_version_is_for_what_installs_a_chart_and_expect_for_what_keeps_a_manifest() {
        for k in KINDS {
            let accepts = accepts(k.kind);
            let helm = matches!(k.kind, TargetKind::Release | TargetKind::HelmRelease);
            assert_eq!(accepts.chart_version, helm, "{}", k.cli_name);
            let expect = match k.kind {
                _ if helm => ExpectOn::Manifest,
                _ if k.workload.is_some() => ExpectOn::Template,
                TargetKind::Kustomization | TargetKind::Application => {
                    ExpectOn::Refused(GITOPS_STORES_NO_MANIFEST)
                }
                _ => ExpectOn::Refused(LEADS_TO_ONE_WORKLOAD),
            };
            assert_eq!(accepts.expect, expect, "{}", k.cli_name);
        }
    }

    #[test]
    fn a_rollback_restores_a_workload_template_and_a_helm_revision() {
        for k in KINDS {
            let expected = match k.kind {
                TargetKind::Release => Restore::HelmRevision,
                _ if k.workload.is_some() => Restore::PodTemplate,
                _ => Restore::Nothing,
            };
            assert_eq!(restore(k.kind), expected, "{}", k.cli_name);
        }
    }

    #[test]
    fn the_help_names_every_kind_with_its_short_names_in_table_order() {
        let help = targets_help();
        // Each kind as the help has always said it, in this order (another kind may come
        // between: its row says it).
        let said = [
            "Kinds: deployment (deploy), ",
            "statefulset (sts), ",
            "daemonset (ds), ",
            "rollout (ro, Argo Rollouts), ",
            "release (a Helm release, read from its storage), ",
            "helmrelease (hr, Flux), ",
            "kustomization (ks, Flux), ",
            "application (app, Argo CD), ",
            "canary (Flagger), ",
            "ksvc (kservice, Knative).",
        ];
        let mut rest = help.as_str();
        for item in said {
            let at = rest
                .find(item)
                .unwrap_or_else(|| panic!("{item:?} in {help:?}"));
            rest = &rest[at + item.len()..];
        }
        let mut at = 0;
        for k in KINDS {
            let found = help[at..].find(k.cli_name).expect(k.cli_name);
            at += found;
        }
    }

    #[test]
    fn every_spelling_completes_with_a_slash() {
        let prefixes = target_prefixes();
        for k in KINDS {
            for s in k.spellings() {
                assert!(prefixes.contains(&format!("{s}/")), "{s}");
            }
        }
        assert!(prefixes.iter().all(|p| p.ends_with('/')));
    }
}
