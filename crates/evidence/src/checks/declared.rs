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
//!
//! A difference is shown with what looks like a credential redacted, on both sides
//! ([`liveproof_redacted::credential`]): a manifest's literal `DB_PASSWORD` env value, a DSN's
//! password, a `--password` flag's argument are never printed, from the manifest or the cluster.

use liveproof_redacted::credential::{self, Shown};
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
    /// Something in `declared` or `live` looked like a credential and is shown redacted.
    pub redacted: bool,
}

/// Compares `declared` against `live` under `path`; `None` when every declared field matches.
pub fn first_difference(declared: &Value, live: Option<&Value>, path: &str) -> Option<Difference> {
    let differ = |live: Option<&Value>| Some(Difference::at(path, declared, live));
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
                        None => Some(Difference::at(&at, item, None)),
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
                .find_map(|(i, (item, l))| {
                    let d = first_difference(item, Some(l), &format!("{path}[{i}]"))?;
                    // The argument after `--password` is the password, whatever it looks like.
                    let after_flag = i
                        .checked_sub(1)
                        .and_then(|p| items[p].as_str())
                        .is_some_and(credential::is_secret_flag);
                    Some(if after_flag { d.hidden() } else { d })
                })
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

impl Difference {
    /// The difference at `path`, each side shown with what looks like a credential redacted.
    fn at(path: &str, declared: &Value, live: Option<&Value>) -> Difference {
        let key = key_at(path);
        let (declared, declared_redacted) = shown(declared, key.as_deref());
        let (live, live_redacted) = match live {
            Some(live) => shown(live, key.as_deref()),
            None => ("<absent>".to_string(), false),
        };
        Difference {
            path: path.to_string(),
            declared,
            live,
            redacted: declared_redacted || live_redacted,
        }
    }

    /// Both sides redacted whole.
    fn hidden(self) -> Difference {
        let hide = |side: String| {
            if side == "<absent>" {
                side
            } else {
                credential::REDACTED.to_string()
            }
        };
        Difference {
            declared: hide(self.declared),
            live: hide(self.live),
            redacted: true,
            ..self
        }
    }
}

/// The key a value at `path` stands under, for the classifier: its last field, or for an
/// entry's `.value` the entry's name (`env[DB_PASSWORD].value` stands under `DB_PASSWORD`).
fn key_at(path: &str) -> Option<String> {
    // `.annotations["example.com/api-token"]`
    if let Some((_, key)) = path.strip_suffix("\"]").and_then(|p| p.rsplit_once("[\"")) {
        return Some(key.to_string());
    }
    let (parent, last) = match path.rsplit_once('.') {
        Some((parent, last)) if !last.contains(['[', ']']) => (parent, last),
        _ => return None,
    };
    let name = parent
        .strip_suffix(']')
        .and_then(|p| p.rsplit_once('['))
        .map(|(_, name)| name.trim_matches('"'))
        .filter(|name| !name.bytes().all(|b| b.is_ascii_digit()));
    Some(credential::effective_key(last, name).to_string())
}

/// `v` as compact JSON with what looks like a credential redacted, and whether anything was.
fn shown(v: &Value, key: Option<&str>) -> (String, bool) {
    match v {
        Value::String(s) => match credential::shown(key, s) {
            Shown::AsIs => (s.clone(), false),
            Shown::Whole => (credential::REDACTED.to_string(), true),
            Shown::Masked(masked) => (masked, true),
        },
        Value::Number(_) if key.is_some_and(credential::is_secret_key) => {
            (credential::REDACTED.to_string(), true)
        }
        Value::Object(_) | Value::Array(_) => {
            let mut v = v.clone();
            let redacted = !credential::redact_json(&mut v, "").is_empty();
            (compact(&v), redacted)
        }
        other => (compact(other), false),
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

    /// Issue 32, point 11: a `-f` difference never prints a literal that looks like a
    /// credential, from the manifest or from the cluster, whatever the shape of the difference.
    #[test]
    fn a_difference_never_shows_a_credential() {
        let env = |value: &str| {
            json!({"spec": {"containers": [{"name": "app", "env": [
                {"name": "DB_PASSWORD", "value": value},
                {"name": "DB_URL", "value": format!("postgres://app:{value}@db")},
                {"name": "LOG_LEVEL", "value": "debug"}]}]}})
        };
        let d = diff(env("declared-s3cret"), env("live-s3cret")).expect("differs");
        assert_eq!(
            d.path,
            ".spec.template.spec.containers[app].env[DB_PASSWORD].value"
        );
        assert_eq!(
            (d.declared.as_str(), d.live.as_str()),
            ("<redacted>", "<redacted>")
        );
        assert!(d.redacted);
        // The same password through a URL: masked, the rest of it kept.
        let mut declared = env("same");
        declared["spec"]["containers"][0]["env"][1]["value"] =
            json!("postgres://app:declared-s3cret@db");
        let d = diff(declared, env("same")).expect("differs");
        assert_eq!(d.declared, "postgres://app:***@db");
        // A whole entry absent, a container absent, an argument after a flag.
        let d = diff(
            env("declared-s3cret"),
            json!({"spec": {"containers": [{"name": "app"}]}}),
        )
        .expect("differs");
        assert!(
            !d.declared.contains("s3cret") && d.declared.contains("debug"),
            "{d:?}"
        );
        let d = diff(env("declared-s3cret"), json!({"spec": {"containers": []}})).expect("differs");
        assert!(!d.declared.contains("s3cret"), "{d:?}");
        let args = |value: &str| json!({"spec": {"containers": [{"name": "app", "args": ["--db-password", value]}]}});
        let d = diff(args("declared-s3cret"), args("live-s3cret")).expect("differs");
        assert_eq!(d.path, ".spec.template.spec.containers[app].args[1]");
        assert_eq!(
            (d.declared.as_str(), d.live.as_str()),
            ("<redacted>", "<redacted>")
        );
        let d = diff(
            json!({"metadata": {"annotations": {"example.com/api-token": "declared-s3cret"}}}),
            json!({"metadata": {"annotations": {}}}),
        )
        .expect("differs");
        assert_eq!(d.declared, "<redacted>");
        // What does not look like one is shown, as before.
        let d = diff(
            json!({"spec": {"containers": [{"name": "app", "env": [{"name": "LOG_LEVEL", "value": "debug"}]}]}}),
            json!({"spec": {"containers": [{"name": "app", "env": [{"name": "LOG_LEVEL", "value": "info"}]}]}}),
        )
        .expect("differs");
        assert_eq!(
            (d.declared.as_str(), d.live.as_str(), d.redacted),
            ("debug", "info", false)
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
