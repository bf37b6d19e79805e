//! Discovery: `/version`, the API group list and each group version's resource list.

use serde_json::{json, Value};

use crate::resource::ResourceInfo;
use crate::store::Store;
use crate::version::SERVER_VERSION;

pub(super) fn version() -> Value {
    json!({
        "major": "1", "minor": "33", "gitVersion": SERVER_VERSION,
        "gitCommit": "8adc0f041b8e7ad1d30e29cc59c6ae7a15e19828", "gitTreeState": "clean",
        "buildDate": "2025-04-23T13:16:01Z", "goVersion": "go1.24.2", "compiler": "gc",
        "platform": "linux/amd64"
    })
}

pub(super) fn group_list(store: &Store) -> Value {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in store.resources().iter().filter(|r| !r.group.is_empty()) {
        match groups.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, vs)) if !vs.contains(&r.version) => vs.push(r.version.clone()),
            Some(_) => {}
            None => groups.push((r.group.clone(), vec![r.version.clone()])),
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                .collect();
            json!({"name": g, "versions": versions, "preferredVersion": versions[0]})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub(super) fn resource_list(store: &Store, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = store
        .resources()
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .flat_map(ResourceInfo::discovery_entries)
        .collect();
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}
