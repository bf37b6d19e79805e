//! A Helm release, read from its storage (Secrets or ConfigMaps), never from `helm` or a
//! controller's status: `release_revision`, `release_version`, `manifest_contains`.

use jiff::Timestamp;
use std::sync::Arc;

use liveproof_helm::{ReleaseStatus, StorageDriver, StorageObject, StoredRelease};

use super::expect::{self, TextMatch};
use super::raw::str_at;
use super::Finding;
use crate::order::{order, Order};
use crate::releases::{ReadRelease, VisibleManifest};
use crate::suggestion::{Command, Suggestion};
use crate::{Change, Check, Observed, ResourceKind, SourceRef, Status};

/// Every readable revision of release `name` in `namespace`, and what could not be read: as
/// the judge reads it (`R` = [`ReadRelease`], decoded by the gatherer), or as a command that
/// decodes storage itself does (`R` = [`StoredRelease`], e.g. `release show`).
pub struct ReleaseHistory<R = Arc<ReadRelease>> {
    pub namespace: String,
    pub name: String,
    /// Oldest first.
    pub revisions: Vec<R>,
    /// `(storage object, version label, error)` for each object that failed to decode.
    pub unreadable: Vec<(StorageObject, Option<i64>, String)>,
}

/// Said of a storage object the gatherer did not decode: unreadable, never skipped.
const NOT_DECODED: &str = "was not decoded with the rest of the snapshot";

/// A decoded revision, however much of it was read.
pub trait Revision {
    fn stored(&self) -> &StoredRelease;
}

impl Revision for StoredRelease {
    fn stored(&self) -> &StoredRelease {
        self
    }
}

impl Revision for Arc<ReadRelease> {
    fn stored(&self) -> &StoredRelease {
        &self.stored
    }
}

impl ReleaseHistory {
    pub fn read(observed: &Observed, namespace: &str, name: &str) -> ReleaseHistory {
        let mut revisions = Vec::new();
        let mut unreadable = Vec::new();
        let storage = observed
            .others_of(ResourceKind::Secret)
            .chain(observed.others_of(ResourceKind::ConfigMap));
        for obj in storage {
            let in_namespace = str_at(obj, "/metadata/namespace").unwrap_or(namespace) == namespace;
            let named = str_at(obj, "/metadata/labels/name") == Some(name)
                && str_at(obj, "/metadata/labels/owner") == Some("helm");
            if !(in_namespace && named && liveproof_helm::is_release_storage(obj)) {
                continue;
            }
            // Release storage is a Secret or a ConfigMap, so this is never `None`.
            let Some(object) = StorageObject::of(obj) else {
                continue;
            };
            match observed.releases.get(&object) {
                Some(Ok(r)) => revisions.push(Arc::clone(r)),
                Some(Err(e)) => {
                    unreadable.push((object, liveproof_helm::labelled_revision(obj), e.clone()))
                }
                None => unreadable.push((
                    object.clone(),
                    liveproof_helm::labelled_revision(obj),
                    format!("{object}: {NOT_DECODED}"),
                )),
            }
        }
        ReleaseHistory::new(namespace, name, revisions, unreadable)
    }

    /// `NAMESPACE/NAME.vN`, as people name a revision.
    pub fn describe(r: &StoredRelease) -> String {
        format!(
            "{}/{}.v{}",
            r.release.namespace, r.release.name, r.release.version
        )
    }
}

impl<R: Revision> ReleaseHistory<R> {
    /// The history of these revisions (in any order) and unreadable objects.
    pub fn new(
        namespace: &str,
        name: &str,
        mut revisions: Vec<R>,
        unreadable: Vec<(StorageObject, Option<i64>, String)>,
    ) -> ReleaseHistory<R> {
        revisions.sort_by_key(|r| r.stored().release.version);
        ReleaseHistory {
            namespace: namespace.to_string(),
            name: name.to_string(),
            revisions,
            unreadable,
        }
    }

    /// The newest revision — `None` when the newest storage object could not be read: an
    /// older readable revision must never stand in for it.
    pub fn newest(&self) -> Option<&R> {
        if self.newest_unreadable().is_some() {
            return None;
        }
        self.revisions.last()
    }

    /// An unreadable object whose version is at least the newest readable one: then the
    /// newest revision itself is unknown.
    pub fn newest_unreadable(&self) -> Option<&(StorageObject, Option<i64>, String)> {
        let newest = self
            .revisions
            .last()
            .map_or(i64::MIN, |r| r.stored().release.version);
        self.unreadable
            .iter()
            .find(|(_, version, _)| version.is_none_or(|v| v >= newest))
    }

    fn revision(&self, version: i64) -> Option<&R> {
        self.revisions
            .iter()
            .find(|r| r.stored().release.version == version)
    }
}

/// Why the newest revision is what it is, for a HelmRelease's diagnosis.
pub enum Staleness {
    /// The newest revision was deployed before the change.
    DeployedBefore,
    Fresh,
    Unknown,
}

/// The three release checks, in order, plus whether the newest revision predates the change.
/// `actor` installs the release (whatever runs `helm upgrade`, or Flux's helm-controller).
pub fn findings(
    observed: &Observed,
    change: &Change,
    history: &ReleaseHistory,
    actor: crate::Actor,
) -> (Vec<Finding>, Staleness) {
    let (revision, staleness) = release_revision(observed, change, history, actor);
    let mut out = vec![revision];
    out.push(release_version(change, history, actor));
    out.push(manifest_contains(change, history));
    (out, staleness)
}

/// When the newest revision was deployed (`info.last_deployed`), read from its storage object.
pub(crate) fn deployed(history: &ReleaseHistory) -> Option<crate::TimelineEntry> {
    let newest = history.newest()?.stored();
    Some(crate::TimelineEntry::read(
        crate::Moment::HelmDeployed,
        newest.release.info.last_deployed?,
        stored_source(&newest.object).field(".data.release (info.last_deployed)"),
    ))
}

/// Every revision's storage object, for evidence that no one revision was read for.
fn storage_source(history: &ReleaseHistory) -> SourceRef {
    SourceRef::matching(
        ResourceKind::Secret,
        &history.namespace,
        &format!("sh.helm.release.v1.{}.v*", history.name),
    )
}

/// One revision's storage object as a source.
pub(crate) fn stored_source(object: &StorageObject) -> SourceRef {
    let kind = match object.driver {
        StorageDriver::Secret => ResourceKind::Secret,
        StorageDriver::ConfigMap => ResourceKind::ConfigMap,
    };
    SourceRef::object(kind, &object.namespace, &object.name)
}

fn release_revision(
    observed: &Observed,
    change: &Change,
    history: &ReleaseHistory,
    actor: crate::Actor,
) -> (Finding, Staleness) {
    let expected = match change.since {
        Some(since) => format!("newest revision deployed after {since}"),
        None => "newest revision deployed after the change".to_string(),
    };
    let ns = &history.namespace;
    if let Some((object, _, error)) = history.newest_unreadable() {
        return (
            Finding::new(Check::ReleaseRevision, Status::Unknown, "storage unreadable", expected)
                .source(stored_source(object))
                .detail(format!("the newest release revision could not be decoded: {error}"))
                .next(format!(
                    "inspect the storage object ({object}); a release Helm itself cannot read needs `helm -n {ns} history {}`",
                    history.name
                )),
            Staleness::Unknown,
        );
    }
    let Some(newest) = history.newest() else {
        return (no_release(observed, history, expected), Staleness::Unknown);
    };
    let r = &newest.release;
    let describe = ReleaseHistory::describe(newest);
    let observed_text = format!(
        "{describe} {}{}",
        r.info.status.as_str(),
        r.info
            .last_deployed
            .map(|t| format!(" at {t}"))
            .unwrap_or_default()
    );
    let finding = |status| {
        Finding::new(
            Check::ReleaseRevision,
            status,
            observed_text.clone(),
            expected.clone(),
        )
        .source(stored_source(&newest.object).field(".info"))
    };
    if let Some(why) = not_deployed(&r.info.status) {
        return (
            finding(Status::Fail)
                .detail(format!(
                    "the newest revision {describe} is {}: {why} (description: {})",
                    r.info.status.as_str(),
                    if r.info.description.is_empty() {
                        "none"
                    } else {
                        &r.info.description
                    }
                ))
                .next(format!(
                    "see what {} recorded: helm -n {} history {}",
                    actor.name, history.namespace, history.name
                )),
            Staleness::Unknown,
        );
    }
    deployed_after(history, newest, change.since, finding, actor)
}

/// No revision of the release was found: absent (the storage was listed in full), refused, or
/// missing from the input.
fn no_release(observed: &Observed, history: &ReleaseHistory, expected: String) -> Finding {
    let ns = &history.namespace;
    let (status, detail, next) = if let Some(d) = observed
        .denial(ns, ResourceKind::Secret)
        .or_else(|| observed.denial(ns, ResourceKind::ConfigMap))
    {
        (
            Status::Unknown,
            format!("reading the release storage was refused: {}", d.message),
            d.next_step(),
        )
    } else if observed.is_complete(ns, ResourceKind::Secret)
        && observed.is_complete(ns, ResourceKind::ConfigMap)
    {
        (
            Status::Fail,
            format!("no Helm release {} is installed in {ns}: no storage Secret or ConfigMap carries it", history.name),
            Suggestion::text("check the release name and namespace: ").command(Command::kubectl([
                "-n",
                ns,
                "get",
                "secrets",
                "-l",
                "owner=helm",
            ])),
        )
    } else {
        (
            Status::Unknown,
            format!(
                "the input holds no storage of Helm release {ns}/{}",
                history.name
            ),
            Suggestion::text("include the release Secrets: ").command(Command::kubectl([
                "-n",
                ns,
                "get",
                "secrets",
                "-l",
                &format!("owner=helm,name={}", history.name),
                "-o",
                "yaml",
            ])),
        )
    };
    Finding::new(Check::ReleaseRevision, status, "no release found", expected)
        .source(storage_source(history))
        .detail(detail)
        .next(next)
}

/// Why a newest revision with this status is not what serves, or `None` when it is deployed.
fn not_deployed(status: &ReleaseStatus) -> Option<&'static str> {
    match status {
        ReleaseStatus::Deployed => None,
        s if s.is_pending() => Some("an operation on it is still in progress, or died half-way"),
        ReleaseStatus::Failed => Some("the upgrade failed"),
        _ => Some("it is not the deployed revision"),
    }
}

/// A deployed newest revision against the change time: deployed after it passes, before it
/// fails, and a rollback after it to a revision from before it fails (old content, new time).
fn deployed_after(
    history: &ReleaseHistory,
    newest: &StoredRelease,
    since: Option<Timestamp>,
    finding: impl Fn(Status) -> Finding,
    actor: crate::Actor,
) -> (Finding, Staleness) {
    let r = &newest.release;
    let describe = ReleaseHistory::describe(newest);
    let Some(since) = since else {
        return (
            finding(Status::Unknown)
                .detail("no change time was given, so whether this revision came after the change cannot be told")
                .next(super::GIVE_THE_CHANGE_TIME),
            Staleness::Unknown,
        );
    };
    let Some(deployed) = r.info.last_deployed else {
        return (
            finding(Status::Unknown).detail(format!("{describe} records no last_deployed time")),
            Staleness::Unknown,
        );
    };
    // "Rollback to N" deploys revision N's content anew: fresh time, old content.
    if let Some(target) = r
        .info
        .description
        .strip_prefix("Rollback to ")
        .and_then(|n| n.trim().parse::<i64>().ok())
    {
        let restored_old = history
            .revision(target)
            .and_then(|t| t.release.info.last_deployed)
            .is_none_or(|t: Timestamp| order(t, since) == Order::Before);
        if order(deployed, since) == Order::After && restored_old {
            return (
                finding(Status::Fail)
                    .detail(format!(
                        "{describe} is a rollback to revision {target}, which predates the change: the release runs the content from before it"
                    ))
                    .next(format!(
                        "see why it was rolled back ({} recorded it): helm -n {} history {}",
                        actor.name, history.namespace, history.name
                    )),
                Staleness::DeployedBefore,
            );
        }
    }
    let deployed_order = order(deployed, since);
    if deployed_order == Order::Tie {
        return (
            finding(Status::Unknown)
                .detail(format!(
                    "{describe} was deployed at {deployed}, in the change's own second ({since}): which came first cannot be told at the precision the times were recorded"
                ))
                .next("give the change time to the sub-second (--since with fractional seconds, e.g. from date -u +%FT%T.%3NZ)"),
            Staleness::Unknown,
        );
    }
    if deployed_order == Order::After {
        (
            finding(Status::Pass).detail("the installed release was deployed after the change"),
            Staleness::Fresh,
        )
    } else {
        (
            finding(Status::Fail)
                .detail(format!(
                    "{describe} was deployed at {deployed}, before the change: nothing has been released since."
                ))
                .next(format!(
                    "find out why {}; `helm -n {} history {}` lists the revisions",
                    actor.has_not(),
                    history.namespace,
                    history.name
                )),
            Staleness::DeployedBefore,
        )
    }
}

/// Helm stores versions as written; a `v` prefix on one side only is the same version.
pub(crate) fn same_version(a: &str, b: &str) -> bool {
    a.trim_start_matches('v') == b.trim_start_matches('v')
}

fn release_version(change: &Change, history: &ReleaseHistory, actor: crate::Actor) -> Finding {
    let Some(want) = &change.chart_version else {
        return Finding::new(
            Check::ReleaseVersion,
            Status::Skip,
            "not checked",
            "nothing given",
        )
        .source(storage_source(history))
        .detail("no --chart-version given");
    };
    let expected = format!("chart version {want}");
    let Some(newest) = history.newest() else {
        return Finding::new(
            Check::ReleaseVersion,
            Status::Unknown,
            "no release read",
            expected,
        )
        .source(storage_source(history))
        .detail("the installed release could not be read (see release_revision)");
    };
    let meta = &newest.release.chart.metadata;
    let observed = format!("{}-{}", meta.name, meta.version);
    let finding = Finding::new(Check::ReleaseVersion, Status::Pass, observed, expected)
        .source(stored_source(&newest.object).field(".chart.metadata.version"));
    if same_version(&meta.version, want) {
        finding.detail("the installed release carries the expected chart version")
    } else {
        let mut f = finding.detail(format!(
            "{} runs chart version {}, not {want}",
            ReleaseHistory::describe(newest),
            meta.version
        ));
        f.evidence.status = Status::Fail;
        f.next(format!(
            "the new chart version has not been installed: find out why {} (`helm -n {} history {}` lists the revisions)",
            actor.has_not(),
            history.namespace,
            history.name
        ))
    }
}

fn manifest_contains(change: &Change, history: &ReleaseHistory) -> Finding {
    let newest = history.newest();
    let read = newest.map(|n| &n.manifest);
    // Expectations are matched against the manifest as liveproof shows it, Secret data
    // redacted: matched against the raw text, a regex would answer yes/no about a secret it
    // never prints (a read-only client once binary-searched a password out in 134 calls).
    let visible = match (change.manifest.is_empty(), newest) {
        (false, Some(n)) => Some(n.visible()),
        _ => None,
    };
    // A document that could not be read may render a workload that is then never followed:
    // the release is not proven whatever was expected of it.
    if let (Some(newest), Some(read)) = (newest, &read) {
        let all_found = visible
            .as_ref()
            .is_none_or(|v| change.manifest.iter().all(|e| e.is_match(v.text)));
        if !read.unreadable.is_empty() && all_found {
            return unreadable_documents(change, newest, read, visible);
        }
    }
    if change.manifest.is_empty() {
        return Finding::new(
            Check::ManifestContains,
            Status::Skip,
            "not checked",
            "nothing given",
        )
        .source(storage_source(history))
        .detail("no --expect given");
    }
    let expected = change
        .manifest
        .iter()
        .map(|e| format!("`{}`", e.given))
        .collect::<Vec<_>>()
        .join(", ");
    let (Some(newest), Some(visible)) = (newest, visible) else {
        return Finding::new(
            Check::ManifestContains,
            Status::Unknown,
            "no release read",
            expected,
        )
        .source(storage_source(history))
        .detail("the installed release could not be read (see release_revision)");
    };
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let mut hidden = Vec::new();
    for e in &change.manifest {
        // Name the rendered object that holds it; never quote the text (it may be a Secret).
        let holder = visible
            .read
            .objects
            .iter()
            .find(|o| e.is_match(&o.text))
            .map(|o| {
                let source = o
                    .source
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!("`{}` in {}/{}{source}", e.given, o.kind, o.name)
            });
        match holder {
            Some(h) => found.push(h),
            None => match expect::text_match(e, visible.text, !visible.credentials.is_empty()) {
                TextMatch::Found => found.push(format!("`{}` in the manifest", e.given)),
                TextMatch::Missing => missing.push(format!("`{}`", e.given)),
                TextMatch::Hidden => hidden.push(format!("`{}`", e.given)),
            },
        }
    }
    let source = stored_source(&newest.object).field(".manifest");
    let describe = ReleaseHistory::describe(newest);
    if !missing.is_empty() {
        Finding::new(Check::ManifestContains, Status::Fail, format!("missing {}", missing.join(", ")), expected)
            .source(source)
            .detail(format!(
                "the installed manifest of {describe} does not contain {}: the change is not in the installed release{}",
                missing.join(", "),
                if visible.redacted { REDACTED_NOT_SEARCHED } else { "" }
            ))
            .next("the change never reached the installed release: find what should have upgraded it")
    } else if !hidden.is_empty() {
        // Never the value, nor an answer that depends on it: where it is, and why unknown.
        let mut observed = found.clone();
        observed.push(format!(
            "{} not in the manifest as shown",
            hidden.join(", ")
        ));
        Finding::new(
            Check::ManifestContains,
            Status::Unknown,
            observed.join("; "),
            expected,
        )
        .source(source)
        .detail(format!(
            "the manifest of {describe} holds values that look like credentials ({}), shown redacted and never matched against: whether {} is in the installed release is unknown",
            expect::some_fields(visible.credentials),
            hidden.join(", ")
        ))
        .next("expect text of the change that is not a credential (a host, a user name, a key's name), or move the credential into a Secret and state it with --expect-secret-ref")
    } else {
        Finding::new(
            Check::ManifestContains,
            Status::Pass,
            found.join("; "),
            expected,
        )
        .source(source)
        .detail(format!(
            "the rendered manifest of {describe} contains every expectation"
        ))
    }
}

/// Said of a missing expectation when the manifest holds redacted text.
const REDACTED_NOT_SEARCHED: &str =
    " (Secret data is redacted before matching, so no expectation can test it)";

/// `unknown`: the installed manifest has documents no parser could read, so the workloads
/// they render (if any) are not followed and expectations may sit in them unproven.
fn unreadable_documents(
    change: &Change,
    newest: &StoredRelease,
    read: &liveproof_helm::ManifestRead,
    visible: Option<VisibleManifest>,
) -> Finding {
    let unreadable = &read.unreadable;
    let documents = unreadable
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    let expected = if change.manifest.is_empty() {
        "every document readable".to_string()
    } else {
        change
            .manifest
            .iter()
            .map(|e| format!("`{}`", e.given))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let describe = ReleaseHistory::describe(newest);
    // What was found in the readable documents is still said; it does not make the release.
    let found: Vec<String> = change
        .manifest
        .iter()
        .filter_map(|e| {
            let o = visible?.read.objects.iter().find(|o| e.is_match(&o.text))?;
            Some(format!("`{}` in {}/{}", e.given, o.kind, o.name))
        })
        .collect();
    let observed = if found.is_empty() {
        format!("{} unreadable document(s)", unreadable.len())
    } else {
        format!(
            "{}; {} unreadable document(s)",
            found.join("; "),
            unreadable.len()
        )
    };
    Finding::new(
        Check::ManifestContains,
        Status::Unknown,
        observed,
        expected,
    )
    .source(stored_source(&newest.object).field(".manifest"))
    .detail(format!(
        "the installed manifest of {describe} has documents that could not be read ({documents}): a workload they render is not verified and an expectation may sit in them, so the release is not proven"
    ))
    .next(
        Suggestion::text("read the manifest with `")
            .command(Command::liveproof(["release", "show", "--manifest"]))
            .then("` and fix the chart template that renders the unreadable document"),
    )
}

/// The workloads of `history`'s newest revision, as targets.
pub(crate) fn followed(history: &ReleaseHistory) -> Vec<crate::Target> {
    history
        .newest()
        .map(|r| workloads(r))
        .unwrap_or_default()
        .into_iter()
        .map(|(k, n, name)| crate::Target::new(k, Some(&n), &name))
        .collect()
}

/// The Deployment/StatefulSet/DaemonSet objects a release's manifest installs, with their
/// namespace (the release's when the template sets none).
pub fn workloads(release: &ReadRelease) -> Vec<(crate::TargetKind, String, String)> {
    release
        .manifest
        .objects
        .iter()
        .filter_map(|o| {
            // By group and kind, as the kind table names them (any version of the group).
            let kind =
                crate::TargetKind::workload_named(&o.kind, Some(crate::api_group(&o.api_version)))?;
            let ns = o
                .namespace
                .clone()
                .unwrap_or_else(|| release.release.namespace.clone());
            (!o.name.is_empty()).then(|| (kind, ns, o.name.clone()))
        })
        .collect()
}
