//! Tower layers around kube's HTTP stack: count and log every request, bound each one as a
//! whole, retry transient failures.
//!
//! The retry layer sits *outside* the counter, so every attempt is counted: the request count
//! is what the API server saw.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf as _, Bytes};
use futures::future::BoxFuture;
use http::{Request, Response, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kube::client::Body;
use liveproof_redacted::DisplaySafeUrl;
use tower::retry::Policy;
use tower::{BoxError, Layer, Service};

use super::credentials::Credentials;

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

impl<S, B, RB> Service<Request<B>> for CountRequests<S>
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

    /// Counts the request and, at `-v` (kubectl's `-v=6`), logs it when answered: method,
    /// path, status and milliseconds (never a header or a body).
    fn call(&mut self, req: Request<B>) -> Self::Future {
        self.count.fetch_add(1, Ordering::Relaxed);
        let method = req.method().clone();
        let path = req
            .uri()
            .path_and_query()
            .map_or_else(|| "/".to_string(), |p| p.as_str().to_string());
        let started = std::time::Instant::now();
        let answer = self.inner.call(req);
        Box::pin(async move {
            let result = answer.await;
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            match &result {
                Ok(response) => {
                    tracing::debug!(%method, path, status = response.status().as_u16(), ms, "API request");
                }
                Err(err) => tracing::debug!(%method, path, ms, "API request failed: {err}"),
            }
            result
        })
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

/// Bounds each request as a whole — the wait for its headers and the reading of its whole
/// body — by `timeout` from when it is sent. hyper's read timeout counts from the last byte
/// read, so a body trickled a byte a second never tripped it: one-shot verify, stale,
/// snapshot and release show hung on one.
///
/// Bounds what the bodies hold too: the bodies of one client's responses being read at once
/// share [`BodyBudget`] (`--max-response-size`; a watch's lines are bounded instead), and an
/// error's body is read here, cleaned of every credential the client holds and, when it is
/// not JSON, cut to a short excerpt ([`quoted_error_body`]) before anything can quote it.
#[derive(Clone, Debug)]
pub(crate) struct WholeResponseLayer {
    pub(crate) timeout: Duration,
    pub(crate) bodies: BodyBudget,
    pub(crate) credentials: Arc<Credentials>,
}

impl<S> Layer<S> for WholeResponseLayer {
    type Service = WholeResponse<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WholeResponse {
            inner,
            timeout: self.timeout,
            bodies: self.bodies.clone(),
            credentials: Arc::clone(&self.credentials),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct WholeResponse<S> {
    inner: S,
    timeout: Duration,
    bodies: BodyBudget,
    credentials: Arc<Credentials>,
}

impl<S, B, R> Service<Request<B>> for WholeResponse<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    R: HttpBody<Data = Bytes> + Unpin + Send + 'static,
    R::Error: Into<BoxError>,
{
    type Response = Response<BoundedBody<R>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let deadline = tokio::time::Instant::now() + self.timeout;
        // A watch sends one event a line: a line that never ends is no event (one with no
        // newline once grew a buffer to 2 GiB and aborted the process).
        let is_watch = req
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        // What this request carries (an exec plugin's token is set outside kube's stack, so
        // only the request knows it): an error page may echo it.
        let sent: Vec<String> = [
            http::header::AUTHORIZATION,
            http::header::PROXY_AUTHORIZATION,
        ]
        .iter()
        .filter_map(|h| req.headers().get(h))
        .filter_map(|v| v.to_str().ok())
        .map(str::to_string)
        .collect();
        let bodies = self.bodies.clone();
        let credentials = Arc::clone(&self.credentials);
        let response = self.inner.call(req);
        Box::pin(async move {
            let response = match tokio::time::timeout_at(deadline, response).await {
                Ok(Ok(response)) => response,
                Ok(Err(err)) => return Err(err.into()),
                Err(_) => return Err(incomplete().into()),
            };
            if response.status().as_u16() >= 400 {
                let (mut parts, body) = response.into_parts();
                let body = read_error_body(body, deadline, bodies.claim()).await?;
                let content_type = parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("no Content-Type")
                    .to_string();
                let shown = quoted_error_body(&body, &content_type, &credentials, &sent);
                parts.headers.remove(http::header::CONTENT_LENGTH);
                return Ok(Response::from_parts(
                    parts,
                    BoundedBody::ready(Bytes::from(shown)),
                ));
            }
            Ok(response.map(|body| BoundedBody {
                body: Some(body),
                ready: None,
                deadline: Box::pin(tokio::time::sleep_until(deadline)),
                max_line: is_watch.then_some(MAX_WATCH_LINE),
                since_newline: 0,
                // A watch is bounded by its lines instead, for as long as it is open.
                budget: (!is_watch).then(|| bodies.claim()),
            }))
        })
    }
}

/// The body of an error response, up to [`MAX_ERROR_BODY`] (the rest is not read), within
/// the request's deadline and the client's [`BodyBudget`] (`claim`, given back once it is
/// quoted: many failing requests at once are a flood too).
async fn read_error_body<R>(
    mut body: R,
    deadline: tokio::time::Instant,
    mut claim: Claim,
) -> Result<Vec<u8>, BoxError>
where
    R: HttpBody<Data = Bytes> + Unpin,
    R::Error: Into<BoxError>,
{
    let mut read = Vec::new();
    let reading = async {
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame = frame.map_err(Into::into)?;
            if let Some(data) = frame.data_ref() {
                let room = MAX_ERROR_BODY - read.len();
                let taken = &data[..data.len().min(room)];
                claim.take(taken.len())?;
                read.extend_from_slice(taken);
                if read.len() >= MAX_ERROR_BODY {
                    break;
                }
            }
        }
        Ok::<_, BoxError>(())
    };
    match tokio::time::timeout_at(deadline, reading).await {
        Ok(done) => done.map(|()| read),
        Err(_) => Err(incomplete().into()),
    }
}

/// The most of a body that is not JSON shown in an error: an HTML page, a proxy's text. Past
/// this it is not quoted, only measured.
pub(crate) const EXCERPT_BYTES: usize = 160;

/// An error response's body as liveproof lets it be quoted: every credential the client holds
/// (and what the request carried) masked; a JSON body (a Status) kept whole, a body that is
/// not JSON cut to [`EXCERPT_BYTES`] on one line, saying how much more there was.
pub(crate) fn quoted_error_body(
    body: &[u8],
    content_type: &str,
    credentials: &Credentials,
    sent: &[String],
) -> String {
    let text = String::from_utf8_lossy(body);
    let masked = credentials.mask_with(&text, sent);
    if serde_json::from_str::<serde::de::IgnoredAny>(&masked).is_ok() {
        return masked;
    }
    let flat = masked.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= EXCERPT_BYTES {
        return flat;
    }
    let mut cut = EXCERPT_BYTES;
    while !flat.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}… (a {}-byte {content_type} body, not JSON: the rest is not shown)",
        &flat[..cut],
        body.len()
    )
}

/// What the bodies of one client's responses may hold together while they are read
/// (`--max-response-size`, divided between the clusters a fleet reads at once): a body that
/// takes them past it fails ([`ResponseTooLarge`]). In a fleet, the bodies of every cluster
/// read at once also count against [`FLEET_BODY_CAP`] together ([`FLEET_BODIES`]). A body gives
/// its share back when it is dropped, read or not.
#[derive(Clone, Debug)]
pub(crate) struct BodyBudget {
    limit: super::ResponseBudget,
    in_flight: Arc<AtomicU64>,
    /// What every cluster of the fleet holds together, for a cluster of a fleet.
    fleet: Option<&'static FleetBodies>,
}

/// What the response bodies of all the clusters of a fleet read at once may hold together,
/// however many are read at once (each cluster's share is at least
/// [`MIN_CLUSTER_SHARE`](super::MIN_CLUSTER_SHARE), so 128 clusters read at once could
/// otherwise hold 128 times it): what 16 clusters at their least share held before fleets
/// were read all at once. A larger `--max-response-size` raises it to that.
pub const FLEET_BODY_CAP: usize = 1024 * 1024 * 1024;

/// The bytes held by the response bodies of a fleet's clusters, process-wide, and their cap.
#[derive(Debug)]
pub(crate) struct FleetBodies {
    held: AtomicU64,
    cap: u64,
}

/// Every fleet cluster's bodies, in this process (one fleet runs at a time).
pub(crate) static FLEET_BODIES: FleetBodies = FleetBodies {
    held: AtomicU64::new(0),
    cap: FLEET_BODY_CAP as u64,
};

impl BodyBudget {
    pub(crate) fn new(limit: super::ResponseBudget) -> BodyBudget {
        Self::within(limit, &FLEET_BODIES)
    }

    /// A budget whose fleet's clusters (when `limit` is shared) count against `fleet`.
    fn within(limit: super::ResponseBudget, fleet: &'static FleetBodies) -> BodyBudget {
        BodyBudget {
            limit,
            in_flight: Arc::default(),
            fleet: (limit.shared_by > 1).then_some(fleet),
        }
    }

    fn claim(&self) -> Claim {
        Claim {
            budget: self.clone(),
            held: 0,
        }
    }
}

/// One body's part of a [`BodyBudget`].
struct Claim {
    budget: BodyBudget,
    held: u64,
}

impl Claim {
    /// Takes `bytes` more; an error when that is past the cluster's budget, or the fleet's.
    fn take(&mut self, bytes: usize) -> Result<(), ResponseTooLarge> {
        let bytes = bytes as u64;
        self.held += bytes;
        let total = self.budget.in_flight.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let fleet = self.budget.fleet.map(|fleet| {
            (
                fleet.held.fetch_add(bytes, Ordering::Relaxed) + bytes,
                fleet,
            )
        });
        if total > self.budget.limit.per_cluster() as u64 {
            return Err(ResponseTooLarge {
                budget: self.budget.limit,
                fleet_cap: None,
            });
        }
        if let Some((held, fleet)) = fleet {
            let cap = fleet.cap.max(self.budget.limit.total as u64);
            if held > cap {
                return Err(ResponseTooLarge {
                    budget: self.budget.limit,
                    fleet_cap: Some(cap),
                });
            }
        }
        Ok(())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.budget
            .in_flight
            .fetch_sub(self.held, Ordering::Relaxed);
        if let Some(fleet) = self.budget.fleet {
            fleet.held.fetch_sub(self.held, Ordering::Relaxed);
        }
    }
}

/// A response larger than what `--max-response-size` lets one be read: no object or page of
/// a list is (a page is at most 5,000 objects; an object at most about 1.5 MiB). Or, in a
/// fleet, one that took what the clusters read at once hold together past
/// [`FLEET_BODY_CAP`].
#[derive(Debug, thiserror::Error)]
#[error("the response was larger than {}, and was not read further", self.limit())]
pub struct ResponseTooLarge {
    pub budget: super::ResponseBudget,
    /// The fleet's cap, when that is what it passed.
    pub fleet_cap: Option<u64>,
}

impl ResponseTooLarge {
    /// What it was larger than: `128 MiB (--max-response-size 256 MiB, shared by 2 clusters
    /// read at once)`, or in a fleet past its cap, `what was left of 1024 MiB (what the
    /// responses of all the clusters read at once may hold together)`.
    pub fn limit(&self) -> String {
        match self.fleet_cap {
            Some(cap) => format!(
                "what was left of {} (what the responses of all the {} clusters read at once may hold together)",
                super::mebibytes(usize::try_from(cap).unwrap_or(usize::MAX)),
                self.budget.shared_by
            ),
            None => self.budget.describe(),
        }
    }
}

/// What a request that ran out of time fails with: an `io::ErrorKind::TimedOut`, as hyper's
/// own timeouts, so it is reported as one ([`is_timeout`](super::error::is_timeout)).
fn incomplete() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the response was not complete within the request timeout",
    )
}

/// The longest watch event line accepted: an object is at most about 1.5 MiB in etcd, so this
/// is far past any real event and far short of what aborts the process.
pub(crate) const MAX_WATCH_LINE: usize = 16 * 1024 * 1024;

/// The most of an error response's body read: far past any Status the API server writes (a
/// 5 MB message is still read whole, to show its reason), far short of what a 50 MB one cost.
/// Read whole here (not streamed): it is cleaned of credentials before kube sees it.
pub(crate) const MAX_ERROR_BODY: usize = 16 * 1024 * 1024;

/// A response body that fails once its request's time is up, for a watch, once a line runs
/// past `max_line` bytes without ending, and otherwise once the client's bodies hold more
/// than their [`BodyBudget`]. An error's body is already read and cleaned (`ready`).
pub(crate) struct BoundedBody<B> {
    body: Option<B>,
    /// The whole body, already read: given as one frame.
    ready: Option<Bytes>,
    deadline: Pin<Box<tokio::time::Sleep>>,
    max_line: Option<usize>,
    /// Bytes since the last newline.
    since_newline: usize,
    budget: Option<Claim>,
}

impl<B> BoundedBody<B> {
    fn ready(bytes: Bytes) -> BoundedBody<B> {
        BoundedBody {
            body: None,
            ready: Some(bytes),
            // Never polled: there is nothing left to wait for.
            deadline: Box::pin(tokio::time::sleep(Duration::from_secs(0))),
            max_line: None,
            since_newline: 0,
            budget: None,
        }
    }
}

impl<B> HttpBody for BoundedBody<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(this.ready.take().map(|b| Ok(Frame::data(b))));
        };
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(incomplete().into())));
        }
        let polled = Pin::new(body).poll_frame(cx).map_err(Into::into);
        let Poll::Ready(Some(Ok(frame))) = &polled else {
            return polled;
        };
        let Some(data) = frame.data_ref() else {
            return polled;
        };
        if let Some(claim) = this.budget.as_mut() {
            if let Err(too_large) = claim.take(data.remaining()) {
                // Nothing more of it is read: the connection is dropped with the body.
                this.body = None;
                return Poll::Ready(Some(Err(Box::new(too_large))));
            }
        }
        let Some(max) = this.max_line else {
            return polled;
        };
        let bytes = data.chunk();
        this.since_newline = match memchr::memrchr(b'\n', bytes) {
            Some(at) => bytes.len() - at - 1,
            None => this.since_newline + bytes.len(),
        };
        if this.since_newline > max {
            return Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "a watch event ran past {} MiB without ending its line",
                    max >> 20
                ),
            )
            .into())));
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        match &self.body {
            Some(body) => body.is_end_stream(),
            None => self.ready.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.body, &self.ready) {
            (Some(body), _) => body.size_hint(),
            (None, Some(ready)) => SizeHint::with_exact(ready.len() as u64),
            (None, None) => SizeHint::with_exact(0),
        }
    }
}

/// A server that answered a retryable failure with a `Retry-After` longer than the request
/// has left: it is down for this run, and waiting would only spend the time (each read took
/// 30 s under `--request-timeout 5s` with `Retry-After: 999999`).
#[derive(Debug, thiserror::Error)]
#[error("the server answered {status} with Retry-After: {}, more than the {} this request has left", asked.as_secs(), super::humanize(*left))]
pub struct RetryAfterTooLong {
    pub status: u16,
    pub asked: Duration,
    pub left: Duration,
}

/// Retries what is worth retrying for a read: 429 and 500, 502, 503, 504 (after their
/// `Retry-After`, when they give one), and a connection reset or closed mid-request. Bounded:
/// [`MAX_RETRIES`] retries with exponential backoff from [`FIRST_DELAY`], and the pauses of
/// one request add up to at most its request timeout: a `Retry-After` asking for more than
/// is left fails the request at once ([`RetryAfterTooLong`]).
#[derive(Clone, Debug)]
pub(crate) struct TransientRetry {
    retries_left: u32,
    next_delay: Duration,
    /// What the pauses of one request may add up to.
    budget: Duration,
    /// Paused so far.
    waited: Duration,
}

pub(crate) const MAX_RETRIES: u32 = 3;
const FIRST_DELAY: Duration = Duration::from_millis(200);

impl TransientRetry {
    /// Retries whose pauses add up to at most `budget` (the request timeout).
    pub(crate) fn within(budget: Duration) -> TransientRetry {
        TransientRetry {
            retries_left: MAX_RETRIES,
            next_delay: FIRST_DELAY,
            budget,
            waited: Duration::ZERO,
        }
    }

    /// The pause before retrying `result`, or `None` when it is final.
    fn delay_for<Res>(&self, result: &Result<Response<Res>, BoxError>) -> Option<Duration> {
        match result {
            Ok(response) if is_retryable(response.status()) => {
                Some(retry_after(response).unwrap_or(self.next_delay))
            }
            Ok(_) => None,
            Err(err) => is_connection_dropped(err.as_ref()).then_some(self.next_delay),
        }
    }

    /// A retryable answer whose `Retry-After` asks for more than this request has left.
    fn asks_too_much<Res>(
        &self,
        result: &Result<Response<Res>, BoxError>,
    ) -> Option<RetryAfterTooLong> {
        let response = result.as_ref().ok()?;
        if !is_retryable(response.status()) {
            return None;
        }
        let asked = retry_after(response)?;
        let left = self.budget.saturating_sub(self.waited);
        (asked > left).then_some(RetryAfterTooLong {
            status: response.status().as_u16(),
            asked,
            left,
        })
    }
}

fn is_retryable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::INTERNAL_SERVER_ERROR
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
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
        if let Some(busy) = self.asks_too_much(result) {
            *result = Err(Box::new(busy));
            return None;
        }
        if self.retries_left == 0 || req.method() != http::Method::GET {
            return None;
        }
        let delay = self.delay_for(result)?;
        self.retries_left -= 1;
        self.next_delay = self.next_delay.saturating_mul(2);
        self.waited += delay;
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

    /// A body of `frames` frames of `size` bytes each.
    struct Frames {
        frames: usize,
        size: usize,
    }

    impl HttpBody for Frames {
        type Data = bytes::Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
            if self.frames == 0 {
                return Poll::Ready(None);
            }
            self.frames -= 1;
            Poll::Ready(Some(Ok(Frame::data(bytes::Bytes::from(vec![
                b'x';
                self.size
            ])))))
        }
    }

    /// The frames of [`read_of`]'s body: twice the cap, in 16 KiB frames.
    const FRAMES: usize = 2 * MAX_ERROR_BODY / (16 * 1024);

    /// A layer whose bodies may hold `budget` bytes at once.
    fn layer(budget: usize) -> WholeResponseLayer {
        WholeResponseLayer {
            timeout: Duration::from_secs(30),
            bodies: BodyBudget::new(super::super::ResponseBudget {
                total: budget,
                shared_by: 1,
            }),
            credentials: Arc::default(),
        }
    }

    /// What is read of a body of `frames` frames of 16 KiB answered with `status`: the bytes,
    /// or the error that ended it.
    async fn read_of(
        layer: &WholeResponseLayer,
        status: u16,
        frames: usize,
    ) -> Result<Vec<u8>, BoxError> {
        let inner = tower::service_fn(move |_: Request<()>| async move {
            Ok::<_, BoxError>(
                Response::builder()
                    .status(status)
                    .body(Frames {
                        frames,
                        size: 16 * 1024,
                    })
                    .expect("response"),
            )
        });
        let mut service = layer.layer(inner);
        let response = service.call(Request::new(())).await?;
        let mut body = response.into_body();
        let mut read = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            read.extend_from_slice(frame?.data_ref().map_or(&[][..], |d| &d[..]));
        }
        Ok(read)
    }

    /// An error's body is read up to its cap and quoted as a short excerpt (it is not JSON),
    /// a success's whole: a 500 with a 50 MB body was read into memory whole before its
    /// message was cut for showing.
    #[tokio::test]
    async fn an_error_body_is_read_only_up_to_the_cap_and_quoted_short() {
        let layer = layer(DEFAULT_BUDGET);
        let failed = read_of(&layer, 500, FRAMES).await.expect("read");
        let failed = String::from_utf8(failed).expect("text");
        assert!(failed.len() < EXCERPT_BYTES + 100, "{failed}");
        assert!(
            failed.contains(&format!(
                "a {MAX_ERROR_BODY}-byte no Content-Type body, not JSON"
            )),
            "{failed}"
        );
        let read = read_of(&layer, 200, FRAMES).await.expect("read");
        assert_eq!(read.len(), FRAMES * 16 * 1024);
    }

    const DEFAULT_BUDGET: usize = super::super::DEFAULT_MAX_RESPONSE_SIZE;

    /// Issue 32: a 3 GB body took 6.1 GB. A body past the budget fails, naming it, and gives
    /// its share back: the next request of the same client is read whole.
    #[tokio::test]
    async fn a_body_past_the_budget_fails_naming_it_and_frees_its_share() {
        let layer = layer(1024 * 1024);
        let err = read_of(&layer, 200, 65).await.expect_err("past 1 MiB");
        let too_large = err
            .downcast_ref::<ResponseTooLarge>()
            .expect("ResponseTooLarge");
        assert_eq!(
            too_large.to_string(),
            "the response was larger than 1 MiB (--max-response-size), and was not read further"
        );
        let read = read_of(&layer, 200, 64).await.expect("within the budget");
        assert_eq!(read.len(), 1024 * 1024);
        // An error's body is held while it is read, so it counts too.
        let err = read_of(&layer, 500, 65).await.expect_err("past 1 MiB");
        assert!(err.downcast_ref::<ResponseTooLarge>().is_some(), "{err}");
    }

    /// Issue 37: a fleet reads every cluster at once, each with at least its least share, so
    /// their shares no longer bound the process. The bodies of all the clusters of a fleet
    /// held at once count against one cap: a cluster within its own share fails once the
    /// fleet's total would pass it, naming it, and the bytes come back when a body is dropped.
    /// One cluster's verify (not shared) is not counted.
    #[tokio::test]
    async fn a_fleets_clusters_together_stay_within_the_fleet_cap() {
        static FLEET: FleetBodies = FleetBodies {
            held: AtomicU64::new(0),
            cap: 1024 * 1024,
        };
        let cluster = |shared_by: usize| WholeResponseLayer {
            timeout: Duration::from_secs(30),
            bodies: BodyBudget::within(
                super::super::ResponseBudget {
                    total: 1024 * 1024,
                    shared_by,
                },
                &FLEET,
            ),
            credentials: Arc::default(),
        };
        let (eu, us, alone) = (cluster(2), cluster(2), cluster(1));
        // eu holds 640 KiB of a body it is still reading.
        let inner = tower::service_fn(|_: Request<()>| async {
            Ok::<_, BoxError>(Response::new(Frames {
                frames: 64,
                size: 16 * 1024,
            }))
        });
        let mut held = eu
            .layer(inner)
            .call(Request::new(()))
            .await
            .expect("a response")
            .into_body();
        for _ in 0..40 {
            std::future::poll_fn(|cx| Pin::new(&mut held).poll_frame(cx))
                .await
                .expect("a frame")
                .expect("within the caps");
        }
        // us is within its own 1 MiB, not within what is left of the fleet's.
        let err = read_of(&us, 200, 40)
            .await
            .expect_err("past the fleet's cap");
        let too_large = err
            .downcast_ref::<ResponseTooLarge>()
            .expect("ResponseTooLarge");
        assert_eq!(
            too_large.to_string(),
            "the response was larger than what was left of 1 MiB (what the responses of all the 2 clusters read at once may hold together), and was not read further"
        );
        // A cluster verified alone is not part of a fleet.
        let read = read_of(&alone, 200, 64).await.expect("not counted");
        assert_eq!(read.len(), 1024 * 1024);
        // eu's body dropped, its bytes are given back.
        drop(held);
        let read = read_of(&us, 200, 40).await.expect("within both");
        assert_eq!(read.len(), 40 * 16 * 1024);
        assert_eq!(FLEET.held.load(Ordering::Relaxed), 0);
    }

    /// An error page that echoes the request's credentials is quoted with them masked, a JSON
    /// Status whole (masked too).
    #[test]
    fn an_echoed_credential_is_masked_in_the_quoted_body() {
        let page = format!(
            "<html><body><h1>500</h1><pre>GET /api/v1/pods\nAuthorization: Bearer canary-exec-token\n{}</pre></body></html>",
            "x".repeat(1000)
        );
        let sent = ["Bearer canary-exec-token".to_string()];
        let shown = quoted_error_body(page.as_bytes(), "text/html", &Credentials::default(), &sent);
        assert!(!shown.contains("canary"), "{shown}");
        assert!(shown.contains("text/html body, not JSON"), "{shown}");
        let status = r#"{"kind":"Status","message":"token canary-exec-token refused","code":500}"#;
        let shown = quoted_error_body(
            status.as_bytes(),
            "application/json",
            &Credentials::default(),
            &sent,
        );
        assert_eq!(
            shown,
            r#"{"kind":"Status","message":"token *** refused","code":500}"#
        );
    }

    fn response(status: u16, retry_after: Option<&str>) -> Result<Response<()>, BoxError> {
        let mut b = Response::builder().status(status);
        if let Some(r) = retry_after {
            b = b.header("Retry-After", r);
        }
        Ok(b.body(()).expect("response"))
    }

    #[test]
    fn retries_only_transient_failures() {
        let p = TransientRetry::within(Duration::from_secs(30));
        assert_eq!(
            p.delay_for(&response(429, Some("2"))),
            Some(Duration::from_secs(2))
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
    async fn a_retry_after_beyond_what_is_left_fails_at_once() {
        let mut p = TransientRetry::within(Duration::from_secs(5));
        let mut req = Request::get("/api/v1/pods")
            .body(Body::empty())
            .expect("request");
        // 3s of 5s: waited; then 3s more is more than the 2s left.
        let mut first = response(429, Some("3"));
        assert!(p.retry(&mut req, &mut first).is_some());
        let mut second = response(503, Some("3"));
        assert!(p.retry(&mut req, &mut second).is_none(), "not retried");
        let err = second.expect_err("turned into an error");
        let busy = err
            .downcast_ref::<RetryAfterTooLong>()
            .expect("RetryAfterTooLong");
        assert_eq!(
            (busy.status, busy.asked, busy.left),
            (503, Duration::from_secs(3), Duration::from_secs(2))
        );
        // A write is never retried, and a server asking for days is down for it too.
        let mut patch = Request::patch("/apis/apps/v1/namespaces/a/deployments/x")
            .body(Body::empty())
            .expect("request");
        let mut days = response(429, Some("999999"));
        let mut fresh = TransientRetry::within(Duration::from_secs(5));
        assert!(fresh.retry(&mut patch, &mut days).is_none());
        assert!(days.is_err());
    }

    #[tokio::test]
    async fn retries_are_bounded() {
        let mut p = TransientRetry::within(Duration::from_secs(30));
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
