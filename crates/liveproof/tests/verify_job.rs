//! Issue 36 §1: deploy/verify-job.yaml copied as its own comment says is right the first time.
//! The comment's commands, run in a real git repository of the commit, fill the Job from the
//! commit itself (its SHA, the image built from it, its committer time as `--since`); the
//! filled Job's arguments, run against a cluster where that image rolled out after the commit,
//! end live — not refused as unprovable, not waiting out a hard-coded change time.

use liveproof_testkit::binary as common;

use liveproof_testkit::git::{git_at, Repo};
use liveproof_testkit::story::scenarios_dir;
use liveproof_testkit::SimCluster;

const JOB: &str = "deploy/verify-job.yaml";

fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shell commands the Job's comment gives to fill it in, up to the `kubectl apply` they
/// pipe into (continuation lines joined).
fn fill_commands(job: &str) -> String {
    let comment: Vec<&str> = job
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim())
        .collect();
    let start = comment
        .iter()
        .position(|l| l.starts_with("SHA="))
        .expect("the comment sets SHA");
    let mut script = String::new();
    for line in &comment[start..] {
        let (line, more) = match line.strip_suffix('\\') {
            Some(l) => (l, true),
            None => (*line, false),
        };
        script.push_str(line);
        script.push(if more { ' ' } else { '\n' });
        if line.contains("| kubectl apply -f -") {
            break;
        }
    }
    let end = script
        .find("| kubectl apply -f -")
        .expect("piped into kubectl apply");
    script[..end].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_filled_as_its_comment_says_is_right_the_first_time() {
    let job = std::fs::read_to_string(repo_root().join(JOB)).expect("the Job");
    // The application's repository: the commit the deploy shipped, made at 10:00:00Z.
    let repo = Repo::new();
    repo.file(JOB, &job);
    git_at(&repo.path(), &["add", "-A"], "2026-07-12T10:00:00Z");
    git_at(
        &repo.path(),
        &["commit", "-q", "-m", "api: new build"],
        "2026-07-12T10:00:00Z",
    );
    let sha = repo.git(&["rev-parse", "HEAD"]);
    let out = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &fill_commands(&job)])
        .current_dir(repo.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let filled = String::from_utf8(out.stdout).expect("utf-8");
    let filled: serde_json::Value = serde_norway::from_str(&filled).expect("the filled Job");
    let args: Vec<String> = filled["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("a string").to_string())
        .collect();
    let after = |flag: &str| {
        let i = args
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("{flag}: {args:?}"));
        args[i + 1].clone()
    };
    // The change time is the commit's, not one written into the file.
    assert_eq!(after("--since"), "2026-07-12T10:00:00+00:00", "{args:?}");
    assert_eq!(after("--commit"), sha);
    assert_eq!(after("--image"), format!("ghcr.io/acme/api:{sha}"));
    assert!(
        !args.iter().any(|a| a.contains("COMMIT_")),
        "a placeholder left unfilled: {args:?}"
    );

    // The cluster: deploy/api rolled out to that image, its pods started after the commit.
    let story =
        std::fs::read_to_string(scenarios_dir().join("expect-env-present-rolled-out/cluster.yaml"))
            .expect("story")
            .replace("inventory", "api")
            .replace("ghcr.io/acme/api:1.4.0", &format!("ghcr.io/acme/api:{sha}"));
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster_yaml = dir.path().join("cluster.yaml");
    std::fs::write(&cluster_yaml, story).expect("cluster.yaml");
    let cluster = SimCluster::from_file(&cluster_yaml, "apps").await;
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = common::liveproof()
        .args(&words)
        .args(&["--no-registry"])
        .on(&cluster)
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("live"), "{}", run.stdout);
}
