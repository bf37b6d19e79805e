use std::time::Duration;

use liveproof_testkit::e2e::ControlPlane;
use liveproof_testkit::SimCluster;

/// What conformance compares of a response: the fields liveproof reads, as a type or a value.
/// One request to the real API server and the same to the simulator: each one's status code
/// and body (a watch's events, one per item).
async fn ask_both(
    real: &liveproof_testkit::e2e::kube::Client,
    simulated: &liveproof_testkit::e2e::kube::Client,
    method: &str,
    path: &str,
    body: Option<(&str, serde_json::Value)>,
) -> ((u16, Vec<serde_json::Value>), (u16, Vec<serde_json::Value>)) {
    use liveproof_testkit::e2e::control_plane::raw;
    let body = body.as_ref().map(|(c, v)| (*c, v));
    let r = raw(real, method, path, body)
        .await
        .expect("real API server");
    let s = raw(simulated, method, path, body).await.expect("simulator");
    (r, s)
}

fn shape(value: &serde_json::Value, paths: &[&str]) -> Vec<(String, String)> {
    paths
        .iter()
        .map(|p| {
            let got = match value.pointer(p) {
                None => "absent".to_string(),
                Some(serde_json::Value::Null) => "null".to_string(),
                Some(serde_json::Value::String(s))
                    if p.ends_with("resourceVersion")
                        || p.ends_with("uid")
                        || p.ends_with("creationTimestamp")
                        || p.ends_with("continue") =>
                {
                    if s.is_empty() {
                        "empty string".into()
                    } else {
                        "string".into()
                    }
                }
                Some(serde_json::Value::Number(_)) if p.ends_with("generation") => "number".into(),
                Some(other) => other.to_string(),
            };
            ((*p).to_string(), got)
        })
        .collect()
}

fn names(list: &serde_json::Value) -> Vec<String> {
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    i["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Story 8: the simulator answers what liveproof sends as the real API server does. The same
/// objects are created in both; each request below goes to both, and the status code and the
/// shape of every field liveproof reads must match. Accepted differences are listed where they
/// are allowed, with the reason.
/// Story 8, progressive delivery: the CustomResourceDefinitions of Argo Rollouts' Rollout,
/// Flagger's Canary and Knative's Service, installed on the real server from the pinned
/// modules' files, are what the simulator serves (group, names, scope, versions, schemas);
/// and an object of each, created in both, reads back the same where liveproof reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_8_the_simulator_serves_the_progressive_delivery_crds_as_the_real_api_server() {
    use liveproof_testkit::e2e::control_plane::client_for;
    use serde_json::json;
    let bin = liveproof_testkit::peers::peers_bin().unwrap_or_else(|e| panic!("{e}"));
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
    let real = plane.client().await.expect("client");
    let crds = [
        ("rollout-crd.yaml", "rollouts.argoproj.io"),
        ("flagger-crd.yaml", "canaries.flagger.app"),
        (
            "knative-serving-service-crd.yaml",
            "services.serving.knative.dev",
        ),
    ];
    let kubectl = |args: Vec<String>| {
        let kubeconfig = plane.kubeconfig.clone();
        async move {
            let run = liveproof_testkit::kubectl()
                .kubeconfig(&kubeconfig)
                .args(&args.iter().map(String::as_str).collect::<Vec<_>>())
                .run()
                .await;
            assert_eq!(run.code, 0, "kubectl {args:?}: {}", run.stderr);
        }
    };
    for (file, _) in crds {
        let path = bin.join(file);
        kubectl(vec![
            "apply".into(),
            "--server-side".into(),
            "-f".into(),
            path.display().to_string(),
        ])
        .await;
    }
    let mut wait = vec![
        "wait".to_string(),
        "--for=condition=Established".into(),
        "--timeout=60s".into(),
    ];
    wait.extend(crds.iter().map(|(_, name)| format!("crd/{name}")));
    kubectl(wait).await;
    kubectl(vec!["create".into(), "namespace".into(), "apps".into()]).await;

    let sim = liveproof_testkit::SimCluster::serve(
        liveproof_sim::Simulator::new()
            .with_objects(vec![
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
            ])
            .with_gitops_crds(),
        "apps",
    )
    .await;
    let simulated = client_for(&sim.kubeconfig).await.expect("sim client");
    let both = |method: &'static str, path: String, body: Option<serde_json::Value>| {
        let (real, simulated) = (real.clone(), simulated.clone());
        async move {
            let body = body.map(|v| ("application/json", v));
            ask_both(&real, &simulated, method, &path, body).await
        }
    };

    // The definitions: what a CRD says of its resource, and each version's schema.
    for (_, name) in crds {
        let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
        let ((rc, r), (sc, s)) = both("GET", path, None).await;
        assert_eq!((rc, sc), (200, 200), "GET CRD {name}");
        let said = |crd: &serde_json::Value| {
            let versions: Vec<serde_json::Value> = crd["spec"]["versions"]
                .as_array()
                .map(|vs| {
                    vs.iter()
                        .map(|v| {
                            json!([
                                v["name"],
                                v["served"],
                                v["storage"],
                                v["schema"],
                                v["subresources"]
                            ])
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "kind": crd["kind"], "apiVersion": crd["apiVersion"], "name": crd["metadata"]["name"],
                "group": crd["spec"]["group"], "names": crd["spec"]["names"], "scope": crd["spec"]["scope"],
                "versions": versions,
            })
        };
        assert_eq!(
            said(&s[0]),
            said(&r[0]),
            "CRD {name}: simulator (left) vs real server (right)"
        );
    }

    // An object of each, created in both, read back where liveproof reads it.
    let objects = [
        (
            "/apis/argoproj.io/v1alpha1/namespaces/apps/rollouts",
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
                   "metadata": {"name": "web", "namespace": "apps"},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "app", "image": "registry.invalid/web:v1"}]}},
                            "strategy": {"canary": {"steps": [{"setWeight": 20}, {"pause": {}}]}}}}),
        ),
        (
            "/apis/flagger.app/v1beta1/namespaces/apps/canaries",
            json!({"apiVersion": "flagger.app/v1beta1", "kind": "Canary",
                   "metadata": {"name": "podinfo", "namespace": "apps"},
                   "spec": {"provider": "kubernetes",
                            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
                            "service": {"port": 80},
                            "analysis": {"interval": "10s", "threshold": 2, "iterations": 2}}}),
        ),
        (
            "/apis/serving.knative.dev/v1/namespaces/apps/services",
            json!({"apiVersion": "serving.knative.dev/v1", "kind": "Service",
                   "metadata": {"name": "hello", "namespace": "apps"},
                   "spec": {"template": {"spec": {"containers": [{"image": "registry.invalid/hello:1"}]}},
                            "traffic": [{"latestRevision": true, "percent": 100}]}}),
        ),
    ];
    let read = [
        "/kind",
        "/apiVersion",
        "/metadata/name",
        "/metadata/namespace",
        "/metadata/generation",
    ];
    for (collection, object) in objects {
        let name = object["metadata"]["name"]
            .as_str()
            .expect("name")
            .to_string();
        let ((rc, r), (sc, s)) = both("POST", collection.into(), Some(object)).await;
        assert_eq!((rc, sc), (201, 201), "POST {collection}: {r:?} {s:?}");
        let ((rc, r), (sc, s)) = both("GET", format!("{collection}/{name}"), None).await;
        assert_eq!(
            (rc, shape(&r[0], &read), &r[0]["spec"]),
            (sc, shape(&s[0], &read), &s[0]["spec"]),
            "GET {collection}/{name}: real server (left) vs simulator (right)"
        );
        let ((rc, r), (sc, s)) = both("GET", format!("{collection}?limit=2500"), None).await;
        assert_eq!(
            (rc, r[0]["kind"].clone(), names(&r[0])),
            (sc, s[0]["kind"].clone(), names(&s[0])),
            "LIST {collection}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_8_the_simulator_answers_as_the_real_api_server() {
    use liveproof_testkit::e2e::control_plane::{client_for, raw};
    use serde_json::json;
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
    let real = plane.client().await.expect("client");
    let objects: Vec<serde_json::Value> = {
        let mut objects = vec![
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"}},
                   "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "app", "image": "registry.invalid/web:v1"}]}}}}),
            json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
                   "metadata": {"name": "sh.helm.release.v1.web.v1", "namespace": "apps",
                                "labels": {"owner": "helm", "name": "web", "version": "1", "status": "deployed"}},
                   "data": {"release": "eA=="}}),
        ];
        for i in 0..5 {
            objects.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i}"), "namespace": "apps", "labels": {"app": "conf"}},
                "data": {"i": i.to_string()}}));
        }
        objects
    };
    let yaml: String = objects
        .iter()
        .map(|o| format!("---\n{}\n", serde_json::to_string(o).expect("JSON")))
        .collect();
    let applied = liveproof_testkit::kubectl()
        .kubeconfig(&plane.kubeconfig)
        .args(&["apply", "-f", "-"])
        .stdin(yaml)
        .run()
        .await;
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    let sim = SimCluster::start(objects.clone(), "apps").await;
    let simulated = client_for(&sim.kubeconfig).await.expect("sim client");

    let both =
        |method: &'static str, path: String, body: Option<(&'static str, serde_json::Value)>| {
            let (real, simulated) = (real.clone(), simulated.clone());
            async move { ask_both(&real, &simulated, method, &path, body).await }
        };
    let object_paths = [
        "/kind",
        "/apiVersion",
        "/metadata/name",
        "/metadata/namespace",
        "/metadata/uid",
        "/metadata/resourceVersion",
        "/metadata/generation",
        "/metadata/creationTimestamp",
        "/metadata/labels",
    ];

    // GET one object.
    let ((rc, r), (sc, s)) = both(
        "GET",
        "/apis/apps/v1/namespaces/apps/deployments/web".into(),
        None,
    )
    .await;
    assert_eq!(
        (rc, shape(&r[0], &object_paths)),
        (sc, shape(&s[0], &object_paths)),
        "GET deployment"
    );

    // GET a missing object: a NotFound Status naming it.
    let status_paths = [
        "/kind",
        "/status",
        "/reason",
        "/code",
        "/details/name",
        "/details/group",
        "/details/kind",
    ];
    let ((rc, r), (sc, s)) = both(
        "GET",
        "/apis/apps/v1/namespaces/apps/deployments/nope".into(),
        None,
    )
    .await;
    assert_eq!(
        (rc, shape(&r[0], &status_paths)),
        (sc, shape(&s[0], &status_paths)),
        "GET missing"
    );

    // LIST by label selector, paginated as kubectl does.
    let list_paths = [
        "/kind",
        "/apiVersion",
        "/metadata/resourceVersion",
        "/metadata/continue",
        "/metadata/remainingItemCount",
    ];
    // Each server's continue token is its own (opaque): walk each server's pages with its own.
    let pages = |client: liveproof_testkit::e2e::kube::Client| async move {
        let base = "/api/v1/namespaces/apps/configmaps?labelSelector=app%3Dconf&limit=2";
        let mut path = base.to_string();
        let mut pages = Vec::new();
        for _ in 0..5 {
            let (code, page) = raw(&client, "GET", &path, None).await.expect("LIST");
            let page = &page[0];
            pages.push((code, shape(page, &list_paths), names(page)));
            match page["metadata"]["continue"].as_str() {
                Some(token) if !token.is_empty() => path = format!("{base}&continue={token}"),
                _ => break,
            }
        }
        pages
    };
    let r = pages(real.clone()).await;
    let s = pages(simulated.clone()).await;
    assert_eq!(r, s, "LIST, paginated");
    assert_eq!(r.len(), 3, "5 items 2 by 2: {r:?}");

    // LIST in a namespace that does not exist: an empty list, not an error.
    let ((rc, r), (sc, s)) =
        both("GET", "/api/v1/namespaces/nowhere/configmaps".into(), None).await;
    assert_eq!(
        (rc, r[0]["kind"].clone(), names(&r[0])),
        (sc, s[0]["kind"].clone(), names(&s[0])),
        "LIST empty"
    );

    // What traffic_current LISTs per namespace: Services and EndpointSlices, served by both
    // at the same group/version as the same list kind.
    for path in [
        "/api/v1/namespaces/apps/services?limit=2500",
        "/apis/discovery.k8s.io/v1/namespaces/apps/endpointslices?limit=2500",
    ] {
        let ((rc, r), (sc, s)) = both("GET", path.into(), None).await;
        assert_eq!(
            (
                rc,
                r[0]["kind"].clone(),
                r[0]["apiVersion"].clone(),
                names(&r[0])
            ),
            (
                sc,
                s[0]["kind"].clone(),
                s[0]["apiVersion"].clone(),
                names(&s[0])
            ),
            "{path}"
        );
    }

    // Helm storage by label selector, and a field selector on the name.
    let ((rc, r), (sc, s)) = both(
        "GET",
        "/api/v1/namespaces/apps/secrets?labelSelector=owner%3Dhelm%2Cname%3Dweb".into(),
        None,
    )
    .await;
    assert_eq!((rc, names(&r[0])), (sc, names(&s[0])), "LIST helm storage");
    assert_eq!(r[0]["items"][0]["type"], s[0]["items"][0]["type"]);
    assert_eq!(r[0]["items"][0]["data"], s[0]["items"][0]["data"]);
    let ((rc, r), (sc, s)) = both(
        "GET",
        "/api/v1/namespaces/apps/configmaps?fieldSelector=metadata.name%3Dcm-1".into(),
        None,
    )
    .await;
    assert_eq!(
        (rc, names(&r[0])),
        (sc, names(&s[0])),
        "LIST by field selector"
    );

    // A type the server does not serve (no Flux CRD): 404 from both. Accepted difference:
    // the body — the real server answers a plain-text "404 page not found" from its router.
    let ((rc, _), (sc, _)) = both(
        "GET",
        "/apis/helm.toolkit.fluxcd.io/v2/namespaces/apps/helmreleases/web".into(),
        None,
    )
    .await;
    assert_eq!(rc, sc, "unserved type");

    // PATCH (strategic merge, as `stale --restart` sends): 200, generation + 1.
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-12-03T00:00:00Z"}}}}});
    let ((rc, r), (sc, s)) = both(
        "PATCH",
        "/apis/apps/v1/namespaces/apps/deployments/web".into(),
        Some(("application/strategic-merge-patch+json", patch)),
    )
    .await;
    assert_eq!(
        (rc, shape(&r[0], &object_paths)),
        (sc, shape(&s[0], &object_paths)),
        "PATCH"
    );
    assert_eq!(r[0]["metadata"]["generation"], json!(2), "real");
    assert_eq!(s[0]["metadata"]["generation"], json!(2), "simulator");

    // WATCH from a list's resourceVersion: a new object arrives as ADDED, then the server ends
    // the watch at timeoutSeconds.
    let watch_of = |client: liveproof_testkit::e2e::kube::Client| async move {
        let (_, list) = raw(
            &client,
            "GET",
            "/api/v1/namespaces/apps/configmaps?labelSelector=app%3Dconf",
            None,
        )
        .await
        .expect("list");
        let rv = list[0]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let watch_path = format!("/api/v1/namespaces/apps/configmaps?labelSelector=app%3Dconf&watch=true&resourceVersion={rv}&timeoutSeconds=3&allowWatchBookmarks=false");
        let watch = raw(&client, "GET", &watch_path, None);
        let create = async {
            // The real API server shows no client when its watch is open: give it time to.
            tokio::time::sleep(Duration::from_millis(500)).await;
            raw(
                &client,
                "POST",
                "/api/v1/namespaces/apps/configmaps",
                Some(("application/json", &json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "cm-new", "namespace": "apps", "labels": {"app": "conf"}}}))),
            )
            .await
            .expect("create")
        };
        let ((code, events), _) = tokio::join!(async { watch.await.expect("watch") }, create);
        let events: Vec<(String, String, String)> = events
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or_default().to_string(),
                    e["object"]["kind"].as_str().unwrap_or_default().to_string(),
                    e["object"]["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect();
        (code, events)
    };
    let r = watch_of(real.clone()).await;
    let s = watch_of(simulated.clone()).await;
    assert_eq!(r, s, "WATCH");
    assert_eq!(
        r.1,
        [(
            "ADDED".to_string(),
            "ConfigMap".to_string(),
            "cm-new".to_string()
        )]
    );
}
