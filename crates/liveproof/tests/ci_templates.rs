//! The files users copy to run liveproof where pipelines run, each exercised for real:
//!
//! - `action.yml` (GitHub Action): its steps run with bash exactly as the runner runs a
//!   composite action (expressions substituted, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`,
//!   `GITHUB_PATH` files, `bash --noprofile --norc -eo pipefail`), installing the release archive
//!   `ci/package-release.sh` packs, against the simulator: a live and a not-live story. For
//!   exit 4 (superseded), a stand-in `liveproof` that prints a superseded report as liveproof's
//!   own renderers draw it and exits 4, as the contract says.
//! - `ci/gitlab/liveproof.gitlab-ci.yml`: its `script:` run by `sh -e` as the runner does, the
//!   archive served over HTTP, against the simulator; for exit 4, an archive of the stand-in.
//! - `deploy/*.yaml` (the verify Job, the Argo CD PostSync hook, the Argo Rollouts
//!   AnalysisTemplate, the Flux post-deploy Kustomization): `kubectl apply --dry-run=server` on
//!   the real API server, with the real AnalysisTemplate and Kustomization CRDs from the pinned
//!   upstream modules (`e2e/build-peers.sh`); and each Job's own arguments, filled in, run
//!   against the simulator (no machine here runs containers).
//! - `plugins/liveproof.yaml` (krew) and the other release assets: `tests/release.rs`.
//! - The published names: every image is `ghcr.io/liveproof/liveproof:<workspace version>`,
//!   and the Dockerfile builds it the way `ci/build-static.sh` does.

use liveproof_testkit::binary as common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use liveproof_testkit::e2e::control_plane::repo_root;
use liveproof_testkit::e2e::{ControlPlane, Peers};
use liveproof_testkit::{Cli, Run, SimCluster};
use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const IMAGE: &str = "ghcr.io/liveproof/liveproof";
const PROJECT: &str = "https://github.com/liveproof/liveproof";

fn read(path: &str) -> String {
    let full = repo_root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// Every document of a (multi-document) YAML text, as JSON values.
fn documents(text: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|doc| {
            let v: serde_norway::Value =
                serde::Deserialize::deserialize(doc).expect("the YAML parses");
            serde_json::to_value(v).expect("YAML as JSON")
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn document(path: &str) -> Value {
    let mut docs = documents(&read(path));
    assert_eq!(docs.len(), 1, "{path}: one document");
    docs.remove(0)
}

/// Every string under a key named `key`, anywhere in `value`.
fn strings_under(value: &Value, key: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(s) if k == key => found.push(s.clone()),
                    _ => strings_under(v, key, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| strings_under(v, key, found)),
        _ => {}
    }
}

/// The one container's `args` of a Job-like document (a Job, or the job an AnalysisTemplate
/// runs).
fn container_args(pod_spec_holder: &Value) -> Vec<String> {
    let containers = &pod_spec_holder["spec"]["template"]["spec"]["containers"];
    let args = containers[0]["args"]
        .as_array()
        .unwrap_or_else(|| panic!("no container args in {pod_spec_holder}"));
    assert_eq!(containers.as_array().map(Vec::len), Some(1));
    args.iter()
        .map(|a| a.as_str().expect("string args").to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The published names

/// Every image the repository's templates run is the project's image at the workspace version,
/// and every other place that names the version or the project agrees: bumping the version
/// without them (or them without it) fails here.
#[test]
fn every_template_runs_the_image_of_the_workspace_version() {
    let want = format!("{IMAGE}:{VERSION}");
    let mut images = Vec::new();
    for file in [
        "deploy/verify-job.yaml",
        "deploy/argocd-postsync-verify.yaml",
        "deploy/argo-rollouts-analysis.yaml",
        "deploy/flux-post-deploy.yaml",
    ] {
        let text = read(file);
        assert!(
            !text.contains("PLACEHOLDER"),
            "{file} still has a placeholder"
        );
        let mut found = Vec::new();
        for doc in documents(&text) {
            strings_under(&doc, "image", &mut found);
        }
        assert!(!found.is_empty(), "{file} runs no image");
        images.extend(found.into_iter().map(|i| (file, i)));
    }
    for (file, image) in &images {
        assert_eq!(image, &want, "{file}");
    }

    // The GitLab job downloads that version; the example workflow pins the action at it.
    let gitlab = document("ci/gitlab/liveproof.gitlab-ci.yml");
    assert_eq!(
        gitlab[".liveproof-verify"]["variables"]["LIVEPROOF_VERSION"],
        Value::from(VERSION)
    );
    let example = read(".github/workflows/verify-example.yml");
    assert!(
        example.contains(&format!("uses: liveproof/liveproof@v{VERSION}\n")),
        "verify-example.yml must use liveproof/liveproof@v{VERSION}"
    );
    // The release workflow pushes exactly that image name, and the project URL is the one the
    // manifests, the image label and Cargo.toml give.
    let release = document(".github/workflows/release.yml");
    assert_eq!(release["env"]["IMAGE"], Value::from(IMAGE));
    let cargo = read("Cargo.toml");
    for key in ["repository", "homepage"] {
        assert!(
            cargo.contains(&format!("{key} = \"{PROJECT}\"")),
            "Cargo.toml {key}"
        );
    }
    assert!(read("Dockerfile").contains(&format!("org.opencontainers.image.source=\"{PROJECT}\"")));
    assert!(read("plugins/liveproof.yaml").contains(&format!("homepage: {PROJECT}\n")));
}

/// No Docker daemon runs where these tests run (`docker info` fails), so the image is not
/// built here; its structure is held instead: a builder stage that builds with
/// `ci/build-static.sh` (the static check and the demo run inside it), a final stage on
/// distroless/static with nothing run in it (no shell needed), a numeric non-root user and the
/// binary as the entrypoint. `.github/workflows/release.yml` builds and pushes it.
#[test]
fn the_dockerfile_builds_the_static_binary_onto_a_shell_less_non_root_image() {
    let text = read("Dockerfile");
    // Instructions with continuation lines joined; comments dropped.
    let mut instructions: Vec<String> = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\'));
        pending.push(' ');
        if !line.ends_with('\\') {
            instructions.push(pending.trim().to_string());
            pending.clear();
        }
    }
    let mut stages: Vec<(String, Vec<String>)> = Vec::new();
    for ins in &instructions {
        if let Some(from) = ins.strip_prefix("FROM ") {
            stages.push((from.to_string(), Vec::new()));
        } else if let Some((_, body)) = stages.last_mut() {
            body.push(ins.clone());
        }
    }
    assert_eq!(
        stages.len(),
        2,
        "a builder and a runtime stage: {stages:#?}"
    );
    let (builder_from, builder) = &stages[0];
    let (runtime_from, runtime) = &stages[1];
    assert!(builder_from.ends_with(" AS builder"), "{builder_from}");
    assert!(
        builder
            .iter()
            .any(|i| i.starts_with("RUN ci/build-static.sh --path /src --root /out")),
        "the builder builds as CI does: {builder:#?}"
    );
    assert!(builder.iter().any(|i| i.contains("musl-tools")));
    assert!(
        runtime_from.starts_with("gcr.io/distroless/static-debian12:nonroot")
            || runtime_from.starts_with("scratch"),
        "{runtime_from}"
    );
    assert!(
        !runtime.iter().any(|i| i.starts_with("RUN ")),
        "nothing runs in the final stage: it has no shell"
    );
    let user = runtime
        .iter()
        .find_map(|i| i.strip_prefix("USER "))
        .expect("a USER");
    let uid: u32 = user
        .split(':')
        .next()
        .unwrap_or_default()
        .parse()
        .expect("a numeric UID");
    assert_ne!(uid, 0, "not root");
    let entrypoint = runtime
        .iter()
        .find_map(|i| i.strip_prefix("ENTRYPOINT "))
        .expect("an ENTRYPOINT");
    let entrypoint: Vec<String> = serde_json::from_str(entrypoint).expect("exec form");
    assert_eq!(entrypoint, ["/usr/local/bin/liveproof"]);
    assert!(runtime
        .iter()
        .any(|i| i == "COPY --from=builder /out/bin/liveproof /usr/local/bin/liveproof"));
    // The Job templates run as that user.
    let job = document("deploy/verify-job.yaml");
    assert_eq!(
        job["spec"]["template"]["spec"]["securityContext"]["runAsUser"],
        Value::from(uid)
    );
    // The build context leaves out the git history and build output.
    let ignore = read(".dockerignore");
    for entry in [".git", "target"] {
        assert!(ignore.lines().any(|l| l == entry), ".dockerignore: {entry}");
    }
}

// ---------------------------------------------------------------------------------------------
// The release archive (krew, the Action and the GitLab job install it)

/// The release assets for this test binary's liveproof, packed by `ci/package-release.sh`
/// into `<dir>/v<VERSION>/` (the layout of a GitHub release download URL), once per run.
fn release_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ci-templates-release");
        let out = base.join(format!("v{VERSION}"));
        let _ = std::fs::remove_dir_all(&base);
        let bin = Path::new(env!("CARGO_BIN_EXE_liveproof"))
            .parent()
            .expect("the binaries' directory");
        assert!(bin.join("kubectl-liveproof").is_file());
        // Plain std::process: this runs inside async tests too, where the test kit's blocking
        // runner would nest a runtime.
        let out = std::process::Command::new("bash")
            .arg(repo_root().join("ci/package-release.sh"))
            .arg(bin)
            .arg(&out)
            .output()
            .expect("ci/package-release.sh runs");
        Run::from(out).expect_code(0);
        base
    })
}

fn archive_name() -> String {
    format!("liveproof-v{VERSION}-x86_64-unknown-linux-musl.tar.gz")
}

// The krew manifest (both platforms, krew's validator) and the rest of the release assets:
// tests/release.rs.

// ---------------------------------------------------------------------------------------------
// The stories the CI jobs verify, on the simulator

/// A corpus story's cluster served by the simulator.
async fn story_cluster(story: &str) -> SimCluster {
    let path = repo_root().join(format!("test-data/scenarios/{story}/cluster.yaml"));
    SimCluster::from_file(&path, "default").await
}

/// deployment/inventory runs 1.4.0 with FEATURE_RESERVATIONS, restarted after 10:00: live.
const LIVE: &str = "expect-env-present-rolled-out";
/// The chart was never upgraded (ChartVersion without a bump): not live.
const NOT_LIVE: &str = "flux-chartversion-not-bumped";

// ---------------------------------------------------------------------------------------------
// The GitHub Action

/// How a composite action's run ended: the failing step's exit code (0 when all passed), the
/// action's outputs, and the job summary its steps wrote.
struct ActionRun {
    /// RUNNER_TEMP and the runner's files (the report an output names is in there).
    _temp: tempfile::TempDir,
    code: i32,
    outputs: BTreeMap<String, String>,
    summary: String,
    log: String,
}

/// `${{ … }}` expressions substituted the way the runner does for a composite action; any
/// expression this emulation does not know fails the test rather than passing through.
fn substitute(
    text: &str,
    inputs: &BTreeMap<String, String>,
    steps: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("a closed expression") + start;
        let expr = rest[start + 3..end].trim();
        let value = if let Some(name) = expr.strip_prefix("inputs.") {
            inputs
                .get(name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .clone()
        } else if expr == "github.action_path" {
            repo_root().to_str().expect("utf-8").to_string()
        } else if let Some(path) = expr.strip_prefix("steps.") {
            let (id, output) = path.split_once(".outputs.").expect("steps.ID.outputs.NAME");
            steps
                .get(id)
                .and_then(|o| o.get(output))
                .cloned()
                .unwrap_or_default()
        } else {
            panic!("action.yml uses an expression this test does not emulate: {expr}")
        };
        out.push_str(&value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// `name=value` lines of a GITHUB_OUTPUT / GITHUB_ENV file.
fn key_values(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The action's inputs as the runner gives them: `with`, else each input's default; a
/// required input not given, or a `with` that is no input, fails the test.
fn action_inputs(action: &Value, with: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut inputs = BTreeMap::new();
    for (name, spec) in action["inputs"].as_object().expect("inputs") {
        let given = with
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string());
        let default = spec["default"].as_str().map(str::to_string);
        if spec["required"] == Value::Bool(true) {
            assert!(given.is_some(), "required input {name} not given");
        }
        inputs.insert(name.clone(), given.or(default).unwrap_or_default());
    }
    for (name, _) in with {
        assert!(
            inputs.contains_key(*name),
            "{name} is not an input of action.yml"
        );
    }
    inputs
}

/// Runs `action.yml` with `with` as the runner runs a composite action: inputs defaulted and
/// required ones checked, each `run` step a script file run by `bash --noprofile --norc -eo
/// pipefail`, its `env:` substituted, fresh GITHUB_OUTPUT/GITHUB_STEP_SUMMARY/GITHUB_PATH
/// files per step, paths a step adds put in front of PATH for the next, the first failing
/// step ending the action.
async fn run_action(with: &[(&str, &str)], kubeconfig: &Path) -> ActionRun {
    run_action_on_path(with, kubeconfig, None).await
}

/// [`run_action`] with `bin` in front of the runner's PATH (what a job's earlier steps put
/// there: `install: none` takes the liveproof found on it).
async fn run_action_on_path(
    with: &[(&str, &str)],
    kubeconfig: &Path,
    bin: Option<&Path>,
) -> ActionRun {
    let action = document("action.yml");
    assert_eq!(action["runs"]["using"], Value::from("composite"));
    let inputs = action_inputs(&action, with);

    let temp = tempfile::tempdir().expect("runner temp");
    let runner_temp = temp.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).expect("RUNNER_TEMP");
    let mut path = match bin {
        Some(bin) => format!("{}:/usr/bin:/bin", bin.display()),
        None => "/usr/bin:/bin".to_string(),
    };
    let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let (mut summary, mut log) = (String::new(), String::new());
    let mut code = 0;
    for (i, step) in action["runs"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .enumerate()
    {
        // The reports' upload is GitHub's own action (the files it takes are checked below).
        if step["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        {
            continue;
        }
        assert_eq!(step["shell"], Value::from("bash"), "step {i}");
        assert!(step.get("if").is_none(), "step {i}: `if:` is not emulated");
        let script = temp.path().join(format!("step-{i}.sh"));
        let run = substitute(step["run"].as_str().expect("a run step"), &inputs, &steps);
        std::fs::write(&script, run).expect("script written");
        let files =
            ["output", "summary", "path", "env"].map(|f| temp.path().join(format!("{f}-{i}")));
        for f in &files {
            std::fs::write(f, "").expect("runner file");
        }
        let mut cli = Cli::new("bash")
            .args(&["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .env("PATH", &path)
            .env("KUBECONFIG", kubeconfig)
            .env("NO_COLOR", "1")
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_ACTION_PATH", repo_root())
            .env("GITHUB_OUTPUT", &files[0])
            .env("GITHUB_STEP_SUMMARY", &files[1])
            .env("GITHUB_PATH", &files[2])
            .env("GITHUB_ENV", &files[3])
            .current_dir(temp.path())
            .timeout(Duration::from_secs(300));
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                let v = substitute(v.as_str().expect("string env"), &inputs, &steps);
                cli = cli.env(k, v);
            }
        }
        let run: Run = cli.run().await;
        log.push_str(&format!("--- step {i}\n{}{}", run.stdout, run.stderr));
        summary.push_str(&std::fs::read_to_string(&files[1]).expect("summary"));
        for added in std::fs::read_to_string(&files[2]).expect("path").lines() {
            path = format!("{added}:{path}");
        }
        if let Some(id) = step["id"].as_str() {
            steps.insert(id.to_string(), key_values(&files[0]));
        }
        if run.code != 0 {
            code = run.code;
            break;
        }
    }
    let outputs = action["outputs"]
        .as_object()
        .expect("outputs")
        .iter()
        .map(|(name, spec)| {
            let value = spec["value"].as_str().expect("an output value");
            (name.clone(), substitute(value, &inputs, &steps))
        })
        .collect();
    ActionRun {
        _temp: temp,
        code,
        outputs,
        summary,
        log,
    }
}

/// The Action installs the release archive (sha256 checked), verifies, writes the Markdown
/// report into the job summary, sets the verdict and exit code as outputs and fails the step
/// with liveproof's exit code: live passes, not live fails with 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_github_action_reports_live_and_not_live() {
    let release = format!("file://{}", release_dir().display());

    let live = story_cluster(LIVE).await;
    let run = run_action(
        &[
            ("targets", "deployment/inventory"),
            ("namespace", "apps"),
            ("since", "2026-07-12T10:00:00Z"),
            ("image", "ghcr.io/acme/inventory:1.4.0\n"),
            ("expect-env", "FEATURE_RESERVATIONS"),
            ("wait", "false"),
            ("release-url", &release),
        ],
        &live.kubeconfig,
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.log);
    assert_eq!(run.outputs["verdict"], "live", "{}", run.log);
    assert_eq!(run.outputs["exit-code"], "0");
    assert!(run.summary.contains("inventory"), "{}", run.summary);
    assert!(run.summary.contains("live"), "{}", run.summary);
    // The report the output names is the JSON report of the same run.
    let report: liveproof_evidence::Report = serde_json::from_str(
        &std::fs::read_to_string(&run.outputs["report"]).expect("the JSON report"),
    )
    .expect("a liveproof/v1 report");
    assert_eq!(report.verdict, liveproof_evidence::Verdict::Live);
    // The same run wrote the HTML page the upload step takes, and the summary links it.
    let html = Path::new(&run.outputs["report"]).with_file_name("report.html");
    let page = std::fs::read_to_string(&html).expect("report.html written");
    assert!(page.contains("<svg class=\"timeline\""), "{page}");
    assert!(
        run.summary
            .contains("report.html in the artifact [`liveproof-report`]"),
        "{}",
        run.summary
    );

    let not_live = story_cluster(NOT_LIVE).await;
    let run = run_action(
        &[
            ("targets", "helmrelease/inventory"),
            ("namespace", "apps"),
            ("since", "2026-07-12T10:00:00Z"),
            ("expect", "secretKeyRef"),
            ("expect-secret-ref", "inventory-db/password"),
            ("wait", "false"),
            ("release-url", &release),
        ],
        &not_live.kubeconfig,
    )
    .await;
    assert_eq!(run.code, 1, "{}", run.log);
    assert_eq!(run.outputs["verdict"], "not_live", "{}", run.log);
    assert_eq!(run.outputs["exit-code"], "1");
    assert!(run.summary.contains("manifest_contains"), "{}", run.summary);
    assert!(run.log.contains("::error::not live"), "{}", run.log);
}

/// A bad input is an error verdict with the reason in the summary, and a tampered archive is
/// refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_github_action_refuses_bad_input_and_a_tampered_archive() {
    let release = format!("file://{}", release_dir().display());
    let live = story_cluster(LIVE).await;
    let run = run_action(
        &[
            ("targets", "deploymnet/inventory"),
            ("namespace", "apps"),
            ("wait", "false"),
            ("release-url", &release),
        ],
        &live.kubeconfig,
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.log);
    assert_eq!(run.outputs["verdict"], "error");
    assert!(run.summary.contains("could not verify"), "{}", run.summary);
    // The error and its hint once in the summary (liveproof's Markdown error section) and once
    // in the log (its stderr), never twice in either.
    let once = |text: &str, what: &str| {
        assert_eq!(
            text.matches("unknown kind `deploymnet`").count(),
            1,
            "the error once in the {what}:\n{text}"
        );
        assert_eq!(
            text.to_lowercase().matches("hint:").count(),
            1,
            "the hint once in the {what}:\n{text}"
        );
    };
    once(&run.summary, "summary");
    once(&run.log, "log");
    // The step's own shell said nothing (a `wait` on an empty pid once printed its error into
    // the middle of liveproof's).
    assert!(!run.log.contains(".sh: line"), "{}", run.log);
    assert!(
        run.log.contains("error: target `deploymnet/inventory`"),
        "{}",
        run.log
    );

    // A mirror whose archive is not the one its checksum names.
    let mirror = tempfile::tempdir().expect("mirror");
    let dir = mirror.path().join(format!("v{VERSION}"));
    std::fs::create_dir_all(&dir).expect("mirror dir");
    let real = release_dir().join(format!("v{VERSION}"));
    std::fs::copy(
        real.join(format!("{}.sha256", archive_name())),
        dir.join(format!("{}.sha256", archive_name())),
    )
    .expect("checksum copied");
    std::fs::write(dir.join(archive_name()), b"not the release").expect("tampered");
    let run = run_action(
        &[
            ("targets", "deployment/inventory"),
            ("namespace", "apps"),
            (
                "release-url",
                &format!("file://{}", mirror.path().display()),
            ),
        ],
        &live.kubeconfig,
    )
    .await;
    assert_ne!(run.code, 0, "{}", run.log);
    assert!(
        run.log.contains("FAILED"),
        "sha256sum must refuse it: {}",
        run.log
    );
    assert!(run.outputs["verdict"].is_empty(), "verify never ran");
}

/// The Verify step alone, as the runner starts it (`bash --noprofile --norc -eo pipefail`, its
/// `env:` substituted, the runner's files in `dir`), with stdout and stderr written to one log
/// file as they come, the way the runner shows a step's log live; `bin` (liveproof) on PATH.
fn spawn_verify_step(
    with: &[(&str, &str)],
    kubeconfig: &Path,
    bin: &Path,
    dir: &Path,
) -> std::process::Child {
    let action = document("action.yml");
    let inputs = action_inputs(&action, with);
    let step = action["runs"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["id"] == "verify")
        .expect("a step with id verify")
        .clone();
    let none = BTreeMap::new();
    let script = dir.join("verify.sh");
    std::fs::write(
        &script,
        substitute(step["run"].as_str().expect("a run step"), &inputs, &none),
    )
    .expect("script written");
    let runner_temp = dir.join("runner-temp");
    std::fs::create_dir_all(&runner_temp).expect("RUNNER_TEMP");
    for f in ["output", "summary", "path", "env"] {
        std::fs::write(dir.join(f), "").expect("runner file");
    }
    let log = std::fs::File::create(dir.join("log")).expect("the step's log");
    let mut command = std::process::Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("KUBECONFIG", kubeconfig)
        .env("NO_COLOR", "1")
        .env("RUNNER_TEMP", &runner_temp)
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("GITHUB_OUTPUT", dir.join("output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("summary"))
        .env("GITHUB_PATH", dir.join("path"))
        .env("GITHUB_ENV", dir.join("env"))
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().expect("the log again"))
        .stderr(log);
    for (k, v) in step["env"].as_object().expect("the step's env") {
        command.env(
            k,
            substitute(v.as_str().expect("string env"), &inputs, &none),
        );
    }
    command.spawn().expect("bash runs the step")
}

/// While `--wait` waits, the Action's log shows liveproof's progress as it happens (as `kubectl
/// rollout status` and `argocd app wait` do), not all at once when the step ends: the Verify
/// step runs on a rollout that has not happened yet, its log is read while it runs, and the
/// rollout is made only once the progress lines are there; then the step ends live, with the
/// report after the progress in the log and in the summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_github_actions_log_shows_progress_while_the_step_waits() {
    let simulator = liveproof_sim::Simulator::new().with_controllers();
    let cluster = SimCluster::serve(simulator, "apps").await;
    let kubeconfig = cluster.kubeconfig.clone();
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        liveproof_testkit::kubectl::run(&kubeconfig, args, stdin)
    };
    kubectl(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n"),
    );
    kubectl(
        &["apply", "-f", "-"],
        Some(&liveproof_testkit::e2e::world::deployment(
            "inventory",
            "ghcr.io/acme/inventory:1.3.9",
            "",
        )),
    );
    let since = liveproof_testkit::e2e::world::change_time().await;

    let dir = tempfile::tempdir().expect("the runner's directory");
    let bin = Path::new(env!("CARGO_BIN_EXE_liveproof"))
        .parent()
        .expect("the binaries' directory");
    let mut step = spawn_verify_step(
        &[
            ("targets", "deploy/inventory"),
            ("namespace", "apps"),
            ("since", &since),
            ("image", "ghcr.io/acme/inventory:1.4.0"),
            ("timeout", "3m"),
            ("args", "--no-registry"),
            ("install", "none"),
        ],
        &cluster.kubeconfig,
        bin,
        dir.path(),
    );
    let log = || std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
    let progress = liveproof_testkit::within_async(
        Duration::from_secs(60),
        Duration::from_millis(100),
        || {
            std::future::ready(
                log()
                    .lines()
                    .find(|l| l.starts_with("liveproof: waiting: "))
                    .map(str::to_string),
            )
        },
    )
    .await;
    let still_running = step.try_wait().expect("the step's state").is_none();
    let Some(progress) = progress else {
        let _ = step.kill();
        let _ = step.wait();
        panic!(
            "no progress line in the step's log while it waits:\n{}",
            log()
        );
    };
    assert!(
        still_running,
        "the progress line came only when the step had ended: {progress}\n{}",
        log()
    );

    kubectl(
        &[
            "-n",
            "apps",
            "set",
            "image",
            "deploy/inventory",
            "app=ghcr.io/acme/inventory:1.4.0",
        ],
        None,
    );
    let status = tokio::task::spawn_blocking(move || {
        liveproof_testkit::within(Duration::from_secs(180), Duration::from_millis(100), || {
            step.try_wait().expect("the step's state")
        })
        .or_else(|| {
            let _ = step.kill();
            step.wait().ok()
        })
    })
    .await
    .expect("joined")
    .expect("the step ended");
    let log = log();
    assert_eq!(status.code(), Some(0), "{log}");
    let outputs = key_values(&dir.path().join("output"));
    assert_eq!(outputs["verdict"], "live", "{log}");
    // The progress came first, the report (stdout, printed once liveproof is done) after it.
    let waited = log.find(&progress).expect("the progress line");
    let report = log
        .find("## ✅ liveproof: live")
        .unwrap_or_else(|| panic!("the report in the log:\n{log}"));
    assert!(waited < report, "{log}");
    let summary = std::fs::read_to_string(dir.path().join("summary")).expect("the summary");
    assert!(summary.contains("## ✅ liveproof: live"), "{summary}");
    assert!(
        !summary.contains("liveproof: waiting"),
        "progress is the log's, not the summary's: {summary}"
    );
}

// ---------------------------------------------------------------------------------------------
// Exit 4: superseded

/// web's change (1.4.0) was replaced an hour later by 1.5.0, live itself: what a superseded
/// report holds, with the next step the judge gives it.
fn superseded_report() -> liveproof_evidence::Report {
    use liveproof_evidence::{
        ChangeSummary, Check, Evidence, ResourceKind, SourceRef, Status, SupersededBy, TargetKind,
        TargetReport, Verdict,
    };
    let by = SupersededBy {
        summary: "ReplicaSet apps/web-6c8d (revision 3), created after the one that carried the \
                  change, serves every pod now"
            .into(),
        revision: Some("apps/web-6c8d".into()),
        commit: None,
        images: vec!["ghcr.io/acme/web:1.5.0".into()],
        at: Some("2026-07-12T11:00:00Z".into()),
        live: Some(true),
        source_ref: Some(SourceRef::object(
            ResourceKind::ReplicaSet,
            "apps",
            "web-6c8d",
        )),
    };
    let web = TargetReport {
        kind: TargetKind::Deployment.into(),
        namespace: "apps".into(),
        name: "web".into(),
        verdict: Verdict::Superseded,
        via: None,
        evidence: vec![Evidence {
            check: Check::SpecReadback,
            status: Status::Fail,
            observed: "image ghcr.io/acme/web:1.5.0".into(),
            expected: "ghcr.io/acme/web:1.4.0".into(),
            source_ref: SourceRef::object(ResourceKind::Deployment, "apps", "web")
                .field(".spec.template.spec.containers[app].image"),
            detail: "the pod template runs another image than the change's".into(),
        }],
        next_step: Some(liveproof_evidence::superseded_step(
            TargetKind::Deployment,
            "apps",
            "web",
            &by,
        )),
        diagnostics: Vec::new(),
        live_since: None,
        live_since_unknown: None,
        timeline: Vec::new(),
        superseded_by: Some(by),
        pods: Default::default(),
    };
    liveproof_evidence::Report::new(
        ChangeSummary {
            since: Some("2026-07-12T10:00:00Z".into()),
            commit: None,
            committed_at: None,
        },
        vec![web],
    )
}

/// A stand-in `liveproof` in `dir`: it keeps the arguments it was given in `dir/args`, prints
/// the superseded report as Markdown (drawn by liveproof's own renderer), writes it to
/// `--report FILE` in the format the file's extension names (JSON, JUnit XML), and exits 4.
fn stand_in_liveproof(dir: &Path) -> PathBuf {
    use liveproof_report::{Format, Render, TextStyle};
    let report = superseded_report();
    assert_eq!(liveproof_report::Outcome::exit_code(&report), 4);
    for (format, file) in [
        (Format::Markdown, "report.md"),
        (Format::Json, "report.json"),
        (Format::Junit, "report.xml"),
    ] {
        let mut out = Vec::new();
        report
            .render(format, TextStyle::plain(), &mut out)
            .expect("rendered");
        std::fs::write(dir.join(file), out).expect("written");
    }
    let d = dir.display();
    let script = format!(
        "#!/bin/bash\n\
         printf '%s\\n' \"$@\" > '{d}/args'\n\
         while [ $# -gt 0 ]; do\n\
           if [ \"$1\" = --report ]; then\n\
             case \"$2\" in *.json) cp '{d}/report.json' \"$2\" ;; *.xml) cp '{d}/report.xml' \"$2\" ;; esac\n\
             shift\n\
           fi\n\
           shift\n\
         done\n\
         cat '{d}/report.md'\n\
         exit 4\n"
    );
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let path = bin.join("liveproof");
    std::fs::write(&path, script).expect("the stand-in");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

/// Exit 4 (superseded) passes the Action's step with a notice naming what superseded the
/// target and saying there is nothing to roll back; the outputs keep the verdict and exit
/// code; `fail-on-superseded: "true"` fails the step with 4 instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_github_action_passes_superseded_with_a_notice_unless_told_to_fail() {
    let stand_in = tempfile::tempdir().expect("stand-in dir");
    let bin = stand_in_liveproof(stand_in.path());
    let kubeconfig = stand_in.path().join("kubeconfig");
    let with = [
        ("targets", "deployment/web"),
        ("namespace", "apps"),
        ("since", "2026-07-12T10:00:00Z"),
        ("image", "ghcr.io/acme/web:1.4.0"),
        ("wait", "false"),
        ("install", "none"),
    ];
    let run = run_action_on_path(&with, &kubeconfig, Some(&bin)).await;
    assert_eq!(run.code, 0, "superseded passes the step: {}", run.log);
    assert_eq!(run.outputs["verdict"], "superseded", "{}", run.log);
    assert_eq!(run.outputs["exit-code"], "4");
    let notice = run
        .log
        .lines()
        .find(|l| l.starts_with("::notice::"))
        .unwrap_or_else(|| panic!("a notice: {}", run.log));
    assert_eq!(
        notice,
        "::notice::Deployment apps/web superseded by revision apps/web-6c8d, image \
         ghcr.io/acme/web:1.5.0, made 2026-07-12T11:00:00Z (itself live): not deployed as such, \
         nothing to roll back"
    );
    assert!(!run.log.contains("::error::"), "{}", run.log);
    assert!(
        run.summary.contains("## ⏭️ liveproof: superseded"),
        "{}",
        run.summary
    );
    // The report the output names is the JSON report the run wrote.
    let report: liveproof_evidence::Report = serde_json::from_str(
        &std::fs::read_to_string(&run.outputs["report"]).expect("the JSON report"),
    )
    .expect("a liveproof/v1 report");
    assert_eq!(report.verdict, liveproof_evidence::Verdict::Superseded);
    let args = std::fs::read_to_string(stand_in.path().join("args")).expect("args");
    assert!(
        args.starts_with("verify\ndeployment/web\n--image\nghcr.io/acme/web:1.4.0\n"),
        "{args}"
    );

    let mut failing = with.to_vec();
    failing.push(("fail-on-superseded", "true"));
    let run = run_action_on_path(&failing, &kubeconfig, Some(&bin)).await;
    assert_eq!(run.code, 4, "{}", run.log);
    assert_eq!(run.outputs["verdict"], "superseded");
    assert!(
        run.log
            .contains("::error::Deployment apps/web superseded by revision apps/web-6c8d"),
        "{}",
        run.log
    );
    assert!(run.log.contains("(fail-on-superseded)"), "{}", run.log);

    // Any other value is refused before liveproof runs.
    let mut bad = with.to_vec();
    bad.push(("fail-on-superseded", "yes"));
    let run = run_action_on_path(&bad, &kubeconfig, Some(&bin)).await;
    assert_eq!(run.code, 2, "{}", run.log);
    assert!(
        run.log.contains("fail-on-superseded must be true or false"),
        "{}",
        run.log
    );
}

/// The apply → verify → rollback workflow of docs/github-actions.md: its verify step passes on
/// exit 4 (so the rollback job, which runs only on a failed verify, does not), and fails on
/// 1, 2 and 3 as before.
#[test]
fn the_documented_pipeline_does_not_roll_back_on_superseded() {
    let doc = read("docs/github-actions.md");
    let workflow = doc
        .split("```yaml")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the workflow");
    let workflow: Value = serde_norway::from_str(workflow).expect("the workflow is YAML");
    let rollback_if = workflow["jobs"]["rollback"]["if"].as_str().expect("if");
    assert!(
        rollback_if.contains("needs.verify.result == 'failure'"),
        "{rollback_if}"
    );
    let verify = workflow["jobs"]["verify"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["id"] == "verify")
        .expect("the verify step");
    let script = verify["run"].as_str().expect("a run script");
    // The script with `liveproof` standing in for each exit code, as the runner runs it.
    for (code, passes) in [(0, true), (1, false), (2, false), (3, false), (4, true)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("liveproof");
        std::fs::write(&bin, format!("#!/bin/sh\necho report\nexit {code}\n")).expect("bin");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let run = Cli::new("bash")
            .args(&["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
            .env("SNAPSHOT_DIR", dir.path())
            .env("GITHUB_SHA", "3f2c1ab9d04e5c7a8b6f1e2d3c4b5a69788f9e0d")
            .env("GITHUB_STEP_SUMMARY", dir.path().join("summary"))
            .env("GITHUB_OUTPUT", dir.path().join("output"))
            .current_dir(dir.path())
            .run_blocking();
        assert_eq!(
            run.code == 0,
            passes,
            "exit {code}: {}{}",
            run.stdout,
            run.stderr
        );
        let output = std::fs::read_to_string(dir.path().join("output")).expect("output");
        assert_eq!(
            output,
            format!("exit-code={code}\n"),
            "the real code stays an output"
        );
        if code == 4 {
            assert!(
                run.stdout.contains("::notice::superseded"),
                "{}",
                run.stdout
            );
        }
    }
}

/// The example workflow uses only inputs the action declares, and every required one.
#[test]
fn the_example_workflow_uses_the_actions_inputs() {
    let workflow = document(".github/workflows/verify-example.yml");
    uses_the_actions_inputs(
        workflow["jobs"]["verify"]["steps"]
            .as_array()
            .expect("steps"),
    );
}

/// The README's first screen shows the Action: its steps use this version of it, only inputs
/// it declares and every required one, and the repository is checked out with the history
/// `--commit` needs.
#[test]
fn the_readmes_action_snippet_uses_the_actions_inputs() {
    let readme = read("README.md");
    let section = readme
        .split("## In CI")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README has an `## In CI` section");
    let yaml = section
        .split("```yaml")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```yaml block in it");
    let steps: Value = serde_norway::from_str(yaml).expect("the snippet is YAML");
    let steps = steps.as_array().expect("a list of steps");
    assert!(
        yaml.contains(&format!("uses: liveproof/liveproof@v{VERSION}\n")),
        "{yaml}"
    );
    assert!(yaml.contains("fetch-depth: 0"), "{yaml}");
    uses_the_actions_inputs(steps);
}

fn uses_the_actions_inputs(steps: &[Value]) {
    let action = document("action.yml");
    let inputs = action["inputs"].as_object().expect("inputs");
    let step = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("liveproof/liveproof@"))
        })
        .expect("a step using the action");
    let with = step["with"].as_object().expect("with");
    for key in with.keys() {
        assert!(
            inputs.contains_key(key),
            "{key} is not an input of action.yml"
        );
    }
    for (name, spec) in inputs {
        if spec["required"] == Value::Bool(true) {
            assert!(with.contains_key(name), "required input {name} missing");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The GitLab CI job

/// Serves the files under `dir` over HTTP on a loopback port (what a release download is).
async fn serve_dir(dir: PathBuf) -> String {
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let file = dir.join(uri.path().trim_start_matches('/'));
        async move {
            match std::fs::read(&file) {
                Ok(bytes) => (axum::http::StatusCode::OK, bytes),
                Err(_) => (axum::http::StatusCode::NOT_FOUND, Vec::new()),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

struct JobRun {
    run: Run,
    project: tempfile::TempDir,
}

/// Runs the `.liveproof-verify` job's script as the runner's shell does (one `sh -e` session,
/// the job's variables, overridden by `variables`, in its environment; the project directory
/// as working directory).
async fn run_gitlab_job(variables: &[(&str, &str)], kubeconfig: &Path) -> JobRun {
    let doc = document("ci/gitlab/liveproof.gitlab-ci.yml");
    let job = &doc[".liveproof-verify"];
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("script")
        .iter()
        .map(|l| l.as_str().expect("a script line"))
        .collect();
    let script = script.join("\n");
    let project = tempfile::tempdir().expect("CI_PROJECT_DIR");
    let mut cli = Cli::new("sh")
        .args(&["-e", "-c", script.as_str()])
        .env("PATH", "/usr/bin:/bin")
        .env("KUBECONFIG", kubeconfig)
        .env("NO_COLOR", "1")
        .env("CI_PROJECT_DIR", project.path())
        .current_dir(project.path())
        .timeout(Duration::from_secs(300));
    for (k, v) in job["variables"].as_object().expect("variables") {
        cli = cli.env(k, v.as_str().expect("string variables"));
    }
    for (k, v) in variables {
        assert!(
            job["variables"].get(*k).is_some(),
            "{k} is not a variable of the job"
        );
        cli = cli.env(k, v);
    }
    JobRun {
        run: cli.run().await,
        project,
    }
}

/// Exit 4 (superseded): the GitLab job exits 4, which its `allow_failure: {exit_codes: [4]}`
/// makes a pass with a warning (no `when: on_failure` rollback job runs on it); the dotenv
/// verdict is `superseded`, the log says nothing is rolled back, and the JUnit report holds
/// no failure. The archive served is one of the stand-in `liveproof`, sha256 and all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gitlab_job_passes_superseded_with_a_warning() {
    let doc = document("ci/gitlab/liveproof.gitlab-ci.yml");
    assert_eq!(
        doc[".liveproof-verify"]["allow_failure"]["exit_codes"],
        serde_json::json!([4]),
        "superseded (4), and only it, is allowed to fail"
    );
    let stand_in = tempfile::tempdir().expect("stand-in dir");
    let bin = stand_in_liveproof(stand_in.path());
    let release = stand_in.path().join("release");
    let version_dir = release.join(format!("v{VERSION}"));
    std::fs::create_dir_all(&version_dir).expect("release dir");
    let archive = archive_name();
    Cli::new("tar")
        .arg("-czf")
        .arg(version_dir.join(&archive))
        .arg("-C")
        .arg(&bin)
        .arg("liveproof")
        .run()
        .await
        .expect_code(0);
    let sum = Cli::new("sha256sum")
        .arg(&archive)
        .current_dir(&version_dir)
        .run()
        .await;
    sum.expect_code(0);
    std::fs::write(version_dir.join(format!("{archive}.sha256")), &sum.stdout).expect("sha256");
    let url = serve_dir(release).await;

    let job = run_gitlab_job(
        &[
            ("LIVEPROOF_RELEASE_URL", &url),
            ("LIVEPROOF_TARGETS", "apps/deployment/web"),
            (
                "LIVEPROOF_ARGS",
                "--since 2026-07-12T10:00:00Z --image ghcr.io/acme/web:1.4.0",
            ),
            ("LIVEPROOF_WAIT_ARGS", ""),
        ],
        &stand_in.path().join("kubeconfig"),
    )
    .await;
    job.run.expect_code(4);
    let dir = job.project.path();
    let dotenv = std::fs::read_to_string(dir.join("liveproof.env")).expect("dotenv");
    assert_eq!(dotenv, "LIVEPROOF_VERDICT=superseded\n");
    assert!(
        job.run
            .stdout
            .contains("not deployed as such, nothing to roll back"),
        "{}",
        job.run.stdout
    );
    let junit = std::fs::read_to_string(dir.join("liveproof-report.xml")).expect("junit");
    assert!(!junit.contains("<failure"), "{junit}");
    assert!(
        junit.contains("<skipped message=\"superseded by"),
        "{junit}"
    );
}

/// The GitLab job downloads the release over HTTP (sha256 checked), verifies, leaves the
/// Markdown and JUnit reports and the dotenv verdict, and exits with liveproof's code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gitlab_job_reports_live_and_not_live() {
    let url = serve_dir(release_dir().to_path_buf()).await;

    let live = story_cluster(LIVE).await;
    let job = run_gitlab_job(
        &[
            ("LIVEPROOF_RELEASE_URL", &url),
            ("LIVEPROOF_TARGETS", "deployment/inventory"),
            (
                "LIVEPROOF_ARGS",
                "-n apps --since 2026-07-12T10:00:00Z --image ghcr.io/acme/inventory:1.4.0 --expect-env FEATURE_RESERVATIONS",
            ),
            ("LIVEPROOF_WAIT_ARGS", ""),
        ],
        &live.kubeconfig,
    )
    .await;
    job.run.expect_code(0);
    let dir = job.project.path();
    let dotenv = std::fs::read_to_string(dir.join("liveproof.env")).expect("dotenv");
    assert_eq!(dotenv, "LIVEPROOF_VERDICT=live\n");
    let markdown = std::fs::read_to_string(dir.join("liveproof-report.md")).expect("markdown");
    assert!(
        job.run.stdout.contains(&markdown),
        "the report is in the log"
    );
    assert!(markdown.contains("inventory"), "{markdown}");
    let junit = std::fs::read_to_string(dir.join("liveproof-report.xml")).expect("junit");
    assert!(junit.contains("<testsuites"), "{junit}");
    // The page with each target's timeline, an artifact the log links.
    let html = std::fs::read_to_string(dir.join("liveproof-report.html")).expect("html");
    assert!(html.contains("<svg class=\"timeline\""), "{html}");
    assert!(
        job.run
            .stdout
            .contains("each target's timeline: /artifacts/file/liveproof-report.html"),
        "{}",
        job.run.stdout
    );

    let not_live = story_cluster(NOT_LIVE).await;
    let job = run_gitlab_job(
        &[
            ("LIVEPROOF_RELEASE_URL", &url),
            ("LIVEPROOF_TARGETS", "apps/helmrelease/inventory"),
            (
                "LIVEPROOF_ARGS",
                "--since 2026-07-12T10:00:00Z --expect secretKeyRef --expect-secret-ref inventory-db/password",
            ),
            ("LIVEPROOF_WAIT_ARGS", "--wait --timeout 2s"),
        ],
        &not_live.kubeconfig,
    )
    .await;
    job.run.expect_code(1);
    let dotenv = std::fs::read_to_string(job.project.path().join("liveproof.env")).expect("dotenv");
    assert_eq!(dotenv, "LIVEPROOF_VERDICT=not_live\n");
    let junit =
        std::fs::read_to_string(job.project.path().join("liveproof-report.xml")).expect("junit");
    assert!(junit.contains("<failure"), "{junit}");
}

// ---------------------------------------------------------------------------------------------
// The in-cluster templates: their Jobs' arguments on the simulator

/// `args` with each placeholder replaced (as Argo CD's rendering, Argo Rollouts' `{{args.*}}`
/// or Flux's post-build substitution would) and `--timeout` shortened, run against `cluster`
/// as the container runs them (the in-cluster account replaced by the kubeconfig).
async fn run_job_args(args: &[String], fill: &[(&str, &str)], cluster: &SimCluster) -> Run {
    let mut argv: Vec<String> = args
        .iter()
        .map(|a| {
            fill.iter()
                .fold(a.clone(), |a, (from, to)| a.replace(from, to))
        })
        .collect();
    if let Some(i) = argv.iter().position(|a| a == "--timeout") {
        argv[i + 1] = "3s".into();
    }
    assert!(
        !argv.iter().any(|a| a.contains("{{") || a.contains("${")),
        "unfilled: {argv:?}"
    );
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    common::liveproof()
        .args(&argv)
        .on(cluster)
        .timeout(Duration::from_secs(60))
        .run()
        .await
}

/// The Argo CD PostSync hook's arguments, filled in: a synced-and-live Application passes the
/// hook (0); one synced to an older commit fails it (1), which fails the sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_argocd_hook_passes_live_and_fails_an_older_commit() {
    let hook = document("deploy/argocd-postsync-verify.yaml");
    let annotations = &hook["metadata"]["annotations"];
    assert_eq!(
        annotations["argocd.argoproj.io/hook"],
        Value::from("PostSync")
    );
    assert!(annotations["argocd.argoproj.io/hook-delete-policy"].is_string());
    assert_eq!(hook["spec"]["backoffLimit"], Value::from(0));
    let args = container_args(&hook);
    let fill = [
        ("argocd/app/APP", "argocd/app/inventory"),
        ("COMMIT_SHA", "7453f92"),
        ("CHANGE_TIME", "2026-07-12T10:00:00Z"),
    ];
    let live = story_cluster("argocd-synced-live").await;
    run_job_args(&args, &fill, &live).await.expect_code(0);
    let older = story_cluster("argocd-synced-to-older-commit").await;
    run_job_args(&args, &fill, &older).await.expect_code(1);
}

/// The AnalysisTemplate's job, its `{{args.*}}` filled in: a live dependency is a Successful
/// measurement (0), a not-live one Failed (1); and unproven (3) is Failed too, as documented.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollouts_analysis_job_succeeds_only_when_live() {
    let template = document("deploy/argo-rollouts-analysis.yaml");
    let metric = &template["spec"]["metrics"][0];
    assert_eq!(metric["failureLimit"], Value::from(0));
    let job = &metric["provider"]["job"];
    assert_eq!(job["spec"]["backoffLimit"], Value::from(0));
    let args = container_args(job);
    let declared: Vec<&str> = template["spec"]["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a["name"].as_str().expect("a name"))
        .collect();
    for arg in &args {
        if let Some(name) = arg
            .strip_prefix("{{args.")
            .and_then(|a| a.strip_suffix("}}"))
        {
            assert!(
                declared.contains(&name),
                "{{{{args.{name}}}}} is not declared"
            );
        }
    }
    let text = read("deploy/argo-rollouts-analysis.yaml");
    assert!(
        text.contains("unproven (3)  -> Failed"),
        "the mapping is stated"
    );
    assert!(
        text.contains("superseded (4) -> Failed"),
        "the mapping of superseded is stated"
    );

    let fill = |target: &'static str| {
        [
            ("{{args.target}}", target),
            ("{{args.image}}", "ghcr.io/acme/inventory:1.4.0"),
            ("{{args.since}}", "2026-07-12T10:00:00Z"),
            ("{{args.timeout}}", "3s"),
        ]
    };
    let live = story_cluster(LIVE).await;
    run_job_args(&args, &fill("apps/deploy/inventory"), &live)
        .await
        .expect_code(0);
    let stale = story_cluster("flux-kustomization-stale").await;
    run_job_args(&args, &fill("apps/deploy/inventory"), &stale)
        .await
        .expect_code(1);
}

/// The Flux post-deploy Kustomization depends on the app's, waits, forces re-creation; its
/// Job's arguments, substituted from `postBuild.substitute` as Flux does, pass on an applied
/// Kustomization and fail on a stale one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flux_post_deploy_job_passes_live_and_fails_stale() {
    let docs = documents(&read("deploy/flux-post-deploy.yaml"));
    let ks = docs
        .iter()
        .find(|d| d["kind"] == "Kustomization")
        .expect("a Kustomization");
    let spec = &ks["spec"];
    assert_eq!(spec["wait"], Value::Bool(true));
    assert_eq!(spec["force"], Value::Bool(true));
    assert!(spec["dependsOn"][0]["name"].is_string());
    let job = docs.iter().find(|d| d["kind"] == "Job").expect("a Job");
    let args = container_args(job);
    let substitute: Vec<(String, String)> = spec["postBuild"]["substitute"]
        .as_object()
        .expect("postBuild.substitute")
        .iter()
        .map(|(k, v)| {
            (
                format!("${{{k}}}"),
                v.as_str().expect("a string").to_string(),
            )
        })
        .collect();
    let fill: Vec<(&str, &str)> = substitute
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let live = story_cluster("flux-kustomization-applied-live").await;
    run_job_args(&args, &fill, &live).await.expect_code(0);
    let stale = story_cluster("flux-kustomization-stale").await;
    run_job_args(&args, &fill, &stale).await.expect_code(1);
}

// ---------------------------------------------------------------------------------------------
// The in-cluster templates on the real API server

/// Every in-cluster template is accepted by the real API server (`kubectl apply
/// --dry-run=server`, so admission and the CRDs' OpenAPI schemas judge them), with the
/// read-only RBAC they name applied for real; a broken AnalysisTemplate is refused, which shows
/// the CRD's schema is really checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_cluster_templates_pass_a_server_side_dry_run() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
    let kubectl = |args: &[&str], stdin: Option<&str>| {
        liveproof_testkit::kubectl::run(&plane.kubeconfig, args, stdin)
    };
    for crd in [
        "analysis-template-crd.yaml",
        "kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    ] {
        let path = peers.path(crd);
        assert!(
            path.is_file(),
            "{} is missing\nhint: run e2e/build-peers.sh",
            path.display()
        );
        // Server-side: the CRDs are larger than the last-applied annotation may be.
        kubectl(
            &[
                "apply",
                "--server-side",
                "-f",
                path.to_str().expect("utf-8"),
            ],
            None,
        );
    }
    kubectl(
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/analysistemplates.argoproj.io",
            "crd/kustomizations.kustomize.toolkit.fluxcd.io",
        ],
        None,
    );
    kubectl(
        &["apply", "-f", "-"],
        Some(&read("deploy/rbac-readonly.yaml")),
    );
    kubectl(&["create", "namespace", "flux-system"], None);

    for file in [
        "deploy/verify-job.yaml",
        "deploy/argocd-postsync-verify.yaml",
        "deploy/argo-rollouts-analysis.yaml",
        "deploy/flux-post-deploy.yaml",
    ] {
        let out = kubectl(&["apply", "--dry-run=server", "-f", "-"], Some(&read(file)));
        assert!(out.contains("(server dry run)"), "{file}: {out}");
    }
    // The Job would run as a ServiceAccount that may read what verify reads, and nothing else.
    let sa = "system:serviceaccount:liveproof:liveproof";
    for (question, answer) in [
        (&["list", "pods", "-A"][..], "yes"),
        (
            &[
                "get",
                "kustomizations.kustomize.toolkit.fluxcd.io",
                "-n",
                "flux-system",
            ][..],
            "yes",
        ),
        (&["create", "jobs", "-n", "liveproof"][..], "no"),
    ] {
        let run = Cli::new(liveproof_testkit::kubectl::kubectl_path())
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .args(&["auth", "can-i"])
            .args(question)
            .args(&["--as", sa])
            .run()
            .await;
        assert_eq!(
            run.stdout.trim(),
            answer,
            "can-i {question:?}: {}",
            run.stderr
        );
    }

    // The schema is enforced: a job metric without its Job spec is refused.
    let mut broken = document("deploy/argo-rollouts-analysis.yaml");
    broken["spec"]["metrics"][0]["provider"]["job"]["spec"] =
        serde_json::json!({"backoffLimit": "zero"});
    let out = Cli::new(liveproof_testkit::kubectl::kubectl_path())
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .args(&["apply", "--dry-run=server", "-f", "-"])
        .stdin(serde_json::to_string(&broken).expect("json"))
        .run()
        .await;
    assert_ne!(
        out.code, 0,
        "a broken AnalysisTemplate must be refused: {}",
        out.stdout
    );
    assert!(out.stderr.contains("backoffLimit"), "{}", out.stderr);
}
