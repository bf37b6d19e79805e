//! The `liveproof` command line as a library: [`run`] takes parsed arguments and returns the
//! exit code, so the binary stays a thin shell (ripgrep, uv, just).

pub mod cli;
mod config;
pub mod demo;
mod progress;
mod sim_cmd;
mod verify;

use std::io::{IsTerminal, Write};

pub use config::ConfigError;

/// Exit code for usage and operational errors (DESIGN.md).
pub const EXIT_ERROR: u8 = 2;

/// Runs a parsed command; returns the process exit code.
pub fn run(cli: cli::Cli) -> anyhow::Result<u8> {
    init_logging(cli.verbose);
    let style = config::text_style(cli.color, std::io::stdout().is_terminal());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match cli.command {
        cli::Command::Verify(args) => {
            let config = config::VerifyConfig::from_args(&args, style)?;
            runtime.block_on(verify::run(&config, &mut out))?
        }
        cli::Command::Demo(args) => {
            runtime.block_on(demo::run(config::format(args.output), style, &mut out))?
        }
        cli::Command::Sim(args) => runtime.block_on(sim_cmd::run(&args, &mut out))?,
    };
    out.flush()?;
    Ok(code)
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        // kube logs its own view of errors we report better ourselves; -vv shows them.
        0 => "warn,kube=off,kube_client=off,kube_runtime=off",
        1 => "warn,kube=off,kube_client=off,kube_runtime=off,liveproof=info,liveproof_gather=debug",
        _ => "debug,hyper=info,rustls=info,tower=info",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("LIVEPROOF_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Logs go to stderr: stdout carries the report alone.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_target(false)
        .without_time()
        .try_init();
}
