//! The CustomResourceDefinitions the simulator serves: its copies are the upstream files the
//! modules pinned in `e2e/peers/crds/go.mod` carry (`e2e/build-peers.sh` copies those into the
//! peers' bin directory), and it serves them as an API server does, GET and LIST.

use liveproof_testkit::sim_http as common;

use common::{start_with, Http};
use liveproof_sim::{crds, Simulator};

/// Byte for byte: a schema edited by hand, or an upstream bump without new copies, fails here.
#[test]
fn the_copies_are_the_pinned_upstream_files() {
    let bin = liveproof_testkit::peers::peers_bin().unwrap_or_else(|e| panic!("{e}"));
    for (file, gz) in crds::copies() {
        let upstream = std::fs::read_to_string(bin.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", bin.join(file).display()));
        // Flagger's file holds the Canary, MetricTemplate and AlertProvider CRDs: the copy is
        // the first document.
        let upstream = match upstream.split_once("\n---\n") {
            Some((first, _)) if file == "flagger-crd.yaml" => format!("{first}\n"),
            _ => upstream,
        };
        let copy = crds::text(gz).expect("the copy decompresses");
        assert!(
            copy == upstream,
            "crates/evidence/src/kinds/crds copy of {file} differs from the pinned module's"
        );
    }
}

#[tokio::test]
async fn the_crds_are_served_by_name_and_in_a_list() {
    let sim = start_with(Simulator::new().with_gitops_crds()).await;
    let h = Http::new(&sim);
    let base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let list = h.get(base).await;
    assert_eq!(list.status, 200);
    let mut names: Vec<&str> = list.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "canaries.flagger.app",
            "rollouts.argoproj.io",
            "services.serving.knative.dev"
        ]
    );
    let canary = h.get(&format!("{base}/canaries.flagger.app")).await;
    assert_eq!(canary.status, 200);
    assert_eq!(canary.body["spec"]["names"]["kind"], "Canary");
    assert!(
        canary.body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
            ["properties"]["canaryWeight"]
            .is_object()
    );
    assert_eq!(canary.body["status"]["acceptedNames"]["plural"], "canaries");
}
