//! Server-side printing: the `meta.k8s.io/v1` `Table` that `kubectl get` asks for.

use serde_json::{json, Value};

use crate::resource::ResourceInfo;

/// Short human age as kubectl prints it: `45s`, `12m`, `5h`, `3d`.
pub(crate) fn human_age(created: Option<&str>) -> String {
    let Some(ts) = created.and_then(|c| c.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".to_owned();
    };
    let secs = (jiff::Timestamp::now().as_second() - ts.as_second()).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 60 * 60 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn col(name: &str, kind: &str, priority: u8, description: &str) -> Value {
    let mut c = json!({"name": name, "type": kind, "format": "", "description": description, "priority": priority});
    if name == "Name" {
        c["format"] = json!("name");
    }
    c
}

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn columns(info: &ResourceInfo) -> Vec<Value> {
    let name = col(
        "Name",
        "string",
        0,
        "Name must be unique within a namespace.",
    );
    let age = col("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created.");
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => vec![
            name,
            col("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
            col("Status", "string", 0, "The aggregate status of the containers in this pod."),
            col("Restarts", "string", 0, "The number of times the containers in this pod have been restarted."),
            age,
            col("IP", "string", 1, "IP address allocated to the pod."),
            col("Node", "string", 1, "Name of the node this pod is assigned to."),
        ],
        ("apps", "Deployment") => vec![
            name,
            col("Ready", "string", 0, "Number of the pod with ready state"),
            col("Up-to-date", "integer", 0, "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
            col("Available", "integer", 0, "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
            age,
            col("Containers", "string", 1, "Names of each container in the template."),
            col("Images", "string", 1, "Images referenced by each container in the template."),
        ],
        ("apps", "ReplicaSet") => vec![
            name,
            col("Desired", "integer", 0, "Number of desired pods."),
            col("Current", "integer", 0, "Number of actively running pods."),
            col("Ready", "integer", 0, "Number of pods ready."),
            age,
            col("Containers", "string", 1, "Names of each container in the template."),
            col("Images", "string", 1, "Images referenced by each container in the template."),
        ],
        _ => vec![name, age],
    }
}

fn pod_cells(pod: &Value) -> Vec<Value> {
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let total = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(statuses.len(), Vec::len);
    let ready = statuses
        .iter()
        .filter(|s| s["ready"] == json!(true))
        .count();
    let restarts: i64 = statuses.iter().map(|s| int(s, "/restartCount")).sum();
    let waiting = statuses.iter().find_map(|s| {
        s.pointer("/state/waiting/reason")
            .or_else(|| s.pointer("/state/terminated/reason"))
            .and_then(Value::as_str)
    });
    let status = if pod.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating".to_owned()
    } else if let Some(reason) = waiting {
        reason.to_owned()
    } else {
        pod.pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("Pending")
            .to_owned()
    };
    let s = |p: &str| {
        pod.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("<none>")
            .to_owned()
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(status),
        json!(restarts.to_string()),
        json!(human_age(
            pod.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
        )),
        json!(s("/status/podIP")),
        json!(s("/spec/nodeName")),
    ]
}

/// The template's container names and images, comma-separated, as `-o wide` shows them.
fn template_containers(obj: &Value) -> [Value; 2] {
    let containers = obj
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let join = |f: &str| {
        containers
            .iter()
            .filter_map(|c| c.get(f).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(",")
    };
    [json!(join("name")), json!(join("image"))]
}

fn replicaset_cells(rs: &Value) -> Vec<Value> {
    let mut cells = vec![
        json!(rs
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)),
        json!(int(rs, "/status/replicas")),
        json!(int(rs, "/status/readyReplicas")),
        json!(human_age(
            rs.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
        )),
    ];
    cells.extend(template_containers(rs));
    cells
}

fn deployment_cells(d: &Value) -> Vec<Value> {
    let [names, images] = template_containers(d);
    vec![
        json!(format!(
            "{}/{}",
            int(d, "/status/readyReplicas"),
            int(d, "/spec/replicas")
        )),
        json!(int(d, "/status/updatedReplicas")),
        json!(int(d, "/status/availableReplicas")),
        json!(human_age(
            d.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
        )),
        names,
        images,
    ]
}

/// One row; `include_object` follows the `includeObject` query parameter (default Metadata).
fn row(info: &ResourceInfo, obj: &Value, include_object: &str) -> Value {
    let name = obj.pointer("/metadata/name").cloned().unwrap_or(json!(""));
    let mut cells = vec![name];
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => cells.extend(pod_cells(obj)),
        ("apps", "Deployment") => cells.extend(deployment_cells(obj)),
        ("apps", "ReplicaSet") => cells.extend(replicaset_cells(obj)),
        _ => cells.push(json!(human_age(
            obj.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
        ))),
    }
    let object = match include_object {
        "None" => Value::Null,
        "Object" => obj.clone(),
        _ => {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]})
        }
    };
    json!({"cells": cells, "object": object})
}

pub(crate) fn table(
    info: &ResourceInfo,
    objs: &[&Value],
    list_meta: Value,
    include_object: &str,
) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": columns(info),
        "rows": objs.iter().map(|o| row(info, o, include_object)).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(None), "<unknown>");
        let long_ago = "2020-01-01T00:00:00Z";
        assert!(human_age(Some(long_ago)).ends_with('d'));
    }

    #[test]
    fn deployment_row_counts_replicas() {
        let info = crate::resource::builtins()
            .into_iter()
            .find(|r| r.kind == "Deployment")
            .expect("builtin");
        let d = json!({"metadata": {"name": "inventory"}, "spec": {"replicas": 3},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        let t = table(&info, &[&d], json!({}), "Metadata");
        assert_eq!(t["rows"][0]["cells"][0], "inventory");
        assert_eq!(t["rows"][0]["cells"][1], "2/3");
        assert_eq!(t["rows"][0]["cells"][2], 3);
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    }

    #[test]
    fn replicaset_row_shows_desired_current_ready() {
        let info = crate::resource::builtins()
            .into_iter()
            .find(|r| r.kind == "ReplicaSet")
            .expect("builtin");
        let rs = json!({"metadata": {"name": "web-5d8f"}, "spec": {"replicas": 0,
            "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
            "status": {"replicas": 0}});
        let t = table(&info, &[&rs], json!({}), "Metadata");
        let names: Vec<&Value> = t["columnDefinitions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| &c["name"])
            .collect();
        assert_eq!(names[..5], ["Name", "Desired", "Current", "Ready", "Age"]);
        assert_eq!(t["rows"][0]["cells"][1], 0);
        assert_eq!(t["rows"][0]["cells"][6], "nginx:1.27");
    }
}
