//! No secret leaves: values planted where a secret can live never reach stdout, stderr or a
//! written report, in any format, unless the user asked for exactly that (`--logs`).

mod common;

use common::liveproof;
use liveproof_testkit::story::scenarios_dir;

const CANARY: &str = "DB_PASSWORD=canary-4f1d9a7c";

/// The canary, raw and as base64 (a Secret's `data` form).
fn leaked(text: &str) -> bool {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(CANARY);
    text.contains(CANARY) || text.contains("canary-4f1d9a7c") || text.contains(&b64)
}

/// The OOMKilled story with a termination message that holds the log tail
/// (`terminationMessagePolicy: FallbackToLogsOnError` writes it there).
fn oomkilled_with_a_termination_message(dir: &std::path::Path) -> std::path::PathBuf {
    let original = scenarios_dir().join("diag-oomkilled/cluster.yaml");
    let text = std::fs::read_to_string(original).expect("fixture");
    let planted = text.replacen(
        "        reason: OOMKilled\n",
        &format!("        reason: OOMKilled\n        message: \"connecting with {CANARY}\"\n"),
        1,
    );
    assert_ne!(
        planted, text,
        "the fixture has the OOMKilled termination to plant in"
    );
    let path = dir.join("cluster.yaml");
    std::fs::write(&path, planted).expect("write");
    path
}

#[tokio::test]
async fn a_termination_message_is_logs_shown_only_with_logs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = oomkilled_with_a_termination_message(dir.path());
    let dump = dump.to_str().expect("utf-8");
    for format in ["text", "json", "yaml", "name", "markdown", "junit"] {
        let run = liveproof()
            .args(&[
                "verify",
                "deployment/inventory",
                "-n",
                "apps",
                "--from",
                dump,
            ])
            .since("2026-07-12T10:00:00Z")
            .args(&["--image", "ghcr.io/acme/inventory:1.4.0", "-o", format])
            .run()
            .await;
        assert_eq!(run.code, 1, "{format}: {}{}", run.stdout, run.stderr);
        assert!(
            !leaked(&run.stdout) && !leaked(&run.stderr),
            "{format}: the termination message was printed without --logs:\n{}",
            run.stdout
        );
        // -o name says only which objects were verified.
        assert!(
            format == "name"
                || run.stdout.contains("exit code 137") && run.stdout.contains("--logs"),
            "{format}: the termination itself is still said, and how to see its message:\n{}",
            run.stdout
        );
    }
    let asked = liveproof()
        .args(&[
            "verify",
            "deployment/inventory",
            "-n",
            "apps",
            "--from",
            dump,
        ])
        .since("2026-07-12T10:00:00Z")
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0", "--logs"])
        .run()
        .await;
    assert!(leaked(&asked.stdout), "--logs shows it:\n{}", asked.stdout);
}

#[tokio::test]
async fn a_version_url_shows_neither_its_password_nor_its_query() {
    let dump = scenarios_dir().join("gitops-reconciled-new-tag-rolled-out/cluster.yaml");
    // Nothing listens on port 9 of loopback: the reading fails, and its error is shown too.
    let url =
        "http://ops:canary-4f1d9a7c@127.0.0.1:9/version?token=canary-4f1d9a7c#canary-4f1d9a7c";
    for format in ["text", "json", "yaml", "name", "markdown", "junit"] {
        let run = liveproof()
            .args(&[
                "-v",
                "verify",
                "deployment/inventory",
                "-n",
                "apps",
                "--from",
                dump.to_str().expect("utf-8"),
            ])
            .since("2026-07-12T10:00:00Z")
            .args(&[
                "--image",
                "ghcr.io/acme/inventory:1.4.0",
                "--version-url",
                url,
                "--expect-version",
                "1.4.0",
                "-o",
                format,
            ])
            .run()
            .await;
        assert_eq!(run.code, 3, "{format}: {}{}", run.stdout, run.stderr);
        assert!(
            !leaked(&run.stdout) && !leaked(&run.stderr),
            "{format}: the URL's secrets were shown:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        assert!(
            format == "name" || run.stdout.contains("127.0.0.1:9/version?token=***"),
            "{format}: {}",
            run.stdout
        );
    }
}
