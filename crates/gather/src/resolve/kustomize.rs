//! `-k DIR`: the manifests `kubectl kustomize DIR` builds, with the real kubectl, bounded.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long `kubectl kustomize` may take at most, whatever --request-timeout says: it reads
/// local files (remote bases are fetched by kubectl, and bounded here too).
const KUSTOMIZE_TIMEOUT: Duration = Duration::from_secs(120);

/// `kubectl kustomize DIR`'s output, run with the real kubectl (`LIVEPROOF_KUBECTL`, else
/// `kubectl` on PATH), bounded; or why not and what to do, in our words.
pub(super) fn kustomize(
    dir: &Path,
    request_timeout: Duration,
) -> Result<Vec<u8>, (String, Option<String>)> {
    if !dir.is_dir() {
        return Err((
            "not a directory".into(),
            Some(
                "-k takes the directory holding a kustomization.yaml, as `kubectl apply -k DIR`"
                    .into(),
            ),
        ));
    }
    let kubectl = std::env::var_os("LIVEPROOF_KUBECTL")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "kubectl".into());
    let mut command = std::process::Command::new(&kubectl);
    command
        .arg("kustomize")
        .arg(dir)
        .stdin(std::process::Stdio::null());
    let bounds = liveproof_process::Bounds {
        stdin: None,
        capture_stderr: true,
        timeout: request_timeout.min(KUSTOMIZE_TIMEOUT),
        max_output: usize::try_from(super::MAX_MANIFEST_STREAM).unwrap_or(usize::MAX),
    };
    let shown = PathBuf::from(&kubectl);
    let done = liveproof_process::run(command, bounds).map_err(|e| match e {
        liveproof_process::ProgramError::Start(ref io) if io.kind() == std::io::ErrorKind::NotFound => (
            format!("-k builds the kustomization with kubectl, and there is none (`{}` not found)", shown.display()),
            Some("install kubectl, or set LIVEPROOF_KUBECTL to its path; or build it yourself: kubectl kustomize DIR | liveproof verify -f - …".to_string()),
        ),
        e => (format!("`{} kustomize` failed: {e}", shown.display()), None),
    })?;
    if !done.status.success() {
        let said = String::from_utf8_lossy(&done.stderr);
        let said = said.trim();
        let first = said.lines().next().unwrap_or("no message");
        return Err((
            format!(
                "`kubectl kustomize {}` failed ({}): {first}",
                dir.display(),
                done.status
            ),
            Some("check that it builds: kubectl kustomize DIR".into()),
        ));
    }
    Ok(done.stdout)
}
