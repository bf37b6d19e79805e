//! Issue 33, on a cluster: a check passes only on what it read. Every input the table of what
//! each check reads (`liveproof_testkit::reads`) says a check passes on is forbidden on the
//! simulator serving the story (RBAC: 403 on get, list and watch of its resource), and the
//! real `liveproof verify` of the story must not pass the check: its report says `unknown` (or
//! `fail`) there, or the command stops with exit 2 naming the refusal. The pure half, with
//! dumps and full listings as well, is the evidence crate's `fail_closed`.

use liveproof_testkit::binary as common;

use std::collections::BTreeMap;

use liveproof_evidence::{Report, Status};
use liveproof_testkit::reads::{self, Row};
use liveproof_testkit::{SimCluster, Story};

/// The status of `row`'s check in `report`, `None` when its report row or the check is not
/// there.
fn status_of(row: &Row, report: &Report) -> Option<Status> {
    report
        .targets
        .iter()
        .find(|t| format!("{}/{}/{}", t.kind, t.namespace, t.name) == row.report)?
        .evidence
        .iter()
        .find(|e| e.check == row.check)
        .map(|e| e.status)
}

/// The story verified on the simulator with `denied` (a resource's plural) forbidden.
async fn verified(story: &Story, denied: Option<&str>) -> liveproof_testkit::Run {
    let cluster = SimCluster::from_file(&story.cluster_yaml(), &story.namespace()).await;
    if let Some(resource) = denied {
        for verb in ["get", "list", "watch"] {
            cluster.sim.deny(verb, resource, None);
        }
    }
    let run = common::liveproof()
        .story(&story.name)
        .on(&cluster)
        .json()
        .run()
        .await;
    cluster.sim.shutdown().await;
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_read_never_passes_a_check() {
    // One run per story and forbidden resource: every row it bears on is read off that report.
    // Rows whose story is prepared with what a dump cannot hold (a registry's or a server's
    // answer, git's) have no API read to forbid.
    let mut by_story: BTreeMap<&str, BTreeMap<&str, Vec<Row>>> = BTreeMap::new();
    for row in reads::rows().into_iter().filter(|r| r.prepare.is_none()) {
        for input in row.inputs {
            if let Some(resource) = input.resource() {
                by_story
                    .entry(row.story)
                    .or_default()
                    .entry(resource.plural())
                    .or_default()
                    .push(row.clone());
            }
        }
    }
    let mut problems = Vec::new();
    for (name, denials) in &by_story {
        let story = Story::load(name).expect("the story");
        assert!(story.runs("live"), "{name}: the table's stories run live");
        let baseline = verified(&story, None).await.report();
        for row in denials.values().flatten() {
            if status_of(row, &baseline) != Some(Status::Pass) {
                problems.push(format!(
                    "{} of {} in {name} does not pass on the simulator to begin with: {:?}",
                    row.check,
                    row.report,
                    status_of(row, &baseline)
                ));
            }
        }
        for (resource, rows) in denials {
            let run = verified(&story, Some(resource)).await;
            if run.code == 2 {
                if !run.stderr.contains("forbidden") {
                    problems.push(format!(
                        "{name} with {resource} forbidden: exit 2 without naming the refusal: {}",
                        run.stderr
                    ));
                }
                continue;
            }
            let report = run.report();
            for row in rows {
                if status_of(row, &report) == Some(Status::Pass) {
                    problems.push(format!(
                        "{} of {} in {name} passes with {resource} forbidden",
                        row.check, row.report
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
