//! The stories on the real progressive-delivery and GitOps controllers: Argo Rollouts, Flagger
//! (the `kubernetes` provider) and Flux's source- and kustomize-controller, each built from its
//! pinned Go module (`e2e/build-peers.sh`) and run as a process against the real control plane
//! (crates/e2e/src/controllers.rs), with its CRDs from the same module. The controllers move
//! the objects; the tests only do what a person or a pipeline does (set an image, promote,
//! push a commit) and verify. Every wait is bounded; a failed story shows the cluster's state
//! and each controller's log.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

mod common;
mod world;

use std::path::Path;
use std::time::Duration;

use liveproof_e2e::controllers::{self, Flux, GitServer};
use liveproof_e2e::registry::push_multiarch;
use liveproof_evidence::{Check, Status, Verdict};
use world::{change_time, deployment, evidence, World};

/// Installs the CRDs in `file` (from the peers' bin) and waits until they are served.
fn install_crds(world: &World, file: &str) {
    let path = world.plane.peers.path(file);
    let path = path.to_str().expect("utf-8 path");
    // Server-side: the Rollout CRD is larger than client-side apply's annotation allows.
    world.kubectl(&["apply", "--server-side", "-f", path]);
    world.kubectl(&[
        "wait",
        "--for=condition=established",
        "--timeout=60s",
        "-f",
        path,
    ]);
}

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
    let out = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        &format!("app={app}"),
        "-o",
        "jsonpath={range .items[*]}{.metadata.labels.rollouts-pod-template-hash} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}",
    ]);
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
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !holds() {
        assert!(
            std::time::Instant::now() < deadline,
            "not within 60 s: {what}\n{}",
            world.state()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// What a Service selects by `rollouts-pod-template-hash`.
fn service_hash(world: &World, service: &str) -> String {
    world.kubectl(&[
        "-n",
        "apps",
        "get",
        "service",
        service,
        "-o",
        "jsonpath={.spec.selector.rollouts-pod-template-hash}",
    ])
}

fn rollout_field(world: &World, name: &str, jsonpath: &str) -> String {
    world.kubectl(&[
        "-n",
        "apps",
        "get",
        "rollout",
        name,
        "-o",
        &format!("jsonpath={jsonpath}"),
    ])
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
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_11_argo_rollouts_canary_and_blue_green_on_the_real_controller() {
    let world = World::start().await;
    let (v1, v2) = two_builds(&world).await;
    install_crds(&world, "argo-rollouts-crds.yaml");
    world.keep(controllers::argo_rollouts(&world.plane));
    world.kubectl(&["create", "namespace", "apps"]);
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
            .wait_for(
                &[
                    "-n",
                    "apps",
                    "get",
                    "rollout",
                    name,
                    "-o",
                    "jsonpath={.status.phase}",
                ],
                "Healthy",
                Duration::from_secs(120),
            )
            .await;
    }

    // Canary: paused at 20%.
    let since = change_time().await;
    let old = rollout_field(&world, "web", "{.status.stableRS}");
    set_rollout_image(&world, "web", &v2);
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "rollout",
                "web",
                "-o",
                "jsonpath={.status.phase}/{.status.currentStepIndex}",
            ],
            "Paused/1",
            Duration::from_secs(120),
        )
        .await;
    let new = rollout_field(&world, "web", "{.status.currentPodHash}");
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

    // Promoted: live once the stable Service selects the new hash, not before.
    promote(&world, "web");
    let waited = verify(
        &world,
        "rollout/web",
        &since,
        &v2,
        &["--wait", "--timeout", "120s"],
    )
    .await;
    world.expect_exit(&waited, 0);
    assert_eq!(service_hash(&world, "web-stable"), new, "{}", world.state());
    assert!(
        ready_hashes(&world, "web").iter().all(|h| *h == new),
        "live while an old pod is Ready: {:?}",
        ready_hashes(&world, "web")
    );
    assert_eq!(evidence(&waited, Check::PodRestarted).status, Status::Pass);

    // Blue-green: awaiting promotion.
    let since = change_time().await;
    let old = rollout_field(&world, "shop", "{.status.stableRS}");
    set_rollout_image(&world, "shop", &v2);
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "rollout",
                "shop",
                "-o",
                "jsonpath={.status.phase}",
            ],
            "Paused",
            Duration::from_secs(120),
        )
        .await;
    let new = rollout_field(&world, "shop", "{.status.currentPodHash}");
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "service",
                "shop-preview",
                "-o",
                "jsonpath={.spec.selector.rollouts-pod-template-hash}",
            ],
            &new,
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(service_hash(&world, "shop-active"), old);
    let awaiting = verify(&world, "rollout/shop", &since, &v2, &[]).await;
    world.expect_exit(&awaiting, 1);
    assert_eq!(evidence(&awaiting, Check::PodsCurrent).status, Status::Fail);

    // Promoted: live while the old pods, Ready, wait out the scale-down delay unrouted.
    promote(&world, "shop");
    let promoted = verify(
        &world,
        "rollout/shop",
        &since,
        &v2,
        &["--wait", "--timeout", "60s"],
    )
    .await;
    world.expect_exit(&promoted, 0);
    assert_eq!(service_hash(&world, "shop-active"), new);
    assert!(
        ready_hashes(&world, "shop").contains(&old),
        "the old pods were gone before the verdict, so this proves nothing of idle pods: {:?}",
        ready_hashes(&world, "shop")
    );
}

/// The real git CLI in `dir`, as a person runs it; fails the test when it fails.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Commits `apps/web.yaml` (Deployment `web` running `image`) and pushes it to the git
/// server's `apps.git`; the commit's SHA.
fn push_web(repo: &Path, remote: &str, image: &str, message: &str) -> String {
    std::fs::create_dir_all(repo.join("apps")).expect("mkdir");
    std::fs::write(repo.join("apps/web.yaml"), deployment("web", image, "")).expect("write");
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", message]);
    git(repo, &["push", "-q", remote, "main"]);
    git(repo, &["rev-parse", "HEAD"])
}

/// Story 12: Flux for real, seed 000 as it happens. A commit pushed to the git server is
/// merged but not deployed: `verify kustomization/apps --commit SHA` is not live while
/// source-controller has not fetched it and kustomize-controller has not applied it. Asked to
/// reconcile (what `flux reconcile source git` does), the controllers fetch, build and apply
/// it — the test applies nothing — and `verify --wait` ends live with the new pods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_12_flux_applies_a_pushed_commit() {
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
    let repo = world.plane.dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q", "-b", "main"]);
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
    let applied = [
        "-n",
        "flux-system",
        "get",
        "kustomization",
        "apps",
        "-o",
        "jsonpath={.status.lastAppliedRevision}",
    ];
    world
        .wait_for(
            &applied,
            &format!("main@sha1:{first}"),
            Duration::from_secs(120),
        )
        .await;
    world.wait_ready("deploy/web", "3").await;

    let second = push_web(&repo, &remote, &v2, "web v2");
    let repo_arg = repo.to_str().expect("utf-8 path");
    let verify_ks = |extra: &'static [&'static str]| {
        common::liveproof()
            .args(&["verify", "kustomization/apps", "-n", "flux-system"])
            .args(&["--commit", &second, "--repo", repo_arg])
            .args(extra)
            .json()
            .on(&world)
            .run()
    };
    let merged = verify_ks(&[]).await;
    world.expect_exit(&merged, 1);
    assert_eq!(merged.report().verdict, Verdict::NotLive);
    assert_eq!(
        evidence(&merged, Check::GitopsRevision).status,
        Status::Fail
    );

    world.kubectl(&[
        "-n",
        "flux-system",
        "annotate",
        "--overwrite",
        "gitrepository",
        "apps",
        &format!(
            "reconcile.fluxcd.io/requestedAt={}",
            jiff::Timestamp::now().as_second()
        ),
    ]);
    let waited = verify_ks(&["--wait", "--timeout", "150s"]).await;
    world.expect_exit(&waited, 0);
    assert_eq!(world.kubectl(&applied), format!("main@sha1:{second}"));
    let images = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={range .items[*]}{.spec.containers[0].image}{\"\\n\"}{end}",
    ]);
    assert!(
        images.lines().all(|i| i == v2),
        "live while an old pod is there:\n{images}"
    );
    assert_eq!(
        evidence(&waited, Check::GitopsRevision).status,
        Status::Pass
    );
}

/// The phase of Flagger's Canary `web`.
fn canary_phase(world: &World) -> String {
    world.kubectl(&[
        "-n",
        "apps",
        "get",
        "canary",
        "web",
        "-o",
        "jsonpath={.status.phase}",
    ])
}

/// Waits (bounded) until Flagger's Canary `web` is in `phase`.
async fn wait_canary_phase(world: &World, phase: &str, within: Duration) {
    world
        .wait_for(
            &[
                "-n",
                "apps",
                "get",
                "canary",
                "web",
                "-o",
                "jsonpath={.status.phase}",
            ],
            phase,
            within,
        )
        .await;
}

/// Story 13: the real Flagger with the `kubernetes` provider (no mesh: blue/green on
/// Services). The Canary analyses each new build for a few iterations — no metric, no
/// webhook: an iteration passes while the canary's pods are Ready — then promotes it: the
/// primary Deployment `web-primary`, which the Service `web` routes to, gets the new template.
/// During the analysis the primary still runs the old build: `canary/web` is not live. Once
/// Flagger promoted it and finished, `verify --wait` ends live, followed to the primary's pods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_13_flagger_promotes_a_canary_on_the_real_controller() {
    let world = World::start().await;
    let (v1, v2) = two_builds(&world).await;
    install_crds(&world, "flagger-crds.yaml");
    world.keep(controllers::flagger(&world.plane));
    world.kubectl(&["create", "namespace", "apps"]);
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
    wait_canary_phase(&world, "Initialized", Duration::from_secs(120)).await;
    world.wait_ready("deploy/web-primary", "3").await;

    let since = change_time().await;
    world.set_image("web", &v2);
    wait_canary_phase(&world, "Progressing", Duration::from_secs(60)).await;
    let analysing = verify(&world, "canary/web", &since, &v2, &[]).await;
    assert_eq!(
        canary_phase(&world),
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
        canary_phase(&world),
        "Succeeded",
        "live before Flagger finished"
    );
    let images = world.kubectl(&[
        "-n",
        "apps",
        "get",
        "pods",
        "-l",
        "app=web-primary",
        "-o",
        "jsonpath={range .items[*]}{.spec.containers[0].image}{\"\\n\"}{end}",
    ]);
    assert!(
        images.lines().all(|i| i == v2),
        "live while an old primary pod is there:\n{images}"
    );
}
