//! `--wait`: watch, not poll.
//!
//! After the initial gather, one watch per scope: each target workload and each Helm/GitOps
//! object (field selector on its name), each Helm release's storage Secrets and ConfigMaps
//! (label selector), the workloads those lead to, the ReplicaSets / ControllerRevisions of each
//! namespace holding a workload, and the pods of each workload selector. When a Helm/GitOps
//! object or a release's storage changes, the workloads it leads to are worked out again and
//! newly named ones watched too (scopes are never closed; at most [`MAX_SCOPES`]). A watch the
//! server ends is resumed from its last resourceVersion and one that expired (410, in the stream
//! or as the answer to the watch request: [`relist_on_gone`]) lists again from scratch, both with
//! backoff, until the command's deadline; a scope's objects are
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
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use liveproof_evidence::{Observed, ResourceKind, Target};

use super::error::root_cause;
use super::objects::{api_resource, normalize, raw_object, workload_resource, AnyObject, Kind};
use super::sources::{self, source_reads, storage_selector, SourceRead};
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
/// Watches open at most; past this, further scopes are not watched (and a warning says so):
/// their objects stay as the initial gather read them.
const MAX_SCOPES: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum ScopeKey {
    /// One named object: a workload (a target or one a Helm/GitOps target leads to), a
    /// HelmRelease, Kustomization, Application or GitRepository; `namespace: None` for `-A`.
    Named {
        resource: ResourceKind,
        namespace: Option<String>,
        name: String,
    },
    /// Every object of `resource` in `namespace` (ReplicaSets, ControllerRevisions).
    Namespace {
        resource: ResourceKind,
        namespace: String,
    },
    /// The objects of `resource` in `namespace` matching a label selector: the pods of one
    /// workload, the storage Secrets or ConfigMaps of one Helm release.
    Selected {
        resource: ResourceKind,
        namespace: String,
        selector: String,
    },
}

impl std::fmt::Display for ScopeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScopeKey::Named {
                resource,
                namespace: Some(ns),
                name,
            } => write!(f, "{} {ns}/{name}", resource.kind_name()),
            ScopeKey::Named {
                resource,
                namespace: None,
                name,
            } => write!(f, "{} named {name} in all namespaces", resource.plural()),
            ScopeKey::Namespace {
                resource,
                namespace,
            } => write!(f, "{} in namespace {namespace}", resource.plural()),
            ScopeKey::Selected {
                resource,
                namespace,
                selector,
            } => write!(
                f,
                "{} in namespace {namespace} matching `{selector}`",
                resource.plural()
            ),
        }
    }
}

type ObjectKey = (ResourceKind, String);

struct Scope {
    key: ScopeKey,
    /// For selected scopes: the selector, to tell which initial objects it covers.
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
            ScopeKey::Named {
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
            ScopeKey::Selected {
                resource,
                namespace,
                ..
            } => {
                object.resource() == *resource
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
    /// The workloads the Helm/GitOps targets lead to, as of the last change to one of their
    /// objects.
    followed: Vec<Target>,
    /// A Helm/GitOps object or release storage changed since `followed` was worked out.
    sources_changed: bool,
    /// Scopes wanted past [`MAX_SCOPES`] were dropped (warned once).
    scopes_capped: bool,
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
        followed: Vec::new(),
        sources_changed: true,
        scopes_capped: false,
    };
    let initial = state.initial.clone();
    state.ensure_scopes(&initial);
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
                // A workload that appeared (or changed selector), or a Helm/GitOps object that
                // now leads elsewhere, brings new scopes.
                self.ensure_scopes(&snapshot);
                return Some(Ok(snapshot));
            }
        }
    }

    /// Opens a watch for every scope the targets, and what `observed` shows they lead to,
    /// need.
    fn ensure_scopes(&mut self, observed: &Observed) {
        let default_ns = self.cluster.default_ns.clone();
        let mut wanted = Vec::new();
        for target in &self.targets {
            for read in source_reads(target, &default_ns, observed) {
                wanted.push(source_scope(read));
            }
        }
        if std::mem::take(&mut self.sources_changed) {
            self.followed = sources::followed(observed, &self.targets, &default_ns);
        }
        for target in self.targets.iter().chain(&self.followed) {
            let Some(resource) = workload_resource(target.kind) else {
                continue;
            };
            let namespace = match (&target.namespace, self.all_namespaces) {
                (Some(ns), _) => Some(ns.clone()),
                (None, true) => None,
                (None, false) => Some(self.cluster.default_ns.clone()),
            };
            wanted.push((
                ScopeKey::Named {
                    resource,
                    namespace,
                    name: target.name.clone(),
                },
                None,
            ));
        }
        let workloads: Vec<AnyObject> = AnyObject::all_in(observed)
            .into_iter()
            .filter(|o| {
                matches!(
                    o.resource(),
                    ResourceKind::Deployment | ResourceKind::StatefulSet | ResourceKind::DaemonSet
                )
            })
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
                    ScopeKey::Selected {
                        resource: ResourceKind::Pod,
                        namespace: workload.namespace().to_string(),
                        selector: rendered,
                    },
                    Some(selector.clone()),
                ));
            }
        }
        for (key, selector) in wanted {
            if self.scopes.iter().any(|s| s.key == key) {
                continue;
            }
            if self.scopes.len() >= MAX_SCOPES {
                if !std::mem::replace(&mut self.scopes_capped, true) {
                    tracing::warn!(
                        "more than {MAX_SCOPES} watches needed; not watching {key} and any \
                         further ones: their changes will not be seen"
                    );
                }
                continue;
            }
            self.open(key, selector);
        }
    }

    fn open(&mut self, key: ScopeKey, selector: Option<LabelSelector>) {
        let index = self.scopes.len();
        let client = self.cluster.watch_client.clone();
        // The server ends each watch after WATCH_SECONDS (kube's watcher re-opens it): below
        // the watch client's read timeout, so a quiet but healthy watch is never cut.
        let base = watcher::Config::default().timeout(super::WATCH_SECONDS);
        let events = match &key {
            ScopeKey::Named {
                resource,
                namespace,
                name,
            } => watch_dyn(
                client,
                *resource,
                namespace.clone(),
                base.fields(&format!("metadata.name={name}")),
            ),
            ScopeKey::Namespace {
                resource,
                namespace,
            } => watch_dyn(client, *resource, Some(namespace.clone()), base),
            ScopeKey::Selected {
                resource,
                namespace,
                selector,
            } => watch_dyn(
                client,
                *resource,
                Some(namespace.clone()),
                base.labels(selector),
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
            Err(err) if is_not_served(&err) => {
                tracing::warn!(
                    "cannot watch {}: the API server does not serve it (is the CRD installed?); \
                     changes to it will not be seen",
                    scope.key
                );
                return false;
            }
            // 410: the resourceVersion was compacted away; the watch lists again from
            // scratch (kube's watcher, or `relist_on_gone`). Routine, not a failure.
            Err(err) if is_gone(&err) => {
                tracing::debug!("watching {} expired (410); listing again", scope.key);
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
        let visible = match event {
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
        };
        if visible && is_source(&scope.key) {
            self.sources_changed = true;
        }
        visible
    }

    fn snapshot(&self) -> Observed {
        let mut out = Observed {
            nodes: self.initial.nodes.clone(),
            complete: self.initial.complete.clone(),
            denied: self.initial.denied.clone(),
            release_limits: self.initial.release_limits,
            ..Observed::default()
        };
        let live: Vec<&Scope> = self.scopes.iter().filter(|s| s.live).collect();
        for scope in &live {
            for object in scope.objects.values() {
                object.clone().push_into(&mut out);
            }
            match &scope.key {
                ScopeKey::Named {
                    resource,
                    namespace,
                    ..
                } if scope.objects.is_empty() => {
                    let ns = namespace
                        .as_deref()
                        .unwrap_or(liveproof_evidence::ALL_NAMESPACES);
                    out.mark_complete(ns, *resource);
                }
                ScopeKey::Named { .. } => {}
                ScopeKey::Namespace {
                    resource,
                    namespace,
                } => out.mark_complete(namespace, *resource),
                ScopeKey::Selected {
                    resource,
                    namespace,
                    ..
                } => {
                    let all_live = self.scopes.iter().all(|s| {
                        s.live
                            || !matches!(&s.key, ScopeKey::Selected { resource: r, namespace: n, .. }
                                if n == namespace && r == resource)
                    });
                    if all_live {
                        out.mark_complete(namespace, *resource);
                    }
                }
            }
        }
        for object in AnyObject::all_in(&self.initial) {
            if !live.iter().any(|s| s.covers(&object)) {
                object.push_into(&mut out);
            }
        }
        for value in &self.initial.others {
            let covered = raw_object(value).is_some_and(|o| live.iter().any(|s| s.covers(&o)));
            if !covered {
                out.others.push(value.clone());
            }
        }
        normalize(out)
    }
}

/// The scope of one Helm/GitOps read.
fn source_scope(read: SourceRead) -> (ScopeKey, Option<LabelSelector>) {
    match read {
        SourceRead::Object {
            resource,
            namespace,
            name,
        } => (
            ScopeKey::Named {
                resource,
                namespace: Some(namespace),
                name,
            },
            None,
        ),
        SourceRead::Storage {
            resource,
            namespace,
            release,
        } => {
            let labels = [("owner", "helm"), ("name", release.as_str())]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            (
                ScopeKey::Selected {
                    resource,
                    namespace,
                    selector: storage_selector(&release),
                },
                Some(LabelSelector {
                    match_labels: Some(labels),
                    match_expressions: None,
                }),
            )
        }
    }
}

/// A scope whose changes may change which workloads the Helm/GitOps targets lead to.
fn is_source(key: &ScopeKey) -> bool {
    let resource = match key {
        ScopeKey::Named { resource, .. }
        | ScopeKey::Namespace { resource, .. }
        | ScopeKey::Selected { resource, .. } => *resource,
    };
    matches!(
        resource,
        ResourceKind::Secret
            | ResourceKind::ConfigMap
            | ResourceKind::HelmRelease
            | ResourceKind::Kustomization
            | ResourceKind::Application
    )
}

fn error_code(err: &watcher::Error) -> Option<u16> {
    let status = match err {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s,
        watcher::Error::WatchError(s) => s,
        _ => return None,
    };
    Some(status.code)
}

fn is_gone(err: &watcher::Error) -> bool {
    error_code(err) == Some(410)
}

fn is_forbidden(err: &watcher::Error) -> bool {
    error_code(err) == Some(403)
}

/// A 404 on a watch (which lists, never gets, a single object): the resource type itself is
/// not served, e.g. Flux or Argo CD is not installed.
fn is_not_served(err: &watcher::Error) -> bool {
    error_code(err) == Some(404)
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
        ResourceKind::Secret
        | ResourceKind::ConfigMap
        | ResourceKind::HelmRelease
        | ResourceKind::Kustomization
        | ResourceKind::GitRepository
        | ResourceKind::Application => watch_raw(client, resource, namespace, config),
        ResourceKind::Node => stream::empty().boxed(),
    }
}

/// One raw kind's watch over `Api<DynamicObject>`, as [`watch_kind`].
fn watch_raw(
    client: kube::Client,
    resource: ResourceKind,
    namespace: Option<String>,
    config: watcher::Config,
) -> BoxStream<'static, watcher::Result<Event<AnyObject>>> {
    let make = move || {
        let ar = api_resource(resource);
        let api: Api<DynamicObject> = match &namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        };
        watcher::watcher(api, config.clone())
            .default_backoff()
            .map(move |item| {
                item.map(|event| map_event(event, |o| AnyObject::Raw(resource, Box::new(o))))
            })
            .boxed()
    };
    end_after_refusal(relist_on_gone(make))
}

/// One kind's watch, mapped into [`AnyObject`]s, backing off between failures, and ending
/// after a refusal ([`end_after_refusal`]).
fn watch_kind<K: Kind>(
    client: kube::Client,
    namespace: Option<String>,
    config: watcher::Config,
) -> BoxStream<'static, watcher::Result<Event<AnyObject>>> {
    let make = move || {
        let api: Api<K> = match &namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        watcher::watcher(api, config.clone())
            .default_backoff()
            .map(|item| item.map(|event| map_event(event, K::into_any)))
            .boxed()
    };
    end_after_refusal(relist_on_gone(make))
}

type Events = BoxStream<'static, watcher::Result<Event<AnyObject>>>;

/// Longest pause before a watch answered `410 Gone` is started over.
const RELIST_BACKOFF_MAX: Duration = Duration::from_secs(5);

/// kube's watcher lists again after an in-stream `ERROR` 410, but a watch *request* answered
/// `410 Gone` it retries with the same expired resourceVersion, forever. Start such a watch
/// over from a fresh list instead, after a bounded, jittered backoff (reset by any event).
fn relist_on_gone(make: impl Fn() -> Events + Send + 'static) -> Events {
    let first = make();
    stream::unfold((first, make, 0u32), |(mut events, make, gone)| async move {
        let item = events.next().await?;
        let start_gone = matches!(
            &item,
            Err(watcher::Error::WatchStartFailed(kube::Error::Api(s))) if s.code == 410
        );
        if start_gone {
            tokio::time::sleep(relist_delay(gone)).await;
            return Some((item, (make(), make, gone.saturating_add(1))));
        }
        let gone = if item.is_ok() { 0 } else { gone };
        Some((item, (events, make, gone)))
    })
    .boxed()
}

/// 200 ms doubling per attempt up to [`RELIST_BACKOFF_MAX`], then between half and all of it
/// (jitter, so many scopes expiring together do not list together again).
fn relist_delay(attempt: u32) -> Duration {
    let base = Duration::from_millis(200)
        .saturating_mul(1u32 << attempt.min(5))
        .min(RELIST_BACKOFF_MAX);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let half = base / 2;
    half + half.mul_f64(f64::from(nanos % 1000) / 1000.0)
}

/// Ends a watch after a 403 (retrying a refusal only adds load) or a 404 (the type is not
/// served; it will not appear by retrying every few seconds).
fn end_after_refusal(
    events: BoxStream<'static, watcher::Result<Event<AnyObject>>>,
) -> BoxStream<'static, watcher::Result<Event<AnyObject>>> {
    stream::unfold((events, false), |(mut events, refused)| async move {
        if refused {
            return None;
        }
        let item = events.next().await?;
        let refused = matches!(&item, Err(err) if is_forbidden(err) || is_not_served(err));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relist_backoff_grows_and_stays_bounded() {
        assert!(relist_delay(0) >= Duration::from_millis(100));
        assert!(relist_delay(0) <= Duration::from_millis(200));
        for attempt in [5, 6, 40, u32::MAX] {
            let d = relist_delay(attempt);
            assert!(
                d >= RELIST_BACKOFF_MAX / 2 && d <= RELIST_BACKOFF_MAX,
                "{d:?}"
            );
        }
    }
}
