//! Helm and GitOps targets (`release/`, `helmrelease/`, `kustomization/`, `application/`,
//! `canary/`, `ksvc/`): their own evidence, then the workloads they lead to, verified as
//! workloads. What each kind reads and leads to is its rules in `kinds/` (reached through
//! [`rules`]); here are the entry points and the checks those kinds share.

use jiff::Timestamp;
use serde_json::Value;

use super::raw::{self, condition, i64_at, revision_matches, str_at, time_at};
use super::release::{self, ReleaseHistory, Staleness};
use super::Finding;
use crate::kinds::rules;
use crate::order::{order, Order};
use crate::suggestion::{Command, Suggestion};
use crate::{
    Change, Check, Containment, Observed, ResourceKind, SourceRef, Status, Target, TargetKind,
};

/// The Helm release a Flux HelmRelease manages: `(storage namespace, release name)`, as
/// helm-controller names and stores it (`api/v2` `GetReleaseName`, `GetStorageNamespace`):
/// the newest `status.history` entry's name, else `spec.releaseName`, else
/// `<targetNamespace>-<name>`, else `<name>` (shortened past 53 characters); stored in
/// `status.storageNamespace`, else `spec.storageNamespace`, else the HelmRelease's namespace —
/// never `targetNamespace`, which is where the release deploys to. Gathering and judging both
/// call this, so they read the same Secrets.
pub fn helmrelease_release(hr: &Value, namespace: &str) -> (String, String) {
    let text = |ptr: &str| str_at(hr, ptr).filter(|s| !s.is_empty());
    let from_history = hr
        .pointer("/status/history")
        .and_then(Value::as_array)
        .and_then(|history| {
            history
                .iter()
                .filter(|s| str_at(s, "/name").is_some_and(|n| !n.is_empty()))
                .max_by_key(|s| i64_at(s, "/version").unwrap_or(i64::MIN))
        })
        .and_then(|s| str_at(s, "/name"));
    let name = match from_history {
        Some(name) => name.to_string(),
        None => liveproof_helm::helm_controller_release_name(
            text("/metadata/name").unwrap_or_default(),
            text("/spec/targetNamespace"),
            text("/spec/releaseName"),
        ),
    };
    let storage = text("/status/storageNamespace")
        .or_else(|| text("/spec/storageNamespace"))
        .unwrap_or(namespace);
    (storage.to_string(), name)
}

/// The Deployment/StatefulSet/DaemonSet targets a Helm or GitOps target leads to: the newest
/// release's manifest, a Kustomization's inventory, an Application's resources. Gathering
/// calls this to know what to read next; judging calls it to know what to verify.
pub fn followed_workloads(observed: &Observed, target: &Target, default_ns: &str) -> Vec<Target> {
    let ns = target.namespace_or(default_ns);
    let mut out = rules(target.kind).leads_to(observed, target, ns);
    out.sort();
    out.dedup();
    out
}

/// The change the workloads `target` leads to are held to: `--expect` was held to the
/// installed manifest (the workloads' templates are only a part of it); a Knative Service's
/// revision Deployment runs the digest its Revision resolved, not the tag.
pub(crate) fn followed_change(
    observed: &Observed,
    change: &Change,
    target: &Target,
    ns: &str,
) -> Change {
    let change = Change {
        manifest: Vec::new(),
        ..change.clone()
    };
    rules(target.kind).followed_change(observed, change, target, ns)
}

/// The workloads to gather for `target`: those it leads to ([`followed_workloads`]) and those
/// its own evidence compares them with (a Canary's target, whose template the primary must
/// carry).
pub fn workloads_to_read(observed: &Observed, target: &Target, default_ns: &str) -> Vec<Target> {
    let mut out = followed_workloads(observed, target, default_ns);
    let ns = target.namespace_or(default_ns);
    out.extend(rules(target.kind).compares_with(observed, target, ns));
    out
}

/// A kustomize-controller inventory id: `<namespace>_<name>_<group>_<kind>`.
pub(crate) fn inventory_workload(id: &str) -> Option<Target> {
    let mut parts = id.rsplitn(3, '_');
    let kind_name = parts.next()?;
    let group = parts.next()?;
    let kind = TargetKind::workload_named(kind_name, Some(group))?;
    let ns_name = parts.next()?;
    let (ns, name) = ns_name.split_once('_')?;
    (!ns.is_empty()).then(|| Target::new(kind, Some(ns), name))
}

/// What a Helm or GitOps target dates of its own: when the Helm release was deployed, when
/// the GitOps controller last applied (Flux: its `Ready` condition turning True; Argo CD: the
/// sync operation's `finishedAt`), and when a Knative Service's traffic was promoted (its
/// `Ready` turning True).
pub(crate) fn dated(observed: &Observed, target: &Target, ns: &str) -> Vec<crate::TimelineEntry> {
    rules(target.kind).dated(observed, target, ns)
}

/// `event` dated by `obj`'s `Ready` condition turning True.
pub(crate) fn dated_ready(
    obj: &Value,
    resource: ResourceKind,
    ns: &str,
    event: crate::Moment,
) -> Option<crate::TimelineEntry> {
    condition(obj, "Ready")
        .filter(|c| c.status == "True")
        .and_then(|c| c.last_transition)
        .map(|at| {
            dated_at(
                obj,
                resource,
                ns,
                event,
                at,
                ".status.conditions[Ready].lastTransitionTime",
            )
        })
}

/// `event` at `at`, read from `field` of `obj`.
pub(crate) fn dated_at(
    obj: &Value,
    resource: ResourceKind,
    ns: &str,
    event: crate::Moment,
    at: Timestamp,
    field: &'static str,
) -> crate::TimelineEntry {
    crate::TimelineEntry::read(event, at, source_of(obj, resource, ns).field(field))
}

/// The GitOps target's own evidence.
pub fn findings(observed: &Observed, change: &Change, target: &Target, ns: &str) -> Vec<Finding> {
    rules(target.kind).findings(observed, change, target, ns)
}

/// What source-controller reports failing for a GitRepository (`api/v1/condition_types.go`):
/// Stalled=True (a stalling error: an invalid URL), FetchFailed=True (the clone or checkout
/// failed: GitOperationFailed, AuthenticationFailed, …), or SourceVerified=False (the
/// commit's signature did not verify).
pub(crate) fn source_failure(repo: &Value) -> Option<raw::Condition<'_>> {
    [
        ("Stalled", "True"),
        ("FetchFailed", "True"),
        ("SourceVerified", "False"),
    ]
    .into_iter()
    .find_map(|(type_, failing)| condition(repo, type_).filter(|c| c.status == failing))
}

/// A target's own evidence read from its object `name`: `judge` of it, or why it is absent.
pub(crate) fn own_object(
    observed: &Observed,
    resource: ResourceKind,
    ns: &str,
    name: &str,
    judge: impl FnOnce(&Value) -> Vec<Finding>,
) -> Vec<Finding> {
    match observed.find_other(resource, ns, name) {
        Some(obj) => judge(obj),
        None => vec![absent(observed, resource, ns, name)],
    }
}

fn absent(observed: &Observed, resource: ResourceKind, ns: &str, name: &str) -> Finding {
    let kind = resource.kind_name();
    let source = SourceRef::object(resource, ns, name);
    let (status, detail, next) = if let Some(d) = observed.denial(ns, resource) {
        (
            Status::Unknown,
            format!("reading it was refused: {}", d.message),
            d.next_step(),
        )
    } else if observed.is_complete(ns, resource) {
        (
            Status::Fail,
            format!("{kind} {ns}/{name} does not exist in the cluster"),
            Suggestion::text("check the name and namespace: ").command(Command::kubectl([
                "-n",
                ns,
                "get",
                resource.plural(),
            ])),
        )
    } else {
        (
            Status::Unknown,
            format!("the input holds no {kind} {ns}/{name}"),
            Suggestion::text("include it: ").command(Command::kubectl([
                "-n",
                ns,
                "get",
                &format!("{}/{name}", resource.plural()),
                "-o",
                "yaml",
            ])),
        )
    };
    Finding::new(
        Check::ObservedGeneration,
        status,
        super::NOT_FOUND,
        format!("{kind} {name}"),
    )
    .source(source)
    .detail(detail)
    .next(next)
}

fn source_of(obj: &Value, resource: ResourceKind, ns: &str) -> SourceRef {
    SourceRef::object(resource, ns, raw::name(obj))
}

/// Who acts on a `resource` target (`Flux's kustomize-controller`), and the name the command
/// line gives its kind (`ksvc`, not the `service` of its kind name).
fn actor_of(resource: ResourceKind) -> (&'static str, &'static str) {
    match TargetKind::of_resource(resource) {
        Some(kind) => (kind.actor().name, kind.cli_name()),
        None => ("its controller", resource.kind_name()),
    }
}

pub(crate) fn observed_generation(obj: &Value, resource: ResourceKind, ns: &str) -> Finding {
    let (actor, kind) = actor_of(resource);
    let source = source_of(obj, resource, ns).field(".status.observedGeneration");
    match (i64_at(obj, "/metadata/generation"), i64_at(obj, "/status/observedGeneration")) {
        (Some(g), Some(o)) if o >= g => Finding::new(Check::ObservedGeneration, Status::Pass, format!("observedGeneration {o}"), format!(">= generation {g}"))
            .source(source)
            .detail("the controller has processed the current spec"),
        (Some(g), Some(o)) => Finding::new(Check::ObservedGeneration, Status::Fail, format!("observedGeneration {o}"), format!(">= generation {g}"))
            .source(source)
            .detail(format!("{actor} has not processed generation {g} yet: everything in status describes generation {o}"))
            .next(
                Suggestion::text(format!("wait for {actor}, or check that it runs: "))
                    .command(super::verify_again(kind, ns, raw::name(obj))),
            ),
        _ => Finding::new(Check::ObservedGeneration, Status::Unknown, "not recorded", ">= metadata.generation")
            .source(source)
            .detail("generation or observedGeneration is missing, so whether the controller saw the spec is unknown"),
    }
}

/// `condition_fresh` over the named conditions: each True and changed after the change.
/// `describes` says, for a stale one, which deploy it is about. `applied` is a revision the
/// controller acted on that contains the change's commit, when the change time is the
/// commit's own ([`causally_after`]): a condition whose message names it was written after
/// the commit, whatever its whole-second time says.
pub(crate) fn condition_fresh(
    obj: &Value,
    resource: ResourceKind,
    ns: &str,
    types: &[&str],
    change: &Change,
    describes: Option<String>,
    applied: Option<&str>,
) -> Finding {
    let kind = resource.kind_name();
    let (actor, cli_name) = actor_of(resource);
    let source = source_of(obj, resource, ns).field(".status.conditions");
    let expected = match change.since {
        Some(s) => format!("{} True, changed after {s}", types.join("/")),
        None => format!("{} True, changed after the change", types.join("/")),
    };
    let mut observed_parts = Vec::new();
    let mut failing: Option<(String, Suggestion)> = None;
    let mut unknown: Option<String> = None;
    // Conditions the clock could not order after the change, ordered by what they name.
    let mut by_causality: Vec<String> = Vec::new();
    for t in types {
        let Some(c) = condition(obj, t) else {
            if *t == "Ready" {
                unknown.get_or_insert(format!("{kind} has no {t} condition"));
            }
            continue;
        };
        let when = c
            .last_transition
            .map(|t| t.to_string())
            .unwrap_or_else(|| "?".into());
        observed_parts.push(format!(
            "{}={} ({}) since {when}",
            c.type_, c.status, c.reason
        ));
        if c.status != "True" {
            failing.get_or_insert((
                format!("{}={} {}: {}", c.type_, c.status, c.reason, c.message),
                Suggestion::text(format!("{actor} reports a failure on the {kind}; `"))
                    .command(Command::kubectl([
                        "-n",
                        ns,
                        "describe",
                        cli_name,
                        raw::name(obj),
                    ]))
                    .then("` shows its events"),
            ));
            continue;
        }
        // The condition's state (its message included: a change of message moves
        // lastTransitionTime) names a revision that contains the commit: it was written
        // after the commit, even in the commit's own second.
        let names_applied = applied.filter(|rev| c.message.contains(rev));
        if let (Some(since), Some(at), Some(rev)) = (change.since, c.last_transition, names_applied)
        {
            if order(at, since) != Order::After {
                by_causality.push(format!(
                    "{} last changed at {at} to name {rev}, which contains the change's commit, so it was written after the commit (causality orders them, not the clock)",
                    c.type_
                ));
                continue;
            }
        }
        match (change.since, c.last_transition) {
            (Some(since), Some(at)) if order(at, since) == Order::Tie => {
                unknown.get_or_insert(format!(
                    "{} last changed at {at}, in the change's own second ({since}): times are recorded to the second, so which came first cannot be told; give the change time to the sub-second, or let the release and pods below decide",
                    c.type_
                ));
            }
            (Some(since), Some(at)) if order(at, since) == Order::Before => {
                let about = describes
                    .clone()
                    .map(|d| format!("it describes {d}"))
                    .unwrap_or_else(|| "it describes an earlier deploy".into());
                failing.get_or_insert((
                    format!(
                        "{} \"{}\" last changed at {at}, before the change: {about}, not this change",
                        c.type_, c.reason
                    ),
                    format!("{actor} has not acted on the change: a controller that decides nothing changed leaves the old condition standing; check what it compares (source revision, chart version)").into(),
                ));
            }
            (None, _) => {
                unknown.get_or_insert(
                    "no change time was given, so the condition's age cannot be compared".into(),
                );
            }
            (_, None) => {
                unknown.get_or_insert(format!("{} has no lastTransitionTime", c.type_));
            }
            _ => {}
        }
    }
    let observed = if observed_parts.is_empty() {
        "no conditions".to_string()
    } else {
        observed_parts.join("; ")
    };
    if let Some((detail, next)) = failing {
        return Finding::new(Check::ConditionFresh, Status::Fail, observed, expected)
            .source(source)
            .detail(detail)
            .next(next);
    }
    if let Some(detail) = unknown {
        return Finding::new(Check::ConditionFresh, Status::Unknown, observed, expected)
            .source(source)
            .detail(detail)
            .next(super::GIVE_THE_CHANGE_TIME);
    }
    let detail = if by_causality.is_empty() {
        "the conditions changed after the change (status tier: the release and pods below are the proof)".to_string()
    } else {
        format!(
            "{} (status tier: the release and pods below are the proof)",
            by_causality.join("; ")
        )
    };
    Finding::new(Check::ConditionFresh, Status::Pass, observed, expected)
        .source(source)
        .detail(detail)
}

/// `gitops_revision` from several comparisons: all must hold; none given → skip. `actor` is
/// who takes the change, `fetching` the command that shows what its source fetched.
fn revision_finding(
    source: SourceRef,
    parts: Vec<(Status, String, String, Option<String>)>,
    actor: &str,
    fetching: &str,
) -> Finding {
    if parts.is_empty() {
        return Finding::new(
            Check::GitopsRevision,
            Status::Skip,
            "not checked",
            "nothing given",
        )
        .source(source)
        .detail("no --commit or --chart-version given");
    }
    let status = if parts.iter().any(|p| p.0 == Status::Fail) {
        Status::Fail
    } else if parts.iter().any(|p| p.0 == Status::Unknown) {
        Status::Unknown
    } else {
        Status::Pass
    };
    let observed = parts
        .iter()
        .map(|p| p.1.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let expected = parts
        .iter()
        .map(|p| p.2.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let detail = parts
        .iter()
        .filter(|p| p.0 == status)
        .filter_map(|p| p.3.clone())
        .collect::<Vec<_>>()
        .join("; ");
    let f = Finding::new(Check::GitopsRevision, status, observed, expected).source(source);
    match status {
        Status::Pass => f.detail(if detail.is_empty() { "the controller's revision is the change's".to_string() } else { detail }),
        _ => f.detail(detail).next(format!("{actor} has not taken the change: check its source is fetching the commit ({fetching})")),
    }
}

fn commit_part(
    observed: &Observed,
    observed_revision: Option<&str>,
    commit: &str,
    what: &str,
) -> (Status, String, String, Option<String>) {
    let expected = format!("{what} at {commit} or a descendant of it");
    let Some(rev) = observed_revision else {
        return (
            Status::Unknown,
            format!("{what} not recorded"),
            expected,
            Some(format!("{what} is not recorded in the input")),
        );
    };
    let seen = format!("{what} {rev}");
    if revision_matches(rev, commit) {
        return (Status::Pass, seen, expected, None);
    }
    let at = raw::revision_commit(rev);
    match observed.containment.get(&at.to_ascii_lowercase()) {
        Some(Containment::Contains) => (
            Status::Pass,
            seen,
            expected,
            Some(format!(
                "{what} is at {at}, a descendant of the change's commit {commit}: it contains the change"
            )),
        ),
        Some(Containment::Lacks) => (
            Status::Fail,
            seen,
            expected,
            Some(format!(
                "{what} is at {at}, which does not contain the change's commit {commit} (an older commit, or another branch)"
            )),
        ),
        Some(Containment::Unknown { why, fix }) => (
            Status::Unknown,
            seen,
            expected,
            Some(format!(
                "{what} is at {at}, not the change's commit {commit}, and whether it descends from it cannot be told: {why} (to tell: {fix})"
            )),
        ),
        None => (
            Status::Unknown,
            seen,
            expected,
            Some(format!(
                "{what} is at {at}, not the change's commit {commit}; whether it descends from it was not traced in git (pass --repo with a clone of the repository)"
            )),
        ),
    }
}

/// Whether `revision` (a Flux or Argo CD revision, or a chart version whose build metadata is
/// a commit: `0.4.3+3f2c1ab9d0e1`) contains the change's `commit`: is it, or descends from it
/// in `--repo`. `None` when that cannot be told (not traced, or git could not say).
pub(crate) fn contains_commit(observed: &Observed, revision: &str, commit: &str) -> Option<bool> {
    let at = chart_build_commit(revision).unwrap_or_else(|| raw::revision_commit(revision));
    if revision_matches(at, commit) {
        return Some(true);
    }
    match observed.containment.get(&at.to_ascii_lowercase()) {
        Some(Containment::Contains) => Some(true),
        Some(Containment::Lacks) => Some(false),
        Some(Containment::Unknown { .. }) | None => None,
    }
}

/// The commit a chart version names in its build metadata: source-controller versions a chart
/// it builds from a GitRepository with `reconcileStrategy: Revision` as `VERSION+COMMIT[:12]`,
/// and helm-controller records it as the HelmRelease's `lastAttemptedRevision`.
pub(crate) fn chart_build_commit(version: &str) -> Option<&str> {
    version
        .split_once('+')
        .map(|(_, build)| build)
        .filter(|build| crate::is_commit_sha(build))
}

/// Whether the change time is the commit's own (its committer time, or earlier): then whatever
/// a controller did with a revision that contains the commit, it did after the change.
/// Causality orders them where whole-second clocks cannot (a webhook and a sync within the
/// commit's own second); a `--since` later than the commit is ordered by the clock alone.
pub(crate) fn causally_after(change: &Change) -> bool {
    matches!((change.since, change.commit_time), (Some(since), Some(committed)) if since <= committed)
}

/// `revision`, when the controller acted on it after the change by causality: it contains the
/// change's commit and the change time is the commit's own ([`causally_after`]).
fn applied_after_commit<'a>(
    observed: &Observed,
    change: &Change,
    revision: Option<&'a str>,
) -> Option<&'a str> {
    let commit = change.commit.as_deref()?;
    revision.filter(|rev| {
        causally_after(change) && contains_commit(observed, rev, commit) == Some(true)
    })
}

/// Every GitOps revision the objects name that is not `commit` itself, as the revision checks
/// read them: what the gather traces in `--repo` against the change's commit
/// ([`Observed::containment`]). The commit itself matches by [`revision_matches`], untraced.
pub fn revisions_to_trace(observed: &Observed, commit: &str) -> Vec<String> {
    // What a wait stops on reads the attempted revisions too: a Kustomization's last attempt,
    // a HelmRelease's chart (its build metadata), an Argo CD operation that failed before it
    // had a result.
    const SINGLE: [&str; 6] = [
        "/status/artifact/revision",
        "/status/lastAppliedRevision",
        "/status/lastAttemptedRevision",
        "/status/sync/revision",
        "/status/operationState/syncResult/revision",
        "/status/operationState/operation/sync/revision",
    ];
    const LISTS: [&str; 3] = [
        "/status/sync/revisions",
        "/status/operationState/syncResult/revisions",
        "/status/operationState/operation/sync/revisions",
    ];
    let mut out: Vec<String> = observed
        .others
        .iter()
        .flat_map(|o| {
            let single = SINGLE.iter().filter_map(|p| str_at(o, p));
            let listed = LISTS
                .iter()
                .filter_map(|p| o.pointer(p).and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str);
            single.chain(listed).collect::<Vec<_>>()
        })
        .map(|r| chart_build_commit(r).unwrap_or_else(|| raw::revision_commit(r)))
        .filter(|r| !revision_matches(r, commit))
        .map(str::to_ascii_lowercase)
        .filter(|c| crate::is_commit_sha(c))
        .collect();
    out.sort();
    out.dedup();
    out
}

pub(crate) fn helmrelease(
    observed: &Observed,
    change: &Change,
    hr: &Value,
    ns: &str,
) -> Vec<Finding> {
    let (storage_ns, release_name) = helmrelease_release(hr, ns);
    let history = ReleaseHistory::read(observed, &storage_ns, &release_name);
    let describes = condition_describes(hr, &history);
    let mut out = vec![observed_generation(hr, ResourceKind::HelmRelease, ns)];
    // helm-controller names the chart it released in Ready's and Released's messages
    // (`with chart inventory@0.4.3+3f2c1ab9d0e1`): a version built from the commit orders them.
    let attempted = applied_after_commit(
        observed,
        change,
        str_at(hr, "/status/lastAttemptedRevision").filter(|v| chart_build_commit(v).is_some()),
    );
    out.push(condition_fresh(
        hr,
        ResourceKind::HelmRelease,
        ns,
        &["Ready", "Released"],
        change,
        describes,
        attempted,
    ));

    let mut parts = Vec::new();
    if let Some(want) = &change.chart_version {
        let have = str_at(hr, "/status/history/0/chartVersion")
            .or_else(|| str_at(hr, "/status/lastAttemptedRevision"));
        let expected = format!("chart version {want}");
        parts.push(match have {
            Some(v) if v.trim_start_matches('v') == want.trim_start_matches('v') => {
                (Status::Pass, format!("chart version {v}"), expected, None)
            }
            Some(v) => (
                Status::Fail,
                format!("chart version {v}"),
                expected,
                Some(format!(
                    "helm-controller last handled chart version {v}, not {want}"
                )),
            ),
            None => (
                Status::Unknown,
                "chart version not recorded".into(),
                expected,
                None,
            ),
        });
    }
    let source_ref = hr.pointer("/spec/chart/spec/sourceRef");
    let source_kind = source_ref
        .and_then(|s| str_at(s, "/kind"))
        .unwrap_or_default();
    let source_name = source_ref
        .and_then(|s| str_at(s, "/name"))
        .unwrap_or_default();
    let source_ns = source_ref
        .and_then(|s| str_at(s, "/namespace"))
        .unwrap_or(ns);
    if let Some(commit) = &change.commit {
        if source_kind == "GitRepository" {
            let repo = observed.find_other(ResourceKind::GitRepository, source_ns, source_name);
            let rev = repo.and_then(|r| str_at(r, "/status/artifact/revision"));
            parts.push(commit_part(
                observed,
                rev,
                commit,
                &format!("GitRepository {source_ns}/{source_name}"),
            ));
        }
    }
    out.push(revision_finding(
        source_of(hr, ResourceKind::HelmRelease, ns).field(".status"),
        parts,
        TargetKind::HelmRelease.actor().name,
        "flux get sources git -A",
    ));

    let (mut release_findings, staleness) =
        release::findings(observed, change, &history, TargetKind::HelmRelease.actor());
    // When the controller has not even seen the current spec, that is the cause, not the strategy.
    let spec_seen = match (
        i64_at(hr, "/metadata/generation"),
        i64_at(hr, "/status/observedGeneration"),
    ) {
        (Some(g), Some(o)) => o >= g,
        _ => true,
    };
    if spec_seen && matches!(staleness, Staleness::DeployedBefore) {
        if let Some((detail, next)) = chart_version_diagnosis(observed, change, hr) {
            if let Some(first) = release_findings.first_mut() {
                first.evidence.detail = format!("{} {detail}", first.evidence.detail);
            }
            // The diagnosis is the root cause of every failure above: it is the next step.
            for f in out.iter_mut().chain(release_findings.iter_mut()) {
                if f.evidence.status == Status::Fail {
                    f.next_step = Some(next.clone().into());
                }
            }
        }
    }
    out.extend(release_findings);
    out
}

/// Which deploy a HelmRelease's conditions are about: the release its Ready message names
/// (helm-controller writes "… for release apps/inventory.v34 …"), with that revision's date
/// when its storage was read; else the newest stored revision.
fn condition_describes(hr: &Value, history: &ReleaseHistory) -> Option<String> {
    let dated = |r: &crate::releases::ReadRelease| {
        let at = r
            .release
            .info
            .last_deployed
            .map(|t| format!(" from {}", t.to_zoned(jiff::tz::TimeZone::UTC).date()))
            .unwrap_or_default();
        format!("{}{at}", ReleaseHistory::describe(r))
    };
    let named = ["Ready", "Released"]
        .iter()
        .filter_map(|t| condition(hr, t))
        .find_map(|c| {
            c.message
                .split_whitespace()
                .find(|w| w.contains('/') && w.contains(".v"))
                .map(|w| w.trim_matches(|ch: char| !ch.is_alphanumeric()).to_string())
        });
    match named {
        Some(release) => {
            let version = release
                .rsplit(".v")
                .next()
                .and_then(|v| v.parse::<i64>().ok());
            let stored = history
                .revisions
                .iter()
                .find(|r| Some(r.release.version) == version);
            Some(stored.map_or(release, |r| dated(r)))
        }
        None => history.newest().map(|r| dated(r)),
    }
}

/// Seed 002: with `reconcileStrategy: ChartVersion` (the default) on a GitRepository chart,
/// helm-controller builds a new chart only when Chart.yaml's version changes, so template
/// changes merged without a bump never deploy. Returns `(detail, next step)`.
fn chart_version_diagnosis(
    observed: &Observed,
    change: &Change,
    hr: &Value,
) -> Option<(String, String)> {
    let spec = hr.pointer("/spec/chart/spec")?;
    let strategy = str_at(spec, "/reconcileStrategy").unwrap_or("ChartVersion");
    if strategy != "ChartVersion" || str_at(spec, "/sourceRef/kind") != Some("GitRepository") {
        return None;
    }
    let chart = str_at(spec, "/chart")
        .unwrap_or("the chart")
        .trim_start_matches("./");
    let from_git = change.commit.as_ref().and_then(|commit| {
        observed.chart_changes.iter().find(|c| {
            c.commit.starts_with(commit.as_str()) || commit.starts_with(c.commit.as_str())
        })
    });
    let confirmed = match from_git {
        Some(c) if !c.files.is_empty() && !c.version_changed => format!(
            " Git confirms it: commit {} changed {} under {} but not the version: line of {}/Chart.yaml.",
            &c.commit[..c.commit.len().min(7)],
            c.files.join(", "),
            c.chart_path,
            c.chart_path
        ),
        Some(c) if c.version_changed => format!(
            " (commit {} did bump {}/Chart.yaml's version, so the controller should build it: check the source is at that commit)",
            &c.commit[..c.commit.len().min(7)],
            c.chart_path
        ),
        _ => String::new(),
    };
    Some((
        format!(
            "reconcileStrategy ChartVersion: helm-controller builds a new chart only when {chart}/Chart.yaml's version changes, so template changes merged without a version bump never deploy.{confirmed}"
        ),
        format!("bump `version:` in {chart}/Chart.yaml (or set spec.chart.spec.reconcileStrategy: Revision) and merge"),
    ))
}

pub(crate) fn kustomization(
    observed: &Observed,
    change: &Change,
    ks: &Value,
    ns: &str,
) -> Vec<Finding> {
    let mut out = vec![observed_generation(ks, ResourceKind::Kustomization, ns)];
    let applied = str_at(ks, "/status/lastAppliedRevision");
    let attempted = str_at(ks, "/status/lastAttemptedRevision");
    // kustomize-controller's Ready says "Applied revision: main@sha1:…" once it applied it.
    out.push(condition_fresh(
        ks,
        ResourceKind::Kustomization,
        ns,
        &["Ready"],
        change,
        applied.map(|a| format!("revision {a}")),
        applied_after_commit(observed, change, applied),
    ));
    let mut parts = Vec::new();
    if let Some(commit) = &change.commit {
        parts.push(commit_part(
            observed,
            applied,
            commit,
            "lastAppliedRevision",
        ));
        let source_ref = ks.pointer("/spec/sourceRef");
        if source_ref.and_then(|s| str_at(s, "/kind")) == Some("GitRepository") {
            let name = source_ref
                .and_then(|s| str_at(s, "/name"))
                .unwrap_or_default();
            let source_ns = source_ref
                .and_then(|s| str_at(s, "/namespace"))
                .unwrap_or(ns);
            if let Some(repo) = observed.find_other(ResourceKind::GitRepository, source_ns, name) {
                let mut part = commit_part(
                    observed,
                    str_at(repo, "/status/artifact/revision"),
                    commit,
                    &format!("GitRepository {source_ns}/{name}"),
                );
                // Why it does not have the commit, in source-controller's words.
                if part.0 != Status::Pass {
                    if let Some(c) = source_failure(repo) {
                        let why = format!(
                            "source-controller reports {}={} {}: {}",
                            c.type_,
                            c.status,
                            c.reason,
                            raw::shown(c.message)
                        );
                        part.3 = Some(match part.3 {
                            Some(detail) => format!("{detail}; {why}"),
                            None => why,
                        });
                    }
                }
                parts.push(part);
            }
        }
    }
    if let (Some(applied), Some(attempted)) = (applied, attempted) {
        if applied != attempted {
            let message = condition(ks, "Ready")
                .map(|c| c.message.to_string())
                .unwrap_or_default();
            parts.push((
                Status::Fail,
                format!("lastAttemptedRevision {attempted}"),
                format!("lastAttemptedRevision = lastAppliedRevision {applied}"),
                Some(format!("the newest revision {attempted} failed to apply; the cluster still has {applied}: {message}")),
            ));
        }
    }
    out.push(revision_finding(
        source_of(ks, ResourceKind::Kustomization, ns).field(".status"),
        parts,
        TargetKind::Kustomization.actor().name,
        "flux get sources git -A",
    ));
    out
}

pub(crate) fn application(
    observed: &Observed,
    change: &Change,
    app: &Value,
    ns: &str,
) -> Vec<Finding> {
    let src = source_of(app, ResourceKind::Application, ns);
    let sync_status = str_at(app, "/status/sync/status").unwrap_or("Unknown");
    let mut parts = Vec::new();
    if let Some(commit) = &change.commit {
        // Multi-source apps record one revision per source: the change is in one of them.
        let synced = str_at(app, "/status/sync/revision")
            .or_else(|| best_revision(observed, app, "/status/sync/revisions", commit));
        parts.push(commit_part(
            observed,
            synced,
            commit,
            &format!("sync ({sync_status})"),
        ));
        if let Some(op) = synced_by_operation(observed, app, commit) {
            parts.push(commit_part(
                observed,
                Some(op),
                commit,
                "last sync operation",
            ));
        }
    }
    // At the right revision or not, OutOfSync means the cluster differs from git.
    if sync_status == "OutOfSync" {
        parts.push((
            Status::Fail,
            "OutOfSync".into(),
            "Synced".into(),
            Some("the cluster differs from git: Argo CD has not synced the newest revision".into()),
        ));
    }
    let phase = str_at(app, "/status/operationState/phase");
    let message = str_at(app, "/status/operationState/message").unwrap_or_default();
    let fetching = format!("argocd app get {}", raw::name(app));
    let mut revision = revision_finding(
        src.clone().field(".status.sync"),
        parts,
        TargetKind::Application.actor().name,
        &fetching,
    );
    if let (Status::Fail, Some(p @ ("Failed" | "Error"))) = (revision.evidence.status, phase) {
        // Not taken because the sync of it failed: that failure is the cause to look at.
        revision.evidence.detail = format!(
            "{}; the last sync {p}: {}",
            revision.evidence.detail,
            raw::shown(message)
        );
        revision.next_step = Some(see_the_failed_sync(app, ns).into());
    } else if let Some(step) = sync_when_asked(observed, change, app, ns) {
        revision.next_step = Some(step.into());
    }
    let mut out = vec![revision];

    // A sync of the commit, or of a descendant of it, came after the commit whatever the
    // whole-second clocks say (a webhook and a sync within the commit's own second).
    let synced_commit = change
        .commit
        .as_deref()
        .and_then(|commit| synced_by_operation(observed, app, commit))
        .and_then(|op| applied_after_commit(observed, change, Some(op)));

    // The sync operation: its finish time is Argo CD's "when did I last act".
    let finished: Option<Timestamp> = time_at(app, "/status/operationState/finishedAt");
    let expected = match change.since {
        Some(s) => format!("a Succeeded sync finished after {s}"),
        None => "a Succeeded sync finished after the change".into(),
    };
    let observed = format!(
        "phase {} finished {}",
        phase.unwrap_or("none"),
        finished
            .map(|t| t.to_string())
            .unwrap_or_else(|| "never".into())
    );
    let f = Finding::new(Check::ConditionFresh, Status::Pass, observed, expected)
        .source(src.clone().field(".status.operationState"));
    let finished_order = finished
        .zip(change.since)
        .map(|(at, since)| order(at, since));
    out.push(match (phase, finished, change.since) {
        (Some("Succeeded"), Some(_), Some(_)) if finished_order == Some(Order::After) => f.detail("Argo CD finished a sync after the change (status tier: the pods below are the proof)"),
        (Some("Succeeded"), Some(at), Some(_)) if synced_commit.is_some() => f.detail(format!(
            "Argo CD finished syncing {}, which contains the change's commit, at {at}: a sync of the commit comes after it (causality orders them, not the clock; status tier: the pods below are the proof)",
            synced_commit.unwrap_or_default()
        )),
        (Some("Succeeded"), Some(at), Some(since)) if finished_order == Some(Order::Tie) => with_status(f, Status::Unknown)
            .detail(format!("the last sync finished at {at}, in the change's own second ({since}): times are recorded to the second, so which came first cannot be told"))
            .next("give the change time to the sub-second (--since with fractional seconds), or let the pods decide: verify the workloads with --image or -f"),
        (Some("Succeeded"), Some(at), Some(_)) => with_status(f, Status::Fail)
            .detail(format!("the last sync finished at {at}, before the change: it describes an earlier deploy"))
            .next("Argo CD has not synced since the change: check auto-sync and the app's source revision (argocd app get)"),
        (Some("Running"), _, _) => with_status(f, Status::Fail).detail(format!("a sync is still running: {message}")),
        (Some(p @ ("Failed" | "Error")), _, _) => with_status(f, Status::Fail)
            .detail(format!("the last sync {p}: {message}"))
            .next(see_the_failed_sync(app, ns)),
        (_, _, None) => with_status(f, Status::Unknown).detail("no change time was given").next(super::GIVE_THE_CHANGE_TIME),
        _ => with_status(f, Status::Unknown).detail("no finished sync operation is recorded"),
    });

    let health = str_at(app, "/status/health/status").unwrap_or("Unknown");
    let f = Finding::new(
        Check::RolloutComplete,
        Status::Pass,
        format!("health {health}, sync {sync_status}"),
        "health Healthy",
    )
    .source(src.field(".status.health"));
    out.push(match health {
        "Healthy" => f.detail("Argo CD reports the app healthy (status tier)"),
        "Progressing" => with_status(f, Status::Fail)
            .detail("Argo CD reports the app still progressing")
            .next(
                Suggestion::text("wait for it: ").command(super::verify_again(
                    "application",
                    ns,
                    raw::name(app),
                )),
            ),
        "Degraded" | "Missing" => with_status(f, Status::Fail)
            .detail(format!("Argo CD reports the app {health}"))
            .next("see which resources are unhealthy: argocd app get"),
        _ => with_status(f, Status::Unknown).detail(format!("health is {health}")),
    });
    out
}

/// What to do about an app Argo CD syncs only when asked (no `spec.syncPolicy.automated`) that
/// has found the change's commit (it compared it, or a descendant: OutOfSync) and runs no
/// operation: start a sync. Its source fetches the commit; nothing will sync it by itself.
fn sync_when_asked(observed: &Observed, change: &Change, app: &Value, ns: &str) -> Option<String> {
    let commit = change.commit.as_deref()?;
    let automated = app
        .pointer("/spec/syncPolicy/automated")
        .is_some_and(|a| !a.is_null());
    let compared = str_at(app, "/status/sync/revision")?;
    let running = app.get("operation").is_some_and(|o| !o.is_null())
        || str_at(app, "/status/operationState/phase") == Some("Running");
    let found = contains_commit(observed, compared, commit) == Some(true);
    (!automated
        && !running
        && found
        && str_at(app, "/status/sync/status") == Some("OutOfSync"))
    .then(|| {
        let name = raw::name(app);
        format!(
            "Argo CD has found the commit (it compared {compared}: OutOfSync) but syncs {ns}/{name} only when asked: it has no automated sync policy; sync it (argocd app sync {name} --app-namespace {ns}), then verify again"
        )
    })
}

/// Where a failed Argo CD sync says why: the operation's message and each resource's result.
fn see_the_failed_sync(app: &Value, ns: &str) -> String {
    format!(
        "see why the sync failed: argocd app get {} --app-namespace {ns} --show-operation (or kubectl -n {ns} get application {} -o jsonpath='{{.status.operationState}}')",
        raw::name(app),
        raw::name(app)
    )
}

/// The revision the last sync operation synced, of a multi-source app the one that says most
/// about `commit`.
fn synced_by_operation<'a>(observed: &Observed, app: &'a Value, commit: &str) -> Option<&'a str> {
    str_at(app, "/status/operationState/syncResult/revision").or_else(|| {
        best_revision(
            observed,
            app,
            "/status/operationState/syncResult/revisions",
            commit,
        )
    })
}

/// The revision the last sync operation synced or, when it ended before it had a result (a
/// manifest Argo CD could not generate), the one it was asked to sync.
pub(crate) fn attempted_by_operation<'a>(
    observed: &Observed,
    app: &'a Value,
    commit: &str,
) -> Option<&'a str> {
    synced_by_operation(observed, app, commit)
        .filter(|r| !r.is_empty())
        .or_else(|| str_at(app, "/status/operationState/operation/sync/revision"))
        .or_else(|| {
            best_revision(
                observed,
                app,
                "/status/operationState/operation/sync/revisions",
                commit,
            )
        })
        .filter(|r| !r.is_empty())
}

/// Of a multi-source app's revisions (one per source), the one that says most about the
/// commit: the commit itself or a descendant, else one git cannot place, else the first.
fn best_revision<'a>(
    observed: &Observed,
    app: &'a Value,
    pointer: &str,
    commit: &str,
) -> Option<&'a str> {
    let revisions: Vec<&str> = app
        .pointer(pointer)?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let rank = |r: &&&str| {
        if revision_matches(r, commit) {
            return 0;
        }
        match observed
            .containment
            .get(&raw::revision_commit(r).to_ascii_lowercase())
        {
            Some(Containment::Contains) => 0,
            Some(Containment::Unknown { .. }) | None => 1,
            Some(Containment::Lacks) => 2,
        }
    };
    revisions.iter().min_by_key(rank).copied()
}

fn with_status(mut f: Finding, status: Status) -> Finding {
    f.evidence.status = status;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An app with no automated sync policy, OutOfSync at the change's commit (Argo CD compared
    /// it) while its last operation synced the commit before: nothing will sync it by itself.
    #[test]
    fn an_app_argo_cd_syncs_only_when_asked_is_told_to_be_synced() {
        use crate::{Change, Observed};

        let mut observed = Observed::of_story("argocd-synced-live");
        let older = "c0530affada41d8aa7ef2578c5988130aa70b62f";
        let app = observed
            .others
            .iter_mut()
            .find(|o| o["kind"] == "Application")
            .expect("the Application");
        app["status"]["sync"]["status"] = serde_json::json!("OutOfSync");
        app["status"]["operationState"]["syncResult"]["revision"] = serde_json::json!(older);
        app["status"]["operationState"]["operation"]["sync"]["revision"] = serde_json::json!(older);
        observed
            .containment
            .insert(older.into(), crate::Containment::Lacks);
        let change = Change {
            commit: Some("7453f92".into()),
            since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
            ..Change::default()
        };
        let target = crate::Target::new(TargetKind::Application, Some("argocd"), "inventory");
        let step = |observed: &Observed| {
            findings(observed, &change, &target, "argocd")
                .into_iter()
                .find(|f| f.evidence.check == Check::GitopsRevision)
                .and_then(|f| f.next_step)
                .map(|s| s.to_string())
                .unwrap_or_default()
        };
        // Automated: the sync is Argo CD's to start.
        assert!(
            step(&observed).contains("check its source"),
            "{}",
            step(&observed)
        );
        let app = observed
            .others
            .iter_mut()
            .find(|o| o["kind"] == "Application")
            .expect("the Application");
        app["spec"]
            .as_object_mut()
            .expect("spec")
            .remove("syncPolicy");
        assert_eq!(
            step(&observed),
            "Argo CD has found the commit (it compared 7453f92d3435604ac532ef811d34be70bcc29dae: OutOfSync) but syncs argocd/inventory only when asked: it has no automated sync policy; sync it (argocd app sync inventory --app-namespace argocd), then verify again"
        );
    }

    #[test]
    fn inventory_ids() {
        let t = inventory_workload("apps_inventory_apps_Deployment").expect("workload");
        assert_eq!(
            t,
            Target::new(TargetKind::Deployment, Some("apps"), "inventory")
        );
        let t = inventory_workload("data_db_apps_StatefulSet").expect("statefulset");
        assert_eq!(t, Target::new(TargetKind::StatefulSet, Some("data"), "db"));
        assert!(inventory_workload("apps_inventory__Service").is_none());
        assert!(inventory_workload("_crd_apiextensions.k8s.io_CustomResourceDefinition").is_none());
    }
}
