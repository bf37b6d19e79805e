//! The CLI as a library.
