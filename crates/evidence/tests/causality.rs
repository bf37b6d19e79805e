//! Issue 38's judge rule: a controller that acted on a revision that is the change's commit, or
//! descends from it, acted after the commit — causality orders them, not the clock. Argo CD
//! stamps `finishedAt`, Flux its conditions, git the commit, all in whole seconds: a webhook and
//! a sync within the commit's own second tie by the clock, yet the sync came after the commit.
//! The rule holds when the change time is the commit's own; a `--since` later than the commit
//! is ordered by the clock alone.

use liveproof_testkit::judge as common;

use liveproof_evidence::{Change, Check, Containment, Evidence, Status, Target, TargetKind};
use serde_json::json;

use common::{judge, story};

const COMMIT: &str = "7453f92d3435604ac532ef811d34be70bcc29dae";
const LATER: &str = "9e4d7f0aa1b2c3d4e5f60718293a4b5c6d7e8f90";

fn at(text: &str) -> jiff::Timestamp {
    text.parse().expect("a time")
}

/// `--commit COMMIT` whose committer time (the change time) is `committed`.
fn committed(commit: &str, committed: &str) -> Change {
    Change {
        since: Some(at(committed)),
        commit: Some(commit.into()),
        commit_time: Some(at(committed)),
        ..Change::default()
    }
}

fn fresh(story_name: &str, change: &Change, target: Target) -> Evidence {
    let report = judge(&story(story_name), change, &[target], "default");
    report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ConditionFresh)
        .cloned()
        .expect("condition_fresh")
}

fn inventory_app() -> Target {
    Target::new(TargetKind::Application, Some("argocd"), "inventory")
}

#[test]
fn an_argo_cd_sync_of_the_commit_in_its_own_second_came_after_it() {
    // Argo CD finished syncing 7453f92 at 10:01:07; the commit was made in that same second.
    let fresh = fresh(
        "argocd-synced-live",
        &committed("7453f92", "2026-07-12T10:01:07Z"),
        inventory_app(),
    );
    assert_eq!(fresh.status, Status::Pass, "{fresh:?}");
    assert!(fresh.detail.contains("causality orders them"), "{fresh:?}");
}

#[test]
fn a_sync_of_a_descendant_of_the_commit_came_after_it_too() {
    let mut observed = story("argocd-synced-live");
    for o in &mut observed.others {
        if o["kind"] == "Application" {
            for p in [
                "/status/sync/revision",
                "/status/operationState/syncResult/revision",
            ] {
                *o.pointer_mut(p).expect(p) = json!(LATER);
            }
        }
    }
    observed
        .containment
        .insert(LATER.into(), Containment::Contains);
    let change = committed(COMMIT, "2026-07-12T10:01:07Z");
    let report = judge(&observed, &change, &[inventory_app()], "default");
    let fresh = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ConditionFresh)
        .expect("condition_fresh");
    assert_eq!(fresh.status, Status::Pass, "{fresh:?}");
}

#[test]
fn without_the_commits_own_time_the_clock_alone_orders_a_tie() {
    // `--since` in the sync's second, later than the commit: a tie nothing orders.
    let change = Change {
        since: Some(at("2026-07-12T10:01:07Z")),
        commit: Some("7453f92".into()),
        commit_time: Some(at("2026-07-12T09:58:00Z")),
        ..Change::default()
    };
    let fresh = fresh("argocd-synced-live", &change, inventory_app());
    assert_eq!(fresh.status, Status::Unknown, "{fresh:?}");
    // The commit's time was not read (no --repo): the clock again.
    let change = Change {
        commit_time: None,
        ..committed("7453f92", "2026-07-12T10:01:07Z")
    };
    let fresh = self::fresh("argocd-synced-live", &change, inventory_app());
    assert_eq!(fresh.status, Status::Unknown, "{fresh:?}");
}

#[test]
fn a_kustomizations_ready_naming_the_applied_commit_came_after_it() {
    // kustomize-controller's Ready ("Applied revision: main@sha1:7453f92…") changed at 10:01:09.
    let target = Target::new(TargetKind::Kustomization, Some("flux-system"), "apps");
    let fresh = fresh(
        "flux-kustomization-applied-live",
        &committed("7453f92", "2026-07-12T10:01:09Z"),
        target.clone(),
    );
    assert_eq!(fresh.status, Status::Pass, "{fresh:?}");
    assert!(
        fresh
            .detail
            .contains(&format!("to name main@sha1:{COMMIT}")),
        "{fresh:?}"
    );
    // A Ready that does not name the revision (written before it was applied, say) is not
    // ordered by it.
    let mut observed = story("flux-kustomization-applied-live");
    for o in &mut observed.others {
        if o["kind"] == "Kustomization" {
            o["status"]["conditions"][0]["message"] = json!("Applied revision: main@sha1:c0530af");
        }
    }
    let report = judge(
        &observed,
        &committed("7453f92", "2026-07-12T10:01:09Z"),
        &[target],
        "default",
    );
    let fresh = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == Check::ConditionFresh)
        .expect("condition_fresh");
    assert_eq!(fresh.status, Status::Unknown, "{fresh:?}");
}

#[test]
fn a_helmreleases_conditions_naming_a_chart_built_from_the_commit_came_after_it() {
    // reconcileStrategy Revision: "with chart inventory@0.4.2+7453f92d3435", at 10:06:04.
    let fresh = fresh(
        "flux-revision-strategy-template-change-live",
        &committed("7453f92", "2026-07-12T10:06:04Z"),
        Target::new(TargetKind::HelmRelease, Some("apps"), "inventory"),
    );
    assert_eq!(fresh.status, Status::Pass, "{fresh:?}");
    assert!(fresh.detail.contains("0.4.2+7453f92d3435"), "{fresh:?}");
}
