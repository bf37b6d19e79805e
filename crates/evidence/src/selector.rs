//! Label selectors: rendered as the `labelSelector` query parameter (and for messages), and
//! matched the way the API server matches them.

use std::collections::BTreeMap;

pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

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
    #[error("label selector `{selector}`: {reason}")]
    Syntax { selector: String, reason: String },
}

impl crate::hint::Hinted for SelectorError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            SelectorError::Syntax { .. } => Some("write it as kubectl takes it: app=web, tier!=cache, env in (prod,staging), release, !canary (terms joined by commas)".into()),
            SelectorError::UnknownOperator { .. } | SelectorError::NoValues { .. } | SelectorError::Empty => None,
        }
    }
}

/// Parses a label selector as `kubectl get -l` takes it: `k=v` (or `k==v`), `k!=v`,
/// `k in (a,b)`, `k notin (a,b)`, `k` (exists), `!k` (does not exist), joined by commas.
pub fn parse(text: &str) -> Result<LabelSelector, SelectorError> {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    let syntax = |reason: String| SelectorError::Syntax {
        selector: text.to_string(),
        reason,
    };
    let requirement = |key: &str, operator: &str, values: Option<Vec<String>>| {
        let key = key.trim();
        if !valid_key(key) {
            return Err(syntax(format!("`{key}` is not a label key")));
        }
        if let Some(bad) = values.iter().flatten().find(|v| !valid_value(v)) {
            return Err(syntax(format!("`{bad}` is not a label value")));
        }
        Ok(LabelSelectorRequirement {
            key: key.to_string(),
            operator: operator.to_string(),
            values,
        })
    };
    let mut requirements = Vec::new();
    for term in split_terms(text) {
        let words: Vec<&str> = term.split_whitespace().collect();
        let set = |rest: &str| -> Result<Vec<String>, SelectorError> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| syntax(format!("`{term}`: the values go in parentheses")))?;
            let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
            if values.iter().any(String::is_empty) {
                return Err(syntax(format!("`{term}`: an empty value in the set")));
            }
            Ok(values)
        };
        let req = if let Some((key, value)) = term.split_once("!=") {
            requirement(key, "NotIn", Some(vec![value.trim().to_string()]))?
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            requirement(key, "In", Some(vec![value.trim().to_string()]))?
        } else if words.get(1) == Some(&"in") {
            let rest = term.split_once(" in").map(|(_, r)| r).unwrap_or_default();
            requirement(words[0], "In", Some(set(rest)?))?
        } else if words.get(1) == Some(&"notin") {
            let rest = term
                .split_once(" notin")
                .map(|(_, r)| r)
                .unwrap_or_default();
            requirement(words[0], "NotIn", Some(set(rest)?))?
        } else if let Some(key) = term.strip_prefix('!') {
            requirement(key, "DoesNotExist", None)?
        } else if words.len() == 1 {
            requirement(term, "Exists", None)?
        } else {
            return Err(syntax(format!("`{term}` is not a selector term")));
        };
        requirements.push(req);
    }
    if requirements.is_empty() {
        return Err(syntax("it selects nothing (it is empty)".into()));
    }
    Ok(LabelSelector {
        match_labels: None,
        match_expressions: Some(requirements),
    })
}

/// Splits on the commas that are not inside `in (a,b)` parentheses; trimmed, empty ones
/// dropped.
fn split_terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0_i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

/// A label key: an optional DNS prefix and `/`, then a name of letters, digits, `-`, `_`, `.`
/// beginning and ending with a letter or digit (at most 63 characters).
fn valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
    }) && !name.is_empty()
        && valid_value(name)
}

/// A label value: empty, or at most 63 letters, digits, `-`, `_`, `.`, beginning and ending
/// with a letter or digit.
fn valid_value(value: &str) -> bool {
    value.is_empty()
        || (value.len() <= 63
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()))
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
pub fn matches<L: LabelMap + ?Sized>(selector: &LabelSelector, labels: Option<&L>) -> bool {
    matches_with(selector, |key| labels.and_then(|labels| labels.label(key)))
}

/// An object's labels, however it holds them: a map (`ObjectMeta`'s), or a pod's sorted list
/// ([`crate::pod::Labels`]).
pub trait LabelMap {
    /// The value of label `key`, when the object has it.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelMap for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// [`matches`], each label read through `label` (its value, when the object has it): for
/// objects whose labels are JSON, not a map.
pub fn matches_with<'a>(selector: &LabelSelector, label: impl Fn(&str) -> Option<&'a str>) -> bool {
    let match_labels = selector.match_labels.as_ref();
    let expressions = selector.match_expressions.as_deref().unwrap_or_default();
    if match_labels.is_none_or(BTreeMap::is_empty) && expressions.is_empty() {
        return false;
    }
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == Some(v.as_str()));
    labels_ok
        && expressions.iter().all(|req| {
            let values = req.values.as_deref().unwrap_or_default();
            let holds = |v: &str| values.iter().any(|x| x == v);
            let value = label(&req.key);
            match req.operator.as_str() {
                "In" => value.is_some_and(holds),
                "NotIn" => value.is_none_or(|v| !holds(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

/// Label selectors indexed by one `matchLabels` term of each: which of 2,000 may select an
/// object is a lookup per indexed label key, not 2,000 matches. The candidates are a superset;
/// [`matches`] decides.
#[derive(Debug, Clone, Default)]
pub struct Terms {
    /// key → value → the positions of the selectors whose `matchLabels` hold `key: value`.
    by_term: BTreeMap<String, BTreeMap<String, Vec<usize>>>,
    /// Selectors without `matchLabels` (expressions only): candidates of every object.
    unindexed: Vec<usize>,
}

impl Terms {
    /// Indexes `selector` as the one at position `i`.
    pub fn push(&mut self, i: usize, selector: &LabelSelector) {
        match selector.match_labels.as_ref().and_then(|m| m.iter().next()) {
            Some((key, value)) => self
                .by_term
                .entry(key.clone())
                .or_default()
                .entry(value.clone())
                .or_default()
                .push(i),
            None => self.unindexed.push(i),
        }
    }

    /// The positions of the selectors that may select an object whose labels `label` reads
    /// (by key): each indexed selector at most once, unordered.
    pub fn candidates<'s, 'l>(
        &'s self,
        label: impl Fn(&str) -> Option<&'l str> + 's,
    ) -> impl Iterator<Item = usize> + 's {
        self.by_term
            .iter()
            .flat_map(move |(key, values)| label(key).and_then(|value| values.get(value)))
            .flatten()
            .chain(&self.unindexed)
            .copied()
    }
}

/// For messages: the rendered selector, or what is wrong with it.
pub fn describe(selector: &LabelSelector) -> String {
    render(selector).unwrap_or_else(|e| format!("<{e}>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The candidates, each tested with [`matches`], are exactly the selectors that match one
    /// by one: several labels, expressions only, the empty selector, objects without labels.
    /// And they narrow: a selector of another value of the indexed key is no candidate.
    #[test]
    fn terms_give_every_selector_that_matches_and_narrow() {
        let by = |pairs: &[(&str, &str)]| LabelSelector {
            match_labels: Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..LabelSelector::default()
        };
        let expression = parse("tier in (edge)").expect("a selector");
        let selectors = [
            by(&[("app", "a")]),
            by(&[("app", "b"), ("tier", "web")]),
            by(&[("team", "x")]),
            expression,
            LabelSelector::default(),
            by(&[("app", "a")]),
        ];
        let mut terms = Terms::default();
        for (i, s) in selectors.iter().enumerate() {
            terms.push(i, s);
        }
        let objects: [&[(&str, &str)]; 6] = [
            &[("app", "a")],
            &[("app", "b")],
            &[("app", "b"), ("tier", "web")],
            &[("tier", "edge")],
            &[("team", "x"), ("app", "c")],
            &[],
        ];
        for pairs in objects {
            let labels: BTreeMap<String, String> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut found: Vec<usize> = terms
                .candidates(|k| labels.get(k).map(String::as_str))
                .filter(|&i| matches(&selectors[i], Some(&labels)))
                .collect();
            found.sort_unstable();
            let one_by_one: Vec<usize> = (0..selectors.len())
                .filter(|&i| matches(&selectors[i], Some(&labels)))
                .collect();
            assert_eq!(found, one_by_one, "{pairs:?}");
        }
        let app_b = BTreeMap::from([("app".to_string(), "b".to_string())]);
        let mut candidates: Vec<usize> = terms
            .candidates(|k| app_b.get(k).map(String::as_str))
            .collect();
        candidates.sort_unstable();
        assert_eq!(
            candidates,
            [1, 3, 4],
            "app=a's selectors are not candidates"
        );
    }
    use crate::hint::Hinted as _;

    #[test]
    fn parses_what_kubectl_takes_and_matches_as_the_server_does() {
        let labels = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        let web = labels(&[("app", "web"), ("env", "prod")]);
        let cache = labels(&[("app", "cache"), ("env", "prod"), ("canary", "")]);
        for (text, web_matches, cache_matches) in [
            ("app=web", true, false),
            ("app==web", true, false),
            ("app!=web", false, true),
            ("app in (web, api)", true, false),
            ("app notin (web)", false, true),
            ("env=prod,app=web", true, false),
            ("canary", false, true),
            ("!canary", true, false),
            ("env in (prod,staging),!canary", true, false),
            ("example.com/team", false, false),
        ] {
            let selector = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(matches(&selector, Some(&web)), web_matches, "{text} on web");
            assert_eq!(
                matches(&selector, Some(&cache)),
                cache_matches,
                "{text} on cache"
            );
        }
    }

    #[test]
    fn a_selector_kubectl_refuses_is_an_error_naming_the_term() {
        for (text, names) in [
            ("", "empty"),
            ("app in web", "parentheses"),
            ("app in (web,)", "empty value"),
            ("app=we b", "`we b`"),
            ("-app=web", "`-app`"),
            ("app web x", "`app web x`"),
        ] {
            let err = parse(text).expect_err(text);
            assert!(err.to_string().contains(names), "{text}: {err}");
            let hint = err.hint().unwrap_or_default();
            assert!(hint.starts_with("write it as kubectl takes it"), "{hint}");
        }
    }

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
        assert!(!matches(&s, None::<&BTreeMap<String, String>>));
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
