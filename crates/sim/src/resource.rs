//! The resource registry: what discovery advertises and how a path maps to a kind.

use serde_json::{json, Value};

/// One served resource type (one group/version/plural).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Has a `/status` subresource: the main endpoint then ignores `.status` changes.
    pub has_status: bool,
    /// Compiled into the API server rather than registered from a fixture (a CRD):
    /// only built-ins accept strategic merge patches.
    pub builtin: bool,
}

impl ResourceInfo {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps` or `pods`, as error messages spell it.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// Generation counts spec changes; kinds without a spec (or that the real
    /// server does not version) never carry one.
    pub fn tracks_generation(&self) -> bool {
        !matches!(
            (self.group.as_str(), self.kind.as_str()),
            (
                "",
                "Namespace"
                    | "Node"
                    | "ConfigMap"
                    | "Secret"
                    | "Event"
                    | "Service"
                    | "ServiceAccount"
            ) | ("apps", "ControllerRevision")
        )
    }

    /// Serves `/scale` (`kubectl scale`), as the real workload kinds do.
    pub fn has_scale(&self) -> bool {
        self.group == "apps"
            && matches!(
                self.kind.as_str(),
                "Deployment" | "ReplicaSet" | "StatefulSet"
            )
    }

    pub fn discovery_entries(&self) -> Vec<Value> {
        let mut main = json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
        });
        if !self.short_names.is_empty() {
            main["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            main["categories"] = json!(self.categories);
        }
        let mut out = vec![main];
        if self.has_status {
            out.push(json!({
                "name": format!("{}/status", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if self.has_scale() {
            out.push(json!({
                "name": format!("{}/scale", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        out
    }
}

/// (group, version, kind, plural, namespaced, shortNames, has_status, in category "all")
type Builtin = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    bool,
    bool,
);

const BUILTINS: &[Builtin] = &[
    ("", "v1", "Pod", "pods", true, &["po"], true, true),
    ("", "v1", "Node", "nodes", false, &["no"], true, false),
    (
        "",
        "v1",
        "Namespace",
        "namespaces",
        false,
        &["ns"],
        true,
        false,
    ),
    ("", "v1", "Secret", "secrets", true, &[], false, false),
    (
        "",
        "v1",
        "ConfigMap",
        "configmaps",
        true,
        &["cm"],
        false,
        false,
    ),
    ("", "v1", "Event", "events", true, &["ev"], false, false),
    (
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        &["ev"],
        false,
        false,
    ),
    ("", "v1", "Service", "services", true, &["svc"], true, true),
    (
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
        &[],
        false,
        false,
    ),
    (
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        &["sa"],
        false,
        false,
    ),
    (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        &["deploy"],
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        &["rs"],
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        &["sts"],
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        true,
        &["ds"],
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
        &[],
        false,
        false,
    ),
    ("batch", "v1", "Job", "jobs", true, &[], true, true),
    (
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        true,
        &["cj"],
        true,
        true,
    ),
];

/// Custom kinds the real world registers cluster-scoped; everything else custom is namespaced.
const CLUSTER_SCOPED_KINDS: &[&str] = &[
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "IngressClass",
    "RuntimeClass",
    "APIService",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
];

pub(crate) fn builtins() -> Vec<ResourceInfo> {
    BUILTINS
        .iter()
        .map(
            |&(group, version, kind, plural, namespaced, short, has_status, all)| ResourceInfo {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: kind.to_owned(),
                plural: plural.to_owned(),
                singular: kind.to_lowercase(),
                namespaced,
                short_names: short.iter().map(|s| (*s).to_owned()).collect(),
                categories: if all { vec!["all".to_owned()] } else { vec![] },
                has_status,
                builtin: true,
            },
        )
        .collect()
}

/// Custom resources the simulator serves beside the ones liveproof reads (those are the
/// `Origin::Crd` rows of evidence's `RESOURCES`), as their CRDs declare them (group, version,
/// kind, plural, shortNames): Flux's HelmChart, which its helm-controller makes of a
/// HelmRelease, and liveproof's own Verification (`deploy/verification-crd.yaml`), whose status
/// `liveproof controller` writes through /status.
const SIM_ONLY_CRDS: &[(&str, &str, &str, &str, &[&str])] = &[
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "HelmChart",
        "helmcharts",
        &["hc"],
    ),
    (
        "liveproof.dev",
        "v1alpha1",
        "Verification",
        "verifications",
        &["verif"],
    ),
];

/// The custom resources liveproof reads (every `Origin::Crd` row of evidence's table) and the
/// simulator's own ([`SIM_ONLY_CRDS`]): served even with no object, as on a cluster where the
/// controllers are installed.
pub(crate) fn gitops_crds() -> Vec<ResourceInfo> {
    let read = liveproof_evidence::RESOURCES
        .iter()
        .filter(|r| !r.resource.is_builtin())
        .map(|r| (r.group, r.version, r.kind, r.plural, r.short_names));
    read.chain(SIM_ONLY_CRDS.iter().copied())
        .map(|(group, version, kind, plural, short)| ResourceInfo {
            plural: plural.to_owned(),
            short_names: short.iter().map(|s| (*s).to_owned()).collect(),
            ..custom(group, version, kind)
        })
        .collect()
}

/// Custom kinds whose CRD declares no `/status` subresource, so that status is written through
/// the main endpoint and every change but to `metadata` moves `metadata.generation`: Argo CD's
/// Application (`subresources: {}` in manifests/crds/application-crd.yaml) and AppProject (none),
/// which the application-controller patches whole. Story 7 of tests/real_argocd.rs holds the
/// simulator to the real API server serving those CRDs.
const WITHOUT_STATUS_SUBRESOURCE: &[(&str, &str)] = &[
    ("argoproj.io", "Application"),
    ("argoproj.io", "AppProject"),
];

/// A resource for a kind the registry has not seen: what a CRD would usually declare.
pub(crate) fn custom(group: &str, version: &str, kind: &str) -> ResourceInfo {
    let namespaced = !(kind.starts_with("Cluster") || CLUSTER_SCOPED_KINDS.contains(&kind));
    ResourceInfo {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
        plural: pluralize(kind),
        singular: kind.to_lowercase(),
        namespaced,
        short_names: vec![],
        categories: vec![],
        has_status: !WITHOUT_STATUS_SUBRESOURCE.contains(&(group, kind)),
        builtin: false,
    }
}

/// The plural a CRD author would pick: `GitRepository` → `gitrepositories`, `Ingress` → `ingresses`.
pub(crate) fn pluralize(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if let Some(stem) = lower.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            return format!("{stem}ies");
        }
    }
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

/// Splits `apps/v1` into (`apps`, `v1`) and `v1` into (``, `v1`).
pub(crate) fn split_api_version(api_version: &str) -> (String, String) {
    match api_version.split_once('/') {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (String::new(), api_version.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_crd_conventions() {
        assert_eq!(pluralize("HelmRelease"), "helmreleases");
        assert_eq!(pluralize("Kustomization"), "kustomizations");
        assert_eq!(pluralize("GitRepository"), "gitrepositories");
        assert_eq!(pluralize("Gateway"), "gateways");
        assert_eq!(pluralize("Ingress"), "ingresses");
    }

    #[test]
    fn argo_cd_kinds_have_no_status_subresource_as_their_crds_declare() {
        for kind in ["Application", "AppProject"] {
            assert!(
                !custom("argoproj.io", "v1alpha1", kind).has_status,
                "{kind}"
            );
        }
        assert!(custom("argoproj.io", "v1alpha1", "Rollout").has_status);
        let served = gitops_crds();
        let app = served
            .iter()
            .find(|r| r.kind == "Application")
            .expect("Application is served");
        assert!(!app.has_status);
    }

    #[test]
    fn custom_cluster_kinds_are_cluster_scoped() {
        assert!(!custom("cert-manager.io", "v1", "ClusterIssuer").namespaced);
        assert!(custom("argoproj.io", "v1alpha1", "Application").namespaced);
    }

    /// liveproof's kind table and the simulator's discovery agree on every kind liveproof
    /// reads: the group, the plural and the short names a target may be written with are the
    /// ones the (simulated) API server serves, as a real one does. A kind added to the table
    /// and not to the simulator, or spelt differently, fails here.
    #[test]
    fn the_kind_table_matches_what_the_simulator_serves() {
        let served: Vec<ResourceInfo> = builtins().into_iter().chain(gitops_crds()).collect();
        for spec in liveproof_evidence::KINDS {
            let resource = spec.resource;
            let info = served
                .iter()
                .find(|r| r.kind == resource.kind_name() && r.group == resource.group())
                .unwrap_or_else(|| panic!("the simulator does not serve {}", spec.kind_name));
            assert_eq!(info.plural, resource.plural(), "{}", spec.kind_name);
            // Knative's Service shares its plural with core's: the target is spelt by the
            // short names the server serves for it (`ksvc`), never by `services`.
            let shadowed = !info.group.is_empty()
                && served
                    .iter()
                    .any(|r| r.group.is_empty() && r.plural == info.plural);
            if shadowed {
                assert!(
                    info.short_names.iter().any(|s| s == spec.cli_name),
                    "{}: `{}` is not a short name the server serves",
                    spec.kind_name,
                    spec.cli_name
                );
            } else if resource.kind_name() == spec.kind_name {
                assert_eq!(info.plural, spec.plural, "{}", spec.kind_name);
                for short in spec.short {
                    assert!(
                        info.short_names.iter().any(|s| s == short),
                        "{}: `{short}` is not a short name the server serves ({:?})",
                        spec.kind_name,
                        info.short_names
                    );
                }
            }
        }
    }
}
