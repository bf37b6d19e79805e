//! Reading the Kubernetes API.
//!
//! [`Cluster::gather`] reads what the workload checks need with a bounded number of requests:
//! one GET per workload target, then per namespace one LIST of ReplicaSets (when a Deployment
//! target is there) and one of ControllerRevisions (when a StatefulSet or DaemonSet target is
//! there), and one LIST of pods per distinct workload selector. Never one request per pod.
//! Helm and GitOps targets come first: their objects are read raw (one GET each; a release's
//! storage in one LIST of Secrets and one of ConfigMaps by label selector), and the workloads
//! they lead to are then gathered with the workload targets, in the same requests.
//!
//! An RBAC refusal (403) is recorded as [`Denied`] and gathering goes on: the checks then say
//! `unknown` and name the permission. Anything else that stops a read (unreachable server,
//! TLS, expired credentials) is a [`GatherError`] with a hint.

// First: its macros (the kind table and the dispatch from it) are used by the modules below.
#[macro_use]
mod kinds;
mod credentials;
mod error;
mod exec_plugin;
mod in_cluster;
mod lean;
mod meta;
mod objects;
mod page;
mod pager;
mod plan;
mod proxy;
mod service;
mod sources;
mod watch;
mod workloads;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::{join_all, BoxFuture};
use futures::FutureExt;
use k8s_openapi::api::core::v1::Namespace;
use kinds::Pod;
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::kind::Lister;
use liveproof_evidence::{Denied, Observed, ResourceKind, Target};
use liveproof_redacted::DisplaySafeUrl;

use error::Endpoint;
pub use error::{humanize, GatherError};
pub use exec_plugin::ExecPluginError;
pub use objects::api_resource;
pub use watch::{ObservedStream, Snapshot};
pub use workloads::{restart_patch, restart_template, RESTARTED_AT};

use objects::{normalize, AnyObject, InTable, Kind};
pub(crate) use plan::plan_related;
use plan::{plan_lookups, plan_reads, Keep, Lookup, LookupRead, PodRead, Selectors};

/// Why the names of a kind could not be listed for a did-you-mean.
enum NamesUnread {
    /// The API server does not serve the resource (a CRD that is not installed).
    NotServed,
    /// Any other failure: refused, unreachable; the suggestion is left out.
    Failed,
}

/// How to reach the cluster, as kubectl takes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterOptions {
    /// `--kubeconfig`: this file only. Without it, `KUBECONFIG` (which may list several files)
    /// or `~/.kube/config`, and in a pod the service account.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`: a context of the kubeconfig instead of its current one.
    pub context: Option<String>,
    /// `-n`: the namespace for targets that do not name one.
    pub namespace: Option<String>,
    /// `--request-timeout`: how long one request may take (connect, TLS, each read and
    /// write); [`DEFAULT_REQUEST_TIMEOUT`] when `None`.
    pub request_timeout: Option<Duration>,
    /// `--timeout`: when the whole command must be done. Connecting runs the kubeconfig's
    /// exec credential plugin, if it has one: that run ends by then too.
    pub deadline: Option<std::time::Instant>,
    /// `--max-response-size`: what the response bodies being read at once may hold.
    pub response_budget: ResponseBudget,
}

/// `--max-response-size`: what the bodies of the responses being read at once from one
/// server may hold together (a watch's lines are bounded apart), divided between the clusters
/// a fleet reads at once (each at least [`MIN_CLUSTER_SHARE`]). Nothing answers a read with more, short of a flood: an endless
/// `{{{…` body once took 6 GB, and a fleet with one such cluster all the machine's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseBudget {
    /// `--max-response-size`, in bytes.
    pub total: usize,
    /// How many clusters are read at once, each with its share (1 for one cluster).
    pub shared_by: usize,
}

/// What `--max-response-size` is when not given: far past any page of a list (5,000 objects)
/// or any object (etcd holds at most about 1.5 MiB), far short of what the machine holds.
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = 256 * 1024 * 1024;

impl Default for ResponseBudget {
    fn default() -> Self {
        ResponseBudget {
            total: DEFAULT_MAX_RESPONSE_SIZE,
            shared_by: 1,
        }
    }
}

/// The least share of `--max-response-size` a cluster of a fleet gets, however many are read
/// at once: a page of 5,000 pods with their managedFields can be tens of megabytes, and a
/// share too small for it would fail a healthy cluster. What all the clusters read at once hold
/// together is bounded apart, by [`FLEET_BODY_CAP`](service::FLEET_BODY_CAP).
pub const MIN_CLUSTER_SHARE: usize = 128 * 1024 * 1024;

impl ResponseBudget {
    /// What one cluster's responses may hold: its share of the total, at least
    /// [`MIN_CLUSTER_SHARE`] (or the total, when that is less).
    pub fn per_cluster(&self) -> usize {
        (self.total / self.shared_by.max(1)).max(self.total.min(MIN_CLUSTER_SHARE))
    }

    /// `256 MiB (--max-response-size)`, or in a fleet `16 MiB (--max-response-size 256 MiB,
    /// shared by 16 clusters read at once)`.
    pub fn describe(&self) -> String {
        if self.per_cluster() < self.total {
            format!(
                "{} (--max-response-size {}, shared by {} clusters read at once)",
                mebibytes(self.per_cluster()),
                mebibytes(self.total),
                self.shared_by
            )
        } else {
            format!("{} (--max-response-size)", mebibytes(self.total))
        }
    }
}

/// `256 MiB`, `1.5 MiB`, `900 KiB`: a size as a person reads it.
pub fn mebibytes(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else if bytes >= 1024 {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// kubectl has no default request timeout; we never wait without a bound.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Watches ask the server to end them after this long (`timeoutSeconds`) and are re-opened:
/// a quiet but healthy watch sends nothing, so the read timeout of a watch is this plus the
/// request timeout, never the request timeout alone.
pub(crate) const WATCH_SECONDS: u32 = 60;

/// A connection to one API server, counting every request it sends.
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    /// The same server with a read timeout long enough for a quiet watch ([`WATCH_SECONDS`]),
    /// built when the first watch opens: a one-shot command never pays for a second client
    /// (its TLS set-up reads the system's certificates again).
    watch_client: Arc<std::sync::OnceLock<kube::Client>>,
    default_ns: String,
    /// The API server's URL and the proxy to it, as every message shows them (masked).
    endpoint: Endpoint,
    /// The kubeconfig context in use (none in a pod's service account).
    context: Option<String>,
    requests: Arc<AtomicU64>,
    request_timeout: Duration,
    /// `--max-response-size`, this cluster's share of it: shared by its request and watch
    /// clients.
    bodies: service::BodyBudget,
    /// What the clients were built from, to rebuild them with another timeout (its exec
    /// plugin taken out: see `exec_token`).
    config: kube::Config,
    /// The token the kubeconfig user's exec plugin issued, refreshed within the request
    /// timeout (see [`exec_plugin`]).
    exec_token: Option<exec_plugin::ExecToken>,
    /// Bounds (and the deadline) for decoding the Helm releases followed while gathering.
    release_limits: liveproof_helm::Limits,
    /// The releases decoded so far, shared with the command that judges them.
    decode_cache: Arc<crate::releases::DecodeCache>,
    /// From how many targets of a kind in a namespace one LIST replaces a GET each
    /// ([`BATCH_AT`](plan::BATCH_AT)).
    batch_at: usize,
    /// The workloads a `-l` selector just listed whole ([`Cluster::workloads_in`]), for the
    /// next gather to take instead of reading them a second time.
    prefetched: Arc<std::sync::Mutex<Vec<AnyObject>>>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("server", &self.endpoint.server)
            .field("default_ns", &self.default_ns)
            .field("requests", &self.request_count())
            .finish_non_exhaustive()
    }
}

/// The outcome of a read that RBAC may refuse.
enum Read<T> {
    Got(T),
    Denied(String),
}

impl<T> Read<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Read<U> {
        match self {
            Read::Got(t) => Read::Got(f(t)),
            Read::Denied(message) => Read::Denied(message),
        }
    }
}

impl Cluster {
    /// Connects as kubectl would: `--kubeconfig` (that file), else `--context` of the
    /// `KUBECONFIG`/`~/.kube/config` kubeconfig, else the inferred configuration (kubeconfig,
    /// then the in-cluster service account). Sends no request.
    pub async fn connect(opts: &ClusterOptions) -> Result<Cluster, GatherError> {
        // kube reads the files the context names while it loads: a FIFO among them would
        // block it forever, so they are looked at first.
        let kubeconfig = kubeconfig_of(opts);
        if let Some(kubeconfig) = &kubeconfig {
            check_referenced_files(kubeconfig, opts.context.as_deref())?;
        }
        let kc_opts = KubeConfigOptions {
            context: opts.context.clone(),
            cluster: None,
            user: None,
        };
        let config = match &opts.kubeconfig {
            Some(path) => {
                let kubeconfig_err =
                    |source: kube::config::KubeconfigError| GatherError::Kubeconfig {
                        path: path.clone(),
                        reason: error::kubeconfig_reason(&source),
                    };
                let kubeconfig = read_kubeconfig(path)?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &kc_opts)
                    .await
                    .map_err(kubeconfig_err)?
            }
            // kube-rs refuses a KUBECONFIG list with a missing file; kubectl skips it.
            None if kubeconfig_env_list().is_some() => {
                let config_err = |source: kube::config::KubeconfigError| GatherError::Config {
                    context: opts.context.clone(),
                    reason: error::kubeconfig_reason(&source),
                };
                let kubeconfig = read_kubeconfig_list(kubeconfig_env_list().unwrap_or_default())?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &kc_opts)
                    .await
                    .map_err(config_err)?
            }
            None if opts.context.is_some() => {
                check_default_kubeconfig()?;
                kube::Config::from_kubeconfig(&kc_opts)
                    .await
                    .map_err(|source| GatherError::Config {
                        context: opts.context.clone(),
                        reason: error::kubeconfig_reason(&source),
                    })?
            }
            // kubectl's rule: no kubeconfig at all, inside a pod, is the pod's ServiceAccount.
            None => match in_cluster::service_env().filter(|_| !default_kubeconfig_exists()) {
                Some((host, port)) => in_cluster::config(&host, &port)?,
                None => {
                    check_default_kubeconfig()?;
                    kube::Config::infer()
                        .await
                        .map_err(|source| GatherError::NoConfig {
                            reason: error::infer_reason(&source),
                        })?
                }
            },
        };
        // kube reads HTTPS_PROXY for every server; kubectl (Go) never proxies loopback, reads
        // HTTP_PROXY for http servers and matches NO_PROXY against the server: do as kubectl.
        let mut config = config;
        let kubeconfig_proxy = kubeconfig.as_ref().and_then(|k| cluster_proxy_url(k, opts));
        config.proxy_url =
            proxy::proxy_for(&config.cluster_url, kubeconfig_proxy.as_deref(), &|name| {
                std::env::var(name).ok()
            })
            .map(|p| {
                p.parse::<http::Uri>().map_err(|_| GatherError::Client {
                    server: DisplaySafeUrl::new(config.cluster_url.to_string()),
                    cause: "the proxy URL (proxy-url, HTTPS_PROXY or HTTP_PROXY) is not a URL"
                        .into(),
                })
            })
            .transpose()?;
        if let Some(p) = &config.proxy_url {
            tracing::info!("through the proxy {}", DisplaySafeUrl::new(p.to_string()));
        }
        let timeout = opts.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT);
        let first_plugin_run = opts.deadline.map_or(timeout, |at| {
            timeout.min(at.saturating_duration_since(std::time::Instant::now()))
        });
        let proxy = config
            .proxy_url
            .as_ref()
            .map(|p| DisplaySafeUrl::new(p.to_string()));
        let mut cluster = Cluster::within(
            config,
            opts.namespace.clone(),
            timeout,
            first_plugin_run,
            opts.response_budget,
        )
        .await?;
        cluster.endpoint.proxy = proxy;
        cluster.context = opts
            .context
            .clone()
            .or_else(|| kubeconfig.and_then(|k| k.current_context));
        Ok(cluster)
    }

    /// A cluster from an already built configuration (`namespace` overrides its default),
    /// with the [`DEFAULT_REQUEST_TIMEOUT`]. Async because the client's request queue runs on
    /// the current Tokio runtime.
    pub async fn from_config(
        config: kube::Config,
        namespace: Option<String>,
    ) -> Result<Cluster, GatherError> {
        let timeout = DEFAULT_REQUEST_TIMEOUT;
        Cluster::within(
            config,
            namespace,
            timeout,
            timeout,
            ResponseBudget::default(),
        )
        .await
    }

    /// [`Cluster::from_config`] with each request (and each run of an exec credential plugin)
    /// bounded by `timeout`; the plugin runs here first, within `first_plugin_run`.
    async fn within(
        mut config: kube::Config,
        namespace: Option<String>,
        timeout: Duration,
        first_plugin_run: Duration,
        response_budget: ResponseBudget,
    ) -> Result<Cluster, GatherError> {
        config.cluster_url = bare_server_url(&config.cluster_url);
        let server = config.cluster_url.to_string();
        let server = DisplaySafeUrl::new(server.trim_end_matches('/'));
        if let Some(ns) = namespace {
            config.default_namespace = ns;
        }
        let default_ns = config.default_namespace.clone();
        // Our own retry layer sits outside the request counter; kube's would retry unseen.
        config.default_retry = false;
        let exec_token = exec_plugin::authenticate(&mut config, first_plugin_run, timeout)
            .await
            .map_err(|cause| GatherError::ExecPlugin {
                server: server.clone(),
                cause: cause.to_string(),
            })?;
        let requests = Arc::new(AtomicU64::new(0));
        let bodies = service::BodyBudget::new(response_budget);
        let client = build_client(
            &config,
            &server,
            &requests,
            Bounds {
                timeout,
                read_timeout: timeout,
                bodies: bodies.clone(),
            },
            exec_token.as_ref(),
        )?;
        Ok(Cluster {
            client,
            watch_client: Arc::default(),
            default_ns,
            endpoint: Endpoint {
                server,
                proxy: None,
            },
            context: None,
            requests,
            request_timeout: timeout,
            bodies,
            config,
            exec_token,
            release_limits: liveproof_helm::Limits::default(),
            decode_cache: Arc::default(),
            batch_at: plan::BATCH_AT,
            prefetched: Arc::default(),
        })
    }

    /// The kubeconfig context in use, for the report (none in a pod's service account).
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// The same cluster with another `--request-timeout` (the clients are rebuilt; no request
    /// is sent).
    pub fn with_request_timeout(mut self, timeout: Duration) -> Result<Cluster, GatherError> {
        self.exec_token = self.exec_token.map(|t| t.with_timeout(timeout));
        self.client = build_client(
            &self.config,
            &self.endpoint.server,
            &self.requests,
            Bounds {
                timeout,
                read_timeout: timeout,
                bodies: self.bodies.clone(),
            },
            self.exec_token.as_ref(),
        )?;
        self.watch_client = Arc::default();
        self.request_timeout = timeout;
        Ok(self)
    }

    /// How long one request may take.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// A client error met while reading `what`, as the error a person can act on.
    pub fn kube_error(&self, what: &str, err: kube::Error) -> GatherError {
        GatherError::from_kube(&self.endpoint, self.request_timeout, what, err)
    }

    /// `-n`, else the context's namespace (or the service account's), else `default`.
    pub fn default_namespace(&self) -> &str {
        &self.default_ns
    }

    /// The client requests go through: each bounded by `--request-timeout`, and counted. For
    /// reads made outside this crate: the controller's, and the Verification object `liveproof
    /// verify verification/NAME` reads.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The same connection with targets that name no namespace read in `namespace` (the
    /// controller's: each Verification's own), and its own `-l` prefetch (two Verifications
    /// judged at once never take each other's listed workloads).
    pub fn in_namespace(mut self, namespace: &str) -> Cluster {
        self.default_ns = namespace.to_string();
        self.prefetched = Arc::default();
        self
    }

    /// The API server's URL, as errors name it (masked: it may carry a password).
    pub fn server(&self) -> &DisplaySafeUrl {
        &self.endpoint.server
    }

    /// Decodes the Helm releases it follows within `limits` (`--max-release-size`, and the
    /// command's deadline so a large release cannot hold it past `--timeout`), keeping what it
    /// decoded in `cache` (the command's, so nothing is decoded twice).
    pub fn with_release_limits(
        mut self,
        limits: liveproof_helm::Limits,
        cache: Arc<crate::releases::DecodeCache>,
    ) -> Self {
        self.release_limits = limits;
        self.decode_cache = cache;
        self
    }

    /// Decodes the Helm release storage `observed` holds (see [`crate::releases::decode`]).
    pub async fn decode_releases(&self, observed: &mut Observed) {
        crate::releases::decode(observed, self.release_limits, &self.decode_cache).await;
    }

    /// Reads from `batch_at` targets of a kind in a namespace (and pod selectors in a
    /// namespace) with one LIST of the namespace: `usize::MAX` reads every target alone, 1
    /// batches everything. The reports are the same either way (tested on the corpus); only
    /// the requests differ. Default: [`BATCH_AT`](plan::BATCH_AT).
    pub fn with_batch_at(mut self, batch_at: usize) -> Self {
        self.batch_at = batch_at.max(1);
        self
    }

    /// Every HTTP request sent so far, retries included.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Reads the targets into one snapshot.
    ///
    /// - Helm and GitOps targets first (see `sources`): a `release/` target's storage Secrets
    ///   and ConfigMaps (one LIST each, by label selector), a HelmRelease with its chart's
    ///   GitRepository and its Helm release's storage, a Kustomization with its GitRepository,
    ///   an Application. These land raw in [`Observed::others`]. A missing object, or a
    ///   resource type the server does not serve (Flux or Argo CD not installed), is absent and
    ///   its `(namespace, kind)` complete; a successful storage LIST marks `(namespace, Secret)`
    ///   / `(namespace, ConfigMap)` complete.
    /// - Then the workloads: the workload targets (Deployment, StatefulSet, DaemonSet) and the
    ///   workloads the Helm/GitOps targets lead to (their installed manifest, inventory or
    ///   resource list), each with its revisions and its pods.
    ///
    /// - A workload target without a namespace is looked up in [`Cluster::default_namespace`],
    ///   or with `all_namespaces` in every namespace; [`resolve_targets`](liveproof_evidence::resolve_targets)
    ///   then says which namespaces to judge it in. Helm and GitOps targets without a namespace
    ///   are read in the default namespace, `-A` or not.
    /// - A missing workload is absent and its `(namespace, kind)` is marked complete, so its
    ///   absence is authoritative (`("", kind)` when `-A` found it in no namespace).
    /// - `(namespace, kind)` is marked complete for every successful LIST; `(namespace, Pod)`
    ///   when every pod LIST there succeeded (complete for the workloads' selectors).
    pub async fn gather(
        &self,
        targets: &[Target],
        all_namespaces: bool,
    ) -> Result<Observed, GatherError> {
        let mut observed = Observed::default();
        self.read_sources(targets, &mut observed).await?;
        // Which workloads a release leads to is in its manifest.
        self.decode_releases(&mut observed).await;
        let workloads = self.workload_targets(&observed, targets);
        self.gather_workloads(observed, &workloads, all_namespaces)
            .await
    }

    /// The workload targets given, then the workloads the others lead to in `observed`.
    fn workload_targets(&self, observed: &Observed, targets: &[Target]) -> Vec<Target> {
        let mut out: Vec<Target> = targets
            .iter()
            .filter(|t| t.kind.is_workload())
            .cloned()
            .collect();
        out.extend(sources::followed(observed, targets, &self.default_ns));
        out
    }

    /// The workload half of [`Cluster::gather`], into `observed`.
    async fn gather_workloads(
        &self,
        mut observed: Observed,
        targets: &[Target],
        all_namespaces: bool,
    ) -> Result<Observed, GatherError> {
        // What `-l` already listed whole is taken as read: one round trip fewer, and the
        // same objects are not read (and parsed) twice.
        let prefetched = std::mem::take(
            &mut *self
                .prefetched
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        // A workload target as `(resource, namespace, name)`, its namespace resolved as the
        // lookups resolve it (none with -A: found by name in any namespace, so looked up).
        let identity = |t: &Target| {
            let resource = objects::workload_resource(t.kind)?;
            let namespace = match (&t.namespace, all_namespaces) {
                (Some(ns), _) => ns.clone(),
                (None, false) => self.default_ns.clone(),
                (None, true) => return None,
            };
            Some((resource, namespace, t.name.clone()))
        };
        let wanted: std::collections::HashSet<_> = targets.iter().filter_map(identity).collect();
        let mut found = std::collections::HashSet::new();
        for object in prefetched {
            let id = (
                object.resource(),
                object.namespace().to_string(),
                object.name().to_string(),
            );
            if wanted.contains(&id) && found.insert(id) {
                object.push_into(&mut observed);
            }
        }
        let unread: Vec<Target> = targets
            .iter()
            .filter(|t| identity(t).is_none_or(|id| !found.contains(&id)))
            .cloned()
            .collect();
        let lookups = plan_lookups(&unread, &self.default_ns, all_namespaces);
        let reads = plan_reads(lookups, self.batch_at);
        let mut answers = Vec::new();
        for answered in join_all(reads.iter().map(|r| self.read_lookups(r))).await {
            answers.extend(answered?);
        }
        for (lookup, read) in answers {
            match read {
                Read::Got(objects) => {
                    if objects.is_empty() {
                        // Found in no namespace with -A: absent everywhere (ALL_NAMESPACES).
                        let ns = lookup
                            .namespace
                            .as_deref()
                            .unwrap_or(liveproof_evidence::ALL_NAMESPACES);
                        observed.mark_complete(ns, lookup.resource);
                    }
                    for object in objects {
                        object.push_into(&mut observed);
                    }
                }
                Read::Denied(message) => observed.denied.push(Denied {
                    namespace: lookup.namespace.clone(),
                    resource: lookup.resource,
                    verb: if lookup.namespace.is_some() {
                        "get"
                    } else {
                        "list"
                    }
                    .to_string(),
                    message,
                }),
            }
        }

        let plan = plan_related(&observed);
        let mut jobs: Vec<BoxFuture<'_, (Related, Listed)>> = Vec::new();
        for (resource, ns) in plan.namespace_lists() {
            let what = format!("{} in namespace {ns}", resource.plural());
            let job = Related::Namespace(*resource, ns.clone());
            jobs.push(
                self.list_dyn(
                    *resource,
                    Some(ns.clone()),
                    ListParams::default(),
                    Keep::All,
                    what,
                )
                .map(move |r| (job, r.map(|read| read.map(Listing::Any))))
                .boxed(),
            );
        }
        for (ns, read) in plan.pod_reads(self.batch_at) {
            let (what, lp, keep) = match read {
                PodRead::Selector(selector) => (
                    format!("pods in namespace {ns} matching `{selector}`"),
                    ListParams::default().labels(&selector),
                    Keep::All,
                ),
                PodRead::Namespace(selectors) => (
                    format!("pods in namespace {ns}"),
                    ListParams::default(),
                    Keep::Selected(Selectors::new(selectors)),
                ),
            };
            let job = Related::Pods(ns.clone());
            jobs.push(
                self.list_typed::<Pod>(Some(ns), lp, keep, what)
                    .map(move |r| (job, r.map(|read| read.map(Listing::Pods))))
                    .boxed(),
            );
        }
        let mut pods_complete: BTreeMap<String, bool> = BTreeMap::new();
        for ns in &plan.pods_incomplete {
            pods_complete.insert(ns.clone(), false);
        }
        for (job, result) in join_all(jobs).await {
            let (resource, ns) = match &job {
                Related::Namespace(resource, ns) => (*resource, ns.clone()),
                Related::Pods(ns) => (ResourceKind::Pod, ns.clone()),
            };
            let ok = match result? {
                Read::Got(listing) => {
                    listing.push_into(&mut observed);
                    true
                }
                Read::Denied(message) => {
                    observed.denied.push(Denied {
                        namespace: Some(ns.clone()),
                        resource,
                        verb: "list".to_string(),
                        message,
                    });
                    false
                }
            };
            match job {
                Related::Namespace(..) if ok => observed.mark_complete(&ns, resource),
                Related::Namespace(..) => {}
                Related::Pods(_) => {
                    let entry = pods_complete.entry(ns).or_insert(true);
                    *entry = *entry && ok;
                }
            }
        }
        for (ns, complete) in pods_complete {
            if complete {
                observed.mark_complete(&ns, ResourceKind::Pod);
            }
        }
        Ok(normalize(observed))
    }

    /// For `--wait`: gathers once, then watches (never polls) the targets, their revisions and
    /// their pods. The stream's first item is the initial snapshot; after that, a fresh
    /// snapshot after every burst of changes (bursts are gathered for ~100 ms). It runs until
    /// dropped: stop consuming at a final verdict or a timeout. See [`ObservedStream`].
    pub async fn watch(
        &self,
        targets: &[Target],
        all_namespaces: bool,
    ) -> Result<ObservedStream, GatherError> {
        let initial = self.gather(targets, all_namespaces).await?;
        Ok(watch::start(self.clone(), targets, all_namespaces, initial))
    }

    /// For each target whose namespace holds nothing `observed` read (so the target is
    /// missing), asks whether that namespace exists (one GET each; nothing at all when every
    /// target was found). A namespace that does not exist is an error (a usage error: exit 2)
    /// with a did-you-mean from the namespaces that exist, when they can be listed. A refused
    /// GET (403) does not block: the target is then simply reported missing.
    ///
    /// `targets` are resolved ([`resolve_targets`](liveproof_evidence::resolve_targets)); a `-A` target
    /// found nowhere (namespace `""`) is not checked. A target with an empty name stands for
    /// its namespace alone (e.g. a snapshot's `-n`).
    pub async fn check_namespaces(
        &self,
        observed: &Observed,
        targets: &[Target],
    ) -> Result<(), GatherError> {
        let mut holding: BTreeSet<String> = BTreeSet::new();
        {
            let mut hold = |meta: objects::Meta<'_>| {
                let ns = meta.namespace().unwrap_or("default");
                if !holding.contains(ns) {
                    holding.insert(ns.to_string());
                }
            };
            // Read in place: 10,000 pods are not copied to learn a few namespaces.
            for_each_typed_kind!(T => {
                T::held(observed).iter().for_each(|o| hold(o.meta_view()));
            });
        }
        holding.extend(observed.others.iter().filter_map(|o| {
            o.pointer("/metadata/namespace")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        }));
        let mut checked = BTreeSet::new();
        for target in targets {
            let ns = target.namespace_or(&self.default_ns);
            if ns.is_empty() || holding.contains(ns) || !checked.insert(ns.to_string()) {
                continue;
            }
            let api: Api<Namespace> = Api::all(self.client.clone());
            match api.get_opt(ns).await {
                Ok(Some(_)) => {}
                Ok(None) => {
                    let known: Option<Vec<String>> = match api.list(&ListParams::default()).await {
                        Ok(list) => Some(
                            list.items
                                .into_iter()
                                .filter_map(|n| n.metadata.name)
                                .collect(),
                        ),
                        Err(err) => {
                            tracing::debug!("namespaces not listed: {err}");
                            None
                        }
                    };
                    let suggestion = known.as_ref().and_then(|k| {
                        liveproof_evidence::closest(ns, k.iter().map(String::as_str))
                            .map(str::to_string)
                    });
                    return Err(GatherError::NoNamespace {
                        server: self.endpoint.server.clone(),
                        namespace: ns.to_string(),
                        target: if target.name.is_empty() {
                            String::new()
                        } else {
                            format!("{} {}", target.kind.cli_name(), target.name)
                        },
                        suggestion,
                        known: known.filter(|k| k.len() <= 20),
                    });
                }
                Err(kube::Error::Api(status)) if status.code == 403 => {
                    tracing::debug!("cannot check namespace {ns}: {}", status.message);
                }
                Err(err) => return Err(self.kube_error(&format!("namespace {ns}"), err)),
            }
        }
        Ok(())
    }

    /// The error for targets the cluster says do not exist (see
    /// [`absent_targets`](liveproof_evidence::absent::absent_targets)), the first of them named,
    /// with a did-you-mean from the names that kind has there (one metadata LIST; a release's
    /// names are its storage objects' `name` labels). `None` when nothing is absent.
    pub async fn not_found(
        &self,
        absent: &[liveproof_evidence::absent::Absent],
    ) -> Option<GatherError> {
        let first = absent.first()?;
        let ns = (first.namespace != liveproof_evidence::ALL_NAMESPACES)
            .then_some(first.namespace.as_str());
        let kind = first.target.kind.cli_name();
        let listed_by = liveproof_evidence::kind::lister(first.target.kind);
        let lister = match listed_by {
            Lister::Helm => "helm list".to_string(),
            Lister::Kubectl => format!("kubectl get {}", first.resource.plural()),
        };
        let list = match ns {
            Some(ns) => format!("{lister} -n {ns}"),
            None => format!("{lister} -A"),
        };
        let first_deploy = "--wait waits for a first deploy to create it";
        let hint = match self.names(first.resource, listed_by, ns).await {
            Err(NamesUnread::NotServed) => format!(
                "the API server does not serve {}.{} at all: is the controller that defines it installed? (kubectl api-resources lists what it serves)",
                first.resource.plural(),
                first.resource.group()
            ),
            Ok(names) => {
                match liveproof_evidence::closest(&first.target.name, names.iter().map(String::as_str)) {
                    Some(near) => format!("did you mean `{near}`? ({list}); {first_deploy}"),
                    None if !names.is_empty() && names.len() <= 20 => format!(
                        "the names there are: {} ({list}); {first_deploy}",
                        names.join(", ")
                    ),
                    None => format!("check the name and namespace ({list}; -A looks in every namespace); {first_deploy}"),
                }
            }
            Err(NamesUnread::Failed) => format!(
                "check the name and namespace ({list}; -A looks in every namespace); {first_deploy}"
            ),
        };
        let more = if absent.len() > 1 {
            format!(" (and {} more target(s))", absent.len() - 1)
        } else {
            String::new()
        };
        Some(GatherError::NotFound {
            server: self.endpoint.server.clone(),
            what: match ns {
                Some(ns) => format!("{kind} {ns}/{}{more}", first.target.name),
                None => format!("{kind} {}{more}", first.target.name),
            },
            where_: match ns {
                Some(ns) => format!("in namespace {ns}"),
                None => "in every namespace".to_string(),
            },
            hint,
        })
    }

    /// [`Cluster::names`], or none when they cannot be listed: what shell completion offers.
    pub async fn listed_names(
        &self,
        resource: ResourceKind,
        listed_by: Lister,
        namespace: Option<&str>,
    ) -> Vec<String> {
        self.names(resource, listed_by, namespace)
            .await
            .unwrap_or_default()
    }

    /// The names of `resource`'s objects in `namespace` (every namespace when `None`), by one
    /// metadata LIST; for a kind listed by Helm (`resource` its storage), the releases they
    /// store. `None` when they cannot be
    /// listed, why not.
    async fn names(
        &self,
        resource: ResourceKind,
        listed_by: Lister,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, NamesUnread> {
        let ar = objects::api_resource(resource);
        let api: Api<kube::api::DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let storage = listed_by == Lister::Helm;
        let params = if storage {
            ListParams::default().labels("owner=helm").limit(500)
        } else {
            ListParams::default().limit(500)
        };
        let list = match api.list_metadata(&params).await {
            Ok(list) => list,
            Err(kube::Error::Api(status)) if status.code == 404 => {
                return Err(NamesUnread::NotServed)
            }
            Err(err) => {
                tracing::debug!("names of {} not listed: {err}", resource.plural());
                return Err(NamesUnread::Failed);
            }
        };
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|o| {
                if storage {
                    o.metadata.labels.and_then(|mut l| l.remove("name"))
                } else {
                    o.metadata.name
                }
            })
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Reads a group of lookups: each alone, or the kind's objects of the namespace in one
    /// paginated LIST, answering each lookup from it (a missing name is then absent, as a GET
    /// would say). A refused LIST falls back to a request per lookup, as RBAC may grant `get`
    /// on named objects without `list`. The answers come back per lookup, in order.
    async fn read_lookups(
        &self,
        read: &LookupRead,
    ) -> Result<Vec<(Lookup, Read<Vec<AnyObject>>)>, GatherError> {
        let (resource, namespace, lookups) = match read {
            LookupRead::One(lookup) => {
                return Ok(vec![(lookup.clone(), self.lookup(lookup).await?)]);
            }
            LookupRead::Batch {
                resource,
                namespace,
                lookups,
            } => (*resource, namespace, lookups),
        };
        let what = match namespace {
            Some(ns) => format!("{} in namespace {ns}", resource.plural()),
            None => format!("{} in all namespaces", resource.plural()),
        };
        let names = lookups.iter().map(|l| l.name.clone()).collect();
        let listed = self
            .list_dyn(
                resource,
                namespace.clone(),
                ListParams::default(),
                Keep::Named(names),
                what,
            )
            .await?;
        match listed {
            Read::Got(objects) => {
                let mut by_name: BTreeMap<String, Vec<AnyObject>> = BTreeMap::new();
                for object in objects {
                    by_name
                        .entry(object.name().to_string())
                        .or_default()
                        .push(object);
                }
                Ok(lookups
                    .iter()
                    .map(|l| {
                        let found = by_name.remove(&l.name).unwrap_or_default();
                        (l.clone(), Read::Got(found))
                    })
                    .collect())
            }
            Read::Denied(message) => {
                tracing::debug!(
                    "{} not listable ({message}): one request each",
                    resource.plural()
                );
                let each = join_all(lookups.iter().map(|l| self.lookup(l))).await;
                lookups
                    .iter()
                    .zip(each)
                    .map(|(l, r)| Ok((l.clone(), r?)))
                    .collect()
            }
        }
    }

    async fn lookup(&self, lookup: &Lookup) -> Result<Read<Vec<AnyObject>>, GatherError> {
        match &lookup.namespace {
            Some(ns) => Ok(
                match self.get_dyn(lookup.resource, ns, &lookup.name).await? {
                    Read::Got(object) => Read::Got(object.into_iter().collect()),
                    Read::Denied(message) => Read::Denied(message),
                },
            ),
            None => {
                let what = format!(
                    "{} named {} in all namespaces",
                    lookup.resource.plural(),
                    lookup.name
                );
                let lp = ListParams::default().fields(&format!("metadata.name={}", lookup.name));
                self.list_dyn(lookup.resource, None, lp, Keep::All, what)
                    .await
            }
        }
    }

    fn get_dyn<'a>(
        &'a self,
        resource: ResourceKind,
        ns: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Read<Option<AnyObject>>, GatherError>> {
        // Nodes are cluster-scoped and not gathered here; raw kinds (Helm storage, GitOps
        // objects) are not typed objects.
        dispatch!(
            resource,
            T => self.get::<T>(ns, name).boxed(),
            else => futures::future::ready(Ok(Read::Got(None))).boxed(),
        )
    }

    fn list_dyn(
        &self,
        resource: ResourceKind,
        ns: Option<String>,
        lp: ListParams,
        keep: Keep,
        what: String,
    ) -> BoxFuture<'_, Result<Read<Vec<AnyObject>>, GatherError>> {
        dispatch!(
            resource,
            T => self.list::<T>(ns, lp, keep, what).boxed(),
            else => futures::future::ready(Ok(Read::Got(Vec::new()))).boxed(),
        )
    }

    async fn get<K: Kind>(
        &self,
        ns: &str,
        name: &str,
    ) -> Result<Read<Option<AnyObject>>, GatherError> {
        let api: Api<K::Wire> = Api::namespaced(self.client.clone(), ns);
        match api.get_opt(name).await {
            Ok(object) => Ok(Read::Got(object.map(|o| K::from_wire(o).into_any()))),
            Err(err) => {
                self.denied_or_error(&format!("{} {ns}/{name}", K::RESOURCE.kind_name()), err)
            }
        }
    }

    /// A LIST in pages of [`PAGE_SIZE`](plan::PAGE_SIZE) (`limit`, then `continue`),
    /// keeping what `keep` keeps page by page. When the server has compacted
    /// past a continue token (410 Gone), the LIST starts over once without pages, as
    /// client-go's pager does.
    async fn list<K: Kind>(
        &self,
        ns: Option<String>,
        lp: ListParams,
        keep: Keep,
        what: String,
    ) -> Result<Read<Vec<AnyObject>>, GatherError> {
        Ok(self
            .list_typed::<K>(ns, lp, keep, what)
            .await?
            .map(|objects| objects.into_iter().map(K::wrap).collect()))
    }

    /// A LIST in pages of [`PAGE_SIZE`](plan::PAGE_SIZE) (`limit`, then `continue`),
    /// keeping what `keep` keeps page by page, each object
    /// [slimmed](objects::slim). When the server has compacted past a continue token (410
    /// Gone), the LIST starts over once without pages, as client-go's pager does.
    async fn list_typed<K: Kind>(
        &self,
        ns: Option<String>,
        lp: ListParams,
        keep: Keep,
        what: String,
    ) -> Result<Read<Vec<Arc<K>>>, GatherError> {
        let api: Api<K::Wire> = match &ns {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        };
        let listed = pager::list_pages(
            &lp,
            self.request_timeout,
            page::lister(&api),
            // Each item as its page is decoded: a page is never held twice over.
            |o: K::Wire| {
                let o = K::from_wire(o);
                keep.keeps(o.meta_view()).then(|| Arc::new(o))
            },
        )
        .await;
        match listed {
            Ok(kept) => Ok(Read::Got(kept)),
            Err(pager::PageError::Api(err)) => self.denied_or_error(&what, err),
            Err(pager::PageError::Endless(why)) => Err(self.incomplete(&what, why)),
        }
    }

    /// A list the server never completed (see [`pager`]).
    pub(crate) fn incomplete(&self, what: &str, why: String) -> GatherError {
        GatherError::IncompleteList {
            server: self.endpoint.server.clone(),
            what: what.to_string(),
            why,
        }
    }

    /// Every page of a LIST `fetch` answers, as [`pager::list_pages`]; a failure is the error
    /// for `what`.
    pub(crate) async fn list_all<T, U, B, F, Fut>(
        &self,
        what: &str,
        params: &ListParams,
        fetch: F,
        keep: impl FnMut(T) -> Option<U>,
    ) -> Result<Vec<U>, GatherError>
    where
        B: pager::PageBody<T>,
        F: FnMut(ListParams) -> Fut,
        Fut: std::future::Future<Output = Result<B, kube::Error>>,
    {
        pager::list_pages(params, self.request_timeout, fetch, keep)
            .await
            .map_err(|e| match e {
                pager::PageError::Api(err) => self.kube_error(what, err),
                pager::PageError::Endless(why) => self.incomplete(what, why),
            })
    }

    fn denied_or_error<T>(&self, what: &str, err: kube::Error) -> Result<Read<T>, GatherError> {
        match &err {
            kube::Error::Api(status) if status.code == 403 => {
                tracing::debug!(what, "forbidden: {}", status.message);
                Ok(Read::Denied(status.message.clone()))
            }
            _ => Err(self.kube_error(what, err)),
        }
    }
}

/// The contexts of the kubeconfig kubectl would read (`--kubeconfig`, else the `KUBECONFIG`
/// list, else `~/.kube/config`), in its order: what `--all-contexts` verifies.
pub fn kubeconfig_contexts(opts: &ClusterOptions) -> Result<Vec<String>, GatherError> {
    let kubeconfig = match &opts.kubeconfig {
        Some(path) => read_kubeconfig(path)?,
        None => match kubeconfig_env_list() {
            Some(list) => read_kubeconfig_list(list)?,
            None => {
                check_default_kubeconfig()?;
                Kubeconfig::read().map_err(|source| GatherError::Config {
                    context: None,
                    reason: error::kubeconfig_reason(&source),
                })?
            }
        },
    };
    Ok(kubeconfig.contexts.into_iter().map(|c| c.name).collect())
}

/// A kubeconfig context and the namespace it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextNamespace {
    pub context: String,
    pub namespace: String,
}

/// The namespace the context in use names (`--context`, else the kubeconfig's current one),
/// read from the kubeconfig kubectl would read — the file only, nothing is sent: what `--from`
/// takes for targets that name none, as live mode does. `None` without a kubeconfig, or when
/// the context names no namespace.
pub fn context_namespace(opts: &ClusterOptions) -> Option<ContextNamespace> {
    let kubeconfig = kubeconfig_of(opts)?;
    let context = opts
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())?;
    let namespace = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .namespace
        .clone()
        .filter(|ns| !ns.is_empty())?;
    Some(ContextNamespace { context, namespace })
}

/// The kubeconfig kubectl would read (`None` when there is none: in a pod, the service
/// account is used).
fn kubeconfig_of(opts: &ClusterOptions) -> Option<Kubeconfig> {
    match &opts.kubeconfig {
        Some(path) => read_kubeconfig(path).ok(),
        None => match kubeconfig_env_list() {
            Some(list) => read_kubeconfig_list(list).ok(),
            None => {
                check_default_kubeconfig().ok()?;
                Kubeconfig::read().ok()
            }
        },
    }
}

/// Reads the kubeconfig at `path`, refusing a FIFO, device or socket (reading one blocked
/// forever) with an error naming it.
///
/// Parsed once while the file holds the same bytes: a fleet connects to each of its contexts
/// from the same file, and parsed every context of it for each (work growing with the square
/// of the contexts). Each context still takes its own cluster, user and namespace from it; a
/// file that changed is parsed again, one that fails to parse is never kept.
fn read_kubeconfig(path: &std::path::Path) -> Result<Kubeconfig, GatherError> {
    check_kubeconfig(path)?;
    let before = std::fs::read(path).ok();
    if let Some(parsed) = before
        .as_deref()
        .and_then(|bytes| parsed_kubeconfigs::get(path, bytes))
    {
        return Ok(parsed);
    }
    let parsed = Kubeconfig::read_from(path).map_err(|source| GatherError::Kubeconfig {
        path: path.to_path_buf(),
        reason: error::kubeconfig_reason(&source),
    })?;
    // Kept only when the file did not change while kube read it: what is kept is the parse
    // of those bytes.
    if let Some(bytes) = before.filter(|bytes| std::fs::read(path).ok().as_ref() == Some(bytes)) {
        parsed_kubeconfigs::keep(path, bytes, &parsed);
    }
    Ok(parsed)
}

/// The kubeconfig files parsed so far in this process, by path, with the bytes they were
/// parsed from.
mod parsed_kubeconfigs {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, PoisonError};

    use kube::config::Kubeconfig;

    /// Each file's bytes and what they parsed to.
    type Parsed = HashMap<PathBuf, (Vec<u8>, Kubeconfig)>;

    static PARSED: Mutex<Option<Parsed>> = Mutex::new(None);

    /// The kubeconfig parsed from `path` when it held `bytes`.
    pub(super) fn get(path: &Path, bytes: &[u8]) -> Option<Kubeconfig> {
        let parsed = PARSED.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, kubeconfig) = parsed.as_ref()?.get(path)?;
        (kept == bytes).then(|| kubeconfig.clone())
    }

    pub(super) fn keep(path: &Path, bytes: Vec<u8>, kubeconfig: &Kubeconfig) {
        let mut parsed = PARSED.lock().unwrap_or_else(PoisonError::into_inner);
        parsed
            .get_or_insert_with(HashMap::new)
            .insert(path.to_path_buf(), (bytes, kubeconfig.clone()));
    }
}

/// The files the context in use (`context`, else the current one) names — its cluster's
/// certificate authority, its user's client certificate, key and token file — refused when one
/// is not a regular file. A missing one is left to kube to report.
fn check_referenced_files(
    kubeconfig: &Kubeconfig,
    context: Option<&str>,
) -> Result<(), GatherError> {
    let Some(name) = context.or(kubeconfig.current_context.as_deref()) else {
        return Ok(());
    };
    let Some(ctx) = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.context.as_ref())
    else {
        return Ok(());
    };
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.as_ref());
    let user = ctx.user.as_ref().and_then(|u| {
        kubeconfig
            .auth_infos
            .iter()
            .find(|a| &a.name == u)
            .and_then(|a| a.auth_info.as_ref())
    });
    let named: [(&'static str, Option<&String>); 4] = [
        (
            "certificate-authority",
            cluster.and_then(|c| c.certificate_authority.as_ref()),
        ),
        (
            "client-certificate",
            user.and_then(|u| u.client_certificate.as_ref()),
        ),
        ("client-key", user.and_then(|u| u.client_key.as_ref())),
        ("tokenFile", user.and_then(|u| u.token_file.as_ref())),
    ];
    for (field, path) in named {
        if let Some(path) = path {
            crate::files::check_regular(std::path::Path::new(path)).map_err(|e| {
                GatherError::NotRegularKubeconfigFile {
                    field,
                    path: e.path,
                    kind: e.kind,
                }
            })?;
        }
    }
    Ok(())
}

fn check_kubeconfig(path: &std::path::Path) -> Result<(), GatherError> {
    crate::files::check_regular(path).map_err(|e| GatherError::NotRegularKubeconfig {
        path: e.path,
        kind: e.kind,
    })
}

/// `~/.kube/config`, which kube reads itself when neither `--kubeconfig` nor `KUBECONFIG`
/// names a file: refused first when it is not a regular file.
fn check_default_kubeconfig() -> Result<(), GatherError> {
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => check_kubeconfig(&PathBuf::from(home).join(".kube").join("config")),
        None => Ok(()),
    }
}

/// Whether `~/.kube/config` is there (whatever it is: what is not a regular file is refused
/// later, not skipped).
fn default_kubeconfig_exists() -> bool {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .is_some_and(|home| {
            PathBuf::from(home)
                .join(".kube")
                .join("config")
                .symlink_metadata()
                .is_ok()
        })
}

/// The `proxy-url` of the cluster the context in use names.
fn cluster_proxy_url(kubeconfig: &Kubeconfig, opts: &ClusterOptions) -> Option<String> {
    let context_name = opts
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())?;
    let cluster_name = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context_name)?
        .context
        .as_ref()?
        .cluster
        .clone();
    kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster_name)?
        .cluster
        .as_ref()?
        .proxy_url
        .clone()
}

/// The request client and the watch client of one server, counting into `requests`. Every
/// request is bounded by `timeout` (connect, each write, each read — the read timeout counts
/// from when the request was written, not from when its pooled connection went idle — and
/// the whole response, headers and body); a watch is ended by the server after
/// [`WATCH_SECONDS`], so its reads and its whole response get that much longer.
fn build_client(
    config: &kube::Config,
    server: &DisplaySafeUrl,
    requests: &Arc<AtomicU64>,
    bounds: Bounds,
    exec_token: Option<&exec_plugin::ExecToken>,
) -> Result<kube::Client, GatherError> {
    let Bounds {
        timeout,
        read_timeout,
        bodies,
    } = bounds;
    let credentials = Arc::new(credentials::Credentials::of(config));
    let mut config = config.clone();
    config.connect_timeout = Some(timeout);
    config.write_timeout = Some(timeout);
    config.read_timeout = Some(read_timeout);
    config.reset_reader_on_write = true;
    let built = match direct_stack(&config) {
        Some(stack) => stack,
        None => kube::client::ClientBuilder::try_from(config),
    };
    let builder = built.map_err(|source| GatherError::Client {
        server: server.clone(),
        cause: error::safe_cause(&source),
    })?;
    Ok(builder
        .with_layer(&service::RefuseRedirectsLayer)
        .with_layer(&service::CountRequestsLayer {
            count: Arc::clone(requests),
        })
        // Each attempt as a whole, body included.
        .with_layer(&service::WholeResponseLayer {
            timeout: read_timeout,
            bodies,
            credentials,
        })
        // Retry needs a cloneable service; the buffer makes one.
        .with_layer(&tower::buffer::BufferLayer::new(64))
        // Each attempt gets the exec plugin's current token.
        .with_layer(&exec_plugin::ExecAuthLayer {
            token: exec_token.cloned(),
        })
        .with_layer(&tower::retry::RetryLayer::new(
            service::TransientRetry::within(timeout),
        ))
        .build())
}

/// How a client's requests are bounded: each request as a whole (`timeout`), its reads
/// (`read_timeout`: longer for watches), and the bodies it reads at once (`bodies`).
#[derive(Debug, Clone)]
struct Bounds {
    timeout: Duration,
    read_timeout: Duration,
    bodies: service::BodyBudget,
}

/// The service kube's `ClientBuilder::try_from` starts from (its `GenericService`).
type KubeStack = tower::util::BoxService<
    http::Request<kube::client::Body>,
    http::Response<Box<kube::client::DynBody>>,
    tower::BoxError,
>;

use kube::client::ClientBuilder;

/// kube's own client stack (its TLS, timeouts, base URI, credentials and extra headers,
/// without its request logging) over connections with `TCP_NODELAY`, as kubectl's and curl's
/// are. kube leaves Nagle's algorithm on: a request written right after the TLS handshake
/// waited for the server's delayed ACK of the handshake's last message, 40 ms on every new
/// connection (every first read of a command). `None` through a proxy: kube's stack then.
fn direct_stack(config: &kube::Config) -> Option<Result<ClientBuilder<KubeStack>, kube::Error>> {
    use kube::client::ConfigExt as _;
    use tower::ServiceExt as _;
    if config.proxy_url.is_some() {
        return None;
    }
    let built = (|| {
        let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        let https = match platform_tls(config) {
            Some(tls) => hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls?)
                .https_or_http()
                .enable_http1()
                .wrap_connector(http),
            None => config.rustls_https_connector_with_connector(http)?,
        };
        let mut connector = hyper_timeout::TimeoutConnector::new(https);
        connector.set_connect_timeout(config.connect_timeout);
        connector.set_read_timeout(config.read_timeout);
        connector.set_write_timeout(config.write_timeout);
        connector.set_reset_reader_on_write(config.reset_reader_on_write);
        let client: hyper_util::client::legacy::Client<_, kube::client::Body> =
            hyper_util::client::legacy::Builder::new(hyper_util::rt::TokioExecutor::new())
                .build(connector);
        let service = tower::ServiceBuilder::new()
            .layer(config.base_uri_layer())
            .option_layer(config.auth_layer()?)
            .layer(config.extra_headers_layer()?)
            .map_err(tower::BoxError::from)
            .service(client)
            .map_response(|response: http::Response<hyper::body::Incoming>| {
                response.map(|body| {
                    Box::new(http_body_util::BodyExt::map_err(
                        body,
                        tower::BoxError::from,
                    )) as Box<kube::client::DynBody>
                })
            });
        Ok(ClientBuilder::new(
            tower::util::BoxService::new(service),
            config.default_namespace.clone(),
        ))
    })();
    Some(built)
}

/// The TLS configuration of a server the kubeconfig names no certificate authority (nor
/// client certificate, exec plugin, server name or `insecure-skip-tls-verify`) for: the
/// platform's trust store, as kube builds it. Reading that store (every certificate under
/// `/etc/ssl`) is the same work for every such server, and it was done for each cluster of a
/// fleet (and each of its clients): built once per process, then shared. A server with a
/// certificate authority, a client certificate or anything else of its own gets its own
/// configuration from kube (`None`), as before.
fn platform_tls(config: &kube::Config) -> Option<Result<rustls::ClientConfig, kube::Error>> {
    use kube::client::ConfigExt as _;
    static PLATFORM: std::sync::Mutex<Option<rustls::ClientConfig>> = std::sync::Mutex::new(None);
    let user = &config.auth_info;
    let its_own = config.root_cert.is_some()
        || config.root_cert_file.is_some()
        || config.accept_invalid_certs
        || config.tls_server_name.is_some()
        || user.client_certificate.is_some()
        || user.client_certificate_data.is_some()
        || user.client_key.is_some()
        || user.client_key_data.is_some()
        || user.exec.is_some();
    if its_own {
        return None;
    }
    // Held while it is built: the clusters connecting at once wait for one reading of the
    // store instead of each making its own.
    let mut shared = PLATFORM
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(tls) = shared.as_ref() {
        return Some(Ok(tls.clone()));
    }
    let built = config.rustls_client_config();
    if let Ok(tls) = &built {
        *shared = Some(tls.clone());
    }
    Some(built)
}

impl Cluster {
    /// The client watches use (see `watch_client`), built on first use. The same
    /// configuration built the request client already, so this cannot fail in practice; if it
    /// does, watches use the request client (re-opened more often, as its read timeout is
    /// shorter) and say so.
    pub fn watch_client(&self) -> kube::Client {
        self.watch_client
            .get_or_init(|| {
                let read = Duration::from_secs(u64::from(WATCH_SECONDS)) + self.request_timeout;
                build_client(
                    &self.config,
                    &self.endpoint.server,
                    &self.requests,
                    Bounds {
                        timeout: self.request_timeout,
                        read_timeout: read,
                        bodies: self.bodies.clone(),
                    },
                    self.exec_token.as_ref(),
                )
                .unwrap_or_else(|e| {
                    tracing::warn!("{}; watching with the request client", e.with_hint());
                    self.client.clone()
                })
            })
            .clone()
    }
}

/// The server URL without userinfo or query. kube never sends either (requests are paths under
/// the URL; hyper takes the host alone), but its HTTP stack logs the URL, its connection pool
/// the authority, and through a proxy each request line would carry the userinfo.
fn bare_server_url(url: &http::Uri) -> http::Uri {
    let mut parts = url.clone().into_parts();
    if let Some(host) = parts
        .authority
        .as_ref()
        .and_then(|a| a.as_str().rsplit_once('@'))
        .and_then(|(_, host)| host.parse::<http::uri::Authority>().ok())
    {
        parts.authority = Some(host);
    }
    if let Some(path) = parts
        .path_and_query
        .as_ref()
        .and_then(|pq| pq.path().parse::<http::uri::PathAndQuery>().ok())
    {
        parts.path_and_query = Some(path);
    }
    http::Uri::from_parts(parts).unwrap_or_else(|_| url.clone())
}

/// The files `KUBECONFIG` lists (empty entries dropped), when it lists any.
fn kubeconfig_env_list() -> Option<Vec<PathBuf>> {
    let value = std::env::var_os("KUBECONFIG")?;
    let paths: Vec<PathBuf> = std::env::split_paths(&value)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    (!paths.is_empty()).then_some(paths)
}

/// Reads and merges a `KUBECONFIG` list as kubectl does: a file that does not exist is skipped
/// (kubectl's loading rules), one that exists but cannot be read or parsed is an error, and a
/// list of which no file exists is an error naming them.
fn read_kubeconfig_list(paths: Vec<PathBuf>) -> Result<Kubeconfig, GatherError> {
    let (present, missing): (Vec<PathBuf>, Vec<PathBuf>) =
        paths.into_iter().partition(|p| p.exists());
    if present.is_empty() {
        return Err(GatherError::KubeconfigListMissing { paths: missing });
    }
    for path in &missing {
        tracing::info!(
            "KUBECONFIG lists {}, which does not exist: skipped (as kubectl)",
            path.display()
        );
    }
    present
        .into_iter()
        .try_fold(Kubeconfig::default(), |merged, path| {
            let next = read_kubeconfig(&path)?;
            merged
                .merge(next)
                .map_err(|source| GatherError::Kubeconfig {
                    path: path.clone(),
                    reason: error::kubeconfig_reason(&source),
                })
        })
}

type Listed = Result<Read<Listing>, GatherError>;

/// What a follow-up LIST read: objects of any kind, or pods as they are kept (10,000 pods are
/// not boxed one by one on their way into `Observed`).
enum Listing {
    Any(Vec<AnyObject>),
    Pods(Vec<Arc<Pod>>),
}

impl Listing {
    fn push_into(self, observed: &mut Observed) {
        match self {
            Listing::Any(objects) => objects.into_iter().for_each(|o| o.push_into(observed)),
            Listing::Pods(pods) if observed.pods.is_empty() => observed.pods = pods,
            Listing::Pods(pods) => observed.pods.extend(pods),
        }
    }
}

/// A follow-up LIST of the gather's second phase.
enum Related {
    Namespace(ResourceKind, String),
    Pods(String),
}

#[cfg(test)]
mod tests {
    use super::{bare_server_url, ResponseBudget, MIN_CLUSTER_SHARE};

    /// A fleet divides `--max-response-size` between the clusters it reads at once, never
    /// below the share a real page of a list needs; the message names the split.
    #[test]
    fn a_fleet_divides_the_response_budget_with_a_floor() {
        const MIB: usize = 1024 * 1024;
        let budget = |total: usize, shared_by: usize| ResponseBudget { total, shared_by };
        assert_eq!(budget(256 * MIB, 1).per_cluster(), 256 * MIB);
        assert_eq!(budget(256 * MIB, 2).per_cluster(), 128 * MIB);
        assert_eq!(budget(256 * MIB, 16).per_cluster(), MIN_CLUSTER_SHARE);
        assert_eq!(budget(16 * MIB, 4).per_cluster(), 16 * MIB);
        assert_eq!(
            budget(256 * MIB, 1).describe(),
            "256 MiB (--max-response-size)"
        );
        assert_eq!(
            budget(256 * MIB, 2).describe(),
            "128 MiB (--max-response-size 256 MiB, shared by 2 clusters read at once)"
        );
        assert_eq!(
            budget(16 * MIB, 4).describe(),
            "16 MiB (--max-response-size)"
        );
    }

    /// A kubeconfig is parsed once while its file stays the same (a fleet connects to each of
    /// its contexts from it), but a file written again is read again, never the copy kept.
    #[test]
    fn a_kubeconfig_rewritten_is_read_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kubeconfig");
        let write = |contexts: &[&str]| {
            let mut text = String::from("apiVersion: v1\nkind: Config\ncontexts:\n");
            for name in contexts {
                text.push_str(&format!(
                    "- name: {name}\n  context:\n    cluster: c\n    user: u\n"
                ));
            }
            std::fs::write(&path, text).expect("write");
        };
        let names = |path: &std::path::Path| -> Vec<String> {
            super::read_kubeconfig(path)
                .expect("parses")
                .contexts
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        write(&["a", "b"]);
        assert_eq!(names(&path), ["a", "b"]);
        assert_eq!(names(&path), ["a", "b"], "kept");
        // The same size, and likely the same modification time: only the bytes differ.
        write(&["c", "d"]);
        assert_eq!(names(&path), ["c", "d"]);
        std::fs::write(&path, "contexts: [").expect("write");
        assert!(
            super::read_kubeconfig(&path).is_err(),
            "a broken file is an error"
        );
    }

    #[test]
    fn the_server_url_kube_is_given_has_no_userinfo_and_no_query() {
        let bare = |url: &str| bare_server_url(&url.parse().expect("uri")).to_string();
        assert_eq!(
            bare("https://u:canarypass@h.example:6443/prefix?token=canaryquery"),
            "https://h.example:6443/prefix"
        );
        assert_eq!(bare("http://127.0.0.1:8080"), "http://127.0.0.1:8080/");
        assert_eq!(bare("https://[::1]:6443/"), "https://[::1]:6443/");
    }
}
