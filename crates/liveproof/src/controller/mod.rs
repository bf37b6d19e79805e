//! The `Verification` object: a change and the proof that it is live, as a Kubernetes custom
//! resource that `kubectl wait`, Flux's health checks and any hub read (issue 35).
//!
//! The object and its CRD ([`object`], [`crd`]), the request its spec states, the pure
//! mapping from a verify report to its status ([`status`]), and `liveproof controller`
//! ([`command`], [`run`]): the loop that keeps every status true, with its [`metrics`].

pub mod access;
pub mod command;
pub mod crd;
pub mod metrics;
pub mod object;
pub mod run;
pub mod status;

pub use command::ControllerArgs;

/// `liveproof controller`: its flags checked (exit 2 naming a wrong one), then judging until
/// SIGTERM or Ctrl-C.
pub async fn serve(args: &ControllerArgs) -> anyhow::Result<u8> {
    let settings = args.settings()?;
    run::run(settings, metrics::Metrics::new()).await?;
    Ok(0)
}

pub use object::{ChangeSpec, SpecError, Verification, VerificationSpec};
pub use status::{status_from, status_refused, Refusal, RefusalReason, VerificationStatus};
