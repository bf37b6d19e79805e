//! How the simulator's LIST scales with the objects it holds: a namespace of DEPLOYMENTS
//! Deployments with PODS pods each (a ReplicaSet per Deployment; 2,000 x 5 by default), then
//! twice that many pods spread over NAMESPACES namespaces (20,000 over 10). Times, over plain HTTP, a full paginated pod LIST of one
//! namespace (limit=500 and limit=5000, and as the Table `kubectl get` asks for), one selector
//! LIST per Deployment (`app=NAME,pod-template-hash=h1`, as a ReplicaSet's pods are found) and
//! GETs of one pod.
//! Prints figures only; whether they are good enough is for a person to judge.
//!
//! Run: `cargo bench -p liveproof-sim --bench list` (optionally `-- DEPLOYMENTS PODS NAMESPACES`).

use std::time::{Duration, Instant};

use liveproof_sim::{SimHandle, Simulator};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};

type BenchError = Box<dyn std::error::Error>;

/// Deployment, ReplicaSet and pods in the shape a rolled-out Deployment leaves.
fn objects(namespace: &str, deployments: usize, pods: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for d in 0..deployments {
        let name = format!("svc-{d}");
        let uid = format!("uid-{namespace}-{d}");
        let template = json!({"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app", "image": format!("registry.local/{name}:1")}]}});
        let mut rs_template = template.clone();
        rs_template["metadata"]["labels"]["pod-template-hash"] = json!("h1");
        out.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "uid": uid, "generation": 1, "labels": {"app": name}},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name}}, "template": template},
            "status": {"observedGeneration": 1, "replicas": pods, "updatedReplicas": pods, "availableReplicas": pods}}));
        out.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("{name}-h1"), "namespace": namespace, "labels": {"app": name, "pod-template-hash": "h1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": uid}]},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name, "pod-template-hash": "h1"}}, "template": rs_template}}));
        for p in 0..pods {
            out.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{name}-h1-{p}"), "namespace": namespace,
                             "labels": {"app": name, "pod-template-hash": "h1"},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{name}-h1"), "uid": format!("rs-{uid}")}]},
                "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": format!("registry.local/{name}:1"),
                         "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
                "status": {"phase": "Running", "podIP": format!("10.0.{}.{}", d % 256, p), "conditions": [{"type": "Ready", "status": "True"}],
                           "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                                  "image": format!("registry.local/{name}:1"), "imageID": "registry.local/app@sha256:0",
                                                  "state": {"running": {"startedAt": "2026-07-12T10:05:00Z"}}}]}}));
        }
    }
    out
}

/// Only what paging needs from a LIST (or a Table); the items are parsed but not kept.
#[derive(Deserialize)]
struct ListPage {
    metadata: ListMeta,
    #[serde(alias = "rows")]
    items: Vec<IgnoredAny>,
}

/// What `kubectl get` sends: a server-side Table, objects as metadata only.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

#[derive(Deserialize)]
struct ListMeta {
    #[serde(rename = "continue")]
    next: Option<String>,
}

/// reqwest is built without a default crypto provider; the simulator speaks plain HTTP, but
/// reqwest still wants a TLS setup.
fn plain_http_client() -> Result<reqwest::Client, BenchError> {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()?)
}

struct Bench {
    http: reqwest::Client,
    base: String,
    accept: &'static str,
}

/// What one measured step did: requests sent, items received, time taken.
struct Figures {
    requests: usize,
    items: usize,
    wall: Duration,
}

impl Bench {
    async fn page(&self, path: &str) -> Result<ListPage, BenchError> {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .header(reqwest::header::ACCEPT, self.accept)
            .send()
            .await?;
        let status = resp.status();
        let body = resp.bytes().await?;
        if !status.is_success() {
            return Err(format!("GET {path}: {status}: {}", String::from_utf8_lossy(&body)).into());
        }
        Ok(serde_json::from_slice(&body)?)
    }

    /// Every page of `path` at `limit` items a page.
    async fn paginated(&self, path: &str, limit: usize) -> Result<Figures, BenchError> {
        let start = Instant::now();
        let (mut requests, mut items, mut next) = (0, 0, None::<String>);
        loop {
            let url = match &next {
                Some(c) => format!("{path}?limit={limit}&continue={c}"),
                None => format!("{path}?limit={limit}"),
            };
            let page = self.page(&url).await?;
            requests += 1;
            items += page.items.len();
            next = page.metadata.next.filter(|c| !c.is_empty());
            if next.is_none() {
                break;
            }
        }
        Ok(Figures {
            requests,
            items,
            wall: start.elapsed(),
        })
    }

    /// One selector LIST per Deployment, as a ReplicaSet's pods are looked up.
    async fn selectors(
        &self,
        namespaces: &[String],
        deployments: usize,
    ) -> Result<Figures, BenchError> {
        let start = Instant::now();
        let (mut requests, mut items) = (0, 0);
        for ns in namespaces {
            for d in 0..deployments {
                let path = format!(
                    "/api/v1/namespaces/{ns}/pods?labelSelector=app%3Dsvc-{d}%2Cpod-template-hash%3Dh1"
                );
                items += self.page(&path).await?.items.len();
                requests += 1;
            }
        }
        Ok(Figures {
            requests,
            items,
            wall: start.elapsed(),
        })
    }

    async fn gets(&self, path: &str, times: usize) -> Result<Figures, BenchError> {
        let start = Instant::now();
        for _ in 0..times {
            let resp = self.http.get(format!("{}{path}", self.base)).send().await?;
            if !resp.status().is_success() {
                return Err(format!("GET {path}: {}", resp.status()).into());
            }
            resp.bytes().await?;
        }
        Ok(Figures {
            requests: times,
            items: times,
            wall: start.elapsed(),
        })
    }
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn report(what: &str, f: &Figures, want_items: usize) -> Result<(), BenchError> {
    let ms = f.wall.as_secs_f64() * 1000.0;
    println!(
        "{what:<44} {:>6} requests {:>7} items {:>10.1} ms wall {:>8.3} ms/request",
        f.requests,
        f.items,
        ms,
        ms / f.requests.max(1) as f64
    );
    if f.items != want_items {
        return Err(format!("{what}: {} items, expected {want_items}", f.items).into());
    }
    Ok(())
}

async fn start(
    namespaces: &[String],
    deployments: usize,
    pods: usize,
) -> Result<(SimHandle, Duration), BenchError> {
    let objs: Vec<Value> = namespaces
        .iter()
        .flat_map(|ns| objects(ns, deployments, pods))
        .collect();
    let begin = Instant::now();
    let sim = Simulator::new().with_objects(objs).start().await?;
    Ok((sim, begin.elapsed()))
}

/// The measurements against one loaded simulator.
async fn run(namespaces: &[String], deployments: usize, pods: usize) -> Result<(), BenchError> {
    let (sim, load) = start(namespaces, deployments, pods).await?;
    let total = namespaces.len() * deployments * pods;
    let per_ns = deployments * pods;
    let mut b = Bench {
        http: plain_http_client()?,
        base: sim.url(),
        accept: "application/json",
    };
    report(
        &format!("load {total} pods in {} namespace(s)", namespaces.len()),
        &Figures {
            requests: 0,
            items: total,
            wall: load,
        },
        total,
    )?;
    let ns = &namespaces[0];
    let pods_path = format!("/api/v1/namespaces/{ns}/pods");
    for limit in [500, 5000] {
        let f = b.paginated(&pods_path, limit).await?;
        report(&format!("pods of {ns}, limit={limit}"), &f, per_ns)?;
    }
    b.accept = TABLE;
    let f = b.paginated(&pods_path, 500).await?;
    report(&format!("pods of {ns} as a Table, limit=500"), &f, per_ns)?;
    b.accept = "application/json";
    if namespaces.len() > 1 {
        let f = b.paginated("/api/v1/pods", 5000).await?;
        report("pods of all namespaces, limit=5000", &f, total)?;
    }
    let f = b.selectors(namespaces, deployments).await?;
    report(
        &format!("{} selector LISTs", namespaces.len() * deployments),
        &f,
        total,
    )?;
    let f = b
        .gets(&format!("{pods_path}/svc-{}-h1-0", deployments / 2), 200)
        .await?;
    report("GET one pod", &f, 200)?;
    sim.shutdown().await;
    Ok(())
}

fn main() -> Result<(), BenchError> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (deployments, pods, spread) = (
        args.first().copied().unwrap_or(2000),
        args.get(1).copied().unwrap_or(5),
        args.get(2).copied().unwrap_or(10),
    );
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        run(&["bench".to_owned()], deployments, pods).await?;
        let spread = spread.max(1);
        let namespaces: Vec<String> = (0..spread).map(|n| format!("bench-{n}")).collect();
        run(&namespaces, 2 * deployments / spread, pods).await
    })
}
