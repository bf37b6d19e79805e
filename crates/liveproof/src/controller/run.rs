//! The loop that keeps every Verification's status true: kube-rs' `Controller` over
//! Verifications, triggered by metadata watches shared by all of them (one per kind and
//! namespace scope) and a bounded periodic requeue; each reconcile is one pass of gather's
//! reads for that Verification's targets, judged by evidence's `judgement` (the CLI's judge),
//! made a status by [`status_from`], written only when it changed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, PartialObjectMeta, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt as _};
use kube::{Resource, ResourceExt as _};
use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::{Judgement, Verdict, WaitRecord};
use liveproof_gather::session::PassError;
use liveproof_gather::{Cluster, ClusterOptions, GatherError};

use super::command::Settings;
use super::metrics::Metrics;
use super::object::Verification;
use super::status::{
    condition, status_from, status_refused, Refusal, RefusalReason, VerificationStatus, READY,
};
use crate::config::{Source, VerifyConfig};

/// The watches' server-side timeout: shorter than the watch client's read timeout (gather's
/// 60 s plus the request timeout), so a quiet watch is ended by the server, not cut.
const WATCH_TIMEOUT: u32 = 50;

/// A status whose only change is `lastVerifiedTime` is written again after this long: the
/// time stays meaningful without a write per judgement.
const HEARTBEAT: Duration = Duration::from_secs(300);

/// Why a judgement could not be made: retried with backoff, the status left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("reading the targets of {object}: {message}")]
    Read { object: String, message: String },
    #[error("writing the status of {object}: {source}")]
    Write { object: String, source: kube::Error },
    #[error("judging {object} took longer than {seconds}s")]
    OutOfTime { object: String, seconds: u64 },
}

/// What every reconcile shares.
struct Context {
    cluster: Cluster,
    client: kube::Client,
    recorder: Recorder,
    metrics: Metrics,
    settings: Settings,
    /// When the controller first saw each generation of each Verification (by uid): where
    /// the spec's `timeout` is measured from for a generation after the first.
    first_seen: Mutex<HashMap<(String, i64), Timestamp>>,
}

/// Runs until `shutdown` resolves (SIGTERM, Ctrl-C) or, with leader election, the Lease is
/// lost (an error: a supervisor restarts the process, which then waits for the Lease again).
pub async fn run(settings: Settings, metrics: Metrics) -> anyhow::Result<()> {
    let options = ClusterOptions {
        kubeconfig: settings.kubeconfig.clone(),
        context: settings.context.clone(),
        namespace: None,
        request_timeout: Some(settings.request_timeout),
        deadline: None,
        response_budget: liveproof_gather::ResponseBudget::default(),
    };
    let cluster = Cluster::connect(&options).await?;
    let client = cluster.client();
    let verifications = scoped::<Verification>(&client, settings.namespace.as_deref());
    // The CRD served, and the controller allowed to list: said now, not in a retry loop.
    if let Err(e) = verifications
        .list(&kube::api::ListParams::default().limit(1))
        .await
    {
        return Err(liveproof_evidence::hint::HintedMessage::new(
            format!("cannot list Verifications on {}: {e}", cluster.server()),
            "install the CRD (kubectl apply -f deploy/verification-crd.yaml) and grant the controller get, list, watch on verifications.liveproof.dev",
        )
        .into());
    }

    // What it writes, asked before it starts: a denied write is said now, naming it.
    let lease_namespace = settings.lease.as_ref().map(|(_, namespace)| {
        namespace
            .clone()
            .unwrap_or_else(|| cluster.default_namespace().to_string())
    });
    let needed = super::access::needed(settings.namespace.as_deref(), lease_namespace.as_deref());
    if let Some(missing) = super::access::missing(&client, &needed).await {
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|p| p.can_i()).collect();
            return Err(liveproof_evidence::hint::HintedMessage::new(
                format!(
                    "the controller's identity on {} may not: {}",
                    cluster.server(),
                    list.join("; ")
                ),
                "grant what deploy/controller.yaml (or the chart) grants the controller's ServiceAccount; `kubectl auth can-i` with the same words checks it",
            )
            .into());
        }
    }

    let listener = tokio::net::TcpListener::bind(settings.metrics_address)
        .await
        .map_err(|e| {
            liveproof_evidence::hint::HintedMessage::new(
                format!("--metrics-address {}: {e}", settings.metrics_address),
                "give a free address, such as 127.0.0.1:0 (a free port)",
            )
        })?;
    tracing::info!(
        "serving /metrics, /healthz and /readyz on {}",
        listener.local_addr()?
    );
    let router = metrics.router();
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    metrics.set_ready();

    let shutdown = tokio_util_shutdown();
    let outcome = match &settings.lease {
        None => {
            metrics.leader.set(1);
            judge_until(cluster, settings.clone(), metrics.clone(), shutdown).await
        }
        Some((name, namespace)) => {
            let namespace = namespace
                .clone()
                .unwrap_or_else(|| cluster.default_namespace().to_string());
            lead(cluster, &settings, &metrics, name, &namespace, shutdown).await
        }
    };
    server.abort();
    outcome
}

/// A future that resolves on SIGTERM or Ctrl-C, shareable.
fn tokio_util_shutdown() -> futures::future::Shared<futures::future::BoxFuture<'static, ()>> {
    use futures::FutureExt as _;
    async {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(term) => term,
                    Err(_) => {
                        let _ = ctrl_c.await;
                        return;
                    }
                };
            tokio::select! {
                _ = ctrl_c => {},
                _ = term.recv() => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = ctrl_c.await;
        }
        tracing::info!("stopping");
    }
    .boxed()
    .shared()
}

type Shutdown = futures::future::Shared<futures::future::BoxFuture<'static, ()>>;

/// With `--leader-elect`: waits for the Lease, judges while holding it, releases it on
/// shutdown.
async fn lead(
    cluster: Cluster,
    settings: &Settings,
    metrics: &Metrics,
    name: &str,
    namespace: &str,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let identity = std::env::var("POD_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| {
            format!(
                "{}-{}",
                std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .map(|h| h.trim().to_string())
                    .unwrap_or_else(|_| "liveproof".into()),
                std::process::id()
            )
        });
    let manager = kube_lease_manager::LeaseManagerBuilder::new(cluster.client(), name)
        .with_namespace(namespace)
        .with_identity(identity.clone())
        .with_duration(15)
        .with_grace(5)
        .build()
        .await?;
    let (mut leading, task) = manager.watch().await;
    tracing::info!("waiting for Lease {namespace}/{name} as {identity}");
    let outcome = loop {
        if *leading.borrow_and_update() {
            tracing::info!("holding Lease {namespace}/{name}: judging");
            metrics.leader.set(1);
            let lost = {
                let mut leading = leading.clone();
                async move {
                    while leading.changed().await.is_ok() {
                        if !*leading.borrow() {
                            break;
                        }
                    }
                }
            };
            let stop = shutdown.clone();
            let (lost_tx, mut lost_rx) = tokio::sync::oneshot::channel::<()>();
            let either = async move {
                tokio::select! {
                    _ = stop => {},
                    _ = lost => { let _ = lost_tx.send(()); },
                }
            };
            let judged =
                judge_until(cluster.clone(), settings.clone(), metrics.clone(), either).await;
            metrics.leader.set(0);
            break match (judged, lost_rx.try_recv().is_ok()) {
                (Err(e), _) => Err(e),
                (Ok(()), true) => Err(liveproof_evidence::hint::HintedMessage::new(
                    format!("lost Lease {namespace}/{name}"),
                    "another replica judges now; this one stopped so that only one writes (its supervisor restarts it)",
                )
                .into()),
                (Ok(()), false) => Ok(()),
            };
        }
        tokio::select! {
            changed = leading.changed() => if changed.is_err() {
                break Err(anyhow::anyhow!("the Lease manager stopped"));
            },
            _ = shutdown.clone() => break Ok(()),
        }
    };
    // Closing the channel makes the manager release the Lease; bounded by the request timeout.
    drop(leading);
    match tokio::time::timeout(settings.request_timeout * 2, task).await {
        Ok(Ok(Ok(_))) => tracing::info!("released Lease {namespace}/{name}"),
        Ok(Ok(Err(e))) => tracing::warn!("releasing Lease {namespace}/{name}: {e}"),
        Ok(Err(e)) => tracing::warn!("releasing Lease {namespace}/{name}: {e}"),
        Err(_) => tracing::warn!("releasing Lease {namespace}/{name} took too long"),
    }
    outcome
}

fn scoped<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// The Verifications a change to an object in `namespace` may concern: those in it, and
/// those naming a target there (NAMESPACE/TYPE/NAME).
fn concerned(store: &Store<Verification>, namespace: Option<&str>) -> Vec<ObjectRef<Verification>> {
    let Some(namespace) = namespace else {
        return Vec::new();
    };
    let prefix = format!("{namespace}/");
    store
        .state()
        .iter()
        .filter(|v| {
            v.namespace().as_deref() == Some(namespace)
                || v.spec.targets.iter().any(|t| t.starts_with(&prefix))
        })
        .map(|v| ObjectRef::from_obj(&**v))
        .collect()
}

/// One shared metadata watch of `K` in the scope: its objects as they change, its errors and
/// restarts counted.
fn shared_watch<K>(
    client: &kube::Client,
    namespace: Option<&str>,
    metrics: &Metrics,
) -> impl Stream<Item = Result<PartialObjectMeta<K>, watcher::Error>> + Send + 'static
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
    <K as Resource>::DynamicType: Default + Clone + Eq + std::hash::Hash + Send + Sync,
{
    let kind = super::metrics::KindLabels {
        kind: K::kind(&Default::default()).to_string(),
    };
    let errors = metrics.watch_errors.get_or_create(&kind).clone();
    let restarts = metrics.watch_restarts.get_or_create(&kind).clone();
    let config = watcher::Config::default().timeout(WATCH_TIMEOUT);
    watcher(scoped::<PartialObjectMeta<K>>(client, namespace), config)
        .default_backoff()
        .filter_map(move |event| {
            let out = match event {
                Ok(watcher::Event::Init) => {
                    restarts.inc();
                    None
                }
                Ok(watcher::Event::InitDone) => None,
                Ok(watcher::Event::Apply(o) | watcher::Event::Delete(o)) => Some(Ok(o)),
                // The initial list triggers nothing: the Verifications are all judged once
                // as they are listed.
                Ok(watcher::Event::InitApply(_)) => None,
                Err(e) => {
                    errors.inc();
                    tracing::warn!("watching {}: {e}; retrying", K::kind(&Default::default()));
                    Some(Err(e))
                }
            };
            futures::future::ready(out)
        })
}

/// The kube-rs Controller, until `stop`.
async fn judge_until(
    cluster: Cluster,
    settings: Settings,
    metrics: Metrics,
    stop: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()> {
    let client = cluster.client();
    let watch_client = cluster.watch_client();
    let ns = settings.namespace.clone();
    let reporter = Reporter {
        controller: "liveproof-controller".into(),
        instance: std::env::var("POD_NAME").ok(),
    };
    let recorder = Recorder::new(client.clone(), reporter);
    let context = Arc::new(Context {
        cluster,
        client: client.clone(),
        recorder,
        metrics: metrics.clone(),
        settings: settings.clone(),
        first_seen: Mutex::default(),
    });
    let controller = Controller::new(
        scoped::<Verification>(&watch_client, ns.as_deref()),
        watcher::Config::default().timeout(WATCH_TIMEOUT),
    )
    .with_config(
        kube::runtime::controller::Config::default()
            .debounce(Duration::from_millis(500))
            .concurrency(4),
    );
    let store = controller.store();
    macro_rules! trigger {
        ($controller:expr, $kind:ty) => {{
            let store = store.clone();
            $controller.watches_stream(
                shared_watch::<$kind>(&watch_client, ns.as_deref(), &metrics),
                move |o: PartialObjectMeta<$kind>| {
                    concerned(&store, o.metadata.namespace.as_deref())
                },
            )
        }};
    }
    let controller = trigger!(controller, Deployment);
    let controller = trigger!(controller, StatefulSet);
    let controller = trigger!(controller, DaemonSet);
    let controller = trigger!(controller, ReplicaSet);
    let controller = trigger!(controller, Pod);
    let controller = trigger!(controller, EndpointSlice);
    let forget = metrics.clone();
    controller
        .graceful_shutdown_on(stop)
        .run(reconcile, error_policy, context)
        .for_each(|outcome| {
            match outcome {
                Ok((object, _)) => tracing::debug!("judged {object}"),
                Err(kube::runtime::controller::Error::ObjectNotFound(object)) => {
                    if let Some(namespace) = &object.namespace {
                        forget.forget(namespace, &object.name);
                    }
                }
                Err(e) => tracing::debug!("{e}"),
            }
            futures::future::ready(())
        })
        .await;
    Ok(())
}

fn error_policy(v: Arc<Verification>, error: &ReconcileError, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_errors.inc();
    tracing::warn!("{error}; judging {} again soon", name_of(&v));
    Action::requeue(Duration::from_secs(5).min(ctx.settings.resync))
}

fn name_of(v: &Verification) -> String {
    format!("{}/{}", v.namespace().unwrap_or_default(), v.name_any())
}

/// From how many targets of a kind in a namespace one Verification's judgement LISTs the
/// namespace instead of reading each target (verify's CLI batches from 3: one command, one
/// judgement; the controller judges hundreds, each naming a few).
const CONTROLLER_BATCH_AT: usize = 50;

/// Judges one Verification and writes its status when it changed.
async fn reconcile(v: Arc<Verification>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    ctx.metrics.reconciles.inc();
    let object = name_of(&v);
    let generation = v.metadata.generation.unwrap_or(1);
    // The CRD's default status ({observedGeneration: 0}) is nothing judged yet.
    let previous = v
        .status
        .as_ref()
        .filter(|s| s.observed_generation.is_some_and(|g| g > 0));
    let now = Timestamp::now();
    // A whole judgement is bounded too: each request by --request-timeout, all of them by this.
    let bound = ctx.settings.request_timeout * 4;
    let status = tokio::time::timeout(bound, judge(&v, &ctx, generation, now, previous))
        .await
        .map_err(|_| ReconcileError::OutOfTime {
            object: object.clone(),
            seconds: bound.as_secs(),
        })??;
    ctx.metrics.set_verdict(
        &v.namespace().unwrap_or_default(),
        &v.name_any(),
        status.verdict.map(Verdict::name),
    );
    write(&v, &ctx, previous, status).await?;
    Ok(Action::requeue(ctx.settings.resync))
}

/// When the spec's `timeout` runs from: the Verification's creation for its first
/// generation, else when this controller first saw the generation (a restart gives a later
/// generation its whole timeout again: it errs toward waiting, never toward a false Stalled).
fn started(v: &Verification, ctx: &Context, generation: i64, now: Timestamp) -> Timestamp {
    if generation <= 1 {
        if let Some(created) = &v.metadata.creation_timestamp {
            return created.0;
        }
    }
    let uid = v.uid().unwrap_or_default();
    let mut seen = ctx.first_seen.lock().unwrap_or_else(|p| p.into_inner());
    seen.retain(|(u, g), _| *u != uid || *g >= generation);
    *seen.entry((uid, generation)).or_insert(now)
}

/// The status the cluster's state makes for `v` now.
async fn judge(
    v: &Verification,
    ctx: &Context,
    generation: i64,
    now: Timestamp,
    previous: Option<&VerificationStatus>,
) -> Result<VerificationStatus, ReconcileError> {
    let request = match v.request_at(now) {
        Ok(request) => request,
        Err(e) => {
            return Ok(status_refused(
                &Refusal::invalid_spec(&e),
                generation,
                now,
                previous,
            ))
        }
    };
    let timeout = v
        .spec
        .timeout
        .as_deref()
        .unwrap_or(crate::cli::DEFAULT_TIMEOUT);
    // Checked by request() already: the default on the impossible.
    let timeout = crate::config::parse_duration(timeout).unwrap_or(Duration::from_secs(300));
    let since = started(v, ctx, generation, now);
    let elapsed = now.duration_since(since).as_secs().max(0).unsigned_abs();
    let timed_out = elapsed >= timeout.as_secs();
    let namespace = v.namespace().unwrap_or_default();
    // Reads of one Verification's few targets stay theirs (a GET each, a pod LIST per
    // selector): from BATCH_AT targets verify LISTs the whole namespace, which for one of 500
    // Verifications over 10,000 pods re-reads every pod to judge four Deployments.
    let cluster = ctx
        .cluster
        .clone()
        .in_namespace(&namespace)
        .with_batch_at(CONTROLLER_BATCH_AT);
    let object = name_of(v);
    let mut config = VerifyConfig {
        request_timeout: ctx.settings.request_timeout,
        insecure_registries: v.spec.change.insecure_registry.clone(),
        selector: v
            .spec
            .selector
            .as_ref()
            .and_then(|s| Some((s.clone(), liveproof_evidence::selector::parse(s).ok()?))),
        ..VerifyConfig::new(
            request.targets().to_vec(),
            request.change().clone(),
            Source::Live(ClusterOptions::default()),
        )
    };
    config.namespace = Some(namespace.clone());
    let not_found = |message: String, hint: Option<String>| {
        status_refused(
            &Refusal {
                reason: RefusalReason::TargetNotFound { timed_out },
                message,
                hint,
            },
            generation,
            now,
            previous,
        )
    };
    let config = match crate::verify_run::selected_on(&config, &cluster).await {
        Ok(config) => config,
        Err(e) => {
            if let Some(nothing) = e.downcast_ref::<liveproof_gather::session::NothingSelected>() {
                return Ok(not_found(
                    nothing.to_string(),
                    nothing.hint().map(|h| h.into_owned()),
                ));
            }
            return Err(ReconcileError::Read {
                object,
                message: format!("{e:#}"),
            });
        }
    };
    let session = crate::verify_run::session(&config, &cluster);
    let pass = match session.pass().await {
        Ok(pass) => pass,
        Err(PassError::Gather(
            e @ (GatherError::NotFound { .. } | GatherError::NoNamespace { .. }),
        )) => return Ok(not_found(e.to_string(), e.hint().map(|h| h.into_owned()))),
        Err(e) => {
            return Err(ReconcileError::Read {
                object,
                message: e.with_hint().to_string(),
            })
        }
    };
    let Judgement { mut report, stop } = liveproof_evidence::judgement(
        &pass.observed,
        &config.change,
        &pass.targets,
        &namespace,
        false,
    );
    // A spec that can never be live (no statement of what changed) stalls at once, as
    // `verify --wait` refuses it, rather than waiting out its timeout.
    let stop = liveproof_evidence::unprovable(&report).or(stop);
    record_wait(&mut report, stop.as_ref(), timed_out, elapsed);
    Ok(status_from(&report, generation, now, previous))
}

/// What `verify --wait` records on its last report, so the status says what is final as the
/// CLI would: a failure waiting will not fix (`stop`, its note last), or the spec's timeout run
/// out with the change neither live nor superseded.
fn record_wait(
    report: &mut liveproof_evidence::Report,
    stop: Option<&liveproof_evidence::Settled>,
    timed_out: bool,
    elapsed_seconds: u64,
) {
    if report.verdict >= Verdict::Superseded {
        return;
    }
    if let Some(settled) = stop {
        report.notes.push(settled.note());
        report.wait = Some(WaitRecord {
            timed_out: false,
            elapsed_seconds,
        });
    } else if timed_out {
        report.wait = Some(WaitRecord {
            timed_out: true,
            elapsed_seconds,
        });
    }
}

/// Whether two statuses differ in more than when they were judged.
fn differs(a: &VerificationStatus, b: &VerificationStatus) -> bool {
    let strip = |s: &VerificationStatus| VerificationStatus {
        last_verified_time: None,
        ..s.clone()
    };
    strip(a) != strip(b)
}

fn stale(previous: &VerificationStatus, now: Timestamp) -> bool {
    previous
        .last_verified_time
        .as_deref()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .is_none_or(|at| now.duration_since(at).as_secs() >= HEARTBEAT.as_secs() as i64)
}

/// Writes `status` (the whole of it, a JSON patch on the status subresource) when it changed,
/// and an Event when Ready did.
async fn write(
    v: &Verification,
    ctx: &Context,
    previous: Option<&VerificationStatus>,
    status: VerificationStatus,
) -> Result<(), ReconcileError> {
    let now = Timestamp::now();
    let changed = previous.is_none_or(|p| differs(p, &status) || stale(p, now));
    if !changed {
        return Ok(());
    }
    let namespace = v.namespace().unwrap_or_default();
    let api: Api<Verification> = Api::namespaced(ctx.client.clone(), &namespace);
    let value = serde_json::to_value(&status).map_err(|e| ReconcileError::Read {
        object: name_of(v),
        message: e.to_string(),
    })?;
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "add", "path": "/status", "value": value}
    ]))
    .map_err(|e| ReconcileError::Read {
        object: name_of(v),
        message: e.to_string(),
    })?;
    api.patch_status(
        &v.name_any(),
        &PatchParams::default(),
        &Patch::Json::<()>(patch),
    )
    .await
    .map_err(|source| ReconcileError::Write {
        object: name_of(v),
        source,
    })?;
    ctx.metrics.status_writes.inc();
    let ready = |s: Option<&VerificationStatus>| {
        s.and_then(|s| condition(s, READY))
            .map(|c| (c.status.clone(), c.reason.clone()))
    };
    let (before, after) = (ready(previous), ready(Some(&status)));
    let turned = before.as_ref().map(|b| &b.0) != after.as_ref().map(|a| &a.0);
    if let (true, Some((now_ready, reason))) = (turned, after) {
        let live = now_ready == "True";
        if live {
            if let Some(lead) = status.lead_time_seconds {
                ctx.metrics.lead_time.observe(lead as f64);
            }
        }
        let message = condition(&status, READY)
            .map(|c| c.message.clone())
            .unwrap_or_default();
        tracing::info!("{} Ready={now_ready} ({reason}): {message}", name_of(v));
        let event = Event {
            type_: if live || before.is_none() {
                EventType::Normal
            } else {
                EventType::Warning
            },
            reason,
            note: Some(message.chars().take(1000).collect()),
            action: "Verify".into(),
            secondary: None,
        };
        if let Err(e) = ctx.recorder.publish(&event, &v.object_ref(&())).await {
            tracing::warn!("the Event on {} could not be written: {e}", name_of(v));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector::store::Writer;
    use serde_json::json;

    use super::*;

    fn verification(namespace: &str, name: &str, targets: &[&str]) -> Verification {
        serde_json::from_value(json!({
            "apiVersion": "liveproof.dev/v1alpha1", "kind": "Verification",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"targets": targets, "since": "2026-07-12T10:00:00Z"},
        }))
        .expect("a Verification")
    }

    /// A change in a namespace triggers the Verifications there and those naming a target
    /// there, and no other: 500 Verifications elsewhere are not judged for it.
    #[test]
    fn a_watched_change_triggers_only_the_verifications_it_concerns() {
        let mut writer = Writer::<Verification>::default();
        for v in [
            verification("apps", "web", &["deploy/web"]),
            verification("ops", "ledger", &["payments/sts/ledger"]),
            verification("ops", "other", &["deploy/other"]),
        ] {
            writer.apply_watcher_event(&watcher::Event::Apply(v));
        }
        let store = writer.as_reader();
        let names = |ns: Option<&str>| {
            let mut names: Vec<String> =
                concerned(&store, ns).into_iter().map(|r| r.name).collect();
            names.sort();
            names
        };
        assert_eq!(names(Some("apps")), ["web"]);
        assert_eq!(names(Some("payments")), ["ledger"]);
        assert_eq!(names(Some("ops")), ["ledger", "other"]);
        assert!(names(Some("kube-system")).is_empty());
        assert!(names(None).is_empty());
    }

    /// The spec's timeout run out: a change not live is Stalled (TimedOut); a live one stays
    /// Ready, and one still inside its timeout keeps Reconciling.
    #[test]
    fn the_timeout_makes_a_change_not_live_final_and_leaves_a_live_one_ready() {
        let report = |verdict: &str| -> liveproof_evidence::Report {
            serde_json::from_value(json!({
                "schema": "liveproof/v1", "verdict": verdict, "change": {}, "targets": [],
            }))
            .expect("a report")
        };
        let now = "2026-07-12T10:10:00Z".parse::<Timestamp>().expect("a time");
        let judged = |verdict: &str, timed_out: bool| {
            let mut r = report(verdict);
            record_wait(&mut r, None, timed_out, 600);
            let s = status_from(&r, 1, now, None);
            let c = |t: &str| {
                condition(&s, t)
                    .map(|c| (c.status.clone(), c.reason.clone()))
                    .unwrap_or_default()
            };
            (c(READY), c("Stalled"))
        };
        let (ready, stalled) = judged("not_live", true);
        assert_eq!(ready.0, "False");
        assert_eq!(stalled, ("True".into(), "TimedOut".into()));
        let (_, stalled) = judged("not_live", false);
        assert_eq!(stalled.0, "False");
        let (ready, stalled) = judged("live", true);
        assert_eq!(ready, ("True".into(), "Live".into()));
        assert_eq!(stalled.0, "False");
    }

    /// A status is written again only when something but the time it was judged changed, or
    /// when the time it shows is older than the heartbeat.
    #[test]
    fn a_status_is_rewritten_only_when_it_changed() {
        let report: liveproof_evidence::Report = serde_json::from_value(json!({
            "schema": "liveproof/v1", "verdict": "not_live", "change": {}, "targets": [],
        }))
        .expect("a report");
        let at = |s: &str| s.parse::<Timestamp>().expect("a time");
        let first = status_from(&report, 1, at("2026-07-12T10:00:00Z"), None);
        let again = status_from(&report, 1, at("2026-07-12T10:00:30Z"), Some(&first));
        assert!(!differs(&first, &again));
        assert!(!stale(&first, at("2026-07-12T10:04:59Z")));
        assert!(stale(&first, at("2026-07-12T10:05:00Z")));
        let next_generation = status_from(&report, 2, at("2026-07-12T10:00:30Z"), Some(&first));
        assert!(differs(&first, &next_generation));
    }
}
