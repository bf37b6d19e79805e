//! kubectl's JSONPath templates (`-o jsonpath=TEMPLATE`), over a JSON document: the subset
//! kubectl documents (kubernetes.io/docs/reference/kubectl/jsonpath/) — text, `{.field}`,
//! `{.a.b[*].c}`, `{..name}`, `{.list[0]}`, `{.list[-1]}`, `{.list[0:2]}`, `{.map['key.with.dots']}`,
//! `{.list[?(@.field=="value")]}` (`==`, `!=`, `<`, `<=`, `>`, `>=`, or the field alone: it is
//! there), `{range .list[*]}…{end}`, `{"\t"}` string literals and `$` for the root.
//!
//! No well-kept crate implements kubectl's template syntax (the JSONPath crates implement
//! RFC 9535 paths, which have no `{range}…{end}` or text around them), so this is a small
//! evaluator of the documented subset. As kubectl by default (`--allow-missing-template-keys`),
//! a path that reaches nothing prints nothing; several results of one action are joined by
//! spaces; a string prints as itself, anything else as JSON.

use std::fmt;

use serde_json::Value;

/// A parsed template: what `-o jsonpath=` printed, kept with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    nodes: Vec<Node>,
}

/// A template that could not be parsed: what is wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

impl TemplateError {
    pub(crate) fn new(message: impl Into<String>) -> TemplateError {
        TemplateError {
            message: message.into(),
        }
    }
}

fn error(message: impl Into<String>) -> TemplateError {
    TemplateError::new(message)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Text(String),
    Path(Path),
    Range(Path, Vec<Node>),
}

/// A path: from the root (`$`) or from the current node (`.…`, `@`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path {
    from_root: bool,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    /// `..name` (every descendant's `name`), `..*` (every descendant): `None`.
    Descend(Option<String>),
    Wildcard,
    Index(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    Keys(Vec<String>),
    Filter(Box<Filter>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Filter {
    path: Path,
    compare: Option<(Op, Literal)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Literal {
    Text(String),
    /// Kept as written: compared as a number.
    Number(String),
    Bool(bool),
}

impl Template {
    /// Parses kubectl's template syntax.
    pub fn parse(source: &str) -> Result<Template, TemplateError> {
        let actions = split(source)?;
        let mut stack: Vec<(Path, Vec<Node>)> = Vec::new();
        let mut nodes = Vec::new();
        for piece in actions {
            let node = match piece {
                Piece::Text(text) => Node::Text(text),
                Piece::Action(action) => {
                    let action = action.trim();
                    if let Some(path) = action.strip_prefix("range ") {
                        let path = parse_path(path.trim())?;
                        stack.push((path, std::mem::take(&mut nodes)));
                        continue;
                    }
                    if action == "end" {
                        let Some((path, outer)) = stack.pop() else {
                            return Err(error("`{end}` closes no `{range …}`"));
                        };
                        let body = std::mem::replace(&mut nodes, outer);
                        Node::Range(path, body)
                    } else if action.starts_with('"') || action.starts_with('\'') {
                        let (text, rest) = string_literal(action)?;
                        if !rest.trim().is_empty() {
                            return Err(error(format!(
                                "`{{{action}}}`: text after the string literal"
                            )));
                        }
                        Node::Text(text)
                    } else if action.is_empty() {
                        return Err(error("`{}` holds no path (e.g. {.verdict})"));
                    } else {
                        Node::Path(parse_path(action)?)
                    }
                }
            };
            nodes.push(node);
        }
        if !stack.is_empty() {
            return Err(error("`{range …}` is not closed by `{end}`"));
        }
        Ok(Template {
            source: source.to_string(),
            nodes,
        })
    }

    /// The template as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The template evaluated over `root`.
    pub fn evaluate(&self, root: &Value) -> String {
        let mut out = String::new();
        run(&self.nodes, root, root, &mut out);
        out
    }
}

impl Path {
    /// The nodes this path reaches from `current` (`$` from `root`).
    pub(crate) fn select<'v>(&self, root: &'v Value, current: &'v Value) -> Vec<&'v Value> {
        let mut nodes = vec![if self.from_root { root } else { current }];
        for step in &self.steps {
            nodes = nodes
                .into_iter()
                .flat_map(|n| apply(step, root, n))
                .collect();
        }
        nodes
    }
}

/// A path on its own (custom-columns' columns: `.name`, `{.name}`, `name`, `$.name`).
pub(crate) fn relaxed_path(given: &str) -> Result<Path, TemplateError> {
    let inner = given.trim();
    let inner = inner
        .strip_prefix('{')
        .and_then(|i| i.strip_suffix('}'))
        .unwrap_or(inner)
        .trim();
    if inner.starts_with('$') {
        return parse_path(inner);
    }
    if inner.is_empty() || inner == "." {
        return parse_path(".");
    }
    if inner.starts_with('.') || inner.starts_with('[') {
        parse_path(inner)
    } else {
        parse_path(&format!(".{inner}"))
    }
}

fn run(nodes: &[Node], root: &Value, current: &Value, out: &mut String) {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Path(path) => {
                let texts: Vec<String> = path
                    .select(root, current)
                    .into_iter()
                    .map(text_of)
                    .collect();
                out.push_str(&texts.join(" "));
            }
            Node::Range(path, body) => {
                let selected = path.select(root, current);
                // `{range .list}` ranges over the list's items, as `{range .list[*]}` does.
                let items: Vec<&Value> = match selected.as_slice() {
                    [Value::Array(items)] => items.iter().collect(),
                    _ => selected,
                };
                for item in items {
                    run(body, root, item, out);
                }
            }
        }
    }
}

/// A value as kubectl prints it: a string as itself, null as nothing, the rest as JSON.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn apply<'v>(step: &Step, root: &'v Value, node: &'v Value) -> Vec<&'v Value> {
    match step {
        Step::Field(name) => node.get(name).into_iter().collect(),
        Step::Keys(keys) => keys.iter().filter_map(|k| node.get(k)).collect(),
        Step::Wildcard => children(node),
        Step::Descend(name) => {
            let mut found = Vec::new();
            descend(node, name.as_deref(), &mut found);
            found
        }
        Step::Index(i) => match node {
            Value::Array(items) => index(items.len(), *i)
                .and_then(|i| items.get(i))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        },
        Step::Slice(start, end, step) => match node {
            Value::Array(items) => slice(items, *start, *end, *step),
            _ => Vec::new(),
        },
        Step::Filter(filter) => children(node)
            .into_iter()
            .filter(|item| filter.holds(root, item))
            .collect(),
    }
}

fn children(node: &Value) -> Vec<&Value> {
    match node {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => map.values().collect(),
        _ => Vec::new(),
    }
}

fn descend<'v>(node: &'v Value, name: Option<&str>, found: &mut Vec<&'v Value>) {
    match name {
        Some(name) => found.extend(node.get(name)),
        None => found.extend(children(node)),
    }
    for child in children(node) {
        descend(child, name, found);
    }
}

fn index(len: usize, i: i64) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { len + i } else { i };
    (0..len)
        .contains(&i)
        .then(|| usize::try_from(i).ok())
        .flatten()
}

fn slice(items: &[Value], start: Option<i64>, end: Option<i64>, step: Option<i64>) -> Vec<&Value> {
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let clamp = |i: i64| if i < 0 { (len + i).max(0) } else { i.min(len) };
    let start = clamp(start.unwrap_or(0));
    let end = clamp(end.unwrap_or(len));
    let step = step.unwrap_or(1).max(1);
    let mut out = Vec::new();
    let mut i = start;
    while i < end {
        if let Some(item) = usize::try_from(i).ok().and_then(|i| items.get(i)) {
            out.push(item);
        }
        i += step;
    }
    out
}

impl Filter {
    fn holds(&self, root: &Value, item: &Value) -> bool {
        let found = self.path.select(root, item);
        match &self.compare {
            None => found
                .iter()
                .any(|v| !v.is_null() && *v != &Value::Bool(false)),
            Some((op, literal)) => found.iter().any(|v| compare(v, *op, literal)),
        }
    }
}

fn compare(value: &Value, op: Op, literal: &Literal) -> bool {
    use std::cmp::Ordering;
    let ordering = match (value, literal) {
        (Value::String(s), Literal::Text(t)) => Some(s.as_str().cmp(t.as_str())),
        (Value::Number(n), Literal::Number(m)) => match (n.as_f64(), m.parse::<f64>().ok()) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => None,
        },
        (Value::Bool(b), Literal::Bool(c)) => Some(b.cmp(c)),
        _ => None,
    };
    match (ordering, op) {
        (Some(o), Op::Eq) => o == Ordering::Equal,
        (Some(o), Op::Ne) => o != Ordering::Equal,
        (None, Op::Ne) => true,
        (Some(o), Op::Lt) => o == Ordering::Less,
        (Some(o), Op::Le) => o != Ordering::Greater,
        (Some(o), Op::Gt) => o == Ordering::Greater,
        (Some(o), Op::Ge) => o != Ordering::Less,
        (None, _) => false,
    }
}

enum Piece {
    Text(String),
    Action(String),
}

/// The template cut into text and `{…}` actions (a `}` inside a quoted string does not close
/// its action).
fn split(source: &str) -> Result<Vec<Piece>, TemplateError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = source.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '}' {
            return Err(error(format!(
                "a `}}` at character {} closes no `{{`",
                at + 1
            )));
        }
        if c != '{' {
            text.push(c);
            continue;
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        let mut action = String::new();
        let mut quote: Option<char> = None;
        let mut closed = false;
        while let Some((_, c)) = chars.next() {
            match (quote, c) {
                (Some(_), '\\') => {
                    action.push(c);
                    if let Some((_, escaped)) = chars.next() {
                        action.push(escaped);
                    }
                }
                (Some(q), c) if c == q => {
                    action.push(c);
                    quote = None;
                }
                (None, '"' | '\'') => {
                    action.push(c);
                    quote = Some(c);
                }
                (None, '}') => {
                    closed = true;
                    break;
                }
                (None, '{') => {
                    return Err(error(format!(
                    "the action opened at character {} holds another `{{` (actions do not nest)",
                    at + 1
                )))
                }
                _ => action.push(c),
            }
        }
        if !closed {
            return Err(error(format!(
                "the `{{` at character {} is not closed by `}}`",
                at + 1
            )));
        }
        pieces.push(Piece::Action(action));
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// A quoted string at the start of `s` (Go's escapes `\t`, `\n`, `\r`, `\\`, `\"`, `\'`), and
/// what follows it.
fn string_literal(s: &str) -> Result<(String, &str), TemplateError> {
    let mut chars = s.char_indices();
    let Some((_, quote)) = chars.next() else {
        return Err(error("an empty string literal"));
    };
    let mut text = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => text.push('\n'),
                Some((_, 't')) => text.push('\t'),
                Some((_, 'r')) => text.push('\r'),
                Some((_, c @ ('\\' | '"' | '\''))) => text.push(c),
                Some((_, other)) => {
                    return Err(error(format!(
                        "`\\{other}` in {s} is no escape (\\n, \\t, \\r, \\\\, \\\")"
                    )))
                }
                None => break,
            },
            c if c == quote => return Ok((text, &s[i + c.len_utf8()..])),
            c => text.push(c),
        }
    }
    Err(error(format!("the string literal {s} is not closed")))
}

fn parse_path(s: &str) -> Result<Path, TemplateError> {
    let mut rest = s.trim();
    let from_root = if let Some(r) = rest.strip_prefix('$') {
        rest = r;
        true
    } else if let Some(r) = rest.strip_prefix('@') {
        rest = r;
        false
    } else {
        if !rest.starts_with('.') && !rest.starts_with('[') {
            return Err(error(format!(
                "`{s}` is not a path: a path starts with `.`, `[` or `$` (e.g. .targets[*].name)"
            )));
        }
        false
    };
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("..") {
            let (name, r) = name(r);
            steps.push(Step::Descend(match name {
                "" | "*" => None,
                name => Some(name.to_string()),
            }));
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            let (name, r) = name(r);
            match name {
                "" if r.is_empty() || r.starts_with('[') => {}
                "" => return Err(error(format!("`{s}`: a `.` names no field"))),
                "*" => steps.push(Step::Wildcard),
                name => steps.push(Step::Field(name.to_string())),
            }
            rest = r;
        } else if let Some(r) = rest.strip_prefix('[') {
            let (step, r) = bracket(r, s)?;
            steps.push(step);
            rest = r;
        } else {
            return Err(error(format!(
                "`{s}`: unexpected `{}` (fields start with `.`, indexes with `[`)",
                rest.chars().next().unwrap_or_default()
            )));
        }
    }
    Ok(Path { from_root, steps })
}

/// A field name: up to the next `.` or `[` (or the end, or a space before an operator).
fn name(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| c == '.' || c == '[' || c.is_whitespace() || "=!<>)".contains(c))
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// The inside of `[…]` (its `[` taken), and what follows the `]`.
fn bracket<'s>(s: &'s str, whole: &str) -> Result<(Step, &'s str), TemplateError> {
    let s = s.trim_start();
    if let Some(r) = s.strip_prefix("?(") {
        let close = closing_paren(r)
            .ok_or_else(|| error(format!("`{whole}`: the filter `[?(` is not closed by `)]`")))?;
        let (inside, after) = (&r[..close], &r[close + 1..]);
        let after = after
            .trim_start()
            .strip_prefix(']')
            .ok_or_else(|| error(format!("`{whole}`: a filter ends with `)]`")))?;
        return Ok((Step::Filter(Box::new(filter(inside, whole)?)), after));
    }
    if s.starts_with('\'') || s.starts_with('"') {
        let mut keys = Vec::new();
        let mut rest = s;
        loop {
            let (key, r) = string_literal(rest.trim_start())?;
            keys.push(key);
            let r = r.trim_start();
            if let Some(r) = r.strip_prefix(',') {
                rest = r;
            } else if let Some(r) = r.strip_prefix(']') {
                return Ok((Step::Keys(keys), r));
            } else {
                return Err(error(format!("`{whole}`: `[` with keys ends with `]`")));
            }
        }
    }
    let close = s
        .find(']')
        .ok_or_else(|| error(format!("`{whole}`: a `[` is not closed by `]`")))?;
    let (inside, after) = (s[..close].trim(), &s[close + 1..]);
    if inside == "*" {
        return Ok((Step::Wildcard, after));
    }
    let number = |t: &str| -> Result<Option<i64>, TemplateError> {
        let t = t.trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse::<i64>().map(Some).map_err(|_| {
            error(format!(
                "`{whole}`: `[{inside}]` is not an index, a slice, `*`, a quoted key or a filter"
            ))
        })
    };
    if inside.contains(':') {
        let parts: Vec<&str> = inside.split(':').collect();
        if parts.len() > 3 {
            return Err(error(format!("`{whole}`: `[{inside}]` is no slice")));
        }
        let at = |i: usize| parts.get(i).copied().unwrap_or("");
        return Ok((
            Step::Slice(number(at(0))?, number(at(1))?, number(at(2))?),
            after,
        ));
    }
    match number(inside)? {
        Some(i) => Ok((Step::Index(i), after)),
        None => Err(error(format!("`{whole}`: `[]` holds nothing"))),
    }
}

/// Where the `)` that closes a filter is (quotes skipped).
fn closing_paren(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') if depth == 0 => return Some(i),
            (None, ')') => depth -= 1,
            _ => {}
        }
    }
    None
}

fn filter(s: &str, whole: &str) -> Result<Filter, TemplateError> {
    let s = s.trim();
    let Some(r) = s.strip_prefix('@') else {
        return Err(error(format!(
            "`{whole}`: a filter starts with `@` (e.g. [?(@.verdict==\"live\")])"
        )));
    };
    let ops = [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];
    let at = ops
        .iter()
        .filter_map(|(word, op)| r.find(word).map(|i| (i, *word, *op)))
        .min_by_key(|(i, word, _)| (*i, std::cmp::Reverse(word.len())));
    let Some((i, word, op)) = at else {
        let path = parse_path(&format!("@{}", r.trim()))?;
        return Ok(Filter {
            path,
            compare: None,
        });
    };
    let path = parse_path(&format!("@{}", r[..i].trim()))?;
    let value = r[i + word.len()..].trim();
    let literal = if value.starts_with('"') || value.starts_with('\'') {
        let (text, rest) = string_literal(value)?;
        if !rest.trim().is_empty() {
            return Err(error(format!("`{whole}`: text after `{value}`")));
        }
        Literal::Text(text)
    } else if value == "true" || value == "false" {
        Literal::Bool(value == "true")
    } else if value.parse::<f64>().is_ok() {
        Literal::Number(value.to_string())
    } else {
        return Err(error(format!(
            "`{whole}`: `{value}` is not a quoted string, a number, true or false"
        )));
    };
    Ok(Filter {
        path,
        compare: Some((op, literal)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report() -> Value {
        json!({
            "schema": "liveproof/v1",
            "verdict": "not_live",
            "targets": [
                {"kind": "Deployment", "namespace": "apps", "name": "web", "verdict": "live",
                 "labels": {"app.kubernetes.io/name": "web"}},
                {"kind": "Deployment", "namespace": "apps", "name": "cart", "verdict": "not_live",
                 "evidence": [{"check": "pods_current", "status": "fail"}]}
            ]
        })
    }

    fn eval(template: &str) -> String {
        Template::parse(template)
            .unwrap_or_else(|e| panic!("{template}: {e}"))
            .evaluate(&report())
    }

    /// The examples kubectl's JSONPath page gives, over a report.
    #[test]
    fn kubectl_examples_evaluate_as_kubectl_does() {
        assert_eq!(eval("{.verdict}"), "not_live");
        assert_eq!(eval("{$.verdict}"), "not_live");
        assert_eq!(eval("{.targets[*].name}"), "web cart");
        assert_eq!(
            eval(r#"{range .targets[*]}{.name}{"\t"}{.verdict}{"\n"}{end}"#),
            "web\tlive\ncart\tnot_live\n"
        );
        assert_eq!(eval("{range .targets}[{.name}]{end}"), "[web][cart]");
        assert_eq!(eval("{.targets[0].name}"), "web");
        assert_eq!(eval("{.targets[-1].name}"), "cart");
        assert_eq!(eval("{.targets[0:1].name}"), "web");
        assert_eq!(eval("{..check}"), "pods_current");
        assert_eq!(eval(r#"{.targets[?(@.verdict=="not_live")].name}"#), "cart");
        assert_eq!(eval(r#"{.targets[?(@.verdict != 'live')].name}"#), "cart");
        assert_eq!(eval("{.targets[?(@.evidence)].name}"), "cart");
        assert_eq!(
            eval("{.targets[0].labels['app.kubernetes.io/name']}"),
            "web"
        );
        assert_eq!(eval("verdict: {.verdict}!"), "verdict: not_live!");
        // What is missing prints nothing, as kubectl's default.
        assert_eq!(eval("{.nothing}{.targets[5].name}"), "");
        // Not a string: JSON.
        assert_eq!(
            eval("{.targets[1].evidence[0]}"),
            r#"{"check":"pods_current","status":"fail"}"#
        );
        // A `}` in a string literal does not close the action.
        assert_eq!(eval(r#"{"}"}"#), "}");
    }

    #[test]
    fn a_broken_template_says_what_is_wrong() {
        for (template, said) in [
            ("{.verdict", "not closed by `}`"),
            ("{range .targets[*]}{.name}", "not closed by `{end}`"),
            ("{.name}{end}", "closes no `{range"),
            ("{verdict}", "is not a path"),
            ("{.targets[x]}", "is not an index"),
            ("{.targets[0}", "not closed by `]`"),
            ("{.a[?(@.b==)]}", "is not a quoted string"),
            ("{\"\\q\"}", "is no escape"),
            ("{}", "holds no path"),
            ("a}", "closes no `{`"),
        ] {
            let err = Template::parse(template).expect_err(template);
            assert!(err.to_string().contains(said), "{template}: {err}");
        }
    }
}
