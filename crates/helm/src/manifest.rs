use std::fmt;

use serde_norway::Value as Yaml;

use crate::yaml::{read_documents, split_documents, Unreadable};

/// One object of a release's rendered manifest.
#[derive(Clone, PartialEq)]
pub struct ManifestObject {
    pub api_version: String,
    pub kind: String,
    /// Empty when the template sets none (e.g. only `generateName`).
    pub name: String,
    pub namespace: Option<String>,
    /// The template it came from, from Helm's `# Source: chart/templates/x.yaml` line.
    pub source: Option<String>,
    /// The document as rendered (for a `List` item, that item re-serialized).
    pub text: String,
}

// A rendered Secret's data is in `text`, so Debug gives its size only.
impl fmt::Debug for ManifestObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManifestObject")
            .field("api_version", &self.api_version)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .field("source", &self.source)
            .field("text", &format_args!("<{} bytes>", self.text.len()))
            .finish()
    }
}

/// The `# Source:` path of a rendered document, if Helm wrote one.
pub(crate) fn source_of(document: &str) -> Option<String> {
    document
        .lines()
        .find_map(|line| line.strip_prefix("# Source:"))
        .map(|path| path.trim().to_owned())
        .filter(|path| !path.is_empty())
}

/// What a release's rendered manifest holds: the objects that could be read, and the documents
/// that could not (so a check can say `unknown` instead of judging a partial manifest).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManifestRead {
    pub objects: Vec<ManifestObject>,
    pub unreadable: Vec<UnreadableDocument>,
}

/// A document of the manifest that could not be read. Never holds its text.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableDocument {
    /// 1-based position among the manifest's non-blank `---`-separated documents.
    pub document: usize,
    /// The template it came from, from Helm's `# Source:` line.
    pub source: Option<String>,
    pub reason: Unreadable,
}

impl fmt::Display for UnreadableDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "document {}", self.document)?;
        if let Some(source) = &self.source {
            write!(f, " ({source})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// The objects of a rendered manifest, in order. Blank documents, documents without a `kind`
/// and YAML that does not parse (or is nested past [`crate::yaml::MAX_NESTING`]) are skipped; a
/// `kind: List` gives its items. Never panics. [`read_manifest`] also says what was skipped.
pub fn manifest_objects(manifest: &str) -> Vec<ManifestObject> {
    read_manifest(manifest).objects
}

/// The objects of a rendered manifest and the documents that could not be read.
pub fn read_manifest(manifest: &str) -> ManifestRead {
    read_manifest_until(manifest, None)
}

/// [`read_manifest`], stopping at `deadline`: the first document left then is unreadable
/// ([`Unreadable::OutOfTime`]), so what the rest hold is unknown, never absent.
pub fn read_manifest_until(manifest: &str, deadline: Option<std::time::Instant>) -> ManifestRead {
    let mut read = ManifestRead::default();
    let documents = split_documents(manifest)
        .into_iter()
        .filter(|document| !document.trim().is_empty());
    for (i, document) in documents.enumerate() {
        let source = source_of(document);
        if deadline.is_some_and(|at| std::time::Instant::now() >= at) {
            read.unreadable.push(UnreadableDocument {
                document: i + 1,
                source,
                reason: Unreadable::OutOfTime,
            });
            // One is enough to leave the rest unknown; listing thousands says nothing more.
            break;
        }
        let values = match read_documents(document) {
            Ok(values) => values,
            Err(reason) => {
                read.unreadable.push(UnreadableDocument {
                    document: i + 1,
                    source,
                    reason,
                });
                continue;
            }
        };
        let single = values.len() == 1;
        for value in values {
            let text = if single {
                document.trim_matches(['\n', '\r']).to_owned()
            } else {
                serde_norway::to_string(&value).unwrap_or_default()
            };
            if let Some(items) = list_items(&value) {
                for item in items {
                    let text = serde_norway::to_string(item).unwrap_or_default();
                    read.objects.extend(object_of(item, source.clone(), text));
                }
            } else {
                read.objects.extend(object_of(&value, source.clone(), text));
            }
        }
    }
    read
}

/// The items of a `kind: List` (or any `*List`, e.g. `SecretList`).
pub(crate) fn list_items(value: &Yaml) -> Option<&Vec<Yaml>> {
    let kind = str_field(value, "kind")?;
    if !crate::yaml::is_list_kind(kind) {
        return None;
    }
    value.get("items").and_then(Yaml::as_sequence)
}

fn object_of(value: &Yaml, source: Option<String>, text: String) -> Option<ManifestObject> {
    let kind = str_field(value, "kind").filter(|kind| !kind.is_empty())?;
    let metadata = value.get("metadata");
    let meta = |key: &str| metadata.and_then(|m| str_field(m, key));
    Some(ManifestObject {
        api_version: str_field(value, "apiVersion")
            .unwrap_or_default()
            .to_owned(),
        kind: kind.to_owned(),
        name: meta("name").unwrap_or_default().to_owned(),
        namespace: meta("namespace").map(str::to_owned),
        source,
        text,
    })
}

fn str_field<'a>(value: &'a Yaml, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Yaml::as_str)
}
