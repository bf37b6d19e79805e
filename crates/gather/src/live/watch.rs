//! `--wait`: watch, not poll.
//!
//! After the initial gather, one watch per scope: each target workload (field selector on its
//! name), the ReplicaSets / ControllerRevisions of each namespace holding one, and the pods of
//! each workload selector. kube's watcher re-lists on `410 Gone`; a scope's objects are
//! replaced at the end of each (re-)list, so a snapshot never mixes a half list in.
//!
//! A snapshot is the live scopes' objects, plus the initial gather's objects for scopes whose
//! watch has not listed yet (or was refused: RBAC may allow `get` but not `watch`; then that
//! scope keeps its initial objects and a warning says updates to it are not seen).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::stream::{self, BoxStream, SelectAll};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use liveproof_evidence::{Observed, ResourceKind, Target};

use super::error::root_cause;
use super::objects::{normalize, workload_resource, AnyObject, Kind};
use super::{plan_related, Cluster, GatherError};

/// Snapshots of the cluster for `--wait`: the first is the initial gather, then one after
/// every burst of changes. Ends only if every watch was refused. An `Err` item means the
/// watches kept failing (e.g. the server went away); the stream goes on retrying after it.
pub type ObservedStream = BoxStream<'static, Result<Observed, GatherError>>;

/// Events arriving within this window are applied together, yielding one snapshot.
const DEBOUNCE: Duration = Duration::from_millis(100);
/// Consecutive watch failures (across all scopes, each after kube's backoff) before the
/// stream reports an error.
const FAILURES_BEFORE_ERROR: u32 = 5;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum ScopeKey {
    /// A target workload; `namespace: None` for `-A`.
    Workload {
        resource: ResourceKind,
        namespace: Option<String>,
        name: String,
    },
    /// Every object of `resource` in `namespace` (ReplicaSets, ControllerRevisions).
    Namespace {
        resource: ResourceKind,
        namespace: String,
    },
    /// The pods of one workload selector.
    Pods { namespace: String, selector: String },
}

impl std::fmt::Display for ScopeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScopeKey::Workload {
                resource,
                namespace: Some(ns),
                name,
            } => write!(f, "{} {ns}/{name}", resource.kind_name()),
            ScopeKey::Workload {
                resource,
                namespace: None,
                name,
            } => write!(f, "{} named {name} in all namespaces", resource.plural()),
            ScopeKey::Namespace {
                resource,
                namespace,
            } => write!(f, "{} in namespace {namespace}", resource.plural()),
            ScopeKey::Pods {
                namespace,
                selector,
            } => write!(f, "pods in namespace {namespace} matching `{selector}`"),
        }
    }
}

type ObjectKey = (ResourceKind, String);

struct Scope {
    key: ScopeKey,
    /// For pod scopes: the selector, to tell which initial pods it covers.
    selector: Option<LabelSelector>,
    /// Has listed at least once: its objects replace the initial gather's.
    live: bool,
    /// Objects of a (re-)list in progress.
    pending: Option<BTreeMap<ObjectKey, AnyObject>>,
    objects: BTreeMap<ObjectKey, AnyObject>,
}

impl Scope {
    fn covers(&self, object: &AnyObject) -> bool {
        match &self.key {
            ScopeKey::Workload {
                resource,
                namespace,
                name,
            } => {
                object.resource() == *resource
                    && object.name() == name
                    && namespace
                        .as_deref()
                        .is_none_or(|ns| ns == object.namespace())
            }
            ScopeKey::Namespace {
                resource,
                namespace,
            } => object.resource() == *resource && object.namespace() == namespace,
            ScopeKey::Pods { namespace, .. } => {
                object.resource() == ResourceKind::Pod
                    && object.namespace() == namespace
                    && self.selector.as_ref().is_some_and(|s| {
                        liveproof_evidence::selector::matches(s, Some(&object.labels()))
                    })
            }
        }
    }
}

type Item = (usize, watcher::Result<Event<AnyObject>>);

struct WatchState {
    cluster: Cluster,
    targets: Vec<Target>,
    all_namespaces: bool,
    initial: Observed,
    first: Option<Observed>,
    scopes: Vec<Scope>,
    streams: SelectAll<BoxStream<'static, Item>>,
    consecutive_failures: u32,
    failure: Option<GatherError>,
}

pub(super) fn start(
    cluster: Cluster,
    targets: &[Target],
    all_namespaces: bool,
    initial: Observed,
) -> ObservedStream {
    let mut state = WatchState {
        cluster,
        targets: targets.to_vec(),
        all_namespaces,
        first: Some(initial.clone()),
        initial,
        scopes: Vec::new(),
        streams: SelectAll::new(),
        consecutive_failures: 0,
        failure: None,
    };
    let objects = AnyObject::all_in(&state.initial);
    state.ensure_scopes(&objects);
    stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    })
    .boxed()
}

impl WatchState {
    async fn next(&mut self) -> Option<Result<Observed, GatherError>> {
        if let Some(first) = self.first.take() {
            return Some(Ok(first));
        }
        loop {
            let (index, item) = self.streams.next().await?;
            let mut changed = self.apply(index, item);
            let deadline = tokio::time::Instant::now() + DEBOUNCE;
            while let Ok(Some((index, item))) =
                tokio::time::timeout_at(deadline, self.streams.next()).await
            {
                changed |= self.apply(index, item);
            }
            if let Some(failure) = self.failure.take() {
                return Some(Err(failure));
            }
            if changed {
                let snapshot = self.snapshot();
                // A workload that appeared (or changed selector) brings new scopes.
                self.ensure_scopes(&AnyObject::all_in(&snapshot));
                return Some(Ok(snapshot));
            }
        }
    }

    /// Opens a watch for every scope the targets and the workloads in `objects` need.
    fn ensure_scopes(&mut self, objects: &[AnyObject]) {
        let mut wanted = Vec::new();
        for target in &self.targets {
            let Some(resource) = workload_resource(target.kind) else {
                continue;
            };
            let namespace = match (&target.namespace, self.all_namespaces) {
                (Some(ns), _) => Some(ns.clone()),
                (None, true) => None,
                (None, false) => Some(self.cluster.default_ns.clone()),
            };
            wanted.push((
                ScopeKey::Workload {
                    resource,
                    namespace,
                    name: target.name.clone(),
                },
                None,
            ));
        }
        let workloads: Vec<AnyObject> = objects
            .iter()
            .filter(|o| {
                matches!(
                    o.resource(),
                    ResourceKind::Deployment | ResourceKind::StatefulSet | ResourceKind::DaemonSet
                )
            })
            .cloned()
            .collect();
        let plan = plan_related(&workloads);
        for (resource, namespace) in plan.revisions {
            wanted.push((
                ScopeKey::Namespace {
                    resource,
                    namespace,
                },
                None,
            ));
        }
        for workload in &workloads {
            let Some(selector) = workload.selector() else {
                continue;
            };
            if let Ok(rendered) = liveproof_evidence::selector::render(selector) {
                wanted.push((
                    ScopeKey::Pods {
                        namespace: workload.namespace().to_string(),
                        selector: rendered,
                    },
                    Some(selector.clone()),
                ));
            }
        }
        for (key, selector) in wanted {
            if !self.scopes.iter().any(|s| s.key == key) {
                self.open(key, selector);
            }
        }
    }

    fn open(&mut self, key: ScopeKey, selector: Option<LabelSelector>) {
        let index = self.scopes.len();
        let client = self.cluster.client.clone();
        let events = match &key {
            ScopeKey::Workload {
                resource,
                namespace,
                name,
            } => watch_dyn(
                client,
                *resource,
                namespace.clone(),
                watcher::Config::default().fields(&format!("metadata.name={name}")),
            ),
            ScopeKey::Namespace {
                resource,
                namespace,
            } => watch_dyn(
                client,
                *resource,
                Some(namespace.clone()),
                watcher::Config::default(),
            ),
            ScopeKey::Pods {
                namespace,
                selector,
            } => watch_dyn(
                client,
                ResourceKind::Pod,
                Some(namespace.clone()),
                watcher::Config::default().labels(selector),
            ),
        };
        tracing::debug!("watching {key}");
        self.streams
            .push(events.map(move |item| (index, item)).boxed());
        self.scopes.push(Scope {
            key,
            selector,
            live: false,
            pending: None,
            objects: BTreeMap::new(),
        });
    }

    /// Applies one watch event; whether the visible state may have changed.
    fn apply(&mut self, index: usize, item: watcher::Result<Event<AnyObject>>) -> bool {
        let Some(scope) = self.scopes.get_mut(index) else {
            return false;
        };
        let event = match item {
            Ok(event) => {
                self.consecutive_failures = 0;
                event
            }
            Err(err) if is_forbidden(&err) => {
                tracing::warn!(
                    "cannot watch {} ({}); changes to it will not be seen",
                    scope.key,
                    root_cause(&err)
                );
                return false;
            }
            Err(err) => {
                self.consecutive_failures += 1;
                tracing::debug!("watching {} failed: {}", scope.key, root_cause(&err));
                if self.consecutive_failures >= FAILURES_BEFORE_ERROR {
                    self.consecutive_failures = 0;
                    self.failure = Some(GatherError::Watch {
                        server: self.cluster.server.clone(),
                        what: scope.key.to_string(),
                        cause: root_cause(&err),
                        source: Box::new(err),
                    });
                }
                return false;
            }
        };
        match event {
            Event::Init => {
                scope.pending = Some(BTreeMap::new());
                false
            }
            Event::InitApply(object) => {
                scope
                    .pending
                    .get_or_insert_with(BTreeMap::new)
                    .insert(object.key(), object);
                false
            }
            Event::InitDone => {
                scope.objects = scope.pending.take().unwrap_or_default();
                scope.live = true;
                true
            }
            Event::Apply(object) => {
                scope.objects.insert(object.key(), object);
                scope.live
            }
            Event::Delete(object) => {
                scope.objects.remove(&object.key());
                scope.live
            }
        }
    }

    fn snapshot(&self) -> Observed {
        let mut out = Observed {
            nodes: self.initial.nodes.clone(),
            others: self.initial.others.clone(),
            complete: self.initial.complete.clone(),
            denied: self.initial.denied.clone(),
            ..Observed::default()
        };
        let live: Vec<&Scope> = self.scopes.iter().filter(|s| s.live).collect();
        for scope in &live {
            for object in scope.objects.values() {
                object.clone().push_into(&mut out);
            }
            match &scope.key {
                ScopeKey::Workload {
                    resource,
                    namespace,
                    ..
                } if scope.objects.is_empty() => {
                    let ns = namespace.as_deref().unwrap_or(&self.cluster.default_ns);
                    out.mark_complete(ns, *resource);
                }
                ScopeKey::Workload { .. } => {}
                ScopeKey::Namespace {
                    resource,
                    namespace,
                } => out.mark_complete(namespace, *resource),
                ScopeKey::Pods { namespace, .. } => {
                    let all_pod_scopes_live = self.scopes.iter().all(|s| {
                        s.live
                            || !matches!(&s.key, ScopeKey::Pods { namespace: n, .. } if n == namespace)
                    });
                    if all_pod_scopes_live {
                        out.mark_complete(namespace, ResourceKind::Pod);
                    }
                }
            }
        }
        for object in AnyObject::all_in(&self.initial) {
            if !live.iter().any(|s| s.covers(&object)) {
                object.push_into(&mut out);
            }
        }
        normalize(out)
    }
}

fn is_forbidden(err: &watcher::Error) -> bool {
    let status = match err {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s,
        watcher::Error::WatchError(s) => s,
        _ => return false,
    };
    status.code == 403
}

fn watch_dyn(
    client: kube::Client,
    resource: ResourceKind,
    namespace: Option<String>,
    config: watcher::Config,
) -> BoxStream<'static, watcher::Result<Event<AnyObject>>> {
    match resource {
        ResourceKind::Deployment => watch_kind::<Deployment>(client, namespace, config),
        ResourceKind::StatefulSet => watch_kind::<StatefulSet>(client, namespace, config),
        ResourceKind::DaemonSet => watch_kind::<DaemonSet>(client, namespace, config),
        ResourceKind::ReplicaSet => watch_kind::<ReplicaSet>(client, namespace, config),
        ResourceKind::ControllerRevision => {
            watch_kind::<ControllerRevision>(client, namespace, config)
        }
        ResourceKind::Pod => watch_kind::<Pod>(client, namespace, config),
        ResourceKind::Node
        | ResourceKind::Secret
        | ResourceKind::ConfigMap
        | ResourceKind::HelmRelease
        | ResourceKind::Kustomization
        | ResourceKind::GitRepository
        | ResourceKind::Application => stream::empty().boxed(),
    }
}

/// One kind's watch, mapped into [`AnyObject`]s, backing off between failures, and ending
/// after a 403 (retrying a refusal only adds load).
fn watch_kind<K: Kind>(
    client: kube::Client,
    namespace: Option<String>,
    config: watcher::Config,
) -> BoxStream<'static, watcher::Result<Event<AnyObject>>> {
    let api: Api<K> = match &namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let events = watcher::watcher(api, config)
        .default_backoff()
        .map(|item| item.map(|event| map_event(event, K::into_any)))
        .boxed();
    stream::unfold((events, false), |(mut events, refused)| async move {
        if refused {
            return None;
        }
        let item = events.next().await?;
        let refused = matches!(&item, Err(err) if is_forbidden(err));
        Some((item, (events, refused)))
    })
    .boxed()
}

fn map_event<K>(event: Event<K>, f: impl Fn(K) -> AnyObject) -> Event<AnyObject> {
    match event {
        Event::Apply(k) => Event::Apply(f(k)),
        Event::Delete(k) => Event::Delete(f(k)),
        Event::Init => Event::Init,
        Event::InitApply(k) => Event::InitApply(f(k)),
        Event::InitDone => Event::InitDone,
    }
}
