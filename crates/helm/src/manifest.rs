use std::fmt;

use serde::Deserialize as _;
use serde_yaml::Value as Yaml;

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

/// The text between lines that are exactly `---`, which is how Helm joins rendered templates
/// (`---\n# Source: PATH\nCONTENT\n`). Blank chunks are kept; callers skip them.
pub(crate) fn split_documents(manifest: &str) -> Vec<&str> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in manifest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" {
            documents.push(&manifest[start..offset]);
            start = offset + line.len();
        }
        offset += line.len();
    }
    documents.push(&manifest[start..]);
    documents
}

/// The `# Source:` path of a rendered document, if Helm wrote one.
pub(crate) fn source_of(document: &str) -> Option<String> {
    document
        .lines()
        .find_map(|line| line.strip_prefix("# Source:"))
        .map(|path| path.trim().to_owned())
        .filter(|path| !path.is_empty())
}

/// Parses a document leniently: `None` for blank, comment-only or malformed YAML and non-maps.
pub(crate) fn parse_document(document: &str) -> Option<Yaml> {
    // A chunk may still hold several YAML documents (e.g. `--- # comment` separators); take the
    // first mapping, and give up quietly on malformed input.
    serde_yaml::Deserializer::from_str(document)
        .map_while(|doc| Yaml::deserialize(doc).ok())
        .find(Yaml::is_mapping)
}

/// The objects of a rendered manifest, in order. Blank documents, documents without a `kind`
/// and YAML that does not parse are skipped; a `kind: List` gives its items. Never panics.
pub fn manifest_objects(manifest: &str) -> Vec<ManifestObject> {
    let mut objects = Vec::new();
    for document in split_documents(manifest) {
        if document.trim().is_empty() {
            continue;
        }
        let Some(value) = parse_document(document) else {
            continue;
        };
        let source = source_of(document);
        let text = document.trim_matches(['\n', '\r']).to_owned();
        if str_field(&value, "kind") == Some("List") {
            let items = value.get("items").and_then(Yaml::as_sequence);
            for item in items.into_iter().flatten() {
                let text = serde_yaml::to_string(item).unwrap_or_default();
                objects.extend(object_of(item, source.clone(), text));
            }
        } else {
            objects.extend(object_of(&value, source, text));
        }
    }
    objects
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
