//! A session's reads against the simulator: a pass holds everything the judge reads, and the
//! diagnostics read after the judge costs a live report no request (issue 34's plan, §7
//! decision 1: the scale benchmark keeps its count).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use liveproof_evidence::{judge, Change, ExpectedImage, Target, TargetKind, Verdict};
use liveproof_gather::complete::Completion;
use liveproof_gather::releases::DecodeCache;
use liveproof_gather::session::Session;
use liveproof_gather::{Cluster, ClusterOptions};
use liveproof_testkit::fleet::{deployments, CHANGE_AT, IMAGE};
use liveproof_testkit::SimCluster;

/// Verifies `deployment/svc-0` once (its pods started after the change, or before it with
/// `stale`), then reads its diagnostics: the verdict, and the requests the diagnostics made.
async fn diagnostics_requests(stale: bool) -> (Verdict, u64) {
    let sim = SimCluster::start(deployments("apps", 1, 2, stale), "apps").await;
    let cluster = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(sim.kubeconfig.clone()),
        ..ClusterOptions::default()
    })
    .await
    .expect("connect");
    let change = Change {
        since: Some(CHANGE_AT.parse().expect("time")),
        images: vec![ExpectedImage::parse(IMAGE).expect("image")],
        ..Change::default()
    };
    let (decode_cache, containment, chart_facts, manifests, later) = (
        DecodeCache::default(),
        Mutex::new(BTreeMap::new()),
        Mutex::new(BTreeMap::new()),
        Mutex::new(BTreeMap::new()),
        Mutex::new(BTreeMap::new()),
    );
    let targets = [Target::new(TargetKind::Deployment, None, "svc-0")];
    let session = Session {
        cluster: &cluster,
        completion: Completion {
            change: &change,
            repo: std::path::Path::new("."),
            wait: None,
            max_release_size: 1 << 20,
            request_timeout: Duration::from_secs(5),
            insecure_registries: &[],
            reach: None,
            decode_cache: &decode_cache,
            containment: &containment,
            chart_facts: &chart_facts,
            manifests: &manifests,
            later: &later,
        },
        targets: &targets,
        all_namespaces: false,
    };
    let mut pass = session.pass().await.expect("a pass");
    let mut report = judge(&pass.observed, &change, &pass.targets, "apps");
    let verdict = report.verdict;
    sim.sim.requests().reset();
    session
        .diagnostics(&mut pass.observed, &mut report, Some(5))
        .await;
    (verdict, sim.sim.requests().total())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_cost_nothing_when_live() {
    let (verdict, requests) = diagnostics_requests(false).await;
    assert_eq!(verdict, Verdict::Live);
    assert_eq!(requests, 0, "a live report reads no diagnostics");
    // The same read for a report that is not live does ask: the count above measures it.
    let (verdict, requests) = diagnostics_requests(true).await;
    assert_ne!(verdict, Verdict::Live);
    assert!(
        requests > 0,
        "a report that is not live reads its diagnostics"
    );
}

/// After `pass()` everything the judge reads is in the pass: the Helm release storage decoded,
/// what `--repo` says about `--commit` (whether the revision the GitRepository names contains
/// it, what it did to the HelmRelease's chart) and what the `--version-url` answered. The judge
/// is then called with the cluster, the repository and the version server gone, and reads
/// them all from the pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_is_complete_before_the_judge() {
    use liveproof_evidence::server::VersionExpectation;
    use liveproof_evidence::{Check, Containment, Status};
    // The chart's version bumped by the change's commit; the GitRepository serves a later one.
    let repo = liveproof_testkit::git::Repo::new();
    let chart = |v: &str| format!("apiVersion: v2\nname: inventory\nversion: {v}\n");
    repo.file("charts/inventory/Chart.yaml", &chart("0.4.2"));
    repo.commit("inventory 0.4.2");
    repo.file("charts/inventory/Chart.yaml", &chart("0.4.3"));
    let commit = repo.commit("inventory 0.4.3");
    repo.file("README.md", "apps\n");
    let later = repo.commit("readme");
    let story = "flux-chartversion-bumped-v35-live";
    let path = liveproof_testkit::story::scenarios_dir()
        .join(story)
        .join("cluster.yaml");
    let mut objects = liveproof_gather::offline::read_objects(&path).expect("the story's objects");
    let mut storage = 0;
    for o in &mut objects {
        match o["kind"].as_str() {
            Some("GitRepository") => {
                o["status"]["artifact"]["revision"] = format!("main@sha1:{later}").into();
            }
            Some("Secret") if o["type"] == "helm.sh/release.v1" => storage += 1,
            _ => {}
        }
    }
    assert!(storage > 0, "the story stores its release");
    let app = axum::Router::new().route(
        "/version",
        axum::routing::get(|| async { "inventory 0.4.3\n" }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/version", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let sim = SimCluster::start(objects, "apps").await;
    let cluster = Cluster::connect(&ClusterOptions {
        kubeconfig: Some(sim.kubeconfig.clone()),
        ..ClusterOptions::default()
    })
    .await
    .expect("connect");
    let change = Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        commit: Some(commit.clone()),
        versions: vec![VersionExpectation {
            url: url.as_str().into(),
            expect: "0.4.3".into(),
            json_path: None,
        }],
        ..Change::default()
    };
    let (decode_cache, containment, chart_facts, manifests, later_commits) = (
        DecodeCache::default(),
        Mutex::new(BTreeMap::new()),
        Mutex::new(BTreeMap::new()),
        Mutex::new(BTreeMap::new()),
        Mutex::new(BTreeMap::new()),
    );
    let targets = [Target::new(
        TargetKind::HelmRelease,
        Some("apps"),
        "inventory",
    )];
    let repo_path = repo.path();
    let session = Session {
        cluster: &cluster,
        completion: Completion {
            change: &change,
            repo: &repo_path,
            wait: None,
            max_release_size: 1 << 20,
            request_timeout: Duration::from_secs(5),
            insecure_registries: &[],
            reach: None,
            decode_cache: &decode_cache,
            containment: &containment,
            chart_facts: &chart_facts,
            manifests: &manifests,
            later: &later_commits,
        },
        targets: &targets,
        all_namespaces: false,
    };
    let pass = session.pass().await.expect("a pass");

    let decoded = &pass.observed.releases;
    assert_eq!(decoded.len(), storage, "every storage object decoded");
    assert!(
        liveproof_evidence::releases::storage(&pass.observed)
            .all(|(object, _)| decoded.get(&object).is_some_and(Result::is_ok)),
        "and read"
    );
    assert_eq!(
        pass.observed.containment.get(&later),
        Some(&Containment::Contains),
        "{:?}",
        pass.observed.containment
    );
    let [changed] = pass.observed.chart_changes.as_slice() else {
        panic!("one chart change: {:?}", pass.observed.chart_changes);
    };
    assert_eq!(changed.commit, commit);
    assert_eq!(changed.chart_path, "charts/inventory");
    assert!(changed.version_changed, "{changed:?}");
    assert_eq!(pass.observed.versions.len(), 1, "the version URL read");

    // Nothing is left to read: the judge's answers come from the pass alone.
    server.abort();
    drop(repo);
    let requests = sim.sim.requests().total();
    let report = judge(&pass.observed, &change, &pass.targets, "apps");
    assert_eq!(
        sim.sim.requests().total(),
        requests,
        "the judge asks the cluster nothing"
    );
    drop(sim);
    let version = report
        .targets
        .iter()
        .flat_map(|t| &t.evidence)
        .find(|e| e.check == Check::ServerVersion)
        .expect("the version judged");
    assert_eq!(version.status, Status::Pass, "{version:?}");
    let release = report
        .targets
        .iter()
        .find(|t| t.name == "inventory" && t.via.is_none())
        .expect("the HelmRelease judged");
    assert!(
        release
            .evidence
            .iter()
            .all(|e| !e.detail.contains("cannot be read")),
        "{release:#?}"
    );
}
