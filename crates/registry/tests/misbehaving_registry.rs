//! What a real registry will not do on demand, served by a tiny axum stub: a
//! `Docker-Content-Digest` that does not match the body, an oversized or malformed manifest,
//! and distribution token auth (a Bearer challenge answered by a token service).
#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first surprise"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine as _;
use liveproof_registry::{
    Client, ClientOptions, Credentials, Digest, DockerConfig, ManifestKind, Reference,
    RegistryError,
};

const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

fn manifest_body() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": format!("sha256:{}", "ab".repeat(32)), "size": 2},
        "layers": []
    }))
    .unwrap()
}

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    host
}

fn client_for(host: &str) -> Client {
    Client::new(ClientOptions {
        insecure_registries: vec![host.to_owned()],
        timeout: Duration::from_secs(5),
        concurrency: 2,
        docker_config: DockerConfig::default(),
    })
    .unwrap()
}

fn reference(host: &str, path: &str) -> Reference {
    Reference::parse(&format!("{host}/{path}")).unwrap()
}

#[tokio::test]
async fn a_digest_header_that_does_not_match_the_body_is_refused() {
    let lie = format!("sha256:{}", "00".repeat(32));
    let app = Router::new().route(
        "/v2/team/app/manifests/latest",
        get({
            let lie = lie.clone();
            move || async move {
                (
                    [
                        ("Content-Type", OCI_INDEX.to_owned()),
                        ("Docker-Content-Digest", lie),
                    ],
                    serde_json::to_vec(&serde_json::json!({
                        "schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": []
                    }))
                    .unwrap(),
                )
            }
        }),
    );
    let host = serve(app).await;
    let r = reference(&host, "team/app:latest");
    let err = client_for(&host).resolve(&r, None).await.unwrap_err();
    let RegistryError::DigestMismatch { header, body, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(header, &lie);
    assert_ne!(body, &lie);
    assert!(err.to_string().contains(&r.to_string()), "{err}");
}

#[tokio::test]
async fn no_digest_header_falls_back_to_the_body_hash() {
    let app = Router::new().route(
        "/v2/team/app/manifests/latest",
        get(|| async { ([("Content-Type", OCI_MANIFEST)], manifest_body()) }),
    );
    let host = serve(app).await;
    let resolved = client_for(&host)
        .resolve(&reference(&host, "team/app"), None)
        .await
        .unwrap();
    assert_eq!(resolved.digest, Digest::sha256_of(&manifest_body()));
    assert_eq!(resolved.kind, ManifestKind::OciManifest);
}

#[tokio::test]
async fn a_registry_without_head_is_asked_with_get() {
    let app = Router::new().route(
        "/v2/team/app/manifests/latest",
        axum::routing::head(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .get(|| async { ([("Content-Type", OCI_MANIFEST)], manifest_body()) }),
    );
    let host = serve(app).await;
    let client = client_for(&host);
    let resolved = client
        .resolve(&reference(&host, "team/app"), None)
        .await
        .unwrap();
    assert_eq!(resolved.digest, Digest::sha256_of(&manifest_body()));
    assert_eq!(client.request_count(), 2);
}

#[tokio::test]
async fn oversized_and_malformed_manifests_are_errors() {
    let app = Router::new()
        .route(
            "/v2/huge/manifests/latest",
            get(|| async { ([("Content-Type", OCI_INDEX)], vec![b' '; 5 * 1024 * 1024]) }),
        )
        .route(
            "/v2/garbage/manifests/latest",
            get(|| async { ([("Content-Type", OCI_INDEX)], "<html>proxy error</html>") }),
        )
        .route(
            "/v2/busy/manifests/latest",
            get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
        );
    let host = serve(app).await;
    let client = client_for(&host);
    let err = client
        .resolve(&reference(&host, "huge"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::TooLarge { .. }), "{err:?}");
    let err = client
        .resolve(&reference(&host, "garbage"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Malformed { .. }), "{err:?}");
    let err = client
        .resolve(&reference(&host, "busy"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::Http { status: 503, .. }),
        "{err:?}"
    );
}

/// A registry behind distribution token auth: 401 with a Bearer challenge unless the request
/// carries the token its token service hands to `ci:pw`.
#[derive(Clone)]
struct TokenAuth {
    token_requests: Arc<AtomicU64>,
    realm: String,
}

async fn token_service(State(state): State<TokenAuth>, headers: HeaderMap) -> Response {
    state.token_requests.fetch_add(1, Ordering::Relaxed);
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ci:pw")
    );
    if headers.get("Authorization").and_then(|v| v.to_str().ok()) != Some(want.as_str()) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    axum::Json(serde_json::json!({"token": "tok-123", "expires_in": 300})).into_response()
}

async fn guarded_manifest(State(state): State<TokenAuth>, headers: HeaderMap) -> Response {
    if headers.get("Authorization") == Some(&HeaderValue::from_static("Bearer tok-123")) {
        let digest = Digest::sha256_of(&manifest_body()).to_string();
        return (
            [
                ("Content-Type", OCI_MANIFEST.to_owned()),
                ("Docker-Content-Digest", digest),
            ],
            manifest_body(),
        )
            .into_response();
    }
    let challenge = format!(
        r#"Bearer realm="{}",service="stub",scope="repository:team/app:pull""#,
        state.realm
    );
    (StatusCode::UNAUTHORIZED, [("WWW-Authenticate", challenge)]).into_response()
}

#[tokio::test]
async fn a_bearer_challenge_is_answered_with_a_token_fetched_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    let state = TokenAuth {
        token_requests: Arc::new(AtomicU64::new(0)),
        realm: format!("http://{host}/token"),
    };
    let app = Router::new()
        .route("/token", get(token_service))
        .route("/v2/team/app/manifests/{tag}", get(guarded_manifest))
        .with_state(state.clone());
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });

    let anonymous = client_for(&host);
    let err = anonymous
        .resolve(&reference(&host, "team/app:v1"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Unauthorized { .. }), "{err:?}");

    let client = client_for(&host);
    let creds = Credentials::basic("ci", "pw");
    for tag in ["v1", "v2", "v3"] {
        let resolved = client
            .resolve(&reference(&host, &format!("team/app:{tag}")), Some(&creds))
            .await
            .unwrap();
        assert_eq!(resolved.digest, Digest::sha256_of(&manifest_body()));
    }
    // v1: HEAD (401), token, HEAD; v2 and v3: one HEAD each with the cached token.
    assert_eq!(
        state.token_requests.load(Ordering::Relaxed),
        2,
        "1 anonymous + 1 for ci"
    );
    assert_eq!(client.request_count(), 5);
}
