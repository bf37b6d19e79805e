//! A pod as the checks read it: the fields some check, the timeline, the diagnosis, `--expect`
//! or the registry's pull secrets read, decoded straight from the Kubernetes JSON; every other
//! field is skipped as it is read.
//!
//! `k8s_openapi`'s `Pod` is ~2 KiB before any of its fields is set and each `Container` another
//! ~2 KiB: 200,000 pods of a 29 MB dump held 1 GB that way, almost all of it `None`. This one is
//! a tenth of that ([`tests::a_lean_pod_stays_small`]). Its field names and shapes are
//! `k8s_openapi`'s, so code reads `pod.status.as_ref()?.container_statuses` as before; a field
//! a check starts to read is added here (the compiler says where).
//!
//! Decoding is `k8s_openapi`'s: `apiVersion` and `kind` must say `v1` and `Pod` when present,
//! a required field that is missing or `null` is its default, and a field of the wrong type is
//! refused by its path. Values no check may print are never held (an env var's `value`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use serde::{Deserialize, Deserializer, Serialize};

/// A `v1` `Pod`: its metadata (without what no check reads: `managedFields`, annotations,
/// finalizers), the spec's containers and what `--expect-*` and pull secrets read, and the
/// status the checks judge.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<VolumeProjection>>,
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
fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `value`, or the error `k8s_openapi` gives for another: `invalid value: string "apps/v1",
/// expected v1`.
fn exactly<'de, D: Deserializer<'de>>(
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
            volumes: spec
                .volumes
                .as_ref()
                .map(|v| v.iter().map(Volume::from).collect()),
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
                        .map(|s| VolumeProjection {
                            secret: s.secret.clone(),
                        })
                        .collect()
                }),
            }),
        }
    }
}
