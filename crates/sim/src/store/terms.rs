//! An index from terms to the objects that have them, kept in key order so a candidate set is
//! already in LIST order: what the label index and the owner index share. Each says which
//! terms an object has; this keeps the sets.

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;

use super::ObjKey;

pub(super) struct Terms<T>(HashMap<T, BTreeSet<ObjKey>>);

impl<T> Default for Terms<T> {
    fn default() -> Self {
        Terms(HashMap::new())
    }
}

impl<T: Hash + Eq + Ord + Clone> Terms<T> {
    /// `key` has each of `terms`.
    pub fn insert(&mut self, key: &ObjKey, terms: impl IntoIterator<Item = T>) {
        for t in terms {
            self.0.entry(t).or_default().insert(key.clone());
        }
    }

    /// `key` no longer has `terms`; a term no object has is dropped.
    pub fn remove(&mut self, key: &ObjKey, terms: impl IntoIterator<Item = T>) {
        for t in terms {
            if let Some(keys) = self.0.get_mut(&t) {
                keys.remove(key);
                if keys.is_empty() {
                    self.0.remove(&t);
                }
            }
        }
    }

    /// The objects that have `term`, or `None` when none has.
    pub fn get(&self, term: &T) -> Option<&BTreeSet<ObjKey>> {
        self.0.get(term)
    }

    /// Every entry, sorted: what a test compares with an index rebuilt from the objects.
    #[cfg(test)]
    pub fn entries(&self) -> Vec<(T, Vec<ObjKey>)> {
        let mut out: Vec<(T, Vec<ObjKey>)> = self
            .0
            .iter()
            .map(|(t, keys)| (t.clone(), keys.iter().cloned().collect()))
            .collect();
        out.sort();
        out
    }
}
