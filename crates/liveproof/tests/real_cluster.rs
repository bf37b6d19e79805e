//! The stories on the real control plane: etcd, kube-apiserver and kube-controller-manager
//! built from their pinned Go modules (`e2e/build-peers.sh`), the real registry, the real
//! kubectl and Helm, and the kubelet stand-in (crates/testkit/src/e2e/kubelet.rs) where no
//! machine here can run containers. Each test starts its own control plane.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world;

use liveproof_testkit::SimCluster;

use std::time::Duration;

use liveproof_evidence::{Check, Status, Verdict};
use liveproof_testkit::e2e::ControlPlane;
use liveproof_testkit::registry::push_multiarch;
use world::{change_time, deployment, evidence, World};

/// Deployment `web` (3 replicas of acme/web:v1) rolled out, then paused and set to v2: the
/// new template is in the spec and no pod runs it. Returns v2's reference and the change time.
async fn paused_rollout(world: &World, extra_spec: &str) -> (String, String) {
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("web", &v1, extra_spec));
    world.wait_ready("deploy/web", "3").await;
    let since = change_time().await;
    world.kubectl(&["-n", "apps", "rollout", "pause", "deploy/web"]);
    world.kubectl(&[
        "-n",
        "apps",
        "set",
        "image",
        "deploy/web",
        &format!("app={v2}"),
    ]);
    (v2, since)
}

/// Story 1: the real deployment controller rolls a Deployment after `kubectl set image`.
/// Paused, the new template is in the spec and no pod runs it: not_live. Resumed, `verify
/// --wait` ends live, and at that moment every Ready pod runs the new image and no old pod is
/// left serving. A new image that cannot be pulled makes the real controller report
/// ProgressDeadlineExceeded, which ends the wait as a final failure long before its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_1_a_deployment_rolled_by_the_real_controller() {
    let world = World::start().await;
    let (v2, since) = paused_rollout(&world, "progressDeadlineSeconds: 8").await;
    let paused = common::liveproof()
        .args(&["verify", "deploy/web", "-n", "apps"])
        .since(&since)
        .args(&["--image", &v2])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(paused.code, 1, "{}\n{}", paused.stdout, paused.stderr);
    assert_eq!(paused.report().verdict, Verdict::NotLive);
    assert_eq!(evidence(&paused, Check::SpecReadback).status, Status::Pass);
    assert_eq!(evidence(&paused, Check::PodsCurrent).status, Status::Fail);

    world.kubectl(&["-n", "apps", "rollout", "resume", "deploy/web"]);
    let waited = common::liveproof()
        .args(&["verify", "deploy/web", "-n", "apps"])
        .since(&since)
        .args(&[
            "--image",
            &v2,
            "--check-digests",
            "--insecure-registry",
            &world.registry.host,
            "--wait",
            "--timeout",
            "90s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(waited.code, 0, "{}\n{}", waited.stdout, waited.stderr);
    // At the moment it said live: no pod of the old template left, Terminating or not.
    let images = world.pod_images("web");
    assert!(
        images.lines().all(|i| i == v2),
        "live while an old pod is still there:\n{images}"
    );
    assert_eq!(evidence(&waited, Check::PodRestarted).status, Status::Pass);
    assert_eq!(
        evidence(&waited, Check::ImageDigestCurrent).status,
        Status::Pass
    );

    // A tag that was never pushed: the real controller gives up after 8 s.
    let missing = format!("{}/acme/web:v3-never-pushed", world.registry.host);
    let since = change_time().await;
    world.kubectl(&[
        "-n",
        "apps",
        "set",
        "image",
        "deploy/web",
        &format!("app={missing}"),
    ]);
    let failed = common::liveproof()
        .args(&["verify", "deploy/web", "-n", "apps"])
        .since(&since)
        .args(&["--image", &missing, "--wait", "--timeout", "100s"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let rollout = evidence(&failed, Check::RolloutComplete);
    assert_eq!(rollout.status, Status::Fail);
    assert!(
        rollout.observed.contains("ProgressDeadlineExceeded")
            || rollout.detail.contains("ProgressDeadlineExceeded"),
        "{rollout:?}"
    );
    assert!(
        failed.stderr.contains("waiting longer will not fix it"),
        "{}",
        failed.stderr
    );
}

/// The pods of `app=NAME`: `name uid` lines.
fn pod_uids(world: &World, app: &str) -> String {
    world.pods(app, "{.metadata.name} {.metadata.uid}")
}

/// Story 3, seed 001 for real: a multi-platform index (with attestation manifests) deployed as
/// `:latest`; a rebuild pushed to the same tag; the identical manifests re-applied restart
/// nothing. `stale` names exactly the two workloads on `:latest` (not the one on a pinned
/// tag); `stale --restart --wait` has the real controller roll them until verify is live;
/// a second run finds nothing stale and restarts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_3_a_latest_rebuild_is_found_stale_and_restarted() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let host = world.registry.host.clone();
    push_multiarch(&pusher, "acme/web", "latest", "build-1").await;
    push_multiarch(&pusher, "acme/api", "1.0.0", "build-1").await;
    let manifests = [
        deployment("web", &format!("{host}/acme/web:latest"), ""),
        deployment("worker", &format!("{host}/acme/web:latest"), ""),
        deployment("api", &format!("{host}/acme/api:1.0.0"), ""),
    ]
    .join("---\n");
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&manifests);
    for app in ["web", "worker", "api"] {
        world.wait_ready(&format!("deploy/{app}"), "3").await;
    }
    let before = [
        pod_uids(&world, "web"),
        pod_uids(&world, "worker"),
        pod_uids(&world, "api"),
    ];

    // The rebuild, then the redeploy of byte-identical manifests: nothing restarts.
    push_multiarch(&pusher, "acme/web", "latest", "build-2").await;
    world.apply(&manifests);
    // Time for a wrong restart to show is the point: nothing may change in it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = [
        pod_uids(&world, "web"),
        pod_uids(&world, "worker"),
        pod_uids(&world, "api"),
    ];
    assert_eq!(
        before, after,
        "re-applying the same manifests restarted pods"
    );

    let stale = common::liveproof()
        .args(&["stale", "-n", "apps", "--insecure-registry", &host])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(stale.code, 1, "{}\n{}", stale.stdout, stale.stderr);
    let rows = common::stale_rows(&stale.stdout);
    assert_eq!(
        rows.get("web").map(String::as_str),
        Some("stale"),
        "{rows:?}"
    );
    assert_eq!(
        rows.get("worker").map(String::as_str),
        Some("stale"),
        "{rows:?}"
    );
    assert_ne!(
        rows.get("api").map(String::as_str),
        Some("stale"),
        "{rows:?}"
    );

    let restarted = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
            "--wait",
            "--timeout",
            "120s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        restarted.code, 0,
        "{}\n{}",
        restarted.stdout, restarted.stderr
    );
    let doc: serde_json::Value =
        serde_json::from_str(&restarted.stdout).expect("one JSON document");
    let mut patched: Vec<String> = doc["restart"]["patched"]
        .as_array()
        .expect("patched")
        .iter()
        .map(|p| p.as_str().unwrap_or_default().to_string())
        .collect();
    patched.sort();
    assert_eq!(patched, ["apps/deployment/web", "apps/deployment/worker"]);
    assert_eq!(
        pod_uids(&world, "api"),
        before[2],
        "the pinned workload was not bounced"
    );

    let verify = common::liveproof()
        .args(&[
            "verify",
            "deploy/web",
            "deploy/worker",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
        ])
        .since(doc["restart"]["at"].as_str().expect("restart time"))
        .args(&[
            // A separate verify states the change itself (else unproven, by contract).
            "--image",
            &format!("{host}/acme/web:latest"),
            "--check-digests",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(verify.code, 0, "{}\n{}", verify.stdout, verify.stderr);

    let again = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let doc: serde_json::Value = serde_json::from_str(&again.stdout).expect("one JSON document");
    assert_eq!(doc["restart"]["patched"], serde_json::json!([]), "{doc}");
}

/// The real Helm CLI (`helm` is Helm 4, `helm3` Helm 3) against this cluster, with its own
/// cache and config homes; fails the test when it fails.
fn helm(world: &World, which: &str, driver: &str, args: &[&str]) -> String {
    let home = world.plane.dir.path().join(format!("helm-home-{which}"));
    let out = std::process::Command::new(world.plane.peers.path(which))
        .args(args)
        .arg("--kubeconfig")
        .arg(world.kubeconfig())
        .env("HELM_DRIVER", driver)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("helm runs");
    assert!(
        out.status.success(),
        "{which} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn chart() -> String {
    liveproof_testkit::e2e::control_plane::repo_root()
        .join("e2e/charts/web")
        .display()
        .to_string()
}

async fn wait_rolled_out(world: &World, ns: &str, name: &str) {
    world
        .wait_for(
            &[
                "-n",
                ns,
                "get",
                &format!("deploy/{name}"),
                "-o",
                "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}",
            ],
            "2/2/2",
            Duration::from_secs(90),
        )
        .await;
}

/// `liveproof release show` and the real `helm get`/`helm history` say the same of a release.
async fn assert_show_agrees(world: &World, which: &str, driver: &str, ns: &str, name: &str) {
    let show = |section: &'static str| async move {
        let mut args = vec!["release", "show", name, "-n", ns, section];
        if section == "--values" {
            args.push("--show-values");
        }
        let run = common::liveproof().args(&args).on(&world).run().await;
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        run.stdout
    };
    let ours = show("--manifest").await;
    let theirs = helm(world, which, driver, &["get", "manifest", name, "-n", ns]);
    assert_eq!(ours.trim(), theirs.trim(), "{which} {driver}: manifest");

    // As `helm get values` prints them: its heading, the same values, and `"on"` quoted (a
    // bare `on` is a bool to Helm's YAML 1.1 reader). Quoting elsewhere may differ.
    let ours = show("--values").await;
    let theirs = helm(world, which, driver, &["get", "values", name, "-n", ns]);
    for text in [&ours, &theirs] {
        assert!(text.starts_with("USER-SUPPLIED VALUES:\n"), "{text}");
    }
    assert_eq!(
        ours.contains("feature: \"on\"\n"),
        theirs.contains("feature: \"on\"\n"),
        "{ours}\n{theirs}"
    );
    let parse = |text: &str| -> serde_json::Value { serde_norway::from_str(text).expect("YAML") };
    assert_eq!(
        parse(&ours["USER-SUPPLIED VALUES:\n".len()..]),
        parse(&theirs["USER-SUPPLIED VALUES:\n".len()..]),
        "{which} {driver}: values"
    );

    let metadata = show("--metadata").await;
    let theirs: serde_json::Value = serde_json::from_str(&helm(
        world,
        which,
        driver,
        &["get", "metadata", name, "-n", ns, "-o", "json"],
    ))
    .expect("JSON");
    for (ours_key, theirs_key) in [
        ("NAME", "name"),
        ("CHART", "chart"),
        ("VERSION", "version"),
        ("APP_VERSION", "appVersion"),
        ("NAMESPACE", "namespace"),
        ("REVISION", "revision"),
        ("STATUS", "status"),
    ] {
        let want = match &theirs[theirs_key] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert!(
            metadata.lines().any(|l| l == format!("{ours_key}: {want}")),
            "{which} {driver}: {ours_key} is {want} for helm:\n{metadata}\n{theirs}"
        );
    }

    let history = show("--history").await;
    let theirs: serde_json::Value = serde_json::from_str(&helm(
        world,
        which,
        driver,
        &["history", name, "-n", ns, "-o", "json"],
    ))
    .expect("JSON");
    let rows: Vec<&str> = history.lines().skip(1).collect();
    let revisions = theirs.as_array().expect("history rows");
    assert_eq!(
        rows.len(),
        revisions.len(),
        "{which} {driver}: history\n{history}\n{theirs}"
    );
    for (row, rev) in rows.iter().zip(revisions) {
        for field in ["revision", "status", "chart", "description"] {
            let want = match &rev[field] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert!(
                row.contains(&want),
                "{which} {driver}: history {field} {want}: {row}"
            );
        }
    }
}

/// Story 4: Helm for real. Install, then an upgrade with a template change: release_revision,
/// manifest_contains and the workload follow-through are read from Helm's own release Secret,
/// and `--wait` ends live once the real controller has rolled the pods. An upgrade that changes
/// nothing in the template is a new revision with nothing restarted: not_live, the pods named.
/// `helm rollback` is seen (the expectation is gone from the installed manifest). `release
/// show` agrees with `helm get` and `helm history` throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_4_helm_install_upgrade_noop_and_rollback() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    push_multiarch(&pusher, "acme/web", "v1", "build-1").await;
    let image = format!("image={}/acme/web:v1", world.registry.host);
    let chart = chart();
    let h = |args: &[&str]| helm(&world, "helm", "secret", args);
    h(&[
        "install",
        "web",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--set",
        &image,
    ]);
    wait_rolled_out(&world, "apps", "web").await;

    let since = change_time().await;
    h(&[
        "upgrade",
        "web",
        &chart,
        "-n",
        "apps",
        "--set",
        &image,
        "--set",
        "feature=on",
    ]);
    let live = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(&since)
        .args(&["--expect", "name: FEATURE", "--wait", "--timeout", "90s"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    let report = live.report();
    let release = &report.targets[0];
    assert_eq!(release.kind, "Release");
    let revision = release
        .evidence
        .iter()
        .find(|e| e.check == Check::ReleaseRevision)
        .expect("release_revision");
    assert_eq!(revision.status, Status::Pass);
    assert_eq!(
        revision.source(),
        "apps/Secret/sh.helm.release.v1.web.v2 .info"
    );
    let workload = report
        .targets
        .iter()
        .find(|t| t.kind == "Deployment" && t.name == "web")
        .expect("the follow-through");
    assert_eq!(workload.via.as_deref(), Some("release/apps/web"));
    assert_eq!(workload.verdict, Verdict::Live);
    assert_show_agrees(&world, "helm", "secret", "apps", "web").await;

    // The same values again: revision 3, the template unchanged, no pod restarted.
    let since = change_time().await;
    h(&[
        "upgrade",
        "web",
        &chart,
        "-n",
        "apps",
        "--set",
        &image,
        "--set",
        "feature=on",
    ]);
    let noop = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(&since)
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(noop.code, 1, "{}\n{}", noop.stdout, noop.stderr);
    let restarted = evidence(&noop, Check::PodRestarted);
    assert_eq!(restarted.status, Status::Fail, "{restarted:?}");
    assert!(
        (
            restarted.source_ref.kind.as_str(),
            restarted.source_ref.namespace.as_str()
        ) == ("Pod", "apps")
            && restarted.source_ref.name.starts_with("web-"),
        "{restarted:?}"
    );

    // Rolled back to revision 1 (no FEATURE): revision 4, and the expectation is gone.
    let since = change_time().await;
    h(&["rollback", "web", "1", "-n", "apps"]);
    let rolled = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(&since)
        .args(&["--expect", "name: FEATURE"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(rolled.code, 1, "{}\n{}", rolled.stdout, rolled.stderr);
    let manifest = evidence(&rolled, Check::ManifestContains);
    assert_eq!(manifest.status, Status::Fail, "{manifest:?}");
    assert_eq!(
        manifest.source_ref.name, "sh.helm.release.v1.web.v4",
        "{manifest:?}"
    );
    let history = common::liveproof()
        .args(&["release", "show", "web", "-n", "apps", "--history"])
        .on(&world)
        .run()
        .await;
    assert!(
        history.stdout.contains("Rollback to 1"),
        "{}",
        history.stdout
    );
    assert_show_agrees(&world, "helm", "secret", "apps", "web").await;
}

/// Story 4, storage: `release show` agrees with `helm get` and `helm history` for the
/// ConfigMap driver, and for Helm 3 with both drivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_4_release_show_agrees_with_helm_for_every_driver_and_version() {
    let world = World::start().await;
    let image = format!("image={}/acme/web:v1", world.registry.host);
    let chart = chart();
    for (which, driver, ns) in [
        ("helm", "configmap", "h4-configmap"),
        ("helm3", "secret", "h3-secret"),
        ("helm3", "configmap", "h3-configmap"),
    ] {
        helm(
            &world,
            which,
            driver,
            &[
                "install",
                "web",
                &chart,
                "-n",
                ns,
                "--create-namespace",
                "--set",
                &image,
            ],
        );
        helm(
            &world,
            which,
            driver,
            &[
                "upgrade",
                "web",
                &chart,
                "-n",
                ns,
                "--set",
                &image,
                "--set",
                "feature=on",
            ],
        );
        assert_show_agrees(&world, which, driver, ns, "web").await;
    }
}

fn statefulset(name: &str, image: &str, strategy: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
  namespace: apps
spec:
  replicas: 3
  serviceName: {name}
  updateStrategy: {strategy}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: {image}
"
    )
}

/// Story 2: StatefulSets with a partition and with OnDelete, and a DaemonSet on both
/// platforms, judged on the real controllers' ControllerRevisions and revision hashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_2_statefulsets_and_a_daemonset_on_the_real_controllers() {
    let world = World::start().await;
    let (v1, v2) = world.two_builds("acme/db").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let daemonset = format!(
        "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: apps
spec:
  selector:
    matchLabels: {{app: agent}}
  template:
    metadata:
      labels: {{app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: {v1}
"
    );
    world.apply(
        &[
            statefulset(
                "db",
                &v1,
                "{type: RollingUpdate, rollingUpdate: {partition: 2}}",
            ),
            statefulset("cache", &v1, "{type: OnDelete}"),
            daemonset,
        ]
        .join("---\n"),
    );
    for (kind, name, field, want) in [
        ("sts", "db", "readyReplicas", "3"),
        ("sts", "cache", "readyReplicas", "3"),
        ("ds", "agent", "numberReady", "2"),
    ] {
        world
            .wait_for(
                &[
                    "-n",
                    "apps",
                    "get",
                    &format!("{kind}/{name}"),
                    "-o",
                    &format!("jsonpath={{.status.{field}}}"),
                ],
                want,
                Duration::from_secs(90),
            )
            .await;
    }

    let since = change_time().await;
    for target in ["sts/db", "sts/cache", "ds/agent"] {
        world.kubectl(&["-n", "apps", "set", "image", target, &format!("app={v2}")]);
    }
    // The partition: only db-2 moves; db-0 and db-1 stay on the old revision by design.
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "sts/db",
                "-o",
                "jsonpath={.status.updatedReplicas}",
            ],
            "1",
            Duration::from_secs(60),
        )
        .await;
    let partitioned = common::liveproof()
        .args(&["verify", "sts/db", "-n", "apps"])
        .since(&since)
        .args(&["--image", &v2])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        partitioned.code, 1,
        "{}\n{}",
        partitioned.stdout, partitioned.stderr
    );
    let rollout = evidence(&partitioned, Check::RolloutComplete);
    assert!(
        rollout.detail.contains("rollingUpdate.partition 2"),
        "{rollout:?}"
    );
    let current = evidence(&partitioned, Check::PodsCurrent);
    assert_eq!(current.status, Status::Fail, "{current:?}");
    assert!(
        current.observed.contains("db-0") || current.detail.contains("db-0"),
        "{current:?}"
    );

    // OnDelete: nothing moves until the pods are deleted.
    let on_delete = common::liveproof()
        .args(&["verify", "sts/cache", "-n", "apps"])
        .since(&since)
        .args(&["--image", &v2])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        on_delete.code, 1,
        "{}\n{}",
        on_delete.stdout, on_delete.stderr
    );
    assert!(
        evidence(&on_delete, Check::RolloutComplete)
            .detail
            .contains("updateStrategy OnDelete"),
        "{}",
        on_delete.stdout
    );

    // Lowering the partition and deleting the OnDelete pods: the controllers finish, live.
    world.kubectl(&[
        "-n",
        "apps",
        "patch",
        "sts/db",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}"#,
    ]);
    world.kubectl(&[
        "-n",
        "apps",
        "delete",
        "pods",
        "-l",
        "app=cache",
        "--wait=false",
    ]);
    let live = common::liveproof()
        .args(&["verify", "sts/db", "sts/cache", "ds/agent", "-n", "apps"])
        .since(&since)
        .args(&[
            "--image",
            &v2,
            "--insecure-registry",
            &world.registry.host,
            "--check-digests",
            "--wait",
            "--timeout",
            "120s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    // The DaemonSet ran on both platforms, and each pod's digest is current for its node.
    let nodes = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=agent",
        "-o",
        "jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}",
    ]);
    let mut nodes: Vec<&str> = nodes.lines().collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["node-amd64", "node-arm64"]);
    let report = live.report();
    let agent = report
        .targets
        .iter()
        .find(|t| t.name == "agent")
        .expect("the DaemonSet's report");
    let digests = agent
        .evidence
        .iter()
        .find(|e| e.check == Check::ImageDigestCurrent)
        .expect("image_digest_current");
    assert_eq!(digests.status, Status::Pass, "{digests:?}");
}

/// A kubeconfig for the `liveproof/liveproof` ServiceAccount of deploy/rbac-readonly.yaml,
/// with a token the real API server issued for it (TokenRequest).
fn service_account_kubeconfig(world: &World) -> std::path::PathBuf {
    let token = world.kubectl(&[
        "-n",
        "liveproof",
        "create",
        "token",
        "liveproof",
        "--duration=1h",
    ]);
    let path = world.plane.dir.path().join("liveproof-sa.kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: {}
    insecure-skip-tls-verify: true
users:
- name: liveproof
  user:
    token: {}
contexts:
- name: e2e
  context:
    cluster: e2e
    user: liveproof
    namespace: apps
current-context: e2e
",
            world.plane.server,
            token.trim()
        ),
    )
    .expect("write kubeconfig");
    path
}

/// Whether `text` says a read was refused: the server's words for it, or 403 as a number of its
/// own. A 403 inside a digest, a pod name, a port or a timestamp is not a refusal (CI once
/// failed on one), so the digits count only between characters that cannot continue a token.
fn mentions_refusal(text: &str) -> Option<&'static str> {
    for word in ["forbidden", "Forbidden", "denied", "was refused"] {
        if text.contains(word) {
            return Some(word);
        }
    }
    let continues =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || ".:_-".contains(c));
    text.match_indices("403")
        .any(|(at, _)| {
            !continues(text[..at].chars().next_back()) && !continues(text[at + 3..].chars().next())
        })
        .then_some("403")
}

fn assert_not_refused(run: &common::Run, what: &str) {
    for text in [&run.stdout, &run.stderr] {
        if let Some(word) = mentions_refusal(text) {
            panic!(
                "{what} was refused something ({word}):\n{}\n{}",
                run.stdout, run.stderr
            );
        }
    }
}

#[test]
fn a_refusal_is_told_from_digits_that_happen_to_be_403() {
    assert_eq!(
        mentions_refusal("pods is forbidden: User cannot list"),
        Some("forbidden")
    );
    assert_eq!(
        mentions_refusal("HTTP 403 from the API server"),
        Some("403")
    );
    assert_eq!(mentions_refusal("got 403, giving up"), Some("403"));
    for innocent in [
        "sha256:cfb05b403df0…",
        "web-5dd9d47db5-x403a",
        "127.0.0.1:40312",
        "2026-12-04T07:29:55.403623Z",
        "/tmp/.tmp403abc/kubeconfig",
    ] {
        assert_eq!(mentions_refusal(innocent), None, "{innocent}");
    }
}

/// Story 5: deploy/rbac-readonly.yaml on the real API server with RBAC, and a ServiceAccount
/// token: verify, stale, snapshot and release show are refused nothing; a restart is refused
/// by the server until deploy/rbac-restart.yaml is applied, which allows exactly that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_5_the_read_only_role_is_enough_and_the_restart_role_is_exactly_the_restart() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let host = world.registry.host.clone();
    push_multiarch(&pusher, "acme/web", "latest", "build-1").await;
    let image = format!("image={host}/acme/web:latest");
    helm(
        &world,
        "helm",
        "secret",
        &[
            "install",
            "web",
            &chart(),
            "-n",
            "apps",
            "--create-namespace",
            "--set",
            &image,
        ],
    );
    wait_rolled_out(&world, "apps", "web").await;
    push_multiarch(&pusher, "acme/web", "latest", "build-2").await;
    let root = liveproof_testkit::e2e::control_plane::repo_root();
    world.kubectl(&[
        "apply",
        "-f",
        &root.join("deploy/rbac-readonly.yaml").display().to_string(),
    ]);
    let sa = service_account_kubeconfig(&world);
    let since = "2020-01-01T00:00:00Z";

    let verify = common::liveproof()
        .args(&["verify", "release/web", "deploy/web", "-n", "apps"])
        .since(since)
        .args(&["--insecure-registry", &host, "--check-digests", "--logs"])
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    assert_ne!(verify.code, 2, "{}\n{}", verify.stdout, verify.stderr);
    assert_not_refused(&verify, "verify");
    let stale = common::liveproof()
        .args(&["stale", "-n", "apps", "--insecure-registry", &host])
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    assert_eq!(
        stale.code, 1,
        "web runs the old :latest: {}\n{}",
        stale.stdout, stale.stderr
    );
    assert_not_refused(&stale, "stale");
    let dir = world.plane.dir.path().join("snapshots");
    let snapshot = common::liveproof()
        .args(&[
            "snapshot",
            "--dir",
            dir.to_str().expect("utf-8"),
            "--commit",
            "0123456789abcdef",
            "-n",
            "apps",
        ])
        .kubeconfig(&sa)
        .run()
        .await;
    assert_eq!(snapshot.code, 0, "{}\n{}", snapshot.stdout, snapshot.stderr);
    assert_not_refused(&snapshot, "snapshot");
    for section in ["--metadata", "--manifest", "--values", "--history"] {
        let show = common::liveproof()
            .args(&["release", "show", "web", "-n", "apps", section])
            .kubeconfig(&sa)
            .run()
            .await;
        assert_eq!(show.code, 0, "{section}: {}\n{}", show.stdout, show.stderr);
        assert_not_refused(&show, "release show");
    }

    // A write without the restart role: the server refuses it, and liveproof says so.
    let refused = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
        ])
        .kubeconfig(&sa)
        .run()
        .await;
    assert_ne!(refused.code, 0, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("forbidden") || refused.stderr.contains("forbidden"),
        "{}\n{}",
        refused.stdout,
        refused.stderr
    );
    world.kubectl(&[
        "apply",
        "-f",
        &root.join("deploy/rbac-restart.yaml").display().to_string(),
    ]);
    let restarted = common::liveproof()
        .args(&[
            "stale",
            "-n",
            "apps",
            "--insecure-registry",
            &host,
            "--restart",
        ])
        .json()
        .kubeconfig(&sa)
        .run()
        .await;
    assert_eq!(
        restarted.code, 0,
        "{}\n{}",
        restarted.stdout, restarted.stderr
    );
    // Exactly the restart: the role allows patching workloads and nothing else it adds.
    let as_sa = "--as=system:serviceaccount:liveproof:liveproof";
    let can = |verb_resource: &[&str]| {
        let mut args = vec!["auth", "can-i"];
        args.extend_from_slice(verb_resource);
        args.extend([as_sa, "-n", "apps"]);
        liveproof_testkit::kubectl()
            .kubeconfig(world.kubeconfig())
            .args(&args)
            .run()
    };
    assert_eq!(can(&["patch", "deployments"]).await.stdout.trim(), "yes");
    for denied in [
        ["delete", "pods"],
        ["update", "deployments"],
        ["create", "deployments"],
        ["patch", "secrets"],
    ] {
        assert_eq!(can(&denied).await.stdout.trim(), "no", "{denied:?}");
    }
}

/// Story 6, the pipeline on the real controllers: snapshot; an apply that breaks one workload
/// (an image that cannot be pulled) and fixes another; `verify --snapshot` in a separate
/// process says which; `rollback` puts back exactly the broken one, and it is live again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_6_snapshot_apply_verify_rollback() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let host = world.registry.host.clone();
    push_multiarch(&pusher, "acme/web", "v1", "build-1").await;
    push_multiarch(&pusher, "acme/web", "v2", "build-2").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let v1 = format!("{host}/acme/web:v1");
    world.apply(&[deployment("front", &v1, ""), deployment("back", &v1, "")].join("---\n"));
    for app in ["front", "back"] {
        world.wait_ready(&format!("deploy/{app}"), "3").await;
    }
    let dir = world.plane.dir.path().join("snapshots");
    let dir = dir.to_str().expect("utf-8");
    let commit = "89abcdef01234567";
    let snap = common::liveproof()
        .args(&["snapshot", "--dir", dir, "--commit", commit, "-n", "apps"])
        .on(&world)
        .run()
        .await;
    assert_eq!(snap.code, 0, "{}\n{}", snap.stdout, snap.stderr);
    // No pause: a pod that starts in the snapshot's own second is ordered by its template
    // (it differs from the snapshot's), not by waiting for the next second.

    world.apply(
        &[
            deployment("front", &format!("{host}/acme/web:v2"), ""),
            deployment("back", &format!("{host}/acme/web:v2-never-pushed"), ""),
        ]
        .join("---\n"),
    );
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "deploy/front",
                "-o",
                "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}",
            ],
            "3/3",
            Duration::from_secs(60),
        )
        .await;
    // The old pods end their 2 s grace period (until then they serve, and it is not live).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while pod_uids(&world, "front").lines().count() != 3 {
        assert!(std::time::Instant::now() < deadline, "{}", world.state());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let verify = common::liveproof()
        .args(&[
            "verify",
            "--snapshot",
            dir,
            "--commit",
            commit,
            "-n",
            "apps",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(verify.code, 1, "{}\n{}", verify.stdout, verify.stderr);
    let report = verify.report();
    let verdict_of = |name: &str| {
        report
            .targets
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.verdict)
            .unwrap_or_else(|| panic!("{name} not in {}", verify.stdout))
    };
    assert_eq!(verdict_of("front"), Verdict::Live, "{}", verify.stdout);
    assert_eq!(verdict_of("back"), Verdict::NotLive, "{}", verify.stdout);

    let front_pods = pod_uids(&world, "front");
    let rollback = common::liveproof()
        .args(&[
            "rollback",
            "--snapshot",
            dir,
            "--commit",
            commit,
            "-n",
            "apps",
            "--timeout",
            "90s",
        ])
        .on(&world)
        .run()
        .await;
    assert_eq!(rollback.code, 0, "{}\n{}", rollback.stdout, rollback.stderr);
    assert_eq!(
        pod_uids(&world, "front"),
        front_pods,
        "front was live: never touched"
    );
    let images = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "deploy/back",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    assert_eq!(images.trim(), v1, "back is back on the snapshot's template");
}

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

/// Story 7, watches on the real API server: `verify --wait` outlives the server ending its
/// watches (they ask for `timeoutSeconds` 60) and the `410 Gone` a re-opened watch gets once
/// etcd has compacted its resourceVersion away, and still ends live when the rollout does.
/// The API server runs without its watch cache (watches go to etcd, which sends no
/// bookmarks) and compacts every 5 s; writes elsewhere move etcd's revision on meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_7_waiting_outlives_ended_and_expired_watches() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use liveproof_testkit::e2e::kube::api::{Api, PostParams};

    let world = World::start_with(&["--watch-cache=false", "--etcd-compaction-interval=5s"]).await;
    let (v2, since) = paused_rollout(&world, "").await;

    let client = world.plane.client().await.expect("admin client");
    let args = [
        "verify",
        "deploy/web",
        "-n",
        "apps",
        "--since",
        &since,
        "--image",
        &v2,
        "--wait",
        "--timeout",
        "240s",
        "-vv",
        "-o",
        "json",
    ];
    let verify = common::liveproof().args(&args).on(&world).run();
    let meanwhile = async {
        // Past the 60 s the server gives each watch, with etcd's revision moving on and
        // compacted every 5 s; then the rollout goes on.
        let churn: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        for n in 0..80 {
            let map: ConfigMap = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("churn-{n}")}, "data": {"n": n.to_string()}
            }))
            .expect("a ConfigMap");
            churn
                .create(&PostParams::default(), &map)
                .await
                .expect("churn write");
            // The pace is the point: writes spread over the wait, not one burst.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        world.kubectl(&["-n", "apps", "rollout", "resume", "deploy/web"]);
    };
    let (verify, ()) = tokio::join!(verify, meanwhile);
    assert_eq!(verify.code, 0, "{}\n{}", verify.stdout, verify.stderr);
    assert_eq!(verify.report().verdict, Verdict::Live);
    // Both happened, and were survived: an ended watch re-opened, an expired one listed again.
    assert!(
        verify.stderr.contains("expired (410); listing again"),
        "no watch expired:\n{}",
        verify.stderr
    );
    // Live means the new pods, not a stale view: no pod of the old template is left.
    let images = world.pod_images("web");
    assert!(images.lines().all(|i| i == v2), "{images}");
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

/// The README's pipeline idiom, run as the README gives it: the change time recorded before
/// the apply, to the millisecond.
fn pipeline_change_time() -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", "T=$(date -u +%FT%T.%3NZ); echo \"$T\""])
        .output()
        .expect("sh runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A CRD for `kind` (`plural`.`group`, version v1) that keeps whatever it is given and has a
/// status subresource: Flux's kinds, for objects whose status this test writes as the
/// controller would (the real Flux controllers are not run here).
fn crd(group: &str, kind: &str, plural: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  names: {{kind: {kind}, plural: {plural}, singular: {singular}, listKind: {kind}List}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
",
        singular = kind.to_ascii_lowercase()
    )
}

/// What the Flux controllers would have written once they applied `revision`: the
/// GitRepository's artifact, the Kustomization's applied revision, Ready and inventory.
fn flux_synced_to(world: &World, revision: &str) {
    let now = jiff::Timestamp::now();
    let now = jiff::Timestamp::from_second(now.as_second()).expect("a time");
    let rev = format!("main@sha1:{revision}");
    let status = |kind: &str, name: &str, status: serde_json::Value| {
        world.kubectl(&[
            "-n",
            "flux-system",
            "patch",
            kind,
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &serde_json::json!({ "status": status }).to_string(),
        ]);
    };
    status(
        "gitrepository",
        "apps",
        serde_json::json!({"artifact": {"revision": rev}}),
    );
    status(
        "kustomization",
        "apps",
        serde_json::json!({
            "observedGeneration": 1,
            "lastAppliedRevision": rev,
            "lastAttemptedRevision": rev,
            "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                "message": format!("Applied revision: {rev}"),
                "lastTransitionTime": now.to_string()}],
            "inventory": {"entries": [{"id": "apps_web_apps_Deployment", "v": "v1"}]}
        }),
    );
}

/// Story 9 (issue 20): the verdicts a pipeline acts on, on the real controllers.
/// - The README's idiom: the change time recorded before `kubectl set image`, then `verify
///   --wait` ends live (exit 0) — never `pod_restarted started 14:55:51Z, expected after
///   14:55:51Z`. The tie made certain: with the change time in the very second the first new
///   pod started (whole, and to the millisecond), it is live and says why; a second later it
///   is not (that pod started in an earlier second).
/// - `-f k8s/ --commit` when the apply lands in the commit's second, in a repository where
///   main moved on after the change.
/// - snapshot → apply → `verify --snapshot` with no pause between, and `rollback --dry-run`
///   proposes to revert nothing.
/// - A Flux Kustomization at a revision that descends from the change passes; at an older
///   one fails; at one the repository does not hold is unproven.
/// - Names that do not exist: exit 2 with a did-you-mean (and a JSON error document), a kind
///   the cluster does not serve says so, and `--wait` waits for a first deploy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_9_verdicts_a_pipeline_can_act_on() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    for (tag, build) in [
        ("v1", "build-1"),
        ("v2", "build-2"),
        ("v3", "build-3"),
        ("v4", "build-4"),
    ] {
        push_multiarch(&pusher, "acme/web", tag, build).await;
    }
    let image = |tag: &str| format!("{}/acme/web:{tag}", world.registry.host);
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("web", &image("v1"), ""));
    world.wait_ready("deploy/web", "3").await;
    let before_everything = jiff::Timestamp::now();

    // 1. The idiom, exactly.
    let t = pipeline_change_time();
    world.set_image("web", &image("v2"));
    let run = common::liveproof()
        .args(&[
            "verify",
            "deploy/web",
            "-n",
            "apps",
            "--image",
            &image("v2"),
        ])
        .since(&t)
        .args(&["--wait", "--timeout", "90s"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(
        run.code,
        0,
        "--since {t}\n{}\n{}\n{}",
        run.stdout,
        run.stderr,
        world.state()
    );

    // The tie made certain: the change time in the second the first new pod started.
    let starts = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={range .items[*]}{.status.containerStatuses[0].state.running.startedAt}{\"\\n\"}{end}",
    ]);
    let first: jiff::Timestamp = starts
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .min()
        .unwrap_or_else(|| panic!("no started pod: {starts}"));
    let in_its_second = first + jiff::SignedDuration::from_millis(640);
    for since in [first.to_string(), in_its_second.to_string()] {
        let run = common::liveproof()
            .args(&[
                "verify",
                "deploy/web",
                "-n",
                "apps",
                "--image",
                &image("v2"),
            ])
            .since(&since)
            .json()
            .on(&world)
            .run()
            .await;
        assert_eq!(
            run.code, 0,
            "--since {since}\n{}\n{}",
            run.stdout, run.stderr
        );
        let restarted = evidence(&run, Check::PodRestarted);
        assert_eq!(restarted.status, Status::Pass, "{restarted:?}");
        assert!(restarted.detail.contains("own second"), "{restarted:?}");
    }
    let a_second_later = (first + jiff::SignedDuration::from_secs(1)).to_string();
    let run = common::liveproof()
        .args(&[
            "verify",
            "deploy/web",
            "-n",
            "apps",
            "--image",
            &image("v2"),
        ])
        .since(&a_second_later)
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(evidence(&run, Check::PodRestarted).status, Status::Fail);

    // 2. -f k8s/ --commit: committed at this second, applied at once, main moved on after.
    let repo = tempfile::tempdir().expect("tempdir");
    let r = repo.path();
    let base_date = (before_everything - jiff::SignedDuration::from_secs(60))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    liveproof_testkit::git::git_at(r, &["init", "-q", "-b", "main"], &base_date);
    std::fs::create_dir_all(r.join("k8s")).expect("mkdir");
    std::fs::write(r.join("k8s/web.yaml"), deployment("web", &image("v2"), "")).expect("write");
    liveproof_testkit::git::git_at(r, &["add", "-A"], &base_date);
    liveproof_testkit::git::git_at(r, &["commit", "-q", "-m", "web v2"], &base_date);
    let base = liveproof_testkit::git::git_at(r, &["rev-parse", "HEAD"], &base_date);
    let now = jiff::Timestamp::now();
    let change_date = jiff::Timestamp::from_second(now.as_second())
        .expect("a time")
        .to_string();
    std::fs::write(r.join("k8s/web.yaml"), deployment("web", &image("v3"), "")).expect("write");
    liveproof_testkit::git::git_at(r, &["commit", "-q", "-am", "web v3"], &change_date);
    let change = liveproof_testkit::git::git_at(r, &["rev-parse", "HEAD"], &change_date);
    world.kubectl(&[
        "apply",
        "-f",
        r.join("k8s/web.yaml").to_str().expect("utf-8"),
    ]);
    std::fs::write(r.join("README"), "someone else's change\n").expect("write");
    liveproof_testkit::git::git_at(r, &["add", "README"], &change_date);
    liveproof_testkit::git::git_at(r, &["commit", "-q", "-m", "docs"], &change_date);
    let later = liveproof_testkit::git::git_at(r, &["rev-parse", "HEAD"], &change_date);
    let repo_path = r.to_str().expect("utf-8");
    let manifests = r.join("k8s");
    let manifests = manifests.to_str().expect("utf-8");
    let run = common::liveproof()
        .args(&[
            "verify",
            "-f",
            manifests,
            "--repo",
            repo_path,
            "--commit",
            "HEAD~1",
            "--wait",
            "--timeout",
            "90s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    world.expect_exit(&run, 0);
    assert_eq!(run.report().change.commit.as_deref(), Some(change.as_str()));

    // 3. snapshot → apply → verify --snapshot, no pause between; rollback proposes nothing.
    let dir = world.plane.dir.path().join("story-9-snapshots");
    let dir = dir.to_str().expect("utf-8");
    let snap = common::liveproof()
        .args(&["snapshot", "--dir", dir, "--commit", &later, "-n", "apps"])
        .on(&world)
        .run()
        .await;
    assert_eq!(snap.code, 0, "{}\n{}", snap.stdout, snap.stderr);
    world.set_image("web", &image("v4"));
    let run = common::liveproof()
        .args(&[
            "verify",
            "--snapshot",
            dir,
            "--commit",
            &later,
            "-n",
            "apps",
            "--wait",
            "--timeout",
            "90s",
        ])
        .json()
        .on(&world)
        .run()
        .await;
    world.expect_exit(&run, 0);
    let rollback = common::liveproof()
        .args(&[
            "rollback",
            "--snapshot",
            dir,
            "--commit",
            &later,
            "-n",
            "apps",
            "--dry-run",
            "--timeout",
            "60s",
        ])
        .on(&world)
        .run()
        .await;
    assert_eq!(rollback.code, 0, "{}\n{}", rollback.stdout, rollback.stderr);
    assert!(
        !rollback.stdout.contains("would restore") && !rollback.stdout.contains("restor"),
        "a healthy deploy is not proposed for rollback:\n{}",
        rollback.stdout
    );

    // 4. A GitOps revision that moved past the change.
    world.apply(&crd(
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        "kustomizations",
    ));
    world.apply(&crd(
        "source.toolkit.fluxcd.io",
        "GitRepository",
        "gitrepositories",
    ));
    for name in [
        "kustomizations.kustomize.toolkit.fluxcd.io",
        "gitrepositories.source.toolkit.fluxcd.io",
    ] {
        world.kubectl(&[
            "wait",
            "--for=condition=Established",
            &format!("crd/{name}"),
            "--timeout=30s",
        ]);
    }
    world.kubectl(&["create", "namespace", "flux-system"]);
    world.apply(
        "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: apps, namespace: flux-system}
spec: {url: https://git.example.invalid/acme/apps, ref: {branch: main}, interval: 1m}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {sourceRef: {kind: GitRepository, name: apps}, path: ./k8s, interval: 1m, prune: true}
",
    );
    let ks = |commit: &str| {
        vec![
            "verify".to_string(),
            "kustomization/apps".into(),
            "-n".into(),
            "flux-system".into(),
            "--repo".into(),
            repo_path.into(),
            "--commit".into(),
            commit.into(),
            "--since".into(),
            before_everything.to_string(),
            "-o".into(),
            "json".into(),
        ]
    };
    let run_ks = |args: Vec<String>| {
        let world = &world;
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            common::liveproof().args(&refs).on(&world).run().await
        }
    };
    flux_synced_to(&world, &later);
    let run = run_ks(ks(&change[..7])).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let revision = evidence(&run, Check::GitopsRevision);
    assert!(revision.detail.contains("descendant"), "{revision:?}");
    flux_synced_to(&world, &base);
    let run = run_ks(ks(&change)).await;
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(evidence(&run, Check::GitopsRevision).status, Status::Fail);
    flux_synced_to(&world, "0123456789abcdef0123456789abcdef01234567");
    let run = run_ks(ks(&change)).await;
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        evidence(&run, Check::GitopsRevision).status,
        Status::Unknown
    );

    // 5. Names that do not exist.
    let run = common::liveproof()
        .args(&["verify", "deploy/wbe", "-n", "apps"])
        .since("10m")
        .args(&["--image", &image("v4")])
        .on(&world)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("deployment apps/wbe not found")
            && run.stderr.contains("did you mean `web`"),
        "{}",
        run.stderr
    );
    let run = common::liveproof()
        .args(&["verify", "ks/aps", "-n", "flux-system"])
        .since("10m")
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "liveproof/v1");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    let hint = doc["error"]["hint"].as_str().unwrap_or_default();
    assert!(
        message.contains("not found") && hint.contains("`apps`"),
        "{doc}"
    );
    let run = common::liveproof()
        .args(&["verify", "app/inventory", "-n", "apps"])
        .since("10m")
        .on(&world)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("does not serve applications.argoproj.io"),
        "{}",
        run.stderr
    );
    // A first deploy is waited for: created two seconds into the wait, it ends live.
    let since = pipeline_change_time();
    let v1 = image("v1");
    let fresh_args = [
        "verify",
        "deploy/fresh",
        "-n",
        "apps",
        "--image",
        &v1,
        "--since",
        &since,
        "--wait",
        "--timeout",
        "90s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&fresh_args).on(&world).run();
    let create = async {
        // The real API server shows no client when its watches are open: give verify time to.
        tokio::time::sleep(Duration::from_secs(2)).await;
        world.apply(&deployment("fresh", &v1, ""));
    };
    let (run, ()) = tokio::join!(waiting, create);
    world.expect_exit(&run, 0);
    // One that never comes is still not found when the wait runs out: exit 2, not 1.
    let run = common::liveproof()
        .args(&[
            "verify",
            "deploy/never",
            "-n",
            "apps",
            "--image",
            &image("v1"),
        ])
        .since("1m")
        .args(&["--wait", "--timeout", "5s"])
        .on(&world)
        .run()
        .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("not found"), "{}", run.stderr);
}

/// Story 10: the real endpointslice controller (in kube-controller-manager) writes the slices
/// `traffic_current` reads. A pod of the build before the Deployment, labelled
/// `tier=frontend` alone, is not the Deployment's (its selector is `app=web`), but the Service
/// `web` selects `tier=frontend` and routes to it: not live, though every pod the Deployment
/// selects is current. Once the pod is gone, `verify --wait` sees the slice change and ends
/// live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_10_a_service_routing_to_a_pod_by_a_leftover_label() {
    let world = World::start().await;
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    let since = change_time().await;
    world.apply(&format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: web-legacy
  namespace: apps
  labels: {{tier: frontend}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {v1}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: apps
spec:
  selector: {{tier: frontend}}
  ports:
  - {{name: http, port: 80, targetPort: 8080}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web, tier: frontend}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {v2}
"
    ));
    world.wait_ready("deploy/web", "2").await;
    // The controller's slice: both Deployment pods and the legacy pod, ready.
    let ready_endpoints = || {
        let names = world.kubectl(&[
            "-n",
            "apps",
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "jsonpath={range .items[*].endpoints[?(@.conditions.ready==true)]}{.targetRef.name}{\"\\n\"}{end}",
        ]);
        let mut names: Vec<String> = names.lines().map(str::to_owned).collect();
        names.sort();
        names
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while ready_endpoints().len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the endpointslice controller never listed 3 ready endpoints: {:?}\n{}",
            ready_endpoints(),
            world.state()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        ready_endpoints().contains(&"web-legacy".to_string()),
        "{:?}",
        ready_endpoints()
    );

    let verify = |extra: &'static [&'static str]| {
        common::liveproof()
            .args(&["verify", "deploy/web", "-n", "apps"])
            .since(&since)
            .args(&["--image", &v2])
            .args(extra)
            .json()
            .on(&world)
            .run()
    };
    let routed_old = verify(&[]).await;
    world.expect_exit(&routed_old, 1);
    assert_eq!(
        evidence(&routed_old, Check::PodsCurrent).status,
        Status::Pass,
        "every pod the Deployment selects is current"
    );
    let traffic = evidence(&routed_old, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Fail, "{}", routed_old.stdout);
    assert!(
        traffic
            .observed
            .contains("Service web → pod web-legacy (not a pod of apps/Deployment/web"),
        "{}",
        traffic.observed
    );

    // The legacy pod goes; the controller takes it out of the slice, and the wait sees it.
    let waited = verify(&["--wait", "--timeout", "60s"]);
    let delete = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        world.kubectl(&["-n", "apps", "delete", "pod", "web-legacy", "--wait=false"]);
    };
    let (waited, ()) = tokio::join!(waited, delete);
    world.expect_exit(&waited, 0);
    let traffic = evidence(&waited, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Pass, "{}", waited.stdout);
    assert_eq!(
        traffic.observed,
        "Service web: 2 ready endpoint(s), all current"
    );
}

/// When it went live, on the real controllers: a real git commit's committer time is the change,
/// the Deployment controller rolls the new template out and the kubelet stand-in marks each
/// pod Ready. `live_since` is the last serving pod's Ready transition as kubectl reads it, the
/// lead time is the seconds from the commit to it, `--record` appends the same, and a target
/// that is not live carries neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_11_live_since_and_the_lead_time_from_a_real_commit() {
    let world = World::start().await;
    let (v1, v2) = world.two_builds("acme/web").await;
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("web", &v1, ""));
    world.wait_ready("deploy/web", "3").await;

    // The change: a commit made now (git records whole seconds), then applied.
    let repo = liveproof_testkit::git::Repo::new();
    let committed = change_time().await;
    liveproof_testkit::git::git_at(
        &repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "web v2"],
        &committed,
    );
    let sha = repo.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%cI"])
            .parse::<jiff::Timestamp>()
            .expect("a committer time")
            .to_string(),
        committed
    );
    world.set_image("web", &v2);
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "deploy/web",
                "-o",
                "jsonpath={.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}",
            ],
            "3/3/3",
            Duration::from_secs(90),
        )
        .await;
    let repo_dir = repo.path().display().to_string();
    let record = tempfile::tempdir().expect("tempdir");
    let record_file = record.path().join("deployments.jsonl");
    let verify = |image: &str, timeout: &str| {
        common::liveproof()
            .args(&["verify", "deploy/web", "-n", "apps", "--image", image])
            .args(&["--commit", &sha, "--repo", &repo_dir])
            .arg("--record")
            .arg(&record_file)
            .args(&["--wait", "--timeout", timeout])
            .json()
            .on(&world)
    };
    let live = verify(&v2, "60s").run().await;
    world.expect_exit(&live, 0);
    let report = live.report();

    // What kubectl reads: each v2 pod's Ready transition (none is Terminating: it said live).
    let ready = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={range .items[*]}{.spec.containers[0].image} {.metadata.deletionTimestamp} {.status.conditions[?(@.type==\"Ready\")].lastTransitionTime}{\"\\n\"}{end}",
    ]);
    let last_ready: jiff::Timestamp = ready
        .lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            match fields.as_slice() {
                [image, at] if *image == v2 => at.parse().ok(),
                _ => None,
            }
        })
        .max()
        .unwrap_or_else(|| panic!("no Ready v2 pod:\n{ready}"));
    let target = &report.targets[0];
    assert_eq!(
        target.live_since.as_deref(),
        Some(last_ready.to_string().as_str()),
        "{ready}\n{:#?}",
        target.timeline
    );
    let committed: jiff::Timestamp = committed.parse().expect("a time");
    let lead = last_ready.duration_since(committed).as_secs();
    assert!(lead > 0, "{lead}");
    assert_eq!(report.lead_time_seconds, Some(lead));
    assert_eq!(
        report.change.committed_at.as_deref(),
        Some(committed.to_string().as_str())
    );
    // --wait saw it too, on its own clock, no earlier than the cluster dates it.
    let seen = target
        .timeline
        .iter()
        .find(|e| e.event == liveproof_evidence::Moment::ObservedLive)
        .and_then(|e| e.time())
        .unwrap_or_else(|| panic!("no observed_live: {:#?}", target.timeline));
    assert!(
        seen.as_second() >= last_ready.as_second(),
        "{seen} < {last_ready}"
    );

    // An image the pods do not run: not live, undated, no lead time.
    let stale = verify(&v1, "3s").run().await;
    world.expect_exit(&stale, 1);
    let stale = stale.report();
    assert_eq!(stale.targets[0].live_since, None);
    assert_eq!(stale.lead_time_seconds, None);

    // One record line per run, the lead time in the live one.
    let lines: Vec<liveproof_evidence::record::DeploymentRecord> =
        std::fs::read_to_string(&record_file)
            .expect("the record")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a record line"))
            .collect();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(lines[0].lead_time_seconds, Some(lead));
    assert_eq!(lines[0].live_since, target.live_since);
    assert_eq!(
        (lines[1].verdict, lines[1].lead_time_seconds),
        (Verdict::NotLive, None)
    );
}

/// Waits until Deployment apps/`name` runs `image` alone: every replica updated and Ready, and
/// no pod of another template left (Terminating ones included).
async fn wait_runs_only(world: &World, name: &str, image: &str) {
    world
        .wait_field(
            &format!("deploy/{name}"),
            "{.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}",
            "3/3/3",
            Duration::from_secs(90),
        )
        .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let images = world.pod_images(name);
        if images.lines().count() == 3 && images.lines().all(|i| i == image) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{images}\n{}",
            world.state()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Issue 33 on the real control plane, no GitOps: `kubectl set image` to 1.1, rolled out,
/// then to 1.2, rolled out. The real deployment controller made a ReplicaSet for each; the
/// one for 1.1 was created after the change and a newer one (1.2), created after it, serves.
/// `verify --image 1.1` says superseded (exit 4), naming that ReplicaSet, 1.2 and that 1.2 is
/// live, instead of not_live (exit 1), which a pipeline would roll back on, reverting 1.2 too;
/// `rollback --dry-run` from the snapshot taken before 1.1 proposes nothing. Then `kubectl
/// rollout undo` takes it back to 1.1's ReplicaSet (reused: created before 1.2's change time):
/// verifying 1.2 is not_live, not superseded — an undo is no later change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_12_a_change_replaced_by_a_later_one_is_superseded_and_not_rolled_back() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    let at = |tag: &str| format!("{}/acme/promo:{tag}", world.registry.host);
    for (tag, build) in [("1.0", "build-0"), ("1.1", "build-1"), ("1.2", "build-2")] {
        push_multiarch(&pusher, "acme/promo", tag, build).await;
    }
    let (v10, v11, v12) = (at("1.0"), at("1.1"), at("1.2"));
    world.kubectl(&["create", "namespace", "apps"]);
    world.apply(&deployment("promo", &v10, ""));
    wait_runs_only(&world, "promo", &v10).await;
    let dir = world.plane.dir.path().join("snapshots");
    let dir = dir.to_str().expect("utf-8");
    let commit = "5a7e1c0ffee12345";
    let snap = common::liveproof()
        .args(&["snapshot", "--dir", dir, "--commit", commit, "-n", "apps"])
        .on(&world)
        .run()
        .await;
    world.expect_exit(&snap, 0);

    let since = change_time().await;
    world.set_image("promo", &v11);
    wait_runs_only(&world, "promo", &v11).await;
    let rs_of = |image: &str| {
        world.kubectl(&[
            "-n",
            "apps",
            "get",
            "rs",
            "-l",
            "app=promo",
            "-o",
            &format!(
                "jsonpath={{range .items[?(@.spec.template.spec.containers[0].image==\"{image}\")]}}{{.metadata.name}}{{end}}"
            ),
        ])
    };
    let rs_11 = rs_of(&v11);
    // Creation times are whole seconds: a later change in 1.1's own second could not be
    // ordered after it (a tie is never "after").
    let since_12 = change_time().await;
    world.set_image("promo", &v12);
    wait_runs_only(&world, "promo", &v12).await;
    let rs_12 = rs_of(&v12);
    assert!(!rs_11.is_empty() && !rs_12.is_empty() && rs_11 != rs_12);

    let verify = |since: &str, image: &str| {
        common::liveproof()
            .args(&["verify", "deployment/promo", "-n", "apps"])
            .since(since)
            .args(&["--image", image])
            .json()
            .on(&world)
            .run()
    };
    let superseded = verify(&since, &v11).await;
    world.expect_exit(&superseded, 4);
    let report = superseded.report();
    assert_eq!(report.verdict, Verdict::Superseded);
    let by = report.targets[0]
        .superseded_by
        .clone()
        .unwrap_or_else(|| panic!("no superseded_by: {}", superseded.stdout));
    assert_eq!(
        by.revision.as_deref(),
        Some(format!("apps/{rs_12} (revision 3)").as_str()),
        "{by:#?}"
    );
    assert_eq!(by.images, std::slice::from_ref(&v12));
    assert_eq!(by.live, Some(true), "{by:#?}");
    assert_eq!(
        by.source_ref.map(|s| (s.kind, s.name)),
        Some(("ReplicaSet".to_string(), rs_12.clone()))
    );

    // The pipeline's rollback, from the snapshot taken before 1.1, proposes nothing.
    let rollback = common::liveproof()
        .args(&[
            "rollback",
            "--snapshot",
            dir,
            "--commit",
            commit,
            "-n",
            "apps",
            "--dry-run",
        ])
        .on(&world)
        .run()
        .await;
    world.expect_exit(&rollback, 0);
    assert!(
        !rollback.stdout.contains("would PATCH"),
        "{}",
        rollback.stdout
    );
    assert!(
        rollback.stdout.contains("nothing to roll back"),
        "{}",
        rollback.stdout
    );

    // `rollout undo`: back to 1.1's ReplicaSet, reused with a bumped revision but created
    // before 1.2's change time. 1.2 was undone, not replaced by a later change.
    world.kubectl(&["-n", "apps", "rollout", "undo", "deploy/promo"]);
    wait_runs_only(&world, "promo", &v11).await;
    assert_eq!(rs_of(&v11), rs_11, "the undo reused 1.1's ReplicaSet");
    let undone = verify(&since_12, &v12).await;
    world.expect_exit(&undone, 1);
    let report = undone.report();
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(report.targets[0].superseded_by, None, "{}", undone.stdout);
    // And 1.1 is live again, as what runs.
    world.expect_exit(&verify(&since, &v11).await, 0);
}
