//! `verify --record FILE`: exactly one JSON line per run that reached a verdict, none on exit 2,
//! whole lines when runs append at once; and docs/metrics.md's DevLake example does what it says.

use std::path::Path;

use liveproof_evidence::record::DeploymentRecord;
use liveproof_evidence::Verdict;
use liveproof_testkit::story::scenarios_dir;

fn dump(story: &str) -> String {
    scenarios_dir()
        .join(story)
        .join("cluster.yaml")
        .to_string_lossy()
        .into_owned()
}

/// `verify statefulset/ledger` on the rolled-out dump, recording to `record`, with `extra`.
fn ledger(record: &Path, image: &str, extra: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_liveproof"));
    cmd.args(["verify", "statefulset/ledger", "-n", "payments"])
        .args(["--since", "2026-07-12T10:00:00Z", "--image", image])
        .args(["--from", &dump("statefulset-rolled-out")])
        .arg("--record")
        .arg(record)
        .args(extra)
        .env_remove("KUBECONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    cmd
}

fn records(path: &Path) -> Vec<DeploymentRecord> {
    let text = std::fs::read_to_string(path).expect("the record file");
    assert!(text.ends_with('\n') || text.is_empty(), "{text:?}");
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect()
}

#[test]
fn each_verdict_appends_one_line_and_exit_2_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("deployments.jsonl");
    let repo = liveproof_testkit::git::Repo::new();
    liveproof_testkit::git::git_at(
        &repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "ledger 3.2.0"],
        "2026-07-12T09:58:00Z",
    );
    let sha = repo.git(&["rev-parse", "HEAD"]);
    let repo_dir = repo.path().to_string_lossy().into_owned();
    let commit = ["--commit", sha.as_str(), "--repo", repo_dir.as_str()];

    let live = ledger(&record, "ghcr.io/acme/ledger:3.2.0", &commit)
        .status()
        .expect("runs");
    assert_eq!(live.code(), Some(0));
    let not_live = ledger(&record, "ghcr.io/acme/ledger:9.9.9", &[])
        .status()
        .expect("runs");
    assert_eq!(not_live.code(), Some(1));
    // A usage error is no verdict: nothing is recorded.
    let refused = ledger(
        &record,
        "ghcr.io/acme/ledger:3.2.0",
        &["--max-concurrency", "2"],
    )
    .status()
    .expect("runs");
    assert_eq!(refused.code(), Some(2));

    let lines = records(&record);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    let first = &lines[0];
    assert_eq!(first.verdict, Verdict::Live);
    assert_eq!(first.commit.as_deref(), Some(sha.as_str()));
    assert_eq!(first.committed_at.as_deref(), Some("2026-07-12T09:58:00Z"));
    assert_eq!(first.live_since.as_deref(), Some("2026-07-12T10:05:10Z"));
    assert_eq!(first.lead_time_seconds, Some(430));
    assert_eq!(
        first.targets[0].live_since.as_deref(),
        Some("2026-07-12T10:05:10Z")
    );
    assert!(first.id.starts_with(&format!("{sha}@")), "{}", first.id);
    let second = &lines[1];
    assert_eq!(second.verdict, Verdict::NotLive);
    assert_eq!(
        (&second.live_since, second.lead_time_seconds),
        (&None, None)
    );
    assert_eq!(second.targets[0].live_since, None);
}

#[test]
fn a_directory_or_an_unwritable_path_is_refused_before_anything_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, says) in [
        (dir.path().to_path_buf(), "is a directory"),
        (
            dir.path().join("no/such/dir/x.jsonl"),
            "cannot be appended to",
        ),
    ] {
        let out = ledger(&path, "ghcr.io/acme/ledger:3.2.0", &["-o", "json"])
            .stdout(std::process::Stdio::piped())
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
        let message = doc["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("--record ") && message.contains(says),
            "{message}"
        );
        assert!(
            doc["error"]["hint"]
                .as_str()
                .is_some_and(|h| h.contains("--record")),
            "{doc}"
        );
    }
}

/// Two processes append at once, many times each: every line is whole and parses.
#[test]
fn runs_appending_at_once_never_tear_a_line() {
    const RUNS: usize = 15;
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("deployments.jsonl");
    let appenders: Vec<_> = ["ghcr.io/acme/ledger:3.2.0", "ghcr.io/acme/ledger:9.9.9"]
        .into_iter()
        .map(|image| {
            let record = record.clone();
            std::thread::spawn(move || {
                for _ in 0..RUNS {
                    let out = ledger(&record, image, &[]).output().expect("runs");
                    assert!(
                        matches!(out.status.code(), Some(0 | 1)),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for a in appenders {
        a.join().expect("an appender");
    }
    let lines = records(&record);
    assert_eq!(lines.len(), 2 * RUNS);
    let live = lines.iter().filter(|r| r.verdict == Verdict::Live).count();
    assert_eq!(live, RUNS, "one live line per live run");
}

/// The part of docs/metrics.md between the DevLake example's markers: its code blocks.
fn example_blocks() -> Vec<String> {
    let doc =
        std::fs::read_to_string(liveproof_testkit::story::repo_root().join("docs/metrics.md"))
            .expect("docs/metrics.md");
    let start = doc
        .find("<!-- BEGIN devlake-example")
        .expect("the example's start");
    let end = doc
        .find("<!-- END devlake-example")
        .expect("the example's end");
    doc[start..end]
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|block| {
            block
                .split_once('\n')
                .map(|(_, body)| body.trim().to_string())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn the_documented_record_is_what_record_writes_and_jq_makes_the_devlake_payload() {
    let blocks = example_blocks();
    let [program, examples @ ..] = blocks.as_slice() else {
        panic!("the jq program, then records and their payloads: {blocks:#?}")
    };
    assert!(
        examples.len() >= 4 && examples.len() % 2 == 0,
        "each record with the payload it becomes: {examples:#?}"
    );
    let (records, payloads): (Vec<&String>, Vec<&String>) =
        examples.chunks(2).map(|pair| (&pair[0], &pair[1])).unzip();
    let mut verdicts = Vec::new();
    for record in &records {
        // Each record shown is one --record writes: it decodes, and encodes back the same.
        let decoded: DeploymentRecord = serde_json::from_str(record).expect("a record line");
        assert_eq!(decoded.line().trim_end(), record.as_str());
        verdicts.push(decoded.verdict);
    }
    // A live record, and a superseded one (what DevLake has no result for).
    assert_eq!(verdicts, [Verdict::Live, Verdict::Superseded]);

    // `jq … deployments.jsonl`, run on the records shown.
    let dir = tempfile::tempdir().expect("tempdir");
    let lines: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.path().join("deployments.jsonl"), lines).expect("write");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(program)
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "the example needs jq on PATH: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<&str> = payloads.iter().map(|p| p.as_str()).collect();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .lines()
            .collect::<Vec<_>>(),
        want
    );
}

/// The JSON Schema at `tests/record_formats/NAME`, written from the tool's own source and
/// documentation (each file's `$comment` cites them).
fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/record_formats")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let schema: serde_json::Value = serde_json::from_str(&text).expect("a JSON schema");
    jsonschema::draft202012::new(&schema).expect("a draft 2020-12 schema")
}

fn payloads(path: &Path, validator: &jsonschema::Validator) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).expect("the record file");
    text.lines()
        .map(|line| {
            let doc: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{line}\n{errors:#?}");
            doc
        })
        .collect()
}

/// A live run with its commit read in a real repository, recorded in `format`.
fn recorded_live(
    format: &str,
    extra: &[&str],
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    String,
    std::process::Output,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("deployments.jsonl");
    let repo = liveproof_testkit::git::Repo::new();
    liveproof_testkit::git::git_at(
        &repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "ledger 3.2.0"],
        "2026-07-12T09:58:00Z",
    );
    let sha = repo.git(&["rev-parse", "HEAD"]);
    let repo_dir = repo.path().to_string_lossy().into_owned();
    let mut args = vec![
        "--commit",
        sha.as_str(),
        "--repo",
        repo_dir.as_str(),
        "--record-format",
        format,
    ];
    args.extend_from_slice(extra);
    let out = ledger(&record, "ghcr.io/acme/ledger:3.2.0", &args)
        .output()
        .expect("runs");
    (dir, record, sha, out)
}

const REPO_URL: &str = "https://github.com/acme/payments";

#[test]
fn devlake_format_writes_the_webhook_deployment_its_source_requires() {
    let (_dir, record, sha, out) = recorded_live(
        "devlake",
        &["--record-repo-url", REPO_URL, "--record-env", "STAGING"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = payloads(&record, &schema("devlake-deployment.schema.json"));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    let d = &lines[0];
    assert_eq!(d["result"], "SUCCESS");
    assert_eq!(d["environment"], "STAGING");
    // From the commit to when the last pod of the new revision became Ready.
    assert_eq!(d["startedDate"], "2026-07-12T09:58:00Z");
    assert_eq!(d["finishedDate"], "2026-07-12T10:05:10Z");
    let commit = &d["deploymentCommits"][0];
    assert_eq!(commit["commitSha"], sha.as_str());
    assert_eq!(commit["repoUrl"], REPO_URL);
    assert_eq!(commit["finishedDate"], "2026-07-12T10:05:10Z");
    assert!(
        d["id"].as_str().is_some_and(|id| id.starts_with(&sha)),
        "{d}"
    );
}

#[test]
fn datadog_format_writes_the_dora_deployment_event_its_api_requires() {
    let (_dir, record, sha, out) = recorded_live(
        "datadog",
        &["--record-repo-url", REPO_URL, "--record-env", "prod-eu"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = payloads(&record, &schema("datadog-dora-deployment.schema.json"));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    let a = &lines[0]["data"]["attributes"];
    assert_eq!(a["service"], "ledger");
    assert_eq!(a["env"], "prod-eu");
    assert_eq!(a["git"]["commit_sha"], sha.as_str());
    assert_eq!(a["git"]["repository_url"], REPO_URL);
    let ns = |at: &str| -> i64 {
        let t: jiff::Timestamp = at.parse().expect("a time");
        i64::try_from(t.as_nanosecond()).expect("fits")
    };
    assert_eq!(a["finished_at"], ns("2026-07-12T10:05:10Z"));
    assert_eq!(a["started_at"], ns("2026-07-12T09:58:00Z"));
}

/// What a format cannot carry is said, and nothing is appended: a not-live change is no
/// Datadog deployment.
#[test]
fn a_change_a_format_cannot_carry_appends_nothing_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("deployments.jsonl");
    let out = ledger(
        &record,
        "ghcr.io/acme/ledger:9.9.9",
        &["--record-format", "datadog"],
    )
    .output()
    .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("nothing appended") && stderr.contains("not_live"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&record).unwrap_or_default(), "");
}

/// A format outside the list, DevLake without the repository URL it requires or with an
/// environment it does not know, and a URL carrying a password: exit 2 before anything is
/// read, naming the flag, and the password is not repeated.
#[test]
fn a_record_format_or_its_destination_given_wrong_is_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("deployments.jsonl");
    for (extra, says) in [
        (&["--record-format", "fourkeys"][..], "fourkeys"),
        (&["--record-format", "devlake"][..], "--record-repo-url"),
        (
            &[
                "--record-format",
                "devlake",
                "--record-repo-url",
                REPO_URL,
                "--record-env",
                "prod",
            ][..],
            "PRODUCTION, STAGING, TESTING or DEVELOPMENT",
        ),
        (
            &[
                "--record-format",
                "datadog",
                "--record-repo-url",
                "https://bot:hunter2secret@github.com/acme/payments",
            ][..],
            "carries credentials",
        ),
        (
            &["--record-repo-url", REPO_URL][..],
            "--record-format devlake or datadog",
        ),
    ] {
        let out = ledger(&record, "ghcr.io/acme/ledger:3.2.0", extra)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
        assert!(!stderr.contains("hunter2secret"), "{stderr}");
    }
    assert!(
        !record.exists()
            || std::fs::read_to_string(&record)
                .unwrap_or_default()
                .is_empty()
    );
}

/// docs/metrics.md's `curl` block names only flags verify takes, and each format it names.
#[test]
fn the_documented_dora_curl_uses_flags_verify_takes() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md");
    let text = std::fs::read_to_string(&path).expect("docs/metrics.md");
    let block = text
        .split("<!-- BEGIN dora-curl -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- END dora-curl -->").next())
        .expect("the dora-curl block");
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args(["verify", "--help"])
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&help.stdout);
    let commands: Vec<&str> = block
        .split("liveproof verify")
        .skip(1)
        .map(|c| c.split("\nwhile").next().unwrap_or(c))
        .collect();
    assert_eq!(commands.len(), 2, "{block}");
    for (command, format) in commands.iter().zip(["devlake", "datadog"]) {
        assert!(
            command.contains(&format!("--record-format {format}")),
            "{command}"
        );
        for flag in command.split_whitespace().filter(|w| w.starts_with("--")) {
            assert!(help.contains(flag), "{flag} is not a verify flag");
        }
    }
    for endpoint in [
        "/api/plugins/webhook/connections/",
        "/api/v2/dora/deployment",
    ] {
        assert!(block.contains(endpoint), "{endpoint}");
    }
}
