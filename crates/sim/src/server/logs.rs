//! `pods/log`: a pod's log, from the lines an annotation on the pod holds.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::{is_true, ResourceRequest, Shared};
use crate::lock;
use crate::status::ApiError;
use crate::store::Store;

/// The annotation a fixture pod carries its log text in: a JSON map from container name (or
/// `NAME/previous` for the last terminated run) to text. Lines may start with an RFC 3339
/// time, which `sinceTime` filters on (as `kubectl logs --timestamps` prints them).
pub const LOG_ANNOTATION: &str = "sim.liveproof.dev/logs";

/// `GET /api/v1/namespaces/NS/pods/NAME/log` with `container`, `tailLines`, `previous`,
/// `sinceTime`, answered as the kubelet would (plain text; errors as `Status`).
pub(super) fn serve_log(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    q: &HashMap<String, String>,
) -> Result<String, ApiError> {
    let name = r.name.clone().unwrap_or_default();
    let key = Store::key(&r.info, r.namespace.as_deref(), &name);
    let st = lock(&sh.store);
    let pod = st
        .get(&key)
        .ok_or_else(|| ApiError::not_found(&r.info, &name))?;
    let containers: Vec<String> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let container = match q.get("container") {
        Some(c) if containers.contains(c) => c.clone(),
        Some(c) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )))
        }
        None if containers.len() == 1 => containers[0].clone(),
        None => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            )))
        }
    };
    let logs: serde_json::Map<String, Value> = pod
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LOG_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    let previous = is_true(q, "previous");
    let entry = if previous {
        format!("{container}/previous")
    } else {
        container.clone()
    };
    let Some(text) = logs.get(&entry).and_then(Value::as_str) else {
        if previous {
            return Err(ApiError::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{name}\" not found"
            )));
        }
        return Ok(String::new());
    };
    let since: Option<jiff::Timestamp> = q.get("sinceTime").and_then(|t| t.parse().ok());
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|line| match since {
            Some(since) => line
                .split_whitespace()
                .next()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .is_none_or(|t| t >= since),
            None => true,
        })
        .collect();
    if let Some(tail) = q.get("tailLines").and_then(|t| t.parse::<usize>().ok()) {
        let skip = lines.len().saturating_sub(tail);
        lines.drain(..skip);
    }
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}
