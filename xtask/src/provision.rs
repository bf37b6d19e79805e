//! Provisioning: the prerequisites, the lock, and e2e/build-peers.sh (which knows the pins, the
//! cache key and what a complete cache holds; this module only decides when to run it).

use std::fmt;
use std::fs::{File, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// How long a second run waits for the first one's build (a cold build took 62 min on 2 shared
/// cores before the controllers, which took 32 min more there).
const LOCK_WAIT: Duration = Duration::from_secs(180 * 60);

/// Why provisioning or the tests could not go on.
#[derive(Debug)]
pub enum Error {
    /// Prerequisites missing: one line each, with how to get it.
    Prerequisites(Vec<String>),
    Io {
        what: String,
        source: std::io::Error,
    },
    LockTimedOut {
        lock: PathBuf,
    },
    BuildFailed {
        script: PathBuf,
    },
    StillMissing(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Prerequisites(lines) => {
                write!(f, "missing prerequisites (nothing was built):")?;
                for line in lines {
                    write!(f, "\n  {line}")?;
                }
                Ok(())
            }
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::LockTimedOut { lock } => write!(
                f,
                "another provisioning run held {} for over {} minutes\nhint: if no other `cargo xtask` runs, its build hangs; stop it and run `cargo xtask peers` again",
                lock.display(),
                LOCK_WAIT.as_secs() / 60
            ),
            Error::BuildFailed { script } => write!(
                f,
                "{} failed (its output is above)\nhint: fix what it names and run `cargo xtask peers` again; what was built is kept",
                script.display()
            ),
            Error::StillMissing(lines) => write!(
                f,
                "the build finished but the cache is still incomplete:\n{lines}"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// What was provisioned: the peers' bin directory (the venv is beside it).
pub struct Tools {
    pub bin: PathBuf,
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "xtask: {line}");
}

fn repo_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// The build script. `LIVEPROOF_XTASK_BUILD_SCRIPT` replaces it in xtask's own tests of the
/// lock only (a fast stand-in with the same --check/build contract).
fn script() -> PathBuf {
    std::env::var_os("LIVEPROOF_XTASK_BUILD_SCRIPT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("e2e/build-peers.sh"))
}

fn cache_dir() -> Result<PathBuf, Error> {
    if let Some(dir) = std::env::var_os("LIVEPROOF_PEERS_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".cache/liveproof-peers")),
        None => Err(Error::Prerequisites(vec![
            "neither LIVEPROOF_PEERS_CACHE nor HOME is set: set LIVEPROOF_PEERS_CACHE=/a/writable/dir".into(),
        ])),
    }
}

/// Whether `program args` runs and succeeds (output discarded).
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Go's official tarball puts it in /usr/local/go/bin, often not on PATH: use it from there.
fn find_go() {
    let fallback = Path::new("/usr/local/go/bin");
    if !runs("go", &["version"]) && fallback.join("go").is_file() {
        let mut paths: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        paths.push(fallback.to_path_buf());
        if let Ok(joined) = std::env::join_paths(paths) {
            // Children (the build script, cargo) inherit it.
            std::env::set_var("PATH", joined);
        }
    }
}

/// Rust, Go, git, python3 with venv: one line per missing one, with how to get it.
fn missing_prerequisites() -> Vec<String> {
    find_go();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut missing = Vec::new();
    if !runs(&cargo, &["--version"]) {
        missing
            .push("Rust: `cargo` does not run; install it with rustup (https://rustup.rs)".into());
    }
    if !runs("go", &["version"]) {
        missing.push("Go: `go` is not on PATH (nor in /usr/local/go/bin); install Go 1.26 or newer from https://go.dev/dl (no root needed: unpack it anywhere and put its bin on PATH)".into());
    }
    if !runs("git", &["--version"]) {
        missing.push("git: `git` is not on PATH; install it (Debian: apt-get install git)".into());
    }
    if !runs("python3", &["--version"]) {
        missing.push("python3: `python3` is not on PATH; install Python 3.10 or newer".into());
    } else if !runs("python3", &["-c", "import venv, ensurepip"]) {
        missing.push("python3 venv: `python3 -m venv` cannot make a venv with pip (no ensurepip); Debian: apt-get install python3-venv".into());
    }
    missing
}

/// `script --check`: Ok(bin directory) when complete, else Err(its lines naming what is missing).
fn check_cache() -> Result<Result<PathBuf, String>, Error> {
    let script = script();
    let out = Command::new("bash")
        .arg(&script)
        .arg("--check")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Io {
            what: format!("cannot run {}", script.display()),
            source,
        })?;
    if out.status.success() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        Ok(Ok(PathBuf::from(
            stdout.lines().last().unwrap_or_default().trim(),
        )))
    } else {
        Ok(Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()))
    }
}

/// `cargo xtask peers --check`: build nothing, list what is missing (exit 1), or print the bin
/// directory (exit 0).
pub fn check() -> Result<ExitCode, Error> {
    let mut lines = missing_prerequisites()
        .into_iter()
        .map(|line| format!("missing prerequisite: {line}"))
        .collect::<Vec<_>>();
    match check_cache()? {
        Ok(bin) if lines.is_empty() => {
            let _ = writeln!(std::io::stdout(), "{}", bin.display());
            return Ok(ExitCode::SUCCESS);
        }
        Ok(_) => {}
        Err(missing) => lines.extend(missing.lines().map(str::to_owned)),
    }
    let mut stderr = std::io::stderr().lock();
    for line in &lines {
        let _ = writeln!(stderr, "{line}");
    }
    let _ = writeln!(
        stderr,
        "hint: `cargo xtask peers` provisions all of it (no root); `cargo xtask test` does and then runs the tests"
    );
    Ok(ExitCode::FAILURE)
}

/// Holds the cache's lock until dropped (the OS releases it if the process dies).
struct CacheLock {
    _file: File,
}

fn lock_cache(cache: &Path) -> Result<CacheLock, Error> {
    std::fs::create_dir_all(cache).map_err(|source| Error::Io {
        what: format!("cannot create the peers cache {}", cache.display()),
        source,
    })?;
    let path = cache.join(".lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| Error::Io {
            what: format!("cannot open the lock {}", path.display()),
            source,
        })?;
    let started = Instant::now();
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => {
                if said {
                    say(&format!(
                        "got the lock after {}s",
                        started.elapsed().as_secs()
                    ));
                }
                return Ok(CacheLock { _file: file });
            }
            Err(TryLockError::WouldBlock) => {
                if !said {
                    say(&format!(
                        "another run is provisioning {} (it holds {}); waiting for it to finish, at most {} minutes",
                        cache.display(),
                        path.display(),
                        LOCK_WAIT.as_secs() / 60
                    ));
                    said = true;
                }
                if started.elapsed() > LOCK_WAIT {
                    return Err(Error::LockTimedOut { lock: path });
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(TryLockError::Error(source)) => {
                return Err(Error::Io {
                    what: format!("cannot lock {}", path.display()),
                    source,
                })
            }
        }
    }
}

/// Makes the cache complete for the current pins (building under the lock when it is not).
pub fn provision() -> Result<Tools, Error> {
    let missing = missing_prerequisites();
    if !missing.is_empty() {
        return Err(Error::Prerequisites(missing));
    }
    if let Ok(bin) = check_cache()? {
        say(&format!("provisioned already: {}", bin.display()));
        return Ok(Tools { bin });
    }
    let cache = cache_dir()?;
    let _lock = lock_cache(&cache)?;
    // Whoever held the lock before may have built it all.
    if let Ok(bin) = check_cache()? {
        say(&format!(
            "reusing what the other run provisioned: {}",
            bin.display()
        ));
        return Ok(Tools { bin });
    }
    let script = script();
    say(&format!(
        "provisioning into {} with {} (cold: about 40 CPU-minutes of Go builds, ~24 min on 2 cores)",
        cache.display(),
        script.display()
    ));
    let started = Instant::now();
    let status = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        // Its stdout is only the bin directory; progress goes to stderr.
        .stdout(Stdio::null())
        .status()
        .map_err(|source| Error::Io {
            what: format!("cannot run {}", script.display()),
            source,
        })?;
    if !status.success() {
        return Err(Error::BuildFailed { script });
    }
    match check_cache()? {
        Ok(bin) => {
            say(&format!(
                "provisioned in {}s: {}",
                started.elapsed().as_secs(),
                bin.display()
            ));
            Ok(Tools { bin })
        }
        Err(lines) => Err(Error::StillMissing(lines)),
    }
}

/// `cargo test --workspace ARGS` with the environment pointing at what was provisioned; its
/// exit status is ours.
pub fn run_tests(tools: &Tools, cargo_args: &[std::ffi::OsString]) -> Result<ExitCode, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let bin = &tools.bin;
    let python = bin
        .parent()
        .map(|cache| cache.join("venv/bin/python"))
        .unwrap_or_else(|| bin.join("../venv/bin/python"));
    // `-p NAME` narrows the run; cargo would ignore it beside --workspace.
    let narrowed = cargo_args.iter().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "-p" || a.starts_with("--package") || a.starts_with("-p"))
    });
    let scope: &[&str] = if narrowed { &[] } else { &["--workspace"] };
    say(&format!(
        "running cargo test {}",
        scope
            .iter()
            .copied()
            .chain(cargo_args.iter().filter_map(|a| a.to_str()))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    let started = Instant::now();
    let status = Command::new(&cargo)
        .arg("test")
        .args(scope)
        .args(cargo_args)
        .current_dir(repo_root())
        .env("LIVEPROOF_PEERS_BIN", bin)
        .env("LIVEPROOF_KUBECTL", bin.join("kubectl"))
        .env("LIVEPROOF_REGISTRY", bin.join("registry"))
        .env("LIVEPROOF_PYTHON", python)
        .status()
        .map_err(|source| Error::Io {
            what: "cannot run cargo test".into(),
            source,
        })?;
    say(&format!(
        "cargo test finished in {}s: {status}",
        started.elapsed().as_secs()
    ));
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
