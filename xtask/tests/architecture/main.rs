//! Issue 34's "Done when", as tests on the sources (no build, no cluster): each file holds one
//! criterion, with the target the redesign reached (and, where a ratchet was kept, today's
//! number as a ceiling that may only go down). The numbers come from `cargo xtask arch`
//! (xtask/src/arch.rs).
//!
//! Run: `cargo test -p xtask --test architecture`.

mod config_pure;
mod cycles;
mod gather_independent;
mod kind_matches;
mod one_of_each;
mod test_kit;
mod typed_mcp;
mod verifier_size;

use std::path::PathBuf;

/// The checkout these tests read: the one they were built from.
fn root() -> PathBuf {
    xtask::arch::repo_root()
}

/// `sites`, one per line, for a failure message.
fn listed<T: std::fmt::Display>(sites: &[T]) -> String {
    sites
        .iter()
        .map(|s| format!("  {s}"))
        .collect::<Vec<_>>()
        .join("\n")
}
