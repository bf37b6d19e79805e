//! Issue 36 §1 and §4 on the CLI. `--wait` refuses at once (exit 2, `error:` naming the target
//! and why, `hint:` the ways to state the change) a request that can never be live: a workload
//! with no statement of what changed — from the flags alone before anything is read, or after
//! the first pass when only the cluster shows what a GitOps target or `-l` reaches. Without
//! `--wait` nothing changes (exit 3). And after a `--wait` stopped on a crash loop, the next
//! step in every format is the diagnosis, never another wait.

use liveproof_testkit::binary as common;

use liveproof_testkit::git::Repo;
use liveproof_testkit::story::scenarios_dir;
use liveproof_testkit::SimCluster;

async fn story(name: &str, ns: &str) -> SimCluster {
    SimCluster::from_file(&scenarios_dir().join(name).join("cluster.yaml"), ns).await
}

/// `run` refused the request as one that can never be live, naming `named`.
fn refused(run: &common::Run, named: &str) {
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!("error: {named}")) && run.stderr.contains("can never be live"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: ")
            && run
                .stderr
                .contains("--image REF, -f MANIFESTS, --expect-env NAME"),
        "{}",
        run.stderr
    );
}

/// A kubeconfig whose server nothing answers: what is refused before anything is read never
/// gets to it.
fn unreachable() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:9'}\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: apps}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n",
    )
    .expect("kubeconfig");
    let path = path.to_str().expect("utf-8").to_string();
    (dir, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_for_a_workload_with_no_statement_is_refused_before_reading() {
    let (_dir, kubeconfig) = unreachable();
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "--since", "10m", "--wait"])
        .args(&["--kubeconfig", &kubeconfig])
        .run()
        .await;
    refused(&run, "deployment/inventory");
    assert!(
        !run.stderr.contains("127.0.0.1:9"),
        "read the cluster first: {}",
        run.stderr
    );
    // -o json: the error document, the hint apart.
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "--since", "10m", "--wait"])
        .args(&["--kubeconfig", &kubeconfig, "-o", "json"])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    let doc: serde_json::Value = run.json();
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("deployment/inventory can never be live"),
        "{doc}"
    );
    assert!(
        doc["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.starts_with("state what changed: --image REF")),
        "{doc}"
    );
}

/// The README's Action example: `apps/deploy/web` with only `--commit` (a real repository):
/// a Deployment records no commit, so nothing could ever trace it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_with_nothing_to_trace_it_is_refused() {
    let repo = Repo::new();
    repo.file("k8s/web.yaml", "kind: Deployment\n");
    let sha = repo.commit("web 1.4.0");
    let (_dir, kubeconfig) = unreachable();
    let repo_path = repo.path();
    let run = common::liveproof()
        .args(&["verify", "apps/deploy/web", "--commit", &sha, "--wait"])
        .args(&["--repo", repo_path.to_str().expect("utf-8")])
        .args(&["--kubeconfig", &kubeconfig])
        .run()
        .await;
    refused(&run, "deployment/web in namespace apps");
    assert!(
        run.stderr.contains("a Deployment records no commit"),
        "{}",
        run.stderr
    );
}

/// Without `--wait` the same request is answered as before: unproven (exit 3), with the ways to
/// state the change. With a statement, `--wait` waits and ends live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_wait_or_with_a_statement_nothing_is_refused() {
    let cluster = story("expect-env-present-rolled-out", "apps").await;
    let run = common::liveproof()
        .args(&["verify", "deploy/inventory"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .run()
        .await;
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let run = common::liveproof()
        .args(&[
            "verify",
            "deploy/inventory",
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
        ])
        .args(&["--no-registry", "--wait", "--timeout", "10m"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

/// What `-l` selects is known once read: the first pass shows the workload has no statement,
/// and the wait ends there with the refusal, not at its ten-minute timeout (the harness's
/// own bound would fail the test first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selected_workload_with_no_statement_is_refused_after_the_first_pass() {
    let cluster = story("expect-env-present-rolled-out", "apps").await;
    let run = common::liveproof()
        .args(&["verify", "-l", "app.kubernetes.io/name=inventory"])
        .args(&["--wait", "--timeout", "10m"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .run()
        .await;
    refused(&run, "deployment/inventory in namespace apps");
}

/// A Kustomization without `--commit` reaches its Deployment with nothing tying it to the
/// change: refused once the first pass read what it reaches. With the commit, its revision ties
/// them, and the wait ends live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitops_target_not_asked_its_revision_is_refused_after_the_first_pass() {
    let cluster = story("flux-kustomization-applied-live", "flux-system").await;
    let run = common::liveproof()
        .args(&["verify", "kustomization/apps", "-n", "flux-system"])
        .args(&["--wait", "--timeout", "10m"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .run()
        .await;
    refused(&run, "deployment/inventory in namespace apps");
    assert!(
        run.stderr
            .contains("reached through kustomization/flux-system/apps")
            && run
                .stderr
                .contains("hint: give kustomization/flux-system/apps the change's --commit"),
        "{}",
        run.stderr
    );
    let run = common::liveproof()
        .args(&["verify", "kustomization/apps", "-n", "flux-system"])
        .args(&["--commit", "7453f92", "--wait", "--timeout", "10m"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

/// §4: `--wait` stopped on a crash loop ("waiting longer will not fix it"); the next step, in
/// text, Markdown (its top "Next step") and JSON, is the diagnosis — the reason, the
/// container's previous logs, the pod's events — and never another wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_wait_stopped_on_a_crash_loop_the_next_step_is_the_diagnosis() {
    let cluster = story("new-pod-crashloopbackoff-old-pods-serving", "apps").await;
    let verify = |format: &'static str| {
        common::liveproof()
            .args(&["verify", "deploy/inventory", "-n", "apps"])
            .args(&["--image", "ghcr.io/acme/inventory:1.4.0", "--no-registry"])
            .args(&["--wait", "--timeout", "10m", "-o", format])
            .on(&cluster)
            .since("2026-07-12T10:00:00Z")
    };
    let logs = "logs inventory-4dxbdm5glx-tqtkw -c inventory --previous";
    let reason = "pod inventory-4dxbdm5glx-tqtkw is crash-looping (inventory CrashLoopBackOff (5 restarts); its last run ended Error (exit code 1)): waiting longer will not fix it";

    let run = verify("text").run().await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("waiting longer will not fix it"),
        "{}",
        run.stderr
    );
    let step = &run.stdout[run.stdout.rfind("next step: ").expect("a next step")..];
    let step = step.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(step.contains(reason) && step.contains(logs), "{step}");
    assert!(!step.contains("--wait"), "{step}");

    let run = verify("markdown").run().await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let next = &run.stdout[run.stdout.find("Next step").expect("a Next step")..];
    let next = &next[..next.find("### Evidence").unwrap_or(next.len())];
    assert!(next.contains(reason) && next.contains(logs), "{next}");
    assert!(!next.contains("--wait"), "{next}");

    let run = verify("json").run().await;
    let report = run.report();
    let step = report.targets[0]
        .next_step
        .as_ref()
        .expect("a next step")
        .to_string();
    assert!(!step.contains("--wait"), "{step}");
    assert!(step.contains(reason) && step.contains(logs), "{step}");
}

/// Every story whose `--wait` stops on a final failure: no target's next step says to wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_final_failure_in_the_corpus_says_to_wait() {
    let mut checked = 0;
    for dir in std::fs::read_dir(scenarios_dir())
        .expect("scenarios")
        .flatten()
    {
        let dir = dir.path();
        let Ok(text) = std::fs::read_to_string(dir.join("story.yaml")) else {
            continue;
        };
        let story: liveproof_testkit::story::Story =
            serde_norway::from_str(&text).expect("story.yaml");
        if story.wait_stops.is_none() || story.verdict != "not_live" {
            continue;
        }
        let cluster = dir.join("cluster.yaml");
        let mut args: Vec<&str> = vec!["verify"];
        args.extend(story.args.iter().map(String::as_str));
        args.extend(["--from", cluster.to_str().expect("utf-8"), "-o", "json"]);
        let run = common::liveproof().args(&args).run().await;
        for t in run.report().targets {
            // Read back from JSON a step is its words: the command is `--wait` in them.
            if let Some(step) = t.next_step.map(|s| s.to_string()) {
                assert!(
                    !step.contains("--wait") && !step.contains("wait for it"),
                    "{}: {} {}: {step}",
                    dir.display(),
                    t.kind,
                    t.name
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} final failures in the corpus");
}

/// MCP's verify shares the path: a wait for a workload no statement reaches is refused at once
/// as an error result naming the target and the ways to state the change; without a wait it
/// is answered unproven as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcps_wait_refuses_what_can_never_be_live() {
    let cluster = story("expect-env-present-rolled-out", "apps").await;
    let kc = cluster.kubeconfig();
    let call = |wait: bool| {
        let mut arguments = serde_json::json!({
            "targets": ["apps/deploy/inventory"], "kubeconfig": kc,
            "since": "2026-07-12T10:00:00Z",
        });
        if wait {
            arguments["wait_seconds"] = serde_json::json!(600);
        }
        serde_json::json!({"name": "verify", "arguments": arguments})
    };
    let (run, replies) = common::mcp(&["--kubeconfig", kc], &[call(true), call(false)]).await;
    assert_eq!(
        replies[0]["isError"], true,
        "{}\n{}",
        replies[0], run.stderr
    );
    let text = common::tool_text(&replies[0]);
    assert!(
        text.contains("deployment/inventory in namespace apps can never be live")
            && text.contains("--image REF"),
        "{text}"
    );
    assert_eq!(
        replies[1]["structuredContent"]["verdict"], "unproven",
        "{}",
        replies[1]
    );
}
