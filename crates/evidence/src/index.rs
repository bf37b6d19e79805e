//! Indexes of a snapshot's lists, built when first asked and again whenever the list changed:
//! the checks look up a workload's pods, ReplicaSets and revisions per target, and scanning the
//! namespace for each was most of `--wait`'s time at 2,000 workloads (2,000 × 4,000 ReplicaSets
//! per snapshot). An index only narrows the candidates: the caller's own test still decides,
//! so a lookup finds exactly what a scan finds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::Metadata;

/// What an index was built from: the list's length and where it lived. A push or a replaced
/// vector changes one of them, and the index is built again. (The snapshot's lists are built,
/// then read; nothing replaces an object in place between two reads.)
type Fingerprint = (usize, usize);

fn fingerprint<T>(items: &[Arc<T>]) -> Fingerprint {
    (items.len(), items.as_ptr() as usize)
}

/// A key of an index: the hash of its parts, not copies of them (an index of 10,000 pods'
/// labels held three strings per label, rebuilt per snapshot). Two keys may collide: an index
/// gives candidates, and the caller's own test (namespace, owner, selector) decides.
pub(crate) fn key(parts: &[&str]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}

/// A lazily built index `I` of one `[Arc<T>]`; a copy starts without one.
#[derive(Debug)]
pub struct Cached<I>(Mutex<Option<(Fingerprint, Arc<I>)>>);

impl<I> Default for Cached<I> {
    fn default() -> Self {
        Cached(Mutex::new(None))
    }
}

impl<I> Clone for Cached<I> {
    fn clone(&self) -> Self {
        Cached::default()
    }
}

impl<I> Cached<I> {
    /// The index of `items`: the one built before, unless `items` changed since.
    pub(crate) fn get<T>(&self, items: &[Arc<T>], build: impl FnOnce(&[Arc<T>]) -> I) -> Arc<I> {
        let now = fingerprint(items);
        let mut cached = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match cached.as_ref() {
            Some((built_for, index)) if *built_for == now => Arc::clone(index),
            _ => {
                let index = Arc::new(build(items));
                *cached = Some((now, Arc::clone(&index)));
                index
            }
        }
    }
}

/// The objects (ReplicaSets, ControllerRevisions) by what owns them: positions by
/// `(namespace, owner kind, owner uid)` and `(namespace, owner kind, owner name)`. An object
/// without ownerReferences (a hand-written dump) is owned by whatever selects it: a candidate of
/// every owner in its namespace; one without a namespace, of every owner.
#[derive(Debug, Default)]
pub struct Owners {
    by_uid: HashMap<u64, Vec<usize>>,
    by_name: HashMap<u64, Vec<usize>>,
    unowned: HashMap<String, Vec<usize>>,
    without_namespace: Vec<usize>,
}

/// An owner as the index is asked about it.
pub(crate) struct Owner<'a> {
    pub namespace: &'a str,
    pub kind: &'a str,
    /// Its uid, when it has one (objects then name it by uid); otherwise its name.
    pub uid: Option<&'a str>,
    pub name: &'a str,
}

impl Owners {
    fn build<T: Metadata<Ty = ObjectMeta>>(items: &[Arc<T>]) -> Owners {
        let mut index = Owners::default();
        for (i, item) in items.iter().enumerate() {
            let meta = item.metadata();
            let Some(ns) = meta.namespace.as_deref() else {
                index.without_namespace.push(i);
                continue;
            };
            let refs = meta.owner_references.as_deref().unwrap_or_default();
            if refs.is_empty() {
                index.unowned.entry(ns.to_string()).or_default().push(i);
            }
            for r in refs {
                let uid = key(&[ns, &r.kind, &r.uid]);
                index.by_uid.entry(uid).or_default().push(i);
                let name = key(&[ns, &r.kind, &r.name]);
                index.by_name.entry(name).or_default().push(i);
            }
        }
        index
    }

    /// Positions that may be `owner`'s, in order.
    fn candidates(&self, owner: &Owner<'_>) -> Vec<usize> {
        let owned = match owner.uid {
            Some(uid) => self.by_uid.get(&key(&[owner.namespace, owner.kind, uid])),
            None => self
                .by_name
                .get(&key(&[owner.namespace, owner.kind, owner.name])),
        };
        let mut out: Vec<usize> = owned
            .into_iter()
            .chain(self.unowned.get(owner.namespace))
            .flatten()
            .chain(&self.without_namespace)
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A lazily built [`Owners`] index of one list of `Observed`.
pub type OwnerIndex = Cached<Owners>;

impl OwnerIndex {
    /// Of `items`, those that may be `owner`'s (a superset of what it owns), in order; the
    /// caller's test of ownership decides.
    pub(crate) fn candidates<'o, T: Metadata<Ty = ObjectMeta>>(
        &self,
        items: &'o [Arc<T>],
        owner: &Owner<'_>,
    ) -> impl Iterator<Item = &'o T> {
        let index = self.get(items, Owners::build);
        index
            .candidates(owner)
            .into_iter()
            .filter_map(move |i| items.get(i).map(|o| &**o))
    }
}

/// Positions by name, for one list: the workloads a target names.
#[derive(Debug, Default)]
pub struct Names(HashMap<String, Vec<usize>>);

impl Names {
    /// The positions of the objects `name_of` names `name`, in order.
    pub(crate) fn build<T>(items: &[Arc<T>], name_of: impl Fn(&T) -> Option<&str>) -> Names {
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(name) = name_of(item) {
                names.entry(name.to_string()).or_default().push(i);
            }
        }
        Names(names)
    }

    pub(crate) fn positions(&self, name: &str) -> &[usize] {
        self.0.get(name).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica_set::ReplicaSet;
    use serde_json::json;

    fn rs(ns: Option<&str>, name: &str, owner: Option<(&str, &str, &str)>) -> Arc<ReplicaSet> {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        if let Some((kind, owner_name, uid)) = owner {
            meta["ownerReferences"] = json!([{
                "apiVersion": "apps/v1", "kind": kind, "name": owner_name, "uid": uid
            }]);
        }
        Arc::new(serde_json::from_value(json!({"metadata": meta})).expect("rs"))
    }

    /// What a scan asks: the object's namespace (none: any) and a reference to the owner (none
    /// at all: any owner, the selector decides).
    fn owned_by(o: &ReplicaSet, owner: &Owner<'_>) -> bool {
        o.metadata.namespace.as_deref().unwrap_or(owner.namespace) == owner.namespace
            && match o.metadata.owner_references.as_deref() {
                Some(refs) if !refs.is_empty() => refs.iter().any(|r| {
                    r.kind == owner.kind
                        && match owner.uid {
                            Some(uid) => r.uid == uid,
                            None => r.name == owner.name,
                        }
                }),
                _ => true,
            }
    }

    fn names<'o>(found: impl Iterator<Item = &'o ReplicaSet>) -> Vec<&'o str> {
        found.filter_map(|o| o.metadata.name.as_deref()).collect()
    }

    /// Through the index, exactly what a scan finds, in order — by uid and by name, with and
    /// without namespaces and references, and again after the list changed; and the index
    /// narrows: another owner's objects are not candidates.
    #[test]
    fn candidates_hold_what_a_scan_finds_in_order() {
        let mut items = vec![
            rs(Some("shop"), "web-1", Some(("Deployment", "web", "u-web"))),
            rs(Some("shop"), "api-1", Some(("Deployment", "api", "u-api"))),
            rs(
                Some("other"),
                "web-2",
                Some(("Deployment", "web", "u-other")),
            ),
            rs(Some("shop"), "loose", None),
            rs(None, "nowhere", Some(("Deployment", "web", "u-web"))),
            rs(
                Some("shop"),
                "web-sts",
                Some(("StatefulSet", "web", "u-sts")),
            ),
            rs(Some("shop"), "web-3", Some(("Deployment", "web", "u-web"))),
        ];
        let owner = |namespace, kind, uid, name| Owner {
            namespace,
            kind,
            uid,
            name,
        };
        let owners = [
            owner("shop", "Deployment", Some("u-web"), "web"),
            owner("shop", "Deployment", None, "web"),
            owner("shop", "Deployment", Some("u-api"), "api"),
            owner("other", "Deployment", None, "web"),
            owner("shop", "StatefulSet", Some("u-sts"), "web"),
            owner("empty", "Deployment", None, "none"),
        ];
        let index = OwnerIndex::default();
        for round in 0..2 {
            for owner in &owners {
                let found = index
                    .candidates(&items, owner)
                    .filter(|o| owned_by(o, owner));
                let scanned = items.iter().map(|o| &**o).filter(|o| owned_by(o, owner));
                assert_eq!(
                    names(found),
                    names(scanned),
                    "round {round}: {} {}/{}",
                    owner.kind,
                    owner.namespace,
                    owner.name
                );
            }
            items.push(rs(
                Some("shop"),
                "web-new",
                Some(("Deployment", "web", "u-web")),
            ));
        }
        assert_eq!(
            names(index.candidates(&items, &owners[2])),
            ["api-1", "loose", "nowhere"],
            "the web ReplicaSets are no candidates of api"
        );
        assert_eq!(
            names(index.candidates(&items, &owners[0])),
            ["web-1", "loose", "nowhere", "web-3", "web-new", "web-new"]
        );
    }

    #[test]
    fn names_give_every_position_of_a_name_in_order() {
        let items = vec![
            rs(Some("a"), "web", None),
            rs(Some("b"), "api", None),
            rs(Some("b"), "web", None),
        ];
        let names = Names::build(&items, |o| o.metadata.name.as_deref());
        assert_eq!(names.positions("web"), [0, 2]);
        assert_eq!(names.positions("api"), [1]);
        assert!(names.positions("db").is_empty());
    }
}
