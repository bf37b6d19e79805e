//! The registry HTTP client: resolve tags to digests, answering auth challenges, each
//! (registry, repository, tag) once per run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt as _};
use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Method, Response, StatusCode};

use crate::auth::{parse_challenge, Challenge, TokenResponse};
use crate::credentials::{basic_header, Credentials, DockerConfig};
use crate::error::RegistryError;
use crate::manifest::{parse_manifest, ManifestKind, Resolved, ACCEPT_MANIFESTS};
use crate::reference::{api_host, Digest, Reference};

/// The largest manifest body we read. Real indexes are a few KiB; anything near this is not
/// a manifest.
pub const MAX_MANIFEST_BYTES: usize = 4 * 1024 * 1024;
/// The largest token-service answer we read.
const MAX_TOKEN_BYTES: usize = 64 * 1024;
const DIGEST_HEADER: &str = "Docker-Content-Digest";

/// How the client talks to registries.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Registries (`host[:port]`, as in the reference) spoken to over plain HTTP.
    pub insecure_registries: Vec<String>,
    /// Per request, connection and body included.
    pub timeout: Duration,
    /// How many tags [`Client::resolve_all`] resolves at once.
    pub concurrency: usize,
    /// Where credentials come from when the caller gives none.
    pub docker_config: DockerConfig,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            insecure_registries: Vec::new(),
            timeout: Duration::from_secs(30),
            concurrency: 8,
            docker_config: DockerConfig::default(),
        }
    }
}

/// What [`Client::resolve_all`] resolves once: a repository's tag (or digest) on a registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResolveKey {
    pub registry: String,
    pub repository: String,
    /// The tag (`latest` when none was written), or the digest for a pinned reference.
    pub reference: String,
}

impl ResolveKey {
    pub fn of(reference: &Reference) -> ResolveKey {
        ResolveKey {
            registry: reference.registry.clone(),
            repository: reference.repository.clone(),
            reference: reference.manifest_reference(),
        }
    }
}

impl From<&Reference> for ResolveKey {
    fn from(reference: &Reference) -> ResolveKey {
        ResolveKey::of(reference)
    }
}

impl fmt::Display for ResolveKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sep = if self.reference.starts_with("sha256:") {
            '@'
        } else {
            ':'
        };
        write!(
            f,
            "{}/{}{sep}{}",
            self.registry, self.repository, self.reference
        )
    }
}

/// Tokens are cached per registry, scope and the identity that obtained them, so one pod's
/// pull secret never lends its token to another identity's request.
type TokenKey = (String, String, String);

/// A registry client. Cheap to share by reference; caches auth for the run.
pub struct Client {
    http: reqwest::Client,
    insecure: HashSet<String>,
    concurrency: usize,
    docker_config: DockerConfig,
    tokens: Mutex<HashMap<TokenKey, Arc<str>>>,
    challenges: Mutex<HashMap<String, Challenge>>,
    requests: AtomicU64,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("insecure", &self.insecure)
            .field("concurrency", &self.concurrency)
            .field("requests", &self.request_count())
            .finish_non_exhaustive()
    }
}

impl Client {
    pub fn new(opts: ClientOptions) -> Result<Client, RegistryError> {
        use rustls_platform_verifier::BuilderVerifierExt as _;
        let setup = |reason: String| RegistryError::Setup { reason };
        // ring is the provider kube already builds; the platform verifier uses the OS trust store.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| setup(format!("TLS versions: {e}")))?
            .with_platform_verifier()
            .map_err(|e| setup(format!("TLS trust store: {e}")))?
            .with_no_client_auth();
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("liveproof/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| setup(e.to_string()))?;
        Ok(Client {
            http,
            insecure: opts
                .insecure_registries
                .iter()
                .map(|r| r.to_ascii_lowercase())
                .collect(),
            concurrency: opts.concurrency.max(1),
            docker_config: opts.docker_config.with_helper_timeout(opts.timeout),
            tokens: Mutex::new(HashMap::new()),
            challenges: Mutex::new(HashMap::new()),
            requests: AtomicU64::new(0),
        })
    }

    /// HTTP requests sent so far (manifests and tokens), for benchmarks and tests.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Resolves what `reference` points at now. `extra` (a pod's pull secret) wins over the
    /// docker config.
    pub async fn resolve(
        &self,
        reference: &Reference,
        extra: Option<&Credentials>,
    ) -> Result<Resolved, RegistryError> {
        let credentials = match extra {
            Some(credentials) => Some(credentials.clone()),
            // A credential helper is a program: run on a blocking thread, never on the
            // runtime's workers (bounded by the request timeout, see `liveproof_process`).
            None => {
                let config = self.docker_config.clone();
                let registry = reference.registry.clone();
                tokio::task::spawn_blocking(move || config.credentials_for(&registry))
                    .await
                    .map_err(|e| RegistryError::Credentials {
                        registry: reference.registry.clone(),
                        reason: format!("the credential lookup failed: {e}"),
                    })??
            }
        };
        let url = self.manifest_url(reference);

        // HEAD first: Docker Hub does not count it against the pull rate limit, and for a
        // single manifest its Docker-Content-Digest is the whole answer.
        let head = self
            .send(Method::HEAD, &url, reference, credentials.as_ref())
            .await?;
        // A registry without HEAD support (405/501) is asked with GET alone.
        let head_unsupported = matches!(
            head.status(),
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED
        );
        if !head_unsupported {
            check_status(&head, reference)?;
        }
        let head_digest = if head_unsupported {
            None
        } else {
            header_digest(&head, reference)?
        };
        let head_kind = content_kind(&head);
        if let (Some(digest), Some(kind)) = (&head_digest, head_kind) {
            if !kind.is_index() {
                check_pinned(reference, digest, digest)?;
                return Ok(Resolved {
                    reference: reference.clone(),
                    digest: digest.clone(),
                    kind,
                    platforms: Vec::new(),
                });
            }
        }

        // An index (its platform entries are needed) or a registry that gave no digest.
        let get = self
            .send(Method::GET, &url, reference, credentials.as_ref())
            .await?;
        check_status(&get, reference)?;
        let get_digest = header_digest(&get, reference)?;
        let get_kind = content_kind(&get);
        let body = read_bounded(get, reference, MAX_MANIFEST_BYTES).await?;
        let body_digest = Digest::sha256_of(&body);
        // Never trust a header that disagrees with the bytes it came with.
        if let Some(header) = get_digest.or(head_digest) {
            if header != body_digest {
                return Err(RegistryError::DigestMismatch {
                    reference: reference.to_string(),
                    header: header.to_string(),
                    body: body_digest.to_string(),
                });
            }
        }
        check_pinned(reference, &body_digest, &body_digest)?;
        let parsed =
            parse_manifest(&body, get_kind).map_err(|reason| RegistryError::Malformed {
                reference: reference.to_string(),
                reason,
            })?;
        Ok(Resolved {
            reference: reference.clone(),
            digest: body_digest,
            kind: parsed.kind,
            platforms: parsed.platforms,
        })
    }

    /// Resolves each distinct (registry, repository, tag) once, however often it appears,
    /// at most `concurrency` at a time. The first credentials given for a key are used.
    pub async fn resolve_all(
        &self,
        refs: impl IntoIterator<Item = (Reference, Option<Credentials>)>,
    ) -> HashMap<ResolveKey, Result<Resolved, RegistryError>> {
        let mut unique: BTreeMap<ResolveKey, (Reference, Option<Credentials>)> = BTreeMap::new();
        for (reference, credentials) in refs {
            let entry = unique
                .entry(ResolveKey::of(&reference))
                .or_insert_with(|| (reference, None));
            if entry.1.is_none() {
                entry.1 = credentials;
            }
        }
        stream::iter(unique)
            .map(|(key, (reference, credentials))| async move {
                let resolved = self.resolve(&reference, credentials.as_ref()).await;
                (key, resolved)
            })
            .buffer_unordered(self.concurrency)
            .collect()
            .await
    }

    fn base_url(&self, registry: &str) -> String {
        let scheme = if self.insecure.contains(&registry.to_ascii_lowercase()) {
            "http"
        } else {
            "https"
        };
        format!("{scheme}://{}", api_host(registry))
    }

    fn manifest_url(&self, reference: &Reference) -> String {
        format!(
            "{}/v2/{}/manifests/{}",
            self.base_url(&reference.registry),
            reference.repository,
            reference.manifest_reference()
        )
    }

    /// Sends a manifest request, answering one auth challenge: anonymous (or with what this
    /// run already learned about the registry) first; on 401, the challenge's way, once.
    async fn send(
        &self,
        method: Method,
        url: &str,
        reference: &Reference,
        credentials: Option<&Credentials>,
    ) -> Result<Response, RegistryError> {
        let scope = format!("repository:{}:pull", reference.repository);
        let registry = reference.registry.as_str();
        let known = self.lock_challenges().get(registry).cloned();
        let mut auth = match known {
            Some(challenge) => {
                self.answer(&challenge, reference, &scope, credentials)
                    .await?
            }
            None => None,
        };
        let mut answered = false;
        loop {
            let response = self
                .execute(method.clone(), url, auth.as_deref(), reference)
                .await?;
            if response.status() != StatusCode::UNAUTHORIZED || answered {
                if response.status() == StatusCode::UNAUTHORIZED {
                    return Err(unauthorized(reference, credentials, auth.is_some()));
                }
                return Ok(response);
            }
            answered = true;
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_challenge);
            let Some(challenge) = challenge else {
                return Err(RegistryError::Unauthorized {
                    reference: reference.to_string(),
                    registry: registry.to_owned(),
                    repository: reference.repository.clone(),
                    hint: "the registry answered 401 without a Bearer or Basic challenge"
                        .to_owned(),
                });
            };
            // A cached token may have expired: forget it and answer afresh.
            self.lock_tokens()
                .remove(&token_key(registry, &scope, credentials));
            self.lock_challenges()
                .insert(registry.to_owned(), challenge.clone());
            auth = self
                .answer(&challenge, reference, &scope, credentials)
                .await?;
            if auth.is_none() {
                return Err(unauthorized(reference, credentials, false));
            }
        }
    }

    /// The Authorization header answering `challenge`, fetching a token when it asks for one;
    /// `None` when it asks for Basic and there are no credentials.
    async fn answer(
        &self,
        challenge: &Challenge,
        reference: &Reference,
        scope: &str,
        credentials: Option<&Credentials>,
    ) -> Result<Option<Arc<str>>, RegistryError> {
        match challenge {
            Challenge::Basic => match credentials {
                Some(Credentials::Bearer(token)) => {
                    Ok(Some(format!("Bearer {}", token.expose()).into()))
                }
                Some(c) => Ok(c.basic_header().map(Into::into)),
                None => Ok(None),
            },
            Challenge::Bearer { realm, service, .. } => {
                if let Some(Credentials::Bearer(token)) = credentials {
                    return Ok(Some(format!("Bearer {}", token.expose()).into()));
                }
                let key = token_key(&reference.registry, scope, credentials);
                if let Some(header) = self.lock_tokens().get(&key) {
                    return Ok(Some(header.clone()));
                }
                let token = self
                    .fetch_token(realm, service.as_deref(), scope, reference, credentials)
                    .await?;
                let header: Arc<str> = format!("Bearer {token}").into();
                self.lock_tokens().insert(key, header.clone());
                Ok(Some(header))
            }
        }
    }

    /// Asks the token service for a pull token (distribution token auth; OAuth2 refresh-token
    /// grant for an identity token).
    async fn fetch_token(
        &self,
        realm: &str,
        service: Option<&str>,
        scope: &str,
        reference: &Reference,
        credentials: Option<&Credentials>,
    ) -> Result<String, RegistryError> {
        let mut query: Vec<(&str, &str)> = vec![("scope", scope)];
        if let Some(service) = service {
            query.push(("service", service));
        }
        let encode = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
                .collect::<Vec<_>>()
                .join("&")
        };
        let sep = if realm.contains('?') { '&' } else { '?' };
        let token_url = format!("{realm}{sep}{}", encode(&query));
        let request = match credentials {
            Some(Credentials::IdentityToken(token)) => {
                let mut form = query.clone();
                form.extend([
                    ("grant_type", "refresh_token"),
                    ("client_id", "liveproof"),
                    ("refresh_token", token.expose()),
                ]);
                let body = encode(&form);
                self.http
                    .post(realm)
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(body)
            }
            Some(Credentials::Basic { username, password }) => self.http.get(&token_url).header(
                reqwest::header::AUTHORIZATION,
                basic_header(username, password),
            ),
            _ => self.http.get(&token_url),
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        // The realm is the registry's to choose, query and all: shown masked.
        let shown_realm = liveproof_redacted::DisplaySafeUrl::new(realm);
        tracing::debug!(realm = %shown_realm, scope, "registry token request");
        let response = request
            .send()
            .await
            .map_err(|source| unreachable(reference, source))?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(unauthorized(reference, credentials, credentials.is_some()));
        }
        if !status.is_success() {
            return Err(RegistryError::Http {
                reference: reference.to_string(),
                status: status.as_u16(),
            });
        }
        let body = read_bounded(response, reference, MAX_TOKEN_BYTES).await?;
        serde_json::from_slice::<TokenResponse>(&body)
            .ok()
            .and_then(TokenResponse::into_token)
            .ok_or_else(|| RegistryError::Malformed {
                reference: reference.to_string(),
                reason: format!("the token service at {shown_realm} answered without a token"),
            })
    }

    async fn execute(
        &self,
        method: Method,
        url: &str,
        auth: Option<&str>,
        reference: &Reference,
    ) -> Result<Response, RegistryError> {
        let mut request = self
            .http
            .request(method.clone(), url)
            .header(ACCEPT, ACCEPT_MANIFESTS);
        if let Some(auth) = auth {
            request = request.header(reqwest::header::AUTHORIZATION, auth);
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        let response = request
            .send()
            .await
            .map_err(|source| unreachable(reference, source))?;
        tracing::debug!(%method, url, status = response.status().as_u16(), "registry request");
        Ok(response)
    }

    fn lock_tokens(&self) -> std::sync::MutexGuard<'_, HashMap<TokenKey, Arc<str>>> {
        // A poisoned cache only means another resolve panicked; its contents are still valid.
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_challenges(&self) -> std::sync::MutexGuard<'_, HashMap<String, Challenge>> {
        self.challenges.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn token_key(registry: &str, scope: &str, credentials: Option<&Credentials>) -> TokenKey {
    let identity = match credentials {
        None => String::new(),
        Some(Credentials::Basic { username, .. }) => format!("basic:{username}"),
        Some(Credentials::Bearer(_)) => "bearer".to_owned(),
        Some(Credentials::IdentityToken(token)) => {
            // Tell refresh tokens apart without keeping another copy of one.
            format!(
                "identity:{}",
                &Digest::sha256_of(token.expose().as_bytes()).hex()[..16]
            )
        }
    };
    (registry.to_owned(), scope.to_owned(), identity)
}

fn unreachable(reference: &Reference, source: reqwest::Error) -> RegistryError {
    RegistryError::Unreachable {
        reference: reference.to_string(),
        registry: reference.registry.clone(),
        // The URL holds no credential, but strip it anyway: the reference already says where.
        source: source.without_url(),
    }
}

fn unauthorized(
    reference: &Reference,
    credentials: Option<&Credentials>,
    sent: bool,
) -> RegistryError {
    let registry = &reference.registry;
    let hint = match (credentials, sent) {
        (None, _) => format!(
            "no credentials for {registry}: run `docker login {registry}` (or set \
             DOCKER_CONFIG), or give the pod an imagePullSecret"
        ),
        (Some(credentials), true) => format!(
            "{registry} rejected the credentials ({credentials}), or they cannot pull {}",
            reference.repository
        ),
        (Some(credentials), false) => format!(
            "{registry} asked for a kind of authentication the credentials ({credentials}) \
             cannot answer"
        ),
    };
    RegistryError::Unauthorized {
        reference: reference.to_string(),
        registry: registry.clone(),
        repository: reference.repository.clone(),
        hint,
    }
}

fn check_status(response: &Response, reference: &Reference) -> Result<(), RegistryError> {
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    Err(match status {
        StatusCode::NOT_FOUND => RegistryError::NotFound {
            reference: reference.to_string(),
        },
        StatusCode::FORBIDDEN => RegistryError::Unauthorized {
            reference: reference.to_string(),
            registry: reference.registry.clone(),
            repository: reference.repository.clone(),
            hint: format!(
                "{} forbids pulling {} with these credentials",
                reference.registry, reference.repository
            ),
        },
        _ => RegistryError::Http {
            reference: reference.to_string(),
            status: status.as_u16(),
        },
    })
}

/// A pinned reference must get exactly the manifest it names.
fn check_pinned(
    reference: &Reference,
    header: &Digest,
    body: &Digest,
) -> Result<(), RegistryError> {
    match &reference.digest {
        Some(pinned) if pinned != body => Err(RegistryError::DigestMismatch {
            reference: reference.to_string(),
            header: header.to_string(),
            body: body.to_string(),
        }),
        _ => Ok(()),
    }
}

fn header_digest(
    response: &Response,
    reference: &Reference,
) -> Result<Option<Digest>, RegistryError> {
    let Some(value) = response.headers().get(DIGEST_HEADER) else {
        return Ok(None);
    };
    let malformed = |reason: String| RegistryError::Malformed {
        reference: reference.to_string(),
        reason,
    };
    let text = value
        .to_str()
        .map_err(|_| malformed(format!("{DIGEST_HEADER} is not text")))?;
    text.trim()
        .parse()
        .map(Some)
        .map_err(|e| malformed(format!("{DIGEST_HEADER}: {e}")))
}

fn content_kind(response: &Response) -> Option<ManifestKind> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(ManifestKind::from_media_type)
}

async fn read_bounded(
    mut response: Response,
    reference: &Reference,
    limit: usize,
) -> Result<Vec<u8>, RegistryError> {
    let too_large = || RegistryError::TooLarge {
        reference: reference.to_string(),
        limit,
    };
    if response
        .content_length()
        .is_some_and(|len| len > limit as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|source| unreachable(reference, source))?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `application/x-www-form-urlencoded` for one key or value.
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for byte in s.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
#[expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first surprise"
)]
mod tests {
    use super::*;

    #[test]
    fn resolve_keys_merge_no_tag_with_latest() {
        let a = ResolveKey::of(&Reference::parse("nginx").unwrap());
        let b = ResolveKey::of(&Reference::parse("docker.io/library/nginx:latest").unwrap());
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "docker.io/library/nginx:latest");
    }

    #[test]
    fn insecure_registries_use_http_and_docker_hub_its_api_host() {
        let client = Client::new(ClientOptions {
            insecure_registries: vec!["127.0.0.1:5000".into()],
            ..ClientOptions::default()
        })
        .unwrap();
        assert_eq!(
            client.manifest_url(&Reference::parse("127.0.0.1:5000/a/b:v1").unwrap()),
            "http://127.0.0.1:5000/v2/a/b/manifests/v1"
        );
        assert_eq!(
            client.manifest_url(&Reference::parse("nginx").unwrap()),
            "https://registry-1.docker.io/v2/library/nginx/manifests/latest"
        );
    }

    #[test]
    fn form_encoding() {
        assert_eq!(
            form_encode("repository:a/b:pull"),
            "repository%3Aa%2Fb%3Apull"
        );
        assert_eq!(form_encode("a b"), "a+b");
    }
}
