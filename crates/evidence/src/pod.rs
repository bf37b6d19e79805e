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
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer, Serialize};

/// A `v1` `Pod`: its metadata (without what no check reads: `managedFields`, annotations,
/// finalizers), the spec's containers and what `--expect-*` and pull secrets read, and the
/// status the checks judge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "PodWire")]
pub struct Pod {
    pub metadata: ObjectMeta,
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
    #[serde(default, deserialize_with = "lean_meta")]
    metadata: ObjectMeta,
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

impl k8s_openapi::Resource for Pod {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for Pod {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
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
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    owner_references: Option<Vec<OwnerReference>>,
    #[serde(default)]
    creation_timestamp: Option<Time>,
    #[serde(default)]
    deletion_timestamp: Option<Time>,
}

fn lean_meta<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    let Some(meta) = Option::<LeanMeta>::deserialize(deserializer)? else {
        return Ok(ObjectMeta::default());
    };
    let LeanMeta {
        name,
        namespace,
        uid,
        resource_version,
        labels,
        owner_references,
        creation_timestamp,
        deletion_timestamp,
    } = meta;
    Ok(ObjectMeta {
        name,
        namespace,
        uid,
        resource_version,
        labels,
        owner_references,
        creation_timestamp,
        deletion_timestamp,
        ..ObjectMeta::default()
    })
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
