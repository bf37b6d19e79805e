//! What a kubectl user types, taken as kubectl takes it (issue 23, "Speak kubectl"): targets
//! in every kubectl form, `-f -`, `-f DIR -R`, `-k DIR`, a relative `-f` found in `--repo`,
//! durations as kubectl reads them, completion, man pages, the version, kubectl's plugin
//! completion, and a help that fits a screen. Each runs the real binary.

use liveproof_testkit::binary as common;

use std::path::{Path, PathBuf};

use liveproof_testkit::git::Repo;
use liveproof_testkit::{Cli, Run};

/// A dump holding Deployment apps/inventory, live.
fn dump() -> String {
    liveproof_testkit::story::scenarios_dir()
        .join("gitops-reconciled-new-tag-rolled-out")
        .join("cluster.yaml")
        .to_str()
        .expect("utf-8")
        .to_string()
}

fn liveproof(args: &[&str]) -> Run {
    common::liveproof().args(args).run_blocking()
}

/// `verify ARGS… -n apps --from DUMP -o json`: the targets the report names.
fn verified(args: &[&str]) -> Vec<String> {
    let dump = dump();
    let mut all = vec!["verify"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-n", "apps", "--from", &dump, "-o", "json"]);
    let run = liveproof(&all);
    assert_ne!(run.code, 2, "{args:?} refused:\n{}", run.stderr);
    let report: serde_json::Value = run.json();
    report["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| {
            format!(
                "{}/{}",
                t["kind"].as_str().unwrap_or(""),
                t["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// Every input error is said one way: `error: …`, then `hint: …`; no clap `tip:`, no
/// library's words.
fn assert_refused(run: &Run, says: &[&str]) {
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("\nhint: "), "{}", run.stderr);
    assert!(!run.stderr.contains("tip:"), "{}", run.stderr);
    for word in ["jiff", "friendly", "unit designator", "panicked"] {
        assert!(!run.stderr.contains(word), "{word}: {}", run.stderr);
    }
    for needle in says {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
}

#[test]
fn targets_are_taken_in_every_form_kubectl_takes() {
    let one = vec!["Deployment/inventory".to_string()];
    assert_eq!(verified(&["deploy", "inventory"]), one);
    assert_eq!(verified(&["deployments.apps", "inventory"]), one);
    let two = vec![
        "Deployment/inventory".to_string(),
        "Deployment/web".to_string(),
    ];
    assert_eq!(verified(&["deploy", "inventory", "web"]), two);
    assert_eq!(verified(&["deploy", "inventory,web"]), two);
    assert_eq!(verified(&["deploy/inventory,deploy/web"]), two);
    assert_eq!(verified(&["deploy/inventory", "deployment/web"]), two);
    assert_eq!(
        verified(&["deploy,sts", "inventory"]),
        vec!["Deployment/inventory", "StatefulSet/inventory"]
    );
}

#[test]
fn a_kind_word_beside_kind_slash_name_words_is_refused_as_kubectl_refuses_it() {
    let run = liveproof(&[
        "verify",
        "deploy",
        "inventory",
        "deploy/web",
        "--from",
        &dump(),
    ]);
    assert_refused(
        &run,
        &[
            "no need to specify a resource type as a separate argument",
            "deploy a b",
        ],
    );
    let run = liveproof(&["verify", "deploy", "--from", &dump()]);
    assert_refused(&run, &["a kind with no name after it", "`deploy NAME`"]);
}

const WEB: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inventory
  namespace: apps
spec:
  selector:
    matchLabels: {app: inventory}
  template:
    metadata:
      labels: {app: inventory}
    spec:
      containers:
      - name: app
        image: ghcr.io/acme/inventory:1.4.0
";

fn other(name: &str) -> String {
    WEB.replace(
        "name: inventory\n  namespace",
        &format!("name: {name}\n  namespace"),
    )
}

/// `-f`/`-k` runs: the workloads the report names, from `dir`.
fn declared(dir: &Path, args: &[&str], stdin: Option<&str>) -> (Run, Vec<String>) {
    let dump = dump();
    let mut cli = common::liveproof()
        .current_dir(dir)
        .arg("verify")
        .args(args)
        .args(&["--from", &dump, "-o", "json"]);
    if let Some(text) = stdin {
        cli = cli.stdin(text.as_bytes().to_vec());
    }
    let run = cli.run_blocking();
    if run.code == 2 {
        return (run, Vec::new());
    }
    let report: serde_json::Value = run.json();
    let names = report["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect();
    (run, names)
}

#[test]
fn f_dash_reads_stdin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (run, names) = declared(dir.path(), &["-f", "-"], Some(WEB));
    assert_eq!(names, ["inventory"], "{}", run.stderr);
    let report: serde_json::Value = run.json();
    assert!(
        report.to_string().contains("stdin"),
        "the source says stdin: {report}"
    );
}

#[test]
fn f_dir_reads_its_top_level_and_with_r_every_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k8s = dir.path().join("k8s");
    std::fs::create_dir_all(k8s.join("nested")).expect("mkdir");
    std::fs::write(k8s.join("inventory.yaml"), WEB).expect("write");
    let (run, names) = declared(dir.path(), &["-f", "k8s"], None);
    assert_eq!(names, ["inventory"], "{}", run.stderr);
    // A manifest below the top level that only -R reads: refused, never a verdict over part
    // of what the directory declares (a workload not read is a workload not verified).
    std::fs::write(k8s.join("nested/web.yaml"), other("web")).expect("write");
    let (run, _) = declared(dir.path(), &["-f", "k8s"], None);
    assert_refused(&run, &["1 manifest file(s) in directories under it", "-R"]);
    let (run, mut names) = declared(dir.path(), &["-f", "k8s", "-R"], None);
    names.sort();
    assert_eq!(names, ["inventory", "web"], "{}", run.stderr);
    // Only nested manifests: nothing at the top, and the hint says -R.
    std::fs::remove_file(k8s.join("inventory.yaml")).expect("rm");
    let (run, _) = declared(dir.path(), &["-f", "k8s"], None);
    assert_refused(&run, &["top level", "-R"]);
}

#[test]
fn k_dir_is_built_by_the_real_kubectl_or_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("base");
    std::fs::create_dir_all(&base).expect("mkdir");
    std::fs::write(base.join("inventory.yaml"), WEB).expect("write");
    std::fs::write(
        base.join("kustomization.yaml"),
        "resources: [inventory.yaml]\nnamePrefix: shop-\n",
    )
    .expect("write");
    let kubectl = liveproof_testkit::kubectl::kubectl_path();
    let dump = dump();
    let args = ["verify", "-k", "base", "--from", &dump, "-o", "json"];
    let run = common::liveproof()
        .current_dir(dir.path())
        .env("LIVEPROOF_KUBECTL", &kubectl)
        .args(&args)
        .run_blocking();
    assert_ne!(run.code, 2, "{}", run.stderr);
    let report: serde_json::Value = run.json();
    // kustomize's namePrefix shows it was built, not read as files.
    assert_eq!(report["targets"][0]["name"], "shop-inventory", "{report}");
    let run = common::liveproof()
        .current_dir(dir.path())
        .env("LIVEPROOF_KUBECTL", "/nonexistent/kubectl")
        .args(&args[..5])
        .run_blocking();
    assert_refused(
        &run,
        &["-k base", "kubectl", "not found", "LIVEPROOF_KUBECTL"],
    );
}

#[test]
fn f_url_is_refused_with_the_reason_and_no_credentials() {
    let run = liveproof(&[
        "verify",
        "-f",
        "https://user:s3cret@example.com/web.yaml",
        "--from",
        &dump(),
    ]);
    assert_refused(&run, &["reads no remote manifests", "download it first"]);
    assert!(!run.stderr.contains("s3cret"), "{}", run.stderr);
}

#[test]
fn a_relative_f_not_here_is_read_from_repo_or_named_in_the_hint() {
    let repo = Repo::new();
    repo.file("manifests/web.yaml", WEB);
    let sha = repo.commit("web");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let repo_path = repo.path();
    let repo_str = repo_path.to_str().expect("utf-8");
    for commit in [Some(sha.as_str()), None] {
        let mut args = vec!["-f", "manifests/web.yaml", "--repo", repo_str];
        if let Some(sha) = commit {
            args.extend_from_slice(&["--commit", sha]);
        }
        let (run, names) = declared(elsewhere.path(), &args, None);
        assert_eq!(names, ["inventory"], "{commit:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("in --repo"),
            "{commit:?}: said on stderr: {}",
            run.stderr
        );
    }
    // Not in --repo either: the error names where it looked.
    let (run, _) = declared(
        elsewhere.path(),
        &["-f", "manifests/db.yaml", "--repo", repo_str],
        None,
    );
    let want = format!(
        "did you mean {}",
        repo_path.join("manifests/db.yaml").display()
    );
    assert_refused(&run, &[&want]);
    // Found here but outside --repo with --commit: the hint names it in --repo.
    std::fs::create_dir_all(elsewhere.path().join("manifests")).expect("mkdir");
    std::fs::write(elsewhere.path().join("manifests/web.yaml"), WEB).expect("write");
    let (run, _) = declared(
        elsewhere.path(),
        &[
            "-f",
            "manifests/web.yaml",
            "--repo",
            repo_str,
            "--commit",
            &sha,
        ],
        None,
    );
    let want = format!(
        "did you mean {}",
        repo_path.join("manifests/web.yaml").display()
    );
    assert_refused(&run, &["outside --repo", &want]);
}

#[test]
fn durations_are_read_as_kubectl_reads_them() {
    let dump = dump();
    for args in [
        &["--request-timeout", "5"][..],
        &["--request-timeout", "0"],
        &["--since", "1d"],
        &["--since", "1d2h"],
    ] {
        let mut all = vec!["verify", "deploy/inventory", "-n", "apps", "--from", &dump];
        all.extend_from_slice(args);
        let run = liveproof(&all);
        assert_ne!(run.code, 2, "{args:?}: {}", run.stderr);
    }
    // --timeout 60 is read (the command fails later, on the missing kubeconfig, not on it).
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "--wait",
        "--timeout",
        "60",
        "--since",
        "1h",
        "--kubeconfig",
        "/nonexistent/kubeconfig",
    ]);
    assert_eq!(run.code, 2);
    assert!(!run.stderr.contains("--timeout"), "{}", run.stderr);
    for (flag, value, says) in [
        ("--since", "1x", "`x` is not a unit"),
        ("--since", "1y", "`y` is not a unit"),
        ("--request-timeout", "5x", "`x` is not a unit"),
        ("--request-timeout", "-1", "negative"),
    ] {
        let run = liveproof(&["verify", "deploy/inventory", "--from", &dump, flag, value]);
        assert_refused(&run, &[flag, says]);
    }
}

#[test]
fn completion_scripts_for_each_shell() {
    // Each registers this binary as the completer (`COMPLETE=SHELL liveproof -- WORDS`): what
    // it offers comes from the command line and the cluster at <TAB> time.
    let bin = env!("CARGO_BIN_EXE_liveproof");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = liveproof(&["completion", shell]);
        run.expect_code(0);
        assert!(run.stdout.contains("COMPLETE"), "{shell}: {}", run.stdout);
        assert!(run.stdout.contains(bin), "{shell}: {}", run.stdout);
        let answer = Cli::new(bin)
            .env("COMPLETE", shell)
            .env("_CLAP_COMPLETE_INDEX", "2")
            .args(&["--", "liveproof", "verify", "--request-t"])
            .run_blocking();
        answer.expect_code(0);
        assert!(
            answer.stdout.contains("--request-timeout"),
            "{shell}: {}",
            answer.stdout
        );
    }
    let run = liveproof(&["completion", "tcsh"]);
    assert_refused(&run, &["tcsh"]);
}

#[test]
fn man_pages_from_the_cli() {
    let run = liveproof(&["man"]);
    run.expect_code(0);
    assert!(
        run.stdout.starts_with(".ie") || run.stdout.contains(".TH liveproof 1"),
        "{}",
        run.stdout
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("man1");
    let run = liveproof(&["man", out.to_str().expect("utf-8")]);
    run.expect_code(0);
    for page in [
        "liveproof.1",
        "liveproof-verify.1",
        "liveproof-release-show.1",
        "liveproof-completion.1",
    ] {
        let text =
            std::fs::read_to_string(out.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let verify = std::fs::read_to_string(out.join("liveproof-verify.1")).expect("page");
    assert!(verify.contains("request\\-timeout"), "the flags are in it");
}

#[test]
fn version_as_a_subcommand_and_a_flag() {
    let sub = liveproof(&["version"]);
    sub.expect_code(0);
    let flag = liveproof(&["--version"]);
    flag.expect_code(0);
    assert_eq!(sub.stdout, flag.stdout);
    assert_eq!(
        sub.stdout.trim(),
        format!("liveproof {}", env!("CARGO_PKG_VERSION"))
    );
}

fn complete_helper() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl_complete-liveproof"))
}

/// Candidates from the completion helper's Cobra answer, the directive checked: no file
/// completion (4), and no space after a candidate to be continued (`deploy/`: 2 more).
fn candidates(stdout: &str) -> Vec<String> {
    let mut lines: Vec<&str> = stdout.lines().collect();
    let directive = lines.pop();
    let unfinished = lines
        .iter()
        .any(|l| l.split('\t').next().is_some_and(|c| c.ends_with('/')));
    let want = if unfinished { ":6" } else { ":4" };
    assert_eq!(directive, Some(want), "{stdout}");
    lines
        .iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn kubectl_complete_liveproof_completes_subcommands_and_flags() {
    let run = Cli::new(complete_helper()).args(&["ve"]).run_blocking();
    run.expect_code(0);
    assert_eq!(candidates(&run.stdout), ["verify", "version"]);
    let run = Cli::new(complete_helper())
        .args(&["verify", "--request-t"])
        .run_blocking();
    assert_eq!(candidates(&run.stdout), ["--request-timeout"]);
    let run = Cli::new(complete_helper()).args(&[""]).run_blocking();
    let all = candidates(&run.stdout);
    for sub in ["verify", "stale", "release", "completion", "man"] {
        assert!(all.iter().any(|c| c == sub), "{sub}: {all:?}");
    }
}

/// A target's TYPE completes to every spelling of every kind of the kind table, then `/`
/// (as `kubectl get` completes resource types), and a typed prefix narrows it.
#[test]
fn completion_offers_every_kind() {
    let run = Cli::new(complete_helper())
        .args(&["verify", ""])
        .run_blocking();
    run.expect_code(0);
    let offered = candidates(&run.stdout);
    let every: Vec<String> = liveproof_evidence::TargetKind::spellings()
        .map(|s| format!("{s}/"))
        .collect();
    for spelling in &every {
        assert!(offered.contains(spelling), "{spelling}: {offered:?}");
    }
    assert!(every.iter().any(|s| s == "ksvc/") && every.iter().any(|s| s == "hr/"));
    let run = Cli::new(complete_helper())
        .args(&["verify", "-n", "shop", "deploy/web", "stat"])
        .run_blocking();
    assert_eq!(candidates(&run.stdout), ["statefulset/", "statefulsets/"]);
}

/// Through the real kubectl (1.26+ plugin completion): the plugin and its helper on PATH.
#[test]
fn kubectl_liveproof_tab_completes_through_the_real_kubectl() {
    let bin = complete_helper();
    let dir = bin.parent().expect("the binaries' directory");
    assert!(dir.join("kubectl-liveproof").exists());
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = liveproof_testkit::cli::kubectl()
        .env("PATH", &path)
        .args(&["__complete", "liveproof", "ve"])
        .run_blocking();
    run.expect_code(0);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("verify\t")),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(run.stdout.ends_with(":4\n"), "{}", run.stdout);
}

/// The simulator serving the dump (Deployment apps/inventory), for completion.
async fn sim() -> liveproof_testkit::sim::SimCluster {
    liveproof_testkit::sim::SimCluster::from_file(Path::new(&dump()), "apps").await
}

/// The completion helper's candidates for `words`, with `KUBECONFIG` at `cluster`, run in
/// `dir`; stderr must stay empty (noise under the prompt).
async fn completed_in(dir: &Path, kubeconfig: &str, words: &[&str]) -> Vec<String> {
    let run = Cli::new(complete_helper())
        .env("KUBECONFIG", kubeconfig)
        .current_dir(dir)
        .args(words)
        .run()
        .await;
    run.expect_code(0);
    assert_eq!(run.stderr, "", "{words:?}");
    candidates(&run.stdout)
}

/// `verify deploy/<TAB>` offers the Deployments there, `-n <TAB>` the namespaces (not the
/// files of the directory), `--context <TAB>` the kubeconfig's contexts, `deploy <TAB>` the
/// names alone; a cluster that cannot be reached offers nothing and says nothing.
#[tokio::test(flavor = "multi_thread")]
async fn completion_offers_names_namespaces_and_contexts_from_the_cluster() {
    let cluster = sim().await;
    let kubeconfig = cluster.kubeconfig();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "").expect("write");
    let here = dir.path();
    assert_eq!(
        completed_in(here, kubeconfig, &["verify", "deploy/"]).await,
        ["deploy/inventory"]
    );
    assert_eq!(
        completed_in(here, kubeconfig, &["verify", "-n", "apps", "deploy/inv"]).await,
        ["deploy/inventory"]
    );
    assert_eq!(
        completed_in(here, kubeconfig, &["verify", "apps/deployment/i"]).await,
        ["apps/deployment/inventory"]
    );
    assert_eq!(
        completed_in(here, kubeconfig, &["verify", "deploy", ""]).await,
        ["inventory"]
    );
    assert_eq!(
        completed_in(here, kubeconfig, &["verify", "-n", "shop", "deploy/"]).await,
        Vec::<String>::new(),
        "nothing in a namespace with none"
    );
    let namespaces = completed_in(here, kubeconfig, &["verify", "-n", ""]).await;
    assert!(namespaces.iter().any(|n| n == "apps"), "{namespaces:?}");
    assert!(
        !namespaces.iter().any(|n| n.contains("notes")),
        "{namespaces:?}"
    );
    assert_eq!(
        completed_in(here, kubeconfig, &["stale", "--namespace", "ap"]).await,
        ["apps"]
    );
    assert_eq!(
        completed_in(here, kubeconfig, &["verify", "--context", ""]).await,
        ["liveproof-sim"]
    );
    // The kinds still come first, then `/` with no space after it.
    let kinds = completed_in(here, kubeconfig, &["verify", "sts"]).await;
    assert_eq!(kinds, ["sts/"]);
    // Unreachable: nothing, silently, and soon (each read is bounded).
    let gone = completed_in(
        here,
        kubeconfig,
        &[
            "verify",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
            "deploy/",
        ],
    )
    .await;
    assert_eq!(gone, Vec::<String>::new());
}

/// The `kubectl_complete-liveproof` the archives ship (the crate's binary of that name, static
/// like the others: the image has no shell), called by the real kubectl: `kubectl liveproof
/// verify deploy/<TAB>` offers the cluster's Deployments, and `-n <TAB>` its namespaces.
#[tokio::test(flavor = "multi_thread")]
async fn the_shipped_completion_script_completes_names_through_the_real_kubectl() {
    let cluster = sim().await;
    let script_dir = tempfile::tempdir().expect("tempdir");
    let script = script_dir.path().join("kubectl_complete-liveproof");
    let bin = complete_helper();
    std::fs::copy(&bin, &script).expect("copied");
    let bin_dir = bin.parent().expect("the binaries' directory");
    // The shipped copy first on PATH: it, beside kubectl-liveproof as an archive lays them
    // out, is what kubectl runs.
    let path = format!(
        "{}:{}:{}",
        script_dir.path().display(),
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let kubectl = |words: &[&str]| {
        liveproof_testkit::cli::kubectl()
            .env("PATH", &path)
            .env("KUBECONFIG", cluster.kubeconfig())
            .arg("__complete")
            .arg("liveproof")
            .args(words)
    };
    let run = kubectl(&["verify", "deploy/"]).run().await;
    run.expect_code(0);
    let offered: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(offered, ["deploy/inventory", ":4"], "{}", run.stderr);
    let run = kubectl(&["verify", "-n", "ap"]).run().await;
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        ["apps", ":4"],
        "{}",
        run.stderr
    );
}

/// `liveproof completion bash` registers the binary as the completer, so bash's <TAB> asks it
/// (and through it the cluster): sourced in a real bash, the function it defines completes
/// `liveproof verify -n <TAB>` to the namespaces, not the directory's files.
#[tokio::test(flavor = "multi_thread")]
async fn the_bash_script_completes_from_the_cluster() {
    let cluster = sim().await;
    let bin = env!("CARGO_BIN_EXE_liveproof");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "").expect("write");
    let script = format!(
        "source <('{bin}' completion bash)\n\
         COMP_WORDS=(liveproof verify -n ap); COMP_CWORD=3; COMP_TYPE=9\n\
         _clap_complete_liveproof liveproof ap -n\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
    );
    let run = Cli::new("bash")
        .env("KUBECONFIG", cluster.kubeconfig())
        .current_dir(dir.path())
        .args(&["-c", &script])
        .run()
        .await;
    run.expect_code(0);
    assert_eq!(run.stdout.trim(), "apps", "{}", run.stderr);
}

/// Run as kubectl's plugin (`kubectl-liveproof`, as kubectl and krew run it), the help says
/// what the user types: `kubectl liveproof verify`, in the usage line and the examples.
#[test]
fn kubectl_liveproof_help_says_kubectl_liveproof() {
    let plugin = complete_helper()
        .parent()
        .expect("the binaries' directory")
        .join("kubectl-liveproof");
    for args in [&["--help"][..], &["verify", "--help"], &["verify", "-h"]] {
        let run = Cli::new(&plugin).args(args).run_blocking();
        run.expect_code(0);
        assert!(
            run.stdout.contains("Usage: kubectl liveproof"),
            "{args:?}: {}",
            run.stdout
        );
        assert!(!run.stdout.contains("Usage: liveproof"), "{}", run.stdout);
        assert!(
            !run.stdout.contains("Usage: kubectl-liveproof"),
            "{}",
            run.stdout
        );
    }
    let run = Cli::new(&plugin).args(&["verify", "--help"]).run_blocking();
    assert!(
        run.stdout
            .contains("  kubectl liveproof verify deploy inventory -n apps"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("\n  liveproof verify"),
        "{}",
        run.stdout
    );
    // A usage error says it too.
    let run = Cli::new(&plugin).args(&["verify"]).run_blocking();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("kubectl liveproof verify"),
        "{}",
        run.stderr
    );
    // The binary under its own name keeps its own.
    let run = liveproof(&["verify", "--help"]);
    assert!(
        run.stdout.contains("Usage: liveproof verify"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  liveproof verify deploy inventory"),
        "{}",
        run.stdout
    );
    // Through the real kubectl.
    let path = format!(
        "{}:{}",
        plugin.parent().expect("dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = liveproof_testkit::cli::kubectl()
        .env("PATH", &path)
        .args(&["liveproof", "verify", "--help"])
        .run_blocking();
    run.expect_code(0);
    assert!(
        run.stdout.contains("Usage: kubectl liveproof verify"),
        "{}",
        run.stdout
    );
}

/// `-w`/`--watch` are `--wait`, as kubectl's: refused with --from as --wait is, and waiting
/// on a cluster as --wait does.
#[tokio::test(flavor = "multi_thread")]
async fn w_and_watch_are_wait() {
    for flag in ["-w", "--watch"] {
        let run = common::liveproof()
            .args(&["verify", "deploy/inventory", "--from", &dump(), flag])
            .run()
            .await;
        assert_refused(&run, &["'--wait'", "'--from"]);
    }
    let cluster = sim().await;
    for flag in ["-w", "--watch"] {
        let run = common::liveproof()
            .args(&[
                "verify",
                "deploy/inventory",
                "--image",
                "ghcr.io/acme/inventory:1.4.0",
            ])
            .args(&[
                "--since",
                "2020-01-01T00:00:00Z",
                flag,
                "--timeout",
                "30s",
                "-o",
                "json",
            ])
            .on(&cluster)
            .run()
            .await;
        assert_eq!(run.code, 0, "{flag}: {}\n{}", run.stdout, run.stderr);
    }
}

/// `-q`: nothing on stdout or stderr, the verdict the exit code; --report is still written;
/// with -o (a format for a report nothing prints) or -v it is refused, saying how to keep one.
#[test]
fn quiet_says_nothing_but_the_exit_code() {
    let dump = dump();
    let base = [
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "--image",
        "ghcr.io/acme/inventory:1.4.0",
    ];
    let loud = liveproof(&base);
    assert_ne!(loud.code, 2, "{}", loud.stderr);
    assert!(!loud.stdout.is_empty());
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report.json");
    let mut args = base.to_vec();
    let report_arg = report.to_str().expect("utf-8").to_string();
    args.extend(["-q", "--report", &report_arg]);
    let quiet = liveproof(&args);
    assert_eq!(quiet.code, loud.code);
    assert_eq!(quiet.stdout, "");
    assert_eq!(quiet.stderr, "");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report written"))
            .expect("json");
    assert_eq!(written["schema"], "liveproof/v1");
    for (extra, says) in [
        (&["-o", "json"][..], "--report"),
        (&["-v"], "-q says nothing but errors"),
    ] {
        let mut args = base.to_vec();
        args.push("--quiet");
        args.extend_from_slice(extra);
        assert_refused(&liveproof(&args), &["'--quiet'", says]);
    }
    // An error is still said.
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "--from",
        "/nonexistent/dump.yaml",
        "-q",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
}

/// kubectl's verbosity levels: -v=6 / -v 6 / --v=6 log each API request with its status, as
/// kubectl's 6 does; 0 logs none; a level that is not a number is refused.
#[tokio::test(flavor = "multi_thread")]
async fn kubectl_verbosity_levels_are_taken() {
    let cluster = sim().await;
    let verify = |level: &[&str]| {
        common::liveproof()
            .args(&["verify", "deploy/inventory", "--since", "1h"])
            .args(level)
            .on(&cluster)
    };
    for level in [
        &["-v=6"][..],
        &["-v", "6"],
        &["--v=6"],
        &["--v", "6"],
        &["-v6"],
        &["-v"],
    ] {
        let run = verify(level).run().await;
        assert_ne!(run.code, 2, "{level:?}: {}", run.stderr);
        let logged = run
            .stderr
            .lines()
            .find(|l| l.contains("API request") && l.contains("deployments/inventory"))
            .unwrap_or_else(|| panic!("{level:?}: no request logged:\n{}", run.stderr));
        assert!(
            logged.contains("status=200") && logged.contains("method=GET"),
            "{logged}"
        );
    }
    let run = verify(&["-v=0"]).run().await;
    assert!(!run.stderr.contains("API request"), "{}", run.stderr);
    let run = verify(&["-v=high"]).run().await;
    assert_refused(&run, &["`-v=high`", "-v=6"]);
}

/// `--timeout 0` is kubectl's "no limit": here 24 hours, said on stderr; `--since 60` is 60
/// seconds ago, as `--timeout 60` is 60 seconds, but a number as large as a Unix time is
/// refused with the time it would be.
#[test]
fn timeout_zero_and_a_bare_since() {
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "--wait",
        "--timeout",
        "0",
        "--since",
        "1h",
        "--kubeconfig",
        "/nonexistent/kubeconfig",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--timeout 0") && run.stderr.contains("24h"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("more than zero"), "{}", run.stderr);
    let dump = dump();
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "--since",
        "60",
        "-o",
        "json",
    ]);
    assert_ne!(run.code, 2, "{}", run.stderr);
    let report: serde_json::Value = run.json();
    let since = report["change"]["since"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let at: jiff::Timestamp = since
        .parse()
        .unwrap_or_else(|e| panic!("{since}: {e}: {report}"));
    let ago = jiff::Timestamp::now().duration_since(at).as_secs();
    assert!((60..=600).contains(&ago), "--since 60 read as {ago}s ago");
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "--from",
        &dump,
        "--since",
        "1765000000",
    ]);
    assert_refused(
        &run,
        &["--since 1765000000", "Unix time", "2025-12-06T05:46:40Z"],
    );
}

/// `traffic_current` reads what routes: the long help says so for a Rollout (the Services it
/// names and its weights) and a Canary (its apex Service), within the same line budget.
#[test]
fn verify_help_says_what_traffic_current_reads() {
    let long = liveproof(&["verify", "--help"]);
    long.expect_code(0);
    let text = long.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "traffic_current every ready endpoint of the Services selecting its pods or a Rollout names is a current pod; a Rollout's traffic weights total 100%",
        "traffic_current (canary weight 0, the apex Service selecting only the primary;",
    ] {
        assert!(text.contains(said), "`{said}` missing from:\n{}", long.stdout);
    }
}

#[test]
fn verify_help_is_grouped_by_task_and_h_fits_a_screen() {
    let short = liveproof(&["verify", "-h"]);
    short.expect_code(0);
    let lines = short.stdout.lines().count();
    assert!(lines <= 45, "verify -h is {lines} lines:\n{}", short.stdout);
    let long = liveproof(&["verify", "--help"]);
    long.expect_code(0);
    // A regression guard: the long help says each flag in full, after its -h line.
    assert!(long.stdout.lines().count() <= 300, "{}", long.stdout);
    for help in [&short.stdout, &long.stdout] {
        let headings: Vec<&str> = help
            .lines()
            .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
            .collect();
        let order = [
            "Targets:",
            "What changed:",
            "Waiting:",
            "Output:",
            "Cluster access (as kubectl):",
        ];
        let found: Vec<&str> = headings
            .iter()
            .copied()
            .filter(|h| order.contains(h))
            .collect();
        assert_eq!(found, order, "{headings:?}");
        // A section's lines: from its heading to the next heading.
        let section = |name: &str| -> String {
            let start = help.find(&format!("\n{name}\n")).expect(name);
            help[start + name.len() + 2..]
                .lines()
                .take_while(|l| l.is_empty() || l.starts_with(' '))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(
            section("Targets:")
                .trim_start()
                .starts_with("-l, --selector"),
            "first option"
        );
        for flag in ["--wait", "--timeout"] {
            assert!(section("Waiting:").contains(flag), "{flag}");
        }
        for flag in ["--output", "--logs", "--verbose"] {
            assert!(section("Output:").contains(flag), "{flag}");
            assert!(
                !section("Cluster access (as kubectl):").contains(flag),
                "{flag}"
            );
        }
    }
    assert!(long.stdout.contains("Exit codes:"), "{}", long.stdout);
    // The one target that is not a kind of the kind table is named too.
    assert!(
        long.stdout
            .contains("`verification/NAME` verifies what that Verification states"),
        "{}",
        long.stdout
    );
    // Every exit code a pipeline can get, superseded (4) included.
    for code in [
        "0  live",
        "1  not live",
        "2  error",
        "3  unproven",
        "4  superseded",
    ] {
        assert!(long.stdout.contains(code), "{code}: {}", long.stdout);
    }
    let top = liveproof(&["--help"]);
    assert!(
        top.stdout.contains("3 unproven, 4 superseded."),
        "{}",
        top.stdout
    );
    let examples = &long.stdout[long.stdout.find("Examples:").expect("examples")..];
    let commands = examples
        .lines()
        .filter(|l| l.trim_start().starts_with("liveproof verify"))
        .count();
    assert_eq!(commands, 3, "{examples}");
}

/// stale's own flags are not under "Cluster access" either.
#[test]
fn stale_help_keeps_its_own_flags_out_of_cluster_access() {
    let run = liveproof(&["stale", "-h"]);
    run.expect_code(0);
    let cluster = &run.stdout[run
        .stdout
        .find("Cluster access (as kubectl):")
        .expect("heading")..];
    let cluster = &cluster[..cluster.find("\n\n").unwrap_or(cluster.len())];
    for flag in ["--restart", "--wait", "--output", "--check-digests"] {
        assert!(run.stdout.contains(flag), "{flag}");
        assert!(
            !cluster.contains(flag),
            "{flag} under Cluster access:\n{}",
            run.stdout
        );
    }
}

#[test]
fn verbose_and_color_are_taken_only_where_they_do_something() {
    for args in [
        &["skill", "-v"][..],
        &["schema", "--color", "never"],
        &["stale", "--color", "never"],
    ] {
        let run = liveproof(args);
        assert_refused(&run, &["unexpected argument"]);
    }
    let dump = dump();
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
        "-v",
        "--color",
        "never",
    ]);
    assert_ne!(run.code, 2, "{}", run.stderr);
    // Before the subcommand, as ever.
    let run = liveproof(&[
        "-v",
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--from",
        &dump,
    ]);
    assert_ne!(run.code, 2, "{}", run.stderr);
}
