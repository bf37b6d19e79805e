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

use bytes::Buf as _;
use futures::future::BoxFuture;
use http::{Request, Response, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
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

/// Bounds each request as a whole — the wait for its headers and the reading of its whole
/// body — by `timeout` from when it is sent. hyper's read timeout counts from the last byte
/// read, so a body trickled a byte a second never tripped it: one-shot verify, stale,
/// snapshot and release show hung on one.
#[derive(Clone, Debug)]
pub(crate) struct WholeResponseLayer {
    pub(crate) timeout: Duration,
}

impl<S> Layer<S> for WholeResponseLayer {
    type Service = WholeResponse<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WholeResponse {
            inner,
            timeout: self.timeout,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct WholeResponse<S> {
    inner: S,
    timeout: Duration,
}

impl<S, B, R> Service<Request<B>> for WholeResponse<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    R: HttpBody + Unpin,
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
        let response = self.inner.call(req);
        Box::pin(async move {
            match tokio::time::timeout_at(deadline, response).await {
                Ok(Ok(response)) => {
                    // An error's body is a Status of a few hundred bytes: kube reads it whole
                    // into one string, so a 50 MB one was 50 MB (and more) of memory.
                    let failed = response.status().as_u16() >= 400;
                    Ok(response.map(|body| BoundedBody {
                        body,
                        deadline: Box::pin(tokio::time::sleep_until(deadline)),
                        max_line: is_watch.then_some(MAX_WATCH_LINE),
                        since_newline: 0,
                        left: failed.then_some(MAX_ERROR_BODY),
                    }))
                }
                Ok(Err(err)) => Err(err.into()),
                Err(_) => Err(incomplete().into()),
            }
        })
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
pub(crate) const MAX_ERROR_BODY: usize = 16 * 1024 * 1024;

/// A response body that fails once its request's time is up, for a watch, once a line runs
/// past `max_line` bytes without ending, and for an error, ends after about `left` bytes
/// (the frame that reaches it is the last).
pub(crate) struct BoundedBody<B> {
    body: B,
    deadline: Pin<Box<tokio::time::Sleep>>,
    max_line: Option<usize>,
    /// Bytes since the last newline.
    since_newline: usize,
    /// For an error response: how much more of its body is read.
    left: Option<usize>,
}

impl<B> HttpBody for BoundedBody<B>
where
    B: HttpBody + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(incomplete().into())));
        }
        if this.left == Some(0) {
            return Poll::Ready(None);
        }
        let polled = Pin::new(&mut this.body).poll_frame(cx).map_err(Into::into);
        if let (Some(left), Poll::Ready(Some(Ok(frame)))) = (this.left.as_mut(), &polled) {
            let read = frame.data_ref().map_or(0, |d| d.remaining());
            *left = left.saturating_sub(read.max(1));
        }
        let Some(max) = this.max_line else {
            return polled;
        };
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
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
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.left == Some(0) || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        match self.left {
            // Cut short: the inner body's exact length would be a lie.
            Some(_) => SizeHint::default(),
            None => self.body.size_hint(),
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

    /// How much of a body twice [`MAX_ERROR_BODY`] long answered with `status` is read.
    async fn read_of(status: u16) -> usize {
        let inner = tower::service_fn(move |_: Request<()>| async move {
            Ok::<_, BoxError>(
                Response::builder()
                    .status(status)
                    .body(Frames {
                        frames: FRAMES,
                        size: 16 * 1024,
                    })
                    .expect("response"),
            )
        });
        let mut service = WholeResponseLayer {
            timeout: Duration::from_secs(30),
        }
        .layer(inner);
        let response = service.call(Request::new(())).await.expect("answered");
        let mut body = response.into_body();
        let mut read = 0;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            read += frame.expect("frame").data_ref().map_or(0, |d| d.len());
        }
        read
    }

    /// An error's body is read up to the cap (then ends), a success's whole: a 500 with a
    /// 50 MB Status was read into memory whole before its message was cut for showing.
    #[tokio::test]
    async fn an_error_body_is_read_only_up_to_the_cap() {
        let failed = read_of(500).await;
        assert!(
            (MAX_ERROR_BODY..MAX_ERROR_BODY + 16 * 1024).contains(&failed),
            "{failed}"
        );
        assert_eq!(read_of(200).await, FRAMES * 16 * 1024);
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
