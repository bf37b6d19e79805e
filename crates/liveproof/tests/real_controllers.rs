//! The stories on the real progressive-delivery and GitOps controllers: Argo Rollouts, Flagger
//! (the `kubernetes` provider) and Flux's source- and kustomize-controller, each built from its
//! pinned Go module (`e2e/build-peers.sh`) and run as a process against the real control plane
//! (crates/testkit/src/e2e/controllers.rs), with its CRDs from the same module. The controllers
//! move the objects; the tests only do what a person or a pipeline does (set an image, promote,
//! push a commit) and verify. Every wait is bounded; a failed story shows the cluster's state
//! and each controller's log.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world;

use std::time::Duration;

use liveproof_evidence::{Check, Status, Verdict};
use liveproof_testkit::e2e::controllers::{self, Controller, Flux, GitServer};
use liveproof_testkit::e2e::ControlPlane;
use liveproof_testkit::git::{git_at, Repo};
use liveproof_testkit::registry::push_multiarch;
use liveproof_testkit::within_async;
use world::{change_time, deployment, evidence, World};

/// Installs the CRDs in `file` (from the peers' bin) and waits until they are served.
fn install_crds(world: &World, file: &str) {
    world.install_crds(&world.plane.peers.path(file));
}

/// What a Service selects by `rollouts-pod-template-hash`, and a Canary's phase ([`World::field`]).
const HASH: &str = "{.spec.selector.rollouts-pod-template-hash}";
const PHASE: &str = "{.status.phase}";

/// Pushes acme/web `v1` and `v2` to the world's registry; their references.
async fn two_builds(world: &World) -> (String, String) {
    let pusher = world.registry.pusher();
    push_multiarch(&pusher, "acme/web", "v1", "build-1").await;
    push_multiarch(&pusher, "acme/web", "v2", "build-2").await;
    (
        format!("{}/acme/web:v1", world.registry.host),
        format!("{}/acme/web:v2", world.registry.host),
    )
}

/// A world with acme/web v1 and v2 pushed, namespace apps, the CRDs in `crds` and
/// `controller` running; v1's and v2's references.
async fn world_running(
    crds: &str,
    controller: fn(&ControlPlane) -> anyhow::Result<Controller>,
) -> (World, String, String) {
    let world = World::start().await;
    let (v1, v2) = two_builds(&world).await;
    install_crds(&world, crds);
    world.keep(controller(&world.plane));
    world.kubectl(&["create", "namespace", "apps"]);
    (world, v1, v2)
}

/// `verify TARGET -n apps --image IMAGE EXTRA… -o json` with the change time `since`.
async fn verify(
    world: &World,
    target: &str,
    since: &str,
    image: &str,
    extra: &[&str],
) -> common::Run {
    common::liveproof()
        .args(&["verify", target, "-n", "apps", "--image", image])
        .since(since)
        .args(extra)
        .json()
        .on(world)
        .run()
        .await
}

/// The `rollouts-pod-template-hash` of each pod of `app=APP` that is Ready: `hash` lines,
/// sorted.
fn ready_hashes(world: &World, app: &str) -> Vec<String> {
    let out = world.pods(
        app,
        "{.metadata.labels.rollouts-pod-template-hash} {.status.conditions[?(@.type==\"Ready\")].status}",
    );
    let mut hashes: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_suffix(" True"))
        .map(str::to_owned)
        .collect();
    hashes.sort();
    hashes
}

/// Polls `holds` until it is true, for up to 60 s; fails the test with the cluster's state.
async fn eventually(world: &World, what: &str, holds: impl Fn() -> bool) {
    let held = within_async(Duration::from_secs(60), Duration::from_millis(250), || {
        std::future::ready(holds().then_some(()))
    })
    .await;
    assert!(held.is_some(), "not within 60 s: {what}\n{}", world.state());
}

/// `kubectl argo rollouts promote NAME`, as the plugin does it: the pause conditions cleared
/// through the status subresource.
fn promote(world: &World, name: &str) {
    world.kubectl(&[
        "-n",
        "apps",
        "patch",
        "rollout",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"pauseConditions":null}}"#,
    ]);
}

/// Promotes Rollout `name`, then `verify rollout/NAME --wait`: fails the test unless it ends
/// live.
async fn promoted(world: &World, name: &str, since: &str, image: &str) -> common::Run {
    promote(world, name);
    let target = format!("rollout/{name}");
    let run = verify(
        world,
        &target,
        since,
        image,
        &["--wait", "--timeout", "120s"],
    )
    .await;
    world.expect_exit(&run, 0);
    run
}

/// Sets the Rollout's one container's image (`kubectl set image` does not know Rollouts).
fn set_rollout_image(world: &World, name: &str, image: &str) {
    world.kubectl(&[
        "-n",
        "apps",
        "patch",
        "rollout",
        name,
        "--type=merge",
        "-p",
        &serde_json::json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": image}]}}}})
        .to_string(),
    ]);
}

fn rollout(name: &str, image: &str, replicas: u32, strategy: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: {name}
  namespace: apps
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}
  strategy:
{strategy}
"
    )
}

fn service(name: &str, app: &str) -> String {
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: apps
spec:
  selector: {{app: {app}}}
  ports:
  - {{name: http, port: 80, targetPort: 8080}}
---
"
    )
}

/// Story 11: the real Argo Rollouts controller.
/// - Canary (stable and canary Services, no traffic router): the image set, the controller
///   pauses at 20% — one pod of five on the new build, four on the old: not live. Promoted,
///   `verify --wait` ends live, and then the stable Service selects the new hash and only
///   new pods are Ready.
/// - Blue-green (active and preview Services, no auto-promotion): awaiting promotion, the
///   preview serves the new build and the active the old: not live. Promoted, live while the
///   old pods idle out (`scaleDownDelaySeconds`): they are Ready but no longer routed.
/// - The canary again, with a third build, aborted while `verify --wait` waits: it ends at
///   once, not live, with the controller's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_11_argo_rollouts_canary_and_blue_green_on_the_real_controller() {
    let (world, v1, v2) =
        world_running("argo-rollouts-crds.yaml", controllers::argo_rollouts).await;
    let canary = "    canary:
      stableService: web-stable
      canaryService: web-canary
      steps:
      - setWeight: 20
      - pause: {}";
    let blue_green = "    blueGreen:
      activeService: shop-active
      previewService: shop-preview
      autoPromotionEnabled: false
      scaleDownDelaySeconds: 90";
    world.apply(&format!(
        "{}{}{}{}{}---\n{}",
        service("web-stable", "web"),
        service("web-canary", "web"),
        service("shop-active", "shop"),
        service("shop-preview", "shop"),
        rollout("web", &v1, 5, canary),
        rollout("shop", &v1, 3, blue_green),
    ));
    for name in ["web", "shop"] {
        world
            .wait_field(
                &format!("rollout/{name}"),
                PHASE,
                "Healthy",
                Duration::from_secs(120),
            )
            .await;
    }

    // Canary: paused at 20%.
    let since = change_time().await;
    let old = world.field("rollout/web", "{.status.stableRS}");
    set_rollout_image(&world, "web", &v2);
    world
        .wait_field(
            "rollout/web",
            "{.status.phase}/{.status.currentStepIndex}",
            "Paused/1",
            Duration::from_secs(120),
        )
        .await;
    let new = world.field("rollout/web", "{.status.currentPodHash}");
    assert_ne!(new, old);
    let mut split = vec![new.clone()];
    split.extend(std::iter::repeat_n(old.clone(), 4));
    split.sort();
    // (the old pod scaled away stays Ready through its grace period)
    eventually(&world, "one pod of five on the new build", || {
        ready_hashes(&world, "web") == split
    })
    .await;
    let paused = verify(&world, "rollout/web", &since, &v2, &[]).await;
    world.expect_exit(&paused, 1);
    assert_eq!(paused.report().verdict, Verdict::NotLive);
    assert_eq!(evidence(&paused, Check::SpecReadback).status, Status::Pass);
    assert_eq!(evidence(&paused, Check::PodsCurrent).status, Status::Fail);
    // The stable Service the controller keeps on the old hash routes to the old pods.
    let traffic = evidence(&paused, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Fail, "{}", paused.stdout);
    assert!(
        traffic
            .observed
            .contains(&format!("Service web-stable → pod web-{old}-")),
        "{}",
        traffic.observed
    );

    // Promoted: live once the stable Service selects the new hash, not before.
    let waited = promoted(&world, "web", &since, &v2).await;
    assert_eq!(
        world.field("service/web-stable", HASH),
        new,
        "{}",
        world.state()
    );
    assert!(
        ready_hashes(&world, "web").iter().all(|h| *h == new),
        "live while an old pod is Ready: {:?}",
        ready_hashes(&world, "web")
    );
    assert_eq!(evidence(&waited, Check::PodRestarted).status, Status::Pass);

    // Blue-green: awaiting promotion.
    let since = change_time().await;
    let old = world.field("rollout/shop", "{.status.stableRS}");
    set_rollout_image(&world, "shop", &v2);
    world
        .wait_field("rollout/shop", PHASE, "Paused", Duration::from_secs(120))
        .await;
    let new = world.field("rollout/shop", "{.status.currentPodHash}");
    world
        .wait_field("service/shop-preview", HASH, &new, Duration::from_secs(60))
        .await;
    assert_eq!(world.field("service/shop-active", HASH), old);
    let awaiting = verify(&world, "rollout/shop", &since, &v2, &[]).await;
    world.expect_exit(&awaiting, 1);
    assert_eq!(evidence(&awaiting, Check::PodsCurrent).status, Status::Fail);
    let traffic = evidence(&awaiting, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Fail, "{}", awaiting.stdout);
    assert!(
        traffic
            .observed
            .contains(&format!("Service shop-active → pod shop-{old}-")),
        "{}",
        traffic.observed
    );

    // Promoted: live while the old pods, Ready, wait out the scale-down delay unrouted.
    let waited = promoted(&world, "shop", &since, &v2).await;
    assert_eq!(world.field("service/shop-active", HASH), new);
    // Read from the Services the controller switched, not from its status.
    assert_eq!(
        evidence(&waited, Check::TrafficCurrent).observed,
        "Service shop-active: 3 ready endpoint(s); Service shop-preview: 3 ready endpoint(s), all current"
    );
    assert!(
        ready_hashes(&world, "shop").contains(&old),
        "the old pods were gone before the verdict, so this proves nothing of idle pods: {:?}",
        ready_hashes(&world, "shop")
    );

    // Aborted during its canary (issue 33): `verify rollout/web --wait` is under way when
    // somebody runs `kubectl argo rollouts abort web`; the controller scales the canary back and
    // reports it Degraded, and the wait ends there, not_live, with the controller's message
    // (the harness's two-minute bound on a run fails the test if it waits its 4m out).
    push_multiarch(&world.registry.pusher(), "acme/web", "v3", "build-3").await;
    let v3 = format!("{}/acme/web:v3", world.registry.host);
    let since = change_time().await;
    set_rollout_image(&world, "web", &v3);
    world
        .wait_field(
            "rollout/web",
            "{.status.phase}/{.status.currentStepIndex}",
            "Paused/1",
            Duration::from_secs(120),
        )
        .await;
    let waiting = verify(
        &world,
        "rollout/web",
        &since,
        &v3,
        &["--wait", "--timeout", "4m"],
    );
    let aborting = async {
        tokio::time::sleep(Duration::from_secs(3)).await;
        abort(&world, "web");
    };
    let (aborted, ()) = tokio::join!(waiting, aborting);
    world.expect_exit(&aborted, 1);
    let report = aborted.report();
    assert_eq!(report.verdict, Verdict::NotLive);
    assert!(
        report.wait.is_some_and(|w| !w.timed_out),
        "{:?}",
        report.wait
    );
    let message = world.field("rollout/web", "{.status.message}");
    assert!(message.contains("RolloutAborted"), "{}", world.state());
    assert!(
        report.notes.iter().any(|n| n
            .starts_with("--wait stopped at a failure waiting will not fix: ")
            // `kubectl argo rollouts abort` sets .status.abort itself; the controller writes
            // its message after, so the wait may stop on the abort with the message before it.
            && n.contains("apps/Rollout/web: the rollout was aborted")),
        "{:?}\n{}",
        report.notes,
        aborted.stderr
    );
}

/// `kubectl argo rollouts abort NAME`, as the plugin does it: `status.abort` set through the
/// status subresource.
fn abort(world: &World, name: &str) {
    world.kubectl(&[
        "-n",
        "apps",
        "patch",
        "rollout",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"abort":true}}"#,
    ]);
}

/// A ReplicaSet of Rollout `shop` (uid `owner`) for `hash`: 2 pods of `image`, as Argo
/// Rollouts writes one (the hash on its labels, selector and template).
fn rollout_replicaset(owner: &str, hash: &str, image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: shop-{hash}
  namespace: apps
  labels: {{app: shop, rollouts-pod-template-hash: {hash}}}
  ownerReferences:
  - {{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: shop, uid: {owner}, controller: true, blockOwnerDeletion: true}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: shop, rollouts-pod-template-hash: {hash}}}
  template:
    metadata:
      labels: {{app: shop, rollouts-pod-template-hash: {hash}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}
---
"
    )
}

/// The pods the ready endpoints of Service `service`'s EndpointSlices name, sorted.
fn ready_endpoints(world: &World, service: &str) -> Vec<String> {
    let names = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "endpointslices",
        "-l",
        &format!("kubernetes.io/service-name={service}"),
        "-o",
        "jsonpath={range .items[*].endpoints[?(@.conditions.ready==true)]}{.targetRef.name}{\"\\n\"}{end}",
    ]);
    let mut names: Vec<String> = names.lines().map(str::to_owned).collect();
    names.sort();
    names
}

/// Story 14: a blue-green Rollout whose status says it is promoted while its active Service
/// still routes to the old pods — what a Service re-applied with the old
/// `rollouts-pod-template-hash` (by a pipeline, or GitOps self-heal) leaves while Argo
/// Rollouts is down. The Argo Rollouts controller is not run (it would switch the selector
/// back itself); the Rollout's status is written as it writes it (status subresource), the
/// ReplicaSets as it creates them, and the rest is real: the replicaset controller makes the
/// pods, the kubelet stand-in runs them, the endpointslice controller writes the slices. The
/// status names only the new hash, so `pods_current` counts the old pods idle; the active
/// Service's slice routes to them: not live, naming the Service and the old pods. Once the
/// selector names the new hash, the controller rewrites the slice and `verify --wait` ends live,
/// the old pods still Ready and routed by nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_14_a_rollouts_active_service_still_on_the_old_hash() {
    const OLD: &str = "6b8d4f7c95";
    const NEW: &str = "7f9c5d8b46";
    let world = World::start().await;
    let (v1, v2) = two_builds(&world).await;
    install_crds(&world, "argo-rollouts-crds.yaml");
    world.kubectl(&["create", "namespace", "apps"]);
    let blue_green = "    blueGreen:
      activeService: shop-active
      previewService: shop-preview
      autoPromotionEnabled: false
      scaleDownDelaySeconds: 600";
    world.apply(&rollout("shop", &v2, 2, blue_green));
    let owner = world.field("rollout/shop", "{.metadata.uid}");
    let hashed_service = |name: &str, hash: &str| {
        format!(
            "apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: apps
  annotations: {{argo-rollouts.argoproj.io/managed-by-rollouts: shop}}
spec:
  selector: {{app: shop, rollouts-pod-template-hash: {hash}}}
  ports:
  - {{name: http, port: 80, targetPort: 8080}}
---
"
        )
    };
    world.apply(&format!(
        "{}{}{}",
        rollout_replicaset(&owner, OLD, &v1),
        hashed_service("shop-active", OLD),
        hashed_service("shop-preview", NEW),
    ));
    world.wait_ready(&format!("rs/shop-{OLD}"), "2").await;
    let since = change_time().await;
    world.apply(&rollout_replicaset(&owner, NEW, &v2));
    world.wait_ready(&format!("rs/shop-{NEW}"), "2").await;
    // Promoted, as the controller writes it: the new hash active, stable and complete.
    let now = jiff::Timestamp::now().to_string();
    let generation = world.field("rollout/shop", "{.metadata.generation}");
    let status = serde_json::json!({"status": {
    "observedGeneration": generation,
    "currentPodHash": NEW, "stableRS": NEW,
    "replicas": 4, "updatedReplicas": 2, "readyReplicas": 4, "availableReplicas": 2,
    "phase": "Healthy",
    "blueGreen": {"activeSelector": NEW, "previewSelector": NEW},
    "conditions": [
        {"type": "Completed", "status": "True", "reason": "RolloutCompleted",
         "message": "RolloutCompleted", "lastTransitionTime": now, "lastUpdateTime": now},
        {"type": "Healthy", "status": "True", "reason": "RolloutHealthy",
         "message": "RolloutHealthy", "lastTransitionTime": now, "lastUpdateTime": now}
    ]}});
    world.kubectl(&[
        "-n",
        "apps",
        "patch",
        "rollout",
        "shop",
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
    let old_pods: Vec<String> = world
        .pods(
            "shop",
            "{.metadata.name} {.metadata.labels.rollouts-pod-template-hash}",
        )
        .lines()
        .filter_map(|l| l.strip_suffix(&format!(" {OLD}")))
        .map(str::to_owned)
        .collect();
    assert_eq!(old_pods.len(), 2, "{}", world.state());
    eventually(
        &world,
        "the active Service's slice lists the two old pods, ready",
        || ready_endpoints(&world, "shop-active") == old_pods,
    )
    .await;
    eventually(
        &world,
        "the preview Service's slice lists two new pods, ready",
        || ready_endpoints(&world, "shop-preview").len() == 2,
    )
    .await;

    let routed_old = verify(&world, "rollout/shop", &since, &v2, &[]).await;
    world.expect_exit(&routed_old, 1);
    assert_eq!(routed_old.report().verdict, Verdict::NotLive);
    assert_eq!(
        evidence(&routed_old, Check::PodsCurrent).status,
        Status::Pass,
        "the status names only the new hash, so the old pods count as idle: {}",
        routed_old.stdout
    );
    let traffic = evidence(&routed_old, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Fail, "{}", routed_old.stdout);
    for pod in &old_pods {
        assert!(
            traffic.observed.contains(&format!(
                "Service shop-active → pod {pod} (old revision {OLD}"
            )),
            "{}",
            traffic.observed
        );
    }
    assert!(
        traffic.detail.contains(&format!(
            "Service shop-active, its activeService, selects app=shop,rollouts-pod-template-hash={OLD}"
        )),
        "{}",
        traffic.detail
    );

    // The selector names the new hash: the endpointslice controller rewrites the slice, and
    // the wait sees it.
    let waited = verify(
        &world,
        "rollout/shop",
        &since,
        &v2,
        &["--wait", "--timeout", "60s"],
    );
    let fix = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        world.kubectl(&[
            "-n",
            "apps",
            "patch",
            "service",
            "shop-active",
            "--type=merge",
            "-p",
            &serde_json::json!({"spec": {"selector": {"rollouts-pod-template-hash": NEW}}})
                .to_string(),
        ]);
    };
    let (waited, ()) = tokio::join!(waited, fix);
    world.expect_exit(&waited, 0);
    let traffic = evidence(&waited, Check::TrafficCurrent);
    assert_eq!(traffic.status, Status::Pass, "{}", waited.stdout);
    assert_eq!(
        traffic.observed,
        "Service shop-active: 2 ready endpoint(s); Service shop-preview: 2 ready endpoint(s), all current"
    );
    assert_eq!(
        ready_hashes(&world, "shop"),
        [OLD, OLD, NEW, NEW],
        "the old pods went before the verdict, so this proves nothing of idle pods"
    );
}

/// Commits `apps/web.yaml` (Deployment `web` running `image`) now — the committer time is the
/// change time `--commit` gives — and pushes it to the git server; the commit's SHA.
fn push_web(repo: &Repo, remote: &str, image: &str, message: &str) -> String {
    push_manifest(repo, remote, &deployment("web", image, ""), message)
}

/// Commits `apps/web.yaml` as `manifest` now and pushes it to the git server; the commit's SHA.
fn push_manifest(repo: &Repo, remote: &str, manifest: &str, message: &str) -> String {
    let now = jiff::Timestamp::now().to_string();
    repo.file("apps/web.yaml", manifest);
    for args in [
        &["add", "-A"][..],
        &["commit", "-q", "-m", message],
        &["push", "-q", remote, "main"],
    ] {
        git_at(&repo.path(), args, &now);
    }
    git_at(&repo.path(), &["rev-parse", "HEAD"], &now)
}

/// Flux's source- and kustomize-controller running with the git server, GitRepository `apps`
/// following its `main` and Kustomization `apps` applying `./apps`, both in `flux-system`, with
/// the first commit (Deployment `web` on v1) applied and rolled out.
struct FluxWorld {
    world: World,
    repo: Repo,
    remote: String,
    v2: String,
}

impl FluxWorld {
    async fn start() -> FluxWorld {
        let world = World::start().await;
        let (v1, v2) = two_builds(&world).await;
        let git_root = world.plane.dir.path().join("git-server");
        let server = GitServer::start(&world.plane, &git_root).unwrap_or_else(|e| panic!("{e:#}"));
        let remote = format!("{}/apps.git", server.url);
        world.keep(Ok(server.process));
        install_crds(&world, "flux-crds.yaml");
        world.kubectl(&["create", "namespace", "flux-system"]);
        world.kubectl(&["create", "namespace", "apps"]);
        let flux = Flux::start(&world.plane).unwrap_or_else(|e| panic!("{e:#}"));
        world.keep(Ok(flux.source));
        world.keep(Ok(flux.kustomize));
        let repo = Repo::new();
        let first = push_web(&repo, &remote, &v1, "web v1");
        world.apply(&format!(
            "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: apps
  namespace: flux-system
spec:
  url: {remote}
  ref: {{branch: main}}
  # Long: the story asks for each fetch, so none happens behind its back.
  interval: 1h
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  sourceRef: {{kind: GitRepository, name: apps}}
  path: ./apps
  prune: true
  interval: 1h
  timeout: 2m
"
        ));
        world
            .wait_for(
                &APPLIED,
                &format!("main@sha1:{first}"),
                Duration::from_secs(120),
            )
            .await;
        world.wait_ready("deploy/web", "3").await;
        FluxWorld {
            world,
            repo,
            remote,
            v2,
        }
    }

    /// `kubectl -n flux-system ARGS…`.
    fn flux(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", "flux-system"];
        all.extend_from_slice(args);
        self.world.kubectl(&all)
    }

    /// `flux reconcile source git apps`, as the CLI asks for it: the reconcile annotation.
    fn fetch(&self) {
        let requested = format!(
            "reconcile.fluxcd.io/requestedAt={}",
            jiff::Timestamp::now().as_second()
        );
        self.flux(&[
            "annotate",
            "--overwrite",
            "gitrepository",
            "apps",
            &requested,
        ]);
    }

    /// `verify kustomization/apps -n flux-system --commit COMMIT --repo R EXTRA… -o json`.
    async fn verify(&self, commit: &str, extra: &[&str]) -> common::Run {
        let repo_dir = self.repo.path();
        common::liveproof()
            .args(&["verify", "kustomization/apps", "-n", "flux-system"])
            .args(&[
                "--commit",
                commit,
                "--repo",
                repo_dir.to_str().expect("utf-8 path"),
            ])
            .args(extra)
            .json()
            .on(&self.world)
            .run()
            .await
    }
}

/// The Kustomization's `lastAppliedRevision`, as kubectl reads it.
const APPLIED: [&str; 7] = [
    "-n",
    "flux-system",
    "get",
    "kustomization",
    "apps",
    "-o",
    "jsonpath={.status.lastAppliedRevision}",
];

/// Story 12: Flux for real, seed 000 as it happens. A commit pushed to the git server is
/// merged but not deployed: `verify kustomization/apps --commit SHA` is not live before
/// source-controller fetched it, and still not live once it did while the Kustomization is
/// suspended (nothing applied it). Resumed, kustomize-controller builds and applies it — the
/// test applies nothing — and `verify --wait` ends live with the new pods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_12_flux_applies_a_pushed_commit() {
    let flux = FluxWorld::start().await;
    let world = &flux.world;
    let v2 = flux.v2.clone();
    let second = push_web(&flux.repo, &flux.remote, &v2, "web v2");
    let merged = flux.verify(&second, &[]).await;
    world.expect_exit(&merged, 1);
    assert_eq!(merged.report().verdict, Verdict::NotLive);
    assert_eq!(
        evidence(&merged, Check::GitopsRevision).status,
        Status::Fail
    );

    // Fetched but not applied: the Kustomization held (`flux suspend`), the source asked to
    // reconcile (`flux reconcile source git`).
    let suspend = |on: bool| {
        let patch = serde_json::json!({"spec": {"suspend": on}}).to_string();
        flux.flux(&[
            "patch",
            "kustomization",
            "apps",
            "--type=merge",
            "-p",
            &patch,
        ]);
    };
    suspend(true);
    flux.fetch();
    world
        .wait_for(
            &[
                "-n",
                "flux-system",
                "get",
                "gitrepository",
                "apps",
                "-o",
                "jsonpath={.status.artifact.revision}",
            ],
            &format!("main@sha1:{second}"),
            Duration::from_secs(60),
        )
        .await;
    let fetched = flux.verify(&second, &[]).await;
    world.expect_exit(&fetched, 1);
    assert_eq!(
        evidence(&fetched, Check::GitopsRevision).status,
        Status::Fail
    );

    // Applied by kustomize-controller once resumed (`flux resume`).
    suspend(false);
    let waited = flux.verify(&second, &["--wait", "--timeout", "150s"]).await;
    world.expect_exit(&waited, 0);
    assert_eq!(world.kubectl(&APPLIED), format!("main@sha1:{second}"));
    let images = world.pod_images("web");
    assert!(
        images.lines().all(|i| i == v2),
        "live while an old pod is there:\n{images}"
    );
    assert_eq!(
        evidence(&waited, Check::GitopsRevision).status,
        Status::Pass
    );
}

/// `apps/shop.yaml` for Story 15: Deployment apps/shop running `image` with `replicas`.
fn shop(image: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: apps
spec:
  replicas: {replicas}
  strategy:
    type: RollingUpdate
    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}
  selector:
    matchLabels: {{app: shop}}
  template:
    metadata:
      labels: {{app: shop}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}
"
    )
}

/// Story 15 (issue 33): queued promotions on the real Flux controllers. Commit B sets shop's
/// image to 1.1 and commit C to 1.2; source-controller fetches and kustomize-controller
/// applies each (the test applies nothing). B's verify job runs after C landed: the cluster
/// runs 1.2, which once read as `not_live` (exit 1) and a pipeline rolled C back. Now it is
/// `superseded` (exit 4) naming C, 1.2, C's time and that C is live — for `-f apps/shop.yaml
/// --commit B` (C is the later commit that touched the file) and for `kustomization/apps
/// --commit B --image …:1.1` (C is the applied revision, a strict descendant of B whose
/// manifest differs in the image). Queued: D (1.3) and E (1.4) land before Flux fetches, and
/// only E is applied: D is superseded by E. And the negative: a commit P sets 1.1 again, then
/// Q changes only the replica count, which is no field P states: P is live, both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_15_flux_applied_a_later_commit_so_the_earlier_is_superseded() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    for (tag, build) in [
        ("1.0", "build-0"),
        ("1.1", "build-1"),
        ("1.2", "build-2"),
        ("1.3", "build-3"),
        ("1.4", "build-4"),
    ] {
        push_multiarch(&pusher, "acme/shop", tag, build).await;
    }
    let image = |tag: &str| format!("{}/acme/shop:{tag}", world.registry.host);
    let git_root = world.plane.dir.path().join("git-server");
    let server = GitServer::start(&world.plane, &git_root).unwrap_or_else(|e| panic!("{e:#}"));
    let remote = format!("{}/apps.git", server.url);
    world.keep(Ok(server.process));
    install_crds(&world, "flux-crds.yaml");
    world.kubectl(&["create", "namespace", "flux-system"]);
    world.kubectl(&["create", "namespace", "apps"]);
    let flux = Flux::start(&world.plane).unwrap_or_else(|e| panic!("{e:#}"));
    world.keep(Ok(flux.source));
    world.keep(Ok(flux.kustomize));
    let repo = Repo::new();
    let push = |tag: &str, replicas: u32, message: &str| {
        let now = jiff::Timestamp::now().to_string();
        repo.file("apps/shop.yaml", &shop(&image(tag), replicas));
        for args in [
            &["add", "-A"][..],
            &["commit", "-q", "-m", message],
            &["push", "-q", &remote, "main"],
        ] {
            git_at(&repo.path(), args, &now);
        }
        git_at(&repo.path(), &["rev-parse", "HEAD"], &now)
    };
    let applied = [
        "-n",
        "flux-system",
        "get",
        "kustomization",
        "apps",
        "-o",
        "jsonpath={.status.lastAppliedRevision}",
    ];
    // Fetched now (`flux reconcile source git apps`), applied by kustomize-controller as soon
    // as the source has it, rolled out by the control plane: each pod on `tag`.
    let deployed = |sha: String, tag: &'static str, replicas: usize| {
        let world = &world;
        let want = image(tag);
        async move {
            let requested = format!(
                "reconcile.fluxcd.io/requestedAt={}",
                jiff::Timestamp::now().as_nanosecond()
            );
            world.kubectl(&[
                "-n",
                "flux-system",
                "annotate",
                "--overwrite",
                "gitrepository",
                "apps",
                &requested,
            ]);
            world
                .wait_for(
                    &applied,
                    &format!("main@sha1:{sha}"),
                    Duration::from_secs(120),
                )
                .await;
            eventually(world, &format!("every pod of shop on {want}"), || {
                let images = world.pod_images("shop");
                images.lines().count() == replicas && images.lines().all(|i| i == want)
            })
            .await;
            world.wait_ready("deploy/shop", &replicas.to_string()).await;
        }
    };
    let first = push("1.0", 2, "shop 1.0");
    world.apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: apps
  namespace: flux-system
spec:
  url: {remote}
  ref: {{branch: main}}
  # Long: the story asks for each fetch, so none happens behind its back.
  interval: 1h
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  sourceRef: {{kind: GitRepository, name: apps}}
  path: ./apps
  prune: true
  interval: 1h
  timeout: 2m
"
    ));
    deployed(first, "1.0", 2).await;
    let b = push("1.1", 2, "shop 1.1");
    deployed(b.clone(), "1.1", 2).await;
    let c = push("1.2", 2, "shop 1.2");
    deployed(c.clone(), "1.2", 2).await;

    let repo_dir = repo.path();
    let repo_arg = repo_dir.to_str().expect("utf-8 path");
    let verify = |args: Vec<String>| {
        let world = &world;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            common::liveproof()
                .arg("verify")
                .args(&args)
                .args(&["--repo", repo_arg])
                .json()
                .current_dir(repo_arg)
                .on(world)
                .run()
                .await
        }
    };
    let c_time = git_at(
        &repo_dir,
        &["show", "-s", "--format=%cI", &c],
        "2026-07-12T10:00:00Z",
    )
    .parse::<jiff::Timestamp>()
    .expect("C's committer time")
    .to_string();
    let by_file = verify(
        ["-f", "apps/shop.yaml", "--commit", &b[..7]]
            .map(String::from)
            .to_vec(),
    )
    .await;
    world.expect_exit(&by_file, 4);
    let by_kustomization = verify(
        [
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &b,
            "--image",
            &image("1.1"),
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    world.expect_exit(&by_kustomization, 4);
    for run in [&by_file, &by_kustomization] {
        let report = run.report();
        assert_eq!(report.verdict, Verdict::Superseded, "{}", run.stdout);
        let shop = report
            .targets
            .iter()
            .find(|t| t.kind.name() == "Deployment")
            .expect("Deployment apps/shop");
        assert_eq!(shop.verdict, Verdict::Superseded, "{}", run.stdout);
        let by = shop.superseded_by.as_ref().expect("what superseded it");
        assert_eq!(by.commit.as_deref(), Some(&c[..7]), "{by:#?}");
        assert_eq!(by.images, [image("1.2")], "{by:#?}");
        assert_eq!(by.at.as_deref(), Some(c_time.as_str()), "{by:#?}");
        assert_eq!(
            by.live,
            Some(true),
            "C's pods run 1.2 and started after it: {by:#?}"
        );
    }
    let owner = by_kustomization.report().targets[0].clone();
    assert_eq!(owner.kind.name(), "Kustomization");
    let by = owner.superseded_by.expect("the Kustomization names C");
    assert_eq!(by.revision, Some(format!("main@sha1:{c}")));

    // Queued: D (1.3) and E (1.4) land before the next fetch, and Flux applies E only. No
    // ReplicaSet ever ran D's template: the commits alone show E replaced it.
    let d = push("1.3", 2, "shop 1.3");
    let e = push("1.4", 2, "shop 1.4");
    deployed(e.clone(), "1.4", 2).await;
    let queued = verify(
        ["-f", "apps/shop.yaml", "--commit", &d]
            .map(String::from)
            .to_vec(),
    )
    .await;
    world.expect_exit(&queued, 4);
    let report = queued.report();
    let by = report.targets[0].superseded_by.as_ref().expect("E");
    assert_eq!(
        (by.commit.as_deref(), by.images.as_slice(), by.live),
        (Some(&e[..7]), [image("1.4")].as_slice(), Some(true)),
        "{by:#?}"
    );

    // The negative: P states 1.1 again and is applied; Q changes the replica count only.
    let p = push("1.1", 2, "shop 1.1 again");
    deployed(p.clone(), "1.1", 2).await;
    let q = push("1.1", 3, "shop on three replicas");
    deployed(q, "1.1", 3).await;
    let run = verify(
        ["-f", "apps/shop.yaml", "--commit", &p]
            .map(String::from)
            .to_vec(),
    )
    .await;
    world.expect_exit(&run, 0);
    let run = verify(
        [
            "kustomization/apps",
            "-n",
            "flux-system",
            "--commit",
            &p,
            "--image",
            &image("1.1"),
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    world.expect_exit(&run, 0);
}

/// Story 16 (issue 33): a commit whose manifest the API server rejects (`replicas: "x"`).
/// `verify kustomization/apps --commit E --wait --timeout 4m` is started before Flux has looked;
/// then source-controller fetches E, kustomize-controller's dry-run fails and it records
/// Ready=False ReconciliationFailed for E — and the wait ends there, not_live, with Flux's own
/// message, long before its timeout (the harness's two-minute bound on a run fails the test
/// if it waits the timeout out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_16_flux_rejects_an_invalid_commit_and_the_wait_ends_with_its_message() {
    let flux = FluxWorld::start().await;
    let world = &flux.world;
    let invalid = deployment("web", &flux.v2, "").replace("replicas: 3", "replicas: \"x\"");
    let bad = push_manifest(&flux.repo, &flux.remote, &invalid, "web: replicas x");
    let waiting = flux.verify(&bad, &["--wait", "--timeout", "4m"]);
    let fetch = async {
        // Once verify is watching, `flux reconcile source git apps`.
        tokio::time::sleep(Duration::from_secs(3)).await;
        flux.fetch();
    };
    let (run, ()) = tokio::join!(waiting, fetch);
    world.expect_exit(&run, 1);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::NotLive);
    assert!(
        report.wait.is_some_and(|w| !w.timed_out),
        "{:?}",
        report.wait
    );
    let ready = |field: &str| {
        flux.flux(&[
            "get",
            "kustomization",
            "apps",
            "-o",
            &format!("jsonpath={{.status.conditions[?(@.type==\"Ready\")].{field}}}"),
        ])
    };
    assert_eq!(ready("reason"), "ReconciliationFailed", "{}", world.state());
    let flux_says = ready("message").trim_end().to_string();
    assert!(flux_says.contains("replicas"), "{flux_says}");
    let note = format!(
        "--wait stopped at a failure waiting will not fix: flux-system/Kustomization/apps: Ready=False ReconciliationFailed for revision main@sha1:{bad}: {flux_says}"
    );
    assert!(
        report.notes.contains(&note),
        "{:?}\nwant: {note}\n{}",
        report.notes,
        run.stderr
    );
    // The evidence says it too, and the cluster still runs what Flux applied before.
    assert_eq!(
        evidence(&run, Check::ConditionFresh).detail.trim_end(),
        format!("Ready=False ReconciliationFailed: {flux_says}")
    );
}

/// Story 13: the real Flagger with the `kubernetes` provider (no mesh: blue/green on
/// Services). The Canary analyses each new build for a few iterations — no metric, no
/// webhook: an iteration passes while the canary's pods are Ready — then promotes it: the
/// primary Deployment `web-primary`, which the Service `web` routes to, gets the new template.
/// During the analysis the primary still runs the old build: `canary/web` is not live. Once
/// Flagger promoted it and finished, `verify --wait` ends live, followed to the primary's pods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_13_flagger_promotes_a_canary_on_the_real_controller() {
    let (world, v1, v2) = world_running("flagger-crds.yaml", controllers::flagger).await;
    world.apply(&format!(
        "{}---
apiVersion: flagger.app/v1beta1
kind: Canary
metadata:
  name: web
  namespace: apps
spec:
  provider: kubernetes
  targetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  progressDeadlineSeconds: 60
  service: {{port: 80, targetPort: 8080}}
  # Flagger's shortest interval is 10 s: the analysis takes about 30 s, the promotion 20 s.
  analysis:
    interval: 10s
    threshold: 2
    iterations: 3
    metrics: []
",
        deployment("web", &v1, "")
    ));
    // Flagger copies `web` into `web-primary`, routes `web` to it and scales `web` to zero.
    world
        .wait_field("canary/web", PHASE, "Initialized", Duration::from_secs(120))
        .await;
    world.wait_ready("deploy/web-primary", "3").await;

    let since = change_time().await;
    world.set_image("web", &v2);
    world
        .wait_field("canary/web", PHASE, "Progressing", Duration::from_secs(60))
        .await;
    let analysing = verify(&world, "canary/web", &since, &v2, &[]).await;
    assert_eq!(
        world.field("canary/web", PHASE),
        "Progressing",
        "the analysis ended before the verdict: this proves nothing of it"
    );
    world.expect_exit(&analysing, 1);
    assert_eq!(analysing.report().verdict, Verdict::NotLive);
    // The primary, which the Service `web` routes to, still has the old template.
    let primary = analysing
        .report()
        .targets
        .into_iter()
        .find(|t| t.name == "web-primary")
        .unwrap_or_else(|| panic!("not followed to web-primary: {}", analysing.stdout));
    assert!(
        primary
            .evidence
            .iter()
            .any(|e| e.check == Check::SpecReadback && e.status == Status::Fail),
        "{}",
        analysing.stdout
    );

    let promoted = verify(
        &world,
        "canary/web",
        &since,
        &v2,
        &["--wait", "--timeout", "150s"],
    )
    .await;
    world.expect_exit(&promoted, 0);
    assert_eq!(
        world.field("canary/web", PHASE),
        "Succeeded",
        "live before Flagger finished"
    );
    let images = world.pod_images("web-primary");
    assert!(
        images.lines().all(|i| i == v2),
        "live while an old primary pod is there:\n{images}"
    );
}
