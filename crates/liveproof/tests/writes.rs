//! Writes that fail say so; writes that follow links do not. `--report /dev/full`,
//! `-o json > /dev/full` and `skill > /dev/full` once exited 0; a link planted at `--report`'s
//! temp name made it write another file. A closed pipe (`liveproof … | head`) is exit 2 for a
//! command whose exit code is a verdict (the verdict was not delivered) and a quiet success
//! for one that prints a document to read (`skill`, `release show`). A stderr that cannot be
//! written never turns an answer into a panic.

use liveproof_testkit::binary as common;
use liveproof_testkit::wait_until_async;

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

/// A pipe whose reader is gone before anything is written.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    writer.into()
}

/// A document to read, not a verdict: a reader that stopped reading it lost nothing anyone
/// acts on (`liveproof skill | head`, `release show … | head`).
#[tokio::test]
async fn a_closed_pipe_after_a_document_to_read_is_a_quiet_success() {
    let release =
        liveproof_testkit::story::scenarios_dir().join("helm-upgrade-failed/cluster.yaml");
    let release = release.to_str().expect("utf-8");
    for args in [
        &["skill"][..],
        &[
            "release",
            "show",
            "inventory",
            "-n",
            "apps",
            "--from",
            release,
        ][..],
    ] {
        let (code, stderr) = with_stdout(args, closed_pipe()).await;
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// `verify … | head` once exited 0 whatever the verdict: a closed pipe was taken for the
/// reader's choice. A report that was not delivered is exit 2 (never 0, never the verdict's
/// code as if it had been read), for every command whose exit code is a verdict, and stderr
/// says why.
#[tokio::test]
async fn a_closed_pipe_is_exit_2_for_every_command_whose_exit_code_is_a_verdict() {
    let dump = story();
    let live = [
        &verify_args(&dump)[..],
        &[
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
            "--expect-env",
            "FEATURE_RESERVATIONS",
        ],
    ]
    .concat();
    let not_live = not_live_args();
    let json = [&not_live[..], &["-o".to_string(), "json".to_string()]].concat();
    let not_live: Vec<&str> = not_live.iter().map(String::as_str).collect();
    let json: Vec<&str> = json.iter().map(String::as_str).collect();
    // The same `live` on a pipe that is read: the case below differs only by the reader.
    let (code, stderr) = with_stdout(&live, Stdio::null()).await;
    assert_eq!(code, 0, "{stderr}");
    for args in [&live[..], &not_live, &json, &["demo"][..]] {
        let (code, stderr) = with_stdout(args, closed_pipe()).await;
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to stdout") && stderr.contains("was not delivered"),
            "{args:?}: {stderr}"
        );
    }
}

/// A not-live story, offline: the overlay patch that adds the env var was dropped.
fn not_live_args() -> Vec<String> {
    let dump = liveproof_testkit::story::scenarios_dir()
        .join("expect-env-missing-overlay-patch-dropped/cluster.yaml");
    [
        "verify",
        "deployment/inventory",
        "-n",
        "apps",
        "--since",
        "2026-07-12T10:00:00Z",
        "--image",
        "ghcr.io/acme/inventory:1.4.0",
        "--expect-env",
        "FEATURE_RESERVATIONS",
        "--from",
        dump.to_str().expect("utf-8"),
    ]
    .map(String::from)
    .to_vec()
}

/// `shell` run by `bash -o pipefail -c`, as a CI step runs a pipeline; its exit code and
/// stderr. The wait for it is bounded (a hang fails the test, it is not timed).
async fn pipeline(shell: &str) -> (i32, String) {
    let child = tokio::process::Command::new("bash")
        .args(["-o", "pipefail", "-c", shell])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("bash starts");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the pipeline ended within 60s")
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

/// The issue's own pipeline: a reader that closes its end at once, under `pipefail`. The
/// status is the verdict's (when the report fit in the pipe before the reader left) or 2 —
/// never 0 for a target that is not live.
#[tokio::test]
async fn a_not_live_verdict_piped_into_a_reader_that_leaves_never_exits_0() {
    let args: Vec<String> = not_live_args().iter().map(|a| format!("'{a}'")).collect();
    let command = format!("'{}' {}", env!("CARGO_BIN_EXE_liveproof"), args.join(" "));
    for format in ["json", "text", "markdown"] {
        let (code, stderr) =
            pipeline(&format!("{command} -o {format} | (exec 0<&-; sleep .5)")).await;
        assert!(code == 1 || code == 2, "-o {format}: exit {code}: {stderr}");
        if code == 2 {
            assert!(stderr.contains("cannot write to stdout"), "{stderr}");
        }
    }
}

/// Runs liveproof with `stderr` as its standard error; its exit code and stdout.
async fn with_stderr(args: &[&str], stderr: Stdio) -> (i32, String) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof starts");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("liveproof ended within 60s")
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// An error said on a stderr that cannot be written (its reader gone) once panicked: exit
/// 101 and nothing on stdout. It is exit 2 with the error document on stdout; closed with
/// `2>&-` the same; and a verdict stays the verdict with `-v` logging into it.
#[tokio::test]
async fn a_stderr_that_cannot_be_written_is_no_panic() {
    let missing = [
        "verify",
        "deploy/x",
        "--from",
        "/nonexistent/dump.yaml",
        "-o",
        "json",
    ];
    let (code, stdout) = with_stderr(&missing, closed_pipe()).await;
    assert_eq!(code, 2, "{stdout}");
    let doc: liveproof_report::ErrorReport = serde_json::from_str(&stdout).expect("one document");
    assert!(
        doc.error.message.contains("/nonexistent/dump.yaml"),
        "{stdout}"
    );

    let not_live = not_live_args();
    let logged = [&not_live[..], &["-v".to_string()]].concat();
    let logged: Vec<&str> = logged.iter().map(String::as_str).collect();
    let (code, stdout) = with_stderr(&logged, closed_pipe()).await;
    assert_eq!(code, 1, "{stdout}");

    let (code, stdout) = shell_stdout(&format!(
        "'{}' {} 2>&-",
        env!("CARGO_BIN_EXE_liveproof"),
        missing.join(" ")
    ))
    .await;
    assert_eq!(code, 2, "{stdout}");
    let doc: liveproof_report::ErrorReport = serde_json::from_str(&stdout).expect("one document");
    assert!(
        doc.error.message.contains("/nonexistent/dump.yaml"),
        "{stdout}"
    );
}

/// `shell` run by `sh -c`; its exit code and stdout.
async fn shell_stdout(shell: &str) -> (i32, String) {
    let child = tokio::process::Command::new("sh")
        .args(["-c", shell])
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sh starts");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("ended within 60s")
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
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

/// A FIFO made with `mkfifo` at `path`.
fn fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

/// Runs liveproof, failing the test when it has not ended within 60s (it hangs): not a timing,
/// a bound on the wait.
async fn ends(args: &[&str]) -> common::Run {
    tokio::time::timeout(
        Duration::from_secs(60),
        common::liveproof().args(args).run(),
    )
    .await
    .unwrap_or_else(|_| panic!("liveproof {args:?} still running after 60s: it hangs"))
}

/// A FIFO no process reads, named as `--report` or `--record`, held verify forever (opening
/// it for writing blocks until a reader comes), and so did a `--record` file whose lock
/// another process holds. Each ends with exit 2 naming the path and what it waited for.
#[tokio::test]
async fn a_fifo_nobody_reads_and_a_lock_nobody_releases_end_with_exit_2() {
    let dump = story();
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report.json");
    let record = dir.path().join("record.jsonl");
    fifo(&report);
    fifo(&record);
    for (flag, path) in [("--report", &report), ("--record", &record)] {
        let path = path.to_str().expect("utf-8");
        let args = [&verify_args(&dump)[..], &[flag, path]].concat();
        let run = ends(&args).await;
        assert_eq!(run.code, 2, "{flag}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("{flag} {path}"))
                && run.stderr.contains("no process opened it for reading"),
            "{flag}: {}",
            run.stderr
        );
    }

    let locked = dir.path().join("locked.jsonl");
    let mut holder = std::process::Command::new("flock")
        .arg(&locked)
        .args(["sleep", "600"])
        .spawn()
        .expect("flock runs");
    // flock(1) creates the file, then holds its lock.
    wait_until_async(
        "flock(1) to create the file",
        Duration::from_secs(5),
        || locked.exists(),
    )
    .await;
    let locked_path = locked.to_str().expect("utf-8");
    let run = ends(&[&verify_args(&dump)[..], &["--record", locked_path]].concat()).await;
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("--record {locked_path}"))
            && run.stderr.contains("held its lock"),
        "{}",
        run.stderr
    );
}

/// A FIFO that is read (a log shipper on a named pipe, `--report >(jq …)`) is written as
/// before: the record line arrives whole.
#[tokio::test]
async fn a_fifo_that_is_read_gets_the_record() {
    let dump = story();
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record.jsonl");
    fifo(&record);
    let reading = record.clone();
    let reader = std::thread::spawn(move || std::fs::read_to_string(reading).expect("read"));
    let path = record.to_str().expect("utf-8");
    let run = ends(&[&verify_args(&dump)[..], &["--record", path]].concat()).await;
    assert_ne!(run.code, 2, "{}", run.stderr);
    let line = reader.join().expect("reader");
    let record: serde_json::Value = serde_json::from_str(line.trim()).expect("one JSON line");
    assert!(record.is_object(), "{line}");
}

/// `--record` through a planted symlink appended to the link's target, and a dangling one
/// created it. Both are refused with exit 2 naming the path; the target is left as it was.
#[tokio::test]
async fn record_never_appends_through_a_symlink() {
    let dump = story();
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").expect("write");
    let linked = dir.path().join("linked.jsonl");
    std::os::unix::fs::symlink(&victim, &linked).expect("link");
    let nowhere = dir.path().join("created-through-the-link");
    let dangling = dir.path().join("dangling.jsonl");
    std::os::unix::fs::symlink(&nowhere, &dangling).expect("link");
    for link in [&linked, &dangling] {
        let path = link.to_str().expect("utf-8");
        let run = ends(&[&verify_args(&dump)[..], &["--record", path]].concat()).await;
        assert_eq!(run.code, 2, "{path}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("--record {path}"))
                && run.stderr.contains("symbolic link"),
            "{path}: {}",
            run.stderr
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
    assert!(!nowhere.exists(), "the dangling link's target was created");
}

/// `man DIR` wrote each page with a plain write, through a link planted at its name: the
/// link is replaced by the page, and its target left as it was.
#[tokio::test]
async fn man_pages_are_never_written_through_a_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").expect("write");
    let page = dir.path().join("liveproof-verify.1");
    std::os::unix::fs::symlink(&victim, &page).expect("link");
    let run = ends(&["man", dir.path().to_str().expect("utf-8")]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
    let meta = std::fs::symlink_metadata(&page).expect("the page");
    assert!(meta.file_type().is_file(), "{meta:?}");
}

/// `--report /dev/fd/1` (or `/dev/stdout`) with stdout redirected to a file names one of the
/// process's own open files: it is appended to, after the report on stdout, never replaced by
/// a rename (which at `/dev/stdout` replaced the link itself, and in `/dev/fd` failed).
#[tokio::test]
async fn a_report_to_the_processs_own_stdout_file_is_appended_there() {
    let dump = story();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.txt");
    let file = std::fs::File::create(&out).expect("create");
    let args = [
        &verify_args(&dump)[..],
        &[
            "-o",
            "json",
            "--report",
            "/dev/fd/1",
            "--report-format",
            "yaml",
        ],
    ]
    .concat();
    let (code, stderr) = with_stdout(&args, file.into()).await;
    assert_eq!(code, 3, "{stderr}");
    let written = std::fs::read_to_string(&out).expect("read");
    let json_end = written.find("\n}\n").expect("the JSON report first") + 3;
    let _: serde_json::Value = serde_json::from_str(&written[..json_end]).expect("JSON");
    assert!(
        written[json_end..].starts_with("schema: liveproof/v1"),
        "then the YAML report: {written}"
    );
}
