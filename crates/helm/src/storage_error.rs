//! What reading a stored release is about, shared by the objects (`storage.rs`) and the
//! decoding of their payload (`payload.rs`): the driver that stored it, the parts to read, and
//! why it could not be read (with the words that say where the release JSON is wrong without
//! quoting it). A leaf: it imports neither of them.

use std::fmt;

/// The kind of object Helm's storage driver keeps a release in (`HELM_DRIVER=secret` or
/// `configmap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StorageDriver {
    Secret,
    ConfigMap,
}

impl StorageDriver {
    pub fn kind(self) -> &'static str {
        match self {
            Self::Secret => "Secret",
            Self::ConfigMap => "ConfigMap",
        }
    }
}

impl fmt::Display for StorageDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind())
    }
}

/// Which base64 layer of a Secret failed to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base64Layer {
    /// The encoding of every Secret `data` value.
    Kubernetes,
    /// Helm's own encoding of the (gzipped) release, the only layer in a ConfigMap.
    Helm,
}

impl fmt::Display for Base64Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Kubernetes => "Kubernetes",
            Self::Helm => "Helm",
        })
    }
}

/// Why a storage object could not be read as a release. Every message starts with the object.
/// None of them quote the payload: it may hold values or rendered Secrets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    #[error("{object}: not Helm release storage: {reason}")]
    NotReleaseStorage { object: String, reason: String },

    #[error("{object}: {detail}")]
    MissingData { object: String, detail: String },

    #[error(
        "{object}: data.release is {size} bytes, over the {limit}-byte limit; \
         hint: the API server stores at most 1 MiB per Secret or ConfigMap, so check where this object came from"
    )]
    TooLarge {
        object: String,
        size: usize,
        limit: usize,
    },

    #[error("{object}: data.release is not valid base64 ({layer} layer): {problem}")]
    Base64 {
        object: String,
        layer: Base64Layer,
        /// Where and what, never the offending byte (base64's own message quotes it).
        problem: String,
    },

    #[error(
        "{object}: the release is truncated or corrupt gzip; \
         hint: compare with `kubectl get` of the object, a copy may have been cut short"
    )]
    Gzip {
        object: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{object}: the release decompresses to more than {limit} bytes; refused")]
    DecompressedTooLarge { object: String, limit: usize },

    #[error("{object}: not decoded: the --timeout ran out while inflating it")]
    OutOfTime { object: String },

    #[error("{object}: the release is not Helm release JSON: {message}")]
    Json {
        object: String,
        /// The field and what is wrong with it, never its value (serde_json's own messages
        /// quote offending strings, and stored strings can be anything).
        message: String,
    },
}

impl DecodeError {
    /// The storage object the error is about, as `NAMESPACE/KIND/NAME`.
    pub fn object(&self) -> &str {
        match self {
            Self::NotReleaseStorage { object, .. }
            | Self::MissingData { object, .. }
            | Self::TooLarge { object, .. }
            | Self::Base64 { object, .. }
            | Self::Gzip { object, .. }
            | Self::DecompressedTooLarge { object, .. }
            | Self::OutOfTime { object }
            | Self::Json { object, .. } => object,
        }
    }
}

/// Which parts of a stored release to read. What is not read is still checked to be JSON, as
/// the storage must be whole, but is neither kept nor checked for its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// Everything [`Release`](crate::Release) holds.
    All,
    /// What `helm history` and `helm get metadata` show: name, namespace, revision, `info` and
    /// the chart's metadata. `manifest`, `config` and `hooks` are left empty.
    Summary,
    /// Everything but the manifest, which is checked to read as a string and left empty: a
    /// command that prints it then streams it with [`write_stored_manifest`](crate::write_stored_manifest), so neither the
    /// release JSON nor the manifest is ever held whole.
    ExceptManifest,
}

/// Where the release JSON is wrong and how, in words that quote nothing stored: serde_json's
/// data errors quote the offending value (`invalid type: string "…"`), so only the field path
/// (cut where it reaches user-chosen keys) and the kind of problem are kept.
pub(crate) fn json_problem(
    inner: &serde_json::Error,
    path: Option<&serde_path_to_error::Path>,
) -> String {
    let field = path.map_or_else(|| ".".to_owned(), field_path);
    json_problem_at(inner, &field)
}

/// [`json_problem`] for the error of reading `field` (e.g. `.manifest`) on its own.
pub(crate) fn json_problem_at(inner: &serde_json::Error, field: &str) -> String {
    let location = format!(" at line {} column {}", inner.line(), inner.column());
    let message = inner.to_string();
    let message = message.strip_suffix(&location).unwrap_or(&message);
    match inner.classify() {
        // Fixed texts (`expected value`, `recursion limit exceeded`, …), never the input.
        serde_json::error::Category::Syntax => {
            format!("not valid JSON: {message}{location}")
        }
        serde_json::error::Category::Eof => {
            format!("the JSON ends early{location} (truncated?)")
        }
        serde_json::error::Category::Io => "the JSON could not be read".to_owned(),
        serde_json::error::Category::Data => {
            let problem = if message == crate::release::NOT_A_TIME {
                crate::release::NOT_A_TIME.to_owned()
            } else {
                liveproof_redacted::parse::data_problem(message)
            };
            format!("`{field}` {problem}")
        }
    }
}

/// The path as far as it names fields of Helm's release record: keys under `config` (or any
/// key we do not know) are the user's and may themselves be secret, so the path stops there.
fn field_path(path: &serde_path_to_error::Path) -> String {
    const FIELDS: [&str; 18] = [
        "name",
        "namespace",
        "version",
        "info",
        "chart",
        "config",
        "manifest",
        "hooks",
        "first_deployed",
        "last_deployed",
        "deleted",
        "status",
        "description",
        "metadata",
        "appVersion",
        "kind",
        "path",
        "events",
    ];
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } if FIELDS.contains(&key.as_str()) => {
                out.push('.');
                out.push_str(key);
                if key == "config" {
                    break;
                }
            }
            _ => break,
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}
