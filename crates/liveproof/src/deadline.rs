//! `--timeout` as a deadline for the whole command: the first gather, the registry reads and
//! the watch all run against one clock that starts when the command does.

use std::future::Future;
use std::time::Duration;

use liveproof_redacted::DisplaySafeUrl;
use tokio::time::Instant;

/// When a command with `--timeout` must be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    pub at: Instant,
    /// The `--timeout` given, for messages.
    pub timeout: Duration,
}

/// The whole `--timeout` ran out before `what` finished.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.describe())]
pub struct OutOfTime {
    pub server: DisplaySafeUrl,
    pub what: String,
    pub timeout: Duration,
    /// The timeout left no time to read anything: it was spent before `what` started, or is
    /// shorter than [`TOO_SHORT`]. Then the server is not to blame.
    pub too_short: bool,
}

/// A `--timeout` shorter than this cannot read a cluster: its running out says nothing about
/// the server.
pub const TOO_SHORT: Duration = Duration::from_secs(1);

impl OutOfTime {
    fn describe(&self) -> String {
        let timeout = liveproof_gather::live::humanize(self.timeout);
        if self.too_short {
            format!(
                "--timeout {timeout} ran out before anything could be read from the API server at \
                 {} ({}): it is too short for even one request\nhint: --timeout bounds the whole \
                 command, the first reads included: give it the time a rollout takes (e.g. \
                 --timeout 5m); --request-timeout bounds each request",
                self.server, self.what
            )
        } else {
            format!(
                "the API server at {} did not answer before --timeout {timeout} ran out ({})\nhint: \
                 a server that accepts connections and never answers is overloaded, or something \
                 between (a proxy, a VPN, a firewall) holds the connection; check `kubectl \
                 cluster-info`; --timeout bounds the whole command and --request-timeout each \
                 request",
                self.server, self.what
            )
        }
    }
}

impl Deadline {
    /// `timeout` from now.
    pub fn starting_now(timeout: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            timeout,
        }
    }

    /// When work whose result must still be reported should stop: the watch, and decoding
    /// Helm releases. What is left (a tenth of the timeout, at most 5s) is for judging it and
    /// reading the diagnostics, so the deadline ends the command with the last evidence, not
    /// in the middle of reading it.
    pub fn work_until(&self) -> Instant {
        let reserve = (self.timeout / 10).min(Duration::from_secs(5));
        self.at - reserve
    }

    /// How long since the clock started (`--timeout` before the deadline).
    pub fn elapsed(&self) -> Duration {
        let started = self.at.checked_sub(self.timeout).unwrap_or(self.at);
        started.elapsed()
    }

    /// Runs `work` until the deadline: its own result, or [`OutOfTime`] naming the server and
    /// `what` was being done.
    pub async fn bound<T, E>(
        &self,
        server: &DisplaySafeUrl,
        what: &str,
        work: impl Future<Output = Result<T, E>>,
    ) -> anyhow::Result<T>
    where
        E: Into<anyhow::Error>,
    {
        let out_of_time = |spent_already: bool| OutOfTime {
            server: server.clone(),
            what: what.to_string(),
            timeout: self.timeout,
            too_short: spent_already || self.timeout < TOO_SHORT,
        };
        // A deadline already past is not raced against the work: tokio's timer rounds up to
        // the next millisecond and polls the work first, so a fast server could still be read
        // "in time" after the deadline.
        if Instant::now() >= self.at {
            return Err(out_of_time(true).into());
        }
        match tokio::time::timeout_at(self.at, work).await {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(out_of_time(false).into()),
        }
    }
}

/// [`Deadline::bound`] when there is a deadline; `work` as it is otherwise (each of its
/// requests is still bounded by --request-timeout).
pub async fn within<T, E>(
    deadline: Option<Deadline>,
    server: &DisplaySafeUrl,
    what: &str,
    work: impl Future<Output = Result<T, E>>,
) -> anyhow::Result<T>
where
    E: Into<anyhow::Error>,
{
    match deadline {
        Some(deadline) => deadline.bound(server, what, work).await,
        None => work.await.map_err(Into::into),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deadline_already_past_does_not_start_the_work() {
        let deadline = Deadline::starting_now(Duration::from_nanos(1));
        tokio::time::sleep(Duration::from_millis(2)).await;
        let server = DisplaySafeUrl::from("https://127.0.0.1:6443");
        // Work that is ready at once still loses to a deadline that has passed.
        let started = std::sync::atomic::AtomicBool::new(false);
        let work = async {
            started.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, anyhow::Error>(1)
        };
        let error = deadline
            .bound(&server, "reading", work)
            .await
            .expect_err("the deadline had passed");
        let out = error.downcast_ref::<OutOfTime>().expect("an OutOfTime");
        assert!(out.too_short, "{error}");
        assert!(!started.load(std::sync::atomic::Ordering::SeqCst));
    }
}
