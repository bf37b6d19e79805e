//! Progress on stderr while `--wait` waits: a spinner on a terminal, a line per change
//! otherwise (CI logs), nothing on stdout; and to a [`ProgressSink`] when the caller gave one
//! (an MCP client that asked for progress notifications).
//!
//! Off a terminal each line carries the time waited so far, and while nothing changes a
//! heartbeat line repeats what is awaited at least every [`HEARTBEAT`]: a CI log that stays
//! silent for minutes reads as a hung job (and some runners kill one), when the wait is only
//! a slow rollout.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// The longest a wait off a terminal stays silent: under 30 s with room for a busy machine.
pub const HEARTBEAT: Duration = Duration::from_secs(25);

/// Test only: the heartbeat interval in milliseconds, so a test sees several heartbeats in a
/// few seconds instead of minutes. Not documented for users; nothing else reads it.
const HEARTBEAT_ENV: &str = "LIVEPROOF_TEST_HEARTBEAT_MS";

/// `verify -q`: nothing on stderr but errors, so no progress there (a sink still gets it).
/// Set once, before the command runs.
pub static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub struct Progress {
    bar: Option<ProgressBar>,
    last: String,
    sink: Option<ProgressSink>,
    /// Off a terminal: the lines written, and the thread that repeats the last one.
    log: Option<Log>,
}

/// Where else each progress message goes.
#[derive(Clone)]
pub struct ProgressSink(std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl ProgressSink {
    pub fn new(each: impl Fn(&str) + Send + Sync + 'static) -> ProgressSink {
        ProgressSink(std::sync::Arc::new(each))
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

impl Progress {
    pub fn start(what: &str, sink: Option<ProgressSink>) -> Progress {
        let (bar, log) = if QUIET.load(std::sync::atomic::Ordering::Relaxed) {
            (None, None)
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            (Some(bar), None)
        } else {
            (None, Some(Log::start(heartbeat_interval())))
        };
        let mut p = Progress {
            bar,
            last: String::new(),
            sink,
            log,
        };
        p.say(what);
        p
    }

    /// Shows `message` if it differs from the last one.
    pub fn say(&mut self, message: &str) {
        if message == self.last {
            return;
        }
        self.last = message.to_string();
        if let Some(sink) = &self.sink {
            (sink.0)(message);
        }
        if let Some(bar) = &self.bar {
            bar.set_message(message.to_string());
        }
        if let Some(log) = &self.log {
            log.say(message);
        }
    }

    pub fn finish(self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        // The heartbeat stops when the log is dropped, here or on an early return.
    }
}

/// The interval: [`HEARTBEAT`], or a test's ([`HEARTBEAT_ENV`]).
fn heartbeat_interval() -> Duration {
    std::env::var(HEARTBEAT_ENV)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(HEARTBEAT, Duration::from_millis)
}

/// Progress as log lines on stderr, and a heartbeat thread repeating the last one.
struct Log {
    line: Arc<Mutex<Line>>,
    /// Dropped to stop the heartbeat (its thread wakes at once).
    stop: Option<mpsc::Sender<()>>,
    heartbeat: Option<JoinHandle<()>>,
}

/// What the log said last, and when.
struct Line {
    started: Instant,
    message: String,
    written: Instant,
}

impl Log {
    fn start(interval: Duration) -> Log {
        let now = Instant::now();
        let line = Arc::new(Mutex::new(Line {
            started: now,
            message: String::new(),
            written: now,
        }));
        let (stop, stopped) = mpsc::channel::<()>();
        let beating = Arc::clone(&line);
        let heartbeat = std::thread::Builder::new()
            .name("liveproof-heartbeat".into())
            .spawn(move || heartbeat(&beating, &stopped, interval))
            // Without a thread the change lines still come; only the heartbeat is missing.
            .map_err(|e| tracing::debug!("no heartbeat thread: {e}"))
            .ok();
        Log {
            line,
            stop: Some(stop),
            heartbeat,
        }
    }

    fn say(&self, message: &str) {
        let mut line = self.line.lock().unwrap_or_else(PoisonError::into_inner);
        line.message = message.to_string();
        line.write("waiting");
    }
}

impl Line {
    /// `liveproof: waiting: [1m 5s] 2 of 3 pods updated` on stderr (`waiting:` as before the
    /// time was added: a CI log filter may look for it).
    fn write(&mut self, what: &str) {
        let elapsed = Duration::from_secs(self.started.elapsed().as_secs());
        let elapsed = liveproof_gather::live::humanize(elapsed);
        // A closed stderr loses progress, never the report.
        let _ = writeln!(
            std::io::stderr(),
            "liveproof: {what}: [{elapsed}] {}",
            self.message
        );
        self.written = Instant::now();
    }
}

/// Writes the last line again whenever `interval` passed without one, until `stopped`.
fn heartbeat(line: &Mutex<Line>, stopped: &mpsc::Receiver<()>, interval: Duration) {
    loop {
        let silent_for = line
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .written
            .elapsed();
        match stopped.recv_timeout(interval.saturating_sub(silent_for)) {
            Err(RecvTimeoutError::Timeout) => {
                let mut line = line.lock().unwrap_or_else(PoisonError::into_inner);
                if line.written.elapsed() >= interval {
                    line.write("still waiting");
                }
            }
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.heartbeat.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heartbeat thread ends with the log, at once (not after its interval).
    #[test]
    fn the_heartbeat_stops_with_the_log() {
        let log = Log::start(Duration::from_secs(3600));
        log.say("1 of 3 pods updated");
        let dropped = Instant::now();
        drop(log);
        assert!(dropped.elapsed() < Duration::from_secs(60));
    }
}
