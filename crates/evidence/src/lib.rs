//! The evidence model and the checks.
//!
//! Everything here is pure: the gather phase (live API or `--from` files) builds an
//! [`Observed`] snapshot, and [`judge`] turns it plus a [`Change`] into a [`Report`].
//! No async, no I/O, so offline mode, the simulator tests and the agent interface share
//! one code path.

pub mod absent;
mod change;
pub(crate) mod checks;
mod commit;
pub mod diagnose;
mod diagnostic;
pub mod digest;
pub mod dora;
mod facts;
pub mod fleet;
pub mod hint;
pub mod history;
pub mod index;
pub mod kinds;
pub mod lanes;
mod model;
pub mod objects;
mod observed;
pub mod order;
pub mod pod;
pub mod pod_index;
pub mod rbac;
pub mod record;
pub mod releases;
pub mod replica_set;
mod resolve;
pub mod selector;
pub use checks::server;
pub mod snapshot;
pub mod suggestion;
mod target;

pub use change::{
    Change, DeclaredTemplate, ExpectedImage, ImageRef, ManifestExpectation, SecretRefExpectation,
};
pub use checks::{
    digest_rows, final_failure, final_unknown, followed_workloads, helmrelease_release, judge,
    judgement, manifests_to_read, revisions_to_trace, settled, short_digest, superseded_step,
    verify_again, workloads_to_read, DigestRow, Judgement, ReleaseHistory, Revision, RowVerdict,
    SeenLive, Settled, CRASH_LOOP_RESTARTS, UNPROVABLE_NOTE,
};
pub use checks::{unprovable, unprovable_by_flags, ObjectKind, ObjectRef, Rejudge, Touched};
pub use commit::is_commit_sha;
pub use kinds::argo_rollout::{Rollout, ROLLOUTS_POD_TEMPLATE_HASH};
/// What the gather, the flag checks, `rollback` and the help ask of a target's kind.
pub use kinds::asked as kind;
pub use kinds::store::WorkloadStore;
pub use kinds::workload::WorkloadObject;
pub use kinds::{
    api_group, Actor, CrdCopy, KindSpec, Origin, ReportKind, Resource, ResourceKind, Scope,
    TargetKind, Verb, KINDS, RESOURCES,
};
pub use model::{
    lead_time, ChangeSummary, Check, ClusterRef, Evidence, Moment, Report, SnapshotSummary,
    SourceRef, Status, SupersededBy, TargetReport, Tier, TimelineEntry, Verdict, WaitRecord,
    SCHEMA,
};
pub use observed::{ChartChange, Containment, Denied, ObjectError, Observed};
pub use resolve::{namespaces_holding, resolve_targets, ALL_NAMESPACES};
pub use suggestion::Suggestion;
pub use target::{closest, Target, TargetError};
