//! What the tests of every crate share, in one place (no `#[path]` includes of another crate's
//! test files):
//!
//! - [`peers`]: where the tools `cargo xtask test` provisions are (registry, kubectl, Python);
//! - [`registry`]: a real OCI registry (CNCF distribution, built by `cargo xtask`) on a free port, and a pusher
//!   of real image content (single images, multi-arch indexes, attestations, Docker lists);
//! - [`kubectl`]: where the real `kubectl` is;
//! - [`story`]: the story corpus under `test-data/scenarios`, one typed [`Story`] per folder;
//! - [`fleet`]: clusters at scale (thousands of Deployments) for the benchmarks;
//! - [`flood`]: servers that answer a body without end, or echo the request's credentials;
//! - [`cli`]: a program run as the test tells it (`liveproof().story(..).on(&cluster).run()`),
//!   and how it ended ([`Run`]);
//! - [`sim`]: the API simulator with a kubeconfig pointing at it ([`SimCluster`]);
//! - [`git`]: real git repositories with fixed identities and dates;
//! - [`helm`]: a real Helm release in its storage, and the secrets it must never show;
//! - [`wait`]: waits on a condition, with a bound, instead of fixed sleeps;
//! - [`reads`]: what each check reads, the table the fail-closed tests take inputs away from;
//! - [`binary`]: the liveproof binary as the CLI crate's tests drive it (`liveproof()`, its
//!   MCP server, `liveproof sim`) and read its output back (`RunExt`), and stand-in servers;
//! - [`judge`]: a story's cluster judged as the evidence crate's tests judge it;
//! - [`sim_http`]: the simulator serving a fixture, and a raw HTTP client for it;
//! - [`lint_repo`]: seed 002's repository, as the lint crate's tests change it;
//! - `e2e` (feature `e2e`): the real control plane, its controllers, Argo CD and the kubelet
//!   stand-in, from the peers `e2e/build-peers.sh` builds, and the `World` a story runs in.
//!
//! The one test kit: what a crate's tests share goes here (a module, which those tests may name
//! `common`: `use liveproof_testkit::binary as common;`), never in a `tests/common` of their own.

pub mod binary;
pub mod cli;
#[cfg(feature = "e2e")]
pub mod e2e;
pub mod fleet;
pub mod flood;
pub mod git;
pub mod helm;
pub mod judge;
pub mod kubectl;
pub mod lint_repo;
pub mod peers;
pub mod reads;
pub mod registry;
pub mod sim;
pub mod sim_http;
pub mod story;
pub mod wait;

pub use cli::{kubectl, Cli, Run};
pub use sim::SimCluster;
pub use story::Story;
pub use wait::{wait_for, wait_until, wait_until_async, within, within_async};
