//! Label and field selectors, parsed the way the API server parses them. Label selectors are
//! liveproof's own (`liveproof_evidence::selector`): one parser and one matcher for what
//! liveproof sends and what the simulator serves.

use liveproof_evidence::selector as labels;
use serde_json::Value;

use crate::resource::ResourceInfo;

/// A `labelSelector` query: none (an empty one) selects every object.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LabelSelector(Option<labels::LabelSelector>);

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

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.trim().is_empty() {
            return Ok(Self(None));
        }
        // The API server's words for a selector it cannot parse.
        labels::parse(s).map(|l| Self(Some(l))).map_err(|_| {
            format!("unable to parse requirement: found '{s}', expected: valid label selector")
        })
    }

    /// The `key=value` terms (and one-value `in` sets): each alone selects exactly the
    /// objects carrying that label, which the store's label index holds.
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        let selector = self.0.as_ref();
        let pairs = selector
            .and_then(|s| s.match_labels.as_ref())
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str()));
        let single_in = selector
            .and_then(|s| s.match_expressions.as_deref())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| match r.values.as_deref() {
                Some([v]) if r.operator == "In" => Some((r.key.as_str(), v.as_str())),
                _ => None,
            });
        pairs.chain(single_in)
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let Some(selector) = &self.0 else {
            return true;
        };
        let labels = obj.get("metadata").and_then(|m| m.get("labels"));
        labels::matches_with(selector, |k| {
            labels.and_then(|l| l.get(k)).and_then(Value::as_str)
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
        // As the API server, and as liveproof's own parser (the same one): a value a label
        // cannot hold is refused, not matched against.
        assert!(LabelSelector::parse("app=a/b").is_err());
        // Empty selects everything; it is not refused.
        assert!(LabelSelector::parse("").expect("empty").matches(&p));
        assert_eq!(
            LabelSelector::parse("app=x,tier in (web),env in (a,b)")
                .expect("parses")
                .equalities()
                .collect::<Vec<_>>(),
            [("app", "x"), ("tier", "web")]
        );
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
