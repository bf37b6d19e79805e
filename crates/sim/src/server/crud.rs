//! One object: GET, create (POST), replace (PUT), PATCH (merge, strategic, JSON, apply) and
//! DELETE, and the `scale` subresource.

use super::*;

pub(super) fn serve_resource(
    sh: &Arc<Shared>,
    verb: &str,
    r: ResourceRequest,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let info = &r.info;
    let table = wants_table(headers);
    let include = q.get("includeObject").map_or("Metadata", String::as_str);
    let key = r
        .name
        .as_deref()
        .map(|n| Store::key(info, r.namespace.as_deref(), n));
    if matches!(verb, "create" | "update") {
        refuse_protobuf(headers)?;
    }
    // `kubectl diff`, `apply --dry-run=server`: answer what would be stored, keep nothing.
    // DELETE carries its DeleteOptions (and so dryRun) in the body.
    let body_dry_run = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|b| b.get("dryRun").cloned())
        .and_then(|d| d.as_array().and_then(|a| a.first()).cloned())
        .and_then(|d| d.as_str().map(str::to_owned));
    let dry_run = match q.get("dryRun").cloned().or(body_dry_run).as_deref() {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Invalid dry run value: {other}; the only supported value is All"
            )))
        }
    };
    if r.sub.as_deref() == Some("scale") {
        let key = key.ok_or_else(ApiError::method_not_allowed)?;
        return serve_scale(sh, verb, info, &key, headers, body, dry_run);
    }
    match (verb, key) {
        ("watch", _) => watch(sh, r, q, table),
        ("list", _) => list(sh, &r, q, table, include),
        ("get", Some(key)) => {
            let st = lock(&sh.store);
            let obj = st
                .objects
                .get(&key)
                .ok_or_else(|| ApiError::not_found(info, &key.3))?;
            let obj = render(info, obj);
            Ok(if table && r.sub.is_none() {
                let meta = json!({"resourceVersion": st.rv.to_string()});
                respond(StatusCode::OK, &table::table(info, &[obj], meta, include))
            } else {
                respond(StatusCode::OK, &obj)
            })
        }
        ("create", None) => {
            let mut obj = parse_body(body)?;
            if let Some(k) = obj.get("kind").and_then(Value::as_str) {
                if k != info.kind {
                    return Err(ApiError::bad_request(format!(
                        "the kind of the provided object ({k}) does not match the resource ({})",
                        info.plural
                    )));
                }
            }
            if info.namespaced {
                let Some(ns) = &r.namespace else {
                    return Err(ApiError::method_not_allowed());
                };
                if meta_str(&obj, "namespace").is_some_and(|b| b != ns) {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                obj["metadata"]["namespace"] = json!(ns);
            }
            if meta_str(&obj, "name").is_none_or(str::is_empty) {
                match meta_str(&obj, "generateName").map(str::to_owned) {
                    Some(prefix) => {
                        obj["metadata"]["name"] = json!(format!("{prefix}{}", random_suffix()))
                    }
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
            // API defaulting `kubectl rollout status` depends on.
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
        ("update", Some(key)) => {
            let obj = parse_body(body)?;
            if info.namespaced && meta_str(&obj, "namespace").is_some_and(|n| n != key.2) {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            let writer = if r.sub.is_some() {
                Writer::Status
            } else {
                Writer::Main
            };
            let mut st = lock(&sh.store);
            let updated = st.update_with(info, &key, obj, writer, dry_run)?;
            if !dry_run {
                st.api_write(info, &key, writer);
            }
            Ok(respond(StatusCode::OK, &render(info, &updated)))
        }
        ("patch", Some(key)) => {
            let ctype = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let ctype = ctype
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            let writer = if r.sub.is_some() {
                Writer::Status
            } else {
                Writer::Main
            };
            let mut st = lock(&sh.store);
            let current = st.objects.get(&key).cloned();
            let (patched, created) = apply_patch(info, &key.3, current, &ctype, body)?;
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
                    st.update_with(info, &key, patched, writer, dry_run)?,
                )
            };
            if !dry_run {
                st.api_write(info, &key, writer);
            }
            Ok(respond(out.0, &render(info, &out.1)))
        }
        ("delete", Some(key)) => {
            let deleted = lock(&sh.store).delete_with(info, &key, dry_run)?;
            Ok(respond(StatusCode::OK, &render(info, &deleted)))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// The `autoscaling/v1` Scale a workload's `/scale` subresource serves.
pub(super) fn scale_of(obj: &Value) -> Value {
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
pub(super) fn serve_scale(
    sh: &Arc<Shared>,
    verb: &str,
    info: &ResourceInfo,
    key: &crate::store::ObjKey,
    headers: &HeaderMap,
    body: &[u8],
    dry_run: bool,
) -> Result<Response, ApiError> {
    let mut st = lock(&sh.store);
    let current = st
        .objects
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
            let ctype = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .and_then(|c| c.split(';').next())
                .unwrap_or_default()
                .trim()
                .to_owned();
            apply_patch(info, &key.3, Some(scale), &ctype, body)?.0
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
pub(super) fn apply_patch(
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
