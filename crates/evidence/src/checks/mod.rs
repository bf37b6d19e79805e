//! The checks: pure functions from [`Observed`](crate::Observed) and a
//! [`Change`](crate::Change) to evidence, and the verdict rules of docs/design.md.
//!
//! Where things are:
//! - `judge.rs`: every target judged (a workload by its checks; a Helm or GitOps target by its
//!   own evidence, then the workloads it leads to);
//! - `settled.rs`: what `--wait` stops on before the change is live (a final failure, an
//!   unknown nothing can decide), with `gitops_final.rs` for Flux's and Argo CD's failures;
//! - `verdict.rs`: the verdict and next-step rules for one target's findings;
//! - `finding.rs`: the evidence-plus-next-step builder every check returns;
//! - each workload kind in its own file under `kinds/` (its view, revision, rollout progress);
//! - a workload's checks: `workload_checks.rs` (the list, in order, and the template checks),
//!   `rollout.rs`, `pods_current.rs`, `pod_restarted.rs`, `digest.rs`, with `workload.rs` (the
//!   workload model: revisions, strategies) and `pods.rs` (pod facts);
//! - the other kinds' checks: `release.rs` (Helm storage), `gitops.rs` (Flux, Argo CD, and
//!   a Flagger Canary through `kinds/flagger_canary.rs`);
//! - `server.rs`: `server_version`, the version a server reports;
//! - `traffic.rs`: `traffic_current`, what the Services selecting a workload route to.
//!
//! A new check is a function in its own file (or beside its kind's), returning a [`Finding`],
//! called from its kind's list: `workload_findings` for workloads, `gitops::findings` for Helm
//! and GitOps targets. A new target kind adds its findings function and a branch in
//! `judge::judge_target`.

mod declared;
mod digest;
mod expect;
pub(crate) mod finding;
pub(crate) mod gitops;
pub(crate) mod gitops_final;
mod judge;
pub(crate) mod pod_defaults;
mod pod_restarted;
pub(crate) mod pods;
mod pods_current;
pub(crate) mod raw;
mod rejudge;
pub(crate) mod release;
mod rollout;
pub mod server;
mod settled;
pub(crate) mod superseded;
mod timeline;
mod traffic;
mod verdict;
mod workload_checks;

pub use digest::{rows as digest_rows, short as short_digest, DigestRow, RowVerdict};
pub use gitops::{followed_workloads, helmrelease_release, revisions_to_trace, workloads_to_read};
pub use judge::{judge, judgement, superseded_step, verify_again, Judgement};
pub use pods::CRASH_LOOP_RESTARTS;
pub use rejudge::{ObjectKind, ObjectRef, Rejudge, Touched};
pub use settled::{
    final_failure, final_unknown, settled, unprovable, unprovable_by_flags, Settled,
    UNPROVABLE_NOTE,
};
pub use superseded::manifests_to_read;
pub use timeline::SeenLive;

/// What a check observed of a target the input does not hold: its evidence's `observed`, which
/// the progress line of a wait reads to say where the target was looked for instead.
pub(crate) const NOT_FOUND: &str = "not found";
pub use release::{ReleaseHistory, Revision};

use finding::Finding;

/// The next step when no change time was given: runnable as written (no placeholder date).
pub(crate) const GIVE_THE_CHANGE_TIME: &str = "give the change time: --since 15m (how long ago the change merged or was pushed; an RFC 3339 time works too), or --commit with the change's commit (its committer time is read from --repo)";
