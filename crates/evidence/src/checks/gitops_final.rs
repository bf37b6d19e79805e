//! Which states of Flux and Argo CD are final for the stated change: a failure the controller
//! recorded for the change's revision (or chart) that waiting will not fix, so `--wait` stops
//! on it with the controller's own message. Everything else they report is transient and the
//! wait goes on: a dependency not ready yet, a reconciliation in progress, a controller that
//! says it retries, a failure on an older revision than the change's (the controller will try
//! the new one). docs/design.md ("Waiting and time bounds") lists both, with the controllers'
//! sources.

use jiff::Timestamp;
use serde_json::Value;

use super::gitops::{attempted_by_operation, chart_build_commit, contains_commit, source_failure};
use super::raw::{self, condition, i64_at, str_at, time_at};
use crate::order::{order, Order};
use crate::{Change, Observed, ResourceKind};

/// The Ready reasons kustomize-controller records when an attempt at a revision failed in a
/// way the next attempt at the same revision repeats (`internal/controller/
/// kustomization_controller.go`; the names are `fluxcd/pkg/apis/meta` `conditions.go`'s).
const KUSTOMIZATION_FINAL: [&str; 4] = [
    "BuildFailed",
    "ReconciliationFailed",
    "HealthCheckFailed",
    "ArtifactFailed",
];

/// The two ArtifactFailed messages kustomize-controller writes when it requeues because
/// source-controller's artifact is not there yet (`Source artifact not found, retrying in
/// 30s`): it says itself that it retries, so they are transient.
const ARTIFACT_RETRYING: [&str; 2] = [
    "Source artifact not found, retrying in",
    "Source is not ready, artifact not found, retrying in",
];

/// A Kustomization's final failure: Stalled (a terminal error on its spec: an invalid CEL
/// expression, a feature gate, a cross-namespace source denied), or Ready=False with a final
/// reason on a last attempted revision that contains the change's commit; else its
/// GitRepository cannot fetch the commit.
pub(crate) fn kustomization(
    observed: &Observed,
    change: &Change,
    ks: &Value,
    ns: &str,
) -> Option<String> {
    let source = format!("{ns}/Kustomization/{}", raw::name(ks));
    if let Some(stalled) = stalled(ks) {
        return Some(format!("{source}: {stalled}"));
    }
    let commit = change.commit.as_deref()?;
    let attempted = str_at(ks, "/status/lastAttemptedRevision");
    let failed = condition(ks, "Ready").filter(|c| {
        c.status == "False"
            && KUSTOMIZATION_FINAL.contains(&c.reason)
            && !ARTIFACT_RETRYING.iter().any(|m| c.message.starts_with(m))
    });
    // The source has a newer revision than the one that failed: kustomize-controller tries
    // that one next (it may hold the fix).
    let source_moved_on = source_repository(observed, ks.pointer("/spec/sourceRef"), ns)
        .and_then(|repo| str_at(repo, "/status/artifact/revision"))
        .zip(attempted)
        .is_some_and(|(artifact, attempted)| artifact != attempted);
    if let (Some(failed), Some(attempted), false) = (failed, attempted, source_moved_on) {
        // A failure on an older revision is not this change's: the controller will try the
        // new one once its source has it.
        if contains_commit(observed, attempted, commit) == Some(true) {
            return Some(format!(
                "{source}: Ready=False {} for revision {attempted}: {}",
                failed.reason, failed.message
            ));
        }
    }
    source_cannot_fetch(observed, commit, ks.pointer("/spec/sourceRef"), ns)
}

/// A HelmRelease's final failure: stalled (out of retries, no rollback target, a terminal
/// error) or out of remediation retries, in an attempt at the change (its chart version, a
/// chart built from the commit, or an attempt after the change); else its GitRepository
/// cannot fetch the commit.
pub(crate) fn helmrelease(
    observed: &Observed,
    change: &Change,
    hr: &Value,
    ns: &str,
) -> Option<String> {
    let source = format!("{ns}/HelmRelease/{}", raw::name(hr));
    let spec_attempted = match (
        i64_at(hr, "/metadata/generation"),
        i64_at(hr, "/status/lastAttemptedGeneration")
            .or_else(|| i64_at(hr, "/status/observedGeneration")),
    ) {
        (Some(generation), Some(attempted)) => attempted >= generation,
        _ => false,
    };
    let ready = condition(hr, "Ready").filter(|c| c.status == "False");
    let gave_up = stalled(hr).or_else(|| retries_exhausted(hr));
    if let (true, Some(gave_up)) = (spec_attempted, gave_up) {
        let failed_at = [condition(hr, "Stalled"), condition(hr, "Ready")]
            .into_iter()
            .flatten()
            .filter_map(|c| c.last_transition)
            .max();
        if attempt_is_the_change(observed, change, hr, ns, failed_at) {
            let cause = ready
                .map(|c| format!("; Ready=False {}: {}", c.reason, c.message))
                .unwrap_or_default();
            return Some(format!("{source}: {gave_up}{cause}"));
        }
    }
    let commit = change.commit.as_deref()?;
    source_cannot_fetch(
        observed,
        commit,
        hr.pointer("/spec/chart/spec/sourceRef"),
        ns,
    )
}

/// helm-controller out of remediation retries for its last release action, when it did not
/// say so with Stalled (an older helm-controller): `<action>Failures` past
/// `spec.<action>.remediation.retries` (default 0; negative is unlimited), as
/// `api/v2/helmrelease_types.go` `RetriesExhausted` counts, and no Reconciling condition (it
/// keeps one, ProgressingWithRetry, while it will try again). The RetryOnFailure strategy
/// retries without end.
fn retries_exhausted(hr: &Value) -> Option<String> {
    let action = str_at(hr, "/status/lastAttemptedReleaseAction")?;
    if !matches!(action, "install" | "upgrade") {
        return None;
    }
    if str_at(hr, &format!("/spec/{action}/strategy/name")) == Some("RetryOnFailure") {
        return None;
    }
    if condition(hr, "Reconciling").is_some_and(|c| c.status == "True") {
        return None;
    }
    let failures = i64_at(hr, &format!("/status/{action}Failures")).unwrap_or(0);
    let retries = i64_at(hr, &format!("/spec/{action}/remediation/retries")).unwrap_or(0);
    (retries >= 0 && failures > retries).then(|| {
        format!(
            "out of retries: {action} failed {failures} time(s), spec.{action}.remediation.retries allows {retries}"
        )
    })
}

/// Whether the HelmRelease's last attempt was at the stated change: the stated chart version;
/// with `--commit`, a chart version built from a revision that contains it, or else a source
/// that holds the commit and a failure recorded after the change; with only a change time, a
/// failure recorded after it.
fn attempt_is_the_change(
    observed: &Observed,
    change: &Change,
    hr: &Value,
    ns: &str,
    failed_at: Option<Timestamp>,
) -> bool {
    let attempted = str_at(hr, "/status/lastAttemptedRevision");
    if let Some(want) = &change.chart_version {
        let version = |v: &str| {
            v.split('+')
                .next()
                .unwrap_or_default()
                .trim_start_matches('v')
                .to_string()
        };
        return attempted.is_some_and(|v| version(v) == version(want));
    }
    if let Some(commit) = change.commit.as_deref() {
        if let Some(built) = attempted.filter(|v| chart_build_commit(v).is_some()) {
            return contains_commit(observed, built, commit) == Some(true);
        }
        let source_holds =
            source_repository(observed, hr.pointer("/spec/chart/spec/sourceRef"), ns)
                .and_then(|repo| str_at(repo, "/status/artifact/revision"))
                .is_some_and(|rev| contains_commit(observed, rev, commit) == Some(true));
        if !source_holds {
            return false;
        }
    }
    matches!((failed_at, change.since), (Some(at), Some(since)) if order(at, since) == Order::After)
}

/// An Argo CD Application's final failure: its last sync operation ended Failed or Error at a
/// revision that contains the change's commit (Argo CD does not retry an automated sync of a
/// revision it failed; a retry strategy runs as phase Running until its limit), or it is
/// Degraded once synced to such a revision.
pub(crate) fn application(
    observed: &Observed,
    change: &Change,
    app: &Value,
    ns: &str,
) -> Option<String> {
    let source = format!("{ns}/Application/{}", raw::name(app));
    let phase = str_at(app, "/status/operationState/phase");
    let of_the_change = |revision: Option<&str>, at: Option<Timestamp>| match change
        .commit
        .as_deref()
    {
        Some(commit) => {
            revision.is_some_and(|rev| contains_commit(observed, rev, commit) == Some(true))
        }
        // Without a commit, an operation that started after the change is about it.
        None => {
            matches!((at, change.since), (Some(at), Some(since)) if order(at, since) == Order::After)
        }
    };
    let operation_revision = change
        .commit
        .as_deref()
        .and_then(|commit| attempted_by_operation(observed, app, commit));
    let started = time_at(app, "/status/operationState/startedAt");
    // Argo CD compared a newer revision than the one whose sync failed: its automated sync
    // tries that one next (it skips only a revision it already failed on).
    let compared = str_at(app, "/status/sync/revision").filter(|r| !r.is_empty());
    let moved_on = compared
        .zip(operation_revision)
        .is_some_and(|(compared, failed)| compared != failed);
    if let (Some(p @ ("Failed" | "Error")), false) = (phase, moved_on) {
        if of_the_change(operation_revision, started) {
            let message = str_at(app, "/status/operationState/message").unwrap_or_default();
            let at = operation_revision
                .map(|r| format!(" syncing {r}"))
                .unwrap_or_default();
            return Some(format!("{source}: sync operation {p}{at}: {message}"));
        }
    }
    // Degraded on the revision it synced: the synced revision contains the commit, no
    // operation is under way, and the health was assessed after the sync finished.
    let health = str_at(app, "/status/health/status");
    let synced = str_at(app, "/status/sync/status") == Some("Synced");
    let settled = matches!(phase, None | Some("Succeeded" | "Failed" | "Error"));
    let finished = time_at(app, "/status/operationState/finishedAt");
    let assessed_after = match (time_at(app, "/status/health/lastTransitionTime"), finished) {
        (Some(assessed), Some(finished)) => order(assessed, finished) != Order::Before,
        _ => true,
    };
    let revision = str_at(app, "/status/sync/revision");
    if health == Some("Degraded")
        && synced
        && settled
        && assessed_after
        && of_the_change(revision, started)
    {
        let why = str_at(app, "/status/health/message")
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .or_else(|| degraded_resources(app));
        let at = revision.map(|r| format!(" at {r}")).unwrap_or_default();
        return Some(format!(
            "{source}: health Degraded{at}{}",
            why.map(|w| format!(": {w}")).unwrap_or_default()
        ));
    }
    None
}

/// The resources Argo CD reports Degraded, with its message for each: `Deployment apps/shop:
/// Deployment "shop" exceeded its progress deadline`.
fn degraded_resources(app: &Value) -> Option<String> {
    let degraded: Vec<String> = app
        .pointer("/status/resources")?
        .as_array()?
        .iter()
        .filter(|r| str_at(r, "/health/status") == Some("Degraded"))
        .map(|r| {
            let what = format!(
                "{} {}/{}",
                str_at(r, "/kind").unwrap_or("?"),
                str_at(r, "/namespace").unwrap_or_default(),
                str_at(r, "/name").unwrap_or("?")
            );
            match str_at(r, "/health/message").filter(|m| !m.is_empty()) {
                Some(message) => format!("{what}: {message}"),
                None => what,
            }
        })
        .collect();
    (!degraded.is_empty()).then(|| degraded.join("; "))
}

/// A Flux object's Stalled condition, True: the controller stopped retrying (kstatus:
/// "without having to rely on a timeout"), for the spec it observed.
fn stalled(obj: &Value) -> Option<String> {
    let c = condition(obj, "Stalled").filter(|c| c.status == "True")?;
    let caught_up = match (
        i64_at(obj, "/metadata/generation"),
        i64_at(obj, "/status/observedGeneration"),
    ) {
        (Some(generation), Some(observed)) => observed >= generation,
        _ => false,
    };
    caught_up.then(|| format!("Stalled {}: {}", c.reason, c.message))
}

/// The GitRepository `source_ref` names, when the failure is there: it failed to fetch (or
/// stalled, or the commit's signature failed verification) and its artifact does not hold
/// the commit, so no consumer can apply it.
fn source_cannot_fetch(
    observed: &Observed,
    commit: &str,
    source_ref: Option<&Value>,
    ns: &str,
) -> Option<String> {
    let repo = source_repository(observed, source_ref, ns)?;
    // An artifact that holds the commit (or may: git could not tell) can still be applied.
    if let Some(revision) = str_at(repo, "/status/artifact/revision") {
        if contains_commit(observed, revision, commit) != Some(false) {
            return None;
        }
    }
    let caught_up = match (
        i64_at(repo, "/metadata/generation"),
        i64_at(repo, "/status/observedGeneration"),
    ) {
        (Some(generation), Some(observed)) => observed >= generation,
        _ => false,
    };
    if !caught_up {
        return None;
    }
    let failure = source_failure(repo)?;
    Some(format!(
        "{}/GitRepository/{} cannot fetch the commit: {} {}: {}",
        str_at(repo, "/metadata/namespace").unwrap_or(ns),
        raw::name(repo),
        failure.type_,
        failure.reason,
        failure.message
    ))
}

/// The GitRepository a Flux `sourceRef` names (its namespace defaults to the consumer's).
fn source_repository<'a>(
    observed: &'a Observed,
    source_ref: Option<&Value>,
    ns: &str,
) -> Option<&'a Value> {
    let source_ref = source_ref?;
    if str_at(source_ref, "/kind") != Some("GitRepository") {
        return None;
    }
    let name = str_at(source_ref, "/name")?;
    let source_ns = str_at(source_ref, "/namespace").unwrap_or(ns);
    observed.find_other(ResourceKind::GitRepository, source_ns, name)
}
