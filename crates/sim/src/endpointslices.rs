//! The endpointslice controller's part: each Service written through the API with a selector
//! gets one EndpointSlice (`discovery.k8s.io/v1`) listing the pods it selects, as the real
//! controller writes it: label `kubernetes.io/service-name`, owned by the Service, an endpoint
//! per pod (not for a finished one) with `targetRef` to the pod, `ready` for a Ready pod that is
//! not terminating, `serving` for a Ready one, `terminating` for one being deleted. A Service
//! loaded as a fixture with slices keeps them as loaded (fixtures tell their story as written);
//! one loaded without any gets them kept, as a real cluster would have them.
//!
//! Simulated pods carry no `podIP`; an endpoint's address is then made up from the pod's uid
//! (in 10.244.0.0/16), where the real controller would wait for the kubelet to assign one.

use serde_json::{json, Value};

use crate::store::{meta_str, ObjKey, Store, Writer};

/// The label the slices carry their Service's name in.
const SERVICE_NAME: &str = "kubernetes.io/service-name";
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER: &str = "endpointslice-controller.k8s.io";

/// Hands the controller the fixture Services with a selector that came without a slice: on a
/// real cluster the controller would have written one.
pub(crate) fn adopt_fixtures(st: &mut Store) {
    let (Some(service_info), Some(slice_info)) = (
        st.lookup("v1", "Service"),
        st.lookup("discovery.k8s.io/v1", "EndpointSlice"),
    ) else {
        return;
    };
    let sliced: std::collections::BTreeSet<(String, String)> = st
        .list(&slice_info, None)
        .into_iter()
        .filter_map(|(key, s)| {
            let service = s.pointer("/metadata/labels")?.get(SERVICE_NAME)?.as_str()?;
            Some((key.2.clone(), service.to_owned()))
        })
        .collect();
    let adopted: Vec<ObjKey> = st
        .list(&service_info, None)
        .into_iter()
        .filter(|(key, service)| {
            service
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .is_some_and(|s| !s.is_empty())
                && !sliced.contains(&(key.2.clone(), key.3.clone()))
        })
        .map(|(key, _)| key.clone())
        .collect();
    st.routed.extend(adopted);
}

/// Brings the slices of every Service written through the API up to date; writes only what
/// changed, so a quiet cluster makes no watch events.
pub(crate) fn reconcile(st: &mut Store) {
    let (Some(slice_info), Some(pod_info)) = (
        st.lookup("discovery.k8s.io/v1", "EndpointSlice"),
        st.lookup("v1", "Pod"),
    ) else {
        return;
    };
    let services: Vec<ObjKey> = st.routed.iter().cloned().collect();
    for key in services {
        let slice_key = Store::key(&slice_info, Some(&key.2), &slice_name(&key.3));
        let Some(service) = st.get(&key).cloned() else {
            st.routed.remove(&key);
            // The garbage collector's part: the Service owned it.
            if st.contains(&slice_key) {
                let _ = st.delete(&slice_info, &slice_key);
            }
            continue;
        };
        let selector: Vec<(String, String)> = service
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        if selector.is_empty() {
            // A selector-less Service's slices are written by hand, not by the controller.
            continue;
        }
        let pods: Vec<Value> = st
            .list(&pod_info, Some(&key.2))
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| {
                selector.iter().all(|(k, v)| {
                    p.pointer("/metadata/labels")
                        .and_then(|l| l.get(k))
                        .and_then(Value::as_str)
                        == Some(v.as_str())
                })
            })
            .filter(|p| {
                !matches!(
                    p.pointer("/status/phase").and_then(Value::as_str),
                    Some("Succeeded" | "Failed")
                )
            })
            .cloned()
            .collect();
        let endpoints: Vec<Value> = pods.iter().map(endpoint).collect();
        let ports = ports(&service, pods.first());
        let existing = st.get(&slice_key);
        let unchanged = existing.is_some_and(|s| {
            s.get("endpoints").cloned().unwrap_or(Value::Null)
                == if endpoints.is_empty() {
                    Value::Null
                } else {
                    json!(endpoints)
                }
                && s.get("ports") == Some(&ports)
        });
        if unchanged {
            continue;
        }
        let mut slice = json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": slice_name(&key.3),
                "generateName": format!("{}-", key.3),
                "namespace": key.2,
                "labels": {SERVICE_NAME: key.3, MANAGED_BY: CONTROLLER},
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Service", "name": key.3,
                    "uid": meta_str(&service, "uid").unwrap_or_default(),
                    "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "addressType": "IPv4",
            // The real controller writes `null` for no endpoints (the field has no omitempty).
            "endpoints": if endpoints.is_empty() { Value::Null } else { json!(endpoints) },
            "ports": ports,
        });
        let result = match existing.cloned() {
            Some(old) => {
                slice["metadata"]["resourceVersion"] = old
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or(Value::Null);
                st.update(&slice_info, &slice_key, slice, Writer::Controller)
            }
            None => st.create(&slice_info, slice),
        };
        if let Err(e) = result {
            tracing::warn!(message = %e.message, "simulated endpointslice controller could not write");
        }
    }
}

/// `SERVICE-xxxxx`: the real controller's generateName with a suffix fixed per Service, so
/// there is one slice to keep up to date.
fn slice_name(service: &str) -> String {
    let hash = service.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let suffix: String = (0..5)
        .map(|i| char::from(ALPHABET[((hash >> (i * 5)) as usize) % ALPHABET.len()]))
        .collect();
    format!("{service}-{suffix}")
}

fn endpoint(pod: &Value) -> Value {
    let ready = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    let terminating = pod.pointer("/metadata/deletionTimestamp").is_some();
    let uid = meta_str(pod, "uid").unwrap_or_default();
    let address = pod
        .pointer("/status/podIP")
        .and_then(Value::as_str)
        .map_or_else(|| address_of(uid), str::to_owned);
    let mut out = json!({
        "addresses": [address],
        "conditions": {"ready": ready && !terminating, "serving": ready, "terminating": terminating},
        "targetRef": {
            "kind": "Pod",
            "namespace": meta_str(pod, "namespace").unwrap_or_default(),
            "name": meta_str(pod, "name").unwrap_or_default(),
            "uid": uid,
        },
    });
    if let Some(node) = pod.pointer("/spec/nodeName").and_then(Value::as_str) {
        out["nodeName"] = json!(node);
    }
    out
}

/// A made-up pod address, stable per pod.
fn address_of(uid: &str) -> String {
    let hash = uid.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!(
        "10.244.{}.{}",
        (hash >> 8) & 0xff,
        (hash & 0xff).clamp(1, 254)
    )
}

/// The Service's ports as a slice lists them: the target port (a named one resolved in
/// `pod`'s containers; left out when it names none there, as the real controller does).
fn ports(service: &Value, pod: Option<&Value>) -> Value {
    let ports: Vec<Value> = service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let target = p.get("targetPort").or_else(|| p.get("port"))?;
            let number = match target {
                Value::String(name) => pod?
                    .pointer("/spec/containers")
                    .and_then(Value::as_array)?
                    .iter()
                    .flat_map(|c| {
                        c.get("ports")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                    })
                    .find(|cp| cp.get("name").and_then(Value::as_str) == Some(name))?
                    .get("containerPort")?
                    .clone(),
                other => other.clone(),
            };
            let mut port = json!({
                "port": number,
                "protocol": p.get("protocol").cloned().unwrap_or_else(|| json!("TCP")),
            });
            port["name"] = p.get("name").cloned().unwrap_or_else(|| json!(""));
            Some(port)
        })
        .collect();
    json!(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_names_look_generated_and_stay_put() {
        let a = slice_name("inventory");
        assert!(
            a.starts_with("inventory-") && a.len() == "inventory-".len() + 5,
            "{a}"
        );
        assert_eq!(a, slice_name("inventory"));
        assert_ne!(a, slice_name("checkout"));
    }

    #[test]
    fn an_endpoint_is_ready_only_for_a_ready_pod_not_terminating() {
        let pod = |ready: &str, deleting: bool| {
            let mut p = json!({
                "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1"},
                "status": {"podIP": "10.1.2.3", "conditions": [{"type": "Ready", "status": ready}]}
            });
            if deleting {
                p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            }
            p
        };
        let e = endpoint(&pod("True", false));
        assert_eq!(e["conditions"]["ready"], true);
        assert_eq!(e["targetRef"]["name"], "web-1");
        assert_eq!(e["addresses"][0], "10.1.2.3");
        let e = endpoint(&pod("True", true));
        assert_eq!(e["conditions"]["ready"], false);
        assert_eq!(e["conditions"]["serving"], true);
        assert_eq!(e["conditions"]["terminating"], true);
        assert_eq!(endpoint(&pod("False", false))["conditions"]["ready"], false);
    }
}
