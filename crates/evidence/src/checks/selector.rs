//! Label selectors, matched the way the API server matches them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Whether `labels` satisfy `selector`. An empty selector matches nothing here: a workload
/// always has one, and "every pod in the namespace" is never what we mean.
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
    let expressions_ok = expressions.iter().all(|e| {
        let values = e.values.as_deref().unwrap_or_default();
        let value = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            // An operator the API server would have rejected: match nothing rather than guess.
            _ => false,
        }
    });
    labels_ok && expressions_ok
}

/// The selector as `kubectl get -l` would take it, for messages.
pub fn render(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.as_deref().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            other => format!("{} {other} ({values})", e.key),
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn match_labels_and_expressions() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("app", "inventory")])),
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec!["web".into(), "api".into()]),
            }]),
        };
        assert!(matches(
            &sel,
            Some(&labels(&[("app", "inventory"), ("tier", "api")]))
        ));
        assert!(!matches(
            &sel,
            Some(&labels(&[("app", "inventory"), ("tier", "db")]))
        ));
        assert!(!matches(
            &sel,
            Some(&labels(&[("app", "other"), ("tier", "api")]))
        ));
        assert!(!matches(&sel, None));
        assert_eq!(render(&sel), "app=inventory,tier in (web,api)");
    }

    #[test]
    fn empty_selector_matches_nothing() {
        assert!(!matches(
            &LabelSelector::default(),
            Some(&labels(&[("a", "b")]))
        ));
    }
}
