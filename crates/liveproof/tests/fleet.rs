//! A fleet of clusters: `verify --context A --context B …` and `--all-contexts` verify the same
//! change in each cluster (simulators here), report a section per cluster and the worst
//! verdict; a cluster that cannot be reached is an error for that cluster — never a pass,
//! never a hang — and the fleet is then at best unproven.

use liveproof_testkit::binary as common;

use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::Verdict;
use liveproof_sim::{SimHandle, Simulator};
use liveproof_testkit::fleet::{self, CHANGE_AT};

async fn cluster(stale: bool) -> SimHandle {
    Simulator::new()
        .with_objects(fleet::deployments("shop", 1, 2, stale))
        .start()
        .await
        .expect("simulator")
}

struct Fleet {
    eu: SimHandle,
    us: SimHandle,
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// prod-eu runs the change, prod-us still the old pods, prod-ap refuses connections.
async fn fleet() -> Fleet {
    let eu = cluster(false).await;
    let us = cluster(true).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        fleet::kubeconfig(
            &[
                ("prod-eu", &eu.url()),
                ("prod-us", &us.url()),
                ("prod-ap", "http://127.0.0.1:1"),
            ],
            "shop",
        ),
    )
    .expect("kubeconfig");
    Fleet {
        eu,
        us,
        kubeconfig,
        _dir: dir,
    }
}

fn verify_args<'a>(kubeconfig: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "verify",
        "deploy/svc-0",
        "--image",
        fleet::IMAGE,
        "--since",
        CHANGE_AT,
        "--kubeconfig",
        kubeconfig,
        "--request-timeout",
        "5s",
    ];
    args.extend_from_slice(more);
    args
}

fn fleet_report(run: &common::Run) -> FleetReport {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not a fleet report ({e}):\n{}\n{}", run.stdout, run.stderr))
}

/// Each cluster's context, verdict and whether it holds an error, in the report's order.
fn cluster_verdicts(report: &FleetReport) -> Vec<(&str, Verdict, bool)> {
    report
        .clusters
        .iter()
        .map(|c| (c.context.as_str(), c.verdict, c.error.is_some()))
        .collect()
}

/// The fleet report validates against `liveproof schema`, which describes `clusters`: a
/// cluster with a verdict no report has, or without its context, does not.
async fn assert_matches_the_printed_schema(run: &common::Run) {
    let schema = common::liveproof().args(&["schema"]).run().await;
    let schema: serde_json::Value = serde_json::from_str(&schema.stdout).expect("schema is JSON");
    let validator = jsonschema::draft202012::new(&schema).expect("a draft 2020-12 schema");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}\n{report:#}", errors.join("\n"));
    let mut green = report.clone();
    green["clusters"][0]["verdict"] = "green".into();
    assert!(!validator.is_valid(&green), "a verdict no report has");
    let mut nameless = report.clone();
    nameless["clusters"][1]
        .as_object_mut()
        .expect("a cluster")
        .remove("context");
    assert!(
        !validator.is_valid(&nameless),
        "a cluster without its context"
    );
    let mut inner = report;
    inner["clusters"][0]["report"]["schema"] = "liveproof/v0".into();
    assert!(
        !validator.is_valid(&inner),
        "a cluster's report of another format"
    );
}

#[tokio::test]
async fn each_cluster_is_verified_and_the_worst_verdict_wins() {
    let f = fleet().await;
    let kc = f.kubeconfig.to_str().expect("utf-8");

    let run = common::liveproof()
        .args(&verify_args(
            kc,
            &[
                "--context",
                "prod-eu",
                "--context",
                "prod-us",
                "--context",
                "prod-ap",
                "-o",
                "json",
            ],
        ))
        .run()
        .await;
    assert_matches_the_printed_schema(&run).await;
    let report = fleet_report(&run);
    let verdicts = cluster_verdicts(&report);
    assert_eq!(
        verdicts,
        [
            ("prod-eu", Verdict::Live, false),
            ("prod-us", Verdict::NotLive, false),
            ("prod-ap", Verdict::Unproven, true),
        ],
        "{}",
        run.stderr
    );
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(run.code, 1);
    assert_eq!(report.schema, "liveproof/v1");
    assert_eq!(
        report.targets.len(),
        2,
        "every cluster's target, for one-cluster readers"
    );
    let error = report.clusters[2].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("cannot reach the API server at http://127.0.0.1:1"),
        "{error}"
    );
    let eu = report.clusters[0]
        .report
        .as_ref()
        .expect("prod-eu's report");
    assert_eq!(
        eu.cluster.as_ref().and_then(|c| c.context.as_deref()),
        Some("prod-eu")
    );

    // A reachable cluster live and an unreachable one: not proven, never live.
    let run = common::liveproof()
        .args(&verify_args(
            kc,
            &["--context", "prod-eu", "--context", "prod-ap", "-o", "json"],
        ))
        .run()
        .await;
    assert_eq!(fleet_report(&run).verdict, Verdict::Unproven);
    assert_eq!(run.code, 3);

    // Every context of the kubeconfig, in its order; text names each cluster.
    let run = common::liveproof()
        .args(&verify_args(kc, &["--all-contexts"]))
        .run()
        .await;
    assert_eq!(run.code, 1, "{}", run.stdout);
    for section in [
        "=== cluster prod-eu",
        "=== cluster prod-us",
        "=== cluster prod-ap: ERROR ===",
        "\nhint: ",
        "fleet: 3 clusters",
        "1 live, 1 not live, 0 unproven, 0 superseded, 1 not verified (error) — fleet verdict: NOT LIVE",
    ] {
        assert!(run.stdout.contains(section), "{section}:\n{}", run.stdout);
    }
    f.eu.shutdown().await;
    f.us.shutdown().await;
}

#[tokio::test]
async fn fleet_flags_are_refused_where_they_cannot_apply() {
    let f = fleet().await;
    let kc = f.kubeconfig.to_str().expect("utf-8");
    let run = common::liveproof()
        .args(&["stale", "--context", "prod-eu", "--context", "prod-us"])
        .kubeconfig(kc)
        .run()
        .await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--context is given 2 times; only `verify` checks several clusters"),
        "{}",
        run.stderr
    );

    let run = common::liveproof()
        .args(&verify_args(
            kc,
            &["--context", "prod-eu", "--context", "prod-uss"],
        ))
        .run()
        .await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--context prod-uss: the kubeconfig has no such context (it has: ")
            && run.stderr.contains("hint: did you mean `prod-us`?"),
        "{}",
        run.stderr
    );
    // One cluster too (issue 20): the contexts it has, and the nearest.
    let run = common::liveproof()
        .args(&verify_args(kc, &["--context", "prod-uss"]))
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("--context prod-uss: the kubeconfig has no such context (it has: ")
            && run.stderr.contains("prod-eu")
            && run.stderr.contains("hint: did you mean `prod-us`?"),
        "{}",
        run.stderr
    );

    let empty = tempfile::tempdir().expect("tempdir");
    let none = empty.path().join("kubeconfig");
    std::fs::write(&none, "apiVersion: v1\nkind: Config\n").expect("write");
    let run = common::liveproof()
        .args(&verify_args(
            none.to_str().expect("utf-8"),
            &["--all-contexts"],
        ))
        .run()
        .await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("the kubeconfig names no context"),
        "{}",
        run.stderr
    );
    f.eu.shutdown().await;
    f.us.shutdown().await;
}

/// Two clusters holding the same release storage object (same namespace, name and
/// resourceVersion: a fresh API server numbers objects alike) with different content: each
/// cluster is judged on its own release. Decoded releases are cached by object and
/// resourceVersion, which say nothing about which cluster they came from.
#[tokio::test]
async fn each_cluster_is_judged_on_its_own_helm_release() {
    let release = |chart_version: &str| {
        liveproof_helm::encode_secret(&serde_json::json!({
            "name": "web", "namespace": "shop", "version": 1,
            "info": {"first_deployed": "2026-07-12T10:05:00Z",
                     "last_deployed": "2026-07-12T10:05:00Z",
                     "deleted": "", "description": "Install complete", "status": "deployed"},
            "chart": {"metadata": {"name": "web", "version": chart_version, "apiVersion": "v2"},
                      "templates": [], "values": {}},
            "config": {},
            "manifest": "",
        }))
    };
    let start = |chart_version: &str| {
        Simulator::new()
            .with_objects(vec![release(chart_version)])
            .start()
    };
    let old = start("1.0.0").await.expect("simulator");
    let new = start("1.1.0").await.expect("simulator");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        fleet::kubeconfig(&[("old", &old.url()), ("new", &new.url())], "shop"),
    )
    .expect("kubeconfig");
    let kc = kubeconfig.to_str().expect("utf-8");
    let run = common::liveproof()
        .args(&["verify", "release/web", "--chart-version", "1.1.0"])
        .since(CHANGE_AT)
        .kubeconfig(kc)
        .args(&[
            "--context",
            "old",
            "--context",
            "new", // One at a time: the second cluster is judged after the first one's release is
            // decoded.
            "--max-concurrency",
            "1",
        ])
        .json()
        .run()
        .await;
    let report = fleet_report(&run);
    let chart_version = |context: &str| {
        let cluster = report
            .clusters
            .iter()
            .find(|c| c.context == context)
            .unwrap_or_else(|| panic!("no {context}: {}", run.stdout));
        let report = cluster.report.as_ref().expect("a report");
        report
            .targets
            .iter()
            .flat_map(|t| &t.evidence)
            .find(|e| e.check == liveproof_evidence::Check::ReleaseVersion)
            .map(|e| (e.status, e.observed.clone()))
            .expect("release_version")
    };
    assert_eq!(
        chart_version("old"),
        (liveproof_evidence::Status::Fail, "web-1.0.0".to_string()),
        "{}",
        run.stdout
    );
    assert_eq!(
        chart_version("new"),
        (liveproof_evidence::Status::Pass, "web-1.1.0".to_string()),
        "{}",
        run.stdout
    );
}

/// A fleet is drawn in every format one cluster's report is: Markdown a table of the clusters
/// then a section per cluster, JUnit each cluster's suites named after it, and a cluster that
/// could not be verified an error, never a pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_is_drawn_in_markdown_and_junit_a_section_per_cluster() {
    let fleet = fleet().await;
    let kubeconfig = fleet.kubeconfig.to_str().expect("utf-8");
    let contexts = [
        "--context",
        "prod-eu",
        "--context",
        "prod-us",
        "--context",
        "prod-ap",
    ];

    let mut args = verify_args(kubeconfig, &contexts);
    args.extend(["-o", "markdown"]);
    let run = common::liveproof().args(&args).run().await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let md = &run.stdout;
    assert!(md.contains("across 3 clusters"), "{md}");
    for row in [
        "| prod-eu | ✅ live |",
        "| prod-us | ❌ not live |",
        "| prod-ap | ⚠️ not verified (error) |",
    ] {
        assert!(md.contains(row), "{row} in:\n{md}");
    }
    for section in [
        "# Cluster prod-eu",
        "# Cluster prod-us",
        "# Cluster prod-ap",
    ] {
        assert!(md.contains(section), "{section} in:\n{md}");
    }
    assert!(md.contains("**Not verified:**"), "{md}");

    let mut args = verify_args(kubeconfig, &contexts);
    args.extend(["-o", "junit"]);
    let run = common::liveproof().args(&args).run().await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let xml = &run.stdout;
    assert!(
        xml.contains("<testsuite name=\"prod-eu: Deployment shop/svc-0\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"prod-us: Deployment shop/svc-0\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"prod-ap: cluster\""),
        "{xml}"
    );
    assert!(
        xml.contains("<error"),
        "the unreachable cluster is an error: {xml}"
    );
    assert!(xml.contains("<failure"), "the stale cluster fails: {xml}");
}

/// Issue 32, point 5: `--all-contexts` with one cluster flooding its answers took all the
/// machine's memory (23 GB). The clusters read at once share `--max-response-size` (256 MiB
/// by default): the flooding one ends with an error naming its share, the others are
/// verified, and the run's memory stays near that share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_cluster_takes_no_more_than_its_share_of_the_response_cap() {
    use liveproof_testkit::flood::{self, Answer};
    let eu = cluster(false).await;
    let flooding = flood::serve(Answer::Braces);
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        fleet::kubeconfig(&[("prod-eu", &eu.url()), ("prod-flood", &flooding)], "shop"),
    )
    .expect("kubeconfig");
    let kc = kubeconfig.to_str().expect("utf-8");
    let run = common::liveproof()
        .args(&verify_args(kc, &["--all-contexts", "-o", "json", "-v"]))
        .run()
        .await;
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    let report = fleet_report(&run);
    assert_eq!(report.clusters[0].verdict, Verdict::Live, "{}", run.stderr);
    let error = report.clusters[1].error.as_deref().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "the API server at {flooding} answered more than 128 MiB (--max-response-size 256 MiB, shared by 2 clusters read at once)"
        )),
        "{error}"
    );
    let peak_kib: u64 = run
        .stderr
        .lines()
        .find_map(|l| l.split("peak memory: ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("-v says the peak memory:\n{}", run.stderr));
    assert!(
        peak_kib < (128 + 128) * 1024,
        "peak {peak_kib} KiB for a 128 MiB share"
    );
    eu.shutdown().await;
}

/// Issue 37: a cluster whose API server accepts and reads every request and never answers
/// (hung, or behind a proxy that swallows requests) is bounded by `--request-timeout` like one
/// cluster's verify, and reported as that cluster's error naming the server and the timeout;
/// the other clusters are judged, not held by it, and the fleet is unproven (a cluster that
/// could not be verified is never a pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_cluster_is_bounded_by_its_request_timeout_and_reported() {
    use liveproof_testkit::flood::{self, Answer};
    let eu = cluster(false).await;
    let us = cluster(false).await;
    let hung = flood::serve(Answer::Silent);
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        fleet::kubeconfig(
            &[
                ("prod-eu", &eu.url()),
                ("prod-hung", &hung),
                ("prod-us", &us.url()),
            ],
            "shop",
        ),
    )
    .expect("kubeconfig");
    let kc = kubeconfig.to_str().expect("utf-8");
    let run = common::liveproof()
        .args(&[
            "verify",
            "deploy/svc-0",
            "--image",
            fleet::IMAGE,
            "--since",
            CHANGE_AT,
            "--kubeconfig",
            kc,
            "--request-timeout",
            "1s",
            "--all-contexts",
            "-o",
            "json",
        ])
        .run()
        .await;
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    let report = fleet_report(&run);
    let verdicts = cluster_verdicts(&report);
    assert_eq!(
        verdicts,
        [
            ("prod-eu", Verdict::Live, false),
            ("prod-hung", Verdict::Unproven, true),
            ("prod-us", Verdict::Live, false),
        ],
        "{}",
        run.stderr
    );
    assert_eq!(report.verdict, Verdict::Unproven);
    let error = report.clusters[1].error.as_deref().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "the API server at {hung} did not answer within 1s"
        )),
        "names the server and the timeout: {error}"
    );
    assert!(error.contains("--request-timeout"), "{error}");
    eu.shutdown().await;
    us.shutdown().await;
}

/// Issue 37: a fleet's servers that name no certificate authority share one TLS configuration
/// (the platform's trust store, read once per run instead of once per cluster). Sharing never
/// crosses contexts: over the same TLS server, a context that names the authority that signed
/// its certificate is trusted and reaches it, one that names none (the platform's store, which
/// does not hold that authority) is refused at the handshake — whichever was connected first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_context_of_a_fleet_trusts_only_its_own_certificate_authority() {
    use liveproof_testkit::flood::{self, Answer};
    let server = flood::serve_tls(Answer::EchoRequest);
    let ca = flood::ca_certificate();
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let contexts = [
        ("trusted-a", true),
        ("platform-a", false),
        ("trusted-b", true),
        ("platform-b", false),
    ];
    let mut yaml = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, trusted) in contexts {
        yaml.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {server}\n"
        ));
        if trusted {
            yaml.push_str(&format!(
                "    certificate-authority: {}\n",
                ca.to_str().expect("utf-8")
            ));
        }
    }
    yaml.push_str("contexts:\n");
    for (name, _) in contexts {
        yaml.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: u\n    namespace: shop\n"
        ));
    }
    yaml.push_str(
        "current-context: trusted-a\nusers:\n- name: u\n  user:\n    token: not-a-secret\n",
    );
    std::fs::write(&kubeconfig, yaml).expect("kubeconfig");
    let kc = kubeconfig.to_str().expect("utf-8");
    // One at a time, in the kubeconfig's order: a configuration shared wrongly would carry
    // the first context's trust to the next.
    let run = common::liveproof()
        .args(&verify_args(
            kc,
            &["--all-contexts", "--max-concurrency", "1", "-o", "json"],
        ))
        .run()
        .await;
    let report = fleet_report(&run);
    let errors: Vec<(&str, &str)> = report
        .clusters
        .iter()
        .map(|c| (c.context.as_str(), c.error.as_deref().unwrap_or_default()))
        .collect();
    assert_eq!(errors.len(), 4, "{}", run.stderr);
    for (context, error) in errors {
        let refused_tls = error.contains("certificate");
        if context.starts_with("trusted") {
            assert!(!refused_tls && error.contains("500"), "{context}: {error}");
        } else {
            assert!(refused_tls, "{context}: {error}");
        }
    }
}
