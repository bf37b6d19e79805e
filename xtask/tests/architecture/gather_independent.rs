//! Nothing in gather imports the CLI crate (issue 34, "Done when"): no dependency on the
//! `liveproof` package, directly (any section of its Cargo.toml) or through a workspace crate
//! it depends on, and no `liveproof::` path in its code. True today; it stays true.

use xtask::arch::gather_reaches_the_cli;

#[test]
fn gather_never_imports_the_cli() {
    let problems = gather_reaches_the_cli(&super::root()).expect("the sources are readable");
    assert!(
        problems.is_empty(),
        "crates/gather reaches the CLI crate:\n{}\nwhat gather needs from it belongs in \
         gather, or in a crate both depend on",
        super::listed(&problems)
    );
}
