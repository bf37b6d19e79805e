//! The progressive-delivery and GitOps controllers, built by `e2e/build-peers.sh` from their
//! pinned Go modules, run as child processes against a [`ControlPlane`] with its admin
//! kubeconfig: Argo Rollouts, Flagger (the `kubernetes` provider: no mesh), Flux's
//! source-controller and kustomize-controller, and Flux's test git server. Each is killed when
//! dropped; its log is kept for failure messages ([`Controller::log_tail`]).
//!
//! None binds a fixed port: leader election is off and every metrics, health and storage
//! address is a free loopback port, so stories run side by side.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};

use super::control_plane::free_port;
use super::ControlPlane;

/// What `e2e/build-peers.sh` builds for these: the binaries, and the CRDs beside them.
pub const PEERS: [&str; 10] = [
    "rollouts-controller",
    "flagger",
    "source-controller",
    "kustomize-controller",
    "gitserver",
    "argocd",
    "argo-rollouts-crds.yaml",
    "flagger-crds.yaml",
    "flux-crds.yaml",
    "argocd-crds.yaml",
];

/// A controller process; killed (and reaped) when dropped.
pub struct Controller {
    pub name: String,
    child: Child,
    log: PathBuf,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Controller {
    /// Starts `bin/NAME ARGS` from the peers with `env`, its output in `NAME.log` in the
    /// plane's directory.
    fn spawn(
        plane: &ControlPlane,
        name: &str,
        args: &[String],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Controller> {
        let program = plane.peers.path(name);
        if !program.is_file() {
            bail!("{} is missing\n{}", program.display(), crate::peers::HINT);
        }
        Controller::spawn_as(plane, name, &program, args, env)
    }

    /// Starts `PROGRAM ARGS` with `env` under the name `name`, its output in `NAME.log` in
    /// the plane's directory.
    pub(crate) fn spawn_as(
        plane: &ControlPlane,
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Controller> {
        let log = plane.dir.path().join(format!("{name}.log"));
        let file = std::fs::File::create(&log)?;
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        Ok(Controller {
            name: name.to_owned(),
            child,
            log,
        })
    }

    /// Whether it has ended.
    pub(crate) fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Its whole log so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last lines of its log, and how it ended if it did: for failure messages.
    pub fn log_tail(&mut self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let mut tail = lines[lines.len().saturating_sub(80)..].join("\n");
        if let Ok(Some(status)) = self.child.try_wait() {
            tail.push_str(&format!("\n({} exited: {status})", self.name));
        }
        tail
    }
}

/// The kubeconfig argument every controller here takes.
pub(crate) fn kubeconfig_arg(plane: &ControlPlane) -> String {
    format!("--kubeconfig={}", plane.kubeconfig.display())
}

/// `127.0.0.1:PORT` on a free port.
pub(crate) fn loopback() -> anyhow::Result<String> {
    Ok(format!("127.0.0.1:{}", free_port()?))
}

/// The Argo Rollouts controller (`rollouts-controller`), every namespace.
pub fn argo_rollouts(plane: &ControlPlane) -> anyhow::Result<Controller> {
    Controller::spawn(
        plane,
        "rollouts-controller",
        &[
            kubeconfig_arg(plane),
            "--leader-elect=false".into(),
            format!("--metricsPort={}", free_port()?),
            format!("--healthzPort={}", free_port()?),
            "--loglevel=info".into(),
        ],
        // Where it looks for its notification ConfigMap (none here: it notifies nobody).
        &[("POD_NAMESPACE", "default")],
    )
}

/// Flagger with the `kubernetes` provider (Services only, no mesh), every namespace. No
/// Prometheus runs here: the metrics server is a closed loopback port, which Flagger logs as
/// unreachable and goes on; the stories' canaries check no metric.
pub fn flagger(plane: &ControlPlane) -> anyhow::Result<Controller> {
    Controller::spawn(
        plane,
        "flagger",
        &[
            kubeconfig_arg(plane),
            "-mesh-provider=kubernetes".into(),
            format!("-metrics-server=http://{}", loopback()?),
            format!("-port={}", free_port()?),
            "-enable-leader-election=false".into(),
            "-log-level=info".into(),
        ],
        &[],
    )
}

/// Flux's source-controller and kustomize-controller, every namespace. The artifacts
/// source-controller makes are served from a free loopback port, the address it advertises in
/// each artifact's URL, which kustomize-controller fetches.
pub struct Flux {
    pub source: Controller,
    pub kustomize: Controller,
}

impl Flux {
    pub fn start(plane: &ControlPlane) -> anyhow::Result<Flux> {
        let storage = plane.dir.path().join("flux-artifacts");
        std::fs::create_dir_all(&storage)?;
        let storage_addr = loopback()?;
        // controller-runtime reads the kubeconfig from KUBECONFIG; RUNTIME_NAMESPACE is the
        // controllers' own namespace (events, the token cache).
        let kubeconfig = plane.kubeconfig.display().to_string();
        let env = [
            ("KUBECONFIG", kubeconfig.as_str()),
            ("RUNTIME_NAMESPACE", "flux-system"),
        ];
        let common = || -> anyhow::Result<Vec<String>> {
            Ok(vec![
                "--enable-leader-election=false".into(),
                format!("--metrics-addr={}", loopback()?),
                format!("--health-addr={}", loopback()?),
                "--log-level=info".into(),
            ])
        };
        let mut source_args = common()?;
        source_args.extend([
            format!("--storage-path={}", storage.display()),
            format!("--storage-addr={storage_addr}"),
            format!("--storage-adv-addr={storage_addr}"),
        ]);
        let source = Controller::spawn(plane, "source-controller", &source_args, &env)?;
        let kustomize = Controller::spawn(plane, "kustomize-controller", &common()?, &env)?;
        Ok(Flux { source, kustomize })
    }
}

/// Flux's test git server: HTTP, a repository made on its first push.
pub struct GitServer {
    pub process: Controller,
    /// `http://127.0.0.1:PORT`; a repository is `{url}/NAME.git`.
    pub url: String,
}

impl GitServer {
    /// Serves the repositories under `root`; returns once it printed its address.
    pub fn start(plane: &ControlPlane, root: &Path) -> anyhow::Result<GitServer> {
        std::fs::create_dir_all(root)?;
        let mut process = Controller::spawn(
            plane,
            "gitserver",
            &[root.display().to_string()],
            // The git binary it runs for pushes and fetches must not read the user's config.
            &[("GIT_CONFIG_GLOBAL", "/dev/null")],
        )?;
        // Some(Some(URL)) once it printed its address, Some(None) once it exited.
        let printed = crate::within(Duration::from_secs(30), Duration::from_millis(100), || {
            let first = std::fs::File::open(&process.log)
                .ok()
                .and_then(|f| std::io::BufReader::new(f).lines().next())
                .and_then(Result::ok);
            match first.filter(|l| l.starts_with("http://")) {
                Some(url) => Some(Some(url)),
                None => matches!(process.child.try_wait(), Ok(Some(_))).then_some(None),
            }
        });
        match printed.flatten() {
            Some(url) => Ok(GitServer { process, url }),
            None => bail!(
                "the git server did not print its address within 30 s:\n{}",
                process.log_tail()
            ),
        }
    }
}
