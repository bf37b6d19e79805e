//! `verify --from` without `-n`: which namespace the targets that name none are read in. As
//! live mode, the kubeconfig context's namespace (the configuration reads it); without one,
//! the only namespace of the dump that holds them; else `default`, and the report names where
//! the dump does hold them, so nobody is left with a "not found" they cannot explain.

use std::path::Path;

use liveproof_evidence::{namespaces_holding, Observed, Report, ReportKind, Target};

/// The namespace chosen, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpNamespace {
    /// `-n`, or the kubeconfig context's namespace (`origin` says which, when it is that).
    Given {
        namespace: String,
        origin: Option<String>,
    },
    /// Nothing named one: the only namespace of the dump that holds the targets.
    OnlyOne {
        namespace: String,
        targets: Vec<Target>,
    },
    /// Nothing named one and the dump holds the targets in several: `default`, and each
    /// target with where the dump holds it.
    Several { held: Vec<(Target, Vec<String>)> },
    /// Nothing named one and the dump holds none of the targets (or there are none): `default`.
    Default,
}

const DEFAULT: &str = "default";

impl DumpNamespace {
    /// The choice for `targets` in `observed`: `namespace` is `-n` or the kubeconfig
    /// context's (`origin` says which, when it is that), `all_namespaces` is `-A`.
    pub fn choose(
        namespace: Option<&str>,
        origin: Option<&str>,
        all_namespaces: bool,
        targets: &[Target],
        observed: &Observed,
    ) -> DumpNamespace {
        if let Some(namespace) = namespace {
            return DumpNamespace::Given {
                namespace: namespace.to_string(),
                origin: origin.map(str::to_string),
            };
        }
        // -A looks in every namespace; nothing is chosen for it.
        if all_namespaces {
            return DumpNamespace::Default;
        }
        let held: Vec<(Target, Vec<String>)> = targets
            .iter()
            .filter(|t| t.namespace.is_none())
            .map(|t| (t.clone(), namespaces_holding(observed, t.kind, &t.name)))
            .filter(|(_, namespaces)| !namespaces.is_empty())
            .collect();
        let mut namespaces: Vec<&String> = held.iter().flat_map(|(_, ns)| ns).collect();
        namespaces.sort();
        namespaces.dedup();
        match namespaces.as_slice() {
            [] => DumpNamespace::Default,
            [only] if only.as_str() == DEFAULT => DumpNamespace::Default,
            [only] => DumpNamespace::OnlyOne {
                namespace: (*only).clone(),
                targets: held.into_iter().map(|(t, _)| t).collect(),
            },
            _ => DumpNamespace::Several { held },
        }
    }

    /// The namespace targets that name none are judged in.
    pub fn namespace(&self) -> &str {
        match self {
            DumpNamespace::Given { namespace, .. } | DumpNamespace::OnlyOne { namespace, .. } => {
                namespace
            }
            DumpNamespace::Several { .. } | DumpNamespace::Default => DEFAULT,
        }
    }

    /// Says the choice in the log (`-v`).
    pub fn log(&self) {
        match self {
            DumpNamespace::Given {
                namespace,
                origin: Some(origin),
            } => tracing::info!("namespace {namespace}: {origin}"),
            DumpNamespace::Given { .. } => {}
            other => {
                if let Some(note) = other.note("the dump") {
                    tracing::info!("{note}");
                }
            }
        }
    }

    /// What the report's reader must know about a namespace no flag chose, if anything.
    fn note(&self, dump: &str) -> Option<String> {
        match self {
            DumpNamespace::OnlyOne { namespace, targets } => Some(format!(
                "namespace {namespace}: no -n and no kubeconfig namespace, and {namespace} is the \
                 only namespace of {dump} holding {}",
                names(targets.iter())
            )),
            DumpNamespace::Several { held } => Some(format!(
                "namespace {DEFAULT}: no -n and no kubeconfig namespace, and {dump} holds {}; \
                 name one with -n",
                held.iter()
                    .map(|(t, ns)| format!("{t} in {}", ns.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            DumpNamespace::Given { .. } | DumpNamespace::Default => None,
        }
    }

    /// Puts the choice in `report`: a note when no flag chose the namespace, and for a target
    /// looked for in `default` that the dump holds only elsewhere, a next step naming where.
    pub fn explain(&self, report: &mut Report, dump: &Path) {
        let dump = format!("--from {}", dump.display());
        if let Some(note) = self.note(&dump) {
            report.notes.push(note);
        }
        let DumpNamespace::Several { held } = self else {
            return;
        };
        for (target, namespaces) in held {
            if namespaces.iter().any(|ns| ns == DEFAULT) {
                continue;
            }
            let judged = report.targets.iter_mut().find(|t| {
                t.kind == ReportKind::Target(target.kind)
                    && t.namespace == DEFAULT
                    && t.name == target.name
            });
            if let (Some(judged), Some(first)) = (judged, namespaces.first()) {
                judged.next_step = Some(
                    format!(
                        "{dump} holds {target} in {}, not in namespace {DEFAULT}: say which, e.g. \
                         {first}/{target} or -n {first}",
                        namespaces.join(", "),
                    )
                    .into(),
                );
            }
        }
    }
}

/// `deployment/inventory, statefulset/db`.
fn names<'a>(targets: impl Iterator<Item = &'a Target>) -> String {
    targets
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
