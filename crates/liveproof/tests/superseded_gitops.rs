//! Issue 33: a change a later commit replaced is `superseded` (exit 4), not `not_live` (exit 1,
//! which a pipeline rolls back on) — shown with real git repositories, offline (`--from`) and
//! on the simulator. Commit B sets `shop`'s image to 1.1, commit C to 1.2; the cluster runs C.
//!
//! - `-f apps/shop.yaml --commit B`: C, a later commit that touched the file, states what runs,
//!   and B's file differs from it in the image: superseded by C, naming 1.2 and C's time;
//! - `kustomization/apps --commit B --image …:1.1`: Flux applied C, a strict descendant of B,
//!   whose manifests under the Kustomization's path differ from B's in the image, and the live
//!   Deployment is C's: superseded, the Kustomization and its Deployment alike;
//! - what stays as it was: C changed another field only (B is live), C still states 1.1 while
//!   the cluster runs something else (not live), a later commit states 1.1 again (not live),
//!   and a path kustomize transforms (unproven: whether C replaced B cannot be told from the
//!   files, and that is never a rollback).

use liveproof_testkit::binary as common;

use common::liveproof;
use liveproof_evidence::{Report, SupersededBy, Verdict};
use liveproof_testkit::git::{git_at, Repo};
use liveproof_testkit::SimCluster;
use serde_json::{json, Value};

const IMAGE: &str = "registry.example/acme/shop";
const B_AT: &str = "2026-07-12T10:00:00Z";
const C_AT: &str = "2026-07-12T10:05:00Z";
/// When the pods of the template the cluster runs started: after both commits.
const STARTED: &str = "2026-07-12T10:07:00Z";

/// `apps/shop.yaml` as committed: Deployment apps/shop running `shop:TAG`, with `replicas`
/// and, when given, env `LOG_LEVEL`.
fn manifest(tag: &str, replicas: u32, log_level: Option<&str>) -> String {
    let env = log_level
        .map(|l| format!("\n        env:\n        - name: LOG_LEVEL\n          value: {l}"))
        .unwrap_or_default();
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: apps
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: shop}}
  template:
    metadata:
      labels: {{app: shop}}
    spec:
      containers:
      - name: app
        image: {IMAGE}:{tag}{env}
"
    )
}

/// Commits `files` (path, text) at `at`; the commit's SHA.
fn commit(repo: &Repo, files: &[(&str, &str)], message: &str, at: &str) -> String {
    for (path, text) in files {
        repo.file(path, text);
    }
    git_at(&repo.path(), &["add", "-A"], at);
    git_at(&repo.path(), &["commit", "-q", "-m", message], at);
    git_at(&repo.path(), &["rev-parse", "HEAD"], at)
}

/// The live template of Deployment apps/shop (and its ReplicaSet's and pods').
fn template(tag: &str, log_level: Option<&str>, hash: Option<&str>) -> Value {
    let mut labels = json!({"app": "shop"});
    if let Some(h) = hash {
        labels["pod-template-hash"] = json!(h);
    }
    let mut container = json!({"name": "app", "image": format!("{IMAGE}:{tag}"), "imagePullPolicy": "IfNotPresent"});
    if let Some(l) = log_level {
        container["env"] = json!([{"name": "LOG_LEVEL", "value": l}]);
    }
    json!({"metadata": {"labels": labels}, "spec": {"containers": [container], "restartPolicy": "Always"}})
}

/// The cluster after Flux applied `revision`: Deployment apps/shop running `tag` (rolled out,
/// two Ready pods started at [`STARTED`]), and the Kustomization flux-system/apps (path
/// `./apps`, with `spec` extras) with its GitRepository, both at `revision`.
fn cluster(revision: &str, tag: &str, log_level: Option<&str>, kustomization: Value) -> Vec<Value> {
    let hash = "7d9c5f";
    let mut objects = vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "shop", "namespace": "apps", "uid": "uid-shop", "generation": 2,
                         "creationTimestamp": "2026-06-01T08:00:00Z"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "shop"}},
                     "template": template(tag, log_level, None)},
            "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
                       "readyReplicas": 2, "availableReplicas": 2,
                       "conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                                       "lastTransitionTime": STARTED}]}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("shop-{hash}"), "namespace": "apps", "generation": 1,
                         "creationTimestamp": "2026-07-12T10:06:30Z",
                         "labels": {"app": "shop", "pod-template-hash": hash},
                         "annotations": {"deployment.kubernetes.io/revision": "2"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "shop", "uid": "uid-shop", "controller": true}]},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "shop", "pod-template-hash": hash}},
                     "template": template(tag, log_level, Some(hash))},
            "status": {"observedGeneration": 1, "replicas": 2, "readyReplicas": 2, "availableReplicas": 2}}),
    ];
    for i in 0..2 {
        objects.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("shop-{hash}-{i}"), "namespace": "apps",
                         "labels": {"app": "shop", "pod-template-hash": hash},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("shop-{hash}"), "uid": "uid-rs", "controller": true}]},
            "spec": template(tag, log_level, Some(hash))["spec"].clone(),
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-07-12T10:07:05Z"}],
                       "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                              "image": format!("{IMAGE}:{tag}"), "imageID": "",
                                              "state": {"running": {"startedAt": STARTED}}}]}}));
    }
    let mut spec = json!({"interval": "10m", "path": "./apps", "prune": true,
                          "sourceRef": {"kind": "GitRepository", "name": "apps"}});
    if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), kustomization) {
        spec.extend(extra);
    }
    let applied = format!("main@sha1:{revision}");
    objects.push(json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
        "spec": spec,
        "status": {"observedGeneration": 1, "lastAppliedRevision": applied, "lastAttemptedRevision": applied,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                                   "message": format!("Applied revision: {applied}"),
                                   "lastTransitionTime": "2026-07-12T10:06:20Z"}],
                   "inventory": {"entries": [{"id": "apps_shop_apps_Deployment", "v": "v1"}]}}}));
    objects.push(json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
        "spec": {"interval": "1m", "url": "https://git.example/acme/apps", "ref": {"branch": "main"}},
        "status": {"observedGeneration": 1, "artifact": {"revision": applied}}}));
    objects
}

/// `verify ARGS --repo REPO -o json`, offline from `objects` and on the simulator serving
/// them: both reports, which must agree on the verdict.
async fn verify(objects: &[Value], repo: &Repo, args: &[&str]) -> Report {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("cluster.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&dump, list.to_string()).expect("write the dump");
    let repo_path = repo.path();
    let repo_arg = repo_path.to_str().expect("utf-8 path");
    let offline = liveproof()
        .arg("verify")
        .args(args)
        .args(&["--repo", repo_arg, "--from"])
        .arg(&dump)
        .json()
        .current_dir(&repo_path)
        .run()
        .await;
    let report = offline.report();
    assert_eq!(
        offline.code,
        i32::from(report.verdict.exit_code()),
        "{}",
        offline.stderr
    );
    let sim = SimCluster::start(objects.to_vec(), "apps").await;
    let live = liveproof()
        .arg("verify")
        .args(args)
        .args(&["--repo", repo_arg])
        .on(&sim)
        .json()
        .current_dir(&repo_path)
        .run()
        .await;
    sim.sim.shutdown().await;
    let live_report = live.report();
    assert_eq!(
        (live.code, live_report.verdict),
        (offline.code, report.verdict),
        "offline and on the simulator differ:\n{}\n{}",
        offline.stdout,
        live.stdout
    );
    report
}

/// The repository of the story: B (shop 1.1), then C (`c_text`); their SHAs.
fn history(c_text: &str) -> (Repo, String, String) {
    let repo = Repo::new();
    commit(
        &repo,
        &[("README.md", "apps\n")],
        "start",
        "2026-07-11T09:00:00Z",
    );
    let b = commit(
        &repo,
        &[("apps/shop.yaml", &manifest("1.1", 2, None))],
        "shop 1.1",
        B_AT,
    );
    let c = commit(
        &repo,
        &[("apps/shop.yaml", c_text)],
        "the next change",
        C_AT,
    );
    (repo, b, c)
}

fn by(report: &Report, kind: &str) -> SupersededBy {
    let t = report
        .targets
        .iter()
        .find(|t| t.kind.name() == kind)
        .unwrap_or_else(|| panic!("a {kind} in {report:#?}"));
    assert_eq!(t.verdict, Verdict::Superseded, "{t:#?}");
    let next = t
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(next.contains("nothing to roll back"), "{next}");
    t.superseded_by.clone().unwrap_or_else(|| panic!("{t:#?}"))
}

#[tokio::test]
async fn a_manifest_a_later_commit_replaced_is_superseded_by_that_commit() {
    let (repo, b, c) = history(&manifest("1.2", 2, None));
    let objects = cluster(&c, "1.2", None, json!({}));
    let report = verify(
        &objects,
        &repo,
        &["-f", "apps/shop.yaml", "--commit", &b[..7]],
    )
    .await;
    assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
    let by = by(&report, "Deployment");
    assert_eq!(by.commit.as_deref(), Some(&c[..7]));
    assert_eq!(by.images, [format!("{IMAGE}:1.2")]);
    assert_eq!(by.at.as_deref(), Some(C_AT));
    assert_eq!(by.live, Some(true), "C's pods started after it: {by:#?}");
    assert!(
        by.summary.contains(&format!("{IMAGE}:1.2"))
            && by.summary.contains(&format!("{IMAGE}:1.1")),
        "{}",
        by.summary
    );
    assert_eq!(
        by.revision.as_deref(),
        Some("ReplicaSet shop-7d9c5f (revision 2)")
    );
}

#[tokio::test]
async fn a_kustomization_that_applied_a_later_commit_is_superseded_with_its_workloads() {
    let (repo, b, c) = history(&manifest("1.2", 2, None));
    let objects = cluster(&c, "1.2", None, json!({}));
    let image = format!("{IMAGE}:1.1");
    let report = verify(
        &objects,
        &repo,
        &[
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &b,
            "--image",
            &image,
        ],
    )
    .await;
    assert_eq!(report.verdict, Verdict::Superseded, "{report:#?}");
    let owner = by(&report, "Kustomization");
    let workload = by(&report, "Deployment");
    for by in [&owner, &workload] {
        assert_eq!(
            by.revision.as_deref(),
            Some(format!("main@sha1:{c}").as_str())
        );
        assert_eq!(by.commit.as_deref(), Some(&c[..7]));
        assert_eq!(by.images, [format!("{IMAGE}:1.2")]);
        assert_eq!(by.at.as_deref(), Some(C_AT));
        assert_eq!(by.live, Some(true));
        let source = by.source_ref.as_ref().expect("where it was read");
        assert_eq!(
            (source.kind.as_str(), source.field.as_str()),
            ("Kustomization", ".status.lastAppliedRevision")
        );
    }
}

/// The negative: C changed only what B does not state (the replica count, outside the pod
/// template; an env var, with `--image`), so B's change is what runs: live.
#[tokio::test]
async fn a_later_commit_that_changed_another_field_leaves_the_change_live() {
    let (repo, b, c) = history(&manifest("1.1", 3, None));
    let objects = cluster(&c, "1.1", None, json!({}));
    let report = verify(&objects, &repo, &["-f", "apps/shop.yaml", "--commit", &b]).await;
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");

    let (repo, b, c) = history(&manifest("1.1", 2, Some("debug")));
    let objects = cluster(&c, "1.1", Some("debug"), json!({}));
    let image = format!("{IMAGE}:1.1");
    let report = verify(
        &objects,
        &repo,
        &[
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &b,
            "--image",
            &image,
        ],
    )
    .await;
    assert_eq!(report.verdict, Verdict::Live, "{report:#?}");
}

/// C still states 1.1, yet the cluster runs 1.0: C contains the change and it is not live.
#[tokio::test]
async fn a_later_revision_that_still_states_the_change_leaves_it_not_live() {
    let (repo, b, c) = history(&manifest("1.1", 3, None));
    let objects = cluster(&c, "1.0", None, json!({}));
    let image = format!("{IMAGE}:1.1");
    let report = verify(
        &objects,
        &repo,
        &[
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &b,
            "--image",
            &image,
        ],
    )
    .await;
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
    assert!(report.targets.iter().all(|t| t.superseded_by.is_none()));
}

/// C replaced 1.1 with 1.2 and D states 1.1 again, while the cluster still runs C: the
/// change is wanted again and not live — not superseded by C.
#[tokio::test]
async fn a_commit_that_states_the_change_again_keeps_it_not_live() {
    let (repo, b, c) = history(&manifest("1.2", 2, None));
    commit(
        &repo,
        &[("apps/shop.yaml", &manifest("1.1", 2, None))],
        "back to 1.1",
        "2026-07-12T10:06:00Z",
    );
    let objects = cluster(&c, "1.2", None, json!({}));
    let report = verify(&objects, &repo, &["-f", "apps/shop.yaml", "--commit", &b]).await;
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
}

/// The Kustomization's path is a kustomize overlay that sets the image: the raw files cannot
/// show whether C changed it. C descends from B and the template lacks B's image: unproven,
/// saying what would decide — never the not_live that would roll C back.
#[tokio::test]
async fn a_later_revision_kustomize_builds_is_unproven_not_a_rollback() {
    let overlay = |tag: &str| {
        format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [shop.yaml]\nimages:\n- name: {IMAGE}\n  newTag: \"{tag}\"\n")
    };
    let repo = Repo::new();
    let b = commit(
        &repo,
        &[
            ("apps/shop.yaml", &manifest("latest", 2, None)),
            ("apps/kustomization.yaml", &overlay("1.1")),
        ],
        "shop 1.1",
        B_AT,
    );
    let c = commit(
        &repo,
        &[("apps/kustomization.yaml", &overlay("1.2"))],
        "shop 1.2",
        C_AT,
    );
    let objects = cluster(&c, "1.2", None, json!({}));
    let image = format!("{IMAGE}:1.1");
    let report = verify(
        &objects,
        &repo,
        &[
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &b,
            "--image",
            &image,
        ],
    )
    .await;
    assert_eq!(report.verdict, Verdict::Unproven, "{report:#?}");
    let shop = report
        .targets
        .iter()
        .find(|t| t.kind.name() == "Deployment")
        .expect("the Deployment");
    let step = shop
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        step.contains("do not roll back")
            && step.contains("apps/kustomization.yaml sets images")
            && step.contains(&format!("git diff {} {} -- apps", &b[..7], &c[..7])),
        "{step}"
    );
    // Applied as B's own revision, the same files are B's: not live, as before.
    let objects = cluster(&b, "1.0", None, json!({}));
    let report = verify(
        &objects,
        &repo,
        &[
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &b,
            "--image",
            &image,
        ],
    )
    .await;
    assert_eq!(report.verdict, Verdict::NotLive, "{report:#?}");
}
