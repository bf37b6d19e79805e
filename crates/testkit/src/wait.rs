//! Waiting on a condition, never on the clock: a test that sleeps a fixed time is slow when the
//! machine is fast and flaky when it is busy. Each wait has a bound, and a wait that runs out
//! fails the test naming what it waited for.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is asked again.
const POLL: Duration = Duration::from_millis(20);

/// Blocks until `done()` holds; panics naming `what` when it has not within `within`.
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "waited {within:?} for {what}, in vain"
        );
        std::thread::sleep(POLL);
    }
}

/// [`wait_until`] on an async runtime: the runtime keeps serving (an in-process simulator,
/// a child's output) between the polls.
pub async fn wait_until_async(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "waited {within:?} for {what}, in vain"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Until `probe()` answers `Some`, which it returns; panics naming `what` (and the last
/// answer's absence) when it has not within `within`. For conditions that need I/O to ask.
pub async fn wait_for<T, F: Future<Output = Option<T>>>(
    what: &str,
    within: Duration,
    mut probe: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "waited {within:?} for {what}, in vain"
        );
        tokio::time::sleep(POLL).await;
    }
}
