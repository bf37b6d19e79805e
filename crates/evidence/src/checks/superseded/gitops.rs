//! `superseded` from what the commits of `--repo` state (docs/design.md, "Superseded"):
//!
//! - a Flux Kustomization or an Argo CD Application whose applied revision strictly descends
//!   from `--commit`: a workload it leads to is superseded when the stated fields differ
//!   between the manifests under its path at the commit and at that revision, and the live
//!   template is the revision's ([`followed`]); the target itself when each of its workloads
//!   that is not live was ([`owner`]). When those manifests cannot be compared (kustomize or
//!   Helm builds them, or they were not read) and the template lacks the stated change, it is
//!   undecided: `unproven`, not the `not_live` that would roll back the later commit;
//! - `-f` read as of `--commit`, with no GitOps target: the newest later commit that touched
//!   the `-f` path and whose manifest the live template matches, while the commit's differ in
//!   the stated fields ([`declared`]).
//!
//! The gather reads the manifests (`Observed::history`); here they are only compared.

use k8s_openapi::api::core::v1::PodSpec;
use serde_json::Value;

use super::super::declared::first_difference;
use super::super::raw::{self, str_at};
use super::super::verdict::verdict;
use super::super::workload_checks::workload_findings;
use super::super::{expect, Finding};
use super::applied::{Applied, Followed, Namespace};
use crate::history::{ManifestFile, ReadManifests, RepoPath};
use crate::kinds::workload::{Revision, Workload};
use crate::suggestion::Suggestion;
use crate::{
    Change, Check, DeclaredTemplate, Observed, ResourceKind, SourceRef, Status, SupersededBy,
    Target, TargetKind, TargetReport, Verdict,
};

/// The manifests `superseded` compares for the GitOps targets among `targets`: for each whose
/// applied revision strictly descends from the change's commit (as `Observed::containment`
/// says), the manifests under its path as of the commit and as of that revision. What the
/// gather reads from `--repo` into `Observed::history`.
pub fn manifests_to_read(
    observed: &Observed,
    change: &Change,
    targets: &[Target],
    default_ns: &str,
) -> Vec<(String, RepoPath)> {
    let Some(commit) = change.commit.as_deref() else {
        return Vec::new();
    };
    let mut out: Vec<(String, RepoPath)> = targets
        .iter()
        .filter_map(|t| applied(observed, t, t.namespace_or(default_ns)))
        .filter(|a| a.strictly_after(observed, commit) && a.built.is_none())
        .flat_map(|a| {
            [
                (commit.to_ascii_lowercase(), a.path.clone()),
                (a.commit.clone(), a.path),
            ]
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Fields of a Flux Kustomization's spec that change what is applied from the files.
const FLUX_BUILDS: [&str; 9] = [
    "images",
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "postBuild",
    "namePrefix",
    "nameSuffix",
    "components",
    "commonMetadata",
];

/// Fields of an Argo CD source that render or filter what is applied.
const ARGO_BUILDS: [&str; 7] = [
    "helm",
    "kustomize",
    "plugin",
    "chart",
    "directory/jsonnet",
    "directory/include",
    "directory/exclude",
];

fn applied<'a>(observed: &'a Observed, target: &Target, ns: &str) -> Option<Applied<'a>> {
    crate::kinds::rules(target.kind).gitops_applied(observed, target, ns)
}

/// Whether `pointer` in `obj` is set (and not null).
fn set(obj: &Value, pointer: &str) -> bool {
    obj.pointer(pointer).is_some_and(|v| !v.is_null())
}

/// What a Flux Kustomization applied.
pub(crate) fn kustomization_applied<'a>(
    observed: &'a Observed,
    target: &Target,
    ns: &str,
) -> Option<Applied<'a>> {
    let ks = observed.find_other(ResourceKind::Kustomization, ns, &target.name)?;
    let revision = str_at(ks, "/status/lastAppliedRevision")?;
    let built = match str_at(ks, "/spec/sourceRef/kind") {
        Some("GitRepository") => FLUX_BUILDS
            .iter()
            .find(|f| set(ks, &format!("/spec/{f}")))
            .map(|f| {
                format!("its spec.{f} changes what kustomize-controller applies from the files")
            }),
        other => Some(format!(
            "its source is a {}, not a git repository --repo can hold",
            other.unwrap_or("source of no kind")
        )),
    };
    Some(Applied {
        resource: ResourceKind::Kustomization,
        revision,
        field: ".status.lastAppliedRevision",
        commit: raw::revision_commit(revision).to_ascii_lowercase(),
        // kustomize-controller builds every directory under its path.
        path: RepoPath::new(str_at(ks, "/spec/path").unwrap_or(""), true, true),
        namespace: str_at(ks, "/spec/targetNamespace")
            .map_or(Namespace::AsDeclared, Namespace::Override),
        built,
    })
}

/// What an Argo CD Application applied.
pub(crate) fn application_applied<'a>(
    observed: &'a Observed,
    target: &Target,
    ns: &str,
) -> Option<Applied<'a>> {
    let app = observed.find_other(ResourceKind::Application, ns, &target.name)?;
    // Synced: the live objects are the manifests at the sync revision, even when that
    // revision changed nothing of this app's and no operation ran; else the last
    // operation's, when it succeeded.
    let synced = (str_at(app, "/status/sync/status") == Some("Synced"))
        .then(|| str_at(app, "/status/sync/revision"))
        .flatten()
        .map(|r| (r, ".status.sync.revision"));
    let operated = (str_at(app, "/status/operationState/phase") == Some("Succeeded"))
        .then(|| str_at(app, "/status/operationState/syncResult/revision"))
        .flatten()
        .map(|r| (r, ".status.operationState.syncResult.revision"));
    let (revision, field) = synced.or(operated)?;
    // One source: a multi-source app's revisions are one per repository.
    let source = app.pointer("/spec/source")?;
    let built = ARGO_BUILDS
        .iter()
        .find(|f| set(source, &format!("/{f}")))
        .map(|f| {
            format!(
                "its spec.source.{} renders what Argo CD applies from the files",
                f.replace('/', ".")
            )
        });
    let recurse = source
        .pointer("/directory/recurse")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Some(Applied {
        resource: ResourceKind::Application,
        revision,
        field,
        commit: raw::revision_commit(revision).to_ascii_lowercase(),
        path: RepoPath::new(str_at(source, "/path").unwrap_or(""), recurse, true),
        namespace: str_at(app, "/spec/destination/namespace")
            .map_or(Namespace::AsDeclared, Namespace::Default),
        built,
    })
}

/// A workload a GitOps target leads to, not live: superseded by the target's applied revision,
/// undecided, or neither (`None`: its verdict stands).
pub(crate) fn followed(
    observed: &Observed,
    change: &Change,
    owner: &Target,
    ns: &str,
    report: &TargetReport,
) -> Option<Followed> {
    let commit = change.commit.as_deref()?;
    let applied = applied(observed, owner, ns)?;
    if !applied.strictly_after(observed, commit) || !lacks_stated_change(&report.evidence) {
        return None;
    }
    let kind = report.kind.target()?;
    let w = Workload::find(observed, kind, &report.namespace, &report.name)?;
    let live = serde_json::to_value(w.template).ok()?;
    // `--expect` is held to the installed manifest, not to the workloads (`followed_change`).
    let change = Change {
        manifest: Vec::new(),
        ..change.clone()
    };
    let owner_named = format!("{} {ns}/{}", applied.resource.kind_name(), owner.name);
    let later = match replaced(observed, &change, &applied, commit, &w, &live) {
        Err(why) => {
            let step = undecided(&owner_named, &applied, commit, &w, &why);
            return Some(Followed::Undecided(step));
        }
        Ok(None) => return None,
        Ok(Some(later)) => later,
    };
    let at = later.read.committed;
    let (revision, by) = (applied.revision, short(&later.read.sha));
    let summary = format!(
        "{owner_named} applied {revision}, a later commit ({by}, {at}) than the change's {}: {}, and the live {} is that commit's",
        short(commit),
        later.what,
        named(&w)
    );
    Some(Followed::Superseded(Box::new(SupersededBy {
        summary,
        revision: Some(revision.to_string()),
        commit: Some(by),
        images: images(later.template),
        at: Some(at.to_string()),
        live: later_live(observed, &change, &w, later.template, &later.source, at),
        source_ref: Some(SourceRef::object(applied.resource, ns, &owner.name).field(applied.field)),
    })))
}

/// What to do about a workload whose template lacks the stated change after a later
/// revision was applied, when whether that revision replaced it cannot be told (`why`).
fn undecided(
    owner: &str,
    applied: &Applied<'_>,
    commit: &str,
    w: &Workload<'_>,
    why: &str,
) -> Suggestion {
    let (before, after) = (short(commit), short(&applied.commit));
    let path = applied.path.describe();
    let diff_path = if applied.path.path.is_empty() {
        "."
    } else {
        applied.path.path.as_str()
    };
    Suggestion::text(format!(
        "do not roll back on this: {owner} applied {}, a later commit than the change's {before}, and the template lacks the stated change, but whether that commit replaced it cannot be told ({why}); to decide, compare what {path} builds for {} at {before} and at {after} (`git diff {before} {after} -- {diff_path}` in --repo shows what changed), then verify the later commit on its own",
        applied.revision,
        named(w),
    ))
}

/// `Deployment apps/shop`.
fn named(w: &Workload<'_>) -> String {
    format!("{} {}/{}", w.kind.kind_name(), w.namespace, w.name)
}

/// A GitOps target, not live: superseded by its applied revision when that strictly descends
/// from the commit, its own revision evidence held, and every workload it leads to that is not
/// live was superseded (at least one by that revision).
pub(crate) fn owner(
    observed: &Observed,
    change: &Change,
    target: &Target,
    ns: &str,
    own: &[Finding],
    workloads: &[TargetReport],
) -> Option<SupersededBy> {
    let commit = change.commit.as_deref()?;
    let applied = applied(observed, target, ns)?;
    if !applied.strictly_after(observed, commit) {
        return None;
    }
    let revision_held = own
        .iter()
        .any(|f| f.evidence.check == Check::GitopsRevision && f.evidence.status == Status::Pass);
    let all_accounted = workloads
        .iter()
        .all(|w| matches!(w.verdict, Verdict::Live | Verdict::Superseded));
    let by_it: Vec<(&TargetReport, &SupersededBy)> = workloads
        .iter()
        .filter_map(|w| Some((w, w.superseded_by.as_ref()?)))
        .filter(|(_, by)| by.revision.as_deref() == Some(applied.revision))
        .collect();
    let (_, first) = by_it.first()?;
    if !revision_held || !all_accounted {
        return None;
    }
    let mut images: Vec<String> = by_it.iter().flat_map(|(_, by)| by.images.clone()).collect();
    images.sort();
    images.dedup();
    // Live when it is in each workload it replaced the change in; not when it is not in one.
    let lives: Vec<Option<bool>> = by_it.iter().map(|(_, by)| by.live).collect();
    let live = if lives.contains(&Some(false)) {
        Some(false)
    } else {
        lives.iter().all(|l| *l == Some(true)).then_some(true)
    };
    let names: Vec<String> = by_it
        .iter()
        .map(|(w, _)| format!("{} {}/{}", w.kind, w.namespace, w.name))
        .collect();
    Some(SupersededBy {
        summary: format!(
            "{} {ns}/{} applied {}, a later commit ({}, {}) than the change's {}, which replaced the stated change in {}",
            applied.resource.kind_name(),
            target.name,
            applied.revision,
            first.commit.as_deref().unwrap_or("?"),
            first.at.as_deref().unwrap_or("at an unknown time"),
            short(commit),
            names.join(", ")
        ),
        revision: Some(applied.revision.to_string()),
        commit: first.commit.clone(),
        images,
        at: first.at.clone(),
        live,
        source_ref: Some(
            SourceRef::object(applied.resource, ns, &target.name).field(applied.field),
        ),
    })
}

/// A workload target whose `-f` manifest was read as of `--commit`, not live: superseded by
/// the newest later commit that touched that file and whose manifest the live template matches,
/// when the commit's differs from it in the stated fields and no commit in between states the
/// change again.
pub(crate) fn declared(
    observed: &Observed,
    change: &Change,
    target: &Target,
    ns: &str,
    findings: &[Finding],
) -> Option<SupersededBy> {
    let commit = change.commit.as_deref()?;
    let stated = change.declared_for(target.kind, ns, &target.name)?;
    let path = stated.repo_path.as_ref()?;
    // `--expect` text is held to the template too; no manifest is compared for it here.
    if !lacks_stated_change(findings.iter().map(|f| &f.evidence)) || !change.manifest.is_empty() {
        return None;
    }
    let w = Workload::find(observed, target.kind, ns, &target.name)?;
    let live = serde_json::to_value(w.template).ok()?;
    if states(observed, change, Some(stated), &stated.template) != Some(true) {
        return None;
    }
    let Ok(later) = observed.history.later(path)? else {
        return None;
    };
    for sha in later {
        // Not read (the deadline) or unreadable: a newer commit may state the change again.
        let read = observed.history.manifests(sha, path)?.read.as_ref().ok()?;
        let files: Vec<&ManifestFile> = read.files.iter().collect();
        // The workload moved out of the file, or was deleted there: not about it.
        let Ok(template) = find_declared(&files, w.kind, ns, w.name, Namespace::AsDeclared) else {
            continue;
        };
        match states(observed, change, Some(stated), template)? {
            // Stated again later: still wanted, and not live.
            true => return None,
            false if first_difference(template, Some(&live), ".spec.template").is_none() => {
                let source = format!("{} at {}", path.describe(), short(&read.sha));
                let at = read.committed;
                let what = what_changed(commit, &read.sha, &stated.template, template);
                let revision = match w.current_revision(observed) {
                    Revision::Current(c) => Some(c.describe),
                    _ => None,
                };
                return Some(SupersededBy {
                    summary: format!(
                        "a later commit, {} ({at}), changed {}: {what}, and the live {} is that commit's",
                        short(&read.sha),
                        path.describe(),
                        named(&w)
                    ),
                    revision,
                    commit: Some(short(&read.sha)),
                    images: images(template),
                    at: Some(at.to_string()),
                    live: later_live(observed, change, &w, template, &source, at),
                    source_ref: Some(w.source().field(".spec.template")),
                });
            }
            // A later change the live template is not either.
            false => {}
        }
    }
    None
}

/// Whether the workload's template lacks the stated change: `spec_readback` failed.
fn lacks_stated_change<'e>(evidence: impl IntoIterator<Item = &'e crate::Evidence>) -> bool {
    evidence
        .into_iter()
        .any(|e| e.check == Check::SpecReadback && e.status == Status::Fail)
}

/// The later revision that replaced the stated change in `w`.
struct Later<'a> {
    read: &'a ReadManifests,
    template: &'a Value,
    /// What changed, in words: `…containers[app].image is …:1.2 there where 3f2c1ab stated …:1.1`.
    what: String,
    /// Where the later template was read, for the evidence of its own liveness.
    source: String,
}

/// Whether the applied revision replaced the stated change in `w`: `Ok(Some)` when the
/// commit's manifests state it, the revision's differ in a stated field and the live template
/// is the revision's; `Ok(None)` when they show otherwise (the revision states it too, the
/// commit never did, the live template is neither's); `Err(why)` when they cannot be compared.
fn replaced<'a>(
    observed: &'a Observed,
    change: &Change,
    applied: &Applied<'_>,
    commit: &str,
    w: &Workload<'_>,
    live: &Value,
) -> Result<Option<Later<'a>>, String> {
    if let Some(why) = &applied.built {
        return Err(why.clone());
    }
    let side = |at: &str| -> Result<(&'a ReadManifests, &'a Value), String> {
        let named = short(at);
        let where_ = applied.path.describe();
        let read = observed
            .history
            .manifests(at, &applied.path)
            .ok_or_else(|| {
                format!("the manifests under {where_} as of {named} were not read from --repo")
            })?
            .read
            .as_ref()
            .map_err(|e| {
                format!("the manifests under {where_} as of {named} cannot be read: {e}")
            })?;
        let files =
            applied_files(&read.files, &applied.path).map_err(|e| format!("as of {named}, {e}"))?;
        let template = find_declared(&files, w.kind, w.namespace, w.name, applied.namespace)
            .map_err(|e| format!("as of {named}, {where_} {e}"))?;
        Ok((read, template))
    };
    let (_, before) = side(commit)?;
    let (read, after) = side(&applied.commit)?;
    let declared = change.declared_for(w.kind, w.namespace, w.name);
    let cannot = |at: &str| format!("whether {at}'s manifest states the change cannot be read");
    let stated_before = states(observed, change, declared, before).ok_or_else(|| cannot(commit))?;
    let stated_after =
        states(observed, change, declared, after).ok_or_else(|| cannot(&applied.commit))?;
    if !stated_before || stated_after {
        return Ok(None);
    }
    if first_difference(after, Some(live), ".spec.template").is_some() {
        return Ok(None);
    }
    let what = what_changed(
        commit,
        &read.sha,
        declared.map_or(before, |d| &d.template),
        after,
    );
    Ok(Some(Later {
        read,
        template: after,
        what,
        source: format!("{} at {}", applied.path.describe(), short(&read.sha)),
    }))
}

/// Whether `template` (a pod template as a manifest writes it) carries what the change states:
/// every field `-f` declares, and each `--image`/`--expect-env`/`--expect-secret-ref`.
/// `Some(false)` when any stated field differs; `None` when it cannot be read.
fn states(
    observed: &Observed,
    change: &Change,
    declared: Option<&DeclaredTemplate>,
    template: &Value,
) -> Option<bool> {
    if declared.is_none() && !change.has_spec_expectations() {
        return None;
    }
    if let Some(d) = declared {
        if first_difference(&d.template, Some(template), ".spec.template").is_some() {
            return Some(false);
        }
    }
    if !change.has_spec_expectations() {
        return Some(true);
    }
    let spec: PodSpec = serde_json::from_value(template.get("spec")?.clone()).ok()?;
    let findings = expect::evaluate(
        &(&spec).into(),
        change,
        expect::Subject::Template { observed },
    );
    if findings.iter().any(|f| f.status == Status::Fail) {
        return Some(false);
    }
    findings
        .iter()
        .all(|f| f.status == Status::Pass)
        .then_some(true)
}

/// The first field that differs between what `commit` stated and what `later` states, in
/// words (values that look like credentials redacted).
fn what_changed(commit: &str, later: &str, stated: &Value, template: &Value) -> String {
    match first_difference(stated, Some(template), ".spec.template") {
        Some(d) => format!(
            "{} is {} there where {} stated {}",
            d.path,
            d.live,
            short(commit),
            d.declared
        ),
        None => format!(
            "{} states another template than {}",
            short(later),
            short(commit)
        ),
    }
}

/// Whether the later change is itself live in `w`: its template as the later commit declares
/// it, with the commit's time as the change time, judged by the same checks.
fn later_live(
    observed: &Observed,
    change: &Change,
    w: &Workload<'_>,
    template: &Value,
    source: &str,
    at: jiff::Timestamp,
) -> Option<bool> {
    let target = Target::new(w.kind, Some(w.namespace), w.name);
    let later = Change {
        since: Some(at),
        digests: change.digests,
        declared: vec![DeclaredTemplate {
            target: target.clone(),
            template: template.clone(),
            source: source.to_string(),
            given: String::new(),
            repo_path: None,
        }],
        ..Change::default()
    };
    let (findings, _) = workload_findings(observed, &later, &target, w.namespace, None, None);
    match verdict(&findings) {
        Verdict::Live => Some(true),
        Verdict::NotLive => Some(false),
        Verdict::Unproven | Verdict::Superseded => None,
    }
}

/// The files under `path` a controller applies as they are written: all of them, or those a
/// kustomization at the top of `path` lists when it does nothing but list them. Otherwise why
/// the raw files are not what is applied: kustomize transforms them, or Helm renders them.
fn applied_files<'a>(
    files: &'a [ManifestFile],
    path: &RepoPath,
) -> Result<Vec<&'a ManifestFile>, String> {
    let dir = if path.path.is_empty() {
        String::new()
    } else {
        format!("{}/", path.path)
    };
    let relative = |f: &'a ManifestFile| f.path.strip_prefix(&dir).unwrap_or(&f.path);
    let where_ = path.describe();
    if files.iter().any(|f| relative(f) == "Chart.yaml") {
        return Err(format!(
            "{where_} is a Helm chart: what is applied is rendered from its templates"
        ));
    }
    let kustomizations: Vec<&ManifestFile> =
        files.iter().filter(|f| f.is_kustomization()).collect();
    let k = match kustomizations.as_slice() {
        [] => return Ok(files.iter().collect()),
        [k] if !relative(k).contains('/') => *k,
        more => {
            let names: Vec<&str> = more.iter().map(|f| f.path.as_str()).collect();
            return Err(format!(
                "kustomize builds {where_} from {}, which the raw files do not show",
                names.join(", ")
            ));
        }
    };
    let transforms = |what: String| {
        Err(format!(
            "{} {what}: kustomize changes what is applied, which the raw files do not show",
            k.path
        ))
    };
    let [Value::Object(fields)] = k.documents.as_slice() else {
        return transforms("is not one plain document".into());
    };
    let extra: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|key| !matches!(*key, "apiVersion" | "kind" | "resources"))
        .collect();
    if !extra.is_empty() {
        return transforms(format!("sets {}", extra.join(", ")));
    }
    let mut listed = Vec::new();
    let resources = fields.get("resources").and_then(Value::as_array);
    for resource in resources.into_iter().flatten() {
        let Some(name) = resource.as_str() else {
            return transforms("lists a resource that is not a path".into());
        };
        let full = format!("{dir}{}", name.trim_start_matches("./"));
        match files.iter().find(|f| f.path == full && !f.is_kustomization()) {
            Some(f) => listed.push(f),
            None => return transforms(format!("lists {name}, which is no manifest file under {where_} (a directory, a base elsewhere, a URL)")),
        }
    }
    Ok(listed)
}

/// The pod template the files declare for the workload `kind` `ns`/`name`: exactly one
/// object of that kind and name applied in `ns`, as `namespace` places it.
fn find_declared<'a>(
    files: &[&'a ManifestFile],
    kind: TargetKind,
    ns: &str,
    name: &str,
    namespace: Namespace<'_>,
) -> Result<&'a Value, String> {
    let found: Vec<&Value> = files
        .iter()
        .flat_map(|f| f.documents.iter())
        .filter(|d| {
            let group = str_at(d, "/apiVersion").map(crate::api_group);
            str_at(d, "/kind").and_then(|k| TargetKind::workload_named(k, group)) == Some(kind)
                && str_at(d, "/metadata/name") == Some(name)
                && namespace
                    .of(str_at(d, "/metadata/namespace"))
                    .is_none_or(|n| n == ns)
        })
        .collect();
    let what = format!("{} {ns}/{name}", kind.kind_name());
    match found.as_slice() {
        [one] => one
            .pointer("/spec/template")
            .filter(|t| t.is_object())
            .ok_or_else(|| format!("declares {what} without a pod template")),
        [] => Err(format!("declares no {what} in its files as written")),
        more => Err(format!("declares {what} {} times", more.len())),
    }
}

/// The images a pod template's containers name.
fn images(template: &Value) -> Vec<String> {
    template
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| str_at(c, "/image"))
        .map(str::to_string)
        .collect()
}

/// A commit as reports name it: its first 7 hex digits.
fn short(commit: &str) -> String {
    commit.chars().take(7).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{CommitManifests, History};
    use crate::Containment;
    use serde_json::json;

    const B: &str = "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1";
    const C: &str = "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2";
    const D: &str = "d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3";
    const IMAGE: &str = "registry.example/acme/shop";

    fn at(time: &str) -> jiff::Timestamp {
        time.parse().expect("a time")
    }

    /// Deployment apps/shop as a manifest declares it, running `shop:TAG`.
    fn manifest(tag: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "shop", "namespace": "apps"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "shop"}},
                     "template": {"metadata": {"labels": {"app": "shop"}},
                                  "spec": {"containers": [{"name": "app", "image": format!("{IMAGE}:{tag}")}]}}}})
    }

    fn files(documents: Vec<(&str, Vec<Value>)>) -> Vec<ManifestFile> {
        documents
            .into_iter()
            .map(|(path, documents)| ManifestFile {
                path: path.to_string(),
                documents,
            })
            .collect()
    }

    fn read(
        commit: &str,
        path: &RepoPath,
        committed: &str,
        files: Vec<ManifestFile>,
    ) -> CommitManifests {
        CommitManifests {
            commit: commit.to_string(),
            path: path.clone(),
            read: Ok(ReadManifests {
                sha: commit.to_string(),
                committed: at(committed),
                files,
                bytes: 0,
            }),
        }
    }

    fn flux_path() -> RepoPath {
        RepoPath::new("./apps", true, true)
    }

    /// The cluster after Flux applied `revision` (Kustomization flux-system/apps, path
    /// `./apps`, with `spec` extras): Deployment apps/shop running `tag`, rolled out, its two
    /// pods started at 10:07, after B (10:00) and C (10:05).
    fn cluster(revision: &str, tag: &str, extra: Value) -> Observed {
        let template = |hash: Option<&str>| {
            let mut labels = json!({"app": "shop"});
            if let Some(h) = hash {
                labels["pod-template-hash"] = json!(h);
            }
            json!({"metadata": {"labels": labels},
                   "spec": {"containers": [{"name": "app", "image": format!("{IMAGE}:{tag}")}]}})
        };
        let mut objects = vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "shop", "namespace": "apps", "uid": "u", "generation": 2},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "shop"}}, "template": template(None)},
                "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}}),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": "shop-7d9c", "namespace": "apps", "creationTimestamp": "2026-07-12T10:06:30Z",
                             "labels": {"app": "shop", "pod-template-hash": "7d9c"},
                             "annotations": {"deployment.kubernetes.io/revision": "2"},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "shop", "uid": "u"}]},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "shop", "pod-template-hash": "7d9c"}},
                         "template": template(Some("7d9c"))},
                "status": {"replicas": 2}}),
        ];
        for i in 0..2 {
            objects.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("shop-7d9c-{i}"), "namespace": "apps",
                             "labels": {"app": "shop", "pod-template-hash": "7d9c"}},
                "spec": template(None)["spec"].clone(),
                "status": {"phase": "Running",
                           "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-07-12T10:07:05Z"}],
                           "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                                  "image": format!("{IMAGE}:{tag}"), "imageID": "",
                                                  "state": {"running": {"startedAt": "2026-07-12T10:07:00Z"}}}]}}));
        }
        let mut spec =
            json!({"path": "./apps", "sourceRef": {"kind": "GitRepository", "name": "apps"}});
        if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), extra) {
            spec.extend(extra);
        }
        let applied = format!("main@sha1:{revision}");
        objects.push(json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
            "spec": spec,
            "status": {"observedGeneration": 1, "lastAppliedRevision": applied, "lastAttemptedRevision": applied,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                                       "lastTransitionTime": "2026-07-12T10:06:20Z"}],
                       "inventory": {"entries": [{"id": "apps_shop_apps_Deployment", "v": "v1"}]}}}));
        let mut observed = Observed::default();
        for o in objects {
            observed.add_value(o, "test").expect("an object");
        }
        for ns in ["apps", "flux-system"] {
            for kind in [ResourceKind::Pod, ResourceKind::ReplicaSet] {
                observed.mark_complete(ns, kind);
            }
        }
        observed
    }

    /// `--commit B --image shop:TAG` (and `--since` B's time).
    fn change(tag: &str) -> Change {
        Change {
            since: Some(at("2026-07-12T10:00:00Z")),
            commit: Some(B[..7].to_string()),
            images: vec![crate::ExpectedImage::parse(&format!("{IMAGE}:{tag}")).expect("an image")],
            ..Change::default()
        }
    }

    fn judged(observed: &Observed, change: &Change, target: &str) -> crate::Report {
        let target = Target::parse(target).expect("a target");
        crate::judge(observed, change, &[target], "flux-system")
    }

    /// C is a descendant of B; B's and C's manifests under `apps/` as given.
    fn with_history(
        mut observed: Observed,
        b: Vec<ManifestFile>,
        c: Vec<ManifestFile>,
    ) -> Observed {
        observed.containment.insert(C.into(), Containment::Contains);
        observed.history = History {
            manifests: vec![
                read(&B[..7], &flux_path(), "2026-07-12T10:00:00Z", b),
                read(C, &flux_path(), "2026-07-12T10:05:00Z", c),
            ],
            later: Vec::new(),
        };
        observed
    }

    #[test]
    fn a_revision_that_changed_the_stated_image_supersedes_the_change() {
        let observed = with_history(
            cluster(C, "1.2", json!({})),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
            files(vec![("apps/shop.yaml", vec![manifest("1.2")])]),
        );
        assert_eq!(
            manifests_to_read(
                &observed,
                &change("1.1"),
                &[Target::parse("kustomization/apps").expect("t")],
                "flux-system"
            ),
            [
                (B[..7].to_string(), flux_path()),
                (C.to_string(), flux_path())
            ]
        );
        let report = judged(&observed, &change("1.1"), "kustomization/apps");
        assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
        for t in &report.targets {
            let by = t.superseded_by.as_ref().expect("what superseded it");
            assert_eq!(by.commit.as_deref(), Some(&C[..7]));
            assert_eq!(
                by.revision.as_deref(),
                Some(format!("main@sha1:{C}").as_str())
            );
            assert_eq!(by.images, [format!("{IMAGE}:1.2")]);
            assert_eq!(by.at.as_deref(), Some("2026-07-12T10:05:00Z"));
            assert_eq!(by.live, Some(true), "its pods started after C");
        }
        let shop = &report.targets[1];
        assert!(
            shop.superseded_by.as_ref().is_some_and(|b| b.summary.contains(
                &format!(".spec.template.spec.containers[app].image is {IMAGE}:1.2 there where {} stated {IMAGE}:1.1", &B[..7])
            )),
            "{shop:#?}"
        );
    }

    /// Only the stated fields count: a revision that changed something else, while the
    /// cluster runs what neither states, leaves the verdict as the checks made it.
    #[test]
    fn a_revision_that_still_states_the_change_or_is_not_what_runs_is_no_supersession() {
        let still = with_history(
            cluster(C, "1.0", json!({})),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
        );
        assert_eq!(
            judged(&still, &change("1.1"), "kustomization/apps").verdict,
            Verdict::NotLive
        );
        let neither = with_history(
            cluster(C, "1.0", json!({})),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
            files(vec![("apps/shop.yaml", vec![manifest("1.2")])]),
        );
        assert_eq!(
            judged(&neither, &change("1.1"), "kustomization/apps").verdict,
            Verdict::NotLive
        );
        // The user's image is not what B states either: B's change is not that.
        let never = with_history(
            cluster(C, "1.2", json!({})),
            files(vec![("apps/shop.yaml", vec![manifest("1.0")])]),
            files(vec![("apps/shop.yaml", vec![manifest("1.2")])]),
        );
        assert_eq!(
            judged(&never, &change("1.1"), "kustomization/apps").verdict,
            Verdict::NotLive
        );
    }

    /// The commit itself applied, or a revision git could not place: never superseded.
    #[test]
    fn only_a_strict_descendant_supersedes() {
        let mut itself = cluster(B, "1.2", json!({}));
        itself.history = History {
            manifests: vec![read(
                &B[..7],
                &flux_path(),
                "2026-07-12T10:00:00Z",
                files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
            )],
            later: Vec::new(),
        };
        assert_eq!(
            judged(&itself, &change("1.1"), "kustomization/apps").verdict,
            Verdict::NotLive
        );
        let mut unplaced = with_history(
            cluster(C, "1.2", json!({})),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
            files(vec![("apps/shop.yaml", vec![manifest("1.2")])]),
        );
        unplaced.containment.insert(
            C.into(),
            Containment::Unknown {
                why: "shallow".into(),
                fix: "git fetch --unshallow".into(),
            },
        );
        let report = judged(&unplaced, &change("1.1"), "kustomization/apps");
        assert!(
            report.targets.iter().all(|t| t.superseded_by.is_none()),
            "{report:#?}"
        );
        assert_ne!(report.verdict, Verdict::Superseded);
        assert!(manifests_to_read(
            &unplaced,
            &change("1.1"),
            &[Target::parse("kustomization/apps").expect("t")],
            "flux-system"
        )
        .is_empty());
    }

    /// A later revision applied, the template without the stated image, and nothing that can
    /// compare the commits' manifests (kustomize sets the image; the manifests were not read):
    /// unproven with what would decide, not the not_live that would roll the revision back.
    #[test]
    fn a_later_revision_whose_manifests_cannot_be_compared_is_unproven() {
        let built = with_history(
            cluster(
                C,
                "1.2",
                json!({"images": [{"name": IMAGE, "newTag": "1.2"}]}),
            ),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
            files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
        );
        let unread = {
            let mut o = cluster(C, "1.2", json!({}));
            o.containment.insert(C.into(), Containment::Contains);
            o
        };
        let overlay = with_history(
            cluster(C, "1.2", json!({})),
            files(vec![
                ("apps/shop.yaml", vec![manifest("latest")]),
                (
                    "apps/kustomization.yaml",
                    vec![
                        json!({"resources": ["shop.yaml"], "images": [{"name": IMAGE, "newTag": "1.1"}]}),
                    ],
                ),
            ]),
            files(vec![
                ("apps/shop.yaml", vec![manifest("latest")]),
                (
                    "apps/kustomization.yaml",
                    vec![
                        json!({"resources": ["shop.yaml"], "images": [{"name": IMAGE, "newTag": "1.2"}]}),
                    ],
                ),
            ]),
        );
        for (observed, why) in [
            (
                built,
                "its spec.images changes what kustomize-controller applies",
            ),
            (unread, "were not read from --repo"),
            (overlay, "apps/kustomization.yaml sets images"),
        ] {
            let report = judged(&observed, &change("1.1"), "kustomization/apps");
            assert_eq!(report.verdict, Verdict::Unproven, "{why}: {report:#?}");
            let shop = &report.targets[1];
            assert_eq!(shop.verdict, Verdict::Unproven);
            let step = shop
                .next_step
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                step.contains("do not roll back") && step.contains(why),
                "{step}"
            );
        }
    }

    /// An Argo CD Application synced to C, from a plain directory: as a Kustomization; from
    /// a Helm source: undecided.
    #[test]
    fn an_application_synced_to_a_later_commit() {
        let app = |source: Value| {
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "shop", "namespace": "argocd", "generation": 4},
                "spec": {"source": source, "destination": {"namespace": "apps", "server": "https://kubernetes.default.svc"}},
                "status": {"sync": {"status": "Synced", "revision": C},
                           "health": {"status": "Healthy"},
                           "operationState": {"phase": "Succeeded", "finishedAt": "2026-07-12T10:06:20Z",
                                              "syncResult": {"revision": C}},
                           "resources": [{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "apps",
                                          "name": "shop", "status": "Synced"}]}})
        };
        let path = RepoPath::new("apps", false, true);
        for (source, verdict) in [
            (
                json!({"repoURL": "https://git.example/acme/apps", "path": "apps", "targetRevision": "main"}),
                Verdict::Superseded,
            ),
            (
                json!({"repoURL": "https://git.example/acme/apps", "path": "apps", "targetRevision": "main", "helm": {"valueFiles": ["values.yaml"]}}),
                Verdict::Unproven,
            ),
        ] {
            let mut observed = cluster(C, "1.2", json!({}));
            observed
                .add_value(app(source), "test")
                .expect("an Application");
            observed.containment.insert(C.into(), Containment::Contains);
            observed.history.manifests = vec![
                read(
                    &B[..7],
                    &path,
                    "2026-07-12T10:00:00Z",
                    files(vec![("apps/shop.yaml", vec![manifest("1.1")])]),
                ),
                read(
                    C,
                    &path,
                    "2026-07-12T10:05:00Z",
                    files(vec![("apps/shop.yaml", vec![manifest("1.2")])]),
                ),
            ];
            let target = Target::parse("application/shop").expect("a target");
            let report = crate::judge(&observed, &change("1.1"), &[target], "argocd");
            assert_eq!(report.verdict, verdict, "{report:#?}");
        }
    }

    /// `-f` read as of B: the newest later commit that touched the file and that the live
    /// template is; none when a later commit states the change again, or one newer than the
    /// match could not be read.
    #[test]
    fn a_manifest_a_later_commit_replaced() {
        let path = RepoPath::new("apps/shop.yaml", false, false);
        let declared = |tag: &str| crate::DeclaredTemplate {
            target: Target::new(TargetKind::Deployment, Some("apps"), "shop"),
            template: manifest(tag)["spec"]["template"].clone(),
            source: format!("apps/shop.yaml at {}", &B[..7]),
            given: "apps/shop.yaml".into(),
            repo_path: Some(path.clone()),
        };
        let change = Change {
            since: Some(at("2026-07-12T10:00:00Z")),
            commit: Some(B[..7].to_string()),
            declared: vec![declared("1.1")],
            ..Change::default()
        };
        let at_commit = |sha: &str, time: &str, tag: &str| {
            read(
                sha,
                &path,
                time,
                files(vec![("apps/shop.yaml", vec![manifest(tag)])]),
            )
        };
        let verdict = |later: Vec<&str>, manifests: Vec<CommitManifests>| {
            let mut observed = cluster(C, "1.2", json!({}));
            observed.history = History {
                manifests,
                later: vec![(
                    path.clone(),
                    Ok(later.into_iter().map(str::to_string).collect()),
                )],
            };
            let report = crate::judge(
                &observed,
                &change,
                &[Target::new(TargetKind::Deployment, Some("apps"), "shop")],
                "apps",
            );
            (report.verdict, report.targets[0].superseded_by.clone())
        };
        let (v, by) = verdict(
            vec![D, C],
            vec![
                at_commit(D, "2026-07-12T10:06:00Z", "1.3"),
                at_commit(C, "2026-07-12T10:05:00Z", "1.2"),
            ],
        );
        assert_eq!(v, Verdict::Superseded);
        let by = by.expect("what superseded it");
        assert_eq!(
            (by.commit.as_deref(), by.at.as_deref()),
            (Some(&C[..7]), Some("2026-07-12T10:05:00Z"))
        );
        assert_eq!(
            by.revision.as_deref(),
            Some("ReplicaSet shop-7d9c (revision 2)")
        );
        assert_eq!(by.live, Some(true));
        // D states 1.1 again: still wanted, and not what runs.
        let (v, _) = verdict(
            vec![D, C],
            vec![
                at_commit(D, "2026-07-12T10:06:00Z", "1.1"),
                at_commit(C, "2026-07-12T10:05:00Z", "1.2"),
            ],
        );
        assert_eq!(v, Verdict::NotLive);
        // D was not read: whether it states the change again is unknown.
        let (v, _) = verdict(
            vec![D, C],
            vec![at_commit(C, "2026-07-12T10:05:00Z", "1.2")],
        );
        assert_eq!(v, Verdict::NotLive);
        // No later commit touched the file.
        let (v, _) = verdict(Vec::new(), Vec::new());
        assert_eq!(v, Verdict::NotLive);
    }

    /// Flux's `targetNamespace` puts every object there, whatever namespace it names; Argo
    /// CD's destination only those that name none.
    #[test]
    fn where_a_declared_workload_is_applied() {
        let mut elsewhere = manifest("1.1");
        elsewhere["metadata"]["namespace"] = json!("staging");
        let mut unnamed = manifest("1.1");
        if let Some(meta) = unnamed["metadata"].as_object_mut() {
            meta.remove("namespace");
        }
        let files = |doc: &Value| files(vec![("apps/shop.yaml", vec![doc.clone()])]);
        let found = |doc: &Value, namespace: Namespace<'_>| {
            let files = files(doc);
            let refs: Vec<&ManifestFile> = files.iter().collect();
            find_declared(&refs, TargetKind::Deployment, "apps", "shop", namespace).is_ok()
        };
        assert!(found(&elsewhere, Namespace::Override("apps")));
        assert!(!found(&elsewhere, Namespace::Default("apps")));
        assert!(!found(&elsewhere, Namespace::AsDeclared));
        assert!(found(&unnamed, Namespace::Default("apps")));
        assert!(!found(&unnamed, Namespace::Default("staging")));
        assert!(found(&unnamed, Namespace::AsDeclared));
    }

    #[test]
    fn what_a_kustomization_applies_of_the_raw_files() {
        let path = flux_path();
        let shop = ("apps/shop.yaml", vec![manifest("1.1")]);
        let listing = |resources: Value, more: Value| {
            let mut k = json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources});
            if let (Some(k), Value::Object(more)) = (k.as_object_mut(), more) {
                k.extend(more);
            }
            ("apps/kustomization.yaml", vec![k])
        };
        let plain = files(vec![
            shop.clone(),
            ("apps/other.yaml", vec![manifest("9")]),
            listing(json!(["./shop.yaml"]), json!({})),
        ]);
        let applied = applied_files(&plain, &path).expect("a plain list of files");
        assert_eq!(
            applied.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["apps/shop.yaml"]
        );
        let none = files(vec![shop.clone(), ("apps/sub/x.yaml", vec![manifest("2")])]);
        assert_eq!(applied_files(&none, &path).expect("all").len(), 2);
        for (case, want) in [
            (
                files(vec![shop.clone(), listing(json!(["../base"]), json!({}))]),
                "lists ../base",
            ),
            (
                files(vec![
                    shop.clone(),
                    listing(json!(["shop.yaml"]), json!({"namePrefix": "x-"})),
                ]),
                "sets namePrefix",
            ),
            (
                files(vec![
                    shop.clone(),
                    (
                        "apps/sub/kustomization.yaml",
                        vec![json!({"resources": []})],
                    ),
                ]),
                "kustomize builds apps",
            ),
            (
                files(vec![
                    shop.clone(),
                    ("apps/Chart.yaml", vec![json!({"name": "shop"})]),
                ]),
                "Helm chart",
            ),
        ] {
            let err = applied_files(&case, &path).expect_err(want);
            assert!(err.contains(want), "{err}");
        }
    }
}
