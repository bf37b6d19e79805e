//! Memory bounds, in figures (never timed assertions): the peak RSS (GNU time's `%M`) of one
//! `liveproof verify` against what issue 32 measured unbounded —
//!
//! 1. a server answering `{{{…` without end (it took 6.1 GB for a 3 GB body);
//! 2. a server answering bytes that never end a line (2.9 GB in 2 s);
//! 3. `--all-contexts` over four clusters, one of them flooding (all the machine's 23 GB);
//! 4. `--from` a 29 MB List of 200,000 pods, 100 of them the target's (1 GB), and the same
//!    dump with one Deployment selecting all 200,000 (every pod is then read by the checks).
//!
//! Run: `cargo bench -p liveproof --bench memory` (needs GNU time, `apt-get install time`).
//! `--case body,line,fleet,dump` chooses the cases; `MEMORY_BEFORE=/path/to/liveproof` adds a
//! row per case for another build (say, main's) — mind that without the bounds the flooding
//! cases take gigabytes. `tests/memory.rs` and `tests/fleet.rs` hold the bounds themselves.

use std::path::Path;
use std::process::Command;

use liveproof_sim::{SimHandle, Simulator};
use liveproof_testkit::fleet::{self, CHANGE_AT, IMAGE};
use liveproof_testkit::flood::{self, Answer};

/// One run's peak RSS in KiB and its exit code.
fn measure(program: &Path, args: &[&str]) -> (u64, i32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("time");
    let status = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("GNU time runs (apt-get install time)");
    let peak_kib = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
        .unwrap_or(0);
    (peak_kib, status.code().unwrap_or(-1))
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn row(what: &str, which: &str, (peak_kib, code): (u64, i32)) {
    println!(
        "  {what:<58} {which:<7} {:>8.1} MB peak RSS   (exit {code})",
        peak_kib as f64 / 1024.0
    );
}

/// Runs `args` with this build and, when `MEMORY_BEFORE` names one, with that build too.
fn rows(what: &str, args: &[&str]) {
    row(
        what,
        "this",
        measure(Path::new(env!("CARGO_BIN_EXE_liveproof")), args),
    );
    if let Some(before) = std::env::var_os("MEMORY_BEFORE") {
        row(what, "before", measure(Path::new(&before), args));
    }
}

/// A kubeconfig of one cluster at `server`, in `dir`.
fn kubeconfig(dir: &Path, name: &str, contexts: &[(&str, &str)]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, fleet::kubeconfig(contexts, "shop")).expect("kubeconfig");
    path.to_str().expect("utf-8").to_string()
}

fn verify<'a>(kubeconfig: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "verify",
        "deploy/svc-0",
        "--image",
        IMAGE,
        "--since",
        CHANGE_AT,
        "--kubeconfig",
        kubeconfig,
    ];
    args.extend_from_slice(more);
    args
}

/// A bare pod of `app` (what makes a dump cost per object rather than per byte).
fn pod(i: usize, app: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("web-{i:06}"), "namespace": "apps", "labels": {"app": app}},
        "spec": {"containers": [{"name": "app", "image": "web:1"}]}
    })
}

/// Writes 200,000 pods as one JSON List (the first 100 of `app: web`, unless `all_web`) and
/// a Deployment `web` selecting `app: web`; the file's path and size.
fn dump(dir: &Path, all_web: bool) -> (String, usize) {
    let mut items: Vec<serde_json::Value> = (0..200_000)
        .map(|i| {
            let app = if all_web || i < 100 {
                "web".to_string()
            } else {
                format!("batch-{}", i % 50)
            };
            pod(i, &app)
        })
        .collect();
    items.push(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "web:1"}]}}}
    }));
    let bytes = serde_json::to_vec(
        &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}),
    )
    .expect("JSON");
    let path = dir.join(if all_web { "all-web.json" } else { "pods.json" });
    std::fs::write(&path, &bytes).expect("dump written");
    (path.to_str().expect("utf-8").to_string(), bytes.len())
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases = args
        .windows(2)
        .find(|w| w[0] == "--case")
        .map_or("body,line,fleet,dump", |w| w[1].as_str())
        .to_string();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    println!("peak RSS of one verify (GNU time %M); --max-response-size at its default, 256 MiB");
    for case in cases.split(',') {
        match case {
            "body" => {
                let kc = kubeconfig(
                    dir.path(),
                    "braces",
                    &[("flood", &flood::serve(Answer::Braces))],
                );
                rows("a `{{{…` body without end", &verify(&kc, &[]));
            }
            "line" => {
                let kc = kubeconfig(
                    dir.path(),
                    "line",
                    &[("flood", &flood::serve(Answer::EndlessLine))],
                );
                rows("a body that never ends a line", &verify(&kc, &[]));
            }
            "fleet" => {
                let sims: Vec<SimHandle> = runtime.block_on(async {
                    let mut sims = Vec::new();
                    for _ in 0..3 {
                        sims.push(
                            Simulator::new()
                                .with_objects(fleet::deployments("shop", 1, 2, false))
                                .start()
                                .await
                                .expect("simulator"),
                        );
                    }
                    sims
                });
                let urls: Vec<String> = sims.iter().map(SimHandle::url).collect();
                let flooding = flood::serve(Answer::Braces);
                let kc = kubeconfig(
                    dir.path(),
                    "fleet",
                    &[
                        ("prod-eu", &urls[0]),
                        ("prod-us", &urls[1]),
                        ("prod-ap", &urls[2]),
                        ("prod-flood", &flooding),
                    ],
                );
                rows(
                    "--all-contexts, 4 clusters, one flooding",
                    &verify(&kc, &["--all-contexts"]),
                );
                runtime.block_on(async {
                    for sim in sims {
                        sim.shutdown().await;
                    }
                });
            }
            "dump" => {
                for all_web in [false, true] {
                    let (path, size) = dump(dir.path(), all_web);
                    let what = if all_web {
                        format!(
                            "--from {:.0} MB, 200,000 pods, all of deploy/web",
                            size as f64 / 1e6
                        )
                    } else {
                        format!(
                            "--from {:.0} MB, 200,000 pods, 100 of deploy/web",
                            size as f64 / 1e6
                        )
                    };
                    rows(
                        &what,
                        &[
                            "verify",
                            "deploy/web",
                            "-n",
                            "apps",
                            "--since",
                            "2026-07-12T10:00:00Z",
                            "--image",
                            "web:1",
                            "--from",
                            &path,
                        ],
                    );
                    let _ = std::fs::remove_file(&path);
                }
            }
            other => {
                println!("no case {other:?}: body, line, fleet or dump");
                std::process::exit(2);
            }
        }
    }
}
