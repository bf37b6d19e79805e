//! Serves a fixtures directory as a Kubernetes API server until interrupted.
//!
//! `liveproof-sim --fixtures DIR [--port N] [--kubeconfig-out PATH] [--namespace NS] [--controllers]`

use std::path::PathBuf;
use std::process::ExitCode;

use liveproof_sim::Simulator;

struct Args {
    fixtures: PathBuf,
    port: u16,
    kubeconfig_out: Option<PathBuf>,
    namespace: String,
    controllers: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut fixtures = None;
    let mut port = 0;
    let mut kubeconfig_out = None;
    let mut namespace = "default".to_owned();
    let mut controllers = false;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--fixtures" => fixtures = Some(PathBuf::from(value()?)),
            "--port" => port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--kubeconfig-out" => kubeconfig_out = Some(PathBuf::from(value()?)),
            "--namespace" | "-n" => namespace = value()?,
            "--controllers" => controllers = true,
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    Ok(Args {
        fixtures: fixtures.ok_or("--fixtures DIR is required")?,
        port,
        kubeconfig_out,
        namespace,
        controllers,
    })
}

#[expect(
    clippy::print_stdout,
    reason = "the URL on stdout is the binary's output"
)]
#[expect(
    clippy::print_stderr,
    reason = "errors go to stderr in this tiny binary"
)]
#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}\nusage: liveproof-sim --fixtures DIR [--port N] [--kubeconfig-out PATH] [--namespace NS] [--controllers]");
            return ExitCode::from(2);
        }
    };
    let mut sim = Simulator::new().with_port(args.port);
    if args.controllers {
        sim = sim.with_controllers();
    }
    let sim = match sim.with_fixtures_dir(&args.fixtures) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "error: {e}: {}",
                std::error::Error::source(&e)
                    .map(ToString::to_string)
                    .unwrap_or_default()
            );
            return ExitCode::FAILURE;
        }
    };
    let handle = match sim.start().await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = &args.kubeconfig_out {
        if let Err(e) = handle.write_kubeconfig(path, &args.namespace) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!("{}", handle.url());
    let _ = tokio::signal::ctrl_c().await;
    handle.shutdown().await;
    ExitCode::SUCCESS
}
