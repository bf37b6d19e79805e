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
                eprintln!("liveproof: error: {err:#}");
            }
            ExitCode::from(liveproof::EXIT_ERROR)
        }
    }
}
