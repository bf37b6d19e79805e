//! What liveproof reads, as RBAC spells it: every read verify sends (from the kind table,
//! [`RESOURCES`], and the few reads outside it), which checks each feeds, and the rule that
//! allows a read a cluster refused. `liveproof auth` asks the API server about each of
//! [`reads`]; a refused read ([`Denied`]) names its rule in its next step.

use crate::kinds::{ResourceKind, Scope, TargetKind, Verb, RESOURCES};
use crate::suggestion::{Command, Suggestion};
use crate::Denied;

/// The role that grants every read here (`tests/rbac.rs` holds it to what verify sends).
pub const READ_ONLY_ROLE: &str = "deploy/rbac-readonly.yaml";
/// The same reads, namespaced: a Role and RoleBinding per namespace.
pub const NAMESPACED_ROLE: &str = "deploy/rbac-namespaced/";
/// The read-only role without Secrets, for clusters where no Helm release is verified.
pub const NO_SECRETS_ROLE: &str = "deploy/rbac-no-secrets.yaml";

/// One read liveproof may send: `VERB RESOURCE[/SUB].GROUP`, where it applies, and what it
/// feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub verb: &'static str,
    /// The API group, `""` for core.
    pub group: &'static str,
    /// The plural resource name.
    pub resource: &'static str,
    pub subresource: Option<&'static str>,
    pub scope: Scope,
    /// The checks (and other uses) that need it, for `liveproof auth` and its docs.
    pub feeds: &'static str,
    /// The target kinds that need it; empty: every kind (each leads to workloads).
    pub kinds: &'static [TargetKind],
    /// When only some runs send it (`--wait`, `--logs`, a target not live): `None` when every
    /// run for its kinds does.
    pub only: Option<&'static str>,
}

impl Read {
    /// As `kubectl auth can-i` takes it: `list pods`, `get pods --subresource=log`,
    /// `list endpointslices.discovery.k8s.io`.
    pub fn can_i(&self) -> String {
        let mut s = format!("{} {}", self.verb, self.resource);
        if !self.group.is_empty() {
            s.push('.');
            s.push_str(self.group);
        }
        if let Some(sub) = self.subresource {
            s.push_str(&format!(" --subresource={sub}"));
        }
        s
    }

    /// The rule that allows it, in a role's YAML flow style:
    /// `{apiGroups: [""], resources: ["pods"], verbs: ["list"]}`.
    pub fn rule(&self) -> String {
        rule(self.verb, self.group, &self.resource_path())
    }

    /// `pods/log` for a subresource, else the resource.
    pub fn resource_path(&self) -> String {
        match self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => self.resource.to_string(),
        }
    }
}

/// `{apiGroups: ["GROUP"], resources: ["RESOURCE"], verbs: ["VERB"]}`.
pub fn rule(verb: &str, group: &str, resource: &str) -> String {
    format!("{{apiGroups: [\"{group}\"], resources: [\"{resource}\"], verbs: [\"{verb}\"]}}")
}

/// What a resource's reads feed: the checks and target kinds that need it.
pub const fn feeds(resource: ResourceKind) -> &'static str {
    use ResourceKind as R;
    match resource {
        R::Deployment | R::StatefulSet | R::DaemonSet => {
            "the workload targets and the workloads a release or GitOps target reaches: spec_readback, observed_generation, rollout_complete, pod_spec"
        }
        R::Rollout => "rollout/ targets (Argo Rollouts): spec_readback, rollout_complete, traffic_current",
        R::ReplicaSet | R::ControllerRevision => {
            "which pods are of the current template: pods_current, pod_restarted, superseded"
        }
        R::Pod => "pods_current, pod_restarted, pod_spec, image_digest_current, live_since",
        R::Node => "image_digest_current of a mutable tag (the nodes' platforms)",
        R::Secret => {
            "release/ targets (Helm's Secret storage): release_revision, release_version, manifest_contains; image_digest_current (pull Secrets)"
        }
        R::ConfigMap => "release/ targets stored by HELM_DRIVER=configmap",
        R::HelmRelease => "helmrelease/ targets (Flux): gitops_revision, condition_fresh",
        R::Kustomization => "kustomization/ targets (Flux): gitops_revision, condition_fresh",
        R::GitRepository => "kustomization/ and helmrelease/ targets: the source's revision",
        R::Application => "application/ targets (Argo CD): gitops_revision, condition_fresh",
        R::Canary => "canary/ targets (Flagger): rollout_complete, traffic_current",
        R::KnativeService | R::KnativeRevision => {
            "ksvc/ targets (Knative): spec_readback, rollout_complete, traffic_current"
        }
        R::Service | R::EndpointSlice => "traffic_current",
    }
}

/// The target kinds whose runs read `resource`; empty: every kind.
pub const fn kinds_reading(resource: ResourceKind) -> &'static [TargetKind] {
    use ResourceKind as R;
    use TargetKind as K;
    match resource {
        R::Rollout => &[K::Rollout],
        R::Secret | R::ConfigMap => &[K::Release],
        R::HelmRelease => &[K::HelmRelease],
        R::Kustomization => &[K::Kustomization],
        R::GitRepository => &[K::Kustomization, K::HelmRelease],
        R::Application => &[K::Application],
        R::Canary => &[K::Canary],
        R::KnativeService | R::KnativeRevision => &[K::KnativeService],
        R::Deployment
        | R::StatefulSet
        | R::DaemonSet
        | R::ReplicaSet
        | R::ControllerRevision
        | R::Pod
        | R::Node
        | R::Service
        | R::EndpointSlice => &[],
    }
}

/// When only some runs send `verb` on `resource` (see [`Read::only`]).
const fn only_when(resource: ResourceKind, verb: Verb) -> Option<&'static str> {
    match (resource, verb) {
        (_, Verb::Watch) => Some("with --wait"),
        (ResourceKind::Node, _) => Some("for an image with a mutable tag"),
        // A release's storage is listed; a GET is a pod's pull Secret, for any kind.
        (ResourceKind::Secret, Verb::Get) => Some("for a mutable tag's pull Secret"),
        _ => None,
    }
}

/// Every read verify may send, in the kind table's order, then the reads outside it (the
/// events of a target that is not live, the namespace a target names).
pub fn reads() -> Vec<Read> {
    let mut all = Vec::new();
    for row in RESOURCES {
        for verb in row.verbs {
            let pull_secret = row.resource.holds_secrets() && *verb == Verb::Get;
            all.push(Read {
                verb: verb.as_str(),
                group: row.group,
                resource: row.plural,
                subresource: None,
                scope: row.scope,
                feeds: if pull_secret {
                    "image_digest_current: a pod's imagePullSecrets, to ask its registry"
                } else {
                    feeds(row.resource)
                },
                kinds: if pull_secret {
                    &[]
                } else {
                    kinds_reading(row.resource)
                },
                only: only_when(row.resource, *verb),
            });
        }
        for (sub, verb) in row.subresources {
            all.push(Read {
                verb: verb.as_str(),
                group: row.group,
                resource: row.plural,
                subresource: Some(sub),
                scope: row.scope,
                feeds: "the last lines of a container that is not ready",
                kinds: &[],
                only: Some("with --logs"),
            });
        }
    }
    let warning_events = "why a target is not live (its Warning events)";
    all.extend([
        Read {
            verb: "list",
            group: "",
            resource: "events",
            subresource: None,
            scope: Scope::Namespaced,
            feeds: warning_events,
            kinds: &[],
            only: Some("when a target is not live"),
        },
        Read {
            verb: "list",
            group: "events.k8s.io",
            resource: "events",
            subresource: None,
            scope: Scope::Namespaced,
            feeds: warning_events,
            kinds: &[],
            only: Some("when a target is not live"),
        },
        Read {
            verb: "get",
            group: "",
            resource: "namespaces",
            subresource: None,
            scope: Scope::Cluster,
            feeds: "telling a namespace that does not exist (exit 2) from a target not there",
            kinds: &[],
            only: Some("when a target is not found"),
        },
        Read {
            verb: "list",
            group: "",
            resource: "namespaces",
            subresource: None,
            scope: Scope::Cluster,
            feeds: "the did-you-mean of a misspelt namespace",
            kinds: &[],
            only: Some("when a target's namespace does not exist"),
        },
    ]);
    all
}

impl Read {
    /// Whether a run for targets of `kinds` (none given: any run) needs it. `required`: every
    /// such run sends it (not only with a flag or on a path some runs take).
    pub fn needed_by(&self, kinds: &[TargetKind]) -> bool {
        self.kinds.is_empty() || kinds.is_empty() || self.kinds.iter().any(|k| kinds.contains(k))
    }

    /// Whether every run for targets of `kinds` sends it: needed by them, with no condition,
    /// and (without targets) needed by every kind.
    pub fn required_by(&self, kinds: &[TargetKind]) -> bool {
        self.only.is_none()
            && if kinds.is_empty() {
                self.kinds.is_empty()
            } else {
                self.needed_by(kinds)
            }
    }
}

impl Denied {
    /// Who was refused, as the API server's message names them: `User "NAME" cannot …`.
    pub fn identity(&self) -> Option<&str> {
        let rest = self.message.split_once("User \"")?.1;
        rest.split_once('"').map(|(who, _)| who)
    }

    /// The next step of a refused read: who cannot do what where, the rule that allows it
    /// and the role that ships it, and the `kubectl auth can-i` that checks it.
    pub fn next_step(&self) -> Suggestion {
        let resource = self.resource.plural();
        let group = self.resource.group();
        let who = self
            .identity()
            .map_or("this identity".to_string(), |w| format!("the identity {w}"));
        let cluster_scoped = self.resource.row().scope == Scope::Cluster;
        // A namespaced read refused without a namespace was a LIST across all of them (-A).
        let namespace = self.namespace.as_deref().filter(|ns| !ns.is_empty());
        let (where_, binding, scope_flag) = match namespace {
            _ if cluster_scoped => (
                String::new(),
                "a ClusterRole rule bound by a ClusterRoleBinding",
                Vec::new(),
            ),
            Some(ns) => (
                format!(" in namespace {ns}"),
                "a Role rule",
                vec!["-n".to_string(), ns.to_string()],
            ),
            None => (
                " in every namespace".to_string(),
                "a ClusterRole rule bound by a ClusterRoleBinding",
                vec!["-A".to_string()],
            ),
        };
        let rule = rule(&self.verb, group, resource);
        let shipped = if self.resource.holds_secrets() {
            format!("{READ_ONLY_ROLE} and {NAMESPACED_ROLE} grant it; {NO_SECRETS_ROLE} leaves Secrets out")
        } else if cluster_scoped {
            format!("{READ_ONLY_ROLE} grants it")
        } else {
            format!("{READ_ONLY_ROLE} and {NAMESPACED_ROLE} grant it")
        };
        let can_i = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let mut check = vec!["auth".to_string(), "can-i".into(), self.verb.clone(), can_i];
        check.extend(scope_flag);
        Suggestion::text(format!(
            "{who} cannot {} {resource}{where_}; {binding} {rule} allows it ({shipped}; check: ",
            self.verb
        ))
        .command(Command::kubectl(check))
        .then(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(resource: ResourceKind, namespace: Option<&str>, verb: &str) -> Denied {
        Denied {
            namespace: namespace.map(str::to_string),
            resource,
            verb: verb.into(),
            message: format!(
                "{} is forbidden: User \"system:serviceaccount:liveproof:liveproof\" cannot {verb} resource \"{}\" in API group \"{}\" in the namespace \"apps\"",
                resource.plural(),
                resource.plural(),
                resource.group()
            ),
        }
    }

    #[test]
    fn a_refused_read_names_who_the_rule_and_the_role() {
        let step = denied(ResourceKind::Pod, Some("apps"), "list")
            .next_step()
            .to_string();
        assert_eq!(
            step,
            "the identity system:serviceaccount:liveproof:liveproof cannot list pods in namespace apps; \
             a Role rule {apiGroups: [\"\"], resources: [\"pods\"], verbs: [\"list\"]} allows it \
             (deploy/rbac-readonly.yaml and deploy/rbac-namespaced/ grant it; check: \
             kubectl auth can-i list pods -n apps)"
        );
        let secrets = denied(ResourceKind::Secret, Some("apps"), "list")
            .next_step()
            .to_string();
        assert!(
            secrets.contains("deploy/rbac-no-secrets.yaml leaves Secrets out"),
            "{secrets}"
        );
        let nodes = denied(ResourceKind::Node, None, "list")
            .next_step()
            .to_string();
        assert!(
            nodes.contains("cannot list nodes; a ClusterRole rule bound by a ClusterRoleBinding {apiGroups: [\"\"], resources: [\"nodes\"]")
                && nodes.ends_with("kubectl auth can-i list nodes)"),
            "{nodes}"
        );
        let slices = denied(ResourceKind::EndpointSlice, Some("apps"), "list")
            .next_step()
            .to_string();
        assert!(
            slices.contains("{apiGroups: [\"discovery.k8s.io\"], resources: [\"endpointslices\"], verbs: [\"list\"]}")
                && slices.contains("can-i list endpointslices.discovery.k8s.io -n apps"),
            "{slices}"
        );
        let anonymous = Denied {
            message: "forbidden".into(),
            ..denied(ResourceKind::Pod, Some("apps"), "list")
        };
        assert!(anonymous
            .next_step()
            .to_string()
            .starts_with("this identity cannot list pods in namespace apps"));
    }

    /// Every read the table says verify sends is listed once, with what it feeds.
    #[test]
    fn the_reads_are_the_table_and_the_reads_outside_it() {
        let all = reads();
        let spelled: Vec<String> = all.iter().map(Read::can_i).collect();
        let unique: std::collections::BTreeSet<&String> = spelled.iter().collect();
        assert_eq!(unique.len(), spelled.len(), "{spelled:?}");
        for must in [
            "list pods",
            "get pods --subresource=log",
            "get secrets",
            "list nodes",
            "get namespaces",
            "list namespaces",
            "list events.events.k8s.io",
            "watch deployments.apps",
        ] {
            assert!(spelled.iter().any(|s| s == must), "{must}: {spelled:?}");
        }
        assert!(all.iter().all(|r| !r.feeds.is_empty()));
        assert_eq!(
            all.iter()
                .find(|r| r.resource == "pods" && r.subresource.is_some())
                .map(Read::rule),
            Some("{apiGroups: [\"\"], resources: [\"pods/log\"], verbs: [\"get\"]}".to_string())
        );
    }
}
