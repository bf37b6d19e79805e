//! The installed manifest as it may be shown: what `helm get manifest` prints, minus the
//! secrets (rendered Secrets' data redacted, and in every document the values that look like
//! credentials, as [`liveproof_redacted::credential`] classifies them). Decoding's safe view of
//! a release's manifest, fed straight from storage ([`crate::write_stored_manifest`]); how
//! `release show` lays its sections out is the report crate's.

use std::fmt;
use std::io::{self, Write as _};

use liveproof_redacted::credential;
use serde_norway::Value as Yaml;

use crate::release::Release;
use crate::values::REDACTED;
use crate::yaml::{is_document_start, plain_kind, read_documents};

/// The installed manifest as `helm get manifest` prints it, except that whatever cannot be
/// proven not to be a Secret is redacted: a rendered Secret's `data` and `stringData` values are
/// replaced by `<redacted>` (that document is re-serialized; its `# Source:` line is kept), so
/// are those of a `*List`'s Secret items and of any object whose `kind` is not a plain string,
/// and a document that does not parse is replaced whole by a one-line note saying why.
/// In every other document, values that look like credentials are redacted the same way: a
/// value under a key named like a secret (or an env entry so named) whole, a URL's password or
/// a `password=…` inside a longer text as `***`.
///
/// A document whose text alone shows a top-level `kind` that is neither a Secret nor a list
/// (plain block YAML with one plain `kind: Word` line, and nothing that could hide another),
/// and that holds nothing a credential could be ([`credential::may_hold_credential`]), is
/// printed as rendered without being parsed: a large release's thousands of documents are not
/// parsed to print them. Such a document that YAML would refuse further in (a duplicate nested
/// key, say) is therefore printed as rendered too, as `helm get manifest` prints it (with what
/// looks like a credential in its text masked, when it has any).
pub fn manifest(r: &Release) -> String {
    manifest_and_credentials(r).0
}

/// [`manifest`], and the values it redacted as looking like credentials (Secret data is not
/// listed: a Secret's values are all redacted).
pub fn manifest_and_credentials(r: &Release) -> (String, Vec<CredentialField>) {
    let mut out = Vec::new();
    let mut writer = ManifestWriter::new(&mut out);
    // Writing into a Vec cannot fail, and every piece written is a `str`.
    let credentials = writer
        .push(&r.manifest)
        .and_then(|()| writer.finish_listing())
        .unwrap_or_default();
    let text = String::from_utf8(out)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
    (text, credentials)
}

/// A value of a rendered document that [`manifest`] redacted because it looks like a
/// credential: where it is, never what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialField {
    /// 1-based position among the manifest's non-blank documents.
    pub document: usize,
    /// The object's kind and name, when the document could be read.
    pub object: Option<(String, String)>,
    /// The field's path in the object (`.data.DATABASE_URL`); `None` when the document could
    /// not be parsed and its text was masked.
    pub field: Option<String>,
}

impl fmt::Display for CredentialField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.object {
            Some((kind, name)) if name.is_empty() => write!(f, "{kind}")?,
            Some((kind, name)) => write!(f, "{kind}/{name}")?,
            None => write!(f, "document {}", self.document)?,
        }
        match &self.field {
            Some(field) => write!(f, " {field}"),
            None => write!(f, " (its text)"),
        }
    }
}

/// [`manifest`], written to `out` as it goes: what is printed as rendered is written straight
/// from the release, a document at a time, never copied into one more string.
pub fn write_manifest(r: &Release, out: &mut dyn io::Write) -> io::Result<()> {
    let mut writer = ManifestWriter::new(out);
    writer.push(&r.manifest)?;
    writer.finish()
}

/// [`write_manifest`] fed the manifest's text a piece at a time, as it is decoded: each document
/// is judged and written once it is whole, so only the document being read is held.
pub struct ManifestWriter<'a> {
    out: LastByte<'a>,
    /// What is not written yet: from `consumed` on, the document being read (after the first,
    /// from its `---` line).
    pending: String,
    consumed: usize,
    /// Where in `pending` the search for the next document's `---` resumes.
    searched: usize,
    /// The document being read is the manifest's first (no `---` line before it).
    first: bool,
    /// Non-blank documents so far.
    number: usize,
    /// What was redacted so far as looking like a credential.
    credentials: Vec<CredentialField>,
}

/// What the search for the next document's start found.
enum Start {
    /// A `---` line starts the next document here.
    At(usize),
    /// None yet.
    Later,
}

impl<'a> ManifestWriter<'a> {
    pub fn new(out: &'a mut dyn io::Write) -> Self {
        ManifestWriter {
            out: LastByte::new(out),
            pending: String::new(),
            consumed: 0,
            searched: 0,
            first: true,
            number: 0,
            credentials: Vec::new(),
        }
    }

    /// The next piece of the manifest's text; writes every document it completes.
    pub fn push(&mut self, text: &str) -> io::Result<()> {
        self.pending.push_str(text);
        while let Start::At(end) = self.next_start(false) {
            self.document(end)?;
        }
        // Once per piece, not per document: what is left is one document's beginning.
        self.pending.drain(..self.consumed);
        self.searched -= self.consumed;
        self.consumed = 0;
        Ok(())
    }

    /// The manifest has ended: writes its last documents, and a final newline if it lacks one.
    pub fn finish(self) -> io::Result<()> {
        self.finish_listing().map(drop)
    }

    /// [`ManifestWriter::finish`], returning the values redacted as looking like credentials.
    pub fn finish_listing(mut self) -> io::Result<Vec<CredentialField>> {
        while let Start::At(end) = self.next_start(true) {
            self.document(end)?;
        }
        self.document(self.pending.len())?;
        if self.out.last.is_some_and(|byte| byte != b'\n') {
            self.out.write_all(b"\n")?;
        }
        Ok(self.credentials)
    }

    /// Where the next document starts: at a `---` line, as [`crate::yaml::split_documents`]
    /// splits (the same rule, [`is_document_start`]).
    fn next_start(&mut self, at_end: bool) -> Start {
        let text = self.pending.as_bytes();
        // The manifest's first line can be a `---` too; later ones follow a newline.
        let first_line =
            (self.first && self.searched == 0 && text.starts_with(b"---")).then_some(0);
        let from = self.searched;
        let lines = first_line.into_iter().chain(
            memchr::memmem::find_iter(&text[from..], b"\n---").map(|newline| from + newline + 1),
        );
        for line in lines {
            // `---` at the end of what came so far: the next piece says what it is.
            if line + 3 == text.len() && !at_end {
                self.searched = line.saturating_sub(1).max(self.consumed);
                return Start::Later;
            }
            if is_document_start(&self.pending[line..]) {
                self.searched = line + 3;
                return Start::At(line);
            }
        }
        // A `\n--` at the end may yet become a `\n---`.
        self.searched = text.len().saturating_sub(3).max(self.searched);
        Start::Later
    }

    /// Writes the document being read, which ends at `end` of `pending`.
    fn document(&mut self, end: usize) -> io::Result<()> {
        let text = &self.pending[self.consumed..end];
        let first = std::mem::replace(&mut self.first, false);
        self.consumed = end;
        // After the first, a document's text follows its `---`, which it is printed with.
        let chunk = if first { text } else { &text[3..] };
        let blank = chunk.trim().is_empty();
        if blank && first {
            return Ok(());
        }
        if !blank {
            self.number += 1;
        }
        // Most documents say plainly what they are; only the others need a parser to tell.
        let plain = plainly_not_a_secret(chunk);
        let replaced = if blank || (plain && !credential::may_hold_credential(chunk)) {
            None
        } else {
            replacement(chunk, self.number, plain, &mut self.credentials)
        };
        match replaced {
            None => self.out.write_all(text.as_bytes()),
            Some(replaced) => self.out.write_all(replaced.as_bytes()),
        }
    }
}

/// What replaces document `number` (its text `chunk`; `plain`: its text shows it is no Secret):
/// the note saying why it is not shown, the Secret it holds (or may) with its data redacted,
/// or the document with what looks like a credential redacted (listed in `credentials`);
/// `None` when it is printed as rendered.
fn replacement(
    chunk: &str,
    number: usize,
    plain: bool,
    credentials: &mut Vec<CredentialField>,
) -> Option<String> {
    match read_documents(chunk) {
        // Plainly no Secret, but YAML refuses it: printed as rendered, its credentials masked
        // in the text.
        Err(_) if plain => match credential::mask_credentials(chunk) {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(masked) => {
                credentials.push(CredentialField {
                    document: number,
                    object: None,
                    field: None,
                });
                // After its `---` (printed with it) as when printed as rendered.
                let separated = masked.starts_with([' ', '\t', '\n', '\r']);
                Some(format!("---{}{masked}", if separated { "" } else { "\n" }))
            }
        },
        // Never its text: it could be a Secret the parser could not show us.
        Err(reason) => Some(format!(
            "---\n# liveproof: document {number} not shown (it could hold a Secret): {reason}\n"
        )),
        Ok(values) => redacted(
            chunk.trim_matches(['\n', '\r']),
            values,
            number,
            credentials,
        )
        .map(|redacted| format!("---\n{redacted}")),
    }
}

/// Passes writes on, remembering the last byte written (so a section or a manifest can end in
/// exactly one newline).
pub struct LastByte<'a> {
    out: &'a mut dyn io::Write,
    last: Option<u8>,
}

impl<'a> LastByte<'a> {
    pub fn new(out: &'a mut dyn io::Write) -> Self {
        LastByte { out, last: None }
    }

    /// The last byte written; `None` before anything is.
    pub fn last(&self) -> Option<u8> {
        self.last
    }
}

impl io::Write for LastByte<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.out.write(buf)?;
        if let Some(&byte) = buf[..written].last() {
            self.last = Some(byte);
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The chunk's text shows a top-level kind that is neither a Secret nor a list of objects.
fn plainly_not_a_secret(chunk: &str) -> bool {
    plain_kind(chunk).is_some_and(|kind| {
        !kind.eq_ignore_ascii_case("Secret") && !kind.to_ascii_lowercase().ends_with("list")
    })
}

/// `Some(text)` when the chunk holds a Secret (or may), re-serialized with its data redacted,
/// or holds values that look like credentials, re-serialized with those redacted (each listed
/// in `credentials`); `None` when it can be printed as rendered.
fn redacted(
    document: &str,
    mut values: Vec<Yaml>,
    number: usize,
    credentials: &mut Vec<CredentialField>,
) -> Option<String> {
    let mut changed = false;
    let mut has_secret = false;
    let mut found = Vec::new();
    for value in &mut values {
        // Kubernetes' YAML reader applies `<<` merge keys, so a Secret's data can come from one.
        if value.apply_merge().is_err() {
            *value = Yaml::String(REDACTED.to_owned());
            changed = true;
            continue;
        }
        has_secret |= is_secret(value);
        changed |= redact(value);
        redact_credentials(value, number, &mut found);
    }
    if !changed && !has_secret && found.is_empty() {
        return None;
    }
    let mut out = String::new();
    for line in document.lines().map(str::trim_start) {
        if line.starts_with("# Source:") {
            out.push_str(line);
            out.push('\n');
        }
    }
    if changed {
        out.push_str("# Secret data redacted by liveproof\n");
    }
    if !found.is_empty() {
        out.push_str("# values that look like credentials redacted by liveproof\n");
    }
    credentials.extend(found);
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        // A parsed Value always serializes; the fallback hides the document rather than leak it.
        out.push_str(&serde_norway::to_string(value).unwrap_or_else(|_| format!("{REDACTED}\n")));
    }
    Some(out)
}

fn kind_of(value: &Yaml) -> Option<&str> {
    value.get("kind").and_then(Yaml::as_str)
}

fn is_secret(value: &Yaml) -> bool {
    kind_of(value).is_some_and(|kind| kind.eq_ignore_ascii_case("Secret"))
}

/// Redacts, in place, the Secret data of `value` and of every object it lists. True when
/// something was replaced. An object is treated as a Secret unless its `kind` is a plain string
/// naming something else.
fn redact(value: &mut Yaml) -> bool {
    match value {
        Yaml::Sequence(items) => items.iter_mut().fold(false, |acc, item| redact(item) | acc),
        Yaml::Tagged(tagged) => redact(&mut tagged.value),
        Yaml::Mapping(_) => {
            let kind = kind_of(value).map(str::to_owned);
            match kind {
                Some(kind) if crate::yaml::is_list_kind(&kind) => match value.get_mut("items") {
                    Some(items) => redact(items),
                    None => false,
                },
                Some(kind) if !kind.eq_ignore_ascii_case("Secret") => false,
                _ => redact_secret(value),
            }
        }
        _ => false,
    }
}

fn redact_secret(secret: &mut Yaml) -> bool {
    let mut changed = false;
    for field in ["data", "stringData"] {
        match secret.get_mut(field) {
            Some(Yaml::Mapping(map)) => {
                for (_, entry) in map.iter_mut() {
                    *entry = Yaml::String(REDACTED.to_owned());
                    changed = true;
                }
            }
            Some(Yaml::Null) | None => {}
            Some(other) => {
                *other = Yaml::String(REDACTED.to_owned());
                changed = true;
            }
        }
    }
    // `kubectl apply` keeps the whole object, data included, in this annotation.
    let applied = secret
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(|a| a.get_mut("kubectl.kubernetes.io/last-applied-configuration"));
    if let Some(applied) = applied {
        *applied = Yaml::String(REDACTED.to_owned());
        changed = true;
    }
    changed
}

/// Redacts, in place, what looks like a credential in `value` (a document: an object, or a
/// list of them), listing each redacted field in `found`.
fn redact_credentials(value: &mut Yaml, number: usize, found: &mut Vec<CredentialField>) {
    let is_list = kind_of(value).is_some_and(crate::yaml::is_list_kind);
    let objects: Vec<&mut Yaml> = match value.get_mut("items") {
        Some(Yaml::Sequence(items)) if is_list => items.iter_mut().collect(),
        _ => vec![value],
    };
    for object in objects {
        let kind = kind_of(object).unwrap_or_default().to_owned();
        let name = object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Yaml::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut fields = Vec::new();
        walk(object, None, String::new(), &mut fields);
        found.extend(fields.into_iter().map(|field| CredentialField {
            document: number,
            object: Some((kind.clone(), name.clone())),
            field: Some(field),
        }));
    }
}

/// One node of [`redact_credentials`]'s walk, found under `key` at `path`.
fn walk(value: &mut Yaml, key: Option<&str>, path: String, out: &mut Vec<String>) {
    match value {
        Yaml::String(text) => {
            // `kubectl apply` copies the whole object, as JSON, into this annotation.
            if key == Some("kubectl.kubernetes.io/last-applied-configuration") {
                let applied = serde_json::from_str::<serde_json::Value>(text).map(|mut json| {
                    let redacted = credential::redact_json(&mut json, "");
                    (json, redacted)
                });
                match applied {
                    Ok((_, redacted)) if redacted.is_empty() => {}
                    Ok((json, _)) => {
                        *text = json.to_string();
                        out.push(path);
                    }
                    Err(_) => {
                        if credential::may_hold_credential(text) {
                            *value = Yaml::String(REDACTED.to_owned());
                            out.push(path);
                        }
                    }
                }
                return;
            }
            match credential::shown(key, text) {
                credential::Shown::AsIs => {}
                credential::Shown::Whole => {
                    *value = Yaml::String(REDACTED.to_owned());
                    out.push(path);
                }
                credential::Shown::Masked(masked) => {
                    *text = masked;
                    out.push(path);
                }
            }
        }
        Yaml::Number(_) => {
            if key.is_some_and(credential::is_secret_key) {
                *value = Yaml::String(REDACTED.to_owned());
                out.push(path);
            }
        }
        Yaml::Sequence(items) => {
            let mut after_flag = false;
            for (i, item) in items.iter_mut().enumerate() {
                let at = format!("{path}[{i}]");
                let flag = item.as_str().is_some_and(credential::is_secret_flag);
                if after_flag && item.is_string() {
                    *item = Yaml::String(REDACTED.to_owned());
                    out.push(at);
                } else {
                    walk(item, None, at, out);
                }
                after_flag = flag;
            }
        }
        Yaml::Mapping(map) => {
            let name = map
                .get("name")
                .or_else(|| map.get("key"))
                .and_then(Yaml::as_str)
                .map(str::to_owned);
            for (k, v) in map.iter_mut() {
                let Some(k) = k.as_str() else {
                    walk(v, None, format!("{path}[?]"), out);
                    continue;
                };
                let under = credential::effective_key(k, name.as_deref()).to_owned();
                walk(
                    v,
                    Some(&under),
                    format!("{path}{}", credential::field(k)),
                    out,
                );
            }
        }
        Yaml::Tagged(tagged) => walk(&mut tagged.value, key, path, out),
        Yaml::Bool(_) | Yaml::Null => {}
    }
}
