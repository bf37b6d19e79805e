//! The `liveproof` binary: parse, run, map the result to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = liveproof::cli::Cli::parse();
    match liveproof::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // A closed pipe (`liveproof … | head`) is the reader's choice, not an error.
            if err
                .chain()
                .filter_map(|e| e.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            #[expect(clippy::print_stderr, reason = "the one place errors reach the user")]
            {
                eprintln!("liveproof: error: {}", error_text(&err));
            }
            ExitCode::from(liveproof::EXIT_ERROR)
        }
    }
}

/// The error and its causes, each said once: a message that already quotes its cause (as
/// most of ours do, to read well alone) does not get it appended a second time.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        // A message with a hint already said what matters; its causes are the library's words.
        if text.contains(part.trim()) || text.contains("\nhint:") {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    // Hints read best last, each once.
    let (mut body, mut hints) = (Vec::new(), Vec::new());
    for line in text.lines() {
        match line.trim_start().strip_prefix("hint:") {
            Some(h) if !hints.contains(&h.trim().to_string()) => hints.push(h.trim().to_string()),
            Some(_) => {}
            None => body.push(line.to_string()),
        }
    }
    body.extend(hints.into_iter().map(|h| format!("hint: {h}")));
    body.join("\n")
}
