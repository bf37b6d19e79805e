//! `verifier.rs` becomes an orchestrator of at most 300 lines (issue 34, "Done when"): it asks
//! gather for one complete `Observed`, the judge for the report, and hands it to a renderer.

use xtask::arch::{line_count, VERIFIER};

/// Its lines (`wc -l crates/liveproof/src/verifier.rs`, or `cargo xtask arch`, section 1.2):
/// 1262 at WP0's commit, lowered as WP5 moved its reads to gather, its judgement to evidence
/// and its adapters of the command's configuration to `verify_run.rs`. Lower it when the file
/// shrinks.
const VERIFIER_LINES: usize = 295;

/// The bound.
const ORCHESTRATOR_LINES: usize = 300;

fn lines() -> usize {
    line_count(&super::root().join(VERIFIER)).expect("verifier.rs is readable")
}

#[test]
fn verifier_does_not_grow() {
    let lines = lines();
    assert!(
        lines <= VERIFIER_LINES,
        "{VERIFIER} has {lines} lines, more than the {VERIFIER_LINES} it had when issue 34 \
         started taking it to {ORCHESTRATOR_LINES}: put what it gained where issue 34 says it \
         goes (resolving and reading in gather, judging in evidence, printing in report)"
    );
}

#[test]
fn verifier_is_an_orchestrator() {
    let lines = lines();
    assert!(
        lines <= ORCHESTRATOR_LINES,
        "{VERIFIER} has {lines} lines, more than {ORCHESTRATOR_LINES}"
    );
}
