//! `liveproof release show`: a Helm release read from its storage, printed as helm would.

use std::borrow::Cow;
use std::io::{self, Write};

use liveproof_evidence::{Observed, ReleaseHistory, ResourceKind, Target, TargetKind};
use liveproof_gather::Cluster;
use liveproof_helm::{Parts, Release, StorageObject, StoredRelease};
use liveproof_report::{
    Format, ManifestSource, Outcome, ReleaseShown, Render, TextStyle, Values, ValuesNote,
};
use serde_json::Value;

use crate::cli::ReleaseShowArgs;

#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("Helm release {namespace}/{name} not found: no Secret or ConfigMap labelled owner=helm,name={name}")]
    NotFound { namespace: String, name: String },
    #[error("Helm release {namespace}/{name} has no revision {revision} (revisions: {have})")]
    NoRevision {
        namespace: String,
        name: String,
        revision: i64,
        have: String,
    },
    /// The storage error names the object; `inspect` is the kubectl command that shows it.
    #[error("{error}")]
    Unreadable {
        error: String,
        inspect: String,
        limit: usize,
    },
    #[error("Helm release {name} not found in any namespace: no Secret or ConfigMap labelled owner=helm,name={name}")]
    NotFoundAnywhere { name: String },
    #[error("Helm release {name} is installed in several namespaces: {}", namespaces.join(", "))]
    Ambiguous {
        name: String,
        namespaces: Vec<String>,
    },
}

impl liveproof_evidence::hint::Hinted for ReleaseError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            ReleaseError::NotFound { namespace, .. } => Some(Cow::Owned(format!("list the releases there: kubectl -n {namespace} get secrets -l owner=helm"))),
            ReleaseError::Unreadable { inspect, limit, .. } => Some(Cow::Owned(format!("inspect it with `{inspect}`; a release larger than --max-release-size ({limit} bytes) is refused, raise it if the release is only large"))),
            ReleaseError::NotFoundAnywhere { .. } => Some(Cow::Borrowed("list the releases: kubectl get secrets -A -l owner=helm")),
            ReleaseError::Ambiguous { namespaces, .. } => Some(Cow::Owned(format!("pick one with -n, e.g. -n {}", namespaces.first().map(String::as_str).unwrap_or_default()))),
            ReleaseError::NoRevision { .. } => None,
        }
    }
}

/// The namespaces holding storage of release `name` in a `--from` dump.
fn storage_namespaces(observed: &Observed, name: &str) -> Vec<String> {
    observed
        .others
        .iter()
        .filter(|o| matches!(o["kind"].as_str(), Some("Secret" | "ConfigMap")))
        .filter(|o| {
            o.pointer("/metadata/labels/owner").and_then(|v| v.as_str()) == Some("helm")
                && o.pointer("/metadata/labels/name").and_then(|v| v.as_str()) == Some(name)
        })
        .filter_map(|o| o.pointer("/metadata/namespace").and_then(|v| v.as_str()))
        .map(str::to_string)
        .collect()
}

/// `-A`: the one namespace holding release `name`; none or several is an error (exit 2).
fn the_one_namespace(name: &str, mut found: Vec<String>) -> Result<String, ReleaseError> {
    found.sort();
    found.dedup();
    match found.as_slice() {
        [] => Err(ReleaseError::NotFoundAnywhere {
            name: name.to_string(),
        }),
        [one] => Ok(one.clone()),
        _ => Err(ReleaseError::Ambiguous {
            name: name.to_string(),
            namespaces: found,
        }),
    }
}

/// `liveproof release show`. Its model ([`ReleaseShown`]) borrows what was gathered and
/// streams the manifest as another thread decodes it, so it is printed here, inside that
/// thread's scope, rather than returned; its exit code is still the model's.
pub async fn show(args: &ReleaseShowArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let (observed, namespace) = gather(args).await?;
    // One write per document of a large manifest would be one system call each.
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    let code = write_shown(
        args,
        ValuesNote::ShowValuesFlag,
        &observed,
        &namespace,
        &mut out,
    )?;
    out.flush()?;
    Ok(code)
}

/// What `release show` prints: the chosen sections, as helm prints them, one blank line apart;
/// redacted values under a first line that says what `note` says about showing them.
pub async fn shown(args: &ReleaseShowArgs, note: ValuesNote) -> anyhow::Result<String> {
    let (observed, namespace) = gather(args).await?;
    let mut out = Vec::new();
    write_shown(args, note, &observed, &namespace, &mut out)?;
    // Every section is written from a `str`.
    Ok(String::from_utf8(out)?)
}

/// The release `release show` was asked about: every revision's summary, and the one to show
/// read as far as the sections asked for need. Its manifest is not held: it is decoded again,
/// from the storage object, as it is printed.
struct Found {
    history: ReleaseHistory<StoredRelease>,
    chosen: StoredRelease,
}

/// How many pieces of the manifest's text (of [`AHEAD_PIECE`] bytes) may wait, decoded ahead,
/// until the revisions have been read: what `--manifest` holds at most beyond one document.
const AHEAD_PIECES: usize = 16;
const AHEAD_PIECE: usize = 64 * 1024;

/// Reads the release in what was gathered and writes the sections asked for.
///
/// With `--manifest`, the manifest of the revision the storage labels say will be shown is
/// decoded on a second thread while this one reads every revision: decoding it is most of the
/// work. What that thread decodes waits, up to [`AHEAD_PIECES`], until the reads confirm the
/// revision shown is that one (the release JSON has the final word); it is then judged and
/// written here as the other thread decodes the rest. If the revision shown is another, or it
/// could not be read, the thread is stopped and what it decoded is dropped unseen.
fn write_shown(
    args: &ReleaseShowArgs,
    note: ValuesNote,
    observed: &Observed,
    namespace: &str,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let limits = limits(args);
    let ahead = args
        .manifest
        .then(|| labelled_choice(observed, namespace, &args.name, args.revision))
        .flatten();
    std::thread::scope(|scope| {
        let ahead = ahead.map(|storage| {
            let (pieces, waiting) = std::sync::mpsc::sync_channel(AHEAD_PIECES);
            let decoding = scope.spawn(move || {
                let mut ahead = Sender {
                    pieces,
                    piece: String::new(),
                };
                liveproof_helm::stream_stored_manifest(storage, &limits, &mut |text| {
                    ahead.push(text)
                })?;
                ahead.flush()
            });
            Ahead {
                storage,
                waiting,
                decoding,
            }
        });
        let found = found(observed, namespace, args, &limits)?;
        let manifest = Manifest {
            ahead: std::cell::Cell::new(ahead),
            shown: &found.chosen.object,
            observed,
            namespace,
            name: &args.name,
            limits: &limits,
        };
        let shown = found.shown(args, note, &manifest);
        shown.render(Format::Text, TextStyle::plain(), out)?;
        Ok(shown.exit_code())
    })
}

/// The manifest of the revision shown, as `release show` prints it: from what the other thread
/// decoded ahead when that is the revision shown, else decoded again here.
struct Manifest<'scope, 'o> {
    ahead: std::cell::Cell<Option<Ahead<'scope, 'o>>>,
    shown: &'o StorageObject,
    observed: &'o Observed,
    namespace: &'o str,
    name: &'o str,
    limits: &'o liveproof_helm::Limits,
}

impl ManifestSource for Manifest<'_, '_> {
    fn write_manifest(&self, out: &mut dyn Write) -> io::Result<()> {
        match self.ahead.take() {
            Some(ahead) if StorageObject::of(ahead.storage).as_ref() == Some(self.shown) => {
                // Judged and written here, while the other thread decodes what follows.
                let mut writer = liveproof_helm::show::ManifestWriter::new(out);
                for piece in ahead.waiting.iter() {
                    writer.push(&piece)?;
                }
                match ahead.decoding.join() {
                    Ok(decoded) => decoded?,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
                writer.finish()
            }
            // Not the one shown: dropping `waiting` stops the thread at its next piece.
            _ => {
                let storage = storage(self.observed, self.namespace, self.name)
                    .find(|obj| StorageObject::of(obj).as_ref() == Some(self.shown))
                    .ok_or_else(|| {
                        io::Error::other(format!("{} is not in what was read", self.shown))
                    })?;
                liveproof_helm::write_stored_manifest(storage, self.limits, out)
            }
        }
    }
}

/// The manifest being decoded ahead, on its own thread.
struct Ahead<'scope, 'o> {
    storage: &'o Value,
    waiting: std::sync::mpsc::Receiver<String>,
    decoding: std::thread::ScopedJoinHandle<'scope, io::Result<()>>,
}

/// Hands the manifest's text on in pieces of about [`AHEAD_PIECE`] bytes; fails once no one
/// is waiting for them.
struct Sender {
    pieces: std::sync::mpsc::SyncSender<String>,
    piece: String,
}

impl Sender {
    fn push(&mut self, text: &str) -> io::Result<()> {
        // Never grown past a piece: a piece that would overflow goes first.
        if self.piece.len() + text.len() > AHEAD_PIECE {
            self.flush()?;
        }
        if self.piece.is_empty() {
            self.piece.reserve_exact(AHEAD_PIECE.max(text.len()));
        }
        self.piece.push_str(text);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.piece.is_empty() {
            return Ok(());
        }
        self.pieces
            .send(std::mem::take(&mut self.piece))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

/// The storage object the labels say `release show` will show: `revision`'s, or the newest's.
fn labelled_choice<'o>(
    observed: &'o Observed,
    namespace: &'o str,
    name: &'o str,
    revision: Option<i64>,
) -> Option<&'o Value> {
    let shown = labelled_shown(storage(observed, namespace, name), revision)?;
    storage(observed, namespace, name)
        .find(|obj| liveproof_helm::labelled_revision(obj) == Some(shown))
}

/// The revision the labels say will be shown: `revision`, or the newest labelled.
fn labelled_shown<'o>(
    storage: impl Iterator<Item = &'o Value>,
    revision: Option<i64>,
) -> Option<i64> {
    revision.or_else(|| storage.filter_map(liveproof_helm::labelled_revision).max())
}

fn limits(args: &ReleaseShowArgs) -> liveproof_helm::Limits {
    liveproof_helm::Limits {
        max_decompressed: args.max_release_size,
        ..liveproof_helm::Limits::default()
    }
}

/// The storage objects (from the cluster or `--from`) and the namespace to look in.
async fn gather(args: &ReleaseShowArgs) -> anyhow::Result<(Observed, String)> {
    // clap's rules, for arguments built without it (an MCP tool call).
    crate::rules::check(args)?;
    let all_namespaces = args.cluster.all_namespaces;
    Ok(match &args.from {
        Some(path) => {
            let observed = liveproof_gather::offline::load_off_runtime(path).await?;
            let ns = if all_namespaces {
                let found = storage_namespaces(&observed, &args.name);
                the_one_namespace(&args.name, found)?
            } else {
                crate::config::namespace(&args.cluster).unwrap_or_else(|| "default".into())
            };
            (observed, ns)
        }
        None => {
            let cluster =
                Cluster::connect(&liveproof_gather::ClusterOptions::try_from(&args.cluster)?)
                    .await?;
            let ns = if all_namespaces {
                // Labels only (a metadata LIST): no release data crosses the wire to find it.
                let found: Vec<String> = cluster
                    .release_revisions(None)
                    .await?
                    .into_iter()
                    .filter(|r| r.name == args.name)
                    .map(|r| r.namespace)
                    .collect();
                the_one_namespace(&args.name, found)?
            } else {
                cluster.default_namespace().to_string()
            };
            let target = Target::new(TargetKind::Release, Some(&ns), &args.name);
            let observed = cluster.gather(std::slice::from_ref(&target), false).await?;
            if storage(&observed, &ns, &args.name).next().is_none() {
                // Missing: say so plainly, or that the namespace itself does not exist.
                cluster.check_namespaces(&observed, &[target]).await?;
            }
            (observed, ns)
        }
    })
}

/// The release in what was gathered, read as far as the sections asked for need.
fn found(
    observed: &Observed,
    namespace: &str,
    args: &ReleaseShowArgs,
    limits: &liveproof_helm::Limits,
) -> Result<Found, ReleaseError> {
    // The values are read from the revision shown only, and its manifest checked (it is decoded
    // again as it is printed); a summary (what the metadata and history sections show) from
    // every other.
    let parts = if args.manifest || args.values {
        Parts::ExceptManifest
    } else {
        Parts::Summary
    };
    let (mut history, read_as) = read(
        observed,
        namespace,
        &args.name,
        args.revision,
        parts,
        limits,
    );
    let limit = args.max_release_size;
    let chosen = match args.revision {
        None => history.newest(),
        Some(n) => history.revisions.iter().find(|r| r.release.version == n),
    };
    let Some((object, version)) = chosen.map(|r| (r.object.clone(), r.release.version)) else {
        return Err(not_shown(&history, namespace, args.revision, limit));
    };
    let summarized = read_as
        .iter()
        .find(|read| read.object == object && read.parts != parts);
    let chosen = match summarized {
        // The labels pointed elsewhere (they only say which object to read first): read it now.
        Some(read) => liveproof_helm::decode_parts(read.storage, limits, parts)
            .map_err(|err| unreadable_error(&object, &err.to_string(), limit))?,
        // Moved out: the history keeps the summary, not a second copy of the manifest.
        None => history
            .revisions
            .iter_mut()
            .find(|r| r.object == object && r.release.version == version)
            .map(take_whole)
            .ok_or_else(|| not_shown(&history, namespace, args.revision, limit))?,
    };
    for (object, _, error) in &history.unreadable {
        tracing::warn!("{object} could not be read: {error}");
    }
    Ok(Found { history, chosen })
}

/// The whole of `shown`, leaving its summary in place.
fn take_whole(shown: &mut StoredRelease) -> StoredRelease {
    let release = &mut shown.release;
    StoredRelease {
        object: shown.object.clone(),
        release: Release {
            manifest: std::mem::take(&mut release.manifest),
            config: std::mem::take(&mut release.config),
            hooks: std::mem::take(&mut release.hooks),
            ..release.clone()
        },
    }
}

impl Found {
    /// The sections asked for (the metadata when none is); the manifest's from `manifest`.
    fn shown<'a>(
        &'a self,
        args: &ReleaseShowArgs,
        note: ValuesNote,
        manifest: &'a dyn ManifestSource,
    ) -> ReleaseShown<'a> {
        let nothing_chosen = !(args.manifest || args.values || args.history || args.metadata);
        ReleaseShown {
            metadata: (args.metadata || nothing_chosen).then_some(&self.chosen),
            history: args.history.then_some(self.history.revisions.as_slice()),
            values: args.values.then_some((
                &self.chosen.release,
                if args.show_values {
                    Values::AsStored
                } else {
                    Values::Redacted(note)
                },
            )),
            manifest: args.manifest.then_some(manifest),
        }
    }
}

/// The storage objects of release `name` in `namespace`.
fn storage<'a>(
    observed: &'a Observed,
    namespace: &'a str,
    name: &'a str,
) -> impl Iterator<Item = &'a Value> {
    observed
        .others_of(ResourceKind::Secret)
        .chain(observed.others_of(ResourceKind::ConfigMap))
        .filter(move |obj| liveproof_helm::stores_release(obj, namespace, name))
}

/// A storage object and how much of it was read.
struct Read<'a> {
    object: StorageObject,
    storage: &'a Value,
    parts: Parts,
}

/// The release's revisions, as [`ReleaseHistory::read`] finds them, each read as far as the
/// command needs: `parts` of the one the labels say it will show (`revision`, or the newest), a
/// summary of the others; and how much of each storage object was read.
fn read<'a>(
    observed: &'a Observed,
    namespace: &'a str,
    name: &'a str,
    revision: Option<i64>,
    parts: Parts,
    limits: &liveproof_helm::Limits,
) -> (ReleaseHistory<StoredRelease>, Vec<Read<'a>>) {
    let storage: Vec<&Value> = storage(observed, namespace, name).collect();
    let shown = labelled_shown(storage.iter().copied(), revision);
    let mut revisions = Vec::new();
    let mut unreadable = Vec::new();
    let mut read_as = Vec::new();
    for obj in storage {
        // `storage` holds release storage only: Secrets and ConfigMaps.
        let Some(object) = StorageObject::of(obj) else {
            continue;
        };
        let labelled = liveproof_helm::labelled_revision(obj);
        let parts = if labelled.is_none() || labelled == shown {
            parts
        } else {
            Parts::Summary
        };
        match liveproof_helm::decode_parts(obj, limits, parts) {
            Ok(stored) => revisions.push(stored),
            Err(err) => unreadable.push((object.clone(), labelled, err.to_string())),
        }
        read_as.push(Read {
            object,
            storage: obj,
            parts,
        });
    }
    let history = ReleaseHistory::new(namespace, name, revisions, unreadable);
    (history, read_as)
}

/// Why no revision can be shown: none is stored, the one asked for (or the newest) could not be
/// read, or there is no such revision.
fn not_shown(
    history: &ReleaseHistory<StoredRelease>,
    namespace: &str,
    revision: Option<i64>,
    limit: usize,
) -> ReleaseError {
    let asked = revision.and_then(|n| history.unreadable.iter().find(|(_, v, _)| *v == Some(n)));
    let newest = || {
        if history.revisions.is_empty() {
            // The newest: the revision `release show` was asked for.
            history.unreadable.iter().max_by_key(|(_, v, _)| *v)
        } else if revision.is_none() {
            // Never an older readable revision in its place.
            history.newest_unreadable()
        } else {
            None
        }
    };
    if let Some((object, _, error)) = asked.or_else(newest) {
        return unreadable_error(object, error, limit);
    }
    if history.revisions.is_empty() {
        return ReleaseError::NotFound {
            namespace: namespace.to_string(),
            name: history.name.clone(),
        };
    }
    ReleaseError::NoRevision {
        namespace: namespace.to_string(),
        name: history.name.clone(),
        revision: revision.unwrap_or_default(),
        have: history
            .revisions
            .iter()
            .map(|r| r.release.version.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn unreadable_error(object: &StorageObject, error: &str, limit: usize) -> ReleaseError {
    ReleaseError::Unreadable {
        error: error.to_string(),
        inspect: liveproof_gather::complete::kubectl_get(object),
        limit,
    }
}
