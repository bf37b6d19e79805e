//! The simulator as its own tests speak to it: the fixture story served, and a raw HTTP
//! client (hyper) for it. Those tests name this module `common`
//! (`use liveproof_testkit::sim_http as common;`).

use std::path::PathBuf;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use liveproof_sim::{SimHandle, Simulator};
use serde_json::Value;
use tokio::sync::mpsc;

/// The `inventory` Deployment in `apps` after a completed rollout, with its ReplicaSet and Pods
/// (in the simulator crate's test fixtures).
pub fn fixtures() -> PathBuf {
    crate::story::repo_root().join("crates/sim/tests/fixtures/inventory-rollout-complete")
}

pub async fn start_with(sim: Simulator) -> SimHandle {
    let objects = liveproof_gather::offline::read_objects(&fixtures()).expect("fixtures load");
    sim.with_objects(objects)
        .start()
        .await
        .expect("simulator starts")
}

pub async fn start() -> SimHandle {
    start_with(Simulator::new()).await
}

pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Value,
}

pub struct Http {
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Http {
    pub fn new(sim: &SimHandle) -> Self {
        Self {
            base: sim.url(),
            client: Client::builder(hyper_util::rt::TokioExecutor::new()).build_http(),
        }
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        accept: Option<&str>,
        body: &str,
    ) -> Reply {
        let mut req = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        if let Some(a) = accept {
            req = req.header("accept", a);
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        let resp = tokio::time::timeout(Duration::from_secs(10), self.client.request(req))
            .await
            .expect("no timeout")
            .expect("response");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, None, "").await
    }

    /// Opens a watch and yields each decoded event line; the channel ends with the stream.
    pub async fn watch(&self, path: &str) -> mpsc::Receiver<Value> {
        let req = http::Request::builder()
            .uri(format!("{}{path}", self.base))
            .body(Full::new(Bytes::new()))
            .expect("request");
        let resp = self.client.request(req).await.expect("watch response");
        assert_eq!(resp.status().as_u16(), 200, "watch {path}");
        let (tx, rx) = mpsc::channel(256);
        let mut body = resp.into_body();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let v: Value = serde_json::from_slice(&line).expect("watch line is JSON");
                    if tx.send(v).await.is_err() {
                        return;
                    }
                }
            }
        });
        rx
    }
}

/// The next watch event, or None when the stream ended or nothing came within 5s.
pub async fn next_event(rx: &mut mpsc::Receiver<Value>) -> Option<Value> {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .ok()
        .flatten()
}

pub fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_owned())
        .collect()
}
