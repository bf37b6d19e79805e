//! `config.rs` validates only: no file, process, git or kubeconfig read (issue 34, "Done
//! when"; design.md says "before any I/O"). Counted over its non-test code, comments and
//! strings left out, with the patterns of PLAN §1.3 (`xtask::arch::IO_PATTERN`).

use xtask::arch::{config_io, CONFIG};

/// Lines of `config.rs` doing I/O (`cargo xtask arch`, section 1.3): 32 at WP0's commit, none
/// since WP2 moved every read to gather's resolver.
const IO_LINES: usize = 0;

#[test]
#[expect(
    clippy::absurd_extreme_comparisons,
    reason = "the ceiling reached 0 (WP2); the ratchet stays written as the others are"
)]
fn config_io_does_not_grow() {
    let io = config_io(&super::root()).expect("config.rs is readable");
    assert!(
        io.len() <= IO_LINES,
        "{CONFIG} has {} lines doing I/O, more than the {IO_LINES} issue 34 takes to none:\n{}\n\
         read files, stdin, git and the kubeconfig in gather (resolve), and hand config what \
         they read",
        io.len(),
        super::listed(&io)
    );
}

#[test]
fn config_does_no_io() {
    let io = config_io(&super::root()).expect("config.rs is readable");
    assert!(
        io.is_empty(),
        "{CONFIG} still does I/O:\n{}",
        super::listed(&io)
    );
}
