//! A Helm release's history shows a later change: a revision deployed after the change time
//! carried the stated content (`--expect` in its manifest, `--chart-version`, `--image` in its
//! workloads' templates), and the newest revision, deployed after it, does not. Read from the
//! release storage every revision of which the gatherer decoded (`release.rs`).
//!
//! A `helm rollback` to a revision from before the carrier undoes the change rather than
//! replacing it with a later one (old content, new time): that stays `not_live`, as
//! `kubectl rollout undo` does for a workload.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use liveproof_helm::ReleaseStatus;
use serde_json::Value;

use crate::change::{ExpectedImage, ImageRef};
use crate::checks::expect::{self, Subject, TextMatch};
use crate::checks::release::{same_version, stored_source, ReleaseHistory};
use crate::checks::verdict::verdict;
use crate::checks::workload_checks::workload_findings;
use crate::order::{order, Order};
use crate::releases::ReadRelease;
use crate::{Change, Observed, Status, SupersededBy, Target, TargetKind, Verdict};

/// Whether a revision carries the stated content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carries {
    Yes,
    No,
    /// Part of it cannot be told (a redacted value, a document no parser read).
    Unknown,
}

impl Carries {
    fn all(parts: impl IntoIterator<Item = Carries>) -> Carries {
        parts
            .into_iter()
            .fold(Carries::Yes, |acc, p| match (acc, p) {
                (Carries::No, _) | (_, Carries::No) => Carries::No,
                (Carries::Unknown, _) | (_, Carries::Unknown) => Carries::Unknown,
                _ => Carries::Yes,
            })
    }
}

/// The later revision that replaced the stated change in a `release/` or `helmrelease/`
/// target, when its history shows one.
pub(crate) fn superseded(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
) -> Option<SupersededBy> {
    let since = change.since?;
    if change.manifest.is_empty() && change.chart_version.is_none() && change.images.is_empty() {
        return None;
    }
    let (storage_ns, name) =
        crate::kinds::rules(target.kind).helm_release(observed, namespace, &target.name)?;
    let history = ReleaseHistory::read(observed, &storage_ns, &name);
    // The newest revision is the one deployed (a failed or pending one is another story), and
    // it certainly does not carry the change.
    let newest = history.newest()?;
    let info = &newest.release.info;
    if info.status != ReleaseStatus::Deployed || carries(observed, change, newest) != Carries::No {
        return None;
    }
    let newest_at = info.last_deployed?;
    // A rollback deploys an older revision's content anew: what it serves was made by that
    // revision, and only a carrier before that one was replaced by it.
    let content = rollback_to(newest).unwrap_or(newest.release.version);
    // An earlier revision that was deployed (Helm marks it superseded once another is),
    // certainly after the change time and certainly before the newest, carrying all of it:
    // the last such, to name.
    let carrier = history
        .revisions
        .iter()
        .filter(|r| r.release.version < content.min(newest.release.version))
        .filter(|r| r.release.info.status == ReleaseStatus::Superseded)
        .filter(|r| {
            r.release.info.last_deployed.is_some_and(|t| {
                order(t, since) == Order::After && order(newest_at, t) == Order::After
            })
        })
        .filter(|r| carries(observed, change, r) == Carries::Yes)
        .max_by_key(|r| r.release.version)?;
    let carried_at = carrier.release.info.last_deployed?;
    let images = images(newest);
    let describe = ReleaseHistory::describe(newest);
    let chart = &newest.release.chart.metadata;
    let live = newer_is_live(observed, change, newest, newest_at, &images);
    let summary = format!(
        "a later release replaced it: {describe} (chart {}-{}, deployed {newest_at}{}) does not carry the stated change, which {} (deployed {carried_at}) carried; {}",
        chart.name,
        chart.version,
        if images.is_empty() {
            String::new()
        } else {
            format!(", running {}", images.join(", "))
        },
        ReleaseHistory::describe(carrier),
        match live {
            Some(true) => "that release is live",
            Some(false) => "that release is not live",
            None => "whether that release is live cannot be told",
        }
    );
    Some(SupersededBy {
        summary,
        revision: Some(format!(
            "{describe} (chart {}-{})",
            chart.name, chart.version
        )),
        commit: None,
        images,
        at: Some(newest_at.to_string()),
        live,
        source_ref: Some(stored_source(&newest.object)),
    })
}

/// The revision a "Rollback to N" revision restored.
fn rollback_to(r: &ReadRelease) -> Option<i64> {
    r.release
        .info
        .description
        .strip_prefix("Rollback to ")
        .and_then(|n| n.trim().parse().ok())
}

/// Whether `r` carries everything stated: each `--expect` in its manifest as shown (as
/// `manifest_contains` reads it), `--chart-version`, each `--image` in its workloads'
/// templates (matched as `spec_readback` matches a template).
fn carries(observed: &Observed, change: &Change, r: &ReadRelease) -> Carries {
    let visible = r.visible();
    let texts = change.manifest.iter().map(|e| {
        match expect::text_match(e, visible.text, !visible.credentials.is_empty()) {
            TextMatch::Found => Carries::Yes,
            TextMatch::Missing => Carries::No,
            TextMatch::Hidden => Carries::Unknown,
        }
    });
    let chart = change.chart_version.iter().map(|want| {
        if same_version(&r.release.chart.metadata.version, want) {
            Carries::Yes
        } else {
            Carries::No
        }
    });
    let specs = templates(r);
    // A document no parser read may be a workload running the image.
    let unread = !r.manifest.unreadable.is_empty();
    let images = change
        .images
        .iter()
        .map(|want| image_carried(observed, &specs, want, unread));
    Carries::all(texts.chain(chart).chain(images).collect::<Vec<_>>())
}

/// `--image` against the workload templates of a release: every container of that
/// repository runs it, and at least one does.
fn image_carried(
    observed: &Observed,
    specs: &[PodSpec],
    want: &ExpectedImage,
    unread: bool,
) -> Carries {
    let runs = |spec: &&PodSpec| {
        spec.containers.iter().any(|c| {
            c.image
                .as_deref()
                .and_then(ImageRef::parse)
                .is_some_and(|i| i.repository == want.image.repository)
        })
    };
    let only = Change {
        images: vec![want.clone()],
        ..Change::default()
    };
    let statuses: Vec<Status> = specs
        .iter()
        .filter(runs)
        .map(|spec| {
            expect::worst(&expect::evaluate(
                &crate::pod::PodSpec::from(spec),
                &only,
                Subject::Template { observed },
            ))
        })
        .collect();
    if statuses.is_empty() {
        return if unread {
            Carries::Unknown
        } else {
            Carries::No
        };
    }
    if statuses.contains(&Status::Fail) {
        Carries::No
    } else if statuses.iter().all(|s| *s == Status::Pass) {
        Carries::Yes
    } else {
        Carries::Unknown
    }
}

/// The pod specs of the workloads a release's manifest renders.
fn templates(r: &ReadRelease) -> Vec<PodSpec> {
    r.manifest
        .objects
        .iter()
        .filter(|o| {
            TargetKind::workload_named(&o.kind, Some(crate::api_group(&o.api_version))).is_some()
        })
        .filter_map(|o| {
            let object: Value = serde_norway::from_str(&o.text).ok()?;
            let template = object.pointer("/spec/template")?.clone();
            serde_json::from_value::<PodTemplateSpec>(template)
                .ok()?
                .spec
        })
        .collect()
}

/// The images a release's workloads run, as their templates name them.
fn images(r: &ReadRelease) -> Vec<String> {
    let mut out: Vec<String> = templates(r)
        .iter()
        .flat_map(|s| s.containers.iter())
        .filter_map(|c| c.image.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether the later release is itself live: the workloads it installs judged by the same
/// checks with it as the change (deployed then, stating the images its templates name), as
/// `verify release/NAME` would judge it. `None` when the checks cannot tell or it installs
/// no workload.
fn newer_is_live(
    observed: &Observed,
    change: &Change,
    newest: &ReadRelease,
    deployed: Timestamp,
    images: &[String],
) -> Option<bool> {
    let newer = super::later_change(
        change,
        deployed,
        format!("release {}", ReleaseHistory::describe(newest)),
        images,
    );
    let workloads = crate::checks::release::workloads(newest);
    if workloads.is_empty() || !newest.manifest.unreadable.is_empty() {
        return None;
    }
    let verdicts: Vec<Verdict> = workloads
        .iter()
        .map(|(kind, ns, name)| {
            let target = Target::new(*kind, Some(ns), name);
            let (findings, _) = workload_findings(observed, &newer, &target, ns, None, None);
            verdict(&findings)
        })
        .collect();
    if verdicts.iter().all(|v| *v == Verdict::Live) {
        Some(true)
    } else if verdicts.contains(&Verdict::NotLive) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::change::{ExpectedImage, ManifestExpectation};
    use crate::{Change, Observed, Report, Target, TargetKind, Verdict};

    const UPGRADED_TWICE: &str = "helm-upgrade-superseded-by-a-later-upgrade";

    fn at(text: &str) -> jiff::Timestamp {
        text.parse().expect("a timestamp")
    }

    fn story(name: &str) -> Observed {
        let mut observed = Observed::of_story(name);
        observed.decode_releases_with(|obj| {
            crate::releases::decoded(liveproof_helm::read_release(
                obj,
                &liveproof_helm::Limits::default(),
            ))
        });
        observed
    }

    /// `--chart-version 0.4.3 --image ghcr.io/acme/inventory:1.4.0`: revision 35's content.
    fn revision_35(since: &str) -> Change {
        Change {
            since: Some(at(since)),
            chart_version: Some("0.4.3".into()),
            images: vec![ExpectedImage::parse("ghcr.io/acme/inventory:1.4.0").expect("an image")],
            ..Change::default()
        }
    }

    fn judge(observed: &Observed, change: &Change) -> Report {
        let target = Target::new(TargetKind::Release, None, "inventory");
        crate::checks::judge(observed, change, &[target], "apps")
    }

    #[test]
    fn a_release_upgraded_again_after_the_change_is_superseded_by_the_newer_revision() {
        let observed = story(UPGRADED_TWICE);
        let report = judge(&observed, &revision_35("2026-07-12T10:00:00Z"));
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        let release = &report.targets[0];
        assert_eq!(release.verdict, Verdict::Superseded);
        let by = release.superseded_by.clone().expect("what superseded it");
        assert_eq!(
            by.revision.as_deref(),
            Some("apps/inventory.v36 (chart inventory-0.4.4)")
        );
        assert_eq!(by.images, ["ghcr.io/acme/inventory:1.4.1"]);
        assert_eq!(by.at.as_deref(), Some("2026-07-12T10:40:12.99120733Z"));
        assert_eq!(by.live, Some(true));
        assert_eq!(
            by.source_ref.map(|s| s.name),
            Some("sh.helm.release.v1.inventory.v36".to_string())
        );
        assert!(by.summary.contains("apps/inventory.v35"), "{}", by.summary);
        // The Deployment it leads to is superseded too, and its step is its own: the
        // release's "has not deployed the change" would send a pipeline to redeploy it.
        let deployment = &report.targets[1];
        assert_eq!(deployment.verdict, Verdict::Superseded);
        let step = deployment.next_step.as_ref().expect("a step").to_string();
        assert!(step.starts_with("nothing to roll back"), "{step}");
        assert!(!step.contains("has not deployed"), "{step}");
    }

    #[test]
    fn its_workloads_take_the_release_s_verdict_when_their_own_revisions_were_not_read() {
        let mut observed = story(UPGRADED_TWICE);
        observed.replicasets.clear();
        let report = judge(&observed, &revision_35("2026-07-12T10:00:00Z"));
        let release = &report.targets[0];
        let deployment = &report.targets[1];
        assert_eq!(release.verdict, Verdict::Superseded, "{report:#?}");
        assert_eq!(deployment.verdict, Verdict::Superseded, "{report:#?}");
        assert_eq!(deployment.superseded_by, release.superseded_by);
    }

    #[test]
    fn a_rollback_to_a_revision_from_before_the_change_stays_not_live() {
        let observed = story("helm-rollback-to-older-revision");
        let change = Change {
            since: Some(at("2026-07-12T10:00:00Z")),
            manifest: vec![ManifestExpectation::parse("secretKeyRef").expect("text")],
            ..Change::default()
        };
        let report = judge(&observed, &change);
        assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
        assert!(report.targets.iter().all(|t| t.superseded_by.is_none()));
    }

    #[test]
    fn a_newer_release_that_still_carries_the_change_is_live() {
        let observed = story(UPGRADED_TWICE);
        // Revisions 35 and 36 both render the secretKeyRef.
        let change = Change {
            since: Some(at("2026-07-12T10:00:00Z")),
            manifest: vec![ManifestExpectation::parse("secretKeyRef").expect("text")],
            ..Change::default()
        };
        let report = judge(&observed, &change);
        assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
        assert!(report.targets.iter().all(|t| t.superseded_by.is_none()));
    }

    #[test]
    fn a_revision_deployed_before_the_change_or_in_its_second_is_no_evidence() {
        let mut observed = story(UPGRADED_TWICE);
        // The workloads' own revisions are not what this is about.
        observed.replicasets.clear();
        // Revision 35 was deployed at 10:05:58.2: before 10:10, and in 10:05:58's second.
        for since in ["2026-07-12T10:10:00Z", "2026-07-12T10:05:58Z"] {
            let report = judge(&observed, &revision_35(since));
            assert_eq!(report.targets[0].verdict, Verdict::NotLive, "since {since}");
            assert!(
                report.targets.iter().all(|t| t.superseded_by.is_none()),
                "since {since}"
            );
        }
    }

    #[test]
    fn without_the_revision_that_carried_it_nothing_is_superseded() {
        let mut observed = Observed::of_story(UPGRADED_TWICE);
        observed.replicasets.clear();
        // Revision 35's storage missing (pruned by --history-max, or not in the dump).
        observed.others.retain(|o| {
            o.pointer("/metadata/name").and_then(|n| n.as_str())
                != Some("sh.helm.release.v1.inventory.v35")
        });
        observed.decode_releases_with(|obj| {
            crate::releases::decoded(liveproof_helm::read_release(
                obj,
                &liveproof_helm::Limits::default(),
            ))
        });
        let report = judge(&observed, &revision_35("2026-07-12T10:00:00Z"));
        assert_eq!(report.targets[0].verdict, Verdict::NotLive, "{report:#?}");
        assert!(report.targets.iter().all(|t| t.superseded_by.is_none()));
    }

    #[test]
    fn a_flux_helmrelease_upgraded_again_is_superseded_by_the_newer_revision() {
        let observed = story("flux-chartversion-bumped-v35-live");
        // Chart 0.4.2 was revision 34 (deployed 2026-07-08T14:21:58), 0.4.3 is revision 35.
        let change = Change {
            since: Some(at("2026-07-08T14:00:00Z")),
            chart_version: Some("0.4.2".into()),
            ..Change::default()
        };
        let target = Target::new(TargetKind::HelmRelease, None, "inventory");
        let report = crate::checks::judge(&observed, &change, &[target], "apps");
        let owner = &report.targets[0];
        assert_eq!(owner.verdict, Verdict::Superseded, "{report:#?}");
        let by = owner.superseded_by.clone().expect("what superseded it");
        assert_eq!(
            by.revision.as_deref(),
            Some("apps/inventory.v35 (chart inventory-0.4.3)")
        );
    }
}
