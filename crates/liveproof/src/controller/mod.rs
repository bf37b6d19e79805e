//! The `Verification` object: a change and the proof that it is live, as a Kubernetes custom
//! resource that `kubectl wait`, Flux's health checks and any hub read (issue 35).
//!
//! Built so far: the object and its CRD ([`object`], [`crd`]), the request its spec states,
//! and the pure mapping from a verify report to its status ([`status`]). Not built yet: the
//! `liveproof controller` loop that watches the targets and writes the status.

pub mod crd;
pub mod object;
pub mod status;

pub use object::{ChangeSpec, SpecError, Verification, VerificationSpec};
pub use status::{status_from, status_refused, Refusal, RefusalReason, VerificationStatus};
