//! `superseded`: the stated change is not what runs because a later change replaced it, and the
//! evidence shows it (docs/design.md, "Verdicts"). Never inferred from missing history: a
//! detector that cannot read what it needs answers `None`, and the verdict stays what the checks
//! made it.
//!
//! The judge asks once a target's checks are done and it is not live:
//! - [`workload`]: a workload revision that carried the stated change was created after the
//!   change time, and a newer revision, created after it, is the one serving; or a later commit
//!   replaced the manifest `-f` read as of `--commit`;
//! - [`owner`]: a Helm release revision after the change carried the stated content and a newer
//!   deployed one does not, or a GitOps revision that strictly descends from the commit applied
//!   manifests that differ in the stated fields (and the live objects match those);
//! - [`followed`]: for a workload a GitOps target leads to, whether the target's later
//!   revision replaced the stated change there (or may have: then it is undecided).
//!
//! Each kind of evidence has its own file; this one only says which applies.

mod gitops;

pub use gitops::manifests_to_read;
pub(crate) use gitops::Followed;

use super::Finding;
use crate::{Change, Observed, SupersededBy, Target, TargetKind, TargetReport};

/// The later change that replaced the stated one in this workload, if its revisions (or, for
/// `-f` read as of `--commit`, the later commits of `--repo`) show one.
pub(crate) fn workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    findings: &[Finding],
) -> Option<SupersededBy> {
    gitops::declared(observed, change, target, namespace, findings)
}

/// What replaced the stated change in `workload`, a workload the Helm or GitOps target
/// `owner` leads to, not live: the owner's later revision, or undecided.
pub(crate) fn followed(
    observed: &Observed,
    change: &Change,
    owner: &Target,
    namespace: &str,
    workload: &TargetReport,
) -> Option<Followed> {
    match owner.kind {
        TargetKind::Kustomization | TargetKind::Application => {
            gitops::followed(observed, change, owner, namespace, workload)
        }
        _ => None,
    }
}

/// The later change that replaced the stated one in this Helm or GitOps target (and so in the
/// workloads it leads to), if its history shows one. `own` is its own evidence, `workloads` the
/// reports of the workloads it leads to, already judged.
pub(crate) fn owner(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    own: &[Finding],
    workloads: &[TargetReport],
) -> Option<SupersededBy> {
    match target.kind {
        TargetKind::Kustomization | TargetKind::Application => {
            gitops::owner(observed, change, target, namespace, own, workloads)
        }
        _ => None,
    }
}
