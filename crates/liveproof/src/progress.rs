//! Progress on stderr while `--wait` waits: a spinner on a terminal, a line per change
//! otherwise (CI logs), nothing on stdout; and to a [`ProgressSink`] when the caller gave one
//! (an MCP client that asked for progress notifications).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    last: String,
    sink: Option<ProgressSink>,
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
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        let mut p = Progress {
            bar,
            last: String::new(),
            sink,
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
        match &self.bar {
            Some(bar) => bar.set_message(message.to_string()),
            None => {
                let _ = writeln!(std::io::stderr(), "liveproof: waiting: {message}");
            }
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
