//! Writes that fail say so; writes that follow links do not. `--report /dev/full`,
//! `-o json > /dev/full` and `skill > /dev/full` once exited 0; a link planted at `--report`'s
//! temp name made it write another file. A closed pipe (`liveproof … | head`) stays a quiet
//! success.

mod common;

use std::process::Stdio;
use std::time::Duration;

/// The rolled-out inventory story, offline: `verify` of it needs no cluster.
fn story() -> String {
    liveproof_testkit::story::scenarios_dir()
        .join("expect-env-present-rolled-out/cluster.yaml")
        .to_str()
        .expect("utf-8")
        .to_string()
}

fn verify_args(dump: &str) -> Vec<&str> {
    vec![
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--from",
        dump,
        "--since",
        "2026-07-12T10:00:00Z",
    ]
}

/// Runs liveproof with `stdout` as its standard output; its exit code and stderr.
async fn with_stdout(args: &[&str], stdout: Stdio) -> (i32, String) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof starts");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("liveproof ended within 60s")
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

fn dev_full() -> Stdio {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full opens")
        .into()
}

#[tokio::test]
async fn a_full_stdout_is_an_error_naming_stdout() {
    let dump = story();
    let json = [&verify_args(&dump)[..], &["-o", "json"]].concat();
    let text = verify_args(&dump);
    for args in [&["skill"][..], &json, &text] {
        let (code, stderr) = with_stdout(args, dev_full()).await;
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to stdout") && stderr.contains("hint:"),
            "{args:?}: {stderr}"
        );
    }
}

#[tokio::test]
async fn a_closed_pipe_on_stdout_is_a_quiet_success() {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let (code, stderr) = with_stdout(&["skill"], writer.into()).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[tokio::test]
async fn a_report_that_cannot_be_written_is_an_error_naming_it() {
    let dump = story();
    let dir = tempfile::tempdir().expect("tempdir");
    // A link to /dev/full: once renamed over (exit 0, the report lost); now written through,
    // and the full device says so.
    let full = dir.path().join("full.json");
    std::os::unix::fs::symlink("/dev/full", &full).expect("symlink");
    let missing = dir.path().join("no/such/dir/report.json");
    for path in [
        full.to_str().expect("utf-8"),
        missing.to_str().expect("utf-8"),
    ] {
        let args = [&verify_args(&dump)[..], &["--report", path]].concat();
        let run = common::liveproof().args(&args).run().await;
        assert_eq!(run.code, 2, "{path}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr
                .contains(&format!("--report {path}: cannot write it"))
                && run.stderr.contains("hint:"),
            "{path}: {}",
            run.stderr
        );
    }
    assert!(
        std::fs::symlink_metadata(&full)
            .expect("still there")
            .file_type()
            .is_symlink(),
        "the link to the device was not replaced"
    );
}

#[tokio::test]
async fn a_link_planted_beside_the_report_is_never_written_through() {
    let dump = story();
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").expect("write");
    let report = dir.path().join("report.json");
    // The temp name `--report` once used, and a link at the report's own name.
    std::os::unix::fs::symlink(&victim, dir.path().join("report.liveproof-tmp")).expect("link");
    let linked = dir.path().join("linked.json");
    std::os::unix::fs::symlink(&victim, &linked).expect("link");
    for path in [&report, &linked] {
        let args = [
            &verify_args(&dump)[..],
            &["--report", path.to_str().expect("utf-8")],
        ]
        .concat();
        let run = common::liveproof().args(&args).run().await;
        assert_ne!(run.code, 2, "{}", run.stderr);
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
        assert!(
            std::fs::read_to_string(path)
                .expect("the report")
                .contains("inventory"),
            "the report is at {}",
            path.display()
        );
    }
}
