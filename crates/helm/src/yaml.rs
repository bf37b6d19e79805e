//! Untrusted YAML (a release's rendered manifest, `--from` files), read at a bounded cost.
//!
//! libyaml's scanner is quadratic in nesting depth for some shapes (`a: {a: {a: …}}`, deeply
//! indented keys) and scans a whole document before serde_norway's own recursion limit (128) can
//! refuse it, so a few KB of gzipped manifest can hold the CPU for minutes. [`check_nesting`]
//! bounds the depth with one linear pass first. It over-counts rather than under-counts: what it
//! is unsure about (a quote not closed on its line, a quote after a plain scalar) is scanned as
//! structure.

mod kind;

use std::ops::Range;

use serde::Deserialize as _;
use serde_norway::Value as Yaml;

pub(crate) use kind::plain_kind;

/// Deepest nesting accepted: serde_norway's and serde_json's own recursion limit, so nothing they
/// would read is refused. Kubernetes objects, CRD schemas included, are far shallower.
pub const MAX_NESTING: usize = 128;

/// A document nested deeper than the limit. Names the line, never the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("nested deeper than {limit} levels (line {line})")]
pub struct TooDeep {
    /// 1-based, within the text checked.
    pub line: usize,
    pub limit: usize,
}

/// Why a document could not be read. The message never quotes the document: it may be a Secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error(transparent)]
    TooDeep(#[from] TooDeep),
    #[error("not valid YAML: {problem}{}", at_line(*line))]
    Invalid {
        /// A fixed description (serde_norway's own message can quote a key).
        problem: &'static str,
        line: Option<usize>,
    },
    #[error("not read: the --timeout ran out first")]
    OutOfTime,
}

fn at_line(line: Option<usize>) -> String {
    line.map(|l| format!(" at line {l}")).unwrap_or_default()
}

/// Every non-null YAML document in `text`, or why they cannot all be read. A single
/// `---`-separated chunk can still hold several documents (`...` ends one), so all are returned.
pub fn read_documents(text: &str) -> Result<Vec<Yaml>, Unreadable> {
    check_nesting(text, MAX_NESTING)?;
    let mut documents = Vec::new();
    for document in serde_norway::Deserializer::from_str(text) {
        let value = Yaml::deserialize(document).map_err(|err| Unreadable::Invalid {
            problem: problem_of(&err),
            line: err.location().map(|l| l.line()),
        })?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    Ok(documents)
}

fn problem_of(err: &serde_norway::Error) -> &'static str {
    let message = err.to_string();
    if message.contains("duplicate entry") {
        "a mapping has a duplicate key"
    } else if message.contains("repetition limit") {
        "aliases expand past serde_norway's repetition limit (an alias bomb?)"
    } else if message.contains("recursion limit") {
        "nested too deeply"
    } else if message.contains("tab") || message.contains("cannot start any token") {
        "a character that cannot start a YAML token (a tab in the indentation?)"
    } else {
        "a syntax error"
    }
}

/// Whether `kind` is a list of objects: `List` (what `kubectl get -o yaml` prints) or a typed
/// one such as `SecretList`, whose `items` are the objects. The one rule every reader of
/// manifests and dumps applies.
pub fn is_list_kind(kind: &str) -> bool {
    kind.ends_with("List")
}

/// The chunks of a YAML stream between document-start markers, as YAML sees them: a line that
/// starts with `---` followed by a space, a tab or the end of the line. What follows the marker
/// on its line (`--- # comment`, `--- {kind: Secret}`) belongs to the next chunk. Blank chunks
/// are kept; callers skip them.
pub fn split_documents(text: &str) -> Vec<&str> {
    document_ranges(text)
        .into_iter()
        .map(|range| &text[range])
        .collect()
}

/// [`split_documents`], as byte ranges of `text`: a chunk after the first starts 3 bytes after
/// its `---`.
pub fn document_ranges(text: &str) -> Vec<Range<usize>> {
    let mut documents = Vec::new();
    let mut start = 0;
    // Only a line can start with `---`: at the start of the text or after a newline. Searching
    // for those skips a document's lines in one pass instead of visiting each.
    let line_starts = (text.starts_with("---").then_some(0).into_iter())
        .chain(memchr::memmem::find_iter(text.as_bytes(), b"\n---").map(|newline| newline + 1));
    for line in line_starts {
        if is_document_start(&text[line..]) {
            documents.push(start..line);
            start = line + 3;
        }
    }
    documents.push(start..text.len());
    documents
}

/// Whether `line` (and what follows it) starts with a `---` that starts a document: alone, or
/// followed by a space, a tab or a line break.
pub(crate) fn is_document_start(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\n', '\r']))
}

/// Refuses text nested deeper than `limit` (block indentation levels, `- `/`? ` entries and
/// flow brackets together) in one pass, before any parser sees it.
pub fn check_nesting(text: &str, limit: usize) -> Result<(), TooDeep> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    // Indentation of the line that opened a block scalar: deeper lines are its text.
    let mut block_scalar: Option<usize> = None;
    // At a place where a node may start (so a quote opens a quoted scalar).
    let mut node_start = true;
    for (number, raw) in text.split('\n').enumerate() {
        let line_number = number + 1;
        let too_deep = |depth: usize| {
            (depth > limit).then_some(TooDeep {
                line: line_number,
                limit,
            })
        };
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = block_scalar {
            if line.trim().is_empty() || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        let mut rest = &line[indent..];
        let mut block_depth = indents.len();
        if indent == 0 && (is_document_start(rest) || is_document_end(rest)) {
            indents.clear();
            flow = 0;
            node_start = true;
            rest = &rest[3..];
            block_depth = 0;
        } else if flow == 0 {
            if rest.trim().is_empty() || rest.starts_with('#') {
                continue;
            }
            while indents.last().is_some_and(|&top| top > indent) {
                indents.pop();
            }
            if indents.last() != Some(&indent) {
                indents.push(indent);
            }
            block_depth = indents.len();
            node_start = true;
        }
        if let Some(err) = too_deep(block_depth + flow) {
            return Err(err);
        }
        let bytes = rest.as_bytes();
        let mut extra = 0usize;
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let next_blank = bytes.get(i + 1).is_none_or(|b| matches!(b, b' ' | b'\t'));
            match c {
                b' ' | b'\t' => {}
                b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => break,
                b'"' | b'\'' if node_start => match closing_quote(bytes, i) {
                    Some(close) => {
                        i = close;
                        node_start = false;
                    }
                    // Not closed on this line: scan on as if it were structure (over-counts).
                    None => node_start = false,
                },
                b'[' | b'{' if flow > 0 || node_start => {
                    flow += 1;
                    node_start = true;
                    if let Some(err) = too_deep(block_depth + extra + flow) {
                        return Err(err);
                    }
                }
                b']' | b'}' if flow > 0 => {
                    flow -= 1;
                    node_start = false;
                }
                b',' if flow > 0 => node_start = true,
                b':' if flow > 0 || next_blank => node_start = true,
                b'-' | b'?' if flow == 0 && node_start && next_blank => {
                    extra += 1;
                    if let Some(err) = too_deep(block_depth + extra + flow) {
                        return Err(err);
                    }
                }
                b'&' | b'!' if node_start => {
                    // An anchor or tag: the node itself follows.
                    while i + 1 < bytes.len()
                        && !matches!(bytes[i + 1], b' ' | b'\t')
                        && !(flow > 0 && matches!(bytes[i + 1], b',' | b'[' | b']' | b'{' | b'}'))
                    {
                        i += 1;
                    }
                }
                b'|' | b'>'
                    if flow == 0 && node_start && is_block_scalar_header(&bytes[i + 1..]) =>
                {
                    block_scalar = Some(indent);
                    break;
                }
                _ => node_start = false,
            }
            i += 1;
        }
    }
    Ok(())
}

fn is_document_end(line: &str) -> bool {
    line.strip_prefix("...")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// The index of the quote closing the one at `open`, on the same line.
fn closing_quote(bytes: &[u8], open: usize) -> Option<usize> {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            b if b == quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `|` or `>` followed only by indentation/chomping indicators, then a comment or nothing.
fn is_block_scalar_header(after: &[u8]) -> bool {
    let indicators = after
        .iter()
        .take_while(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-'))
        .count();
    let rest = &after[indicators..];
    let blank = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    rest.len() == blank || (blank > 0 && rest[blank] == b'#')
}

/// `value` as block YAML that Helm reads back as the same value. Helm (sigs.k8s.io/yaml over
/// go-yaml) reads YAML 1.1, where a bare `on`, `yes`, `n` or `1:30` is not a string; the YAML
/// 1.2 writers quote only what 1.2 would misread, so `feature: "on"` came out `feature: on`
/// and `helm upgrade -f` of it would set `true` (found comparing with `helm get values`).
/// Strings are plain only when both versions read them as strings, else JSON-quoted (a JSON
/// string is a valid YAML double-quoted scalar); keys likewise.
pub fn to_yaml_1_1(value: &serde_json::Value) -> String {
    let mut out = String::new();
    match value {
        serde_json::Value::Object(m) if !m.is_empty() => block_map(m, 0, &mut out),
        serde_json::Value::Array(a) if !a.is_empty() => block_seq(a, 0, &mut out),
        scalar => {
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
    out
}

fn block_map(m: &serde_json::Map<String, serde_json::Value>, indent: usize, out: &mut String) {
    for (i, (key, value)) in m.iter().enumerate() {
        // A map in a sequence starts on the `- ` line, which holds its indentation already.
        if i > 0 || !out.ends_with("- ") {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&string_scalar(key));
        out.push(':');
        nested(value, indent, true, out);
    }
}

fn block_seq(a: &[serde_json::Value], indent: usize, out: &mut String) {
    for value in a {
        out.push_str(&" ".repeat(indent));
        match value {
            serde_json::Value::Object(m) if !m.is_empty() => {
                out.push_str("- ");
                block_map(m, indent + 2, out);
            }
            _ => {
                out.push('-');
                nested(value, indent, false, out);
            }
        }
    }
}

/// What follows `key:` or `-`: an inline scalar or empty collection, else a nested block (a
/// map's sequence at the map's indentation, as go-yaml writes it).
fn nested(value: &serde_json::Value, indent: usize, in_map: bool, out: &mut String) {
    match value {
        serde_json::Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            block_map(m, indent + 2, out);
        }
        serde_json::Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            block_seq(a, if in_map { indent } else { indent + 2 }, out);
        }
        scalar => {
            out.push(' ');
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

fn inline(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => string_scalar(s),
        serde_json::Value::Object(_) => "{}".into(),
        serde_json::Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

fn string_scalar(s: &str) -> String {
    if plain_in_yaml_1_1_and_1_2(s) {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

/// Conservative: a word starting with a letter, of letters, digits and `_ - . / @ :` (a colon
/// not last: `: ` is never in it), that neither YAML 1.1 nor 1.2 reads as a bool or null.
/// Anything starting with a digit or sign is quoted, so no number or time is read by accident.
fn plain_in_yaml_1_1_and_1_2(s: &str) -> bool {
    const NOT_STRINGS: [&str; 10] = [
        "y", "yes", "n", "no", "true", "false", "on", "off", "null", "nan",
    ];
    let Some(first) = s.chars().next() else {
        return false;
    };
    first.is_ascii_alphabetic()
        && !s.ends_with(':')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@' | ':'))
        && !NOT_STRINGS.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(text: &str, limit: usize) -> bool {
        check_nesting(text, limit).is_ok()
    }

    #[test]
    fn counts_flow_block_and_compact_nesting() {
        // The line's own block level counts too: a root flow collection over-counts by one.
        assert!(depth_ok("[[[]]]", 4));
        assert!(!depth_ok("[[[[]]]]", 4));
        assert!(!depth_ok("a: {a: {a: {a: {a: 1}}}}", 4));
        assert!(!depth_ok("a:\n b:\n  c:\n   d:\n    e: 1\n", 4));
        assert!(!depth_ok("- - - - - a\n", 4));
        assert!(depth_ok("a:\n  b: [1, 2]\n", 4));
    }

    #[test]
    fn text_is_not_structure() {
        let deep = "[".repeat(50);
        for text in [
            format!("a: \"{deep}\"\n"),
            format!("a: '{deep}'\n"),
            format!("a: x{deep}\n"),
            format!("a: 1 # {deep}\n"),
            format!("a: |\n  {deep}\n  {deep}\nb: 1\n"),
            format!("a: >-\n    {deep}\n"),
            format!("a: !!str |\n  {deep}\n"),
        ] {
            assert!(depth_ok(&text, 10), "{text}");
        }
    }

    #[test]
    fn quotes_and_comments_cannot_hide_structure() {
        let open = "[".repeat(50);
        for text in [
            // A quote not closed on its line is scanned as structure.
            format!("a: \"x\n{open}"),
            // After a plain scalar a quote opens nothing in flow: YAML reads the brackets.
            format!("[a \"b, {open}\"]"),
            format!("[a\n\"b, {open}\"]"),
            // A tag before a quote: the quote is recognised, so ` #` inside is no comment.
            format!("[!!str \"a #\", {open}]"),
            // A plain scalar ending in `|` opens no block scalar.
            format!("a: b |\n  c: {open}\n"),
        ] {
            assert!(!depth_ok(&text, 10), "{text}");
        }
    }

    /// The line-by-line reading `split_documents` replaced: the search must cut the same places.
    fn split_by_lines(text: &str) -> Vec<&str> {
        let mut documents = Vec::new();
        let (mut start, mut offset) = (0, 0);
        for line in text.split_inclusive('\n') {
            if is_document_start(line) {
                documents.push(&text[start..offset]);
                start = offset + 3;
            }
            offset += line.len();
        }
        documents.push(&text[start..]);
        documents
    }

    #[test]
    fn searching_for_separators_cuts_where_reading_lines_does() {
        for text in [
            "",
            "---",
            "---\n",
            "---\n---\n",
            "\n---",
            "a: 1\n---",
            "---a\n----\n --- \n---\ta\n---\r\nb\n",
            "a\n---\n---\n\n---x\n--- # c\n",
            "--- {kind: Secret}\n...\n---\n",
        ] {
            assert_eq!(split_documents(text), split_by_lines(text), "{text:?}");
        }
    }

    #[test]
    fn separators_follow_yaml() {
        let chunks = split_documents("a: 1\n--- \nb: 2\n---   # c\nc: 3\n--- {d: 4}\n----\ne: 5\n");
        assert_eq!(
            chunks,
            [
                "a: 1\n",
                " \nb: 2\n",
                "   # c\nc: 3\n",
                " {d: 4}\n----\ne: 5\n"
            ]
        );
    }
}
