//! A pod as the checks read it: the fields some check, the timeline, the diagnosis, `--expect`
//! or the registry's pull secrets read, decoded straight from the Kubernetes JSON; every other
//! field is skipped as it is read.
//!
//! `k8s_openapi`'s `Pod` is 2,176 bytes before any of its fields is set, each `Container`
//! another 2,120, and its `ObjectMeta` keeps labels in a `BTreeMap` (a 544-byte node for the
//! first one): 200,000 pods of a 29 MB dump held 1 GB that way, almost all of it `None`. This
//! one is a fifth of that (the bounds are `tests::a_lean_pod_stays_small`). Its field names and
//! shapes are `k8s_openapi`'s, so code reads `pod.status.as_ref()?.container_statuses` as
//! before; a field a check starts to read is added here (the compiler says where), and
//! `tests::every_field_a_check_reads_survives_the_lean_decode` holds it to what `k8s_openapi`
//! reads.
//!
//! Decoding is `k8s_openapi`'s where it reads: `apiVersion` and `kind` must say `v1` and `Pod`
//! when present (the error names that field), a required field that is missing or `null` is its
//! default, and a field of the wrong type is refused by its path with `k8s_openapi`'s words. A
//! field no check reads is not read at all, so a wrong type there no longer refuses the pod.
//! Values no check may print are never held (an env var's `value`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use serde::{Deserialize, Deserializer, Serialize};

/// A `v1` `Pod`: its metadata (without what no check reads: `managedFields`, annotations,
/// finalizers), the spec's containers and what `--expect-*` and pull secrets read, and the
/// status the checks judge. Not a `kube::Resource` (its metadata is no `ObjectMeta`): the live
/// gather reads it through a wire type of its own that is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "PodWire")]
pub struct Pod {
    pub metadata: PodMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<PodStatus>,
}

/// A pod as it is written: `apiVersion` and `kind` are checked (`v1` and `Pod` when present,
/// as `k8s_openapi` requires), never held.
#[derive(Deserialize)]
struct PodWire {
    #[serde(default, rename = "apiVersion", deserialize_with = "api_version_v1")]
    _api_version: (),
    #[serde(default, rename = "kind", deserialize_with = "kind_pod")]
    _kind: (),
    #[serde(default, deserialize_with = "null_default")]
    metadata: PodMeta,
    #[serde(default)]
    spec: Option<PodSpec>,
    #[serde(default)]
    status: Option<PodStatus>,
}

impl From<PodWire> for Pod {
    fn from(wire: PodWire) -> Pod {
        Pod {
            metadata: wire.metadata,
            spec: wire.spec,
            status: wire.status,
        }
    }
}

/// `spec`: the containers (name and image; the env var names and the Secrets they and the
/// volumes reference, for `--expect-env` and `--expect-secret-ref`), the node (its platform,
/// for an index digest) and the pull secrets (for the registry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// Required by the API: missing or `null` reads as none, as `k8s_openapi` reads it.
    #[serde(default, deserialize_with = "null_default")]
    pub containers: Vec<Container>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<Container>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secrets: Option<Vec<core::LocalObjectReference>>,
    /// The volumes that mount a Secret (directly or projected): no check reads another.
    #[serde(
        default,
        deserialize_with = "secret_volumes",
        skip_serializing_if = "Option::is_none"
    )]
    pub volumes: Option<Vec<Volume>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<EnvVar>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_from: Option<Vec<core::EnvFromSource>>,
}

/// An env var's name and the Secret key it takes its value from: presence only, its `value`
/// is never read (it may be a secret).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvVarSource>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<core::SecretKeySelector>,
}

/// A volume's name and the Secrets it mounts (directly or projected).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<core::SecretVolumeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projected: Option<ProjectedVolumeSource>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedVolumeSource {
    /// The projections of a Secret: every pod projects its service account's token, CA and
    /// namespace, which no check reads.
    #[serde(
        default,
        deserialize_with = "secret_projections",
        skip_serializing_if = "Option::is_none"
    )]
    pub sources: Option<Vec<VolumeProjection>>,
}

impl Volume {
    /// Whether it mounts a Secret, directly or projected.
    fn mounts_a_secret(&self) -> bool {
        self.secret.is_some()
            || self
                .projected
                .as_ref()
                .and_then(|p| p.sources.as_ref())
                .is_some_and(|s| !s.is_empty())
    }
}

fn secret_volumes<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<Volume>>, D::Error> {
    let mut volumes = Option::<Vec<Volume>>::deserialize(deserializer)?;
    if let Some(list) = volumes.as_mut() {
        list.retain(Volume::mounts_a_secret);
        list.shrink_to_fit();
    }
    Ok(volumes)
}

fn secret_projections<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<VolumeProjection>>, D::Error> {
    let mut sources = Option::<Vec<VolumeProjection>>::deserialize(deserializer)?;
    if let Some(list) = sources.as_mut() {
        list.retain(|p| p.secret.is_some());
        list.shrink_to_fit();
    }
    Ok(sources)
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeProjection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<core::SecretProjection>,
}

/// `status`: the phase, the conditions (Ready, PodScheduled), when it started, and its
/// containers' states.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<PodCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_statuses: Option<Vec<ContainerStatus>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_container_statuses: Option<Vec<ContainerStatus>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodCondition {
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub type_: String,
    #[serde(default, deserialize_with = "null_default")]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub image: String,
    #[serde(rename = "imageID", default, deserialize_with = "null_default")]
    pub image_id: String,
    #[serde(default, deserialize_with = "null_default")]
    pub ready: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
    #[serde(default, deserialize_with = "null_default")]
    pub restart_count: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_state: Option<ContainerState>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<ContainerStateWaiting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<ContainerStateRunning>,
    /// Boxed: the largest of the three, and the rarest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Box<ContainerStateTerminated>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateWaiting {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateRunning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateTerminated {
    #[serde(default, deserialize_with = "null_default")]
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Log output, as often as not: shown only with `--logs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
}

/// The metadata a pod is read by: who it is, its labels, who owns it, when it was created and
/// when deleted. The rest (`managedFields`, often half the object; annotations; finalizers)
/// is skipped as it is read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// What a watch compares to tell an object it already holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Labels>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReference>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
}

/// A pod's labels, sorted by key: a list, not a map. A `BTreeMap<String, String>` allocates a
/// 544-byte node for its first label (eleven fit): 100 MB over 200,000 pods of one label each.
/// Read as a map is (`get`, iteration in key order); a key written twice keeps its last value,
/// as a map decoded from the same JSON does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(Box<[(String, String)]>);

impl Labels {
    pub fn get(&self, key: &str) -> Option<&String> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, returning the value it had.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.0.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                let mut list = std::mem::take(&mut self.0).into_vec();
                list.insert(i, (key, value));
                self.0 = list.into_boxed_slice();
                None
            }
        }
    }

    pub fn iter(&self) -> LabelsIter<'_> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// [`Labels::iter`]: `(key, value)` in key order, as a map's iterator gives them.
pub type LabelsIter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, String)>,
    fn(&(String, String)) -> (&String, &String),
>;

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a String, &'a String);
    type IntoIter = LabelsIter<'a>;
    fn into_iter(self) -> LabelsIter<'a> {
        self.iter()
    }
}

impl FromIterator<(String, String)> for Labels {
    /// In key order; of a key given twice, the last value.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Labels {
        let mut pairs: Vec<(String, String)> = pairs.into_iter().collect();
        // Stable: of equal keys, the one given last stays last.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut list: Vec<(String, String)> = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            match list.last_mut() {
                Some(last) if last.0 == key => last.1 = value,
                _ => list.push((key, value)),
            }
        }
        Labels(list.into_boxed_slice())
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Labels {
        Labels(map.into_iter().collect::<Vec<_>>().into_boxed_slice())
    }
}

impl crate::selector::LabelMap for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Labels, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Labels;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Labels, A::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(pair) = map.next_entry::<String, String>()? {
                    pairs.push(pair);
                }
                Ok(pairs.into_iter().collect())
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// A required field as `k8s_openapi` reads it: `null` is its default.
pub(crate) fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `value`, or the error `k8s_openapi` gives for another: `invalid value: string "apps/v1",
/// expected v1`.
pub(crate) fn exactly<'de, D: Deserializer<'de>>(
    deserializer: D,
    value: &'static str,
) -> Result<(), D::Error> {
    let found = String::deserialize(deserializer)?;
    if found == value {
        Ok(())
    } else {
        Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Str(&found),
            &value,
        ))
    }
}

fn api_version_v1<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    exactly(deserializer, "v1")
}

fn kind_pod<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    exactly(deserializer, "Pod")
}

impl From<&core::PodSpec> for PodSpec {
    /// What a pod template's spec says of the fields kept here: `--expect` reads a template
    /// and a running pod alike.
    fn from(spec: &core::PodSpec) -> PodSpec {
        let containers = |list: &[core::Container]| list.iter().map(Container::from).collect();
        PodSpec {
            containers: containers(&spec.containers),
            init_containers: spec.init_containers.as_deref().map(containers),
            node_name: spec.node_name.clone(),
            image_pull_secrets: spec.image_pull_secrets.clone(),
            volumes: spec.volumes.as_ref().map(|v| {
                v.iter()
                    .map(Volume::from)
                    .filter(Volume::mounts_a_secret)
                    .collect()
            }),
        }
    }
}

impl From<&core::Container> for Container {
    fn from(c: &core::Container) -> Container {
        Container {
            name: c.name.clone(),
            image: c.image.clone(),
            env: c.env.as_ref().map(|env| {
                env.iter()
                    .map(|e| EnvVar {
                        name: e.name.clone(),
                        value_from: e.value_from.as_ref().map(|v| EnvVarSource {
                            secret_key_ref: v.secret_key_ref.clone(),
                        }),
                    })
                    .collect()
            }),
            env_from: c.env_from.clone(),
        }
    }
}

impl From<&core::Volume> for Volume {
    fn from(v: &core::Volume) -> Volume {
        Volume {
            name: v.name.clone(),
            secret: v.secret.clone(),
            projected: v.projected.as_ref().map(|p| ProjectedVolumeSource {
                sources: p.sources.as_ref().map(|sources| {
                    sources
                        .iter()
                        .filter_map(|s| {
                            s.secret.clone().map(|secret| VolumeProjection {
                                secret: Some(secret),
                            })
                        })
                        .collect()
                }),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Observed;
    use serde_json::{json, Value};

    /// A pod with every field some check, the timeline, the diagnosis, `--expect-*` or the
    /// registry's pull secrets read, each set: what the lean pod must keep, as written.
    fn every_field_read() -> Value {
        let time = "2026-07-12T10:01:00Z";
        let status = |name: &str| {
            json!({
                "name": name, "image": "ghcr.io/acme/inventory:1.4.0",
                "imageID": format!("ghcr.io/acme/inventory@sha256:{}", "a".repeat(64)),
                "ready": false, "started": true, "restartCount": 5,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"},
                          "running": {"startedAt": time},
                          "terminated": {"exitCode": 1, "reason": "Error", "message": "panic: no DSN",
                                         "startedAt": time, "finishedAt": time}},
                "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                             "startedAt": time, "finishedAt": time}}
            })
        };
        json!({
            "metadata": {
                "name": "inventory-7d9c-x2k4", "namespace": "apps", "uid": "pod-uid",
                "resourceVersion": "4711",
                "labels": {"app": "inventory", "pod-template-hash": "7d9c"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": "inventory-7d9c", "uid": "rs-uid",
                                     "controller": true, "blockOwnerDeletion": true}],
                "creationTimestamp": time, "deletionTimestamp": time
            },
            "spec": {
                "containers": [{
                    "name": "app", "image": "ghcr.io/acme/inventory:1.4.0",
                    "env": [{"name": "LOG_LEVEL"},
                            {"name": "DB_PASSWORD",
                             "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
                    "envFrom": [{"secretRef": {"name": "api-keys"}},
                                {"configMapRef": {"name": "settings"}, "prefix": "APP_"}]
                }],
                "initContainers": [{"name": "migrate", "image": "ghcr.io/acme/migrate:3"}],
                "nodeName": "node-1",
                "imagePullSecrets": [{"name": "ghcr-pull"}],
                "volumes": [
                    {"name": "tls", "secret": {"secretName": "inventory-tls",
                                               "items": [{"key": "tls.crt", "path": "tls.crt"}]}},
                    {"name": "creds", "projected": {"sources": [
                        {"secret": {"name": "db", "items": [{"key": "password", "path": "pw"}]}}]}}
                ]
            },
            "status": {
                "phase": "Running",
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": time},
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": "0/3 nodes are available", "lastTransitionTime": time}
                ],
                "startTime": time,
                "containerStatuses": [status("app")],
                "initContainerStatuses": [status("migrate")]
            }
        })
    }

    /// `pod` as the API server sends it: with what no check reads (field bookkeeping,
    /// annotations, env values, resources, addresses, …), which the lean pod leaves unread.
    fn as_sent(mut pod: Value) -> Value {
        let extra = |v: &mut Value, more: Value| {
            let (Some(v), Value::Object(more)) = (v.as_object_mut(), more) else {
                panic!("objects");
            };
            v.extend(more);
        };
        extra(&mut pod, json!({"apiVersion": "v1", "kind": "Pod"}));
        extra(
            &mut pod["metadata"],
            json!({
                "generateName": "inventory-7d9c-", "finalizers": ["example.com/hold"],
                "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-07-12T10:00:00Z"},
                "deletionGracePeriodSeconds": 30,
                "managedFields": [{"manager": "kubelet", "operation": "Update",
                                   "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]
            }),
        );
        let container = &mut pod["spec"]["containers"][0];
        container["env"][0]["value"] = json!("debug");
        extra(
            container,
            json!({"ports": [{"containerPort": 8080}], "resources": {"limits": {"memory": "256Mi"}},
                   "volumeMounts": [{"name": "tls", "mountPath": "/tls"}]}),
        );
        pod["spec"]["volumes"][1]["projected"]["sources"]
            .as_array_mut()
            .expect("sources")
            .push(json!({"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}));
        extra(
            &mut pod["spec"],
            json!({"serviceAccountName": "inventory", "restartPolicy": "Always",
                   "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]}),
        );
        extra(
            &mut pod["status"],
            json!({"hostIP": "10.0.0.1", "podIP": "10.1.0.7", "qosClass": "Burstable",
                   "podIPs": [{"ip": "10.1.0.7"}]}),
        );
        pod["status"]["conditions"][0]["lastProbeTime"] = Value::Null;
        pod["status"]["containerStatuses"][0]["containerID"] = json!("containerd://abc");
        pod
    }

    /// Whether every field of `part` is in `whole` with the same value; a list's items in
    /// order, of which `whole` may hold more (the volumes that mount no Secret).
    fn within(part: &Value, whole: &Value) -> bool {
        match (part, whole) {
            (Value::Object(p), Value::Object(w)) => p
                .iter()
                .all(|(key, value)| w.get(key).is_some_and(|there| within(value, there))),
            (Value::Array(p), Value::Array(w)) => {
                let mut rest = w.iter();
                p.iter().all(|item| rest.any(|there| within(item, there)))
            }
            _ => part == whole,
        }
    }

    /// The lean pod keeps every field a check reads, exactly as written and as `k8s_openapi`
    /// reads it, and nothing of what no check reads.
    #[test]
    fn every_field_a_check_reads_survives_the_lean_decode() {
        let sent = as_sent(every_field_read());
        let lean: Pod = serde_json::from_value(sent.clone()).expect("a pod");
        let kept = serde_json::to_value(&lean).expect("JSON");
        assert_eq!(kept, every_field_read(), "what the lean pod holds");
        let full: k8s_openapi::api::core::v1::Pod =
            serde_json::from_value(sent).expect("a k8s_openapi pod");
        let full = serde_json::to_value(&full).expect("JSON");
        assert!(
            within(&kept, &full),
            "{kept:#}\nnot as k8s_openapi reads it:\n{full:#}"
        );
        // Taken in through the one loader, as the gather does.
        let mut observed = Observed::default();
        observed
            .add_value(as_sent(every_field_read()), "test")
            .expect("a pod");
        assert_eq!(*observed.pods[0], lean);
    }

    /// `k8s_openapi`'s `Pod` was 2,176 bytes before any field was set, each `Container` 2,120
    /// and each `ContainerStatus` 752: 200,000 pods of a dump held 1 GB. These bounds keep what
    /// `Observed` holds a pod as within a quarter of that.
    #[test]
    fn a_lean_pod_stays_small() {
        let mut observed = Observed::default();
        observed
            .add_value(as_sent(every_field_read()), "test")
            .expect("a pod");
        let pod = &*observed.pods[0];
        assert!(
            std::mem::size_of_val(pod) <= 512,
            "{} bytes a pod",
            std::mem::size_of_val(pod)
        );
        let spec = pod.spec.as_ref().expect("a spec");
        let container = std::mem::size_of_val(&spec.containers[0]);
        assert!(container <= 128, "{container} bytes a container");
        let status = pod.status.as_ref().expect("a status");
        let statuses = status.container_statuses.as_ref().expect("statuses");
        let size = std::mem::size_of_val(&statuses[0]);
        assert!(size <= 256, "{size} bytes a container status");
    }

    /// A broken pod is refused where `k8s_openapi` refuses it, with the same words, in every
    /// field the lean pod reads; a `null` where a field is required reads as its default there
    /// too.
    #[test]
    fn a_broken_pod_is_refused_as_k8s_openapi_refuses_it() {
        fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> Result<(), (String, String)> {
            serde_path_to_error::deserialize::<_, T>(value.clone())
                .map(drop)
                .map_err(|e| (e.path().to_string(), e.inner().to_string()))
        }
        let broken = |pointer: &str, value: Value| {
            let mut pod = as_sent(every_field_read());
            *pod.pointer_mut(pointer)
                .unwrap_or_else(|| panic!("{pointer}")) = value;
            pod
        };
        let cases = [
            broken("/apiVersion", json!("apps/v1")),
            broken("/kind", json!("Deployment")),
            broken("/metadata", Value::Null),
            broken("/metadata/name", json!([1])),
            broken("/metadata/labels/app", json!(1)),
            broken("/metadata/ownerReferences/0/controller", json!("yes")),
            broken("/metadata/creationTimestamp", json!("yesterday")),
            broken("/spec/containers", Value::Null),
            broken("/spec/containers", json!("app")),
            broken("/spec/containers/0/name", Value::Null),
            broken(
                "/spec/containers/0/env/1/valueFrom/secretKeyRef/key",
                json!(7),
            ),
            broken("/status/phase", json!(1)),
            broken("/status/conditions/0/status", Value::Null),
            broken("/status/containerStatuses/0/ready", Value::Null),
            broken("/status/containerStatuses/0/restartCount", json!("5")),
            broken(
                "/status/containerStatuses/0/state/terminated/exitCode",
                json!(1.5),
            ),
        ];
        for (i, pod) in cases.iter().enumerate() {
            let mut k8s = decode::<k8s_openapi::api::core::v1::Pod>(pod);
            // `k8s_openapi` refuses another `apiVersion` or `kind` at the object (`.`); the
            // lean pod names the field.
            if let (Err((path, _)), 0..=1) = (&mut k8s, i) {
                *path = ["apiVersion", "kind"][i].to_string();
            }
            assert_eq!(decode::<Pod>(pod), k8s, "{pod}");
        }
    }

    /// Labels are a sorted list read as a map: a key given twice keeps its last value.
    #[test]
    fn labels_read_as_a_map() {
        let pod: Pod = serde_json::from_str(
            r#"{"metadata": {"labels": {"tier": "web", "app": "a", "tier": "api"}}}"#,
        )
        .expect("a pod");
        let map: BTreeMap<String, String> =
            serde_json::from_str(r#"{"tier": "web", "app": "a", "tier": "api"}"#).expect("a map");
        let mut labels = pod.metadata.labels.expect("labels");
        assert_eq!(
            labels.iter().collect::<Vec<_>>(),
            map.iter().collect::<Vec<_>>()
        );
        assert_eq!(labels.get("tier").map(String::as_str), Some("api"));
        assert_eq!(labels.get("zone"), None);
        assert_eq!(labels.insert("zone".into(), "eu".into()), None);
        assert_eq!(labels.insert("app".into(), "b".into()), Some("a".into()));
        let keys: Vec<&String> = labels.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["app", "tier", "zone"]);
        assert_eq!(Labels::from(map.clone()).len(), map.len());
    }
}
