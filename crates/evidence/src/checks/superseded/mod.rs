//! `superseded`: the stated change is not what runs because a later change replaced it, and the
//! evidence shows it (docs/design.md, "Verdicts"). Never inferred from missing history: a
//! detector that cannot read what it needs answers `None`, and the verdict stays what the checks
//! made it.
//!
//! The judge asks once a target's checks are done and it is not live:
//! - [`workload`]: a workload revision that carried the stated change was created after the
//!   change time, and a newer revision, created after it, is the one serving (`workload.rs`);
//!   or a later commit replaced the manifest `-f` read as of `--commit` (`gitops.rs`);
//! - [`owner`]: a Helm release revision after the change carried the stated content and a newer
//!   deployed one does not (`helm.rs`), or a GitOps revision that strictly descends from the
//!   commit applied manifests that differ in the stated fields, and the live objects match those
//!   (`gitops.rs`);
//! - [`followed`]: for a workload a GitOps target leads to, whether the target's later
//!   revision replaced the stated change there (or may have: then it is undecided);
//! - [`undone`]: not superseded, a workload whose revisions show the change written and an
//!   older revision brought back (`workload.rs`): still not live, said so.
//!
//! Each kind of evidence has its own file; this one only says which applies.

pub(crate) mod applied;
pub(crate) mod gitops;
pub(crate) mod helm;
mod workload;

pub(crate) use applied::Followed;
pub use gitops::manifests_to_read;
pub(crate) use workload::Undone;

use super::Finding;
use crate::change::ExpectedImage;
use crate::{Change, Observed, SupersededBy, Target, TargetReport};

/// The later change that replaced the stated one in this workload, if its revisions (or, for
/// `-f` read as of `--commit`, the later commits of `--repo`) show one.
pub(crate) fn workload(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    findings: &[Finding],
) -> Option<SupersededBy> {
    // A later commit names the change that replaced it (its SHA and time), where `-f` was read
    // as of `--commit`; the revisions alone name only the ReplicaSet.
    gitops::declared(observed, change, target, namespace, findings)
        .or_else(|| workload::superseded(observed, change, target, namespace, findings))
}

/// Whether the stated change reached this workload and was undone (an older revision brought
/// back: `rollout undo`, a GitOps controller's self-heal), as its revisions show it: not
/// superseded, but not "never written" either.
pub(crate) fn undone(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    findings: &[Finding],
) -> Option<Undone> {
    workload::undone(observed, change, target, namespace, findings)
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
    crate::kinds::rules(owner.kind)
        .superseded_followed(observed, change, owner, namespace, workload)
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
    crate::kinds::rules(target.kind)
        .superseded_owner(observed, change, target, namespace, own, workloads)
}
/// The later change as a change statement, to judge by the same checks whether it is live:
/// made at `at` by `made_by` (a revision), stating the images its templates name. A repository
/// its templates name with two references states neither (one template would fail the other's),
/// and a reference no parser reads states nothing: `made_by` still ties the template to it.
fn later_change(
    change: &Change,
    at: jiff::Timestamp,
    made_by: String,
    images: &[String],
) -> Change {
    let parsed: Vec<ExpectedImage> = images
        .iter()
        .filter_map(|i| ExpectedImage::parse(i).ok())
        .collect();
    let images = parsed
        .iter()
        .filter(|i| {
            parsed
                .iter()
                .all(|o| o.image.repository != i.image.repository || o.image == i.image)
        })
        .cloned()
        .collect();
    Change {
        since: Some(at),
        since_source: Some(format!("the time of {made_by}")),
        images,
        stated_by: Some(made_by),
        digests: change.digests,
        ..Change::default()
    }
}

#[cfg(test)]
mod tests {
    use crate::Change;

    #[test]
    fn the_later_change_states_each_repository_it_names_once() {
        let at = "2026-07-12T10:20:05Z".parse().expect("a time");
        let later = super::later_change(
            &Change::default(),
            at,
            "ReplicaSet apps/promo-6c8d (revision 3)".into(),
            &[
                "ghcr.io/acme/promo:1.2".into(),
                "ghcr.io/acme/sidecar:1".into(),
                "ghcr.io/acme/sidecar:2".into(),
                "not a reference".into(),
            ],
        );
        let stated: Vec<&str> = later.images.iter().map(|i| i.given.as_str()).collect();
        assert_eq!(stated, ["ghcr.io/acme/promo:1.2"]);
        assert_eq!(later.since, Some(at));
        assert_eq!(
            later.stated_by.as_deref(),
            Some("ReplicaSet apps/promo-6c8d (revision 3)")
        );
    }
}
