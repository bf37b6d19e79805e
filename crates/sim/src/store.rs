//! The object store: one global resourceVersion counter, a bounded event history
//! for watch replay, and a broadcast channel for live watches.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::resource::{self, split_api_version, ResourceInfo};
use crate::status::ApiError;

/// (group, plural, namespace or "", name): version-independent, like etcd keys.
pub(crate) type ObjKey = (String, String, String, String);

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
    pub objects: BTreeMap<ObjKey, Value>,
    pub rv: u64,
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// Highest resourceVersion dropped from history; watching from below it is 410 Gone.
    pub compacted_rv: u64,
    pub tx: broadcast::Sender<Arc<Event>>,
    uid_seed: u64,
    /// Deployments created or changed through the API: the built-in controller's to roll.
    pub managed: BTreeSet<ObjKey>,
    /// Feeds generated pod names.
    pub name_seq: u64,
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

impl Store {
    pub fn new(history_limit: usize) -> Self {
        let (tx, _) = broadcast::channel(4096);
        let uid_seed = jiff::Timestamp::now().as_nanosecond().unsigned_abs() as u64;
        Self {
            resources: resource::builtins(),
            objects: BTreeMap::new(),
            rv: 0,
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            compacted_rv: 0,
            tx,
            uid_seed,
            managed: BTreeSet::new(),
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
        self.objects.insert(key.clone(), obj.clone());
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
        if info.tracks_generation() && new.get("spec") != old.get("spec") {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(0);
            new["metadata"]["generation"] = json!(g + 1);
        }
        if dry_run {
            return Ok(new);
        }
        self.rv += 1;
        new["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.objects.insert(key.clone(), new.clone());
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
        let Some(mut obj) = self.objects.remove(key) else {
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
    }

    /// Objects of one resource, optionally in one namespace, in (namespace, name) order.
    pub fn list(&self, info: &ResourceInfo, namespace: Option<&str>) -> Vec<(&ObjKey, &Value)> {
        self.objects
            .iter()
            .filter(|(k, _)| {
                k.0 == info.group && k.1 == info.plural && namespace.is_none_or(|ns| k.2 == ns)
            })
            .collect()
    }
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
