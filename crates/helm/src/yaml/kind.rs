//! A document's top-level `kind` read off its text, when its shape leaves a parser no other
//! reading: what lets `release show --manifest` print the thousands of documents of a large
//! release that are plainly not Secrets without parsing each one. Anything unusual is doubt, and
//! doubt is `None`: the caller then parses the document as before.

use super::{closing_quote, is_block_scalar_header};

/// Plain words YAML 1.2 (serde_norway) or 1.1 (Kubernetes' go-yaml) reads as null or a bool.
const NOT_STRINGS: [&str; 9] = ["null", "true", "false", "yes", "no", "on", "off", "y", "n"];

/// More top-level keys than any Kubernetes object has: past this, doubt (it also keeps the
/// duplicate-key check linear).
const MAX_TOP_LEVEL_KEYS: usize = 32;

/// The top-level `kind` of `document` (one `---`-separated chunk), when the text alone settles
/// it; `None` when it does not.
///
/// It does when the document is a block mapping whose lines at column 0 are comments, sequence
/// entries (`- `, a key's value) or `key: value` with a plain key that appears once, exactly one
/// of them `kind: Word` (a word starting with a capital letter that YAML reads as a string), the
/// text holds no tab or carriage return, and no line holds an anchor, alias, tag, merge key,
/// complex key or directive, or opens a quoted scalar or flow collection it does not close. Then
/// every line at column 0 is a top-level key and nothing the text hides can give the document
/// another kind. Lines of block scalars (`|`, `>`) are text: skipped, not read.
pub(crate) fn plain_kind(document: &str) -> Option<&str> {
    let bytes = document.as_bytes();
    // Doubt, wherever they are (even in text, where they would be harmless): looked for once,
    // so the lexer below need not.
    if memchr::memchr2(b'\t', b'\r', bytes).is_some() {
        return None;
    }
    let mut kind = None;
    let mut keys: Vec<&str> = Vec::new();
    // The column a block scalar's text must be deeper than, while in one.
    let mut block_scalar: Option<usize> = None;
    let mut line = 0;
    while line < bytes.len() {
        let indent = bytes[line..].iter().take_while(|b| **b == b' ').count();
        let content = line + indent;
        let blank = matches!(bytes.get(content), None | Some(b'\n'));
        if block_scalar.is_some_and(|parent| blank || indent > parent) || blank {
            // Text, or nothing: on to the next line.
            line = next_line(document, content);
            continue;
        }
        block_scalar = None;
        if bytes[content] == b'#' {
            line = next_line(document, content);
            continue;
        }
        let rest = &document[content..];
        let lex_from = if indent > 0 || is_sequence_entry(rest) {
            // Nested in (or, for `- ` at column 0, the value of) the key before it.
            if keys.is_empty() {
                return None;
            }
            content
        } else {
            let text = rest.split_once('\n').map_or(rest, |(text, _)| text);
            let (key, value) = top_level_entry(text)?;
            if key.eq_ignore_ascii_case("kind") {
                if key != "kind" {
                    return None;
                }
                kind = Some(kind_word(value)?);
            }
            if keys.contains(&key) || keys.len() == MAX_TOP_LEVEL_KEYS {
                return None;
            }
            keys.push(key);
            content + key.len() + 1
        };
        let (end, scalar) = lex_line(bytes, line, lex_from)?;
        block_scalar = scalar;
        line = end + 1;
    }
    kind
}

/// Where the line after the one `at` is in starts.
fn next_line(document: &str, at: usize) -> usize {
    document[at..]
        .find('\n')
        .map_or(document.len(), |newline| at + newline + 1)
}

fn is_sequence_entry(rest: &str) -> bool {
    rest.strip_prefix('-')
        .is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

/// `key: value` with a plain key (a letter, then letters, digits, `_`, `.`, `-`): the key and
/// what follows its colon.
fn top_level_entry(line: &str) -> Option<(&str, &str)> {
    let key_len = line
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        .count();
    let (key, after) = line.split_at(key_len);
    let value = after.strip_prefix(':')?;
    let plain_key = key.starts_with(|c: char| c.is_ascii_alphabetic());
    (plain_key && (value.is_empty() || value.starts_with(' '))).then_some((key, value))
}

/// The value of `kind:` when it is one plain word YAML reads as a string and nothing else is
/// on the line. A differently spelled key (`Kind`) is doubt too: it is not `kind`, but a reader
/// that ignores case would take it for it.
fn kind_word(value: &str) -> Option<&str> {
    let word = value.trim_matches(' ');
    let plain = word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.bytes().all(|b| b.is_ascii_alphanumeric())
        && !NOT_STRINGS.contains(&word.to_ascii_lowercase().as_str());
    plain.then_some(word)
}

/// Checks the line that starts at `line` from byte `from` on, where a node may start: `None` on
/// doubt, else where the line ends and whether a block scalar starts there (and the column its
/// text must be deeper than).
fn lex_line(bytes: &[u8], line: usize, from: usize) -> Option<(usize, Option<usize>)> {
    let mut flow = 0usize;
    let mut node_start = true;
    // The column of the innermost collection entry (a key, `- `) on this line, which a block
    // scalar's text must be deeper than; the indentation until one is seen (which is deeper or
    // equal, so on doubt more lines are read as structure, never fewer).
    let mut entry = bytes[line..].iter().take_while(|b| **b == b' ').count();
    let mut node = from;
    let mut i = from;
    while i < bytes.len() {
        let byte = bytes[i];
        let next_blank = bytes.get(i + 1).is_none_or(|b| matches!(b, b' ' | b'\n'));
        match byte {
            b'\n' => break,
            b' ' => {}
            b'#' if i == line || matches!(bytes[i - 1], b' ' | b'\n') => {
                let end = bytes[i..].iter().position(|b| *b == b'\n');
                return (flow == 0).then_some((end.map_or(bytes.len(), |at| i + at), None));
            }
            b'"' | b'\'' if node_start => {
                node = i;
                i = closing_quote_on_line(bytes, i)?;
                node_start = false;
            }
            b'[' | b'{' if flow > 0 || node_start => {
                flow += 1;
                node_start = true;
            }
            b']' | b'}' if flow > 0 => {
                flow -= 1;
                node_start = false;
            }
            b',' if flow > 0 => node_start = true,
            b':' if flow > 0 || next_blank => {
                if flow == 0 {
                    entry = node - line;
                }
                node_start = true;
            }
            b'-' if flow == 0 && node_start && next_blank => entry = i - line,
            b'|' | b'>' if flow == 0 && node_start => {
                let header = &bytes[i + 1..];
                let header = &header[..header
                    .iter()
                    .position(|b| *b == b'\n')
                    .unwrap_or(header.len())];
                let end = i + 1 + header.len();
                return block_scalar_header(header).then_some((end, Some(entry)));
            }
            b'?' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b'<' if node_start => return None,
            _ => {
                if node_start {
                    node = i;
                }
                node_start = false;
                // Inside a plain scalar only a value indicator, a comment, the end of the line
                // (and in a flow collection its punctuation) can matter; skip to the next one.
                let rest = &bytes[i + 1..];
                i += if flow == 0 {
                    memchr::memchr3(b':', b'#', b'\n', rest).unwrap_or(rest.len())
                } else {
                    rest.iter()
                        .position(|b| FLOW_PLAIN_ENDS[usize::from(*b)])
                        .unwrap_or(rest.len())
                };
            }
        }
        i += 1;
    }
    (flow == 0).then_some((i, None))
}

/// The quote closing the one at `open` on the same line.
fn closing_quote_on_line(bytes: &[u8], open: usize) -> Option<usize> {
    let line = &bytes[..open
        + bytes[open..]
            .iter()
            .position(|b| *b == b'\n')
            .unwrap_or(bytes.len() - open)];
    closing_quote(line, open)
}

/// The bytes that can end a plain scalar or follow it with meaning in a flow collection.
const FLOW_PLAIN_ENDS: [bool; 256] = bytes_of(b":#\n,[]{}");

const fn bytes_of(set: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < set.len() {
        table[set[i] as usize] = true;
        i += 1;
    }
    table
}

/// A block scalar header without an explicit indentation (which would move where its text
/// starts).
fn block_scalar_header(after: &[u8]) -> bool {
    let explicit_indent = after
        .iter()
        .take_while(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-'))
        .any(u8::is_ascii_digit);
    !explicit_indent && is_block_scalar_header(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIGMAP: &str = "# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {app: c, tier: \"web\"}\ndata:\n  script.sh: |\n    echo \"unclosed\n    [[ -x x ]] && { a: 'b\n  k: 'it''s'\n";

    #[test]
    fn reads_the_kind_of_plain_documents() {
        assert_eq!(plain_kind(CONFIGMAP), Some("ConfigMap"));
        // The rest of the `---` line is blank; sequences at a key's indentation are its value.
        let role = "\nkind: ClusterRole\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs:\n  - get\n";
        assert_eq!(plain_kind(role), Some("ClusterRole"));
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: registry.example/app:1@sha256:abc\n          args: [\"--a=1\", '--b']\n          command:\n            - sh\n            - -c\n            - >-\n              exec app\n          env:\n            - {name: A, value: \"x # y\"}\n";
        assert_eq!(plain_kind(deployment), Some("Deployment"));
        assert_eq!(plain_kind("kind: Secret\n"), Some("Secret"));
    }

    /// Each of these could give a parser another top-level kind than the line `kind: X` says,
    /// or is unusual enough to parse rather than reason about.
    #[test]
    fn doubt_is_none() {
        for text in [
            // A quote or flow collection left open: a later column-0 line may be inside it.
            "metadata:\n  name: \"a\nkind: ConfigMap\n  \"\nstringData:\n  p: x\n",
            "metadata: 'a\nkind: ConfigMap\n'\n",
            "metadata:\n  labels: {a: b,\nkind: ConfigMap\n  }\n",
            "kind: ConfigMap\nx: [a,\n  b]\n",
            "x'y: 'z\nkind: ConfigMap\n",
            "metadata:\n  name: \"a\\\"\nkind: ConfigMap\n",
            // Not the one plain `kind` of a block mapping.
            "metadata: {}\n",
            "kind: ConfigMap\nkind: Secret\n",
            "kind: ConfigMap\nKind: Secret\n",
            "\"kind\": ConfigMap\n",
            "kind : ConfigMap\n",
            "kind: !!str Secret\n",
            "kind: *k\n",
            "kind: ConfigMap # x\n",
            "kind: configMap\n",
            "kind: True\n",
            "kind: NULL\n",
            "kind:\n  ConfigMap\n",
            "- kind: ConfigMap\n",
            " {data: {p: x}}\nkind: ConfigMap\n",
            "  indented: first\nkind: ConfigMap\n",
            // Anchors, aliases, merge keys, tags, complex keys, directives, markers.
            "kind: ConfigMap\ndata: &d\n  a: b\n",
            "kind: ConfigMap\ndata:\n  <<: {a: b}\n",
            "kind: ConfigMap\ndata:\n  ? a\n  : b\n",
            "kind: ConfigMap\ndata: !!map {}\n",
            "%YAML 1.2\nkind: ConfigMap\n",
            "kind: ConfigMap\n...\nkind: Secret\n",
            // Tabs, carriage returns, explicit block indentation.
            "kind: ConfigMap\ndata:\n\ta: b\n",
            "kind: ConfigMap\r\n",
            "kind: ConfigMap\ndata:\n  a: |2\n    b\n",
        ] {
            assert_eq!(plain_kind(text), None, "{text:?}");
        }
    }

    #[test]
    fn block_scalar_text_ends_where_libyaml_ends_it() {
        // The text of `a: |` in a sequence entry must be deeper than `a`, not than `-`.
        let text = "kind: ConfigMap\nx:\n- a: |\n  b: \"open\nc: d\n";
        assert_eq!(plain_kind(text), None);
        let text = "kind: ConfigMap\nx:\n- a: |\n    \"text\n  b: c\n";
        assert_eq!(plain_kind(text), Some("ConfigMap"));
    }
}
