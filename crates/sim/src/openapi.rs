//! A minimal OpenAPI v3 document per group-version: enough for kubectl to learn that the server
//! validates fields itself (`fieldValidation` on PATCH), so `kubectl apply`/`create -f` send
//! `fieldValidation=Strict` and skip client-side schema validation — no `--validate=false`.
//!
//! Schemas are left out: kubectl then computes strategic merge patches from its compiled-in
//! types, as it does for any built-in kind.

use serde_json::{json, Map, Value};

use crate::resource::ResourceInfo;

/// `gv` as OpenAPI v3 names it: `api/v1` or `apis/apps/v1`.
fn gv_path(r: &ResourceInfo) -> String {
    if r.group.is_empty() {
        format!("api/{}", r.version)
    } else {
        format!("apis/{}/{}", r.group, r.version)
    }
}

/// `GET /openapi/v3`: where each served group-version's document is.
pub(crate) fn index(resources: &[ResourceInfo]) -> Value {
    let mut paths = Map::new();
    for r in resources {
        let gv = gv_path(r);
        // The hash lets kubectl cache a document; it changes when the served kinds do.
        let hash = doc_hash(resources, &gv);
        paths.insert(
            gv.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={hash:016X}")}),
        );
    }
    json!({"paths": paths})
}

fn doc_hash(resources: &[ResourceInfo], gv: &str) -> u64 {
    // FNV-1a over the kinds served at this group-version.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for r in resources.iter().filter(|r| gv_path(r) == gv) {
        for b in r.kind.bytes().chain(r.plural.bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// `GET /openapi/v3/api/v1` or `/openapi/v3/apis/GROUP/VERSION`; `None` for a group-version
/// not served.
pub(crate) fn group_version(resources: &[ResourceInfo], gv: &str) -> Option<Value> {
    let served: Vec<&ResourceInfo> = resources.iter().filter(|r| gv_path(r) == gv).collect();
    if served.is_empty() {
        return None;
    }
    let field_validation = json!({
        "name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true},
        "description": "fieldValidation instructs the server on how to handle objects in the request \
                        containing unknown or duplicate fields."
    });
    let mut paths = Map::new();
    for r in served {
        let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
        let op = |action: &str| {
            json!({
                "operationId": format!("{action}{}", r.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [field_validation],
                "responses": {"200": {"description": "OK"}}
            })
        };
        let base = if r.namespaced {
            format!("/{gv}/namespaces/{{namespace}}/{}", r.plural)
        } else {
            format!("/{gv}/{}", r.plural)
        };
        paths.insert(base.clone(), json!({"post": op("post")}));
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"put": op("put"), "patch": op("patch")}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": crate::version::SERVER_VERSION},
        "paths": paths,
        "components": {"schemas": {}}
    }))
}
