//! Issue 10, on the command line: every change flag applies to every target it is given with
//! or is refused (exit 2, naming the flag and the kind, before any request); `--expect` on a
//! workload is held to its pod template; `-f` states the change by the manifests (as of
//! `--commit` in a real git repository when given).

use liveproof_testkit::binary as common;

// Commits at the change time the tests state (`SINCE`, testkit::git::DATE).
use liveproof_testkit::git::git;

use liveproof_testkit::SimCluster;

use liveproof_evidence::{Check, Status, Verdict};

const SINCE: &str = "2026-07-12T10:00:00Z";

fn ledger_dump() -> String {
    liveproof_testkit::story::scenarios_dir()
        .join("statefulset-rolled-out/cluster.yaml")
        .to_string_lossy()
        .into_owned()
}

/// The ledger StatefulSet as its repository declares it: only some fields, with quantities
/// written differently from how the API server stores them (`0.5` for `500m`).
fn ledger_manifest(image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ledger
  namespace: payments
spec:
  replicas: 3
  serviceName: db-headless
  selector:
    matchLabels:
      app: ledger
  template:
    metadata:
      labels:
        app: ledger
    spec:
      containers:
      - name: ledger
        image: {image}
        ports:
        - containerPort: 5432
          name: http
        resources:
          requests:
            cpu: '0.5'
            memory: 1024Mi
---
apiVersion: v1
kind: Service
metadata:
  name: db-headless
  namespace: payments
spec:
  clusterIP: None
"
    )
}

fn spec_readback(run: &common::Run) -> liveproof_evidence::Evidence {
    run.report().targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::SpecReadback)
        .cloned()
        .unwrap_or_else(|| panic!("spec_readback in {}", run.stdout))
}

#[tokio::test]
async fn chart_version_on_a_workload_is_refused_before_any_request() {
    let cluster = SimCluster::from_file(
        &liveproof_testkit::story::scenarios_dir().join("statefulset-rolled-out/cluster.yaml"),
        "payments",
    )
    .await;
    let run = common::liveproof()
        .args(&["verify", "statefulset/ledger", "-n", "payments"])
        .on(&cluster)
        .since(SINCE)
        .args(&["--chart-version", "3.2.0"])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "--chart-version applies to release/, helmrelease/ targets, not statefulset/ledger"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert_eq!(
        cluster.sim.requests().total(),
        0,
        "refused before any request"
    );
    // Next to a release it is still refused: it would say nothing about the workload.
    let run = common::liveproof()
        .args(&[
            "verify",
            "release/ledger",
            "deploy/ledger",
            "-n",
            "payments",
            "--from",
            &ledger_dump(),
            "--chart-version",
            "3.2.0",
        ])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("not deployment/ledger"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn expect_on_a_kustomization_or_application_is_refused() {
    for target in ["kustomization/apps", "app/inventory"] {
        let run = common::liveproof()
            .args(&[
                "verify",
                target,
                "-n",
                "flux-system",
                "--from",
                &ledger_dump(),
                "--expect",
                "secretKeyRef",
            ])
            .run()
            .await;
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        let kind = target.split('/').next().unwrap_or_default();
        let kind = if kind == "app" { "application" } else { kind };
        assert!(
            run.stderr.contains("--expect applies to")
                && run.stderr.contains(&format!("not {kind}/")),
            "{}",
            run.stderr
        );
    }
}

#[tokio::test]
async fn expect_on_a_workload_is_held_to_its_pod_template() {
    let verify = |expect: &'static str| async move {
        common::liveproof()
            .args(&[
                "verify",
                "statefulset/ledger",
                "-n",
                "payments",
                "--from",
                &ledger_dump(),
            ])
            .since(SINCE)
            .args(&["--expect", expect])
            .json()
            .run()
            .await
    };
    let run = verify("image: ghcr.io/acme/ledger:3.2.0").await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(spec_readback(&run).status, Status::Pass);
    let run = verify("re:mountPath: /var/lib/ledger-v2").await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(spec_readback(&run).status, Status::Fail);
}

#[tokio::test]
async fn nothing_stated_is_unproven_and_says_how_to_state_it() {
    let run = common::liveproof()
        .args(&[
            "verify",
            "statefulset/ledger",
            "-n",
            "payments",
            "--from",
            &ledger_dump(),
        ])
        .since(SINCE)
        .json()
        .run()
        .await;
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let next = run.report().targets[0]
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        next.contains("--image REF") && next.contains("-f MANIFESTS"),
        "{next}"
    );
}

#[tokio::test]
async fn manifests_state_the_change_field_by_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.to_string_lossy().into_owned()
    };
    let same = write("same.yaml", &ledger_manifest("ghcr.io/acme/ledger:3.2.0"));
    let newer = write("newer.yaml", &ledger_manifest("ghcr.io/acme/ledger:3.3.0"));
    let verify = |path: String, extra: &'static [&'static str]| async move {
        let mut args = vec![
            "verify", "-f", &path, "--from", "DUMP", "--since", SINCE, "-o", "json",
        ];
        let dump = ledger_dump();
        args[4] = &dump;
        args.extend_from_slice(extra);
        common::liveproof().args(&args).run().await
    };
    let run = verify(same.clone(), &[]).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(report.targets.len(), 1, "{}", run.stdout);
    assert_eq!(report.targets[0].name, "ledger");
    assert_eq!(report.targets[0].namespace, "payments");
    // A target given too is verified once, not twice.
    let run = verify(same, &["statefulset/ledger", "-n", "payments"]).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.report().targets.len(), 1, "{}", run.stdout);

    let run = verify(newer, &[]).await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let spec = spec_readback(&run);
    assert_eq!(spec.status, Status::Fail);
    assert!(
        spec.observed
            .contains(".spec.template.spec.containers[ledger].image = ghcr.io/acme/ledger:3.2.0"),
        "{spec:?}"
    );
    assert!(
        spec.expected.contains("ghcr.io/acme/ledger:3.3.0"),
        "{spec:?}"
    );

    let service_only = write(
        "service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: payments}\n",
    );
    let run = verify(service_only, &[]).await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("declares no Deployment, StatefulSet, DaemonSet or Rollout"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn manifests_against_the_simulated_cluster() {
    let cluster = SimCluster::from_file(
        &liveproof_testkit::story::scenarios_dir().join("statefulset-rolled-out/cluster.yaml"),
        "payments",
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ledger.yaml");
    std::fs::write(&path, ledger_manifest("ghcr.io/acme/ledger:3.2.0")).expect("write");
    let run = common::liveproof()
        .args(&["verify", "-f", &path.to_string_lossy()])
        .on(&cluster)
        .since(SINCE)
        .json()
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.report().verdict, Verdict::Live);
}

/// With --commit the manifests are read as committed: an uncommitted edit does not count.
#[tokio::test]
async fn manifests_are_read_as_of_the_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path();
    std::fs::create_dir_all(repo.join("k8s")).expect("mkdir");
    let manifest = repo.join("k8s/ledger.yaml");
    std::fs::write(&manifest, ledger_manifest("ghcr.io/acme/ledger:3.2.0")).expect("write");
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "ledger 3.2.0"]);
    let rolled_out = git(repo, &["rev-parse", "HEAD"]);
    // A dirty work tree: someone edited the manifest after the commit.
    std::fs::write(&manifest, ledger_manifest("ghcr.io/acme/ledger:3.3.0")).expect("write");
    let verify = |commit: Option<String>| {
        let repo = repo.to_path_buf();
        async move {
            let dump = ledger_dump();
            let k8s = repo.join("k8s").to_string_lossy().into_owned();
            let repo = repo.to_string_lossy().into_owned();
            let mut args = vec![
                "verify", "-f", &k8s, "--from", &dump, "--repo", &repo, "-o", "json",
            ];
            match &commit {
                Some(c) => args.extend(["--commit", c.as_str()]),
                None => args.extend(["--since", SINCE]),
            }
            common::liveproof().args(&args).run().await
        }
    };
    let run = verify(Some(rolled_out.clone())).await;
    assert_eq!(
        run.code, 0,
        "the committed manifest: {}{}",
        run.stdout, run.stderr
    );
    let spec = spec_readback(&run);
    assert!(
        spec.expected.contains(&rolled_out[..7]),
        "names the commit: {spec:?}"
    );
    // Without --commit the work tree is what -f reads.
    let run = verify(None).await;
    assert_eq!(
        run.code, 1,
        "the edited work tree: {}{}",
        run.stdout, run.stderr
    );
    // Once committed, that commit is not live.
    git(repo, &["commit", "-q", "-am", "ledger 3.3.0"]);
    let bump = git(repo, &["rev-parse", "HEAD"]);
    let run = verify(Some(bump)).await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
}

#[tokio::test]
async fn verify_help_says_where_each_change_flag_applies() {
    let run = common::liveproof().args(&["verify", "--help"]).run().await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    for line in [
        "--chart-version   release/, helmrelease/ only; refused with any other target",
        "refused with kustomization/, application/",
        "What changed must be stated",
        "-f, --filename <PATH>",
    ] {
        assert!(
            run.stdout.contains(line),
            "`{line}` missing from:\n{}",
            run.stdout
        );
    }
}
