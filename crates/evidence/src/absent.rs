//! Targets the cluster says do not exist. On a live cluster that is an input error (a typo, the
//! wrong namespace), never `not_live`, which a pipeline acts on; a `--from` dump lists nothing
//! in full, so there an absent object stays `unproven`.

use crate::{Observed, ResourceKind, Target};

/// A target looked for where its kind was read in full, and not there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    /// The target, with the namespace it was looked for in.
    pub target: Target,
    /// Where it was looked for; [`crate::ALL_NAMESPACES`] (`""`) for every namespace (`-A`).
    pub namespace: String,
    /// What was read there.
    pub resource: ResourceKind,
}

/// Of `targets` (namespaces resolved, see [`crate::resolve_targets`]), those `observed` proves
/// absent: their kind was read in full where they were looked for, nothing refused the read,
/// and no object of that name is there. A release is absent when neither of Helm's storage
/// drivers holds a revision of it.
pub fn absent_targets(observed: &Observed, targets: &[Target]) -> Vec<Absent> {
    targets
        .iter()
        .filter_map(|t| {
            let ns = t.namespace.as_deref().unwrap_or_default();
            let resource = t.kind.resource();
            let read_in_full =
                |r: ResourceKind| observed.is_complete(ns, r) && observed.denial(ns, r).is_none();
            let read = crate::kinds::rules(t.kind)
                .stored_in(t.kind)
                .into_iter()
                .all(read_in_full);
            let holding = crate::namespaces_holding(observed, t.kind, &t.name);
            let held = if ns == crate::ALL_NAMESPACES {
                !holding.is_empty()
            } else {
                holding.iter().any(|h| h == ns)
            };
            (read && !held).then(|| Absent {
                target: t.clone(),
                namespace: ns.to_string(),
                resource,
            })
        })
        .collect()
}
