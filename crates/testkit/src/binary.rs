//! The liveproof binary as the CLI crate's tests drive it and read it back: the binary itself
//! ([`liveproof`]), the oracles of its own output (error documents, `source_ref`s, `stale`
//! rows), its MCP server driven over stdio, `liveproof sim` in a process of its own, and
//! servers that are not an API server. Those tests name this module `common`
//! (`use liveproof_testkit::binary as common;`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub use crate::{Cli, Run};

/// The liveproof binary of the CLI crate's tests. Cargo builds a package's binaries before
/// its integration tests and tells them where: `CARGO_BIN_EXE_liveproof`, set when the test is
/// built (`env!`, which only the CLI crate's own code can read) and, by recent cargos, when it
/// runs. Without it (an older cargo, a test binary run by hand) the binary is where cargo puts
/// it, above the directory of the test's own executable (`target/debug/deps/TEST` →
/// `target/debug/liveproof`).
pub fn liveproof_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("CARGO_BIN_EXE_liveproof") {
        return PathBuf::from(bin);
    }
    let test = std::env::current_exe().expect("the test's own executable");
    let bin = test
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join(format!("liveproof{}", std::env::consts::EXE_SUFFIX)))
        .unwrap_or_else(|| panic!("no target directory above {}", test.display()));
    assert!(
        bin.is_file(),
        "no liveproof binary at {} (run the tests with `cargo test -p liveproof`, which builds it)",
        bin.display()
    );
    bin
}

/// `text` as a literal insta filter pattern (a path, say).
pub fn literal_pattern(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

/// What this crate's binary prints, read back: the error document and where evidence was read.
pub trait RunExt {
    /// The one document `-o json` prints on exit 2 instead of a report (nothing else on
    /// stdout): what was wrong, and the hint.
    fn error_document(&self) -> liveproof_report::ErrorReport;

    /// What is wrong with where the `-o json` report on stdout says its evidence was read:
    /// every item must carry a `source_ref` that says what its prose `source` says, read apart
    /// here as a person reads it, with the apiVersion its kind is served at. Empty when right.
    fn source_ref_problems(&self) -> Vec<String>;
}

impl RunExt for Run {
    fn error_document(&self) -> liveproof_report::ErrorReport {
        assert_eq!(self.code, 2, "{}{}", self.stdout, self.stderr);
        let doc: liveproof_report::ErrorReport =
            serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
                panic!(
                    "stdout is not one liveproof/v1 error document ({e}):\n{}\nstderr:\n{}",
                    self.stdout, self.stderr
                )
            });
        assert_eq!(doc.schema, "liveproof/v1");
        assert!(!self.stdout.contains("\"verdict\""), "{}", self.stdout);
        doc
    }

    fn source_ref_problems(&self) -> Vec<String> {
        let report: serde_json::Value = match serde_json::from_str(&self.stdout) {
            Ok(report) => report,
            Err(e) => return vec![format!("stdout is not JSON ({e}):\n{}", self.stdout)],
        };
        let items = report["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["evidence"].as_array().into_iter().flatten());
        let mut problems = Vec::new();
        for item in items {
            let source = item["source"].as_str().unwrap_or_default();
            let at = |key: &str| item["source_ref"][key].as_str().map(str::to_string);
            let keys = ["kind", "namespace", "name", "field", "apiVersion"];
            let [Some(kind), Some(namespace), Some(name), Some(field), Some(api_version)] =
                keys.map(at)
            else {
                problems.push(format!("no whole source_ref (every key a string): {item}"));
                continue;
            };
            let said = read_source_prose(source);
            if (
                kind.as_str(),
                namespace.as_str(),
                name.as_str(),
                field.as_str(),
            ) != (said.0.as_str(), said.1, said.2, said.3)
            {
                problems.push(format!(
                    "source {source:?} says (kind, namespace, name, field) = {said:?}, source_ref {:?}",
                    (kind, namespace, name, field)
                ));
                continue;
            }
            // Knative's Service is a `Service` of its own group.
            match served_at(&kind) {
                Some(want) if want == api_version => {}
                Some("v1") if kind == "Service" && api_version == "serving.knative.dev/v1" => {}
                want => problems.push(format!(
                    "{source:?}: apiVersion {api_version:?}, but {kind} is served at {want:?}"
                )),
            }
        }
        problems
    }
}

/// The apiVersion each kind liveproof reads is served at, as its row of evidence's `RESOURCES`
/// says (the row the simulator's discovery and the read-only role are held to); a URL
/// (`--version-url`) has none.
fn served_at(kind: &str) -> Option<&'static str> {
    if kind == "URL" {
        return Some("");
    }
    // From evidence's resource table; a kind name two groups serve (core's and Knative's
    // `Service`) is the built-in one, as a report's source names it.
    liveproof_evidence::RESOURCES
        .iter()
        .filter(|r| r.kind == kind)
        .min_by_key(|r| !r.resource.is_builtin())
        .map(|r| r.api_version)
}

/// `(kind, namespace, name, field)` as the prose `source` says them: `NS/Kind/NAME FIELD`,
/// `NS/Kind FIELD` (every object the target selects), `NS/Kind GLOB FIELD`, `Kind/NAME` (no
/// namespace), `URL FIELD`. Namespaces and names are lowercase DNS names and kinds are
/// capitalised, so `apps/Pod` and `Deployment/inventory` tell themselves apart.
fn read_source_prose(source: &str) -> (String, &str, &str, &str) {
    let (head, rest) = source.split_once(' ').unwrap_or((source, ""));
    if head.contains("://") {
        return ("URL".to_string(), "", head, rest);
    }
    let capitalised = |s: &str| s.starts_with(|c: char| c.is_ascii_uppercase());
    let (namespace, kind, name) = match head.splitn(3, '/').collect::<Vec<_>>()[..] {
        [namespace, kind, name] => (namespace, kind, name),
        [namespace, kind] if capitalised(kind) => (namespace, kind, ""),
        [kind, name] => ("", kind, name),
        _ => ("", head, ""),
    };
    match rest.split_once(' ').unwrap_or((rest, "")) {
        (glob, field) if name.is_empty() && glob.contains('*') => {
            (kind.to_string(), namespace, glob, field)
        }
        _ => (kind.to_string(), namespace, name, rest),
    }
}

/// The rows of `stale -o json` output, decoded: the whole stdout must be the one document.
pub fn stale_report(json: &str) -> Vec<liveproof_evidence::DigestRow> {
    #[derive(serde::Deserialize)]
    struct Doc {
        schema: String,
        rows: Vec<liveproof_evidence::DigestRow>,
    }
    let doc: Doc = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(doc.schema, "liveproof/stale/v1");
    doc.rows
}

/// The rows of `stale -o json` output: workload name → verdict.
pub fn stale_rows(json: &str) -> std::collections::BTreeMap<String, String> {
    stale_report(json)
        .into_iter()
        .map(|r| (r.workload, r.verdict.name().to_string()))
        .collect()
}

/// The row of `workload` in `stale -o json` output.
pub fn stale_row(json: &str, workload: &str) -> liveproof_evidence::DigestRow {
    stale_report(json)
        .into_iter()
        .find(|r| r.workload == workload)
        .unwrap_or_else(|| panic!("no row for {workload}: {json}"))
}

/// The liveproof binary ([`liveproof_bin`]), as a test tells it:
/// `liveproof().story(..).on(&cluster).json().run()`.
pub fn liveproof() -> Cli {
    Cli::liveproof(liveproof_bin())
}

/// An HTTP response as bytes: `status` (`500 Internal Server Error`), extra header lines, and
/// the body; the connection closes after it.
pub fn http_response(status: &str, headers: &[&str], body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for header in headers {
        out.push_str(header);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A server on loopback answering every request with `response` (see [`http_response`]) —
/// a proxy, a gateway, a login page or a broken server where the API server should be — or,
/// with `None`, reading every request and never answering. Its address, `127.0.0.1:PORT`.
pub fn canned_server(response: Option<Vec<u8>>) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let response = std::sync::Arc::new(response);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let response = std::sync::Arc::clone(&response);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                match response.as_ref() {
                    Some(bytes) => {
                        let _ = stream.write_all(bytes);
                    }
                    // Hold the connection open until the client gives up.
                    None => std::thread::sleep(Duration::from_secs(600)),
                }
            });
        }
    });
    addr
}

/// Writes a kubeconfig whose one cluster is `server` (any URL, credentials and all), with the
/// namespace `apps` and a bearer token; its path.
pub fn kubeconfig_for(dir: &Path, name: &str, server: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: '{server}'\n\
             contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: apps\n\
             current-context: c\nusers:\n- name: u\n  user:\n    token: not-a-secret\n"
        ),
    )
    .expect("kubeconfig written");
    path.to_str().expect("utf-8 path").to_string()
}

/// `liveproof mcp SERVER_ARGS…` over stdio as a client drives it: the handshake, then each
/// of `calls` (`{"name", "arguments"}`) as `tools/call` with ids 1, 2, …; stdin closed after.
/// The run, and each call's result (or error) by its position.
pub async fn mcp(
    server_args: &[&str],
    calls: &[serde_json::Value],
) -> (Run, Vec<serde_json::Value>) {
    mcp_session(server_args, calls, false).await
}

/// [`mcp`], keeping stdin open until every call is answered (as an interactive client does):
/// what the server sends while a call runs (progress notifications) reaches the client.
pub async fn mcp_held(
    server_args: &[&str],
    calls: &[serde_json::Value],
) -> (Run, Vec<serde_json::Value>) {
    mcp_session(server_args, calls, true).await
}

async fn mcp_session(
    server_args: &[&str],
    calls: &[serde_json::Value],
    hold_input: bool,
) -> (Run, Vec<serde_json::Value>) {
    use tokio::io::AsyncWriteExt as _;
    let mut child = tokio::process::Command::new(liveproof_bin())
        .arg("mcp")
        .args(server_args)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof mcp starts");
    let mut input = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tests", "version": "1"}}})
    .to_string();
    input.push('\n');
    input.push_str(
        &serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    );
    input.push('\n');
    for (i, call) in calls.iter().enumerate() {
        input.push_str(
            &serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call})
                .to_string(),
        );
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).await.expect("write");
    if hold_input {
        // A client keeps its end open until it has its answers: read until every call has
        // one, then close.
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let mut read = String::new();
        let mut answered = 0;
        let reading = async {
            while let Ok(Some(line)) = lines.next_line().await {
                let message: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                if message["id"].as_u64().is_some_and(|id| id >= 1) {
                    answered += 1;
                }
                read.push_str(&line);
                read.push('\n');
                if answered == calls.len() {
                    break;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(120), reading)
            .await
            .expect("the MCP server answered every call within 120s");
        drop(stdin);
        let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("the MCP server exited within 120s")
            .expect("runs");
        return replies_of(
            Run {
                code: out.status.code().unwrap_or(-1),
                stdout: read,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            calls.len(),
        );
    }
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the MCP server answered and exited within 120s")
        .expect("runs");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    replies_of(run, calls.len())
}

/// The run, and the reply to each of `calls` calls (ids 1 to `calls`).
fn replies_of(run: Run, calls: usize) -> (Run, Vec<serde_json::Value>) {
    let messages: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let replies = (1..=calls)
        .map(|id| {
            messages
                .iter()
                .find(|m| m["id"] == id)
                .map(|m| m.get("result").unwrap_or(&m["error"]).clone())
                .unwrap_or_else(|| panic!("no reply to call {id}: {}\n{}", run.stdout, run.stderr))
        })
        .collect();
    (run, replies)
}

/// The text of a tool result.
pub fn tool_text(result: &serde_json::Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}

/// `liveproof sim ARGS --kubeconfig-out KUBECONFIG` in a process of its own (killed when the
/// handle drops), returned once the kubeconfig it writes is whole.
pub async fn sim_process(args: &[&str], kubeconfig: &Path) -> tokio::process::Child {
    let child = tokio::process::Command::new(liveproof_bin())
        .arg("sim")
        .args(args)
        .arg("--kubeconfig-out")
        .arg(kubeconfig)
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("liveproof sim starts");
    crate::wait_until_async("the kubeconfig written", Duration::from_secs(30), || {
        std::fs::read_to_string(kubeconfig)
            .unwrap_or_default()
            .contains("current-context")
    })
    .await;
    child
}
