//! Reads and writes around the workloads themselves: the nodes their pods run on (for
//! platforms), every workload of a namespace (for `liveproof stale` without targets), the
//! pull secrets their pods name, and the one write liveproof makes, a restart.

use futures::FutureExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams};
use liveproof_evidence::snapshot::ReleaseState;
use liveproof_evidence::{Denied, Observed, ResourceKind, Target, TargetKind, KINDS};
use serde_json::{json, Value};

use super::objects::Kind;
use super::{Cluster, GatherError};

/// The annotation `kubectl rollout restart` sets on the pod template.
pub const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

impl Cluster {
    /// LISTs the nodes once (cluster-scoped) into `observed.nodes`; a refusal is recorded,
    /// and platforms are then unknown.
    pub async fn gather_nodes(&self, observed: &mut Observed) -> Result<(), GatherError> {
        let api: Api<Node> = Api::all(self.client.clone());
        let listed = super::pager::list_pages(
            &ListParams::default(),
            self.request_timeout(),
            super::page::lister(&api),
            Some,
        )
        .await;
        match listed {
            Ok(nodes) => {
                observed.nodes = nodes;
                observed.mark_complete("", ResourceKind::Node);
                Ok(())
            }
            Err(super::pager::PageError::Endless(why)) => Err(self.incomplete("nodes", why)),
            Err(super::pager::PageError::Api(kube::Error::Api(status))) if status.code == 403 => {
                observed.denied.push(Denied {
                    namespace: None,
                    resource: ResourceKind::Node,
                    verb: "list".into(),
                    message: status.message.clone(),
                });
                Ok(())
            }
            Err(super::pager::PageError::Api(err)) => Err(self.kube_error("nodes", err)),
        }
    }

    /// Every Deployment, StatefulSet and DaemonSet in `namespace` (all namespaces when `None`)
    /// whose labels `selector` matches (every one without), as targets: three LISTs at once,
    /// paginated. Without a selector, of metadata only; with one (`-l`), of whole objects,
    /// which the next [`gather`](Cluster::gather) takes instead of reading them again. The
    /// server parses the selector: parse it first (`liveproof_evidence::selector::parse`) for a
    /// usage error in kubectl's words.
    pub async fn workloads_in(
        &self,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<Target>, GatherError> {
        let mut params = ListParams::default();
        if let Some(selector) = selector {
            params = params.labels(selector);
        }
        let whole = selector.is_some();
        let lists = KINDS.iter().filter(|k| k.workload.is_some()).map(|spec| {
            // A workload kind is typed (`kinds::tests::every_workload_kind_is_typed`).
            dispatch!(
                spec.resource,
                T => self.workloads_of::<T>(namespace, selector, &params, whole).boxed(),
                else => futures::future::ready(Ok(Vec::new())).boxed(),
            )
        });
        let mut out: Vec<Target> = futures::future::try_join_all(lists)
            .await?
            .into_iter()
            .flatten()
            .collect();
        out.sort();
        Ok(out)
    }

    /// The `K` workloads of [`Cluster::workloads_in`], as targets; read `whole`, the objects
    /// are kept for the next gather.
    async fn workloads_of<K: Kind>(
        &self,
        namespace: Option<&str>,
        selector: Option<&str>,
        params: &ListParams,
        whole: bool,
    ) -> Result<Vec<Target>, GatherError> {
        let Some(kind) = TargetKind::workload_of(K::RESOURCE) else {
            return Ok(Vec::new());
        };
        let labelled = selector
            .map(|s| format!(" labelled `{s}`"))
            .unwrap_or_default();
        let what = match namespace {
            Some(ns) => format!("{}{labelled} in {ns}", kind.cli_name()),
            None => format!("{}{labelled} in all namespaces", kind.cli_name()),
        };
        let api: Api<K::Wire> = match namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        };
        let target = move |name: Option<&str>, ns: Option<&str>| {
            let (Some(name), Some(ns)) = (name, ns) else {
                return None;
            };
            Some(Target::new(kind, Some(ns), name))
        };
        if !whole {
            return self
                .list_all(
                    &what,
                    params,
                    |page: ListParams| {
                        let api = api.clone();
                        async move { none_if_not_served::<K, _, _>(api.list_metadata(&page).await) }
                    },
                    |item| {
                        let meta = &item.metadata;
                        target(meta.name.as_deref(), meta.namespace.as_deref())
                    },
                )
                .await;
        }
        let mut fetch = super::page::lister(&api);
        let objects = self
            .list_all(
                &what,
                params,
                |page: ListParams| {
                    let listed = fetch(page);
                    async move { none_if_not_served::<K, _, _>(listed.await) }
                },
                |object: K::Wire| Some(K::from_wire(object)),
            )
            .await?;
        let targets = objects
            .iter()
            .filter_map(|o| {
                let meta = o.meta_view();
                target(meta.name(), meta.namespace())
            })
            .collect();
        self.prefetched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(objects.into_iter().map(K::into_any));
        Ok(targets)
    }

    /// The `kubernetes.io/dockerconfigjson` Secrets the pods of `observed` name in
    /// `imagePullSecrets`, raw (their data is credentials: never logged, never printed). One
    /// GET per distinct Secret, all at once; a refused or missing one is skipped with a
    /// warning naming it.
    pub async fn pull_secrets(&self, observed: &Observed) -> Vec<Value> {
        let mut names: Vec<(String, String)> = observed
            .pods
            .iter()
            .flat_map(|p| {
                let ns = p.metadata.namespace.clone().unwrap_or_default();
                p.spec
                    .iter()
                    .flat_map(|s| s.image_pull_secrets.iter().flatten())
                    .map(move |r| (ns.clone(), r.name.clone()))
            })
            .collect();
        names.sort();
        names.dedup();
        let reads = names.into_iter().map(|(ns, name)| async move {
            let api: Api<Secret> = Api::namespaced(self.client.clone(), &ns);
            match api.get_opt(&name).await {
                Ok(Some(secret)) => match serde_json::to_value(secret) {
                    Ok(v) => Some(v),
                    Err(_) => {
                        tracing::warn!("pull secret {ns}/{name} could not be read");
                        None
                    }
                },
                Ok(None) => {
                    tracing::warn!("pull secret {ns}/{name} named by a pod does not exist");
                    None
                }
                Err(err) => {
                    tracing::warn!(
                        "pull secret {ns}/{name} not read: {}",
                        self.kube_error(&name, err)
                    );
                    None
                }
            }
        });
        futures::future::join_all(reads)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Restarts a workload as `kubectl rollout restart` does: one strategic-merge PATCH of its
    /// pod template's `kubectl.kubernetes.io/restartedAt` annotation. Returns the patch sent.
    pub async fn restart(&self, target: &Target, at: Timestamp) -> Result<Value, GatherError> {
        let patch = restart_patch(at);
        self.patch_workload(target, &Patch::Strategic(&patch))
            .await?;
        Ok(patch)
    }
}

impl Cluster {
    /// The newest revision of every Helm release in `namespace` (all when `None`), from the
    /// storage objects' labels alone: a metadata-only LIST never transfers a release's data.
    pub async fn release_revisions(
        &self,
        namespace: Option<&str>,
    ) -> Result<Vec<ReleaseState>, GatherError> {
        let lp = ListParams::default().labels("owner=helm");
        let mut newest: std::collections::BTreeMap<(String, String), ReleaseState> =
            Default::default();
        let secrets = match namespace {
            Some(ns) => Api::<Secret>::namespaced(self.client.clone(), ns),
            None => Api::<Secret>::all(self.client.clone()),
        };
        let configmaps = match namespace {
            Some(ns) => Api::<ConfigMap>::namespaced(self.client.clone(), ns),
            None => Api::<ConfigMap>::all(self.client.clone()),
        };
        let what = "Helm release storage";
        let mut metas: Vec<_> = self
            .list_all(
                what,
                &lp,
                |page: ListParams| {
                    let api = secrets.clone();
                    async move { api.list_metadata(&page).await }
                },
                |i| Some(i.metadata),
            )
            .await?;
        metas.extend(
            self.list_all(
                what,
                &lp,
                |page: ListParams| {
                    let api = configmaps.clone();
                    async move { api.list_metadata(&page).await }
                },
                |i| Some(i.metadata),
            )
            .await?,
        );
        for meta in metas {
            let labels = meta.labels.unwrap_or_default();
            let (Some(name), Some(version)) = (
                labels.get("name"),
                labels.get("version").and_then(|v| v.parse::<i64>().ok()),
            ) else {
                continue;
            };
            let ns = meta.namespace.unwrap_or_default();
            let state = ReleaseState {
                namespace: ns.clone(),
                name: name.clone(),
                revision: version,
                status: labels.get("status").cloned().unwrap_or_default(),
            };
            let entry = newest
                .entry((ns, name.clone()))
                .or_insert_with(|| state.clone());
            if state.revision > entry.revision {
                *entry = state;
            }
        }
        Ok(newest.into_values().collect())
    }

    /// Puts a workload's pod template back to `template` exactly, as `kubectl rollout undo`
    /// does: one JSON patch replacing `/spec/template`. Returns the patch sent.
    pub async fn restore_template(
        &self,
        target: &Target,
        template: &Value,
    ) -> Result<Value, GatherError> {
        let ops = json!([{"op": "replace", "path": "/spec/template", "value": template}]);
        let patch: json_patch::Patch =
            serde_json::from_value(ops.clone()).map_err(|e| GatherError::BadPatch {
                target: format!("{target}"),
                reason: e.to_string(),
            })?;
        self.patch_workload(target, &Patch::Json::<()>(patch))
            .await?;
        Ok(ops)
    }
}

impl Cluster {
    /// Warning events in `namespace`, from both event APIs (`events.k8s.io/v1` and core `v1`),
    /// raw into `observed.others`: one LIST each, filtered by the server to `type=Warning`.
    /// Only asked for when a target is not live, so a live one costs nothing. A refusal is a
    /// warning: diagnostics explain, they never decide.
    pub async fn gather_warning_events(&self, namespace: &str, observed: &mut Observed) {
        let lp = ListParams::default().fields("type=Warning");
        let core: Api<k8s_openapi::api::core::v1::Event> =
            Api::namespaced(self.client.clone(), namespace);
        match core.list(&lp).await {
            Ok(list) => observed.others.extend(
                list.items
                    .into_iter()
                    .filter_map(|e| serde_json::to_value(e).ok()),
            ),
            Err(e) => tracing::warn!("events in {namespace} not read: {e}"),
        }
        let new: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), namespace);
        match new.list(&lp).await {
            Ok(list) => observed.others.extend(
                list.items
                    .into_iter()
                    .filter_map(|e| serde_json::to_value(e).ok()),
            ),
            Err(e) => tracing::debug!("events.k8s.io events in {namespace} not read: {e}"),
        }
    }

    /// The last `tail` lines of a container's log (`previous`: of its last terminated run).
    pub async fn container_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        tail: i64,
        previous: bool,
    ) -> Result<Vec<String>, GatherError> {
        let api: Api<k8s_openapi::api::core::v1::Pod> =
            Api::namespaced(self.client.clone(), namespace);
        let params = kube::api::LogParams {
            container: Some(container.to_string()),
            tail_lines: Some(tail),
            previous,
            ..kube::api::LogParams::default()
        };
        let text = api
            .logs(pod, &params)
            .await
            .map_err(|e| self.kube_error(&format!("logs of {namespace}/{pod} [{container}]"), e))?;
        Ok(text.lines().map(str::to_string).collect())
    }
}

impl Cluster {
    /// One PATCH of a Deployment, StatefulSet or DaemonSet: the only writes liveproof makes.
    async fn patch_workload<P: serde::Serialize + std::fmt::Debug>(
        &self,
        target: &Target,
        patch: &Patch<P>,
    ) -> Result<(), GatherError> {
        let ns = target
            .namespace
            .as_deref()
            .unwrap_or(self.default_namespace());
        let what = format!("{target}");
        let params = PatchParams::default();
        // A template write is a restart only for the built-in kinds: on an Argo Rollout it
        // starts a new canary or blue-green rollout of its own.
        if !target.kind.is_workload() || !target.kind.resource().is_builtin() {
            return Err(GatherError::NotRestartable { target: what });
        }
        let result = dispatch!(
            target.kind.resource(),
            T => Api::<<T as Kind>::Wire>::namespaced(self.client.clone(), ns)
                .patch(&target.name, &params, patch)
                .await
                .map(|_| ()),
            else => return Err(GatherError::NotRestartable { target: what }),
        );
        result.map_err(|e| self.kube_error(&what, e))
    }
}

/// A LIST of a custom resource the server does not serve (404: Argo Rollouts not installed)
/// as the empty list it is: there are no objects of a kind the cluster does not have. A
/// built-in kind is always served, so its 404 stays an error.
fn none_if_not_served<K: Kind, T, B: super::pager::PageBody<T>>(
    list: Result<B, kube::Error>,
) -> Result<B, kube::Error> {
    match list {
        Err(kube::Error::Api(status)) if status.code == 404 && !K::RESOURCE.is_builtin() => {
            Ok(B::empty())
        }
        other => other,
    }
}

/// The body `kubectl rollout restart` sends.
pub fn restart_patch(at: Timestamp) -> Value {
    json!({"spec": {"template": restart_template(at)}})
}

/// The part of a pod template a restart at `at` writes: what the restarted pods show of it.
pub fn restart_template(at: Timestamp) -> Value {
    json!({"metadata": {"annotations": {RESTARTED_AT: at.to_string()}}})
}
