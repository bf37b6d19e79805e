//! A session's reads against the simulator: the diagnostics read after the judge costs a live
//! report no request (issue 34's plan, §7 decision 1: the scale benchmark keeps its count).

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
