//! The three PATCH flavours: JSON merge (RFC 7386), strategic merge, JSON patch (RFC 6902).

use serde_json::{Map, Value};

/// RFC 7386: objects merge recursively, `null` deletes, everything else replaces.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// The merge key the built-in types declare for a list field; `None` means the list is replaced.
fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    match field {
        "volumeMounts" | "volumeDevices" => Some("mountPath"),
        "ports" if items.iter().all(|i| i.get("containerPort").is_some()) => Some("containerPort"),
        "ports" if items.iter().all(|i| i.get("port").is_some()) => Some("port"),
        _ if !items.is_empty()
            && items
                .iter()
                .all(|i| i.get("name").is_some() || i.get("$patch").is_some()) =>
        {
            Some("name")
        }
        _ => None,
    }
}

/// Strategic merge: like a merge patch, but lists of objects with a merge key
/// (containers and env by `name`, ...) merge element-wise, and `$patch` directives apply.
pub(crate) fn strategic_merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replacement = p.clone();
        replacement.remove("$patch");
        *target = Value::Object(replacement);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else { return };
    for (k, v) in p {
        if let Some(list) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(cur)), Value::Array(gone)) = (t.get_mut(list), v) {
                cur.retain(|x| !gone.contains(x));
            }
            continue;
        }
        // Ordering and retain-keys directives only matter for client-side apply; drop them.
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                t.remove(k);
            }
            Value::Array(items) => match (merge_key(k, items), t.get_mut(k)) {
                (Some(key), Some(Value::Array(cur))) => merge_list(cur, items, key),
                _ => {
                    let cleaned: Vec<Value> = items
                        .iter()
                        .filter(|i| i.get("$patch").is_none())
                        .cloned()
                        .collect();
                    t.insert(k.clone(), Value::Array(cleaned));
                }
            },
            Value::Object(_) => {
                strategic_merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
            _ => {
                t.insert(k.clone(), v.clone());
            }
        }
    }
}

fn merge_list(cur: &mut Vec<Value>, items: &[Value], key: &str) {
    for item in items {
        let Some(id) = item.get(key) else { continue };
        let pos = cur.iter().position(|c| c.get(key) == Some(id));
        if item.get("$patch").and_then(Value::as_str) == Some("delete") {
            if let Some(i) = pos {
                cur.remove(i);
            }
            continue;
        }
        match pos {
            Some(i) => strategic_merge(&mut cur[i], item),
            None => {
                let mut fresh = Value::Null;
                strategic_merge(&mut fresh, item);
                cur.push(fresh);
            }
        }
    }
}

/// Unescapes one RFC 6901 reference token.
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split_pointer(path: &str) -> Result<(Vec<String>, String), String> {
    if path.is_empty() {
        return Err("the root of the document cannot be patched".to_owned());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| format!("invalid JSON pointer \"{path}\""))?;
    let mut tokens: Vec<String> = rest.split('/').map(unescape).collect();
    let last = tokens.pop().unwrap_or_default();
    Ok((tokens, last))
}

fn parent_mut<'a>(
    doc: &'a mut Value,
    tokens: &[String],
    path: &str,
) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| format!("doc is missing path: \"{path}\""))?;
    }
    Ok(cur)
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let (tokens, last) = split_pointer(path)?;
    match parent_mut(doc, &tokens, path)? {
        Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Value::Array(a) => {
            let idx = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .ok()
                    .filter(|i| *i <= a.len())
                    .ok_or_else(|| format!("invalid index \"{last}\" in \"{path}\""))?
            };
            a.insert(idx, value);
            Ok(())
        }
        _ => Err(format!("doc is missing path: \"{path}\"")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (tokens, last) = split_pointer(path)?;
    let missing = || format!("doc is missing path: \"{path}\"");
    match parent_mut(doc, &tokens, path)? {
        Value::Object(m) => m.remove(&last).ok_or_else(missing),
        Value::Array(a) => {
            let i = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < a.len())
                .ok_or_else(missing)?;
            Ok(a.remove(i))
        }
        _ => Err(missing()),
    }
}

/// RFC 6902; an error message is what the real server puts in its 422/400 Status.
pub(crate) fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or_else(|| "json patch must be an array of operations".to_owned())?;
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("operation {op} is missing path"))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| format!("operation {kind} {path} is missing value"))
        };
        match kind {
            "add" => add(doc, path, value()?)?,
            "remove" => {
                remove(doc, path)?;
            }
            "replace" => {
                remove(doc, path)?;
                add(doc, path, value()?)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&value()?) {
                    return Err(format!("testing value {path} failed"));
                }
            }
            "move" | "copy" => {
                let from = op
                    .get("from")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("operation {kind} is missing from"))?;
                let v = if kind == "move" {
                    remove(doc, from)?
                } else {
                    doc.pointer(from)
                        .cloned()
                        .ok_or_else(|| format!("doc is missing path: \"{from}\""))?
                };
                add(doc, path, v)?;
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merges_containers_and_env_by_name() {
        let mut d = json!({"spec": {"template": {"metadata": {"annotations": {"a": "1"}},
            "spec": {"containers": [
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                {"name": "sidecar", "image": "side:1"}]}}}});
        strategic_merge(
            &mut d,
            &json!({"spec": {"template": {"metadata": {"annotations": {"b": "2"}},
                "spec": {"containers": [{"name": "app", "image": "app:2", "env": [{"name": "B", "value": "3"}]}]}}}}),
        );
        let c = &d["spec"]["template"]["spec"]["containers"];
        assert_eq!(c.as_array().map(Vec::len), Some(2));
        assert_eq!(c[0]["image"], "app:2");
        assert_eq!(
            c[0]["env"],
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "3"}])
        );
        assert_eq!(c[1]["image"], "side:1");
        assert_eq!(
            d["spec"]["template"]["metadata"]["annotations"],
            json!({"a": "1", "b": "2"})
        );
    }

    #[test]
    fn merge_patch_replaces_lists_and_deletes_nulls() {
        let mut d = json!({"a": [1, 2], "b": {"c": 1, "d": 2}});
        merge_patch(&mut d, &json!({"a": [3], "b": {"c": null}}));
        assert_eq!(d, json!({"a": [3], "b": {"d": 2}}));
    }

    #[test]
    fn json_patch_ops() {
        let mut d = json!({"metadata": {"labels": {"a": "1"}}, "list": [1]});
        json_patch(
            &mut d,
            &json!([
                {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
                {"op": "replace", "path": "/metadata/labels/a", "value": "9"},
                {"op": "add", "path": "/list/-", "value": 2},
                {"op": "remove", "path": "/list/0"}
            ]),
        )
        .expect("valid patch");
        assert_eq!(
            d,
            json!({"metadata": {"labels": {"a": "9", "b/c": "2"}}, "list": [2]})
        );
        assert!(json_patch(&mut d, &json!([{"op": "remove", "path": "/nope"}])).is_err());
    }
}
