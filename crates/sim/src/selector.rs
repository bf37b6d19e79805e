//! Label and field selectors, parsed the way the API server parses them.

use serde_json::Value;

use crate::resource::ResourceInfo;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

/// Splits on commas that are not inside `in (a,b)` parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0_i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_set(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for term in split_terms(s) {
            let err = || {
                format!(
                    "unable to parse requirement: found '{term}', expected: valid label selector"
                )
            };
            let req = if let Some(key) = term.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEq(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("==") {
                Requirement::Eq(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once('=') {
                Requirement::Eq(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                Requirement::NotIn(k.trim().to_owned(), parse_set(rest).ok_or_else(err)?)
            } else if let Some((k, rest)) = term.split_once(" in ") {
                Requirement::In(k.trim().to_owned(), parse_set(rest).ok_or_else(err)?)
            } else {
                Requirement::Exists(term.to_owned())
            };
            let key = match &req {
                Requirement::Eq(k, _)
                | Requirement::NotEq(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(err());
            }
            reqs.push(req);
        }
        Ok(Self(reqs))
    }

    /// The `key=value` terms (and one-value `in` sets): each alone selects exactly the
    /// objects carrying that label, which the store's label index holds.
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().filter_map(|r| match r {
            Requirement::Eq(k, v) => Some((k.as_str(), v.as_str())),
            Requirement::In(k, vs) if vs.len() == 1 => Some((k.as_str(), vs[0].as_str())),
            _ => None,
        })
    }

    pub fn matches(&self, obj: &Value) -> bool {
        if self.0.is_empty() {
            return true;
        }
        let labels = obj.get("metadata").and_then(|m| m.get("labels"));
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Eq(k, v) => get(k) == Some(v.as_str()),
            // Like the real server, `!=` and `notin` also match objects without the label.
            Requirement::NotEq(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    /// Where the field is in the object, as a JSON pointer.
    pointer: String,
    /// `=` (or `==`) rather than `!=`.
    equal: bool,
    value: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector(Vec<FieldTerm>);

/// Fields the real server indexes per kind; anything else is a 400.
fn supported_fields(info: &ResourceInfo) -> &'static [&'static str] {
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        ("", "Event") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("events.k8s.io", "Event") => &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        ],
        ("", "Secret") => &["type"],
        ("", "Node") => &["spec.unschedulable"],
        ("", "Namespace") => &["status.phase"],
        ("apps", "ReplicaSet") => &["status.replicas"],
        _ => &[],
    }
}

impl FieldSelector {
    pub fn parse(s: &str, info: &ResourceInfo) -> Result<Self, String> {
        let mut out = Vec::new();
        for term in split_terms(s) {
            let (k, eq, v) = if let Some((k, v)) = term.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = term.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = term.split_once('=') {
                (k, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{term}'"
                ));
            };
            let k = k.trim();
            if !matches!(k, "metadata.name" | "metadata.namespace")
                && !supported_fields(info).contains(&k)
            {
                return Err(format!("field label not supported: {k}"));
            }
            let path = if k == "source" { "source.component" } else { k };
            out.push(FieldTerm {
                field: k.to_owned(),
                pointer: format!("/{}", path.replace('.', "/")),
                equal: eq,
                value: v.trim().to_owned(),
            });
        }
        Ok(Self(out))
    }

    /// The value of the first `field=value` term on `field`.
    pub fn equals(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|t| t.equal && t.field == field)
            .map(|t| t.value.as_str())
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|t| {
            // Absent fields compare as "" (an unscheduled pod has spec.nodeName "").
            let same = match obj.pointer(&t.pointer) {
                Some(Value::String(s)) => *s == t.value,
                Some(Value::Null) | None => t.value.is_empty(),
                // Numbers and booleans compare as they print (`spec.hostNetwork=true`).
                Some(other) => {
                    let printed = other.to_string();
                    printed == t.value
                }
            };
            same == t.equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(labels: Value) -> Value {
        json!({"metadata": {"name": "p", "labels": labels}, "status": {"phase": "Running"}})
    }

    #[test]
    fn label_operators() {
        let p = pod(json!({"app": "x", "tier": "web"}));
        for (sel, want) in [
            ("app=x", true),
            ("app==x", true),
            ("app!=x", false),
            ("app in (x, y)", true),
            ("app notin (x,y)", false),
            ("tier,app=x", true),
            ("!tier", false),
            ("missing", false),
            ("!missing", true),
            ("missing!=v", true),
            ("app=x,tier in (db)", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).expect(sel).matches(&p),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("app in x").is_err());
    }

    #[test]
    fn unknown_field_is_rejected() {
        let pods = crate::resource::builtins().remove(0);
        assert!(FieldSelector::parse("status.phase=Running", &pods).is_ok());
        let err = FieldSelector::parse("spec.foo=x", &pods).expect_err("unsupported");
        assert_eq!(err, "field label not supported: spec.foo");
        let fs = FieldSelector::parse("status.phase!=Pending,metadata.name=p", &pods).expect("ok");
        assert!(fs.matches(&pod(json!({}))));
    }
}
