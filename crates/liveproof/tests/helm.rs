//! Helm and GitOps targets through the CLI: `release show` never prints a value unless asked,
//! an unreadable release is an error when it is all that was asked about, the ChartVersion
//! diagnosis confirmed from a real git repository, and `--wait` on a HelmRelease.

use liveproof_testkit::binary as common;

use liveproof_testkit::wait_until_async;

use liveproof_testkit::git::git_at;

use liveproof_testkit::SimCluster;

use std::path::Path;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;
use liveproof_evidence::{Check, Status, Verdict};
use serde_json::{json, Value};

const PASSWORD: &str = "hunter2-s3cr3t";

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("rounds")
}

/// A release whose values and rendered manifest hold a secret, stored as Helm stores it.
fn release_json(version: i64, status: &str, deployed: &str) -> Value {
    json!({
        "name": "inventory", "namespace": "apps", "version": version,
        "info": {"first_deployed": "2026-07-01T08:00:00Z", "last_deployed": deployed, "deleted": "",
                 "description": "Upgrade complete", "status": status},
        "chart": {"metadata": {"name": "inventory", "version": format!("0.4.{version}"), "appVersion": "1.8.0", "apiVersion": "v2"}},
        "config": {"database": {"password": PASSWORD}, "replicas": 2},
        "manifest": format!("---\n# Source: inventory/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: inventory-db\nstringData:\n  password: {PASSWORD}\n---\n# Source: inventory/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\ndata:\n  revision: \"{version}\"\n"),
        "hooks": []
    })
}

fn write_dump(dir: &Path, objects: &[Value]) -> String {
    let path = dir.join("dump.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&path, serde_json::to_string(&list).expect("json")).expect("write dump");
    path.to_string_lossy().into_owned()
}

/// `liveproof release show inventory -n apps --from DUMP FLAGS…`
async fn show_inventory(dump: &str, flags: &[&str]) -> common::Run {
    let mut args = vec!["release", "show", "inventory", "-n", "apps", "--from", dump];
    args.extend_from_slice(flags);
    common::liveproof().args(&args).run().await
}

/// `release` stored as Helm stores it, with the Helm layer cut short: base64 still valid,
/// gzip truncated.
fn truncated_secret(release: &Value) -> Value {
    let mut secret = liveproof_helm::encode_secret(release);
    let data = secret["data"]["release"].as_str().expect("data");
    let helm = String::from_utf8(base64_decode(data)).expect("helm layer is text");
    let truncated = &helm[..helm.len() / 2 - (helm.len() / 2) % 4];
    secret["data"]["release"] = json!(base64_encode(truncated.as_bytes()));
    secret
}

fn two_revisions(dir: &Path) -> String {
    write_dump(
        dir,
        &[
            liveproof_helm::encode_secret(&release_json(1, "superseded", "2026-07-01T08:00:00Z")),
            liveproof_helm::encode_secret(&release_json(2, "deployed", "2026-07-08T14:22:06Z")),
        ],
    )
}

#[tokio::test]
async fn release_show_never_prints_a_value_unless_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = two_revisions(dir.path());
    let base = [
        "release",
        "show",
        "inventory",
        "-n",
        "apps",
        "--from",
        dump.as_str(),
    ];

    let run = common::liveproof().args(&base).run().await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("REVISION: 2") && run.stdout.contains("VERSION: 0.4.2"),
        "{}",
        run.stdout
    );

    let all: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--values", "--manifest", "--history", "--metadata"])
        .collect();
    let run = common::liveproof().args(&all).run().await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stdout.contains(PASSWORD) && !run.stderr.contains(PASSWORD),
        "a value leaked:\n{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("password"),
        "keys are shown: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains("--show-values"),
        "says how to see them: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains("kind: ConfigMap"),
        "the manifest is shown: {}",
        run.stdout
    );
    let history_rows = run
        .stdout
        .lines()
        .filter(|l| l.contains("inventory-0.4."))
        .count();
    assert_eq!(history_rows, 2, "{}", run.stdout);

    let shown: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--values", "--show-values"])
        .collect();
    let run = common::liveproof().args(&shown).run().await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(PASSWORD),
        "--show-values shows them: {}",
        run.stdout
    );

    let older: Vec<&str> = base.iter().copied().chain(["--revision", "1"]).collect();
    let run = common::liveproof().args(&older).run().await;
    assert!(
        run.stdout.contains("REVISION: 1") && run.stdout.contains("superseded"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn release_show_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = two_revisions(dir.path());
    let run = common::liveproof()
        .args(&["release", "show", "payments", "-n", "apps", "--from", &dump])
        .run()
        .await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("apps/payments") && run.stderr.contains("hint:"),
        "{}",
        run.stderr
    );
    let run = show_inventory(&dump, &["--revision", "9"]).await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no revision 9") && run.stderr.contains("1, 2"),
        "{}",
        run.stderr
    );
    let run = show_inventory(&dump, &["--show-values"]).await;
    assert_eq!(run.code, 2, "--show-values needs --values: {}", run.stderr);
}

/// A corrupt newest revision (truncated gzip): an error naming the Secret when it is the only
/// target; `unproven`, never `live`, when it is one of several.
#[tokio::test]
async fn a_corrupt_release_is_never_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corrupt = truncated_secret(&release_json(2, "deployed", "2026-07-12T10:30:00Z"));
    let dump = write_dump(dir.path(), &[corrupt]);

    let run = common::liveproof()
        .args(&["verify", "release/inventory", "-n", "apps", "--from", &dump])
        .since("2026-07-12T10:00:00Z")
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("sh.helm.release.v1.inventory.v2"),
        "names the Secret: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("kubectl -n apps get secret sh.helm.release.v1.inventory.v2 -o yaml"),
        "a hint kubectl accepts: {}",
        run.stderr
    );
    let run = show_inventory(&dump, &[]).await;
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("sh.helm.release.v1.inventory.v2") && run.stderr.contains("gzip"),
        "{}",
        run.stderr
    );

    let run = common::liveproof()
        .args(&[
            "verify",
            "release/inventory",
            "deploy/other",
            "-n",
            "apps",
            "--from",
            &dump,
        ])
        .since("2026-07-12T10:00:00Z")
        .json()
        .run()
        .await;
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Unproven, "{}", run.stdout);
    let revision = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ReleaseRevision)
        .expect("release_revision");
    assert_eq!(revision.status, Status::Unknown);
    assert_eq!(
        revision.source_ref.name, "sh.helm.release.v1.inventory.v2",
        "{revision:?}"
    );
}

/// The newest revision cannot be read but an older one can: `release show` says what is wrong
/// with the newest, naming its Secret, and never shows the older one in its place.
#[tokio::test]
async fn release_show_never_shows_an_older_revision_for_an_unreadable_newest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let newest = truncated_secret(&release_json(2, "deployed", "2026-07-12T10:30:00Z"));
    let older =
        liveproof_helm::encode_secret(&release_json(1, "superseded", "2026-07-01T08:00:00Z"));
    let dump = write_dump(dir.path(), &[older, newest]);

    for section in ["--metadata", "--manifest"] {
        let run = show_inventory(&dump, &[section]).await;
        assert_eq!(run.code, 2, "{section}: {}", run.stdout);
        assert!(run.stdout.is_empty(), "{section}: {}", run.stdout);
        assert!(
            run.stderr.contains("sh.helm.release.v1.inventory.v2") && run.stderr.contains("gzip"),
            "{section}: {}",
            run.stderr
        );
    }
    // Asked for by number, the older one is shown.
    let run = show_inventory(&dump, &["--revision", "1"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("REVISION: 1"), "{}", run.stdout);
}

/// Only the revision shown is read whole, chosen first by the storage labels; the release JSON
/// has the final word, so labels that point elsewhere cost a second read, never a wrong answer.
#[tokio::test]
async fn release_show_reads_the_revision_the_json_says_is_newest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut second =
        liveproof_helm::encode_secret(&release_json(2, "deployed", "2026-07-08T14:22:06Z"));
    let mut first =
        liveproof_helm::encode_secret(&release_json(1, "superseded", "2026-07-01T08:00:00Z"));
    second["metadata"]["labels"]["version"] = json!("1");
    first["metadata"]["labels"]["version"] = json!("2");
    let dump = write_dump(dir.path(), &[first, second]);

    let run = show_inventory(&dump, &["--metadata", "--history", "--manifest"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("REVISION: 2"), "{}", run.stdout);
    assert!(
        run.stdout.contains("revision: \"2\""),
        "the manifest of revision 2: {}",
        run.stdout
    );
    let history_rows = run
        .stdout
        .lines()
        .filter(|l| l.contains("inventory-0.4."))
        .count();
    assert_eq!(history_rows, 2, "{}", run.stdout);
    assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);

    let run = show_inventory(&dump, &["--revision", "1", "--manifest"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("revision: \"1\""), "{}", run.stdout);
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64")
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// Seed 002 with a real repository: the chart committed, then a template changed without a
/// version bump. `--commit` gives the change time and the diagnosis cites the commit.
#[tokio::test]
async fn chartversion_diagnosis_is_confirmed_from_git() {
    let repo = tempfile::tempdir().expect("tempdir");
    let root = repo.path();
    std::fs::create_dir_all(root.join("charts/inventory/templates")).expect("mkdir");
    std::fs::write(
        root.join("charts/inventory/Chart.yaml"),
        "apiVersion: v2\nname: inventory\nversion: 0.4.2\n",
    )
    .expect("write");
    std::fs::write(
        root.join("charts/inventory/templates/deployment.yaml"),
        "env:\n- name: DATABASE_HOST\n",
    )
    .expect("write");
    git_at(root, &["init", "-q"], "2026-11-01T09:00:00Z");
    git_at(root, &["add", "-A"], "2026-11-01T09:00:00Z");
    git_at(
        root,
        &["commit", "-q", "-m", "inventory chart"],
        "2026-11-01T09:00:00Z",
    );
    std::fs::write(
        root.join("charts/inventory/templates/deployment.yaml"),
        "env:\n- name: DB_PASSWORD\n  valueFrom: {secretKeyRef: {name: inventory-db, key: password}}\n",
    )
    .expect("write");
    let merged = now() - SignedDuration::from_secs(60);
    git_at(
        root,
        &["commit", "-q", "-am", "read the password from the Secret"],
        &merged.to_string(),
    );
    let sha = git_at(root, &["rev-parse", "HEAD"], &merged.to_string());

    let dir = tempfile::tempdir().expect("tempdir");
    let dump = write_dump(
        dir.path(),
        &demo::story_before(now() - SignedDuration::from_hours(96)),
    );
    let run = common::liveproof()
        .args(&[
            "verify",
            "helmrelease/inventory",
            "-n",
            "apps",
            "--from",
            &dump,
            "--commit",
            &sha[..8],
            "--repo",
            root.to_str().expect("utf-8"),
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(
        report.change.since.as_deref(),
        Some(merged.to_string().as_str()),
        "the committer time is the change time"
    );
    let revision = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ReleaseRevision)
        .expect("release_revision");
    assert_eq!(revision.status, Status::Fail);
    assert!(
        revision.detail.contains("reconcileStrategy ChartVersion"),
        "{revision:?}"
    );
    assert!(
        revision.detail.contains("Git confirms it")
            && revision
                .detail
                .contains("charts/inventory/templates/deployment.yaml"),
        "{revision:?}"
    );
    // The stale condition says which deploy it is about (the revision its message names).
    let fresh = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ConditionFresh)
        .expect("condition_fresh");
    assert_eq!(fresh.status, Status::Fail);
    let four_days_ago = (now() - SignedDuration::from_hours(96))
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    assert!(
        fresh.detail.contains(&format!(
            "describes apps/inventory.v34 from {four_days_ago}"
        )),
        "{fresh:?}"
    );
    let next = report.targets[0]
        .next_step
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        next.contains("Chart.yaml"),
        "the next step is the bump: {next}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_on_a_helmrelease_until_the_upgrade_is_live() {
    let cluster = SimCluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let since = (now() - SignedDuration::from_secs(90)).to_string();
    let args = [
        "verify",
        "helmrelease/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        &since,
        "--expect",
        "secretKeyRef",
        "--wait",
        "--timeout",
        "60s",
        "-o",
        "json",
    ];
    let waiting = common::liveproof().args(&args).run();
    let reconcile = async {
        // Once verify is waiting (its watches open), play the controller.
        wait_until_async(
            "verify --wait watching the cluster",
            Duration::from_secs(60),
            || cluster.sim.requests().count("watch", "/") > 0,
        )
        .await;
        demo::reconcile(&cluster.sim, now());
    };
    let (run, ()) = tokio::join!(waiting, reconcile);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Live);
    assert_eq!(
        report.targets.len(),
        2,
        "the HelmRelease and the Deployment it installs"
    );
    assert_eq!(
        report.targets[1].via.as_deref(),
        Some("helmrelease/apps/inventory")
    );
    assert!(run.stderr.contains("waiting:"), "{}", run.stderr);
}

/// When helm-controller has not even seen the HelmRelease's current spec, that is the cause:
/// no ChartVersion diagnosis, and the next step is about the controller.
#[tokio::test]
async fn no_chartversion_diagnosis_while_the_spec_is_unobserved() {
    let mut objects = demo::story_before(now() - SignedDuration::from_hours(96));
    for o in &mut objects {
        if o["kind"] == "HelmRelease" {
            o["metadata"]["generation"] = json!(8);
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = write_dump(dir.path(), &objects);
    let since = (now() - SignedDuration::from_secs(60)).to_string();
    let run = common::liveproof()
        .args(&["verify", "hr/inventory", "-n", "apps", "--from", &dump])
        .since(&since)
        .json()
        .run()
        .await;
    let report = run.report();
    let own = &report.targets[0];
    let generation = own
        .evidence
        .iter()
        .find(|e| e.check == Check::ObservedGeneration)
        .expect("observed_generation");
    assert_eq!(generation.status, Status::Fail);
    let revision = own
        .evidence
        .iter()
        .find(|e| e.check == Check::ReleaseRevision)
        .expect("release_revision");
    assert_eq!(revision.status, Status::Fail);
    assert!(!revision.detail.contains("ChartVersion"), "{revision:?}");
    assert!(
        own.next_step
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
            .contains("controller"),
        "{:?}",
        own.next_step
    );
}

/// What a person reads from `release show`, every view, snapshotted: a change of wording or
/// layout is a reviewed change. The dump's times are fixed; its temp path is filtered.
#[tokio::test]
async fn release_show_views_as_rendered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = two_revisions(dir.path());
    let mut rendered = String::new();
    for view in [
        &["--metadata"][..],
        &["--history"],
        &["--values"],
        &["--manifest", "--revision", "1"],
    ] {
        let mut args = vec![
            "release",
            "show",
            "inventory",
            "-n",
            "apps",
            "--from",
            &dump,
        ];
        args.extend(view);
        let run = common::liveproof().args(&args).run().await;
        rendered.push_str(&format!(
            "$ liveproof release show inventory {}\nexit {}\n{}{}\n",
            view.join(" "),
            run.code,
            run.stdout,
            run.stderr
        ));
    }
    let pattern = common::literal_pattern(&dump);
    insta::with_settings!({filters => vec![(pattern.as_str(), "[DUMP]")]}, {
        insta::assert_snapshot!(rendered);
    });
}

/// `release show`'s usage and storage errors, as the user reads them (stderr, exit code).
#[tokio::test]
async fn release_show_errors_as_rendered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = two_revisions(dir.path());
    let mut rendered = String::new();
    for (name, extra) in [
        ("payments", &[][..]),
        ("inventory", &["--revision", "9"]),
        ("inventory", &["--values", "--max-release-size", "10"]),
    ] {
        let mut args = vec!["release", "show", name, "-n", "apps", "--from", &dump];
        args.extend(extra);
        let run = common::liveproof().args(&args).run().await;
        assert!(
            run.stdout.is_empty(),
            "an error prints no report: {}",
            run.stdout
        );
        rendered.push_str(&format!(
            "$ liveproof release show {name} {}\nexit {}\n{}\n",
            extra.join(" "),
            run.code,
            run.stderr
        ));
    }
    let pattern = common::literal_pattern(&dump);
    insta::with_settings!({filters => vec![(pattern.as_str(), "[DUMP]")]}, {
        insta::assert_snapshot!(rendered);
    });
}

/// `release_json` with a manifest of about `megabytes` MB: the Secret, then ConfigMaps that
/// say which revision they are from.
fn large_release_json(version: i64, status: &str, deployed: &str, megabytes: usize) -> Value {
    let mut release = release_json(version, status, deployed);
    let mut manifest = release["manifest"].as_str().expect("text").to_owned();
    for i in 0.. {
        if manifest.len() > megabytes << 20 {
            break;
        }
        manifest.push_str(&format!(
            "---\n# Source: inventory/templates/shard.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shard-{i}\ndata:\n  revision: \"{version}\"\n  page: \"<p>{i} & more</p>\"\n"
        ));
    }
    release["manifest"] = json!(manifest);
    release
}

/// A manifest larger than what may wait decoded ahead (the labels' revision is decoded while
/// every revision is read): printed whole, as read whole, when the labels are right; and when
/// they point elsewhere, the right revision's, the other's decoding dropped (and no hang).
#[tokio::test]
async fn a_large_manifest_streams_whole_and_never_from_the_wrong_revision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let older = large_release_json(1, "superseded", "2026-07-01T08:00:00Z", 3);
    let newer = large_release_json(2, "deployed", "2026-07-08T14:22:06Z", 3);
    let whole = liveproof_helm::show::manifest(
        &liveproof_helm::decode(&liveproof_helm::encode_secret(&newer), &Default::default())
            .expect("decodes")
            .release,
    );
    let dump = write_dump(
        dir.path(),
        &[
            liveproof_helm::encode_secret(&older),
            liveproof_helm::encode_secret(&newer),
        ],
    );
    let run = show_inventory(&dump, &["--manifest"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, whole);
    assert!(!run.stdout.contains(PASSWORD));

    let mut older = liveproof_helm::encode_secret(&older);
    let mut newer = liveproof_helm::encode_secret(&newer);
    older["metadata"]["labels"]["version"] = json!("2");
    newer["metadata"]["labels"]["version"] = json!("1");
    let dump = write_dump(dir.path(), &[older, newer]);
    let run = show_inventory(&dump, &["--manifest"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, whole, "revision 2's manifest, as the JSON says");
}
