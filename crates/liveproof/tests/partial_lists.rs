//! Issue 21, point 1: a partial list is never the whole list. A server whose pod LIST pages
//! one object at a time, answers its first continue with `410 Gone`, and still sends a continue
//! token when listed again, once made liveproof judge one new pod as "every pod" and say `live`
//! while an old pod served. A list is complete only when its last response carries no continue
//! token; one that cannot be completed (a repeated token, pages without end) is an error.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use liveproof_sim::PagingFault;

/// kubernetes/kubectl#1628's story: the Deployment counts 3/3 updated and available, but a
/// Terminating old pod still runs and serves. Its name sorts after the new pods', so a list cut
/// after the first page leaves it out.
const STORY: &str = "old-pod-terminating-still-running";

async fn verify_with(fault: PagingFault) -> common::Run {
    let story = liveproof_testkit::Story::load(STORY).expect("story");
    let cluster = SimCluster::from_file(&story.cluster_yaml(), "apps").await;
    cluster.sim.faults().misbehave_lists("pods", fault);
    common::liveproof()
        .story(STORY)
        .on(&cluster)
        .args(&["--request-timeout", "5s"])
        .json()
        .run()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_object_pages_and_an_expired_continue_still_read_every_pod() {
    let run = verify_with(PagingFault::OneObjectPagesFirstContinueGone).await;
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report = run.report();
    let pods_current = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == liveproof_evidence::Check::PodsCurrent)
        .expect("pods_current");
    assert_eq!(
        pods_current.status,
        liveproof_evidence::Status::Fail,
        "the old pod on the last page is seen: {pods_current:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_that_never_completes_is_an_error_not_a_verdict() {
    for fault in [PagingFault::RepeatedToken, PagingFault::EndlessContinue] {
        let run = verify_with(fault).await;
        assert_eq!(run.code, 2, "{fault:?}\n{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("never completed the list of pods"),
            "{fault:?}: {}",
            run.stderr
        );
    }
}
