//! No `match` over target kinds outside the descriptor module (issue 34, deliverable 1): a
//! branch is a match arm, a `matches!`/`if let`, or an `==`/`!=` against a `TargetKind::` or
//! `ResourceKind::` variant in non-test code (building a value is not one). The descriptor
//! module (`kinds/`, with the kind tables in `kinds/mod.rs`) is where branching on a kind
//! belongs.

use std::collections::BTreeMap;

use xtask::arch::{kind_branches, kind_branches_per_file, KindBranch};

/// The descriptor module (PLAN §2.2): branches inside it are the descriptors themselves.
const DESCRIPTOR_MODULE: &str = "crates/evidence/src/kinds/";

/// Branches per file at WP0's commit: 74 in 17 files (`cargo xtask arch`, section 1.4, "per
/// file"). A file may only go down (lower its number, or remove its row, in the same commit);
/// a file not listed may have none.
const PER_FILE: &[(&str, usize)] = &[("crates/gather/src/registry.rs", 1)];

/// The `ResourceKind` variants that are no `TargetKind` (what liveproof reads on the way to a
/// target, not a kind a user verifies): gather's typed reads may still tell these apart after
/// WP7b (PLAN §6.2, "ResourceKind only for non-kind resources").
const NOT_TARGET_KINDS: &[&str] = &[
    "ReplicaSet",
    "ControllerRevision",
    "Pod",
    "Node",
    "Secret",
    "ConfigMap",
    "GitRepository",
    "KnativeRevision",
    "Service",
    "EndpointSlice",
];

fn branches() -> Vec<KindBranch> {
    kind_branches(&super::root())
        .expect("the sources are readable")
        .into_iter()
        .filter(|b| !b.file.starts_with(DESCRIPTOR_MODULE))
        .collect()
}

fn describe(b: &KindBranch) -> String {
    format!("{}:{} {} {}", b.file, b.line, b.form, b.variants.join(" "))
}

#[test]
fn no_new_kind_matches() {
    let ceiling: BTreeMap<&str, usize> = PER_FILE.iter().copied().collect();
    let all = branches();
    let mut grown = Vec::new();
    for (file, count) in kind_branches_per_file(&all) {
        let allowed = ceiling.get(file.as_str()).copied().unwrap_or(0);
        if count > allowed {
            let here: Vec<String> = all
                .iter()
                .filter(|b| b.file == file)
                .map(describe)
                .collect();
            grown.push(format!(
                "{file}: {count} branches on a kind variant, at most {allowed}:\n    {}",
                here.join("\n    ")
            ));
        }
    }
    assert!(
        grown.is_empty(),
        "{}\nissue 34 takes the kinds into one descriptor per kind: read what differs by kind \
         from the descriptor (or the kind tables, until WP1 lands) instead of matching on the \
         variant; when a branch moved here from another file, lower that file's ceiling too",
        grown.join("\n")
    );
}

#[test]
fn no_match_on_a_target_kind_outside_the_descriptor_module() {
    let left: Vec<String> = branches()
        .iter()
        .filter(|b| !b.in_kind_tables())
        .filter(|b| {
            b.variants.iter().any(|v| {
                let (kind, variant) = v.rsplit_once("::").unwrap_or(("", v));
                kind.ends_with("TargetKind") || !NOT_TARGET_KINDS.contains(&variant)
            })
        })
        .map(describe)
        .collect();
    assert!(
        left.is_empty(),
        "branches on a target kind outside {DESCRIPTOR_MODULE}:\n{}",
        super::listed(&left)
    );
}
