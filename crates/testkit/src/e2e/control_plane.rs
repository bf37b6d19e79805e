//! The real control plane on loopback ports: etcd, kube-apiserver (RBAC on, a static admin
//! token, service-account tokens signed with a fresh key) and kube-controller-manager, from the
//! binaries `e2e/build-peers.sh` built. Stopped (and its data removed) when dropped.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};

/// The admin's bearer token (`system:masters`), from the apiserver's static token file.
pub const ADMIN_TOKEN: &str = "liveproof-e2e-admin";

/// How long the control plane may take to come up.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// Every peer `e2e/build-peers.sh` builds (`helm` is Helm 4, `helm3` Helm 3).
pub const PEERS: [&str; 5] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "helm",
    "helm3",
];

/// The schemas `e2e/build-peers.sh` keeps beside the peers: the official SARIF 2.1.0 schema
/// (OASIS, errata 01), which `liveproof lint -o sarif` is validated against.
pub const SCHEMAS: [&str; 1] = ["sarif-schema-2.1.0.json"];

/// Where the peer binaries are: `$LIVEPROOF_PEERS_BIN`, else what `e2e/build-peers.sh
/// --check` prints (it fails, naming each missing piece, when they are not built; `cargo xtask
/// peers` builds them).
#[derive(Debug, Clone)]
pub struct Peers {
    pub bin: PathBuf,
}

impl Peers {
    pub fn locate() -> anyhow::Result<Peers> {
        let bin = crate::peers::peers_bin()?;
        let peers = Peers { bin };
        for name in PEERS.into_iter().chain(SCHEMAS) {
            if !peers.path(name).is_file() {
                bail!(
                    "{} is missing\n{}",
                    peers.path(name).display(),
                    crate::peers::HINT
                );
            }
        }
        Ok(peers)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }
}

/// A fresh service-account signing key, ECDSA P-256 (tokens are signed ES256): the private key
/// as PKCS#8 PEM (the API server's `--service-account-signing-key-file` and the controller
/// manager's `--service-account-private-key-file` read PKCS#8) and its public key as SPKI PEM
/// (`--service-account-key-file` takes an EC private key only as SEC1, so it gets the public one).
pub fn service_account_keys() -> anyhow::Result<(String, String)> {
    use ring::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_ASN1_SIGNING};
    // SubjectPublicKeyInfo up to the key: id-ecPublicKey, prime256v1, a 66-byte BIT STRING.
    const P256_SPKI_PREFIX: [u8; 26] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
        0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ];
    let rng = ring::rand::SystemRandom::new();
    let failed = |_| anyhow::anyhow!("cannot generate the service-account signing key");
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).map_err(failed)?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
        .map_err(|_| anyhow::anyhow!("cannot read back the service-account signing key"))?;
    let mut spki = P256_SPKI_PREFIX.to_vec();
    spki.extend_from_slice(pair.public_key().as_ref());
    Ok((pem("PRIVATE KEY", pkcs8.as_ref()), pem("PUBLIC KEY", &spki)))
}

fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

pub use crate::peers::repo_root;

/// Whether a start failed because a component could not bind the port it was given.
fn lost_a_port(err: &anyhow::Error) -> bool {
    format!("{err:#}").contains("address already in use")
}

pub fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// A client for the current context of the kubeconfig at `path`.
pub async fn client_for(path: &Path) -> anyhow::Result<kube::Client> {
    let kubeconfig = kube::config::Kubeconfig::read_from(path)?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

/// Sends `method path` (with `body` as JSON, and `content_type` when given) and returns the
/// status code and the body parsed as JSON (`Null` when it is not JSON), or the body's lines
/// parsed one by one for a watch.
pub async fn raw(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: Option<(&str, &serde_json::Value)>,
) -> anyhow::Result<(u16, Vec<serde_json::Value>)> {
    use http_body_util::BodyExt as _;
    let mut request = http::Request::builder().method(method).uri(path);
    let bytes = match body {
        Some((content_type, value)) => {
            request = request.header("content-type", content_type);
            serde_json::to_vec(value)?
        }
        None => Vec::new(),
    };
    let response = client
        .send(request.body(kube::client::Body::from(bytes))?)
        .await?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await?.to_bytes();
    let text = String::from_utf8_lossy(&body);
    let values = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or(serde_json::Value::Null))
        .collect::<Vec<_>>();
    let values = if values.len() == 1 || path.contains("watch=true") {
        values
    } else {
        vec![serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)]
    };
    Ok((status, values))
}

/// A running control plane.
pub struct ControlPlane {
    children: Vec<(String, Child)>,
    /// `https://127.0.0.1:PORT`.
    pub server: String,
    /// An admin kubeconfig (the static token), context `e2e`, namespace `default`.
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
    pub peers: Peers,
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        // Controllers first, etcd last.
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl ControlPlane {
    /// Starts etcd, the API server and the controller manager; returns when `/readyz` says ok.
    pub async fn start() -> anyhow::Result<ControlPlane> {
        Self::start_with(&[]).await
    }

    /// As [`ControlPlane::start`], with more kube-apiserver flags (later flags win), e.g.
    /// `--watch-cache=false` and `--etcd-compaction-interval=5s` for watches that expire.
    pub async fn start_with(apiserver_args: &[&str]) -> anyhow::Result<ControlPlane> {
        Self::start_tuned(apiserver_args, &[]).await
    }

    /// As [`ControlPlane::start_with`], with more kube-controller-manager flags too (later
    /// flags win): a benchmark's `--kube-api-qps=200 --kube-api-burst=400`, so 10,000 pods
    /// are created in minutes (the default 20 requests a second takes 8 to 12).
    pub async fn start_tuned(
        apiserver_args: &[&str],
        controller_manager_args: &[&str],
    ) -> anyhow::Result<ControlPlane> {
        const ATTEMPTS: usize = 3;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let peers = Peers::locate()?;
            let dir = tempfile::tempdir()?;
            let mut plane = ControlPlane {
                children: Vec::new(),
                server: String::new(),
                kubeconfig: dir.path().join("kubeconfig"),
                dir,
                peers,
            };
            match plane.launch(apiserver_args, controller_manager_args).await {
                Ok(()) => return Ok(plane),
                // A free port is found by binding and letting go: another process (a test
                // running beside this one) can take it before etcd or the API server binds
                // it. Start again on other ports; dropping the plane stops what did start.
                Err(e) if attempt < ATTEMPTS && lost_a_port(&e) => {
                    tracing::warn!("a port was taken while the control plane started; again");
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn spawn(&mut self, name: &str, args: &[String]) -> anyhow::Result<()> {
        let log = std::fs::File::create(self.dir.path().join(format!("{name}.log")))?;
        let child = Command::new(self.peers.path(name))
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {}", self.peers.path(name).display()))?;
        self.children.push((name.to_owned(), child));
        Ok(())
    }

    /// The last lines of a component's log, for failure messages.
    pub fn log_tail(&self, name: &str) -> String {
        let text = std::fs::read_to_string(self.dir.path().join(format!("{name}.log")))
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }

    async fn launch(
        &mut self,
        apiserver_args: &[&str],
        controller_manager_args: &[&str],
    ) -> anyhow::Result<()> {
        let d = self.dir.path().to_path_buf();
        let path = |p: &str| d.join(p).display().to_string();
        let (etcd_port, peer_port, api_port) = (free_port()?, free_port()?, free_port()?);
        // The service-account signing key, made here rather than by `openssl` (one tool less).
        let (private_key, public_key) = service_account_keys()?;
        std::fs::write(d.join("sa.key"), private_key)?;
        std::fs::write(d.join("sa.pub"), public_key)?;
        std::fs::write(
            d.join("tokens.csv"),
            format!("{ADMIN_TOKEN},admin,admin-uid,system:masters\n"),
        )?;
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        self.spawn(
            "etcd",
            &[
                "--name=e2e".into(),
                format!("--data-dir={}", path("etcd")),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=e2e={peer_url}"),
                "--log-level=warn".into(),
                "--quota-backend-bytes=2147483648".into(),
            ],
        )?;
        self.server = format!("https://127.0.0.1:{api_port}");
        let mut args: Vec<String> = vec![
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={api_port}"),
            format!("--cert-dir={}", path("certs")),
            format!("--token-auth-file={}", path("tokens.csv")),
            "--authorization-mode=Node,RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            format!("--service-account-key-file={}", path("sa.pub")),
            format!("--service-account-signing-key-file={}", path("sa.key")),
            "--service-cluster-ip-range=10.96.0.0/16".into(),
            "--profiling=false".into(),
            "--v=1".into(),
        ];
        args.extend(apiserver_args.iter().map(|a| (*a).to_owned()));
        self.spawn("kube-apiserver", &args)?;
        let mut kubeconfig = std::fs::File::create(&self.kubeconfig)?;
        write!(
            kubeconfig,
            "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: {server}
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: {ADMIN_TOKEN}
contexts:
- name: e2e
  context:
    cluster: e2e
    user: admin
    namespace: default
current-context: e2e
",
            server = self.server
        )?;
        drop(kubeconfig);
        self.wait_ready("kube-apiserver").await?;
        let mut args = vec![
            format!("--kubeconfig={}", self.kubeconfig.display()),
            format!("--authentication-kubeconfig={}", self.kubeconfig.display()),
            format!("--authorization-kubeconfig={}", self.kubeconfig.display()),
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={}", free_port()?),
            format!("--cert-dir={}", path("kcm-certs")),
            format!("--service-account-private-key-file={}", path("sa.key")),
            format!("--root-ca-file={}", path("certs/apiserver.crt")),
            "--leader-elect=false".into(),
            // No kubelet heartbeats to judge by: the stand-in's nodes stay as it says.
            "--controllers=*,-nodelifecycle".into(),
            "--v=1".into(),
        ];
        args.extend(controller_manager_args.iter().map(|a| (*a).to_owned()));
        self.spawn("kube-controller-manager", &args)?;
        Ok(())
    }

    /// A client for the admin.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        Ok(kube::Client::try_from(config)?)
    }

    async fn wait_ready(&mut self, component: &str) -> anyhow::Result<()> {
        let client = self.client().await?;
        let children = &mut self.children;
        let client = &client;
        // Some(Ok) once ready, Some(Err(NAME, STATUS)) once a component exited.
        let ready = crate::within_async(READY_WITHIN, Duration::from_millis(250), || {
            let exited = children
                .iter_mut()
                .find_map(|(name, child)| match child.try_wait() {
                    Ok(Some(status)) => Some((name.clone(), status)),
                    _ => None,
                });
            async move {
                if let Some(exited) = exited {
                    return Some(Err(exited));
                }
                let request = http::Request::get("/readyz").body(Vec::new()).ok()?;
                let text = client.request_text(request).await.ok()?;
                (text.trim() == "ok").then_some(Ok(()))
            }
        })
        .await;
        match ready {
            Some(Ok(())) => Ok(()),
            Some(Err((name, status))) => bail!(
                "{name} exited ({status}); its log:\n{}",
                self.log_tail(&name)
            ),
            None => bail!(
                "{component} was not ready within {READY_WITHIN:?}; its log:\n{}",
                self.log_tail(component)
            ),
        }
    }
}
