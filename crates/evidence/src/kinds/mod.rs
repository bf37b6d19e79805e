//! The kind tables, the one place a kind is described: [`TargetKind`] and its rows
//! ([`KINDS`]: names, parsing, what a target is read as, who acts on it), and
//! [`ResourceKind`] and its rows ([`RESOURCES`]: group, version, kind, plural, scope, the
//! verbs verify sends, and the CRD a custom resource comes from). Pure data: nothing here
//! reads a snapshot ([`Observed`](crate::Observed)); that is the child modules' work.
//!
//! Each kind has its own file here: a workload kind implements `WorkloadType` and
//! `WorkloadStatus` (see `workload.rs`) and has its type in [`with_workload_types!`](crate::with_workload_types), and every
//! kind has its rules (`KindRules`, `rules.rs`). A new kind is its file, its variants and rows
//! here (with the copy of its CRD under `crds/`), and its `mod` line.

use std::fmt;

pub(crate) mod answers;
pub mod argo_rollout;
pub(crate) mod argocd_application;
pub mod asked;
pub(crate) mod daemonset;
pub(crate) mod deployment;
pub(crate) mod flagger_canary;
pub(crate) mod flux_helmrelease;
pub(crate) mod flux_kustomization;
pub(crate) mod helm_release;
pub(crate) mod knative_service;
pub(crate) mod load;
pub(crate) mod rules;
pub(crate) mod statefulset;
pub mod store;
pub(crate) mod workload;

/// The workload kinds' object types, the one list of them: expands to
/// `$callback! { { $args } [Variant => Type, …] }`, each `Variant` the kind's [`TargetKind`]
/// and [`ResourceKind`] variant and `Type` the object type its row reads
/// (its `WorkloadType`), in [`KINDS`]' order. The gather instantiates its
/// typed reads (`Api<Type>`: GET, LIST, watch) of each from it, so a new workload kind is read
/// live without a line in the gather; `the_workload_types_are_the_workload_rows` holds it to
/// the rows.
#[macro_export]
macro_rules! with_workload_types {
    ($callback:ident ! { $($args:tt)* }) => {
        $callback! {
            { $($args)* }
            [
                Deployment => ::k8s_openapi::api::apps::v1::Deployment,
                StatefulSet => ::k8s_openapi::api::apps::v1::StatefulSet,
                DaemonSet => ::k8s_openapi::api::apps::v1::DaemonSet,
                Rollout => $crate::kinds::argo_rollout::Rollout,
            ]
        }
    };
}

/// The rules `kind` is judged by: its own evidence, what it leads to, what `--wait` stops on.
pub(crate) fn rules(kind: TargetKind) -> &'static dyn rules::KindRules {
    match kind {
        TargetKind::Deployment
        | TargetKind::StatefulSet
        | TargetKind::DaemonSet
        | TargetKind::Rollout => &rules::WorkloadRules,
        TargetKind::Release => &helm_release::Rules,
        TargetKind::HelmRelease => &flux_helmrelease::Rules,
        TargetKind::Kustomization => &flux_kustomization::Rules,
        TargetKind::Application => &argocd_application::Rules,
        TargetKind::Canary => &flagger_canary::Rules,
        TargetKind::KnativeService => &knative_service::Rules,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// Argo Rollouts' `Rollout`.
    Rollout,
    /// A Helm release, read from its storage Secret/ConfigMap.
    Release,
    /// Flux `HelmRelease`.
    HelmRelease,
    /// Flux `Kustomization`.
    Kustomization,
    /// Argo CD `Application`.
    Application,
    /// Flagger's `Canary`: judged by its own status, then followed to `<target>-primary`.
    Canary,
    /// Knative's `Service` (`ksvc`): judged by its own status, then followed to the Deployment
    /// of its latest revision.
    KnativeService,
}

/// What the code knows of one target kind: one row per kind in [`KINDS`], which names,
/// parsing, did-you-mean, `--help` and the gather read instead of matching kinds each.
#[derive(Debug, Clone, Copy)]
pub struct KindSpec {
    pub kind: TargetKind,
    /// As in an object's `kind` field.
    pub kind_name: &'static str,
    /// The command line's name, singular; messages use it too.
    pub cli_name: &'static str,
    /// The plural, which kubectl (and so liveproof) accepts as well.
    pub plural: &'static str,
    /// kubectl's short names for it, if any.
    pub short: &'static [&'static str],
    /// Who the kind is for, after its short names in the help: `rollout (ro, Argo Rollouts)`.
    pub note: Option<&'static str>,
    /// The resource a target of the kind is read as: the object itself, or for `release/`
    /// the storage Secrets of Helm's default driver.
    pub resource: ResourceKind,
    /// For a kind whose pods are judged directly (Deployment, StatefulSet, DaemonSet): how
    /// its objects are found, listed and read, from its own file under `kinds/`.
    pub workload: Option<workload::WorkloadFns>,
    /// For a workload, what records its revisions (which pods are of the current template):
    /// ReplicaSets for a Deployment, ControllerRevisions for a StatefulSet or DaemonSet.
    pub revisions: Option<ResourceKind>,
    /// Who acts on objects of the kind: what details and next steps name when it has not done
    /// its part (for the workloads a target leads to, the target's actor writes them).
    pub actor: Actor,
}

/// The controller (or tool) that acts on a kind's objects, as details and next steps name it:
/// `Flagger has not promoted the change`, never a guess at "a GitOps controller or a pipeline"
/// where the kind knows who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    /// Who: `Flagger`, `Flux's kustomize-controller`, `the Deployment controller`.
    pub name: &'static str,
    /// What it does with a change, as a past participle and its object: `promoted the change`.
    pub done: &'static str,
}

impl Actor {
    /// `Flagger has not promoted the change`.
    pub fn has_not(&self) -> String {
        format!("{} has not {}", self.name, self.done)
    }

    /// `whether Flagger has promoted the change is not established`.
    pub fn whether(&self) -> String {
        format!("whether {} has {} is not established", self.name, self.done)
    }
}

/// The actor of the workload kinds, whose controllers roll a template out to pods.
const fn rolls_out(name: &'static str) -> Actor {
    Actor {
        name,
        done: "rolled the current template out",
    }
}

impl KindSpec {
    /// Every word that names the kind (before a `.group` suffix): its name, plural and short
    /// names.
    pub fn spellings(&self) -> impl Iterator<Item = &'static str> {
        [self.cli_name, self.plural]
            .into_iter()
            .chain(self.short.iter().copied())
    }
}

/// Every target kind, in the order of [`TargetKind`]'s variants (a test holds the order).
pub const KINDS: &[KindSpec] = &[
    KindSpec {
        kind: TargetKind::Deployment,
        kind_name: "Deployment",
        cli_name: "deployment",
        plural: "deployments",
        short: &["deploy"],
        note: None,
        resource: ResourceKind::Deployment,
        workload: Some(workload::fns::<k8s_openapi::api::apps::v1::Deployment>()),
        revisions: Some(ResourceKind::ReplicaSet),
        actor: rolls_out("the Deployment controller"),
    },
    KindSpec {
        kind: TargetKind::StatefulSet,
        kind_name: "StatefulSet",
        cli_name: "statefulset",
        plural: "statefulsets",
        short: &["sts"],
        note: None,
        resource: ResourceKind::StatefulSet,
        workload: Some(workload::fns::<k8s_openapi::api::apps::v1::StatefulSet>()),
        revisions: Some(ResourceKind::ControllerRevision),
        actor: rolls_out("the StatefulSet controller"),
    },
    KindSpec {
        kind: TargetKind::DaemonSet,
        kind_name: "DaemonSet",
        cli_name: "daemonset",
        plural: "daemonsets",
        short: &["ds"],
        note: None,
        resource: ResourceKind::DaemonSet,
        workload: Some(workload::fns::<k8s_openapi::api::apps::v1::DaemonSet>()),
        revisions: Some(ResourceKind::ControllerRevision),
        actor: rolls_out("the DaemonSet controller"),
    },
    KindSpec {
        kind: TargetKind::Rollout,
        kind_name: "Rollout",
        cli_name: "rollout",
        plural: "rollouts",
        short: &["ro"],
        note: Some("Argo Rollouts"),
        resource: ResourceKind::Rollout,
        workload: Some(workload::fns::<argo_rollout::Rollout>()),
        revisions: Some(ResourceKind::ReplicaSet),
        actor: Actor {
            name: "Argo Rollouts",
            done: "rolled out and promoted the current template",
        },
    },
    KindSpec {
        kind: TargetKind::Release,
        kind_name: "Release",
        cli_name: "release",
        plural: "releases",
        short: &[],
        note: Some("a Helm release, read from its storage"),
        resource: ResourceKind::Secret,
        workload: None,
        revisions: None,
        actor: Actor {
            name: "Helm",
            done: "installed the change",
        },
    },
    KindSpec {
        kind: TargetKind::HelmRelease,
        kind_name: "HelmRelease",
        cli_name: "helmrelease",
        plural: "helmreleases",
        short: &["hr"],
        note: Some("Flux"),
        resource: ResourceKind::HelmRelease,
        workload: None,
        revisions: None,
        actor: Actor {
            name: "Flux's helm-controller",
            done: "upgraded the release to the change",
        },
    },
    KindSpec {
        kind: TargetKind::Kustomization,
        kind_name: "Kustomization",
        cli_name: "kustomization",
        plural: "kustomizations",
        short: &["ks"],
        note: Some("Flux"),
        resource: ResourceKind::Kustomization,
        workload: None,
        revisions: None,
        actor: Actor {
            name: "Flux's kustomize-controller",
            done: "applied the change",
        },
    },
    // Not `apps` as a short name: that is the API group of Deployments (kubectl refuses it as
    // a resource too), and `apps/inventory` must not be read as an Argo CD Application.
    KindSpec {
        kind: TargetKind::Application,
        kind_name: "Application",
        cli_name: "application",
        plural: "applications",
        short: &["app"],
        note: Some("Argo CD"),
        resource: ResourceKind::Application,
        workload: None,
        revisions: None,
        actor: Actor {
            name: "Argo CD",
            done: "synced the change",
        },
    },
    // No short name: Flagger's CRD declares none.
    KindSpec {
        kind: TargetKind::Canary,
        kind_name: "Canary",
        cli_name: "canary",
        plural: "canaries",
        short: &[],
        note: Some("Flagger"),
        resource: ResourceKind::Canary,
        workload: None,
        revisions: None,
        actor: Actor {
            name: "Flagger",
            done: "promoted the change",
        },
    },
    // `services` is core's: Knative's short names (`ksvc`, `kservice`) are its spellings.
    KindSpec {
        kind: TargetKind::KnativeService,
        kind_name: "Service",
        cli_name: "ksvc",
        plural: "kservices",
        short: &["kservice"],
        note: Some("Knative"),
        resource: ResourceKind::KnativeService,
        workload: None,
        revisions: None,
        actor: Actor {
            name: "Knative",
            done: "rolled the change out to a ready revision",
        },
    },
];

impl TargetKind {
    /// This kind's row of [`KINDS`].
    pub const fn spec(self) -> &'static KindSpec {
        &KINDS[self as usize]
    }

    /// The Kubernetes kind name, as in an object's `kind` field.
    pub const fn kind_name(self) -> &'static str {
        self.spec().kind_name
    }

    /// The short form used on the command line and in messages.
    pub const fn cli_name(self) -> &'static str {
        self.spec().cli_name
    }

    /// The resource a target of this kind is read as (see [`KindSpec::resource`]).
    pub const fn resource(self) -> ResourceKind {
        self.spec().resource
    }

    /// Who acts on objects of this kind (see [`KindSpec::actor`]).
    pub const fn actor(self) -> Actor {
        self.spec().actor
    }

    /// The kind whose targets are read as `resource`, if one is (`Service` of
    /// `serving.knative.dev` is a `ksvc`).
    pub fn of_resource(resource: ResourceKind) -> Option<TargetKind> {
        KINDS
            .iter()
            .find(|k| k.resource == resource)
            .map(|k| k.kind)
    }

    /// Deployment, StatefulSet and DaemonSet: the kinds whose pods we judge directly.
    pub const fn is_workload(self) -> bool {
        self.spec().workload.is_some()
    }

    /// Every spelling accepted on the command line, for `--help` and error messages:
    /// `deployment (deploy), statefulset (sts), …`.
    pub fn accepted() -> String {
        KINDS
            .iter()
            .map(|k| match k.short {
                [] => k.cli_name.to_string(),
                short => format!("{} ({})", k.cli_name, short.join(", ")),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every word [`TargetKind::parse`] takes (before a `.group` suffix): each kind's name,
    /// plural and short names.
    pub fn spellings() -> impl Iterator<Item = &'static str> {
        KINDS.iter().flat_map(KindSpec::spellings)
    }

    /// The workload kind an object of kind `kind_name` is: in API group `group`, or in any
    /// group when the object does not say (an Argo Rollout, not any kind called Rollout).
    pub fn workload_named(kind_name: &str, group: Option<&str>) -> Option<TargetKind> {
        KINDS
            .iter()
            .find(|k| {
                k.workload.is_some()
                    && k.kind_name == kind_name
                    && group.is_none_or(|g| g == k.resource.group())
            })
            .map(|k| k.kind)
    }

    /// The workload kinds, for messages: `Deployment, StatefulSet, DaemonSet or Rollout`
    /// (`last`: the word before the last one; `plural`: `Deployments`, …).
    pub fn workload_kinds(last: &str, plural: bool) -> String {
        let names: Vec<String> = KINDS
            .iter()
            .filter(|k| k.workload.is_some())
            .map(|k| match plural {
                true => format!("{}s", k.kind_name),
                false => k.kind_name.to_string(),
            })
            .collect();
        match names.split_last() {
            Some((only, [])) => only.clone(),
            Some((final_one, rest)) => format!("{} {last} {final_one}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// The workload kinds as one kubectl resource list: `deploy,sts,ds,ro`.
    pub fn workload_resource_list() -> String {
        KINDS
            .iter()
            .filter(|k| k.workload.is_some())
            .map(|k| k.short.first().copied().unwrap_or(k.cli_name))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The workload kind whose objects are `resource`, if it is one.
    pub fn workload_of(resource: ResourceKind) -> Option<TargetKind> {
        KINDS
            .iter()
            .find(|k| k.workload.is_some() && k.resource == resource)
            .map(|k| k.kind)
    }

    pub fn parse(word: &str) -> Option<TargetKind> {
        // kubectl also accepts plurals and the `kind.group` form; so do we.
        let lower = word.to_ascii_lowercase();
        let base = lower.split('.').next().unwrap_or_default();
        KINDS
            .iter()
            .find(|k| k.spellings().any(|s| s == base))
            .map(|k| k.kind)
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cli_name())
    }
}

/// What a report row is about: a target of a kind liveproof verifies, or a server asked for
/// its version (`--version-url`). Serialised by name, as an object's `kind` field spells it:
/// `Deployment`, `HelmRelease`, …, `Server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReportKind {
    Target(TargetKind),
    Server,
}

impl ReportKind {
    /// The name a report gives it.
    pub const fn name(self) -> &'static str {
        match self {
            ReportKind::Target(kind) => kind.kind_name(),
            ReportKind::Server => "Server",
        }
    }

    /// The target kind, unless the row is a server's.
    pub const fn target(self) -> Option<TargetKind> {
        match self {
            ReportKind::Target(kind) => Some(kind),
            ReportKind::Server => None,
        }
    }

    /// The kind a report names `name`, spelled exactly as [`ReportKind::name`] spells it.
    pub fn from_name(name: &str) -> Option<ReportKind> {
        if name == "Server" {
            return Some(ReportKind::Server);
        }
        KINDS
            .iter()
            .find(|k| k.kind_name == name)
            .map(|k| ReportKind::Target(k.kind))
    }
}

impl From<TargetKind> for ReportKind {
    fn from(kind: TargetKind) -> Self {
        ReportKind::Target(kind)
    }
}

/// A kind read back from a report is compared by its name, as the JSON spells it.
impl PartialEq<&str> for ReportKind {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

impl fmt::Display for ReportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for ReportKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for ReportKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        ReportKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{name}` is not a kind a report names (expected one of: {})",
                report_kind_names().join(", ")
            ))
        })
    }
}

fn report_kind_names() -> Vec<&'static str> {
    KINDS
        .iter()
        .map(|k| k.kind_name)
        .chain([ReportKind::Server.name()])
        .collect()
}

impl schemars::JsonSchema for ReportKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ReportKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "What the row is about: the kind of the target, or `Server` for a --version-url.",
            "type": "string",
            "enum": report_kind_names(),
        })
    }
}

/// The resources liveproof reads, in the order of [`RESOURCES`] (a test holds the order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// Argo Rollouts `argoproj.io/v1alpha1`.
    Rollout,
    ReplicaSet,
    ControllerRevision,
    Pod,
    Node,
    /// Helm release storage (driver `secret`, the default).
    Secret,
    /// Helm release storage (driver `configmap`).
    ConfigMap,
    /// Flux `helm.toolkit.fluxcd.io/v2`.
    HelmRelease,
    /// Flux `kustomize.toolkit.fluxcd.io/v1`.
    Kustomization,
    /// Flux `source.toolkit.fluxcd.io/v1`.
    GitRepository,
    /// Argo CD `argoproj.io/v1alpha1`.
    Application,
    /// Flagger `flagger.app/v1beta1`.
    Canary,
    /// Knative `serving.knative.dev/v1` `Service` (`ksvc`), another kind than core's Service.
    KnativeService,
    /// Knative `serving.knative.dev/v1` `Revision`: the digests a ksvc's revision resolved.
    KnativeRevision,
    /// What routes traffic to a workload's pods (`traffic_current`).
    Service,
    /// `discovery.k8s.io/v1`: the endpoints a Service routes to.
    EndpointSlice,
}

/// Whether a resource's objects live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Namespaced,
    Cluster,
}

/// A request verify sends for a resource (what its RBAC rule grants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verb {
    Get,
    List,
    Watch,
}

impl Verb {
    /// As RBAC spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
        }
    }
}

/// Who serves a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Every API server (core, `apps`, `discovery.k8s.io`).
    Builtin,
    /// A CRD its controller installs, with the copy of that CRD the simulator serves, when one
    /// is kept.
    Crd(Option<&'static CrdCopy>),
}

/// A copy of the upstream file a CRD comes from (gzipped, under `kinds/crds/`): what the
/// simulator serves, held byte-identical to the module `e2e/peers/crds/go.mod` pins by
/// `crates/sim/tests/crds.rs`.
#[derive(Debug, PartialEq, Eq)]
pub struct CrdCopy {
    /// The upstream file's name, as `e2e/build-peers.sh` copies it into the peers' bin
    /// directory (Flagger's holds three CRDs: the copy is its first document, the Canary's).
    pub file: &'static str,
    /// The copy, gzipped.
    pub gz: &'static [u8],
}

/// A resource liveproof reads, as the API serves it: the one row its REST path, RBAC rule and
/// discovery are derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub resource: ResourceKind,
    /// The API group, `""` for core.
    pub group: &'static str,
    pub version: &'static str,
    /// `group/version`, or the version alone for core: as an object's `apiVersion` says.
    pub api_version: &'static str,
    /// As an object's `kind` says.
    pub kind: &'static str,
    /// The plural resource name, as RBAC and the REST path spell it.
    pub plural: &'static str,
    /// The short names its CRD declares (what the API server serves it by; the built-in
    /// resources' are the simulator's).
    pub short_names: &'static [&'static str],
    pub scope: Scope,
    /// What verify sends for it (`deploy/rbac-readonly.yaml` grants exactly these).
    pub verbs: &'static [Verb],
    /// Its subresources verify reads, with the verb: a pod's `log`.
    pub subresources: &'static [(&'static str, Verb)],
    pub origin: Origin,
}

const GET_LIST_WATCH: &[Verb] = &[Verb::Get, Verb::List, Verb::Watch];
const LIST_WATCH: &[Verb] = &[Verb::List, Verb::Watch];

/// A resource verify reads in a namespace.
const fn namespaced(
    resource: ResourceKind,
    (group, version, api_version): (&'static str, &'static str, &'static str),
    kind: &'static str,
    plural: &'static str,
    verbs: &'static [Verb],
    origin: Origin,
) -> Resource {
    Resource {
        resource,
        group,
        version,
        api_version,
        kind,
        plural,
        short_names: &[],
        scope: Scope::Namespaced,
        verbs,
        subresources: &[],
        origin,
    }
}

const APPS: (&str, &str, &str) = ("apps", "v1", "apps/v1");
const CORE: (&str, &str, &str) = ("", "v1", "v1");
const ARGOPROJ: (&str, &str, &str) = ("argoproj.io", "v1alpha1", "argoproj.io/v1alpha1");
const KNATIVE: (&str, &str, &str) = ("serving.knative.dev", "v1", "serving.knative.dev/v1");

/// Every resource, in the order of [`ResourceKind`]'s variants (a test holds the order).
pub const RESOURCES: &[Resource] = &[
    namespaced(
        ResourceKind::Deployment,
        APPS,
        "Deployment",
        "deployments",
        GET_LIST_WATCH,
        Origin::Builtin,
    ),
    namespaced(
        ResourceKind::StatefulSet,
        APPS,
        "StatefulSet",
        "statefulsets",
        GET_LIST_WATCH,
        Origin::Builtin,
    ),
    namespaced(
        ResourceKind::DaemonSet,
        APPS,
        "DaemonSet",
        "daemonsets",
        GET_LIST_WATCH,
        Origin::Builtin,
    ),
    Resource {
        short_names: &["ro"],
        ..namespaced(
            ResourceKind::Rollout,
            ARGOPROJ,
            "Rollout",
            "rollouts",
            GET_LIST_WATCH,
            Origin::Crd(Some(&CrdCopy {
                file: "rollout-crd.yaml",
                gz: include_bytes!("crds/rollout-crd.yaml.gz"),
            })),
        )
    },
    namespaced(
        ResourceKind::ReplicaSet,
        APPS,
        "ReplicaSet",
        "replicasets",
        LIST_WATCH,
        Origin::Builtin,
    ),
    namespaced(
        ResourceKind::ControllerRevision,
        APPS,
        "ControllerRevision",
        "controllerrevisions",
        LIST_WATCH,
        Origin::Builtin,
    ),
    Resource {
        subresources: &[("log", Verb::Get)],
        ..namespaced(
            ResourceKind::Pod,
            CORE,
            "Pod",
            "pods",
            LIST_WATCH,
            Origin::Builtin,
        )
    },
    Resource {
        scope: Scope::Cluster,
        ..namespaced(
            ResourceKind::Node,
            CORE,
            "Node",
            "nodes",
            &[Verb::List],
            Origin::Builtin,
        )
    },
    namespaced(
        ResourceKind::Secret,
        CORE,
        "Secret",
        "secrets",
        GET_LIST_WATCH,
        Origin::Builtin,
    ),
    namespaced(
        ResourceKind::ConfigMap,
        CORE,
        "ConfigMap",
        "configmaps",
        LIST_WATCH,
        Origin::Builtin,
    ),
    Resource {
        short_names: &["hr"],
        ..namespaced(
            ResourceKind::HelmRelease,
            ("helm.toolkit.fluxcd.io", "v2", "helm.toolkit.fluxcd.io/v2"),
            "HelmRelease",
            "helmreleases",
            GET_LIST_WATCH,
            Origin::Crd(None),
        )
    },
    Resource {
        short_names: &["ks"],
        ..namespaced(
            ResourceKind::Kustomization,
            (
                "kustomize.toolkit.fluxcd.io",
                "v1",
                "kustomize.toolkit.fluxcd.io/v1",
            ),
            "Kustomization",
            "kustomizations",
            GET_LIST_WATCH,
            Origin::Crd(None),
        )
    },
    Resource {
        short_names: &["gitrepo"],
        ..namespaced(
            ResourceKind::GitRepository,
            (
                "source.toolkit.fluxcd.io",
                "v1",
                "source.toolkit.fluxcd.io/v1",
            ),
            "GitRepository",
            "gitrepositories",
            GET_LIST_WATCH,
            Origin::Crd(None),
        )
    },
    Resource {
        short_names: &["app", "apps"],
        ..namespaced(
            ResourceKind::Application,
            ARGOPROJ,
            "Application",
            "applications",
            GET_LIST_WATCH,
            Origin::Crd(None),
        )
    },
    namespaced(
        ResourceKind::Canary,
        ("flagger.app", "v1beta1", "flagger.app/v1beta1"),
        "Canary",
        "canaries",
        GET_LIST_WATCH,
        Origin::Crd(Some(&CrdCopy {
            file: "flagger-crd.yaml",
            gz: include_bytes!("crds/flagger-canary-crd.yaml.gz"),
        })),
    ),
    Resource {
        short_names: &["kservice", "ksvc"],
        ..namespaced(
            ResourceKind::KnativeService,
            KNATIVE,
            "Service",
            "services",
            GET_LIST_WATCH,
            Origin::Crd(Some(&CrdCopy {
                file: "knative-serving-service-crd.yaml",
                gz: include_bytes!("crds/knative-serving-service-crd.yaml.gz"),
            })),
        )
    },
    Resource {
        short_names: &["rev"],
        ..namespaced(
            ResourceKind::KnativeRevision,
            KNATIVE,
            "Revision",
            "revisions",
            GET_LIST_WATCH,
            Origin::Crd(None),
        )
    },
    namespaced(
        ResourceKind::Service,
        CORE,
        "Service",
        "services",
        LIST_WATCH,
        Origin::Builtin,
    ),
    namespaced(
        ResourceKind::EndpointSlice,
        ("discovery.k8s.io", "v1", "discovery.k8s.io/v1"),
        "EndpointSlice",
        "endpointslices",
        LIST_WATCH,
        Origin::Builtin,
    ),
];

impl ResourceKind {
    /// Whether its objects hold secret values (Helm's release storage, pull credentials): a
    /// role may leave it out, and then says what it cannot verify.
    pub const fn holds_secrets(self) -> bool {
        matches!(self, ResourceKind::Secret)
    }

    /// How `--wait`'s incremental judge ([`crate::Rejudge`]) maps an object of this resource
    /// to the targets it may concern.
    pub fn object_kind(self) -> crate::ObjectKind {
        match self {
            ResourceKind::Pod => crate::ObjectKind::Pod,
            ResourceKind::ReplicaSet => crate::ObjectKind::ReplicaSet,
            ResourceKind::ControllerRevision => crate::ObjectKind::ControllerRevision,
            other if TargetKind::workload_of(other).is_some() => crate::ObjectKind::Workload,
            _ => crate::ObjectKind::Other,
        }
    }

    /// Its row of [`RESOURCES`].
    pub const fn row(self) -> &'static Resource {
        &RESOURCES[self as usize]
    }

    /// The group/version we read it at.
    pub const fn api_version(self) -> &'static str {
        self.row().api_version
    }

    /// The API group, `""` for core.
    pub const fn group(self) -> &'static str {
        self.row().group
    }

    /// Served by every API server (core, `apps`, `discovery.k8s.io`), not by a CRD a
    /// controller installs.
    pub const fn is_builtin(self) -> bool {
        matches!(self.row().origin, Origin::Builtin)
    }

    pub const fn kind_name(self) -> &'static str {
        self.row().kind
    }

    /// The plural resource name, as RBAC and the REST path spell it.
    pub const fn plural(self) -> &'static str {
        self.row().plural
    }
}

/// The API group of an `apiVersion`: `apps` of `apps/v1`, `""` of core's `v1`.
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows are in variant order (`spec` and `row` index by it).
    #[test]
    fn table_in_variant_order() {
        for (i, row) in KINDS.iter().enumerate() {
            assert_eq!(row.kind as usize, i, "{row:?} out of order");
            assert_eq!(row.kind.spec().cli_name, row.cli_name);
            if row.workload.is_some() {
                assert_eq!(TargetKind::workload_of(row.resource), Some(row.kind));
            }
        }
        assert_eq!(KINDS.len(), TargetKind::KnativeService as usize + 1);
        for (i, row) in RESOURCES.iter().enumerate() {
            assert_eq!(row.resource as usize, i, "{row:?} out of order");
        }
        assert_eq!(RESOURCES.len(), ResourceKind::EndpointSlice as usize + 1);
    }

    /// [`with_workload_types!`] lists every workload row's type, in the rows' order, each
    /// under its kind's variants.
    #[test]
    fn the_workload_types_are_the_workload_rows() {
        use workload::WorkloadType;
        macro_rules! listed {
            ({} [$($variant:ident => $ty:path),* $(,)?]) => {
                vec![$((
                    TargetKind::$variant,
                    ResourceKind::$variant,
                    <$ty as WorkloadType>::KIND,
                )),*]
            };
        }
        let listed = crate::with_workload_types!(listed! {});
        let rows: Vec<(TargetKind, ResourceKind, TargetKind)> = KINDS
            .iter()
            .filter(|k| k.workload.is_some())
            .map(|k| (k.kind, k.resource, k.kind))
            .collect();
        assert_eq!(listed, rows);
    }

    /// Each spelling of a kind parses back to it, with a `.group` too, and `--help` lists
    /// them as before.
    #[test]
    fn every_spelling_parses_back() {
        for row in KINDS {
            for word in row.spellings() {
                assert_eq!(TargetKind::parse(word), Some(row.kind), "{word}");
                assert_eq!(
                    TargetKind::parse(&format!("{}.example.io", word.to_uppercase())),
                    Some(row.kind),
                    "{word}"
                );
            }
        }
        assert_eq!(TargetKind::spellings().count(), 28);
        assert_eq!(
            TargetKind::workload_kinds("or", false),
            "Deployment, StatefulSet, DaemonSet or Rollout"
        );
        assert_eq!(
            TargetKind::workload_kinds("and", true),
            "Deployments, StatefulSets, DaemonSets and Rollouts"
        );
        assert_eq!(TargetKind::workload_resource_list(), "deploy,sts,ds,ro");
        assert_eq!(
            TargetKind::parse("apps"),
            None,
            "the API group, not Application"
        );
        assert_eq!(
            TargetKind::accepted(),
            "deployment (deploy), statefulset (sts), daemonset (ds), rollout (ro), release, \
             helmrelease (hr), kustomization (ks), application (app), canary, ksvc (kservice)"
        );
    }

    /// Each resource's row says what the three matches that were its facts said: its
    /// apiVersion, kind and plural, and a group served by every API server for the built-in
    /// ones.
    #[test]
    fn every_resource_row_matches_its_variant() {
        use ResourceKind as R;
        let before = [
            (R::Deployment, "apps/v1", "Deployment", "deployments"),
            (R::StatefulSet, "apps/v1", "StatefulSet", "statefulsets"),
            (R::DaemonSet, "apps/v1", "DaemonSet", "daemonsets"),
            (R::Rollout, "argoproj.io/v1alpha1", "Rollout", "rollouts"),
            (R::ReplicaSet, "apps/v1", "ReplicaSet", "replicasets"),
            (
                R::ControllerRevision,
                "apps/v1",
                "ControllerRevision",
                "controllerrevisions",
            ),
            (R::Pod, "v1", "Pod", "pods"),
            (R::Node, "v1", "Node", "nodes"),
            (R::Secret, "v1", "Secret", "secrets"),
            (R::ConfigMap, "v1", "ConfigMap", "configmaps"),
            (
                R::HelmRelease,
                "helm.toolkit.fluxcd.io/v2",
                "HelmRelease",
                "helmreleases",
            ),
            (
                R::Kustomization,
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                "kustomizations",
            ),
            (
                R::GitRepository,
                "source.toolkit.fluxcd.io/v1",
                "GitRepository",
                "gitrepositories",
            ),
            (
                R::Application,
                "argoproj.io/v1alpha1",
                "Application",
                "applications",
            ),
            (R::Canary, "flagger.app/v1beta1", "Canary", "canaries"),
            (
                R::KnativeService,
                "serving.knative.dev/v1",
                "Service",
                "services",
            ),
            (
                R::KnativeRevision,
                "serving.knative.dev/v1",
                "Revision",
                "revisions",
            ),
            (R::Service, "v1", "Service", "services"),
            (
                R::EndpointSlice,
                "discovery.k8s.io/v1",
                "EndpointSlice",
                "endpointslices",
            ),
        ];
        assert_eq!(before.len(), RESOURCES.len());
        for (kind, api_version, name, plural) in before {
            let row = kind.row();
            assert_eq!(row.resource, kind);
            assert_eq!(kind.api_version(), api_version, "{kind:?}");
            assert_eq!(kind.kind_name(), name, "{kind:?}");
            assert_eq!(kind.plural(), plural, "{kind:?}");
            assert_eq!(kind.group(), api_group(api_version), "{kind:?}");
            let version = api_version.rsplit('/').next().unwrap_or_default();
            assert_eq!(row.version, version, "{kind:?}");
            assert_eq!(
                kind.is_builtin(),
                matches!(kind.group(), "" | "apps" | "discovery.k8s.io"),
                "{kind:?}"
            );
            assert!(!row.verbs.is_empty(), "{kind:?} is read somehow");
            match row.origin {
                Origin::Crd(Some(copy)) => {
                    assert!(copy.gz.starts_with(&[0x1f, 0x8b]), "{}: gzip", copy.file);
                }
                Origin::Crd(None) | Origin::Builtin => {}
            }
        }
    }

    /// Each row's verbs and subresources are what the read-only role grants it
    /// (`deploy/rbac-readonly.yaml`, which `tests/rbac.rs` holds to what verify sends), and
    /// the role grants nothing on a resource of the table that the table does not say.
    #[test]
    fn every_resource_row_says_what_the_read_only_role_grants() {
        use serde::Deserialize as _;
        use std::collections::{BTreeMap, BTreeSet};
        let path = format!(
            "{}/../../deploy/rbac-readonly.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("the read-only role");
        let mut granted: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
        for doc in serde_norway::Deserializer::from_str(&text) {
            let doc = serde_json::Value::deserialize(doc).expect("YAML");
            if doc["kind"] != "ClusterRole" {
                continue;
            }
            for rule in doc["rules"].as_array().expect("rules") {
                let strings = |field: &str| -> Vec<String> {
                    rule[field]
                        .as_array()
                        .expect(field)
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                };
                for group in strings("apiGroups") {
                    for resource in strings("resources") {
                        granted
                            .entry((group.clone(), resource))
                            .or_default()
                            .extend(strings("verbs"));
                    }
                }
            }
        }
        for row in RESOURCES {
            let verbs = |list: &[Verb]| -> BTreeSet<String> {
                list.iter().map(|v| v.as_str().to_string()).collect()
            };
            let key = (row.group.to_string(), row.plural.to_string());
            assert_eq!(
                granted.get(&key),
                Some(&verbs(row.verbs)),
                "{:?}: the role grants {key:?} other verbs than the row",
                row.resource
            );
            for (sub, verb) in row.subresources {
                let key = (row.group.to_string(), format!("{}/{sub}", row.plural));
                assert_eq!(
                    granted.get(&key),
                    Some(&verbs(&[*verb])),
                    "{:?}: {key:?}",
                    row.resource
                );
            }
        }
    }

    #[test]
    fn a_report_names_each_kind_as_its_objects_do_and_reads_the_name_back() {
        let every = KINDS
            .iter()
            .map(|k| ReportKind::Target(k.kind))
            .chain([ReportKind::Server]);
        for kind in every {
            let json = serde_json::to_string(&kind).expect("serialises");
            let want = match kind {
                ReportKind::Target(k) => k.kind_name(),
                ReportKind::Server => "Server",
            };
            assert_eq!(json, format!("\"{want}\""));
            let back: ReportKind = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, kind);
        }
        // The CLI's spelling is not the report's: a report never says `deploy`.
        let err = serde_json::from_str::<ReportKind>("\"deploy\"").expect_err("not a name");
        assert!(err.to_string().contains("Deployment"), "{err}");
    }
}
