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
use crate::checks::gitops::helmrelease_release;
use crate::checks::release::{same_version, stored_source, ReleaseHistory};
use crate::checks::verdict::verdict;
use crate::checks::workload_checks::workload_findings;
use crate::order::{order, Order};
use crate::releases::ReadRelease;
use crate::{Change, Observed, ResourceKind, Status, SupersededBy, Target, TargetKind, Verdict};

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
pub(super) fn superseded(
    observed: &Observed,
    change: &Change,
    target: &Target,
    namespace: &str,
) -> Option<SupersededBy> {
    let since = change.since?;
    if change.manifest.is_empty() && change.chart_version.is_none() && change.images.is_empty() {
        return None;
    }
    let history = match target.kind {
        TargetKind::Release => ReleaseHistory::read(observed, namespace, &target.name),
        TargetKind::HelmRelease => {
            let hr = observed.find_other(ResourceKind::HelmRelease, namespace, &target.name)?;
            let (storage_ns, name) = helmrelease_release(hr, namespace);
            ReleaseHistory::read(observed, &storage_ns, &name)
        }
        _ => return None,
    };
    // The newest revision is the one deployed (a failed or pending one is another story), and
    // it certainly does not carry the change.
    let newest = history.newest()?;
    let info = &newest.release.info;
    if info.status != ReleaseStatus::Deployed || carries(observed, change, newest) != Carries::No {
        return None;
    }
    let newest_at = info.last_deployed?;
    // The last earlier revision that was deployed (Helm marks it superseded once another is),
    // certainly after the change time, carrying all of it.
    let carrier = history
        .revisions
        .iter()
        .filter(|r| r.release.version < newest.release.version)
        .filter(|r| r.release.info.status == ReleaseStatus::Superseded)
        .filter(|r| {
            r.release
                .info
                .last_deployed
                .is_some_and(|t| order(t, since) == Order::After)
        })
        .filter(|r| carries(observed, change, r) == Carries::Yes)
        .max_by_key(|r| r.release.version)?;
    let carried_at = carrier.release.info.last_deployed?;
    if order(newest_at, carried_at) != Order::After {
        return None;
    }
    // A rollback deploys an older revision's content anew: it replaced the change only when
    // that content came after the carrier.
    if let Some(restored) = rollback_to(newest) {
        if restored <= carrier.release.version {
            return None;
        }
    }
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
                spec,
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
    let expected: Option<Vec<ExpectedImage>> = images
        .iter()
        .map(|i| ExpectedImage::parse(i).ok())
        .collect();
    let describe = ReleaseHistory::describe(newest);
    let newer = Change {
        since: Some(deployed),
        since_source: Some(format!("the deploy of {describe}")),
        images: expected?,
        stated_by: Some(format!("release {describe}")),
        digests: change.digests,
        ..Change::default()
    };
    let workloads = crate::checks::release::workloads(newest);
    if workloads.is_empty() || !newest.manifest.unreadable.is_empty() {
        return None;
    }
    let verdicts: Vec<Verdict> = workloads
        .iter()
        .map(|(kind, ns, name)| {
            let target = Target::new(*kind, Some(ns), name);
            let (findings, _) = workload_findings(observed, &newer, &target, ns, None);
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
