//! Prints the storage object Helm would keep a release in, as YAML, from the release's JSON:
//! the way the corpus's `cluster.yaml` fixtures are made from their `releases/*.json` sources.
//!
//! ```text
//! cargo run -q -p liveproof-helm --example encode-release -- [--configmap|--uncompressed] [--truncate-gzip BYTES] RELEASE.json...
//! ```
//!
//! `--configmap` uses Helm's ConfigMap driver; `--uncompressed` stores plain JSON, as releases
//! written before Helm gzipped them were; `--truncate-gzip BYTES` keeps only the first BYTES of
//! the gzip stream (a copy cut short), for fixtures of corrupt storage.

use std::io::Write as _;
use std::process::ExitCode;

use base64::Engine as _;
use serde_json::Value;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

#[derive(Clone, Copy, PartialEq)]
enum Driver {
    Secret,
    ConfigMap,
    SecretUncompressed,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "encode-release: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut driver = Driver::Secret;
    let mut truncate: Option<usize> = None;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--configmap" => driver = Driver::ConfigMap,
            "--uncompressed" => driver = Driver::SecretUncompressed,
            "--truncate-gzip" => {
                let n = args.next().ok_or("--truncate-gzip needs a byte count")?;
                truncate = Some(n.parse().map_err(|e| format!("--truncate-gzip {n}: {e}"))?);
            }
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            file => files.push(file.to_owned()),
        }
    }
    if files.is_empty() {
        return Err("usage: encode-release [--configmap|--uncompressed] [--truncate-gzip BYTES] RELEASE.json...".into());
    }
    if truncate.is_some() && driver != Driver::Secret {
        return Err("--truncate-gzip applies to a gzipped Secret only".into());
    }
    let mut out = std::io::stdout().lock();
    for (i, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let release: Value =
            serde_json::from_str(&text).map_err(|e| format!("{file}: not JSON: {e}"))?;
        let mut object = match driver {
            Driver::Secret => liveproof_helm::encode_secret(&release),
            Driver::ConfigMap => liveproof_helm::encode_configmap(&release),
            Driver::SecretUncompressed => liveproof_helm::encode_secret_uncompressed(&release),
        };
        if let Some(keep) = truncate {
            truncate_gzip(&mut object, keep).map_err(|e| format!("{file}: {e}"))?;
        }
        let yaml = serde_yaml::to_string(&object).map_err(|e| format!("{file}: {e}"))?;
        if i > 0 {
            writeln!(out, "---").map_err(|e| e.to_string())?;
        }
        write!(out, "{yaml}").map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Cuts the gzip stream inside a Secret's two base64 layers, then re-encodes both layers, so
/// only the gzip is damaged.
fn truncate_gzip(secret: &mut Value, keep: usize) -> Result<(), String> {
    let field = secret
        .pointer_mut("/data/release")
        .ok_or("no data.release")?;
    let outer = field.as_str().ok_or("data.release is not a string")?;
    let helm_b64 = B64.decode(outer).map_err(|e| e.to_string())?;
    let gz = B64.decode(helm_b64).map_err(|e| e.to_string())?;
    if keep >= gz.len() {
        return Err(format!(
            "--truncate-gzip {keep}: the gzip stream is only {} bytes",
            gz.len()
        ));
    }
    *field = Value::String(B64.encode(B64.encode(&gz[..keep])));
    Ok(())
}
