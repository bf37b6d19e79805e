//! Label selectors: rendered as the `labelSelector` query parameter (and for messages), and
//! matched the way the API server matches them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("label selector operator `{operator}` on key `{key}` is not In, NotIn, Exists or DoesNotExist")]
    UnknownOperator { key: String, operator: String },
    #[error("label selector `{key} {operator}` needs at least one value")]
    NoValues { key: String, operator: String },
    #[error(
        "an empty label selector selects every pod; refusing to treat that as the workload's pods"
    )]
    Empty,
}

/// Renders `selector` the way `kubectl get -l` takes it: `k=v`, `k in (a,b)`, `k notin (a)`,
/// `k`, `!k`, joined by commas. An empty selector is an error: apps/v1 rejects it, and
/// listing with it would return every pod in the namespace.
pub fn render(selector: &LabelSelector) -> Result<String, SelectorError> {
    let mut parts = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        parts.push(format!("{k}={v}"));
    }
    for req in selector.match_expressions.iter().flatten() {
        let values = req.values.as_deref().unwrap_or_default();
        let needs_values = || {
            if values.is_empty() {
                Err(SelectorError::NoValues {
                    key: req.key.clone(),
                    operator: req.operator.clone(),
                })
            } else {
                Ok(values.join(","))
            }
        };
        parts.push(match req.operator.as_str() {
            "In" => format!("{} in ({})", req.key, needs_values()?),
            "NotIn" => format!("{} notin ({})", req.key, needs_values()?),
            "Exists" => req.key.clone(),
            "DoesNotExist" => format!("!{}", req.key),
            other => {
                return Err(SelectorError::UnknownOperator {
                    key: req.key.clone(),
                    operator: other.to_string(),
                })
            }
        });
    }
    if parts.is_empty() {
        return Err(SelectorError::Empty);
    }
    Ok(parts.join(","))
}

/// Whether `labels` satisfy `selector`. An empty selector matches nothing here: a workload
/// always has one, and "every pod in the namespace" is never what we mean. An unknown
/// operator matches nothing rather than guess.
pub fn matches(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let empty = BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let match_labels = selector.match_labels.as_ref();
    let expressions = selector.match_expressions.as_deref().unwrap_or_default();
    if match_labels.is_none_or(BTreeMap::is_empty) && expressions.is_empty() {
        return false;
    }
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    labels_ok
        && expressions.iter().all(|req| {
            let values = req.values.as_deref().unwrap_or_default();
            let value = labels.get(&req.key);
            match req.operator.as_str() {
                "In" => value.is_some_and(|v| values.contains(v)),
                "NotIn" => value.is_none_or(|v| !values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

/// For messages: the rendered selector, or what is wrong with it.
pub fn describe(selector: &LabelSelector) -> String {
    render(selector).unwrap_or_else(|e| format!("<{e}>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(json: serde_json::Value) -> LabelSelector {
        serde_json::from_value(json).expect("selector")
    }

    #[test]
    fn renders_every_operator() {
        let s = selector(serde_json::json!({
            "matchLabels": {"app": "inventory", "tier": "web"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                {"key": "canary", "operator": "NotIn", "values": ["true"]},
                {"key": "team", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"}
            ]
        }));
        assert_eq!(
            render(&s).expect("renders"),
            "app=inventory,tier=web,env in (prod,staging),canary notin (true),team,!legacy"
        );
        let mut labels: BTreeMap<String, String> = [
            ("app", "inventory"),
            ("tier", "web"),
            ("env", "prod"),
            ("team", "a"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert!(matches(&s, Some(&labels)));
        labels.insert("canary".into(), "true".into());
        assert!(!matches(&s, Some(&labels)));
        labels.remove("canary");
        labels.insert("legacy".into(), "x".into());
        assert!(!matches(&s, Some(&labels)));
    }

    #[test]
    fn empty_selector_matches_nothing() {
        let labels: BTreeMap<String, String> = [("a".to_string(), "b".to_string())].into();
        assert!(!matches(&LabelSelector::default(), Some(&labels)));
        let s = selector(serde_json::json!({"matchLabels": {"app": "x"}}));
        assert!(!matches(&s, None));
    }

    #[test]
    fn refuses_what_cannot_be_rendered() {
        assert_eq!(render(&LabelSelector::default()), Err(SelectorError::Empty));
        let s = selector(serde_json::json!({
            "matchExpressions": [{"key": "env", "operator": "In", "values": []}]
        }));
        assert!(matches!(render(&s), Err(SelectorError::NoValues { .. })));
        let s = selector(serde_json::json!({
            "matchExpressions": [{"key": "env", "operator": "Like"}]
        }));
        assert!(matches!(
            render(&s),
            Err(SelectorError::UnknownOperator { .. })
        ));
    }
}
