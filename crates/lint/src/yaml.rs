//! Multi-document YAML with line numbers, tolerant of Helm templates.
//!
//! serde_norway gives structure but no positions, and a Helm template (`{{ }}`) is not YAML at
//! all. So a file is split into documents on `---` lines, each document keeps its own lines
//! (for positions, and for line-wise scanning when it does not parse), and is parsed on its own
//! so one bad document does not hide the others.

use serde_norway::Value;

pub(crate) struct Doc<'a> {
    pub file: &'a str,
    /// The 1-based line number of `lines[0]`.
    pub first_line: usize,
    pub lines: Vec<&'a str>,
    /// The parsed document; `None` for a Helm template or YAML that does not parse.
    pub value: Option<Value>,
}

/// Splits `text` into documents where YAML does (helm's `document_ranges`: a line starting
/// with `---` and a space, a tab or its end); parses each unless `templated`.
pub(crate) fn split<'a>(file: &'a str, text: &'a str, templated: bool) -> Vec<Doc<'a>> {
    let mut docs: Vec<Doc<'a>> = liveproof_helm::yaml::document_ranges(text)
        .into_iter()
        .map(|mut range| {
            // After a `---` the chunk starts on the marker's line: when nothing but blanks
            // follows the marker there, the document starts on the next line.
            if range.start > 0 {
                if let Some(end) = text[range.clone()].find('\n') {
                    if text[range.start..range.start + end].trim().is_empty() {
                        range.start += end + 1;
                    }
                }
            }
            let first_line = text[..range.start].matches('\n').count() + 1;
            make(file, first_line, text[range].lines().collect(), templated)
        })
        .collect();
    docs.retain(|d| {
        d.lines
            .iter()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    docs
}

fn make<'a>(file: &'a str, first_line: usize, lines: Vec<&'a str>, templated: bool) -> Doc<'a> {
    let value = if templated {
        None
    } else {
        serde_norway::from_str::<Value>(&lines.join("\n"))
            .ok()
            .filter(Value::is_mapping)
    };
    Doc {
        file,
        first_line,
        lines,
        value,
    }
}

impl Doc<'_> {
    /// `kind`, from the parsed document or, for a template, a top-level `kind:` line.
    pub fn kind(&self) -> Option<String> {
        self.top_level("kind")
    }

    pub fn api_version(&self) -> Option<String> {
        self.top_level("apiVersion")
    }

    fn top_level(&self, key: &str) -> Option<String> {
        if let Some(v) = &self.value {
            return v[key].as_str().map(str::to_string);
        }
        self.lines.iter().find_map(|l| {
            let rest = l.strip_prefix(key)?.strip_prefix(':')?;
            Some(unquote(rest).to_string())
        })
    }

    /// `metadata.name` (possibly a template expression, kept as text).
    pub fn name(&self) -> String {
        if let Some(v) = &self.value {
            if let Some(name) = v["metadata"]["name"].as_str() {
                return name.to_string();
            }
        }
        if let Some(line) = self.locate(&["metadata", "name"]) {
            let value = self
                .line_text(line)
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| unquote(v));
            match value {
                // `name: |-` then the name on the next line (a block scalar).
                Some(v) if v.starts_with(['|', '>']) => {
                    if let Some(next) = self.next_text_line(line) {
                        return next.trim().to_string();
                    }
                }
                Some(v) if !v.is_empty() => return v.to_string(),
                _ => {}
            }
        }
        // `metadata: {name: web, namespace: apps}`: a flow mapping, on the `metadata:` line.
        self.locate(&["metadata"])
            .and_then(|line| self.line_text(line))
            .and_then(|l| l.split_once(':'))
            .and_then(|(_, v)| flow_value(v, "name"))
            .unwrap_or_else(|| "?".to_string())
    }

    /// The first line after `line` with something on it (not a comment).
    fn next_text_line(&self, line: usize) -> Option<&str> {
        let from = line.checked_sub(self.first_line)? + 1;
        self.lines
            .iter()
            .skip(from)
            .find(|l| {
                let body = l.trim();
                !body.is_empty() && !body.starts_with('#')
            })
            .copied()
    }

    /// `metadata.namespace/metadata.name`, or the name alone.
    pub fn display_name(&self) -> String {
        match self
            .value
            .as_ref()
            .and_then(|v| v["metadata"]["namespace"].as_str())
        {
            Some(ns) => format!("{ns}/{}", self.name()),
            None => self.name(),
        }
    }

    /// The absolute line of a nested mapping key, e.g. `["spec", "suspend"]` (block style,
    /// no sequences on the way).
    pub fn locate(&self, path: &[&str]) -> Option<usize> {
        let mut start = 0;
        let mut parent_indent: isize = -1;
        for key in path {
            let mut child_indent = None;
            let mut found = None;
            for (i, line) in self.lines.iter().enumerate().skip(start) {
                let body = line.trim_start();
                if body.is_empty() || body.starts_with('#') {
                    continue;
                }
                let indent = (line.len() - body.len()) as isize;
                if indent <= parent_indent {
                    break;
                }
                let child = *child_indent.get_or_insert(indent);
                if indent == child && is_key(body, key) {
                    found = Some((i, indent));
                    break;
                }
            }
            let (i, indent) = found?;
            start = i + 1;
            parent_indent = indent;
        }
        Some(self.first_line + start - 1)
    }

    /// The absolute line of the `n`th (0-based) line that `matches`.
    pub fn find_nth(&self, n: usize, matches: impl Fn(&str) -> bool) -> Option<usize> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| matches(l))
            .nth(n)
            .map(|(i, _)| self.first_line + i)
    }

    pub fn line_text(&self, line: usize) -> Option<&str> {
        self.lines.get(line.checked_sub(self.first_line)?).copied()
    }

    /// The document's text (for "does it mention X" checks).
    pub fn contains(&self, needle: &str) -> bool {
        self.lines.iter().any(|l| l.contains(needle))
    }
}

/// `key`'s scalar in a one-line flow mapping (`{name: web, namespace: apps}`).
fn flow_value(text: &str, key: &str) -> Option<String> {
    let inner = text.trim().strip_prefix('{')?;
    let inner = inner.split('}').next()?;
    inner.split(',').find_map(|entry| {
        let (k, v) = entry.split_once(':')?;
        (k.trim().trim_matches(['"', '\'']) == key).then(|| unquote(v).to_string())
    })
}

fn is_key(body: &str, key: &str) -> bool {
    let body = body.trim_start_matches(['"', '\'']);
    body.strip_prefix(key)
        .map(|rest| rest.trim_start_matches(['"', '\'']).starts_with(':'))
        .unwrap_or(false)
}

/// A scalar as written after `key:`, without a trailing comment or quotes.
pub(crate) fn unquote(value: &str) -> &str {
    let value = value.trim();
    let value = match value.find(" #") {
        Some(at) if !value.starts_with(['"', '\'']) => value[..at].trim_end(),
        _ => value,
    };
    let value = value.trim();
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q) {
            if let Some(end) = inner.find(q) {
                return &inner[..end];
            }
        }
    }
    value
}

/// The value of a `key: value` line (`- key: value` too), if the line is that key.
pub(crate) fn key_value<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    let body = line.trim_start();
    let body = body.strip_prefix("- ").unwrap_or(body).trim_start();
    let rest = body.strip_prefix(key)?.strip_prefix(':')?;
    Some(unquote(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Split where helm and the API server's YAML split: what follows a `---` on its line
    /// belongs to the next document (the old line splitter dropped it).
    #[test]
    fn a_document_may_start_on_the_marker_line() {
        let text = "kind: A\n--- {kind: B, metadata: {name: b}}\n--- # c\nkind: C\n";
        let docs = split("f.yaml", text, false);
        let kinds: Vec<_> = docs.iter().map(|d| d.kind()).collect();
        assert_eq!(
            kinds,
            [
                Some("A".to_string()),
                Some("B".to_string()),
                Some("C".to_string())
            ]
        );
        assert_eq!(docs[1].first_line, 2);
        assert_eq!(docs[1].name(), "b");
        assert_eq!(
            docs[2].first_line, 3,
            "the comment after the marker is its line"
        );
    }

    #[test]
    fn a_template_names_its_object_in_a_flow_mapping_or_a_block_scalar() {
        for (metadata, want) in [
            ("metadata: {name: web, namespace: apps}", "web"),
            ("metadata: {\"namespace\": apps, \"name\": \"api\"}", "api"),
            ("metadata:\n  name: |-\n    worker\n  labels: {}", "worker"),
            ("metadata:\n  name: >\n    cron", "cron"),
            ("metadata:\n  name: web # the front", "web"),
        ] {
            let text = format!("kind: Deployment\n{metadata}\nspec:\n  x: {{{{ .Values.x }}}}\n");
            let docs = split("t.yaml", &text, true);
            assert_eq!(docs[0].name(), want, "{metadata}");
        }
    }

    #[test]
    fn locates_nested_keys_per_document() {
        let text = "a: 1\n---\nkind: HelmRelease\nmetadata:\n  name: x\nspec:\n  chart:\n    spec:\n      chart: ./charts/x # c\n      reconcileStrategy: ChartVersion\n";
        let docs = split("f.yaml", text, false);
        assert_eq!(docs.len(), 2);
        let hr = &docs[1];
        assert_eq!(hr.first_line, 3);
        assert_eq!(hr.kind().as_deref(), Some("HelmRelease"));
        assert_eq!(hr.locate(&["spec", "chart", "spec", "chart"]), Some(9));
        assert_eq!(
            hr.locate(&["spec", "chart", "spec", "reconcileStrategy"]),
            Some(10)
        );
        assert_eq!(hr.locate(&["spec", "suspend"]), None);
        assert_eq!(hr.name(), "x");
        assert_eq!(
            key_value("      chart: ./charts/x # c", "chart"),
            Some("./charts/x")
        );
    }

    #[test]
    fn templates_are_scanned_as_text() {
        let text =
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n";
        let docs = split("t.yaml", text, true);
        assert!(docs[0].value.is_none());
        assert_eq!(docs[0].kind().as_deref(), Some("Deployment"));
        assert_eq!(docs[0].name(), "{{ .Release.Name }}");
    }
}
