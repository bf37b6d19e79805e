//! `liveproof mcp` driven by a real MCP client: the official MCP Python SDK (PyPI `mcp`, pinned
//! in e2e/peers/python/requirements.txt, installed into a venv by `cargo xtask`) runs tests/mcp_client.py, which starts the binary over stdio,
//! initializes, lists the tools and calls them against the in-process simulator.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;

fn now() -> Timestamp {
    Timestamp::now()
}

/// Runs the SDK client; fails (never skips) when the SDK is missing.
async fn mcp_client(kubeconfig: &str, since: &str, extra: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let python = liveproof_testkit::peers::python().unwrap_or_else(|missing| panic!("{missing}"));
    let probe = tokio::process::Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .await
        .expect("python runs");
    assert!(
        probe.status.success(),
        "the MCP Python SDK is not importable by {}\n{}\n{}",
        python.display(),
        String::from_utf8_lossy(&probe.stderr),
        liveproof_testkit::peers::HINT
    );
    let mut cmd = tokio::process::Command::new(&python);
    cmd.arg(&script)
        .args([
            env!("CARGO_BIN_EXE_liveproof"),
            kubeconfig,
            "--since",
            since,
        ])
        .args(extra)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(300), cmd.output())
        .await
        .expect("the MCP client finished within 300s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "mcp_client.py {extra:?} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(stdout.contains("all MCP checks passed"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Read-only: verify/release_show/stale offered, restart_stale neither listed nor callable;
/// verify of the story's Deployment (old pods, merged 90s ago) is not_live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_verifies_over_mcp() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    mcp_client(
        cluster.kubeconfig(),
        &since,
        &["--expect-verdict", "not_live"],
    )
    .await;
    // Read-only: not one write reached the cluster.
    let requests = cluster.sim.requests().snapshot();
    assert!(
        requests
            .iter()
            .all(|(verb, _, _)| !matches!(verb.as_str(), "patch" | "update" | "create" | "delete")),
        "{requests:?}"
    );
}

/// `--allow-writes` lists restart_stale; its dry run sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_writes_offers_restart_stale() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    mcp_client(
        cluster.kubeconfig(),
        &since,
        &["--expect-verdict", "not_live", "--allow-writes"],
    )
    .await;
    let patches = cluster.sim.requests().count("patch", "/");
    assert_eq!(patches, 0, "a dry run patched something");
}

/// A client that gives a progressToken is sent `notifications/progress` while verify waits
/// (what it is waiting for, as `--wait` prints it on stderr), before the call's result; one
/// that gives none is sent none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_sends_progress_to_a_client_that_asked_for_it() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let arguments = serde_json::json!({
        "targets": ["deploy/inventory"], "kubeconfig": cluster.kubeconfig(),
        "since": "1h", "image": [demo::NEW_IMAGE], "wait_seconds": 4,
    });
    let calls = [
        serde_json::json!({"name": "verify", "arguments": arguments,
                           "_meta": {"progressToken": "wait-1"}}),
        serde_json::json!({"name": "verify", "arguments": arguments}),
    ];
    let (run, replies) = common::mcp_held(&["--kubeconfig", cluster.kubeconfig()], &calls).await;
    for reply in &replies {
        assert_eq!(
            reply["structuredContent"]["verdict"], "not_live",
            "{reply}\n{}",
            run.stderr
        );
    }
    let messages: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let progress: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "no progress sent:\n{}", run.stdout);
    assert!(
        progress
            .iter()
            .all(|m| m["params"]["progressToken"] == "wait-1"),
        "progress for a call that asked for none: {progress:?}"
    );
    assert!(
        progress.iter().any(|m| m["params"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("Deployment apps/inventory"))),
        "says what it waits for: {progress:?}"
    );
    // Progress increases, and all of it comes before that call's result.
    let steps: Vec<f64> = progress
        .iter()
        .filter_map(|m| m["params"]["progress"].as_f64())
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    let position = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        messages.iter().position(pred).expect("present")
    };
    let last_progress = messages
        .iter()
        .rposition(|m| m["method"] == "notifications/progress")
        .expect("progress");
    assert!(
        last_progress < position(&|m| m["id"] == 1),
        "{}",
        run.stdout
    );
}

/// Issue 32, point 9: `version_url` once read any URL from the server's machine and returned
/// the field asked for, so an agent could read cloud metadata or an internal service. Now it
/// reads only what the operator allowed (`--allow-version-url`), compared parsed, redirects
/// included; a loopback server with a credential stands in for the metadata service (no test
/// may reach a real one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_url_reads_only_what_the_operator_allowed() {
    use common::{canned_server, http_response};
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let kc = cluster.kubeconfig();
    let metadata = canned_server(Some(http_response(
        "200 OK",
        &["Content-Type: application/json"],
        br#"{"AccessKeyId":"canary-reach-7d3e","Token":"canary-reach-7d3e"}"#,
    )));
    let location = format!("Location: http://{metadata}/latest/meta-data/iam");
    let redirector = canned_server(Some(http_response("302 Found", &[&location], b"")));
    let call = |url: &str| {
        serde_json::json!({"name": "verify", "arguments": {
            "targets": ["apps/deploy/inventory"], "kubeconfig": kc, "since": "1h",
            "image": [demo::NEW_IMAGE], "version_url": [url], "expect_version": ["1.4.0"],
            "version_json": [".AccessKeyId"]}})
    };
    let direct = format!("http://{metadata}/latest/meta-data/iam");
    let text = |reply: &serde_json::Value| common::tool_text(reply).to_string();

    // Started without --allow-version-url: refused up front, nothing read.
    let (run, replies) = common::mcp(&["--kubeconfig", kc], &[call(&direct)]).await;
    assert_eq!(replies[0]["isError"], true, "{}", replies[0]);
    assert!(
        text(&replies[0]).contains("--allow-version-url"),
        "{}",
        text(&replies[0])
    );
    assert!(!run.stdout.contains("canary-reach"), "{}", run.stdout);

    // Allowed: the redirector's host and port. The metadata stand-in (another port), a
    // userinfo trick naming the allowed host, and a redirect from the allowed one to it: none
    // is read.
    let allowed = format!("http://{redirector}/");
    let tricked = format!("http://{redirector}@{metadata}/latest/meta-data/iam");
    let via = format!("http://{redirector}/next");
    let (run, replies) = common::mcp(
        &["--kubeconfig", kc, "--allow-version-url", &allowed],
        &[call(&direct), call(&tricked), call(&via)],
    )
    .await;
    assert!(!run.stdout.contains("canary-reach"), "{}", run.stdout);
    assert!(!run.stderr.contains("canary-reach"), "{}", run.stderr);
    for reply in &replies[..2] {
        assert_eq!(reply["isError"], true, "{reply}");
        assert!(text(reply).contains("is refused"), "{}", text(reply));
    }
    let report = &replies[2]["structuredContent"];
    let server = report["targets"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["kind"] == "Server"))
        .unwrap_or_else(|| panic!("no Server target: {report}"));
    let evidence = &server["evidence"][0];
    assert_eq!(evidence["status"], "unknown", "{evidence}");
    assert!(
        evidence.to_string().contains("refused: a redirect"),
        "says the redirect was refused: {evidence}"
    );
}

/// A bad `--allow-version-url` stops the server before it serves (exit 2, with a hint), and
/// the entry is shown with its password masked.
#[tokio::test]
async fn a_bad_allow_version_url_is_refused_at_start() {
    let run = common::liveproof()
        .args(&[
            "mcp",
            "--allow-version-url",
            "https://ops:canary-4f1d@status.example.com/v?x=1",
        ])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--allow-version-url"), "{}", run.stderr);
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert!(!run.stderr.contains("canary-4f1d"), "{}", run.stderr);
}

/// `release_show`'s redacted values say they are never shown over MCP (the tool has no
/// `--show-values`); the release show model carries that, nothing patches the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_show_values_over_mcp_say_they_are_never_shown() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let kc = cluster.kubeconfig();
    let call = serde_json::json!({"name": "release_show", "arguments": {
        "name": "inventory", "namespace": "apps", "section": "values", "kubeconfig": kc}});
    let (run, replies) = common::mcp(&["--kubeconfig", kc], &[call]).await;
    assert_eq!(
        replies[0]["isError"], false,
        "{}\n{}",
        replies[0], run.stderr
    );
    let text = common::tool_text(&replies[0]);
    assert!(
        text.starts_with(
            "# values redacted: they are never shown over MCP\nUSER-SUPPLIED VALUES:\n"
        ),
        "{text}"
    );
    assert!(!text.contains("--show-values"), "{text}");
}

/// A crash loop whose last run logged a database URL with its password and a `KEY=value`
/// credential, beside the line that says why it crashed.
fn crash_loop_that_logged_a_secret() -> Vec<serde_json::Value> {
    let path = liveproof_testkit::story::scenarios_dir()
        .join("new-pod-crashloopbackoff-old-pods-serving/cluster.yaml");
    let mut objects = liveproof_gather::offline::read_objects(&path).expect("story");
    let logs = serde_json::json!({"inventory/previous": "connecting to postgres://inventory:canary-logs-5e1f@db.apps.svc:5432/inventory\nDB_PASSWORD=canary-logs-5e1f\npanic: password authentication failed for user \"inventory\""}).to_string();
    let pod = objects
        .iter_mut()
        .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == "inventory-4dxbdm5glx-tqtkw")
        .expect("the crash-looping pod");
    pod["metadata"]["annotations"] = serde_json::json!({liveproof_sim::LOG_ANNOTATION: logs});
    objects
}

/// The verify tool's `logs`: refused unless the operator started the server with
/// `--allow-logs` (nothing is read; the refusal says how to allow it); allowed, the failing
/// container's last lines are in the report, what looks like a credential in them masked as
/// `release show` masks a manifest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_over_mcp() {
    let cluster = SimCluster::start(crash_loop_that_logged_a_secret(), "apps").await;
    let kc = cluster.kubeconfig();
    let call = |logs: Option<u32>| {
        let mut arguments = serde_json::json!({"targets": ["apps/deploy/inventory"],
            "kubeconfig": kc, "since": "2026-07-12T10:00:00Z", "no_registry": true});
        if let Some(n) = logs {
            arguments["logs"] = n.into();
        }
        serde_json::json!({"name": "verify", "arguments": arguments})
    };

    // Not allowed: refused before anything is read, saying how.
    let (run, replies) = common::mcp(&["--kubeconfig", kc], &[call(Some(25))]).await;
    assert_eq!(replies[0]["isError"], true, "{}", replies[0]);
    let text = common::tool_text(&replies[0]);
    assert!(
        text.contains("started without --allow-logs")
            && text.contains("\nhint: ")
            && text.contains("liveproof mcp --allow-logs"),
        "{text}"
    );
    assert_eq!(
        cluster.sim.requests().total(),
        0,
        "a refused call read nothing: {:?}\n{}",
        cluster.sim.requests().snapshot(),
        run.stderr
    );

    // Allowed: the lines, masked; without `logs`, none.
    let (run, replies) = common::mcp(
        &["-vv", "--kubeconfig", kc, "--allow-logs"],
        &[call(Some(25)), call(None)],
    )
    .await;
    assert!(!run.stdout.contains("canary-logs"), "{}", run.stdout);
    assert!(!run.stderr.contains("canary-logs"), "{}", run.stderr);
    let report = &replies[0]["structuredContent"];
    assert_eq!(
        report["verdict"], "not_live",
        "{}\n{}",
        replies[0], run.stderr
    );
    let lines: Vec<&str> = report["targets"][0]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["kind"] == "logs")
        .flat_map(|d| d["lines"].as_array().into_iter().flatten())
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(
        lines,
        [
            "connecting to postgres://inventory:***@db.apps.svc:5432/inventory",
            "DB_PASSWORD=***",
            "panic: password authentication failed for user \"inventory\"",
        ],
        "{report}"
    );
    let without = &replies[1]["structuredContent"]["targets"][0]["diagnostics"];
    assert!(
        without
            .as_array()
            .expect("diagnostics")
            .iter()
            .all(|d| d["kind"] != "logs"),
        "{without}"
    );
}
