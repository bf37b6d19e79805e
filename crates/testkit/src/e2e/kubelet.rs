//! A kubelet stand-in: there is no container runtime on these machines, so this plays the part
//! of the kubelet (and of the scheduler) against a real API server, through the API only.
//!
//! - Registers two Ready nodes, `node-amd64` and `node-arm64` (`kubernetes.io/arch` and
//!   `kubernetes.io/os` labels, `nodeInfo.architecture`), lifts the `not-ready` taint the API
//!   server puts on a new node, and renews their Ready condition.
//! - Binds each pending pod (the `pods/binding` subresource, as kube-scheduler does): to the
//!   node a DaemonSet pod's node affinity names, else to the node its `kubernetes.io/arch` or
//!   `kubernetes.io/hostname` node selector picks, else to the two nodes in turn.
//! - "Pulls" each container's image: an image in one of the registries it was given is
//!   resolved there for the node's platform; `imageID` is then `REPO@DIGEST` with the tag's
//!   top-level digest (the index digest for a multi-platform image, as containerd reports it).
//!   A tag that does not resolve leaves the container waiting in `ErrImagePull`, then
//!   `ImagePullBackOff`, retried until it does. An image from any other registry is taken as
//!   pulled with a digest made from its name (these machines reach no public registry).
//! - Runs it: `state.running.startedAt` = now, Ready, the pod `Running` with its conditions.
//!   A running container keeps the `imageID` it pulled: a tag pushed again later changes
//!   nothing until the pod is replaced (seed 001).
//!   A container with the env var [`CRASH_ENV`] = `1` crash-loops instead: `CrashLoopBackOff`
//!   with `lastState.terminated` and a growing `restartCount`.
//! - Honours deletion grace periods: a pod with a `deletionTimestamp` keeps running (and
//!   Ready) until that time, then is deleted for good (grace period 0), as the kubelet does
//!   when its containers have stopped.

use std::collections::HashMap;
use std::time::Duration;

use futures::future::{AbortHandle, Abortable};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use liveproof_registry::{Client as Registry, Platform, Reference};
use serde_json::{json, Value};

/// A container with this env var set to `1` crash-loops.
pub const CRASH_ENV: &str = "LIVEPROOF_E2E_CRASH";

/// The nodes registered, with their platforms.
pub const NODES: [(&str, &str); 2] = [("node-amd64", "amd64"), ("node-arm64", "arm64")];

/// How often pods are looked at.
const TICK: Duration = Duration::from_millis(200);
/// How often the nodes' Ready condition is renewed (the node lifecycle controller's grace
/// period is 40 s or more).
const HEARTBEAT: Duration = Duration::from_secs(10);
/// How long a failed pull or a crash waits before the next attempt.
const BACKOFF: Duration = Duration::from_secs(2);

/// The running stand-in; stops when dropped.
pub struct Kubelet {
    abort: AbortHandle,
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.abort.abort();
    }
}

/// What the stand-in remembers of a pod between ticks.
#[derive(Debug, Default)]
struct PodState {
    node: Option<String>,
    /// The `status` last written, so a pod is patched only when something changes.
    written: Option<Value>,
    /// When the containers started (kept across ticks: `startedAt` never moves).
    started: Option<jiff::Timestamp>,
    next_attempt: Option<jiff::Timestamp>,
    restarts: i64,
    pulls_failed: u32,
    /// What each container pulled, `(name, image)` → `imageID`: a container keeps running
    /// what it pulled when it started, whatever the tag points to later.
    pulled: HashMap<(String, String), String>,
}

struct Standin {
    client: kube::Client,
    registry: Registry,
    /// Hosts (`host:port`) whose images are resolved in `registry`.
    registries: Vec<String>,
    pods: HashMap<String, PodState>,
    next_node: usize,
    next_ip: u32,
}

impl Kubelet {
    /// Registers the nodes and starts binding and running pods. `registries` are the
    /// `host:port`s whose images `registry` resolves.
    pub async fn start(
        client: kube::Client,
        registry: Registry,
        registries: Vec<String>,
    ) -> anyhow::Result<Kubelet> {
        let mut standin = Standin {
            client,
            registry,
            registries,
            pods: HashMap::new(),
            next_node: 0,
            next_ip: 10,
        };
        standin.register_nodes().await?;
        let (abort, registration) = AbortHandle::new_pair();
        tokio::spawn(Abortable::new(
            async move {
                let mut last_heartbeat = tokio::time::Instant::now();
                loop {
                    if last_heartbeat.elapsed() >= HEARTBEAT {
                        if let Err(e) = standin.heartbeat().await {
                            tracing::warn!("kubelet stand-in: node heartbeat: {e}");
                        }
                        last_heartbeat = tokio::time::Instant::now();
                    }
                    if let Err(e) = standin.tick().await {
                        tracing::warn!("kubelet stand-in: {e:#}");
                    }
                    tokio::time::sleep(TICK).await;
                }
            },
            registration,
        ));
        Ok(Kubelet { abort })
    }
}

fn now() -> jiff::Timestamp {
    // Kubernetes times have whole seconds.
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second()).unwrap_or(now)
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

impl Standin {
    async fn register_nodes(&mut self) -> anyhow::Result<()> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        for (name, arch) in NODES {
            let node: Node = serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {
                    "kubernetes.io/arch": arch, "kubernetes.io/os": "linux",
                    "kubernetes.io/hostname": name}},
            }))?;
            match nodes.create(&PostParams::default(), &node).await {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 409 => {}
                Err(e) => return Err(e.into()),
            }
            // The API server's TaintNodesByCondition admission taints a new node
            // `node.kubernetes.io/not-ready:NoSchedule`; the node lifecycle controller lifts it
            // once the node is Ready. That controller is off here (it would evict pods from
            // nodes without a real kubelet's lease), so the stand-in lifts it: the DaemonSet
            // controller places no pod on a tainted node.
            nodes
                .patch(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"taints": null}})),
                )
                .await?;
        }
        self.heartbeat().await
    }

    async fn heartbeat(&self) -> anyhow::Result<()> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        let time = now().to_string();
        for (name, arch) in NODES {
            let status = json!({"status": {
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                    "message": "liveproof e2e kubelet stand-in", "lastHeartbeatTime": time,
                    "lastTransitionTime": time}],
                "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                "addresses": [{"type": "InternalIP", "address": host_ip(name)},
                              {"type": "Hostname", "address": name}],
                "nodeInfo": {"architecture": arch, "operatingSystem": "linux",
                    "kubeletVersion": "v1.36.0-liveproof-standin", "containerRuntimeVersion": "standin://1",
                    "kernelVersion": "6.1.0", "osImage": "Debian GNU/Linux 12", "kubeProxyVersion": "",
                    "machineID": name, "systemUUID": name, "bootID": name},
            }});
            nodes
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
                .await?;
        }
        Ok(())
    }

    async fn tick(&mut self) -> anyhow::Result<()> {
        let api: Api<Pod> = Api::all(self.client.clone());
        let list = api.list(&ListParams::default()).await?;
        let mut seen = Vec::new();
        for pod in list.items {
            let pod = serde_json::to_value(&pod)?;
            let Some(uid) = str_at(&pod, "/metadata/uid").map(str::to_owned) else {
                continue;
            };
            seen.push(uid.clone());
            if let Err(e) = self.handle(&pod, &uid).await {
                let name = str_at(&pod, "/metadata/name").unwrap_or("?");
                tracing::debug!("kubelet stand-in: pod {name}: {e:#}");
            }
        }
        self.pods.retain(|uid, _| seen.contains(uid));
        Ok(())
    }

    async fn handle(&mut self, pod: &Value, uid: &str) -> anyhow::Result<()> {
        let ns = str_at(pod, "/metadata/namespace")
            .unwrap_or("default")
            .to_owned();
        let name = str_at(pod, "/metadata/name").unwrap_or_default().to_owned();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
        if let Some(deletion) = str_at(pod, "/metadata/deletionTimestamp") {
            let at: jiff::Timestamp = deletion.parse()?;
            let unbound = str_at(pod, "/spec/nodeName").is_none();
            if unbound || jiff::Timestamp::now() >= at {
                let params = DeleteParams {
                    grace_period_seconds: Some(0),
                    preconditions: Some(Preconditions {
                        uid: Some(uid.to_owned()),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                match api.delete(&name, &params).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => {}
                    Err(e) => return Err(e.into()),
                }
            }
            // Until then it keeps running as it was.
            return Ok(());
        }
        let node = match str_at(pod, "/spec/nodeName") {
            Some(node) => node.to_owned(),
            None => {
                let node = self.pick_node(pod);
                let binding = json!({
                    "apiVersion": "v1", "kind": "Binding",
                    "metadata": {"name": name, "namespace": ns},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node},
                });
                let _: Value = api
                    .create_subresource("binding", &name, &PostParams::default(), &binding)
                    .await?;
                node
            }
        };
        let arch = NODES
            .iter()
            .find(|(n, _)| *n == node)
            .map_or("amd64", |(_, a)| a);
        let state = self.pods.entry(uid.to_owned()).or_default();
        state.node = Some(node.clone());
        let due = state
            .next_attempt
            .is_none_or(|t| jiff::Timestamp::now() >= t);
        if state.written.is_some() && !due {
            return Ok(());
        }
        let status = self.status_of(pod, uid, &node, arch).await;
        let state = self.pods.entry(uid.to_owned()).or_default();
        if state.written.as_ref() == Some(&status) {
            return Ok(());
        }
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await?;
        if let Some(state) = self.pods.get_mut(uid) {
            state.written = Some(status);
        }
        Ok(())
    }

    fn pick_node(&mut self, pod: &Value) -> String {
        // A DaemonSet pod names its node in a required node affinity on metadata.name.
        let terms = pod
            .pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
            .and_then(Value::as_array);
        for term in terms.into_iter().flatten() {
            for field in term
                .get("matchFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if str_at(field, "/key") == Some("metadata.name") {
                    if let Some(node) = field.pointer("/values/0").and_then(Value::as_str) {
                        return node.to_owned();
                    }
                }
            }
        }
        if let Some(host) = str_at(pod, "/spec/nodeSelector/kubernetes.io~1hostname") {
            return host.to_owned();
        }
        if let Some(arch) = str_at(pod, "/spec/nodeSelector/kubernetes.io~1arch") {
            if let Some((node, _)) = NODES.iter().find(|(_, a)| *a == arch) {
                return (*node).to_owned();
            }
        }
        let node = NODES[self.next_node % NODES.len()].0;
        self.next_node += 1;
        node.to_owned()
    }

    /// The pod's whole `status` as the kubelet would write it now.
    async fn status_of(&mut self, pod: &Value, uid: &str, node: &str, arch: &str) -> Value {
        let containers: Vec<Value> = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut statuses = Vec::new();
        let mut all_ready = true;
        let mut pull_failed = false;
        let mut crashing = false;
        for c in &containers {
            let cname = str_at(c, "/name").unwrap_or_default();
            let image = str_at(c, "/image").unwrap_or_default();
            let crash = c.get("env").and_then(Value::as_array).is_some_and(|env| {
                env.iter().any(|e| {
                    str_at(e, "/name") == Some(CRASH_ENV) && str_at(e, "/value") == Some("1")
                })
            });
            let key = (cname.to_owned(), image.to_owned());
            let pulled = match self.pods.get(uid).and_then(|s| s.pulled.get(&key)) {
                Some(image_id) => Ok(image_id.clone()),
                None => self.pull(image, arch).await,
            };
            if let Ok(image_id) = &pulled {
                let state = self.pods.entry(uid.to_owned()).or_default();
                state.pulled.insert(key, image_id.clone());
            }
            match pulled {
                Err(message) => {
                    all_ready = false;
                    pull_failed = true;
                    let state = self.pods.entry(uid.to_owned()).or_default();
                    state.pulls_failed += 1;
                    let reason = if state.pulls_failed > 1 {
                        "ImagePullBackOff"
                    } else {
                        "ErrImagePull"
                    };
                    statuses.push(json!({
                        "name": cname, "image": image, "imageID": "", "ready": false,
                        "restartCount": 0, "started": false,
                        "state": {"waiting": {"reason": reason, "message": message}},
                    }));
                }
                Ok(image_id) if crash => {
                    all_ready = false;
                    crashing = true;
                    let state = self.pods.entry(uid.to_owned()).or_default();
                    state.restarts += 1;
                    let at = now().to_string();
                    statuses.push(json!({
                        "name": cname, "image": image, "imageID": image_id, "ready": false,
                        "restartCount": state.restarts, "started": false,
                        "state": {"waiting": {"reason": "CrashLoopBackOff",
                            "message": format!("back-off restarting failed container {cname}")}},
                        "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                            "startedAt": at, "finishedAt": at}},
                    }));
                }
                Ok(image_id) => {
                    let state = self.pods.entry(uid.to_owned()).or_default();
                    let started = *state.started.get_or_insert_with(now);
                    statuses.push(json!({
                        "name": cname, "image": image, "imageID": image_id, "ready": true,
                        "restartCount": 0, "started": true,
                        "state": {"running": {"startedAt": started.to_string()}},
                    }));
                }
            }
        }
        let state = self.pods.entry(uid.to_owned()).or_default();
        state.next_attempt = (pull_failed || crashing).then(|| {
            jiff::Timestamp::now() + jiff::SignedDuration::from_secs(BACKOFF.as_secs() as i64)
        });
        let transition = match &state.written {
            // Keep each condition's time while its status holds.
            Some(old)
                if old.pointer("/conditions/3/status").and_then(Value::as_str)
                    == Some(if all_ready { "True" } else { "False" }) =>
            {
                str_at(old, "/conditions/3/lastTransitionTime")
                    .unwrap_or_default()
                    .to_owned()
            }
            _ => now().to_string(),
        };
        let scheduled = state
            .written
            .as_ref()
            .and_then(|old| str_at(old, "/conditions/0/lastTransitionTime").map(str::to_owned))
            .unwrap_or_else(|| now().to_string());
        let ready = if all_ready { "True" } else { "False" };
        let ip = match state
            .written
            .as_ref()
            .and_then(|old| str_at(old, "/podIP").map(str::to_owned))
        {
            Some(ip) => ip,
            None => {
                self.next_ip += 1;
                format!("10.244.{}.{}", self.next_ip / 250, self.next_ip % 250 + 2)
            }
        };
        json!({
            "phase": if all_ready || crashing { "Running" } else { "Pending" },
            "hostIP": host_ip(node),
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": scheduled,
            "qosClass": "BestEffort",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled},
                {"type": "Initialized", "status": "True", "lastTransitionTime": scheduled},
                {"type": "ContainersReady", "status": ready, "lastTransitionTime": transition},
                {"type": "Ready", "status": ready, "lastTransitionTime": transition},
            ],
            "containerStatuses": statuses,
        })
    }

    /// The `imageID` a pull of `image` on a node of `arch` reports, or why the pull failed.
    async fn pull(&self, image: &str, arch: &str) -> Result<String, String> {
        let reference = Reference::parse(image).map_err(|e| e.to_string())?;
        let repo = format!("{}/{}", reference.registry, reference.repository);
        if !self.registries.contains(&reference.registry) {
            let digest = liveproof_registry::Digest::sha256_of(image.as_bytes());
            return Ok(format!("{repo}@{digest}"));
        }
        let resolved = self
            .registry
            .resolve(&reference, None)
            .await
            .map_err(|e| format!("failed to pull and unpack image \"{image}\": {e}"))?;
        let platform = Platform::new("linux", arch, (arch == "arm64").then_some("v8"));
        if !resolved.platforms.is_empty() && resolved.for_platform(&platform).is_none() {
            return Err(format!(
                "failed to pull and unpack image \"{image}\": no match for platform in manifest: not found"
            ));
        }
        Ok(format!("{repo}@{}", resolved.digest))
    }
}

fn host_ip(node: &str) -> &'static str {
    if node == NODES[1].0 {
        "192.168.0.12"
    } else {
        "192.168.0.11"
    }
}
