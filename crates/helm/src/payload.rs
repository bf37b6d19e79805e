//! The release JSON a storage object's `data.release` holds, decoded as one stream: base64
//! (twice for a Secret) into gunzip into memory, every bound of [`Limits`] applied as the bytes
//! flow, so no base64 layer or compressed copy is ever held whole. The JSON is then read for the
//! parts the caller needs; the manifest, most of a release, is unescaped a piece at a time.

use std::fmt;
use std::io::{self, Cursor, Read};
use std::ops::Range;

use base64::read::DecoderReader;
use flate2::read::MultiGzDecoder;
use serde::de::{Deserialize, Deserializer, Visitor};
use serde_json::value::RawValue;

use crate::release::{Hook, Record, Release, Skipped};
use crate::storage_error::{
    json_problem, json_problem_at, Base64Layer, DecodeError, Parts, StorageDriver,
};
use crate::stream::{cut, split_manifest, Sink, Split, SplitError, PIECE};
use crate::values::Values;
use crate::Limits;

const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Decodes the release `encoded` (a `data.release` value) holds, reading `parts` of it.
pub(crate) fn read_release(
    encoded: &str,
    driver: StorageDriver,
    limits: &Limits,
    object: &str,
    parts: Parts,
) -> Result<Release, DecodeError> {
    let json_error = |message| DecodeError::Json {
        object: object.to_owned(),
        message,
    };
    match parts {
        // Read as it inflates, the manifest checked and dropped: never the whole JSON at once.
        Parts::Summary | Parts::ExceptManifest => {
            // To be shown, the manifest must read as a string; a summary only skips it, as any
            // field it does not read.
            let sink = match parts {
                Parts::ExceptManifest => Sink::Check,
                _ => Sink::Skip,
            };
            let (split, _) = split(encoded, driver, limits, object, sink)?;
            if parts == Parts::Summary {
                return Ok(parse::<Record<Skipped, Skipped, Skipped>>(&split.rest)
                    .map_err(json_error)?
                    .into_release());
            }
            // A manifest left in the JSON is checked here, as the streamed one was.
            let (release, _) = all_but_streamed(&split).map_err(json_error)?;
            Ok(release)
        }
        Parts::All => {
            let json = read_json(encoded, driver, limits, object)?;
            let whole =
                parse::<Record<RawManifest<'_>, Values, Vec<Hook>>>(&json).map_err(json_error)?;
            let span = whole.manifest.0.map(|raw| span_in(&json, raw.get()));
            let mut release = whole.with_manifest(String::new());
            if let Some(span) = span {
                release.manifest = unescape_into(json, span)
                    .map_err(|err| json_error(json_problem_at(&err, ".manifest")))?;
            }
            Ok(release)
        }
    }
}

/// Writes the manifest of the release `encoded` holds to `manifest` as it is decoded, a piece
/// at a time; the release, but for its manifest, is returned. Read with
/// [`Parts::ExceptManifest`] first, the same object cannot fail here but for the deadline or
/// the writer.
pub(crate) fn stream_manifest(
    encoded: &str,
    driver: StorageDriver,
    limits: &Limits,
    object: &str,
    manifest: &mut dyn FnMut(&str) -> io::Result<()>,
) -> Result<Release, StreamError> {
    let json_error = |message| {
        StreamError::Decode(DecodeError::Json {
            object: object.to_owned(),
            message,
        })
    };
    let (split, write_error) =
        split(encoded, driver, limits, object, Sink::To(manifest)).map_err(StreamError::Decode)?;
    if let Some(err) = write_error {
        return Err(StreamError::Write(err));
    }
    let (release, left) = all_but_streamed(&split).map_err(json_error)?;
    if let Some(text) = left {
        // Not streamed (under an escaped key): it was in the JSON left, so it is written whole.
        manifest(&text).map_err(StreamError::Write)?;
    }
    Ok(release)
}

/// The release in what [`split`] left, without its manifest; and the manifest, if it was left
/// in the JSON rather than streamed (not a string, or under a key written with an escape): read
/// as when the release is read whole, so what is wrong with it is said here.
fn all_but_streamed(split: &Split) -> Result<(Release, Option<String>), String> {
    let whole = parse::<Record<RawManifest<'_>, Values, Vec<Hook>>>(&split.rest)?;
    let left = match (split.streamed, whole.manifest.0) {
        (false, Some(raw)) => Some(
            unescape_into(raw.get().as_bytes().to_vec(), 0..raw.get().len())
                .map_err(|err| json_problem_at(&err, ".manifest"))?,
        ),
        _ => None,
    };
    Ok((whole.with_manifest(String::new()), left))
}

/// Why [`stream_manifest`] stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    #[error(transparent)]
    Decode(DecodeError),
    #[error(transparent)]
    Write(io::Error),
}

/// The release JSON of `encoded`, its manifest handed to `sink` (or only checked to be JSON
/// when there is none) and the rest kept; and the sink's own error, apart.
fn split(
    encoded: &str,
    driver: StorageDriver,
    limits: &Limits,
    object: &str,
    sink: Sink<'_>,
) -> Result<(Split, Option<io::Error>), DecodeError> {
    let (mut json, gzipped) = open_json(encoded, driver, limits, object)?;
    match split_manifest(&mut json, sink) {
        Ok(split) => Ok((split, None)),
        Err(SplitError::Read(err)) => Err(refusal(err, object, gzipped)),
        Err(SplitError::Manifest(err)) => Err(DecodeError::Json {
            object: object.to_owned(),
            message: json_problem_at(&err, ".manifest"),
        }),
        Err(SplitError::Sink(err)) => Ok((
            Split {
                rest: Vec::new(),
                streamed: true,
            },
            Some(err),
        )),
    }
}

/// Where `part` (borrowed from `whole`) is in `whole`.
fn span_in(whole: &[u8], part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// The release JSON, decoded from `encoded` and bounded: its size by `max_decompressed`, the
/// time to inflate it by the deadline.
fn read_json(
    encoded: &str,
    driver: StorageDriver,
    limits: &Limits,
    object: &str,
) -> Result<Vec<u8>, DecodeError> {
    let (mut json, gzipped) = open_json(encoded, driver, limits, object)?;
    let mut bytes = Vec::new();
    json.read_to_end(&mut bytes)
        .map_err(|err| refusal(err, object, gzipped))?;
    Ok(bytes)
}

/// The release JSON of `encoded` as a stream, bounded: its size by `max_decompressed`, the time
/// to inflate it by the deadline; and whether it is gzipped (which says whose a stream error is).
fn open_json<'e>(
    encoded: &'e str,
    driver: StorageDriver,
    limits: &'e Limits,
    object: &str,
) -> Result<(Bounded<'e, Box<dyn Read + 'e>>, bool), DecodeError> {
    let text = SkipLineBreaks(encoded.as_bytes());
    // A Secret's value is Kubernetes' base64 of Helm's base64 text; a ConfigMap holds the text.
    let helm_text: Box<dyn Read + '_> = match driver {
        StorageDriver::Secret => Box::new(SkipLineBreaks(Tagged {
            inner: DecoderReader::new(text, &B64),
            layer: Base64Layer::Kubernetes,
        })),
        StorageDriver::ConfigMap => Box::new(text),
    };
    let mut payload = Tagged {
        inner: DecoderReader::new(helm_text, &B64),
        layer: Base64Layer::Helm,
    };
    let mut head = Vec::with_capacity(GZIP_MAGIC.len());
    (&mut payload)
        .take(GZIP_MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(|err| refusal(err, object, false))?;
    if head.is_empty() {
        return Err(DecodeError::MissingData {
            object: object.to_owned(),
            detail: "data.release is empty".to_owned(),
        });
    }
    // Helm gunzips only behind the magic bytes: releases stored before compression are plain JSON.
    let gzipped = head == GZIP_MAGIC;
    let payload = Cursor::new(head).chain(payload);
    let json: Box<dyn Read + '_> = if gzipped {
        // Multi-member, like Go's gzip.Reader.
        Box::new(MultiGzDecoder::new(payload))
    } else {
        Box::new(payload)
    };
    Ok((
        Bounded {
            inner: json,
            limits,
            read: 0,
        },
        gzipped,
    ))
}

/// Reads `json` as a `T`; what is wrong otherwise, in words that quote nothing stored.
fn parse<'de, T: Deserialize<'de>>(json: &'de [u8]) -> Result<T, String> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let release = serde_path_to_error::deserialize::<_, T>(&mut deserializer)
        .map_err(|err| json_problem(err.inner(), Some(err.path())))?;
    deserializer.end().map_err(|err| json_problem(&err, None))?;
    Ok(release)
}

/// The manifest as it stands in the JSON, escaped; `None` when absent or `null`.
#[derive(Default)]
struct RawManifest<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawManifest<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self(Some(<&RawValue>::deserialize(deserializer)?)))
    }
}

/// From this size on, a manifest is unescaped in two halves on two threads.
const UNESCAPED_IN_PARALLEL_FROM: usize = 1 << 20;

/// The value of the JSON string at `span` of `json` (the release JSON, no longer needed), put
/// where `json` was: serde_json unescapes a whole string into a buffer of its own before the
/// copy it hands out, which would hold a large manifest three times over. So it is handed a
/// piece at a time, and each piece's value written over the JSON already read (a value is never
/// longer than its escaped text). A value that is not a string is serde_json's error.
fn unescape_into(mut json: Vec<u8>, span: Range<usize>) -> Result<String, serde_json::Error> {
    let text = &json[span.clone()];
    if !(text.len() >= 2 && text.starts_with(b"\"") && text.ends_with(b"\"")) {
        return serde_json::from_slice::<String>(text);
    }
    let escaped = span.start + 1..span.end - 1;
    let middle = (escaped.len() >= UNESCAPED_IN_PARALLEL_FROM)
        .then(|| cut(&json[..escaped.end], escaped.start + escaped.len() / 2))
        .flatten();
    let written = match middle {
        None => unescape_from(&mut json[..escaped.end], escaped.start)?,
        Some(middle) => {
            // Each half in place: the second's value is then moved up against the first's.
            let (first, second) = json[..escaped.end].split_at_mut(middle);
            let (first, second) = std::thread::scope(|scope| {
                let second = scope.spawn(|| unescape_from(second, 0));
                let first = unescape_from(first, escaped.start);
                match second.join() {
                    Ok(second) => (first, second),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            });
            let (first, second) = (first?, second?);
            json.copy_within(middle..middle + second, first);
            first + second
        }
    };
    json.truncate(written);
    // Every piece was a `str`, so this holds; checked anyway, as it costs little.
    String::from_utf8(json).map_err(|_| serde::de::Error::custom("not UTF-8"))
}

/// Unescapes `buf[from..]` (the escaped text of a JSON string, or a part of it that starts and
/// ends between escapes) a piece at a time, writing its value from `buf[0]` on; its length.
fn unescape_from(buf: &mut [u8], from: usize) -> Result<usize, serde_json::Error> {
    let mut written = 0;
    let mut piece = Vec::with_capacity(PIECE + 64);
    let mut start = from;
    while start < buf.len() {
        let end = match buf.len() - start {
            left if left <= PIECE => buf.len(),
            _ => cut(buf, start + PIECE).unwrap_or(buf.len()),
        };
        piece.clear();
        piece.push(b'"');
        piece.extend_from_slice(&buf[start..end]);
        piece.push(b'"');
        let value = WriteAt {
            out: &mut buf[..end],
            at: &mut written,
        };
        serde_json::Deserializer::from_slice(&piece).deserialize_str(value)?;
        start = end;
    }
    Ok(written)
}

/// Writes the string serde_json reads into `out` at `at`, moving `at` past it.
struct WriteAt<'a> {
    out: &'a mut [u8],
    at: &'a mut usize,
}

impl<'de> Visitor<'de> for WriteAt<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<(), E> {
        let end = *self.at + text.len();
        // Never past the piece it was read from, which `out` ends with.
        let Some(place) = self.out.get_mut(*self.at..end) else {
            return Err(E::custom("a value longer than its escaped text"));
        };
        place.copy_from_slice(text.as_bytes());
        *self.at = end;
        Ok(())
    }
}

/// What a stream error means for the object. Our own readers say which layer or bound failed;
/// anything else inside a gzip stream is the gzip stream's fault.
fn refusal(err: io::Error, object: &str, gzipped: bool) -> DecodeError {
    let object = object.to_owned();
    if let Some(failed) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<Base64Failure>())
    {
        return DecodeError::Base64 {
            object,
            layer: failed.layer,
            problem: base64_problem(&failed.error),
        };
    }
    match err.get_ref().and_then(|e| e.downcast_ref::<Refused>()) {
        Some(Refused::TooLarge { limit }) => DecodeError::DecompressedTooLarge {
            object,
            limit: *limit,
        },
        Some(Refused::OutOfTime) => DecodeError::OutOfTime { object },
        None if gzipped => DecodeError::Gzip {
            object,
            source: err,
        },
        // Nothing else reads a plain payload; said as the JSON parser says an unreadable one.
        None => DecodeError::Json {
            object,
            message: "the JSON could not be read".to_owned(),
        },
    }
}

/// Where and what, never the offending byte (base64's own message quotes it).
fn base64_problem(err: &base64::DecodeError) -> String {
    match err {
        base64::DecodeError::InvalidByte(offset, _) => {
            format!("a character that is not base64 at offset {offset}")
        }
        base64::DecodeError::InvalidLength(length) => {
            format!("{length} characters is not a base64 length (truncated?)")
        }
        base64::DecodeError::InvalidLastSymbol(offset, _) => {
            format!("an invalid last character at offset {offset}")
        }
        base64::DecodeError::InvalidPadding => "invalid padding".to_owned(),
    }
}

/// A base64 error and the layer it happened in, carried through the readers above it.
#[derive(Debug)]
struct Base64Failure {
    layer: Base64Layer,
    error: base64::DecodeError,
}

impl fmt::Display for Base64Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} base64 layer: {}",
            self.layer,
            base64_problem(&self.error)
        )
    }
}

impl std::error::Error for Base64Failure {}

/// Names the layer of the base64 errors its decoder gives (the errors of the layers under it
/// already carry theirs).
struct Tagged<R> {
    inner: R,
    layer: Base64Layer,
}

impl<R: Read> Read for Tagged<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|err| {
            match err
                .get_ref()
                .and_then(|e| e.downcast_ref::<base64::DecodeError>())
            {
                Some(error) => io::Error::new(
                    err.kind(),
                    Base64Failure {
                        layer: self.layer,
                        error: error.clone(),
                    },
                ),
                None => err,
            }
        })
    }
}

/// Go's base64 decoder skips `\r` and `\n`, so Helm accepts wrapped text; so do we.
struct SkipLineBreaks<R>(R);

impl<R: Read> Read for SkipLineBreaks<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let read = self.0.read(buf)?;
            let text = &buf[..read];
            // The common case, checked at memchr's speed: nothing to skip.
            if !text.contains(&b'\n') && !text.contains(&b'\r') {
                return Ok(read);
            }
            let mut kept = 0;
            for i in 0..read {
                let byte = buf[i];
                if !matches!(byte, b'\r' | b'\n') {
                    buf[kept] = byte;
                    kept += 1;
                }
            }
            // A read of only line breaks is not the end of the text.
            if kept > 0 {
                return Ok(kept);
            }
        }
    }
}

/// Why [`Bounded`] stopped a stream.
#[derive(Debug)]
enum Refused {
    TooLarge { limit: usize },
    OutOfTime,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { limit } => write!(f, "more than {limit} bytes"),
            Self::OutOfTime => f.write_str("the deadline passed"),
        }
    }
}

impl std::error::Error for Refused {}

const CHECK_EVERY: usize = 1 << 20;

/// The decoded release, stopped past `max_decompressed` bytes or at the deadline: a gzip bomb
/// costs the time to inflate the limit, never its full size, and nothing is held whole.
struct Bounded<'a, R> {
    inner: R,
    limits: &'a Limits,
    read: usize,
}

impl<R: Read> Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.limits.out_of_time() {
            return Err(io::Error::other(Refused::OutOfTime));
        }
        // Checked at least every mebibyte inflated, as a bomb inflates fast.
        let chunk = buf.len().min(CHECK_EVERY);
        let read = self.inner.read(&mut buf[..chunk])?;
        self.read = self.read.saturating_add(read);
        let limit = self.limits.max_decompressed;
        if self.read > limit {
            return Err(io::Error::other(Refused::TooLarge { limit }));
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json makes of the whole string at once.
    fn whole(json: &str) -> String {
        serde_json::from_str(json).expect("a JSON string")
    }

    fn in_pieces(json: &str) -> String {
        // After other JSON, as a manifest is in a release.
        let text = format!("{{\"name\": \"x\", \"manifest\": {json}}}");
        let at = text.len() - json.len() - 1;
        unescape_into(text.into_bytes(), at..at + json.len()).expect("unescapes")
    }

    #[test]
    fn cuts_only_before_an_escaped_newline() {
        let escaped = br#"a\\nb\\\nc\u000ad\n"#;
        // `\\n` is a backslash and `n`; `\\\n` a backslash and a newline; `\u000a` is not cut.
        assert_eq!(cut(escaped, 0), Some(7));
        assert_eq!(cut(escaped, 9), Some(escaped.len() - 2));
        assert_eq!(cut(escaped, escaped.len() - 1), None);
        assert_eq!(cut(br"no escapes", 0), None);
        // Never inside a run of backslashes: `\\` then `n` is no escaped newline.
        assert_eq!(cut(br"a\\nb", 2), None);
        assert_eq!(cut(br"a\\\nb", 2), Some(3));
    }

    /// Pieces are cut near every 64 KiB; whatever sits at a cut (runs of backslashes, `\u`
    /// escapes, surrogate pairs, Go's `\u003c`) must read as it does in one piece.
    #[test]
    fn a_manifest_unescaped_in_pieces_is_the_whole_string() {
        let line = "kind: ConfigMap # <a> & \"quoted\" \\ back\\slash \t tab é 😀 \u{2028}\n";
        for size in [5 * PIECE, UNESCAPED_IN_PARALLEL_FROM + 5 * PIECE] {
            let mut text = String::new();
            while text.len() < size {
                text.push_str(line);
                text.push_str(&"\\".repeat(text.len() % 7));
                text.push_str("n\n");
            }
            same_in_pieces(&text);
        }
        // One long line (nowhere to cut) and the empty string.
        for long in [PIECE, UNESCAPED_IN_PARALLEL_FROM] {
            let long = serde_json::to_string(&"x\\\"".repeat(long)).expect("serializes");
            assert_eq!(in_pieces(&long), whole(&long));
        }
        assert_eq!(in_pieces("\"\""), "");
    }

    fn same_in_pieces(text: &str) {
        // Go escapes <, > and & (and U+2028); serde_json would not, so write them as Go does.
        let json = serde_json::to_string(text)
            .expect("a string serializes")
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('😀', "\\ud83d\\ude00");
        assert_eq!(in_pieces(&json), text);
        assert_eq!(in_pieces(&json), whole(&json));
    }

    #[test]
    fn a_manifest_that_is_not_a_string_is_serde_jsons_error() {
        for json in ["5", "{\"a\": \"hunter2\"}", "[\"x\"]", "true", "\""] {
            let err =
                unescape_into(json.as_bytes().to_vec(), 0..json.len()).expect_err("not a string");
            assert!(!err.to_string().contains("hunter2"), "{json}: {err}");
        }
    }
}
