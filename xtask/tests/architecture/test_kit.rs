//! One test kit (issue 34, deliverable 4): the `tests/common` kits and `tests/world` move into
//! the testkit crate, `real_cluster.rs` splits into a file per story, and tests wait with
//! `testkit::wait` (a bound and a condition), not loops of their own around a `sleep`.

use xtask::arch::{test_kits, wait_loops, REAL_CLUSTER};

/// The kits beside testkit at WP0's commit (`cargo xtask arch`, section 1.5). One may go (take
/// it off the list in the same commit); none may come.
const KITS: &[&str] = &[
    "crates/evidence/tests/common/mod.rs",
    "crates/lint/tests/common/mod.rs",
    "crates/liveproof/tests/common/mod.rs",
    "crates/sim/tests/common/mod.rs",
    "crates/liveproof/tests/world/mod.rs",
];

/// Hand-written wait loops in tests at WP0's commit (`cargo xtask arch`, section 1.5: a
/// deadline or a bounded `for` with a sleep within 15 lines). Lower it when one goes.
const WAIT_LOOPS: usize = 14;

#[test]
fn no_new_test_kit_or_wait_loop() {
    let root = super::root();
    let new: Vec<String> = test_kits(&root)
        .expect("the tests are readable")
        .into_iter()
        .map(|k| k.file)
        .filter(|f| !KITS.contains(&f.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "a test kit beside the testkit crate:\n{}\nput what a second crate's tests share in \
         crates/testkit",
        super::listed(&new)
    );
    let loops = wait_loops(&root).expect("the tests are readable");
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
#[ignore = "turned on by WP3: real_cluster.rs is split into a file per story"]
fn real_cluster_is_a_file_per_story() {
    let single = super::root().join(REAL_CLUSTER);
    assert!(
        !single.exists(),
        "{REAL_CLUSTER} is still one file: one file per story under tests/real_cluster/"
    );
}

#[test]
#[ignore = "turned on by WP8: the tests/common kits and tests/world are in testkit"]
fn one_test_kit() {
    let kits = test_kits(&super::root()).expect("the tests are readable");
    let files: Vec<String> = kits.into_iter().map(|k| k.file).collect();
    assert!(
        files.is_empty(),
        "test kits beside the testkit crate:\n{}",
        super::listed(&files)
    );
}
