//! WATCH: the change events after a resourceVersion, bookmarks, and the 410 Gone of an
//! expired one.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::header;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use super::list::Filter;
use super::{is_true, render, ResourceRequest, Shared};
use crate::resource::ResourceInfo;
use crate::status::ApiError;
use crate::store::Event;
use crate::table;
use crate::{lock, WatchExpiry};

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
            table::table(&self.info, &[&obj], json!({}), "Object")
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

pub(super) fn watch(
    sh: &Arc<Shared>,
    r: ResourceRequest,
    q: &HashMap<String, String>,
    table: bool,
) -> Result<Response, ApiError> {
    let filter = Filter::new(&r, q)?;
    if sh.faults.endless_watch_lines() {
        // 64 KiB of `x` at a time, never a newline, until the client hangs up.
        let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
        let stream = futures::stream::repeat_with(move || Ok::<_, Infallible>(chunk.clone()));
        let mut resp = Response::new(Body::from_stream(stream));
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        return Ok(resp);
    }
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
                .select(filter.query(None))
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
