//! liveproof against the real API server, in figures (never timed assertions): one `verify -l`
//! over N Deployments of M pods against a loop of `kubectl rollout status` over the same
//! Deployments — what a pipeline runs without liveproof — on the real control plane (etcd,
//! kube-apiserver, kube-controller-manager from `e2e/build-peers.sh`, the controller manager
//! at `--kube-api-qps=200` so 10,000 pods are created in minutes, not a quarter of an hour),
//! the kubelet stand-in making the pods Ready and then stopped before anything is measured
//! (it lists every pod five times a second: at 10,000 pods it would take the CPU liveproof is
//! timed on). liveproof runs under `/usr/bin/time`: its wall time, the API requests it counts
//! (`-v`) and its peak RSS.
//!
//! Run: `cargo bench -p liveproof --bench real_api` (needs the peers, `bash
//! e2e/build-peers.sh`, the real kubectl, as the tests do, and GNU time). Options: `--
//! --deployments N --pods M --runs R --hold S` (default 200 Deployments x 2 pods, the median
//! of 5 liveproof runs; `--hold` keeps the cluster up S seconds at the end, printing its
//! kubeconfig, to look closer with a profiler); `REAL_API_BEFORE=PATH` measures another
//! liveproof build the same way in the same cluster. The goal (issue 37): 2,000 x 5 in at most 10
//! requests and 150 MB, 100 times faster than the kubectl loop.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use liveproof_testkit::e2e::{ControlPlane, Kubelet};
use liveproof_testkit::registry::{push_multiarch, RegistryServer};

fn option(args: &[String], name: &str, default: usize) -> usize {
    args.windows(2)
        .find(|w| w[0] == name)
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(default)
}

/// Runs `program args`; its wall time, stderr and exit code.
fn timed(program: &Path, args: &[&str]) -> (Duration, String, i32) {
    let start = Instant::now();
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    (
        start.elapsed(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// One run of `program args` under GNU time: its wall time, its peak RSS in kB, stderr and
/// exit code.
fn measured(program: &Path, args: &[&str]) -> (Duration, u64, String, i32) {
    let report = tempfile::NamedTempFile::new().expect("a temporary file");
    let mut time_args = vec![
        "-f",
        "%M",
        "-o",
        report.path().to_str().expect("utf-8"),
        program.to_str().expect("utf-8"),
    ];
    time_args.extend_from_slice(args);
    let (wall, stderr, code) = timed(Path::new("/usr/bin/time"), &time_args);
    let text = std::fs::read_to_string(report.path()).expect("GNU time's report");
    let peak_kb = text
        .lines()
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no peak RSS in GNU time's report: {text}"));
    (wall, peak_kb, stderr, code)
}

/// `runs` runs of `liveproof verify` (each live); prints the median wall time, the requests it
/// counted and the peak RSS; returns the median.
#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn measure_verify(name: &str, binary: &Path, verify: &[&str], runs: usize) -> Duration {
    let mut walls = Vec::new();
    let mut peaks = Vec::new();
    let mut requests = String::new();
    for _ in 0..runs {
        let (wall, peak_kb, stderr, code) = measured(binary, verify);
        assert_eq!(code, 0, "{name} verify is live here:\n{stderr}");
        requests = stderr
            .lines()
            .find(|l| l.contains("API requests"))
            .map(|l| l.trim().trim_start_matches("INFO").trim().to_string())
            .unwrap_or_default();
        walls.push(wall);
        peaks.push(peak_kb);
    }
    walls.sort();
    peaks.sort();
    let median = walls[walls.len() / 2];
    println!(
        "  {name} verify -l (median of {runs})   {:>8.3} s   ({requests}; fastest {:.3} s)",
        median.as_secs_f64(),
        walls[0].as_secs_f64()
    );
    println!(
        "  {name} peak RSS (median of {runs})    {:>8.1} MB  (most {:.1} MB; goal: at most 150 MB)",
        peaks[peaks.len() / 2] as f64 / 1024.0,
        peaks[peaks.len() - 1] as f64 / 1024.0
    );
    median
}

fn deployments(count: usize, pods: usize, image: &str) -> String {
    (0..count)
        .map(|i| {
            format!(
                "apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
  namespace: bench
  labels: {{app.kubernetes.io/part-of: bench}}
spec:
  replicas: {pods}
  selector:
    matchLabels: {{app: svc-{i}}}
  template:
    metadata:
      labels: {{app: svc-{i}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: {image}
"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count = option(&args, "--deployments", 200);
    let pods = option(&args, "--pods", 2);
    let runs = option(&args, "--runs", 5).max(1);
    let hold = option(&args, "--hold", 0);
    let liveproof = PathBuf::from(env!("CARGO_BIN_EXE_liveproof"));
    let kubectl_path = liveproof_testkit::kubectl::kubectl_path();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (plane, registry, kubelet, image, since) = runtime.block_on(async {
        // The controller manager's default 20 requests a second would take 8 to 12 minutes to
        // create 10,000 pods.
        let plane = ControlPlane::start_tuned(&[], &["--kube-api-qps=200", "--kube-api-burst=400"])
            .await
            .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
        let registry = RegistryServer::start();
        let client = plane.client().await.expect("admin client");
        let kubelet = Kubelet::start(
            client,
            registry.client(Default::default()),
            vec![registry.host.clone()],
        )
        .await
        .unwrap_or_else(|e| panic!("kubelet stand-in: {e:#}"));
        push_multiarch(&registry.pusher(), "acme/web", "v1", "build-1").await;
        let image = format!("{}/acme/web:v1", registry.host);
        // Whole seconds, as Kubernetes records them, and a second before anything starts.
        let since = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .expect("rounds")
            .checked_sub(jiff::SignedDuration::from_secs(2))
            .expect("a time");
        (plane, registry, kubelet, image, since.to_string())
    });
    let kc = plane.kubeconfig.to_str().expect("utf-8").to_string();
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        liveproof_testkit::kubectl::run(&plane.kubeconfig, args, stdin);
    };
    kubectl(&["create", "namespace", "bench"], None);
    let started = Instant::now();
    kubectl(
        &["apply", "-f", "-"],
        Some(&deployments(count, pods, &image)),
    );
    kubectl(
        &[
            "-n",
            "bench",
            "wait",
            "--for=condition=Available",
            "deploy",
            "--all",
            "--timeout=600s",
        ],
        None,
    );
    println!(
        "{count} Deployments x {pods} pods on the real API server, Available after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Nothing changes from here on: the stand-in's ticks (a LIST of every pod each 200 ms)
    // would only take CPU from what is measured.
    drop(kubelet);

    let verify = [
        "-v",
        "verify",
        "-l",
        "app.kubernetes.io/part-of=bench",
        "-n",
        "bench",
        "--since",
        &since,
        "--image",
        &image,
        "-o",
        "json",
        "--kubeconfig",
        &kc,
    ];
    let ours = measure_verify("liveproof", &liveproof, &verify, runs);
    // `REAL_API_BEFORE=PATH`: the same runs of another build, in the same cluster.
    if let Some(before) = std::env::var_os("REAL_API_BEFORE") {
        measure_verify("before", Path::new(&before), &verify, runs);
    }

    let script = format!(
        "for i in $(seq 0 {last}); do {k} --kubeconfig {kc} -n bench rollout status deploy/svc-$i --timeout=60s >/dev/null || exit 1; done",
        last = count - 1,
        k = kubectl_path.display(),
    );
    let (theirs, stderr, code) = timed(Path::new("/bin/bash"), &["-c", &script]);
    assert_eq!(code, 0, "the kubectl loop: {stderr}");
    println!(
        "  kubectl rollout status, one per Deployment   {:>8.3} s",
        theirs.as_secs_f64()
    );
    println!(
        "  liveproof answers in 1/{:.0} of the kubectl loop's time (goal: at least 100x)",
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
    if hold > 0 {
        println!("holding the cluster for {hold} s: --kubeconfig {kc} -n bench");
        std::thread::sleep(Duration::from_secs(hold as u64));
    }
    drop(registry);
    drop(plane);
}
