//! What the tests of every crate share, in one place (no `#[path]` includes of another crate's
//! test files):
//!
//! - [`registry`]: a real OCI registry (Debian's `docker-registry`) on a free port, and a pusher
//!   of real image content (single images, multi-arch indexes, attestations, Docker lists);
//! - [`kubectl`]: where the real `kubectl` is;
//! - [`story`]: the story corpus under `test-data/scenarios`, one typed [`Story`] per folder;
//! - [`fleet`]: clusters at scale (thousands of Deployments) for the benchmarks.
//!
//! A new harness goes here when a second crate's tests need it.

pub mod fleet;
pub mod kubectl;
pub mod registry;
pub mod story;

pub use story::Story;
