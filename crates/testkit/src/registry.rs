//! A real registry for tests: the CNCF distribution registry (v3, built by `cargo xtask` from the
//! module pinned in e2e/peers/registry; `LIVEPROOF_REGISTRY` overrides it) on a
//! free loopback port with its storage in a temporary folder, stopped on drop; and a pusher that
//! uploads real image content over the registry HTTP API.

#![expect(
    clippy::unwrap_used,
    reason = "a harness fails loudly on the first surprise"
)]

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use liveproof_registry::{Client, ClientOptions, Digest, DockerConfig, Reference};
use serde_json::json;

pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
pub const DOCKER_LAYER: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
pub const IN_TOTO: &str = "application/vnd.in-toto+json";

/// A running `registry serve CONFIG`, killed on drop.
pub struct RegistryServer {
    child: Child,
    /// `127.0.0.1:PORT`, as it appears in image references.
    pub host: String,
    pub htpasswd: Option<(String, String)>,
    /// The config, htpasswd and storage; removed after the registry is stopped.
    _dir: tempfile::TempDir,
}

impl RegistryServer {
    /// An open registry.
    pub fn start() -> RegistryServer {
        RegistryServer::launch(None)
    }

    /// A registry behind htpasswd Basic auth with one user.
    pub fn start_with_htpasswd(user: &str, password: &str) -> RegistryServer {
        RegistryServer::launch(Some((user.to_owned(), password.to_owned())))
    }

    fn launch(htpasswd: Option<(String, String)>) -> RegistryServer {
        let binary = registry_binary();
        // The port is picked by binding :0 and released before the registry binds it, so
        // another process may take it in between: retry a few times on an early exit.
        let mut last_log = String::new();
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let host = format!("127.0.0.1:{port}");
            let config = write_config(dir.path(), &host, htpasswd.as_ref());
            let log_path = dir.path().join("registry.log");
            let log = std::fs::File::create(&log_path).unwrap();
            let child = Command::new(&binary)
                .arg("serve")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
            let mut server = RegistryServer {
                child,
                host,
                htpasswd: htpasswd.clone(),
                _dir: dir,
            };
            if server.wait_ready(Duration::from_secs(15)) {
                return server;
            }
            last_log = std::fs::read_to_string(&log_path).unwrap_or_default();
        }
        panic!("the registry did not come up on a loopback port; its log:\n{last_log}");
    }

    /// Polls `GET /v2/` until the registry answers (200, or 401 behind auth).
    fn wait_ready(&mut self, within: Duration) -> bool {
        // Some(true) once it answers, Some(false) once it exited.
        let answered = crate::within(within, Duration::from_millis(50), || {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Some(false);
            }
            http_status(&self.host, "/v2/")
                .filter(|status| *status == 200 || *status == 401)
                .map(|_| true)
        });
        if answered.is_none() {
            let _ = self.child.kill();
        }
        answered == Some(true)
    }

    /// `127.0.0.1:PORT/<repository>:<tag>`.
    pub fn reference(&self, repository: &str, tag: &str) -> Reference {
        Reference::parse(&format!("{}/{repository}:{tag}", self.host)).unwrap()
    }

    /// A client that speaks plain HTTP to this registry.
    pub fn client(&self, docker_config: DockerConfig) -> Client {
        Client::new(ClientOptions {
            insecure_registries: vec![self.host.clone()],
            timeout: Duration::from_secs(10),
            concurrency: 4,
            docker_config,
        })
        .unwrap()
    }

    /// A docker config.json with this registry's htpasswd user in `auths`.
    pub fn docker_config(&self) -> DockerConfig {
        let (user, password) = self.htpasswd.clone().expect("an htpasswd registry");
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        DockerConfig::from_json(
            json!({"auths": {self.host.clone(): {"auth": auth}}})
                .to_string()
                .as_bytes(),
        )
        .unwrap()
    }

    pub fn pusher(&self) -> Pusher {
        Pusher {
            http: plain_http_client(),
            base: format!("http://{}", self.host),
            basic: self.htpasswd.clone(),
        }
    }
}

impl Drop for RegistryServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// reqwest is built without a default crypto provider (the library hands it a ring config);
/// the pusher only speaks plain HTTP but reqwest still wants a TLS setup.
fn plain_http_client() -> reqwest::Client {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_platform_verifier()
        .unwrap()
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .unwrap()
}

/// The registry binary; a test that needs it fails (never skips) when it is missing.
fn registry_binary() -> PathBuf {
    crate::peers::registry()
        .unwrap_or_else(|missing| panic!("these tests need a real OCI registry: {missing}"))
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn write_config(dir: &Path, host: &str, htpasswd: Option<&(String, String)>) -> PathBuf {
    let storage = dir.join("storage");
    std::fs::create_dir_all(&storage).unwrap();
    let mut config = format!(
        "version: 0.1\n\
         log:\n  level: error\n  accesslog:\n    disabled: true\n\
         storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
         http:\n  addr: {host}\n  secret: liveproof-test-secret\n",
        storage.display()
    );
    if let Some((user, password)) = htpasswd {
        let hash = bcrypt::hash(password, 4).unwrap();
        let path = dir.join("htpasswd");
        std::fs::write(&path, format!("{user}:{hash}\n")).unwrap();
        config.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: liveproof\n    path: {}\n",
            path.display()
        ));
    }
    let path = dir.join("config.yml");
    std::fs::write(&path, config).unwrap();
    path
}

/// A blocking `GET` with a raw socket, so readiness needs no runtime.
fn http_status(host: &str, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(host).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// Uploads blobs and manifests over the registry HTTP API.
pub struct Pusher {
    http: reqwest::Client,
    base: String,
    basic: Option<(String, String)>,
}

impl Pusher {
    fn auth(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.basic {
            Some((user, password)) => request.basic_auth(user, Some(password)),
            None => request,
        }
    }

    /// POST /v2/<name>/blobs/uploads/ then PUT <location>?digest=…
    pub async fn blob(&self, repository: &str, bytes: &[u8]) -> Digest {
        let digest = Digest::sha256_of(bytes);
        let start = self
            .auth(
                self.http
                    .post(format!("{}/v2/{repository}/blobs/uploads/", self.base)),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(start.status().as_u16(), 202, "start upload to {repository}");
        let location = start
            .headers()
            .get("Location")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let location = if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            location
        };
        let sep = if location.contains('?') { '&' } else { '?' };
        let put = self
            .auth(
                self.http
                    .put(format!("{location}{sep}digest={digest}"))
                    .header("Content-Type", "application/octet-stream")
                    .body(bytes.to_vec()),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(put.status().as_u16(), 201, "finish upload of {digest}");
        digest
    }

    /// PUT /v2/<name>/manifests/<reference> with its media type; returns the manifest's digest
    /// (and checks the registry computed the same).
    pub async fn manifest(
        &self,
        repository: &str,
        reference: &str,
        media_type: &str,
        body: &serde_json::Value,
    ) -> (Digest, usize) {
        let bytes = serde_json::to_vec_pretty(body).unwrap();
        let digest = Digest::sha256_of(&bytes);
        let put = self
            .auth(
                self.http
                    .put(format!(
                        "{}/v2/{repository}/manifests/{reference}",
                        self.base
                    ))
                    .header("Content-Type", media_type)
                    .body(bytes.clone()),
            )
            .send()
            .await
            .unwrap();
        let status = put.status().as_u16();
        let header = put
            .headers()
            .get("Docker-Content-Digest")
            .map(|v| v.to_str().unwrap().to_owned());
        let text = put.text().await.unwrap_or_default();
        assert_eq!(status, 201, "PUT manifest {repository}:{reference}: {text}");
        assert_eq!(header.as_deref(), Some(digest.as_str()));
        (digest, bytes.len())
    }
}

/// A pushed platform image: its manifest's digest and size.
#[derive(Debug, Clone)]
pub struct PushedManifest {
    pub digest: Digest,
    pub size: usize,
    pub os: &'static str,
    pub architecture: &'static str,
    pub variant: Option<&'static str>,
    pub manifest: serde_json::Value,
}

/// Pushes a runnable image for one platform: config and layer blobs, then its manifest by
/// digest (untagged, as buildx pushes the entries of an index). `build` varies the content.
pub async fn push_platform_image(
    pusher: &Pusher,
    repository: &str,
    build: &str,
    os: &'static str,
    architecture: &'static str,
    variant: Option<&'static str>,
    docker_format: bool,
) -> PushedManifest {
    let layer = format!("layer of {repository} build {build} for {os}/{architecture}").into_bytes();
    let layer_digest = pusher.blob(repository, &layer).await;
    let mut config = json!({
        "architecture": architecture,
        "os": os,
        "config": {"Labels": {"build": build}},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest.to_string()]}
    });
    if let Some(variant) = variant {
        config["variant"] = json!(variant);
    }
    let config_bytes = serde_json::to_vec(&config).unwrap();
    let config_digest = pusher.blob(repository, &config_bytes).await;
    let (media_type, config_type, layer_type) = if docker_format {
        (DOCKER_MANIFEST, DOCKER_CONFIG, DOCKER_LAYER)
    } else {
        (OCI_MANIFEST, OCI_CONFIG, OCI_LAYER)
    };
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": media_type,
        "config": {"mediaType": config_type, "digest": config_digest.to_string(), "size": config_bytes.len()},
        "layers": [{"mediaType": layer_type, "digest": layer_digest.to_string(), "size": layer.len()}]
    });
    let bytes = serde_json::to_vec_pretty(&manifest).unwrap();
    let digest = Digest::sha256_of(&bytes);
    let (pushed, size) = pusher
        .manifest(repository, digest.as_str(), media_type, &manifest)
        .await;
    PushedManifest {
        digest: pushed,
        size,
        os,
        architecture,
        variant,
        manifest,
    }
}

/// Pushes a BuildKit-style attestation manifest for `subject` (an in-toto layer, config
/// `application/vnd.oci.image.config.v1+json` with unknown/unknown), untagged.
pub async fn push_attestation(
    pusher: &Pusher,
    repository: &str,
    subject: &Digest,
) -> (Digest, usize) {
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v0.1",
        "predicateType": "https://slsa.dev/provenance/v0.2",
        "subject": [{"name": "_", "digest": {"sha256": subject.hex()}}],
        "predicate": {}
    });
    let statement = serde_json::to_vec(&statement).unwrap();
    let layer = pusher.blob(repository, &statement).await;
    let config = json!({"architecture": "unknown", "os": "unknown", "config": {},
        "rootfs": {"type": "layers", "diff_ids": [layer.to_string()]}});
    let config_bytes = serde_json::to_vec(&config).unwrap();
    let config_digest = pusher.blob(repository, &config_bytes).await;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": config_digest.to_string(), "size": config_bytes.len()},
        "layers": [{"mediaType": IN_TOTO, "digest": layer.to_string(), "size": statement.len(),
                    "annotations": {"in-toto.io/predicate-type": "https://slsa.dev/provenance/v0.2"}}]
    });
    let digest = Digest::sha256_of(&serde_json::to_vec_pretty(&manifest).unwrap());
    pusher
        .manifest(repository, digest.as_str(), OCI_MANIFEST, &manifest)
        .await
}

fn platform_json(m: &PushedManifest) -> serde_json::Value {
    let mut platform = json!({"os": m.os, "architecture": m.architecture});
    if let Some(variant) = m.variant {
        platform["variant"] = json!(variant);
    }
    platform
}

/// What a multi-platform push left in the registry.
#[derive(Debug, Clone)]
pub struct PushedIndex {
    pub digest: Digest,
    pub amd64: PushedManifest,
    pub arm64: PushedManifest,
    pub attestations: Vec<Digest>,
}

/// Pushes what `docker buildx build --platform linux/amd64,linux/arm64 --push` does: two
/// platform manifests, an attestation manifest for each, and an OCI index of all four tagged
/// `tag`.
pub async fn push_multiarch(
    pusher: &Pusher,
    repository: &str,
    tag: &str,
    build: &str,
) -> PushedIndex {
    let amd64 = push_platform_image(pusher, repository, build, "linux", "amd64", None, false).await;
    let arm64 = push_platform_image(
        pusher,
        repository,
        build,
        "linux",
        "arm64",
        Some("v8"),
        false,
    )
    .await;
    let mut entries = vec![];
    for m in [&amd64, &arm64] {
        entries.push(
            json!({"mediaType": OCI_MANIFEST, "digest": m.digest.to_string(),
                            "size": m.size, "platform": platform_json(m)}),
        );
    }
    let mut attestations = vec![];
    for m in [&amd64, &arm64] {
        let (digest, size) = push_attestation(pusher, repository, &m.digest).await;
        entries.push(json!({
            "mediaType": OCI_MANIFEST, "digest": digest.to_string(), "size": size,
            "annotations": {"vnd.docker.reference.digest": m.digest.to_string(),
                            "vnd.docker.reference.type": "attestation-manifest"},
            "platform": {"architecture": "unknown", "os": "unknown"}
        }));
        attestations.push(digest);
    }
    let index = json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries});
    let (digest, _) = pusher.manifest(repository, tag, OCI_INDEX, &index).await;
    PushedIndex {
        digest,
        amd64,
        arm64,
        attestations,
    }
}

/// Pushes two Docker v2 manifests and a Docker manifest list of both, tagged `tag`.
pub async fn push_docker_list(
    pusher: &Pusher,
    repository: &str,
    tag: &str,
    build: &str,
) -> PushedIndex {
    let amd64 = push_platform_image(pusher, repository, build, "linux", "amd64", None, true).await;
    let arm64 = push_platform_image(
        pusher,
        repository,
        build,
        "linux",
        "arm64",
        Some("v8"),
        true,
    )
    .await;
    let entries: Vec<_> = [&amd64, &arm64]
        .iter()
        .map(|m| {
            json!({"mediaType": DOCKER_MANIFEST, "digest": m.digest.to_string(),
                         "size": m.size, "platform": platform_json(m)})
        })
        .collect();
    let list = json!({"schemaVersion": 2, "mediaType": DOCKER_LIST, "manifests": entries});
    let (digest, _) = pusher.manifest(repository, tag, DOCKER_LIST, &list).await;
    PushedIndex {
        digest,
        amd64,
        arm64,
        attestations: vec![],
    }
}

/// Pushes a single-platform image tagged `tag`.
pub async fn push_single(
    pusher: &Pusher,
    repository: &str,
    tag: &str,
    build: &str,
) -> PushedManifest {
    let image = push_platform_image(pusher, repository, build, "linux", "amd64", None, false).await;
    let (digest, _) = pusher
        .manifest(repository, tag, OCI_MANIFEST, &image.manifest)
        .await;
    assert_eq!(digest, image.digest);
    image
}
