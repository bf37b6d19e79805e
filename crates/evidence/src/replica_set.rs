//! A ReplicaSet as the checks read it: its metadata, its status, and its pod template held as
//! the JSON text of the template it was decoded into, not as the template itself.
//!
//! `k8s_openapi`'s `ReplicaSet` is 2,288 bytes before any of its fields is set (its pod spec is
//! inline), each container another 2,120, and the template's labels a `BTreeMap` (a 544-byte
//! node): some 5 kB a ReplicaSet, and `--wait` at 2,000 Deployments holds 4,000 of them by the
//! end of a rollout (old and new), about 20 MB. The template is read only to compare it with a
//! workload's ([`crate::kinds::deployment`]) and to judge a past revision
//! ([`crate::checks::superseded`]), so it is kept as the text `k8s_openapi` writes of it (a
//! few hundred bytes) and decoded again when compared: the bounds are
//! `tests::a_lean_replicaset_stays_small`.
//!
//! Decoding is `k8s_openapi`'s where it reads: `apiVersion` and `kind` must say `apps/v1` and
//! `ReplicaSet` when present, and the template is decoded in full as `k8s_openapi` decodes it
//! (a field of the wrong type refuses the ReplicaSet, by its path), then written as JSON; what
//! is read again is what was decoded, field for field
//! (`tests::the_template_reads_back_as_it_was_decoded`).

use std::fmt;

use k8s_openapi::api::apps::v1::ReplicaSetStatus;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer};

use crate::pod::{exactly, null_default};

/// An `apps/v1` `ReplicaSet`: what the checks read of it (the metadata, the spec's pod template,
/// the status). Field names and shapes are `k8s_openapi`'s but for the template
/// ([`PodTemplate`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "Wire")]
pub struct ReplicaSet {
    pub metadata: ObjectMeta,
    pub spec: Option<ReplicaSetSpec>,
    pub status: Option<ReplicaSetStatus>,
}

impl ReplicaSet {
    /// Its pod template, as held.
    pub fn template(&self) -> Option<&PodTemplate> {
        self.spec.as_ref()?.template.as_ref()
    }
}

#[cfg(test)]
impl ReplicaSet {
    /// Holds text that is no template in place of its pod template, as nothing decoded ever
    /// holds: how a check copes with a template that does not read back.
    pub(crate) fn spoil_template(&mut self) {
        if let Some(spec) = self.spec.as_mut() {
            spec.template = Some(PodTemplate("{\"spec\": 7}".into()));
        }
    }

    /// Sets label `key` to `value` on it and on its pod template, as its controller sets the
    /// hash on both.
    pub(crate) fn label_with_template(&mut self, key: &str, value: &str) {
        let mut template = self
            .template()
            .expect("a template")
            .read()
            .expect("reads back");
        for labels in [
            self.metadata.labels.as_mut(),
            template.metadata.as_mut().and_then(|m| m.labels.as_mut()),
        ]
        .into_iter()
        .flatten()
        {
            labels.insert(key.into(), value.into());
        }
        if let Some(spec) = self.spec.as_mut() {
            spec.template = Some(PodTemplate::new(&template).expect("writes"));
        }
    }
}

/// `spec`: the pod template, all the checks read of it (its replica count and selector are
/// the controller's; the status counts what it made of them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ReplicaSetSpec {
    #[serde(default)]
    pub template: Option<PodTemplate>,
}

/// A pod template, held as the JSON `k8s_openapi` writes of it once decoded ([`Self::read`]
/// decodes it again).
#[derive(Clone, PartialEq, Eq)]
pub struct PodTemplate(Box<str>);

impl PodTemplate {
    /// `template` as held.
    pub fn new(template: &PodTemplateSpec) -> Result<PodTemplate, serde_json::Error> {
        serde_json::to_string(template).map(|json| PodTemplate(json.into_boxed_str()))
    }

    /// The template, decoded again from what was written of it: what was decoded, field for
    /// field. An error only if the text held were not what [`Self::new`] wrote.
    pub fn read(&self) -> Result<PodTemplateSpec, serde_json::Error> {
        serde_json::from_str(&self.0)
    }
}

impl fmt::Debug for PodTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PodTemplate").field(&self.0).finish()
    }
}

impl<'de> Deserialize<'de> for PodTemplate {
    /// Decoded as `k8s_openapi` decodes a template (its errors, by path), then written.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PodTemplate, D::Error> {
        let template = PodTemplateSpec::deserialize(deserializer)?;
        PodTemplate::new(&template).map_err(serde::de::Error::custom)
    }
}

/// A ReplicaSet as it is written: `apiVersion` and `kind` are checked (`apps/v1` and
/// `ReplicaSet` when present, as `k8s_openapi` requires), never held.
#[derive(Deserialize)]
struct Wire {
    #[serde(
        default,
        rename = "apiVersion",
        deserialize_with = "api_version_apps_v1"
    )]
    _api_version: (),
    #[serde(default, rename = "kind", deserialize_with = "kind_replica_set")]
    _kind: (),
    #[serde(default, deserialize_with = "null_default")]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<ReplicaSetSpec>,
    #[serde(default)]
    status: Option<ReplicaSetStatus>,
}

impl From<Wire> for ReplicaSet {
    fn from(wire: Wire) -> ReplicaSet {
        ReplicaSet {
            metadata: wire.metadata,
            spec: wire.spec,
            status: wire.status,
        }
    }
}

fn api_version_apps_v1<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    exactly(deserializer, "apps/v1")
}

fn kind_replica_set<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    exactly(deserializer, "ReplicaSet")
}

impl k8s_openapi::Resource for ReplicaSet {
    const API_VERSION: &'static str = "apps/v1";
    const GROUP: &'static str = "apps";
    const KIND: &'static str = "ReplicaSet";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "replicasets";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for ReplicaSet {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A ReplicaSet as the real API server writes one of a Deployment's: defaults filled in,
    /// an env var, a probe, resources, a volume.
    fn as_sent() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "name": "web-7d9f8c6b5", "namespace": "shop", "uid": "u-rs", "generation": 3,
                "resourceVersion": "812", "creationTimestamp": "2026-12-05T10:00:00Z",
                "labels": {"app": "web", "pod-template-hash": "7d9f8c6b5"},
                "annotations": {"deployment.kubernetes.io/revision": "4"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                     "uid": "u-web", "controller": true, "blockOwnerDeletion": true}]
            },
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web", "pod-template-hash": "7d9f8c6b5"}},
                "template": {
                    "metadata": {"labels": {"app": "web", "pod-template-hash": "7d9f8c6b5"},
                                 "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-12-05T09:59:00Z"}},
                    "spec": {
                        "containers": [{
                            "name": "app", "image": "ghcr.io/acme/web:2.4.0",
                            "imagePullPolicy": "IfNotPresent",
                            "env": [{"name": "MODE", "value": "fast"}],
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "readinessProbe": {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"},
                                               "periodSeconds": 10, "successThreshold": 1,
                                               "failureThreshold": 3, "timeoutSeconds": 1},
                            "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m"}},
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File",
                            "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}]
                        }],
                        "volumes": [{"name": "config", "configMap": {"name": "web", "defaultMode": 420}}],
                        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                        "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": "default-scheduler"
                    }
                }
            },
            "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                       "fullyLabeledReplicas": 3, "observedGeneration": 3}
        })
    }

    fn typed(value: Value) -> Result<ReplicaSet, serde_json::Error> {
        serde_json::from_value(value)
    }

    /// Every field a check reads of a ReplicaSet is what `k8s_openapi` reads of it: the
    /// metadata and status whole, and the template, read back, equal to `k8s_openapi`'s.
    #[test]
    fn the_template_reads_back_as_it_was_decoded() {
        let full: k8s_openapi::api::apps::v1::ReplicaSet =
            serde_json::from_value(as_sent()).expect("k8s_openapi decodes it");
        let lean = typed(as_sent()).expect("a ReplicaSet");
        assert_eq!(lean.metadata, full.metadata);
        assert_eq!(lean.status, full.status);
        let template = lean
            .template()
            .expect("a template")
            .read()
            .expect("reads back");
        let want = full.spec.and_then(|s| s.template).expect("a template");
        assert_eq!(template, want);
        // Written again, the same text: what is held is stable, so two equal templates are
        // held as equal text.
        assert_eq!(PodTemplate::new(&template).expect("writes"), {
            let spec = lean.spec.expect("a spec");
            spec.template.expect("a template")
        });
    }

    /// A fifth of `k8s_openapi`'s ReplicaSet, measured by what it holds inline and what its
    /// template's text takes.
    #[test]
    fn a_lean_replicaset_stays_small() {
        let lean = typed(as_sent()).expect("a ReplicaSet");
        let inline = std::mem::size_of_val(&lean);
        let full_inline = std::mem::size_of::<k8s_openapi::api::apps::v1::ReplicaSet>();
        assert!(
            inline * 2 <= full_inline,
            "{inline} bytes inline against k8s_openapi's {full_inline}"
        );
        let text = lean.spec.and_then(|s| s.template).map_or(0, |t| t.0.len());
        let container = std::mem::size_of::<k8s_openapi::api::core::v1::Container>();
        assert!(
            (1..container).contains(&text),
            "the template's text takes {text} bytes, not less than one empty container ({container})"
        );
    }

    /// `apiVersion` and `kind` are checked as `k8s_openapi` checks them, and a template field
    /// of the wrong type refuses the ReplicaSet by its path, in `k8s_openapi`'s words.
    #[test]
    fn what_k8s_openapi_refuses_is_refused() {
        let mut wrong = as_sent();
        wrong["apiVersion"] = json!("v1");
        let e = typed(wrong).expect_err("v1 is no ReplicaSet's apiVersion");
        assert!(e.to_string().contains("expected apps/v1"), "{e}");
        let mut wrong = as_sent();
        wrong["kind"] = json!("Deployment");
        let e = typed(wrong).expect_err("a Deployment is no ReplicaSet");
        assert!(e.to_string().contains("expected ReplicaSet"), "{e}");
        let mut wrong = as_sent();
        wrong["spec"]["template"]["spec"]["containers"][0]["image"] = json!(7);
        let ours = typed(wrong.clone()).expect_err("an image is a string");
        let theirs = serde_json::from_value::<k8s_openapi::api::apps::v1::ReplicaSet>(wrong)
            .expect_err("k8s_openapi refuses it too");
        assert_eq!(ours.to_string(), theirs.to_string());
        // Without apiVersion and kind (a LIST's items), with a null spec and status: read.
        let bare = typed(json!({"metadata": {"name": "web-1"}, "spec": null, "status": null}))
            .expect("a bare ReplicaSet");
        assert_eq!(bare.metadata.name.as_deref(), Some("web-1"));
        assert!(bare.spec.is_none() && bare.status.is_none());
    }
}
