//! Gathering: see the crate description.
