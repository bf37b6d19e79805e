use std::time::Duration;

use liveproof_evidence::{Check, Status};
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{deployment, evidence, World};
use liveproof_testkit::registry::push_multiarch;

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
