//! The deploy pipeline's way back (seed 001): `snapshot` before the apply, `verify --snapshot`
//! in a job of its own whatever happened to the apply, `rollback` of exactly what failed.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::kind::Restore;
use liveproof_evidence::snapshot::{
    same_commit, workload_states, ReleaseState, Scope, Snapshot, SNAPSHOT_SCHEMA,
};
use liveproof_evidence::{
    Change, Check, Report, SnapshotSummary, Status, Target, TargetKind, Verdict,
};
use liveproof_gather::{Cluster, ClusterOptions};
use liveproof_report::{RollbackEnd, RollbackEvent, RollbackPrinter, RollbackStep, SnapshotTaken};

use crate::cli::{RollbackArgs, SnapshotArgs};
use crate::config::{self, Source, VerifyConfig};
use crate::deadline::Deadline;
use crate::output::TMP_MARK;

const FILE: &str = "snapshot.json";

/// What to check when nothing changed since the snapshot (verify --snapshot and rollback).
const NOTHING_CHANGED: &str = "nothing in the snapshot's scope changed since it was taken, so nothing shows this deploy happened: check that the apply ran, that a GitOps controller has reconciled the commit (then verify again with --wait), that the snapshot was taken before the apply (a retried snapshot job after the apply records the new state), and that the scope (-n, targets, -f) covers what the commit changes";

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot dir {}: cannot write there: {source}", dir.display())]
    Unwritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no snapshot at {}: {source}", path.display())]
    Missing {
        path: PathBuf,
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a liveproof snapshot: {reason}", path.display())]
    Corrupt { path: PathBuf, reason: String },
    #[error("{source}")]
    NotRegular {
        #[from]
        source: liveproof_gather::files::NotRegular,
    },
    #[error("refusing the snapshot in {}: it was taken for commit {found}, not {wanted}", dir.display())]
    OtherCommit {
        dir: PathBuf,
        found: String,
        wanted: String,
    },
    #[error("--commit `{0}` is not a commit: give 7 to 40 hex digits")]
    BadCommit(String),
    #[error("{}: a symbolic link where liveproof keeps a commit's snapshot: a snapshot is never written or read through one", path.display())]
    Linked { path: PathBuf },
}

impl liveproof_evidence::hint::Hinted for SnapshotError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            SnapshotError::Unwritable { .. } => Some(Cow::Borrowed("the apply must not start without a way back; give a writable --dir with free space")),
            SnapshotError::Missing { dir, .. } => Some(Cow::Owned(format!("run `liveproof snapshot --dir {} --commit SHA` before the apply", dir.display()))),
            SnapshotError::NotRegular { .. } => Some(Cow::Borrowed("a snapshot is a regular file liveproof wrote; take a new one with `liveproof snapshot`")),
            SnapshotError::OtherCommit { .. } => Some(Cow::Borrowed("a snapshot from another run must never decide what to verify or roll back; the apply job must publish its own snapshot first")),
            SnapshotError::Linked { .. } => Some(Cow::Borrowed("liveproof made no such link: remove it (and find out who made it), or give --dir a folder only the pipeline writes to")),
            SnapshotError::Corrupt { .. }
            | SnapshotError::BadCommit(..) => None,
        }
    }
}

fn check_commit(commit: &str) -> Result<(), SnapshotError> {
    if liveproof_evidence::is_commit_sha(commit) {
        Ok(())
    } else {
        Err(SnapshotError::BadCommit(commit.to_string()))
    }
}

/// Fails when `dir` cannot take a snapshot: created if missing, then a probe the size of a
/// large snapshot written, synced and removed. The probe's name is random and created
/// exclusively: a link planted under a predictable name once made it overwrite another file.
fn probe(dir: &Path) -> Result<(), SnapshotError> {
    let fail = |source| SnapshotError::Unwritable {
        dir: dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(dir).map_err(fail)?;
    let mut f = tempfile::Builder::new()
        .prefix(&format!("{PROBE_MARK}{}.", std::process::id()))
        .tempfile_in(dir)
        .map_err(fail)?;
    // Removed when dropped, written or not.
    f.write_all(&vec![0u8; 1 << 20])
        .and_then(|()| f.as_file().sync_all())
        .map_err(fail)
}

/// Probes carry `.liveproof-probe-PID.`, temp files `.tmp-PID.` ([`TMP_MARK`]), so a later
/// run can tell which ones a killed run left behind.
const PROBE_MARK: &str = ".liveproof-probe-";

/// Removes what a killed snapshot run left in `dir` and its commit folders: temp files and
/// probes of processes that no longer run (a running one may be mid-write: left alone).
fn clean_leftovers(dir: &Path) {
    let is_leftover = |name: &str| {
        let pid = name
            .rsplit_once(TMP_MARK)
            .map(|(_, p)| p)
            .or_else(|| name.strip_prefix(PROBE_MARK));
        // `PID.RANDOM` (and `PID` alone, as older runs named them).
        let pid = pid.map(|p| p.split('.').next().unwrap_or(p));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            return false;
        };
        name.starts_with('.') && !Path::new(&format!("/proc/{pid}")).exists()
    };
    let mut folders = vec![dir.to_path_buf()];
    if let Ok(entries) = fs::read_dir(dir) {
        folders.extend(
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path()),
        );
    }
    for folder in folders {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_leftover(&name) {
                match fs::remove_file(entry.path()) {
                    Ok(()) => {
                        tracing::info!("removed {} left by a killed run", entry.path().display())
                    }
                    Err(e) => tracing::warn!("cannot remove {}: {e}", entry.path().display()),
                }
            }
        }
    }
}

/// Points `dir/current` at `dir/<name>`: a symlink made beside it under a random name, then
/// renamed over it.
fn publish_current(dir: &Path, name: &str) -> std::io::Result<()> {
    let link = tempfile::Builder::new()
        .prefix(&format!(".current{TMP_MARK}{}.", std::process::id()))
        .make_in(dir, |tmp| std::os::unix::fs::symlink(name, tmp))?;
    link.persist(dir.join("current")).map_err(|e| e.error)?;
    File::open(dir)?.sync_all()
}

/// A readable snapshot of `commit` already in `dir` (one that cannot be read is no way back,
/// and is replaced). A link at the commit's folder is refused: a snapshot kept through it
/// would be another folder's.
fn existing(dir: &Path, commit: &str) -> Result<Option<Snapshot>, SnapshotError> {
    refuse_link(&dir.join(commit))?;
    let path = dir.join(commit).join(FILE);
    let Ok(text) = liveproof_gather::files::read_to_string(&path) else {
        return Ok(None);
    };
    Ok(match serde_json::from_str::<Snapshot>(&text) {
        Ok(s) if s.schema == SNAPSHOT_SCHEMA && same_commit(&s.commit, commit) => Some(s),
        _ => {
            tracing::warn!(
                "{}: not a readable snapshot; taking a new one",
                path.display()
            );
            None
        }
    })
}

/// Fails when `path` is a symbolic link.
fn refuse_link(path: &Path) -> Result<(), SnapshotError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(SnapshotError::Linked {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// Writes `bytes` as `dir/<name>/snapshot.json`, readable by its owner only, never through a
/// link: the commit's folder is made and opened under `dir`'s descriptor with `O_NOFOLLOW`
/// (a link planted there once had the snapshot replace another folder's), and the file is
/// written under a random name created exclusively in that folder's descriptor, synced, and
/// renamed over `snapshot.json` there (a link at that name is replaced, not followed).
fn write_commit_snapshot(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), SnapshotError> {
    use rustix::fs::{Mode, OFlags};
    let folder_path = dir.join(name);
    let unwritable = |source: std::io::Error| SnapshotError::Unwritable {
        dir: dir.to_path_buf(),
        source,
    };
    let directory = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
    // `dir` is the user's: followed, as any path they give.
    let root = rustix::fs::open(dir, directory, Mode::empty()).map_err(|e| unwritable(e.into()))?;
    match rustix::fs::mkdirat(&root, name, Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(unwritable(e.into())),
    }
    let folder = match rustix::fs::openat(&root, name, directory | OFlags::NOFOLLOW, Mode::empty())
    {
        Ok(folder) => folder,
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
            refuse_link(&folder_path)?;
            return Err(unwritable(std::io::Error::other(format!(
                "{} is not a directory",
                folder_path.display()
            ))));
        }
        Err(e) => return Err(unwritable(e.into())),
    };
    let (tmp, file) = exclusive_file(&folder).map_err(unwritable)?;
    let written = (|| {
        let mut file = File::from(file);
        file.write_all(bytes)?;
        file.sync_all()?;
        rustix::fs::renameat(&folder, &tmp, &folder, FILE)?;
        rustix::fs::fsync(&folder)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&folder, &tmp, rustix::fs::AtFlags::empty());
    }
    written.map_err(unwritable)
}

/// A new file in the folder `folder`, owner-only, under a random name created exclusively
/// (`.snapshot.json.tmp-PID.RANDOM`, so [`clean_leftovers`] knows it): its name and itself.
fn exclusive_file(folder: &rustix::fd::OwnedFd) -> std::io::Result<(String, rustix::fd::OwnedFd)> {
    use rustix::fs::{Mode, OFlags};
    use std::hash::{BuildHasher as _, Hasher as _};
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for attempt in 0u32..100 {
        let mut random = std::collections::hash_map::RandomState::new().build_hasher();
        random.write_u32(attempt);
        let name = format!(
            ".{FILE}{TMP_MARK}{}.{:016x}",
            std::process::id(),
            random.finish()
        );
        match rustix::fs::openat(folder, &name, flags, Mode::from_raw_mode(0o600)) {
            Ok(file) => return Ok((name, file)),
            Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(std::io::Error::other("no free temporary name"))
}

pub fn load(dir: &Path, commit: &str) -> Result<Snapshot, SnapshotError> {
    check_commit(commit)?;
    let path = dir.join("current").join(FILE);
    // A FIFO planted as the snapshot would block forever: regular files only.
    let text = liveproof_gather::files::read_to_string(&path).map_err(|e| match e {
        liveproof_gather::files::OpenError::NotRegular(source) => SnapshotError::from(source),
        liveproof_gather::files::OpenError::Io { source, .. } => SnapshotError::Missing {
            path: path.clone(),
            dir: dir.to_path_buf(),
            source,
        },
    })?;
    // The file holds pod templates whole (env values among them): the reason quotes none.
    let snapshot: Snapshot = serde_json::from_str(&text).map_err(|e| SnapshotError::Corrupt {
        path: path.clone(),
        reason: liveproof_redacted::parse::json_problem(&e),
    })?;
    if snapshot.schema != SNAPSHOT_SCHEMA {
        return Err(SnapshotError::Corrupt {
            path,
            reason: format!("schema `{}`, expected `{SNAPSHOT_SCHEMA}`", snapshot.schema),
        });
    }
    if !same_commit(&snapshot.commit, commit) {
        return Err(SnapshotError::OtherCommit {
            dir: dir.to_path_buf(),
            found: snapshot.commit,
            wanted: commit.to_string(),
        });
    }
    Ok(snapshot)
}

/// The workloads in scope now, and the newest revision of each Helm release there.
async fn current_state(
    cluster: &Cluster,
    scope: &Scope,
) -> anyhow::Result<(Vec<Target>, Vec<ReleaseState>)> {
    let mut targets = Vec::new();
    let mut releases = Vec::new();
    match &scope.targets {
        Some(given) => {
            for t in given {
                targets.push(Target::parse(t)?);
            }
            for ns in &scope.namespaces {
                releases.extend(cluster.release_revisions(Some(ns)).await?);
            }
        }
        None if scope.all_namespaces => {
            targets = cluster.workloads_in(None, None).await?;
            releases = cluster.release_revisions(None).await?;
        }
        None => {
            for ns in &scope.namespaces {
                targets.extend(cluster.workloads_in(Some(ns), None).await?);
                releases.extend(cluster.release_revisions(Some(ns)).await?);
            }
        }
    }
    Ok((targets, releases))
}

/// `liveproof snapshot`: what it recorded (or kept), for the CLI to print.
pub async fn take(args: &SnapshotArgs) -> anyhow::Result<SnapshotTaken> {
    check_commit(&args.commit)?;
    // Up front, before any request: no apply without a way back.
    probe(&args.dir)?;
    clean_leftovers(&args.dir);
    let name = args.commit.to_ascii_lowercase();
    // A link at the commit's folder is refused whether a snapshot there would be kept or
    // replaced.
    refuse_link(&args.dir.join(&name))?;
    if !args.overwrite {
        if let Some(kept) = existing(&args.dir, &name)? {
            // A retried job runs after the apply: its state is not the way back.
            publish_current(&args.dir, &name).map_err(|source| SnapshotError::Unwritable {
                dir: args.dir.clone(),
                source,
            })?;
            return Ok(SnapshotTaken::Kept {
                commit: name,
                taken_at: kept.taken_at.to_string(),
                current: args.dir.join("current"),
            });
        }
    }
    let cluster = Cluster::connect(&ClusterOptions::try_from(&args.cluster)?).await?;
    let ns = cluster.default_namespace().to_string();
    let given: Option<Vec<Target>> = if let Some(path) = &args.manifests {
        Some(liveproof_gather::offline::declared_workloads_off_runtime(path, &ns).await?)
    } else if !args.targets.is_empty() {
        // As verify takes them: kubectl's forms (`deploy a b`, `deploy/a,deploy/b`).
        Some(
            Target::parse_all(&args.targets)?
                .into_iter()
                .map(|t| Target::new(t.kind, Some(t.namespace_or(&ns)), &t.name))
                .collect(),
        )
    } else {
        None
    };
    let mut namespaces: Vec<String> = match &given {
        Some(targets) => targets.iter().filter_map(|t| t.namespace.clone()).collect(),
        None if args.cluster.all_namespaces => Vec::new(),
        None => vec![ns.clone()],
    };
    namespaces.sort();
    namespaces.dedup();
    let scope = Scope {
        namespaces,
        all_namespaces: given.is_none() && args.cluster.all_namespaces,
        targets: given
            .as_ref()
            .map(|ts| ts.iter().map(Target::to_string).collect()),
    };
    // To the millisecond: it becomes the change time, and a pod that starts in the same
    // second as the snapshot is then ordered by what its template shows (crate::order),
    // not refused. Truncated, never rounded up past an instant that came after it.
    let taken_at = Timestamp::from_millisecond(Timestamp::now().as_millisecond())?;
    let (targets, releases) = current_state(&cluster, &scope).await?;
    // A namespace in scope where nothing was found may not exist at all (`-n aps`): asked
    // only then, so a snapshot that found something costs no request more.
    let empty: Vec<Target> = scope
        .namespaces
        .iter()
        .filter(|ns| {
            !targets.iter().any(|t| t.namespace.as_ref() == Some(*ns))
                && !releases.iter().any(|r| &r.namespace == *ns)
        })
        .map(|ns| Target::new(TargetKind::Deployment, Some(ns), ""))
        .collect();
    if !empty.is_empty() {
        cluster
            .check_namespaces(&liveproof_evidence::Observed::default(), &empty)
            .await?;
    }
    let observed = cluster.gather(&targets, false).await?;
    let snapshot = Snapshot {
        schema: SNAPSHOT_SCHEMA.to_string(),
        commit: args.commit.to_ascii_lowercase(),
        taken_at,
        scope,
        workloads: workload_states(&observed),
        releases,
    };
    write_commit_snapshot(
        &args.dir,
        &name,
        &serde_json::to_vec_pretty(&snapshot).unwrap_or_default(),
    )?;
    publish_current(&args.dir, &name).map_err(|source| SnapshotError::Unwritable {
        dir: args.dir.clone(),
        source,
    })?;
    Ok(SnapshotTaken::Taken {
        commit: snapshot.commit,
        workloads: snapshot.workloads.len(),
        releases: snapshot.releases.len(),
        current: args.dir.join("current"),
    })
}

/// What changed since the snapshot, as verify targets: the changed workloads and a `release/`
/// target per release whose revision moved.
async fn changed_targets(
    cluster: &Cluster,
    snapshot: &Snapshot,
) -> anyhow::Result<(Vec<Target>, SnapshotSummary)> {
    let (targets, releases) = current_state(cluster, &snapshot.scope).await?;
    let observed = cluster.gather(&targets, false).await?;
    let now = workload_states(&observed);
    let changes = snapshot.changes(&now, &releases);
    let mut verify: Vec<Target> = changes
        .releases
        .iter()
        .map(|(ns, name)| Target::new(TargetKind::Release, Some(ns), name))
        .collect();
    verify.extend(changes.workloads.iter().cloned());
    let summary = SnapshotSummary {
        commit: snapshot.commit.clone(),
        taken_at: snapshot.taken_at.to_string(),
        changed: verify.iter().map(Target::to_string).collect(),
        untouched: changes.untouched.iter().map(Target::to_string).collect(),
        removed: changes.removed.iter().map(Target::to_string).collect(),
    };
    Ok((verify, summary))
}

/// Each workload's template as the snapshot recorded it: a template that differs now shows
/// the change (what orders a pod that started in the snapshot's own second).
fn prior_templates(snapshot: &Snapshot) -> Vec<(Target, String)> {
    snapshot
        .workloads
        .iter()
        .filter_map(|w| Some((w.target()?, w.template_hash.clone())))
        .collect()
}

/// A workload reached through a changed release is reported once, under the release.
fn dedupe(report: &mut Report) {
    let via: Vec<(liveproof_evidence::ReportKind, String, String)> = report
        .targets
        .iter()
        .filter(|t| t.via.is_some())
        .map(|t| (t.kind, t.namespace.clone(), t.name.clone()))
        .collect();
    report.targets.retain(|t| {
        t.via.is_some() || !via.contains(&(t.kind, t.namespace.clone(), t.name.clone()))
    });
}

/// `verify --snapshot DIR --commit SHA`: the report over what changed.
pub async fn verify(config: &VerifyConfig, dir: &Path) -> anyhow::Result<Report> {
    let commit = config.change.commit.clone().unwrap_or_default();
    let snapshot = load(dir, &commit)?;
    let Source::Live(options) = &config.source else {
        anyhow::bail!("--snapshot verifies a cluster, not a --from dump");
    };
    let cluster = crate::verify_run::connect(options, config).await?;
    let (targets, summary) = changed_targets(&cluster, &snapshot).await?;
    let mut report = if targets.is_empty() {
        Report::new(Default::default(), Vec::new())
    } else {
        let derived = VerifyConfig {
            targets,
            change: Change {
                since: Some(snapshot.taken_at),
                // Each workload verified here changed since the snapshot: that states the change.
                stated_by: Some(format!("the snapshot of {}", snapshot.commit)),
                prior_templates: prior_templates(&snapshot),
                ..config.change.clone()
            },
            since_origin: Some("the snapshot".into()),
            ..config.clone()
        };
        crate::verifier::produce(&derived).await?
    };
    dedupe(&mut report);
    if report.targets.is_empty() {
        // Nothing changed since the snapshot: nothing shows this deploy happened, so nothing
        // can be live (zero targets never are).
        report.verdict = Verdict::Unproven;
        report.next_step = Some(NOTHING_CHANGED.into());
    } else {
        report.verdict = report
            .targets
            .iter()
            .map(|t| t.verdict)
            .min()
            .unwrap_or(Verdict::Unproven);
    }
    report.change.since = Some(snapshot.taken_at.to_string());
    report.change.commit = Some(snapshot.commit.clone());
    report.snapshot = Some(summary);
    crate::verifier::stamp(&mut report, crate::verifier::cluster_ref(&cluster));
    Ok(report)
}

/// `liveproof rollback`: re-verifies what changed since the snapshot, restores the snapshot's
/// pod template of each workload that failed (Helm releases are left to Helm, with the command),
/// and waits until the restored workloads serve it. Each step is recorded with `printer` as it
/// is taken (and so said at once); the exit code is the [`Rollback`](liveproof_report::Rollback)'s.
pub async fn rollback(
    args: &RollbackArgs,
    printer: &mut RollbackPrinter<'_>,
) -> anyhow::Result<()> {
    let snapshot = load(&args.snapshot, &args.commit)?;
    // --timeout bounds the whole rollback, the first reads included.
    let deadline = Deadline::starting_now(config::parse_duration(&args.timeout)?);
    let options = ClusterOptions::try_from(&args.cluster)?;
    let cluster = Cluster::connect(&options).await?;
    let ns = cluster.default_namespace().to_string();
    let server = cluster.server().clone();
    let (targets, summary) = deadline
        .bound(
            &server,
            "reading what changed since the snapshot",
            changed_targets(&cluster, &snapshot),
        )
        .await?;
    if summary.changed.is_empty() {
        // Nothing to roll back, and nothing proves the deploy happened either.
        return Ok(
            printer.record(RollbackEvent::End(RollbackEnd::NothingChanged {
                commit: summary.commit,
                why: NOTHING_CHANGED.to_string(),
            }))?,
        );
    }
    printer.record(RollbackEvent::Changed {
        commit: summary.commit.clone(),
        changed: summary.changed.clone(),
    })?;
    let base = VerifyConfig {
        namespace: Some(ns),
        since_origin: Some("the snapshot".into()),
        ..VerifyConfig::new(
            targets,
            Change {
                since: Some(snapshot.taken_at),
                commit: Some(snapshot.commit.clone()),
                stated_by: Some(format!("the snapshot of {}", snapshot.commit)),
                prior_templates: prior_templates(&snapshot),
                ..Change::default()
            },
            Source::Live(options),
        )
    };
    // Re-evaluated now: a failure list from an earlier job is never trusted.
    let mut report = deadline
        .bound(
            &server,
            "verifying what changed",
            crate::verifier::produce(&base),
        )
        .await?;
    dedupe(&mut report);
    let (failed, left_as_they_are) = plan(&report);
    for step in left_as_they_are {
        printer.record(RollbackEvent::Step(step))?;
    }
    if failed.is_empty() {
        let unproven = report
            .targets
            .iter()
            .any(|t| t.verdict == Verdict::Unproven);
        return Ok(printer.record(RollbackEvent::End(RollbackEnd::NothingFailed { unproven }))?);
    }
    let mut restored = Vec::new();
    let mut by_hand = false;
    for t in &failed {
        let Some(step) = restore(&cluster, &snapshot, t, args.dry_run).await else {
            continue;
        };
        by_hand |= step.needs_hand();
        if let (RollbackStep::Restored { .. }, Some(kind)) = (&step, t.kind.target()) {
            restored.push(Target::new(kind, Some(&t.namespace), &t.name));
        }
        printer.record(RollbackEvent::Step(step))?;
    }
    if args.dry_run {
        return Ok(printer.record(RollbackEvent::End(RollbackEnd::DryRun))?);
    }
    let serving = restored.is_empty() || {
        printer.record(RollbackEvent::Waiting)?;
        let config = VerifyConfig {
            targets: restored,
            change: Change::default(),
            wait: Some(deadline),
            since_origin: None,
            ..base
        };
        let report = crate::verifier::wait(&config, &cluster, deadline, &rolled_back).await?;
        let serving = rolled_back(&report);
        printer.record(RollbackEvent::Verified(Box::new(report)))?;
        serving
    };
    Ok(printer.record(RollbackEvent::End(if serving && !by_hand {
        RollbackEnd::Succeeded
    } else {
        RollbackEnd::Failed { serving }
    }))?)
}

/// What rollback does with each target of the re-evaluated `report`: the targets that failed,
/// to restore; and, for each target a later change superseded, the step that says it is left
/// as it is (putting its snapshot template back would undo the later change, which is not the
/// one judged here). Every other target is not touched either, and says nothing.
fn plan(report: &Report) -> (Vec<&liveproof_evidence::TargetReport>, Vec<RollbackStep>) {
    let failed = report
        .targets
        .iter()
        .filter(|t| t.verdict == Verdict::NotLive)
        .collect();
    let superseded = report
        .targets
        .iter()
        .filter(|t| t.verdict == Verdict::Superseded)
        .map(|t| RollbackStep::Superseded {
            target: match t.kind.target() {
                Some(kind) => Target::new(kind, Some(&t.namespace), &t.name).to_string(),
                None => format!("{} {}/{}", t.kind, t.namespace, t.name),
            },
            by: t.superseded_by.clone().map(Box::new),
        })
        .collect();
    (failed, superseded)
}

/// A rollback is done when nothing fails and every serving pod is on the restored template.
/// Pods that never stopped running it need no restart (and predate any change time), so
/// pod_restarted is not asked of them.
fn rolled_back(report: &Report) -> bool {
    report.targets.iter().all(|t| {
        t.evidence.iter().all(|e| e.status != Status::Fail)
            && t.evidence
                .iter()
                .any(|e| e.check == Check::PodsCurrent && e.status == Status::Pass)
    })
}

/// What is done about one failed target: a release is left to Helm (with the command); a
/// workload gets the snapshot's pod template back (with `dry_run`, only said). `None` for a
/// target that is neither.
async fn restore(
    cluster: &Cluster,
    snapshot: &Snapshot,
    failed: &liveproof_evidence::TargetReport,
    dry_run: bool,
) -> Option<RollbackStep> {
    let (namespace, name) = (&failed.namespace, &failed.name);
    let kind = failed.kind.target()?;
    match liveproof_evidence::kind::restore(kind) {
        Restore::HelmRevision => {
            return Some(RollbackStep::Release {
                namespace: namespace.clone(),
                name: name.clone(),
                revision: snapshot.release(namespace, name).map(|r| r.revision),
            })
        }
        Restore::Nothing => return None,
        Restore::PodTemplate => {}
    }
    let target = Target::new(kind, Some(namespace), name);
    let Some(state) = snapshot.workload(&target) else {
        return Some(RollbackStep::NotInSnapshot {
            target: target.to_string(),
        });
    };
    if dry_run {
        return Some(RollbackStep::WouldRestore {
            kind: kind.to_string(),
            namespace: namespace.clone(),
            name: name.clone(),
            images: state.images.clone(),
        });
    }
    Some(
        match cluster.restore_template(&target, &state.template).await {
            Ok(_) => RollbackStep::Restored {
                target: target.to_string(),
                images: state.images.clone(),
            },
            Err(e) => RollbackStep::RestoreFailed {
                target: target.to_string(),
                error: e.with_hint().to_string(),
            },
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rollback restores what failed and only that: a superseded target is never restored (its
    /// snapshot template would undo the later change), and it is said to be left as it is.
    #[test]
    fn rollback_restores_what_failed_and_leaves_a_superseded_target_as_it_is() {
        let by = liveproof_evidence::SupersededBy {
            summary: "ReplicaSet shop/web-6c8d serves now".into(),
            revision: Some("shop/web-6c8d".into()),
            commit: None,
            images: vec!["ghcr.io/acme/web:1.5.0".into()],
            at: Some("2026-07-12T11:00:00Z".into()),
            live: Some(true),
            source_ref: None,
        };
        let target = |name: &str, verdict: Verdict| liveproof_evidence::TargetReport {
            kind: TargetKind::Deployment.into(),
            namespace: "shop".into(),
            name: name.into(),
            verdict,
            via: None,
            evidence: Vec::new(),
            next_step: None,
            diagnostics: Vec::new(),
            live_since: None,
            live_since_unknown: None,
            timeline: Vec::new(),
            superseded_by: (verdict == Verdict::Superseded).then(|| by.clone()),
            pods: Default::default(),
        };
        let report = Report::new(
            Default::default(),
            vec![
                target("web", Verdict::Superseded),
                target("cart", Verdict::NotLive),
                target("api", Verdict::Live),
                target("cache", Verdict::Unproven),
            ],
        );
        let (failed, left) = plan(&report);
        let failed: Vec<&str> = failed.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(failed, ["cart"]);
        assert_eq!(
            left,
            [RollbackStep::Superseded {
                target: "shop/deployment/web".into(),
                by: Some(Box::new(by)),
            }]
        );
        let mut said = Vec::new();
        liveproof_report::render_rollback_step(&left[0], &mut said).expect("rendered");
        let said = String::from_utf8(said).expect("UTF-8");
        assert!(
            said.starts_with("shop/deployment/web superseded by revision shop/web-6c8d")
                && said.ends_with(": left as it is (nothing to roll back)\n"),
            "{said}"
        );
    }

    /// `snapshot --dir shared` once created its probe as `.liveproof-probe-PID` with
    /// `File::create`: a link planted under that name made it overwrite another file with
    /// 1 MiB of zeros. So were the temp names of the snapshot and of `current` predictable.
    #[test]
    fn links_planted_under_the_old_predictable_names_are_never_written_through() {
        let shared = tempfile::tempdir().expect("tempdir");
        let victim = shared.path().join("victim");
        std::fs::write(&victim, "precious").expect("write");
        let pid = std::process::id();
        let commit_dir = shared.path().join("abcdef1");
        std::fs::create_dir_all(&commit_dir).expect("mkdir");
        for planted in [
            shared.path().join(format!(".liveproof-probe-{pid}")),
            shared.path().join(format!(".current{TMP_MARK}{pid}")),
            commit_dir.join(format!(".{FILE}{TMP_MARK}{pid}")),
        ] {
            std::os::unix::fs::symlink(&victim, &planted).expect("symlink");
        }
        probe(shared.path()).expect("probe");
        write_commit_snapshot(shared.path(), "abcdef1", b"{}").expect("written");
        publish_current(shared.path(), "abcdef1").expect("published");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
        assert_eq!(
            std::fs::read_to_string(shared.path().join("current").join(FILE)).expect("read"),
            "{}"
        );
    }

    #[test]
    fn a_fifo_as_the_snapshot_is_refused_not_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let current = dir.path().join("current");
        std::fs::create_dir_all(&current).expect("mkdir");
        let fifo = current.join(FILE);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let err = load(dir.path(), "abcdef1").expect_err("refused");
        assert!(matches!(err, SnapshotError::NotRegular { .. }), "{err}");
        assert!(err.to_string().contains("a FIFO"), "{err}");
        assert!(existing(dir.path(), "current").expect("no link").is_none());
    }
}
