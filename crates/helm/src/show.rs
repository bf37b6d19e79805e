//! The installed manifest as it may be shown: what `helm get manifest` prints, minus the
//! secrets (rendered Secrets' data redacted). Decoding's safe view of a release's manifest, fed
//! straight from storage ([`crate::write_stored_manifest`]); how `release show` lays its
//! sections out is the report crate's.

use std::io::{self, Write as _};

use serde_norway::Value as Yaml;

use crate::release::Release;
use crate::values::REDACTED;
use crate::yaml::{is_document_start, plain_kind, read_documents};

/// The installed manifest as `helm get manifest` prints it, except that whatever cannot be
/// proven not to be a Secret is redacted: a rendered Secret's `data` and `stringData` values are
/// replaced by `<redacted>` (that document is re-serialized; its `# Source:` line is kept), so
/// are those of a `*List`'s Secret items and of any object whose `kind` is not a plain string,
/// and a document that does not parse is replaced whole by a one-line note saying why.
///
/// A document whose text alone shows a top-level `kind` that is neither a Secret nor a list
/// (plain block YAML with one plain `kind: Word` line, and nothing that could hide another) is
/// printed as rendered without being parsed: a large release's thousands of documents are not
/// parsed to print them. Such a document that YAML would refuse further in (a duplicate nested
/// key, say) is therefore printed as rendered too, as `helm get manifest` prints it.
pub fn manifest(r: &Release) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail, and every piece written is a `str`.
    let _ = write_manifest(r, &mut out);
    String::from_utf8(out)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
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
    pub fn finish(mut self) -> io::Result<()> {
        while let Start::At(end) = self.next_start(true) {
            self.document(end)?;
        }
        self.document(self.pending.len())?;
        if self.out.last.is_some_and(|byte| byte != b'\n') {
            self.out.write_all(b"\n")?;
        }
        Ok(())
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
        let replaced = if blank || plainly_not_a_secret(chunk) {
            None
        } else {
            replacement(chunk, self.number)
        };
        match replaced {
            None => self.out.write_all(text.as_bytes()),
            Some(replaced) => self.out.write_all(replaced.as_bytes()),
        }
    }
}

/// What replaces document `number` (its text `chunk`): the note saying why it is not shown, or
/// the Secret it holds (or may) with its data redacted; `None` when it is printed as rendered.
fn replacement(chunk: &str, number: usize) -> Option<String> {
    match read_documents(chunk) {
        // Never its text: it could be a Secret the parser could not show us.
        Err(reason) => Some(format!(
            "---\n# liveproof: document {number} not shown (it could hold a Secret): {reason}\n"
        )),
        Ok(values) => redacted(chunk.trim_matches(['\n', '\r']), values)
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

/// `Some(text)` when the chunk holds a Secret (or may), re-serialized with its data redacted;
/// `None` when it can be printed as rendered.
fn redacted(document: &str, mut values: Vec<Yaml>) -> Option<String> {
    let mut changed = false;
    let mut has_secret = false;
    for value in &mut values {
        // Kubernetes' YAML reader applies `<<` merge keys, so a Secret's data can come from one.
        if value.apply_merge().is_err() {
            *value = Yaml::String(REDACTED.to_owned());
            changed = true;
            continue;
        }
        has_secret |= is_secret(value);
        changed |= redact(value);
    }
    if !changed && !has_secret {
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
