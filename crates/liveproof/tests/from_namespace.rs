//! `verify --from` without `-n` reads targets in the namespace live mode would: the kubeconfig
//! context's; with no kubeconfig namespace, the only namespace of the dump that holds the
//! target (and the report says so); never silently `default` when the dump holds the target
//! elsewhere.

use liveproof_testkit::binary as common;

use std::path::{Path, PathBuf};

use common::{liveproof, RunExt};
use liveproof_evidence::{Report, Verdict};
use liveproof_testkit::story::scenarios_dir;

const SINCE: &str = "2026-07-12T10:00:00Z";
const IMAGE: &str = "ghcr.io/acme/inventory:1.4.0";

/// Deployment apps/inventory, rolled out after the change: live in `apps`.
fn rolled_out() -> PathBuf {
    scenarios_dir()
        .join("gitops-reconciled-new-tag-rolled-out")
        .join("cluster.yaml")
}

/// The same objects in `apps` and again in `staging`, as one `kind: List`.
fn in_apps_and_staging(dir: &Path) -> PathBuf {
    let objects = liveproof_gather::offline::read_objects(&rolled_out()).expect("objects");
    let mut items = objects.clone();
    for mut copy in objects {
        copy["metadata"]["namespace"] = "staging".into();
        items.push(copy);
    }
    let path = dir.join("two-namespaces.json");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&path, list.to_string()).expect("write dump");
    path
}

/// A kubeconfig whose current context names `apps` and whose `other` context names `staging`;
/// its server is never contacted.
fn kubeconfig(dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n\
         contexts:\n- name: prod\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: apps\n\
         - name: other\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: staging\n\
         current-context: prod\nusers:\n- name: nobody\n  user: {}\n",
    )
    .expect("write kubeconfig");
    path
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// `verify deploy/inventory --from DUMP … EXTRA`, with HOME an empty directory (no
/// `~/.kube/config`) and `env` added.
async fn verify(home: &Path, dump: &Path, extra: &[&str], env: &[(&str, &str)]) -> common::Run {
    let mut args = vec![
        "verify",
        "deploy/inventory",
        "--from",
        utf8(dump),
        "--since",
        SINCE,
        "--image",
        IMAGE,
    ];
    args.extend_from_slice(extra);
    let mut env = env.to_vec();
    env.push(("HOME", utf8(home)));
    liveproof().args(&args).envs(&env).run().await
}

fn target_namespace(report: &Report) -> &str {
    assert_eq!(report.targets.len(), 1, "{report:#?}");
    &report.targets[0].namespace
}

#[tokio::test]
async fn the_kubeconfig_contexts_namespace_is_used_as_live() {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = in_apps_and_staging(dir.path());
    let kubeconfig = kubeconfig(dir.path());

    // KUBECONFIG's current context names apps.
    let run = verify(
        home.path(),
        &dump,
        &["-o", "json"],
        &[("KUBECONFIG", utf8(&kubeconfig))],
    )
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(target_namespace(&report), "apps");
    assert_eq!(report.verdict, Verdict::Live);
    assert!(report.notes.is_empty(), "{:?}", report.notes);

    // --kubeconfig and --context, as live mode takes them: the other context names staging.
    let run = verify(
        home.path(),
        &dump,
        &[
            "--kubeconfig",
            utf8(&kubeconfig),
            "--context",
            "other",
            "-o",
            "json",
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(target_namespace(&run.report()), "staging");

    // -n still wins over the context.
    let run = verify(
        home.path(),
        &dump,
        &["-n", "staging", "-o", "json"],
        &[("KUBECONFIG", utf8(&kubeconfig))],
    )
    .await;
    assert_eq!(target_namespace(&run.report()), "staging");

    // A context the kubeconfig lacks is a usage error, as live; so is more than one.
    let run = verify(
        home.path(),
        &dump,
        &[
            "--kubeconfig",
            utf8(&kubeconfig),
            "--context",
            "prdo",
            "-o",
            "json",
        ],
        &[],
    )
    .await;
    let doc = run.error_document();
    assert!(doc.error.message.contains("--context prdo"), "{doc:?}");
    assert!(
        doc.error.hint.is_some_and(|h| h.contains("`prod`")),
        "a did-you-mean"
    );
    let run = verify(
        home.path(),
        &dump,
        &["--context", "prod", "--context", "other", "-o", "json"],
        &[("KUBECONFIG", utf8(&kubeconfig))],
    )
    .await;
    let doc = run.error_document();
    assert!(
        doc.error.message.contains("--context is given 2 times"),
        "{doc:?}"
    );
}

#[tokio::test]
async fn without_a_kubeconfig_the_only_namespace_holding_the_target_is_used_and_said() {
    let home = tempfile::tempdir().expect("tempdir");
    let run = verify(home.path(), &rolled_out(), &["-o", "json", "-v"], &[]).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(target_namespace(&report), "apps");
    assert_eq!(report.verdict, Verdict::Live);
    assert_eq!(report.notes.len(), 1, "{:?}", report.notes);
    assert!(
        report.notes[0].starts_with("namespace apps:")
            && report.notes[0].contains("the only namespace of --from")
            && report.notes[0].contains("deployment/inventory"),
        "{}",
        report.notes[0]
    );
    assert!(
        run.stderr.contains("namespace apps:"),
        "the log says it too: {}",
        run.stderr
    );

    // The text report shows it, where a person reads it.
    let text = verify(home.path(), &rolled_out(), &[], &[]).await;
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("note: namespace apps:")),
        "{}",
        text.stdout
    );

    // A target that is not live gets a next step in the namespace actually used.
    let crashing = scenarios_dir()
        .join("new-pod-crashloopbackoff-old-pods-serving")
        .join("cluster.yaml");
    let run = verify(home.path(), &crashing, &["-o", "json"], &[]).await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(target_namespace(&report), "apps");
    let step = report.targets[0]
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .expect("a next step");
    assert!(step.contains("-n apps"), "{step}");
}

#[tokio::test]
async fn a_target_in_several_namespaces_of_the_dump_stays_in_default_and_they_are_named() {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = in_apps_and_staging(dir.path());
    let run = verify(home.path(), &dump, &["-o", "json"], &[]).await;
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(target_namespace(&report), "default");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("deployment/inventory in apps, staging")),
        "{:?}",
        report.notes
    );
    let step = report.targets[0]
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .expect("a next step");
    assert!(
        step.contains("in apps, staging, not in namespace default") && step.contains("-n apps"),
        "{step}"
    );
}
