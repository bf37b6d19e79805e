//! What the user asked about: `deployment/NAME`, `NS/sts/NAME`, ...

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// A Helm release, read from its storage Secret/ConfigMap.
    Release,
    /// Flux `HelmRelease`.
    HelmRelease,
    /// Flux `Kustomization`.
    Kustomization,
    /// Argo CD `Application`.
    Application,
}

impl TargetKind {
    /// The Kubernetes kind name, as in an object's `kind` field.
    pub const fn kind_name(self) -> &'static str {
        match self {
            TargetKind::Deployment => "Deployment",
            TargetKind::StatefulSet => "StatefulSet",
            TargetKind::DaemonSet => "DaemonSet",
            TargetKind::Release => "Release",
            TargetKind::HelmRelease => "HelmRelease",
            TargetKind::Kustomization => "Kustomization",
            TargetKind::Application => "Application",
        }
    }

    /// The short form used on the command line and in messages.
    pub const fn cli_name(self) -> &'static str {
        match self {
            TargetKind::Deployment => "deployment",
            TargetKind::StatefulSet => "statefulset",
            TargetKind::DaemonSet => "daemonset",
            TargetKind::Release => "release",
            TargetKind::HelmRelease => "helmrelease",
            TargetKind::Kustomization => "kustomization",
            TargetKind::Application => "application",
        }
    }

    /// Deployment, StatefulSet and DaemonSet: the kinds whose pods we judge directly.
    pub const fn is_workload(self) -> bool {
        matches!(
            self,
            TargetKind::Deployment | TargetKind::StatefulSet | TargetKind::DaemonSet
        )
    }

    /// Every spelling accepted on the command line, for `--help` and error messages.
    pub const ACCEPTED: &'static str = "deployment (deploy), statefulset (sts), daemonset (ds), \
         release, helmrelease (hr), kustomization (ks), application (app)";

    pub fn parse(word: &str) -> Option<TargetKind> {
        // kubectl also accepts plurals and the `kind.group` form; so do we.
        let lower = word.to_ascii_lowercase();
        let base = lower.split('.').next().unwrap_or_default();
        Some(match base {
            "deployment" | "deployments" | "deploy" => TargetKind::Deployment,
            "statefulset" | "statefulsets" | "sts" => TargetKind::StatefulSet,
            "daemonset" | "daemonsets" | "ds" => TargetKind::DaemonSet,
            "release" | "releases" => TargetKind::Release,
            "helmrelease" | "helmreleases" | "hr" => TargetKind::HelmRelease,
            "kustomization" | "kustomizations" | "ks" => TargetKind::Kustomization,
            "application" | "applications" | "app" | "apps" => TargetKind::Application,
            _ => return None,
        })
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cli_name())
    }
}

/// A target as given: kind, optional namespace (resolved later against `-n` and the
/// kubeconfig's default), name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    pub kind: TargetKind,
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TargetError {
    #[error("target `{given}` is not KIND/NAME or NAMESPACE/KIND/NAME\nhint: e.g. `deployment/inventory` or `apps/deploy/inventory`")]
    Shape { given: String },
    #[error(
        "target `{given}`: unknown kind `{kind}`\nhint: accepted kinds are {}",
        TargetKind::ACCEPTED
    )]
    UnknownKind { given: String, kind: String },
    #[error("target `{given}`: `{part}` is not a valid Kubernetes name (lowercase letters, digits, '-' and '.', at most 253 characters)")]
    BadName { given: String, part: String },
}

impl Target {
    pub fn new(kind: TargetKind, namespace: Option<&str>, name: &str) -> Self {
        Target {
            kind,
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    pub fn parse(given: &str) -> Result<Target, TargetError> {
        let parts: Vec<&str> = given.split('/').collect();
        let (namespace, kind, name) = match parts.as_slice() {
            [kind, name] => (None, *kind, *name),
            [ns, kind, name] => (Some(*ns), *kind, *name),
            _ => {
                return Err(TargetError::Shape {
                    given: given.to_string(),
                })
            }
        };
        let kind_parsed = TargetKind::parse(kind).ok_or_else(|| TargetError::UnknownKind {
            given: given.to_string(),
            kind: kind.to_string(),
        })?;
        for part in namespace.iter().chain(std::iter::once(&name)) {
            if !is_dns_subdomain(part) {
                return Err(TargetError::BadName {
                    given: given.to_string(),
                    part: part.to_string(),
                });
            }
        }
        Ok(Target::new(kind_parsed, namespace, name))
    }

    /// The namespace, or `default_ns` when the target did not name one.
    pub fn namespace_or<'a>(&'a self, default_ns: &'a str) -> &'a str {
        self.namespace.as_deref().unwrap_or(default_ns)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}/{}", self.kind, self.name),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && s.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_aliases_and_namespaces() {
        let t = Target::parse("deploy/inventory").expect("parses");
        assert_eq!(t, Target::new(TargetKind::Deployment, None, "inventory"));
        let t = Target::parse("apps/sts/db").expect("parses");
        assert_eq!(t, Target::new(TargetKind::StatefulSet, Some("apps"), "db"));
        let t = Target::parse("daemonsets.apps/agent").expect("parses");
        assert_eq!(t.kind, TargetKind::DaemonSet);
        assert_eq!(
            Target::parse("hr/inventory").map(|t| t.kind),
            Ok(TargetKind::HelmRelease)
        );
    }

    #[test]
    fn rejects_bad_targets_with_the_reason() {
        assert!(matches!(
            Target::parse("inventory"),
            Err(TargetError::Shape { .. })
        ));
        assert!(matches!(
            Target::parse("pod/x"),
            Err(TargetError::UnknownKind { .. })
        ));
        assert!(matches!(
            Target::parse("deploy/Inventory"),
            Err(TargetError::BadName { .. })
        ));
        let msg = Target::parse("cronjob/x")
            .expect_err("unknown kind")
            .to_string();
        assert!(msg.contains("cronjob") && msg.contains("hint:"), "{msg}");
    }
}
