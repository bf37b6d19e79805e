//! No two modules import each other (issue 34, "Done when"). Counted per crate, over the
//! non-test code of `crates/*/src`, a module per file; a parent `mod.rs` and its child are
//! nesting, not a loop. Two counts: the (paths that name the module) and the stricter
//! one that also follows items re-exported at a crate root (`crate::Observed` is `observed`).

use xtask::arch::{module_pairs, Counting, ModulePair};

/// The pairs at WP0's commit, the way (`cargo xtask arch`, section 1.1), less those
/// broken since (WP4: helm's `payload <-> storage`, sim's `openapi <-> server`; WP5: liveproof's
/// `snapshot <-> verifier`; WP1: evidence's; gather's `live::kinds <-> live::objects`, whose
/// shared metadata view is the leaf `live::meta`). None is left, and none may join.
const PAIRS_DIRECT: &[&str] = &[];

/// The pairs at WP0's commit, following crate-root re-exports too (`cargo xtask arch`, the
/// section after 1.1), less those broken since (WP1: evidence's ten, by its `facts` module,
/// the kind tables in `kinds/mod.rs` and `Observed::workloads`). None is left.
const PAIRS_FOLLOWING_REEXPORTS: &[&str] = &[];

fn pairs(counting: Counting) -> Vec<ModulePair> {
    module_pairs(&super::root(), counting).expect("the sources are readable")
}

fn lines(pairs: &[ModulePair]) -> Vec<String> {
    pairs.iter().map(ModulePair::line).collect()
}

#[test]
fn no_new_module_cycles() {
    for (counting, known) in [
        (Counting::Direct, PAIRS_DIRECT),
        (Counting::FollowingReexports, PAIRS_FOLLOWING_REEXPORTS),
    ] {
        let new: Vec<String> = lines(&pairs(counting))
            .into_iter()
            .filter(|p| !known.contains(&p.as_str()))
            .collect();
        assert!(
            new.is_empty(),
            "modules that now import each other ({counting:?}), beside the ones issue 34 \
             removes:\n{}\nmove what both need into a module of its own, or make one of them \
             the only caller (`cargo xtask arch` lists every pair)",
            super::listed(&new)
        );
    }
}

/// The count: no two modules name each other.
#[test]
fn no_module_pair_names_the_other() {
    let left = lines(&pairs(Counting::Direct));
    assert!(
        left.is_empty(),
        "modules that import each other:\n{}",
        super::listed(&left)
    );
}

#[test]
fn no_module_pair_imports_each_other() {
    for counting in [Counting::Direct, Counting::FollowingReexports] {
        let left = lines(&pairs(counting));
        assert!(
            left.is_empty(),
            "modules that import each other ({counting:?}):\n{}",
            super::listed(&left)
        );
    }
}
