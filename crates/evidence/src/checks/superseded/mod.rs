//! `superseded`: the stated change is not what runs because a later change replaced it, and the
//! evidence shows it (docs/design.md, "Verdicts"). Never inferred from missing history: a
//! detector that cannot read what it needs answers `None`, and the verdict stays what the checks
//! made it.
//!
//! The judge asks once a target's checks are done and it is not live:
//! - [`workload`]: a workload revision that carried the stated change was created after the
//!   change time, and a newer revision, created after it, is the one serving;
//! - [`owner`]: a Helm release revision after the change carried the stated content and a newer
//!   deployed one does not, or a GitOps revision that strictly descends from the commit applied
//!   manifests that differ in the stated fields (and the live objects match those).
//!
//! Each kind of evidence has its own file; this one only says which applies.

mod helm;
mod workload;

use super::Finding;
use crate::{Change, Observed, SupersededBy, Target, TargetKind, TargetReport};

/// The later change that replaced the stated one in this workload, if its revisions show one.
pub(crate) fn workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    findings: &[Finding],
) -> Option<SupersededBy> {
    workload::superseded(observed, change, target, namespace, findings)
}

/// The later change that replaced the stated one in this Helm or GitOps target (and so in the
/// workloads it leads to), if its history shows one. `own` is its own evidence, `workloads` the
/// reports of the workloads it leads to, already judged.
pub(crate) fn owner(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    _own: &[Finding],
    _workloads: &[TargetReport],
) -> Option<SupersededBy> {
    match target.kind {
        TargetKind::Release | TargetKind::HelmRelease => {
            helm::superseded(observed, change, target, namespace)
        }
        _ => None,
    }
}
