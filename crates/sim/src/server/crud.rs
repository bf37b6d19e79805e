//! One object: GET, create (POST), replace (PUT), PATCH (merge, strategic, JSON, apply) and
//! DELETE, and the `scale` subresource.

use std::collections::HashMap;
use std::sync::Arc;

use axum::response::Response;
use http::{header, HeaderMap, StatusCode};
use serde_json::{json, Value};

use super::list::list;
use super::watch::watch;
use super::{render, respond, ResourceRequest, Shared};
use crate::lock;
use crate::patch;
use crate::resource::ResourceInfo;
use crate::status::ApiError;
use crate::store::{meta_str, ObjKey, Store, Writer};
use crate::table;

/// A request on a resource (after routing, denies and `pods/log`): reads what every verb
/// shares (table output, dry run) and hands it to the verb's handler.
pub(super) fn serve_resource(
    sh: &Arc<Shared>,
    verb: &str,
    r: ResourceRequest,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let table = wants_table(headers);
    let include = q.get("includeObject").map_or("Metadata", String::as_str);
    let key = r
        .name
        .as_deref()
        .map(|n| Store::key(&r.info, r.namespace.as_deref(), n));
    if matches!(verb, "create" | "update") {
        refuse_protobuf(headers)?;
    }
    let dry_run = dry_run(q, body)?;
    if r.sub.as_deref() == Some("scale") {
        let key = key.ok_or_else(ApiError::method_not_allowed)?;
        return serve_scale(sh, verb, &r.info, &key, headers, body, dry_run);
    }
    match (verb, key) {
        ("watch", _) => watch(sh, r, q, table),
        ("list", _) => list(sh, &r, q, table, include),
        ("get", Some(key)) => get_object(sh, &r, &key, table, include),
        ("create", None) => create_object(sh, &r, body, dry_run),
        ("update", Some(key)) => update_object(sh, &r, &key, body, dry_run),
        ("patch", Some(key)) => patch_object(sh, &r, &key, headers, body, dry_run),
        ("delete", Some(key)) => {
            let deleted = lock(&sh.store).delete_with(&r.info, &key, dry_run)?;
            Ok(respond(StatusCode::OK, &render(&r.info, &deleted)))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("as=Table"))
}

/// Typed clients (`kubectl create deployment NAME --image …`) send protobuf bodies; the
/// simulator stores JSON only and says so instead of failing to parse.
fn refuse_protobuf(headers: &HeaderMap) -> Result<(), ApiError> {
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if ctype.starts_with("application/vnd.kubernetes.protobuf") {
        return Err(ApiError::unsupported_media_type(
            "the simulator accepts JSON request bodies only, not application/vnd.kubernetes.protobuf; \
             hint: write the object as YAML and create it from the file \
             (`kubectl create deployment NAME --image IMAGE --dry-run=client -o yaml | kubectl apply -f -`)",
        ));
    }
    Ok(())
}

/// `kubectl diff`, `apply --dry-run=server`: answer what would be stored, keep nothing.
/// DELETE carries its DeleteOptions (and so dryRun) in the body.
fn dry_run(q: &HashMap<String, String>, body: &[u8]) -> Result<bool, ApiError> {
    let body_dry_run = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|b| b.get("dryRun").cloned())
        .and_then(|d| d.as_array().and_then(|a| a.first()).cloned())
        .and_then(|d| d.as_str().map(str::to_owned));
    match q.get("dryRun").cloned().or(body_dry_run).as_deref() {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "Invalid dry run value: {other}; the only supported value is All"
        ))),
    }
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("the body of the request was not valid JSON: {e}"))
    })?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    Ok(v)
}

/// The media type of a PATCH body, without its parameters (`; charset=utf-8`).
fn patch_media_type(headers: &HeaderMap) -> &str {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .trim()
}

/// Writes through `/status` are the status writer's; the main object's are not.
fn writer_of(r: &ResourceRequest) -> Writer {
    if r.sub.is_some() {
        Writer::Status
    } else {
        Writer::Main
    }
}

fn get_object(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    key: &ObjKey,
    table: bool,
    include: &str,
) -> Result<Response, ApiError> {
    let info = &r.info;
    let st = lock(&sh.store);
    let obj = st
        .get(key)
        .ok_or_else(|| ApiError::not_found(info, &key.3))?;
    let obj = render(info, obj);
    Ok(if table && r.sub.is_none() {
        let meta = json!({"resourceVersion": st.rv.to_string()});
        respond(StatusCode::OK, &table::table(info, &[&obj], meta, include))
    } else {
        respond(StatusCode::OK, &obj)
    })
}

fn create_object(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    body: &[u8],
    dry_run: bool,
) -> Result<Response, ApiError> {
    let info = &r.info;
    let mut obj = parse_body(body)?;
    place_new_object(info, r.namespace.as_deref(), &mut obj)?;
    default_rollout_strategy(info, &mut obj);
    let mut st = lock(&sh.store);
    let created = st.create_with(info, obj, dry_run)?;
    let key = Store::key(
        info,
        meta_str(&created, "namespace"),
        meta_str(&created, "name").unwrap_or_default(),
    );
    if !dry_run {
        st.api_write(info, &key, Writer::Main);
    }
    Ok(respond(StatusCode::CREATED, &render(info, &created)))
}

/// Checks a POSTed object against the request (kind, namespace) and fills in what the request
/// implies: the namespace, a name from `generateName`; a resourceVersion sent is dropped.
fn place_new_object(
    info: &ResourceInfo,
    namespace: Option<&str>,
    obj: &mut Value,
) -> Result<(), ApiError> {
    if let Some(k) = obj.get("kind").and_then(Value::as_str) {
        if k != info.kind {
            return Err(ApiError::bad_request(format!(
                "the kind of the provided object ({k}) does not match the resource ({})",
                info.plural
            )));
        }
    }
    if info.namespaced {
        let Some(ns) = namespace else {
            return Err(ApiError::method_not_allowed());
        };
        if meta_str(obj, "namespace").is_some_and(|b| b != ns) {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        obj["metadata"]["namespace"] = json!(ns);
    }
    if meta_str(obj, "name").is_none_or(str::is_empty) {
        match meta_str(obj, "generateName").map(str::to_owned) {
            Some(prefix) => obj["metadata"]["name"] = json!(format!("{prefix}{}", random_suffix())),
            None => {
                return Err(ApiError::invalid(
                    info,
                    "",
                    "metadata.name: Required value: name or generateName is required",
                ))
            }
        }
    }
    if let Some(m) = obj["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    Ok(())
}

/// API defaulting `kubectl rollout status` depends on.
fn default_rollout_strategy(info: &ResourceInfo, obj: &mut Value) {
    if info.group == "apps" && info.kind == "StatefulSet" {
        if obj.pointer("/spec/updateStrategy/type").is_none() {
            obj["spec"]["updateStrategy"] =
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}});
        }
        if obj.pointer("/spec/podManagementPolicy").is_none() {
            obj["spec"]["podManagementPolicy"] = json!("OrderedReady");
        }
    }
    if info.group == "apps"
        && info.kind == "DaemonSet"
        && obj.pointer("/spec/updateStrategy/type").is_none()
    {
        obj["spec"]["updateStrategy"] = json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}});
    }
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = jiff::Timestamp::now().as_nanosecond().unsigned_abs();
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u128) as usize];
            n /= ALPHABET.len() as u128;
            char::from(c)
        })
        .collect()
}

fn update_object(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    key: &ObjKey,
    body: &[u8],
    dry_run: bool,
) -> Result<Response, ApiError> {
    let info = &r.info;
    let obj = parse_body(body)?;
    if info.namespaced && meta_str(&obj, "namespace").is_some_and(|n| n != key.2) {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let writer = writer_of(r);
    let mut st = lock(&sh.store);
    let updated = st.update_with(info, key, obj, writer, dry_run)?;
    if !dry_run {
        st.api_write(info, key, writer);
    }
    Ok(respond(StatusCode::OK, &render(info, &updated)))
}

fn patch_object(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    key: &ObjKey,
    headers: &HeaderMap,
    body: &[u8],
    dry_run: bool,
) -> Result<Response, ApiError> {
    let info = &r.info;
    let ctype = patch_media_type(headers);
    let writer = writer_of(r);
    let mut st = lock(&sh.store);
    let current = st.get(key).cloned();
    let (patched, created) = apply_patch(info, &key.3, current, ctype, body)?;
    let out = if created {
        let mut obj = patched;
        if info.namespaced {
            obj["metadata"]["namespace"] = json!(key.2);
        }
        obj["metadata"]["name"] = json!(key.3);
        (StatusCode::CREATED, st.create_with(info, obj, dry_run)?)
    } else {
        (
            StatusCode::OK,
            st.update_with(info, key, patched, writer, dry_run)?,
        )
    };
    if !dry_run {
        st.api_write(info, key, writer);
    }
    Ok(respond(out.0, &render(info, &out.1)))
}

/// The `autoscaling/v1` Scale a workload's `/scale` subresource serves.
fn scale_of(obj: &Value) -> Value {
    let selector: Vec<String> = obj
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    let meta = &obj["metadata"];
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"],
                     "resourceVersion": meta["resourceVersion"], "creationTimestamp": meta["creationTimestamp"]},
        "spec": {"replicas": obj.pointer("/spec/replicas").cloned().unwrap_or(json!(1))},
        "status": {"replicas": obj.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
                   "selector": selector.join(",")}
    })
}

/// `GET`, `PUT` and `PATCH` on `…/NAME/scale` (what `kubectl scale` uses): reads and writes the
/// workload's `spec.replicas` through a Scale object.
fn serve_scale(
    sh: &Arc<Shared>,
    verb: &str,
    info: &ResourceInfo,
    key: &ObjKey,
    headers: &HeaderMap,
    body: &[u8],
    dry_run: bool,
) -> Result<Response, ApiError> {
    let mut st = lock(&sh.store);
    let current = st
        .get(key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(info, &key.3))?;
    let scale = scale_of(&current);
    let wanted = match verb {
        "get" => return Ok(respond(StatusCode::OK, &scale)),
        "update" => {
            let body = parse_body(body)?;
            if let Some(rv) = meta_str(&body, "resourceVersion").filter(|r| !r.is_empty()) {
                if Some(rv) != meta_str(&current, "resourceVersion") {
                    return Err(ApiError::conflict(info, &key.3));
                }
            }
            body
        }
        "patch" => {
            let ctype = patch_media_type(headers);
            apply_patch(info, &key.3, Some(scale), ctype, body)?.0
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    let replicas = wanted
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .filter(|n| *n >= 0)
        .ok_or_else(|| {
            ApiError::invalid(
                info,
                &key.3,
                "spec.replicas: Invalid value: must be a non-negative integer",
            )
        })?;
    let mut obj = current;
    obj["spec"]["replicas"] = json!(replicas);
    let updated = st.update_with(info, key, obj, Writer::Main, dry_run)?;
    if !dry_run {
        st.api_write(info, key, Writer::Main);
    }
    Ok(respond(StatusCode::OK, &scale_of(&updated)))
}

/// Applies a PATCH body to the current object; `true` when server-side apply creates it.
fn apply_patch(
    info: &ResourceInfo,
    name: &str,
    current: Option<Value>,
    ctype: &str,
    body: &[u8],
) -> Result<(Value, bool), ApiError> {
    let invalid = |m: String| ApiError::invalid(info, name, m);
    match ctype {
        "application/apply-patch+yaml" => {
            let patch: Value = serde_norway::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            // Server-side apply approximated as a merge patch: no field ownership is tracked.
            let created = current.is_none();
            let mut doc = current.unwrap_or_else(|| json!({}));
            patch::merge_patch(&mut doc, &patch);
            Ok((doc, created))
        }
        "application/merge-patch+json" | "application/strategic-merge-patch+json" | "application/json-patch+json" => {
            if ctype == "application/strategic-merge-patch+json" && !info.builtin {
                // Custom resources have no patch strategy metadata; the real server refuses.
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: \
                     application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            let mut doc = current.ok_or_else(|| ApiError::not_found(info, name))?;
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("the body of the request was not valid JSON: {e}")))?;
            match ctype {
                "application/merge-patch+json" => patch::merge_patch(&mut doc, &patch),
                "application/strategic-merge-patch+json" => patch::strategic_merge(&mut doc, &patch),
                _ => patch::json_patch(&mut doc, &patch).map_err(invalid)?,
            }
            Ok((doc, false))
        }
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml \
             (got \"{other}\")"
        ))),
    }
}
