//! Renderers: see the crate description.
