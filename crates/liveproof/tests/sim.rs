//! `liveproof sim` as a place to try things: the demo's kubeconfig shows the demo's objects,
//! the printed commands work as printed, a rollout made with the real kubectl moves on its own
//! until `verify --wait` says live, and Ctrl-C stops it.

use liveproof_testkit::binary as common;

use liveproof_testkit::wait_for;

use std::path::{Path, PathBuf};
use std::time::Duration;

use liveproof::demo;

/// Runs the real kubectl against `kubeconfig` with no `-n`: the kubeconfig's namespace applies.
async fn kubectl(kubeconfig: &Path, home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = liveproof_testkit::kubectl()
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .timeout(Duration::from_secs(45))
        .run()
        .await;
    (out.code, out.stdout, out.stderr)
}

/// The printed `  liveproof verify …` lines, as argument lists (comments dropped).
fn printed_verify_lines(banner: &str) -> Vec<Vec<String>> {
    banner
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("liveproof "))
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_demo_is_a_place_to_try_a_rollout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stdout = dir.path().join("sim.out");
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(["sim", "--demo"])
        .stdout(std::fs::File::create(&stdout).expect("stdout file"))
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof sim starts");
    let banner = wait_for(
        "liveproof sim's banner",
        Duration::from_secs(30),
        || async {
            let text = std::fs::read_to_string(&stdout).unwrap_or_default();
            text.contains("press Ctrl-C to stop").then_some(text)
        },
    )
    .await;
    let kubeconfig = PathBuf::from(
        banner
            .lines()
            .find_map(|l| l.strip_prefix("kubeconfig: "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no kubeconfig path printed: {banner}")),
    );
    assert!(kubeconfig.is_file(), "{banner}");
    assert!(
        banner.contains(&format!("export KUBECONFIG={}", kubeconfig.display()))
            && banner.contains("kubectl get deploy"),
        "{banner}"
    );
    let home = dir.path();

    // No -n anywhere: the kubeconfig's namespace is the demo's.
    let (code, out, err) = kubectl(&kubeconfig, home, &["get", "deploy", "-o", "name"]).await;
    assert_eq!(
        (code, out.trim()),
        (0, "deployment.apps/inventory"),
        "{err}"
    );

    let verify_lines = printed_verify_lines(&banner);
    assert_eq!(verify_lines.len(), 2, "{banner}");
    let env = [("KUBECONFIG", kubeconfig.to_str().expect("utf-8"))];
    let run = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::liveproof().args(&args).envs(&env).run().await
    };
    let before = run(verify_lines[0].clone()).await;
    assert_eq!(
        before.code, 1,
        "not live before the rollout: {}{}",
        before.stdout, before.stderr
    );

    let (code, _, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "set",
            "image",
            "deploy/inventory",
            &format!("app={}", demo::NEW_IMAGE),
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let after = run(verify_lines[1].clone()).await;
    assert_eq!(
        after.code, 0,
        "live once rolled out: {}{}",
        after.stdout, after.stderr
    );
    assert!(after.stdout.contains("LIVE"), "{}", after.stdout);

    // Undo: the controller moves again, back to the old image, with pods started after it.
    let undone_at = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
        .expect("time")
        .to_string();
    // Times are whole seconds: a pod started in the same second is not provably after it.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (code, _, err) = kubectl(&kubeconfig, home, &["rollout", "undo", "deploy/inventory"]).await;
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = kubectl(
        &kubeconfig,
        home,
        &["rollout", "status", "deploy/inventory", "--timeout", "30s"],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let back = run([
        "verify",
        "deploy/inventory",
        "--image",
        demo::OLD_IMAGE,
        "--since",
        &undone_at,
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ]
    .map(str::to_owned)
    .to_vec())
    .await;
    assert_eq!(back.code, 0, "{}{}", back.stdout, back.stderr);
    assert_eq!(back.report().targets[0].namespace, demo::NS);

    // Ctrl-C stops it; the kubeconfig it made goes with it.
    let pid = server.id().expect("running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-s", "INT", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let code = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("stops on Ctrl-C")
        .expect("exit status");
    assert_eq!(code.code(), Some(0));
    assert!(!kubeconfig.exists(), "the temporary kubeconfig is removed");
}

/// `-n` still wins over the demo's namespace, and `--kubeconfig-out` puts the file where asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_demo_namespace_flag_wins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kc");
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(["sim", "--demo", "-n", "default", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof sim starts");
    let text = wait_for(
        "the kubeconfig written",
        Duration::from_secs(30),
        || async {
            let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
            text.contains("current-context").then_some(text)
        },
    )
    .await;
    server.kill().await.expect("stops");
    assert!(text.contains("namespace: default"), "{text}");
}

/// StatefulSets and DaemonSets rolled by the simulator's controllers end live for `verify --wait`
/// too: their pods name the ControllerRevision the status (or the newest revision) names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_rolls_statefulsets_and_daemonsets_to_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kc");
    let mut server = common::sim_process(&["-n", "apps"], &kubeconfig).await;
    let manifests = dir.path().join("workloads.yaml");
    std::fs::write(
        &manifests,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n---\n\
         apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n---\n\
         apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: apps}\n\
         spec:\n  serviceName: db\n  replicas: 2\n  selector: {matchLabels: {app: db}}\n\
         \x20 template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: db, image: \"postgres:16\"}]}\n---\n\
         apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: cache, namespace: apps}\n\
         spec:\n  serviceName: cache\n  replicas: 2\n  updateStrategy: {type: OnDelete}\n  selector: {matchLabels: {app: cache}}\n\
         \x20 template:\n    metadata: {labels: {app: cache}}\n    spec: {containers: [{name: cache, image: \"redis:7\"}]}\n---\n\
         apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: apps}\n\
         spec:\n  selector: {matchLabels: {app: agent}}\n\
         \x20 template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: agent, image: \"fluent-bit:3.0\"}]}\n",
    )
    .expect("manifests");
    let home = dir.path();
    let manifests = manifests.to_str().expect("utf-8");
    let (code, _, err) = kubectl(&kubeconfig, home, &["apply", "-f", manifests]).await;
    assert_eq!(code, 0, "{err}");
    // (kubectl rollout status refuses an OnDelete StatefulSet.)
    let (code, out, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "wait",
            "sts/cache",
            "--for=jsonpath={.status.readyReplicas}=2",
            "--timeout",
            "30s",
        ],
    )
    .await;
    assert_eq!(code, 0, "sts/cache: {out}{err}");
    for target in ["sts/db", "ds/agent"] {
        let (code, out, err) = kubectl(
            &kubeconfig,
            home,
            &["rollout", "status", target, "--timeout", "30s"],
        )
        .await;
        assert_eq!(code, 0, "{target}: {out}{err}");
    }
    let since = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
        .expect("time")
        .to_string();
    // Time passing is the point: pods must start in a later second than `since`.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for (target, image) in [
        ("sts/db", "db=postgres:17"),
        ("sts/cache", "cache=redis:8"),
        ("ds/agent", "agent=fluent-bit:3.1"),
    ] {
        let (code, _, err) = kubectl(&kubeconfig, home, &["set", "image", target, image]).await;
        assert_eq!(code, 0, "{err}");
    }
    // OnDelete: the controller replaces a pod only once it is deleted.
    let (code, _, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "delete",
            "pods",
            "-l",
            "app=cache",
            "--wait=false",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let run = common::liveproof()
        .args(&[
            "verify",
            "sts/db",
            "sts/cache",
            "ds/agent",
            "--image",
            "postgres:17",
            "--image",
            "redis:8",
            "--image",
            "fluent-bit:3.1",
            "--since",
            &since,
            "--wait",
            "--timeout",
            "60s",
            "-o",
            "json",
        ])
        .env("KUBECONFIG", kubeconfig.to_str().expect("utf-8"))
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    let kinds: Vec<&str> = report.targets.iter().map(|t| t.kind.name()).collect();
    assert_eq!(kinds, ["StatefulSet", "StatefulSet", "DaemonSet"]);
    // As the real controller (completeRollingUpdate): an OnDelete StatefulSet keeps its first
    // currentRevision after every pod is updated, and liveproof does not wait for it to move.
    let (code, revisions, err) = kubectl(
        &kubeconfig,
        home,
        &[
            "-n",
            "apps",
            "get",
            "sts/cache",
            "-o",
            "jsonpath={.status.currentRevision} {.status.updateRevision}",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (current, update) = revisions.trim().split_once(' ').expect("two revisions");
    assert_ne!(current, update, "OnDelete moved currentRevision on");
    server.kill().await.expect("stops");
}
