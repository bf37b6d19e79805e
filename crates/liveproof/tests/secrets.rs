//! No secret leaves: values planted where a secret can live never reach stdout, stderr or a
//! written report, in any format, unless the user asked for exactly that (`--logs`).

use liveproof_testkit::binary as common;

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

/// What an echoing server must never get back into any output: a kubeconfig's bearer token,
/// a basic-auth password, a pod's ServiceAccount token.
const ECHOED: &str = "canary-echoed-5b2e";

/// `ECHOED` raw, and as Basic auth and base64 carry it (at any alignment).
fn echoed_in(text: &str) -> bool {
    use base64::Engine;
    let aligned = (0..3).map(|pad| {
        let encoded = base64::engine::general_purpose::STANDARD
            .encode(format!("{}{ECHOED}", "x".repeat(pad)));
        encoded[4..encoded.len() - 4].to_string()
    });
    text.contains(ECHOED) || aligned.into_iter().any(|a| text.contains(&a))
}

/// Runs `cli` (a verify against an echoing server) in each output format and at each log
/// level, and checks the echoed credential is in none of what it prints.
async fn assert_nothing_echoed(cli: impl Fn() -> common::Cli, server: &str) {
    let cases: [&[&str]; 5] = [
        &["-o", "text"],
        &["-o", "json"],
        &["-o", "markdown"],
        &["-o", "json", "-v"],
        &["-o", "json", "-vv"],
    ];
    for more in cases {
        let run = cli().args(more).run().await;
        assert_eq!(run.code, 2, "{more:?}: {}\n{}", run.stdout, run.stderr);
        assert!(
            !echoed_in(&run.stdout) && !echoed_in(&run.stderr),
            "{more:?}: the credential the server echoed was printed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        // Still said: who answered what, with a short excerpt of the page.
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains(&format!(
                "the API server at {server} answered 500 Internal Server Error"
            )) && said.contains("text/html body, not JSON"),
            "{more:?}: {said}"
        );
    }
}

/// A kubeconfig whose one cluster is `server` and whose user is `user` (YAML flow mapping).
fn echo_kubeconfig(dir: &std::path::Path, server: &str, user: &str) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: '{server}'}}\n\
             contexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: apps}}\n\
             current-context: c\nusers:\n- name: u\n  user: {user}\n"
        ),
    )
    .expect("kubeconfig written");
    path.to_str().expect("utf-8").to_string()
}

/// Issue 32, point 8: a 500 `text/html` page echoing the `Authorization` header put the
/// kubeconfig's token (and a basic-auth password) in stderr and in the `-o json` error. The
/// page is quoted only as a short excerpt, every credential masked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_echoing_the_kubeconfig_credentials_never_gets_them_printed() {
    use liveproof_testkit::flood::{self, Answer};
    let server = flood::serve(Answer::EchoRequest);
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, user) in [
        ("token", format!("{{token: {ECHOED}}}")),
        ("basic", format!("{{username: ops, password: {ECHOED}}}")),
    ] {
        let user_dir = dir.path().join(name);
        std::fs::create_dir_all(&user_dir).expect("dir");
        let kubeconfig = echo_kubeconfig(&user_dir, &server, &user);
        let cli = || {
            liveproof()
                .args(&["verify", "deploy/web", "--kubeconfig", &kubeconfig])
                .since("2026-07-12T10:00:00Z")
        };
        assert_nothing_echoed(cli, &server).await;
    }
}

/// The same for a pod's ServiceAccount token, which kube reads from its file (and the kubelet
/// rotates): the file's content is masked wherever it comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_echoing_the_service_account_token_never_gets_it_printed() {
    use liveproof_testkit::flood::{self, Answer};
    let server = flood::serve_tls(Answer::EchoRequest);
    let port = server.rsplit(':').next().expect("a port").to_string();
    let home = tempfile::tempdir().expect("home");
    let mount = home.path().join("serviceaccount");
    std::fs::create_dir_all(&mount).expect("mount");
    std::fs::write(mount.join("token"), ECHOED).expect("token");
    std::fs::copy(flood::ca_certificate(), mount.join("ca.crt")).expect("ca.crt");
    std::fs::write(mount.join("namespace"), "apps").expect("namespace");
    let cli = || {
        liveproof()
            .env("HOME", home.path())
            .env_remove("KUBECONFIG")
            .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env("KUBERNETES_SERVICE_PORT", &port)
            .env("LIVEPROOF_TEST_SERVICEACCOUNT_DIR", &mount)
            .args(&["verify", "deploy/web"])
            .since("2026-07-12T10:00:00Z")
    };
    assert_nothing_echoed(cli, &server).await;
}
