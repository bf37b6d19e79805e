//! The label index: which objects of a resource carry a label `key=value`, so an equality
//! selector reads its candidates instead of every object of the kind.

use std::collections::BTreeSet;

use serde_json::Value;

use super::terms::Terms;
use super::ObjKey;

/// (group, plural, label key, label value).
type Term = (String, String, String, String);

/// The objects carrying each label, in key order, so a candidate set is already in LIST order
/// and a namespace or a continue token is a range of it.
#[derive(Default)]
pub(super) struct LabelIndex(Terms<Term>);

fn term(group: &str, plural: &str, key: &str, value: &str) -> Term {
    (
        group.to_owned(),
        plural.to_owned(),
        key.to_owned(),
        value.to_owned(),
    )
}

/// An object's labels as selectors read them: a label whose value is not a string matches no
/// `key=value` term, so it is not indexed.
fn string_labels(obj: &Value) -> impl Iterator<Item = (&str, &str)> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
}

fn terms<'a>(key: &'a ObjKey, obj: &'a Value) -> impl Iterator<Item = Term> + 'a {
    string_labels(obj).map(|(k, v)| term(&key.0, &key.1, k, v))
}

impl LabelIndex {
    pub fn insert(&mut self, key: &ObjKey, obj: &Value) {
        self.0.insert(key, terms(key, obj));
    }

    pub fn remove(&mut self, key: &ObjKey, obj: &Value) {
        self.0.remove(key, terms(key, obj));
    }

    /// The objects of `group`/`plural` carrying `key=value`, or `None` when none does.
    pub fn carrying(
        &self,
        group: &str,
        plural: &str,
        key: &str,
        value: &str,
    ) -> Option<&BTreeSet<ObjKey>> {
        self.0.get(&term(group, plural, key, value))
    }

    /// Every entry, sorted: what a test compares with an index rebuilt from the objects.
    #[cfg(test)]
    pub fn entries(&self) -> Vec<(Term, Vec<ObjKey>)> {
        self.0.entries()
    }
}
