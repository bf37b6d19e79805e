//! Scale, in figures (never timed assertions): the requests, wall time and peak memory of one
//! `liveproof verify` over thousands of Deployments, against a kubectl loop reading the same
//! objects (per Deployment: `get deploy`, `get rs -l`, `get pods -l`), on the same simulated
//! cluster in the same run.
//!
//! Run: `cargo bench -p liveproof --bench scale` (needs GNU time, `apt-get install time`, and
//! for the `one` case's kubectl loop the real kubectl, `cargo xtask peers` builds it, as the
//! tests do; the other cases run without it). Options:
//! `-- --deployments N --pods M --kubectl K` (the kubectl loop over the first K Deployments;
//! default all of them: about 6,000 kubectl runs; 0: no loop), `--wait-for S` (the `--timeout`
//! of the `--wait` case; default 5), `--case one,all,wait,fleet,latency,rollout` (the
//! cases to run; default all but rollout). `SCALE_WRAP=heaptrack` runs liveproof under that program
//! (a heap profiler, to see where a figure comes from).
//!
//! Cases: (1) N×M in one namespace, liveproof and kubectl; (2) 20,000 pods over 10 namespaces
//! with `-A`; (3) `--wait` on a cluster where nothing is live yet: the watches it holds;
//! (4) a fleet of 5 clusters of 400 Deployments each, `--all-contexts`; (5) latency: one
//! cluster answering every request 300 ms late, then a fleet of 10 such clusters (issue 21's
//! goal: the fleet within 1.5x the one); (6) rollout: `--wait` while every Deployment rolls
//! out once on the simulator (its controllers on): peak RSS, CPU seconds (user + sys), the
//! delay between the last new pod turning Ready and `--wait` returning, the pod events.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use liveproof_sim::{SimHandle, Simulator};
use liveproof_testkit::fleet::{self, CHANGE_AT, IMAGE, SELECTOR};

struct Measured {
    requests: u64,
    wall: Duration,
    peak_kib: u64,
    code: i32,
}

/// Runs `program args` under GNU time: its wall time, peak RSS (the largest process of the
/// run, for a shell loop the largest kubectl) and the requests the simulator saw meanwhile.
fn measure(sim: &SimHandle, program: &Path, args: &[&str]) -> Measured {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("time");
    let before = sim.requests().total();
    let start = Instant::now();
    let mut time = Command::new("/usr/bin/time");
    time.arg("-f").arg("%M").arg("-o").arg(&report);
    if let Some(wrap) = std::env::var_os("SCALE_WRAP").filter(|_| program.ends_with("liveproof")) {
        time.arg(wrap);
    }
    let status = time
        .arg(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("GNU time runs (apt-get install time)");
    let wall = start.elapsed();
    let peak_kib = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
        .unwrap_or(0);
    Measured {
        requests: sim.requests().total() - before,
        wall,
        peak_kib,
        code: status.code().unwrap_or(-1),
    }
}

async fn serve(objects: Vec<serde_json::Value>, dir: &Path, ns: &str) -> (SimHandle, PathBuf) {
    let sim = Simulator::new()
        .with_objects(objects)
        .start()
        .await
        .expect("simulator");
    let kubeconfig = dir.join(format!("{ns}.kubeconfig"));
    sim.write_kubeconfig(&kubeconfig, ns).expect("kubeconfig");
    (sim, kubeconfig)
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn row(what: &str, m: &Measured) {
    println!(
        "  {what:<44} {:>7} requests {:>9.2} s {:>8.1} MB peak RSS   (exit {})",
        m.requests,
        m.wall.as_secs_f64(),
        m.peak_kib as f64 / 1024.0,
        m.code
    );
}

/// Whether a container of `pod` runs `image`.
fn runs(pod: &k8s_openapi::api::core::v1::Pod, image: &str) -> bool {
    pod.spec.as_ref().is_some_and(|s| {
        s.containers
            .iter()
            .any(|c| c.image.as_deref() == Some(image))
    })
}

/// `liveproof verify -l SELECTOR --since … --image … -o json --kubeconfig KC` and `scope`.
fn verify<'a>(kubeconfig: &'a str, scope: &[&'a str]) -> Vec<&'a str> {
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
        kubeconfig,
    ];
    args.extend_from_slice(scope);
    args
}

fn option(args: &[String], name: &str, default: usize) -> usize {
    args.windows(2)
        .find(|w| w[0] == name)
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(default)
}

struct Bench {
    deployments: usize,
    pods: usize,
    kubectl_over: usize,
    /// `--timeout` of the `--wait` case, in seconds.
    wait_for: usize,
    liveproof: PathBuf,
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let deployments = option(&args, "--deployments", 2000);
    let cases = args
        .windows(2)
        .find(|w| w[0] == "--case")
        .map_or("one,all,wait,fleet,latency", |w| w[1].as_str())
        .to_string();
    let bench = Bench {
        deployments,
        pods: option(&args, "--pods", 5),
        kubectl_over: option(&args, "--kubectl", deployments).min(deployments),
        wait_for: option(&args, "--wait-for", 5),
        liveproof: PathBuf::from(env!("CARGO_BIN_EXE_liveproof")),
        runtime: tokio::runtime::Runtime::new().expect("runtime"),
        dir: tempfile::tempdir().expect("tempdir"),
    };
    for case in cases.split(',') {
        match case {
            "one" => bench.one_namespace(),
            "all" => bench.all_namespaces(),
            "wait" => bench.wait(),
            "fleet" => {
                bench.fleet(5, 400, Duration::ZERO);
            }
            "latency" => bench.latency(),
            "rollout" => bench.rollout(),
            other => {
                println!("no case {other:?}: one, all, wait, fleet, latency or rollout");
                std::process::exit(2);
            }
        }
    }
}

impl Bench {
    /// 1. One namespace, liveproof against the kubectl loop.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn one_namespace(&self) {
        let (deployments, pods, kubectl_over) = (self.deployments, self.pods, self.kubectl_over);
        let (sim, kubeconfig) = self.runtime.block_on(serve(
            fleet::deployments("bench", deployments, pods, false),
            self.dir.path(),
            "bench",
        ));
        let kc = kubeconfig.to_str().expect("utf-8");
        println!(
            "{deployments} Deployments x {pods} pods ({} pods) in one namespace:",
            deployments * pods
        );
        let ours = measure(&sim, &self.liveproof, &verify(kc, &["-n", "bench"]));
        row("liveproof verify -l (one run)", &ours);
        if kubectl_over == 0 {
            self.runtime.block_on(sim.shutdown());
            return;
        }
        // Only this case runs kubectl: the others run without the peers built.
        let kubectl = liveproof_testkit::kubectl::kubectl_path();
        let script = format!(
            "for i in $(seq 0 {last}); do \
               {k} --kubeconfig {kc} -n bench get deploy svc-$i -o json >/dev/null; \
               {k} --kubeconfig {kc} -n bench get rs -l app=svc-$i -o json >/dev/null; \
               {k} --kubeconfig {kc} -n bench get pods -l app=svc-$i -o json >/dev/null; \
             done",
            last = kubectl_over.saturating_sub(1),
            k = kubectl.display(),
        );
        let theirs = measure(&sim, Path::new("/bin/bash"), &["-c", &script]);
        row(
            &format!("kubectl loop over {kubectl_over} Deployments"),
            &theirs,
        );
        if ours.requests > 0 {
            let scale = deployments as f64 / kubectl_over as f64;
            println!(
                "  ratio (kubectl loop / liveproof, scaled to {deployments}): {:.0}x the requests, {:.1}x the wall time",
                theirs.requests as f64 * scale / ours.requests as f64,
                theirs.wall.as_secs_f64() * scale / ours.wall.as_secs_f64()
            );
        }
        self.runtime.block_on(sim.shutdown());
    }

    /// 2. 20,000 pods over 10 namespaces, -A.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn all_namespaces(&self) {
        let mut objects = Vec::new();
        for n in 0..10 {
            objects.extend(fleet::deployments(&format!("team-{n}"), 400, 5, false));
        }
        let (sim, kubeconfig) = self
            .runtime
            .block_on(serve(objects, self.dir.path(), "team-0"));
        let kc = kubeconfig.to_str().expect("utf-8");
        println!("4,000 Deployments x 5 pods (20,000 pods) over 10 namespaces:");
        let all = measure(&sim, &self.liveproof, &verify(kc, &["-A"]));
        row("liveproof verify -l -A (one run)", &all);
        self.runtime.block_on(sim.shutdown());
    }

    /// 3. --wait where nothing is live yet: how many watches it holds, and its memory
    ///    against the one-shot verify of the same cluster.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn wait(&self) {
        let deployments = self.deployments;
        let (sim, kubeconfig) = self.runtime.block_on(serve(
            fleet::deployments("bench", deployments, self.pods, true),
            self.dir.path(),
            "bench",
        ));
        let kc = kubeconfig.to_str().expect("utf-8");
        println!("{deployments} Deployments, none live yet:");
        let once = measure(&sim, &self.liveproof, &verify(kc, &["-n", "bench"]));
        row("liveproof verify -l (one run)", &once);
        sim.requests().reset();
        let timeout = format!("{}s", self.wait_for);
        let waited = measure(
            &sim,
            &self.liveproof,
            &verify(kc, &["-n", "bench", "--wait", "--timeout", &timeout]),
        );
        let log = sim.requests().snapshot();
        let watch_requests: Vec<&(String, String, u64)> =
            log.iter().filter(|(verb, _, _)| verb == "watch").collect();
        let watches: u64 = watch_requests.iter().map(|(_, _, n)| n).sum();
        let watched: std::collections::BTreeSet<&str> = watch_requests
            .iter()
            .map(|(_, path, _)| path.split('?').next().unwrap_or_default())
            .collect();
        row(
            &format!("liveproof verify -l --wait --timeout {timeout}"),
            &waited,
        );
        println!(
            "  watch requests: {watches} over {} distinct watches ({}): per namespace, not per target",
            watched.len(),
            watched.iter().copied().collect::<Vec<_>>().join(", ")
        );
        self.runtime.block_on(sim.shutdown());
    }

    /// A fleet of `clusters` clusters of `deployments` Deployments each, every request
    /// answered `latency` late, `--all-contexts`.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn fleet(&self, clusters: usize, deployments: usize, latency: Duration) -> Measured {
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
            sim.faults().set_latency(latency);
        }
        let urls: Vec<(String, String)> = sims
            .iter()
            .enumerate()
            .map(|(i, sim)| (format!("cluster-{i}"), sim.url()))
            .collect();
        let contexts: Vec<(&str, &str)> =
            urls.iter().map(|(c, u)| (c.as_str(), u.as_str())).collect();
        let kubeconfig = self.dir.path().join(format!("fleet-{clusters}.kubeconfig"));
        std::fs::write(&kubeconfig, fleet::kubeconfig(&contexts, "bench")).expect("kubeconfig");
        let before: u64 = sims.iter().map(|s| s.requests().total()).sum();
        let scope: &[&str] = if clusters > 1 {
            &["--all-contexts"]
        } else {
            &[]
        };
        let mut timed = measure(
            &sims[0],
            &self.liveproof,
            &verify(kubeconfig.to_str().expect("utf-8"), scope),
        );
        timed.requests = sims.iter().map(|s| s.requests().total()).sum::<u64>() - before;
        println!(
            "{clusters} cluster(s) x {deployments} Deployments x 5 pods, {} ms per request:",
            latency.as_millis()
        );
        row(&format!("liveproof verify -l {}", scope.join(" ")), &timed);
        if std::env::var_os("SCALE_REQUESTS").is_some() {
            for (verb, path, n) in sims[0].requests().snapshot() {
                println!("    {n} x {verb} {path}");
            }
        }
        for sim in sims {
            self.runtime.block_on(sim.shutdown());
        }
        timed
    }

    /// 5. Latency: a fleet of 10 slow clusters against one of them.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn latency(&self) {
        let slow = Duration::from_millis(300);
        let one = self.fleet(1, 100, slow);
        let ten = self.fleet(10, 100, slow);
        println!(
            "  a fleet of 10 takes {:.2}x the time of one cluster (goal: at most 1.5x)",
            ten.wall.as_secs_f64() / one.wall.as_secs_f64()
        );
    }

    /// 6. Rollout: `--wait` started on N stale Deployments, then every Deployment's image
    ///    patched through the API (only API writes roll on the simulator); a pod watcher here
    ///    records when the last new pod is Ready.
    #[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
    fn rollout(&self) {
        let (deployments, pods) = (self.deployments, self.pods);
        let new_image = "registry.local/bench-app:2";
        let sim = self.runtime.block_on(async {
            Simulator::new()
                .with_objects(fleet::deployments("bench", deployments, pods, true))
                // Some 5 events per pod: history enough that a watch resumes, not lists again.
                .with_history_limit(deployments * pods * 6)
                .with_controllers()
                .start()
                .await
                .expect("simulator")
        });
        let kubeconfig = self.dir.path().join("rollout.kubeconfig");
        sim.write_kubeconfig(&kubeconfig, "bench")
            .expect("kubeconfig");
        let kc = kubeconfig.to_str().expect("utf-8");
        let since = jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::from_secs(1))
            .expect("a time")
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let report = self.dir.path().join("rollout.time");
        let stderr = self.dir.path().join("rollout.stderr");
        let args = [
            "verify",
            "-l",
            SELECTOR,
            "-n",
            "bench",
            "--since",
            &since,
            "--image",
            new_image,
            "--wait",
            "--timeout",
            "10m",
            "-o",
            "json",
            "-v",
            "--kubeconfig",
            kc,
        ];
        let mut time = Command::new("/usr/bin/time");
        time.arg("-f").arg("%M %U %S %e").arg("-o").arg(&report);
        if let Some(wrap) = std::env::var_os("SCALE_WRAP") {
            time.arg(wrap);
        }
        let mut child = time
            .arg(&self.liveproof)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("GNU time runs (apt-get install time)");
        let started = Instant::now();
        let (exited, last_ready, events, ready) = self.runtime.block_on(async {
            use futures::{StreamExt as _, TryStreamExt as _};
            use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
            use kube::api::{Api, Patch, PatchParams};
            use kube::runtime::{watcher, WatchStreamExt as _};
            let config = kube::Config::from_custom_kubeconfig(
                kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig"),
                &kube::config::KubeConfigOptions::default(),
            )
            .await
            .expect("kube config");
            let client = kube::Client::try_from(config).expect("client");
            // The pod watcher: every event counted, the 10,000th new Ready pod timed.
            let state = std::sync::Arc::new(std::sync::Mutex::new((
                0u64,
                std::collections::HashSet::<String>::new(),
                None::<Instant>,
            )));
            let watched = state.clone();
            let want = deployments * pods;
            let pod_api: Api<Pod> = Api::namespaced(client.clone(), "bench");
            let pod_list = pod_api.clone();
            let watch = tokio::spawn(async move {
                let mut stream = watcher(pod_api, watcher::Config::default())
                    .default_backoff()
                    .boxed();
                let mut errors = 0;
                loop {
                    let event = match stream.try_next().await {
                        Ok(Some(event)) => event,
                        Ok(None) => break,
                        Err(e) => {
                            errors += 1;
                            if errors <= 3 {
                                println!("  the bench's pod watch: {e} (it goes on)");
                            }
                            continue;
                        }
                    };
                    let watcher::Event::Apply(pod) = event else {
                        continue;
                    };
                    let mut st = watched.lock().expect("lock");
                    st.0 += 1;
                    let new = runs(&pod, new_image);
                    let ready = pod.status.as_ref().is_some_and(|s| {
                        s.conditions
                            .iter()
                            .flatten()
                            .any(|c| c.type_ == "Ready" && c.status == "True")
                    }) && pod.metadata.deletion_timestamp.is_none();
                    let name = pod.metadata.name.unwrap_or_default();
                    if new && ready && st.1.insert(name) && st.1.len() == want {
                        st.2 = Some(Instant::now());
                    }
                }
            });
            // The 5 watches of --wait are up: roll every Deployment.
            loop {
                let log = sim.requests().snapshot();
                let paths: std::collections::BTreeSet<&str> = log
                    .iter()
                    .filter(|(verb, _, _)| verb == "watch")
                    .map(|(_, path, _)| path.split('?').next().unwrap_or_default())
                    .collect();
                if paths.len() >= 5 || started.elapsed() > Duration::from_secs(600) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let deploy_api: Api<Deployment> = Api::namespaced(client.clone(), "bench");
            futures::stream::iter(0..deployments)
                .map(|d| {
                    let api = deploy_api.clone();
                    async move {
                        let patch = serde_json::json!({"spec": {"template": {"spec": {
                            "containers": [{"name": "app", "image": new_image}]}}}});
                        api.patch(
                            &format!("svc-{d}"),
                            &PatchParams::default(),
                            &Patch::Strategic(patch),
                        )
                        .await
                        .expect("patch");
                    }
                })
                .buffer_unordered(32)
                .collect::<Vec<()>>()
                .await;
            let exited = loop {
                if child.try_wait().expect("wait").is_some() {
                    break Instant::now();
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            };
            // The watcher may be a beat behind the liveproof that already returned.
            tokio::time::sleep(Duration::from_millis(500)).await;
            watch.abort();
            // What the cluster holds when --wait returned, read afresh.
            let listed = pod_list
                .list(&kube::api::ListParams::default())
                .await
                .map(|pods| {
                    pods.items
                        .iter()
                        .filter(|p| p.metadata.deletion_timestamp.is_none() && runs(p, new_image))
                        .count()
                });
            println!("  new pods the cluster holds when --wait returned: {listed:?}");
            let st = state.lock().expect("lock");
            (exited, st.2, st.0, st.1.len())
        });
        let status = child.wait().expect("wait");
        let time = std::fs::read_to_string(&report).unwrap_or_default();
        let figures: Vec<f64> = time
            .lines()
            .last()
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        let [peak_kib, user, sys, wall] = figures[..] else {
            println!("  no figures from GNU time: {time}");
            return;
        };
        println!(
            "{deployments} Deployments x {pods} pods, --wait while every Deployment rolls out once:"
        );
        println!(
            "  peak RSS {:.1} MB, CPU {:.2} s (user {user:.2} + sys {sys:.2}), wall {wall:.1} s, exit {}",
            peak_kib / 1024.0,
            user + sys,
            status.code().unwrap_or(-1)
        );
        match last_ready {
            Some(at) => println!(
                "  last new pod Ready -> --wait returned: {:.2} s (goal: at most 2 s); {events} pod events seen",
                exited.saturating_duration_since(at).as_secs_f64()
            ),
            None => println!("  only {ready} of {} new pods Ready before --wait returned; {events} pod events seen", deployments * pods),
        }
        let log = std::fs::read_to_string(&stderr).unwrap_or_default();
        for line in log
            .lines()
            .filter(|l| l.contains("judged") || l.contains("snapshot"))
            .take(5)
        {
            println!("  {line}");
        }
        if !status.success() {
            println!("  liveproof's stderr ended:");
            let lines: Vec<&str> = log.lines().collect();
            for line in &lines[lines.len().saturating_sub(15)..] {
                println!("    {line}");
            }
        }
        self.runtime.block_on(sim.shutdown());
    }
}
