//! API faults never lie: a 404 that names no object is not "does not exist" unless discovery
//! says the resource is not served (a missing CRD).

use liveproof_testkit::binary as common;

use common::RunExt;

use liveproof_testkit::SimCluster;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("now")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_without_a_name_is_an_error_not_a_missing_helmrelease() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let args = [
        "verify",
        "helmrelease/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        "1h",
        "-o",
        "json",
    ];
    // The first request is the HelmRelease GET: a proxy answers it with a bare 404.
    cluster.sim.faults().fail_next(1, 404, None);
    let run = common::liveproof().args(&args).run().await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    // No verdict on a read that failed: the error document.
    let doc = run.error_document();
    assert!(doc.error.message.contains("404"), "{doc:?}");
    assert!(
        run.stderr.contains("404") && run.stderr.contains("HelmRelease apps/inventory"),
        "{}",
        run.stderr
    );
    // Without the fault the same command reads the HelmRelease (and judges it not live).
    let clean = common::liveproof().args(&args).run().await;
    assert_eq!(clean.code, 1, "{}{}", clean.stdout, clean.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_that_is_not_installed_still_means_absent() {
    // No HelmRelease kind served at all (no Flux): discovery says so, and the target is absent.
    let objects: Vec<serde_json::Value> =
        demo::story_before(now() - SignedDuration::from_hours(96))
            .into_iter()
            .filter(|o| {
                o["apiVersion"]
                    .as_str()
                    .is_some_and(|v| !v.contains("fluxcd"))
            })
            .collect();
    let cluster = SimCluster::start(objects, demo::NS).await;
    let run = common::liveproof()
        .args(&["verify", "helmrelease/inventory"])
        .on(&cluster)
        .since("1h")
        .json()
        .run()
        .await;
    // Absent is absent: an input error (exit 2) naming it, never a verdict and never live.
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("helmrelease apps/inventory not found"),
        "{}",
        run.stderr
    );
}

/// `verify deploy/x` against whatever answers at `addr` (a canned server): its run.
async fn verify_at(addr: &str, extra: &[&str]) -> common::Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = common::kubeconfig_for(dir.path(), "kubeconfig", &format!("http://{addr}"));
    let mut args = vec![
        "verify",
        "deploy/x",
        "--kubeconfig",
        &kubeconfig,
        "--since",
        "1h",
        "--image",
        "a/b:1",
        "--no-registry",
    ];
    args.extend_from_slice(extra);
    common::liveproof().args(&args).run().await
}

fn status_body(code: u16, reason: &str, message: &str) -> Vec<u8> {
    serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                       "message": message, "reason": reason, "code": code})
    .to_string()
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_status_message_is_cut_and_says_so() {
    let message = "x".repeat(5 << 20);
    let addr = common::canned_server(Some(common::http_response(
        "500 Internal Server Error",
        &["Content-Type: application/json"],
        &status_body(500, "InternalError", &message),
    )));
    let run = verify_at(&addr, &[]).await;
    assert_eq!(run.code, 2, "{}", &run.stderr[..run.stderr.len().min(2000)]);
    assert!(
        run.stderr.len() < 4096,
        "{} bytes on stderr for one error",
        run.stderr.len()
    );
    for said in [
        "answered 500 Internal Server Error reading Deployment apps/x: xxx",
        &format!("… (cut: {} bytes, the first 1024 shown)", message.len()),
        "(reason: InternalError)",
        "hint:",
    ] {
        assert!(run.stderr.contains(said), "`{said}` not in: {}", run.stderr);
    }
    let json = verify_at(&addr, &["-o", "json"]).await;
    assert!(json.stdout.len() < 4096, "{}", json.stdout.len());
    // The most verbose logging shows no body either (kube's own log lines quote it whole).
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = common::kubeconfig_for(dir.path(), "kc", &format!("http://{addr}"));
    let args = [
        "verify",
        "deploy/x",
        "--kubeconfig",
        &kubeconfig,
        "--since",
        "1h",
        "--image",
        "a/b:1",
    ];
    let traced = common::liveproof()
        .args(&args)
        .env("LIVEPROOF_LOG", "trace")
        .run()
        .await;
    assert!(
        traced.stderr.len() < 256 << 10,
        "{} bytes logged",
        traced.stderr.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_error_reads_as_message_reason_and_code() {
    let addr = common::canned_server(Some(common::http_response(
        "500 Internal Server Error",
        &["Content-Type: application/json"],
        &status_body(500, "InternalError", "etcdserver: request timed out"),
    )));
    let run = verify_at(&addr, &[]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "answered 500 Internal Server Error reading Deployment apps/x: etcdserver: request \
             timed out (reason: InternalError)\nhint: "
        ),
        "{}",
        run.stderr
    );
    for debug in ["Status {", "ApiError", "Some(", "details: None"] {
        assert!(!run.stderr.contains(debug), "{debug}: {}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_says_where_to_and_is_not_followed() {
    for (code, status) in [
        (301, "301 Moved Permanently"),
        (302, "302 Found"),
        (307, "307 Temporary Redirect"),
        (308, "308 Permanent Redirect"),
    ] {
        let addr = common::canned_server(Some(common::http_response(
            status,
            &["Location: https://sso:s3cret@login.example/auth?token=s3cret"],
            b"",
        )));
        let run = verify_at(&addr, &[]).await;
        assert_eq!(run.code, 2, "{code}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "answered {status} reading Deployment apps/x, redirecting to \
                 https://sso:***@login.example/auth?token=***: not followed\nhint: "
            )),
            "{code}: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("deserializing") && !run.stderr.contains("s3cret"),
            "{code}: {}",
            run.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_is_not_json_is_named_as_such() {
    let addr = common::canned_server(Some(common::http_response(
        "200 OK",
        &["Content-Type: text/html"],
        b"<html>sign in: password hunter2</html>",
    )));
    let run = verify_at(&addr, &[]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "answered something that is not Kubernetes JSON reading Deployment apps/x: \
             expected value at line 1 column 1\nhint: "
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("deserializing"), "{}", run.stderr);
    // Not even at the most verbose level is the body quoted.
    let verbose = verify_at(&addr, &["-vv"]).await;
    assert!(!verbose.stderr.contains("hunter2"), "{}", verbose.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_too_short_to_read_anything_says_so_and_blames_no_server() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    // 1ns is spent before the first read starts. (1ms is not a test of this: a fast machine
    // reads the simulator in less.)
    for timeout in ["1ns"] {
        let run = common::liveproof()
            .args(&["verify", "deploy/inventory"])
            .on(&cluster)
            .since("1h")
            .args(&["--image", demo::NEW_IMAGE, "--wait", "--timeout", timeout])
            .run()
            .await;
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "--timeout {timeout} ran out before anything could be read from the API server"
            )) && run.stderr.contains("too short"),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("overloaded"), "{}", run.stderr);
    }
}
