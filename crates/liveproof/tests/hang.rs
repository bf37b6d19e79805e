//! Nothing hangs: an API server that accepts connections and never answers ends every
//! command with exit 2 and a message naming the server, what was being read and the flag that
//! bounds it. The bound around each run below is what proves it (the default request timeout
//! is 30s, so a run bounded well under that shows `--request-timeout` and `--timeout` are
//! honoured); nothing else here measures time.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

/// How a silent server is silent.
#[derive(Clone, Copy)]
enum Silence {
    /// Accepts each connection and reads what is sent, forever; never writes a byte.
    ReadsForever,
    /// Never calls accept(): the kernel completes the TCP handshake (the backlog), and nothing
    /// above it ever happens — over https, not even the TLS handshake.
    NeverAccepts,
}

/// A server on 127.0.0.1 that never answers, and a kubeconfig pointing at it.
struct SilentServer {
    url: String,
    kubeconfig: PathBuf,
    // Kept open for the test's lifetime: dropping it would refuse connections instead.
    _listener: Option<TcpListener>,
    dir: tempfile::TempDir,
}

impl SilentServer {
    fn start(silence: Silence) -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (url, kept) = match silence {
            Silence::ReadsForever => {
                std::thread::spawn(move || {
                    for stream in listener.incoming() {
                        let Ok(mut stream) = stream else { continue };
                        std::thread::spawn(move || {
                            let mut buf = [0u8; 4096];
                            while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                            // Hold the connection open until the client gives up.
                            std::thread::sleep(Duration::from_secs(600));
                        });
                    }
                });
                (format!("http://127.0.0.1:{port}"), None)
            }
            Silence::NeverAccepts => (format!("https://127.0.0.1:{port}"), Some(listener)),
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let tls = if url.starts_with("https") {
            "\n    insecure-skip-tls-verify: true"
        } else {
            ""
        };
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1
kind: Config
clusters:
- name: silent
  cluster:
    server: {url}{tls}
contexts:
- name: silent
  context:
    cluster: silent
    user: silent
    namespace: apps
current-context: silent
users:
- name: silent
  user:
    token: not-a-secret
"
            ),
        )
        .expect("kubeconfig written");
        SilentServer {
            url,
            kubeconfig,
            _listener: kept,
            dir,
        }
    }

    fn kubeconfig(&self) -> &str {
        self.kubeconfig.to_str().expect("utf-8 path")
    }
}

/// Runs liveproof, failing the test if it has not ended within `bound`.
async fn bounded(bound: Duration, args: &[&str]) -> common::Run {
    tokio::time::timeout(bound, common::liveproof(args))
        .await
        .unwrap_or_else(|_| panic!("liveproof {args:?} still running after {bound:?}: it hangs"))
}

/// Well under the 30s default request timeout: ending within it proves the flag is applied.
const BOUND: Duration = Duration::from_secs(15);

fn assert_timed_out(run: &common::Run, server: &SilentServer, within: &str) {
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let err = &run.stderr;
    assert!(
        err.contains(&format!("the API server at {}", server.url)),
        "names the server: {err}"
    );
    assert!(err.contains(within), "says what ran out ({within}): {err}");
    assert!(
        err.contains("hint:") && err.contains("--request-timeout"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_against_a_server_that_never_answers_ends_with_the_request_timeout() {
    for silence in [Silence::ReadsForever, Silence::NeverAccepts] {
        let server = SilentServer::start(silence);
        let run = bounded(
            BOUND,
            &[
                "verify",
                "deploy/x",
                "--since",
                "2026-07-12T10:00:00Z",
                "--kubeconfig",
                server.kubeconfig(),
                "--request-timeout",
                "1s",
            ],
        )
        .await;
        assert_timed_out(&run, &server, "did not answer within 1s");
        assert!(
            run.stderr.contains("apps/x"),
            "says what was being read: {}",
            run.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_wait_timeout_bounds_the_first_gather_too() {
    let server = SilentServer::start(Silence::ReadsForever);
    // The request timeout is the default 30s: only --timeout can end this within the bound.
    let run = bounded(
        BOUND,
        &[
            "verify",
            "deploy/x",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            server.kubeconfig(),
            "--wait",
            "--timeout",
            "3s",
        ],
    )
    .await;
    assert_timed_out(&run, &server, "before --timeout 3s ran out");
    assert!(run.stderr.contains("deployment/x"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_against_a_server_that_never_answers_ends_with_the_request_timeout() {
    let server = SilentServer::start(Silence::NeverAccepts);
    let run = bounded(
        BOUND,
        &[
            "stale",
            "deploy/x",
            "--kubeconfig",
            server.kubeconfig(),
            "--request-timeout",
            "1s",
        ],
    )
    .await;
    assert_timed_out(&run, &server, "did not answer within 1s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_against_a_server_that_never_answers_ends_with_the_request_timeout() {
    let server = SilentServer::start(Silence::ReadsForever);
    let dir = server.dir.path().join("snapshots");
    let run = bounded(
        BOUND,
        &[
            "snapshot",
            "--dir",
            dir.to_str().expect("utf-8"),
            "--commit",
            "abcdef1",
            "--kubeconfig",
            server.kubeconfig(),
            "--request-timeout",
            "1s",
        ],
    )
    .await;
    assert_timed_out(&run, &server, "did not answer within 1s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_show_against_a_server_that_never_answers_ends_with_the_request_timeout() {
    let server = SilentServer::start(Silence::ReadsForever);
    let run = bounded(
        BOUND,
        &[
            "release",
            "show",
            "inventory",
            "--kubeconfig",
            server.kubeconfig(),
            "--request-timeout",
            "1s",
        ],
    )
    .await;
    assert_timed_out(&run, &server, "did not answer within 1s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_request_timeout_is_refused_naming_the_flag() {
    for bad in ["abc", "-5s", "0", "0s"] {
        let run = bounded(
            BOUND,
            &[
                "verify",
                "deploy/x",
                "--since",
                "2026-07-12T10:00:00Z",
                "--kubeconfig",
                "/nonexistent/kubeconfig",
                "--request-timeout",
                bad,
            ],
        )
        .await;
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains("--request-timeout") && run.stderr.contains(bad),
            "{bad}: {}",
            run.stderr
        );
        // Refused before anything is read: not a kubeconfig error.
        assert!(!run.stderr.contains("/nonexistent"), "{}", run.stderr);
    }
}

/// The rolled-out inventory story, its image moved to the silent server as a registry.
fn dump_with_images_on(server: &SilentServer) -> PathBuf {
    let story = common::scenarios_dir().join("expect-env-present-rolled-out/cluster.yaml");
    let host = server
        .url
        .trim_start_matches("http://")
        .trim_start_matches("https://");
    let text = std::fs::read_to_string(story)
        .expect("story")
        .replace("ghcr.io/acme/inventory", &format!("{host}/acme/inventory"));
    let path = server.dir.path().join("dump.yaml");
    std::fs::write(&path, text).expect("dump written");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_reads_are_bounded_by_the_request_timeout() {
    let server = SilentServer::start(Silence::ReadsForever);
    let dump = dump_with_images_on(&server);
    let host = server.url.trim_start_matches("http://").to_string();
    let run = bounded(
        BOUND,
        &[
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--from",
            dump.to_str().expect("utf-8"),
            "--since",
            "2026-07-12T10:00:00Z",
            "--check-digests",
            "--insecure-registry",
            &host,
            "--request-timeout",
            "1s",
            "-o",
            "json",
        ],
    )
    .await;
    // A registry that does not answer leaves the digest unknown: never pass, never a hang.
    let report = run.report();
    let digest = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == liveproof_evidence::Check::ImageDigestCurrent)
        .unwrap_or_else(|| panic!("no image_digest_current: {}", run.stdout));
    assert_eq!(
        digest.status,
        liveproof_evidence::Status::Unknown,
        "{digest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_url_reads_are_bounded_by_the_request_timeout() {
    let server = SilentServer::start(Silence::ReadsForever);
    let story = common::scenarios_dir().join("expect-env-present-rolled-out/cluster.yaml");
    let url = format!("{}/version", server.url);
    let run = bounded(
        BOUND,
        &[
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--from",
            story.to_str().expect("utf-8"),
            "--since",
            "2026-07-12T10:00:00Z",
            "--version-url",
            &url,
            "--expect-version",
            "1.4.0",
            "--request-timeout",
            "1s",
            "-o",
            "json",
        ],
    )
    .await;
    let report = run.report();
    let server_report = report
        .targets
        .iter()
        .find(|t| t.kind == "Server")
        .unwrap_or_else(|| panic!("no Server target: {}", run.stdout));
    assert_eq!(
        server_report.evidence[0].status,
        liveproof_evidence::Status::Unknown,
        "{server_report:?}"
    );
    assert!(
        server_report.evidence[0].observed.contains("1s")
            || server_report.evidence[0].detail.contains("1s"),
        "says it timed out after the request timeout: {:?}",
        server_report.evidence[0]
    );
}

/// A release Secret under the API server's 1 MiB limit whose rendered manifest is 60,000
/// documents (about 60 MB): reading it all takes tens of seconds in a debug build. The
/// Deployment it installs is its last document.
fn huge_release() -> Vec<serde_json::Value> {
    use serde_json::json;
    let filler = "x".repeat(900);
    let mut manifest = String::new();
    for i in 0..60_000 {
        manifest.push_str(&format!(
            "---\n# Source: big/templates/cm{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: \"{filler}\"\n"
        ));
    }
    manifest.push_str("---\n# Source: big/templates/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\nspec:\n  selector:\n    matchLabels: {app: big}\n  template:\n    metadata:\n      labels: {app: big}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1\n");
    let release = json!({
        "name": "big", "namespace": "apps", "version": 2,
        "info": {"first_deployed": "2026-07-12T10:00:00Z", "last_deployed": "2026-07-12T10:05:00Z",
                 "deleted": "", "description": "Upgrade complete", "status": "deployed"},
        "chart": {"metadata": {"name": "big", "version": "1.0.0", "apiVersion": "v2"},
                  "templates": [], "values": {}},
        "config": {},
        "manifest": manifest,
    });
    let secret = liveproof_helm::encode_secret(&release);
    let size = secret["data"]["release"].as_str().map_or(0, str::len);
    assert!(
        size < 1024 * 1024,
        "{size} bytes: over what an API server stores"
    );
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "big", "namespace": "apps", "generation": 1, "uid": "big-uid"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "big"}},
                 "template": {"metadata": {"labels": {"app": "big"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}},
        "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 0, "availableReplicas": 0},
    });
    vec![secret, deployment]
}

/// Decoding honours `--timeout`: the wait ends at its deadline with the release unknown
/// (what was not read is not proven), not after the whole manifest has been parsed. Before,
/// the first judgement alone outlasted the bound below several times over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_release_manifest_does_not_hold_wait_past_its_timeout() {
    let cluster = common::Cluster::start(huge_release(), "apps").await;
    let run = bounded(
        Duration::from_secs(30),
        &[
            "verify",
            "release/big",
            "--kubeconfig",
            cluster.kubeconfig(),
            "--since",
            "2026-07-12T10:00:00Z",
            "--wait",
            "--timeout",
            "3s",
            "-o",
            "json",
        ],
    )
    .await;
    // Where the deadline falls decides which honest ending it is: inflating the release not
    // finished (nothing judged: exit 2 naming the flag), or its manifest not read to the end
    // (the release unknown: unproven).
    if run.code == 2 {
        assert!(
            run.stderr.contains("--timeout 3s ran out while decoding the release in apps/Secret/sh.helm.release.v1.big.v2"),
            "{}",
            run.stderr
        );
        return;
    }
    assert_eq!(run.code, 3, "unproven:\n{}\n{}", run.stdout, run.stderr);
    let report = run.report();
    let release = report
        .targets
        .iter()
        .find(|t| t.kind == "Release")
        .expect("the release's report");
    let manifest = release
        .evidence
        .iter()
        .find(|e| e.check == liveproof_evidence::Check::ManifestContains)
        .expect("manifest_contains");
    assert_eq!(manifest.status, liveproof_evidence::Status::Unknown);
    assert!(
        manifest.detail.contains("--timeout ran out"),
        "{}",
        manifest.detail
    );
}
