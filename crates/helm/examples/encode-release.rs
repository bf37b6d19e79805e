//! Makes the storage object Helm would write for a release, for test fixtures:
//!
//!   cargo run -p liveproof-helm --example encode-release -- RELEASE.json [--configmap] > object.yaml
//!
//! RELEASE.json is the release as Helm holds it (`name`, `namespace`, `version`, `info`,
//! `chart`, `config`, `manifest`); the output is the Secret (or, with `--configmap`, the
//! ConfigMap) as YAML, ready to paste into a story's cluster.yaml.

use std::io::Write as _;
use std::process::ExitCode;

/// A line on stderr (a failed write to stderr has nowhere better to go).
fn complain(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let configmap = args.iter().any(|a| a == "--configmap");
    let files: Vec<&String> = args.iter().filter(|a| *a != "--configmap").collect();
    let [file] = files.as_slice() else {
        complain("usage: encode-release RELEASE.json [--configmap]");
        return ExitCode::from(2);
    };
    let release: serde_json::Value = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(release) => release,
        Err(e) => {
            complain(&format!("encode-release: {file}: {e}"));
            return ExitCode::from(2);
        }
    };
    let object = if configmap {
        liveproof_helm::encode_configmap(&release)
    } else {
        liveproof_helm::encode_secret(&release)
    };
    match serde_norway::to_string(&object) {
        Ok(yaml) => match std::io::stdout().write_all(yaml.as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                complain(&format!("encode-release: writing stdout: {e}"));
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            complain(&format!("encode-release: {e}"));
            ExitCode::FAILURE
        }
    }
}
