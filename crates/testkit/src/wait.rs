//! Waiting on a condition, never on the clock: a test that sleeps a fixed time is slow when the
//! machine is fast and flaky when it is busy. Each wait has a bound. [`within`] and
//! [`within_async`] say whether the condition came in time (the caller says what went wrong,
//! with the state it reads, or goes on: a process killed, the last text read); [`wait_until`],
//! [`wait_until_async`] and [`wait_for`] fail the test naming what they waited for.
//!
//! ```ignore
//! let slice = wait_for("a slice for Service web", Duration::from_secs(10), || async move {
//!     http.get(path).await.body["items"].get(0).cloned()
//! })
//! .await;
//! let Some(pod) = within_async(Duration::from_secs(60), Duration::from_millis(200), || {
//!     let pod = read_pod();
//!     std::future::ready(ready(&pod).then_some(pod))
//! })
//! .await
//! else {
//!     panic!("pod never ready: {}", read_pod())
//! };
//! ```

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is asked again by the waits that do not say.
const POLL: Duration = Duration::from_millis(20);

/// Until `probe()` answers `Some`, which it returns, asking every `every` (a probe that runs a
/// process or a request asks less often than one that reads memory); `None` when it has not
/// within `limit`. It blocks: for a test or harness without an async runtime.
pub fn within<T>(
    limit: Duration,
    every: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(every);
    }
}

/// [`within`] on an async runtime, for a probe that may need I/O to ask (`|| async move {..}`,
/// or `|| std::future::ready(..)` for one that does not): the runtime keeps serving (an
/// in-process simulator, a child's output, the kubelet stand-in) between the polls.
pub async fn within_async<T, F: Future<Output = Option<T>>>(
    limit: Duration,
    every: Duration,
    mut probe: impl FnMut() -> F,
) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = probe().await {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(every).await;
    }
}

/// Blocks until `done()` holds; panics naming `what` when it has not within `within`.
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    if self::within(within, POLL, || done().then_some(())).is_none() {
        panic!("waited {within:?} for {what}, in vain");
    }
}

/// [`wait_until`] on an async runtime: the runtime keeps serving (an in-process simulator,
/// a child's output) between the polls.
pub async fn wait_until_async(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    if within_async(within, POLL, || std::future::ready(done().then_some(())))
        .await
        .is_none()
    {
        panic!("waited {within:?} for {what}, in vain");
    }
}

/// Until `probe()` answers `Some`, which it returns; panics naming `what` (and the last
/// answer's absence) when it has not within `within`. For conditions that need I/O to ask.
pub async fn wait_for<T, F: Future<Output = Option<T>>>(
    what: &str,
    within: Duration,
    probe: impl FnMut() -> F,
) -> T {
    within_async(within, POLL, probe)
        .await
        .unwrap_or_else(|| panic!("waited {within:?} for {what}, in vain"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_asks_again_until_found_and_at_least_once() {
        let mut asked = 0;
        let found = within(Duration::from_secs(60), Duration::from_millis(1), || {
            asked += 1;
            (asked == 3).then_some(asked)
        });
        assert_eq!(found, Some(3));
        // With no time left, it still asks once, and says it did not come.
        let mut asked = 0;
        let never: Option<()> = within(Duration::ZERO, Duration::from_millis(1), || {
            asked += 1;
            None
        });
        assert_eq!((never, asked), (None, 1));
        let now = within(Duration::ZERO, Duration::from_millis(1), || Some("here"));
        assert_eq!(now, Some("here"));
    }

    #[tokio::test]
    async fn within_async_asks_again_until_found_and_at_least_once() {
        let mut asked = 0;
        let found = within_async(Duration::from_secs(60), Duration::from_millis(1), || {
            asked += 1;
            std::future::ready((asked == 3).then_some(asked))
        })
        .await;
        assert_eq!(found, Some(3));
        let mut asked = 0;
        let never: Option<()> = within_async(Duration::ZERO, Duration::from_millis(1), || {
            asked += 1;
            std::future::ready(None)
        })
        .await;
        assert_eq!((never, asked), (None, 1));
    }

    #[test]
    #[should_panic(expected = "for the impossible, in vain")]
    fn wait_until_fails_naming_what_it_waited_for() {
        wait_until("the impossible", Duration::from_millis(10), || false);
    }
}
