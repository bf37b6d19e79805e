//! API faults never lie: a 404 that names no object is not "does not exist" unless discovery
//! says the resource is not served (a missing CRD).

mod common;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;

fn now() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second()).expect("now")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_without_a_name_is_an_error_not_a_missing_helmrelease() {
    let cluster = common::Cluster::start(
        demo::story_before(now() - SignedDuration::from_hours(96)),
        demo::NS,
    )
    .await;
    let args = [
        "verify",
        "helmrelease/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        "1h",
        "-o",
        "json",
    ];
    // The first request is the HelmRelease GET: a proxy answers it with a bare 404.
    cluster.sim.faults().fail_next(1, 404, None);
    let run = common::liveproof(&args).await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    // No verdict on a read that failed: the error document.
    let doc = run.error_document();
    assert!(doc.error.message.contains("404"), "{doc:?}");
    assert!(
        run.stderr.contains("404") && run.stderr.contains("HelmRelease apps/inventory"),
        "{}",
        run.stderr
    );
    // Without the fault the same command reads the HelmRelease (and judges it not live).
    let clean = common::liveproof(&args).await;
    assert_eq!(clean.code, 1, "{}{}", clean.stdout, clean.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_that_is_not_installed_still_means_absent() {
    // No HelmRelease kind served at all (no Flux): discovery says so, and the target is absent.
    let objects: Vec<serde_json::Value> =
        demo::story_before(now() - SignedDuration::from_hours(96))
            .into_iter()
            .filter(|o| {
                o["apiVersion"]
                    .as_str()
                    .is_some_and(|v| !v.contains("fluxcd"))
            })
            .collect();
    let cluster = common::Cluster::start(objects, demo::NS).await;
    let run = common::liveproof(&[
        "verify",
        "helmrelease/inventory",
        "--kubeconfig",
        cluster.kubeconfig(),
        "--since",
        "1h",
        "-o",
        "json",
    ])
    .await;
    // Absent is absent: an input error (exit 2) naming it, never a verdict and never live.
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("helmrelease apps/inventory not found"),
        "{}",
        run.stderr
    );
}
