//! Registry credentials: docker's `config.json` (auths, credential helpers) and the
//! `kubernetes.io/dockerconfigjson` Secrets pods name in `imagePullSecrets`.
//!
//! Every secret value lives in [`Secret`], whose `Debug` and `Display` print `<redacted>`, so
//! no log line or error message can carry one by accident.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;

use crate::error::RegistryError;
use crate::reference::DOCKER_HUB;
use liveproof_process::Bounds;

/// The key docker stores Docker Hub credentials under.
const DOCKER_HUB_AUTH_KEY: &str = "https://index.docker.io/v1/";

/// A secret string. Only [`Secret::expose`] gives the value.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Credentials for one registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A user name and password (or personal access token).
    Basic { username: String, password: Secret },
    /// A registry token sent as-is (`registrytoken` in config.json).
    Bearer(Secret),
    /// An OAuth2 refresh token (`identitytoken` in config.json), exchanged at the token service.
    IdentityToken(Secret),
}

impl Credentials {
    pub fn basic(username: impl Into<String>, password: impl Into<String>) -> Credentials {
        Credentials::Basic {
            username: username.into(),
            password: Secret::new(password),
        }
    }

    /// The `Authorization` header value for a registry that asks for Basic auth.
    pub(crate) fn basic_header(&self) -> Option<String> {
        match self {
            Credentials::Basic { username, password } => Some(basic_header(username, password)),
            _ => None,
        }
    }
}

pub(crate) fn basic_header(username: &str, password: &Secret) -> String {
    let raw = format!("{username}:{}", password.expose());
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            Credentials::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            Credentials::IdentityToken(_) => f.write_str("IdentityToken(<redacted>)"),
        }
    }
}

impl fmt::Display for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Basic { username, .. } => write!(f, "user {username} (<redacted>)"),
            Credentials::Bearer(_) => f.write_str("registry token <redacted>"),
            Credentials::IdentityToken(_) => f.write_str("identity token <redacted>"),
        }
    }
}

/// One `auths` entry of docker's config.json.
#[derive(Debug, Clone, Default, Deserialize)]
struct AuthEntry {
    /// base64 of `user:password`.
    auth: Option<Secret>,
    username: Option<String>,
    password: Option<Secret>,
    identitytoken: Option<Secret>,
    registrytoken: Option<Secret>,
}

/// Docker's client configuration, as far as registry credentials go.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    #[serde(default, rename = "credHelpers")]
    cred_helpers: BTreeMap<String, String>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
    /// How long a credential helper may run ([`DEFAULT_HELPER_TIMEOUT`] when unset).
    #[serde(skip)]
    helper_timeout: Option<Duration>,
}

/// How long a credential helper may run when no request timeout was given.
pub const DEFAULT_HELPER_TIMEOUT: Duration = Duration::from_secs(30);

impl DockerConfig {
    /// Reads `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. A missing file is an
    /// empty configuration (anonymous pulls); an unreadable or malformed one is an error.
    pub fn load() -> Result<DockerConfig, RegistryError> {
        let Some(path) = default_config_path() else {
            return Ok(DockerConfig::default());
        };
        DockerConfig::load_from(&path)
    }

    /// Reads a config.json at `path`; missing → empty.
    pub fn load_from(path: &Path) -> Result<DockerConfig, RegistryError> {
        match std::fs::read(path) {
            Ok(bytes) => DockerConfig::from_json(&bytes).map_err(|e| match e {
                RegistryError::Credentials { reason, .. } => RegistryError::Credentials {
                    registry: String::new(),
                    reason: format!("{}: {reason}", path.display()),
                },
                other => other,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DockerConfig::default()),
            Err(e) => Err(RegistryError::Credentials {
                registry: String::new(),
                reason: format!("cannot read {}: {e}", path.display()),
            }),
        }
    }

    pub fn from_json(bytes: &[u8]) -> Result<DockerConfig, RegistryError> {
        // serde_json's messages can quote the offending value (a password), so say only where.
        serde_json::from_slice(bytes).map_err(|e| RegistryError::Credentials {
            registry: String::new(),
            reason: format!(
                "docker config is not valid JSON of the expected shape (line {}, column {})",
                e.line(),
                e.column()
            ),
        })
    }

    /// Credential helpers run at most `timeout` each (the request timeout: a helper is part of
    /// the request it authenticates); a helper that outlives it is killed with its children.
    pub fn with_helper_timeout(mut self, timeout: Duration) -> DockerConfig {
        self.helper_timeout = Some(timeout);
        self
    }

    /// Whether this configuration holds anything at all.
    pub fn is_empty(&self) -> bool {
        self.auths.is_empty() && self.cred_helpers.is_empty() && self.creds_store.is_none()
    }

    /// Credentials for `registry` (as in a [`Reference`](crate::Reference): `docker.io`,
    /// `host:port`). A registry-specific helper wins, then the default store, then `auths`.
    pub fn credentials_for(&self, registry: &str) -> Result<Option<Credentials>, RegistryError> {
        let host = registry_key(registry);
        let helper = self
            .cred_helpers
            .iter()
            .find(|(key, _)| registry_key(key) == host)
            .map(|(_, helper)| helper);
        let timeout = self.helper_timeout.unwrap_or(DEFAULT_HELPER_TIMEOUT);
        if let Some(helper) = helper {
            return run_helper(&helper_program(helper), registry, timeout);
        }
        if let Some(store) = self.creds_store.as_deref().filter(|s| !s.is_empty()) {
            if let Some(credentials) = run_helper(&helper_program(store), registry, timeout)? {
                return Ok(Some(credentials));
            }
        }
        let Some(entry) = self
            .auths
            .iter()
            .find(|(key, _)| registry_key(key) == host)
            .map(|(_, entry)| entry)
        else {
            return Ok(None);
        };
        entry_credentials(entry, registry)
    }

    /// Merges `other` over `self` (later Secrets win), for a pod with several pull secrets.
    pub fn merge(&mut self, other: DockerConfig) {
        self.auths.extend(other.auths);
        self.cred_helpers.extend(other.cred_helpers);
        if other.creds_store.is_some() {
            self.creds_store = other.creds_store;
        }
    }
}

fn default_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".docker").join("config.json"))
}

/// The host[:port] an auths/credHelpers key names: keys come as `registry.example.com`,
/// `https://registry.example.com/v1/`, `http://host:5000`; Docker Hub has several names.
fn registry_key(key: &str) -> String {
    let without_scheme = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = without_scheme
        .split('/')
        .next()
        .unwrap_or(without_scheme)
        .to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" | "registry.hub.docker.com" => {
            DOCKER_HUB.to_owned()
        }
        _ => host,
    }
}

fn entry_credentials(
    entry: &AuthEntry,
    registry: &str,
) -> Result<Option<Credentials>, RegistryError> {
    if let Some(token) = &entry.registrytoken {
        return Ok(Some(Credentials::Bearer(token.clone())));
    }
    if let Some(token) = entry.identitytoken.as_ref().filter(|t| !t.0.is_empty()) {
        return Ok(Some(Credentials::IdentityToken(token.clone())));
    }
    if let Some(auth) = entry.auth.as_ref().filter(|a| !a.0.is_empty()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.expose().trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| RegistryError::Credentials {
                registry: registry.to_owned(),
                reason: "the \"auth\" field is not base64 of user:password".to_owned(),
            })?;
        let (username, password) =
            decoded
                .split_once(':')
                .ok_or_else(|| RegistryError::Credentials {
                    registry: registry.to_owned(),
                    reason: "the \"auth\" field decodes to no user:password pair".to_owned(),
                })?;
        return Ok(Some(Credentials::basic(username, password)));
    }
    match (&entry.username, &entry.password) {
        (Some(username), Some(password)) => Ok(Some(Credentials::Basic {
            username: username.clone(),
            password: password.clone(),
        })),
        _ => Ok(None),
    }
}

fn helper_program(helper: &str) -> PathBuf {
    PathBuf::from(format!("docker-credential-{helper}"))
}

/// What a credential helper prints for `get`.
#[derive(Deserialize)]
struct HelperOutput {
    #[serde(rename = "Username", default)]
    username: String,
    #[serde(rename = "Secret", default)]
    secret: Secret,
}

/// Runs `<program> get` with the server on stdin (docker-credential-helpers protocol), within
/// `timeout` and [`liveproof_process::MAX_OUTPUT`]. Nothing it prints is ever quoted.
pub(crate) fn run_helper(
    program: &Path,
    registry: &str,
    timeout: Duration,
) -> Result<Option<Credentials>, RegistryError> {
    let server = if registry == DOCKER_HUB {
        DOCKER_HUB_AUTH_KEY
    } else {
        registry
    };
    let fail = |reason: String| RegistryError::Credentials {
        registry: registry.to_owned(),
        reason,
    };
    let mut command = Command::new(program);
    command.arg("get").stderr(Stdio::piped());
    let output = liveproof_process::run(
        command,
        Bounds {
            stdin: Some(server.as_bytes()),
            capture_stderr: true,
            timeout,
            max_output: liveproof_process::MAX_OUTPUT,
        },
    )
    .map_err(|e| fail(format!("the credential helper {}: {e}", program.display())))?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // The helpers' "not found" answer means: no credentials stored for this server.
        if message.contains("credentials not found") || stderr.contains("credentials not found") {
            return Ok(None);
        }
        return Err(fail(format!(
            "{} get exited with {}",
            program.display(),
            output.status
        )));
    }
    // serde's messages can quote the value (the secret): say only where it went wrong.
    let parsed: HelperOutput = serde_json::from_slice(&output.stdout).map_err(|e| {
        fail(format!(
            "{} printed no credentials JSON (line {}, column {}; its output is not shown)",
            program.display(),
            e.line(),
            e.column()
        ))
    })?;
    if parsed.secret.0.is_empty() {
        return Ok(None);
    }
    // By convention a helper returns an identity token with the user name "<token>".
    if parsed.username == "<token>" {
        return Ok(Some(Credentials::IdentityToken(parsed.secret)));
    }
    Ok(Some(Credentials::Basic {
        username: parsed.username,
        password: parsed.secret,
    }))
}

/// The docker config in a `kubernetes.io/dockerconfigjson` Secret (its
/// `data[".dockerconfigjson"]`, base64), or a legacy `kubernetes.io/dockercfg` one
/// (`data[".dockercfg"]`, the `auths` map alone). Errors name the Secret, never its content.
pub fn dockerconfigjson_secret(
    secret_json: &serde_json::Value,
) -> Result<DockerConfig, RegistryError> {
    let name = format!(
        "Secret {}/{}",
        secret_json
            .pointer("/metadata/namespace")
            .and_then(|v| v.as_str())
            .unwrap_or("?"),
        secret_json
            .pointer("/metadata/name")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
    );
    let fail = |reason: String| RegistryError::Credentials {
        registry: String::new(),
        reason: format!("{name}: {reason}"),
    };
    let decode = |key: &str| -> Result<Option<Vec<u8>>, RegistryError> {
        if let Some(data) = secret_json.pointer(&format!("/data/{key}")) {
            let text = data
                .as_str()
                .ok_or_else(|| fail(format!("data[{key:?}] is not a string")))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|_| fail(format!("data[{key:?}] is not base64")))?;
            return Ok(Some(bytes));
        }
        // stringData is what a manifest may carry before the API server encodes it.
        Ok(secret_json
            .pointer(&format!("/stringData/{key}"))
            .and_then(|v| v.as_str())
            .map(|s| s.as_bytes().to_vec()))
    };
    if let Some(bytes) = decode(".dockerconfigjson")? {
        let config = DockerConfig::from_json(&bytes)
            .map_err(|_| fail("data[\".dockerconfigjson\"] is not a docker config.json".into()))?;
        // A cluster Secret is data, not configuration of this machine: the helper programs it
        // names (credHelpers, credsStore) are never run here, as kubelet never runs them. Run,
        // they would execute whatever `docker-credential-*` the operator has on PATH and send
        // its secrets to the registry the cluster names.
        if !config.cred_helpers.is_empty() || config.creds_store.is_some() {
            tracing::debug!("{name}: credHelpers/credsStore ignored: helpers named by cluster content are never run");
        }
        return Ok(DockerConfig {
            auths: config.auths,
            ..DockerConfig::default()
        });
    }
    if let Some(bytes) = decode(".dockercfg")? {
        let auths: BTreeMap<String, AuthEntry> = serde_json::from_slice(&bytes)
            .map_err(|_| fail("data[\".dockercfg\"] is not a docker auths map".into()))?;
        return Ok(DockerConfig {
            auths,
            ..DockerConfig::default()
        });
    }
    Err(fail(
        "has neither data[\".dockerconfigjson\"] nor data[\".dockercfg\"]".to_owned(),
    ))
}

#[cfg(test)]
#[expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first surprise"
)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(20);

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn credentials_never_print_their_secret() {
        let c = Credentials::basic("alice", "hunter2-s3cret");
        for shown in [format!("{c:?}"), format!("{c}"), format!("{c:#?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
        }
        let t = Credentials::Bearer(Secret::new("tok-s3cret"));
        assert!(!format!("{t:?}{t}").contains("tok-s3cret"));
        let config = DockerConfig::from_json(
            format!(
                r#"{{"auths": {{"r.io": {{"auth": "{}"}}}}}}"#,
                b64("u:hunter2-s3cret")
            )
            .as_bytes(),
        )
        .unwrap();
        assert!(!format!("{config:?}").contains(&b64("u:hunter2-s3cret")));
    }

    #[test]
    fn auths_entries_in_every_form() {
        let json = serde_json::json!({
            "auths": {
                "https://index.docker.io/v1/": {"auth": b64("hub:pw1")},
                "registry.example.com": {"username": "u2", "password": "pw2"},
                "http://host:5000/v2/": {"auth": b64("u3:pw:with:colons")},
                "id.example.com": {"identitytoken": "refresh"},
                "tok.example.com": {"registrytoken": "regtok"},
                "empty.example.com": {}
            }
        });
        let config = DockerConfig::from_json(json.to_string().as_bytes()).unwrap();
        assert_eq!(
            config.credentials_for("docker.io").unwrap(),
            Some(Credentials::basic("hub", "pw1"))
        );
        assert_eq!(
            config.credentials_for("registry.example.com").unwrap(),
            Some(Credentials::basic("u2", "pw2"))
        );
        assert_eq!(
            config.credentials_for("host:5000").unwrap(),
            Some(Credentials::basic("u3", "pw:with:colons"))
        );
        assert_eq!(
            config.credentials_for("id.example.com").unwrap(),
            Some(Credentials::IdentityToken(Secret::new("refresh")))
        );
        assert_eq!(
            config.credentials_for("tok.example.com").unwrap(),
            Some(Credentials::Bearer(Secret::new("regtok")))
        );
        assert_eq!(config.credentials_for("empty.example.com").unwrap(), None);
        assert_eq!(config.credentials_for("other.example.com").unwrap(), None);
        assert_eq!(config.credentials_for("host:5001").unwrap(), None);
    }

    #[test]
    fn bad_auth_field_is_an_error_without_the_value() {
        let config =
            DockerConfig::from_json(br#"{"auths": {"r.io": {"auth": "!!not-base64-s3cret"}}}"#)
                .unwrap();
        let err = config.credentials_for("r.io").unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("r.io"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[cfg(unix)]
    #[test]
    fn credential_helpers_speak_the_helper_protocol() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("docker-credential-test");
        std::fs::write(
            &script,
            "#!/bin/sh\nread server\n[ \"$1\" = get ] || exit 3\n\
             case \"$server\" in\n\
             https://index.docker.io/v1/) echo '{\"ServerURL\":\"x\",\"Username\":\"hubuser\",\"Secret\":\"hubpw\"}' ;;\n\
             tok.io) echo '{\"Username\":\"<token>\",\"Secret\":\"refresh\"}' ;;\n\
             *) echo 'credentials not found in native keychain'; exit 1 ;;\n\
             esac\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            run_helper(&script, "docker.io", T).unwrap(),
            Some(Credentials::basic("hubuser", "hubpw"))
        );
        assert_eq!(
            run_helper(&script, "tok.io", T).unwrap(),
            Some(Credentials::IdentityToken(Secret::new("refresh")))
        );
        assert_eq!(run_helper(&script, "other.io", T).unwrap(), None);
        let missing = run_helper(&dir.path().join("docker-credential-missing"), "r.io", T);
        assert!(matches!(missing, Err(RegistryError::Credentials { .. })));
    }

    #[test]
    fn pull_secrets_decode_to_a_docker_config() {
        let inner = serde_json::json!({"auths": {"r.io": {"auth": b64("pull:pw")}}}).to_string();
        let secret = serde_json::json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "regcred", "namespace": "apps"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64(&inner)}
        });
        let config = dockerconfigjson_secret(&secret).unwrap();
        assert_eq!(
            config.credentials_for("r.io").unwrap(),
            Some(Credentials::basic("pull", "pw"))
        );

        let legacy = serde_json::json!({
            "metadata": {"name": "old", "namespace": "apps"},
            "data": {".dockercfg": b64(&serde_json::json!({"r.io": {"username": "a", "password": "b"}}).to_string())}
        });
        assert_eq!(
            dockerconfigjson_secret(&legacy)
                .unwrap()
                .credentials_for("r.io")
                .unwrap(),
            Some(Credentials::basic("a", "b"))
        );

        let garbage = serde_json::json!({
            "metadata": {"name": "regcred", "namespace": "apps"},
            "data": {".dockerconfigjson": b64("{\"auths\": \"s3cret\"}")}
        });
        let err = dockerconfigjson_secret(&garbage).unwrap_err().to_string();
        assert!(err.contains("apps/regcred"), "{err}");
        assert!(!err.contains("s3cret"), "{err}");

        let empty = serde_json::json!({"metadata": {"name": "e", "namespace": "apps"}, "data": {}});
        assert!(dockerconfigjson_secret(&empty).is_err());
    }

    #[test]
    fn helpers_named_by_a_pull_secret_are_never_run() {
        // No `docker-credential-evil` exists: running it would be an error, so Ok(None) shows
        // it was never started; the Secret's own auths still count.
        let inner = serde_json::json!({
            "credsStore": "evil",
            "credHelpers": {"r.io": "evil", "other.io": "evil"},
            "auths": {"other.io": {"auth": b64("pull:pw")}}
        })
        .to_string();
        let secret = serde_json::json!({
            "metadata": {"name": "regcred", "namespace": "apps"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64(&inner)}
        });
        let config = dockerconfigjson_secret(&secret).unwrap();
        assert_eq!(config.credentials_for("r.io").unwrap(), None);
        assert_eq!(
            config.credentials_for("other.io").unwrap(),
            Some(Credentials::basic("pull", "pw"))
        );
        // Merged into the operator's own configuration, it cannot add a helper either.
        let mut mine = DockerConfig::default();
        mine.merge(config);
        assert_eq!(mine.credentials_for("r.io").unwrap(), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_hung_chatty_or_garbled_helper_is_bounded_and_never_quoted() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let helper = |name: &str, body: &str| {
            let path = dir.path().join(format!("docker-credential-{name}"));
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        };
        let started = std::time::Instant::now();
        let hung = run_helper(
            &helper("hung", "sleep 1000"),
            "r.io",
            Duration::from_millis(300),
        )
        .unwrap_err()
        .to_string();
        assert!(hung.contains("did not finish within 0.3s"), "{hung}");
        assert!(started.elapsed() < Duration::from_secs(10), "not bounded");
        let chatty = run_helper(&helper("chatty", "cat /dev/zero"), "r.io", T)
            .unwrap_err()
            .to_string();
        assert!(chatty.contains("printed more than"), "{chatty}");
        let garbled = run_helper(&helper("garbled", "echo hunter2-typed"), "r.io", T)
            .unwrap_err()
            .to_string();
        assert!(garbled.contains("line 1"), "{garbled}");
        assert!(!garbled.contains("hunter2"), "{garbled}");
    }
}
