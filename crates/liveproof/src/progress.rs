//! Progress on stderr while `--wait` waits: a spinner on a terminal, a line per change
//! otherwise (CI logs), nothing on stdout.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    last: String,
}

impl Progress {
    pub fn start(what: &str) -> Progress {
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
