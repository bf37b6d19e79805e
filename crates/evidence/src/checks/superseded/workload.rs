//! A workload's own revisions show a later change: a revision whose template carries the
//! stated change was created after the change time, and the current revision is another one,
//! created after it. Revisions are a Deployment's or an Argo Rollout's ReplicaSets, a
//! StatefulSet's or a DaemonSet's ControllerRevisions (the kind table's `revisions`).
//!
//! Creation times decide, never revision numbers: `kubectl rollout undo` reuses the old
//! ReplicaSet (old `creationTimestamp`, bumped revision annotation), which undoes the change
//! rather than replacing it with a later one — that stays `not_live`.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::checks::verdict::verdict;
use crate::checks::workload_checks::{spec_readback, workload_findings};
use crate::checks::Finding;
use crate::kinds::workload::{Revision, RevisionObjects, Workload, CONTROLLER_REVISION_HASH};
use crate::order::{order, Order};
use crate::suggestion::{Command, Suggestion};
use crate::Verdict;
use crate::{Change, Check, Observed, ResourceKind, SourceRef, Status, SupersededBy, Target};

/// The annotations a ReplicaSet's controller numbers it in: a Deployment's, an Argo Rollout's.
const REVISION_ANNOTATIONS: &[&str] = &[
    "deployment.kubernetes.io/revision",
    "rollout.argoproj.io/revision",
];

/// One revision of a workload as its revision object records it.
struct Stored {
    kind: ResourceKind,
    namespace: String,
    name: String,
    /// The revision number its controller gave it (the annotation, `.revision`).
    number: Option<String>,
    created: Option<Timestamp>,
    template: PodTemplateSpec,
    /// The hashes its pods may carry: its `pod-template-hash` / `rollouts-pod-template-hash` /
    /// `controller-revision-hash` label, and (for a ControllerRevision) its name.
    hashes: Vec<String>,
}

impl Stored {
    /// `apps/promo-6c8d (revision 3)`.
    fn describe(&self) -> String {
        match &self.number {
            Some(n) => format!("{}/{} (revision {n})", self.namespace, self.name),
            None => format!("{}/{}", self.namespace, self.name),
        }
    }

    /// `ReplicaSet apps/promo-6c8d (revision 3, created 2026-07-12T10:20:05Z)`.
    fn dated(&self, created: Timestamp) -> String {
        let number = self
            .number
            .as_ref()
            .map(|n| format!("revision {n}, "))
            .unwrap_or_default();
        format!(
            "{} {}/{} ({number}created {created})",
            self.kind.kind_name(),
            self.namespace,
            self.name
        )
    }

    fn images(&self) -> Vec<String> {
        self.template
            .spec
            .iter()
            .flat_map(|s| s.containers.iter())
            .filter_map(|c| c.image.clone())
            .collect()
    }
}

/// A workload's revisions as the stated change's history reads them: the one serving, whose
/// template lacks the change, and those that carried it, created certainly after the change
/// time (one from its own second may predate it: no evidence).
struct Lineage {
    serving: Stored,
    serving_at: Timestamp,
    carriers: Vec<Stored>,
}

impl Lineage {
    /// `None` whenever the evidence does not show one: no change time, a template that carries
    /// the change or could not be read back, revisions not read, or a serving revision with no
    /// creation time.
    fn read(
        observed: &Observed,
        change: &Change,
        target: &Target,
        namespace: &str,
        findings: &[Finding],
    ) -> Option<Lineage> {
        // Only a template that certainly does not carry the change can have lost it.
        let readback_failed = findings
            .iter()
            .any(|f| f.evidence.check == Check::SpecReadback && f.evidence.status == Status::Fail);
        if !readback_failed {
            return None;
        }
        let since = change.since?;
        let w = Workload::find(observed, target.kind, namespace, &target.name)?;
        let Revision::Current(current) = w.current_revision(observed) else {
            return None;
        };
        let mut revisions = revisions(observed, &w, current.label)?;
        let carries = |r: &Stored| {
            let view = Workload {
                template: &r.template,
                ..w
            };
            spec_readback(observed, &view, change, None, None)
                .evidence
                .status
                == Status::Pass
        };
        let serving = revisions.swap_remove(
            revisions
                .iter()
                .position(|r| r.hashes.contains(&current.hash))?,
        );
        if carries(&serving) {
            return None;
        }
        let serving_at = serving.created?;
        let carriers = revisions
            .into_iter()
            .filter(|r| r.created.is_some_and(|t| order(t, since) == Order::After))
            .filter(|r| carries(r))
            .collect();
        Some(Lineage {
            serving,
            serving_at,
            carriers,
        })
    }

    /// The last carrier created certainly `when` the serving revision was (before or after it).
    fn last_carrier(&self, when: Order) -> Option<(&Stored, Timestamp)> {
        self.carriers
            .iter()
            .filter_map(|r| Some((r, r.created?)))
            .filter(|(_, t)| order(self.serving_at, *t) == when)
            .max_by_key(|(_, t)| *t)
    }
}

/// The later revision that replaced the stated change in `target`, when its revisions show
/// one: a carrier created after the change time, and the serving revision created after it.
pub(super) fn superseded(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    findings: &[Finding],
) -> Option<SupersededBy> {
    let lineage = Lineage::read(observed, change, target, namespace, findings)?;
    // The last carrier created certainly before the serving revision, to name.
    let (carrier, carried_at) = lineage.last_carrier(Order::After)?;
    let (serving, serving_at) = (&lineage.serving, lineage.serving_at);
    let live = newer_is_live(observed, change, target, namespace, serving, serving_at);
    let images = serving.images();
    let summary = format!(
        "a later change replaced it: {} runs {}, after {} had carried the stated change; {}",
        serving.dated(serving_at),
        if images.is_empty() {
            "no image".to_string()
        } else {
            images.join(", ")
        },
        carrier.dated(carried_at),
        match live {
            Some(true) => "that change is live",
            Some(false) => "that change is not live",
            None => "whether that change is live cannot be told",
        }
    );
    Some(SupersededBy {
        summary,
        revision: Some(serving.describe()),
        commit: None,
        images,
        at: Some(serving_at.to_string()),
        live,
        source_ref: Some(SourceRef::object(
            serving.kind,
            &serving.namespace,
            &serving.name,
        )),
    })
}

/// The stated change reached the workload and was undone: a revision that carried it was
/// created after the change time, and the one serving is older than it, brought back
/// (`kubectl rollout undo` reuses the old ReplicaSet; a GitOps controller restoring its
/// manifest, as Argo CD's self-heal does, makes the old template current again). Not
/// superseded, as nothing later replaced it, and not "never written" either: `spec_readback`
/// says which revisions show it, and the next step is not to apply the change again where
/// something puts it back. `None` when the revisions do not show it.
pub(super) fn undone(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    findings: &[Finding],
) -> Option<Undone> {
    let lineage = Lineage::read(observed, change, target, namespace, findings)?;
    let (carrier, carried_at) = lineage.last_carrier(Order::Before)?;
    let (serving, serving_at) = (&lineage.serving, lineage.serving_at);
    let kind = target.kind.kind_name();
    let detail = format!(
        "the {kind} carried the change and was put back: {} carried it, after the change; {}, written before it, serves again. Undone, not replaced by a later change: `kubectl rollout undo`, or a GitOps controller restoring its manifest (Argo CD's self-heal, Flux's reconcile), brings an older revision back",
        carrier.dated(carried_at),
        serving.dated(serving_at),
    );
    let object = format!("{}/{}", target.kind.cli_name(), target.name);
    // `kubectl rollout history` knows the apps group's workloads; any other kind is described.
    let history = if target.kind.is_workload() && target.kind.resource().group() == "apps" {
        Command::kubectl(["-n", namespace, "rollout", "history", &object])
    } else {
        Command::kubectl(["-n", namespace, "describe", &object])
    };
    let next = Suggestion::text(format!(
        "do not apply it again by hand if a GitOps controller manages {namespace}/{kind}/{}: it puts its source back (change the source instead); see who undid it: ",
        target.name
    ))
    .command(history);
    Some(Undone { detail, next })
}

/// What [`undone`] says: `spec_readback`'s detail and the next step.
pub(crate) struct Undone {
    pub(crate) detail: String,
    pub(crate) next: Suggestion,
}

/// Whether the later revision is itself live: the workload judged by the same checks with it
/// as the change (made when the revision was created, stating the images its template names).
/// `None` when the checks cannot tell.
fn newer_is_live(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
    serving: &Stored,
    created: Timestamp,
) -> Option<bool> {
    let newer = super::later_change(
        change,
        created,
        format!("{} {}", serving.kind.kind_name(), serving.describe()),
        &serving.images(),
    );
    let (findings, _) = workload_findings(observed, &newer, target, namespace, None, None);
    match verdict(&findings) {
        Verdict::Live => Some(true),
        Verdict::NotLive => Some(false),
        _ => None,
    }
}

/// The revisions `w` owns, as its kind records them; `None` when they were not read (refused,
/// or missing from the input): history that was not read shows nothing.
fn revisions(observed: &Observed, w: &Workload, label: &str) -> Option<Vec<Stored>> {
    let kind = w.kind.spec().revisions?;
    if observed.denial(w.namespace, kind).is_some() {
        return None;
    }
    let stored = match w.owned_revisions(observed, kind)? {
        RevisionObjects::ReplicaSets(owned) => owned
            .into_iter()
            .filter_map(|rs| {
                let held = rs.template()?;
                // Held as written when decoded, so it reads back (see `replica_set`); one that
                // did not would leave the history unread (`None`), never a revision short.
                Some(held.read().ok().map(|template| {
                    stored(
                        kind,
                        w,
                        &rs.metadata,
                        annotation_number(&rs.metadata),
                        template,
                        // The hash label the current revision's pods carry (its kind's).
                        rs.metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(label))
                            .cloned()
                            .into_iter()
                            .collect(),
                    )
                }))
            })
            .collect::<Option<_>>()?,
        RevisionObjects::ControllerRevisions(owned) => owned
            .into_iter()
            .filter_map(|cr| {
                let template = stored_template(cr.data.as_ref()?)?;
                let name = cr.metadata.name.clone()?;
                let mut hashes = vec![name.clone()];
                hashes.extend(
                    cr.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
                        .cloned(),
                );
                hashes.extend(
                    name.strip_prefix(&format!("{}-", w.name))
                        .map(str::to_string),
                );
                Some(stored(
                    kind,
                    w,
                    &cr.metadata,
                    Some(cr.revision.to_string()),
                    template,
                    hashes,
                ))
            })
            .collect(),
    };
    Some(stored)
}

fn stored(
    kind: ResourceKind,
    w: &Workload,
    meta: &ObjectMeta,
    number: Option<String>,
    template: PodTemplateSpec,
    hashes: Vec<String>,
) -> Stored {
    Stored {
        kind,
        namespace: meta
            .namespace
            .clone()
            .unwrap_or_else(|| w.namespace.to_string()),
        name: meta.name.clone().unwrap_or_default(),
        number,
        created: meta.creation_timestamp.as_ref().map(|t| t.0),
        template,
        hashes,
    }
}

fn annotation_number(meta: &ObjectMeta) -> Option<String> {
    let annotations = meta.annotations.as_ref()?;
    REVISION_ANNOTATIONS
        .iter()
        .find_map(|key| annotations.get(*key).cloned())
}

/// The pod template a ControllerRevision stores, as a replace-patch of `spec.template`.
fn stored_template(
    data: &k8s_openapi::apimachinery::pkg::runtime::RawExtension,
) -> Option<PodTemplateSpec> {
    let mut template = data.0.pointer("/spec/template")?.clone();
    if let Some(obj) = template.as_object_mut() {
        obj.remove("$patch");
    }
    serde_json::from_value(template).ok()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use crate::change::ExpectedImage;
    use crate::{
        Change, Denied, Observed, ResourceKind, Target, TargetKind, TargetReport, Verdict,
    };

    const SET_TWICE: &str = "deployment-set-image-twice-superseded";

    fn at(text: &str) -> jiff::Timestamp {
        text.parse().expect("a timestamp")
    }

    fn image_change(since: &str, image: &str) -> Change {
        Change {
            since: Some(at(since)),
            images: vec![ExpectedImage::parse(image).expect("an image")],
            ..Change::default()
        }
    }

    fn judge(observed: &Observed, change: &Change, target: &str) -> TargetReport {
        let (kind, name) = target.split_once('/').expect("KIND/NAME");
        let kind = match kind {
            "deployment" => TargetKind::Deployment,
            "statefulset" => TargetKind::StatefulSet,
            "daemonset" => TargetKind::DaemonSet,
            "rollout" => TargetKind::Rollout,
            other => panic!("{other}"),
        };
        let target = Target::new(kind, None, name);
        let ns = match kind {
            TargetKind::StatefulSet => "payments",
            TargetKind::DaemonSet => "observability",
            TargetKind::Rollout => "shop",
            _ => "apps",
        };
        let report = crate::checks::judge(observed, change, &[target], ns);
        report.targets.into_iter().next().expect("one target")
    }

    fn set_twice() -> (Observed, Change) {
        (
            Observed::of_story(SET_TWICE),
            image_change("2026-07-12T10:00:00Z", "ghcr.io/acme/inventory:1.4.0"),
        )
    }

    /// Sets the `creationTimestamp` of ReplicaSet `name`.
    fn created(observed: &mut Observed, name: &str, when: &str) {
        let rs = observed
            .replicasets
            .iter_mut()
            .find(|rs| rs.metadata.name.as_deref() == Some(name))
            .expect("the ReplicaSet");
        Arc::make_mut(rs).metadata.creation_timestamp = Some(Time(at(when)));
    }

    #[test]
    fn a_revision_replaced_by_a_later_one_is_superseded_by_it() {
        let (observed, change) = set_twice();
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        let by = report.superseded_by.expect("what superseded it");
        assert_eq!(
            by.revision.as_deref(),
            Some("apps/inventory-6c8dq9zr2m (revision 36)")
        );
        assert_eq!(by.images, ["ghcr.io/acme/inventory:1.4.1"]);
        assert_eq!(by.at.as_deref(), Some("2026-07-12T10:20:05Z"));
        assert_eq!(by.live, Some(true));
        assert_eq!(
            by.source_ref.map(|s| (s.kind, s.name)),
            Some(("ReplicaSet".to_string(), "inventory-6c8dq9zr2m".to_string()))
        );
        assert!(
            by.summary.contains("inventory-4dxbdm5glx"),
            "{}",
            by.summary
        );
        let next = report.next_step.expect("a next step").to_string();
        assert!(next.starts_with("nothing to roll back"), "{next}");
    }

    #[test]
    fn a_later_change_that_is_not_live_yet_is_said_not_live() {
        let (mut observed, change) = set_twice();
        // One pod of revision 35 still serves beside revision 36's: the later change has not
        // rolled out everywhere.
        let pod = observed
            .pods
            .iter_mut()
            .find(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.contains("6c8dq9zr2m"))
            })
            .expect("a pod of revision 36");
        let pod = Arc::make_mut(pod);
        if let Some(labels) = pod.metadata.labels.as_mut() {
            labels.insert("pod-template-hash".into(), "4dxbdm5glx".into());
        }
        for c in pod.spec.iter_mut().flat_map(|s| s.containers.iter_mut()) {
            c.image = Some("ghcr.io/acme/inventory:1.4.0".into());
        }
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::Superseded);
        assert_eq!(report.superseded_by.and_then(|b| b.live), Some(false));
    }

    #[test]
    fn rollout_undo_to_an_older_replicaset_stays_not_live() {
        let observed = Observed::of_story("deployment-rollout-undo-not-superseded");
        let change = image_change("2026-07-12T10:00:00Z", "ghcr.io/acme/inventory:1.4.0");
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
        assert_eq!(report.superseded_by, None);
        // Undone, and said so: not "never written", with both revisions named, and no advice
        // to apply it again where something puts it back.
        let readback = report
            .evidence
            .iter()
            .find(|e| e.check == crate::Check::SpecReadback)
            .expect("spec_readback");
        assert_eq!(
            readback.detail,
            "the Deployment carried the change and was put back: ReplicaSet apps/inventory-4dxbdm5glx (revision 35, created 2026-07-12T10:06:10Z) carried it, after the change; ReplicaSet apps/inventory-8sktb26vtc (revision 36, created 2026-07-08T14:22:05Z), written before it, serves again. Undone, not replaced by a later change: `kubectl rollout undo`, or a GitOps controller restoring its manifest (Argo CD's self-heal, Flux's reconcile), brings an older revision back"
        );
        assert_eq!(
            report.next_step.map(|s| s.to_string()).as_deref(),
            Some("do not apply it again by hand if a GitOps controller manages apps/Deployment/inventory: it puts its source back (change the source instead); see who undid it: kubectl -n apps rollout history deployment/inventory")
        );
    }

    #[test]
    fn a_revision_that_carried_the_change_before_the_change_time_is_no_evidence() {
        let (observed, _) = set_twice();
        // Revision 35 (1.4.0) was created at 10:06:10: before a change made at 10:10.
        let change = image_change("2026-07-12T10:10:00Z", "ghcr.io/acme/inventory:1.4.0");
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::NotLive);
        assert_eq!(report.superseded_by, None);
    }

    #[test]
    fn a_revision_in_the_change_time_s_own_second_is_a_tie_not_after() {
        let (observed, _) = set_twice();
        for since in ["2026-07-12T10:06:10Z", "2026-07-12T10:06:10.400Z"] {
            let change = image_change(since, "ghcr.io/acme/inventory:1.4.0");
            let report = judge(&observed, &change, "deployment/inventory");
            assert_eq!(report.verdict, Verdict::NotLive, "since {since}");
            assert_eq!(report.superseded_by, None, "since {since}");
        }
        // One second later it is after.
        let change = image_change("2026-07-12T10:06:09Z", "ghcr.io/acme/inventory:1.4.0");
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::Superseded);
    }

    #[test]
    fn a_newer_revision_from_the_carrier_s_own_second_does_not_supersede_it() {
        let (mut observed, change) = set_twice();
        created(
            &mut observed,
            "inventory-6c8dq9zr2m",
            "2026-07-12T10:06:10Z",
        );
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::NotLive);
        assert_eq!(report.superseded_by, None);
    }

    #[test]
    fn without_the_replicasets_nothing_is_superseded() {
        let (mut observed, change) = set_twice();
        let mut without = observed.clone();
        without.replicasets.clear();
        let report = judge(&without, &change, "deployment/inventory");
        assert_ne!(report.verdict, Verdict::Superseded, "{report:#?}");
        assert_eq!(report.superseded_by, None);
        // Refused: what was read anyway is not history either.
        observed.denied.push(Denied {
            namespace: Some("apps".into()),
            resource: ResourceKind::ReplicaSet,
            verb: "list".into(),
            message: "replicasets.apps is forbidden".into(),
        });
        let report = judge(&observed, &change, "deployment/inventory");
        assert_ne!(report.verdict, Verdict::Superseded, "{report:#?}");
        assert_eq!(report.superseded_by, None);
    }

    /// A revision whose held template does not read back (never seen: it is what was decoded,
    /// written) leaves the history unread, as a refused list does: never a history one revision
    /// short, which could name the wrong revision as the one that replaced the change.
    #[test]
    fn a_revision_that_does_not_read_back_leaves_the_history_unread() {
        let (mut observed, change) = set_twice();
        let old = observed
            .replicasets
            .iter_mut()
            .find(|rs| rs.metadata.name.as_deref() == Some("inventory-8sktb26vtc"))
            .expect("revision 34, older than the change");
        Arc::make_mut(old).spoil_template();
        let report = judge(&observed, &change, "deployment/inventory");
        assert_ne!(report.verdict, Verdict::Superseded, "{report:#?}");
        assert_eq!(report.superseded_by, None);
    }

    #[test]
    fn a_newer_revision_that_still_carries_the_change_is_live() {
        let (observed, _) = set_twice();
        // Both revision 35 and 36 define LOG_FORMAT: the later change kept this one.
        let change = Change {
            since: Some(at("2026-07-12T10:00:00Z")),
            env: vec!["LOG_FORMAT".into()],
            ..Change::default()
        };
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
        assert_eq!(report.superseded_by, None);
    }

    #[test]
    fn a_statefulset_revision_replaced_by_a_later_controllerrevision_is_superseded() {
        let observed = Observed::of_story("statefulset-superseded-by-a-later-revision");
        let change = image_change("2026-07-12T10:00:00Z", "ghcr.io/acme/ledger:3.2.0");
        let report = judge(&observed, &change, "statefulset/ledger");
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        let by = report.superseded_by.expect("what superseded it");
        assert_eq!(
            by.revision.as_deref(),
            Some("payments/ledger-7f4k9xq2wd (revision 5)")
        );
        assert_eq!(by.images, ["ghcr.io/acme/ledger:3.2.1"]);
        assert_eq!(by.live, Some(true));
        // The revision that carried 3.2.0 written before the change: no evidence.
        let change = image_change("2026-07-12T10:02:47Z", "ghcr.io/acme/ledger:3.2.0");
        let report = judge(&observed, &change, "statefulset/ledger");
        assert_eq!(report.verdict, Verdict::NotLive);
    }

    #[test]
    fn a_daemonset_revision_replaced_by_a_later_controllerrevision_is_superseded() {
        let observed = Observed::of_story("daemonset-rolled-out");
        // 2.0.3 was written at 2026-07-08T14:21:50 (revision 3), 2.1.0 at 10:02:05 on the 12th.
        let change = image_change("2026-07-08T14:00:00Z", "ghcr.io/acme/log-shipper:2.0.3");
        let report = judge(&observed, &change, "daemonset/log-shipper");
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        let by = report.superseded_by.expect("what superseded it");
        assert_eq!(
            by.revision.as_deref(),
            Some("observability/log-shipper-7xbtckp2sx (revision 4)")
        );
        assert_eq!(by.images, ["ghcr.io/acme/log-shipper:2.1.0"]);
        assert_eq!(by.live, Some(true));
    }

    #[test]
    fn an_argo_rollout_revision_replaced_by_a_later_replicaset_is_superseded() {
        let observed = Observed::of_story("argo-rollout-canary-promoted-old-pods-idle");
        // 2.3.0's ReplicaSet was created 2026-07-10T09:00, 2.4.0's at 10:01 on the 12th.
        let change = image_change("2026-07-10T08:00:00Z", "ghcr.io/acme/checkout:2.3.0");
        let report = judge(&observed, &change, "rollout/checkout");
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        let by = report.superseded_by.expect("what superseded it");
        assert_eq!(
            by.revision.as_deref(),
            Some("shop/checkout-7b9f4d6c8 (revision 4)")
        );
        assert_eq!(by.images, ["ghcr.io/acme/checkout:2.4.0"]);
        assert_eq!(by.live, Some(true));
    }

    #[test]
    fn a_later_carrier_undone_back_to_the_newer_revision_leaves_it_superseded() {
        let (mut observed, change) = set_twice();
        // 1.4.0 set once more at 10:30 (a new ReplicaSet: 1.4.0 with another label), then
        // `rollout undo` back to revision 36: 1.4.1 still replaced the first 1.4.0.
        let mut again = (**observed
            .replicasets
            .iter()
            .find(|rs| rs.metadata.name.as_deref() == Some("inventory-4dxbdm5glx"))
            .expect("revision 35"))
        .clone();
        again.metadata.name = Some("inventory-x7w2k9q4zt".into());
        again.metadata.uid = Some("0b9d3c4e-7a1f-5e2d-8c3b-1f4e5d6c7b8a".into());
        again.label_with_template("pod-template-hash", "x7w2k9q4zt");
        again.label_with_template("tier", "web");
        observed.replicasets.push(Arc::new(again));
        created(
            &mut observed,
            "inventory-x7w2k9q4zt",
            "2026-07-12T10:30:00Z",
        );
        let report = judge(&observed, &change, "deployment/inventory");
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        let by = report.superseded_by.expect("what superseded it");
        assert!(
            by.summary.contains("inventory-4dxbdm5glx"),
            "{}",
            by.summary
        );
    }
}
