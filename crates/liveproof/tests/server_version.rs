//! Seed 000: an upgrade is done only when the server itself reports the new version. A small
//! real HTTP server started by the test plays the service.

use liveproof_testkit::binary as common;

use liveproof_testkit::wait_until_async;

use liveproof_testkit::SimCluster;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;
use liveproof_evidence::{Check, Status, Verdict};

/// Serves `/version` as plain text and `/info` as JSON, reporting whatever `version` holds.
async fn service(version: Arc<Mutex<String>>) -> String {
    service_counted(version, Arc::default()).await
}

/// [`service`], counting the reads of `/version` in `reads`.
async fn service_counted(
    version: Arc<Mutex<String>>,
    reads: Arc<std::sync::atomic::AtomicUsize>,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let text = version.clone();
    let json = version;
    let app = axum::Router::new()
        .route(
            "/version",
            axum::routing::get(move || {
                reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let v = text.lock().map(|v| v.clone()).unwrap_or_default();
                async move { format!("inventory {v} (build 7f3c)") }
            }),
        )
        .route(
            "/info",
            axum::routing::get(move || {
                let v = json.lock().map(|v| v.clone()).unwrap_or_default();
                async move { axum::Json(serde_json::json!({"build": {"version": v}})) }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("now")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_must_report_the_expected_version() {
    let version = Arc::new(Mutex::new("1.3.9".to_string()));
    let base = service(version.clone()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("live.yaml");
    let objects = demo::story_before(now() - SignedDuration::from_hours(96));
    std::fs::write(
        &dump,
        serde_json::to_string(
            &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects}),
        )
        .expect("json"),
    )
    .expect("write");
    let dump = dump.to_str().expect("utf-8").to_string();
    let since = (now() - SignedDuration::from_hours(200)).to_string();
    let url = format!("{base}/version");
    let info = format!("{base}/info");

    // The workload is live by its pods, but the server still reports the old build.
    let run = common::liveproof()
        .args(&[
            "verify",
            "apps/deploy/inventory", // What the workload rolled out (200h after --since): its change, stated (issue 10).
            "--image",
            demo::OLD_IMAGE,
            "--from",
            &dump,
        ])
        .since(&since)
        .args(&["--version-url", &url, "--expect-version", "1.4.0"])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    let server = report
        .targets
        .iter()
        .find(|t| t.kind == "Server")
        .expect("a server report");
    assert_eq!(server.evidence[0].check, Check::ServerVersion);
    assert_eq!(server.evidence[0].status, Status::Fail);
    assert!(
        server.evidence[0].observed.contains("1.3.9"),
        "{:?}",
        server.evidence[0]
    );

    *version.lock().expect("lock") = "1.4.0".into();
    let run = common::liveproof()
        .args(&[
            "verify",
            "apps/deploy/inventory", // What the workload rolled out (200h after --since): its change, stated (issue 10).
            "--image",
            demo::OLD_IMAGE,
            "--from",
            &dump,
        ])
        .since(&since)
        .args(&[
            "--version-url",
            &url,
            "--version-url",
            &info,
            "--expect-version",
            "1.4.0",
            "--version-json",
            ".build..version",
            "--version-json",
            ".build.version",
        ])
        .json()
        .run()
        .await;
    // A path with an empty step is no JSON path: a usage error naming the flag.
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--version-json"), "{}", run.stderr);

    let run = common::liveproof()
        .args(&[
            "verify",
            "apps/deploy/inventory", // What the workload rolled out (200h after --since): its change, stated (issue 10).
            "--image",
            demo::OLD_IMAGE,
            "--from",
            &dump,
        ])
        .since(&since)
        .args(&[
            "--version-url",
            &info,
            "--expect-version",
            "1.4.0",
            "--version-json",
            ".build.version",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.report().verdict, Verdict::Live);

    // A server that does not answer: unknown, never pass.
    let run = common::liveproof()
        .args(&[
            "verify",
            "apps/deploy/inventory", // What the workload rolled out (200h after --since): its change, stated (issue 10).
            "--image",
            demo::OLD_IMAGE,
            "--from",
            &dump,
        ])
        .since(&since)
        .args(&[
            "--version-url",
            "http://127.0.0.1:1/version",
            "--expect-version",
            "1.4.0",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}

/// `--wait` keeps asking the server until it reports the version, with no Kubernetes event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_until_the_server_reports_it() {
    let version = Arc::new(Mutex::new("1.3.9".to_string()));
    let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let base = service_counted(version.clone(), reads.clone()).await;
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_hours(200)).to_string();
    let url = format!("{base}/version");
    let args = [
        "verify",
        "apps/deploy/inventory",
        // What the workload rolled out (200h after --since): its change, stated (issue 10).
        "--image",
        demo::OLD_IMAGE,
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--version-url",
        &url,
        "--expect-version",
        "1.4.0",
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let upgrade = async {
        // The upgrade lands after verify has read the old version (and is waiting).
        wait_until_async("verify reading 1.3.9", Duration::from_secs(60), || {
            reads.load(std::sync::atomic::Ordering::SeqCst) > 0
        })
        .await;
        *version.lock().expect("lock") = "1.4.0".into();
    };
    let (run, ()) = tokio::join!(waiting, upgrade);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("Server"),
        "progress named the server it waited for: {}",
        run.stderr
    );
}

/// A version URL that accepts the connection and never answers, read with a request timeout
/// longer than the wait: the wait ends before the server's version is known. The verdict must
/// not be live (it was: the version check was dropped from a report judged at the deadline,
/// and the workloads alone were live).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_before_the_timeout_is_not_proven() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_hours(200)).to_string();
    let url = format!("http://{addr}/version");
    let args = [
        "verify",
        "apps/deploy/inventory",
        "--image",
        demo::OLD_IMAGE,
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--version-url",
        &url,
        "--expect-version",
        "1.4.0",
        "--request-timeout",
        "120s",
        "--wait",
        "--timeout",
        "6s",
        "-o",
        "json",
    ];
    let run = common::liveproof().args(&args).run().await;
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    let server = report["targets"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["kind"] == "Server"))
        .unwrap_or_else(|| panic!("no Server target in {report:#}"));
    assert_eq!(server["verdict"], "unproven", "{server:#}");
    assert_eq!(server["evidence"][0]["status"], "unknown", "{server:#}");
    assert_eq!(report["verdict"], "unproven", "{report:#}");
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}
