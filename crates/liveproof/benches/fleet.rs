//! Wide fleets, in figures (never timed assertions): the wall time and peak RSS of one
//! `liveproof verify -l … --all-contexts` over many clusters whose API servers answer every
//! request late, against the same verify of one such cluster (issue 37's goal: 100 clusters
//! at 300 ms within 1.5x one cluster's time and 300 MB), then the same fleet with one more
//! cluster that accepts every request and never answers, under `--request-timeout`: it is
//! bounded by that timeout and reported, and holds no other cluster.
//!
//! Run: `cargo bench -p liveproof --bench fleet` (needs GNU time, `apt-get install time`).
//! Options: `-- --clusters N` (default 100), `--per-cluster D` (Deployments per cluster,
//! default 100, each with 5 pods), `--latency-ms L` (default 300), `--hung-timeout S` (the
//! `--request-timeout` of the run with a hung cluster, default 2), `--case one,fleet,hung,small`
//! (default all: `small` repeats one and fleet with 10 Deployments per cluster, a fleet whose
//! time is the latency's rather than the CPU's). The simulators run in this process, on the
//! same cores as liveproof: on a small machine they take CPU liveproof's clusters would use
//! (the bench prints how much). `FLEET_WRAP="perf record -g -o perf.data"` runs liveproof
//! under that command (a profiler); `FLEET_STDERR=1` shows liveproof's stderr.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use liveproof_sim::{SimHandle, Simulator};
use liveproof_testkit::fleet::{self, CHANGE_AT, IMAGE, SELECTOR};

struct Measured {
    /// Wall time, as GNU time counts it.
    wall: f64,
    /// User and system CPU time.
    cpu: f64,
    peak_kib: u64,
    code: i32,
    stdout: String,
}

/// Runs liveproof `args` under GNU time (`%M %e %U %S`): its peak RSS, wall and CPU time and
/// exit code.
fn measure(program: &Path, args: &[&str]) -> Measured {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("time");
    let mut time = Command::new("/usr/bin/time");
    time.arg("-f").arg("%M %e %U %S").arg("-o").arg(&report);
    if let Ok(wrap) = std::env::var("FLEET_WRAP") {
        time.args(wrap.split_whitespace());
    }
    let output = time
        .arg(program)
        .args(args)
        .stderr(if std::env::var_os("FLEET_STDERR").is_some() {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::null()
        })
        .output()
        .expect("GNU time runs (apt-get install time)");
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let mut fields = text
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string);
    let peak_kib = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
    let wall = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0.0);
    let cpu = fields.filter_map(|f| f.parse::<f64>().ok()).sum::<f64>();
    Measured {
        wall,
        cpu,
        peak_kib,
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    }
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn row(what: &str, m: &Measured) {
    println!(
        "  {what:<40} {:>8.2} s {:>7.2} s CPU {:>8.1} MB peak RSS   (exit {})",
        m.wall,
        m.cpu,
        m.peak_kib as f64 / 1024.0,
        m.code
    );
}

fn option(args: &[String], name: &str, default: usize) -> usize {
    args.windows(2)
        .find(|w| w[0] == name)
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(default)
}

struct Bench {
    clusters: usize,
    per_cluster: usize,
    latency: Duration,
    hung_timeout: usize,
    liveproof: PathBuf,
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases = args
        .windows(2)
        .find(|w| w[0] == "--case")
        .map_or("one,fleet,hung,small", |w| w[1].as_str())
        .to_string();
    let bench = Bench {
        clusters: option(&args, "--clusters", 100),
        per_cluster: option(&args, "--per-cluster", 100),
        latency: Duration::from_millis(option(&args, "--latency-ms", 300) as u64),
        hung_timeout: option(&args, "--hung-timeout", 2),
        liveproof: PathBuf::from(env!("CARGO_BIN_EXE_liveproof")),
        runtime: tokio::runtime::Runtime::new().expect("runtime"),
        dir: tempfile::tempdir().expect("tempdir"),
    };
    let mut one = None;
    let mut fleet = None;
    for case in cases.split(',') {
        match case {
            "one" => one = Some(bench.run(1, bench.per_cluster, false)),
            "fleet" => {
                let many = bench.run(bench.clusters, bench.per_cluster, false);
                bench.ratio(one.as_ref(), &many, "the fleet");
                fleet = Some(many);
            }
            "hung" => {
                let hung = bench.run(bench.clusters, bench.per_cluster, true);
                if let Some(fleet) = &fleet {
                    println!(
                        "  the hung cluster adds {:.2} s to the fleet's time (its --request-timeout: {} s)",
                        hung.wall - fleet.wall,
                        bench.hung_timeout
                    );
                }
            }
            "small" => {
                let first = bench.run(1, 10, false);
                let many = bench.run(bench.clusters, 10, false);
                bench.ratio(Some(&first), &many, "the fleet of small clusters");
            }
            other => {
                println!("no case {other:?}: one, fleet, hung or small");
                std::process::exit(2);
            }
        }
    }
}

impl Bench {
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn ratio(&self, one: Option<&Measured>, many: &Measured, what: &str) {
        if let Some(one) = one.filter(|one| one.wall > 0.0) {
            println!(
                "  {what} takes {:.2}x the time of one cluster and {:.1}x its CPU (goal: at most 1.5x the time, and 300 MB)",
                many.wall / one.wall,
                many.cpu / one.cpu.max(0.01)
            );
        }
    }

    /// `clusters` simulated clusters of `deployments` Deployments (5 pods each), every request
    /// answered `self.latency` late, verified with `--all-contexts` (one cluster: its one
    /// context); with `hung`, one more context whose server never answers, and
    /// `--request-timeout` the bench's `--hung-timeout`.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn run(&self, clusters: usize, deployments: usize, hung: bool) -> Measured {
        let sims: Vec<SimHandle> = (0..clusters)
            .map(|_| {
                self.runtime.block_on(async {
                    Simulator::new()
                        .with_objects(fleet::deployments("bench", deployments, 5, false))
                        .start()
                        .await
                        .expect("simulator")
                })
            })
            .collect();
        for sim in &sims {
            sim.faults().set_latency(self.latency);
        }
        let mut contexts: Vec<(String, String)> = sims
            .iter()
            .enumerate()
            .map(|(i, sim)| (format!("cluster-{i}"), sim.url()))
            .collect();
        let silent =
            hung.then(|| liveproof_testkit::flood::serve(liveproof_testkit::flood::Answer::Silent));
        if let Some(url) = &silent {
            contexts.push(("cluster-hung".to_string(), url.clone()));
        }
        let named: Vec<(&str, &str)> = contexts
            .iter()
            .map(|(c, u)| (c.as_str(), u.as_str()))
            .collect();
        let kubeconfig = self.dir.path().join("fleet.kubeconfig");
        std::fs::write(&kubeconfig, fleet::kubeconfig(&named, "bench")).expect("kubeconfig");
        let timeout = format!("{}s", self.hung_timeout);
        let mut args = vec![
            "verify",
            "-l",
            SELECTOR,
            "--since",
            CHANGE_AT,
            "--image",
            IMAGE,
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
        ];
        if contexts.len() > 1 {
            args.push("--all-contexts");
        }
        if hung {
            args.extend(["--request-timeout", &timeout]);
        }
        let before = own_cpu();
        let measured = measure(&self.liveproof, &args);
        let simulators = own_cpu() - before;
        println!(
            "{clusters} cluster(s){} x {deployments} Deployments x 5 pods, {} ms per request:",
            if hung {
                format!(" + 1 that never answers (--request-timeout {timeout})")
            } else {
                String::new()
            },
            self.latency.as_millis()
        );
        row(
            &format!(
                "liveproof verify -l {}",
                if contexts.len() > 1 {
                    "--all-contexts"
                } else {
                    ""
                }
            ),
            &measured,
        );
        println!("    the simulators (this process, the same cores) took {simulators:.2} s CPU meanwhile");
        summarize(&measured.stdout, silent.as_deref());
        for sim in sims {
            self.runtime.block_on(sim.shutdown());
        }
        measured
    }
}

/// The CPU time this process (the simulators) has used, user and system, in seconds.
fn own_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's name in parentheses: utime and stime are the 12th and 13th fields.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// How many clusters were judged what, from the report; the hung cluster's error.
#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn summarize(stdout: &str, silent: Option<&str>) {
    let Ok(report) = serde_json::from_str::<serde_json::Value>(stdout) else {
        println!("    (no JSON report)");
        return;
    };
    let Some(clusters) = report["clusters"].as_array() else {
        println!("    verdict {}", report["verdict"]);
        return;
    };
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for cluster in clusters {
        let verdict = cluster["verdict"].as_str().unwrap_or("?");
        let what = if cluster["error"].is_string() {
            format!("{verdict} (error)")
        } else {
            verdict.to_string()
        };
        *counts.entry(what).or_default() += 1;
    }
    println!(
        "    fleet verdict {}, clusters: {counts:?}",
        report["verdict"]
    );
    let mut errors = std::collections::BTreeMap::<String, usize>::new();
    for cluster in clusters.iter().filter(|c| c["context"] != "cluster-hung") {
        if let Some(error) = cluster["error"].as_str() {
            // The server's address aside, errors of one kind read alike.
            let first = error.lines().next().unwrap_or_default();
            let kind = match first.split_once("127.0.0.1:") {
                Some((before, after)) => format!(
                    "{before}…{}",
                    after.trim_start_matches(|c: char| c.is_ascii_digit())
                ),
                None => first.to_string(),
            };
            *errors.entry(kind).or_default() += 1;
        }
    }
    for (error, n) in errors {
        println!("    {n} x {error}");
    }
    if silent.is_some() {
        let error = clusters
            .iter()
            .find(|c| c["context"] == "cluster-hung")
            .and_then(|c| c["error"].as_str())
            .unwrap_or("(no error)");
        println!("    the hung cluster: {error}");
    }
}
