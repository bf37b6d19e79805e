//! What the gather reads of any object, whatever its kind: its metadata ([`Meta`]) and a raw
//! object as JSON. A leaf: the kind table ([`kinds`](super::kinds)) and the objects it holds
//! ([`objects`](super::objects)) both read it, and it reads neither.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{DynamicObject, TypeMeta};
use liveproof_evidence::pod::PodMeta;
use liveproof_evidence::{selector, ResourceKind};
use serde_json::Value;

/// An object's metadata as the gather reads it: an `ObjectMeta`, or a pod's lean one
/// ([`PodMeta`]: what the checks read of a pod, and no more).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Meta<'a> {
    Object(&'a ObjectMeta),
    Pod(&'a PodMeta),
}

impl<'a> Meta<'a> {
    pub(crate) fn name(self) -> Option<&'a str> {
        match self {
            Meta::Object(m) => m.name.as_deref(),
            Meta::Pod(m) => m.name.as_deref(),
        }
    }

    pub(crate) fn namespace(self) -> Option<&'a str> {
        match self {
            Meta::Object(m) => m.namespace.as_deref(),
            Meta::Pod(m) => m.namespace.as_deref(),
        }
    }

    pub(crate) fn uid(self) -> Option<&'a str> {
        match self {
            Meta::Object(m) => m.uid.as_deref(),
            Meta::Pod(m) => m.uid.as_deref(),
        }
    }

    pub(crate) fn resource_version(self) -> Option<&'a str> {
        match self {
            Meta::Object(m) => m.resource_version.as_deref(),
            Meta::Pod(m) => m.resource_version.as_deref(),
        }
    }

    /// The value of its label `key`.
    pub(crate) fn label(self, key: &str) -> Option<&'a str> {
        use liveproof_evidence::selector::LabelMap as _;
        match self {
            Meta::Object(m) => m.labels.as_ref()?.label(key),
            Meta::Pod(m) => m.labels.as_ref()?.label(key),
        }
    }

    /// Whether `selector` selects it, by its labels.
    pub(crate) fn selected_by(self, selector: &LabelSelector) -> bool {
        match self {
            Meta::Object(m) => selector::matches(selector, m.labels.as_ref()),
            Meta::Pod(m) => selector::matches(selector, m.labels.as_ref()),
        }
    }

    /// Identity for de-duplication: the uid, or namespace/name when the uid is missing.
    pub(crate) fn identity(self) -> std::borrow::Cow<'a, str> {
        match self.uid() {
            Some(uid) if !uid.is_empty() => uid.into(),
            _ => format!(
                "{}/{}",
                self.namespace().unwrap_or("default"),
                self.name().unwrap_or_default()
            )
            .into(),
        }
    }
}

/// A raw object as JSON, with `apiVersion` and `kind` filled in (a LIST of a built-in kind
/// omits them on its items, and `Observed::others_of` matches on them).
pub(crate) fn raw_value(kind: ResourceKind, mut object: DynamicObject) -> Value {
    if object.types.as_ref().is_none_or(|t| t.kind.is_empty()) {
        object.types = Some(TypeMeta {
            api_version: kind.api_version().to_string(),
            kind: kind.kind_name().to_string(),
        });
    }
    // A DynamicObject is a JSON map; it always serializes.
    serde_json::to_value(object).unwrap_or(Value::Null)
}
