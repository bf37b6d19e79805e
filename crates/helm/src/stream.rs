//! The release JSON read as it is inflated, its manifest handed on a piece at a time: what a
//! command that prints the manifest needs, without holding the release or the manifest whole.
//!
//! [`split_manifest`] copies the JSON into a buffer except the value of its top-level
//! `manifest` string, which it unescapes (with serde_json, a piece at a time, cut where Helm's
//! manifest has a line break) and passes to a sink. The JSON left, with `""` in the manifest's
//! place, is what the usual readers then parse, so every other field is read, and every error
//! is found, as when the release is read whole.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read};

use serde::de::{Deserializer, Visitor};

/// How much of the manifest's escaped text is gathered before it is unescaped.
pub(crate) const PIECE: usize = 64 * 1024;

/// How much is read from the inflating stream at a time: also how far past [`PIECE`] a piece of
/// the manifest can grow before it is cut.
const READ: usize = 16 * 1024;

/// Why [`split_manifest`] stopped.
#[derive(Debug)]
pub(crate) enum SplitError {
    /// Reading the JSON failed (a base64 layer, gzip, a bound).
    Read(io::Error),
    /// The manifest is not a JSON string's text (a bad escape, not UTF-8).
    Manifest(serde_json::Error),
    /// The sink refused a piece.
    Sink(io::Error),
}

/// What [`split_manifest`] leaves.
pub(crate) struct Split {
    /// The JSON read, the manifest's value (if it was streamed) replaced by `""`.
    pub rest: Vec<u8>,
    /// Whether a top-level `manifest` string was taken out of the JSON.
    pub streamed: bool,
}

/// What becomes of the manifest's text.
pub(crate) enum Sink<'s> {
    /// Skipped, as a field that is not read: checked to be JSON string text only.
    Skip,
    /// Checked to read as a string (what [`Sink::To`] would be handed is valid), then dropped.
    Check,
    /// Handed on, unescaped, a piece at a time.
    To(&'s mut dyn FnMut(&str) -> io::Result<()>),
}

/// Reads the release JSON from `json`, handing the text of its top-level `manifest` string to
/// `sink` in order, unescaped, in pieces that end at line ends (or only checking it, see
/// [`Sink`]); every other byte is kept in [`Split::rest`]. A manifest that is not a string (or
/// a second `manifest` key) stays in the rest, where the JSON reader finds it as it would in
/// the whole release.
pub(crate) fn split_manifest(json: &mut dyn Read, mut sink: Sink<'_>) -> Result<Split, SplitError> {
    let mut scanner = Scanner::default();
    let mut buf = vec![0u8; READ];
    loop {
        let read = match json.read(&mut buf) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(SplitError::Read(err)),
        };
        scanner.feed(&buf[..read], &mut sink)?;
    }
    // A manifest string the JSON never closed (its opening quote is the piece's first byte):
    // the JSON reader says where.
    if let Place::Manifest = scanner.place {
        scanner.rest.extend_from_slice(&scanner.piece);
    }
    Ok(Split {
        rest: scanner.rest,
        streamed: scanner.streamed,
    })
}

/// Where the scanner is in the JSON.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Between tokens.
    #[default]
    Structure,
    /// Inside a string other than the manifest.
    String,
    /// Inside the top-level `manifest` string.
    Manifest,
}

/// The longest key worth remembering: only `manifest` is looked for.
const KEY: usize = 8;

#[derive(Default)]
struct Scanner {
    rest: Vec<u8>,
    /// An opening quote and the manifest's escaped text not yet unescaped.
    piece: Vec<u8>,
    /// Where in `piece` to look for a cut next (what is before it has none).
    searched: usize,
    place: Place,
    /// Inside a string, the bytes read so far end in an odd run of backslashes: the next byte
    /// is escaped.
    escaping: bool,
    /// Nesting of objects and arrays.
    depth: usize,
    /// In the top-level object, the next string is a key.
    expect_key: bool,
    /// The top-level key being read, while one is (`None` once longer than [`KEY`] or escaped).
    key: Option<Vec<u8>>,
    /// The key read last was `manifest` and its value has not begun.
    manifest_next: bool,
    /// A manifest string was taken out: a second one is left to the JSON reader.
    streamed: bool,
}

impl Scanner {
    fn feed(&mut self, mut bytes: &[u8], sink: &mut Sink<'_>) -> Result<(), SplitError> {
        while let Some(&byte) = bytes.first() {
            bytes = match self.place {
                Place::Structure => {
                    self.structure(byte);
                    &bytes[1..]
                }
                Place::String => self.string(bytes),
                Place::Manifest => self.manifest(bytes, sink)?,
            };
        }
        Ok(())
    }

    /// One byte between tokens.
    fn structure(&mut self, byte: u8) {
        let top = self.depth == 1;
        if byte == b'"' && top && self.manifest_next && !self.streamed {
            self.place = Place::Manifest;
            self.manifest_next = false;
            // Its opening quote stays with the text, for serde_json to read it as a string.
            self.piece.clear();
            self.piece.push(b'"');
            self.searched = 0;
            return;
        }
        self.rest.push(byte);
        match byte {
            b'"' => {
                self.place = Place::String;
                self.key = (top && self.expect_key).then(Vec::new);
                self.expect_key = false;
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.expect_key = byte == b'{' && self.depth == 1;
                self.manifest_next = false;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                self.manifest_next = false;
            }
            b',' if top => {
                self.expect_key = true;
                self.manifest_next = false;
            }
            b':' if top => {}
            b' ' | b'\t' | b'\n' | b'\r' => {}
            // A value other than a string: not the manifest's to take out.
            _ => self.manifest_next = false,
        }
    }

    /// Inside a string that is kept: up to its end, or all of `bytes`.
    fn string<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        let (taken, closed) = self.through_string(bytes);
        self.rest.extend_from_slice(&bytes[..taken]);
        if let Some(key) = &mut self.key {
            let text = &bytes[..taken - usize::from(closed)];
            if key.len() + text.len() > KEY || text.contains(&b'\\') {
                self.key = None;
            } else {
                key.extend_from_slice(text);
            }
        }
        if closed {
            self.place = Place::Structure;
            // A key is known once it closes; its value follows the `:`.
            self.manifest_next = self.key.take().is_some_and(|key| key == b"manifest");
        }
        &bytes[taken..]
    }

    /// Inside the manifest: its escaped text gathered, and unescaped a piece at a time.
    fn manifest<'b>(
        &mut self,
        bytes: &'b [u8],
        sink: &mut Sink<'_>,
    ) -> Result<&'b [u8], SplitError> {
        let (taken, closed) = self.through_string(bytes);
        self.piece
            .extend_from_slice(&bytes[..taken - usize::from(closed)]);
        if closed {
            self.unescape(self.piece.len(), sink)?;
            self.rest.extend_from_slice(b"\"\"");
            self.place = Place::Structure;
            self.streamed = true;
        } else if self.piece.len() >= PIECE {
            match last_cut(&self.piece, self.searched) {
                Some(at) => self.unescape(at, sink)?,
                // One long line so far: what was searched need not be again.
                None => self.searched = self.piece.len(),
            }
        }
        Ok(&bytes[taken..])
    }

    /// How many of `bytes` belong to the current string, and whether its closing quote is the
    /// last of them. Only a quote can end a string, and only if the run of backslashes before
    /// it (counted across reads) is even: quotes are looked for, not every escape.
    fn through_string(&mut self, bytes: &[u8]) -> (usize, bool) {
        let mut from = 0;
        while let Some(found) = memchr::memchr(b'"', &bytes[from..]) {
            let quote = from + found;
            if !self.escaped_at(bytes, quote) {
                self.escaping = false;
                return (quote + 1, true);
            }
            from = quote + 1;
        }
        self.escaping = self.escaped_at(bytes, bytes.len());
        (bytes.len(), false)
    }

    /// Whether `bytes[at]` (or what comes after `bytes`) is escaped: an odd run of backslashes
    /// before it, with those that ended the previous read when the run starts `bytes`.
    fn escaped_at(&self, bytes: &[u8], at: usize) -> bool {
        let run = backslashes_before(bytes, at);
        let carried = run == at && self.escaping;
        (run % 2 == 1) != carried
    }

    /// Unescapes the manifest's text up to `piece[end]` (all of it when `end` is the piece's
    /// length: the string has closed) into the sink, and drops it from the piece. The piece
    /// starts with a quote, and a quote is put at `end` for the time of reading, so serde_json
    /// reads a JSON string where it lies.
    fn unescape(&mut self, end: usize, sink: &mut Sink<'_>) -> Result<(), SplitError> {
        let closing = end == self.piece.len();
        let saved = if closing {
            self.piece.push(b'"');
            b'"'
        } else {
            std::mem::replace(&mut self.piece[end], b'"')
        };
        let refused = Cell::new(None);
        let text = &self.piece[1..end];
        let mut json = serde_json::Deserializer::from_slice(&self.piece[..=end]);
        let read = match sink {
            Sink::To(sink) => json.deserialize_str(ToSink {
                sink: &mut **sink,
                refused: &refused,
            }),
            // Skipping checks the escapes; reading as a string also wants UTF-8, and refuses
            // an escaped lone surrogate, which only an escape of a surrogate can be.
            Sink::Check if std::str::from_utf8(text).is_ok() && !surrogate_escape(text) => json
                .deserialize_ignored_any(serde::de::IgnoredAny)
                .map(|_| ()),
            Sink::Check => json.deserialize_str(ToSink {
                sink: &mut |_| Ok(()),
                refused: &refused,
            }),
            Sink::Skip => json
                .deserialize_ignored_any(serde::de::IgnoredAny)
                .map(|_| ()),
        };
        if let Some(err) = refused.take() {
            return Err(SplitError::Sink(err));
        }
        read.map_err(SplitError::Manifest)?;
        if closing {
            self.piece.clear();
        } else {
            self.piece[end] = saved;
            self.piece.drain(1..end);
        }
        self.searched = 0;
        Ok(())
    }
}

/// How many backslashes run up to `bytes[at]`: an odd run escapes what is at `at`.
fn backslashes_before(bytes: &[u8], at: usize) -> usize {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|b| **b == b'\\')
        .count()
}

/// Whether the escaped text of a JSON string has a `\u` escape of a UTF-16 surrogate (Go
/// writes none: it writes such characters as they are).
fn surrogate_escape(escaped: &[u8]) -> bool {
    memchr::memmem::find_iter(escaped, b"\\u").any(|at| {
        let run = backslashes_before(escaped, at);
        run.is_multiple_of(2)
            && matches!(escaped.get(at + 2), Some(b'd' | b'D'))
            && matches!(
                escaped.get(at + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    })
}

/// Where, at or after `from`, the escaped text of a JSON string can be cut so both sides read
/// alone: before an escaped newline (see [`last_cut`]).
pub(crate) fn cut(escaped: &[u8], from: usize) -> Option<usize> {
    // From the start of a run of backslashes: only there does counting pairs mean anything.
    let mut at = from;
    while at > 0 && escaped.get(at - 1) == Some(&b'\\') {
        at -= 1;
    }
    loop {
        let backslash = at + memchr::memchr(b'\\', escaped.get(at..)?)?;
        let run = escaped[backslash..]
            .iter()
            .take_while(|b| **b == b'\\')
            .count();
        let after = backslash + run;
        // Not before `from`, so a piece never ends where it began (a run can be long).
        if run % 2 == 1 && escaped.get(after) == Some(&b'n') && after > from {
            return Some(after - 1);
        }
        at = after;
    }
}

/// The last place, after `from`, where the escaped text of a JSON string can be cut so both
/// sides read alone: before an escaped newline (`\n`), which ends every line of a manifest.
/// A backslash escapes what follows it unless it is itself escaped: in a run of them, pairs are
/// escaped backslashes, and only an odd one out escapes the next character. (The text starts
/// at a cut or at the string's start, never inside an escape.)
pub(crate) fn last_cut(escaped: &[u8], from: usize) -> Option<usize> {
    memchr::memrchr_iter(b'n', escaped.get(from..)?)
        .map(|n| from + n)
        .find_map(|n| {
            let run = backslashes_before(escaped, n);
            // Never at 0: a piece is never empty.
            (run % 2 == 1 && n > 1).then(|| n - 1)
        })
}

/// Hands the string serde_json reads to the sink, keeping the sink's error apart from the
/// JSON's.
struct ToSink<'s> {
    sink: &'s mut dyn FnMut(&str) -> io::Result<()>,
    refused: &'s Cell<Option<io::Error>>,
}

impl<'de> Visitor<'de> for ToSink<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<(), E> {
        (self.sink)(text).map_err(|err| {
            self.refused.set(Some(err));
            E::custom("the manifest's reader stopped")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `size` bytes at a time, so every boundary falls everywhere.
    struct Trickle<'a> {
        bytes: &'a [u8],
        size: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.size.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn split_in(json: &str, size: usize) -> (String, String, bool) {
        let mut manifest = String::new();
        let mut sink = |piece: &str| {
            manifest.push_str(piece);
            Ok(())
        };
        let mut reader = Trickle {
            bytes: json.as_bytes(),
            size,
        };
        let split = split_manifest(&mut reader, Sink::To(&mut sink)).expect("splits");
        (
            manifest,
            String::from_utf8(split.rest).expect("text"),
            split.streamed,
        )
    }

    #[test]
    fn the_top_level_manifest_is_streamed_and_the_rest_kept_at_any_read_size() {
        let manifest = "---\nkind: ConfigMap # \"quoted\" \\ é 😀 <a>\n".repeat(3_000);
        let json = serde_json::json!({
            "name": "x",
            "chart": {"manifest": "nested, not it", "values": ["manifest", {"manifest": 1}]},
            "note": "a string with \"manifest\": \"inside\" and a \\",
            "manifest": manifest,
            "version": 3,
        })
        .to_string()
        .replace('<', "\\u003c");
        let mut want_rest: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        want_rest["manifest"] = "".into();
        for size in [1, 2, 3, 7, 64, READ] {
            let (streamed, rest, was) = split_in(&json, size);
            assert!(was);
            assert_eq!(streamed, manifest, "read {size} at a time");
            let rest: serde_json::Value = serde_json::from_str(&rest).expect("the rest is JSON");
            assert_eq!(rest, want_rest);
        }
    }

    #[test]
    fn what_is_not_a_top_level_manifest_string_stays_in_the_rest() {
        for json in [
            r#"{"manifest": null}"#,
            r#"{"manifest": 5}"#,
            r#"{"manif\u0065st": "x"}"#,
            r#"["manifest", "x"]"#,
            r#"{"a": {"manifest": "x"}}"#,
        ] {
            let (streamed, rest, was) = split_in(json, 1);
            assert_eq!((streamed.as_str(), rest.as_str(), was), ("", json, false));
        }
        // A second `manifest` is the JSON reader's to refuse (a duplicate field).
        let (streamed, rest, _) = split_in(r#"{"manifest": "a\n", "manifest": "b"}"#, 1);
        assert_eq!(streamed, "a\n");
        assert_eq!(rest, r#"{"manifest": "", "manifest": "b"}"#);
        // Cut short inside the manifest: the rest ends in an open string, for the reader.
        let (_, rest, _) = split_in(r#"{"manifest": "abc"#, 1);
        assert!(serde_json::from_str::<serde_json::Value>(&rest).is_err());
    }

    #[test]
    fn a_bad_escape_or_a_refusing_sink_stops_the_split() {
        let bad = format!(r#"{{"manifest": "{}\x"}}"#, "a\\n".repeat(PIECE));
        let mut sink = |_: &str| Ok(());
        let err = split_manifest(&mut bad.as_bytes(), Sink::To(&mut sink)).err();
        assert!(matches!(err, Some(SplitError::Manifest(_))), "{err:?}");
        for sink in [Sink::Check, Sink::Skip] {
            let err = split_manifest(&mut bad.as_bytes(), sink).err();
            assert!(matches!(err, Some(SplitError::Manifest(_))), "{err:?}");
        }
        // What only reading it as a string refuses: checking refuses it too, skipping not.
        for text in [r"a\ud800b", r"a\uDFFFb"] {
            let json = format!(r#"{{"manifest": "{text}"}}"#);
            let mut sink = |_: &str| Ok(());
            assert!(split_manifest(&mut json.as_bytes(), Sink::To(&mut sink)).is_err());
            assert!(split_manifest(&mut json.as_bytes(), Sink::Check).is_err());
            assert!(split_manifest(&mut json.as_bytes(), Sink::Skip).is_ok());
        }
        let paired = r#"{"manifest": "\ud83d\ude00 \\ud800 \u003c"}"#;
        assert!(split_manifest(&mut paired.as_bytes(), Sink::Check).is_ok());
        let not_utf8 = b"{\"manifest\": \"a\xff\"}";
        assert!(split_manifest(&mut &not_utf8[..], Sink::Check).is_err());

        let json = format!(r#"{{"manifest": "{}"}}"#, "line\\n".repeat(PIECE));
        let mut refuse = |_: &str| Err(io::Error::from(io::ErrorKind::BrokenPipe));
        let err = split_manifest(&mut json.as_bytes(), Sink::To(&mut refuse)).err();
        assert!(matches!(err, Some(SplitError::Sink(_))), "{err:?}");
    }

    #[test]
    fn the_last_cut_is_before_the_last_escaped_newline() {
        // `\\n` is a backslash and `n`; `\\\n` a backslash and a newline.
        assert_eq!(last_cut(br"a\nb\\nc", 0), Some(1));
        assert_eq!(last_cut(br"a\nb\\\nc", 0), Some(6));
        assert_eq!(last_cut(br"a\nb", 3), None);
        assert_eq!(last_cut(br"\nb", 0), None, "never an empty piece");
        assert_eq!(last_cut(br"no escapes, no n", 0), None);
    }
}
