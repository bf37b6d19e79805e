//! The library half of `cargo xtask`: what both the `xtask` binary and its tests read
//! (`xtask/tests/architecture` holds the ratchets on [`arch`]'s numbers).

pub mod arch;
