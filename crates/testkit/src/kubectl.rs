//! The real kubectl: `LIVEPROOF_KUBECTL`, else the one `cargo xtask` built into the peers cache
//! (see [`crate::peers`]). Shared by the simulator's fidelity tests and the CLI's side-by-side
//! tests.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where kubectl is; panics saying how to provision it (tests fail, never skip).
pub fn kubectl_path() -> PathBuf {
    crate::peers::kubectl().unwrap_or_else(|missing| panic!("{missing}"))
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
