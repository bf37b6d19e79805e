//! The HTTP layer: routing each request (and its injected faults) to the handler of its
//! endpoint. Where things are: `discovery.rs` (/version, group and resource lists), `crud.rs`
//! (one object: GET, POST, PUT, PATCH, DELETE, scale), `list.rs` (LIST with selectors and
//! pages), `watch.rs` (WATCH), `logs.rs` (pods/log). A new endpoint gets a `Route` variant
//! here, its handler in the file of its kind, and its branch in `serve`; a new verb on a
//! resource gets its branch in `crud::serve_resource`, which also hands LIST and WATCH on.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::response::{IntoResponse as _, Response};
use http::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::openapi;
use crate::resource::ResourceInfo;
use crate::status::ApiError;
use crate::store::Store;
use crate::{lock, Faults, RequestLog};

mod crud;
mod discovery;
mod list;
mod logs;
mod watch;

use crud::serve_resource;
use discovery::{group_list, resource_list, version};
use logs::serve_log;
pub use logs::LOG_ANNOTATION;

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

fn respond(code: StatusCode, body: &impl serde::Serialize) -> Response {
    let bytes = match serde_json::to_vec(body) {
        Ok(b) => b,
        Err(e) => {
            let e = ApiError::new(500, "InternalError", format!("cannot encode the body: {e}"));
            return error(&e);
        }
    };
    let mut resp = Response::new(Body::from(bytes));
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
    let resp = match sh.faults.truncation() {
        Some(limit) => truncate(resp, limit),
        None => resp,
    };
    match sh.faults.trickle() {
        Some(every) => trickle(resp, every),
        None => resp,
    }
}

/// Sends a response's body one byte per `every` (the headers at once).
fn trickle(resp: Response, every: Duration) -> Response {
    let (mut parts, body) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let stream = futures::stream::unfold(
        (body.into_data_stream(), axum::body::Bytes::new()),
        move |(mut body, mut pending)| async move {
            use futures::StreamExt as _;
            while pending.is_empty() {
                match body.next().await {
                    Some(Ok(chunk)) => pending = chunk,
                    Some(Err(e)) => return Some((Err(std::io::Error::other(e)), (body, pending))),
                    None => return None,
                }
            }
            tokio::time::sleep(every).await;
            let byte = pending.split_to(1);
            Some((Ok(byte), (body, pending)))
        },
    );
    Response::from_parts(parts, Body::from_stream(stream))
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
    if let Some(token) = sh.faults.required_token() {
        let sent = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if sent != Some(token.as_str()) {
            return error(&ApiError::injected(401, None));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
