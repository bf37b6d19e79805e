//! One test kit (issue 34, deliverable 4): the `tests/common` kits and `tests/world` move into
//! the testkit crate, `real_cluster.rs` splits into a file per story, and tests wait with
//! `testkit::wait` (a bound and a condition), not loops of their own around a `sleep`.

use xtask::arch::{test_kits, wait_loops, REAL_CLUSTER};

/// Hand-written wait loops in tests at WP0's commit (`cargo xtask arch`, section 1.5: a
/// deadline or a bounded `for` with a sleep within 15 lines). Lower it when one goes.
const WAIT_LOOPS: usize = 14;

#[test]
fn no_new_wait_loop() {
    let loops = wait_loops(&super::root()).expect("the tests are readable");
    assert!(
        loops.len() <= WAIT_LOOPS,
        "{} hand-written wait loops in tests, more than {WAIT_LOOPS}:\n{}\nwait with \
         liveproof_testkit::wait (wait_for, wait_until): a condition and a bound",
        loops.len(),
        super::listed(&loops)
    );
}

#[test]
#[ignore = "turned on by WP3: tests wait with testkit::wait"]
fn waits_use_testkit_wait() {
    let loops = wait_loops(&super::root()).expect("the tests are readable");
    assert!(
        loops.is_empty(),
        "hand-written wait loops in tests:\n{}",
        super::listed(&loops)
    );
}

#[test]
fn real_cluster_is_a_file_per_story() {
    let single = super::root().join(REAL_CLUSTER);
    assert!(
        !single.exists(),
        "{REAL_CLUSTER} is still one file: one file per story under tests/real_cluster/"
    );
}

#[test]
fn one_test_kit() {
    let kits = test_kits(&super::root()).expect("the tests are readable");
    let files: Vec<String> = kits.into_iter().map(|k| k.file).collect();
    assert!(
        files.is_empty(),
        "test kits beside the testkit crate:\n{}\nput what a crate's tests share in \
         crates/testkit (a module the tests name `common`: `use liveproof_testkit::binary as \
         common;`)",
        super::listed(&files)
    );
}
