//! Memory bounds, in figures (never timed assertions): the peak RSS (GNU time's `%M`) of one
//! `liveproof verify` against what issue 32 measured unbounded —
//!
//! 1. a server answering `{{{…` without end (it took 6.1 GB for a 3 GB body);
//! 2. a server answering bytes that never end a line (2.9 GB in 2 s);
//! 3. `--all-contexts` over four clusters, one of them flooding (all the machine's 23 GB);
//! 4. `--from` a 29 MB List of 200,000 pods, 100 of them the target's (1 GB), and the same
//!    dump with one Deployment selecting all 200,000 (every pod is then read by the checks).
//!
//! 5. `liveproof controller` keeping 500 Verifications (four Deployments each) over 2,000
//!    Deployments × 5 pods on the simulator (issue 35's bound: 200 MB): its peak RSS
//!    (`VmHWM`), CPU seconds, the time until every Verification has a status, and the requests
//!    it sent meanwhile. Not run by default: `--case controller`.
//!
//! Run: `cargo bench -p liveproof --bench memory` (needs GNU time, `apt-get install time`).
//! `--case body,line,fleet,dump,controller` chooses the cases; `MEMORY_BEFORE=/path/to/liveproof` adds a
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
            "controller" => runtime.block_on(controller(dir.path())),
            other => {
                println!("no case {other:?}: body, line, fleet, dump or controller");
                std::process::exit(2);
            }
        }
    }
}

/// 500 Verifications in `shop`, `v-N` naming `svc-4N` … `svc-4N+3`, the change stated as the
/// fleet's pods run it (so each is judged live).
fn verifications(n: usize) -> Vec<serde_json::Value> {
    (0..n)
        .map(|i| {
            let targets: Vec<String> = (0..4)
                .map(|k| format!("deploy/svc-{}", 4 * i + k))
                .collect();
            serde_json::json!({
                "apiVersion": "liveproof.dev/v1alpha1", "kind": "Verification",
                "metadata": {"name": format!("v-{i}"), "namespace": "shop",
                             "uid": format!("verification-{i}"), "generation": 1},
                "spec": {"targets": targets, "since": CHANGE_AT, "image": [IMAGE],
                         "noRegistry": true, "timeout": "10m"}
            })
        })
        .collect()
}

/// The samples of `/metrics` on `port` (None while it does not answer).
fn metrics(port: u16) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut body = String::new();
    stream.read_to_string(&mut body).ok()?;
    Some(body)
}

/// `/proc/PID/status`'s peak RSS (`VmHWM`, KiB) and `/proc/PID/stat`'s user + system CPU
/// seconds, read while the process lives.
fn peak_and_cpu(pid: u32) -> (u64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's `(name)`: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // USER_HZ is 100 on Linux.
    (peak, (ticks(14) + ticks(15)) / 100.0)
}

/// `liveproof controller` over 2,000 Deployments × 5 pods and 500 Verifications on the
/// simulator, until every Verification has a status (at most 10 minutes).
#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
async fn controller(dir: &Path) {
    const VERIFICATIONS: usize = 500;
    let sim = Simulator::new()
        .with_gitops_crds()
        .with_objects(fleet::deployments("shop", 2000, 5, false))
        .with_objects(verifications(VERIFICATIONS))
        .start()
        .await
        .expect("simulator");
    let kubeconfig = dir.join("controller.kubeconfig");
    sim.write_kubeconfig(&kubeconfig, "shop")
        .expect("kubeconfig");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let before = sim.requests().total();
    let start = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(["controller", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--metrics-address", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("liveproof controller starts");
    let pid = child.id();
    // Every Verification judged: a verdict sample each, then their statuses on the server.
    let mut judged = 0;
    let mut all_at = None;
    while start.elapsed() < std::time::Duration::from_secs(600) {
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        judged = metrics(port)
            .map(|m| {
                m.lines()
                    .filter(|l| {
                        l.starts_with("liveproof_verification_verdict{") && l.ends_with(" 1")
                    })
                    .count()
            })
            .unwrap_or(0);
        if judged >= VERIFICATIONS {
            let with_status = sim
                .objects()
                .iter()
                .filter(|o| o["kind"] == "Verification" && o["status"]["verdict"].is_string())
                .count();
            if with_status >= VERIFICATIONS {
                all_at = Some(start.elapsed());
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    let requests = sim.requests().total() - before;
    // Kept a little longer: what holding them costs, not only judging them once.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let (peak_kib, cpu) = peak_and_cpu(pid);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(-1);
    let verdicts = sim
        .objects()
        .iter()
        .filter(|o| o["kind"] == "Verification")
        .fold(
            std::collections::BTreeMap::<String, usize>::new(),
            |mut m, o| {
                *m.entry(
                    o["status"]["verdict"]
                        .as_str()
                        .unwrap_or("none")
                        .to_string(),
                )
                .or_default() += 1;
                m
            },
        );
    println!(
        "  controller, 2,000 Deployments × 5 pods, {VERIFICATIONS} Verifications: {:.1} MB peak RSS, \
         {cpu:.1} s CPU, all {} in {}, {requests} requests (exit {code})",
        peak_kib as f64 / 1024.0,
        if all_at.is_some() { "with a status" } else { "NOT with a status" },
        all_at.map_or_else(|| format!("over 600 s ({judged} judged)"), |t| format!("{:.1} s", t.as_secs_f64())),
    );
    println!("  verdicts: {verdicts:?}");
    sim.shutdown().await;
}
