//! What the user asked about: `deployment/NAME`, `NS/sts/NAME`, ...

use std::borrow::Cow;
use std::fmt;

use crate::TargetKind;

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
    #[error("target `{given}` is not KIND/NAME or NAMESPACE/KIND/NAME")]
    Shape { given: String },
    #[error("target `{given}`: a kind with no name after it")]
    KindWithoutName { given: String },
    /// `deploy a deploy/b`: kubectl refuses a kind word beside `KIND/NAME` words, in these words.
    #[error("target `{given}`: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")]
    Mixed { given: String },
    /// An unknown or ambiguous kind; `why` says which, `hint` what to write instead.
    #[error("target `{given}`: {why}")]
    UnknownKind {
        given: String,
        kind: String,
        why: String,
        hint: String,
    },
    #[error("target `{given}`: `{part}` is not a valid Kubernetes name (lowercase letters, digits, '-' and '.', at most 253 characters)")]
    BadName {
        given: String,
        part: String,
        /// The target with the name made valid, when lowercasing or `_` → `-` does it.
        did_you_mean: Option<String>,
    },
}

impl crate::hint::Hinted for TargetError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(match self {
            TargetError::Shape { .. } => Cow::Borrowed("e.g. `deployment/inventory`, `apps/deploy/inventory`, `deploy/a,deploy/b` or `deploy a b`"),
            TargetError::KindWithoutName { given } => Cow::Owned(format!("name what to verify, as kubectl does: `{given} NAME`, `{given}/NAME`, or -l SELECTOR for every one with a label")),
            TargetError::Mixed { .. } => Cow::Borrowed("write every target as KIND/NAME (`deploy/a deploy/b`, `deploy/a,sts/b`) or the kind once and then its names (`deploy a b`)"),
            TargetError::UnknownKind { hint, .. } => Cow::Borrowed(hint),
            TargetError::BadName { did_you_mean, .. } => {
                Cow::Owned(format!("did you mean `{}`?", did_you_mean.as_ref()?))
            }
        })
    }
}

/// Why a kind kubectl knows is not a target, and what to verify instead.
fn not_a_target(kind: &str, name: &str) -> Option<(String, String)> {
    let workloads = format!("deploy/{name}, sts/{name} or ds/{name}");
    Some(match kind {
        "pod" | "pods" | "po" => (
            "pods are not targets: a pod is one replica of a workload, replaced on every rollout, \
             and liveproof proves the workload's pods as a whole"
                .to_string(),
            format!(
                "verify the workload that runs it ({workloads}); `kubectl get pod {name} -o \
                 jsonpath='{{.metadata.ownerReferences[0].kind}}/{{.metadata.ownerReferences[0].name}}'` \
                 names its owner (for a ReplicaSet, verify its Deployment); accepted kinds are {}",
                TargetKind::accepted()
            ),
        ),
        "replicaset" | "replicasets" | "rs" => (
            "ReplicaSets are not targets: a Deployment makes a new one for every revision".to_string(),
            "verify the Deployment that owns it: deploy/NAME (the ReplicaSet's name without its \
             last `-HASH`)"
                .to_string(),
        ),
        "service" | "services" | "svc" | "ingress" | "ingresses" | "ing" | "configmap"
        | "configmaps" | "cm" | "secret" | "secrets" | "job" | "jobs" | "cronjob" | "cronjobs"
        | "cj" | "namespace" | "namespaces" | "ns" => (
            format!("`{kind}` is not a kind liveproof verifies: it proves what runs pods, and the Helm and GitOps objects that lead to them"),
            format!(
                "verify the workloads concerned ({workloads}; the pods read ConfigMaps and Secrets at \
                 start: see --expect-env and --expect-secret-ref); accepted kinds are {}",
                TargetKind::accepted()
            ),
        ),
        _ => return None,
    })
}

/// API groups a target's first part may be mistaken for a kind as (`apps/inventory`).
const API_GROUPS: &[(&str, &str)] = &[
    ("apps", "apps/v1"),
    ("batch", "batch/v1"),
    ("extensions", "extensions/v1beta1"),
    ("core", "v1"),
    ("v1", "v1"),
];

/// The closest accepted spelling of `word`, if it is one typo or two away.
fn closest_kind(word: &str) -> Option<&'static str> {
    closest(word, TargetKind::spellings())
}

/// The candidate closest to `word`, if it is one typo away (two for words of six letters or
/// more): for a did-you-mean.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = if word.len() >= 6 { 2 } else { 1 };
    candidates
        .into_iter()
        .map(|s| (edit_distance(word, s), s))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, s)| (*d, s.len()))
        .map(|(_, s)| s)
}

/// Levenshtein distance, with an adjacent swap counted as one edit (`deploymnet`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The error for a kind [`TargetKind::parse`] does not accept, with the best did-you-mean.
fn unknown_kind(given: &str, namespace: Option<&str>, kind: &str, name: &str) -> TargetError {
    let lower = kind.to_ascii_lowercase();
    let prefix = namespace.map(|ns| format!("{ns}/")).unwrap_or_default();
    let (why, hint) = if let Some((why, hint)) = not_a_target(&lower, name) {
        (why, hint)
    } else if let Some((group, version)) = API_GROUPS.iter().find(|(g, _)| *g == lower) {
        (
            format!("`{kind}` is an API group ({version}), not a kind"),
            format!(
                "did you mean {prefix}deploy/{name} (or sts/{name}, ds/{name})? If `{kind}` is the \
                 namespace, name the kind too: {group}/deploy/{name}, or -n {group} deploy/{name}"
            ),
        )
    } else if let Some(kind_spelling) = closest_kind(&lower) {
        (
            format!("unknown kind `{kind}`"),
            format!(
                "did you mean `{prefix}{kind_spelling}/{name}`? accepted kinds are {}",
                TargetKind::accepted()
            ),
        )
    } else if namespace.is_none() && is_dns_label(kind) {
        (
            format!("unknown kind `{kind}`"),
            format!(
                "accepted kinds are {}; if `{kind}` is a namespace, name the kind too: \
                 {kind}/deploy/{name}, or -n {kind} deploy/{name}",
                TargetKind::accepted()
            ),
        )
    } else {
        (
            format!("unknown kind `{kind}`"),
            format!("accepted kinds are {}", TargetKind::accepted()),
        )
    };
    TargetError::UnknownKind {
        given: given.to_string(),
        kind: kind.to_string(),
        why,
        hint,
    }
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
        let kind_parsed =
            TargetKind::parse(kind).ok_or_else(|| unknown_kind(given, namespace, kind, name))?;
        let valid_namespace = namespace.is_none_or(is_dns_label);
        if !valid_namespace || !is_dns_subdomain(name) {
            let part = if valid_namespace {
                name
            } else {
                namespace.unwrap_or_default()
            };
            let fix = |s: &str| s.to_ascii_lowercase().replace('_', "-");
            let fixed_ns = namespace.map(fix);
            let fixed_name = fix(name);
            let valid =
                fixed_ns.as_deref().is_none_or(is_dns_label) && is_dns_subdomain(&fixed_name);
            return Err(TargetError::BadName {
                given: given.to_string(),
                part: part.to_string(),
                did_you_mean: valid.then(|| match &fixed_ns {
                    Some(ns) => format!("{ns}/{kind}/{fixed_name}"),
                    None => format!("{kind}/{fixed_name}"),
                }),
            });
        }
        Ok(Target::new(kind_parsed, namespace, name))
    }

    /// Targets as kubectl users write them, by kubectl's rules (its resource builder's
    /// `ResourceTypeOrNameArgs`): either every word names a kind and a name (`KIND/NAME`,
    /// `NAMESPACE/KIND/NAME`, comma-separated lists of them: `deploy/a,deploy/b`), or the
    /// first word is a kind (or `KIND,KIND`) and every other word a name of it (`deploy a b`,
    /// `deploy a,b`, `deploy,sts web` for both kinds). Mixing the two is refused with
    /// kubectl's words.
    pub fn parse_all<S: AsRef<str>>(given: &[S]) -> Result<Vec<Target>, TargetError> {
        let words: Vec<&str> = given.iter().map(AsRef::as_ref).collect();
        let slashed = words.iter().filter(|w| w.contains('/')).count();
        if slashed > 0 {
            if let Some(bare) = words.iter().find(|w| !w.contains('/')) {
                return Err(TargetError::Mixed {
                    given: (*bare).to_string(),
                });
            }
            let mut out = Vec::with_capacity(words.len());
            for word in words {
                for part in list(word)? {
                    out.push(Target::parse(part)?);
                }
            }
            return Ok(out);
        }
        let Some((kinds, names)) = words.split_first() else {
            return Ok(Vec::new());
        };
        let kinds = list(kinds)?;
        if names.is_empty() {
            return Err(match kinds.iter().all(|k| TargetKind::parse(k).is_some()) {
                true => TargetError::KindWithoutName {
                    given: words.join(" "),
                },
                false => TargetError::Shape {
                    given: words.join(" "),
                },
            });
        }
        let mut out = Vec::new();
        for kind in kinds {
            for word in names {
                for name in list(word)? {
                    out.push(Target::parse(&format!("{kind}/{name}"))?);
                }
            }
        }
        Ok(out)
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

/// The parts of a comma-separated word, none of them empty (`deploy/a,` names nothing last).
fn list(word: &str) -> Result<Vec<&str>, TargetError> {
    let parts: Vec<&str> = word.split(',').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(TargetError::Shape {
            given: word.to_string(),
        });
    }
    Ok(parts)
}

/// A namespace name: a DNS label (no dots, at most 63 characters).
pub fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && !s.contains('.') && is_dns_subdomain(s)
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
    use crate::hint::Hinted as _;

    /// kubectl's spellings of several targets, each the same targets as `KIND/NAME` words.
    #[test]
    fn every_kubectl_form_of_several_targets() {
        let names = |given: &[&str]| -> Vec<String> {
            Target::parse_all(given)
                .unwrap_or_else(|e| panic!("{given:?}: {e}"))
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        let want = vec!["deployment/a".to_string(), "deployment/b".to_string()];
        assert_eq!(names(&["deploy/a", "deploy/b"]), want);
        assert_eq!(names(&["deploy/a,deploy/b"]), want);
        assert_eq!(names(&["deploy", "a", "b"]), want);
        assert_eq!(names(&["deploy", "a,b"]), want);
        assert_eq!(names(&["deployments.apps", "a", "b"]), want);
        assert_eq!(
            names(&["deploy,sts", "web"]),
            vec!["deployment/web", "statefulset/web"]
        );
        assert_eq!(
            names(&["deploy/a,apps/sts/db", "ds/agent"]),
            vec!["deployment/a", "apps/statefulset/db", "daemonset/agent"]
        );
        // kubectl refuses a kind word beside KIND/NAME words.
        for mixed in [
            &["deploy", "a", "apps/sts/db"][..],
            &["deploy/a", "deploy", "b"],
        ] {
            let err = Target::parse_all(mixed).expect_err("mixed forms");
            assert!(matches!(err, TargetError::Mixed { .. }), "{mixed:?}: {err}");
            assert!(err
                .to_string()
                .contains("no need to specify a resource type"));
        }
        assert!(matches!(
            Target::parse_all(&["deploy", "a,"]),
            Err(TargetError::Shape { .. })
        ));
        assert!(matches!(
            Target::parse_all(&["deploy"]),
            Err(TargetError::KindWithoutName { .. })
        ));
        assert!(matches!(
            Target::parse_all(&["deploy/a,"]),
            Err(TargetError::Shape { .. })
        ));
        assert!(matches!(
            Target::parse_all(&["deplyo", "a"]),
            Err(TargetError::UnknownKind { .. })
        ));
    }

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
        let err = Target::parse("cronjob/x").expect_err("unknown kind");
        assert!(err.to_string().contains("cronjob"), "{err}");
        assert!(err.hint().is_some(), "{err}");
    }

    /// Each kind's hint is its own field, never a line of the message.
    #[test]
    fn each_error_says_its_hint_apart_from_its_message() {
        for (given, hint) in [
            ("inventory", "e.g. `deployment/inventory`"),
            ("deploy/In_ventory", "did you mean `deploy/in-ventory`?"),
            ("pod/x", "deploy/x"),
        ] {
            let err = Target::parse(given).expect_err(given);
            assert!(!err.to_string().contains("hint:"), "{err}");
            let got = err.hint().expect("a hint");
            assert!(got.contains(hint), "{given}: {got}");
        }
        let err = Target::parse_all(&["deploy"]).expect_err("no name");
        assert!(
            err.hint().is_some_and(|h| h.contains("`deploy NAME`")),
            "{err:?}"
        );
        let no_fix = TargetError::BadName {
            given: "deploy/@".into(),
            part: "@".into(),
            did_you_mean: None,
        };
        assert_eq!(no_fix.hint(), None);
    }

    fn error(given: &str) -> String {
        Target::parse(given)
            .expect_err(given)
            .with_hint()
            .to_string()
    }

    #[test]
    fn apps_is_an_api_group_not_an_argo_cd_application() {
        let msg = error("apps/inventory");
        assert!(msg.contains("`apps` is an API group (apps/v1)"), "{msg}");
        assert!(msg.contains("deploy/inventory"), "{msg}");
        assert!(msg.contains("-n apps"), "{msg}");
        assert_eq!(TargetKind::parse("apps"), None);
        assert_eq!(TargetKind::parse("app"), Some(TargetKind::Application));
    }

    #[test]
    fn a_typo_gets_a_did_you_mean() {
        let msg = error("deploymnet/x");
        assert!(msg.contains("did you mean `deployment/x`?"), "{msg}");
        let msg = error("apps/statfulset/db");
        assert!(msg.contains("did you mean `apps/statefulset/db`?"), "{msg}");
        // Nothing close: no guess, the accepted kinds.
        let msg = error("frobnicator/x");
        assert!(!msg.contains("did you mean"), "{msg}");
        assert!(msg.contains(&TargetKind::accepted()), "{msg}");
    }

    #[test]
    fn pods_and_other_kinds_say_why_they_are_not_targets() {
        let msg = error("pod/inventory-7d9c-x2k4");
        assert!(msg.contains("pods are not targets"), "{msg}");
        assert!(msg.contains("ownerReferences"), "{msg}");
        let msg = error("svc/inventory");
        assert!(msg.contains("not a kind liveproof verifies"), "{msg}");
        // Not `sts`, one letter away: a Service is not a StatefulSet.
        assert!(!msg.contains("did you mean"), "{msg}");
        assert!(error("rs/inventory-7d9c").contains("verify the Deployment"));
    }

    #[test]
    fn a_namespace_given_as_a_kind_is_pointed_out() {
        let msg = error("shop/inventory");
        assert!(msg.contains("shop/deploy/inventory"), "{msg}");
    }

    #[test]
    fn an_invalid_name_gets_the_valid_spelling() {
        let msg = error("deploy/Inventory_API");
        assert!(
            msg.contains("did you mean `deploy/inventory-api`?"),
            "{msg}"
        );
        let msg = error("Apps/deploy/inventory");
        assert!(msg.contains("`Apps`"), "{msg}");
        assert!(
            msg.contains("did you mean `apps/deploy/inventory`?"),
            "{msg}"
        );
        // A namespace is a DNS label: no dots.
        assert!(error("a.b/deploy/x").contains("`a.b`"));
    }
}
