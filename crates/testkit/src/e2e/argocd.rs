//! Argo CD on its real controllers: the application-controller and the repo-server (one
//! binary, `argocd` from `e2e/build-peers.sh`, each by the name it is started under), a real
//! Redis (their cache), run as processes beside a [`ControlPlane`], with Argo CD's CRDs from the
//! same module. Each is killed when dropped; its log is kept for failure messages.
//!
//! The controller runs outside the cluster, so the destination cluster is registered as Argo
//! CD registers one it does not run in: an `argocd.argoproj.io/secret-type: cluster` Secret with
//! the API server's URL and the admin's credentials ([`DESTINATION`]); the in-cluster entry
//! (`https://kubernetes.default.svc`, which only resolves in a pod) is turned off in `argocd-cm`.
//! No argocd-server runs: what it would do on start (the `default` AppProject) is done here, and
//! a push webhook is what it turns into, an `argocd.argoproj.io/refresh` annotation on each
//! Application the push touches (argocd-server v3.1 writes `normal`; [`refresh`] writes `hard`,
//! which also bypasses the repo-server's caches, so the pushed commit is found at once).
//!
//! Nothing binds a fixed port or path: Redis, the repo-server's gRPC and metrics ports and the
//! controller's metrics port are free loopback ports, and the repo-server's checkouts and
//! askpass socket are in the plane's directory, so stories run side by side. Periodic
//! reconciliation is off (`--app-resync=0`): Argo CD looks at git only when a story asks it to
//! (a hard refresh) or an Application changes, so "pushed but not synced yet" stays so.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};

use super::control_plane::{free_port, ADMIN_TOKEN};
use super::controllers::{kubeconfig_arg, Controller};
use super::ControlPlane;

/// Where Argo CD runs, and where its Applications live.
pub const NAMESPACE: &str = "argocd";

/// The name the destination cluster is registered under (an Application's
/// `spec.destination.name`; `spec.destination.server` is the plane's URL).
pub const DESTINATION: &str = "e2e";

/// How long each component may take to come up.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// Redis, the repo-server and the application-controller; killed (controller first) when
/// dropped.
pub struct ArgoCd {
    pub controller: Controller,
    pub repo_server: Controller,
    pub redis: Controller,
}

impl ArgoCd {
    /// Installs Argo CD's CRDs and settings on `plane` and starts Redis, the repo-server and
    /// the application-controller; returns once Redis answers and the repo-server listens.
    pub fn start(plane: &ControlPlane) -> anyhow::Result<ArgoCd> {
        install(plane)?;
        let (redis, redis_port) = on_a_free_port(|| start_redis(plane))?;
        let redis_addr = format!("127.0.0.1:{redis_port}");
        let (repo_server, repo_port) = on_a_free_port(|| start_repo_server(plane, &redis_addr))?;
        let repo_addr = format!("127.0.0.1:{repo_port}");
        let controller = Controller::spawn_as(
            plane,
            "argocd-application-controller",
            &argocd(plane)?,
            &[
                kubeconfig_arg(plane),
                format!("--namespace={NAMESPACE}"),
                format!("--repo-server={repo_addr}"),
                "--repo-server-plaintext".into(),
                format!("--redis={redis_addr}"),
                format!("--metrics-port={}", free_port()?),
                // No periodic comparison with git: a story asks for each (a hard refresh).
                "--app-resync=0".into(),
                "--logformat=text".into(),
                "--loglevel=info".into(),
            ],
            &[("ARGOCD_BINARY_NAME", "argocd-application-controller")],
        )?;
        Ok(ArgoCd {
            controller,
            repo_server,
            redis,
        })
    }

    /// Into a world's list of processes: the controller, the repo-server and Redis.
    pub fn into_processes(self) -> [Controller; 3] {
        [self.controller, self.repo_server, self.redis]
    }
}

/// What a push webhook does to an Application (argocd-server annotates it `refresh: normal`),
/// made certain: `refresh: hard`, compare with git now, the repo-server's caches bypassed; an
/// automated app then syncs what it finds.
pub fn refresh(plane: &ControlPlane, app: &str) -> anyhow::Result<()> {
    kubectl(
        plane,
        &[
            "-n",
            NAMESPACE,
            "annotate",
            "--overwrite",
            &format!("application/{app}"),
            "argocd.argoproj.io/refresh=hard",
        ],
        None,
    )
    .map(drop)
}

/// An Application `name` in [`NAMESPACE`] with automated sync (and prune) of the plain
/// manifests under `path` of `repo_url` at `main`, applied to namespace `namespace` of the
/// registered destination. Without self-heal: Argo CD syncs each new revision once, and a
/// resource it sees out of sync for a moment after creating it (its cache behind the API
/// server) is not synced again by a second operation that would replace the first one's
/// `operationState` (its `finishedAt` later, its `syncResult.resources` only that resource).
pub fn application(name: &str, repo_url: &str, path: &str, namespace: &str) -> String {
    manual_application(name, repo_url, path, namespace)
        + "  syncPolicy:
    automated:
      prune: true
"
}

/// [`application`] without a sync policy: Argo CD compares the cluster with git (OutOfSync when
/// they differ) but syncs only when asked, as `argocd app sync` asks ([`sync`]).
pub fn manual_application(name: &str, repo_url: &str, path: &str, namespace: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: {NAMESPACE}
spec:
  project: default
  source:
    repoURL: {repo_url}
    path: {path}
    targetRevision: main
  destination:
    name: {DESTINATION}
    namespace: {namespace}
"
    )
}

/// What `argocd app sync APP` makes argocd-server do (v3.1.16: `Server.Sync` in
/// `server/application/application.go`, then `argo.SetAppOperation`): with the target revision
/// resolved to `commit`, it sets the Application's top-level `operation` — a sync of that
/// revision, no prune, the CLI's default `hook` strategy, initiated by the user — and clears
/// `status.operationState`, refusing while another operation is set. The application-controller
/// then runs it as it runs an automated one.
pub fn sync(plane: &ControlPlane, app: &str, commit: &str) -> anyhow::Result<()> {
    let object = format!("application/{app}");
    let current: serde_json::Value = serde_json::from_str(&kubectl(
        plane,
        &["-n", NAMESPACE, "get", &object, "-o", "json"],
        None,
    )?)?;
    if let Some(operation) = current.get("operation").filter(|o| !o.is_null()) {
        bail!("another operation is already in progress on {object}: {operation}");
    }
    let patch = serde_json::json!({
        "operation": {
            "sync": {"revision": commit, "prune": false, "syncStrategy": {"hook": {}}},
            "initiatedBy": {"username": "admin"},
        },
        "status": {"operationState": null},
    })
    .to_string();
    kubectl(
        plane,
        &[
            "-n",
            NAMESPACE,
            "patch",
            &object,
            "--type=merge",
            "-p",
            &patch,
        ],
        None,
    )
    .map(drop)
}

/// The `argocd` binary from the peers.
fn argocd(plane: &ControlPlane) -> anyhow::Result<PathBuf> {
    let program = plane.peers.path("argocd");
    if !program.is_file() {
        bail!("{} is missing\n{}", program.display(), crate::peers::HINT);
    }
    Ok(program)
}

/// The real kubectl against `plane`: what it printed, or an error with its stderr.
fn kubectl(plane: &ControlPlane, args: &[&str], stdin: Option<&str>) -> anyhow::Result<String> {
    let program = crate::peers::kubectl()?;
    let mut child = Command::new(&program)
        .arg(format!("--kubeconfig={}", plane.kubeconfig.display()))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.unwrap_or_default().as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The CRDs (Application, AppProject), the namespace, the settings the controller reads
/// (`argocd-cm`, `argocd-rbac-cm`, `argocd-secret`), the destination cluster's Secret and the
/// `default` project (argocd-server makes it on start; none runs here).
fn install(plane: &ControlPlane) -> anyhow::Result<()> {
    let crds = plane.peers.path("argocd-crds.yaml");
    let crds = crds.to_str().context("a UTF-8 path")?;
    // Server-side: the Application CRD is larger than client-side apply's annotation allows.
    kubectl(plane, &["apply", "--server-side", "-f", crds], None)?;
    // Polled, not `kubectl wait` (nor a jsonpath filter): both fail on a CRD whose status has
    // no conditions yet, as a CRD just created has.
    let established = |crd: &str| -> anyhow::Result<bool> {
        let json: serde_json::Value =
            serde_json::from_str(&kubectl(plane, &["get", "crd", crd, "-o", "json"], None)?)?;
        Ok(json
            .pointer("/status/conditions")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True"))
    };
    for crd in ["applications.argoproj.io", "appprojects.argoproj.io"] {
        // Some(Ok) once established, Some(Err) when kubectl failed.
        let read = crate::within(
            READY_WITHIN,
            Duration::from_millis(100),
            || match established(crd) {
                Ok(false) => None,
                Ok(true) => Some(Ok(())),
                Err(e) => Some(Err(e)),
            },
        );
        match read {
            Some(read) => read?,
            None => bail!("the CRD {crd} was not established within {READY_WITHIN:?}"),
        }
    }
    // The cluster config: the admin's token; the API server's certificate is self-signed.
    let config = serde_json::json!({
        "bearerToken": ADMIN_TOKEN,
        "tlsClientConfig": {"insecure": true},
    })
    .to_string();
    let secret_key = {
        use base64::Engine as _;
        let mut key = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut key)
            .map_err(|_| anyhow::anyhow!("no randomness for argocd-secret"))?;
        base64::engine::general_purpose::STANDARD.encode(key)
    };
    let settings = format!(
        "apiVersion: v1
kind: Namespace
metadata:
  name: {NAMESPACE}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: {NAMESPACE}
  labels: {{app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}}
data:
  # https://kubernetes.default.svc resolves only in a pod: the destination is registered below.
  cluster.inClusterEnabled: \"false\"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-rbac-cm
  namespace: {NAMESPACE}
  labels: {{app.kubernetes.io/name: argocd-rbac-cm, app.kubernetes.io/part-of: argocd}}
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: {NAMESPACE}
  labels: {{app.kubernetes.io/name: argocd-secret, app.kubernetes.io/part-of: argocd}}
type: Opaque
stringData:
  server.secretkey: {secret_key}
---
apiVersion: v1
kind: Secret
metadata:
  name: cluster-{DESTINATION}
  namespace: {NAMESPACE}
  labels: {{argocd.argoproj.io/secret-type: cluster}}
type: Opaque
stringData:
  name: {DESTINATION}
  server: {server}
  config: '{config}'
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: {NAMESPACE}
spec:
  sourceRepos: ['*']
  destinations: [{{server: '*', namespace: '*'}}]
  clusterResourceWhitelist: [{{group: '*', kind: '*'}}]
",
        server = plane.server,
    );
    kubectl(plane, &["apply", "-f", "-"], Some(&settings))?;
    Ok(())
}

/// `start()`, again (three times in all) when it lost its port: a free port is found by
/// binding and letting go, and another process can take it before the server binds it.
fn on_a_free_port<T>(mut start: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let mut attempt = 1;
    loop {
        match start() {
            Err(e)
                if attempt < 3
                    && format!("{e:#}")
                        .to_lowercase()
                        .contains("address already in use") =>
            {
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// Redis on a free loopback port, nothing persisted; returns once it answers PING, with its
/// port.
fn start_redis(plane: &ControlPlane) -> anyhow::Result<(Controller, u16)> {
    let program = crate::peers::redis_server()?;
    let dir = plane.dir.path().join("redis");
    std::fs::create_dir_all(&dir)?;
    let port = free_port()?;
    let mut redis = Controller::spawn_as(
        plane,
        "redis-server",
        &program,
        &[
            "--bind".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "--dir".into(),
            dir.display().to_string(),
            "--save".into(),
            String::new(),
            "--appendonly".into(),
            "no".into(),
        ],
        &[],
    )?;
    // Some(true) once it answers, Some(false) once it exited.
    let answered = crate::within(READY_WITHIN, Duration::from_millis(100), || {
        if ping(port).is_ok() {
            Some(true)
        } else {
            redis.exited().then_some(false)
        }
    });
    if answered != Some(true) {
        bail!(
            "Redis ({}) did not answer on port {port} within {READY_WITHIN:?}:\n{}",
            program.display(),
            redis.log_tail()
        );
    }
    Ok((redis, port))
}

/// `PING` → `+PONG` on `127.0.0.1:PORT`.
fn ping(port: u16) -> anyhow::Result<()> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(b"PING\r\n")?;
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply)?;
    if &reply != b"+PONG\r\n" {
        bail!("Redis answered {:?}", String::from_utf8_lossy(&reply));
    }
    Ok(())
}

/// The repo-server: gRPC without TLS on a free loopback port, its checkouts (`TMPDIR`) and
/// askpass socket in the plane's directory, no GnuPG; returns once it listens, with its port.
fn start_repo_server(plane: &ControlPlane, redis: &str) -> anyhow::Result<(Controller, u16)> {
    let tmp = plane.dir.path().join("argocd-repo-server");
    std::fs::create_dir_all(&tmp)?;
    let tmp_str = tmp.display().to_string();
    let askpass = tmp.join("askpass.sock").display().to_string();
    let port = free_port()?;
    let mut server = Controller::spawn_as(
        plane,
        "argocd-repo-server",
        &argocd(plane)?,
        &[
            "--address=127.0.0.1".into(),
            format!("--port={port}"),
            "--metrics-address=127.0.0.1".into(),
            format!("--metrics-port={}", free_port()?),
            "--disable-tls".into(),
            format!("--redis={redis}"),
            "--logformat=text".into(),
            "--loglevel=info".into(),
        ],
        &[
            ("ARGOCD_BINARY_NAME", "argocd-repo-server"),
            ("TMPDIR", &tmp_str),
            ("ARGOCD_ASK_PASS_SOCK", &askpass),
            ("ARGOCD_GPG_ENABLED", "false"),
            // The git it runs must not read the user's configuration.
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
        ],
    )?;
    // Some(true) once it listens, Some(false) once it exited.
    let listening = crate::within(READY_WITHIN, Duration::from_millis(100), || {
        if server.log().contains("argocd-repo-server is listening on")
            && TcpStream::connect(("127.0.0.1", port)).is_ok()
        {
            Some(true)
        } else {
            server.exited().then_some(false)
        }
    });
    if listening != Some(true) {
        bail!(
            "the repo-server did not listen on port {port} within {READY_WITHIN:?}:\n{}",
            server.log_tail()
        );
    }
    Ok((server, port))
}
