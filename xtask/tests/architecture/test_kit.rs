//! One test kit (issue 34, deliverable 4): the `tests/common` kits and `tests/world` move into
//! the testkit crate, `real_cluster.rs` splits into a file per story, and tests wait with
//! `testkit::wait` (a bound and a condition), not loops of their own around a `sleep`.

use xtask::arch::{test_kits, wait_loops, REAL_CLUSTER};

#[test]
fn waits_use_testkit_wait() {
    let loops = wait_loops(&super::root()).expect("the tests are readable");
    assert!(
        loops.is_empty(),
        "hand-written wait loops in tests:\n{}\nwait with liveproof_testkit::wait (wait_for, \
         wait_until, within): a condition and a bound",
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
