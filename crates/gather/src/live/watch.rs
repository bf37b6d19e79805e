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

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::stream::{self, BoxStream, SelectAll};
use futures::{FutureExt as _, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use liveproof_evidence::{ObjectRef, Observed, ResourceKind, Target, Touched};

use super::error::root_cause;
use super::objects::{api_resource, normalize, raw_object, workload_resource, AnyObject, Kind};
use super::plan::{Keep, PodRead, Selectors};
use super::sources::{self, source_reads, storage_selector, SourceRead};
use super::{plan_related, Cluster, GatherError};

/// Snapshots of the cluster for `--wait`: the first is the initial gather, then one after
/// every burst of changes. Ends only if every watch was refused. An `Err` item means the
/// watches kept failing (e.g. the server went away); the stream goes on retrying after it.
pub type ObservedStream = BoxStream<'static, Result<Snapshot, GatherError>>;

/// One snapshot of `--wait`: the cluster as watched, and what the events since the last one
/// touched (for the incremental judge, [`liveproof_evidence::Rejudge`]).
#[derive(Debug)]
pub struct Snapshot {
    pub observed: Observed,
    pub touched: Touched,
}

impl std::ops::Deref for Snapshot {
    type Target = Observed;

    fn deref(&self) -> &Observed {
        &self.observed
    }
}

/// Events arriving within this window are applied together, yielding one snapshot.
const DEBOUNCE: Duration = Duration::from_millis(100);
/// After the window, events already received are applied too, for up to this long from the
/// first: a snapshot and its judgement cost the same for one event as for thousands, so when
/// judging falls behind a rollout of 2,000 workloads, the backlog is taken in one snapshot,
/// not in one per window. Bounded, so a stream that never pauses still yields snapshots.
const DRAIN: Duration = Duration::from_secs(1);
/// Events applied into one snapshot at most, beyond the first. `--wait` holds its last snapshot
/// while the next is made, and the two share every object but those changed in between: the
/// old version of each is held by the last snapshot, the new one by the watch. A rollout of
/// 2,000 Deployments sends some 10,000 pod events within a second; taken into one snapshot,
/// 10,000 pods were held twice (some 15 MB). Taken in batches of this size, at most this many
/// are, for a few more snapshots (each judges only the targets its events touched).
const MAX_BATCH: usize = 5_000;
/// What follows a first event into its snapshot: what `stream` yields within `window`, then
/// what it has ready at once, until `drain` from the first (see [`DRAIN`]) or `max` items
/// (see [`MAX_BATCH`]).
async fn batch<S: futures::Stream + Unpin>(
    stream: &mut S,
    window: Duration,
    drain: Duration,
    max: usize,
) -> Vec<S::Item> {
    let first = tokio::time::Instant::now();
    let mut items = Vec::new();
    // The bound holds in the window too: a stream always ready never lets a timeout fire.
    while first.elapsed() < drain && items.len() < max {
        let next = if first.elapsed() < window {
            match tokio::time::timeout_at(first + window, stream.next()).await {
                Ok(next) => next,
                // The window is over: on to what is ready at once.
                Err(_) => continue,
            }
        } else {
            match stream.next().now_or_never() {
                Some(next) => next,
                None => break,
            }
        };
        match next {
            Some(item) => items.push(item),
            None => break,
        }
    }
    items
}

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
                    && self
                        .selector
                        .as_ref()
                        .is_some_and(|s| object.meta().selected_by(s))
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
    /// Namespace scopes that stand for many named workloads or pod selectors: what of the
    /// namespace a snapshot takes. It only grows, as scopes are never closed.
    kept: BTreeMap<(ResourceKind, String), Keep>,
    /// The first gather's objects by identity, until every scope has listed: a watch's first
    /// list reads most of them again, and one it reads unchanged (the same resourceVersion)
    /// keeps the gather's copy instead of holding a second one until the prune.
    unlisted: BTreeMap<ObjectKey, AnyObject>,
    /// What the events since the last snapshot touched (`None`: everything: a scope that
    /// listed, a Helm/GitOps source that changed), for `--wait`'s incremental judge
    /// ([`liveproof_evidence::Rejudge`]).
    touched: Option<Vec<ObjectRef>>,
}

pub(super) fn start(
    cluster: Cluster,
    targets: &[Target],
    all_namespaces: bool,
    initial: Observed,
) -> ObservedStream {
    let mut state = WatchState::new(cluster, targets, all_namespaces, initial);
    let initial = state.initial.clone();
    state.ensure_scopes(&initial);
    stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    })
    .boxed()
}

impl WatchState {
    /// No watch open yet; the first snapshot will be `initial`.
    fn new(cluster: Cluster, targets: &[Target], all_namespaces: bool, initial: Observed) -> Self {
        WatchState {
            cluster,
            targets: targets.to_vec(),
            all_namespaces,
            first: Some(initial.clone()),
            scopes: Vec::new(),
            streams: SelectAll::new(),
            consecutive_failures: 0,
            failure: None,
            followed: Vec::new(),
            sources_changed: true,
            scopes_capped: false,
            kept: BTreeMap::new(),
            unlisted: AnyObject::all_in(&initial)
                .into_iter()
                .map(|o| (o.key(), o))
                .collect(),
            initial,
            touched: None,
        }
    }

    /// What the events since the last call touched, and a fresh record from here.
    fn take_touched(&mut self) -> Touched {
        match self.touched.replace(Vec::new()) {
            Some(objects) if !self.sources_changed => Touched::Objects(objects),
            _ => Touched::All,
        }
    }

    async fn next(&mut self) -> Option<Result<Snapshot, GatherError>> {
        if let Some(observed) = self.first.take() {
            let touched = self.take_touched();
            return Some(Ok(Snapshot { observed, touched }));
        }
        loop {
            let (index, item) = self.streams.next().await?;
            let mut changed = self.apply(index, item);
            for (index, item) in batch(&mut self.streams, DEBOUNCE, DRAIN, MAX_BATCH).await {
                changed |= self.apply(index, item);
            }
            if let Some(failure) = self.failure.take() {
                return Some(Err(failure));
            }
            if changed {
                let mut observed = self.snapshot();
                self.cluster.decode_releases(&mut observed).await;
                // Before the scopes below take `sources_changed`, which means everything.
                let touched = self.take_touched();
                // A workload that appeared (or changed selector), or a Helm/GitOps object that
                // now leads elsewhere, brings new scopes.
                self.ensure_scopes(&observed);
                return Some(Ok(Snapshot { observed, touched }));
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
        let batch_at = self.cluster.batch_at;
        let mut named: BTreeMap<(ResourceKind, Option<String>), BTreeSet<String>> = BTreeMap::new();
        for target in self.targets.iter().chain(&self.followed) {
            let Some(resource) = workload_resource(target.kind) else {
                continue;
            };
            let namespace = match (&target.namespace, self.all_namespaces) {
                (Some(ns), _) => Some(ns.clone()),
                (None, true) => None,
                (None, false) => Some(self.cluster.default_ns.clone()),
            };
            named
                .entry((resource, namespace))
                .or_default()
                .insert(target.name.clone());
        }
        for ((resource, namespace), names) in named {
            match namespace {
                // Many of a kind in one namespace: one watch of the namespace, keeping them.
                Some(namespace) if names.len() >= batch_at => {
                    self.keep((resource, namespace.clone()), Keep::Named(names));
                    wanted.push((
                        ScopeKey::Namespace {
                            resource,
                            namespace,
                        },
                        None,
                    ));
                }
                namespace => {
                    for name in names {
                        wanted.push((
                            ScopeKey::Named {
                                resource,
                                namespace: namespace.clone(),
                                name,
                            },
                            None,
                        ));
                    }
                }
            }
        }
        let plan = plan_related(observed);
        for (resource, namespace) in plan.revisions.iter().cloned() {
            wanted.push((
                ScopeKey::Namespace {
                    resource,
                    namespace,
                },
                None,
            ));
        }
        for (namespace, read) in plan.pod_reads(batch_at) {
            match read {
                PodRead::Namespace(selectors) => {
                    self.keep(
                        (ResourceKind::Pod, namespace.clone()),
                        Keep::Selected(Selectors::new(selectors)),
                    );
                    wanted.push((
                        ScopeKey::Namespace {
                            resource: ResourceKind::Pod,
                            namespace,
                        },
                        None,
                    ));
                }
                PodRead::Selector(rendered) => {
                    let selector = plan.pods[&namespace][&rendered].clone();
                    wanted.push((
                        ScopeKey::Selected {
                            resource: ResourceKind::Pod,
                            namespace,
                            selector: rendered,
                        },
                        Some(selector),
                    ));
                }
            }
        }
        // What routes traffic to the pods (traffic_current): each namespace whole.
        for (resource, namespace) in plan.routing.iter().cloned() {
            wanted.push((
                ScopeKey::Namespace {
                    resource,
                    namespace,
                },
                None,
            ));
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

    /// Widens what a namespace scope keeps by `more`.
    fn keep(&mut self, scope: (ResourceKind, String), more: Keep) {
        match self.kept.entry(scope) {
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(more);
            }
            std::collections::btree_map::Entry::Occupied(mut entry) => entry.get_mut().widen(more),
        }
    }

    fn open(&mut self, key: ScopeKey, selector: Option<LabelSelector>) {
        let index = self.scopes.len();
        let client = self.cluster.watch_client();
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
                        server: self.cluster.endpoint.server.clone(),
                        what: scope.key.to_string(),
                        cause: root_cause(&err),
                        source: Box::new(err),
                    });
                }
                return false;
            }
        };
        let mut turned_live = false;
        // Some(None): everything; Some(Some(o)): that object.
        let mut touched: Option<Option<ObjectRef>> = None;
        let visible = match event {
            Event::Init => {
                scope.pending = Some(BTreeMap::new());
                false
            }
            Event::InitApply(object) => {
                let key = object.key();
                let object = same_as(object, scope.objects.get(&key))
                    .or_else(|object| same_as(object, self.unlisted.remove(&key).as_ref()))
                    .unwrap_or_else(|object| object);
                scope
                    .pending
                    .get_or_insert_with(BTreeMap::new)
                    .insert(key, object);
                false
            }
            Event::InitDone => {
                scope.objects = scope.pending.take().unwrap_or_default();
                turned_live = !std::mem::replace(&mut scope.live, true);
                touched = Some(None);
                true
            }
            Event::Apply(object) => {
                let old = scope.objects.get(&object.key());
                touched = Some(Some(object_ref(&object, old)));
                scope.objects.insert(object.key(), object);
                scope.live
            }
            Event::Delete(object) => {
                touched = Some(Some(object_ref(&object, None)));
                scope.objects.remove(&object.key());
                scope.live
            }
        };
        if visible && is_source(&scope.key) {
            self.sources_changed = true;
        }
        match touched.filter(|_| visible) {
            Some(Some(object)) => {
                if let Some(objects) = self.touched.as_mut() {
                    objects.push(object);
                }
            }
            Some(None) => self.touched = None,
            None => {}
        }
        if turned_live {
            self.prune_initial();
            if self.scopes.iter().all(|s| s.live) {
                self.unlisted = BTreeMap::new();
            }
        }
        visible
    }

    /// Drops the initial gather's objects that a live scope covers: the scope holds its own,
    /// and (a scope never stops being live) no snapshot reads them again. Without this, every
    /// object a wait watches would be held twice for as long as it waits.
    fn prune_initial(&mut self) {
        let live: Vec<&Scope> = self.scopes.iter().filter(|s| s.live).collect();
        for object in AnyObject::take_all(&mut self.initial) {
            if !live.iter().any(|s| s.covers(&object)) {
                object.push_into(&mut self.initial);
            }
        }
        self.initial
            .others
            .retain(|value| !raw_object(value).is_some_and(|o| live.iter().any(|s| s.covers(&o))));
    }

    fn snapshot(&self) -> Observed {
        let mut out = Observed {
            nodes: self.initial.nodes.clone(),
            complete: self.initial.complete.clone(),
            denied: self.initial.denied.clone(),
            ..Observed::default()
        };
        let live: Vec<&Scope> = self.scopes.iter().filter(|s| s.live).collect();
        for scope in &live {
            let kept = match &scope.key {
                ScopeKey::Namespace {
                    resource,
                    namespace,
                } => self.kept.get(&(*resource, namespace.clone())),
                _ => None,
            };
            for object in scope.objects.values() {
                if kept.is_none_or(|k| k.keeps(object.meta())) {
                    object.clone().push_into(&mut out);
                }
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

/// `earlier` (shared) when `object` is the same version of the same object, else `object`
/// back: a list that reads an object again unchanged holds one copy of it, not two.
fn same_as(object: AnyObject, earlier: Option<&AnyObject>) -> Result<AnyObject, AnyObject> {
    match earlier {
        Some(earlier)
            if earlier.resource() == object.resource()
                && earlier.meta().resource_version().is_some()
                && earlier.meta().resource_version() == object.meta().resource_version() =>
        {
            Ok(earlier.clone())
        }
        _ => Err(object),
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

/// A scope whose changes may change which workloads the Helm/GitOps targets lead to: one of
/// the resources a kind's rules lead through ([`liveproof_evidence::kind::is_source`]).
fn is_source(key: &ScopeKey) -> bool {
    let resource = match key {
        ScopeKey::Named { resource, .. }
        | ScopeKey::Namespace { resource, .. }
        | ScopeKey::Selected { resource, .. } => *resource,
    };
    liveproof_evidence::kind::is_source(resource)
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
    dispatch!(
        resource,
        T => watch_kind::<T>(client, namespace, config),
        raw => watch_raw(client, resource, namespace, config),
        apart => stream::empty().boxed(),
    )
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
                item.map(|event| {
                    map_event(event, |mut o: DynamicObject| {
                        o.metadata.managed_fields = None;
                        AnyObject::Raw(resource, Box::new(o))
                    })
                })
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
        let api: Api<K::Wire> = match &namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        watcher::watcher(api, config.clone())
            .default_backoff()
            .map(|item| {
                item.map(|event| {
                    // Held for as long as the wait lasts: as lean as the one-shot gather's.
                    map_event(event, |object: K::Wire| K::from_wire(object).into_any())
                })
            })
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

/// What `--wait`'s incremental judge needs of an object an event applied or deleted: its kind
/// as the judge maps it to targets, and its labels (and its `old` labels when they changed).
fn object_ref(object: &AnyObject, old: Option<&AnyObject>) -> ObjectRef {
    let kind = object.resource().object_kind();
    let meta = object.meta();
    let mut labels = vec![labels_of(meta)];
    if let Some(old) = old.map(|o| labels_of(o.meta())) {
        if old != labels[0] {
            labels.push(old);
        }
    }
    ObjectRef {
        kind,
        namespace: meta.namespace().unwrap_or_default().to_owned(),
        name: meta.name().unwrap_or_default().to_owned(),
        labels,
    }
}

fn labels_of(meta: super::meta::Meta<'_>) -> BTreeMap<String, String> {
    match meta {
        super::meta::Meta::Object(m) => m.labels.clone().unwrap_or_default(),
        super::meta::Meta::Pod(m) => m
            .labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
    use k8s_openapi::api::core::v1::Node;
    use kube::core::Status;
    use liveproof_evidence::pod::Pod;
    use liveproof_evidence::replica_set::ReplicaSet;
    use liveproof_evidence::{Denied, TargetKind};
    use serde_json::{json, Value};
    use tokio::time::Instant;

    use super::*;

    const SHOP: &str = "shop";
    const SERVER: &str = "http://127.0.0.1:9";

    /// A cluster whose default namespace is `shop`, never contacted: the tests feed events by
    /// hand, or open watches they never poll.
    async fn cluster() -> Cluster {
        let config = kube::Config::new(SERVER.parse().expect("url"));
        Cluster::from_config(config, Some(SHOP.into()))
            .await
            .expect("cluster")
    }

    async fn watching(targets: &[Target], all_namespaces: bool, initial: Observed) -> WatchState {
        WatchState::new(cluster().await, targets, all_namespaces, initial)
    }

    /// Adds a scope as `open` does, without a watch behind it; its index.
    fn add_scope(state: &mut WatchState, key: ScopeKey, selector: Option<LabelSelector>) -> usize {
        state.scopes.push(scope(key, selector));
        state.scopes.len() - 1
    }

    /// A scope as `open` makes it, before any event.
    fn scope(key: ScopeKey, selector: Option<LabelSelector>) -> Scope {
        Scope {
            key,
            selector,
            live: false,
            pending: None,
            objects: BTreeMap::new(),
        }
    }

    /// Feeds scope `index` these events, each `ms` after now (tests run on paused time).
    fn feed(
        state: &mut WatchState,
        index: usize,
        events: Vec<(u64, watcher::Result<Event<AnyObject>>)>,
    ) {
        let start = Instant::now();
        let events = stream::iter(events).then(move |(ms, item)| async move {
            tokio::time::sleep_until(start + Duration::from_millis(ms)).await;
            item
        });
        state
            .streams
            .push(events.map(move |item| (index, item)).boxed());
    }

    /// A complete (re-)list of scope `index`: `objects`.
    fn list(state: &mut WatchState, index: usize, objects: Vec<AnyObject>) -> bool {
        state.apply(index, Ok(Event::Init));
        for object in objects {
            state.apply(index, Ok(Event::InitApply(object)));
        }
        state.apply(index, Ok(Event::InitDone))
    }

    fn app_selector(app: &str) -> LabelSelector {
        LabelSelector {
            match_labels: Some([("app".to_string(), app.to_string())].into()),
            match_expressions: None,
        }
    }

    fn pods_of(app: &str) -> ScopeKey {
        ScopeKey::Selected {
            resource: ResourceKind::Pod,
            namespace: SHOP.into(),
            selector: format!("app={app}"),
        }
    }

    fn named(resource: ResourceKind, namespace: Option<&str>, name: &str) -> ScopeKey {
        ScopeKey::Named {
            resource,
            namespace: namespace.map(str::to_string),
            name: name.into(),
        }
    }

    fn typed<K: serde::de::DeserializeOwned>(value: Value) -> K {
        serde_json::from_value(value).expect("object")
    }

    fn meta(ns: &str, name: &str, app: &str) -> Value {
        json!({"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"), "labels": {"app": app}})
    }

    fn pod(ns: &str, name: &str, app: &str) -> Pod {
        typed(json!({"metadata": meta(ns, name, app)}))
    }

    fn pod_in_phase(ns: &str, name: &str, app: &str, phase: &str) -> AnyObject {
        typed::<Pod>(json!({"metadata": meta(ns, name, app), "status": {"phase": phase}}))
            .into_any()
    }

    fn deployment(ns: &str, name: &str) -> Deployment {
        typed(json!({
            "metadata": meta(ns, name, name),
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}}
            }
        }))
    }

    fn replicaset(ns: &str, name: &str) -> AnyObject {
        typed::<ReplicaSet>(json!({"metadata": meta(ns, name, "inventory")})).into_any()
    }

    fn application(ns: &str, name: &str, resources: Value) -> Value {
        json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}")},
            "spec": {"destination": {"namespace": "apps"}},
            "status": {"resources": resources}
        })
    }

    fn raw(value: &Value) -> AnyObject {
        raw_object(value).expect("a raw kind")
    }

    fn names(scope: &Scope) -> Vec<&str> {
        scope.objects.values().map(AnyObject::name).collect()
    }

    fn pod_names(observed: &Observed) -> Vec<&str> {
        observed
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect()
    }

    fn keys(state: &WatchState) -> Vec<ScopeKey> {
        state.scopes.iter().map(|s| s.key.clone()).collect()
    }

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(status(code)))
    }

    fn status(code: u16) -> Status {
        Status::failure("refused", "Test").with_code(code)
    }

    fn failed() -> watcher::Result<Event<AnyObject>> {
        Err(watcher::Error::WatchFailed(api(500)))
    }

    // ---- applying watch events ----

    #[tokio::test]
    async fn a_relist_replaces_a_scopes_objects_only_once_it_is_done() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let a = pod(SHOP, "a", "inventory").into_any();
        let b = pod(SHOP, "b", "inventory").into_any();

        assert!(!state.apply(pods, Ok(Event::Init)));
        assert!(!state.apply(pods, Ok(Event::InitApply(a.clone()))));
        assert!(!state.apply(pods, Ok(Event::InitApply(b))));
        assert!(
            !state.scopes[pods].live,
            "not live before its first list is done"
        );
        assert!(state.apply(pods, Ok(Event::InitDone)));
        assert!(state.scopes[pods].live);
        assert_eq!(names(&state.scopes[pods]), ["a", "b"]);

        // After a 410 the watcher lists again; `b` was deleted meanwhile.
        assert!(!state.apply(pods, Ok(Event::Init)));
        assert!(!state.apply(pods, Ok(Event::InitApply(a))));
        assert_eq!(
            names(&state.scopes[pods]),
            ["a", "b"],
            "half a relist is not shown"
        );
        assert!(state.apply(pods, Ok(Event::InitDone)));
        assert_eq!(names(&state.scopes[pods]), ["a"]);

        assert!(!state.apply(7, Ok(Event::InitDone)), "no such scope");
    }

    /// A pod at `resource_version`, as a list reads it (a copy of its own each time).
    fn pod_at(name: &str, resource_version: &str) -> AnyObject {
        let mut value = json!({"metadata": meta(SHOP, name, "inventory")});
        value["metadata"]["resourceVersion"] = json!(resource_version);
        typed::<Pod>(value).into_any()
    }

    fn shared(a: &AnyObject, b: &AnyObject) -> bool {
        match (a, b) {
            (AnyObject::Pod(a), AnyObject::Pod(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// `--wait` holds each object once: a watch's first list that reads the gather's objects
    /// again unchanged keeps the gather's copies (the prune then drops nothing but pointers),
    /// and a relist keeps the scope's own; a changed object is the new copy.
    #[tokio::test]
    async fn a_list_that_reads_an_object_again_unchanged_holds_one_copy_of_it() {
        let gathered = pod_at("a", "7");
        let mut initial = Observed::default();
        pod_at("b", "7").push_into(&mut initial);
        gathered.clone().push_into(&mut initial);
        let mut state = watching(&[], false, initial).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        assert!(list(
            &mut state,
            pods,
            vec![pod_at("a", "7"), pod_at("b", "8")]
        ));
        let key = gathered.key();
        let listed = state.scopes[pods].objects[&key].clone();
        assert!(shared(&listed, &gathered), "the gather's copy is kept");
        let b = state.scopes[pods]
            .objects
            .values()
            .find(|o| o.name() == "b");
        assert_eq!(
            b.and_then(|o| o.meta().resource_version()),
            Some("8"),
            "a changed object is the one listed"
        );
        assert!(state.unlisted.is_empty(), "dropped once every scope listed");

        // A relist after a 410: the unchanged object stays the one held.
        assert!(list(&mut state, pods, vec![pod_at("a", "7")]));
        assert!(shared(&state.scopes[pods].objects[&key], &gathered));
        // A new version replaces it.
        assert!(list(&mut state, pods, vec![pod_at("a", "9")]));
        assert!(!shared(&state.scopes[pods].objects[&key], &gathered));
    }

    #[tokio::test]
    async fn applies_and_deletes_edit_a_scope_by_uid_and_show_once_it_has_listed() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let pending = pod_in_phase(SHOP, "a", "inventory", "Pending");
        assert!(
            !state.apply(pods, Ok(Event::Apply(pending.clone()))),
            "nothing is shown of a scope before its first list"
        );
        list(&mut state, pods, vec![]);
        assert!(state.scopes[pods].objects.is_empty(), "the list wins");

        assert!(state.apply(pods, Ok(Event::Apply(pending))));
        let running = pod_in_phase(SHOP, "a", "inventory", "Running");
        assert!(state.apply(pods, Ok(Event::Apply(running.clone()))));
        let held: Vec<_> = state.scopes[pods].objects.values().collect();
        assert_eq!(held.len(), 1, "the same uid is modified, not added");
        let AnyObject::Pod(held) = held[0] else {
            panic!("a pod: {:?}", held[0]);
        };
        assert_eq!(
            held.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Running")
        );

        assert!(state.apply(pods, Ok(Event::Delete(running))));
        assert!(state.scopes[pods].objects.is_empty());
    }

    #[tokio::test]
    async fn a_snapshot_says_which_objects_its_events_touched() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        assert_eq!(state.take_touched(), Touched::All, "the first snapshot");
        state.sources_changed = false;
        list(
            &mut state,
            pods,
            vec![pod_in_phase(SHOP, "a", "inventory", "Pending")],
        );
        assert_eq!(state.take_touched(), Touched::All, "a scope that listed");

        let running = pod_in_phase(SHOP, "a", "inventory", "Running");
        assert!(state.apply(pods, Ok(Event::Apply(running.clone()))));
        let moved = typed::<Pod>(json!({"metadata": meta(SHOP, "a", "elsewhere")})).into_any();
        assert!(state.apply(pods, Ok(Event::Apply(moved.clone()))));
        assert!(state.apply(pods, Ok(Event::Delete(moved))));
        let labels = |app: &str| vec![BTreeMap::from([("app".to_string(), app.to_string())])];
        let pod = |labels: Vec<BTreeMap<String, String>>| ObjectRef {
            kind: liveproof_evidence::ObjectKind::Pod,
            namespace: SHOP.into(),
            name: "a".into(),
            labels,
        };
        let mut relabelled = labels("elsewhere");
        relabelled.extend(labels("inventory"));
        assert_eq!(
            state.take_touched(),
            Touched::Objects(vec![
                pod(labels("inventory")),
                pod(relabelled),
                pod(labels("elsewhere")),
            ]),
            "each event's object, a relabelled one with its old labels too"
        );
        assert_eq!(
            state.take_touched(),
            Touched::Objects(vec![]),
            "nothing since"
        );

        state.sources_changed = true;
        assert_eq!(
            state.take_touched(),
            Touched::All,
            "a Helm/GitOps source changed"
        );
    }

    #[tokio::test]
    async fn a_shown_change_to_a_helm_or_gitops_object_asks_to_follow_its_workloads_again() {
        let mut state = watching(&[], false, Observed::default()).await;
        state.sources_changed = false;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let app = add_scope(
            &mut state,
            named(ResourceKind::Application, Some("argocd"), "inventory"),
            None,
        );

        list(
            &mut state,
            pods,
            vec![pod(SHOP, "a", "inventory").into_any()],
        );
        assert!(
            !state.sources_changed,
            "a pod does not change where a target leads"
        );
        state.apply(app, Ok(Event::Init));
        let synced = application("argocd", "inventory", json!([]));
        state.apply(app, Ok(Event::InitApply(raw(&synced))));
        assert!(!state.sources_changed, "nor does a list not yet done");
        state.apply(app, Ok(Event::InitDone));
        assert!(state.sources_changed);
    }

    #[tokio::test]
    async fn an_expired_refused_or_unserved_watch_is_not_a_failure() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        for code in [410, 403, 404] {
            for err in [
                watcher::Error::WatchStartFailed(api(code)),
                watcher::Error::WatchError(Box::new(status(code))),
            ] {
                assert!(!state.apply(pods, Err(err)));
            }
        }
        assert_eq!(state.consecutive_failures, 0);
        assert!(state.failure.is_none());

        assert!(!state.apply(pods, failed()));
        assert_eq!(state.consecutive_failures, 1, "any other error counts");
    }

    #[tokio::test]
    async fn failures_in_a_row_across_scopes_become_one_watch_error() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let replicasets = add_scope(
            &mut state,
            ScopeKey::Namespace {
                resource: ResourceKind::ReplicaSet,
                namespace: SHOP.into(),
            },
            None,
        );
        for n in 1..FAILURES_BEFORE_ERROR {
            state.apply(if n % 2 == 0 { pods } else { replicasets }, failed());
            assert!(state.failure.is_none(), "after {n} failures");
        }
        state.apply(pods, failed());
        let Some(GatherError::Watch { server, what, .. }) = state.failure.take() else {
            panic!("a watch error after {FAILURES_BEFORE_ERROR} failures");
        };
        assert_eq!(server.to_string(), SERVER);
        assert_eq!(what, "pods in namespace shop matching `app=inventory`");
        assert_eq!(state.consecutive_failures, 0, "counting starts over");
    }

    #[tokio::test]
    async fn any_event_starts_the_failure_count_over() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        for _ in 1..FAILURES_BEFORE_ERROR {
            state.apply(pods, failed());
        }
        state.apply(pods, Ok(Event::Init));
        for _ in 1..FAILURES_BEFORE_ERROR {
            state.apply(pods, failed());
        }
        assert!(state.failure.is_none());
        assert_eq!(state.consecutive_failures, FAILURES_BEFORE_ERROR - 1);
    }

    // ---- snapshots ----

    #[tokio::test]
    async fn a_snapshot_takes_live_scopes_and_the_initial_objects_no_live_scope_covers() {
        let initial = Observed {
            workloads: {
                let mut workloads = liveproof_evidence::WorkloadStore::default();
                workloads.push(Arc::new(deployment(SHOP, "inventory")));
                workloads
            },
            pods: vec![
                Arc::new(pod(SHOP, "a", "inventory")),
                Arc::new(pod(SHOP, "c", "cart")),
            ],
            ..Observed::default()
        };
        let mut state = watching(&[], false, initial).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        assert_eq!(pod_names(&state.snapshot()), ["a", "c"], "not listed yet");

        list(
            &mut state,
            pods,
            vec![pod(SHOP, "b", "inventory").into_any()],
        );
        let snapshot = state.snapshot();
        assert_eq!(
            pod_names(&snapshot),
            ["b", "c"],
            "`a` is gone; `c` is not watched"
        );
        assert_eq!(snapshot.workloads.of::<Deployment>().len(), 1);
        // What the live scope covers is no longer held twice: the initial keeps only `c`.
        assert_eq!(pod_names(&state.initial), ["c"]);
        assert_eq!(state.initial.workloads.of::<Deployment>().len(), 1);
        assert_eq!(
            pod_names(&state.snapshot()),
            ["b", "c"],
            "the same snapshot"
        );
    }

    #[tokio::test]
    async fn a_live_scope_replaces_the_initial_raw_objects_it_covers() {
        let kustomization = |name: &str| {
            json!({
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                "metadata": {"name": name, "namespace": "flux", "uid": format!("uid-flux-{name}")}
            })
        };
        let initial = Observed {
            others: vec![
                application("argocd", "inventory", json!([])),
                kustomization("infra"),
                kustomization("apps"),
            ],
            ..Observed::default()
        };
        let mut state = watching(&[], false, initial).await;
        let app = add_scope(
            &mut state,
            named(ResourceKind::Application, Some("argocd"), "inventory"),
            None,
        );
        let infra = add_scope(
            &mut state,
            named(ResourceKind::Kustomization, Some("flux"), "infra"),
            None,
        );
        let synced = application(
            "argocd",
            "inventory",
            json!([{"group": "apps", "kind": "Deployment", "namespace": "apps", "name": "inventory"}]),
        );
        list(&mut state, app, vec![raw(&synced)]);
        list(&mut state, infra, vec![]);

        let snapshot = state.snapshot();
        let apps: Vec<&Value> = snapshot.others_of(ResourceKind::Application).collect();
        assert_eq!(apps.len(), 1, "{apps:?}");
        assert_eq!(apps[0]["status"]["resources"][0]["name"], "inventory");
        let kustomizations: Vec<&str> = snapshot
            .others_of(ResourceKind::Kustomization)
            .filter_map(|k| k["metadata"]["name"].as_str())
            .collect();
        assert_eq!(
            kustomizations,
            ["apps"],
            "`infra` was deleted since; `apps` is not watched"
        );
    }

    #[tokio::test]
    async fn a_snapshot_is_complete_where_its_live_scopes_listed_in_full() {
        let denied = Denied {
            namespace: Some(SHOP.into()),
            resource: ResourceKind::Secret,
            verb: "list".into(),
            message: "forbidden".into(),
        };
        let mut initial = Observed {
            nodes: vec![typed::<Node>(json!({"metadata": {"name": "node-1"}}))],
            denied: vec![denied],
            ..Observed::default()
        };
        initial.mark_complete("apps", ResourceKind::ConfigMap);
        let mut state = watching(&[], false, initial).await;
        let absent = add_scope(
            &mut state,
            named(ResourceKind::Deployment, Some(SHOP), "inventory"),
            None,
        );
        let absent_anywhere = add_scope(
            &mut state,
            named(ResourceKind::Deployment, None, "cart"),
            None,
        );
        let present = add_scope(
            &mut state,
            named(ResourceKind::StatefulSet, Some(SHOP), "db"),
            None,
        );
        add_scope(
            &mut state,
            named(ResourceKind::DaemonSet, Some(SHOP), "agent"),
            None,
        );
        let replicasets = add_scope(
            &mut state,
            ScopeKey::Namespace {
                resource: ResourceKind::ReplicaSet,
                namespace: SHOP.into(),
            },
            None,
        );
        let inventory_pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let cart_pods = add_scope(&mut state, pods_of("cart"), Some(app_selector("cart")));
        list(&mut state, absent, vec![]);
        list(&mut state, absent_anywhere, vec![]);
        let db = typed::<StatefulSet>(json!({"metadata": meta(SHOP, "db", "db")}));
        list(&mut state, present, vec![db.into_any()]);
        list(
            &mut state,
            replicasets,
            vec![replicaset(SHOP, "inventory-7d4b")],
        );
        list(&mut state, inventory_pods, vec![]);

        let snapshot = state.snapshot();
        assert!(snapshot.is_complete(SHOP, ResourceKind::Deployment));
        assert!(snapshot.is_complete(liveproof_evidence::ALL_NAMESPACES, ResourceKind::Deployment));
        assert!(
            !snapshot.is_complete(SHOP, ResourceKind::StatefulSet),
            "found: says nothing of others"
        );
        assert!(
            !snapshot.is_complete(SHOP, ResourceKind::DaemonSet),
            "not listed yet"
        );
        assert!(snapshot.is_complete(SHOP, ResourceKind::ReplicaSet));
        assert!(
            !snapshot.is_complete(SHOP, ResourceKind::Pod),
            "the cart pods have not been listed"
        );
        assert!(
            snapshot.is_complete("apps", ResourceKind::ConfigMap),
            "as gathered"
        );
        assert_eq!(snapshot.denied.len(), 1);
        assert_eq!(snapshot.nodes.len(), 1);

        list(&mut state, cart_pods, vec![]);
        assert!(state.snapshot().is_complete(SHOP, ResourceKind::Pod));
    }

    #[test]
    fn a_scope_covers_its_kind_name_namespace_and_selector() {
        let deployment_in_shop = |name: &str| deployment(SHOP, name).into_any();

        let inventory = scope(
            named(ResourceKind::Deployment, Some(SHOP), "inventory"),
            None,
        );
        assert!(inventory.covers(&deployment_in_shop("inventory")));
        assert!(!inventory.covers(&deployment_in_shop("cart")));
        assert!(!inventory.covers(&deployment("apps", "inventory").into_any()));
        let sts = typed::<StatefulSet>(json!({"metadata": meta(SHOP, "inventory", "inventory")}));
        assert!(!inventory.covers(&sts.into_any()));

        let anywhere = scope(named(ResourceKind::Deployment, None, "inventory"), None);
        assert!(anywhere.covers(&deployment("apps", "inventory").into_any()));

        let replicasets = scope(
            ScopeKey::Namespace {
                resource: ResourceKind::ReplicaSet,
                namespace: SHOP.into(),
            },
            None,
        );
        assert!(replicasets.covers(&replicaset(SHOP, "inventory-7d4b")));
        assert!(!replicasets.covers(&replicaset("apps", "inventory-7d4b")));
        assert!(!replicasets.covers(&pod(SHOP, "a", "inventory").into_any()));

        let pods = scope(pods_of("inventory"), Some(app_selector("inventory")));
        assert!(pods.covers(&pod(SHOP, "a", "inventory").into_any()));
        assert!(!pods.covers(&pod(SHOP, "c", "cart").into_any()));
        assert!(!pods.covers(&pod("apps", "a", "inventory").into_any()));
        let unselected = scope(pods_of("inventory"), None);
        assert!(!unselected.covers(&pod(SHOP, "a", "inventory").into_any()));
    }

    // ---- which watches are opened ----

    #[tokio::test]
    async fn a_deployment_is_watched_with_its_replicasets_and_its_pods_once() {
        let initial = Observed {
            workloads: {
                let mut workloads = liveproof_evidence::WorkloadStore::default();
                workloads.push(Arc::new(deployment(SHOP, "inventory")));
                workloads
            },
            ..Observed::default()
        };
        let target = Target::new(TargetKind::Deployment, None, "inventory");
        let mut state = watching(&[target], false, initial.clone()).await;
        state.ensure_scopes(&initial);
        assert_eq!(
            keys(&state),
            [
                named(ResourceKind::Deployment, Some(SHOP), "inventory"),
                ScopeKey::Namespace {
                    resource: ResourceKind::ReplicaSet,
                    namespace: SHOP.into(),
                },
                pods_of("inventory"),
                ScopeKey::Namespace {
                    resource: ResourceKind::Service,
                    namespace: SHOP.into(),
                },
                ScopeKey::Namespace {
                    resource: ResourceKind::EndpointSlice,
                    namespace: SHOP.into(),
                },
            ]
        );
        assert_eq!(state.scopes[2].selector, Some(app_selector("inventory")));
        assert_eq!(state.streams.len(), 5);

        state.ensure_scopes(&initial);
        assert_eq!(state.scopes.len(), 5, "a scope is watched once");
        assert_eq!(state.streams.len(), 5);
    }

    #[tokio::test]
    async fn with_all_namespaces_only_workloads_without_a_namespace_are_watched_everywhere() {
        let targets = [
            Target::new(TargetKind::Release, None, "inventory"),
            Target::new(TargetKind::Deployment, None, "inventory"),
            Target::new(TargetKind::StatefulSet, Some("apps"), "db"),
        ];
        let mut state = watching(&targets, true, Observed::default()).await;
        state.ensure_scopes(&Observed::default());
        let storage = |resource| ScopeKey::Selected {
            resource,
            namespace: SHOP.into(),
            selector: "owner=helm,name=inventory".into(),
        };
        assert_eq!(
            keys(&state),
            [
                storage(ResourceKind::Secret),
                storage(ResourceKind::ConfigMap),
                named(ResourceKind::Deployment, None, "inventory"),
                named(ResourceKind::StatefulSet, Some("apps"), "db"),
            ]
        );
    }

    #[tokio::test]
    async fn followed_workloads_are_worked_out_again_only_after_a_source_changed() {
        let target = Target::new(TargetKind::Application, Some("argocd"), "inventory");
        let initial = Observed {
            others: vec![application("argocd", "inventory", json!([]))],
            ..Observed::default()
        };
        let mut state = watching(&[target], false, initial.clone()).await;
        state.ensure_scopes(&initial);
        let app = named(ResourceKind::Application, Some("argocd"), "inventory");
        assert_eq!(keys(&state), std::slice::from_ref(&app));
        assert!(!state.sources_changed);

        let synced = Observed {
            others: vec![application(
                "argocd",
                "inventory",
                json!([{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "apps", "name": "inventory"}]),
            )],
            ..Observed::default()
        };
        state.ensure_scopes(&synced);
        assert_eq!(
            keys(&state),
            std::slice::from_ref(&app),
            "no source changed since"
        );

        state.sources_changed = true;
        state.ensure_scopes(&synced);
        assert_eq!(
            keys(&state),
            [
                app,
                named(ResourceKind::Deployment, Some("apps"), "inventory")
            ]
        );
        assert!(!state.sources_changed);
    }

    #[tokio::test]
    async fn at_most_max_scopes_watches_are_opened() {
        // One target per namespace: nothing to batch, a watch each.
        let targets: Vec<Target> = (0..MAX_SCOPES + 3)
            .map(|i| Target::new(TargetKind::Deployment, Some(&format!("ns{i:03}")), "d"))
            .collect();
        let mut state = watching(&targets, false, Observed::default()).await;
        state.ensure_scopes(&Observed::default());
        assert_eq!(state.scopes.len(), MAX_SCOPES);
        assert_eq!(state.streams.len(), MAX_SCOPES);
        assert!(state.scopes_capped);
        assert_eq!(
            state.scopes[MAX_SCOPES - 1].key,
            named(
                ResourceKind::Deployment,
                Some(&format!("ns{:03}", MAX_SCOPES - 1)),
                "d"
            ),
            "the first ones wanted are kept"
        );
    }

    /// 2,000 Deployments in one namespace are three watches (the Deployments, their
    /// ReplicaSets, their pods), not two per target; a snapshot keeps only what the targets
    /// name or select, as the per-target watches would.
    #[tokio::test]
    async fn many_targets_in_a_namespace_are_one_watch_per_kind() {
        let targets: Vec<Target> = (0..2000)
            .map(|i| Target::new(TargetKind::Deployment, Some(SHOP), &format!("d{i}")))
            .collect();
        let mut initial = Observed::default();
        for i in 0..2000 {
            initial
                .workloads
                .push(Arc::new(deployment(SHOP, &format!("d{i}"))));
        }
        let mut state = watching(&targets, false, initial.clone()).await;
        state.ensure_scopes(&initial);
        let namespace = |resource| ScopeKey::Namespace {
            resource,
            namespace: SHOP.into(),
        };
        assert_eq!(
            keys(&state),
            [
                namespace(ResourceKind::Deployment),
                namespace(ResourceKind::ReplicaSet),
                namespace(ResourceKind::Pod),
                namespace(ResourceKind::Service),
                namespace(ResourceKind::EndpointSlice),
            ]
        );
        assert!(!state.scopes_capped);

        let deployments = vec![
            deployment(SHOP, "d7").into_any(),
            deployment(SHOP, "stranger").into_any(),
        ];
        assert!(list(&mut state, 0, deployments));
        let pods = vec![
            pod(SHOP, "d7-1", "d7").into_any(),
            pod(SHOP, "stranger-1", "stranger").into_any(),
        ];
        assert!(list(&mut state, 2, pods));
        let snapshot = state.snapshot();
        let deployment_names: Vec<&str> = snapshot
            .workloads
            .of::<Deployment>()
            .iter()
            .filter_map(|d| d.metadata.name.as_deref())
            .collect();
        assert!(deployment_names.contains(&"d7"), "{deployment_names:?}");
        assert!(
            !deployment_names.contains(&"stranger"),
            "only what a target names: {deployment_names:?}"
        );
        assert_eq!(
            pod_names(&snapshot),
            ["d7-1"],
            "only what a target's selector matches"
        );
        assert!(snapshot.is_complete(SHOP, ResourceKind::Deployment));
        assert!(snapshot.is_complete(SHOP, ResourceKind::Pod));
    }

    #[test]
    fn helm_storage_is_watched_by_the_labels_helm_writes() {
        let (key, selector) = source_scope(SourceRead::Storage {
            resource: ResourceKind::Secret,
            namespace: "apps".into(),
            release: "inventory".into(),
        });
        assert_eq!(
            key,
            ScopeKey::Selected {
                resource: ResourceKind::Secret,
                namespace: "apps".into(),
                selector: "owner=helm,name=inventory".into(),
            }
        );
        let storage = scope(key, selector);
        let secret = |name: &str| {
            raw(&json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {
                    "name": format!("sh.helm.release.v1.{name}.v3"), "namespace": "apps",
                    "labels": {"owner": "helm", "name": name, "status": "deployed", "version": "3"}
                }
            }))
        };
        assert!(storage.covers(&secret("inventory")));
        assert!(!storage.covers(&secret("cart")));

        let (key, selector) = source_scope(SourceRead::Object {
            resource: ResourceKind::HelmRelease,
            namespace: "flux".into(),
            name: "inventory".into(),
        });
        assert_eq!(
            key,
            named(ResourceKind::HelmRelease, Some("flux"), "inventory")
        );
        assert_eq!(selector, None);
    }

    #[test]
    fn only_objects_that_lead_to_workloads_are_sources() {
        for resource in [
            ResourceKind::Secret,
            ResourceKind::ConfigMap,
            ResourceKind::HelmRelease,
            ResourceKind::Kustomization,
            ResourceKind::Application,
        ] {
            assert!(is_source(&named(resource, Some(SHOP), "x")), "{resource:?}");
        }
        for resource in [
            ResourceKind::GitRepository,
            ResourceKind::Deployment,
            ResourceKind::ReplicaSet,
            ResourceKind::Pod,
        ] {
            assert!(
                !is_source(&named(resource, Some(SHOP), "x")),
                "{resource:?}"
            );
        }
    }

    #[test]
    fn scopes_are_named_for_warnings_and_errors() {
        assert_eq!(
            named(ResourceKind::Deployment, Some(SHOP), "inventory").to_string(),
            "Deployment shop/inventory"
        );
        assert_eq!(
            named(ResourceKind::Deployment, None, "inventory").to_string(),
            "deployments named inventory in all namespaces"
        );
        let replicasets = ScopeKey::Namespace {
            resource: ResourceKind::ReplicaSet,
            namespace: SHOP.into(),
        };
        assert_eq!(replicasets.to_string(), "replicasets in namespace shop");
    }

    // ---- errors, 410 Gone and backoff ----

    #[test]
    fn watch_errors_are_told_apart_by_status_code_wherever_kube_reports_it() {
        use watcher::Error as E;
        assert!(is_gone(&E::WatchError(Box::new(status(410)))));
        assert!(is_gone(&E::WatchStartFailed(api(410))));
        assert!(is_forbidden(&E::InitialListFailed(api(403))));
        assert!(is_not_served(&E::WatchFailed(api(404))));
        let other = E::WatchFailed(api(500));
        assert!(!is_gone(&other) && !is_forbidden(&other) && !is_not_served(&other));
        assert_eq!(error_code(&E::NoResourceVersion), None);
    }

    type Script = Vec<watcher::Result<Event<AnyObject>>>;

    /// A `make` for [`relist_on_gone`] whose n-th watch yields `scripts[n]` (then ends), and
    /// how many watches it made.
    fn scripted(scripts: Vec<Script>) -> (impl Fn() -> Events + Send + 'static, Arc<AtomicUsize>) {
        let scripts = Mutex::new(VecDeque::from(scripts));
        let made = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&made);
        let make = move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let script = scripts
                .lock()
                .expect("not poisoned")
                .pop_front()
                .unwrap_or_default();
            stream::iter(script).boxed()
        };
        (make, made)
    }

    fn start_gone() -> watcher::Result<Event<AnyObject>> {
        Err(watcher::Error::WatchStartFailed(api(410)))
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_request_answered_410_starts_over_with_a_backoff_an_event_resets() {
        let (make, made) = scripted(vec![
            vec![start_gone()],
            vec![start_gone()],
            vec![Ok(Event::Init), start_gone()],
            vec![],
        ]);
        let mut events = relist_on_gone(make);
        let mut waits = Vec::new();
        let mut last = Instant::now();
        while let Some(item) = events.next().await {
            waits.push((item.is_ok(), last.elapsed()));
            last = Instant::now();
        }
        assert_eq!(
            made.load(Ordering::SeqCst),
            4,
            "a fresh watch after each 410"
        );
        let ms = Duration::from_millis;
        let within = |d: Duration, lo: u64, hi: u64| d >= ms(lo) && d <= ms(hi);
        assert_eq!(waits.len(), 4, "{waits:?}");
        assert!(within(waits[0].1, 100, 200), "{waits:?}");
        assert!(within(waits[1].1, 200, 400), "doubles: {waits:?}");
        assert_eq!(waits[2], (true, Duration::ZERO));
        assert!(
            within(waits[3].1, 100, 200),
            "the event reset it: {waits:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn other_errors_and_a_410_inside_the_stream_are_left_to_kubes_watcher() {
        let (make, made) = scripted(vec![vec![
            Err(watcher::Error::WatchError(Box::new(status(410)))),
            failed(),
            Ok(Event::InitDone),
        ]]);
        let items: Vec<_> = relist_on_gone(make).collect().await;
        assert_eq!(items.len(), 3);
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn relist_backoff_grows_and_stays_bounded() {
        let ms = Duration::from_millis;
        for (attempt, base) in [(0, 200), (1, 400), (2, 800), (4, 3200)] {
            let d = relist_delay(attempt);
            assert!(d >= ms(base / 2) && d <= ms(base), "{attempt}: {d:?}");
        }
        for attempt in [5, 6, 40, u32::MAX] {
            let d = relist_delay(attempt);
            assert!(
                d >= RELIST_BACKOFF_MAX / 2 && d <= RELIST_BACKOFF_MAX,
                "{d:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_refused_or_unserved_watch_ends_after_saying_so() {
        for code in [403, 404] {
            let events = stream::iter(vec![
                Ok(Event::Init),
                Err(watcher::Error::WatchStartFailed(api(code))),
                Ok(Event::InitDone),
            ])
            .boxed();
            let items: Vec<_> = end_after_refusal(events).collect().await;
            assert_eq!(items.len(), 2, "{code}");
            assert!(matches!(&items[1], Err(e) if error_code(e) == Some(code)));
        }
        let events = stream::iter(vec![
            failed(),
            Err(watcher::Error::WatchError(Box::new(status(410)))),
            Ok(Event::InitDone),
        ])
        .boxed();
        assert_eq!(
            end_after_refusal(events).count().await,
            3,
            "retried, not ended"
        );
    }

    // ---- snapshots over time ----

    #[tokio::test(start_paused = true)]
    async fn events_within_the_debounce_window_make_one_snapshot() {
        let initial = Observed {
            pods: vec![Arc::new(pod(SHOP, "a", "inventory"))],
            ..Observed::default()
        };
        let mut state = watching(&[], false, initial).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let any = |name: &str| pod(SHOP, name, "inventory").into_any();
        feed(
            &mut state,
            pods,
            vec![
                (0, Ok(Event::Init)),
                (0, Ok(Event::InitApply(any("a")))),
                (0, Ok(Event::InitDone)),
                (50, Ok(Event::Apply(any("b")))),
                (500, Ok(Event::Apply(any("c")))),
            ],
        );
        let mut next = async || state.next().await.expect("a snapshot").expect("no error");
        assert_eq!(
            pod_names(&next().await.observed),
            ["a"],
            "the initial gather first"
        );
        assert_eq!(pod_names(&next().await.observed), ["a", "b"]);
        assert_eq!(pod_names(&next().await.observed), ["a", "b", "c"]);
        assert!(
            state.next().await.is_none(),
            "every watch ended, and so does the stream"
        );
    }

    /// A backlog (events already received, each slow to take) goes into one snapshot past the
    /// window, up to the drain bound; what is not there yet waits for the next one.
    #[tokio::test]
    async fn a_backlog_is_one_snapshot_up_to_the_drain_bound() {
        let slow = |n: usize| {
            stream::iter(0..n).map(|i| {
                std::thread::sleep(Duration::from_millis(30));
                i
            })
        };
        let window = Duration::from_millis(50);
        let mut backlog = slow(10);
        let taken = batch(&mut backlog, window, Duration::from_secs(5), 100).await;
        assert_eq!(taken.len(), 10, "all of it, though the window took two");
        let mut endless = slow(100);
        let taken = batch(&mut endless, window, Duration::from_millis(300), 1_000).await;
        assert!(
            (2..100).contains(&taken.len()),
            "bounded by the drain: {}",
            taken.len()
        );
        let mut later = stream::iter([1])
            .chain(stream::once(async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                2
            }))
            .boxed();
        let taken = batch(&mut later, window, Duration::from_secs(5), 100).await;
        assert_eq!(taken, [1], "what has not arrived is not waited for");
    }

    /// A backlog larger than the bound on a batch is taken a bound's worth at a time, within
    /// the window and past it alike: the rest waits for the next snapshot, none of it lost.
    #[tokio::test]
    async fn a_batch_holds_at_most_its_bound() {
        let window = Duration::from_millis(50);
        let mut ready = stream::iter(0..25);
        let taken = batch(&mut ready, window, Duration::from_secs(5), 10).await;
        assert_eq!(taken, (0..10).collect::<Vec<_>>(), "the first ten");
        let taken = batch(&mut ready, window, Duration::from_secs(5), 10).await;
        assert_eq!(taken, (10..20).collect::<Vec<_>>(), "the next ten");
        let taken = batch(&mut ready, window, Duration::from_secs(5), 10).await;
        assert_eq!(taken, (20..25).collect::<Vec<_>>(), "the rest");
    }

    #[tokio::test(start_paused = true)]
    async fn a_list_not_yet_done_yields_no_snapshot() {
        let initial = Observed {
            pods: vec![Arc::new(pod(SHOP, "old", "inventory"))],
            ..Observed::default()
        };
        let mut state = watching(&[], false, initial).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        feed(
            &mut state,
            pods,
            vec![
                (0, Ok(Event::Init)),
                (
                    0,
                    Ok(Event::InitApply(pod(SHOP, "new", "inventory").into_any())),
                ),
                (300, Ok(Event::InitDone)),
            ],
        );
        state.next().await.expect("initial").expect("ok");
        let start = Instant::now();
        let snapshot = state.next().await.expect("a snapshot").expect("ok");
        assert_eq!(pod_names(&snapshot), ["new"]);
        assert!(start.elapsed() >= Duration::from_millis(300));
    }

    #[tokio::test(start_paused = true)]
    async fn failing_watches_yield_an_error_and_the_stream_goes_on() {
        let mut state = watching(&[], false, Observed::default()).await;
        let pods = add_scope(
            &mut state,
            pods_of("inventory"),
            Some(app_selector("inventory")),
        );
        let mut events: Vec<_> = (0..FAILURES_BEFORE_ERROR).map(|_| (0, failed())).collect();
        events.extend([
            (500, Ok(Event::Init)),
            (
                500,
                Ok(Event::InitApply(pod(SHOP, "a", "inventory").into_any())),
            ),
            (500, Ok(Event::InitDone)),
        ]);
        feed(&mut state, pods, events);
        state.next().await.expect("initial").expect("ok");
        assert!(matches!(
            state.next().await,
            Some(Err(GatherError::Watch { .. }))
        ));
        let snapshot = state.next().await.expect("goes on").expect("recovered");
        assert_eq!(pod_names(&snapshot), ["a"]);
    }
}
