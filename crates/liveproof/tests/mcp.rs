//! `liveproof mcp` driven by a real MCP client: the official MCP Python SDK (PyPI `mcp`,
//! installed by `.ci/run`) runs tests/mcp_client.py, which starts the binary over stdio,
//! initializes, lists the tools and calls them against the in-process simulator.

mod common;

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
    let probe = tokio::process::Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .await
        .expect("python3 runs");
    assert!(
        probe.status.success(),
        "the MCP Python SDK is not importable: pip install mcp (the version .ci/run installs)\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let mut cmd = tokio::process::Command::new("python3");
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
        .expect("python3 runs");
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
    let cluster = common::Cluster::start(
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
    let cluster = common::Cluster::start(
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
