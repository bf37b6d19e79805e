//! The object store: one global resourceVersion counter, a bounded event history
//! for watch replay, and a broadcast channel for live watches.
//!
//! Objects are kept in key order, (group, plural, namespace, name), so a resource's objects
//! and a namespace's objects of it are each a range, and a continue token is a seek; a label
//! index (`labels.rs`) gives an equality selector its candidates. Every write goes through
//! `put` and `take`, which keep the index in step with the objects.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::resource::{self, split_api_version, ResourceInfo};
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;

mod labels;
mod owners;
mod terms;

use labels::LabelIndex;
use owners::OwnerIndex;

/// (group, plural, namespace or "", name): version-independent, like etcd keys.
pub(crate) type ObjKey = (String, String, String, String);

/// What a LIST or WATCH reads: the objects of one resource, in one namespace or all, after
/// the (namespace, name) a previous page ended at, that both selectors match.
pub(crate) struct Query<'a> {
    pub info: &'a ResourceInfo,
    pub namespace: Option<&'a str>,
    pub labels: &'a LabelSelector,
    pub fields: &'a FieldSelector,
    pub after: Option<(&'a str, &'a str)>,
}

#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub rv: u64,
    pub group: String,
    pub plural: String,
    pub namespace: String,
    pub kind: &'static str,
    pub object: Value,
    /// The object before this change, so a filtered watch can turn "no longer
    /// matches" into DELETED as the real server does.
    pub previous: Option<Value>,
}

/// Which endpoint wrote: the main resource ignores `.status`, `/status` only writes it,
/// and the in-process controller (`SimHandle::apply`) writes everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writer {
    Main,
    Status,
    Controller,
}

pub(crate) struct Store {
    resources: Vec<ResourceInfo>,
    objects: BTreeMap<ObjKey, Value>,
    labels: LabelIndex,
    owners: OwnerIndex,
    pub rv: u64,
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// Highest resourceVersion dropped from history; watching from below it is 410 Gone.
    pub compacted_rv: u64,
    pub tx: broadcast::Sender<Arc<Event>>,
    uid_seed: u64,
    /// Deployments created or changed through the API: the built-in controller's to roll.
    pub managed: BTreeSet<ObjKey>,
    /// Services whose slices the endpointslice controller keeps: those created or changed
    /// through the API, and fixtures loaded without a slice (one loaded with slices keeps them
    /// as they are).
    pub routed: BTreeSet<ObjKey>,
    /// Feeds generated pod names.
    pub name_seq: u64,
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Whether an update from `old` to `new` moves `metadata.generation`: a change to the spec; for
/// a custom kind without a `/status` subresource (Argo CD's Application), as the API server
/// does for such CRDs, a change to anything but `metadata`.
fn generation_moves(info: &ResourceInfo, old: &Value, new: &Value) -> bool {
    if info.builtin || info.has_status {
        return new.get("spec") != old.get("spec");
    }
    let without_metadata = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
        }
        v
    };
    without_metadata(old) != without_metadata(new)
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

impl Store {
    pub fn new(history_limit: usize) -> Self {
        // Room for a controller tick's burst (a rollout of 2,000 Deployments writes some 20,000
        // objects in one): a watcher further behind than this is ended with 410, as the real
        // server ends a watcher that cannot keep up.
        let (tx, _) = broadcast::channel(1 << 16);
        let uid_seed = jiff::Timestamp::now().as_nanosecond().unsigned_abs() as u64;
        Self {
            resources: resource::builtins(),
            objects: BTreeMap::new(),
            labels: LabelIndex::default(),
            owners: OwnerIndex::default(),
            rv: 0,
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            compacted_rv: 0,
            tx,
            uid_seed,
            managed: BTreeSet::new(),
            routed: BTreeSet::new(),
            name_seq: 0,
        }
    }

    /// Serves these resource types from now on (a CRD being installed).
    pub fn install(&mut self, resources: Vec<ResourceInfo>) {
        for r in resources {
            let known = self
                .resources
                .iter()
                .any(|k| k.group == r.group && k.version == r.version && k.kind == r.kind);
            if !known {
                self.resources.push(r);
            }
        }
    }

    pub fn resources(&self) -> &[ResourceInfo] {
        &self.resources
    }

    pub fn by_path(&self, group: &str, version: &str, plural: &str) -> Option<ResourceInfo> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    /// The resource for an object's apiVersion/kind, registering unknown kinds as a CRD would.
    pub fn by_kind(&mut self, api_version: &str, kind: &str) -> ResourceInfo {
        let (group, version) = split_api_version(api_version);
        if let Some(r) = self
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
        {
            return r.clone();
        }
        // Another version of a known kind (e.g. a CRD's v2beta1 next to v2) shares its shape.
        let info = match self
            .resources
            .iter()
            .find(|r| r.group == group && r.kind == kind)
        {
            Some(r) => ResourceInfo {
                version: version.clone(),
                ..r.clone()
            },
            None => resource::custom(&group, &version, kind),
        };
        self.resources.push(info.clone());
        info
    }

    pub fn lookup(&self, api_version: &str, kind: &str) -> Option<ResourceInfo> {
        let (group, version) = split_api_version(api_version);
        self.resources
            .iter()
            .find(|r| {
                r.group == group && r.version == version && (r.kind == kind || r.plural == kind)
            })
            .cloned()
    }

    pub fn key(info: &ResourceInfo, namespace: Option<&str>, name: &str) -> ObjKey {
        (
            info.group.clone(),
            info.plural.clone(),
            if info.namespaced {
                namespace.unwrap_or("default").to_owned()
            } else {
                String::new()
            },
            name.to_owned(),
        )
    }

    fn next_uid(&mut self) -> String {
        self.uid_seed = self
            .uid_seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let a = self.uid_seed;
        let b = a.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15;
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48 & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }

    fn emit(&mut self, kind: &'static str, key: &ObjKey, object: Value, previous: Option<Value>) {
        let ev = Arc::new(Event {
            rv: self.rv,
            group: key.0.clone(),
            plural: key.1.clone(),
            namespace: key.2.clone(),
            kind,
            object,
            previous,
        });
        self.history.push_back(ev.clone());
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.compacted_rv = old.rv;
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = self.tx.send(ev);
    }

    pub fn history_after(&self, rv: u64) -> Vec<Arc<Event>> {
        self.history.iter().filter(|e| e.rv > rv).cloned().collect()
    }

    /// Stores a new object; the caller has checked the namespace and name.
    pub fn create(&mut self, info: &ResourceInfo, obj: Value) -> Result<Value, ApiError> {
        self.create_with(info, obj, false)
    }

    /// `create`; with `dry_run` (`?dryRun=All`), the object as it would be stored, nothing kept.
    pub fn create_with(
        &mut self,
        info: &ResourceInfo,
        mut obj: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let name = meta_str(&obj, "name").unwrap_or_default().to_owned();
        let ns = meta_str(&obj, "namespace").map(str::to_owned);
        let key = Self::key(info, ns.as_deref(), &name);
        if self.objects.contains_key(&key) {
            return Err(ApiError::already_exists(info, &name));
        }
        obj["apiVersion"] = json!(info.api_version());
        obj["kind"] = json!(info.kind);
        if !obj.get("metadata").is_some_and(Value::is_object) {
            obj["metadata"] = json!({});
        }
        let uid = self.next_uid();
        let meta = &mut obj["metadata"];
        if info.namespaced {
            meta["namespace"] = json!(key.2);
        } else if let Some(m) = meta.as_object_mut() {
            m.remove("namespace");
        }
        // Fixtures keep their recorded uid, creationTimestamp and generation: they are the story.
        if meta
            .get("uid")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            meta["uid"] = json!(uid);
        }
        if meta
            .get("creationTimestamp")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            meta["creationTimestamp"] = json!(now_rfc3339());
        }
        if info.tracks_generation() {
            if meta.get("generation").and_then(Value::as_i64).is_none() {
                meta["generation"] = json!(1);
            }
        } else if let Some(m) = meta.as_object_mut() {
            m.remove("generation");
        }
        if dry_run {
            return Ok(obj);
        }
        self.rv += 1;
        meta["resourceVersion"] = json!(self.rv.to_string());
        self.put(&key, obj.clone());
        self.emit("ADDED", &key, obj.clone(), None);
        Ok(obj)
    }

    /// Replaces an existing object as the given writer may; a no-op write keeps the
    /// resourceVersion and emits nothing, like the real server.
    pub fn update(
        &mut self,
        info: &ResourceInfo,
        key: &ObjKey,
        new: Value,
        writer: Writer,
    ) -> Result<Value, ApiError> {
        self.update_with(info, key, new, writer, false)
    }

    /// `update`; with `dry_run`, the object as it would be stored, nothing kept.
    pub fn update_with(
        &mut self,
        info: &ResourceInfo,
        key: &ObjKey,
        mut new: Value,
        writer: Writer,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let Some(old) = self.objects.get(key).cloned() else {
            return Err(ApiError::not_found(info, &key.3));
        };
        let old_rv = meta_str(&old, "resourceVersion")
            .unwrap_or_default()
            .to_owned();
        if writer != Writer::Controller {
            if let Some(rv) = meta_str(&new, "resourceVersion").filter(|r| !r.is_empty()) {
                if rv != old_rv {
                    return Err(ApiError::conflict(info, &key.3));
                }
            }
        }
        if let Some(n) = meta_str(&new, "name") {
            if n != key.3 {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({})",
                    key.3
                )));
            }
        }
        match writer {
            Writer::Main if info.has_status => match old.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.remove("status");
                    }
                }
            },
            Writer::Status => {
                let status = new.get("status").cloned();
                new = old.clone();
                match status {
                    Some(s) => new["status"] = s,
                    None => {
                        if let Some(m) = new.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
            }
            _ => {}
        }
        new["apiVersion"] = old["apiVersion"].clone();
        new["kind"] = old["kind"].clone();
        if !new.get("metadata").is_some_and(Value::is_object) {
            new["metadata"] = json!({});
        }
        // Identity fields are the server's, not the writer's.
        for f in [
            "uid",
            "creationTimestamp",
            "name",
            "namespace",
            "generation",
        ] {
            match old["metadata"].get(f) {
                Some(v) => new["metadata"][f] = v.clone(),
                None => {
                    if let Some(m) = new["metadata"].as_object_mut() {
                        m.remove(f);
                    }
                }
            }
        }
        new["metadata"]["resourceVersion"] = json!(old_rv);
        if new == old {
            return Ok(old);
        }
        if info.tracks_generation() && generation_moves(info, &old, &new) {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(0);
            new["metadata"]["generation"] = json!(g + 1);
        }
        if dry_run {
            return Ok(new);
        }
        self.rv += 1;
        new["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.put(key, new.clone());
        self.emit("MODIFIED", key, new.clone(), Some(old));
        Ok(new)
    }

    pub fn delete(&mut self, info: &ResourceInfo, key: &ObjKey) -> Result<Value, ApiError> {
        self.delete_with(info, key, false)
    }

    /// `delete`; with `dry_run`, the object as it is, nothing removed.
    pub fn delete_with(
        &mut self,
        info: &ResourceInfo,
        key: &ObjKey,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if dry_run {
            return self
                .objects
                .get(key)
                .cloned()
                .ok_or_else(|| ApiError::not_found(info, &key.3));
        }
        let Some(mut obj) = self.take(key) else {
            return Err(ApiError::not_found(info, &key.3));
        };
        let previous = obj.clone();
        self.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.emit("DELETED", key, obj.clone(), Some(previous));
        Ok(obj)
    }

    /// Records a write made through the API: a Deployment, StatefulSet or DaemonSet changed
    /// that way is the built-in controllers' to roll from now on.
    pub fn api_write(&mut self, info: &ResourceInfo, key: &ObjKey, writer: Writer) {
        if writer == Writer::Main
            && info.group == "apps"
            && matches!(
                info.kind.as_str(),
                "Deployment" | "StatefulSet" | "DaemonSet"
            )
        {
            self.managed.insert(key.clone());
        }
        if writer == Writer::Main && info.group.is_empty() && info.kind == "Service" {
            self.routed.insert(key.clone());
        }
    }

    pub fn get(&self, key: &ObjKey) -> Option<&Value> {
        self.objects.get(key)
    }

    pub fn contains(&self, key: &ObjKey) -> bool {
        self.objects.contains_key(key)
    }

    /// Every object, in key order.
    pub fn all(&self) -> impl Iterator<Item = &Value> {
        self.objects.values()
    }

    /// Stores `obj` under `key`, moving its label index entries when its labels changed.
    fn put(&mut self, key: &ObjKey, obj: Value) {
        match self.objects.get_mut(key) {
            Some(slot) => {
                if slot.pointer("/metadata/labels") != obj.pointer("/metadata/labels") {
                    self.labels.remove(key, slot);
                    self.labels.insert(key, &obj);
                }
                let owners = "/metadata/ownerReferences";
                if slot.pointer(owners) != obj.pointer(owners) {
                    self.owners.remove(key, slot);
                    self.owners.insert(key, &obj);
                }
                *slot = obj;
            }
            None => {
                self.labels.insert(key, &obj);
                self.owners.insert(key, &obj);
                self.objects.insert(key.clone(), obj);
            }
        }
    }

    /// Removes the object under `key` and its label index entries.
    fn take(&mut self, key: &ObjKey) -> Option<Value> {
        let obj = self.objects.remove(key)?;
        self.labels.remove(key, &obj);
        self.owners.remove(key, &obj);
        Some(obj)
    }

    /// The objects of one resource in `namespace` whose controller reference names `kind` and
    /// `name` or `uid` (an empty uid: by name only), in name order: the candidates a built-in
    /// controller then checks it owns.
    pub fn owned(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        kind: &str,
        name: &str,
        uid: &str,
    ) -> Vec<(&ObjKey, &Value)> {
        self.owners
            .owned((&info.group, &info.plural, namespace), kind, name, uid)
            .into_iter()
            .filter_map(|k| self.objects.get_key_value(k))
            .collect()
    }

    /// Objects of one resource, optionally in one namespace, in (namespace, name) order.
    pub fn list(&self, info: &ResourceInfo, namespace: Option<&str>) -> Vec<(&ObjKey, &Value)> {
        let start = start_key(info, namespace, None);
        self.objects
            .range((start, Bound::Unbounded))
            .take_while(|(k, _)| in_scope(k, info, namespace))
            .collect()
    }

    /// The objects a LIST or WATCH selects, in (namespace, name) order. Only candidates are
    /// read: a name (`metadata.name=`) is one lookup, an equality label selector reads the
    /// objects carrying its rarest `key=value`, anything else the namespace's range; each
    /// candidate is then checked against the whole selection.
    pub fn select<'a>(&'a self, q: Query<'a>) -> impl Iterator<Item = (&'a ObjKey, &'a Value)> {
        let Query {
            info,
            namespace,
            labels,
            fields,
            after,
        } = q;
        // A cluster-scoped object's namespace is "" in its key.
        let namespace = match (info.namespaced, namespace) {
            (false, _) => Some(""),
            (true, Some(ns)) => Some(ns),
            (true, None) => fields.equals("metadata.namespace"),
        };
        let start = start_key(info, namespace, after);
        let scoped = move |k: &ObjKey| in_scope(k, info, namespace);
        let candidates: Box<dyn Iterator<Item = (&'a ObjKey, &'a Value)> + 'a> =
            if let (Some(ns), Some(name)) = (namespace, fields.equals("metadata.name")) {
                let key = (
                    info.group.clone(),
                    info.plural.clone(),
                    ns.to_owned(),
                    name.to_owned(),
                );
                let past = after.is_none_or(|a| (ns, name) > a);
                Box::new(
                    self.objects
                        .get_key_value(&key)
                        .filter(|_| past)
                        .into_iter(),
                )
            } else {
                match self.narrowest(info, labels) {
                    Candidates::None => Box::new(std::iter::empty()),
                    Candidates::Carrying(keys) => Box::new(
                        keys.range((start, Bound::Unbounded))
                            .take_while(move |k| scoped(k))
                            .filter_map(|k| self.objects.get_key_value(k)),
                    ),
                    Candidates::All => Box::new(
                        self.objects
                            .range((start, Bound::Unbounded))
                            .take_while(move |(k, _)| scoped(k)),
                    ),
                }
            };
        candidates.filter(move |(_, o)| labels.matches(o) && fields.matches(o))
    }

    /// The smallest candidate set the selector's `key=value` terms give.
    fn narrowest(&self, info: &ResourceInfo, labels: &LabelSelector) -> Candidates<'_> {
        let mut best = Candidates::All;
        for (k, v) in labels.equalities() {
            match self.labels.carrying(&info.group, &info.plural, k, v) {
                None => return Candidates::None,
                Some(keys) => {
                    if !matches!(best, Candidates::Carrying(b) if b.len() <= keys.len()) {
                        best = Candidates::Carrying(keys);
                    }
                }
            }
        }
        best
    }
}

/// Where a selection's candidates come from.
enum Candidates<'a> {
    /// A `key=value` term no object carries: nothing matches.
    None,
    /// The objects carrying one `key=value` term.
    Carrying(&'a BTreeSet<ObjKey>),
    /// The resource's (or namespace's) range.
    All,
}

/// Where a resource's objects in `namespace` (or all) start, or resume after `after`.
fn start_key(
    info: &ResourceInfo,
    namespace: Option<&str>,
    after: Option<(&str, &str)>,
) -> Bound<ObjKey> {
    let key = |ns: &str, name: &str| {
        (
            info.group.clone(),
            info.plural.clone(),
            ns.to_owned(),
            name.to_owned(),
        )
    };
    // Names are never empty, so (namespace, "") is before all of the namespace.
    let first = (namespace.unwrap_or(""), "");
    match after {
        Some((ns, name)) if (ns, name) >= first => Bound::Excluded(key(ns, name)),
        _ => Bound::Included(key(first.0, first.1)),
    }
}

fn in_scope(k: &ObjKey, info: &ResourceInfo, namespace: Option<&str>) -> bool {
    k.0 == info.group && k.1 == info.plural && namespace.is_none_or(|ns| k.2 == ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_bumps_only_on_spec_change() {
        let mut s = Store::new(10);
        let info = s.by_kind("apps/v1", "Deployment");
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "a"}, "spec": {"replicas": 1}});
        let created = s.create(&info, d).expect("create");
        assert_eq!(created["metadata"]["generation"], 1);
        let key = Store::key(&info, Some("a"), "d");
        let mut status_only = created.clone();
        status_only["status"] = json!({"replicas": 1});
        let after = s
            .update(&info, &key, status_only, Writer::Status)
            .expect("status");
        assert_eq!(after["metadata"]["generation"], 1);
        assert_eq!(after["metadata"]["resourceVersion"], "2");
        let mut spec = after.clone();
        spec["spec"]["replicas"] = json!(2);
        let after = s.update(&info, &key, spec, Writer::Main).expect("spec");
        assert_eq!(after["metadata"]["generation"], 2);
        assert_eq!(after["status"]["replicas"], 1);
        let same = s
            .update(&info, &key, after.clone(), Writer::Main)
            .expect("noop");
        assert_eq!(
            same["metadata"]["resourceVersion"],
            after["metadata"]["resourceVersion"]
        );
    }

    #[test]
    fn history_is_bounded() {
        let mut s = Store::new(2);
        let info = s.by_kind("v1", "ConfigMap");
        for i in 0..5 {
            s.create(
                &info,
                json!({"metadata": {"name": format!("c{i}"), "namespace": "a"}}),
            )
            .expect("create");
        }
        assert_eq!(s.compacted_rv, 3);
        assert_eq!(s.history_after(0).len(), 2);
    }
}

#[cfg(test)]
mod index_tests {
    //! The label index and the ranges must give what a scan of every object gives, after
    //! any sequence of writes.
    use super::*;

    /// A controller reference to ReplicaSet `rs{n}`.
    fn owner(n: u64) -> Value {
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("rs{n}"),
                "uid": format!("uid-{n}"), "controller": true}])
    }

    fn pod(ns: &str, name: &str, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": ns, "labels": labels},
               "spec": {"nodeName": if name.ends_with('0') { "" } else { "node-1" }},
               "status": {"phase": "Running"}})
    }

    fn parse(info: &ResourceInfo, labels: &str, fields: &str) -> (LabelSelector, FieldSelector) {
        (
            LabelSelector::parse(labels).expect(labels),
            FieldSelector::parse(fields, info).expect(fields),
        )
    }

    /// Names `select` gives, as `ns/name`.
    fn selected(
        s: &Store,
        info: &ResourceInfo,
        namespace: Option<&str>,
        labels: &str,
        fields: &str,
        after: Option<(&str, &str)>,
    ) -> Vec<String> {
        let (labels, fields) = parse(info, labels, fields);
        s.select(Query {
            info,
            namespace,
            labels: &labels,
            fields: &fields,
            after,
        })
        .map(|(k, _)| format!("{}/{}", k.2, k.3))
        .collect()
    }

    /// What a scan of every stored object in key order selects: the behaviour before indexes.
    fn scanned(
        s: &Store,
        info: &ResourceInfo,
        namespace: Option<&str>,
        labels: &str,
        fields: &str,
        after: Option<(&str, &str)>,
    ) -> Vec<String> {
        let (labels, fields) = parse(info, labels, fields);
        s.objects
            .iter()
            .filter(|(k, _)| k.0 == info.group && k.1 == info.plural)
            .filter(|(k, _)| namespace.is_none_or(|ns| k.2 == ns))
            .filter(|(k, _)| after.is_none_or(|a| (k.2.as_str(), k.3.as_str()) > a))
            .filter(|(_, o)| labels.matches(o) && fields.matches(o))
            .map(|(k, _)| format!("{}/{}", k.2, k.3))
            .collect()
    }

    fn assert_index_fresh(s: &Store) {
        let mut rebuilt = LabelIndex::default();
        for (k, o) in &s.objects {
            rebuilt.insert(k, o);
        }
        assert_eq!(s.labels.entries(), rebuilt.entries(), "index went stale");
        let mut owners = OwnerIndex::default();
        for (k, o) in &s.objects {
            owners.insert(k, o);
        }
        assert_eq!(
            s.owners.entries(),
            owners.entries(),
            "owner index went stale"
        );
    }

    #[test]
    fn a_label_changed_by_an_update_moves_the_object_in_the_index() {
        let mut s = Store::new(100);
        let info = s.by_kind("v1", "Pod");
        s.create(&info, pod("a", "p", json!({"app": "old", "tier": "web"})))
            .expect("create");
        let key = Store::key(&info, Some("a"), "p");
        let mut changed = s.get(&key).cloned().expect("stored");
        changed["metadata"]["labels"]["app"] = json!("new");
        s.update(&info, &key, changed, Writer::Main)
            .expect("update");
        assert!(selected(&s, &info, Some("a"), "app=old", "", None).is_empty());
        assert_eq!(selected(&s, &info, Some("a"), "app=new", "", None), ["a/p"]);
        assert_eq!(
            selected(&s, &info, None, "app=new,tier=web", "", None),
            ["a/p"]
        );
        // Labels removed altogether.
        let mut bare = s.get(&key).cloned().expect("stored");
        bare["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("labels");
        s.update(&info, &key, bare, Writer::Main).expect("update");
        assert!(selected(&s, &info, Some("a"), "app=new", "", None).is_empty());
        assert!(selected(&s, &info, Some("a"), "tier=web", "", None).is_empty());
        assert_eq!(selected(&s, &info, Some("a"), "!app", "", None), ["a/p"]);
        assert_index_fresh(&s);
    }

    #[test]
    fn a_status_write_keeps_the_labels_indexed() {
        let mut s = Store::new(100);
        let info = s.by_kind("v1", "Pod");
        let created = s
            .create(&info, pod("a", "p", json!({"app": "x"})))
            .expect("create");
        let key = Store::key(&info, Some("a"), "p");
        let mut status = created.clone();
        status["status"]["phase"] = json!("Succeeded");
        // A /status writer cannot change labels, whatever it sends.
        status["metadata"]["labels"]["app"] = json!("y");
        s.update(&info, &key, status, Writer::Status)
            .expect("status");
        assert_eq!(selected(&s, &info, Some("a"), "app=x", "", None), ["a/p"]);
        assert!(selected(&s, &info, Some("a"), "app=y", "", None).is_empty());
        assert_index_fresh(&s);
    }

    #[test]
    fn a_deleted_object_leaves_the_index() {
        let mut s = Store::new(100);
        let info = s.by_kind("v1", "Pod");
        for name in ["p1", "p2"] {
            s.create(&info, pod("a", name, json!({"app": "x"})))
                .expect("create");
        }
        s.delete(&info, &Store::key(&info, Some("a"), "p1"))
            .expect("delete");
        assert_eq!(selected(&s, &info, Some("a"), "app=x", "", None), ["a/p2"]);
        s.delete(&info, &Store::key(&info, Some("a"), "p2"))
            .expect("delete");
        assert!(selected(&s, &info, None, "app=x", "", None).is_empty());
        assert!(s.labels.entries().is_empty(), "{:?}", s.labels.entries());
        // Created again under the same name, it is found again.
        s.create(&info, pod("a", "p1", json!({"app": "x"})))
            .expect("create");
        assert_eq!(selected(&s, &info, Some("a"), "app=x", "", None), ["a/p1"]);
    }

    #[test]
    fn pages_resume_after_their_cursor_when_objects_come_before_it() {
        for labels in ["", "app=x"] {
            let mut s = Store::new(100);
            let info = s.by_kind("v1", "Pod");
            let add = |s: &mut Store, ns: &str, name: &str| {
                s.create(&info, pod(ns, name, json!({"app": "x"})))
                    .expect("create");
            };
            for name in ["p1", "p3", "p5", "p7", "p9"] {
                add(&mut s, "a", name);
            }
            add(&mut s, "b", "p0");
            let all = selected(&s, &info, Some("a"), labels, "", None);
            assert_eq!(all, ["a/p1", "a/p3", "a/p5", "a/p7", "a/p9"], "{labels}");
            // A page of two ends at p3; then objects arrive before the cursor and after it.
            let cursor = Some(("a", "p3"));
            for name in ["p0", "p2", "p6"] {
                add(&mut s, "a", name);
            }
            let rest = ["a/p5", "a/p6", "a/p7", "a/p9"];
            assert_eq!(selected(&s, &info, Some("a"), labels, "", cursor), rest);
            // The cursor's own object deleted: the token still resumes after its place.
            s.delete(&info, &Store::key(&info, Some("a"), "p3"))
                .expect("delete");
            assert_eq!(selected(&s, &info, Some("a"), labels, "", cursor), rest);
            // A token from before or after the namespace: all of it, or nothing.
            let end_of_a = Some(("a", "p9"));
            assert_eq!(
                selected(&s, &info, Some("b"), labels, "", end_of_a),
                ["b/p0"]
            );
            let end_of_b = Some(("b", "p0"));
            assert!(selected(&s, &info, Some("a"), labels, "", end_of_b).is_empty());
            // Across namespaces, a page ending in one is followed by the next.
            assert_eq!(selected(&s, &info, None, labels, "", end_of_a), ["b/p0"]);
        }
    }

    /// A deterministic walk of creates, label changes and deletes; after each step the index
    /// is what the objects say, and every selection is what a scan gives.
    #[test]
    fn selections_match_a_scan_after_any_writes() {
        let mut s = Store::new(10_000);
        let pods = s.by_kind("v1", "Pod");
        let nodes = s.by_kind("v1", "Node");
        let deployments = s.by_kind("apps/v1", "Deployment");
        let mut seed: u64 = 7;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let selectors = [
            "",
            "app=a1",
            "app==a2,tier=web",
            "tier=web,app=a0",
            "app=nobody",
            "app in (a1)",
            "app in (a1,a3)",
            "app notin (a1,a3)",
            "app!=a2",
            "tier",
            "!tier",
            "app=a1,!tier",
            "app=a2,tier notin (db)",
            "odd=1",
        ];
        let fields = [
            "",
            "metadata.name=p3",
            "metadata.name=p3,metadata.namespace=ns1",
            "metadata.namespace=ns2",
            "status.phase=Running",
            "spec.nodeName=",
            "spec.nodeName!=node-1,metadata.name=p10",
        ];
        let namespaces = [None, Some("ns0"), Some("ns1"), Some("ns2")];
        let afters = [
            None,
            Some(("ns0", "p5")),
            Some(("ns1", "")),
            Some(("ns1", "p9")),
        ];
        for step in 0..400 {
            let ns = format!("ns{}", next(3));
            let name = format!("p{}", next(15));
            let mut labels = json!({"app": format!("a{}", next(4))});
            if next(2) == 0 {
                labels["tier"] = json!(["web", "db"][next(2) as usize]);
            }
            if next(5) == 0 {
                // Not a string: no `key=value` term matches it.
                labels["odd"] = json!(1);
            }
            let key = Store::key(&pods, Some(&ns), &name);
            match (next(4), s.contains(&key)) {
                (0, true) => {
                    s.delete(&pods, &key).expect("delete");
                }
                (_, true) => {
                    let mut o = s.get(&key).cloned().expect("stored");
                    o["metadata"]["labels"] = labels;
                    // A new controller now and then: the owner index follows it.
                    if next(3) == 0 {
                        o["metadata"]["ownerReferences"] = owner(next(3));
                    }
                    s.update(&pods, &key, o, Writer::Main).expect("update");
                }
                (_, false) => {
                    let mut o = pod(&ns, &name, labels);
                    o["metadata"]["ownerReferences"] = owner(next(3));
                    s.create(&pods, o).expect("create");
                }
            }
            if step % 10 == 0 {
                // Other kinds, with the same labels, must never show up in a pod selection.
                let d =
                    json!({"metadata": {"name": name, "namespace": ns, "labels": {"app": "a1"}}});
                let _ = s.create(&deployments, d);
                let n = json!({"metadata": {"name": format!("n{}", next(3)), "labels": {"app": format!("a{}", next(2))}}});
                let _ = s.create(&nodes, n);
            }
            assert_index_fresh(&s);
            if step % 50 != 49 {
                continue;
            }
            for (namespace, rs) in namespaces.iter().flatten().zip(0..3) {
                let by_name = format!("rs{rs}");
                let brute: Vec<&ObjKey> = s
                    .list(&pods, Some(namespace))
                    .into_iter()
                    .filter(|(_, o)| {
                        o["metadata"]["ownerReferences"][0]["name"] == by_name.as_str()
                    })
                    .map(|(k, _)| k)
                    .collect();
                let indexed: Vec<&ObjKey> = s
                    .owned(&pods, namespace, "ReplicaSet", &by_name, "")
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect();
                assert_eq!(indexed, brute, "owned by {by_name} in {namespace}");
            }
            for labels in selectors {
                for fields in fields {
                    for namespace in namespaces {
                        for after in afters {
                            assert_eq!(
                                selected(&s, &pods, namespace, labels, fields, after),
                                scanned(&s, &pods, namespace, labels, fields, after),
                                "{labels:?} {fields:?} in {namespace:?} after {after:?}"
                            );
                        }
                    }
                }
                for fields in ["", "metadata.name=n1"] {
                    assert_eq!(
                        selected(&s, &nodes, None, labels, fields, None),
                        scanned(&s, &nodes, None, labels, fields, None),
                        "nodes {labels:?} {fields:?}"
                    );
                }
            }
        }
        assert_eq!(
            s.list(&pods, Some("ns1")),
            s.objects
                .iter()
                .filter(|(k, _)| k.1 == "pods" && k.2 == "ns1")
                .collect::<Vec<_>>()
        );
    }
}
