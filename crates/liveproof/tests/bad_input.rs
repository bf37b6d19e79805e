//! The CLI on bad input: every mistake a person or a pipeline can make gives exit 2 (or 3 when
//! the evidence itself is missing), a message on stderr that names the file, object or flag at
//! fault, never a panic, and never a `live` verdict on stdout.

use liveproof_testkit::binary as common;

use std::path::{Path, PathBuf};

use liveproof_evidence::{Status, Verdict};
use liveproof_testkit::git::{git, git_with};
use liveproof_testkit::{Run, SimCluster};

const SINCE: &str = "2026-07-12T10:00:00Z";

fn scenario(name: &str) -> PathBuf {
    liveproof_testkit::story::scenarios_dir()
        .join(name)
        .join("cluster.yaml")
}

/// A dump whose verdict is live: bad input must never turn into this.
fn live_dump() -> String {
    path_str(&scenario("gitops-reconciled-new-tag-rolled-out"))
}

fn path_str(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

/// The harness runs the binary; the arguments stay hand-written here, since what a person
/// types is what these tests are about.
fn liveproof(args: &[&str]) -> Run {
    common::liveproof().args(args).run_blocking()
}

/// What every refusal must look like.
trait Refusal {
    fn assert_refused(&self, code: i32, what: &str) -> &Self;
    fn assert_stderr_names(&self, needles: &[&str], what: &str) -> &Self;
}

impl Refusal for Run {
    /// No panic, no `live` verdict anywhere on stdout, and the expected exit code.
    fn assert_refused(&self, code: i32, what: &str) -> &Self {
        assert!(
            !self.stderr.contains("panicked"),
            "{what}: liveproof panicked:\n{}",
            self.stderr
        );
        assert_eq!(
            self.code, code,
            "{what}: exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        let stdout = self.stdout.to_lowercase();
        assert!(
            !stdout.contains("verdict: live") && !stdout.contains("\"verdict\": \"live\""),
            "{what}: stdout claims live:\n{}",
            self.stdout
        );
        self
    }

    /// stderr names every one of `needles` (case-sensitive: flags and object names are exact).
    fn assert_stderr_names(&self, needles: &[&str], what: &str) -> &Self {
        for needle in needles {
            assert!(
                self.stderr.contains(needle),
                "{what}: stderr does not mention `{needle}`:\n{}",
                self.stderr
            );
        }
        self
    }
}

fn verify_offline(from: &str, extra: &[&str]) -> Run {
    // The image the dump's story rolled out: what states the change (issue 10).
    let mut args = vec![
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--from",
        from,
        "--image",
        "ghcr.io/acme/inventory:1.4.0",
    ];
    args.extend_from_slice(extra);
    liveproof(&args)
}

/// A fresh repository with one commit, committed at `committed_at`.
fn repo_with_one_commit(committed_at: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q"]);
    git_with(
        dir.path(),
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "bump inventory to 1.4.0",
        ],
        committed_at,
        &[("GIT_AUTHOR_DATE", "2026-07-11T16:00:00Z")],
    );
    let sha = git(dir.path(), &["rev-parse", "HEAD"]);
    (dir, sha)
}

// ---------------------------------------------------------------------------------------------
// --from: the dump itself is bad
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_yaml_names_the_file_and_the_document() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("dump.yaml");
    std::fs::write(
        &dump,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: apps\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: [inventory\n",
    )
    .expect("write dump");
    let run = verify_offline(&path_str(&dump), &["--since", SINCE]);
    run.assert_refused(2, "malformed YAML")
        .assert_stderr_names(&["dump.yaml", "document 2"], "malformed YAML");
}

#[test]
fn malformed_yaml_inside_a_directory_names_that_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        scenario("gitops-reconciled-new-tag-rolled-out"),
        dir.path().join("good.yaml"),
    )
    .expect("copy dump");
    std::fs::write(
        dir.path().join("broken.yml"),
        "kind: Pod\nmetadata: {name: x\n",
    )
    .expect("write dump");
    let run = verify_offline(&path_str(dir.path()), &["--since", SINCE]);
    run.assert_refused(2, "malformed YAML in a directory")
        .assert_stderr_names(
            &["broken.yml", "document 1"],
            "malformed YAML in a directory",
        );
}

#[test]
fn from_a_path_that_does_not_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = path_str(&dir.path().join("no-such-dump.yaml"));
    let run = verify_offline(&missing, &["--since", SINCE]);
    run.assert_refused(2, "--from missing path")
        .assert_stderr_names(&["--from", "no-such-dump.yaml"], "--from missing path");
}

#[test]
fn deployment_with_a_field_of_the_wrong_type_names_the_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("dump.yaml");
    std::fs::write(
        &dump,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\n  namespace: apps\n\
         spec:\n  replicas: three\n  selector: {matchLabels: {app: inventory}}\n\
         \x20 template: {metadata: {labels: {app: inventory}}, spec: {containers: [{name: app, image: x}]}}\n",
    )
    .expect("write dump");
    let run = verify_offline(&path_str(&dump), &["--since", SINCE]);
    run.assert_refused(2, "Deployment with replicas: three")
        .assert_stderr_names(
            &[
                "dump.yaml",
                "document 1",
                "Deployment/inventory",
                "`spec.replicas` has the wrong type (expected i32)",
            ],
            "Deployment with replicas: three",
        );
    // The field, never its value: a value in a manifest may be a secret.
    assert!(!run.stderr.contains("three"), "{}", run.stderr);
}

/// A YAML syntax error is said once, with its position and the parser's context, whichever
/// command reads the file (`stale -f` printed the parser's text twice).
#[test]
fn a_yaml_error_is_said_once_by_every_reader() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("broken.yaml");
    std::fs::write(
        &file,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  bad: [unclosed\n",
    )
    .expect("write");
    let file = path_str(&file);
    let kubeconfig = unreachable_kubeconfig(dir.path());
    for args in [
        &["stale", "-f", &file, "--kubeconfig", &kubeconfig][..],
        &[
            "verify", "deploy/a", "--from", &file, "--since", SINCE, "--image", "x",
        ][..],
        &[
            "verify",
            "deploy/a",
            "-f",
            &file,
            "--kubeconfig",
            &kubeconfig,
            "--since",
            SINCE,
        ][..],
    ] {
        let run = liveproof(args);
        run.assert_refused(2, "broken YAML").assert_stderr_names(
            &[
                "broken.yaml: document 1: invalid YAML at line 6 column 1: did not find \
                 expected ',' or ']', while parsing a flow sequence at line 5 column 8",
            ],
            "broken YAML",
        );
        assert_eq!(
            run.stderr.matches("did not find expected").count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn deployment_missing_required_fields_names_the_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("dump.yaml");
    // No spec.selector, no spec.template: no API server would ever return this.
    std::fs::write(
        &dump,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\n  namespace: apps\n\
         spec:\n  replicas: 3\n",
    )
    .expect("write dump");
    let run = verify_offline(&path_str(&dump), &["--since", SINCE]);
    run.assert_refused(2, "Deployment without selector/template")
        .assert_stderr_names(
            &["dump.yaml", "Deployment/inventory"],
            "Deployment without selector/template",
        );
}

#[test]
fn deployment_without_spec_names_the_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("dump.yaml");
    std::fs::write(
        &dump,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inventory\n  namespace: apps\n",
    )
    .expect("write dump");
    let run = verify_offline(&path_str(&dump), &["--since", SINCE]);
    run.assert_refused(2, "Deployment without spec")
        .assert_stderr_names(
            &["dump.yaml", "Deployment/inventory"],
            "Deployment without spec",
        );
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_target_kind_is_named_with_the_accepted_kinds() {
    let run = liveproof(&[
        "verify",
        "cronjob/x",
        "-n",
        "apps",
        "--since",
        SINCE,
        "--from",
        &live_dump(),
    ]);
    run.assert_refused(2, "cronjob/x").assert_stderr_names(
        &["cronjob", "deployment", "statefulset", "daemonset"],
        "cronjob/x",
    );
}

#[test]
fn target_without_a_slash() {
    let run = liveproof(&[
        "verify",
        "inventory",
        "-n",
        "apps",
        "--since",
        SINCE,
        "--from",
        &live_dump(),
    ]);
    run.assert_refused(2, "target without slash")
        .assert_stderr_names(&["`inventory`", "KIND/NAME"], "target without slash");
}

#[test]
fn target_with_an_invalid_name() {
    for target in ["deploy/Inventory_V2", "deploy/", "deploy/-inventory"] {
        let run = liveproof(&[
            "verify",
            target,
            "-n",
            "apps",
            "--since",
            SINCE,
            "--from",
            &live_dump(),
        ]);
        run.assert_refused(2, target)
            .assert_stderr_names(&[target, "not a valid Kubernetes name"], target);
    }
}

/// `apps` is Deployments' API group: `verify apps/inventory -n apps` once read it as an Argo CD
/// Application and answered "not live: not found". It is a usage error with a did-you-mean.
#[test]
fn apps_as_a_kind_is_an_api_group_with_a_did_you_mean() {
    let run = liveproof(&[
        "verify",
        "apps/inventory",
        "-n",
        "apps",
        "--since",
        SINCE,
        "--from",
        &live_dump(),
    ]);
    run.assert_refused(2, "apps/inventory").assert_stderr_names(
        &["API group (apps/v1)", "deploy/inventory", "-n apps"],
        "apps/inventory",
    );
}

#[test]
fn a_misspelt_kind_gets_a_did_you_mean_and_a_pod_says_why_not() {
    let run = liveproof(&[
        "verify",
        "deploymnet/x",
        "--since",
        SINCE,
        "--from",
        &live_dump(),
    ]);
    run.assert_refused(2, "deploymnet/x")
        .assert_stderr_names(&["did you mean `deployment/x`?"], "deploymnet/x");
    let run = liveproof(&["verify", "pod/x", "--since", SINCE, "--from", &live_dump()]);
    run.assert_refused(2, "pod/x")
        .assert_stderr_names(&["pods are not targets", "deployment (deploy)"], "pod/x");
}

#[test]
fn target_with_too_many_parts() {
    let run = liveproof(&[
        "verify",
        "apps/deploy/inventory/x",
        "--since",
        SINCE,
        "--from",
        &live_dump(),
    ]);
    run.assert_refused(2, "four-part target")
        .assert_stderr_names(&["apps/deploy/inventory/x"], "four-part target");
}

// ---------------------------------------------------------------------------------------------
// The change and other flags
// ---------------------------------------------------------------------------------------------

#[test]
fn since_that_is_not_rfc3339_names_the_flag_with_an_example() {
    let run = verify_offline(&live_dump(), &["--since", "yesterday"]);
    run.assert_refused(2, "--since yesterday")
        .assert_stderr_names(&["--since", "yesterday", "2026-"], "--since yesterday");
}

#[test]
fn timeout_with_an_unknown_unit_names_the_flag() {
    // --wait cannot be combined with --from, so this one needs a kubeconfig: the duration is
    // refused before any connection is attempted.
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--since",
        SINCE,
        "--wait",
        "--timeout",
        "10x",
        "--kubeconfig",
        &kubeconfig,
    ]);
    // A bare number is seconds (kubectl's reading): a unit that is none is refused.
    run.assert_refused(2, "--timeout 10x").assert_stderr_names(
        &["--timeout", "`10x`", "`x` is not a unit", "90s"],
        "--timeout 10x",
    );
    assert!(
        !run.stderr.contains("127.0.0.1:1"),
        "--timeout 10x: the bad flag must be refused before connecting:\n{}",
        run.stderr
    );
}

#[test]
fn commit_that_is_neither_a_sha_nor_a_ref_names_the_flag() {
    for commit in ["xyz", "abc12", "3f2c1ag"] {
        let run = verify_offline(&live_dump(), &["--commit", commit]);
        run.assert_refused(2, commit)
            .assert_stderr_names(&["--commit", commit, "hex"], commit);
    }
}

#[test]
fn commit_missing_from_the_repository_names_the_repository() {
    let (repo, _sha) = repo_with_one_commit("2026-07-12T09:00:00Z");
    let repo_path = path_str(repo.path());
    let run = verify_offline(
        &live_dump(),
        &["--commit", "deadbeef", "--repo", &repo_path],
    );
    run.assert_refused(2, "--commit deadbeef")
        .assert_stderr_names(
            &["--commit", "deadbeef", &repo_path, "--since"],
            "--commit deadbeef",
        );
    // The hint is said once, after the error, not echoed from each cause.
    assert_eq!(run.stderr.matches("hint:").count(), 1, "{}", run.stderr);
    assert_eq!(run.stderr.matches("not found").count(), 1, "{}", run.stderr);
}

#[test]
fn commit_missing_from_the_repository_is_fine_when_since_is_given() {
    let (repo, _sha) = repo_with_one_commit("2026-07-12T09:00:00Z");
    let run = verify_offline(
        &live_dump(),
        &[
            "--commit",
            "deadbeef",
            "--repo",
            &path_str(repo.path()),
            "--since",
            SINCE,
            "-o",
            "json",
        ],
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Live);
    assert_eq!(report.change.since.as_deref(), Some(SINCE));
    assert_eq!(report.change.commit.as_deref(), Some("deadbeef"));
}

#[test]
fn commit_in_a_repository_that_is_not_one_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_a_repo = path_str(dir.path());
    let run = verify_offline(
        &live_dump(),
        &["--commit", "deadbeef", "--repo", &not_a_repo],
    );
    run.assert_refused(2, "--repo not a repository")
        .assert_stderr_names(
            &["--commit", &not_a_repo, "--since"],
            "--repo not a repository",
        );
}

#[test]
fn commit_time_becomes_since() {
    let (repo, sha) = repo_with_one_commit("2026-07-12T10:00:00Z");
    let run = verify_offline(
        &live_dump(),
        &[
            "--commit",
            &sha,
            "--repo",
            &path_str(repo.path()),
            "-o",
            "json",
        ],
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let report = run.report();
    assert_eq!(
        report.change.since.as_deref(),
        Some("2026-07-12T10:00:00Z"),
        "the committer time (not the author time) is the change time"
    );
    assert_eq!(report.change.commit.as_deref(), Some(sha.as_str()));
    // The pods started at 10:06, after the commit: the change time was really used.
    assert_eq!(report.verdict, Verdict::Live, "stderr:\n{}", run.stderr);
    assert_eq!(run.code, 0);
}

#[test]
fn commit_prefix_from_the_current_directory() {
    let (repo, sha) = repo_with_one_commit("2026-07-12T10:00:00Z");
    let run = common::liveproof()
        .args(&[
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--from",
            &live_dump(),
            "--commit",
            &sha[..7],
            "-o",
            "json",
        ])
        .current_dir(repo.path())
        .run_blocking();
    assert_eq!(
        run.report().change.since.as_deref(),
        Some("2026-07-12T10:00:00Z")
    );
}

// ---------------------------------------------------------------------------------------------
// The cluster
// ---------------------------------------------------------------------------------------------

fn unreachable_kubeconfig(dir: &Path) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: nowhere\n  cluster:\n    server: http://127.0.0.1:1\n\
         contexts:\n- name: nowhere\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: apps\n\
         current-context: nowhere\nusers:\n- name: nobody\n  user: {}\n",
    )
    .expect("write kubeconfig");
    path_str(&path)
}

#[test]
fn unreachable_cluster_names_the_server_with_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = unreachable_kubeconfig(dir.path());
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--since",
        SINCE,
        "--kubeconfig",
        &kubeconfig,
        "-o",
        "json",
    ]);
    run.assert_refused(2, "unreachable cluster")
        .assert_stderr_names(&["http://127.0.0.1:1", "hint:"], "unreachable cluster");
    // No report on an operational error: one error document, saying what stderr says.
    let doc: liveproof_report::ErrorReport = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not one error document ({e}):\n{}", run.stdout));
    assert_eq!(doc.schema, "liveproof/v1");
    assert!(doc.error.message.contains("http://127.0.0.1:1"), "{doc:?}");
    let hint = doc.error.hint.clone().expect("a hint");
    assert!(
        run.stderr.contains(&format!("hint: {hint}")),
        "the stderr line stays, with the same hint:\n{}",
        run.stderr
    );
    assert!(!doc.error.message.contains("hint:"), "{doc:?}");
}

#[test]
fn kubeconfig_that_does_not_exist_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = path_str(&dir.path().join("no-kubeconfig"));
    let run = liveproof(&[
        "verify",
        "deploy/inventory",
        "-n",
        "apps",
        "--since",
        SINCE,
        "--kubeconfig",
        &missing,
    ]);
    run.assert_refused(2, "missing kubeconfig")
        .assert_stderr_names(&["no-kubeconfig"], "missing kubeconfig");
}

/// A Knative Service whose Revision may not be read: the digest its revision's pods run cannot
/// be tied to `--image`, so it is unproven (naming the permission), never failed for a digest
/// the Deployment was never meant to show as a tag.
#[tokio::test(flavor = "multi_thread")]
async fn rbac_denied_knative_revision_is_unproven_naming_the_permission() {
    let cluster = SimCluster::from_file(
        &scenario("knative-service-latest-revision-serves-all"),
        "web",
    )
    .await;
    cluster.sim.deny("get", "revisions", None);

    let run = common::liveproof()
        .args(&["verify", "ksvc/hello", "-n", "web"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .args(&["--image", "ghcr.io/acme/hello:1.1.0"])
        .json()
        .run()
        .await;
    run.assert_refused(3, "revisions denied");
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Unproven);
    let readback = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check.name() == "spec_readback")
        .expect("the ksvc's spec_readback");
    assert_eq!(readback.status, Status::Unknown, "{readback:?}");
    assert!(readback.detail.contains("refused"), "{readback:?}");
    assert!(
        report
            .targets
            .iter()
            .flat_map(|t| &t.evidence)
            .all(|e| e.status != Status::Fail),
        "{report:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rbac_denied_pods_is_unproven_naming_the_permission() {
    let cluster =
        SimCluster::from_file(&scenario("gitops-reconciled-new-tag-rolled-out"), "apps").await;
    cluster.sim.deny("list", "pods", None);

    let run = common::liveproof()
        .args(&["verify", "deploy/inventory", "-n", "apps"])
        .on(&cluster)
        .since(SINCE)
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0"])
        .json()
        .run()
        .await;
    run.assert_refused(3, "pods denied");
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Unproven);
    let evidence = &report.targets[0].evidence;
    let pods_current = evidence
        .iter()
        .find(|e| e.check.name() == "pods_current")
        .expect("pods_current evidence");
    assert_eq!(pods_current.status, Status::Unknown, "{pods_current:?}");
    // The detail names the permission that is missing: list on pods.
    assert!(
        pods_current.detail.contains("list") && pods_current.detail.contains("pods"),
        "pods_current should name the missing pods permission: {pods_current:?}"
    );
    // Nothing that needed the pods may pass without them.
    for e in evidence
        .iter()
        .filter(|e| ["pod_spec", "pod_restarted"].contains(&e.check.name()))
    {
        assert_ne!(e.status, Status::Pass, "{e:?}");
    }
    cluster.sim.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// The report on a verdict that is not live
// ---------------------------------------------------------------------------------------------

#[test]
fn not_live_json_decodes_into_the_v1_report() {
    let dump = path_str(&scenario("gitops-never-reconciled-template-on-old-tag"));
    let run = verify_offline(
        &dump,
        &[
            "--since",
            SINCE,
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
            "-o",
            "json",
        ],
    );
    run.assert_refused(1, "not-live scenario");
    let report = run.report();
    assert_eq!(report.schema, "liveproof/v1");
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(report.change.since.as_deref(), Some(SINCE));
    let target = &report.targets[0];
    assert_eq!(
        (
            target.kind.name(),
            target.namespace.as_str(),
            target.name.as_str()
        ),
        ("Deployment", "apps", "inventory")
    );
    assert!(
        target.evidence.iter().any(|e| e.status == Status::Fail),
        "a not-live target shows the failing evidence: {target:?}"
    );
}

/// Issue 21, point 4: targets are bounded. Past the cap the run is refused up front, naming
/// the cap and how to split the run, instead of growing without bound (a 700,000-target MCP
/// call never answered).
#[test]
fn more_targets_than_a_run_verifies_are_refused() {
    let many: Vec<String> = (0..50_001).map(|i| format!("deploy/w{i}")).collect();
    let mut extra: Vec<&str> = many.iter().map(String::as_str).collect();
    extra.extend(["--since", "2026-07-12T10:00:00Z"]);
    let run = verify_offline(&live_dump(), &extra);
    run.assert_refused(2, "50,001 targets")
        .assert_stderr_names(&["50002 targets", "50000", "-n", "-l"], "50,001 targets");
}

/// `--max-concurrency` takes 1 to 256 and only with several clusters: never silently ignored.
#[test]
fn max_concurrency_is_checked_and_never_ignored() {
    for (given, says) in [
        ("0", "at least one"),
        ("257", "more than 256"),
        ("8", "only applies to several clusters"),
    ] {
        let run = verify_offline(
            &live_dump(),
            &[
                "--since",
                "2026-07-12T10:00:00Z",
                "--max-concurrency",
                given,
            ],
        );
        run.assert_refused(2, given)
            .assert_stderr_names(&["--max-concurrency", given, says], given);
    }
}

/// Issue 21, point 4: `--max-release-size` is bounded (a gzip bomb under a limit of usize::MAX
/// aborted the process on allocation); outside 1 byte to 512 MiB it is refused, naming both.
#[test]
fn max_release_size_is_bounded() {
    for given in ["0", "536870913", "18446744073709551615", "64MB"] {
        let run = verify_offline(
            &live_dump(),
            &[
                "--since",
                "2026-07-12T10:00:00Z",
                "--max-release-size",
                given,
            ],
        );
        run.assert_refused(2, given)
            .assert_stderr_names(&["--max-release-size", given], given);
    }
    let run = verify_offline(
        &live_dump(),
        &[
            "--since",
            "2026-07-12T10:00:00Z",
            "--max-release-size",
            "536870912",
        ],
    );
    assert_eq!(
        run.code, 0,
        "the largest allowed is accepted: {}",
        run.stderr
    );
}

/// Issue 32, point 5: `--max-response-size` is a size from 1Mi to 16Gi, refused otherwise
/// naming the flag and the value, before anything is read; and refused with `--from`, where
/// no API response is read.
#[test]
fn max_response_size_is_a_bounded_size() {
    for given in ["0", "1Ki", "17Gi", "64XB", "lots", "-5Mi"] {
        let run = liveproof(&[
            "verify",
            "deploy/x",
            "--since",
            "2026-07-12T10:00:00Z",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
            "--max-response-size",
            given,
        ]);
        run.assert_refused(2, given)
            .assert_stderr_names(&["--max-response-size", given], given);
        assert!(!run.stderr.contains("/nonexistent"), "{}", run.stderr);
    }
    for command in [
        &["verify", "deploy/inventory", "-n", "apps", "--since", "1h"][..],
        &["release", "show", "inventory", "-n", "apps"][..],
    ] {
        let dump = live_dump();
        let args = [command, &["--from", &dump, "--max-response-size", "1Gi"]].concat();
        liveproof(&args)
            .assert_refused(2, "with --from")
            .assert_stderr_names(&["--max-response-size", "--from"], "with --from");
    }
}

/// Issue 21, point 4: every file input has a size cap and a clear error naming it. A 100 MB
/// YAML given as `-f` once aborted the process at 3.6 GB; now it is refused by its size,
/// before a byte is read (the file here is sparse: nothing is written or read).
#[test]
fn an_oversized_manifest_or_dump_is_refused_by_its_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("huge.yaml");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(100 * 1024 * 1024))
        .expect("a sparse 100 MB file");
    let big = path_str(&big);
    let run = verify_offline(
        &live_dump(),
        &["--since", "2026-07-12T10:00:00Z", "-f", &big],
    );
    run.assert_refused(2, "-f huge.yaml").assert_stderr_names(
        &[&big, "104857600 bytes of YAML", "as JSON"],
        "-f huge.yaml",
    );
    let run = verify_offline(&big, &["--since", "2026-07-12T10:00:00Z"]);
    run.assert_refused(2, "--from huge.yaml")
        .assert_stderr_names(&[&big, "104857600 bytes of YAML"], "--from huge.yaml");
}

/// The contract's kubectl forms of several targets: `KIND NAME…` and `KIND/a,KIND/b` verify
/// the same targets as `KIND/NAME` words; a kind with no name is refused saying how to name one.
#[test]
fn targets_take_every_kubectl_form() {
    let dump = live_dump();
    let verify_with = |targets: &[&str]| {
        let mut args = vec!["verify"];
        args.extend_from_slice(targets);
        args.extend([
            "-n",
            "apps",
            "--from",
            &dump,
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
            "--since",
            "2026-07-12T10:00:00Z",
            "-o",
            "json",
        ]);
        liveproof(&args)
    };
    let names = |run: &Run| -> Vec<String> {
        run.report()
            .targets
            .iter()
            .map(|t| format!("{}/{}/{}", t.kind, t.namespace, t.name))
            .collect()
    };
    let words = verify_with(&["deploy/inventory"]);
    assert_eq!(words.code, 0, "{}", words.stderr);
    for form in [
        &["deploy", "inventory"][..],
        &["deploy/inventory,deployment/inventory"][..],
    ] {
        let run = verify_with(form);
        assert_eq!(run.code, 0, "{form:?}: {}", run.stderr);
        assert_eq!(names(&run), names(&words), "{form:?}");
    }
    let run = verify_with(&["deploy"]);
    run.assert_refused(2, "a kind alone").assert_stderr_names(
        &["deploy", "a kind with no name", "deploy NAME"],
        "a kind alone",
    );
}

/// `--expect-env NAME=VALUE` is refused naming the variable, never echoing the value: it can
/// be the secret itself (over MCP, the whole argument was printed back).
#[test]
fn an_env_expectation_with_a_value_is_refused_without_showing_it() {
    let run = verify_offline(
        &live_dump(),
        &["--expect-env", "DB_PASSWORD=hunter2-s3cret"],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("--expect-env `DB_PASSWORD=…` gives a value")
            && run.stderr.contains("hint: --expect-env DB_PASSWORD:"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"),
        "{}",
        run.stderr
    );
}

/// A Deployment as a repository applies it: what `-f` declares in [`first_error_is_unchanged`].
const WEB_DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: ghcr.io/acme/web:1.4.0\n";

/// A command line wrong in two ways at once says the same first error it said before the reads
/// moved out of `config.rs` into gather's resolver (issue 34, WP2): first the checks that need
/// nothing read, then `--commit`, the `-f`/`-k` manifests, the target count and the flags'
/// kinds, `--record`, `--from`, the kubeconfig's contexts, `--from`'s namespace, the fleet.
/// Pinned whole, message and hint, with `<dir>` for the test's directory, `<repo>` for its
/// repository and `<sha>` for the commit there.
#[test]
fn first_error_is_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let repo = liveproof_testkit::git::Repo::new();
    let sha = repo.file("deploy.yaml", WEB_DEPLOYMENT).commit("web");
    let kc = d.join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n\
         contexts:\n- name: prod\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: apps\n\
         - name: other\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: staging\n\
         current-context: prod\nusers:\n- name: nobody\n  user: {}\n",
    )
    .expect("write kubeconfig");
    let empty_kc = d.join("empty-kubeconfig");
    std::fs::write(
        &empty_kc,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .expect("write kubeconfig");
    let (dir_s, repo_s, kc_s, empty_kc_s) = (
        path_str(d),
        path_str(&repo.path()),
        path_str(&kc),
        path_str(&empty_kc),
    );
    let in_dir = |name: &str| format!("{dir_s}/{name}");
    let deploy = format!("{repo_s}/deploy.yaml");
    let dump = live_dump();
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "--timeout not a duration (read nothing) and -f missing",
            words(&["deploy/web", "--since", "10m", "--wait", "--timeout", "soon", "-f", &in_dir("missing.yaml")]),
            "error: --timeout `soon` is not a duration: expected a number before `soon` (e.g. 90s, 5m, 1h30m, 1d)\nhint: e.g. --timeout 90s, 5m, 1h30m, or 300 (seconds); 0 for no limit (at most 24h)",
        ),
        (
            "--commit the repository lacks and --chart-version on a Deployment",
            words(&["deploy/web", "--commit", "0123456", "--repo", &repo_s, "--chart-version", "1.2.0"]),
            "error: --commit 0123456: commit `0123456` not found in the repository at <repo>\nhint: give its SHA (7 to 40 hex digits) or a ref the repository has (HEAD, a branch, a tag); fetch it (`git fetch`) if it is new, or pass --since",
        ),
        (
            "--commit the repository lacks and -f missing",
            words(&["deploy/web", "--commit", "0123456", "--repo", &repo_s, "-f", &in_dir("missing.yaml")]),
            "error: --commit 0123456: commit `0123456` not found in the repository at <repo>\nhint: give its SHA (7 to 40 hex digits) or a ref the repository has (HEAD, a branch, a tag); fetch it (`git fetch`) if it is new, or pass --since",
        ),
        (
            "-f - with --commit and a second -f missing",
            words(&["deploy/web", "--commit", "HEAD", "--repo", &repo_s, "-f", "-", "-f", &in_dir("missing.yaml")]),
            "error: -f -: stdin is not in the repository, and with --commit <sha> -f reads the manifests as committed\nhint: name the file in --repo, or leave --commit out and give --since",
        ),
        (
            "-f missing and an unknown context",
            words(&["deploy/web", "--since", SINCE, "-f", &in_dir("missing.yaml"), "--kubeconfig", &kc_s, "--context", "nope"]),
            "error: -f <dir>/missing.yaml: <dir>/missing.yaml: no such file or directory\nhint: check the path: it takes a file or a directory of .yaml, .yml or .json manifests",
        ),
        (
            "-f missing and --chart-version on a Deployment",
            words(&["deploy/web", "--since", SINCE, "-f", &in_dir("missing.yaml"), "--chart-version", "1.2.0"]),
            "error: -f <dir>/missing.yaml: <dir>/missing.yaml: no such file or directory\nhint: check the path: it takes a file or a directory of .yaml, .yml or .json manifests",
        ),
        (
            "--chart-version on a Deployment and --record a directory",
            words(&["deploy/web", "--since", SINCE, "--chart-version", "1.2.0", "--record", &dir_s]),
            "error: --chart-version applies to release/, helmrelease/ targets, not deployment/web\nhint: verify the release that installs it (release/NAME or helmrelease/NAME) with --chart-version, and the workload with --image or -f",
        ),
        (
            "--chart-version with a Deployment -f declares and --record a directory",
            words(&["release/web", "-n", "apps", "--since", SINCE, "--chart-version", "1.2.0", "-f", &deploy, "--record", &dir_s]),
            "error: --chart-version applies to release/, helmrelease/ targets, not apps/deployment/web\nhint: verify the release that installs it (release/NAME or helmrelease/NAME) with --chart-version, and the workload with --image or -f",
        ),
        (
            "--record a directory and --from missing",
            words(&["deploy/web", "--since", SINCE, "--record", &dir_s, "--from", &in_dir("no-dump.yaml")]),
            "error: --record <dir>: is a directory\nhint: give --record a file (it is created if missing) in a directory that exists and you can write, e.g. --record deployments.jsonl",
        ),
        (
            "--record a directory and an unknown context",
            words(&["deploy/web", "--since", SINCE, "--record", &dir_s, "--kubeconfig", &kc_s, "--context", "nope"]),
            "error: --record <dir>: is a directory\nhint: give --record a file (it is created if missing) in a directory that exists and you can write, e.g. --record deployments.jsonl",
        ),
        (
            "--from missing and a kubeconfig that is not there",
            words(&["deploy/web", "--since", SINCE, "--from", &in_dir("no-dump.yaml"), "--kubeconfig", &in_dir("no-kubeconfig")]),
            "error: --from <dir>/no-dump.yaml: no such file or directory\nhint: --from takes a file or a directory of .yaml, .yml or .json manifests, e.g. written by `kubectl get deploy,rs,pods -o yaml > dump.yaml`",
        ),
        (
            "--from with two contexts and -k not a directory",
            words(&["deploy/web", "--since", SINCE, "--from", &dump, "--context", "prod", "--context", "other", "-k", &in_dir("nothing")]),
            "error: -k <dir>/nothing: not a directory\nhint: -k takes the directory holding a kustomization.yaml, as `kubectl apply -k DIR`",
        ),
        (
            "--from with an unknown context and a kubeconfig with none",
            words(&["deploy/web", "--since", SINCE, "--from", &dump, "--kubeconfig", &empty_kc_s, "--context", "nope"]),
            "error: --context nope: the kubeconfig has no such context\nhint: see `kubectl config get-contexts`",
        ),
        (
            "--all-contexts of a kubeconfig with none and -o markdown",
            words(&["deploy/web", "--since", SINCE, "--all-contexts", "--kubeconfig", &empty_kc_s, "-o", "markdown"]),
            "error: --all-contexts: the kubeconfig names no context\nhint: check `kubectl config get-contexts`, or name clusters with --context",
        ),
        (
            "two contexts, one unknown, and -o markdown",
            words(&["deploy/web", "--since", SINCE, "--context", "prod", "--context", "nope", "--kubeconfig", &kc_s, "-o", "markdown"]),
            "error: --context nope: the kubeconfig has no such context (it has: prod, other)\nhint: see `kubectl config get-contexts`",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, args, expected) in &cases {
        let mut argv = vec!["verify".to_string()];
        argv.extend(args.iter().cloned());
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let run = common::liveproof()
            .args(&argv)
            .env("HOME", &dir_s)
            .stdin("")
            .run_blocking();
        run.assert_refused(2, what);
        let said = run
            .stderr
            .replace(&sha, "<sha>")
            .replace(&repo_s, "<repo>")
            .replace(&dir_s, "<dir>");
        if said.trim_end() != *expected {
            wrong.push(format!("{what}:\n{said}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n----\n"));
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_string()).collect()
}
