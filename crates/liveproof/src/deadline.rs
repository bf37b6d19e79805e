//! `--timeout` as a deadline for the whole command: the first gather, the registry reads and
//! the watch all run against one clock that starts when the command does.

use std::borrow::Cow;
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
                 {} ({}): it is too short for even one request",
                self.server, self.what
            )
        } else {
            format!(
                "the API server at {} did not answer before --timeout {timeout} ran out ({})",
                self.server, self.what
            )
        }
    }
}

impl liveproof_evidence::hint::Hinted for OutOfTime {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(if self.too_short {
            "--timeout bounds the whole command, the first reads included: give it the time a \
             rollout takes (e.g. --timeout 5m); --request-timeout bounds each request"
        } else {
            "a server that accepts connections and never answers is overloaded, or something \
             between (a proxy, a VPN, a firewall) holds the connection; check `kubectl \
             cluster-info`; --timeout bounds the whole command and --request-timeout each request"
        }))
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

    /// [`Deadline::elapsed`] in whole seconds, rounded.
    pub fn elapsed_seconds(&self) -> u64 {
        let elapsed = self.elapsed().as_millis().saturating_add(500) / 1000;
        u64::try_from(elapsed).unwrap_or(u64::MAX)
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
        let spent_already = self.spent();
        match tokio::time::timeout_at(self.at, work).await {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(OutOfTime {
                server: server.clone(),
                what: what.to_string(),
                timeout: self.timeout,
                too_short: spent_already || self.timeout < TOO_SHORT,
            }
            .into()),
        }
    }

    /// The deadline ran out with nothing read: [`OutOfTime`] naming the server and `what` was
    /// being done.
    pub fn ran_out(&self, server: &DisplaySafeUrl, what: &str) -> OutOfTime {
        OutOfTime {
            server: server.clone(),
            what: what.to_string(),
            timeout: self.timeout,
            too_short: self.timeout < TOO_SHORT,
        }
    }

    /// Whether the deadline has passed.
    pub fn spent(&self) -> bool {
        Instant::now() >= self.at
    }

    /// Before the command's first read: a deadline already passed left no time for even one
    /// request, so nothing is started. (Not raced: tokio's timer rounds a deadline up to the
    /// next millisecond and polls the work first, so a fast server could otherwise be read
    /// after it.) A later step is [`Deadline::bound`]: work with nothing left to wait for
    /// still answers there.
    pub fn before_first_read(&self, server: &DisplaySafeUrl, what: &str) -> anyhow::Result<()> {
        if !self.spent() {
            return Ok(());
        }
        Err(OutOfTime {
            server: server.clone(),
            what: what.to_string(),
            timeout: self.timeout,
            too_short: true,
        }
        .into())
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

    // The clock paused: time moves only as the test says, so the deadline passes within the
    // millisecond the timer rounds it up to, as on a fast machine.
    #[tokio::test(start_paused = true)]
    async fn a_deadline_spent_before_the_first_read_leaves_no_time_for_it() {
        let deadline = Deadline::starting_now(Duration::from_nanos(1));
        let server = DisplaySafeUrl::from("https://127.0.0.1:6443");
        assert!(deadline.before_first_read(&server, "reading").is_ok());
        tokio::time::advance(Duration::from_micros(10)).await;
        let error = deadline
            .before_first_read(&server, "reading")
            .expect_err("the deadline had passed");
        let out = error.downcast_ref::<OutOfTime>().expect("an OutOfTime");
        assert!(out.too_short, "{error}");
        // A later step with nothing left to wait for still answers: a deadline spent by an
        // earlier step does not throw away what is already known.
        let ready = async { Ok::<_, anyhow::Error>(2) };
        assert_eq!(
            deadline
                .bound(&server, "nothing left to read", ready)
                .await
                .expect("ready at once"),
            2
        );
    }
}
