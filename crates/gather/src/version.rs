//! Reads the version each `--version-url` reports, for the `server_version` check
//! ([`liveproof_evidence::server::judge`] judges what this returns).
//!
//! One GET per URL (all URLs at once), redirects followed (at most [`MAX_REDIRECTS`]), the
//! timeout applied to each attempt (connection, headers and body), and a bounded number of
//! retries with a short backoff on connection errors, timeouts, 408, 429 and 5xx — honouring
//! `Retry-After` up to [`MAX_RETRY_AFTER`]. At most [`MAX_BODY_BYTES`] of the body are read.
//! Response headers and bodies are never logged (only their length, at debug level). What may
//! be reached — the first URL, every redirect, every address a name resolves to — is the
//! [`Reach`]'s to say (the CLI's user typed the URL; an MCP client reads only what the operator
//! allowed).

use std::sync::Arc;
use std::time::Duration;

use liveproof_evidence::server::{
    lookup_json, parse_json_path, VersionExpectation, VersionReading, MAX_BODY_BYTES,
};
use liveproof_redacted::DisplaySafeUrl;
use reqwest::header::{HeaderMap, ACCEPT, RETRY_AFTER};
use reqwest::{Client, StatusCode};

use crate::reach::{GateResolver, Reach, Refused};

/// Redirects followed per request before giving up.
pub const MAX_REDIRECTS: usize = 5;
/// The longest `Retry-After` honoured; a longer one is cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);
/// The first backoff between attempts; it doubles each time, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// GETs every expectation's URL and returns one reading per expectation, in order, paired with
/// its URL. `timeout` bounds each attempt; `retries` is how many more attempts a transient
/// failure gets (0: one attempt only). Never fails as a whole: a URL that cannot be read is
/// [`VersionReading::Failed`] with the reason. Only what `reach` allows is read.
pub async fn read_versions(
    expectations: &[VersionExpectation],
    timeout: Duration,
    retries: u32,
    reach: &Reach,
) -> Vec<(DisplaySafeUrl, VersionReading)> {
    let reach = Arc::new(reach.clone());
    let client = match build_client(timeout, &reach) {
        Ok(client) => client,
        Err(why) => {
            return expectations
                .iter()
                .map(|e| (e.url.clone(), VersionReading::Failed(why.clone())))
                .collect()
        }
    };
    let reads = expectations.iter().map(|expectation| {
        let client = &client;
        let reach = &reach;
        async move {
            let reading = match refused(reach, expectation) {
                Some(why) => VersionReading::Failed(why),
                None => read_one(client, expectation, timeout, retries).await,
            };
            (expectation.url.clone(), reading)
        }
    });
    futures::future::join_all(reads).await
}

/// Why `reach` does not let the expectation's URL be read (not sent at all).
fn refused(reach: &Reach, expectation: &VersionExpectation) -> Option<String> {
    let url = reqwest::Url::parse(expectation.url.expose()).ok()?;
    reach.refusal(&url).map(|why| Refused(why).to_string())
}

/// The same TLS setup as the registry client: rustls on ring (the provider kube already
/// builds) with the platform's trust store. `reqwest::Client::new()` would panic here: the
/// workspace builds reqwest without a default crypto provider. Names are resolved, and
/// redirects followed, as `reach` allows.
fn build_client(timeout: Duration, reach: &Arc<Reach>) -> Result<Client, String> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed (protocol versions): {e}"))?
        .with_platform_verifier()
        .map_err(|e| format!("TLS setup failed (trust store): {e}"))?
        .with_no_client_auth();
    let builder = Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .redirect(crate::reach::redirect_policy(reach.clone(), MAX_REDIRECTS))
        .dns_resolver(GateResolver::new(reach.clone()))
        .user_agent(concat!("liveproof/", env!("CARGO_PKG_VERSION")));
    let builder = if reach.uses_proxies() {
        builder
    } else {
        builder.no_proxy()
    };
    builder
        .build()
        .map_err(|e| format!("HTTP client setup failed: {}", chain(&e)))
}

/// What one attempt came to.
enum Attempt {
    Read(VersionReading),
    /// Worth another attempt, after at least the given wait (from `Retry-After`).
    Transient(String, Option<Duration>),
}

async fn read_one(
    client: &Client,
    expectation: &VersionExpectation,
    timeout: Duration,
    retries: u32,
) -> VersionReading {
    if let Some(path) = &expectation.json_path {
        if let Err(why) = parse_json_path(path) {
            return VersionReading::Failed(why);
        }
    }
    let shown = &expectation.url;
    let attempts = retries.saturating_add(1);
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        match attempt_once(client, expectation, timeout, shown, attempt).await {
            Attempt::Read(reading) => return reading,
            Attempt::Transient(why, retry_after) => {
                if attempt >= attempts {
                    return VersionReading::Failed(if attempts > 1 {
                        format!("{why} (after {attempts} attempts)")
                    } else {
                        why
                    });
                }
                let wait = retry_after.map_or(backoff, |ra| ra.min(MAX_RETRY_AFTER));
                tracing::debug!(url = %shown, attempt, reason = %why, ?wait, "version read: retrying");
                tokio::time::sleep(wait).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                attempt += 1;
            }
        }
    }
}

async fn attempt_once(
    client: &Client,
    expectation: &VersionExpectation,
    timeout: Duration,
    shown: &DisplaySafeUrl,
    attempt: u32,
) -> Attempt {
    let accept = if expectation.json_path.is_some() {
        "application/json"
    } else {
        "text/plain, application/json;q=0.9, */*;q=0.8"
    };
    let response = match client
        .get(expectation.url.expose())
        .header(ACCEPT, accept)
        .send()
        .await
    {
        Ok(response) => response,
        Err(err) => return request_error(err, timeout),
    };
    let status = response.status();
    tracing::debug!(url = %shown, attempt, %status, "version read: response");
    if !status.is_success() {
        let why = format!("HTTP {status}");
        return if is_transient(status) {
            Attempt::Transient(why, retry_after(response.headers()))
        } else {
            Attempt::Read(VersionReading::Failed(why))
        };
    }
    let body = match read_bounded(response, MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(err) => return request_error(err, timeout),
    };
    tracing::debug!(url = %shown, bytes = body.bytes.len(), truncated = body.truncated, "version read: body");
    Attempt::Read(match &expectation.json_path {
        // A page that echoes the request's credentials (the URL's userinfo, sent as Basic
        // auth) shows them masked.
        None => VersionReading::Body(
            liveproof_redacted::mask_credentials(
                &String::from_utf8_lossy(&body.bytes),
                &url_credentials(expectation.url.expose())
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            )
            .into_owned(),
        ),
        Some(_) if body.truncated => VersionReading::Failed(format!(
            "not JSON: the response is larger than {} KiB",
            MAX_BODY_BYTES / 1024
        )),
        Some(path) => match serde_json::from_slice::<serde_json::Value>(&body.bytes) {
            // serde_json's message names a line and column, never the body's content.
            Err(e) => VersionReading::Failed(format!("not JSON ({e})")),
            Ok(document) => match lookup_json(&document, path) {
                Ok(value) => VersionReading::Field(value),
                Err(why) => VersionReading::Failed(why),
            },
        },
    })
}

/// The credentials a URL's userinfo holds: the password, `user:password` and its base64 (as
/// Basic auth sends them), the userinfo whole.
fn url_credentials(url: &str) -> Vec<String> {
    use base64::Engine as _;
    let Some(userinfo) = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or_default())
        .and_then(|authority| authority.rsplit_once('@'))
        .map(|(userinfo, _)| userinfo)
    else {
        return Vec::new();
    };
    let (_, password) = userinfo.split_once(':').unwrap_or(("", userinfo));
    vec![
        base64::engine::general_purpose::STANDARD.encode(userinfo),
        userinfo.to_string(),
        password.to_string(),
    ]
}

fn is_transient(status: StatusCode) -> bool {
    status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::REQUEST_TIMEOUT
}

/// A failed request, described without its URL (the caller knows it, and it may carry
/// credentials) and classified as worth retrying or not.
fn request_error(err: reqwest::Error, timeout: Duration) -> Attempt {
    let err = err.without_url();
    // A redirect or an address the reach refused: final, and said as it is.
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return Attempt::Read(VersionReading::Failed(refused.to_string()));
        }
        source = cause.source();
    }
    if err.is_timeout() {
        return Attempt::Transient(format!("timed out after {timeout:?}"), None);
    }
    if err.is_redirect() {
        return Attempt::Read(VersionReading::Failed(format!(
            "too many redirects (more than {MAX_REDIRECTS}): {}",
            chain(&err)
        )));
    }
    if err.is_builder() {
        return Attempt::Read(VersionReading::Failed(format!(
            "invalid URL: {}",
            root_cause(&err)
        )));
    }
    if err.is_connect() {
        return Attempt::Transient(format!("could not connect: {}", root_cause(&err)), None);
    }
    // A connection dropped mid-response and the like: transient.
    Attempt::Transient(format!("request failed: {}", chain(&err)), None)
}

/// The error and its sources, joined, skipping repeats.
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if parts.last().is_none_or(|last| !last.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// The innermost cause: "Connection refused (os error 111)" rather than "error sending request".
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(cause) = current.source() {
        current = cause;
    }
    current.to_string()
}

/// `Retry-After` as seconds or an HTTP date; `None` when absent or unreadable.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let wait = when.duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

struct Body {
    bytes: Vec<u8>,
    /// The response went on past the limit; the rest was not read.
    truncated: bool,
}

async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Body, reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Body {
                bytes,
                truncated: true,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Body {
        bytes,
        truncated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    /// A version page that echoes the Basic auth a URL's userinfo sent shows it masked.
    #[test]
    fn a_url_s_credentials_are_masked_in_its_body() {
        use base64::Engine as _;
        let url = "https://ops:canary-pw@h.example/version?x=1";
        let basic = base64::engine::general_purpose::STANDARD.encode("ops:canary-pw");
        let body = format!("version 1.4.0; you sent ops:canary-pw ({basic}) and canary-pw");
        let secrets = url_credentials(url);
        let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let shown = liveproof_redacted::mask_credentials(&body, &refs);
        assert_eq!(shown, "version 1.4.0; you sent *** (***) and ***");
        assert!(url_credentials("https://h.example/v?u=a@b").is_empty());
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        let later = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30);
        let text = jiff::fmt::rfc2822::DateTimePrinter::new()
            .timestamp_to_rfc9110_string(&later)
            .expect("valid");
        headers.insert(RETRY_AFTER, HeaderValue::from_str(&text).expect("valid"));
        let wait = retry_after(&headers).expect("valid");
        assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(30));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn transient_statuses() {
        for code in [500, 502, 503, 504, 429, 408] {
            assert!(
                is_transient(StatusCode::from_u16(code).expect("valid")),
                "{code}"
            );
        }
        for code in [400, 401, 403, 404, 410] {
            assert!(
                !is_transient(StatusCode::from_u16(code).expect("valid")),
                "{code}"
            );
        }
    }
}
