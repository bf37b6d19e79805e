//! Missing evidence is `unknown`, never a pass: every check accounts for every serving pod and
//! every container it declares, not only for the statuses that happen to be present.

use liveproof_testkit::judge as common;

use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::{
    judge, Change, Check, ExpectedImage, Observed, Report, Status, Target, TargetKind, Verdict,
};

fn inventory() -> Target {
    Target::new(TargetKind::Deployment, Some("apps"), "inventory")
}

fn change() -> Change {
    Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        images: vec![ExpectedImage::parse("ghcr.io/acme/inventory:1.4.0").expect("image")],
        digests: DigestPolicy::Off,
        ..Change::default()
    }
}

fn verify(observed: &Observed) -> Report {
    judge(observed, &change(), &[inventory()], "default")
}

fn status(report: &Report, check: Check) -> Status {
    report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == check)
        .map(|e| e.status)
        .unwrap_or_else(|| panic!("{check} in {report:#?}"))
}

/// The story's Ready pods (all on the current revision, started after the change).
fn ready_pods(observed: &mut Observed) -> Vec<&mut liveproof_evidence::pod::Pod> {
    observed
        .pods
        .iter_mut()
        .map(std::sync::Arc::make_mut)
        .filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
        .collect()
}

#[test]
fn the_story_is_live_to_begin_with() {
    let observed = common::story("gitops-reconciled-new-tag-rolled-out");
    assert_eq!(verify(&observed).verdict, Verdict::Live);
}

#[test]
fn a_ready_pod_without_container_statuses_is_unknown_not_a_pass() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    let pods = ready_pods(&mut observed);
    assert!(pods.len() > 1);
    if let Some(status) = pods.into_iter().next().and_then(|p| p.status.as_mut()) {
        status.container_statuses = None;
    }
    let report = verify(&observed);
    assert_eq!(
        status(&report, Check::PodRestarted),
        Status::Unknown,
        "{report:#?}"
    );
    assert_eq!(report.verdict, Verdict::Unproven);
}

#[test]
fn a_container_with_no_status_entry_is_unknown_not_a_pass() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    let pods = ready_pods(&mut observed);
    // A second container the pod runs, whose status the dump lacks.
    if let Some(spec) = pods.into_iter().next().and_then(|p| p.spec.as_mut()) {
        let mut sidecar = spec.containers[0].clone();
        sidecar.name = "proxy".into();
        spec.containers.push(sidecar);
    }
    let report = verify(&observed);
    let restarted = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::PodRestarted)
        .expect("pod_restarted");
    assert_eq!(restarted.status, Status::Unknown, "{report:#?}");
    assert!(restarted.detail.contains("proxy"), "{}", restarted.detail);
    assert_eq!(report.verdict, Verdict::Unproven);
}

#[test]
fn a_digest_never_read_is_unknown_not_a_match() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    // The tag resolves to exactly what the pods record: every row is current.
    observed.tags.insert(
        "ghcr.io/acme/inventory:1.4.0".into(),
        Ok(liveproof_evidence::digest::ResolvedTag {
            digest: "sha256:2dc7ac3690538cfc3066f742c59f6b3ad37d711d3c2dd2b2da532bf6cd873f35"
                .into(),
            platforms: Vec::new(),
        }),
    );
    let rows =
        liveproof_evidence::digest_rows(&observed, &inventory(), "apps", DigestPolicy::AllTags);
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| r.verdict == liveproof_evidence::RowVerdict::Current),
        "{rows:#?}"
    );
    let pods = ready_pods(&mut observed);
    if let Some(status) = pods.into_iter().next().and_then(|p| p.status.as_mut()) {
        status.container_statuses = None;
    }
    let rows =
        liveproof_evidence::digest_rows(&observed, &inventory(), "apps", DigestPolicy::AllTags);
    assert!(
        rows.iter()
            .all(|r| r.verdict != liveproof_evidence::RowVerdict::Current),
        "a pod whose digest was not read cannot make the workload current: {rows:#?}"
    );
}

/// A container whose image is no reference a runtime could pull is never left out of the
/// digest check (a row skipped is a workload that looks current): its row is unknown.
#[test]
fn an_image_no_runtime_could_pull_is_an_unknown_digest_row_not_a_skipped_one() {
    let mut observed = common::story("gitops-reconciled-new-tag-rolled-out");
    let deployment = std::sync::Arc::make_mut(
        &mut observed
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::Deployment>()[0],
    );
    let containers = deployment
        .spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
        .map(|s| &mut s.containers)
        .expect("a pod template");
    containers[0].image = Some("ghcr.io/Acme/Inventory:1.4.0".into());
    let rows =
        liveproof_evidence::digest_rows(&observed, &inventory(), "apps", DigestPolicy::AllTags);
    assert!(
        rows.iter()
            .any(|r| r.image == "ghcr.io/Acme/Inventory:1.4.0"
                && r.verdict == liveproof_evidence::RowVerdict::Unknown),
        "{rows:#?}"
    );
}

// Issue 33: a check passes only on what it read. For every check and every kind that produces
// it, the table (`liveproof_testkit::reads`) names a story where it passes and each input it
// passes on; taken away — absent from a dump, refused by the cluster, absent from a full
// listing — the check is never `pass`. Inputs read but not needed are listed there with why,
// and hold as they say.

use liveproof_testkit::reads::{self, Row, Unread};

/// The story as the row states it: its objects, and what its `prepare` adds.
fn prepared(row: &Row) -> (Observed, Change) {
    let mut observed = reads::observed(row.story);
    let mut change = row.change.clone();
    if let Some(prepare) = row.prepare {
        prepare(&mut observed, &mut change);
    }
    (observed, change)
}

/// The status of `row`'s check in `report`, `None` when its report row or the check is not
/// there (the input that leads to it was not read).
fn status_of(row: &Row, report: &Report) -> Option<Status> {
    report
        .targets
        .iter()
        .find(|t| {
            let name = format!("{}/{}/{}", t.kind, t.namespace, t.name);
            name == row.report || t.kind.name() == row.report
        })?
        .evidence
        .iter()
        .find(|e| e.check == row.check)
        .map(|e| e.status)
}

fn judge_prepared(row: &Row, observed: &Observed, change: &Change) -> Report {
    let ns = row.target.namespace.clone().unwrap_or_default();
    common::judge(observed, change, std::slice::from_ref(&row.target), &ns)
}

#[test]
fn every_check_passes_only_on_what_it_read() {
    let mut problems = Vec::new();
    for row in reads::rows() {
        let (observed, change) = prepared(&row);
        let baseline = judge_prepared(&row, &observed, &change);
        let what = format!("{} of {} in {}", row.check, row.report, row.story);
        if status_of(&row, &baseline) != Some(Status::Pass) {
            problems.push(format!(
                "{what} does not pass to begin with: {:?}",
                status_of(&row, &baseline)
            ));
            continue;
        }
        let namespaces = row.namespaces(&observed);
        for input in row.inputs {
            for unread in Unread::ALL {
                let without = reads::without(&observed, &namespaces, *input, unread);
                let report = judge_prepared(&row, &without, &change);
                if status_of(&row, &report) == Some(Status::Pass) {
                    problems.push(format!("{what}: passes without {input} ({unread:?})"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn what_a_check_reads_without_needing_it_holds_as_the_table_says() {
    let mut problems = Vec::new();
    for n in reads::not_needed() {
        let (observed, change) = prepared(&n.row);
        let namespaces = n.row.namespaces(&observed);
        for (unread, holds) in n.holds {
            let without = reads::without(&observed, &namespaces, n.input, *unread);
            let report = judge_prepared(&n.row, &without, &change);
            let got = status_of(&n.row, &report);
            if got != Some(*holds) {
                problems.push(format!(
                    "{} of {} without {} ({unread:?}): {got:?}, the table says {holds:?} ({})",
                    n.row.check, n.row.report, n.input, n.why
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every check and every target kind has its rows: a new one cannot go unaudited.
#[test]
fn the_table_covers_every_check_and_every_kind() {
    let schema = schemars::schema_for!(Check);
    let names: Vec<String> = schema
        .get("enum")
        .and_then(|e| e.as_array())
        .expect("Check is a string enum")
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    assert!(names.len() >= 14, "{names:?}");
    let rows = reads::rows();
    for name in &names {
        let check: Check = serde_json::from_value(serde_json::json!(name)).expect("a check");
        assert!(
            rows.iter().any(|r| r.check == check),
            "the table of what each check reads has no row for {name}: add one in crates/testkit/src/reads.rs"
        );
    }
    for spec in liveproof_evidence::KINDS {
        assert!(
            rows.iter()
                .any(|r| r.target.kind == spec.kind || r.report_kind() == spec.kind_name),
            "the table of what each check reads has no row for target kind {}: add one in crates/testkit/src/reads.rs",
            spec.cli_name
        );
    }
}
