//! One cluster's report, as `verify` gives it: the verifier's or, with `--snapshot`, what
//! changed since the snapshot. Its own module so neither `verify` and `fleet` (a fleet is
//! many of these) nor `snapshot` and `verifier` (the snapshot's report is the verifier's over
//! what changed) import each other.

use crate::config::VerifyConfig;

/// One cluster's report as `verify` (and each cluster of a fleet, and the MCP verify tool)
/// gives it: the verifier's (or `--snapshot`'s), with its next steps carrying the user's flags.
pub async fn report(config: &VerifyConfig) -> anyhow::Result<liveproof_evidence::Report> {
    let mut report = match &config.snapshot {
        Some(dir) => crate::snapshot::verify(config, dir).await?,
        None => crate::verifier::produce(config).await?,
    };
    crate::next_steps::Invocation::of(config).apply(&mut report);
    Ok(report)
}
