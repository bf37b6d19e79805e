//! The checks: pure functions from [`Observed`] and a [`Change`] to evidence.

use crate::{Change, Observed, Report, Target};

/// Judges every target against what was observed. `default_namespace` applies to targets
/// that did not name one.
pub fn judge(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_namespace: &str,
) -> Report {
    let _ = (observed, change, targets, default_namespace);
    todo!("checks land next")
}
