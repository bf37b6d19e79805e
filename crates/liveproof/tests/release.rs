//! The release assets a user installs or applies without a clone, packed by the real scripts
//! (`ci/package-release.sh`) as `.github/workflows/release.yml` packs them:
//!
//! - the static archives for linux amd64 and arm64 and the krew manifest rendered for both,
//!   checked by krew's own validator (`validate-krew-manifest`, built from sigs.k8s.io/krew
//!   into the peers by `e2e/build-peers.sh`), and installed by krew itself (`kubectl-krew`,
//!   built from e2e/krew by `ci/build-krew.sh`) on each platform;
//! - every file under `deploy/` and the Helm chart among the assets the workflow attaches;
//! - the Action's `install: release` step picking the archive of the runner's CPU.
//!
//! The archives' binaries are stand-ins, said plainly: a real static build is a release build
//! per target (minutes each; `.ci/run` builds and runs the x86_64 one through
//! `ci/build-static.sh`, the arm64 one is built and run under qemu-user by the release workflow
//! and by hand, docs/ci.md). Each stand-in is a small static C program built for the archive's
//! CPU (the host's `cc` for amd64, Debian's cross compiler `gcc-aarch64-linux-gnu`, which
//! `.ci/run` installs, for arm64), under every name a release archive holds: the script packs
//! what it is given after checking the CPU it is built for, so the layout, the names, the sums
//! and the manifest are exactly a release's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use liveproof_testkit::e2e::control_plane::repo_root;
use liveproof_testkit::e2e::Peers;
use liveproof_testkit::{Cli, Run};
use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const PROJECT: &str = "https://github.com/liveproof/liveproof";
const AMD64: &str = "x86_64-unknown-linux-musl";
const ARM64: &str = "aarch64-unknown-linux-musl";
const CROSS_CC: &str = "aarch64-linux-gnu-gcc";

fn archive_name(target: &str) -> String {
    format!("liveproof-v{VERSION}-{target}.tar.gz")
}

fn yaml(text: &str) -> Value {
    let v: serde_norway::Value = serde_norway::from_str(text).expect("the YAML parses");
    serde_json::to_value(v).expect("YAML as JSON")
}

fn yaml_at(path: &Path) -> Value {
    yaml(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn package(args: &[&Path]) -> Run {
    // Plain std::process, as ci_templates.rs does: no runtime to nest.
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(repo_root().join("ci/package-release.sh"));
    cmd.args(args);
    Run::from(cmd.output().expect("ci/package-release.sh runs"))
}

/// Stand-ins for the release's binaries, built for `target`'s CPU (the host's `cc`, or Debian's
/// aarch64 cross compiler): a static C program that prints `liveproof VERSION`, under each name
/// a release archive holds.
fn stand_in_bin(dir: &Path, target: &str) -> PathBuf {
    let bin = dir.join(format!("{target}-bin"));
    std::fs::create_dir_all(&bin).expect("bin dir");
    let source = dir.join("stand-in.c");
    std::fs::write(
        &source,
        format!(
            "#include <stdio.h>\nint main(void) {{ puts(\"liveproof {VERSION} (stand-in)\"); return 0; }}\n"
        ),
    )
    .expect("the stand-in's source");
    let exe = bin.join("liveproof");
    let cc = if target == ARM64 { CROSS_CC } else { "cc" };
    let out = std::process::Command::new(cc)
        .args(["-static", "-O2", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| {
            panic!("{cc}: {e}\nhint: apt-get install gcc-aarch64-linux-gnu (.ci/run does)")
        });
    Run::from(out).expect_code(0);
    for name in ["kubectl-liveproof", "kubectl_complete-liveproof"] {
        std::fs::copy(&exe, bin.join(name)).expect("copied");
    }
    bin
}

/// The release directory, packed once per run: both archives, then `--manifests`, exactly the
/// three calls of the release workflow.
fn release() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-assets");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("dir");
        let amd64 = stand_in_bin(&base, AMD64);
        let arm64 = stand_in_bin(&base, ARM64);
        let dist = base.join("dist");
        package(&[&amd64, &dist, Path::new(AMD64)]).expect_code(0);
        package(&[&arm64, &dist, Path::new(ARM64)]).expect_code(0);
        package(&[Path::new("--manifests"), &dist]).expect_code(0);
        dist
    })
}

fn sha256(path: &Path) -> String {
    let run = Cli::new("sha256sum").arg(path).run_blocking();
    run.expect_code(0);
    run.stdout
        .split_whitespace()
        .next()
        .expect("a sum")
        .to_string()
}

fn tar_list(archive: &Path) -> Vec<String> {
    let run = Cli::new("tar").arg("-tzf").arg(archive).run_blocking();
    run.expect_code(0);
    run.stdout.lines().map(str::to_string).collect()
}

/// krew's own validator accepts the manifest rendered for both archives (and rejects the
/// unrendered template, so it is really checking); it names linux/amd64 and linux/arm64, each
/// pinned to its own archive's URL and sha256, and each archive holds the `bin`, every `files`
/// entry and a LICENSE (what krew's install needs).
#[test]
fn the_krew_manifest_for_amd64_and_arm64_passes_krews_validator() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let validator = peers.path("validate-krew-manifest");
    assert!(
        validator.is_file(),
        "{} is missing\nhint: run e2e/build-peers.sh",
        validator.display()
    );
    let dist = release();
    let manifest = dist.join("liveproof.yaml");
    let run = Cli::new(&validator)
        .args(&[
            "-manifest",
            manifest.to_str().expect("utf-8"),
            "-skip-install",
        ])
        .run_blocking();
    run.expect_code(0);
    assert!(
        run.stderr.contains("structural validation OK"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("no overlapping spec.platform[].selector"),
        "{}",
        run.stderr
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let template = dir.path().join("liveproof.yaml");
    std::fs::copy(repo_root().join("plugins/liveproof.yaml"), &template).expect("copied");
    let run = Cli::new(&validator)
        .args(&[
            "-manifest",
            template.to_str().expect("utf-8"),
            "-skip-install",
        ])
        .run_blocking();
    assert_ne!(run.code, 0, "the unrendered template must not validate");

    let rendered = yaml_at(&manifest);
    assert_eq!(
        rendered["spec"]["version"],
        Value::from(format!("v{VERSION}"))
    );
    let platforms = rendered["spec"]["platforms"].as_array().expect("platforms");
    let mut arches = Vec::new();
    for platform in platforms {
        let labels = &platform["selector"]["matchLabels"];
        assert_eq!(labels["os"], Value::from("linux"), "{platform}");
        let arch = labels["arch"].as_str().expect("arch").to_string();
        let target = match arch.as_str() {
            "amd64" => AMD64,
            "arm64" => ARM64,
            other => panic!("a platform for arch {other}: no archive is built for it"),
        };
        let archive = dist.join(archive_name(target));
        assert_eq!(platform["sha256"], Value::from(sha256(&archive)), "{arch}");
        assert_eq!(
            platform["uri"],
            Value::from(format!(
                "{PROJECT}/releases/download/v{VERSION}/{}",
                archive_name(target)
            ))
        );
        let entries = tar_list(&archive);
        let bin = platform["bin"].as_str().expect("bin");
        assert_eq!(bin, "kubectl-liveproof");
        assert!(entries.iter().any(|e| e == bin), "{arch}: {entries:?}");
        for file in platform["files"].as_array().expect("files") {
            let from = file["from"].as_str().expect("from");
            assert!(
                entries.iter().any(|e| e == from),
                "{arch}: {from} not in {entries:?}"
            );
        }
        // What the archive holds beyond LICENSE is installed: the completion binary too.
        for entry in &entries {
            if entry != "liveproof" {
                assert!(
                    platform["files"]
                        .as_array()
                        .expect("files")
                        .iter()
                        .any(|f| f["from"] == entry.as_str()),
                    "{arch}: {entry} is in the archive but not installed by krew"
                );
            }
        }
        assert!(
            entries.iter().any(|e| e == "LICENSE"),
            "krew installs require a LICENSE"
        );
        arches.push(arch);
    }
    arches.sort();
    assert_eq!(arches, ["amd64", "arm64"]);
    // The read-only role the caveats point at is an asset of the same release.
    let caveats = rendered["spec"]["caveats"].as_str().expect("caveats");
    let role = format!("{PROJECT}/releases/download/v{VERSION}/rbac-readonly.yaml");
    assert!(caveats.contains(&role), "{caveats}");
    assert!(dist.join("rbac-readonly.yaml").is_file());
}

/// A minimal HTTP file server for `dir` on 127.0.0.1 (GET only, one request per connection),
/// for the krew install below: krew downloads each platform's `uri`.
fn serve(dir: &Path) -> String {
    use std::io::{BufRead as _, BufReader, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("address");
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // Drain the headers.
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/");
            let file = dir.join(path.trim_start_matches('/'));
            let _ = match std::fs::read(&file) {
                Ok(body) if !path.contains("..") => stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                    )
                    .and_then(|()| stream.write_all(&body)),
                _ => stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                ),
            };
        }
    });
    format!("http://{addr}")
}

/// The `require sigs.k8s.io/krew vX` of a go.mod.
fn krew_pin(go_mod: &str) -> String {
    let text = std::fs::read_to_string(repo_root().join(go_mod)).expect("go.mod");
    text.lines()
        .find_map(|l| l.trim().strip_prefix("require sigs.k8s.io/krew "))
        .unwrap_or_else(|| panic!("{go_mod}: no sigs.k8s.io/krew requirement"))
        .trim()
        .to_string()
}

/// krew installs the rendered manifest on every platform: its validator without
/// `-skip-install` runs `kubectl krew install --manifest` once per platform (KREW_OS/KREW_ARCH
/// set to it) into a throwaway KREW_ROOT, which downloads the archive from `uri`, checks its
/// sha256, unpacks the `files`, links `bin` and finds the LICENSE. The archives are served
/// from 127.0.0.1 (the manifest's release URL replaced by that address, nothing else changed);
/// a wrong arm64 sum makes that platform's install fail, so the install is really checked.
#[test]
fn krew_installs_the_rendered_manifest_on_amd64_and_arm64() {
    // The validator (a peer) and krew (ci/build-krew.sh) are the same krew release.
    assert_eq!(
        krew_pin("e2e/krew/go.mod"),
        krew_pin("e2e/peers/krew/go.mod")
    );
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let validator = peers.path("validate-krew-manifest");
    let run = Cli::new("bash")
        .arg(repo_root().join("ci/build-krew.sh"))
        .timeout(std::time::Duration::from_secs(1200))
        .run_blocking();
    run.expect_code(0);
    let krew_bin = PathBuf::from(run.stdout.lines().last().expect("the bin directory"));
    // kubectl (a peer) and kubectl-krew, and the tools krew's install needs, nothing else.
    let path_dir = tempfile::tempdir().expect("tempdir");
    for (name, from) in [
        ("kubectl", peers.path("kubectl")),
        ("kubectl-krew", krew_bin.join("kubectl-krew")),
    ] {
        std::os::unix::fs::symlink(&from, path_dir.path().join(name)).expect("linked");
    }
    let path = format!("{}:/usr/bin:/bin", path_dir.path().display());

    let dist = release();
    let url = serve(dist);
    let published = format!("{PROJECT}/releases/download/v{VERSION}/");
    let rendered = std::fs::read_to_string(dist.join("liveproof.yaml")).expect("rendered");
    assert_eq!(
        rendered.matches(&published).count(),
        3,
        "two archives and the role"
    );
    let local = rendered.replace(&published, &format!("{url}/"));

    let install = |manifest: &str| {
        // validate-krew-manifest wants the file named for the plugin.
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("liveproof.yaml");
        std::fs::write(&file, manifest).expect("written");
        Cli::new(&validator)
            .args(&["-manifest", file.to_str().expect("utf-8")])
            .env("PATH", &path)
            .env("TMPDIR", dir.path())
            .timeout(std::time::Duration::from_secs(300))
            .run_blocking()
    };
    let run = install(&local);
    run.expect_code(0);
    assert!(
        run.stderr.contains("all 2 spec.platforms installed fine"),
        "{}",
        run.stderr
    );

    let arm64_sha = sha256(&dist.join(archive_name(ARM64)));
    let wrong = local.replace(&arm64_sha, &"0".repeat(64));
    assert_ne!(wrong, local);
    let run = install(&wrong);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("spec.platforms[1] failed to install"),
        "{}",
        run.stderr
    );
}

/// An archive is named for the CPU its binary runs on: the x86_64 binary is refused as the
/// aarch64 archive (it would install, then not start, on every arm64 machine), and the krew
/// manifest is not rendered while an archive it pins is missing.
#[test]
fn packing_refuses_a_binary_for_another_cpu_and_a_manifest_without_both_archives() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dist = dir.path().join("dist");
    let amd64 = stand_in_bin(dir.path(), AMD64);
    let run = package(&[&amd64, &dist, Path::new(ARM64)]);
    run.expect_code(2);
    assert!(
        run.stderr.contains(&format!("is not a {ARM64} binary")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint: "), "{}", run.stderr);
    assert!(!dist.join(archive_name(ARM64)).exists());

    package(&[&amd64, &dist, Path::new(AMD64)]).expect_code(0);
    let run = package(&[Path::new("--manifests"), &dist]);
    run.expect_code(2);
    assert!(run.stderr.contains(&archive_name(ARM64)), "{}", run.stderr);
    assert!(run.stderr.contains("hint: "), "{}", run.stderr);
    assert!(!dist.join("liveproof.yaml").exists());
}

fn files_under(dir: &Path, prefix: &str, found: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).expect("readable") {
        let entry = entry.expect("entry");
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().expect("type").is_dir() {
            files_under(&entry.path(), &format!("{name}/"), found);
        } else {
            found.push((name, entry.path()));
        }
    }
}

fn unpack(archive: &Path, into: &Path) {
    std::fs::create_dir_all(into).expect("dir");
    Cli::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .run_blocking()
        .expect_code(0);
}

/// Every file under `deploy/` reaches a user without a clone: each `deploy/*.yaml` is a release
/// asset of its own (`kubectl apply -f …/releases/download/vX.Y.Z/verify-job.yaml`), and all of
/// `deploy/` (its subdirectories too) is in `liveproof-deploy-vX.Y.Z.tar.gz`, byte for byte;
/// the Helm chart is `liveproof-chart-X.Y.Z.tgz`, which the real helm reads as the chart. The
/// release workflow packs with these calls and attaches the whole directory, so a new file under
/// deploy/ cannot be left out.
#[test]
fn every_file_under_deploy_and_the_chart_are_release_assets() {
    let dist = release();
    let mut deploy = Vec::new();
    files_under(&repo_root().join("deploy"), "deploy/", &mut deploy);
    assert!(deploy.len() > 5, "{deploy:?}");

    let unpacked = tempfile::tempdir().expect("tempdir");
    unpack(
        &dist.join(format!("liveproof-deploy-v{VERSION}.tar.gz")),
        unpacked.path(),
    );
    let mut packed = Vec::new();
    files_under(unpacked.path(), "", &mut packed);
    let names = |files: &[(String, PathBuf)]| {
        let mut v: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(names(&packed), names(&deploy));
    for (name, path) in &deploy {
        let original = std::fs::read(path).expect("readable");
        assert_eq!(
            std::fs::read(unpacked.path().join(name)).expect("unpacked"),
            original,
            "{name}"
        );
        let flat = name.strip_prefix("deploy/").expect("under deploy/");
        if !flat.contains('/') && flat.ends_with(".yaml") {
            assert_eq!(
                std::fs::read(dist.join(flat)).unwrap_or_else(|e| panic!("asset {flat}: {e}")),
                original,
                "{flat}"
            );
        }
    }

    // The chart: every file of charts/liveproof under liveproof/, as `helm package` lays it out,
    // and the real helm reads it as the chart of the workspace version.
    let chart = dist.join(format!("liveproof-chart-{VERSION}.tgz"));
    let mut in_repo = Vec::new();
    files_under(
        &repo_root().join("charts/liveproof"),
        "liveproof/",
        &mut in_repo,
    );
    let mut listed: Vec<String> = tar_list(&chart)
        .into_iter()
        .filter(|e| !e.ends_with('/'))
        .collect();
    listed.sort();
    assert_eq!(listed, names(&in_repo));
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let run = Cli::new(peers.path("helm"))
        .arg("show")
        .arg("chart")
        .arg(&chart)
        .run_blocking();
    run.expect_code(0);
    let shown = yaml(&run.stdout);
    assert_eq!(shown["name"], Value::from("liveproof"));
    assert_eq!(shown["version"], Value::from(VERSION));

    // The workflow: both archives, then --manifests, into the directory it attaches whole.
    let workflow = yaml_at(&repo_root().join(".github/workflows/release.yml"));
    let steps = workflow["jobs"]["binaries"]["steps"]
        .as_array()
        .expect("steps");
    let scripts: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let all = scripts.join("\n");
    for call in [
        format!("ci/build-static.sh --target {AMD64} --root \"$RUNNER_TEMP/amd64\""),
        format!("ci/build-static.sh --target {ARM64} --root \"$RUNNER_TEMP/arm64\""),
        format!("ci/package-release.sh \"$RUNNER_TEMP/amd64/bin\" dist {AMD64}"),
        format!("ci/package-release.sh \"$RUNNER_TEMP/arm64/bin\" dist {ARM64}"),
        "ci/package-release.sh --manifests dist".to_string(),
    ] {
        assert!(all.contains(&call), "release.yml must run `{call}`");
    }
    let upload = scripts
        .iter()
        .find(|s| s.contains("gh release create"))
        .expect("a step creates the release");
    assert!(
        upload.trim_end().ends_with("dist/*"),
        "the release must attach all of dist/: {upload}"
    );
}

/// The Action's `install: release` step downloads the archive of the runner's CPU: on Linux
/// aarch64 the arm64 one (sha256 checked), on x86_64 the amd64 one, and anything else is refused
/// with an error that says what to use instead. The step's own script runs, as the runner runs
/// it, with `uname` answering for the CPU.
#[test]
fn the_actions_release_install_picks_the_archive_of_the_runners_cpu() {
    let action = yaml_at(&repo_root().join("action.yml"));
    let step = action["runs"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["name"] == "Install liveproof")
        .expect("the install step");
    let script = step["run"].as_str().expect("run").to_string();
    assert!(!script.contains("${{"), "inputs reach the step as env");
    let release_url = format!(
        "file://{}",
        release()
            .parent()
            .expect("parent")
            .join("by-version")
            .display()
    );
    // The download layout: RELEASE-URL/vVERSION/NAME.
    let by_version = release().parent().expect("parent").join("by-version");
    if !by_version.exists() {
        std::fs::create_dir_all(&by_version).expect("dir");
        let _ = std::os::unix::fs::symlink(release(), by_version.join(format!("v{VERSION}")));
    }

    for (machine, expect) in [
        ("aarch64", Some(ARM64)),
        ("x86_64", Some(AMD64)),
        ("armv7l", None),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let fake = dir.path().join("fake-bin");
        std::fs::create_dir_all(&fake).expect("dir");
        let uname = fake.join("uname");
        std::fs::write(
            &uname,
            format!(
                "#!/bin/sh\ncase \"$1\" in -sm) echo 'Linux {machine}' ;; -m) echo {machine} ;; *) echo Linux ;; esac\n"
            ),
        )
        .expect("uname");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&uname, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let runner_temp = dir.path().join("runner-temp");
        std::fs::create_dir_all(&runner_temp).expect("dir");
        let github_path = dir.path().join("github_path");
        std::fs::write(&github_path, "").expect("GITHUB_PATH");
        let path = format!(
            "{}:{}",
            fake.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let run = Cli::new("bash")
            .args(&["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .env("PATH", &path)
            .env("LP_INSTALL", "release")
            .env("LP_RELEASE_URL", &release_url)
            .env("LP_ACTION_PATH", repo_root())
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_PATH", &github_path)
            .run_blocking();
        let installed = runner_temp.join("liveproof-action/bin/liveproof");
        match expect {
            Some(target) => {
                run.expect_code(0);
                let archive =
                    runner_temp.join(format!("liveproof-action/{}", archive_name(target)));
                assert!(archive.is_file(), "{machine}: {}", run.stderr);
                let unpacked = dir.path().join("unpacked");
                unpack(&release().join(archive_name(target)), &unpacked);
                assert_eq!(
                    std::fs::read(&installed).expect("installed"),
                    std::fs::read(unpacked.join("liveproof")).expect("packed"),
                    "{machine}: the {target} binary"
                );
                let added = std::fs::read_to_string(&github_path).expect("GITHUB_PATH");
                assert!(added.contains("liveproof-action/bin"), "{added}");
            }
            None => {
                run.expect_code(2);
                assert!(
                    run.stdout.contains("::error::install: release has static Linux x86_64 and aarch64 binaries only")
                        && run.stdout.contains("use install: source"),
                    "{}",
                    run.stdout
                );
                assert!(!installed.exists());
            }
        }
    }
}
