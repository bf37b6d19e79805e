//! The simulator: see the crate description.
