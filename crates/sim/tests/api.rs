//! The simulator over plain HTTP: discovery, selectors, paging, writes, watch, faults, RBAC.

use liveproof_testkit::sim_http as common;

use std::time::{Duration, Instant};

use common::{names, next_event, start, start_with, Http};
use liveproof_sim::Simulator;
use liveproof_testkit::wait_for;
use serde_json::json;

const PODS: &str = "/api/v1/namespaces/apps/pods";
const DEPLOY: &str = "/apis/apps/v1/namespaces/apps/deployments/inventory";

#[tokio::test]
async fn discovery_advertises_builtins_and_fixture_crds() {
    let sim = start().await;
    let h = Http::new(&sim);
    assert_eq!(h.get("/version").await.body["gitVersion"], "v1.33.0");
    let core = h.get("/api/v1").await.body;
    assert_eq!(core["kind"], "APIResourceList");
    let pods = core["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == "pods")
        .expect("pods");
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert_eq!(pods["namespaced"], true);
    assert!(core["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .any(|r| r["name"] == "pods/status"));
    let ns = core["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == "namespaces")
        .expect("ns");
    assert_eq!(ns["namespaced"], false);
    let groups = h.get("/apis").await.body;
    let group_names: Vec<&str> = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert!(
        group_names.contains(&"apps") && group_names.contains(&"helm.toolkit.fluxcd.io"),
        "{group_names:?}"
    );
    let hr = h.get("/apis/helm.toolkit.fluxcd.io/v2").await.body;
    assert_eq!(hr["resources"][0]["name"], "helmreleases");
    assert_eq!(hr["resources"][0]["kind"], "HelmRelease");
    assert_eq!(hr["resources"][0]["namespaced"], true);
    let apps = h.get("/apis/apps/v1").await.body;
    let deploy = apps["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == "deployments")
        .expect("deployments");
    assert_eq!(deploy["shortNames"], json!(["deploy"]));
    assert_eq!(h.get("/apis/nope.example.com/v1").await.status, 404);
    sim.shutdown().await;
}

#[tokio::test]
async fn label_and_field_selectors_filter_lists() {
    let sim = start().await;
    let h = Http::new(&sim);
    let by = |q: &str| format!("{PODS}?{q}");
    let list = h.get(&by("labelSelector=app%3Dinventory")).await.body;
    assert_eq!(list["kind"], "PodList");
    assert_eq!(
        names(&list),
        ["inventory-7d9c8b6f5d-q8m7z", "inventory-7d9c8b6f5d-x4k2p"]
    );
    assert_eq!(
        names(&h.get(&by("labelSelector=tier%21%3Dbatch")).await.body).len(),
        2
    );
    assert_eq!(
        names(
            &h.get(&by("labelSelector=app%20in%20(report-builder,nope)"))
                .await
                .body
        ),
        ["report-builder"]
    );
    assert_eq!(
        names(
            &h.get(&by("labelSelector=app%20notin%20(inventory)"))
                .await
                .body
        ),
        ["report-builder"]
    );
    assert_eq!(
        names(&h.get(&by("labelSelector=tier")).await.body),
        ["report-builder"]
    );
    assert_eq!(
        names(&h.get(&by("labelSelector=%21tier")).await.body).len(),
        2
    );
    assert_eq!(
        names(
            &h.get(&by("fieldSelector=status.phase%3DPending"))
                .await
                .body
        ),
        ["report-builder"]
    );
    assert_eq!(
        names(
            &h.get(&by("fieldSelector=spec.nodeName%3Dnode-a"))
                .await
                .body
        ),
        ["inventory-7d9c8b6f5d-x4k2p"]
    );
    assert_eq!(
        names(
            &h.get(&by("fieldSelector=metadata.name%3Dreport-builder"))
                .await
                .body
        ),
        ["report-builder"]
    );
    // All namespaces: the staging pod shows up too.
    assert_eq!(
        names(
            &h.get("/api/v1/pods?labelSelector=app%3Dinventory")
                .await
                .body
        )
        .len(),
        3
    );
    assert_eq!(
        names(&h.get("/apis/apps/v1/deployments").await.body),
        ["inventory"]
    );
    let bad = h.get(&by("fieldSelector=spec.foo%3Dbar")).await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.body["kind"], "Status");
    assert_eq!(bad.body["reason"], "BadRequest");
    assert_eq!(bad.body["message"], "field label not supported: spec.foo");
    assert_eq!(h.get(&by("labelSelector=app%20in%20x")).await.status, 400);
    sim.shutdown().await;
}

#[tokio::test]
async fn paging_with_limit_and_continue_visits_every_item_once() {
    let sim = start().await;
    let h = Http::new(&sim);
    let mut seen = Vec::new();
    let mut token = String::new();
    for _ in 0..5 {
        let page = h
            .get(&format!("{PODS}?limit=1&continue={token}"))
            .await
            .body;
        assert_eq!(
            page["metadata"]["resourceVersion"],
            sim.resource_version().to_string()
        );
        seen.extend(names(&page));
        match page["metadata"]["continue"].as_str() {
            Some(t) => token = t.to_owned(),
            None => break,
        }
    }
    assert_eq!(
        seen,
        [
            "inventory-7d9c8b6f5d-q8m7z",
            "inventory-7d9c8b6f5d-x4k2p",
            "report-builder"
        ]
    );
    let first = h.get(&format!("{PODS}?limit=2")).await.body;
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    assert_eq!(
        h.get(&format!("{PODS}?continue=not-a-token")).await.status,
        400
    );
    sim.shutdown().await;
}

/// A list read in pages is one version, as the real server's (one etcd snapshot): every page
/// carries the first page's resourceVersion, so a watch from it replays what changed while
/// the pages were read, even on a page already read. Before, each page carried the version it
/// was served at, and a watch from the last one lost those changes for good: `--wait` on a
/// rollout of 2,000 Deployments waited out its timeout on ReplicaSets it never saw created.
#[tokio::test]
async fn a_list_in_pages_is_one_version_and_a_watch_from_it_misses_nothing() {
    let sim = start_with(Simulator::new().with_history_limit(3)).await;
    let h = Http::new(&sim);
    let first = h.get(&format!("{PODS}?limit=2")).await.body;
    let version = first["metadata"]["resourceVersion"].clone();
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a second page")
        .to_owned();
    // Created meanwhile, named into the page already read.
    sim.apply(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "aaa-meanwhile", "namespace": "apps"}, "spec": {}}));
    let second = h
        .get(&format!("{PODS}?limit=2&continue={token}"))
        .await
        .body;
    assert_eq!(second["metadata"]["resourceVersion"], version);
    assert_eq!(names(&second), ["report-builder"]);
    let mut w = h
        .watch(&format!(
            "{PODS}?watch=true&resourceVersion={}",
            version.as_str().expect("a version")
        ))
        .await;
    let ev = next_event(&mut w).await.expect("the creation, replayed");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "aaa-meanwhile");

    // Once history is compacted past the list's version, its token is too old, as etcd's is.
    let first = h.get(&format!("{PODS}?limit=2")).await.body;
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a second page")
        .to_owned();
    for i in 0..4 {
        sim.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("c{i}"), "namespace": "apps"}}));
    }
    let gone = h.get(&format!("{PODS}?limit=2&continue={token}")).await;
    assert_eq!(gone.status, 410, "{}", gone.body);
    assert_eq!(gone.body["reason"], "Expired");
    sim.shutdown().await;
}

#[tokio::test]
async fn a_patched_or_deleted_pod_leaves_its_old_selection() {
    let sim = start().await;
    let h = Http::new(&sim);
    let by_app = |app: &str| format!("{PODS}?labelSelector=app%3D{app}");
    let moved = "inventory-7d9c8b6f5d-q8m7z";
    let patched = h
        .send(
            "PATCH",
            &format!("{PODS}/{moved}"),
            Some("application/merge-patch+json"),
            None,
            r#"{"metadata": {"labels": {"app": "billing"}}}"#,
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(
        names(&h.get(&by_app("inventory")).await.body),
        ["inventory-7d9c8b6f5d-x4k2p"]
    );
    assert_eq!(names(&h.get(&by_app("billing")).await.body), [moved]);
    let both = format!("{PODS}?labelSelector=app%3Dbilling%2Cpod-template-hash%3D7d9c8b6f5d");
    assert_eq!(names(&h.get(&both).await.body), [moved]);
    let gone = h
        .send("DELETE", &format!("{PODS}/{moved}"), None, None, "")
        .await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert!(names(&h.get(&by_app("billing")).await.body).is_empty());
    assert!(names(&h.get(&both).await.body).is_empty());
    sim.shutdown().await;
}

#[tokio::test]
async fn a_continue_token_survives_a_pod_created_before_it() {
    // Unselected (the range) and selected (through the selector's checks).
    for selector in ["", "&labelSelector=app%21%3Dnone"] {
        let sim = start().await;
        let h = Http::new(&sim);
        let first = h.get(&format!("{PODS}?limit=1{selector}")).await.body;
        assert_eq!(names(&first), ["inventory-7d9c8b6f5d-q8m7z"]);
        let token = first["metadata"]["continue"]
            .as_str()
            .expect("a continue token")
            .to_owned();
        // Sorts before the cursor: a later page must not serve it.
        let early = "aaa";
        let created = h
            .send(
                "POST",
                PODS,
                Some("application/json"),
                None,
                &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": early},
                        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
                .to_string(),
            )
            .await;
        assert_eq!(created.status, 201, "{}", created.body);
        let rest = h
            .get(&format!("{PODS}?limit=1&continue={token}{selector}"))
            .await
            .body;
        assert_eq!(names(&rest), ["inventory-7d9c8b6f5d-x4k2p"]);
        let token = rest["metadata"]["continue"].as_str().expect("more");
        let last = h
            .get(&format!("{PODS}?limit=1&continue={token}{selector}"))
            .await
            .body;
        assert_eq!(names(&last), ["report-builder"]);
        assert_eq!(last["metadata"].get("continue"), None, "{selector}");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn errors_are_status_objects() {
    let sim = start().await;
    let h = Http::new(&sim);
    let missing = h.get("/apis/apps/v1/namespaces/apps/deployments/x").await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.body,
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"deployments.apps \"x\" not found","reason":"NotFound",
               "details":{"name":"x","group":"apps","kind":"deployments"},"code":404})
    );
    assert_eq!(missing.headers["content-type"], "application/json");
    let bad = h
        .send("POST", PODS, Some("application/json"), None, "{not json")
        .await;
    assert_eq!(
        (bad.status, bad.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn create_replace_and_conflicts() {
    let sim = start().await;
    let h = Http::new(&sim);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags"}, "data": {"a": "1"}});
    let created = h
        .send(
            "POST",
            "/api/v1/namespaces/apps/configmaps",
            Some("application/json"),
            None,
            &cm.to_string(),
        )
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(created.body["metadata"]["namespace"], "apps");
    assert!(created.body["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(created.body["metadata"]["creationTimestamp"].is_string());
    assert!(
        created.body["metadata"].get("generation").is_none(),
        "configmaps have no generation"
    );
    let again = h
        .send(
            "POST",
            "/api/v1/namespaces/apps/configmaps",
            Some("application/json"),
            None,
            &cm.to_string(),
        )
        .await;
    assert_eq!(
        (again.status, again.body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
    assert_eq!(again.body["message"], "configmaps \"flags\" already exists");

    let mut replaced = created.body.clone();
    replaced["data"]["a"] = json!("2");
    let put = h
        .send(
            "PUT",
            "/api/v1/namespaces/apps/configmaps/flags",
            Some("application/json"),
            None,
            &replaced.to_string(),
        )
        .await;
    assert_eq!(put.status, 200);
    let rv1: u64 = created.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("int");
    let rv2: u64 = put.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("int");
    assert!(rv2 > rv1);
    // The body still carries the first resourceVersion: stale.
    let stale = h
        .send(
            "PUT",
            "/api/v1/namespaces/apps/configmaps/flags",
            Some("application/json"),
            None,
            &replaced.to_string(),
        )
        .await;
    assert_eq!(
        (stale.status, stale.body["reason"].as_str()),
        (409, Some("Conflict"))
    );
    assert!(stale.body["message"]
        .as_str()
        .expect("msg")
        .contains("the object has been modified"));

    let deleted = h
        .send(
            "DELETE",
            "/api/v1/namespaces/apps/configmaps/flags",
            None,
            None,
            "",
        )
        .await;
    assert_eq!(deleted.status, 200);
    assert_eq!(
        h.get("/api/v1/namespaces/apps/configmaps/flags")
            .await
            .status,
        404
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn patch_kinds_and_generation() {
    let sim = start().await;
    let h = Http::new(&sim);
    let merge = h
        .send("PATCH", DEPLOY, Some("application/merge-patch+json"), None,
            r#"{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2025-05-03T10:00:00Z"}}}}}"#)
        .await;
    assert_eq!(merge.status, 200);
    assert_eq!(merge.body["metadata"]["generation"], 3);
    assert_eq!(
        merge.body["spec"]["template"]["metadata"]["annotations"]
            ["kubectl.kubernetes.io/restartedAt"],
        "2025-05-03T10:00:00Z"
    );

    let smp = h
        .send("PATCH", DEPLOY, Some("application/strategic-merge-patch+json"), None,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"inventory","image":"registry.example.com/shop/inventory:1.5.0","env":[{"name":"LOG_LEVEL","value":"debug"}]}]}}}}"#)
        .await;
    assert_eq!(smp.status, 200);
    let c = &smp.body["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "registry.example.com/shop/inventory:1.5.0");
    assert_eq!(c["env"][0], json!({"name": "LOG_LEVEL", "value": "debug"}));
    assert_eq!(
        c["env"][1]["name"], "DB_PASSWORD",
        "env merged by name, not replaced"
    );
    assert_eq!(c["ports"][0]["containerPort"], 8080);
    assert_eq!(smp.body["metadata"]["generation"], 4);

    let jp = h
        .send("PATCH", DEPLOY, Some("application/json-patch+json"), None,
            r#"[{"op":"add","path":"/metadata/labels/team","value":"shop"},{"op":"replace","path":"/spec/replicas","value":3}]"#)
        .await;
    assert_eq!(jp.status, 200);
    assert_eq!(jp.body["metadata"]["labels"]["team"], "shop");
    assert_eq!(jp.body["spec"]["replicas"], 3);
    assert_eq!(jp.body["metadata"]["generation"], 5);

    // Metadata-only changes do not bump generation; neither do status writes.
    let label = h
        .send(
            "PATCH",
            DEPLOY,
            Some("application/merge-patch+json"),
            None,
            r#"{"metadata":{"labels":{"x":"y"}}}"#,
        )
        .await;
    assert_eq!(label.body["metadata"]["generation"], 5);
    // The main endpoint ignores status; /status writes only status.
    let ignored = h
        .send(
            "PATCH",
            DEPLOY,
            Some("application/merge-patch+json"),
            None,
            r#"{"status":{"observedGeneration":99}}"#,
        )
        .await;
    assert_eq!(ignored.body["status"]["observedGeneration"], 2);
    let status = h
        .send(
            "PATCH",
            &format!("{DEPLOY}/status"),
            Some("application/merge-patch+json"),
            None,
            r#"{"status":{"observedGeneration":5},"spec":{"replicas":7}}"#,
        )
        .await;
    assert_eq!(status.status, 200);
    assert_eq!(status.body["status"]["observedGeneration"], 5);
    assert_eq!(status.body["spec"]["replicas"], 3);
    assert_eq!(status.body["metadata"]["generation"], 5);

    let bad_op = h
        .send(
            "PATCH",
            DEPLOY,
            Some("application/json-patch+json"),
            None,
            r#"[{"op":"remove","path":"/nope"}]"#,
        )
        .await;
    assert_eq!(bad_op.status, 422);
    let crd = h
        .send(
            "PATCH",
            "/apis/helm.toolkit.fluxcd.io/v2/namespaces/apps/helmreleases/inventory",
            Some("application/strategic-merge-patch+json"),
            None,
            r#"{"spec":{"suspend":true}}"#,
        )
        .await;
    assert_eq!(
        (crd.status, crd.body["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
    let crd = h
        .send(
            "PATCH",
            "/apis/helm.toolkit.fluxcd.io/v2/namespaces/apps/helmreleases/inventory",
            Some("application/merge-patch+json"),
            None,
            r#"{"spec":{"suspend":true}}"#,
        )
        .await;
    assert_eq!(crd.body["metadata"]["generation"], 4);
    let missing = h
        .send(
            "PATCH",
            "/apis/apps/v1/namespaces/apps/deployments/nope",
            Some("application/merge-patch+json"),
            None,
            "{}",
        )
        .await;
    assert_eq!(missing.status, 404);
    sim.shutdown().await;
}

/// Argo CD's Application CRD declares no `/status` subresource (`subresources: {}`): the
/// application-controller writes status through the main endpoint, `/status` is not served,
/// and every change but to `metadata` moves the generation — as the real API server does
/// (story 7 of crates/liveproof/tests/real_argocd.rs compares the two).
#[tokio::test]
async fn an_argo_cd_application_takes_its_status_through_the_main_endpoint() {
    let sim = start_with(Simulator::new().with_gitops_crds()).await;
    let h = Http::new(&sim);
    const APPS: &str = "/apis/argoproj.io/v1alpha1/namespaces/apps/applications";
    let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "shop", "namespace": "apps"},
        "spec": {"project": "default",
                 "source": {"repoURL": "http://git.invalid/apps.git", "path": "shop", "targetRevision": "main"},
                 "destination": {"name": "e2e", "namespace": "apps"}}});
    let created = h
        .send(
            "POST",
            APPS,
            Some("application/json"),
            None,
            &app.to_string(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["metadata"]["generation"], 1);
    let synced = h
        .send(
            "PATCH",
            &format!("{APPS}/shop"),
            Some("application/merge-patch+json"),
            None,
            r#"{"status":{"sync":{"status":"Synced","revision":"0123456789abcdef0123456789abcdef01234567"}}}"#,
        )
        .await;
    assert_eq!(synced.status, 200, "{}", synced.body);
    assert_eq!(synced.body["status"]["sync"]["status"], "Synced");
    assert_eq!(synced.body["metadata"]["generation"], 2);
    let annotated = h
        .send(
            "PATCH",
            &format!("{APPS}/shop"),
            Some("application/merge-patch+json"),
            None,
            r#"{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"hard"}}}"#,
        )
        .await;
    assert_eq!(annotated.body["metadata"]["generation"], 2);
    let status = h
        .send(
            "PATCH",
            &format!("{APPS}/shop/status"),
            Some("application/merge-patch+json"),
            None,
            r#"{"status":{"health":{"status":"Healthy"}}}"#,
        )
        .await;
    assert_eq!(status.status, 404, "{}", status.body);
    let discovery = h.get("/apis/argoproj.io/v1alpha1").await;
    let served: Vec<&str> = discovery.body["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .filter(|n| n.starts_with("applications"))
        .collect();
    assert_eq!(served, ["applications"]);
    sim.shutdown().await;
}

#[tokio::test]
async fn watch_follows_replays_and_expires() {
    let sim = start_with(Simulator::new().with_history_limit(50)).await;
    let h = Http::new(&sim);
    // From "now": nothing old, then a MODIFIED once the controller writes.
    let rv = sim.resource_version();
    let mut w = h
        .watch(&format!(
            "{PODS}?watch=true&resourceVersion={rv}&labelSelector=app%3Dinventory"
        ))
        .await;
    let mut pod = sim
        .get("v1", "Pod", Some("apps"), "inventory-7d9c8b6f5d-x4k2p")
        .expect("pod");
    pod["status"]["phase"] = json!("Failed");
    sim.apply(pod.clone());
    let ev = next_event(&mut w).await.expect("event");
    assert_eq!(ev["type"], "MODIFIED");
    assert_eq!(ev["object"]["status"]["phase"], "Failed");
    // Leaving the selector is a DELETED for this watch.
    pod["metadata"]["labels"]["app"] = json!("retired");
    sim.apply(pod);
    assert_eq!(next_event(&mut w).await.expect("event")["type"], "DELETED");

    // Replay: a watch from the old rv sees both changes again.
    let mut replay = h
        .watch(&format!("{PODS}?watch=1&resourceVersion={rv}"))
        .await;
    assert_eq!(
        next_event(&mut replay).await.expect("replayed")["type"],
        "MODIFIED"
    );
    assert_eq!(
        next_event(&mut replay).await.expect("replayed")["object"]["metadata"]["labels"]["app"],
        "retired"
    );

    // resourceVersion absent: ADDED for the current state first.
    let mut fresh = h
        .watch(&format!(
            "{PODS}?watch=true&fieldSelector=status.phase%3DPending"
        ))
        .await;
    let ev = next_event(&mut fresh).await.expect("initial");
    assert_eq!(
        (
            ev["type"].as_str(),
            ev["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("report-builder"))
    );

    // Deleting is seen as DELETED.
    sim.delete("v1", "Pod", Some("apps"), "report-builder")
        .expect("deleted");
    assert_eq!(
        next_event(&mut fresh).await.expect("deleted")["type"],
        "DELETED"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn watch_from_compacted_history_is_410_gone() {
    let sim = start_with(Simulator::new().with_history_limit(3)).await;
    let h = Http::new(&sim);
    for i in 0..5 {
        sim.apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}"), "namespace": "apps"}}));
    }
    let mut w = h
        .watch("/api/v1/namespaces/apps/configmaps?watch=true&resourceVersion=1")
        .await;
    let ev = next_event(&mut w).await.expect("error event");
    assert_eq!(ev["type"], "ERROR");
    assert_eq!(ev["object"]["kind"], "Status");
    assert_eq!(ev["object"]["code"], 410);
    assert_eq!(ev["object"]["reason"], "Expired");
    assert!(
        next_event(&mut w).await.is_none(),
        "the stream ends after the error"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn watch_bookmarks_and_timeout() {
    let sim = start_with(Simulator::new().with_bookmark_interval(Duration::from_millis(200))).await;
    let h = Http::new(&sim);
    let rv = sim.resource_version();
    let mut w = h
        .watch(&format!(
            "{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1"
        ))
        .await;
    let ev = next_event(&mut w).await.expect("bookmark");
    assert_eq!(ev["type"], "BOOKMARK");
    assert_eq!(ev["object"]["metadata"]["resourceVersion"], rv.to_string());
    assert_eq!(ev["object"]["kind"], "Pod");
    let started = Instant::now();
    while next_event(&mut w).await.is_some() {}
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "timeoutSeconds ends the watch"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn faults_inject_failures_latency_and_closed_watches() {
    let sim = start().await;
    let h = Http::new(&sim);
    sim.faults().fail_next(2, 429, Some(3));
    for _ in 0..2 {
        let r = h.get(DEPLOY).await;
        assert_eq!(r.status, 429);
        assert_eq!(r.headers["retry-after"], "3");
        assert_eq!(r.body["reason"], "TooManyRequests");
        assert_eq!(r.body["details"]["retryAfterSeconds"], 3);
    }
    assert_eq!(h.get(DEPLOY).await.status, 200);
    sim.faults().fail_next(1, 500, None);
    let r = h.get(DEPLOY).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str(), r.body["kind"].as_str()),
        (500, Some("InternalError"), Some("Status"))
    );

    sim.faults().set_latency(Duration::from_millis(300));
    let t = Instant::now();
    h.get(DEPLOY).await;
    assert!(t.elapsed() >= Duration::from_millis(300));
    sim.faults().clear();

    sim.faults().close_watches_after(2);
    let mut w = h.watch(&format!("{PODS}?watch=true")).await;
    assert!(next_event(&mut w).await.is_some());
    assert!(next_event(&mut w).await.is_some());
    assert!(
        next_event(&mut w).await.is_none(),
        "closed after 2 of 3 pods"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn denied_requests_are_403_with_the_rbac_message() {
    let sim = start().await;
    let h = Http::new(&sim);
    sim.deny("list", "pods", Some("apps"));
    let r = h.get(PODS).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(
        r.body["message"],
        "pods is forbidden: User \"liveproof-sim\" cannot list resource \"pods\" in API group \"\" in the namespace \"apps\""
    );
    assert_eq!(h.get("/api/v1/namespaces/staging/pods").await.status, 200);
    assert_eq!(
        h.get(&format!("{PODS}/report-builder")).await.status,
        200,
        "get is still allowed"
    );
    sim.deny("get", "deployments", None);
    let r = h.get(DEPLOY).await;
    assert_eq!(
        r.body["message"],
        "deployments.apps \"inventory\" is forbidden: User \"liveproof-sim\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"apps\""
    );
    sim.allow_all();
    assert_eq!(h.get(DEPLOY).await.status, 200);
    sim.shutdown().await;
}

#[tokio::test]
async fn requests_are_counted_per_verb_and_path() {
    let sim = start().await;
    let h = Http::new(&sim);
    h.get(DEPLOY).await;
    h.get(DEPLOY).await;
    h.get(PODS).await;
    h.send(
        "PATCH",
        DEPLOY,
        Some("application/merge-patch+json"),
        None,
        "{}",
    )
    .await;
    let log = sim.requests();
    assert_eq!(log.total(), 4);
    assert_eq!(log.count("get", DEPLOY), 2);
    assert_eq!(log.count("list", "/api/v1/"), 1);
    assert_eq!(log.count("patch", "/apis/apps"), 1);
    assert_eq!(log.count("watch", "/"), 0);
    assert!(log
        .snapshot()
        .contains(&("get".to_owned(), DEPLOY.to_owned(), 2)));
    log.reset();
    assert_eq!(log.total(), 0);
    sim.shutdown().await;
}

#[tokio::test]
async fn tables_for_kubectl_get() {
    let sim = start().await;
    let h = Http::new(&sim);
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let t = h
        .send(
            "GET",
            "/apis/apps/v1/namespaces/apps/deployments",
            None,
            Some(accept),
            "",
        )
        .await
        .body;
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .expect("cols")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        &cols[..5],
        ["Name", "Ready", "Up-to-date", "Available", "Age"]
    );
    assert_eq!(
        t["rows"][0]["cells"].as_array().expect("cells")[..4],
        [json!("inventory"), json!("2/2"), json!(2), json!(2)]
    );
    assert_eq!(t["rows"][0]["object"]["metadata"]["namespace"], "apps");
    let pods = h.send("GET", PODS, None, Some(accept), "").await.body;
    assert_eq!(
        pods["rows"][2]["cells"].as_array().expect("cells")[..4],
        [
            json!("report-builder"),
            json!("0/1"),
            json!("Pending"),
            json!("0")
        ]
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn apply_assigns_identity_and_tracks_generation() {
    let sim = start().await;
    let d = sim
        .get("apps/v1", "Deployment", Some("apps"), "inventory")
        .expect("fixture");
    assert_eq!(
        d["metadata"]["uid"], "5b7f2c1e-8a3d-4e6b-9c0a-1d2e3f4a5b6c",
        "fixture identity kept"
    );
    assert_eq!(d["metadata"]["generation"], 2);
    let mut next = d.clone();
    next["status"]["readyReplicas"] = json!(1);
    let stored = sim.apply(next);
    assert_eq!(
        stored["metadata"]["generation"], 2,
        "status writes keep generation"
    );
    assert_eq!(
        stored["status"]["readyReplicas"], 1,
        "the controller writes status"
    );
    let mut spec = stored.clone();
    spec["spec"]["replicas"] = json!(4);
    assert_eq!(sim.apply(spec)["metadata"]["generation"], 3);
    let rejected = sim.apply(json!({"kind": "Pod"}));
    assert_eq!(rejected["kind"], "Status");
    sim.shutdown().await;
}

/// The endpointslice controller's part: a fixture Service loaded without a slice gets one
/// listing the pods it selects (ready for a Ready pod, targetRef naming it), as a real cluster
/// would have; a fixture Service loaded with its own slice keeps that slice as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_get_slices_as_the_endpointslice_controller_writes_them() {
    let pod = |name: &str, ready: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "apps", "labels": {"app": "web"}},
               "status": {"phase": "Running", "podIP": "10.1.0.7",
                          "conditions": [{"type": "Ready", "status": ready}]}})
    };
    let service = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": name, "namespace": "apps"},
               "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
    };
    let hand_written = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "legacy-vm", "namespace": "apps",
                     "labels": {"kubernetes.io/service-name": "legacy"}},
        "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.9.15"]}]});
    let sim = start_with(Simulator::new().with_controllers().with_objects([
        pod("web-1", "True"),
        pod("web-2", "False"),
        service("web"),
        service("legacy"),
        hand_written,
    ]))
    .await;
    let h = Http::new(&sim);
    let path = "/apis/discovery.k8s.io/v1/namespaces/apps/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb";
    let h = &h;
    let slice = wait_for(
        "a slice for Service web",
        Duration::from_secs(10),
        move || async move { h.get(path).await.body["items"].get(0).cloned() },
    )
    .await;
    assert_eq!(
        slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io"
    );
    assert_eq!(slice["metadata"]["ownerReferences"][0]["kind"], "Service");
    assert_eq!(
        slice["ports"],
        json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
    );
    let endpoints: Vec<(String, bool)> = slice["endpoints"]
        .as_array()
        .expect("endpoints")
        .iter()
        .map(|e| {
            (
                e["targetRef"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                e["conditions"]["ready"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        endpoints,
        [("web-1".to_owned(), true), ("web-2".to_owned(), false)]
    );
    let legacy = h
        .get("/apis/discovery.k8s.io/v1/namespaces/apps/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dlegacy")
        .await
        .body;
    assert_eq!(
        names(&legacy),
        ["legacy-vm"],
        "the hand-written slice alone"
    );
}
