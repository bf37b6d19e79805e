//! The built-in Deployment controller and kubelet, so a rollout moves as on a cluster:
//! a template change gets a ReplicaSet (pod-template-hash label, revision annotation,
//! ownerReferences) with Ready pods, the old ReplicaSets scale down (their pods Terminating for
//! a grace period, then gone), and the Deployment's status follows.
//!
//! StatefulSets and DaemonSets roll the same way through ControllerRevisions (RollingUpdate:
//! one ordinal at a time from the highest; one node at a time).
//!
//! It acts only on workloads created or changed through the API after start: fixture objects
//! keep the story they were loaded with.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use crate::resource::ResourceInfo;
use crate::store::{meta_str, ObjKey, Store, Writer};

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";
const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// The alphabet Kubernetes' `rand.SafeEncodeString` uses (no vowels, no look-alikes).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// What the controller needs to know that a cluster would get from its nodes and registries.
#[derive(Debug, Clone)]
pub(crate) struct ControllerConfig {
    /// How long a scaled-down pod stays Terminating before it is gone.
    pub termination_grace: Duration,
    /// Image reference → `sha256:…` digest its pods report in `imageID`.
    pub image_digests: BTreeMap<String, String>,
}

fn stamp(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// `rand.SafeEncodeString(fmt.Sprint(hash))`: each decimal digit mapped into the alphabet.
fn safe_encode(n: u64) -> String {
    n.to_string()
        .bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

/// Drops nulls and empty maps and lists: `creationTimestamp: null` and `resources: {}` are what
/// a typed client (kubectl rollout undo) adds to a template that had neither.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), normalized(v)))
                .filter(|(_, v)| match v {
                    Value::Null => false,
                    Value::Object(m) => !m.is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    _ => true,
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// The pod template without the hash label (and without empty fields), as the real controller
/// compares templates.
fn without_hash(template: &Value) -> Value {
    let mut t = normalized(template);
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(HASH_LABEL);
    }
    t
}

/// The `pod-template-hash` of a template: FNV-32a of its content, safe-encoded.
pub(crate) fn template_hash(template: &Value) -> String {
    safe_encode(u64::from(fnv32a(
        without_hash(template).to_string().as_bytes(),
    )))
}

/// The digest a pod running `image` reports: configured, the one pinned in the reference, or a
/// deterministic sha256 of the reference.
fn image_digest(cfg: &ControllerConfig, image: &str) -> String {
    if let Some(d) = cfg.image_digests.get(image) {
        return d.clone();
    }
    if let Some((_, d)) = image.rsplit_once('@') {
        return d.to_owned();
    }
    let hex: String = Sha256::digest(image.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// `imageID` as containerd reports it: the normalised repository (no tag) @ the digest. An
/// image no runtime could pull keeps its name as written (a real kubelet never starts it).
fn image_id(cfg: &ControllerConfig, image: &str) -> String {
    let repo = match liveproof_oci::Reference::parse(image) {
        Ok(r) => format!("{}/{}", r.registry, r.repository),
        Err(_) => image.to_string(),
    };
    format!("{repo}@{}", image_digest(cfg, image))
}

fn revision(obj: &Value) -> i64 {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(REVISION))
        .and_then(Value::as_str)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn controller_ref(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// Owned by `owner` (kind, name, uid): its controller reference names it. Fixtures may carry
/// made-up uids, so a reference by kind and name counts too.
fn owned_by(obj: &Value, kind: &str, name: &str, uid: &str) -> bool {
    controller_ref(obj).is_some_and(|r| {
        r.get("kind").and_then(Value::as_str) == Some(kind)
            && (r.get("uid").and_then(Value::as_str) == Some(uid)
                || r.get("name").and_then(Value::as_str) == Some(name))
    })
}

fn is_terminating(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

fn replicas(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn owner_ref(kind: &str, obj: &Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind,
           "name": meta_str(obj, "name").unwrap_or_default(),
           "uid": meta_str(obj, "uid").unwrap_or_default(),
           "controller": true, "blockOwnerDeletion": true})
}

/// The Deployments a reconcile last left unchanged, with the resourceVersions it read then:
/// the Deployment's, its ReplicaSets' and their pods'. A reconcile is a function of those
/// objects and of the time, and the time matters only while a pod is Terminating (its grace
/// period running out is the one change no write makes). So a Deployment whose versions are
/// the same and that has no Terminating pod would be reconciled to no change again, and is
/// skipped: 2,000 settled Deployments cost a lookup each a tick, not a reconcile each (which
/// held the store, and every request waiting on it, for most of a second).
#[derive(Default)]
pub(crate) struct Settled(HashMap<ObjKey, Vec<u64>>);

/// The resourceVersions a Deployment's reconcile reads, or `None` while one of its pods is
/// Terminating.
fn deployment_versions(
    st: &Store,
    [rs_info, pod_info]: &[ResourceInfo; 2],
    key: &ObjKey,
) -> Option<Vec<u64>> {
    let deploy = st.get(key)?;
    let version = |o: &Value| {
        meta_str(o, "resourceVersion")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_default()
    };
    let uid = meta_str(deploy, "uid").unwrap_or_default();
    let mut versions = vec![version(deploy)];
    for (_, rs) in st.owned(rs_info, &key.2, "Deployment", &key.3, uid) {
        versions.push(version(rs));
        let (name, uid) = (
            meta_str(rs, "name")?,
            meta_str(rs, "uid").unwrap_or_default(),
        );
        for (_, pod) in st.owned(pod_info, &key.2, "ReplicaSet", name, uid) {
            if is_terminating(pod) {
                return None;
            }
            versions.push(version(pod));
        }
    }
    Some(versions)
}

/// Reconciles every workload changed through the API that is not settled; called on each
/// controller tick. Returns how many it reconciled.
pub(crate) fn reconcile(
    st: &mut Store,
    cfg: &ControllerConfig,
    now: Timestamp,
    settled: &mut Settled,
) -> usize {
    let mut reconciled = 0;
    let keys: Vec<ObjKey> = st.managed.iter().cloned().collect();
    let infos = st
        .lookup("apps/v1", "ReplicaSet")
        .zip(st.lookup("v1", "Pod"))
        .map(|(rs, pod)| [rs, pod]);
    for key in keys {
        if !st.contains(&key) {
            st.managed.remove(&key);
            settled.0.remove(&key);
            if key.1 == "deployments" {
                collect_garbage(st, &key);
            }
            continue;
        }
        match key.1.as_str() {
            "statefulsets" => reconcile_statefulset(st, &key, cfg, now),
            "daemonsets" => reconcile_daemonset(st, &key, cfg, now),
            _ => {
                let versions = infos
                    .as_ref()
                    .and_then(|infos| deployment_versions(st, infos, &key));
                if versions.is_some() && settled.0.get(&key) == versions.as_ref() {
                    continue;
                }
                let before = st.rv;
                reconcile_deployment(st, &key, cfg, now);
                match versions.filter(|_| st.rv == before) {
                    Some(v) => settled.0.insert(key, v),
                    None => settled.0.remove(&key),
                };
            }
        }
        reconciled += 1;
    }
    reconciled
}

/// The garbage collector's part: a deleted Deployment's ReplicaSets and their pods go too
/// (`kubectl delete deploy` cascades in the background by default).
fn collect_garbage(st: &mut Store, deployment: &ObjKey) {
    let (Some(rs_info), Some(pod_info)) =
        (st.lookup("apps/v1", "ReplicaSet"), st.lookup("v1", "Pod"))
    else {
        return;
    };
    let (ns, name) = (&deployment.2, &deployment.3);
    let rses: Vec<Value> = st
        .owned(&rs_info, ns, "Deployment", name, "")
        .into_iter()
        .filter(|(_, o)| owned_by(o, "Deployment", name, ""))
        .map(|(_, o)| o.clone())
        .collect();
    for rs in rses {
        for pod in pods_of(st, ns, &rs) {
            let key = Store::key(
                &pod_info,
                Some(ns),
                meta_str(&pod, "name").unwrap_or_default(),
            );
            let _ = st.delete(&pod_info, &key);
        }
        let key = Store::key(
            &rs_info,
            Some(ns),
            meta_str(&rs, "name").unwrap_or_default(),
        );
        let _ = st.delete(&rs_info, &key);
    }
}

fn write(st: &mut Store, api_version: &str, kind: &str, obj: Value) -> Option<Value> {
    let info = st.lookup(api_version, kind)?;
    let key = Store::key(
        &info,
        meta_str(&obj, "namespace"),
        meta_str(&obj, "name").unwrap_or_default(),
    );
    let result = if st.contains(&key) {
        st.update(&info, &key, obj, Writer::Controller)
    } else {
        st.create(&info, obj)
    };
    match result {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(message = %e.message, "simulated controller could not write");
            None
        }
    }
}

fn reconcile_deployment(st: &mut Store, key: &ObjKey, cfg: &ControllerConfig, now: Timestamp) {
    let Some(mut deploy) = st.get(key).cloned() else {
        return;
    };
    let (ns, name) = (key.2.clone(), key.3.clone());
    let uid = meta_str(&deploy, "uid").unwrap_or_default().to_owned();
    let generation = deploy["metadata"]["generation"].as_i64().unwrap_or(1);
    if deploy.pointer("/spec/paused").and_then(Value::as_bool) == Some(true) {
        // `kubectl rollout pause`: the spec is seen, nothing rolls until it is resumed.
        if deploy.pointer("/status/observedGeneration") != Some(&json!(generation)) {
            deploy["status"]["observedGeneration"] = json!(generation);
            write(st, "apps/v1", "Deployment", deploy);
        }
        return;
    }
    let desired = replicas(&deploy);
    let template = deploy
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let Some(rs_info) = st.lookup("apps/v1", "ReplicaSet") else {
        return;
    };
    let owned_rs = |st: &Store| -> Vec<Value> {
        st.owned(&rs_info, &ns, "Deployment", &name, &uid)
            .into_iter()
            .filter(|(_, o)| owned_by(o, "Deployment", &name, &uid))
            .map(|(_, o)| o.clone())
            .collect()
    };

    // The ReplicaSet for the current template: an old one on rollback, else a new one.
    let rses = owned_rs(st);
    let max_rev = rses.iter().map(revision).max().unwrap_or(0);
    let current = rses
        .iter()
        .find(|rs| rs.pointer("/spec/template").map(without_hash) == Some(without_hash(&template)));
    let new_rs = match current {
        Some(rs) if revision(rs) == max_rev && max_rev > 0 => rs.clone(),
        Some(rs) => {
            let mut rs = rs.clone();
            rs["metadata"]["annotations"][REVISION] = json!((max_rev + 1).to_string());
            // A real server stores both templates in one canonical form; here the rolled-back
            // Deployment carries kubectl's rendering of it, so the ReplicaSet takes that form
            // (same content) and stays byte-for-byte the Deployment's template plus its hash.
            let hash = rs
                .pointer(&format!("/metadata/labels/{HASH_LABEL}"))
                .cloned()
                .unwrap_or_else(|| json!(template_hash(&template)));
            let mut t = template.clone();
            t["metadata"]["labels"][HASH_LABEL] = hash;
            rs["spec"]["template"] = t;
            match write(st, "apps/v1", "ReplicaSet", rs) {
                Some(v) => v,
                None => return,
            }
        }
        None => {
            let hash = template_hash(&template);
            let mut t = template.clone();
            t["metadata"]["labels"][HASH_LABEL] = json!(hash);
            let mut selector = deploy
                .pointer("/spec/selector")
                .cloned()
                .unwrap_or_else(|| json!({}));
            selector["matchLabels"][HASH_LABEL] = json!(hash);
            let rs = json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": format!("{name}-{hash}"), "namespace": ns,
                             "labels": t["metadata"]["labels"].clone(),
                             "annotations": {REVISION: (max_rev + 1).to_string(),
                                             "deployment.kubernetes.io/desired-replicas": desired.to_string()},
                             "ownerReferences": [owner_ref("Deployment", &deploy)]},
                "spec": {"replicas": 0, "selector": selector, "template": t}
            });
            match write(st, "apps/v1", "ReplicaSet", rs) {
                Some(v) => v,
                None => return,
            }
        }
    };
    let new_name = meta_str(&new_rs, "name").unwrap_or_default().to_owned();

    // Roll: the new ReplicaSet to the desired count first; once its pods are Ready, the old
    // ones to zero (a maxSurge of 100%, in two visible steps).
    let new_ready = pods_of(st, &ns, &new_rs)
        .iter()
        .filter(|p| !is_terminating(p) && is_ready(p))
        .count() as i64;
    for mut rs in owned_rs(st) {
        let is_new = meta_str(&rs, "name") == Some(new_name.as_str());
        let want = if is_new {
            desired
        } else if new_ready >= desired {
            0
        } else {
            replicas(&rs)
        };
        if replicas(&rs) != want {
            rs["spec"]["replicas"] = json!(want);
            if is_new {
                rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] =
                    json!(desired.to_string());
            }
            if let Some(v) = write(st, "apps/v1", "ReplicaSet", rs) {
                rs = v;
            } else {
                continue;
            }
        }
        sync_pods(st, &ns, &rs, cfg, now);
    }

    // The Deployment's status, read off its ReplicaSets' pods.
    let (mut total, mut updated, mut ready, mut old_pods) = (0, 0, 0, 0);
    for rs in owned_rs(st) {
        let is_new = meta_str(&rs, "name") == Some(new_name.as_str());
        for p in pods_of(st, &ns, &rs) {
            if is_terminating(&p) {
                continue;
            }
            total += 1;
            if is_new {
                updated += 1;
            } else {
                old_pods += 1;
            }
            if is_ready(&p) {
                ready += 1;
            }
        }
    }
    let complete = updated == desired && old_pods == 0 && ready >= desired;
    let old_conditions = deploy
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let condition = |kind: &str, status: bool, reason: &str, message: String| {
        let status = if status { "True" } else { "False" };
        let old = old_conditions.iter().find(|c| c["type"] == kind);
        if let Some(c) = old.filter(|c| {
            c["status"] == status && c["reason"] == reason && c["message"] == message.as_str()
        }) {
            return c.clone();
        }
        let transition = old
            .filter(|c| c["status"] == status)
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| json!(stamp(now)));
        json!({"type": kind, "status": status, "reason": reason, "message": message,
               "lastUpdateTime": stamp(now), "lastTransitionTime": transition})
    };
    let available = if ready >= desired {
        condition(
            "Available",
            true,
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".to_owned(),
        )
    } else {
        condition(
            "Available",
            false,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".to_owned(),
        )
    };
    let progressing = if complete {
        condition(
            "Progressing",
            true,
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{new_name}\" has successfully progressed."),
        )
    } else {
        condition(
            "Progressing",
            true,
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{new_name}\" is progressing."),
        )
    };
    let mut status = json!({
        "observedGeneration": generation,
        "replicas": total,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "conditions": [available, progressing]
    });
    if desired - ready > 0 {
        status["unavailableReplicas"] = json!(desired - ready);
    }
    deploy["status"] = status;
    deploy["metadata"]["annotations"][REVISION] = json!(revision(&new_rs).max(1).to_string());
    write(st, "apps/v1", "Deployment", deploy);
}

fn pods_of(st: &Store, ns: &str, rs: &Value) -> Vec<Value> {
    let name = meta_str(rs, "name").unwrap_or_default();
    let uid = meta_str(rs, "uid").unwrap_or_default();
    let Some(info) = st.lookup("v1", "Pod") else {
        return Vec::new();
    };
    st.owned(&info, ns, "ReplicaSet", name, uid)
        .into_iter()
        .filter(|(_, p)| owned_by(p, "ReplicaSet", name, uid))
        .map(|(_, p)| p.clone())
        .collect()
}

/// The ReplicaSet controller and the kubelet in one: pods up to `spec.replicas` (started and
/// Ready now), extra pods Terminating, Terminating pods gone after the grace period.
/// Deletes the Terminating pods whose grace period is over; returns the rest that are not
/// Terminating.
fn reap(st: &mut Store, ns: &str, pods: Vec<Value>, now: Timestamp) -> Vec<Value> {
    for p in pods.iter().filter(|p| is_terminating(p)) {
        let due = p
            .pointer("/metadata/deletionTimestamp")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
            .is_none_or(|t| t <= now);
        if due {
            if let Some(info) = st.lookup("v1", "Pod") {
                let key = Store::key(&info, Some(ns), meta_str(p, "name").unwrap_or_default());
                let _ = st.delete(&info, &key);
            }
        }
    }
    pods.into_iter().filter(|p| !is_terminating(p)).collect()
}

/// Starts a pod's graceful termination: out of the endpoints at once (not Ready), its
/// containers running until the grace period ends.
fn terminate(st: &mut Store, mut p: Value, cfg: &ControllerConfig, now: Timestamp) {
    let grace = i64::try_from(cfg.termination_grace.as_secs()).unwrap_or(i64::MAX);
    p["metadata"]["deletionTimestamp"] = json!(stamp(now + cfg.termination_grace));
    p["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
    if let Some(conds) = p
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for c in conds
            .iter_mut()
            .filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady")
        {
            c["status"] = json!("False");
            c["lastTransitionTime"] = json!(stamp(now));
        }
    }
    if let Some(statuses) = p
        .pointer_mut("/status/containerStatuses")
        .and_then(Value::as_array_mut)
    {
        for c in statuses {
            c["ready"] = json!(false);
        }
    }
    write(st, "v1", "Pod", p);
}

/// The ReplicaSet controller and the kubelet in one: pods up to `spec.replicas` (started and
/// Ready now), extra pods Terminating, Terminating pods gone after the grace period.
fn sync_pods(st: &mut Store, ns: &str, rs: &Value, cfg: &ControllerConfig, now: Timestamp) {
    let want = replicas(rs);
    let all = pods_of(st, ns, rs);
    let mut pods = reap(st, ns, all, now);
    let active = pods.len() as i64;
    if active > want {
        // The newest go first, as the ReplicaSet controller prefers.
        pods.sort_by(|a, b| {
            meta_str(b, "creationTimestamp")
                .cmp(&meta_str(a, "creationTimestamp"))
                .then_with(|| meta_str(b, "name").cmp(&meta_str(a, "name")))
        });
        for p in pods.into_iter().take((active - want) as usize) {
            terminate(st, p, cfg, now);
        }
    } else {
        for _ in active..want {
            let name = pod_name(st, ns, meta_str(rs, "name").unwrap_or_default(), now);
            let pod = new_pod(ns, &name, "ReplicaSet", rs, json!({}), cfg, now);
            write(st, "v1", "Pod", pod);
        }
    }
    // The ReplicaSet's status.
    let pods = pods_of(st, ns, rs);
    let live: Vec<&Value> = pods.iter().filter(|p| !is_terminating(p)).collect();
    let ready = live.iter().filter(|p| is_ready(p)).count();
    let mut rs = rs.clone();
    rs["status"] = json!({
        "observedGeneration": rs["metadata"]["generation"].as_i64().unwrap_or(1),
        "replicas": live.len(),
        "fullyLabeledReplicas": live.len(),
        "readyReplicas": ready,
        "availableReplicas": ready
    });
    write(st, "apps/v1", "ReplicaSet", rs);
}

/// The ControllerRevision holding `template` for a StatefulSet or DaemonSet: an existing one
/// (made newest again on a rollback) or a new one.
fn ensure_revision(st: &mut Store, kind: &str, owner: &Value, template: &Value) -> Option<Value> {
    let ns = meta_str(owner, "namespace").unwrap_or_default().to_owned();
    let name = meta_str(owner, "name").unwrap_or_default().to_owned();
    let uid = meta_str(owner, "uid").unwrap_or_default().to_owned();
    let cr_info = st.lookup("apps/v1", "ControllerRevision")?;
    let revisions: Vec<Value> = st
        .owned(&cr_info, &ns, kind, &name, &uid)
        .into_iter()
        .filter(|(_, o)| owned_by(o, kind, &name, &uid))
        .map(|(_, o)| o.clone())
        .collect();
    let rev_number = |cr: &Value| cr.get("revision").and_then(Value::as_i64).unwrap_or(0);
    let max_rev = revisions.iter().map(rev_number).max().unwrap_or(0);
    // What `kubectl rollout undo` applies back: the template, replacing the current one.
    let mut data_template = template.clone();
    data_template["$patch"] = json!("replace");
    let data = json!({"spec": {"template": data_template}});
    let matching = revisions.iter().find(|cr| {
        cr.pointer("/data/spec/template").map(|t| {
            let mut t = t.clone();
            if let Some(m) = t.as_object_mut() {
                m.remove("$patch");
            }
            without_hash(&t)
        }) == Some(without_hash(template))
    });
    match matching {
        Some(cr) if rev_number(cr) == max_rev => Some(cr.clone()),
        Some(cr) => {
            let mut cr = cr.clone();
            cr["revision"] = json!(max_rev + 1);
            cr["data"] = data;
            write(st, "apps/v1", "ControllerRevision", cr)
        }
        None => {
            let hash = template_hash(template);
            let mut labels = owner
                .pointer("/spec/selector/matchLabels")
                .cloned()
                .unwrap_or_else(|| json!({}));
            labels["controller.kubernetes.io/hash"] = json!(hash);
            if kind == "DaemonSet" {
                // A DaemonSet's pods carry the bare hash, read off this label.
                labels[CONTROLLER_REVISION_HASH] = json!(hash);
            }
            let cr = json!({
                "apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": format!("{name}-{hash}"), "namespace": ns, "labels": labels,
                             "ownerReferences": [owner_ref(kind, owner)]},
                "data": data,
                "revision": max_rev + 1
            });
            write(st, "apps/v1", "ControllerRevision", cr)
        }
    }
}

/// The StatefulSet controller (RollingUpdate, OrderedReady): a ControllerRevision per template,
/// pods `NAME-0…` created in order, and on a template change the highest ordinal not yet
/// updated terminated and recreated, one at a time, each waiting for the others to be Ready.
fn reconcile_statefulset(st: &mut Store, key: &ObjKey, cfg: &ControllerConfig, now: Timestamp) {
    let Some(mut sts) = st.get(key).cloned() else {
        return;
    };
    let (ns, name) = (key.2.clone(), key.3.clone());
    let uid = meta_str(&sts, "uid").unwrap_or_default().to_owned();
    let desired = replicas(&sts);
    let template = sts
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let Some(update_revision) = ensure_revision(st, "StatefulSet", &sts, &template)
        .and_then(|cr| meta_str(&cr, "name").map(str::to_owned))
    else {
        return;
    };

    let Some(pod_info) = st.lookup("v1", "Pod") else {
        return;
    };
    let all: Vec<Value> = st
        .owned(&pod_info, &ns, "StatefulSet", &name, &uid)
        .into_iter()
        .filter(|(_, p)| owned_by(p, "StatefulSet", &name, &uid))
        .map(|(_, p)| p.clone())
        .collect();
    let terminating = all.iter().any(is_terminating);
    let pods = reap(st, &ns, all, now);
    let ordinal = |p: &Value| {
        meta_str(p, "name")
            .and_then(|n| n.strip_prefix(&format!("{name}-")))
            .and_then(|o| o.parse::<i64>().ok())
    };
    let pod_revision = |p: &Value| {
        p.pointer("/metadata/labels/controller-revision-hash")
            .cloned()
    };
    let all_ready = !terminating && pods.iter().all(is_ready);
    // Scale down from the highest ordinal; create missing ordinals in order.
    for p in pods
        .iter()
        .filter(|p| ordinal(p).is_none_or(|o| o >= desired))
    {
        terminate(st, p.clone(), cfg, now);
    }
    let taken =
        |st: &Store, o: i64| st.contains(&Store::key(&pod_info, Some(&ns), &format!("{name}-{o}")));
    if let Some(o) = (0..desired).find(|o| !taken(st, *o)) {
        let pod_name = format!("{name}-{o}");
        let labels = json!({"controller-revision-hash": update_revision,
                            "statefulset.kubernetes.io/pod-name": pod_name,
                            "apps.kubernetes.io/pod-index": o.to_string()});
        let mut pod = new_pod(&ns, &pod_name, "StatefulSet", &sts, labels, cfg, now);
        pod["spec"]["hostname"] = json!(pod_name);
        if let Some(svc) = sts.pointer("/spec/serviceName").cloned() {
            pod["spec"]["subdomain"] = svc;
        }
        write(st, "v1", "Pod", pod);
    } else if all_ready {
        // Rolling update: the highest ordinal still on an old revision goes next.
        let outdated = pods
            .iter()
            .filter(|p| ordinal(p).is_some_and(|o| o < desired))
            .filter(|p| pod_revision(p) != Some(json!(update_revision)))
            .max_by_key(|p| ordinal(p));
        if let Some(p) = outdated {
            terminate(st, p.clone(), cfg, now);
        }
    }

    let live: Vec<Value> = st
        .owned(&pod_info, &ns, "StatefulSet", &name, &uid)
        .into_iter()
        .filter(|(_, p)| owned_by(p, "StatefulSet", &name, &uid) && !is_terminating(p))
        .map(|(_, p)| p.clone())
        .collect();
    let ready = live.iter().filter(|p| is_ready(p)).count() as i64;
    let updated = live
        .iter()
        .filter(|p| pod_revision(p) == Some(json!(update_revision)))
        .count() as i64;
    // As the real controller's completeRollingUpdate: only a RollingUpdate StatefulSet moves
    // currentRevision on; under OnDelete it keeps the first revision (found by story 2 of
    // real_cluster.rs).
    let rolling = sts
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        != Some("OnDelete");
    let current_revision =
        if rolling && updated == desired && ready == desired && live.len() as i64 == desired {
            json!(update_revision)
        } else {
            sts.pointer("/status/currentRevision")
                .cloned()
                .unwrap_or_else(|| json!(update_revision))
        };
    let current = live
        .iter()
        .filter(|p| pod_revision(p).as_ref() == Some(&current_revision))
        .count();
    sts["status"] = json!({
        "observedGeneration": sts["metadata"]["generation"].as_i64().unwrap_or(1),
        "replicas": live.len(),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "currentReplicas": current,
        "updatedReplicas": updated,
        "currentRevision": current_revision,
        "updateRevision": update_revision,
        "collisionCount": 0
    });
    write(st, "apps/v1", "StatefulSet", sts);
}

/// The DaemonSet controller (RollingUpdate, maxUnavailable 1): one pod per Node object (one
/// unnamed node when none is loaded); on a template change the old pods are replaced one node
/// at a time, the next only once the others are Ready.
fn reconcile_daemonset(st: &mut Store, key: &ObjKey, cfg: &ControllerConfig, now: Timestamp) {
    let Some(mut ds) = st.get(key).cloned() else {
        return;
    };
    let (ns, name) = (key.2.clone(), key.3.clone());
    let uid = meta_str(&ds, "uid").unwrap_or_default().to_owned();
    let template = ds
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let Some(hash) = ensure_revision(st, "DaemonSet", &ds, &template).and_then(|cr| {
        cr.pointer(&format!("/metadata/labels/{CONTROLLER_REVISION_HASH}"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }) else {
        return;
    };
    let (Some(pod_info), Some(node_info)) = (st.lookup("v1", "Pod"), st.lookup("v1", "Node"))
    else {
        return;
    };
    let mut nodes: Vec<Option<String>> = st
        .list(&node_info, None)
        .into_iter()
        .filter_map(|(_, n)| meta_str(n, "name").map(|n| Some(n.to_owned())))
        .collect();
    if nodes.is_empty() {
        nodes.push(None);
    }
    let desired = nodes.len() as i64;
    let owned = |st: &Store| -> Vec<Value> {
        st.owned(&pod_info, &ns, "DaemonSet", &name, &uid)
            .into_iter()
            .filter(|(_, p)| owned_by(p, "DaemonSet", &name, &uid))
            .map(|(_, p)| p.clone())
            .collect()
    };
    let all = owned(st);
    let terminating = all.iter().any(is_terminating);
    let pods = reap(st, &ns, all, now);
    let node_of = |p: &Value| {
        p.pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let revision_of = |p: &Value| {
        p.pointer(&format!("/metadata/labels/{CONTROLLER_REVISION_HASH}"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let all_ready = !terminating && pods.iter().all(is_ready);
    let mut replaced = false;
    for node in &nodes {
        let on_node = owned(st)
            .into_iter()
            .filter(|p| node_of(p) == *node)
            .collect::<Vec<_>>();
        match on_node.first() {
            None => {
                let pod_name = pod_name(st, &ns, &name, now);
                let generation = ds["metadata"]["generation"].as_i64().unwrap_or(1);
                let labels = json!({CONTROLLER_REVISION_HASH: hash,
                                    "pod-template-generation": generation.to_string()});
                let mut pod = new_pod(&ns, &pod_name, "DaemonSet", &ds, labels, cfg, now);
                if let Some(n) = node {
                    pod["spec"]["nodeName"] = json!(n);
                }
                write(st, "v1", "Pod", pod);
            }
            Some(p)
                if all_ready
                    && !replaced
                    && !is_terminating(p)
                    && revision_of(p).as_deref() != Some(hash.as_str()) =>
            {
                terminate(st, p.clone(), cfg, now);
                replaced = true;
            }
            Some(_) => {}
        }
    }

    let live: Vec<Value> = owned(st)
        .into_iter()
        .filter(|p| !is_terminating(p))
        .collect();
    let ready = live.iter().filter(|p| is_ready(p)).count() as i64;
    let updated = live
        .iter()
        .filter(|p| revision_of(p).as_deref() == Some(hash.as_str()))
        .count();
    ds["status"] = json!({
        "observedGeneration": ds["metadata"]["generation"].as_i64().unwrap_or(1),
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": live.len(),
        "numberMisscheduled": 0,
        "numberReady": ready,
        "numberAvailable": ready,
        "updatedNumberScheduled": updated
    });
    if desired > ready {
        ds["status"]["numberUnavailable"] = json!(desired - ready);
    }
    write(st, "apps/v1", "DaemonSet", ds);
}

/// `PREFIX-xxxxx`, free in the namespace.
fn pod_name(st: &mut Store, ns: &str, prefix: &str, now: Timestamp) -> String {
    loop {
        st.name_seq += 1;
        let seed = fnv32a(format!("{prefix}/{}/{}", st.name_seq, now.as_nanosecond()).as_bytes());
        let suffix: String = safe_encode(u64::from(seed)).chars().rev().take(5).collect();
        let candidate = format!("{prefix}-{suffix}");
        let taken = st
            .lookup("v1", "Pod")
            .is_some_and(|info| st.contains(&Store::key(&info, Some(ns), &candidate)));
        if !taken {
            return candidate;
        }
    }
}

/// A pod from `owner`'s template, scheduled, started and Ready now; `labels` are added to the
/// template's.
fn new_pod(
    ns: &str,
    name: &str,
    owner_kind: &str,
    owner: &Value,
    labels: Value,
    cfg: &ControllerConfig,
    now: Timestamp,
) -> Value {
    let template = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let started = stamp(now);
    let containers: Vec<Value> = template
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
            json!({"name": c.get("name").cloned().unwrap_or(Value::Null),
                   "image": image, "imageID": image_id(cfg, image),
                   "ready": true, "started": true, "restartCount": 0,
                   "state": {"running": {"startedAt": started}}})
        })
        .collect();
    let mut meta = template
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    meta["name"] = json!(name);
    meta["namespace"] = json!(ns);
    meta["ownerReferences"] = json!([owner_ref(owner_kind, owner)]);
    if let Some(extra) = labels.as_object() {
        for (k, v) in extra {
            meta["labels"][k] = v.clone();
        }
    }
    let conditions: Vec<Value> = ["PodScheduled", "Initialized", "ContainersReady", "Ready"]
        .iter()
        .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": started}))
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
        "status": {"phase": "Running", "startTime": started, "conditions": conditions,
                   "containerStatuses": containers}
    })
}

/// How often the controller looks at the store.
pub(crate) const TICK: Duration = Duration::from_millis(200);

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ControllerConfig {
        ControllerConfig {
            termination_grace: Duration::from_secs(2),
            image_digests: BTreeMap::new(),
        }
    }

    /// Loads `deployments` × 2 pods in namespace `ns` and changes each Deployment's image
    /// through the API, as `kubectl set image` does.
    fn rolled_fleet(deployments: usize) -> Store {
        let mut st = Store::new(10_000);
        for obj in liveproof_testkit::fleet::deployments("ns", deployments, 2, true) {
            let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_owned();
            let kind = obj["kind"].as_str().unwrap_or_default().to_owned();
            let info = st.lookup(&api_version, &kind).expect("a built-in kind");
            st.create(&info, obj).expect("created");
        }
        let info = st.lookup("apps/v1", "Deployment").expect("Deployments");
        for d in 0..deployments {
            let key = Store::key(&info, Some("ns"), &format!("svc-{d}"));
            let mut deploy = st.get(&key).expect("loaded").clone();
            deploy["spec"]["template"]["spec"]["containers"][0]["image"] = json!("app:2");
            st.update(&info, &key, deploy, Writer::Main)
                .expect("updated");
            st.api_write(&info, &key, Writer::Main);
        }
        st
    }

    fn pods_of_deployment(st: &Store, d: usize) -> Vec<String> {
        let info = st.lookup("v1", "Pod").expect("pods");
        st.list(&info, Some("ns"))
            .into_iter()
            .filter(|(_, p)| p["metadata"]["labels"]["app"] == format!("svc-{d}").as_str())
            .filter(|(_, p)| !is_terminating(p))
            .map(|(k, _)| k.3.clone())
            .collect()
    }

    #[test]
    fn a_settled_deployment_is_reconciled_again_only_when_what_it_reads_changes() {
        let mut st = rolled_fleet(3);
        let cfg = ControllerConfig {
            termination_grace: Duration::ZERO,
            image_digests: BTreeMap::new(),
        };
        let mut settled = Settled::default();
        let start = Timestamp::now();
        let mut tick = 0;
        let at = |tick: i64| start + jiff::SignedDuration::from_secs(tick);
        // Roll: new pods, old ones Terminating, then reaped; then a pass that changes nothing.
        loop {
            let before = st.rv;
            assert_eq!(reconcile(&mut st, &cfg, at(tick), &mut settled), 3);
            tick += 1;
            if st.rv == before {
                break;
            }
            assert!(tick < 10, "the rollout settles");
        }
        for d in 0..3 {
            assert_eq!(pods_of_deployment(&st, d).len(), 2, "svc-{d}");
        }
        // Settled: nothing is reconciled, nothing written.
        let before = st.rv;
        assert_eq!(reconcile(&mut st, &cfg, at(tick), &mut settled), 0);
        assert_eq!(st.rv, before);

        // A pod deleted through the API: its Deployment alone is reconciled, the pod replaced.
        let pod_info = st.lookup("v1", "Pod").expect("pods");
        let gone = pods_of_deployment(&st, 1)[0].clone();
        st.delete(&pod_info, &Store::key(&pod_info, Some("ns"), &gone))
            .expect("deleted");
        tick += 1;
        assert_eq!(reconcile(&mut st, &cfg, at(tick), &mut settled), 1);
        let pods = pods_of_deployment(&st, 1);
        assert_eq!(pods.len(), 2);
        assert!(!pods.contains(&gone));
        // The replacement was a write, so one more pass confirms it settled; then none.
        tick += 1;
        assert_eq!(reconcile(&mut st, &cfg, at(tick), &mut settled), 1);
        assert_eq!(reconcile(&mut st, &cfg, at(tick), &mut settled), 0);

        // The spec changed through the API: that Deployment rolls again.
        let info = st.lookup("apps/v1", "Deployment").expect("Deployments");
        let key = Store::key(&info, Some("ns"), "svc-2");
        let mut deploy = st.get(&key).expect("there").clone();
        deploy["spec"]["replicas"] = json!(3);
        st.update(&info, &key, deploy, Writer::Main)
            .expect("updated");
        tick += 1;
        assert_eq!(reconcile(&mut st, &cfg, at(tick), &mut settled), 1);
        assert_eq!(pods_of_deployment(&st, 2).len(), 3);
    }

    #[test]
    fn template_hash_ignores_the_hash_label_and_tracks_content() {
        let a = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}});
        let mut labelled = a.clone();
        labelled["metadata"]["labels"][HASH_LABEL] = json!("xyz");
        assert_eq!(template_hash(&a), template_hash(&labelled));
        let mut b = a.clone();
        b["spec"]["containers"][0]["image"] = json!("nginx:2");
        assert_ne!(template_hash(&a), template_hash(&b));
        assert!(template_hash(&a)
            .bytes()
            .all(|c| SAFE_ALPHABET.contains(&c)));
    }

    #[test]
    fn image_ids_name_the_repository_and_a_digest() {
        let mut c = cfg();
        c.image_digests
            .insert("nginx:1.28".into(), format!("sha256:{}", "a".repeat(64)));
        assert_eq!(
            image_id(&c, "nginx:1.28"),
            format!("docker.io/library/nginx@sha256:{}", "a".repeat(64))
        );
        let default = image_id(&c, "localhost:5000/shop/web:2");
        assert!(
            default.starts_with("localhost:5000/shop/web@sha256:"),
            "{default}"
        );
        assert_eq!(default.len(), "localhost:5000/shop/web@sha256:".len() + 64);
        assert_eq!(default, image_id(&c, "localhost:5000/shop/web:2"));
        let pinned = format!("ghcr.io/a/b@sha256:{}", "b".repeat(64));
        assert_eq!(image_id(&c, &pinned), pinned);
        let tagged_and_pinned = format!("ghcr.io/a/b:1@sha256:{}", "b".repeat(64));
        assert_eq!(image_id(&c, &tagged_and_pinned), pinned);
    }
}
