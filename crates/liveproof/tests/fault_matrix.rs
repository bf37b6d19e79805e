//! The fault matrix: every way an API server misbehaves (and the inputs around it: a hung
//! credential plugin, a FIFO for a file), against a live story and a not-live story, one-shot
//! and `--wait`. Whatever the fault: no false `live` (a not-live story never exits 0), no hang
//! (each run bounded here), errors exit 2 naming the server (or the special file); and where
//! the fault is transient and retried, the live story still ends `live`.
//!
//! The last line printed is the summary the closing note quotes:
//! `fault matrix: N runs, 0 false live, 0 hangs`.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use std::io::Read as _;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;
use liveproof_sim::{PagingFault, SimHandle, WatchExpiry};

/// Each run ends within this, or it counts as a hang (and is killed).
const BOUND: Duration = Duration::from_secs(40);
/// `--timeout` of the `--wait` runs.
const WAIT: &str = "8s";
/// `--request-timeout` of every run: the silent server must end a run within it.
const REQUEST_TIMEOUT: &str = "3s";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    TooManyRequests,
    InternalError,
    Unavailable,
    Slow,
    TruncatedBodies,
    DroppedWatches,
    ExpiredWatches,
    GoneWatches,
    ConnectionReset,
    SilentServer,
    /// Pod LISTs in one-object pages whose first continue is answered 410 (issue 21).
    OneObjectPages,
    /// Pod LISTs that never end: an empty page and a new continue token, forever.
    EndlessContinue,
    /// Pod LISTs that give the same continue token again.
    RepeatedToken,
    /// Every body sent a byte a second (headers at once).
    TrickledBody,
    /// A 429 asking to be retried after 999999 s.
    EndlessRetryAfter,
    /// The kubeconfig's exec credential plugin never returns (`/bin/sleep 1000`).
    HungPlugin,
    /// `--kubeconfig` is a FIFO nothing ever writes to.
    FifoKubeconfig,
    /// `-f` (the manifests stating the change) is a FIFO nothing ever writes to.
    FifoManifests,
}

impl Fault {
    const ALL: [Fault; 18] = [
        Fault::TooManyRequests,
        Fault::InternalError,
        Fault::Unavailable,
        Fault::Slow,
        Fault::TruncatedBodies,
        Fault::DroppedWatches,
        Fault::ExpiredWatches,
        Fault::GoneWatches,
        Fault::ConnectionReset,
        Fault::SilentServer,
        Fault::OneObjectPages,
        Fault::EndlessContinue,
        Fault::RepeatedToken,
        Fault::TrickledBody,
        Fault::EndlessRetryAfter,
        Fault::HungPlugin,
        Fault::FifoKubeconfig,
        Fault::FifoManifests,
    ];

    /// Retried or outlasted: the live story must still end `live`.
    fn transient(self) -> bool {
        matches!(
            self,
            Fault::TooManyRequests
                | Fault::Unavailable
                | Fault::Slow
                | Fault::DroppedWatches
                | Fault::ExpiredWatches
                | Fault::GoneWatches
                | Fault::OneObjectPages
        )
    }

    /// Served by the simulator (else by a bare TCP server in this file).
    fn injected(self, sim: &SimHandle) {
        let faults = sim.faults();
        match self {
            Fault::TooManyRequests => faults.fail_next(3, 429, Some(1)),
            Fault::InternalError => faults.fail_next(2, 500, None),
            Fault::Unavailable => faults.fail_next(3, 503, None),
            Fault::Slow => faults.set_latency(Duration::from_millis(400)),
            Fault::TruncatedBodies => faults.truncate_bodies(200),
            Fault::TrickledBody => faults.trickle_bodies(Duration::from_secs(1)),
            Fault::EndlessRetryAfter => faults.fail_next(u64::MAX, 429, Some(999_999)),
            Fault::DroppedWatches => faults.close_watches_after(1),
            Fault::ExpiredWatches => faults.expire_watches(u64::MAX, WatchExpiry::InStream),
            Fault::GoneWatches => faults.expire_watches(u64::MAX, WatchExpiry::Status),
            Fault::OneObjectPages => {
                faults.misbehave_lists("pods", PagingFault::OneObjectPagesFirstContinueGone)
            }
            Fault::EndlessContinue => faults.misbehave_lists("pods", PagingFault::EndlessContinue),
            Fault::RepeatedToken => faults.misbehave_lists("pods", PagingFault::RepeatedToken),
            Fault::ConnectionReset
            | Fault::SilentServer
            | Fault::HungPlugin
            | Fault::FifoKubeconfig
            | Fault::FifoManifests => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Story {
    /// The demo after its rollout (one-shot), or rolling out 1.5s into the wait.
    Live,
    /// The demo before it: merged, never deployed.
    NotLive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    OneShot,
    Wait,
}

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("now")
}

/// A server that is not an API server at all: resets each connection, or never answers.
struct BareServer {
    url: String,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl BareServer {
    fn start(fault: Fault) -> BareServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                std::thread::spawn(move || {
                    if fault == Fault::SilentServer {
                        let mut buf = [0u8; 4096];
                        while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                        std::thread::sleep(Duration::from_secs(600));
                    } else {
                        // Closing with the request unread makes the kernel send a RST.
                        std::thread::sleep(Duration::from_millis(50));
                        drop(stream);
                    }
                });
            }
        });
        let url = format!("http://127.0.0.1:{port}");
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: bare\n  cluster:\n    server: {url}\n\
                 contexts:\n- name: bare\n  context:\n    cluster: bare\n    user: bare\n    namespace: apps\n\
                 current-context: bare\nusers:\n- name: bare\n  user:\n    token: not-a-secret\n"
            ),
        )
        .expect("kubeconfig");
        BareServer {
            url,
            kubeconfig,
            _dir: dir,
        }
    }
}

/// A FIFO beside `cluster`'s kubeconfig, which nothing ever writes to.
fn fifo_beside(cluster: &SimCluster, name: &str) -> PathBuf {
    let path = cluster.kubeconfig.with_file_name(name);
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    path
}

/// `cluster`'s kubeconfig with its user's credential from an exec plugin that never returns.
fn hung_plugin_kubeconfig(cluster: &SimCluster) -> PathBuf {
    let path = cluster.kubeconfig.with_file_name("hung-plugin-kubeconfig");
    let text = std::fs::read_to_string(&cluster.kubeconfig)
        .expect("kubeconfig")
        .replace(
            "token: liveproof-sim",
            "exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sleep\n      args: [\"1000\"]\n      interactiveMode: Never",
        );
    assert!(text.contains("/bin/sleep"), "{text}");
    std::fs::write(&path, text).expect("kubeconfig written");
    path
}

/// What one run showed.
#[derive(Debug)]
struct Outcome {
    fault: Fault,
    story: Story,
    mode: Mode,
    /// `None`: it did not end within [`BOUND`].
    code: Option<i32>,
    stderr: String,
    /// What an exit 2 must name: the server, or the special file given.
    named: String,
}

async fn run_one(fault: Fault, story: Story, mode: Mode) -> Outcome {
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let mut cluster = None;
    let mut bare = None;
    let mut fifo_manifests = None;
    let (kubeconfig, server) = match fault {
        Fault::ConnectionReset | Fault::SilentServer => {
            let b = BareServer::start(fault);
            let out = (b.kubeconfig.clone(), b.url.clone());
            bare = Some(b);
            out
        }
        _ => {
            let c = SimCluster::start(
                demo::story_before(now() - SignedDuration::from_hours(96)),
                demo::NS,
            )
            .await;
            if story == Story::Live && mode == Mode::OneShot {
                demo::reconcile(&c.sim, now());
            }
            fault.injected(&c.sim);
            let kubeconfig = match fault {
                Fault::HungPlugin => hung_plugin_kubeconfig(&c),
                Fault::FifoKubeconfig => fifo_beside(&c, "kubeconfig.fifo"),
                _ => c.kubeconfig.clone(),
            };
            if fault == Fault::FifoManifests {
                fifo_manifests = Some(fifo_beside(&c, "manifests.yaml"));
            }
            let out = (kubeconfig, c.sim.url());
            cluster = Some(c);
            out
        }
    };
    let kubeconfig = kubeconfig.to_str().expect("utf-8").to_owned();
    let fifo_manifests = fifo_manifests.map(|p| p.to_str().expect("utf-8").to_owned());
    let named = match fault {
        Fault::FifoKubeconfig => kubeconfig.clone(),
        Fault::FifoManifests => fifo_manifests.clone().unwrap_or_default(),
        _ => server.trim_start_matches("http://").to_owned(),
    };
    let mut args = vec![
        "verify",
        "apps/deploy/inventory",
        "--kubeconfig",
        &kubeconfig,
        "--since",
        &since,
        "--image",
        demo::NEW_IMAGE,
        "--request-timeout",
        REQUEST_TIMEOUT,
        "-o",
        "json",
    ];
    if mode == Mode::Wait {
        args.extend(["--wait", "--timeout", WAIT]);
    }
    if let Some(path) = &fifo_manifests {
        args.extend(["-f", path]);
    }
    let rollout = async {
        if let (Some(c), Story::Live, Mode::Wait) = (&cluster, story, mode) {
            // Some faults keep verify from ever watching (a hung credential plugin, a dead
            // server), so there is no condition to wait on: the rollout comes after a while.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            demo::reconcile(&c.sim, now());
        }
    };
    let (run, ()) = tokio::join!(
        tokio::time::timeout(BOUND, common::liveproof().args(&args).run()),
        rollout
    );
    drop(bare);
    let (code, stderr) = match run {
        Ok(run) => (Some(run.code), run.stderr),
        Err(_) => (None, String::new()),
    };
    Outcome {
        fault,
        story,
        mode,
        code,
        stderr,
        named,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_fault_gives_a_false_live_or_a_hang() {
    let mut cases = Vec::new();
    for fault in Fault::ALL {
        for story in [Story::Live, Story::NotLive] {
            for mode in [Mode::OneShot, Mode::Wait] {
                cases.push(run_one(fault, story, mode));
            }
        }
    }
    // Concurrently: each run has its own server, and most of the time is waiting.
    let outcomes = futures::future::join_all(cases).await;
    let runs = outcomes.len();
    let false_live = outcomes
        .iter()
        .filter(|o| o.story == Story::NotLive && o.code == Some(0))
        .count();
    let hangs = outcomes.iter().filter(|o| o.code.is_none()).count();
    let mut problems = Vec::new();
    for o in &outcomes {
        let what = format!("{:?} {:?} {:?}", o.fault, o.story, o.mode);
        match o.code {
            None => problems.push(format!("{what}: still running after {BOUND:?}")),
            Some(0) if o.story == Story::NotLive => problems.push(format!("{what}: false live")),
            Some(2) if !o.stderr.contains(&o.named) => problems.push(format!(
                "{what}: exit 2 without naming {}: {}",
                o.named, o.stderr
            )),
            Some(code) if o.story == Story::Live && o.fault.transient() && code != 0 => problems
                .push(format!(
                    "{what}: a transient fault, yet exit {code}, not live: {}",
                    o.stderr
                )),
            // A fault that is not retried may still be outlasted (2 × 500 then a retry):
            // live is then the truth, not a false live.
            Some(_) => {}
        }
    }
    // The summary line the closing note quotes (stderr: shown with --nocapture).
    #[expect(clippy::print_stderr, reason = "the matrix's summary is its output")]
    {
        eprintln!("fault matrix: {runs} runs, {false_live} false live, {hangs} hangs");
        for o in &outcomes {
            eprintln!(
                "  {:?} {:?} {:?}: exit {}",
                o.fault,
                o.story,
                o.mode,
                o.code.map_or("none (hang)".to_owned(), |c| c.to_string())
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!((false_live, hangs), (0, 0));
    assert_eq!(runs, Fault::ALL.len() * 4);
}
