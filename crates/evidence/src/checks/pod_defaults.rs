//! The values the API server fills into a pod template it stores (k8s.io/kubernetes
//! `pkg/apis/core/v1/defaults.go`): a Deployment's, ReplicaSet's or ControllerRevision's
//! template has them, a custom resource's (an Argo Rollout's) does not, as no defaulting runs
//! on a CRD's embedded pod spec. Templates are compared with them dropped from both sides, so
//! a Rollout's template matches the ReplicaSet its controller made from it (found on the real
//! Argo Rollouts controller: without this, no ReplicaSet ever carried a Rollout's template and
//! every Rollout was not live).

use serde_json::{json, Map, Value};

/// Drops from a pod template (JSON, `{metadata, spec}`) every field whose value is the one the
/// API server would have filled in; a value set to anything else is kept.
pub(crate) fn strip(template: &mut Value) {
    let Some(spec) = template.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    drop_if(spec, "dnsPolicy", &json!("ClusterFirst"));
    drop_if(spec, "restartPolicy", &json!("Always"));
    drop_if(spec, "securityContext", &json!({}));
    drop_if(spec, "terminationGracePeriodSeconds", &json!(30));
    drop_if(spec, "schedulerName", &json!("default-scheduler"));
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for container in objects(spec.get_mut(list)) {
            strip_container(container);
        }
    }
    for volume in objects(spec.get_mut("volumes")) {
        for source in ["configMap", "secret", "downwardAPI", "projected"] {
            if let Some(source) = volume.get_mut(source).and_then(Value::as_object_mut) {
                drop_if(source, "defaultMode", &json!(420));
                for projection in objects(source.get_mut("sources")) {
                    if let Some(token) = projection
                        .get_mut("serviceAccountToken")
                        .and_then(Value::as_object_mut)
                    {
                        drop_if(token, "expirationSeconds", &json!(3600));
                    }
                }
            }
        }
        if let Some(host_path) = volume.get_mut("hostPath").and_then(Value::as_object_mut) {
            drop_if(host_path, "type", &json!(""));
        }
    }
}

fn strip_container(container: &mut Map<String, Value>) {
    let pull = match container.get("image").and_then(Value::as_str) {
        Some(image) if tag_of(image) == Some("latest") => "Always",
        _ => "IfNotPresent",
    };
    drop_if(container, "imagePullPolicy", &json!(pull));
    drop_if(
        container,
        "terminationMessagePath",
        &json!("/dev/termination-log"),
    );
    drop_if(container, "terminationMessagePolicy", &json!("File"));
    drop_if(container, "resources", &json!({}));
    for port in objects(container.get_mut("ports")) {
        drop_if(port, "protocol", &json!("TCP"));
    }
    for env in objects(container.get_mut("env")) {
        if let Some(field) = env
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .and_then(Value::as_object_mut)
        {
            drop_if(field, "apiVersion", &json!("v1"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = container.get_mut(probe).and_then(Value::as_object_mut) {
            drop_if(probe, "timeoutSeconds", &json!(1));
            drop_if(probe, "periodSeconds", &json!(10));
            drop_if(probe, "successThreshold", &json!(1));
            drop_if(probe, "failureThreshold", &json!(3));
            strip_http_get(probe);
        }
    }
    if let Some(lifecycle) = container
        .get_mut("lifecycle")
        .and_then(Value::as_object_mut)
    {
        for hook in ["postStart", "preStop"] {
            if let Some(hook) = lifecycle.get_mut(hook).and_then(Value::as_object_mut) {
                strip_http_get(hook);
            }
        }
    }
}

fn strip_http_get(handler: &mut Map<String, Value>) {
    if let Some(get) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        drop_if(get, "path", &json!("/"));
        drop_if(get, "scheme", &json!("HTTP"));
    }
}

/// The tag the API server reads from an image reference (its `parsers.ParseImageName`): the
/// one given, else `latest` when there is no digest either; `None` for a digest alone.
fn tag_of(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => Some(tag),
        None if digest => None,
        None => Some("latest"),
    }
}

fn drop_if(object: &mut Map<String, Value>, key: &str, default: &Value) {
    if object.get(key) == Some(default) {
        object.remove(key);
    }
}

fn objects(list: Option<&mut Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    list.and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Rollout's template as stored (no defaults) and the ReplicaSet template Argo Rollouts
    /// made of it, as the API server stored that (defaults filled in): equal once stripped.
    #[test]
    fn a_custom_resources_template_matches_its_defaulted_replicaset_template() {
        let rollout = json!({"metadata": {"labels": {"app": "web"}}, "spec": {
            "terminationGracePeriodSeconds": 2,
            "containers": [{"name": "app", "image": "registry:5000/acme/web:v2",
                "ports": [{"containerPort": 8080}],
                "readinessProbe": {"httpGet": {"port": 8080}}}]}});
        let replicaset = json!({"metadata": {"labels": {"app": "web"}}, "spec": {
            "terminationGracePeriodSeconds": 2, "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {},
            "containers": [{"name": "app", "image": "registry:5000/acme/web:v2",
                "imagePullPolicy": "IfNotPresent", "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "readinessProbe": {"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
                    "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                    "failureThreshold": 3}}]}});
        let (mut a, mut b) = (rollout.clone(), replicaset);
        strip(&mut a);
        strip(&mut b);
        assert_eq!(a, b);
        assert_eq!(a, rollout, "nothing the Rollout set is dropped");
    }

    #[test]
    fn a_value_other_than_the_default_still_tells_templates_apart() {
        let mut a = json!({"spec": {"containers": [{"name": "app", "image": "acme/web",
            "imagePullPolicy": "IfNotPresent"}], "terminationGracePeriodSeconds": 31}});
        strip(&mut a);
        // `acme/web` means `:latest`, whose default is Always: IfNotPresent was a choice.
        assert_eq!(
            a["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert_eq!(a["spec"]["terminationGracePeriodSeconds"], 31);
        assert_eq!(tag_of("registry:5000/acme/web"), Some("latest"));
        assert_eq!(tag_of("registry:5000/acme/web@sha256:ab"), None);
        assert_eq!(tag_of("acme/web:v2@sha256:ab"), Some("v2"));
    }
}
