//! `liveproof sim`'s fault injection, through the real binary: each flag does what `--help`
//! says, bad values are refused naming the flag, and `-vv` logs every request served.

use liveproof_testkit::binary as common;

use liveproof_testkit::wait_until_async;

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A running `liveproof sim --demo ARGS…`; killed on drop.
struct Sim {
    child: tokio::process::Child,
    _dir: tempfile::TempDir,
    kubeconfig: std::path::PathBuf,
}

impl Sim {
    async fn start(args: &[&str]) -> Sim {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
            .args(["sim", "--demo", "--kubeconfig-out"])
            .arg(&kubeconfig)
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("LIVEPROOF_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("liveproof sim starts");
        // Written before the listener is asked for: wait for the whole file, then for the
        // server it names to answer.
        wait_until_async(
            "liveproof sim writing its kubeconfig",
            Duration::from_secs(30),
            || std::fs::read_to_string(&kubeconfig).is_ok_and(|text| text.contains("token:")),
        )
        .await;
        let sim = Sim {
            child,
            _dir: dir,
            kubeconfig,
        };
        let addr = sim.addr();
        wait_until_async(
            "liveproof sim accepting connections",
            Duration::from_secs(30),
            || std::net::TcpStream::connect(&addr).is_ok(),
        )
        .await;
        sim
    }
}

impl liveproof_testkit::cli::Kubeconfig for Sim {
    fn kubeconfig_path(&self) -> &std::path::Path {
        &self.kubeconfig
    }
}

impl Sim {
    /// `host:port` the kubeconfig points at.
    fn addr(&self) -> String {
        let text = std::fs::read_to_string(&self.kubeconfig).expect("kubeconfig");
        let url = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: "))
            .expect("server line");
        url.trim_start_matches("http://").to_owned()
    }

    /// Stops the simulator; what it wrote on stderr.
    async fn stop(mut self) -> String {
        self.child.start_kill().expect("kill");
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), pipe.read_to_string(&mut stderr))
                .await;
        }
        let _ = self.child.wait().await;
        stderr
    }
}

/// One raw HTTP/1.1 GET (Connection: close); the whole response, or what came within `limit`.
async fn raw_get(addr: &str, path: &str, limit: Duration) -> (String, bool) {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer liveproof-sim\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut buf = Vec::new();
    let ended = tokio::time::timeout(limit, stream.read_to_end(&mut buf))
        .await
        .is_ok();
    (String::from_utf8_lossy(&buf).into_owned(), ended)
}

#[tokio::test]
async fn bad_fault_values_exit_2_naming_the_flag() {
    for (flag, value) in [
        ("--fail-requests", "3"),
        ("--fail-requests", "x:503"),
        ("--fail-requests", "0:503"),
        ("--fail-requests", "3:200"),
        ("--latency", "soon"),
        ("--latency", "=-2s"),
        ("--close-watches-after", "0"),
        ("--close-watches-after", "many"),
    ] {
        // `=` joins a value that starts with `-` to its flag.
        let (flag_arg, value_arg);
        let args: Vec<&str> = if let Some(v) = value.strip_prefix('=') {
            flag_arg = format!("{flag}={v}");
            vec!["sim", "--demo", &flag_arg]
        } else {
            value_arg = value;
            vec!["sim", "--demo", flag, value_arg]
        };
        let run = common::liveproof().args(&args).run().await;
        assert_eq!(run.code, 2, "{flag} {value}: {}", run.stderr);
        assert!(run.stderr.contains(flag), "{flag} {value}: {}", run.stderr);
    }
}

#[tokio::test]
async fn help_says_what_each_fault_flag_does() {
    let run = common::liveproof().args(&["sim", "--help"]).run().await;
    assert_eq!(run.code, 0);
    for flag in [
        "--latency",
        "--fail-requests",
        "--close-watches-after",
        "--expire-watches",
        "-vv",
    ] {
        assert!(run.stdout.contains(flag), "{flag} missing:\n{}", run.stdout);
    }
}

/// `--fail-requests 2:503 --latency 300ms -vv`: verify retries the 503s (the demo is then
/// judged, not live), the responses came late, and the simulator logged every request with
/// its status — the two 503s among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_and_slow_requests_are_injected_and_logged() {
    let sim = Sim::start(&["--fail-requests", "2:503", "--latency", "300ms", "-vv"]).await;
    let started = Instant::now();
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory"])
        .on(&sim)
        .since("1h")
        .args(&["--image", liveproof::demo::NEW_IMAGE])
        .json()
        .run()
        .await;
    let took = started.elapsed();
    let log = sim.stop().await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        took >= Duration::from_millis(900),
        "3+ requests at 300ms: {took:?}"
    );
    let failed = log.lines().filter(|l| l.ends_with("-> 503")).count();
    assert_eq!(failed, 2, "two 503s logged:\n{log}");
    assert!(
        log.lines().any(
            |l| l.contains("GET /apis/apps/v1/namespaces/apps/deployments")
                && l.ends_with("-> 200")
        ),
        "each request logged with method, path and status:\n{log}"
    );
    assert!(log.contains("fault injection"), "{log}");
}

/// `--close-watches-after 1`: a watch that would send every pod ends after the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_are_closed_after_n_events() {
    let sim = Sim::start(&["--close-watches-after", "1"]).await;
    let (body, ended) = raw_get(
        &sim.addr(),
        "/api/v1/namespaces/apps/pods?watch=true",
        Duration::from_secs(10),
    )
    .await;
    sim.stop().await;
    assert!(ended, "the watch was not closed:\n{body}");
    assert_eq!(body.matches("\"type\":\"ADDED\"").count(), 1, "{body}");
}

/// `--expire-watches`: every watch answers an in-stream ERROR with a 410 Expired Status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_expire_with_410() {
    let sim = Sim::start(&["--expire-watches"]).await;
    let (body, ended) = raw_get(
        &sim.addr(),
        "/api/v1/namespaces/apps/pods?watch=true&resourceVersion=1",
        Duration::from_secs(10),
    )
    .await;
    sim.stop().await;
    assert!(ended, "{body}");
    assert!(
        body.contains("\"type\":\"ERROR\"")
            && body.contains("\"code\":410")
            && body.contains("Expired"),
        "{body}"
    );
}
