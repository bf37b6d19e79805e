//! The batched gather (one LIST of a kind per namespace, one pod LIST per namespace) and the
//! per-object gather (a GET per target, a pod LIST per selector) read the same cluster into the
//! same reports: on every story of the corpus, with every workload of the story's cluster as a
//! target, in its namespace and with `-A`. Only the number of requests differs.

use liveproof_evidence::{judge, resolve_targets, Change, Report, Target, TargetKind};
use liveproof_gather::{Cluster, ClusterOptions};
use liveproof_testkit::SimCluster;
use liveproof_testkit::Story;
use serde_json::Value;

/// Every Deployment, StatefulSet and DaemonSet the objects hold, as targets in their namespace
/// (`named`) or without one (for `-A`).
fn workload_targets(objects: &[Value], named: bool) -> Vec<Target> {
    objects
        .iter()
        .filter_map(|o| {
            let kind = match o["kind"].as_str()? {
                "Deployment" => TargetKind::Deployment,
                "StatefulSet" => TargetKind::StatefulSet,
                "DaemonSet" => TargetKind::DaemonSet,
                _ => return None,
            };
            let ns = o.pointer("/metadata/namespace")?.as_str()?;
            let name = o.pointer("/metadata/name")?.as_str()?;
            Some(Target::new(kind, named.then_some(ns), name))
        })
        .collect()
}

async fn report(cluster: &Cluster, targets: &[Target], all_namespaces: bool) -> Report {
    let observed = cluster
        .gather(targets, all_namespaces)
        .await
        .expect("gather");
    let resolved = resolve_targets(
        &observed,
        targets,
        cluster.default_namespace(),
        all_namespaces,
    );
    let change = Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        ..Change::default()
    };
    judge(&observed, &change, &resolved, cluster.default_namespace())
}

#[tokio::test]
async fn batched_and_per_object_gathers_give_the_same_reports_on_every_story() {
    let stories = Story::all().expect("the corpus");
    let mut compared = 0;
    let mut batched_somewhere = false;
    for story in stories.iter().filter(|s| s.runs("live")) {
        let objects =
            liveproof_gather::offline::read_objects(&story.cluster_yaml()).expect("objects");
        let kube = SimCluster::start(objects.clone(), &story.namespace()).await;
        let cluster = Cluster::connect(&ClusterOptions {
            kubeconfig: Some(kube.kubeconfig.clone()),
            ..ClusterOptions::default()
        })
        .await
        .expect("connect");
        for (named, all_namespaces) in [(true, false), (false, true)] {
            let targets = workload_targets(&objects, named);
            if targets.is_empty() {
                continue;
            }
            let one_by_one = cluster.clone().with_batch_at(usize::MAX);
            let before = one_by_one.request_count();
            let alone = report(&one_by_one, &targets, all_namespaces).await;
            let alone_requests = one_by_one.request_count() - before;

            let batching = cluster.clone().with_batch_at(1);
            let before = batching.request_count();
            let batched = report(&batching, &targets, all_namespaces).await;
            let batched_requests = batching.request_count() - before;

            assert_eq!(
                serde_json::to_value(&batched).expect("json"),
                serde_json::to_value(&alone).expect("json"),
                "story {}{}: the batched gather judged differently",
                story.name,
                if all_namespaces { " with -A" } else { "" }
            );
            assert!(
                batched_requests <= alone_requests,
                "story {}: {batched_requests} batched requests against {alone_requests}",
                story.name
            );
            batched_somewhere |= batched_requests < alone_requests;
            compared += 1;
        }
        kube.sim.shutdown().await;
    }
    assert!(
        compared >= 24,
        "only {compared} comparisons: the corpus lost stories"
    );
    assert!(batched_somewhere, "batching saved no request on any story");
}
