//! How an object in its JSON form is taken into a snapshot: by kind, each workload kind
//! through its row of [`KINDS`](crate::KINDS), the other kinds the checks read typed, and
//! the rest kept raw.

use std::sync::Arc;

use serde_json::Value;

use crate::{api_group, ObjectError, Observed};

/// `value` as a `T`, or where and why not.
fn typed<T: serde::de::DeserializeOwned>(
    value: Value,
) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(value)
}

impl Observed {
    /// Takes one object (or a `kind: List` of them) in its JSON form, as `kubectl get -o json`
    /// prints it. `what` names where it came from, for errors.
    pub fn add_value(&mut self, value: Value, what: &str) -> Result<(), ObjectError> {
        // `kubectl get -o yaml` of several objects prints a List; so does `*List` kinds.
        crate::objects::each_object(value, what, &mut |object, what| {
            self.add_object(object, what)
        })
    }

    /// [`Observed::add_value`] of one object, or of a List without an `items` array (which
    /// holds none).
    fn add_object(&mut self, mut value: Value, what: &str) -> Result<(), ObjectError> {
        // The server's field-ownership bookkeeping is often the larger half of an object and
        // no check reads it (kubectl hides it too).
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| ObjectError::NoKind {
                what: what.to_string(),
            })?
            .to_string();
        let name = value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        // A List without an `items` array holds no object.
        if crate::objects::is_list(&value) {
            return Ok(());
        }
        // The typed structs fill a missing required field with a default, which would turn a
        // broken document into a quietly wrong workload: refuse what no API server returns.
        let group = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(api_group);
        let workload =
            crate::TargetKind::workload_named(&kind, group).and_then(|k| k.spec().workload);
        let required: &[(&str, &'static str)] = match kind.as_str() {
            // A Rollout may take its template from another object (`spec.workloadRef`).
            _ if workload.is_some() && value.pointer("/spec/workloadRef").is_some() => {
                &[("/metadata/name", "metadata.name"), ("/spec", "spec")]
            }
            _ if workload.is_some() => &[
                ("/metadata/name", "metadata.name"),
                ("/spec", "spec"),
                ("/spec/selector", "spec.selector"),
                ("/spec/template", "spec.template"),
            ],
            "ReplicaSet" | "Pod" | "ControllerRevision" | "Node" | "Service" | "EndpointSlice" => {
                &[("/metadata/name", "metadata.name")]
            }
            _ => &[],
        };
        if let Some((_, field)) = required
            .iter()
            .find(|(ptr, _)| value.pointer(ptr).is_none_or(Value::is_null))
        {
            return Err(ObjectError::Missing {
                what: what.to_string(),
                kind,
                name,
                field,
            });
        }
        let invalid = |err: serde_path_to_error::Error<serde_json::Error>| ObjectError::Invalid {
            what: format!("{what}: {kind}/{name}"),
            kind: kind.clone(),
            field: err.path().to_string(),
            problem: liveproof_redacted::parse::data_problem(&err.inner().to_string()),
        };
        match kind.as_str() {
            _ if workload.is_some() => {
                if let Some(fns) = workload {
                    (fns.add)(self, value).map_err(invalid)?;
                }
            }
            "ReplicaSet" => self
                .replicasets
                .push(Arc::new(typed(value).map_err(invalid)?)),
            "ControllerRevision" => self
                .controller_revisions
                .push(Arc::new(typed(value).map_err(invalid)?)),
            "Pod" => self.pods.push(Arc::new(typed(value).map_err(invalid)?)),
            // Knative's `serving.knative.dev` Service is another kind of the same name.
            "Service" if group == Some("") => {
                self.services.push(Arc::new(typed(value).map_err(invalid)?))
            }
            "EndpointSlice" if group == Some("discovery.k8s.io") => self
                .endpoint_slices
                .push(Arc::new(typed(value).map_err(invalid)?)),
            "Node" => self.nodes.push(typed(value).map_err(invalid)?),
            _ => self.others.push(value),
        }
        Ok(())
    }
}
