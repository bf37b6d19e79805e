//! Running a program the way a test tells it (cargo-test-support's `cargo_process()` and just's
//! `Test::new().arg(..)` are the models):
//!
//! ```ignore
//! let run = liveproof().story("flux-chartversion-not-bumped").on(&cluster).json().run().await;
//! let run = kubectl().on(&cluster).args(&["get", "pods"]).run().await;
//! ```
//!
//! The liveproof binary is the test crate's: cargo tells only that crate where it is
//! (`env!("CARGO_BIN_EXE_liveproof")`), so the testkit takes the path and never depends on
//! the CLI crate.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::Story;

/// How a program ended: its exit code (-1 when a signal ended it) and what it printed.
#[derive(Debug, Clone)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Stdout decoded as one JSON document of type `T`; fails the test, showing both streams,
    /// when it is not.
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not the JSON expected ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Stdout as the `-o json` report (`liveproof/v1`).
    pub fn report(&self) -> liveproof_evidence::Report {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a liveproof/v1 report ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Fails the test unless the program exited `code`, showing what it printed.
    pub fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "{}\n{}", self.stdout, self.stderr);
        self
    }
}

/// Something a kubeconfig points at: the simulator ([`crate::sim::SimCluster`]), a real
/// control plane.
pub trait Kubeconfig {
    fn kubeconfig_path(&self) -> &Path;
}

impl<T: Kubeconfig + ?Sized> Kubeconfig for &T {
    fn kubeconfig_path(&self) -> &Path {
        (**self).kubeconfig_path()
    }
}

impl Kubeconfig for Path {
    fn kubeconfig_path(&self) -> &Path {
        self
    }
}

impl Kubeconfig for PathBuf {
    fn kubeconfig_path(&self) -> &Path {
        self
    }
}

/// A command line being built; [`Cli::run`] runs it to the end (bounded).
#[must_use]
#[derive(Debug, Clone)]
pub struct Cli {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    dir: Option<PathBuf>,
    story: Option<Story>,
    timeout: Duration,
    /// A panic message on stderr fails the test (ours; kubectl's stderr is its own business).
    no_panics: bool,
}

/// The real kubectl ([`crate::kubectl::kubectl_path`]), with the environment as it is.
pub fn kubectl() -> Cli {
    Cli::new(crate::kubectl::kubectl_path())
}

impl Cli {
    /// `program` with no arguments, the environment as it is, stdin empty, 120 s to finish.
    pub fn new(program: impl Into<PathBuf>) -> Cli {
        Cli {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            dir: None,
            story: None,
            timeout: Duration::from_secs(120),
            no_panics: false,
        }
    }

    /// The liveproof binary at `bin` (the test crate's `env!("CARGO_BIN_EXE_liveproof")`) as
    /// a person runs it: no `KUBECONFIG` from the test's environment, `NO_COLOR`, and a panic
    /// on stderr fails the test.
    pub fn liveproof(bin: impl Into<PathBuf>) -> Cli {
        let mut cli = Cli::new(bin).env_remove("KUBECONFIG").env("NO_COLOR", "1");
        cli.no_panics = true;
        cli
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Cli {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// More arguments, in order (`&[&str]`, so `&String`s in the list coerce as they do in an
    /// array literal).
    pub fn args(mut self, args: &[&str]) -> Cli {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cli {
        self.env.push((
            key.as_ref().to_os_string(),
            Some(value.as_ref().to_os_string()),
        ));
        self
    }

    /// [`Cli::env`] for each pair.
    pub fn envs(mut self, pairs: &[(&str, &str)]) -> Cli {
        for (key, value) in pairs {
            self = self.env(key, value);
        }
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Cli {
        self.env.push((key.as_ref().to_os_string(), None));
        self
    }

    /// What the program reads on stdin (empty otherwise).
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Cli {
        self.stdin = Some(input.into());
        self
    }

    /// Where the program runs (the test's own directory otherwise).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Cli {
        self.dir = Some(dir.into());
        self
    }

    /// How long the program may take before the test fails (120 s otherwise).
    pub fn timeout(mut self, timeout: Duration) -> Cli {
        self.timeout = timeout;
        self
    }

    /// `verify` as the story in `test-data/scenarios/NAME` tells it: its arguments, and its
    /// cluster for [`Cli::offline`].
    pub fn story(mut self, name: &str) -> Cli {
        let story = Story::load(name).expect("story");
        self = self.arg("verify");
        for arg in &story.args {
            self = self.arg(arg);
        }
        self.story = Some(story);
        self
    }

    /// Read the story's `cluster.yaml` (`--from`).
    pub fn offline(self) -> Cli {
        let cluster = self
            .story
            .as_ref()
            .expect("offline() reads the story's cluster: call story() first")
            .cluster_yaml();
        self.arg("--from").arg(cluster)
    }

    /// Read the cluster a kubeconfig points at (`--kubeconfig`).
    pub fn on(self, cluster: &(impl Kubeconfig + ?Sized)) -> Cli {
        self.kubeconfig(cluster.kubeconfig_path())
    }

    /// `--kubeconfig PATH`.
    pub fn kubeconfig(self, path: impl AsRef<Path>) -> Cli {
        self.arg("--kubeconfig").arg(path.as_ref())
    }

    /// `--since TIME`.
    pub fn since(self, time: &str) -> Cli {
        self.args(&["--since", time])
    }

    /// `-o json`.
    pub fn json(self) -> Cli {
        self.args(&["-o", "json"])
    }

    /// The arguments this builds, as text.
    pub fn argv(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    fn finished(&self, out: Output) -> Run {
        let run = Run::from(out);
        if self.no_panics {
            assert!(
                !run.stderr.contains("panicked"),
                "{} panicked:\n{}",
                self.program.display(),
                run.stderr
            );
        }
        run
    }

    /// Runs the program to the end off the async runtime (an in-process simulator keeps
    /// serving meanwhile); killed, and the test failed, past its timeout.
    pub async fn run(self) -> Run {
        use tokio::io::AsyncWriteExt as _;
        let mut cmd = tokio::process::Command::from(self.command());
        cmd.kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{} runs: {e}", self.program.display()));
        if let Some(input) = &self.stdin {
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(input).await.expect("stdin written");
        }
        let out = tokio::time::timeout(self.timeout, child.wait_with_output())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{} {:?} did not finish within {:?}",
                    self.program.display(),
                    self.argv(),
                    self.timeout
                )
            })
            .expect("the program's output is read");
        self.finished(out)
    }

    /// [`Cli::run`] for a test with no async runtime.
    pub fn run_blocking(self) -> Run {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the program")
            .block_on(self.run())
    }
}
