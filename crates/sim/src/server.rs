//! The HTTP layer: path routing, discovery, CRUD, watch streams and fault injection.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Query, Request, State};
use axum::response::{IntoResponse as _, Response};
use http::{header, HeaderMap, Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::openapi;
use crate::patch;
use crate::resource::ResourceInfo;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::{meta_str, Event, Store, Writer};
use crate::table;
use crate::{lock, Faults, RequestLog, WatchExpiry};

/// The `gitVersion` `/version` reports.
pub const SERVER_VERSION: &str = "v1.33.0";

/// A deny rule: (verb, resource or resource/subresource, namespace or all).
pub(crate) type DenyRule = (String, String, Option<String>);

pub(crate) struct Shared {
    pub store: Mutex<Store>,
    pub faults: Faults,
    pub log: RequestLog,
    pub denies: Mutex<Vec<DenyRule>>,
    pub addr: SocketAddr,
    pub shutdown: tokio::sync::watch::Sender<bool>,
    pub bookmark_interval: Duration,
    pub list_item_types: bool,
}

enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    ResourceList(String, String),
    OpenApiIndex,
    OpenApiDoc(String),
    Resource(ResourceRequest),
    NotFound,
}

struct ResourceRequest {
    info: ResourceInfo,
    namespace: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

fn route(store: &Store, path: &str) -> Route {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Route::Version,
        ["api"] => return Route::CoreVersions,
        ["apis"] => return Route::Groups,
        ["apis", g] => return Route::Group((*g).to_owned()),
        ["openapi", "v3"] => return Route::OpenApiIndex,
        ["openapi", "v3", gv @ ..] => return Route::OpenApiDoc(gv.join("/")),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Route::NotFound,
    };
    let served = store
        .resources()
        .iter()
        .any(|r| r.group == group && r.version == version);
    if !served {
        return Route::NotFound;
    }
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..] if !matches!(*plural, "status" | "finalize") => {
            (Some((*ns).to_owned()), [&[*plural][..], tail].concat())
        }
        _ => (None, rest.to_vec()),
    };
    let (plural, name, sub) = match rest.as_slice() {
        [] => return Route::ResourceList(group.to_owned(), version.to_owned()),
        [p] => (*p, None, None),
        [p, n] => (*p, Some(*n), None),
        [p, n, s] => (*p, Some(*n), Some(*s)),
        _ => return Route::NotFound,
    };
    let Some(info) = store.by_path(group, version, plural) else {
        return Route::NotFound;
    };
    if namespace.is_some() && !info.namespaced {
        return Route::NotFound;
    }
    // Subresources: `status`, and a pod's `log`.
    let served_sub = |s: &str| {
        (s == "status" && info.has_status)
            || (s == "scale" && info.has_scale())
            || (s == "log" && info.kind == "Pod" && info.group.is_empty())
    };
    if matches!(sub, Some(s) if !served_sub(s)) {
        return Route::NotFound;
    }
    // A namespaced object is only addressable inside its namespace.
    if info.namespaced && namespace.is_none() && name.is_some() {
        return Route::NotFound;
    }
    Route::Resource(ResourceRequest {
        info,
        namespace,
        name: name.map(str::to_owned),
        sub: sub.map(str::to_owned),
    })
}

fn is_true(q: &HashMap<String, String>, key: &str) -> bool {
    q.get(key).is_some_and(|v| v == "true" || v == "1")
}

fn verb(method: &Method, route: &Route, q: &HashMap<String, String>) -> &'static str {
    let Route::Resource(r) = route else {
        return "get";
    };
    match *method {
        Method::GET if is_true(q, "watch") => "watch",
        Method::GET if r.name.is_none() => "list",
        Method::GET => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if r.name.is_none() => "deletecollection",
        Method::DELETE => "delete",
        _ => "unknown",
    }
}

fn respond(code: StatusCode, body: &Value) -> Response {
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn error(e: &ApiError) -> Response {
    let code = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = respond(code, &e.to_status());
    if let Some(secs) = e.retry_after {
        if let Ok(v) = header::HeaderValue::from_str(&secs.to_string()) {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
    resp
}

pub(crate) async fn handle(State(sh): State<Arc<Shared>>, req: Request) -> Response {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let resp = serve(&sh, req).await;
    // Logged at debug under this crate's target: `liveproof sim -vv` shows each request.
    tracing::debug!(
        target: "liveproof_sim::requests",
        "{method} {uri} -> {}",
        resp.status().as_u16()
    );
    match sh.faults.truncation() {
        Some(limit) => truncate(resp, limit),
        None => resp,
    }
}

/// Cuts a response's body after `limit` bytes and then fails it, so the connection is
/// dropped mid-body as by a dying server or proxy (the client sees an incomplete body).
fn truncate(resp: Response, limit: usize) -> Response {
    let (mut parts, body) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let stream = futures::stream::unfold(
        (body.into_data_stream(), limit, false),
        |(mut body, left, done)| async move {
            use futures::StreamExt as _;
            if done {
                return None;
            }
            if left == 0 {
                let cut =
                    std::io::Error::new(std::io::ErrorKind::ConnectionReset, "body cut short");
                return Some((Err(cut), (body, 0, true)));
            }
            match body.next().await {
                Some(Ok(chunk)) => {
                    let keep = chunk.len().min(left);
                    Some((Ok(chunk.slice(..keep)), (body, left - keep, false)))
                }
                Some(Err(e)) => Some((Err(std::io::Error::other(e)), (body, 0, true))),
                None => None,
            }
        },
    );
    Response::from_parts(parts, Body::from_stream(stream))
}

async fn serve(sh: &Arc<Shared>, req: Request) -> Response {
    let sh = sh.clone();
    let (parts, body) = req.into_parts();
    let latency = sh.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let q: HashMap<String, String> = Query::try_from_uri(&parts.uri)
        .map(|Query(q)| q)
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let route = route(&lock(&sh.store), &path);
    let verb = verb(&parts.method, &route, &q);
    sh.log.record(verb, &path);
    if let Some((code, retry_after)) = sh.faults.take_failure() {
        return error(&ApiError::injected(code, retry_after));
    }
    let body = match axum::body::to_bytes(body, 64 << 20).await {
        Ok(b) => b,
        Err(e) => {
            return error(&ApiError::bad_request(format!(
                "cannot read request body: {e}"
            )))
        }
    };
    match route {
        Route::Version => respond(StatusCode::OK, &version()),
        Route::CoreVersions => respond(
            StatusCode::OK,
            &json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": sh.addr.to_string()}]}),
        ),
        Route::Groups => respond(StatusCode::OK, &group_list(&lock(&sh.store))),
        Route::Group(g) => match group_list(&lock(&sh.store))["groups"]
            .as_array()
            .and_then(|gs| gs.iter().find(|x| x["name"] == g.as_str()).cloned())
        {
            Some(mut group) => {
                group["kind"] = json!("APIGroup");
                group["apiVersion"] = json!("v1");
                respond(StatusCode::OK, &group)
            }
            None => error(&ApiError::path_not_found()),
        },
        Route::ResourceList(g, v) => {
            respond(StatusCode::OK, &resource_list(&lock(&sh.store), &g, &v))
        }
        Route::OpenApiIndex => {
            respond(StatusCode::OK, &openapi::index(lock(&sh.store).resources()))
        }
        Route::OpenApiDoc(gv) => match openapi::group_version(lock(&sh.store).resources(), &gv) {
            Some(doc) => respond(StatusCode::OK, &doc),
            None => error(&ApiError::path_not_found()),
        },
        Route::NotFound => error(&ApiError::path_not_found()),
        Route::Resource(r) => {
            if let Some(e) = denied(&sh, verb, &r) {
                return error(&e);
            }
            if r.sub.as_deref() == Some("log") {
                return match serve_log(&sh, &r, &q) {
                    Ok(text) => (
                        StatusCode::OK,
                        [(axum::http::header::CONTENT_TYPE, "text/plain")],
                        text,
                    )
                        .into_response(),
                    Err(e) => error(&e),
                };
            }
            match serve_resource(&sh, verb, r, &q, &parts.headers, &body) {
                Ok(resp) => resp,
                Err(e) => error(&e),
            }
        }
    }
}

fn version() -> Value {
    json!({
        "major": "1", "minor": "33", "gitVersion": SERVER_VERSION,
        "gitCommit": "8adc0f041b8e7ad1d30e29cc59c6ae7a15e19828", "gitTreeState": "clean",
        "buildDate": "2025-04-23T13:16:01Z", "goVersion": "go1.24.2", "compiler": "gc",
        "platform": "linux/amd64"
    })
}

fn group_list(store: &Store) -> Value {
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

fn resource_list(store: &Store, group: &str, version: &str) -> Value {
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

fn denied(sh: &Shared, verb: &str, r: &ResourceRequest) -> Option<ApiError> {
    let resource = match &r.sub {
        Some(s) => format!("{}/{s}", r.info.plural),
        None => r.info.plural.clone(),
    };
    let hit = lock(&sh.denies).iter().any(|(v, res, ns)| {
        v == verb && *res == resource && ns.as_ref().is_none_or(|n| r.namespace.as_ref() == Some(n))
    });
    hit.then(|| {
        ApiError::forbidden(
            &r.info,
            verb,
            &resource,
            r.namespace.as_deref(),
            r.name.as_deref(),
        )
    })
}

/// The object as served at this version (CRD versions share storage, like conversion).
fn render(info: &ResourceInfo, obj: &Value) -> Value {
    let mut o = obj.clone();
    o["apiVersion"] = json!(info.api_version());
    o
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

/// The annotation a fixture pod carries its log text in: a JSON map from container name (or
/// `NAME/previous` for the last terminated run) to text. Lines may start with an RFC 3339
/// time, which `sinceTime` filters on (as `kubectl logs --timestamps` prints them).
pub const LOG_ANNOTATION: &str = "sim.liveproof.dev/logs";

/// `GET /api/v1/namespaces/NS/pods/NAME/log` with `container`, `tailLines`, `previous`,
/// `sinceTime`, answered as the kubelet would (plain text; errors as `Status`).
fn serve_log(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    q: &HashMap<String, String>,
) -> Result<String, ApiError> {
    let name = r.name.clone().unwrap_or_default();
    let key = Store::key(&r.info, r.namespace.as_deref(), &name);
    let st = lock(&sh.store);
    let pod = st
        .objects
        .get(&key)
        .ok_or_else(|| ApiError::not_found(&r.info, &name))?;
    let containers: Vec<String> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let container = match q.get("container") {
        Some(c) if containers.contains(c) => c.clone(),
        Some(c) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )))
        }
        None if containers.len() == 1 => containers[0].clone(),
        None => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            )))
        }
    };
    let logs: serde_json::Map<String, Value> = pod
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LOG_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    let previous = is_true(q, "previous");
    let entry = if previous {
        format!("{container}/previous")
    } else {
        container.clone()
    };
    let Some(text) = logs.get(&entry).and_then(Value::as_str) else {
        if previous {
            return Err(ApiError::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{name}\" not found"
            )));
        }
        return Ok(String::new());
    };
    let since: Option<jiff::Timestamp> = q.get("sinceTime").and_then(|t| t.parse().ok());
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|line| match since {
            Some(since) => line
                .split_whitespace()
                .next()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .is_none_or(|t| t >= since),
            None => true,
        })
        .collect();
    if let Some(tail) = q.get("tailLines").and_then(|t| t.parse::<usize>().ok()) {
        let skip = lines.len().saturating_sub(tail);
        lines.drain(..skip);
    }
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

fn serve_resource(
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

struct Filter {
    group: String,
    plural: String,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn new(r: &ResourceRequest, q: &HashMap<String, String>) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str))
            .map_err(ApiError::bad_request)?;
        let fields =
            FieldSelector::parse(q.get("fieldSelector").map_or("", String::as_str), &r.info)
                .map_err(ApiError::bad_request)?;
        Ok(Self {
            group: r.info.group.clone(),
            plural: r.info.plural.clone(),
            namespace: r.namespace.clone(),
            labels,
            fields,
        })
    }

    fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }

    fn covers(&self, ev: &Event) -> bool {
        ev.group == self.group
            && ev.plural == self.plural
            && self.namespace.as_ref().is_none_or(|n| *n == ev.namespace)
    }
}

fn encode_continue(ns: &str, name: &str) -> String {
    format!("{ns}\n{name}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_continue(token: &str) -> Option<(String, String)> {
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| {
            token
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    let s = String::from_utf8(bytes?).ok()?;
    let (ns, name) = s.split_once('\n')?;
    Some((ns.to_owned(), name.to_owned()))
}

fn list(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    q: &HashMap<String, String>,
    table: bool,
    include: &str,
) -> Result<Response, ApiError> {
    let filter = Filter::new(r, q)?;
    let limit = match q.get("limit").map(|l| l.parse::<usize>()) {
        Some(Ok(l)) => l,
        Some(Err(_)) => {
            return Err(ApiError::bad_request(
                "limit must be a non-negative integer",
            ))
        }
        None => 0,
    };
    let after = match q.get("continue").filter(|c| !c.is_empty()) {
        Some(c) => Some(decode_continue(c).ok_or_else(|| {
            ApiError::bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion",
            )
        })?),
        None => None,
    };
    let st = lock(&sh.store);
    let matching: Vec<(&crate::store::ObjKey, &Value)> = st
        .list(&r.info, r.namespace.as_deref())
        .into_iter()
        .filter(|(k, _)| after.as_ref().is_none_or(|(ns, n)| (&k.2, &k.3) > (ns, n)))
        .filter(|(_, o)| filter.matches(o))
        .collect();
    let take = if limit == 0 {
        matching.len()
    } else {
        limit.min(matching.len())
    };
    let mut meta = json!({"resourceVersion": st.rv.to_string()});
    if take < matching.len() {
        let (k, _) = matching[take - 1];
        meta["continue"] = json!(encode_continue(&k.2, &k.3));
        // As the API server: a count only for an unfiltered list (with a selector, what is
        // left is not known without reading it all). Found by story 8 of real_cluster.rs.
        let selected = ["labelSelector", "fieldSelector"]
            .iter()
            .any(|k| q.get(*k).is_some_and(|v| !v.is_empty()));
        if !selected {
            meta["remainingItemCount"] = json!(matching.len() - take);
        }
    }
    let items: Vec<Value> = matching[..take]
        .iter()
        .map(|(_, o)| {
            let mut o = render(&r.info, o);
            if !sh.list_item_types {
                if let Some(m) = o.as_object_mut() {
                    m.remove("kind");
                    m.remove("apiVersion");
                }
            }
            o
        })
        .collect();
    if table {
        let full: Vec<Value> = matching[..take]
            .iter()
            .map(|(_, o)| render(&r.info, o))
            .collect();
        return Ok(respond(
            StatusCode::OK,
            &table::table(&r.info, &full, meta, include),
        ));
    }
    Ok(respond(
        StatusCode::OK,
        &json!({"kind": r.info.list_kind(), "apiVersion": r.info.api_version(), "metadata": meta, "items": items}),
    ))
}

/// Writes watch events as newline-delimited JSON into the response body.
struct WatchWriter {
    tx: mpsc::Sender<Bytes>,
    info: ResourceInfo,
    table: bool,
    sent: u64,
    close_after: Option<u64>,
}

impl WatchWriter {
    async fn raw(&mut self, kind: &str, object: Value) -> bool {
        let mut line = json!({"type": kind, "object": object}).to_string();
        line.push('\n');
        self.tx.send(Bytes::from(line)).await.is_ok()
    }

    /// Sends one event; `false` when the stream must end (client gone or fault knob).
    async fn event(&mut self, kind: &str, obj: &Value) -> bool {
        let obj = render(&self.info, obj);
        let object = if self.table {
            table::table(&self.info, &[obj], json!({}), "Object")
        } else {
            obj
        };
        if !self.raw(kind, object).await {
            return false;
        }
        self.sent += 1;
        self.close_after.is_none_or(|n| self.sent < n)
    }

    async fn bookmark(&mut self, rv: u64, initial_end: bool) -> bool {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({"kind": self.info.kind, "apiVersion": self.info.api_version(), "metadata": meta});
        self.raw("BOOKMARK", obj).await
    }

    /// Delivers a stored change through the selector, as the real watch cache does:
    /// leaving the selection is a DELETED, entering it an ADDED.
    async fn change(&mut self, ev: &Event, filter: &Filter) -> bool {
        if !filter.covers(ev) {
            return true;
        }
        let now = filter.matches(&ev.object);
        let before = ev.previous.as_ref().is_some_and(|p| filter.matches(p));
        let kind = match (ev.kind, before, now) {
            ("ADDED", _, true) => "ADDED",
            ("DELETED", true, _) => "DELETED",
            ("MODIFIED", true, true) => "MODIFIED",
            ("MODIFIED", false, true) => "ADDED",
            ("MODIFIED", true, false) => "DELETED",
            _ => return true,
        };
        self.event(kind, &ev.object).await
    }
}

fn watch(
    sh: &Arc<Shared>,
    r: ResourceRequest,
    q: &HashMap<String, String>,
    table: bool,
) -> Result<Response, ApiError> {
    let filter = Filter::new(&r, q)?;
    let injected_expiry = sh.faults.take_watch_expiry();
    if injected_expiry == Some(WatchExpiry::Status) {
        let rv = lock(&sh.store).rv;
        return Err(ApiError::expired(rv, rv + 1));
    }
    let send_initial = is_true(q, "sendInitialEvents");
    let bookmarks = is_true(q, "allowWatchBookmarks");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let rv_param = q.get("resourceVersion").map_or("", String::as_str);
    let from = if rv_param.is_empty() || rv_param == "0" || send_initial {
        None
    } else {
        Some(rv_param.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("invalid resource version \"{rv_param}\""))
        })?)
    };
    let (initial, replay, mut rx, start_rv, expired) = {
        let st = lock(&sh.store);
        let rx = st.tx.subscribe();
        let initial: Vec<Value> = match from {
            None => st
                .list(&r.info, r.namespace.as_deref())
                .into_iter()
                .filter(|(_, o)| filter.matches(o))
                .map(|(_, o)| o.clone())
                .collect(),
            Some(_) => vec![],
        };
        let expired = from
            .filter(|f| *f < st.compacted_rv)
            .map(|f| ApiError::expired(f, st.compacted_rv + 1))
            .or_else(|| {
                (injected_expiry == Some(WatchExpiry::InStream))
                    .then(|| ApiError::expired(from.unwrap_or(st.rv), st.rv + 1))
            });
        let replay = from.map(|f| st.history_after(f)).unwrap_or_default();
        (initial, replay, rx, st.rv, expired)
    };
    let (tx, body_rx) = mpsc::channel::<Bytes>(64);
    let mut w = WatchWriter {
        tx,
        info: r.info,
        table,
        sent: 0,
        close_after: sh.faults.watch_close_after(),
    };
    let mut shutdown = sh.shutdown.subscribe();
    let interval = sh.bookmark_interval;
    tokio::spawn(async move {
        if let Some(e) = expired {
            w.raw("ERROR", e.to_status()).await;
            return;
        }
        for obj in &initial {
            if !w.event("ADDED", obj).await {
                return;
            }
        }
        if send_initial && !w.bookmark(start_rv, true).await {
            return;
        }
        for ev in &replay {
            if !w.change(ev, &filter).await {
                return;
            }
        }
        let mut seen_rv = start_rv;
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                got = rx.recv() => match got {
                    Ok(ev) => {
                        seen_rv = seen_rv.max(ev.rv);
                        if ev.rv > start_rv && !w.change(&ev, &filter).await {
                            return;
                        }
                    }
                    // Too slow to keep up: the real server ends such a watch with 410 too.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        w.raw("ERROR", ApiError::expired(seen_rv, seen_rv + 1).to_status()).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = tick.tick(), if bookmarks => {
                    if !w.bookmark(seen_rv, false).await {
                        return;
                    }
                }
                () = &mut deadline => return,
                _ = shutdown.changed() => return,
                () = w.tx.closed() => return,
            }
        }
    });
    let stream = futures::stream::unfold(body_rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<Bytes, Infallible>(b), rx))
    });
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_continue("apps", "inventory-1");
        assert_eq!(
            decode_continue(&t),
            Some(("apps".into(), "inventory-1".into()))
        );
        assert_eq!(decode_continue("zz"), None);
    }

    #[test]
    fn routes_namespaces_and_namespaced_paths() {
        let st = Store::new(10);
        assert!(
            matches!(route(&st, "/api/v1/namespaces/apps"), Route::Resource(r) if r.info.kind == "Namespace" && r.name.as_deref() == Some("apps"))
        );
        assert!(
            matches!(route(&st, "/api/v1/namespaces/apps/pods/p/status"), Route::Resource(r) if r.info.kind == "Pod" && r.sub.as_deref() == Some("status"))
        );
        assert!(
            matches!(route(&st, "/apis/apps/v1/deployments"), Route::Resource(r) if r.namespace.is_none() && r.name.is_none())
        );
        assert!(matches!(
            route(&st, "/apis/nope/v1/things"),
            Route::NotFound
        ));
        assert!(matches!(route(&st, "/api/v1/pods/x"), Route::NotFound));
    }
}
