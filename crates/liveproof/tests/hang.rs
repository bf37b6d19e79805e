//! Nothing hangs: an API server that accepts connections and never answers ends every
//! command with exit 2 and a message naming the server, what was being read and the flag that
//! bounds it. The bound around each run below is what proves it (the default request timeout
//! is 30s, so a run bounded well under that shows `--request-timeout` and `--timeout` are
//! honoured); nothing else here measures time.

use liveproof_testkit::binary as common;

use liveproof_testkit::{within_async, SimCluster};

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
            kubeconfig_yaml(&format!("{url}{tls}"), "    token: not-a-secret\n"),
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

/// A kubeconfig of one cluster at `server` (its line may carry more of the cluster's fields)
/// whose user is `user` (the lines under `user:`), in namespace apps.
fn kubeconfig_yaml(server: &str, user: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: {server}
contexts:
- name: c
  context:
    cluster: c
    user: u
    namespace: apps
current-context: c
users:
- name: u
  user:
{user}"
    )
}

/// Runs liveproof, failing the test if it has not ended within `bound`.
async fn bounded(bound: Duration, args: &[&str]) -> common::Run {
    tokio::time::timeout(bound, common::liveproof().args(args).run())
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
            "--image",
            "ghcr.io/acme/x:2",
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
    // `0` is kubectl's "no per-request limit", and taken (kubectl_habits.rs); these are not.
    for bad in ["abc", "-5s", "5x", "1y"] {
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
    let story = liveproof_testkit::story::scenarios_dir()
        .join("expect-env-present-rolled-out/cluster.yaml");
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
    let story = liveproof_testkit::story::scenarios_dir()
        .join("expect-env-present-rolled-out/cluster.yaml");
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
    let cluster = SimCluster::start(huge_release(), "apps").await;
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

/// What an exec credential plugin is given that must never be printed: an argument and an
/// environment variable (real plugins get profiles, role ARNs, sometimes secrets this way).
const PLUGIN_CANARY: &str = "hunter2-plugin";

/// A kubeconfig for `server` whose user's credential comes from the exec plugin `command`
/// with `args` (plus [`PLUGIN_CANARY`] in its environment).
fn exec_kubeconfig(dir: &std::path::Path, server: &str, command: &str, args: &[&str]) -> PathBuf {
    let path = dir.join("exec-kubeconfig");
    let args = serde_json::to_string(args).expect("args");
    std::fs::write(
        &path,
        kubeconfig_yaml(
            server,
            &format!(
                "    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: {command}
      args: {args}
      env:
      - name: PLUGIN_CANARY
        value: {PLUGIN_CANARY}
      interactiveMode: Never
"
            ),
        ),
    )
    .expect("kubeconfig written");
    path
}

/// An executable shell script in `dir`.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script written");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_str().expect("utf-8").to_string()
}

fn assert_plugin_failed(run: &common::Run, says: &str) {
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("exec credential plugin") && run.stderr.contains(says),
        "says what the plugin did ({says}): {}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert!(
        !run.stderr.contains(PLUGIN_CANARY) && !run.stdout.contains(PLUGIN_CANARY),
        "the plugin's arguments and environment are never printed: {}",
        run.stderr
    );
}

/// `exec: {command: /bin/sleep, args: ["1000"]}` held verify, `--wait --timeout` and
/// `release show` past every bound: kube ran the plugin with no timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_exec_plugin_ends_each_command_within_its_bound() {
    let server = SilentServer::start(Silence::ReadsForever);
    let kubeconfig = exec_kubeconfig(server.dir.path(), &server.url, "/bin/sleep", &["1000"]);
    let kubeconfig = kubeconfig.to_str().expect("utf-8");
    let snapshots = server.dir.path().join("snapshots");
    let snapshots = snapshots.to_str().expect("utf-8");
    let since = ["--since", "2026-07-12T10:00:00Z"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [
                &["verify", "deploy/x"][..],
                &since,
                &["--request-timeout", "2s"],
            ]
            .concat(),
            "did not finish within 2s",
        ),
        // The request timeout is the default 30s here: only --timeout can end it in time.
        (
            [
                &["verify", "deploy/x", "--image", "ghcr.io/acme/x:2"][..],
                &since,
                &["--wait", "--timeout", "4s"],
            ]
            .concat(),
            "did not finish within 4s",
        ),
        (
            vec!["release", "show", "inventory", "--request-timeout", "2s"],
            "did not finish within 2s",
        ),
        (
            vec!["stale", "deploy/x", "--request-timeout", "2s"],
            "did not finish within 2s",
        ),
        (
            vec![
                "snapshot",
                "--dir",
                snapshots,
                "--commit",
                "abcdef1",
                "--request-timeout",
                "2s",
            ],
            "did not finish within 2s",
        ),
    ];
    for (args, says) in cases {
        let args = [&args[..], &["--kubeconfig", kubeconfig]].concat();
        let run = bounded(BOUND, &args).await;
        assert_plugin_failed(&run, says);
        assert!(
            run.stderr.contains("`sleep`"),
            "names the plugin: {}",
            run.stderr
        );
    }
}

/// The `auth-provider: gcp` of old GKE kubeconfigs runs its `cmd-path` inside kube with no
/// bound (`cmd-path: /bin/sleep`, `cmd-args: 1000` held every command forever): refused at
/// once, as kubectl does since 1.26, saying what to use instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gcp_auth_provider_command_is_refused_not_run() {
    let server = SilentServer::start(Silence::ReadsForever);
    let kubeconfig = server.dir.path().join("gcp-kubeconfig");
    std::fs::write(
        &kubeconfig,
        kubeconfig_yaml(
            &server.url,
            &format!(
                "    auth-provider:
      name: gcp
      config:
        cmd-path: /bin/sleep
        cmd-args: \"1000 {PLUGIN_CANARY}\"
        token-key: '{{.credential.access_token}}'
"
            ),
        ),
    )
    .expect("kubeconfig written");
    let kubeconfig = kubeconfig.to_str().expect("utf-8");
    for args in [
        &["verify", "deploy/x", "--since", "1h", "--image", "a/b:1"][..],
        &["release", "show", "inventory"][..],
    ] {
        let run = bounded(BOUND, &[args, &["--kubeconfig", kubeconfig]].concat()).await;
        assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("auth-provider: gcp")
                && run.stderr.contains("gke-gcloud-auth-plugin"),
            "says what to use instead: {}",
            run.stderr
        );
        assert!(!run.stderr.contains(PLUGIN_CANARY), "{}", run.stderr);
    }
}

/// A plugin that prints its credential and exits, leaving a child that holds its stdout, is
/// not waited for: the credential it printed is used (the server demands it), and the child
/// is killed with the plugin's process group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_plugin_whose_child_holds_stdout_is_not_waited_for() {
    use jiff::{SignedDuration, Timestamp};
    use liveproof::demo;
    let now = Timestamp::now();
    let cluster = SimCluster::start(
        demo::story_before(now - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    demo::reconcile(&cluster.sim, now);
    cluster.sim.faults().require_token("from-the-plugin");
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("child.pid");
    let plugin = script(
        dir.path(),
        "plugin",
        &format!(
            "echo '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"from-the-plugin\"}}}}'\nsleep 1000 &\necho $! > {}",
            pid_file.display()
        ),
    );
    let kubeconfig = exec_kubeconfig(dir.path(), &cluster.sim.url(), &plugin, &[PLUGIN_CANARY]);
    let since = (now - SignedDuration::from_secs(90)).to_string();
    let run = bounded(
        BOUND,
        &[
            "verify",
            "apps/deploy/inventory",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
            "--since",
            &since,
            "--image",
            demo::NEW_IMAGE,
            "--request-timeout",
            "5s",
        ],
    )
    .await;
    assert_eq!(
        run.code, 0,
        "live, with the plugin's token:\n{}\n{}",
        run.stdout, run.stderr
    );
    let child = std::fs::read_to_string(&pid_file).expect("the plugin's child pid");
    let stat = format!("/proc/{}/stat", child.trim());
    let alive = std::fs::read_to_string(&stat).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'))
    });
    assert!(!alive, "the plugin's child {} still runs", child.trim());
}

/// A hung plugin whose child started a session of its own (`setsid`, orphaned by a subshell
/// that exited) left that child running after the run ended: killing the plugin's process
/// group missed it. The run's end kills it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setsid_grandchild_of_a_hung_exec_plugin_does_not_outlive_the_run() {
    let server = SilentServer::start(Silence::ReadsForever);
    let pid_file = server.dir.path().join("grandchild.pid");
    let pid_path = pid_file.display();
    let plugin = script(
        server.dir.path(),
        "plugin",
        &format!(
            "( setsid sh -c 'echo $$ > {pid_path}.tmp; mv {pid_path}.tmp {pid_path}; exec sleep 1000' & )\n\
             while [ ! -s {pid_path} ]; do sleep 0.05; done\n\
             exec sleep 1000"
        ),
    );
    let kubeconfig = exec_kubeconfig(server.dir.path(), &server.url, &plugin, &[PLUGIN_CANARY]);
    let run = bounded(
        BOUND,
        &[
            "verify",
            "deploy/x",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
            "--request-timeout",
            "3s",
        ],
    )
    .await;
    assert_plugin_failed(&run, "did not finish within 3s");
    let grandchild = std::fs::read_to_string(&pid_file).expect("the grandchild's pid");
    let grandchild = grandchild.trim();
    let running = || {
        std::fs::read_to_string(format!("/proc/{grandchild}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
        })
    };
    // SIGKILL is delivered before liveproof exits, but the kernel may take a moment to end it.
    let alive = within_async(Duration::from_secs(2), Duration::from_millis(20), || {
        std::future::ready((!running()).then_some(()))
    })
    .await
    .is_none();
    if alive {
        let _ = std::process::Command::new("kill")
            .args(["-9", grandchild])
            .status();
    }
    assert!(
        !alive,
        "the plugin's setsid grandchild {grandchild} still runs"
    );
}

/// A plugin printing without end (/dev/zero) is cut at the output cap, not read until the
/// allocation aborts the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_plugin_printing_without_end_is_cut_at_the_cap() {
    let server = SilentServer::start(Silence::ReadsForever);
    let kubeconfig = exec_kubeconfig(server.dir.path(), &server.url, "/bin/cat", &["/dev/zero"]);
    let run = bounded(
        BOUND,
        &[
            "verify",
            "deploy/x",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
            "--request-timeout",
            "5s",
        ],
    )
    .await;
    assert_plugin_failed(&run, "printed more than 1048576 bytes");
}

/// An exec plugin flooding stderr (liveproof's own, as kubectl gives it) into a pipe whose
/// reader has gone once ended in exit 101: the plugin failed on the closed pipe, and saying
/// so on that stderr panicked. It is exit 2 with the error document on stdout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_plugin_flooding_a_closed_stderr_is_exit_2_not_a_panic() {
    use std::process::Stdio;
    let server = SilentServer::start(Silence::ReadsForever);
    let plugin = script(server.dir.path(), "plugin", "cat /dev/zero >&2\nexit 1");
    let kubeconfig = exec_kubeconfig(server.dir.path(), &server.url, &plugin, &[PLUGIN_CANARY]);
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args([
            "verify",
            "deploy/x",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
            "--request-timeout",
            "5s",
            "-o",
            "json",
        ])
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(writer))
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof starts");
    let out = tokio::time::timeout(BOUND, child.wait_with_output())
        .await
        .expect("liveproof ended within its bound")
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let doc: liveproof_report::ErrorReport = serde_json::from_str(&stdout).expect("one document");
    assert!(
        doc.error.message.contains("exec credential plugin"),
        "{stdout}"
    );
    assert!(!stdout.contains(PLUGIN_CANARY), "{stdout}");
}

/// A token whose `expirationTimestamp` is near is refreshed by running the plugin again
/// (bounded the same way), as kubectl does: the run stays live with the fresh token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiring_exec_token_is_refreshed_by_running_the_plugin_again() {
    use jiff::{SignedDuration, Timestamp};
    use liveproof::demo;
    let now = Timestamp::now();
    let cluster = SimCluster::start(
        demo::story_before(now - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    demo::reconcile(&cluster.sim, now);
    cluster.sim.faults().require_token("fresh");
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs");
    // Expires in 30s: within the refresh margin at once, so each request runs it again.
    let expires = (now + SignedDuration::from_secs(30)).to_string();
    let plugin = script(
        dir.path(),
        "plugin",
        &format!(
            "echo run >> {}\necho '{{\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"fresh\",\"expirationTimestamp\":\"{expires}\"}}}}'",
            runs.display()
        ),
    );
    let kubeconfig = exec_kubeconfig(dir.path(), &cluster.sim.url(), &plugin, &[]);
    let since = (now - SignedDuration::from_secs(90)).to_string();
    let run = bounded(
        BOUND,
        &[
            "verify",
            "apps/deploy/inventory",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
            "--since",
            &since,
            "--image",
            demo::NEW_IMAGE,
        ],
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let ran = std::fs::read_to_string(&runs)
        .expect("runs")
        .lines()
        .count();
    assert!(
        ran > 1,
        "the expiring token was refreshed: the plugin ran {ran} time(s)"
    );
}

/// The demo cluster after its rollout, on the simulator.
async fn demo_cluster() -> SimCluster {
    use jiff::{SignedDuration, Timestamp};
    use liveproof::demo;
    let now = Timestamp::now();
    let cluster = SimCluster::start(
        demo::story_before(now - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    demo::reconcile(&cluster.sim, now);
    cluster
}

/// A body trickled a byte a second never tripped the read timeout (it counts from the last
/// byte): each command now ends within `--request-timeout`, naming the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_body_ends_each_command_within_the_request_timeout() {
    let cluster = demo_cluster().await;
    cluster
        .sim
        .faults()
        .trickle_bodies(Duration::from_millis(1000));
    let dir = tempfile::tempdir().expect("tempdir");
    let snapshots = dir.path().join("snapshots");
    let snapshots = snapshots.to_str().expect("utf-8");
    let commands: [&[&str]; 4] = [
        &[
            "verify",
            "deploy/inventory",
            "--since",
            "2026-07-12T10:00:00Z",
        ],
        &["stale", "deploy/inventory"],
        &["snapshot", "--dir", snapshots, "--commit", "abcdef1"],
        &["release", "show", "inventory"],
    ];
    for command in commands {
        let args = [
            command,
            &[
                "--kubeconfig",
                cluster.kubeconfig(),
                "--request-timeout",
                "2s",
            ],
        ]
        .concat();
        let run = bounded(BOUND, &args).await;
        assert_eq!(run.code, 2, "{command:?}:\n{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr
                .contains(&format!("the API server at {}", cluster.sim.url()))
                && run.stderr.contains("did not answer within 2s"),
            "{command:?}: {}",
            run.stderr
        );
    }
}

/// `Retry-After: 999999` made each read pause 3 × 10 s whatever `--request-timeout`: a server
/// asking for more than the request has left is down for this run, said at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_longer_than_the_request_timeout_fails_at_once() {
    let cluster = demo_cluster().await;
    cluster.sim.faults().fail_next(1000, 429, Some(999_999));
    let run = bounded(
        // Well within one request timeout: before, each read paused 3 × 10s.
        Duration::from_secs(10),
        &[
            "verify",
            "deploy/inventory",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            cluster.kubeconfig(),
            "--request-timeout",
            "20s",
        ],
    )
    .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let err = &run.stderr;
    assert!(
        err.contains(&format!("the API server at {}", cluster.sim.url()))
            && err.contains("answered 429")
            && err.contains("Retry-After: 999999")
            && err.contains("down for this run")
            && err.contains("hint:"),
        "{err}"
    );
}

/// A FIFO in `dir`, named `name`.
fn fifo(dir: &std::path::Path, name: &str) -> String {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
    path.to_str().expect("utf-8").to_string()
}

/// A command line, its environment, the special file it names and what that file is.
type Refused<'a> = (Vec<&'a str>, &'a [(&'a str, &'a str)], &'a str, &'a str);

/// A FIFO given as `--from`, `-f`, `--kubeconfig` or `KUBECONFIG` blocked forever (nothing
/// ever writes to it), and `/dev/zero` never ends: each is refused at once, naming the path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_files_are_refused_naming_the_path() {
    let server = SilentServer::start(Silence::ReadsForever);
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = fifo(dir.path(), "dump.yaml");
    let since = ["--since", "2026-07-12T10:00:00Z"];
    let kubeconfig = ["--kubeconfig", server.kubeconfig()];
    let fifo_env = [("KUBECONFIG", fifo.as_str())];
    let cases: Vec<Refused> = vec![
        (
            [&["verify", "deploy/x", "--from", &fifo][..], &since].concat(),
            &[],
            &fifo,
            "a FIFO",
        ),
        (
            [
                &["verify", "deploy/x", "-f", &fifo][..],
                &since,
                &kubeconfig,
            ]
            .concat(),
            &[],
            &fifo,
            "a FIFO",
        ),
        (
            [&["verify", "deploy/x", "--kubeconfig", &fifo][..], &since].concat(),
            &[],
            &fifo,
            "a FIFO",
        ),
        (
            [&["verify", "deploy/x"][..], &since].concat(),
            &fifo_env,
            &fifo,
            "a FIFO",
        ),
        (
            [&["stale", "-f", &fifo][..], &kubeconfig].concat(),
            &[],
            &fifo,
            "a FIFO",
        ),
        (
            vec!["release", "show", "inventory", "--from", "/dev/zero"],
            &[],
            "/dev/zero",
            "a character device",
        ),
    ];
    for (args, env, path, kind) in cases {
        let run = tokio::time::timeout(BOUND, common::liveproof().args(&args).envs(env).run())
            .await
            .unwrap_or_else(|_| panic!("liveproof {args:?} {env:?} blocked on {path}"));
        assert_eq!(
            run.code, 2,
            "{args:?} {env:?}:\n{}\n{}",
            run.stdout, run.stderr
        );
        assert!(
            run.stderr.contains(path)
                && run.stderr.contains(kind)
                && run.stderr.contains("not a regular file")
                && run.stderr.contains("hint:"),
            "{args:?} {env:?}: {}",
            run.stderr
        );
    }
}

/// A directory given as `--from` is read as before; a FIFO in it is skipped with a warning
/// naming it, never read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_inside_a_from_directory_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let story = liveproof_testkit::story::scenarios_dir()
        .join("expect-env-present-rolled-out/cluster.yaml");
    std::fs::copy(&story, dir.path().join("cluster.yaml")).expect("dump copied");
    let fifo = fifo(dir.path(), "more.yaml");
    let run = bounded(
        BOUND,
        &[
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--from",
            dir.path().to_str().expect("utf-8"),
            "--since",
            "2026-07-12T10:00:00Z",
            "-o",
            "json",
        ],
    )
    .await;
    assert_ne!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.report().targets.len(), 1, "the dump was read");
    assert!(
        run.stderr.contains(&fifo) && run.stderr.contains("skipped"),
        "{}",
        run.stderr
    );
}

/// Over MCP one call given a FIFO stalled the whole server (two workers, each blocked on a
/// read): now every call is answered — the FIFOs refused, the dump read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_calls_over_mcp_do_not_stall_the_server() {
    use tokio::io::AsyncWriteExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = fifo(dir.path(), "dump.yaml");
    let story = liveproof_testkit::story::scenarios_dir()
        .join("expect-env-present-rolled-out/cluster.yaml");
    let story = story.to_str().expect("utf-8");
    let call = |id: u32, from: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "verify", "arguments": {"targets": ["apps/deploy/inventory"], "from": from,
            "since": "2026-07-12T10:00:00Z"}}})
    };
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hang", "version": "1"}}});
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut input = format!("{initialize}\n{initialized}\n");
    // More FIFO calls than the server has workers, then one that must still be answered.
    for id in 1..=3 {
        input.push_str(&format!("{}\n", call(id, &fifo)));
    }
    input.push_str(&format!("{}\n", call(4, story)));
    // The operator allows both directories: the FIFO is refused for what it is, not where.
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .arg("mcp")
        .arg("--allow-from")
        .arg(dir.path())
        .arg("--allow-from")
        .arg(liveproof_testkit::story::scenarios_dir())
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof mcp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).await.expect("sent");
    drop(stdin);
    let out = tokio::time::timeout(BOUND, child.wait_with_output())
        .await
        .expect("the MCP server answered every call and exited: not stalled")
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let replies: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for id in 1..=4 {
        let reply = replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no reply to call {id}: {stdout}"));
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if id < 4 {
            assert_eq!(reply["result"]["isError"], true, "{reply}");
            assert!(text.contains(&fifo) && text.contains("a FIFO"), "{text}");
        } else {
            assert_eq!(reply["result"]["isError"], false, "{reply}");
            assert!(text.contains("\"verdict\""), "{text}");
        }
    }
}

/// Issue 21, point 4: a watch line that never ends once grew one buffer to 2 GiB and aborted
/// the process. Cut at 16 MiB, `--wait` ends at its `--timeout` with its memory bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_line_without_end_is_cut_and_the_wait_ends_in_time() {
    use jiff::{SignedDuration, Timestamp};
    // Not live at first: the wait goes on to the watches, which answer the endless line.
    let cluster = SimCluster::start(
        liveproof::demo::story_before(Timestamp::now() - SignedDuration::from_hours(96)),
        liveproof::demo::NS,
    )
    .await;
    cluster.sim.faults().endless_watch_line();
    let run = bounded(
        BOUND,
        &[
            "-v",
            "verify",
            "deploy/inventory",
            "--kubeconfig",
            cluster.kubeconfig(),
            "--since",
            "2026-07-12T10:00:00Z",
            "--image",
            liveproof::demo::NEW_IMAGE,
            "--wait",
            "--timeout",
            "6s",
        ],
    )
    .await;
    assert_ne!(
        run.code, 0,
        "no event was ever read: never live\n{}",
        run.stderr
    );
    let kib: u64 = run
        .stderr
        .lines()
        .find_map(|l| l.split("peak memory: ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("-v says the peak memory:\n{}", run.stderr));
    assert!(
        kib < 512 * 1024,
        "peak {kib} KiB: the endless line was buffered\n{}",
        run.stderr
    );
}

/// Issue 21, point 3: files the kubeconfig's context names (its certificate authority, client
/// certificate and key, token file) are read by kube as it loads: a FIFO among them blocked
/// that load forever. Each is refused first, naming the field and the path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_the_kubeconfig_names_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (field, yaml) in [
        (
            "certificate-authority",
            "cluster: {server: 'https://127.0.0.1:1', certificate-authority: PATH}\n  name: c",
        ),
        (
            "client-certificate",
            "cluster: {server: 'https://127.0.0.1:1'}\n  name: c",
        ),
        (
            "tokenFile",
            "cluster: {server: 'https://127.0.0.1:1'}\n  name: c",
        ),
    ] {
        let pipe = fifo(dir.path(), &format!("{field}.pipe"));
        let user = match field {
            "client-certificate" => format!("{{client-certificate: {pipe}, client-key: {pipe}}}"),
            "tokenFile" => format!("{{tokenFile: {pipe}}}"),
            _ => "{token: t}".to_string(),
        };
        let kubeconfig = dir.path().join(format!("{field}.kubeconfig"));
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- {}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\nusers:\n- name: u\n  user: {user}\n",
                yaml.replace("PATH", &pipe)
            ),
        )
        .expect("write");
        let run = bounded(
            BOUND,
            &[
                "verify",
                "deploy/x",
                "--since",
                "10m",
                "--kubeconfig",
                kubeconfig.to_str().expect("utf-8"),
            ],
        )
        .await;
        assert_eq!(run.code, 2, "{field}: {}", run.stderr);
        assert!(
            run.stderr.contains(field) && run.stderr.contains(&pipe) && run.stderr.contains("FIFO"),
            "{field}: {}",
            run.stderr
        );
    }
}

/// Issue 32, point 6: a server paging without end, slowly (each page well within the request
/// timeout, a fresh continue token each time), held a command without `--wait` for 25
/// minutes at the page cap. The whole list has its own deadline, 10 × `--request-timeout`:
/// the command ends with exit 2 naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_endless_list_ends_at_its_own_deadline_without_wait() {
    let cluster = demo_cluster().await;
    cluster
        .sim
        .faults()
        .misbehave_lists("pods", liveproof_sim::PagingFault::EndlessContinue);
    cluster.sim.faults().set_latency(Duration::from_millis(300));
    // The list's deadline is 10s; 5s more for the rest of the command.
    let run = bounded(
        Duration::from_secs(15),
        &[
            "verify",
            "deploy/inventory",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            cluster.kubeconfig(),
            "--request-timeout",
            "1s",
        ],
    )
    .await;
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "the API server at {} never completed the list of",
            cluster.sim.url()
        )) && run
            .stderr
            .contains("not whole within 10s (10 × --request-timeout 1s)")
            && run.stderr.contains("hint:"),
        "{}",
        run.stderr
    );
}
