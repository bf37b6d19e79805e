//! [`Lean<T>`]: an object of a typed kind decoded without its `metadata.managedFields`.
//!
//! The server's field-ownership bookkeeping is often the larger half of an object as the real
//! API server sends it (a `fieldsV1` tree per manager), no check reads it, and the offline
//! loader drops it too. Decoded into `T` and dropped afterwards, each `fieldsV1` was first a
//! whole `serde_json::Value` tree, a page of them at once; through `Lean<T>` the decoder skips
//! it as it reads (`IgnoredAny`), and every other field reaches `T`'s own `Deserialize`
//! untouched. kube decodes a GET, each item of a LIST page and each watch event into the
//! kind's `Wire` type, so this one wrapper covers all three.

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

/// `T` as decoded from the API, its `metadata.managedFields` skipped while decoding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lean<T>(pub(crate) T);

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for Lean<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(Skipping {
            inner: deserializer,
            at: Level::Object,
        })
        .map(Lean)
    }
}

impl<T: k8s_openapi::Resource> k8s_openapi::Resource for Lean<T> {
    const API_VERSION: &'static str = T::API_VERSION;
    const GROUP: &'static str = T::GROUP;
    const KIND: &'static str = T::KIND;
    const VERSION: &'static str = T::VERSION;
    const URL_PATH_SEGMENT: &'static str = T::URL_PATH_SEGMENT;
    type Scope = T::Scope;
}

impl<T: k8s_openapi::Metadata<Ty = ObjectMeta>> k8s_openapi::Metadata for Lean<T> {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        self.0.metadata()
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        self.0.metadata_mut()
    }
}

/// Where a [`Skipping`] deserializer stands: at the object (whose `metadata` it follows) or in
/// its metadata (whose `managedFields` it skips).
#[derive(Clone, Copy)]
enum Level {
    Object,
    Metadata,
}

/// A deserializer that hands every request on to `inner`, except that a struct or map (or
/// anything, asked for as such) is read through [`SkippingMap`].
struct Skipping<D> {
    inner: D,
    at: Level,
}

/// Every `deserialize_*` method named, handed on to `inner` as it is.
macro_rules! forward {
    ($($method:ident $(($($arg:ident: $ty:ty),*))?),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, $($($arg: $ty,)*)? visitor: V) -> Result<V::Value, D::Error> {
            self.inner.$method($($($arg,)*)? visitor)
        })*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Skipping<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(Skip {
            inner: visitor,
            at: self.at,
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(Skip {
            inner: visitor,
            at: self.at,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_struct(
            name,
            fields,
            Skip {
                inner: visitor,
                at: self.at,
            },
        )
    }

    /// An `Option<ObjectMeta>` (how a typed kind holds its metadata) reaches its
    /// `ObjectMeta` through `visit_some`, still skipping.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_option(Skip {
            inner: visitor,
            at: self.at,
        })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_newtype_struct(
            name,
            Skip {
                inner: visitor,
                at: self.at,
            },
        )
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }

    forward! {
        deserialize_bool, deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64,
        deserialize_i128, deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64,
        deserialize_u128, deserialize_f32, deserialize_f64, deserialize_char, deserialize_str,
        deserialize_string, deserialize_bytes, deserialize_byte_buf,
        deserialize_unit, deserialize_seq, deserialize_identifier, deserialize_ignored_any,
        deserialize_unit_struct(name: &'static str),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
    }
}

/// The visitor `T` gave, handed a map through [`SkippingMap`]; anything else as it came (the
/// type's own visitor then refuses what it does not take, with the same error).
struct Skip<V> {
    inner: V,
    at: Level,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Skip<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(SkippingMap {
            inner: map,
            at: self.at,
            metadata_next: false,
        })
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        self.inner.visit_bool(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.inner.visit_i64(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.inner.visit_u64(v)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        self.inner.visit_i128(v)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        self.inner.visit_u128(v)
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        self.inner.visit_bytes(v)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        self.inner.visit_borrowed_bytes(v)
    }
    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        self.inner.visit_byte_buf(v)
    }
    fn visit_newtype_struct<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_newtype_struct(Skipping {
            inner: d,
            at: self.at,
        })
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(data)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.inner.visit_f64(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.inner.visit_str(v)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.inner.visit_borrowed_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.inner.visit_string(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }
    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_some(Skipping {
            inner: d,
            at: self.at,
        })
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(seq)
    }
}

/// An object's map as `T` reads it: at the object, the value of `metadata` is read through
/// another [`Skipping`]; in the metadata, the key `managedFields` and its value are skipped
/// (read as [`IgnoredAny`], never held). Every other key and value passes as it came.
struct SkippingMap<A> {
    inner: A,
    at: Level,
    /// The key just handed on was the object's `metadata`.
    metadata_next: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkippingMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.inner.next_key::<Cow<'de, str>>()? else {
                return Ok(None);
            };
            match self.at {
                Level::Metadata if key == "managedFields" => {
                    self.inner.next_value::<IgnoredAny>()?;
                    continue;
                }
                Level::Object => self.metadata_next = key == "metadata",
                Level::Metadata => {}
            }
            return match key {
                Cow::Borrowed(key) => seed
                    .deserialize(de::value::BorrowedStrDeserializer::new(key))
                    .map(Some),
                Cow::Owned(key) => seed
                    .deserialize(de::value::StringDeserializer::new(key))
                    .map(Some),
            };
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        if std::mem::take(&mut self.metadata_next) {
            self.inner.next_value_seed(MetadataSeed(seed))
        } else {
            self.inner.next_value_seed(seed)
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The seed of an object's `metadata` value, read through a [`Skipping`] at the metadata.
struct MetadataSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for MetadataSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Skipping {
            inner: deserializer,
            at: Level::Metadata,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{ControllerRevision, Deployment, ReplicaSet};
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use liveproof_evidence::kinds::argo_rollout::Rollout;
    use serde::de::DeserializeOwned;
    use serde_json::{json, Value};

    /// What the real API server (v1.34) puts in an object's metadata: two managers, each with
    /// its `fieldsV1` tree.
    fn managed_fields(spec_key: &str) -> Value {
        json!([
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2026-12-05T10:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {".": {},
                 "f:kubectl.kubernetes.io/last-applied-configuration": {}},
                 "f:labels": {".": {}, "f:app": {}}},
                 spec_key: {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata":
                     {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"k:{\"name\":\"web\"}": {
                     ".": {}, "f:image": {}, "f:name": {}}}}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2026-12-05T10:00:09Z", "fieldsType": "FieldsV1", "subresource": "status",
             "fieldsV1": {"f:status": {"f:conditions": {".": {},
                 "k:{\"type\":\"Available\"}": {".": {}, "f:status": {}, "f:type": {}}},
                 "f:observedGeneration": {}, "f:readyReplicas": {}}}}
        ])
    }

    fn metadata(name: &str, spec_key: &str) -> Value {
        json!({
            "name": name, "namespace": "shop", "uid": "3f9c2a1e-7b7d-4d7e-9a51-0c4b1f0e2d11",
            "resourceVersion": "48213", "generation": 3,
            "creationTimestamp": "2026-12-05T10:00:00Z",
            "labels": {"app": "web", "pod-template-hash": "7d9f8c6b5"},
            "annotations": {"deployment.kubernetes.io/revision": "3",
                "kubectl.kubernetes.io/last-applied-configuration": "{\"kind\":\"Deployment\"}"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                "uid": "0b1d", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": managed_fields(spec_key),
            "finalizers": ["example.com/keep"],
        })
    }

    fn template() -> Value {
        json!({
            "metadata": {"labels": {"app": "web"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-12-05T09:00:00Z"}},
            "spec": {"containers": [{"name": "web", "image": "registry.example/web@sha256:0123",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "prod"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
                "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"}],
                "imagePullSecrets": [{"name": "pull"}],
                "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
                "securityContext": {}}
        })
    }

    fn conditions() -> Value {
        json!([
            {"type": "Available", "status": "True", "lastUpdateTime": "2026-12-05T10:00:09Z",
             "lastTransitionTime": "2026-12-05T10:00:09Z", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": "2026-12-05T10:00:09Z",
             "lastTransitionTime": "2026-12-05T10:00:00Z", "reason": "NewReplicaSetAvailable",
             "message": "ReplicaSet \"web-7d9f8c6b5\" has successfully progressed."}
        ])
    }

    /// Decoded through `Lean<T>`, and as `T` with its managedFields dropped afterwards: the
    /// same object, so no field a check reads is lost; and the managedFields are gone.
    fn same_as_typed_then_stripped<T>(sent: Value)
    where
        T: DeserializeOwned
            + k8s_openapi::Metadata<Ty = ObjectMeta>
            + PartialEq
            + fmt::Debug
            + serde::Serialize,
    {
        assert!(
            sent["metadata"]["managedFields"].is_array(),
            "a real-looking object"
        );
        let text = serde_json::to_string(&sent).expect("json");
        let Lean(lean) = serde_json::from_str::<Lean<T>>(&text).expect("decoded lean");
        let mut typed: T = serde_json::from_str(&text).expect("decoded typed");
        assert!(typed.metadata().managed_fields.is_some());
        typed.metadata_mut().managed_fields = None;
        assert_eq!(lean, typed);
        assert_eq!(lean.metadata().managed_fields, None);
        // And every field sent is still there, but managedFields (and the apiVersion and kind
        // a type of evidence's own does not write back).
        let mut expected = sent.clone();
        expected["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("managedFields");
        let written = serde_json::to_value(&lean).expect("json");
        for key in ["apiVersion", "kind"] {
            if written.get(key).is_none() {
                expected.as_object_mut().expect("an object").remove(key);
            }
        }
        assert_eq!(written, expected);
        // From a `Value` (kube's watch events and tests), and through a reader, the same.
        let Lean(from_value) = serde_json::from_value::<Lean<T>>(sent).expect("a value");
        assert_eq!(from_value, lean);
        let Lean(from_reader) =
            serde_json::from_reader::<_, Lean<T>>(text.as_bytes()).expect("from a reader");
        assert_eq!(from_reader, lean);
    }

    #[test]
    fn a_deployment_decoded_lean_is_the_typed_one_without_managed_fields() {
        same_as_typed_then_stripped::<Deployment>(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": metadata("web", "f:spec"),
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                "template": template(), "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                "strategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}},
            "status": {"observedGeneration": 3, "replicas": 5, "updatedReplicas": 5,
                "readyReplicas": 5, "availableReplicas": 5, "conditions": conditions()},
        }));
    }

    #[test]
    fn a_replicaset_decoded_lean_is_the_typed_one_without_managed_fields() {
        same_as_typed_then_stripped::<ReplicaSet>(json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": metadata("web-7d9f8c6b5", "f:spec"),
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web",
                "pod-template-hash": "7d9f8c6b5"}}, "template": template()},
            "status": {"replicas": 5, "fullyLabeledReplicas": 5, "readyReplicas": 5,
                "availableReplicas": 5, "observedGeneration": 1},
        }));
    }

    #[test]
    fn a_service_decoded_lean_is_the_typed_one_without_managed_fields() {
        same_as_typed_then_stripped::<Service>(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": metadata("web", "f:spec"),
            "spec": {"selector": {"app": "web"}, "type": "ClusterIP", "clusterIP": "10.96.12.7",
                "clusterIPs": ["10.96.12.7"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
                "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
            "status": {"loadBalancer": {}},
        }));
    }

    #[test]
    fn an_endpointslice_decoded_lean_is_the_typed_one_without_managed_fields() {
        let mut meta = metadata("web-abcde", "f:endpoints");
        meta["labels"] = json!({"kubernetes.io/service-name": "web",
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"});
        same_as_typed_then_stripped::<EndpointSlice>(json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": meta, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.244.0.12"],
                "conditions": {"ready": true, "serving": true, "terminating": false},
                "nodeName": "node-1",
                "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-7d9f8c6b5-x2x4q",
                    "uid": "9a0c"}}],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        }));
    }

    #[test]
    fn a_controller_revision_decoded_lean_is_the_typed_one_without_managed_fields() {
        same_as_typed_then_stripped::<ControllerRevision>(json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": metadata("db-5c7b8d9f4", "f:data"),
            "revision": 2,
            // A key named like the one skipped, out of metadata: kept.
            "data": {"spec": {"template": template(), "managedFields": [1, 2]},
                "metadata": {"managedFields": "kept"}},
        }));
    }

    #[test]
    fn a_rollout_decoded_lean_is_the_typed_one_without_managed_fields() {
        same_as_typed_then_stripped::<Rollout>(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
            "metadata": metadata("web", "f:spec"),
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                "template": template()},
        }));
    }

    /// A malformed object is refused as `T` refuses it.
    #[test]
    fn what_t_refuses_lean_refuses() {
        for bad in [
            json!([1, 2]),
            json!({"metadata": 3}),
            json!({"metadata": {"managedFields": [], "name": 7}}),
            json!({"spec": {"replicas": "five"}}),
        ] {
            let typed = serde_json::from_value::<Deployment>(bad.clone()).map(|_| ());
            let lean = serde_json::from_value::<Lean<Deployment>>(bad.clone()).map(|_| ());
            assert_eq!(
                lean.map_err(|e| e.to_string()),
                typed.map_err(|e| e.to_string()),
                "{bad}"
            );
        }
    }
}
