//! A JSON `kind: List` (what `kubectl get -o json` prints for several objects, and the typed
//! ones such as `SecretList`) taken apart into its objects: the one flattener the readers of
//! objects share (a dump read offline, the simulator's fixtures), each keeping its own policy for
//! what it is handed (an object without `kind` refused or skipped, `null` skipped, …).

use serde_json::Value;

/// Whether `value` is a list of objects: its `kind` is `List` or a typed list (`SecretList`),
/// whose `items` are the objects ([`liveproof_helm::yaml::is_list_kind`]).
pub fn is_list(value: &Value) -> bool {
    value
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(liveproof_helm::yaml::is_list_kind)
}

/// Hands each object `value` holds to `f`, with where it was: `what` for `value` itself,
/// `what: items[i]` for a List's `i`th item, and so on down nested Lists. A List whose `items`
/// is an array is taken apart (an empty one holds nothing); anything else is handed over as it
/// is (an object, `null`, something without `kind`, a List without an `items` array), for the
/// caller to take, skip or refuse. Stops at the first error `f` returns.
pub fn each_object<E>(
    mut value: Value,
    what: &str,
    f: &mut impl FnMut(Value, &str) -> Result<(), E>,
) -> Result<(), E> {
    if is_list(&value) {
        if let Some(Value::Array(items)) = value.get_mut("items") {
            for (i, item) in std::mem::take(items).into_iter().enumerate() {
                each_object(item, &format!("{what}: items[{i}]"), f)?;
            }
            return Ok(());
        }
    }
    f(value, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every object handed over, as `(what, kind or the value itself)`.
    fn flattened(value: Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        each_object(value, "dump.json", &mut |object, what| {
            let shown = match object.get("kind").and_then(Value::as_str) {
                Some(kind) => kind.to_string(),
                None => object.to_string(),
            };
            out.push((what.to_string(), shown));
            Ok::<(), ()>(())
        })
        .expect("no error");
        out
    }

    fn pair(what: &str, shown: &str) -> (String, String) {
        (what.to_string(), shown.to_string())
    }

    #[test]
    fn an_object_is_handed_over_as_it_is() {
        assert_eq!(
            flattened(json!({"kind": "Pod", "metadata": {"name": "a"}})),
            [pair("dump.json", "Pod")]
        );
    }

    #[test]
    fn a_list_is_its_items_named_by_position() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [
            {"kind": "Deployment"},
            {"kind": "Service"},
        ]});
        assert_eq!(
            flattened(list),
            [
                pair("dump.json: items[0]", "Deployment"),
                pair("dump.json: items[1]", "Service"),
            ]
        );
    }

    #[test]
    fn a_typed_list_is_a_list() {
        let list = json!({"apiVersion": "v1", "kind": "SecretList", "items": [{"kind": "Secret"}]});
        assert_eq!(flattened(list), [pair("dump.json: items[0]", "Secret")]);
    }

    #[test]
    fn nested_lists_are_taken_apart_all_the_way_down() {
        let list = json!({"kind": "List", "items": [
            {"kind": "PodList", "items": [{"kind": "Pod"}, {"kind": "List", "items": [{"kind": "Node"}]}]},
            {"kind": "Service"},
        ]});
        assert_eq!(
            flattened(list),
            [
                pair("dump.json: items[0]: items[0]", "Pod"),
                pair("dump.json: items[0]: items[1]: items[0]", "Node"),
                pair("dump.json: items[1]", "Service"),
            ]
        );
    }

    #[test]
    fn an_empty_list_holds_nothing() {
        assert_eq!(flattened(json!({"kind": "List", "items": []})), []);
    }

    #[test]
    fn what_is_not_an_object_of_a_list_is_left_to_the_caller() {
        // No `items` array: not taken apart. No `kind`, or `null`: the caller's to refuse or skip.
        let list = json!({"kind": "List", "items": [
            {"kind": "ConfigMapList", "items": null},
            {"metadata": {"name": "no-kind"}},
            null,
        ]});
        assert_eq!(
            flattened(list),
            [
                pair("dump.json: items[0]", "ConfigMapList"),
                pair("dump.json: items[1]", r#"{"metadata":{"name":"no-kind"}}"#),
                pair("dump.json: items[2]", "null"),
            ]
        );
        assert_eq!(
            flattened(json!({"kind": "List"})),
            [pair("dump.json", "List")]
        );
    }

    #[test]
    fn the_first_error_stops_the_walk() {
        let list = json!({"kind": "List", "items": [{"kind": "Pod"}, {}, {"kind": "Node"}]});
        let mut seen = Vec::new();
        let err = each_object(list, "dump.json", &mut |object, what| {
            seen.push(what.to_string());
            match object.get("kind") {
                Some(_) => Ok(()),
                None => Err(format!("{what}: no kind")),
            }
        });
        assert_eq!(err, Err("dump.json: items[1]: no kind".to_string()));
        assert_eq!(seen, ["dump.json: items[0]", "dump.json: items[1]"]);
    }

    #[test]
    fn is_list_asks_the_kind() {
        assert!(is_list(&json!({"kind": "List"})));
        assert!(is_list(&json!({"kind": "EndpointSliceList", "items": []})));
        assert!(!is_list(&json!({"kind": "Pod"})));
        assert!(!is_list(&json!({"items": []})));
        assert!(!is_list(&Value::Null));
    }
}
