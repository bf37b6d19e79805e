//! `--from PATH`: objects read from files instead of a cluster.
//!
//! A file or a directory (recursively, in sorted order so the snapshot is deterministic) of
//! `.yaml`, `.yml` and `.json` files, as `kubectl get -o yaml|json` prints them: multi-document
//! YAML, `kind: List` and `*List` are accepted. Files with other extensions in a directory are
//! ignored; a file named explicitly is read whatever its extension (JSON if `.json`, else YAML).
//!
//! Nothing is marked complete: a dump may be partial, so an object it lacks is unknown, never
//! "does not exist".

pub mod namespace;

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use liveproof_evidence::{ObjectError, Observed, Target};
use serde::Deserialize;
use serde_json::Value;

/// Directories nested deeper than this are not read (guards against pathological trees).
const MAX_DEPTH: usize = 64;

/// Why `--from` could not be read. Each names the file, and the document when it is about one.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: no such file or directory", path.display())]
    NotFound {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{source}")]
    NotRegular {
        #[source]
        source: crate::files::NotRegular,
    },
    #[error("{}: {size} bytes of {what}, more than the {limit} such a file may have: {why}", path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
        what: &'static str,
        why: &'static str,
        hint: &'static str,
    },
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no .yaml, .yml or .json files found", path.display())]
    NoManifests { path: PathBuf },
    #[error("{}: not UTF-8 text (is it a binary file?)", path.display())]
    NotText {
        path: PathBuf,
        #[source]
        source: std::string::FromUtf8Error,
    },
    // The parser's whole message is `message` (its own position taken out, the context it
    // adds kept): no `#[source]`, so nothing prints it a second time.
    #[error("{}: document {document}: invalid YAML{}: {message}", path.display(), Location(*location))]
    Yaml {
        path: PathBuf,
        /// 1-based.
        document: usize,
        location: Option<(usize, usize)>,
        message: String,
    },
    #[error("{}: invalid JSON: {problem}", path.display())]
    Json {
        path: PathBuf,
        /// What and where (`trailing comma at line 2 column 16`), quoting no value.
        problem: String,
    },
    #[error("{}: document {document}: cannot be represented as JSON: {source}", path.display())]
    NotJson {
        path: PathBuf,
        document: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: document {document}: expected a Kubernetes object (a mapping with `kind`), found {found}", path.display())]
    NotAnObject {
        path: PathBuf,
        document: usize,
        found: &'static str,
    },
    /// Refused before parsing: libyaml's cost grows with the square of the depth for some
    /// shapes, so a small file could hold the CPU for minutes.
    #[error("{}: document {document}: {source}", path.display())]
    TooDeep {
        path: PathBuf,
        /// 1-based.
        document: usize,
        #[source]
        source: liveproof_helm::yaml::TooDeep,
    },
    /// The object's own error names the file and document (see [`ObjectError`]).
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// `-f` manifests that declare nothing with pods to check.
    #[error("{}: declares no {}", path.display(), liveproof_evidence::TargetKind::workload_kinds("or", false))]
    NoWorkloads { path: PathBuf },
}

use liveproof_evidence::hint::Hinted;

impl Hinted for LoadError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            LoadError::NotFound { .. } => Some(Cow::Borrowed("check the path: it takes a file or a directory of .yaml, .yml or .json manifests")),
            LoadError::NotRegular { .. } => Some(Cow::Borrowed("give a regular file, or a directory of them; save a stream (a pipe, a process substitution) to a file first")),
            LoadError::TooLarge { hint, .. } => Some(Cow::Borrowed(hint)),
            LoadError::NoManifests { .. } => Some(Cow::Borrowed("dump objects with e.g. `kubectl get deploy,rs,pods -o yaml > dump.yaml`")),
            LoadError::TooDeep { .. } => Some(Cow::Borrowed("Kubernetes objects are far shallower; check what produced this file")),
            LoadError::NoWorkloads { .. } => Some(Cow::Borrowed("-f takes the manifests the repository applies (plain YAML, not Helm templates)")),
            LoadError::Object(inner) => inner.hint(),
            LoadError::Read { .. }
            | LoadError::NotText { .. }
            | LoadError::Yaml { .. }
            | LoadError::Json { .. }
            | LoadError::NotJson { .. }
            | LoadError::NotAnObject { .. } => None,
        }
    }
}

impl LoadError {
    /// The file the error is about.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LoadError::NotFound { path, .. }
            | LoadError::Read { path, .. }
            | LoadError::NoManifests { path }
            | LoadError::NotText { path, .. }
            | LoadError::Yaml { path, .. }
            | LoadError::Json { path, .. }
            | LoadError::NotJson { path, .. }
            | LoadError::NotAnObject { path, .. }
            | LoadError::TooDeep { path, .. }
            | LoadError::TooLarge { path, .. }
            | LoadError::NoWorkloads { path } => Some(path),
            LoadError::NotRegular { source } => Some(&source.path),
            LoadError::Object(_) => None,
        }
    }
}

struct Location(Option<(usize, usize)>);

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((line, column)) => write!(f, " at line {line} column {column}"),
            None => Ok(()),
        }
    }
}

/// The Deployments, StatefulSets and DaemonSets a folder of manifests declares (`-f`), each in
/// its own namespace or `ns`: only what the repository manages, never what it does not (seed
/// 001). Declaring none is an error: `-f` was given to name workloads.
pub fn declared_workloads(path: &Path, ns: &str) -> Result<Vec<Target>, LoadError> {
    let declared = load(path)?;
    let mut targets: Vec<Target> = declared
        .workloads()
        .filter_map(|(kind, m, _)| {
            let name = m.name.as_deref()?;
            Some(Target::new(
                kind,
                Some(m.namespace.as_deref().unwrap_or(ns)),
                name,
            ))
        })
        .collect();
    targets.sort();
    targets.dedup();
    if targets.is_empty() {
        return Err(LoadError::NoWorkloads {
            path: path.to_path_buf(),
        });
    }
    Ok(targets)
}

/// Where each object read goes: a snapshot (`load`), or a list of values (`read_objects`).
/// `what` names the file and document for errors.
type Sink<'a> = dyn FnMut(Value, &str) -> Result<(), LoadError> + 'a;

/// [`load`] on a blocking thread: reading files never holds an async runtime's worker (an
/// MCP server serves other calls meanwhile).
pub async fn load_off_runtime(path: &Path) -> Result<Observed, LoadError> {
    let owned = path.to_path_buf();
    tokio::task::spawn_blocking(move || load(&owned))
        .await
        .map_err(|e| joined(path, e))?
}

/// [`declared_workloads`] on a blocking thread, as [`load_off_runtime`].
pub async fn declared_workloads_off_runtime(
    path: &Path,
    ns: &str,
) -> Result<Vec<Target>, LoadError> {
    let (owned, ns) = (path.to_path_buf(), ns.to_string());
    tokio::task::spawn_blocking(move || declared_workloads(&owned, &ns))
        .await
        .map_err(|e| joined(path, e))?
}

fn joined(path: &Path, e: tokio::task::JoinError) -> LoadError {
    LoadError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Reads `path` (a file, or a directory searched recursively) into a snapshot. Only the pods
/// something in the dump selects or routes to are kept (see [`HeldPods`]).
pub fn load(path: &Path) -> Result<Observed, LoadError> {
    let mut observed = Observed::default();
    let mut held = HeldPods::default();
    read_into(path, &mut |value, what| {
        held.add(&mut observed, value, what)
    })?;
    held.keep_selected(&mut observed)?;
    Ok(observed)
}

/// The pods of a dump, held as compact JSON until the whole dump is read, then taken in only
/// when something in it selects them (a `spec.selector`: a workload's, a ReplicaSet's, a
/// Service's) or an EndpointSlice routes to them: no check reads any other pod (live, the
/// gather lists no other). A pod taken in is over 4 KiB as the typed object the checks read,
/// its JSON a tenth of that: 200,000 pods in a 29 MB dump took 1 GB when each was kept.
/// Each pod is still checked as it is read (a broken one is refused, naming it), selected or
/// not.
#[derive(Default)]
struct HeldPods {
    /// Each pod's JSON (without `managedFields`), and what names it in errors.
    pods: Vec<(Box<str>, Box<str>)>,
    /// Every `spec.selector` in the dump, as a label selector.
    selectors: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    /// The pods EndpointSlices route to, by name.
    routed: std::collections::HashSet<String>,
}

impl HeldPods {
    /// Takes `value` (a `List`'s items one by one) into `observed`, holding its pods back.
    fn add(&mut self, observed: &mut Observed, value: Value, what: &str) -> Result<(), LoadError> {
        liveproof_evidence::objects::each_object(value, what, &mut |object, what| {
            self.add_one(observed, object, what)
        })
    }

    /// Takes one object (not a List) into `observed`, or holds it back when it is a pod.
    fn add_one(
        &mut self,
        observed: &mut Observed,
        mut value: Value,
        what: &str,
    ) -> Result<(), LoadError> {
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let is_pod = kind == "Pod" && value.get("apiVersion").and_then(Value::as_str) == Some("v1");
        if !is_pod {
            self.note_selects(&value);
            observed.add_value(value, what)?;
            return Ok(());
        }
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let text = value.to_string();
        // Checked as every object is (refused whole, naming it, when broken), then dropped:
        // only its JSON is held.
        let mut checked = Observed::default();
        checked.add_value(value, what)?;
        drop(checked);
        self.pods.push((text.into(), what.into()));
        Ok(())
    }

    /// What `value` selects or routes to.
    fn note_selects(&mut self, value: &Value) {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
        if let Some(selector) = value.pointer("/spec/selector") {
            let is_label_selector =
                selector.get("matchLabels").is_some() || selector.get("matchExpressions").is_some();
            let parsed = if is_label_selector {
                serde_json::from_value::<LabelSelector>(selector.clone()).ok()
            } else {
                // A Service's (and a ReplicationController's): labels to match, as a map.
                serde_json::from_value(selector.clone())
                    .ok()
                    .map(|labels| LabelSelector {
                        match_labels: Some(labels),
                        ..LabelSelector::default()
                    })
            };
            self.selectors.extend(parsed);
        }
        let routed = value
            .get("endpoints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("targetRef"))
            .filter(|r| r.get("kind").and_then(Value::as_str) == Some("Pod"))
            .filter_map(|r| r.get("name").and_then(Value::as_str));
        self.routed.extend(routed.map(str::to_string));
    }

    /// Takes the held pods something selects or routes to into `observed`, in the order read.
    fn keep_selected(self, observed: &mut Observed) -> Result<(), LoadError> {
        #[derive(Deserialize)]
        struct Meta {
            #[serde(default)]
            name: Option<String>,
            #[serde(default)]
            labels: Option<std::collections::BTreeMap<String, String>>,
        }
        #[derive(Deserialize)]
        struct PodMeta {
            metadata: Meta,
        }
        let HeldPods {
            pods,
            selectors,
            routed,
        } = self;
        for (text, what) in pods {
            let Ok(PodMeta { metadata }) = serde_json::from_str::<PodMeta>(&text) else {
                continue;
            };
            let wanted = metadata.name.as_ref().is_some_and(|n| routed.contains(n))
                || selectors
                    .iter()
                    .any(|s| liveproof_evidence::selector::matches(s, metadata.labels.as_ref()));
            if !wanted {
                continue;
            }
            let value: Value = serde_json::from_str(&text).map_err(|source| LoadError::Json {
                path: PathBuf::from(&*what),
                problem: liveproof_redacted::parse::json_problem(&source),
            })?;
            observed.add_value(value, &what)?;
        }
        Ok(())
    }
}

/// Reads `path` as [`load`] does (same files, same errors), into the objects themselves, each
/// `kind: List` flattened into its items: what the simulator serves, or a test starts from.
/// An object without `kind` is refused, naming its file and document.
pub fn read_objects(path: &Path) -> Result<Vec<Value>, LoadError> {
    let mut objects = Vec::new();
    read_into(path, &mut |value, what| {
        liveproof_evidence::objects::each_object(value, what, &mut |object, what| {
            if object.get("kind").and_then(Value::as_str).is_none() {
                return Err(ObjectError::NoKind {
                    what: what.to_string(),
                });
            }
            objects.push(object);
            Ok(())
        })?;
        Ok(())
    })?;
    Ok(objects)
}

fn read_into(path: &Path, sink: &mut Sink<'_>) -> Result<(), LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            LoadError::NotFound {
                path: path.to_path_buf(),
                source,
            }
        } else {
            LoadError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    let files = if meta.is_dir() {
        let mut files = Vec::new();
        collect_manifests(path, 0, &mut files)?;
        if files.is_empty() {
            return Err(LoadError::NoManifests {
                path: path.to_path_buf(),
            });
        }
        files
    } else {
        vec![path.to_path_buf()]
    };
    for file in &files {
        load_file(file, sink)?;
    }
    Ok(())
}

fn is_manifest(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"))
}

fn collect_manifests(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let read_err = |source| LoadError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        entries.push(entry.path());
    }
    entries.sort();
    for path in entries {
        // symlink_metadata: a symlinked directory is not followed (no loops); a symlinked
        // file is read.
        let meta = std::fs::symlink_metadata(&path).map_err(|source| LoadError::Read {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            collect_manifests(&path, depth + 1, out)?;
        } else if is_manifest(&path) {
            // A dangling symlink is skipped as before; a FIFO, device or socket is said.
            match std::fs::metadata(&path).map(|m| crate::files::special_kind(&m.file_type())) {
                Ok(None) => out.push(path),
                Ok(Some(kind)) => tracing::warn!(
                    "{}: {kind}, not a regular file: skipped (reading it could block forever)",
                    path.display()
                ),
                Err(_) => {}
            }
        }
    }
    Ok(())
}

fn load_file(path: &Path, sink: &mut Sink<'_>) -> Result<(), LoadError> {
    use std::io::Read as _;
    let read_err = |source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = crate::files::open_regular(path).map_err(|e| match e {
        crate::files::OpenError::NotRegular(source) => LoadError::NotRegular { source },
        crate::files::OpenError::Io { source, .. } => read_err(source),
    })?;
    let size = file.metadata().map_err(read_err)?.len();
    check_size(path, size)?;
    // Never more than the limit, even from a file that grows while it is read.
    let mut bytes = Vec::new();
    file.take(size_limit(path) + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    load_bytes(path, bytes, sink)
}

/// Reads files already in memory (e.g. `git show COMMIT:PATH`) as [`load`] reads them from
/// disk: `path` names each one in errors and decides JSON or YAML by its extension.
pub fn load_files(files: Vec<(PathBuf, Vec<u8>)>) -> Result<Observed, LoadError> {
    let mut observed = Observed::default();
    let mut held = HeldPods::default();
    let mut sink = |value, what: &str| held.add(&mut observed, value, what);
    for (path, bytes) in files {
        load_bytes(&path, bytes, &mut sink)?;
    }
    held.keep_selected(&mut observed)?;
    Ok(observed)
}

/// The documents of one file already in memory (e.g. a blob as of a commit), as
/// [`load_files`] reads them (same limits, same errors), but as they are written: nothing is
/// required of them (a `kustomization.yaml` may have no `kind`).
pub fn parse_documents(path: &Path, bytes: Vec<u8>) -> Result<Vec<Value>, LoadError> {
    let mut documents = Vec::new();
    load_bytes(path, bytes, &mut |value, _| {
        documents.push(value);
        Ok(())
    })?;
    Ok(documents)
}

/// The files `--from PATH` would read: `path` itself, or the manifests under the directory
/// (as [`load`] walks it). Empty when it cannot be listed (then reading it fails anyway).
pub fn manifest_files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    match collect_manifests(path, 0, &mut files) {
        Ok(()) => files,
        Err(_) => Vec::new(),
    }
}

/// Whether a file in a directory is read as a manifest (`.yaml`, `.yml`, `.json`).
pub fn is_manifest_name(path: &Path) -> bool {
    is_manifest(path)
}

/// The largest JSON file read: a `List` is taken in an item at a time, but the text is held.
pub const MAX_JSON_FILE: u64 = 1024 * 1024 * 1024;
/// The largest YAML file read: YAML is parsed whole, at about 36 times its size (a 100 MB file
/// once aborted the process at 3.6 GB).
pub const MAX_YAML_FILE: u64 = 64 * 1024 * 1024;

fn is_json_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

fn size_limit(path: &Path) -> u64 {
    if is_json_path(path) {
        MAX_JSON_FILE
    } else {
        MAX_YAML_FILE
    }
}

/// A file past what liveproof reads is refused by its size, before it is read.
fn check_size(path: &Path, size: u64) -> Result<(), LoadError> {
    let limit = size_limit(path);
    if size <= limit {
        return Ok(());
    }
    let (what, why, hint) = if is_json_path(path) {
        (
            "JSON",
            "its text is held while it is read",
            "split the dump (e.g. one file per namespace: kubectl get … -n NS -o json)",
        )
    } else {
        (
            "YAML",
            "YAML is parsed whole, at about 36 times its size in memory",
            "dump it as JSON (kubectl get … -o json), which is read an item at a time, or split it",
        )
    };
    Err(LoadError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit,
        what,
        why,
        hint,
    })
}

fn load_bytes(path: &Path, bytes: Vec<u8>, sink: &mut Sink<'_>) -> Result<(), LoadError> {
    check_size(path, bytes.len() as u64)?;
    let text = String::from_utf8(bytes).map_err(|source| LoadError::NotText {
        path: path.to_path_buf(),
        source,
    })?;
    let is_json = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    check_nesting(path, &text, is_json)?;
    if is_json {
        if add_json_list(path, &text, sink)? {
            return Ok(());
        }
        let value: Value = serde_json::from_str(&text).map_err(|source| LoadError::Json {
            path: path.to_path_buf(),
            problem: liveproof_redacted::parse::json_problem(&source),
        })?;
        return add_document(path, 1, value, sink);
    }
    for (i, document) in serde_norway::Deserializer::from_str(&text).enumerate() {
        let number = i + 1;
        let yaml =
            serde_norway::Value::deserialize(document).map_err(|source| LoadError::Yaml {
                path: path.to_path_buf(),
                document: number,
                location: source.location().map(|l| (l.line(), l.column())),
                message: yaml_message(&source),
            })?;
        if yaml.is_null() {
            // `---` separators around nothing, or a trailing `---`.
            continue;
        }
        let value = serde_json::to_value(&yaml).map_err(|source| LoadError::NotJson {
            path: path.to_path_buf(),
            document: number,
            source,
        })?;
        add_document(path, number, value, sink)?;
    }
    Ok(())
}

/// A `kind: List` (or `*List`) file, one item at a time: each item is parsed, taken in and
/// dropped before the next, so the whole file is never held as a `Value` (which takes ten
/// times or more its size). `Ok(false)` when the file is not such a list (then the
/// whole-file path reads it, and reports syntax errors with their position).
fn add_json_list(path: &Path, text: &str, sink: &mut Sink<'_>) -> Result<bool, LoadError> {
    #[derive(Deserialize)]
    struct ListProbe<'a> {
        #[serde(borrow)]
        kind: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        items: Option<Vec<&'a serde_json::value::RawValue>>,
    }
    // Not JSON, a duplicate key, `items` that is not an array: the whole-file path says why.
    let Ok(ListProbe {
        kind: Some(kind),
        items: Some(items),
    }) = serde_json::from_str::<ListProbe>(text)
    else {
        return Ok(false);
    };
    if !liveproof_helm::yaml::is_list_kind(&kind) {
        return Ok(false);
    }
    for (i, item) in items.iter().enumerate() {
        // Already checked as JSON by the probe, so this parse does not fail on syntax.
        let value =
            serde_json::from_str::<Value>(item.get()).map_err(|source| LoadError::Json {
                path: path.to_path_buf(),
                problem: liveproof_redacted::parse::json_problem(&source),
            })?;
        let what = format!("{}: document 1: items[{i}]", path.display());
        sink(value, &what)?;
    }
    Ok(true)
}

/// Refuses a document nested past [`liveproof_helm::yaml::MAX_NESTING`] before any parser reads
/// it, naming the file, the document (numbered as the YAML parser numbers them) and the line.
fn check_nesting(path: &Path, text: &str, is_json: bool) -> Result<(), LoadError> {
    use liveproof_helm::yaml::{self, MAX_NESTING};
    let chunks = if is_json {
        vec![text]
    } else {
        yaml::split_documents(text)
    };
    let mut document = 0;
    let mut lines_before = 0;
    for (i, chunk) in chunks.into_iter().enumerate() {
        // Before the first `---`, only content makes a document.
        let has_content = chunk
            .lines()
            .map(str::trim)
            .any(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('%'));
        if i > 0 || has_content {
            document += 1;
        }
        if let Err(mut source) = yaml::check_nesting(chunk, MAX_NESTING) {
            // A chunk after the first starts on its `---` line.
            source.line += lines_before;
            return Err(LoadError::TooDeep {
                path: path.to_path_buf(),
                document: document.max(1),
                source,
            });
        }
        lines_before += chunk.matches('\n').count();
    }
    Ok(())
}

/// serde_norway puts " at line L column C" in its message; we print the location ourselves,
/// so it is taken out, and the context after it (", while parsing a flow sequence at line 6
/// column 8") kept.
fn yaml_message(err: &serde_norway::Error) -> String {
    let message = err.to_string();
    let Some(location) = err.location() else {
        return message;
    };
    let at = format!(" at line {} column {}", location.line(), location.column());
    match message.find(&at) {
        Some(i) => format!("{}{}", &message[..i], &message[i + at.len()..]),
        None => message,
    }
}

fn add_document(
    path: &Path,
    document: usize,
    value: Value,
    sink: &mut Sink<'_>,
) -> Result<(), LoadError> {
    let found = match &value {
        Value::Object(_) => None,
        Value::Null => return Ok(()),
        Value::Bool(_) => Some("a boolean"),
        Value::Number(_) => Some("a number"),
        Value::String(_) => Some("a string"),
        Value::Array(_) => Some("a sequence"),
    };
    if let Some(found) = found {
        return Err(LoadError::NotAnObject {
            path: path.to_path_buf(),
            document,
            found,
        });
    }
    let what = format!("{}: document {document}", path.display());
    sink(value, &what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inventory
  namespace: apps
spec:
  selector:
    matchLabels: {app: inventory}
  template:
    metadata:
      labels: {app: inventory}
    spec:
      containers:
      - name: app
        image: ghcr.io/acme/inventory:1.4.0
"#;

    fn pod(name: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: apps\n  labels: {{app: inventory}}\nspec:\n  containers:\n  - name: app\n    image: ghcr.io/acme/inventory:1.4.0\n"
        )
    }

    fn write(dir: &Path, rel: &str, text: &[u8]) -> PathBuf {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn reads_multi_document_yaml_skipping_empty_documents() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = format!("---\n{DEPLOYMENT}---\n---\n{}\n---\n", pod("inventory-1"));
        let file = write(dir.path(), "apps.yaml", text.as_bytes());
        let observed = load(&file).expect("loads");
        assert_eq!(
            observed
                .workloads
                .of::<k8s_openapi::api::apps::v1::Deployment>()
                .len(),
            1
        );
        assert_eq!(observed.pods.len(), 1);
        assert_eq!(
            observed.pods[0].metadata.name.as_deref(),
            Some("inventory-1")
        );
        assert!(observed.complete.is_empty(), "a dump is never complete");
    }

    #[test]
    fn helm_and_gitops_objects_land_raw_in_others() {
        use liveproof_evidence::ResourceKind;
        let dir = tempfile::tempdir().expect("tempdir");
        let secret = liveproof_helm::encode_secret(&serde_json::json!({
            "name": "inventory", "namespace": "flux", "version": 3,
            "info": {"status": "deployed"}, "manifest": ""
        }));
        let text = format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: inventory\n  namespace: flux\n\
             spec:\n  chart:\n    spec:\n      chart: ./charts/inventory\n      sourceRef: {{kind: GitRepository, name: platform}}\n\
             ---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: platform\n  namespace: flux\n\
             ---\n{}\n",
            serde_json::to_string(&secret).expect("json is yaml")
        );
        let file = write(dir.path(), "flux.yaml", text.as_bytes());
        let observed = load(&file).expect("loads");
        assert_eq!(observed.others.len(), 3);
        assert!(observed
            .find_other(ResourceKind::HelmRelease, "flux", "inventory")
            .is_some());
        assert!(observed
            .find_other(ResourceKind::GitRepository, "flux", "platform")
            .is_some());
        assert!(observed
            .find_other(
                ResourceKind::Secret,
                "flux",
                "sh.helm.release.v1.inventory.v3"
            )
            .is_some());
        assert!(observed.complete.is_empty(), "a dump is never complete");
    }

    #[test]
    fn reads_lists_json_and_nested_directories_in_sorted_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let list = serde_json::json!({
            "apiVersion": "v1", "kind": "List",
            "items": [
                serde_norway::from_str::<Value>(&pod("b-pod")).expect("yaml"),
                serde_norway::from_str::<Value>(&pod("a-pod")).expect("yaml"),
            ]
        });
        write(dir.path(), "z/pods.json", list.to_string().as_bytes());
        write(dir.path(), "a/deep/er/deploy.yml", DEPLOYMENT.as_bytes());
        let pod_list = format!(
            "apiVersion: v1\nkind: PodList\nitems:\n- {}",
            pod("c-pod").trim_end().replace('\n', "\n  ")
        );
        write(dir.path(), "m/podlist.YAML", pod_list.as_bytes());
        write(dir.path(), "notes.txt", b"not: [a manifest");
        write(dir.path(), "README.md", b"# hi");
        let observed = load(dir.path()).expect("loads");
        assert_eq!(
            observed
                .workloads
                .of::<k8s_openapi::api::apps::v1::Deployment>()
                .len(),
            1
        );
        let names: Vec<_> = observed
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        // m/ before z/; within the list, its own order.
        assert_eq!(names, ["c-pod", "b-pod", "a-pod"]);
    }

    /// Issue 32, point 5: every pod of a dump kept as a typed object took 1 GB for 200,000
    /// pods. Only those something in the dump selects (in any file, before or after them) or
    /// routes to are kept; a broken pod is refused all the same.
    #[test]
    fn only_the_pods_something_selects_or_routes_to_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let stray = |name: &str| pod(name).replace("app: inventory", "app: batch");
        let service = "apiVersion: v1\nkind: Service\nmetadata: {name: batch, namespace: apps}\n\
                       spec: {selector: {app: batch, tier: cron}}\n";
        let slice = "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
                     metadata: {name: web-x, namespace: apps}\naddressType: IPv4\n\
                     endpoints:\n- addresses: [10.0.0.9]\n  targetRef: {kind: Pod, name: routed, namespace: apps}\n";
        write(
            dir.path(),
            "a-pods.yaml",
            format!(
                "{}---\n{}---\n{}",
                pod("selected"),
                stray("stray"),
                stray("routed")
            )
            .as_bytes(),
        );
        write(
            dir.path(),
            "b-rest.yaml",
            format!("{DEPLOYMENT}---\n{service}---\n{slice}").as_bytes(),
        );
        let observed = load(dir.path()).expect("loads");
        let names: Vec<_> = observed
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        assert_eq!(names, ["selected", "routed"]);
        // A pod nothing selects is still read as every object is: a broken one is refused.
        write(
            dir.path(),
            "c-broken.yaml",
            b"apiVersion: v1\nkind: Pod\nmetadata: {namespace: apps}\nspec: {containers: []}\n",
        );
        let err = load(dir.path()).expect_err("a pod without a name");
        assert!(err.to_string().contains("c-broken.yaml"), "{err}");
    }

    #[test]
    fn read_objects_gives_the_objects_load_reads_lists_flattened() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "a.yaml",
            format!("{DEPLOYMENT}---\n{}", pod("p")).as_bytes(),
        );
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "apps"}},
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "apps"}},
        ]});
        write(dir.path(), "b.json", list.to_string().as_bytes());
        let objects = read_objects(dir.path()).expect("objects");
        let kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
        assert_eq!(kinds, ["Deployment", "Pod", "ConfigMap", "Secret"]);

        // The same files, the same errors as `load`: here, a document that is no object.
        write(
            dir.path(),
            "c.yaml",
            b"apiVersion: v1\nmetadata: {name: x}\n",
        );
        let err = read_objects(dir.path()).expect_err("no kind");
        assert!(err.to_string().contains("c.yaml: document 1"), "{err}");
        let err = load(dir.path()).expect_err("no kind");
        assert!(err.to_string().contains("c.yaml: document 1"), "{err}");
    }

    #[test]
    fn errors_name_the_file_and_the_document() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = format!(
            "{DEPLOYMENT}---\n{}---\nkind: Pod\nmetadata: [unclosed\n",
            pod("p")
        );
        let file = write(dir.path(), "apps.yaml", text.as_bytes());
        let err = load(&file).expect_err("invalid YAML");
        let msg = err.to_string();
        assert!(
            msg.contains("apps.yaml: document 3: invalid YAML at line"),
            "{msg}"
        );
        assert!(
            matches!(err, LoadError::Yaml { document: 3, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn never_panics_on_bad_input() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cases: &[(&str, &[u8], &str)] = &[
            ("garbage.yaml", &[0xff, 0xfe, 0x00, 0x9c, 0x80], "not UTF-8"),
            ("ascii-garbage.yaml", b"\t\t:::- ]]] {{ !!binary", "document 1"),
            (
                "truncated.yaml",
                b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"inv",
                "document 1: invalid YAML",
            ),
            ("scalar.yaml", b"just a string\n", "found a string"),
            ("seq.yaml", b"- a\n- b\n", "found a sequence"),
            ("nokind.yaml", b"metadata: {name: x}\n", "no `kind`"),
            (
                "wrong-field-type.yaml",
                b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: three, selector: {}, template: {}}\n",
                "wrong-field-type.yaml: document 1: Deployment/web: not a valid Deployment",
            ),
            (
                "wrong-type.yaml",
                b"apiVersion: v1\nkind: Pod\nmetadata: {name: [1]}\n",
                "not a valid Pod",
            ),
            (
                "truncated.json",
                b"{\"kind\": \"Pod\", ",
                "invalid JSON: it ends early at line 1",
            ),
            ("number.json", b"42", "found a number"),
            ("nonstring-key.yaml", b"kind: Pod\n? [a, b]\n: c\n", "document 1"),
            (
                "bad-list.yaml",
                b"kind: List\nitems:\n- metadata: {name: d}\n",
                "items[0]",
            ),
        ];
        for (name, bytes, expect) in cases {
            let file = write(dir.path(), name, bytes);
            let err = load(&file).expect_err(name);
            let msg = err.to_string();
            assert!(msg.contains(expect), "{name}: {msg}");
            assert!(
                msg.contains(name),
                "{name}: error does not name the file: {msg}"
            );
        }
        // k8s-openapi would default missing required fields into a quietly wrong workload:
        // the loader refuses it instead, naming the field.
        let file = write(
            dir.path(),
            "missing-fields.yaml",
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n",
        );
        let msg = load(&file).expect_err("refused").to_string();
        assert!(
            msg.contains("Deployment/web") && msg.contains("spec.selector"),
            "{msg}"
        );
        // A List whose `items` is not a sequence holds nothing, without error.
        let file = write(dir.path(), "odd-list.yaml", b"kind: List\nitems: 3\n");
        assert!(load(&file).expect("loads").pods.is_empty());
    }

    /// libyaml scans a whole document before serde_norway's recursion limit applies, in time
    /// growing with the square of the depth for some shapes: a deep file is refused up front.
    /// (No timing assert: the test harness's timeout is what proves there is no hang.)
    #[test]
    fn deeply_nested_files_are_refused_naming_file_document_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = 200_000;
        let flow = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let mapping = format!("{}1{}", "a: {".repeat(n), "}".repeat(n));
        let cases = [
            (
                "flow.yaml",
                format!("{DEPLOYMENT}---\nkind: ConfigMap\nx: {flow}\n"),
                2,
                19,
            ),
            (
                "map.yml",
                format!("---\n{DEPLOYMENT}--- # next\n\nkind: ConfigMap\nx: {mapping}\n"),
                2,
                21,
            ),
            (
                "deep.json",
                format!("{{\"kind\": \"ConfigMap\",\n\"x\": {flow}}}"),
                1,
                2,
            ),
        ];
        for (name, text, document, line) in cases {
            let file = write(dir.path(), name, text.as_bytes());
            let err = load(&file).expect_err(name);
            let msg = err.to_string();
            assert!(
                matches!(err, LoadError::TooDeep { document: d, .. } if d == document),
                "{name}: {msg}"
            );
            assert!(
                msg.contains(&format!(
                    "{name}: document {document}: nested deeper than 128 levels (line {line})"
                )),
                "{name}: {msg}"
            );
        }
        // serde_json's own limit also refuses deep JSON, quickly and cleanly.
        assert!(serde_json::from_str::<Value>(&flow)
            .expect_err("too deep")
            .to_string()
            .contains("recursion limit exceeded"));
    }

    #[test]
    fn missing_paths_and_empty_directories_are_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = load(&dir.path().join("nope")).expect_err("missing");
        assert!(matches!(err, LoadError::NotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("nope: no such file"), "{err}");
        write(dir.path(), "only/notes.txt", b"hello");
        let err = load(dir.path()).expect_err("no manifests");
        assert!(matches!(err, LoadError::NoManifests { .. }), "{err:?}");
        assert!(
            err.hint().is_some_and(|h| h.contains("kubectl get")),
            "{err}"
        );
    }
}
