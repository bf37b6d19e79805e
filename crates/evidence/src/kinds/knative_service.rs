//! A Knative Service (`serving.knative.dev/v1`, `ksvc/`), read by the field names of
//! knative/serving's `pkg/apis/serving/v1`: `ServiceStatus` (`observedGeneration`, the `Ready`
//! condition, `latestCreatedRevisionName`, `latestReadyRevisionName`, `traffic[]
//! {revisionName, percent, latestRevision, tag}`) and `RevisionStatus.containerStatuses[]
//! {name, imageDigest}`.
//!
//! Each spec change makes a Revision; its pods are those of the Deployment
//! `<revision>-deployment`, labelled `serving.knative.dev/revision`. The revision made from the
//! change is `latestCreatedRevisionName` once `observedGeneration` caught up. So a ksvc is judged
//! by its own evidence (the revision ready, all traffic on it, the digests it resolved) and then
//! followed to that Deployment, verified as a workload. Knative writes the resolved digest, not
//! the tag, into that Deployment, so an `--image` tag is held there to the digest the Revision
//! recorded for it ([`pinned_change`]).

use serde_json::Value;

use crate::checks::finding::Finding;
use crate::checks::gitops::{condition_fresh, observed_generation};
use crate::checks::raw::{self, condition, str_at};
use crate::suggestion::{Command, Suggestion};
use crate::{
    Change, Check, ExpectedImage, ImageRef, Observed, ResourceKind, SourceRef, Status, Target,
    TargetKind,
};

/// The revision made from the current spec: `latestCreatedRevisionName`.
pub(crate) fn latest_created(ksvc: &Value) -> Option<&str> {
    str_at(ksvc, "/status/latestCreatedRevisionName").filter(|s| !s.is_empty())
}

/// The Deployment running the latest created revision's pods (`<revision>-deployment`, as
/// knative's `names.Deployment`).
pub(crate) fn revision_deployment(ksvc: &Value, ns: &str) -> Option<Target> {
    let revision = latest_created(ksvc)?;
    Some(Target::new(
        TargetKind::Deployment,
        Some(ns),
        &format!("{revision}-deployment"),
    ))
}

/// A failure waiting will not fix, for `--wait`: the revision made from the current spec
/// failed. knative/serving's Configuration marks its Ready condition False with reason
/// `RevisionFailed` when its latest created Revision's Ready turns False
/// (`pkg/apis/serving/v1/configuration_lifecycle.go` `MarkLatestCreatedFailed`, also when the
/// Revision could not be created), and the Service carries it on ConfigurationsReady and Ready
/// (`service_lifecycle.go` `PropagateConfigurationStatus`). A revision still coming up is
/// Unknown there, not False. Only for the spec Knative observed, and recorded after the change:
/// an older spec's failure is not this change's.
pub(crate) fn gave_up(ksvc: &Value, change: &Change) -> Option<String> {
    let caught_up = match (
        crate::checks::raw::i64_at(ksvc, "/metadata/generation"),
        crate::checks::raw::i64_at(ksvc, "/status/observedGeneration"),
    ) {
        (Some(generation), Some(observed)) => observed >= generation,
        _ => false,
    };
    if !caught_up {
        return None;
    }
    ["ConfigurationsReady", "Ready"]
        .iter()
        .filter_map(|t| condition(ksvc, t))
        .find(|c| {
            c.status == "False"
                && c.reason == "RevisionFailed"
                && matches!(
                    (c.last_transition, change.since),
                    (Some(at), Some(since)) if crate::order::order(at, since) == crate::order::Order::After
                )
        })
        .map(|c| format!("{}=False RevisionFailed: {}", c.type_, c.message))
}

fn source(ksvc: &Value, ns: &str) -> SourceRef {
    SourceRef::object(ResourceKind::KnativeService, ns, raw::name(ksvc))
}

fn describe(ksvc: &Value, ns: &str) -> Command {
    Command::kubectl(["-n", ns, "describe", "ksvc", raw::name(ksvc)])
}

/// The Knative Service's own evidence; the revision's pods are judged as the Deployment it
/// leads to.
pub(crate) fn findings(
    observed: &Observed,
    change: &Change,
    ksvc: &Value,
    ns: &str,
) -> Vec<Finding> {
    vec![
        observed_generation(ksvc, ResourceKind::KnativeService, ns),
        condition_fresh(
            ksvc,
            ResourceKind::KnativeService,
            ns,
            &["Ready"],
            change,
            None,
            None,
        ),
        ready_revision(ksvc, ns),
        image_digests(observed, change, ksvc, ns),
        traffic(ksvc, ns),
    ]
}

/// `rollout_complete`: Ready and the latest created revision is the latest ready one.
fn ready_revision(ksvc: &Value, ns: &str) -> Finding {
    let source = source(ksvc, ns).field(".status.latestReadyRevisionName");
    let expected = "Ready=True, latestReadyRevisionName == latestCreatedRevisionName";
    let created = latest_created(ksvc);
    let ready = str_at(ksvc, "/status/latestReadyRevisionName").filter(|s| !s.is_empty());
    let ready_condition = condition(ksvc, "Ready");
    let observed = format!(
        "latestCreated {}, latestReady {}, Ready={}",
        created.unwrap_or("(none)"),
        ready.unwrap_or("(none)"),
        ready_condition.as_ref().map_or("(none)", |c| c.status)
    );
    let finding = |status| {
        Finding::new(Check::RolloutComplete, status, observed.clone(), expected)
            .source(source.clone())
    };
    let Some(created) = created else {
        return finding(Status::Unknown)
            .detail("the Service records no latestCreatedRevisionName: Knative has not reconciled it, or the input lacks its status");
    };
    if ready != Some(created) {
        let why = ready_condition
            .as_ref()
            .filter(|c| c.status != "True")
            .map(|c| format!(" ({} {}: {})", c.type_, c.reason, c.message))
            .unwrap_or_default();
        return finding(Status::Fail)
            .detail(format!(
                "Knative has not made revision {created}, made from the current spec, ready yet{why}: traffic stays on {}",
                ready.unwrap_or("no revision")
            ))
            .next(Suggestion::text("see why the revision is not ready: ").command(Command::kubectl([
                "-n", ns, "describe", "revision", created,
            ])));
    }
    match ready_condition {
        Some(c) if c.status == "True" => finding(Status::Pass).detail(format!(
            "revision {created} is ready (status tier: its pods below are the proof)"
        )),
        Some(c) => finding(Status::Fail)
            .detail(format!("Ready={} {}: {}", c.status, c.reason, c.message))
            .next(Suggestion::text("see what Knative reports: ").command(describe(ksvc, ns))),
        None => finding(Status::Unknown).detail("the Service has no Ready condition"),
    }
}

/// The Revision made from the change, or the finding that says why it cannot be read.
fn revision<'a>(
    observed: &'a Observed,
    ksvc: &Value,
    ns: &str,
    check: Check,
    expected: &str,
) -> Result<&'a Value, Box<Finding>> {
    let Some(name) = latest_created(ksvc) else {
        return Err(Box::new(Finding::new(check, Status::Unknown, "no revision recorded", expected)
            .source(source(ksvc, ns).field(".status.latestCreatedRevisionName"))
            .detail("the Service records no latestCreatedRevisionName, so which revision carries the change is unknown")));
    };
    if let Some(found) = observed.find_other(ResourceKind::KnativeRevision, ns, name) {
        return Ok(found);
    }
    let src = SourceRef::object(ResourceKind::KnativeRevision, ns, name)
        .field(".status.containerStatuses");
    let (status, detail, next) = if let Some(d) = observed.denial(ns, ResourceKind::KnativeRevision)
    {
        (
            Status::Unknown,
            format!("reading Revision {name} was refused: {}", d.message),
            d.next_step(),
        )
    } else if observed.is_complete(ns, ResourceKind::KnativeRevision) {
        (
            Status::Fail,
            format!("Revision {name}, which the Service names as its latest, does not exist"),
            Suggestion::text("see what Knative reports: ").command(describe(ksvc, ns)),
        )
    } else {
        (
            Status::Unknown,
            format!("the input holds no Revision {ns}/{name}"),
            Suggestion::text("include it: ").command(Command::kubectl([
                "-n",
                ns,
                "get",
                &format!("revisions.serving.knative.dev/{name}"),
                "-o",
                "yaml",
            ])),
        )
    };
    Err(Box::new(
        Finding::new(check, status, crate::checks::NOT_FOUND, expected)
            .source(src)
            .detail(detail)
            .next(next),
    ))
}

/// `(container, image as the Service's template names it, digest the Revision resolved)`.
fn resolved<'a>(ksvc: &'a Value, revision: &'a Value) -> Vec<(&'a str, &'a str, Option<&'a str>)> {
    let containers = ksvc
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let statuses = revision
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    containers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // A single container may be unnamed in the Service; its status is then the only one.
            let name = str_at(c, "/name").unwrap_or_default();
            let status = statuses
                .iter()
                .find(|s| str_at(s, "/name") == Some(name))
                .or_else(|| (containers.len() == 1).then(|| statuses.first()).flatten())
                .or_else(|| statuses.get(i).filter(|_| name.is_empty()));
            (
                name,
                str_at(c, "/image").unwrap_or_default(),
                status
                    .and_then(|s| str_at(s, "/imageDigest"))
                    .filter(|d| !d.is_empty()),
            )
        })
        .collect()
}

/// `spec_readback`: the Revision made from the change carries each `--image`, and the digest
/// Knative resolved it to is recorded (`containerStatuses[].imageDigest`).
fn image_digests(observed: &Observed, change: &Change, ksvc: &Value, ns: &str) -> Finding {
    let expected = if change.images.is_empty() {
        "the digests the revision resolved".to_string()
    } else {
        change
            .images
            .iter()
            .map(|i| i.given.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let revision = match revision(observed, ksvc, ns, Check::SpecReadback, &expected) {
        Ok(r) => r,
        Err(f) => return *f,
    };
    let name = raw::name(revision);
    let src = SourceRef::object(ResourceKind::KnativeRevision, ns, name)
        .field(".status.containerStatuses[].imageDigest");
    let containers = resolved(ksvc, revision);
    let shown: Vec<String> = containers
        .iter()
        .map(|(c, image, digest)| {
            format!(
                "{} {image} → {}",
                if c.is_empty() { "(unnamed)" } else { c },
                digest.unwrap_or("no digest")
            )
        })
        .collect();
    let observed_text = format!("revision {name}: {}", shown.join("; "));
    if change.images.is_empty() {
        return Finding::new(
            Check::SpecReadback,
            Status::Skip,
            observed_text,
            "nothing given",
        )
        .source(src)
        .detail(
            "no --image given: the revision's resolved digests are shown, nothing is held to them",
        );
    }
    let mut failed = Vec::new();
    let mut unknown = Vec::new();
    for want in &change.images {
        let matching: Vec<_> = containers
            .iter()
            .filter(|(_, image, _)| {
                ImageRef::parse(image).is_some_and(|i| i.repository == want.image.repository)
            })
            .collect();
        if matching.is_empty() {
            failed.push(format!(
                "no container of revision {name} runs {}",
                want.image.repository
            ));
        }
        for (c, image, digest) in matching {
            let image_ref = ImageRef::parse(image);
            let Some(digest) = digest else {
                unknown.push(format!("container {c}: Knative recorded no imageDigest for {image} (tag resolution skipped, or not done yet)"));
                continue;
            };
            let resolved_digest = ImageRef::parse(digest).and_then(|r| r.digest);
            let ok = match (&want.image.digest, &want.image.tag) {
                (Some(d), _) => resolved_digest.as_deref() == Some(d.as_str()),
                (None, tag) => {
                    image_ref.as_ref().and_then(|r| r.tag.as_deref())
                        == tag.as_deref().or(Some("latest"))
                }
            };
            if !ok {
                failed.push(format!(
                    "container {c} runs {image} (resolved {digest}), not {}",
                    want.given
                ));
            }
        }
    }
    if !failed.is_empty() {
        return Finding::new(Check::SpecReadback, Status::Fail, observed_text, expected)
            .source(src)
            .detail(format!(
                "{}: the revision made from the current spec does not carry the change",
                failed.join("; ")
            ))
            .next("apply the change to the Service's spec.template, then verify again");
    }
    if !unknown.is_empty() {
        return Finding::new(
            Check::SpecReadback,
            Status::Unknown,
            observed_text,
            expected,
        )
        .source(src)
        .detail(unknown.join("; "));
    }
    Finding::new(Check::SpecReadback, Status::Pass, observed_text, expected)
        .source(src)
        .detail(format!("revision {name} carries the expected images, resolved to the digests shown; its pods are held to those digests below"))
}

/// `traffic_current`: `status.traffic[]` is a whole split — each percent 0–100, together 100 —
/// and all of it is on the revision made from the change. A percent Knative left out is 0 (a
/// tag-only target); one that is not a whole number, or a share naming no revision, cannot be
/// read.
fn traffic(ksvc: &Value, ns: &str) -> Finding {
    let source = source(ksvc, ns).field(".status.traffic");
    let expected = "100% of traffic on the latest created revision, the percents adding up to 100";
    let Some(current) = latest_created(ksvc) else {
        return Finding::new(Check::TrafficCurrent, Status::Unknown, "no revision recorded", expected)
            .source(source)
            .detail("the Service records no latestCreatedRevisionName, so which revision carries the change is unknown");
    };
    let entries: &[Value] = ksvc
        .pointer("/status/traffic")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut shares: Vec<(&str, i64)> = Vec::new();
    let mut unreadable: Vec<String> = Vec::new();
    for (i, t) in entries.iter().enumerate() {
        let name = str_at(t, "/revisionName").filter(|n| !n.is_empty());
        let percent = match t.get("percent") {
            None | Some(Value::Null) => 0,
            Some(p) => match p.as_i64() {
                Some(p) => p,
                None => {
                    unreadable.push(format!("traffic[{i}]: percent {p} is not a whole number"));
                    continue;
                }
            },
        };
        match name {
            Some(name) => shares.push((name, percent)),
            None if percent != 0 => {
                unreadable.push(format!("traffic[{i}]: {percent}% to no named revision"));
            }
            None => {}
        }
    }
    let shown: Vec<String> = shares
        .iter()
        .filter(|(_, p)| *p != 0)
        .map(|(r, p)| format!("{p}% to {r}"))
        .chain(unreadable.iter().cloned())
        .collect();
    if shown.is_empty() {
        return Finding::new(Check::TrafficCurrent, Status::Unknown, "no traffic recorded", expected)
            .source(source)
            .detail("the Service's status.traffic names no revision with a percent: Knative has not routed it yet, or the input lacks its status");
    }
    let shown = shown.join(", ");
    let old: Vec<String> = shares
        .iter()
        .filter(|(r, p)| *r != current && (1..=100).contains(p))
        .map(|(r, p)| format!("{p}% to {r}"))
        .collect();
    if !old.is_empty() {
        return Finding::new(Check::TrafficCurrent, Status::Fail, shown, expected)
            .source(source)
            .detail(format!(
                "the traffic split still sends {} rather than to {current}, the revision made from the current spec: a spec.traffic entry pins it, or a gradual rollout is under way",
                old.join(", ")
            ))
            .next(Suggestion::text("see the Service's traffic targets (spec.traffic): ").command(describe(ksvc, ns)));
    }
    let out_of_range: Vec<String> = shares
        .iter()
        .filter(|(_, p)| !(0..=100).contains(p))
        .map(|(r, p)| format!("{p}% to {r}"))
        .collect();
    let total: i64 = shares.iter().map(|(_, p)| p).sum();
    let unknown = |detail: String| {
        Finding::new(
            Check::TrafficCurrent,
            Status::Unknown,
            shown.clone(),
            expected,
        )
        .source(source.clone())
        .detail(detail)
        .next(Suggestion::text("see the traffic Knative reports: ").command(describe(ksvc, ns)))
    };
    if !unreadable.is_empty() {
        return unknown(format!(
            "part of status.traffic cannot be read ({}), so where those requests go is unknown",
            unreadable.join("; ")
        ));
    }
    if !out_of_range.is_empty() {
        return unknown(format!(
            "{} is no share of the traffic (a percent is 0–100), so status.traffic does not say where the requests go",
            out_of_range.join(", ")
        ));
    }
    if total != 100 {
        return unknown(format!(
            "the percents of status.traffic add up to {total}%, not 100%: where the rest of the requests go is not recorded"
        ));
    }
    Finding::new(Check::TrafficCurrent, Status::Pass, shown, expected)
        .source(source)
        .detail(format!(
            "every request goes to {current}, the revision made from the current spec"
        ))
}

/// The change the revision's Deployment is held to: each `--image` tag the Service's template
/// names becomes the digest the Revision resolved it to (Knative writes that digest into the
/// Deployment); when the Revision or a digest cannot be read, the `--image` is dropped there, so
/// the Deployment is unproven rather than failed for a digest it was never meant to show.
pub(crate) fn pinned_change(
    observed: &Observed,
    change: &Change,
    ksvc: &Value,
    ns: &str,
) -> Change {
    let revision = latest_created(ksvc)
        .and_then(|n| observed.find_other(ResourceKind::KnativeRevision, ns, n));
    let containers = revision.map(|r| resolved(ksvc, r)).unwrap_or_default();
    let images = change
        .images
        .iter()
        .filter_map(|want| {
            if want.image.digest.is_some() {
                return Some(want.clone());
            }
            let digest = containers
                .iter()
                .filter(|(_, image, _)| {
                    ImageRef::parse(image).is_some_and(|i| i.repository == want.image.repository)
                })
                .find_map(|(_, _, d)| ImageRef::parse((*d)?)?.digest)?;
            let tag = want.image.effective_tag().unwrap_or("latest");
            ExpectedImage::parse(&format!("{}:{tag}@{digest}", want.image.repository)).ok()
        })
        .collect();
    Change {
        images,
        ..change.clone()
    }
}

/// The Knative Service's rules: its own evidence, then its latest revision's Deployment, held
/// to the digests the revision resolved.
pub(crate) struct Rules;

impl super::rules::KindRules for Rules {
    /// The Service, then the Revision made from its current spec (the digests it resolved);
    /// that revision's Deployment is a workload, read by the workload plan.
    fn reads(
        &self,
        observed: &Observed,
        target: &Target,
        ns: &str,
    ) -> Vec<super::answers::ReadRequest> {
        use super::answers::ReadRequest;
        let mut reads = vec![ReadRequest::object(
            ResourceKind::KnativeService,
            ns,
            &target.name,
        )];
        if let Some(revision) = observed
            .find_other(ResourceKind::KnativeService, ns, &target.name)
            .and_then(|k| str_at(k, "/status/latestCreatedRevisionName"))
            .filter(|r| !r.is_empty())
        {
            reads.push(ReadRequest::object(
                ResourceKind::KnativeRevision,
                ns,
                revision,
            ));
        }
        reads
    }

    fn leads_through(&self) -> &'static [ResourceKind] {
        &[ResourceKind::KnativeService, ResourceKind::KnativeRevision]
    }

    fn accepts(&self) -> super::answers::Accepts {
        super::answers::Accepts {
            chart_version: false,
            expect: super::answers::ExpectOn::Refused(super::answers::LEADS_TO_ONE_WORKLOAD),
        }
    }

    fn diagnose(
        &self,
        observed: &Observed,
        target: &Target,
        ns: &str,
        since: Option<jiff::Timestamp>,
    ) -> Vec<crate::diagnostic::Diagnostic> {
        crate::diagnose::controller(observed, ResourceKind::KnativeService, target, ns, since)
    }
    fn leads_to(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<Target> {
        observed
            .find_other(ResourceKind::KnativeService, ns, &target.name)
            .and_then(|k| revision_deployment(k, ns))
            .into_iter()
            .collect()
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        crate::checks::gitops::own_object(
            observed,
            ResourceKind::KnativeService,
            ns,
            &target.name,
            |k| findings(observed, change, k, ns),
        )
    }

    fn followed_change(
        &self,
        observed: &Observed,
        change: Change,
        target: &Target,
        ns: &str,
    ) -> Change {
        match observed.find_other(ResourceKind::KnativeService, ns, &target.name) {
            Some(ksvc) => pinned_change(observed, &change, ksvc, ns),
            None => change,
        }
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<crate::TimelineEntry> {
        observed
            .find_other(ResourceKind::KnativeService, ns, &target.name)
            .and_then(|k| {
                crate::checks::gitops::dated_ready(
                    k,
                    ResourceKind::KnativeService,
                    ns,
                    crate::Moment::Promoted,
                )
            })
            .into_iter()
            .collect()
    }

    fn gave_up(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Option<String> {
        let obj = observed.find_other(ResourceKind::KnativeService, ns, &target.name)?;
        gave_up(obj, change).map(|f| {
            format!(
                "{ns}/{}/{}: {f}",
                ResourceKind::KnativeService.kind_name(),
                target.name
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ksvc(traffic: Value) -> Value {
        json!({"metadata": {"name": "hello", "namespace": "web", "generation": 3},
               "spec": {"template": {"spec": {"containers": [{"image": "ghcr.io/acme/hello:1.1.0"}]}}},
               "status": {"observedGeneration": 3, "latestCreatedRevisionName": "hello-00003",
                          "latestReadyRevisionName": "hello-00003", "traffic": traffic}})
    }

    /// A split that still sends a share to an older revision fails naming it and its percent.
    #[test]
    fn a_split_with_an_older_revision_fails_naming_it() {
        let split = ksvc(json!([
            {"revisionName": "hello-00003", "percent": 80, "latestRevision": true},
            {"revisionName": "hello-00002", "percent": 20, "latestRevision": false},
            {"revisionName": "hello-00001", "percent": 0, "tag": "old"}
        ]));
        let f = traffic(&split, "web");
        assert_eq!(f.evidence.status, Status::Fail);
        assert!(
            f.evidence.detail.contains("20% to hello-00002"),
            "{}",
            f.evidence.detail
        );
        assert!(
            !f.evidence.detail.contains("hello-00001"),
            "a tag with 0% carries nothing"
        );
        let all =
            ksvc(json!([{"revisionName": "hello-00003", "percent": 100, "latestRevision": true}]));
        assert_eq!(traffic(&all, "web").evidence.status, Status::Pass);
    }

    /// A split is held to add up: each percent 0–100, together 100, the current revision at
    /// 100. Short of that it is unknown (never a pass); a share to an old revision fails.
    #[test]
    fn a_split_that_does_not_add_up_is_unknown() {
        let status = |traffic: Value| traffic_of(&ksvc(traffic));
        fn traffic_of(svc: &Value) -> (Status, String) {
            let f = traffic(svc, "web");
            (f.evidence.status, f.evidence.detail)
        }
        let (s, detail) = status(json!([{"revisionName": "hello-00003", "percent": 50}]));
        assert_eq!(s, Status::Unknown);
        assert!(detail.contains("add up to 50%, not 100%"), "{detail}");
        let (s, detail) = status(json!([
            {"revisionName": "hello-00003", "percent": 150},
            {"revisionName": "hello-00002", "percent": -50}
        ]));
        assert_eq!(s, Status::Unknown);
        assert!(detail.contains("is no share of the traffic"), "{detail}");
        let (s, _) = status(json!([
            {"revisionName": "hello-00003", "percent": 100},
            {"revisionName": "hello-00003", "percent": 100, "tag": "current"}
        ]));
        assert_eq!(s, Status::Unknown, "200%");
        let (s, detail) = status(json!([{"revisionName": "hello-00003", "percent": "100"}]));
        assert_eq!(s, Status::Unknown);
        assert!(detail.contains("not a whole number"), "{detail}");
        let (s, _) = status(json!([{"latestRevision": true, "percent": 100}]));
        assert_eq!(s, Status::Unknown, "a share naming no revision");
        let (s, _) = status(json!([
            {"revisionName": "hello-00002", "percent": 50},
        ]));
        assert_eq!(
            s,
            Status::Fail,
            "half to an old revision, whatever the rest"
        );
        let (s, _) = status(json!([
            {"revisionName": "hello-00003", "percent": 100},
            {"revisionName": "hello-00001", "tag": "old"}
        ]));
        assert_eq!(s, Status::Pass, "a tag without a percent carries 0%");
    }

    /// An unnamed single container pairs with the revision's only status; a tag is pinned to
    /// the digest the revision resolved, and dropped when that cannot be read.
    #[test]
    fn an_image_tag_is_pinned_to_the_resolved_digest() {
        let svc = ksvc(json!([]));
        let digest = format!("sha256:{}", "d".repeat(64));
        let mut observed = Observed::default();
        let change = Change {
            images: vec![ExpectedImage::parse("ghcr.io/acme/hello:1.1.0").expect("an image")],
            ..Change::default()
        };
        assert!(pinned_change(&observed, &change, &svc, "web")
            .images
            .is_empty());
        observed.others.push(json!({
            "apiVersion": "serving.knative.dev/v1", "kind": "Revision",
            "metadata": {"name": "hello-00003", "namespace": "web"},
            "status": {"containerStatuses": [{"name": "user-container",
                "imageDigest": format!("ghcr.io/acme/hello@{digest}")}]}
        }));
        let pinned = pinned_change(&observed, &change, &svc, "web");
        assert_eq!(
            pinned.images[0].image.digest.as_deref(),
            Some(digest.as_str())
        );
        assert_eq!(pinned.images[0].image.tag.as_deref(), Some("1.1.0"));
    }
}
