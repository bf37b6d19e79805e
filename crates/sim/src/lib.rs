//! A Kubernetes API server simulator: real object JSON, one global resourceVersion,
//! selectors, paging, watch with replay and 410 Gone, three PATCH kinds, `Status`
//! errors, server-side tables, RBAC denials, fault injection and request counting.
//!
//! `kubectl` and the `kube` crate talk to it as to a real API server over plain HTTP.

mod controller;
pub mod crds;
mod endpointslices;
mod openapi;
mod patch;
mod resource;
mod selector;
mod server;
mod status;
mod store;
mod table;
mod version;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use crate::server::Shared;
use crate::status::ApiError;
use crate::store::{meta_str, Store, Writer};

pub use crate::server::LOG_ANNOTATION;
pub use crate::version::SERVER_VERSION;

/// Everything that can go wrong setting up the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invalid object {object}: {message}")]
    InvalidObject { object: String, message: String },
    #[error("cannot listen on 127.0.0.1:{port}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
}

/// A poisoned lock only means another request panicked; the data is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Builder for a simulated API server.
#[derive(Debug, Clone)]
pub struct Simulator {
    objects: Vec<Value>,
    port: u16,
    history_limit: usize,
    bookmark_interval: Duration,
    list_item_types: bool,
    gitops_crds: bool,
    controllers: bool,
    termination_grace: Duration,
    image_digests: BTreeMap<String, String>,
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new()
    }
}

/// Flattens `kind: List` (what `kubectl get -o yaml` prints) into its items, skipping `null`s.
fn flatten(obj: Value, out: &mut Vec<Value>) {
    let Ok(()) = liveproof_evidence::objects::each_object(obj, "", &mut |object, _| {
        if !object.is_null() {
            out.push(object);
        }
        Ok::<(), std::convert::Infallible>(())
    });
}

impl Simulator {
    pub fn new() -> Self {
        Self {
            objects: Vec::new(),
            port: 0,
            history_limit: 1000,
            bookmark_interval: Duration::from_secs(5),
            list_item_types: true,
            gitops_crds: false,
            controllers: false,
            termination_grace: Duration::from_secs(2),
            image_digests: BTreeMap::new(),
        }
    }

    /// Objects to serve from the start; `kind: List` is flattened.
    pub fn with_objects(mut self, objs: impl IntoIterator<Item = Value>) -> Self {
        for o in objs {
            flatten(o, &mut self.objects);
        }
        self
    }

    /// Port to listen on; 0 (the default) picks a free one.
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// How many change events watches can replay; older resourceVersions get 410 Gone.
    pub fn with_history_limit(mut self, events: usize) -> Self {
        self.history_limit = events;
        self
    }

    /// How often a watch that allows bookmarks receives one (the real server: about a minute).
    pub fn with_bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// Whether list items carry `kind`/`apiVersion` (default: yes). A real server omits
    /// them in typed lists; turn this off to test code against that.
    pub fn with_list_item_types(mut self, include: bool) -> Self {
        self.list_item_types = include;
        self
    }

    /// Serves the Flux (HelmRelease v2, Kustomization v1, GitRepository v1, HelmChart v1) and
    /// Argo CD (Application v1alpha1) resource types even when no object of them is loaded,
    /// as a cluster with those controllers installed does. Without it, a type with no object
    /// answers 404, as on a cluster without them.
    pub fn with_gitops_crds(mut self) -> Self {
        self.gitops_crds = true;
        self
    }

    /// Runs the built-in workload controllers and kubelet: a Deployment created or changed
    /// through the API (`kubectl apply`, `set image`, `rollout undo`, `scale`, …) rolls out as on
    /// a cluster — a ReplicaSet per template with Ready pods started now, old pods Terminating
    /// then gone, the Deployment's status following; a StatefulSet replaces its ordinal pods and
    /// a DaemonSet its per-node pods one at a time onto a new ControllerRevision. Objects loaded as fixtures are left as
    /// they are until the API changes them. Off by default; `liveproof sim` turns it on.
    pub fn with_controllers(mut self) -> Self {
        self.controllers = true;
        self
    }

    /// How long a scaled-down pod stays Terminating before it is gone (default 2s; a cluster's
    /// default is 30s).
    pub fn with_termination_grace(mut self, grace: Duration) -> Self {
        self.termination_grace = grace;
        self
    }

    /// The digest (`sha256:…`) pods running `image` report in `imageID`, as if the registry
    /// served it. Without one, a pinned digest in the reference is used, else a deterministic
    /// sha256 of the reference.
    pub fn with_image_digest(mut self, image: &str, digest: &str) -> Self {
        self.image_digests
            .insert(image.to_owned(), digest.to_owned());
        self
    }

    /// Loads the objects, binds 127.0.0.1 and serves in a background task.
    pub async fn start(self) -> Result<SimHandle, SimError> {
        let mut store = Store::new(self.history_limit);
        if self.gitops_crds {
            store.install(resource::gitops_crds());
            for crd in crds::objects().map_err(|message| SimError::InvalidObject {
                object: "an embedded CustomResourceDefinition".into(),
                message,
            })? {
                controller_apply(&mut store, crd).map_err(|(object, e)| {
                    SimError::InvalidObject {
                        object,
                        message: e.message,
                    }
                })?;
            }
        }
        // A real cluster holds the namespace of every object in it, and `default`; fixtures
        // name them only implicitly. Objects given later through the API get no such help.
        let mut namespaces: std::collections::BTreeSet<String> =
            std::iter::once("default".to_string()).collect();
        for obj in self.objects {
            let namespace = meta_str(&obj, "namespace").map(str::to_owned);
            let stored = controller_apply(&mut store, obj).map_err(|(object, e)| {
                SimError::InvalidObject {
                    object,
                    message: e.message,
                }
            })?;
            let namespaced = stored
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .is_some();
            namespaces.extend(namespace.filter(|_| namespaced));
        }
        for ns in namespaces {
            let exists = store
                .lookup("v1", "Namespace")
                .is_some_and(|info| store.contains(&Store::key(&info, None, &ns)));
            if !exists {
                let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                controller_apply(&mut store, namespace).map_err(|(object, e)| {
                    SimError::InvalidObject {
                        object,
                        message: e.message,
                    }
                })?;
            }
        }
        endpointslices::adopt_fixtures(&mut store);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(|source| SimError::Bind {
                port: self.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| SimError::Bind {
            port: self.port,
            source,
        })?;
        let (shutdown, mut shutdown_rx) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            store: Mutex::new(store),
            faults: Faults::default(),
            log: RequestLog::default(),
            denies: Mutex::new(Vec::new()),
            addr,
            shutdown,
            bookmark_interval: self.bookmark_interval,
            list_item_types: self.list_item_types,
        });
        if self.controllers {
            let config = controller::ControllerConfig {
                termination_grace: self.termination_grace,
                image_digests: self.image_digests,
            };
            let shared = shared.clone();
            let mut stop = shared.shutdown.subscribe();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(controller::TICK);
                // A tick that ran long is not made up for: requests get the store in between.
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                let mut settled = controller::Settled::default();
                loop {
                    tokio::select! {
                        _ = tick.tick() => {
                            let mut st = lock(&shared.store);
                            controller::reconcile(&mut st, &config, jiff::Timestamp::now(), &mut settled);
                            endpointslices::reconcile(&mut st);
                        }
                        _ = stop.changed() => return,
                    }
                }
            });
        }
        let app = axum::Router::new()
            .fallback(server::handle)
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = shutdown_rx.wait_for(|stop| *stop).await;
            });
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "simulator server stopped");
            }
        });
        tracing::debug!(%addr, "simulator listening");
        Ok(SimHandle {
            shared,
            task: Arc::new(Mutex::new(Some(task))),
        })
    }
}

/// Create or replace as a controller would; the error names the object.
fn controller_apply(store: &mut Store, mut obj: Value) -> Result<Value, (String, ApiError)> {
    let describe = |o: &Value| {
        format!(
            "{}/{} {}",
            o.get("apiVersion").and_then(Value::as_str).unwrap_or("?"),
            o.get("kind").and_then(Value::as_str).unwrap_or("?"),
            meta_str(o, "name").unwrap_or("?")
        )
    };
    let (Some(api_version), Some(kind)) = (
        obj.get("apiVersion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        obj.get("kind").and_then(Value::as_str).map(str::to_owned),
    ) else {
        return Err((
            describe(&obj),
            ApiError::bad_request("apiVersion and kind are required"),
        ));
    };
    let Some(name) = meta_str(&obj, "name")
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
    else {
        return Err((
            describe(&obj),
            ApiError::bad_request("metadata.name is required"),
        ));
    };
    let info = store.by_kind(&api_version, &kind);
    let key = Store::key(&info, meta_str(&obj, "namespace"), &name);
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    let result = if store.contains(&key) {
        store.update(&info, &key, obj.clone(), Writer::Controller)
    } else {
        store.create(&info, obj.clone())
    };
    result.map_err(|e| (describe(&obj), e))
}

/// A running simulator. Cloning shares the same server.
#[derive(Clone)]
pub struct SimHandle {
    shared: Arc<Shared>,
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl std::fmt::Debug for SimHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimHandle")
            .field("url", &self.url())
            .finish()
    }
}

impl SimHandle {
    pub fn url(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    /// A kubeconfig whose cluster, context and user are all `liveproof-sim`.
    pub fn kubeconfig_yaml(&self, namespace: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: liveproof-sim\n  cluster:\n    server: {url}\n\
             contexts:\n- name: liveproof-sim\n  context:\n    cluster: liveproof-sim\n    user: liveproof-sim\n    namespace: {namespace}\n\
             current-context: liveproof-sim\nusers:\n- name: liveproof-sim\n  user:\n    token: liveproof-sim\n",
            url = self.url()
        )
    }

    pub fn write_kubeconfig(&self, path: &Path, namespace: &str) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig_yaml(namespace))
    }

    /// Create or replace as a controller or `kubectl` would; see [`SimHandle::try_apply`].
    /// An invalid object (no apiVersion, kind or name) yields the `Status` the server would answer.
    pub fn apply(&self, obj: Value) -> Value {
        match controller_apply(&mut lock(&self.shared.store), obj) {
            Ok(v) => v,
            Err((object, e)) => {
                tracing::warn!(%object, message = %e.message, "simulator rejected an applied object");
                e.to_status()
            }
        }
    }

    /// Create or replace, writing status too: assigns uid, creationTimestamp and
    /// resourceVersion, bumps generation on spec changes, emits ADDED/MODIFIED.
    pub fn try_apply(&self, obj: Value) -> Result<Value, SimError> {
        controller_apply(&mut lock(&self.shared.store), obj).map_err(|(object, e)| {
            SimError::InvalidObject {
                object,
                message: e.message,
            }
        })
    }

    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let st = lock(&self.shared.store);
        let info = st.lookup(api_version, kind)?;
        st.get(&Store::key(&info, namespace, name)).cloned()
    }

    /// Removes an object, emitting DELETED; returns it as it was deleted.
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let mut st = lock(&self.shared.store);
        let info = st.lookup(api_version, kind)?;
        let key = Store::key(&info, namespace, name);
        st.delete(&info, &key).ok()
    }

    /// Every stored object, for dumps and assertions.
    pub fn objects(&self) -> Vec<Value> {
        lock(&self.shared.store).all().cloned().collect()
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        lock(&self.shared.store).rv
    }

    pub fn faults(&self) -> Faults {
        self.shared.faults.clone()
    }

    pub fn requests(&self) -> RequestLog {
        self.shared.log.clone()
    }

    /// RBAC: answer 403 Forbidden for `verb` on `resource` (a plural such as `pods`, or
    /// `deployments/status`), in `namespace` or everywhere when `None`.
    pub fn deny(&self, verb: &str, resource: &str, namespace: Option<&str>) {
        lock(&self.shared.denies).push((
            verb.to_owned(),
            resource.to_owned(),
            namespace.map(str::to_owned),
        ));
    }

    /// Lifts every `deny` rule.
    pub fn allow_all(&self) {
        lock(&self.shared.denies).clear();
    }

    /// Ends open watches and stops serving.
    pub async fn shutdown(self) {
        let _ = self.shared.shutdown.send(true);
        let task = lock(&self.task).take();
        if let Some(mut task) = task {
            if tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

#[derive(Debug, Default)]
struct FaultState {
    latency: Duration,
    /// (remaining, status code, Retry-After seconds)
    fail: Option<(u64, u16, Option<u64>)>,
    close_watches_after: Option<u64>,
    /// Watches still to expire (`u64::MAX`: all), and how.
    expire_watches: Option<(u64, WatchExpiry)>,
    /// Responses cut short after this many bytes of their body.
    truncate_bodies: Option<usize>,
    /// LISTs of this resource (plural) page as this says, not as the API server does; and
    /// whether a continue has been answered `410 Gone` yet.
    paging: Option<(String, PagingFault, bool)>,
    /// Pages served by [`PagingFault::EndlessContinue`], to make each token new.
    endless_pages: u64,
    /// Response bodies sent one byte per this interval.
    trickle_bodies: Option<Duration>,
    /// The bearer token every request must carry (else 401).
    required_token: Option<String>,
    /// Watches answer a line that never ends.
    endless_watch_line: bool,
}

/// A LIST that pages as no conforming API server does (issue 21): what liveproof must never
/// take for a whole list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagingFault {
    /// Every page holds at most one object, whatever `limit` says (none given included), and
    /// carries a continue token while more are left; the first continue is answered `410 Gone`
    /// (its token expired), once.
    OneObjectPagesFirstContinueGone,
    /// Every page is empty and carries a new continue token, forever.
    EndlessContinue,
    /// The first page's continue token is given again on every later page.
    RepeatedToken,
}

/// How an expired watch is answered (both are what a real API server does when the
/// resourceVersion asked for has been compacted away).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchExpiry {
    /// `200` then an in-stream `ERROR` event carrying a `410 Expired` Status.
    InStream,
    /// A `410 Gone` response to the watch request itself.
    Status,
}

/// Fault knobs; cloning shares them with the server.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    inner: Arc<Mutex<FaultState>>,
}

impl Faults {
    /// Delay every response by `latency`.
    pub fn set_latency(&self, latency: Duration) {
        lock(&self.inner).latency = latency;
    }

    /// The next `n` requests get a `Status` with `status_code`; a `retry_after` is sent
    /// as the `Retry-After` header and `details.retryAfterSeconds` (as a 429 carries).
    pub fn fail_next(&self, n: u64, status_code: u16, retry_after: Option<u64>) {
        lock(&self.inner).fail = (n > 0).then_some((n, status_code, retry_after));
    }

    /// Watches opened from now on end after sending `n_events` events (bookmarks not counted).
    pub fn close_watches_after(&self, n_events: u64) {
        lock(&self.inner).close_watches_after = Some(n_events.max(1));
    }

    /// The next `n` watches (`u64::MAX`: every one from now on) expire at once, answered as
    /// `how` says: the client must list again from scratch.
    pub fn expire_watches(&self, n: u64, how: WatchExpiry) {
        lock(&self.inner).expire_watches = (n > 0).then_some((n, how));
    }

    /// Every response body (watch streams included) is cut short after `bytes` bytes, as
    /// when a proxy or a dying server drops the connection mid-response.
    pub fn truncate_bodies(&self, bytes: usize) {
        lock(&self.inner).truncate_bodies = Some(bytes);
    }

    /// LISTs of `resource` (its plural, e.g. `pods`) page as `fault` says.
    pub fn misbehave_lists(&self, resource: &str, fault: PagingFault) {
        lock(&self.inner).paging = Some((resource.to_string(), fault, false));
    }

    /// Every response body (watch streams included) is sent one byte per `every`, as by a
    /// server or proxy that is alive but all but stalled: the headers come at once.
    pub fn trickle_bodies(&self, every: Duration) {
        lock(&self.inner).trickle_bodies = Some(every);
    }

    /// Requests without `Authorization: Bearer TOKEN` are answered 401, as an API server
    /// answers a credential it does not know (tests that a credential plugin's token is sent).
    pub fn require_token(&self, token: &str) {
        lock(&self.inner).required_token = Some(token.to_string());
    }

    /// Every watch answers one line that never ends: bytes without a newline, forever (as a
    /// broken proxy or a hostile server might), which no watch event is.
    pub fn endless_watch_line(&self) {
        lock(&self.inner).endless_watch_line = true;
    }

    /// Back to a healthy server.
    pub fn clear(&self) {
        *lock(&self.inner) = FaultState::default();
    }

    pub(crate) fn latency(&self) -> Duration {
        lock(&self.inner).latency
    }

    pub(crate) fn watch_close_after(&self) -> Option<u64> {
        lock(&self.inner).close_watches_after
    }

    pub(crate) fn take_watch_expiry(&self) -> Option<WatchExpiry> {
        let mut st = lock(&self.inner);
        let (left, how) = st.expire_watches?;
        if left != u64::MAX {
            st.expire_watches = (left > 1).then_some((left - 1, how));
        }
        Some(how)
    }

    pub(crate) fn truncation(&self) -> Option<usize> {
        lock(&self.inner).truncate_bodies
    }

    /// How LISTs of `resource` page, and for the 410 fault whether this continue is the one
    /// to refuse (it is refused once).
    pub(crate) fn paging(&self, resource: &str, continuing: bool) -> Option<(PagingFault, bool)> {
        let mut st = lock(&self.inner);
        let (plural, fault, gone_sent) = st.paging.as_mut()?;
        if plural != resource {
            return None;
        }
        let refuse =
            *fault == PagingFault::OneObjectPagesFirstContinueGone && continuing && !*gone_sent;
        if refuse {
            *gone_sent = true;
        }
        Some((*fault, refuse))
    }

    pub(crate) fn next_endless_page(&self) -> u64 {
        let mut st = lock(&self.inner);
        st.endless_pages += 1;
        st.endless_pages
    }

    pub(crate) fn endless_watch_lines(&self) -> bool {
        lock(&self.inner).endless_watch_line
    }

    pub(crate) fn trickle(&self) -> Option<Duration> {
        lock(&self.inner).trickle_bodies
    }

    pub(crate) fn required_token(&self) -> Option<String> {
        lock(&self.inner).required_token.clone()
    }

    pub(crate) fn take_failure(&self) -> Option<(u16, Option<u64>)> {
        let mut st = lock(&self.inner);
        let (left, code, retry) = st.fail?;
        st.fail = (left > 1).then_some((left - 1, code, retry));
        Some((code, retry))
    }
}

/// Requests served, counted per (verb, path); verbs are the Kubernetes ones
/// (get, list, watch, create, update, patch, delete), discovery counts as get.
#[derive(Debug, Clone, Default)]
pub struct RequestLog {
    inner: Arc<Mutex<BTreeMap<(String, String), u64>>>,
}

impl RequestLog {
    pub(crate) fn record(&self, verb: &str, path: &str) {
        *lock(&self.inner)
            .entry((verb.to_owned(), path.to_owned()))
            .or_insert(0) += 1;
    }

    pub fn total(&self) -> u64 {
        lock(&self.inner).values().sum()
    }

    /// Requests with this verb whose path starts with `path_prefix`.
    pub fn count(&self, verb: &str, path_prefix: &str) -> u64 {
        lock(&self.inner)
            .iter()
            .filter(|((v, p), _)| v == verb && p.starts_with(path_prefix))
            .map(|(_, n)| n)
            .sum()
    }

    /// (verb, path, count), sorted by verb then path.
    pub fn snapshot(&self) -> Vec<(String, String, u64)> {
        lock(&self.inner)
            .iter()
            .map(|((v, p), n)| (v.clone(), p.clone(), *n))
            .collect()
    }

    pub fn reset(&self) {
        lock(&self.inner).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fixtures_are_flattened_with_nulls_skipped_and_the_rest_kept() {
        let sim = Simulator::new().with_objects([
            json!({"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
                null,
                {"apiVersion": "v1", "kind": "SecretList", "items": [
                    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}},
                ]},
                {"metadata": {"name": "no-kind"}},
                {"apiVersion": "v1", "kind": "ConfigMapList"},
            ]}),
            Value::Null,
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}),
        ]);
        assert_eq!(
            sim.objects,
            [
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}),
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
                json!({"metadata": {"name": "no-kind"}}),
                json!({"apiVersion": "v1", "kind": "ConfigMapList"}),
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}),
            ]
        );
    }
}
