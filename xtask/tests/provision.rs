//! `cargo xtask` as a user runs it: bad arguments, `peers --check` on a cache missing pieces
//! (the real e2e/build-peers.sh), and two concurrent provisioning runs sharing one build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use liveproof_testkit::wait_until;

fn xtask() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command
        .env_remove("LIVEPROOF_XTASK_BUILD_SCRIPT")
        .stdin(Stdio::null());
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn bad_arguments_exit_2_saying_what_and_how() {
    for args in [
        &["frobnicate"][..],
        &["peers", "--chek"],
        &["test", "-p", "x"],
        &[],
    ] {
        let out = xtask().args(args).output().expect("xtask runs");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(stderr.contains("\nhint: "), "{args:?}: {stderr}");
    }
    let out = xtask().arg("--help").output().expect("xtask runs");
    assert!(out.status.success());
    let help = text(&out.stdout);
    for taught in [
        "cargo xtask test",
        "peers --check",
        "LIVEPROOF_PEERS_CACHE",
        "LIVEPROOF_REGISTRY",
        "LIVEPROOF_PYTHON",
        "PREREQUISITES",
        "EXIT STATUS",
    ] {
        assert!(help.contains(taught), "--help lacks {taught}:\n{help}");
    }
}

/// The `missing: PATH (how)` lines of `peers --check`.
fn missing_lines(out: &Output) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("missing: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn check_lists_each_missing_piece_of_the_cache_and_builds_nothing() {
    let cache = tempfile::tempdir().expect("tempdir");
    let check = || {
        xtask()
            .args(["peers", "--check"])
            .env("LIVEPROOF_PEERS_CACHE", cache.path())
            .output()
            .expect("xtask runs")
    };
    let out = check();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = missing_lines(&out);
    for piece in [
        "/bin/etcd ",
        "/bin/kube-apiserver ",
        "/bin/kube-controller-manager ",
        "/bin/kubectl ",
        "/bin/registry ",
        "/bin/helm ",
        "/bin/helm3 ",
        "/bin/sarif-schema-2.1.0.json ",
        "/venv ",
    ] {
        assert_eq!(
            lines.iter().filter(|l| l.contains(piece)).count(),
            1,
            "one line for {piece}: {lines:#?}"
        );
    }
    assert!(lines.iter().all(|l| l.contains(" (") && l.ends_with(')')));
    assert!(
        text(&out.stderr).contains("hint: `cargo xtask peers`"),
        "{}",
        text(&out.stderr)
    );
    // Nothing was built.
    let first = lines[0].trim_start_matches("missing: ");
    let key_dir = Path::new(first.split(" (").next().unwrap_or(first))
        .parent()
        .and_then(Path::parent)
        .expect("a path in the cache")
        .to_path_buf();
    assert!(!key_dir.join("bin").exists(), "--check built something");

    // All there but the registry: only the registry is named.
    let bin = key_dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for name in [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kubectl",
        "helm",
        "helm3",
        "validate-krew-manifest",
        "rollouts-controller",
        "flagger",
        "source-controller",
        "kustomize-controller",
        "gitserver",
        "argocd",
    ] {
        executable(&bin.join(name), "#!/bin/sh\n");
    }
    for schema in [
        "sarif-schema-2.1.0.json",
        "analysis-template-crd.yaml",
        "kustomize.toolkit.fluxcd.io_kustomizations.yaml",
        "rollout-crd.yaml",
        "flagger-crd.yaml",
        "knative-serving-service-crd.yaml",
        "argo-rollouts-crds.yaml",
        "flagger-crds.yaml",
        "flux-crds.yaml",
        "argocd-crds.yaml",
    ] {
        std::fs::write(bin.join(schema), "{}").expect("write");
    }
    std::fs::create_dir_all(key_dir.join("venv")).expect("mkdir");
    std::fs::write(key_dir.join("venv/complete"), "").expect("write");
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    let lines = missing_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("/bin/registry "), "{lines:#?}");

    // Complete: exit 0 and the bin directory on stdout.
    executable(&bin.join("registry"), "#!/bin/sh\n");
    let out = check();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        PathBuf::from(text(&out.stdout).trim()),
        bin,
        "{}",
        text(&out.stdout)
    );
}

fn executable(path: &Path, content: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, content).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A stand-in for e2e/build-peers.sh with its contract (`--check` prints the bin directory or
/// fails naming what is missing; no argument builds and prints it) and a slow build that
/// records each time it ran.
const SLOW_BUILD: &str = r#"#!/usr/bin/env bash
set -euo pipefail
cache="$LIVEPROOF_PEERS_CACHE"
if [ "${1:-}" = --check ]; then
  [ -f "$cache/k/bin/etcd" ] && { echo "$cache/k/bin"; exit 0; }
  echo "missing: $cache/k/bin/etcd (built)" >&2
  exit 1
fi
echo "build $$" >> "$cache/builds"
sleep 3
mkdir -p "$cache/k/bin"
touch "$cache/k/bin/etcd"
echo "$cache/k/bin"
"#;

#[test]
fn a_second_run_waits_for_the_first_build_and_reuses_it() {
    let cache = tempfile::tempdir().expect("tempdir");
    let script = cache.path().join("fake-build.sh");
    executable(&script, SLOW_BUILD);
    let run = || {
        xtask()
            .arg("peers")
            .env("LIVEPROOF_PEERS_CACHE", cache.path())
            .env("LIVEPROOF_XTASK_BUILD_SCRIPT", &script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("xtask starts")
    };
    let first = run();
    // The first holds the lock once its build has started.
    wait_until("the first build to start", Duration::from_secs(60), || {
        cache.path().join("builds").exists()
    });
    let second = run();
    let first = first.wait_with_output().expect("first ends");
    let second = second.wait_with_output().expect("second ends");
    let (first_err, second_err) = (text(&first.stderr), text(&second.stderr));
    assert!(first.status.success(), "{first_err}");
    assert!(second.status.success(), "{second_err}");
    let builds = std::fs::read_to_string(cache.path().join("builds")).expect("builds");
    assert_eq!(
        builds.lines().count(),
        1,
        "built twice: {builds}\n{second_err}"
    );
    assert!(
        second_err.contains("waiting for it to finish, at most 180 minutes"),
        "{second_err}"
    );
    assert!(
        second_err.contains("reusing what the other run provisioned"),
        "{second_err}"
    );
}
