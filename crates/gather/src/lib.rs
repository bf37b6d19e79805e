//! The gather phase: every read liveproof makes happens here, and produces one
//! [`Observed`](liveproof_evidence::Observed) snapshot that the pure checks judge.
//!
//! - [`offline::load`] reads `--from` files;
//! - [`live::Cluster`] reads the Kubernetes API (one GET per workload, one LIST per kind and
//!   namespace, pods by label selector; Helm and GitOps targets read raw, then followed to the
//!   workloads they install), or watches it for `--wait`;
//! - [`git::commit_time`] turns `--commit` into a change time;
//! - [`files::open_regular`] opens what the user names, refusing FIFOs, devices and sockets;

pub mod complete;
pub mod diagnostics;
pub mod files;
pub mod git;
pub mod live;
pub mod offline;
pub mod reach;
pub mod registry;
pub mod releases;
pub mod resolve;
pub mod session;
pub mod version;

pub use live::{
    restart_patch, restart_template, Cluster, ClusterOptions, GatherError, ObservedStream,
    ResponseBudget, Snapshot, DEFAULT_MAX_RESPONSE_SIZE, RESTARTED_AT,
};
