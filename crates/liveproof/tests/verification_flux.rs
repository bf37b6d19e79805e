//! Flux gates on a Verification by kstatus, on the real source- and kustomize-controller (the
//! peers, run against the real control plane): a Kustomization applies a Verification from git
//! and names it in `healthChecks`. No liveproof controller runs yet; the test writes the
//! statuses `status_from` makes through the status subresource, as the controller will.
//!
//! - Not judged yet (the CRD's default status) and Reconciling: Flux keeps waiting (kstatus
//!   InProgress). Were either Current, the health check would pass and the Kustomization would
//!   not look again for its interval (1h): the Stalled status written next could not fail it.
//! - Stalled (a final failure): the health check fails at once naming the Verification
//!   `Failed` (kustomize-controller: "failed early due to stalled resources").
//! - Live: asked to reconcile again, the Kustomization is Ready (kstatus Current).
//!
//! A missing peer fails this test with the command that builds it; it never skips.

use std::time::Duration;

use liveproof::controller::{status_from, VerificationStatus};
use liveproof_testkit::e2e::controllers::{Flux, GitServer};
use liveproof_testkit::e2e::world::World;
use liveproof_testkit::git::{git_at, Repo};
use serde_json::json;

const VERIFICATION: &str = "apiVersion: liveproof.dev/v1alpha1
kind: Verification
metadata:
  name: web
  namespace: apps
spec:
  targets: [deploy/web]
  since: 2026-07-12T10:00:00Z
  image: [ghcr.io/acme/web:1.4.0]
";

/// A report as `verify -o json` writes it for deployment apps/web.
fn report(verdict: &str, wait: Option<serde_json::Value>) -> liveproof_evidence::Report {
    let mut report = json!({
        "schema": "liveproof/v1", "verdict": verdict, "change": {},
        "targets": [{"kind": "Deployment", "namespace": "apps", "name": "web",
                     "verdict": verdict, "evidence": []}],
    });
    if let Some(wait) = wait {
        report["wait"] = wait;
        report["notes"] = json!([
            "--wait stopped at a failure waiting will not fix: apps/Deployment/web: ProgressDeadlineExceeded"
        ]);
    }
    serde_json::from_value(report).expect("a report")
}

/// The Kustomization's `{.status.conditions[?(@.type=="TYPE")].FIELD}`.
fn condition(world: &World, type_: &str, field: &str) -> String {
    world.kubectl(&[
        "-n",
        "flux-system",
        "get",
        "kustomization",
        "apps",
        "-o",
        &format!("jsonpath={{.status.conditions[?(@.type==\"{type_}\")].{field}}}"),
    ])
}

/// `kubectl ARGS…` against the world: what it printed, or `None` when it failed (an object
/// not there yet).
fn kubectl_maybe(world: &World, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(liveproof_testkit::kubectl::kubectl_path())
        .arg("--kubeconfig")
        .arg(&world.plane.kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Polls until `probe` holds, for up to `within`; fails with the cluster's state.
async fn until(world: &World, what: &str, within: Duration, probe: impl Fn() -> bool) {
    let held = liveproof_testkit::within_async(within, Duration::from_millis(250), || {
        std::future::ready(probe().then_some(()))
    })
    .await;
    if held.is_none() {
        panic!(
            "{what} did not happen within {within:?}\nReady: {} {}\n{}",
            condition(world, "Ready", "reason"),
            condition(world, "Ready", "message"),
            world.state()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flux_health_check_waits_for_the_verification_and_fails_on_a_stalled_one() {
    let world = World::start().await;
    let git_root = world.plane.dir.path().join("git-server");
    let server = GitServer::start(&world.plane, &git_root).unwrap_or_else(|e| panic!("{e:#}"));
    let remote = format!("{}/apps.git", server.url);
    world.keep(Ok(server.process));
    let crds = [
        world.plane.peers.path("flux-crds.yaml"),
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../deploy/verification-crd.yaml"),
    ];
    for crd in &crds {
        world.install_crds(crd);
    }
    world.kubectl(&["create", "namespace", "flux-system"]);
    world.kubectl(&["create", "namespace", "apps"]);
    let flux = Flux::start(&world.plane).unwrap_or_else(|e| panic!("{e:#}"));
    world.keep(Ok(flux.source));
    world.keep(Ok(flux.kustomize));

    let repo = Repo::new();
    repo.file("apps/verification.yaml", VERIFICATION);
    let now = jiff::Timestamp::now().to_string();
    for args in [
        &["add", "-A"][..],
        &["commit", "-q", "-m", "verify web 1.4.0"],
        &["push", "-q", &remote, "main"],
    ] {
        git_at(&repo.path(), args, &now);
    }
    world.apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: apps, namespace: flux-system}}
spec:
  url: {remote}
  ref: {{branch: main}}
  interval: 1h
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: apps, namespace: flux-system}}
spec:
  sourceRef: {{kind: GitRepository, name: apps}}
  path: ./apps
  prune: true
  # Long: a health check that ended passes or fails for the next hour, so each outcome below
  # is the one the statuses written caused.
  interval: 1h
  timeout: 2m
  healthChecks:
  - {{apiVersion: liveproof.dev/v1alpha1, kind: Verification, name: web, namespace: apps}}
"
    ));

    // Applied, not judged: the health check runs, and waits.
    let verification = [
        "-n",
        "apps",
        "get",
        "verification",
        "web",
        "-o",
        "jsonpath={.status.observedGeneration}",
    ];
    until(
        &world,
        "the Verification applied",
        Duration::from_secs(120),
        || kubectl_maybe(&world, &verification).as_deref() == Some("0"),
    )
    .await;
    until(&world, "the health check", Duration::from_secs(60), || {
        condition(&world, "Reconciling", "message").contains("health checks")
    })
    .await;
    let patch = |status: &VerificationStatus| {
        let body = json!({"status": status}).to_string();
        world.kubectl(&[
            "-n",
            "apps",
            "patch",
            "verification",
            "web",
            "--subresource=status",
            "--type=merge",
            "-p",
            &body,
        ]);
    };
    let t = jiff::Timestamp::now();
    let waiting = status_from(&report("not_live", None), 1, t, None);
    patch(&waiting);
    // Long enough for kustomize-controller to poll the Verification while it says Reconciling
    // (it polls every few seconds); were that Current, the health check would pass here and the
    // Stalled status below could not fail it.
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_ne!(condition(&world, "Ready", "status"), "True");

    let stalled = status_from(
        &report(
            "not_live",
            Some(json!({"timed_out": false, "elapsed_seconds": 30})),
        ),
        1,
        t,
        Some(&waiting),
    );
    patch(&stalled);
    until(
        &world,
        "the failed health check",
        Duration::from_secs(150),
        || {
            condition(&world, "Ready", "status") == "False"
                && condition(&world, "Ready", "reason") == "HealthCheckFailed"
        },
    )
    .await;
    let message = condition(&world, "Ready", "message");
    assert!(
        message.contains("Verification/apps/web status: 'Failed'"),
        "{message}"
    );

    // Live, and Flux asked to look again (`flux reconcile kustomization apps`): Ready.
    let live = status_from(&report("live", None), 1, t, Some(&stalled));
    patch(&live);
    let requested = format!(
        "reconcile.fluxcd.io/requestedAt={}",
        jiff::Timestamp::now().as_second()
    );
    world.kubectl(&[
        "-n",
        "flux-system",
        "annotate",
        "--overwrite",
        "kustomization",
        "apps",
        &requested,
    ]);
    until(
        &world,
        "the passed health check",
        Duration::from_secs(120),
        || condition(&world, "Ready", "status") == "True",
    )
    .await;
}
