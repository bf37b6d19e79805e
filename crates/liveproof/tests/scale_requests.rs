//! The scale benchmark's request counts, held exactly (issue 34: "the scale benchmark keeps its
//! request count"). `benches/scale.rs` measures requests, wall time and memory at thousands of
//! Deployments; these are its cases at test size, counted from the simulator's request log
//! (`SimHandle::requests`), which does not depend on timing: a change that adds a request per
//! namespace, per kind or per page fails here. No timing is asserted.
//!
//! When a change is meant to change a count (a new kind read, a request saved), set the new
//! number here and say why in the commit; re-measure with
//! `cargo test -p liveproof --test scale_requests -- --nocapture` (each case prints its log)
//! or `cargo bench -p liveproof --bench scale` with `SCALE_REQUESTS=1`.

use std::io::Write as _;

use liveproof_sim::{SimHandle, Simulator};
use liveproof_testkit::fleet::{self, CHANGE_AT, IMAGE, SELECTOR};
use liveproof_testkit::{Cli, Run};

/// The simulator's LIST page is liveproof's (`limit=5000`: 10,000 pods in two requests).
const PAGE: usize = 5_000;

async fn serve(objects: Vec<serde_json::Value>) -> SimHandle {
    Simulator::new()
        .with_objects(objects)
        .start()
        .await
        .expect("the simulator starts")
}

/// `liveproof verify -l SELECTOR --since … --image … -o json --kubeconfig KC` and `scope`, as
/// the benchmark runs it.
fn verify(kubeconfig: &std::path::Path, scope: &[&str]) -> Cli {
    Cli::liveproof(env!("CARGO_BIN_EXE_liveproof"))
        .args(&[
            "verify", "-l", SELECTOR, "--since", CHANGE_AT, "--image", IMAGE, "-o", "json",
        ])
        .kubeconfig(kubeconfig)
        .args(scope)
}

/// The requests `sims` served, one line each (`2 x list /api/v1/namespaces/bench/pods`), and
/// their total.
fn log(sims: &[&SimHandle]) -> (u64, String) {
    let mut total = 0;
    let mut lines = String::new();
    for (i, sim) in sims.iter().enumerate() {
        total += sim.requests().total();
        for (verb, path, n) in sim.requests().snapshot() {
            lines.push_str(&format!("  [{i}] {n} x {verb} {path}\n"));
        }
    }
    (total, lines)
}

/// Prints the log (seen with `--nocapture`), then holds the run to its exit code and the
/// requests to `want`.
fn assert_requests(case: &str, run: &Run, exit: i32, sims: &[&SimHandle], want: u64) {
    let (total, lines) = log(sims);
    let _ = writeln!(std::io::stdout(), "{case}: {total} requests\n{lines}");
    assert_eq!(
        run.code, exit,
        "{case}: exit {}\n{}\n{}",
        run.code, run.stderr, lines
    );
    assert_eq!(
        total, want,
        "{case}: {total} requests, {want} when issue 34 began:\n{lines}"
    );
}

/// 1. One namespace with more pods than a LIST page: 1,100 Deployments × 5 pods (5,500 pods,
///    two pages). One LIST per kind (Deployments, StatefulSets, DaemonSets, ReplicaSets,
///    Services, EndpointSlices), the pods in two pages, and the GET that asks whether Argo
///    Rollouts is installed: 9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_namespace_with_more_pods_than_a_page() {
    let (deployments, pods) = (1_100, 5);
    assert!(deployments * pods > PAGE);
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = serve(fleet::deployments("bench", deployments, pods, false)).await;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, "bench")
        .expect("kubeconfig written");
    let run = verify(&kubeconfig, &["-n", "bench"]).run().await;
    assert_requests("one namespace", &run, 0, &[&sim], 9);
    assert_eq!(
        sim.requests()
            .count("list", "/api/v1/namespaces/bench/pods"),
        2,
        "the pods are listed in two pages"
    );
    sim.shutdown().await;
}

/// 2. `-A` over 10 namespaces: 5,100 Deployments (more than a page cluster-wide) of one pod
///    each. Deployments, StatefulSets and DaemonSets listed cluster-wide (the Deployments in
///    two pages), pods, ReplicaSets, Services and EndpointSlices per namespace (40), the
///    Rollout GET: 45.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_namespaces() {
    let (namespaces, per_namespace) = (10, 510);
    assert!(namespaces * per_namespace > PAGE);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut objects = Vec::new();
    for n in 0..namespaces {
        objects.extend(fleet::deployments(
            &format!("team-{n}"),
            per_namespace,
            1,
            false,
        ));
    }
    let sim = serve(objects).await;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, "team-0")
        .expect("kubeconfig written");
    let run = verify(&kubeconfig, &["-A"]).run().await;
    assert_requests("-A over 10 namespaces", &run, 0, &[&sim], 45);
    assert_eq!(
        sim.requests().count("list", "/apis/apps/v1/deployments"),
        2,
        "the Deployments are listed cluster-wide, in two pages"
    );
    sim.shutdown().await;
}

/// 3. A fleet of 3 clusters of 100 Deployments × 5 pods, `--all-contexts`: each cluster read
///    as one namespace is (8 each), 24.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_of_three() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut sims = Vec::new();
    for _ in 0..3 {
        sims.push(serve(fleet::deployments("bench", 100, 5, false)).await);
    }
    let urls: Vec<(String, String)> = sims
        .iter()
        .enumerate()
        .map(|(i, sim)| (format!("cluster-{i}"), sim.url()))
        .collect();
    let contexts: Vec<(&str, &str)> = urls.iter().map(|(c, u)| (c.as_str(), u.as_str())).collect();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, fleet::kubeconfig(&contexts, "bench")).expect("kubeconfig");
    let run = verify(&kubeconfig, &["--all-contexts"]).run().await;
    let all: Vec<&SimHandle> = sims.iter().collect();
    assert_requests("a fleet of 3", &run, 0, &all, 24);
    for sim in &sims {
        assert_eq!(sim.requests().total(), 8, "{:?}", sim.requests().snapshot());
    }
    for sim in sims {
        sim.shutdown().await;
    }
}

/// 4. `--wait` where nothing is live yet (50 Deployments × 5 pods started before the change):
///    the first gather (8), then one watch per kind per namespace, each after a LIST of its own
///    (Deployments, ReplicaSets, pods, Services, EndpointSlices: 5 + 5): 18. Nothing changes
///    meanwhile, so nothing more is asked until `--timeout`; what is read after it (the events
///    a not-live report explains itself with) depends on when the timeout fell and is not
///    counted. The timeout is far longer than the watches take to open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_opens_one_watch_per_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = serve(fleet::deployments("bench", 50, 5, true)).await;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, "bench")
        .expect("kubeconfig written");
    let run = verify(&kubeconfig, &["-n", "bench", "--wait", "--timeout", "10s"])
        .run()
        .await;
    let (_, lines) = log(&[&sim]);
    let _ = writeln!(std::io::stdout(), "--wait:\n{lines}");
    assert_eq!(
        run.code, 1,
        "not live at --timeout\n{}\n{lines}",
        run.stderr
    );
    let counted: Vec<(String, String, u64)> = sim
        .requests()
        .snapshot()
        .into_iter()
        .filter(|(_, path, _)| !path.ends_with("/events"))
        .collect();
    let watches: Vec<&str> = counted
        .iter()
        .filter(|(verb, _, _)| verb == "watch")
        .map(|(_, path, _)| path.as_str())
        .collect();
    assert_eq!(
        watches,
        [
            "/api/v1/namespaces/bench/pods",
            "/api/v1/namespaces/bench/services",
            "/apis/apps/v1/namespaces/bench/deployments",
            "/apis/apps/v1/namespaces/bench/replicasets",
            "/apis/discovery.k8s.io/v1/namespaces/bench/endpointslices",
        ],
        "{lines}"
    );
    let total: u64 = counted.iter().map(|(_, _, n)| n).sum();
    assert_eq!(
        total, 18,
        "--wait: {total} requests before its diagnostics, 18 when issue 34 began:\n{lines}"
    );
    sim.shutdown().await;
}
