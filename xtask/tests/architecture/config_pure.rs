//! `config.rs` validates only: no file, process, git or kubeconfig read (issue 34, "Done
//! when"; design.md says "before any I/O"). Counted over its non-test code, comments and
//! strings left out, with the patterns of PLAN §1.3 (`xtask::arch::IO_PATTERN`).

use xtask::arch::{config_io, CONFIG};

/// Lines of `config.rs` doing I/O at WP0's commit (`cargo xtask arch`, section 1.3). Lower it
/// when one goes.
const IO_LINES: usize = 32;

#[test]
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
#[ignore = "turned on by WP2: resolve moves to gather, config validates only"]
fn config_does_no_io() {
    let io = config_io(&super::root()).expect("config.rs is readable");
    assert!(
        io.is_empty(),
        "{CONFIG} still does I/O:\n{}",
        super::listed(&io)
    );
}
