//! [`Observed`](crate::Observed)'s workloads, by kind, type-erased: the snapshot holds one
//! store, not a list per workload kind, so a new workload kind adds no field to it. Each list
//! keeps the shared objects (`Arc`s) as gathered, never a copy of one.
//!
//! Plain data: it names no kind and reads no snapshot, so the snapshot can hold it without
//! importing the kinds' modules.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::index::Names;

/// The workload objects of a snapshot, one list per object type.
#[derive(Default)]
pub struct WorkloadStore {
    lists: BTreeMap<TypeId, Box<dyn List>>,
    /// Each list's positions by name, built when first asked and dropped whenever the list is
    /// handed out to change ([`WorkloadStore::of_mut`]): a target's workload is a lookup, not
    /// a scan of 2,000 (and `--wait` looks up every target on every snapshot).
    names: Mutex<BTreeMap<TypeId, Arc<Names>>>,
}

/// One type's list, erased: a `Vec<Arc<T>>`.
trait List: Send + Sync {
    fn clone_list(&self) -> Box<dyn List>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn is_empty(&self) -> bool;
    fn debug(&self, f: &mut fmt::DebugMap<'_, '_>);
}

impl<T: Any + Send + Sync + fmt::Debug> List for Vec<Arc<T>> {
    fn clone_list(&self) -> Box<dyn List> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }

    fn debug(&self, f: &mut fmt::DebugMap<'_, '_>) {
        f.entry(&std::any::type_name::<T>(), self);
    }
}

impl WorkloadStore {
    /// The objects of type `T`, in the order they were added.
    pub fn of<T: Any + Send + Sync + fmt::Debug>(&self) -> &[Arc<T>] {
        self.lists
            .get(&TypeId::of::<T>())
            .and_then(|list| list.as_any().downcast_ref::<Vec<Arc<T>>>())
            .map_or(&[], Vec::as_slice)
    }

    /// The list of type `T`, to add to, take from or reorder.
    pub fn of_mut<T: Any + Send + Sync + fmt::Debug>(&mut self) -> &mut Vec<Arc<T>> {
        self.names
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&TypeId::of::<T>());
        let list = self
            .lists
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(Vec::<Arc<T>>::new()));
        match list.as_any_mut().downcast_mut::<Vec<Arc<T>>>() {
            Some(list) => list,
            // The entry of `TypeId::of::<T>()` is only ever made as a `Vec<Arc<T>>` above.
            None => unreachable!("the list of a type is a Vec of that type"),
        }
    }

    /// The objects of type `T` that `name_of` names `name`, in order. The index is built with
    /// the first `name_of` asked of a type: every caller reads the object's own name.
    pub fn named<T: Any + Send + Sync + fmt::Debug>(
        &self,
        name: &str,
        name_of: impl Fn(&T) -> Option<&str>,
    ) -> impl Iterator<Item = &Arc<T>> {
        let list = self.of::<T>();
        let names = {
            let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(
                names
                    .entry(TypeId::of::<T>())
                    .or_insert_with(|| Arc::new(Names::build(list, name_of))),
            )
        };
        names
            .positions(name)
            .to_vec()
            .into_iter()
            .filter_map(move |i| list.get(i))
    }

    /// Adds one object of type `T`, shared, after the others of its type.
    pub fn push<T: Any + Send + Sync + fmt::Debug>(&mut self, object: Arc<T>) {
        self.of_mut::<T>().push(object);
    }

    /// Whether it holds no object of any type.
    pub fn is_empty(&self) -> bool {
        self.lists.values().all(|list| list.is_empty())
    }
}

impl Clone for WorkloadStore {
    fn clone(&self) -> Self {
        WorkloadStore {
            lists: self
                .lists
                .iter()
                .map(|(id, list)| (*id, list.clone_list()))
                .collect(),
            names: Mutex::default(),
        }
    }
}

impl fmt::Debug for WorkloadStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for list in self.lists.values() {
            list.debug(&mut map);
        }
        map.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct A(u8);
    #[derive(Debug, PartialEq)]
    struct B(&'static str);

    #[test]
    fn each_type_has_its_own_list_of_the_same_shared_objects() {
        let mut store = WorkloadStore::default();
        assert!(store.of::<A>().is_empty());
        assert!(store.is_empty());
        let a = Arc::new(A(1));
        store.push(a.clone());
        store.push(Arc::new(B("b")));
        store.push(Arc::new(A(2)));
        assert_eq!(store.of::<A>().len(), 2);
        assert_eq!(store.of::<B>(), [Arc::new(B("b"))]);
        assert!(Arc::ptr_eq(&store.of::<A>()[0], &a), "kept, not copied");
        let copy = store.clone();
        assert!(
            Arc::ptr_eq(&copy.of::<A>()[0], &a),
            "a clone shares the objects"
        );
        store.of_mut::<A>().clear();
        assert!(store.of::<A>().is_empty());
        assert_eq!(copy.of::<A>().len(), 2);
        assert!(!store.is_empty());
    }

    /// Found by name through the index, in order, and again after the list changed.
    #[test]
    fn named_finds_every_object_of_a_name_after_each_change() {
        #[derive(Debug)]
        struct W(&'static str, u8);
        fn name_of(w: &W) -> Option<&str> {
            Some(w.0)
        }
        let found = |store: &WorkloadStore, name| -> Vec<u8> {
            store.named::<W>(name, name_of).map(|w| w.1).collect()
        };
        let mut store = WorkloadStore::default();
        assert!(found(&store, "web").is_empty());
        store.push(Arc::new(W("web", 1)));
        store.push(Arc::new(W("api", 2)));
        assert_eq!(found(&store, "web"), [1]);
        store.push(Arc::new(W("web", 3)));
        assert_eq!(found(&store, "web"), [1, 3], "a push is seen");
        store.of_mut::<W>().retain(|w| w.1 != 1);
        assert_eq!(found(&store, "web"), [3], "a change in place is seen");
        assert_eq!(found(&store.clone(), "api"), [2]);
    }
}
