//! Tower layers around kube's HTTP stack: count and log every request, retry transient
//! failures.
//!
//! The retry layer sits *outside* the counter, so every attempt is counted: the request count
//! is what the API server saw.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use kube::client::Body;
use liveproof_redacted::DisplaySafeUrl;
use tower::retry::Policy;
use tower::{BoxError, Layer, Service};

/// Counts every request and logs its method and path (never headers or bodies: a request may
/// carry a token, a response may hold a Secret).
#[derive(Clone, Debug)]
pub(crate) struct CountRequestsLayer {
    pub(crate) count: Arc<AtomicU64>,
}

impl<S> Layer<S> for CountRequestsLayer {
    type Service = CountRequests<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CountRequests {
            inner,
            count: Arc::clone(&self.count),
        }
    }
}

#[derive(Debug)]
pub(crate) struct CountRequests<S> {
    inner: S,
    count: Arc<AtomicU64>,
}

impl<S, B> Service<Request<B>> for CountRequests<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        self.count.fetch_add(1, Ordering::Relaxed);
        let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
        tracing::debug!(method = %req.method(), path, "API request");
        self.inner.call(req)
    }
}

/// A redirect answered instead of an object. Never followed: an API server does not redirect,
/// so whatever does is not one (a sign-in page, a load balancer), and kube would read the
/// redirect's empty body as the object ("Error deserializing response: EOF").
#[derive(Debug, thiserror::Error)]
#[error("redirected ({status}) to {}, not followed", location.as_ref().map_or_else(|| "nowhere (no Location)".to_string(), ToString::to_string))]
pub(crate) struct Redirected {
    pub(crate) status: StatusCode,
    /// Where to, masked: a sign-in URL carries tokens in its query.
    pub(crate) location: Option<DisplaySafeUrl>,
}

/// Turns a 3xx response into a [`Redirected`] error.
#[derive(Clone, Debug)]
pub(crate) struct RefuseRedirectsLayer;

impl<S> Layer<S> for RefuseRedirectsLayer {
    type Service = RefuseRedirects<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RefuseRedirects { inner }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RefuseRedirects<S> {
    inner: S,
}

impl<S, B, RB> Service<Request<B>> for RefuseRedirects<S>
where
    S: Service<Request<B>, Response = Response<RB>, Error = BoxError>,
    S::Future: Send + 'static,
    RB: Send + 'static,
{
    type Response = Response<RB>;
    type Error = BoxError;
    type Future = futures::future::BoxFuture<'static, Result<Response<RB>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let answer = self.inner.call(req);
        Box::pin(async move {
            let response = answer.await?;
            let status = response.status();
            // 304 is not a redirect, and kube never asks a conditional request anyway.
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let location = response
                    .headers()
                    .get(http::header::LOCATION)
                    .map(|v| DisplaySafeUrl::new(String::from_utf8_lossy(v.as_bytes())));
                return Err(Box::new(Redirected { status, location }) as BoxError);
            }
            Ok(response)
        })
    }
}

/// Retries what is worth retrying for a read: 429 (after `Retry-After`, capped), 500, 502,
/// 503, 504, and a connection reset or closed mid-request. Bounded: [`MAX_RETRIES`] retries
/// with exponential backoff from [`FIRST_DELAY`].
#[derive(Clone, Debug)]
pub(crate) struct TransientRetry {
    retries_left: u32,
    next_delay: Duration,
}

pub(crate) const MAX_RETRIES: u32 = 3;
const FIRST_DELAY: Duration = Duration::from_millis(200);
/// A server asking for a longer pause than this is treated as down for our purposes.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

impl Default for TransientRetry {
    fn default() -> Self {
        TransientRetry {
            retries_left: MAX_RETRIES,
            next_delay: FIRST_DELAY,
        }
    }
}

impl TransientRetry {
    /// The pause before retrying `result`, or `None` when it is final.
    fn delay_for<Res>(&self, result: &Result<Response<Res>, BoxError>) -> Option<Duration> {
        match result {
            Ok(response) => match response.status() {
                StatusCode::TOO_MANY_REQUESTS => {
                    Some(retry_after(response).map_or(self.next_delay, |d| d.min(MAX_RETRY_AFTER)))
                }
                StatusCode::INTERNAL_SERVER_ERROR
                | StatusCode::BAD_GATEWAY
                | StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::GATEWAY_TIMEOUT => {
                    Some(retry_after(response).map_or(self.next_delay, |d| d.min(MAX_RETRY_AFTER)))
                }
                _ => None,
            },
            Err(err) => is_connection_dropped(err.as_ref()).then_some(self.next_delay),
        }
    }
}

fn retry_after<Res>(response: &Response<Res>) -> Option<Duration> {
    let value = response.headers().get(http::header::RETRY_AFTER)?;
    let secs: u64 = value.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(secs))
}

/// A connection that broke mid-request (reset, closed early), as opposed to one that could
/// not be made: retrying a refused connection only delays the "unreachable" error.
fn is_connection_dropped(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            ) {
                return true;
            }
        }
        // hyper's IncompleteMessage, without depending on hyper.
        if e.to_string()
            .contains("connection closed before message completed")
        {
            return true;
        }
        current = e.source();
    }
    false
}

impl<Res> Policy<Request<Body>, Response<Res>, BoxError> for TransientRetry {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        req: &mut Request<Body>,
        result: &mut Result<Response<Res>, BoxError>,
    ) -> Option<Self::Future> {
        if self.retries_left == 0 || req.method() != http::Method::GET {
            return None;
        }
        let delay = self.delay_for(result)?;
        self.retries_left -= 1;
        self.next_delay = self.next_delay.saturating_mul(2);
        tracing::debug!(
            path = req.uri().path(),
            delay_ms = delay.as_millis() as u64,
            "transient failure, retrying"
        );
        Some(tokio::time::sleep(delay))
    }

    fn clone_request(&mut self, req: &Request<Body>) -> Option<Request<Body>> {
        if req.method() != http::Method::GET {
            return None;
        }
        let body = req.body().try_clone()?;
        let mut clone = Request::new(body);
        *clone.method_mut() = req.method().clone();
        *clone.uri_mut() = req.uri().clone();
        *clone.version_mut() = req.version();
        *clone.headers_mut() = req.headers().clone();
        *clone.extensions_mut() = req.extensions().clone();
        Some(clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, retry_after: Option<&str>) -> Result<Response<()>, BoxError> {
        let mut b = Response::builder().status(status);
        if let Some(r) = retry_after {
            b = b.header("Retry-After", r);
        }
        Ok(b.body(()).expect("response"))
    }

    #[test]
    fn retries_only_transient_failures() {
        let p = TransientRetry::default();
        assert_eq!(
            p.delay_for(&response(429, Some("2"))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            p.delay_for(&response(429, Some("3600"))),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(p.delay_for(&response(503, None)), Some(FIRST_DELAY));
        assert_eq!(p.delay_for(&response(500, None)), Some(FIRST_DELAY));
        for final_status in [200, 403, 404, 401, 410] {
            assert_eq!(p.delay_for(&response(final_status, None)), None);
        }
        let reset: BoxError = Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert_eq!(p.delay_for::<()>(&Err(reset)), Some(FIRST_DELAY));
        let refused: BoxError =
            Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(p.delay_for::<()>(&Err(refused)), None);
    }

    #[tokio::test]
    async fn retries_are_bounded() {
        let mut p = TransientRetry::default();
        let mut req = Request::get("/api/v1/pods")
            .body(Body::empty())
            .expect("request");
        let mut retried = 0;
        while p.retry(&mut req, &mut response(503, None)).is_some() {
            retried += 1;
            assert!(retried <= MAX_RETRIES, "unbounded");
        }
        assert_eq!(retried, MAX_RETRIES);
    }
}
