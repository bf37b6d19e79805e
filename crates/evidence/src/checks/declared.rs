//! `verify -f`: does the live pod template carry every field the manifest declares?
//!
//! A subset comparison, because the API server adds defaults (imagePullPolicy,
//! terminationMessagePath, …) the manifest never wrote: every field the manifest sets must be
//! in the live object with the same value; fields only the live object has are not compared.
//! - maps by key;
//! - `containers`, `initContainers`, `ephemeralContainers`, `env`, `ports`, `volumes` and
//!   `volumeMounts` by `name` (when every declared element has a distinct one; else, and for
//!   every other list, element by element with the same length);
//! - scalars equal, a number and a string with the same text being equal (`8080`, `"8080"`),
//!   and under `resources` two quantities of the same value (`500m` = `0.5`, `1Gi` = `1024Mi`);
//! - a declared `null`, empty list or empty map matches an absent field.

use serde_json::Value;

/// Lists whose elements are identified by their `name`, as the API merges them.
const NAMED_LISTS: &[&str] = &[
    "containers",
    "initContainers",
    "ephemeralContainers",
    "env",
    "ports",
    "volumes",
    "volumeMounts",
];

/// The first declared field the live object does not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// e.g. `.spec.template.spec.containers[app].image`.
    pub path: String,
    /// The declared value, as compact JSON.
    pub declared: String,
    /// The live value, as compact JSON, or `<absent>`.
    pub live: String,
}

/// Compares `declared` against `live` under `path`; `None` when every declared field matches.
pub fn first_difference(declared: &Value, live: Option<&Value>, path: &str) -> Option<Difference> {
    let differ = |live: Option<&Value>| {
        Some(Difference {
            path: path.to_string(),
            declared: compact(declared),
            live: live.map_or_else(|| "<absent>".to_string(), compact),
        })
    };
    if is_empty(declared) && live.is_none_or(is_empty) {
        return None;
    }
    match (declared, live) {
        // Name the deepest declared field, not the first absent map above it.
        (Value::Object(fields), None) => fields.iter().find_map(|(key, value)| {
            first_difference(value, None, &format!("{path}{}", field(key)))
        }),
        (_, None) => differ(None),
        (Value::Object(fields), Some(live)) => {
            let Value::Object(live_fields) = live else {
                return differ(Some(live));
            };
            fields.iter().find_map(|(key, value)| {
                first_difference(
                    value,
                    live_fields.get(key),
                    &format!("{path}{}", field(key)),
                )
            })
        }
        (Value::Array(items), Some(live)) => {
            let Value::Array(live_items) = live else {
                return differ(Some(live));
            };
            let key = path.rsplit('.').next().unwrap_or_default();
            if let Some(names) = NAMED_LISTS
                .contains(&key)
                .then(|| distinct_names(items))
                .flatten()
            {
                return items.iter().zip(names).find_map(|(item, name)| {
                    let live_item = live_items
                        .iter()
                        .find(|l| l.get("name").and_then(Value::as_str) == Some(name));
                    let at = format!("{path}[{name}]");
                    match live_item {
                        Some(l) => first_difference(item, Some(l), &at),
                        None => Some(Difference {
                            path: at,
                            declared: compact(item),
                            live: "<absent>".into(),
                        }),
                    }
                });
            }
            if items.len() != live_items.len() {
                return differ(Some(live));
            }
            items
                .iter()
                .zip(live_items)
                .enumerate()
                .find_map(|(i, (item, l))| first_difference(item, Some(l), &format!("{path}[{i}]")))
        }
        (_, Some(live)) if scalar_eq(declared, live, path) => None,
        (_, Some(live)) => differ(Some(live)),
    }
}

/// The `name` of every element, when each has a distinct one.
fn distinct_names(items: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = items
        .iter()
        .map(|i| i.get("name").and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == names.len()).then_some(names)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn field(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn scalar_eq(declared: &Value, live: &Value, path: &str) -> bool {
    if declared == live {
        return true;
    }
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let (Some(a), Some(b)) = (text(declared), text(live)) else {
        return false;
    };
    if a == b {
        return true;
    }
    path.contains(".resources.")
        && matches!((quantity(&a), quantity(&b)), (Some(x), Some(y)) if (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()) * 4.0)
}

/// A Kubernetes resource quantity's value: `500m`, `1.5`, `2Gi`, `1e3`, `128M`.
fn quantity(text: &str) -> Option<f64> {
    const SUFFIXES: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let text = text.trim();
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(s, f)| text.strip_suffix(s).map(|n| (n, *f)))
        .unwrap_or((text, 1.0));
    if number.is_empty()
        || !number.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '+' || c == '-')
    {
        return None;
    }
    number.parse::<f64>().ok().map(|n| n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diff(declared: Value, live: Value) -> Option<Difference> {
        first_difference(&declared, Some(&live), ".spec.template")
    }

    #[test]
    fn defaults_the_server_added_are_not_differences() {
        let declared = json!({"spec": {"containers": [{"name": "app", "image": "ghcr.io/acme/app:1.4.0",
            "ports": [{"containerPort": 8080}]}]}});
        let live = json!({"spec": {"containers": [
            {"name": "sidecar", "image": "envoy:1"},
            {"name": "app", "image": "ghcr.io/acme/app:1.4.0", "imagePullPolicy": "IfNotPresent",
             "ports": [{"containerPort": 8080, "protocol": "TCP"}]}],
            "restartPolicy": "Always"}});
        assert_eq!(diff(declared, live), None);
    }

    #[test]
    fn names_the_first_differing_field_by_container_name() {
        let declared =
            json!({"spec": {"containers": [{"name": "app", "image": "ghcr.io/acme/app:1.4.0"}]}});
        let live =
            json!({"spec": {"containers": [{"name": "app", "image": "ghcr.io/acme/app:1.3.9"}]}});
        let d = diff(declared, live).expect("differs");
        assert_eq!(d.path, ".spec.template.spec.containers[app].image");
        assert_eq!(d.declared, "ghcr.io/acme/app:1.4.0");
        assert_eq!(d.live, "ghcr.io/acme/app:1.3.9");
    }

    #[test]
    fn a_declared_env_var_missing_live_is_a_difference() {
        let declared = json!({"spec": {"containers": [{"name": "app", "env": [{"name": "DB_URL", "value": "x"}]}]}});
        let live = json!({"spec": {"containers": [{"name": "app", "env": [{"name": "OTHER", "value": "y"}]}]}});
        let d = diff(declared, live).expect("differs");
        assert_eq!(d.path, ".spec.template.spec.containers[app].env[DB_URL]");
        assert_eq!(d.live, "<absent>");
    }

    #[test]
    fn other_lists_compare_element_wise_and_by_length() {
        let declared = json!({"spec": {"containers": [{"name": "app", "args": ["--port", "80"]}]}});
        let live =
            json!({"spec": {"containers": [{"name": "app", "args": ["--port", "80", "--debug"]}]}});
        let d = diff(declared, live).expect("differs");
        assert_eq!(d.path, ".spec.template.spec.containers[app].args");
    }

    #[test]
    fn numbers_strings_and_quantities() {
        let declared = json!({"metadata": {"annotations": {"example.com/port": 8080}},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "0.5", "memory": "1Gi"}}}]}});
        let live = json!({"metadata": {"annotations": {"example.com/port": "8080"}},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "500m", "memory": "1024Mi"}}}]}});
        assert_eq!(diff(declared, live), None);
        // Outside resources, text is text: "1k" is not "1000".
        let d = diff(
            json!({"metadata": {"labels": {"size": "1k"}}}),
            json!({"metadata": {"labels": {"size": "1000"}}}),
        )
        .expect("differs");
        assert_eq!(d.path, ".spec.template.metadata.labels.size");
        let d = diff(
            json!({"metadata": {"annotations": {"example.com/x": "a"}}}),
            json!({"metadata": {}}),
        )
        .expect("differs");
        assert_eq!(
            d.path,
            ".spec.template.metadata.annotations[\"example.com/x\"]"
        );
    }

    #[test]
    fn declared_empty_matches_absent() {
        assert_eq!(
            diff(json!({"spec": {"volumes": []}}), json!({"spec": {}})),
            None
        );
    }
}
