//! Issue 33 §2 and issue 38: what `--wait` stops on before the change is live. A failure the
//! controller recorded for the stated revision that waiting will not fix ends it `not_live`
//! with the controller's own message; a transient state (a dependency not ready, a retry
//! announced, a failure on an older revision than the change's) keeps it waiting. An unknown
//! no later event can decide (a same-second tie the template cannot order) ends it
//! `unproven`; a condition the controller will rewrite does not.

use liveproof_testkit::judge as common;

use liveproof_evidence::{
    final_failure, final_unknown, settled, Change, Containment, Observed, Settled, Target,
    TargetKind, Verdict,
};
use serde_json::{json, Value};

use common::{judge, story};

/// The change's commit in the Flux and Argo CD stories (`7453f92…`) and the one before it.
const COMMIT: &str = "7453f92d3435604ac532ef811d34be70bcc29dae";
const OLDER: &str = "c0530affada41d8aa7ef2578c5988130aa70b62f";
/// A later commit, descending from COMMIT.
const LATER: &str = "9e4d7f0aa1b2c3d4e5f60718293a4b5c6d7e8f90";

fn since(at: &str) -> Change {
    Change {
        since: Some(at.parse().expect("a time")),
        ..Change::default()
    }
}

fn with_commit(commit: &str) -> Change {
    Change {
        commit: Some(commit.into()),
        ..since("2026-07-12T10:00:00Z")
    }
}

fn target(kind: TargetKind, ns: &str, name: &str) -> Vec<Target> {
    vec![Target::new(kind, Some(ns), name)]
}

/// The object of `kind` named `name` in `observed`, to edit a story's status.
fn object<'a>(observed: &'a mut Observed, kind: &str, name: &str) -> &'a mut Value {
    observed
        .others
        .iter_mut()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The condition of `type_` in `obj`'s status, to edit.
fn condition<'a>(obj: &'a mut Value, type_: &str) -> &'a mut Value {
    obj["status"]["conditions"]
        .as_array_mut()
        .and_then(|cs| cs.iter_mut().find(|c| c["type"] == type_))
        .unwrap_or_else(|| panic!("no {type_} condition"))
}

fn traced(observed: &mut Observed, revision: &str, containment: Containment) {
    observed.containment.insert(revision.into(), containment);
}

fn kustomization_failed() -> Observed {
    story("flux-kustomization-newest-revision-failed-to-apply")
}

fn apps() -> Vec<Target> {
    target(TargetKind::Kustomization, "flux-system", "apps")
}

#[test]
fn a_kustomization_that_failed_on_the_commit_is_final_with_fluxs_message() {
    let observed = kustomization_failed();
    let change = with_commit("7453f92");
    let failure = final_failure(&observed, &change, &apps(), "default").expect("final");
    assert!(
        failure.starts_with(&format!(
            "flux-system/Kustomization/apps: Ready=False ReconciliationFailed for revision main@sha1:{COMMIT}: Deployment/apps/inventory dry-run failed (Invalid)"
        )),
        "{failure}"
    );
    // The judged report agrees: not live, and settled as a failure.
    let report = judge(&observed, &change, &apps(), "default");
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(
        settled(&observed, &change, &apps(), "default", &report),
        Some(Settled::Failed(failure))
    );
}

#[test]
fn a_failure_on_a_revision_that_descends_from_the_commit_is_final_too() {
    let mut observed = kustomization_failed();
    for (field, revision) in [
        ("lastAttemptedRevision", LATER),
        ("lastAppliedRevision", OLDER),
    ] {
        object(&mut observed, "Kustomization", "apps")["status"][field] =
            json!(format!("main@sha1:{revision}"));
    }
    object(&mut observed, "GitRepository", "acmeco-apps")["status"]["artifact"]["revision"] =
        json!(format!("main@sha1:{LATER}"));
    traced(&mut observed, LATER, Containment::Contains);
    traced(&mut observed, OLDER, Containment::Lacks);
    assert!(final_failure(&observed, &with_commit(COMMIT), &apps(), "default").is_some());
}

#[test]
fn a_kustomization_failing_on_an_older_revision_keeps_waiting() {
    // The controller failed on 7453f92; the change is a later commit it has not tried yet.
    let mut observed = kustomization_failed();
    traced(&mut observed, COMMIT, Containment::Lacks);
    assert_eq!(
        final_failure(&observed, &with_commit(LATER), &apps(), "default"),
        None
    );
    // And when git cannot tell whether the attempted revision holds the change.
    let mut observed = kustomization_failed();
    traced(
        &mut observed,
        COMMIT,
        Containment::Unknown {
            why: "the clone is shallow".into(),
            fix: "git fetch --unshallow".into(),
        },
    );
    assert_eq!(
        final_failure(&observed, &with_commit(LATER), &apps(), "default"),
        None
    );
}

#[test]
fn a_failure_is_not_final_once_the_source_has_a_newer_revision() {
    // 7453f92 failed, and source-controller has fetched a later commit since (a fix, maybe):
    // kustomize-controller tries that one next.
    let mut observed = kustomization_failed();
    object(&mut observed, "GitRepository", "acmeco-apps")["status"]["artifact"]["revision"] =
        json!(format!("main@sha1:{LATER}"));
    traced(&mut observed, LATER, Containment::Contains);
    assert_eq!(
        final_failure(&observed, &with_commit(COMMIT), &apps(), "default"),
        None
    );
    // Argo CD likewise: it compared a later revision than the one whose sync failed.
    let mut observed = story("diag-argocd-sync-failed");
    object(&mut observed, "Application", "inventory")["status"]["sync"]["revision"] = json!(LATER);
    traced(&mut observed, LATER, Containment::Contains);
    assert_eq!(
        final_failure(&observed, &with_commit(COMMIT), &inventory_app(), "default"),
        None
    );
}

#[test]
fn transient_kustomization_reasons_keep_waiting_and_final_ones_stop() {
    let rows = [
        // (reason, message, final, why)
        (
            "DependencyNotReady",
            "dependency 'flux-system/infra' is not ready",
            false,
            "a dependency not ready yet",
        ),
        (
            "Progressing",
            "Reconciliation in progress",
            false,
            "under way",
        ),
        (
            "HealthCheckCanceled",
            "New reconciliation triggered by GitRepository/flux-system/acmeco-apps",
            false,
            "a newer reconciliation replaces it",
        ),
        (
            "PruneFailed",
            "failed to delete Service/apps/old: forbidden",
            false,
            "not in the list: the apply itself went through",
        ),
        (
            "ArtifactFailed",
            "Source artifact not found, retrying in 30s",
            false,
            "Flux says it retries",
        ),
        (
            "ArtifactFailed",
            "Source is not ready, artifact not found, retrying in 30s",
            false,
            "Flux says it retries",
        ),
        (
            "ArtifactFailed",
            "failed to download archive: checksum mismatch",
            true,
            "the artifact of that revision",
        ),
        (
            "BuildFailed",
            "kustomize build failed: accumulating resources: 'deploy.yaml' does not exist",
            true,
            "the revision's manifests do not build",
        ),
        (
            "HealthCheckFailed",
            "timeout waiting for: [Deployment/apps/inventory status: 'InProgress']",
            true,
            "the revision's workloads never became healthy",
        ),
        (
            "ReconciliationFailed",
            "Deployment/apps/broken dry-run failed: .spec.replicas: expected numeric",
            true,
            "the API server rejects the revision",
        ),
    ];
    for (reason, message, want_final, why) in rows {
        let mut observed = kustomization_failed();
        let ks = object(&mut observed, "Kustomization", "apps");
        let ready = condition(ks, "Ready");
        ready["reason"] = json!(reason);
        ready["message"] = json!(message);
        let got = final_failure(&observed, &with_commit(COMMIT), &apps(), "default");
        assert_eq!(got.is_some(), want_final, "{reason} ({why}): {got:?}");
        if let Some(got) = got {
            assert!(
                got.ends_with(message),
                "the controller's own message: {got}"
            );
        }
    }
}

#[test]
fn a_stalled_kustomization_is_final() {
    let mut observed = story("flux-kustomization-applied-live");
    let ks = object(&mut observed, "Kustomization", "apps");
    ks["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(json!({"type": "Stalled", "status": "True", "reason": "InvalidCELExpression",
            "message": "Reconciliation failed terminally due to configuration error: failed to parse expression",
            "lastTransitionTime": "2026-07-12T10:01:09Z", "observedGeneration": 1}));
    let failure =
        final_failure(&observed, &with_commit(COMMIT), &apps(), "default").expect("final");
    assert!(
        failure.contains("Stalled InvalidCELExpression: Reconciliation failed terminally"),
        "{failure}"
    );
}

/// The Kustomization applied the commit before, source-controller cannot fetch the change.
fn source_cannot_fetch() -> Observed {
    let mut observed = story("flux-kustomization-applied-live");
    let ks = object(&mut observed, "Kustomization", "apps");
    for field in ["lastAppliedRevision", "lastAttemptedRevision"] {
        ks["status"][field] = json!(format!("main@sha1:{OLDER}"));
    }
    let repo = object(&mut observed, "GitRepository", "acmeco-apps");
    repo["status"]["artifact"]["revision"] = json!(format!("main@sha1:{OLDER}"));
    repo["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(json!({"type": "FetchFailed", "status": "True", "reason": "GitOperationFailed",
            "message": "failed to checkout and determine revision: unable to clone 'https://github.com/acmeco/apps': authentication required",
            "lastTransitionTime": "2026-07-12T10:00:38Z", "observedGeneration": 1}));
    traced(&mut observed, OLDER, Containment::Lacks);
    observed
}

#[test]
fn a_gitrepository_that_cannot_fetch_the_commit_is_final() {
    let observed = source_cannot_fetch();
    let failure =
        final_failure(&observed, &with_commit(COMMIT), &apps(), "default").expect("final");
    assert_eq!(
        failure,
        "flux-system/GitRepository/acmeco-apps cannot fetch the commit: FetchFailed GitOperationFailed: failed to checkout and determine revision: unable to clone 'https://github.com/acmeco/apps': authentication required"
    );
    // The evidence says it in source-controller's words too.
    let report = judge(&observed, &with_commit(COMMIT), &apps(), "default");
    let revision = report.targets[0]
        .evidence
        .iter()
        .find(|e| e.check == liveproof_evidence::Check::GitopsRevision)
        .expect("gitops_revision");
    assert!(
        revision
            .detail
            .contains("source-controller reports FetchFailed=True GitOperationFailed"),
        "{revision:?}"
    );
}

#[test]
fn the_reason_a_wait_stopped_shows_no_credential_the_controller_quoted() {
    let mut observed = source_cannot_fetch();
    let repo = object(&mut observed, "GitRepository", "acmeco-apps");
    condition(repo, "FetchFailed")["message"] = json!(
        "failed to checkout and determine revision: unable to clone 'https://bot:ghp_s3cr3tT0ken@github.com/acmeco/apps': authentication required"
    );
    let change = with_commit(COMMIT);
    let report = judge(&observed, &change, &apps(), "default");
    let Some(Settled::Failed(reason)) = settled(&observed, &change, &apps(), "default", &report)
    else {
        panic!("not settled");
    };
    assert!(!reason.contains("ghp_s3cr3tT0ken"), "{reason}");
    assert!(reason.contains("github.com/acmeco/apps"), "{reason}");
    // Nor does the evidence that quotes source-controller.
    let shown = serde_json::to_string(&report).expect("json");
    assert!(!shown.contains("ghp_s3cr3tT0ken"), "{shown}");
}

#[test]
fn a_fetch_failure_is_not_final_while_the_artifact_may_hold_the_commit() {
    // Its artifact holds the commit already: a later fetch failing does not stop the apply.
    let mut observed = source_cannot_fetch();
    traced(&mut observed, OLDER, Containment::Contains);
    assert_eq!(
        final_failure(&observed, &with_commit(COMMIT), &apps(), "default"),
        None
    );
    // Git cannot tell.
    let mut observed = source_cannot_fetch();
    observed.containment.clear();
    assert_eq!(
        final_failure(&observed, &with_commit(COMMIT), &apps(), "default"),
        None
    );
    // Its spec changed since: the failure is about an older spec.
    let mut observed = source_cannot_fetch();
    object(&mut observed, "GitRepository", "acmeco-apps")["metadata"]["generation"] = json!(2);
    assert_eq!(
        final_failure(&observed, &with_commit(COMMIT), &apps(), "default"),
        None
    );
}

fn inventory_hr() -> Vec<Target> {
    target(TargetKind::HelmRelease, "apps", "inventory")
}

#[test]
fn a_helmrelease_out_of_retries_for_the_stated_chart_is_final() {
    let observed = story("flux-helmrelease-upgrade-out-of-retries");
    let change = Change {
        chart_version: Some("0.4.3".into()),
        ..since("2026-07-12T10:00:00Z")
    };
    let failure = final_failure(&observed, &change, &inventory_hr(), "default").expect("final");
    assert_eq!(
        failure,
        "apps/HelmRelease/inventory: Stalled RetriesExceeded: Failed to upgrade after 2 attempt(s); Ready=False UpgradeFailed: Helm upgrade failed for release apps/inventory with chart inventory@0.4.3: context deadline exceeded"
    );
    // Stated by its time alone: the attempt failed after the change.
    assert!(final_failure(
        &observed,
        &since("2026-07-12T10:00:00Z"),
        &inventory_hr(),
        "default"
    )
    .is_some());
    // Another chart is stated: helm-controller will try it when its source has it.
    let other = Change {
        chart_version: Some("0.4.4".into()),
        ..since("2026-07-12T10:00:00Z")
    };
    assert_eq!(
        final_failure(&observed, &other, &inventory_hr(), "default"),
        None
    );
    // The failure is older than the change.
    assert_eq!(
        final_failure(
            &observed,
            &since("2026-07-12T10:30:00Z"),
            &inventory_hr(),
            "default"
        ),
        None
    );
    // The spec changed since the attempt: helm-controller resets its counts and tries again.
    let mut newer = observed.clone();
    object(&mut newer, "HelmRelease", "inventory")["metadata"]["generation"] = json!(9);
    assert_eq!(
        final_failure(&newer, &change, &inventory_hr(), "default"),
        None
    );
}

#[test]
fn a_helmrelease_with_retries_left_keeps_waiting() {
    // upgradeFailures 2 of 3 retries: helm-controller tries again.
    let observed = story("diag-flux-helmrelease-ready-false");
    let change = Change {
        chart_version: Some("0.4.3".into()),
        ..since("2026-07-12T10:00:00Z")
    };
    assert_eq!(
        final_failure(&observed, &change, &inventory_hr(), "default"),
        None
    );
    // Past its retries without a Stalled condition (an older helm-controller): final.
    let mut exhausted = observed.clone();
    object(&mut exhausted, "HelmRelease", "inventory")["status"]["upgradeFailures"] = json!(4);
    let failure = final_failure(&exhausted, &change, &inventory_hr(), "default").expect("final");
    assert!(
        failure.contains("out of retries: upgrade failed 4 time(s), spec.upgrade.remediation.retries allows 3; Ready=False UpgradeFailed"),
        "{failure}"
    );
    // Still Reconciling (ProgressingWithRetry): it will try again.
    let mut retrying = exhausted.clone();
    let hr = object(&mut retrying, "HelmRelease", "inventory");
    hr["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(
            json!({"type": "Reconciling", "status": "True", "reason": "ProgressingWithRetry",
            "message": "retrying after 5m0s", "lastTransitionTime": "2026-07-12T10:16:02Z"}),
        );
    assert_eq!(
        final_failure(&retrying, &change, &inventory_hr(), "default"),
        None
    );
    // The RetryOnFailure strategy retries without end.
    let mut strategy = exhausted.clone();
    object(&mut strategy, "HelmRelease", "inventory")["spec"]["upgrade"]["strategy"] =
        json!({"name": "RetryOnFailure", "retryInterval": "5m"});
    assert_eq!(
        final_failure(&strategy, &change, &inventory_hr(), "default"),
        None
    );
    // Unlimited retries.
    let mut unlimited = exhausted;
    object(&mut unlimited, "HelmRelease", "inventory")["spec"]["upgrade"]["remediation"]
        ["retries"] = json!(-1);
    assert_eq!(
        final_failure(&unlimited, &change, &inventory_hr(), "default"),
        None
    );
}

#[test]
fn a_helmrelease_chart_built_from_the_commit_ties_the_attempt_to_it() {
    // reconcileStrategy Revision: the chart version carries the commit it was built from.
    let mut observed = story("flux-helmrelease-upgrade-out-of-retries");
    object(&mut observed, "HelmRelease", "inventory")["status"]["lastAttemptedRevision"] =
        json!("0.4.3+7453f92d3435");
    assert!(final_failure(
        &observed,
        &with_commit("7453f92"),
        &inventory_hr(),
        "default"
    )
    .is_some());
    // Built from an older commit than the change's: not this change's failure.
    let mut older = observed.clone();
    object(&mut older, "HelmRelease", "inventory")["status"]["lastAttemptedRevision"] =
        json!("0.4.3+c0530affada4");
    traced(&mut older, "c0530affada4", Containment::Lacks);
    assert_eq!(
        final_failure(&older, &with_commit(COMMIT), &inventory_hr(), "default"),
        None
    );
}

fn inventory_app() -> Vec<Target> {
    target(TargetKind::Application, "argocd", "inventory")
}

#[test]
fn an_argo_cd_sync_that_failed_on_the_commit_is_final_with_its_message() {
    let observed = story("diag-argocd-sync-failed");
    let failure = final_failure(
        &observed,
        &with_commit("7453f92"),
        &inventory_app(),
        "default",
    )
    .expect("final");
    assert!(
        failure.starts_with(&format!(
            "argocd/Application/inventory: sync operation Failed syncing {COMMIT}: one or more objects failed to apply, reason: admission webhook"
        )),
        "{failure}"
    );
    // Error ends it too; a retry under way (phase Running) does not.
    for (phase, want_final) in [("Error", true), ("Running", false), ("Terminating", false)] {
        let mut observed = observed.clone();
        object(&mut observed, "Application", "inventory")["status"]["operationState"]["phase"] =
            json!(phase);
        assert_eq!(
            final_failure(
                &observed,
                &with_commit("7453f92"),
                &inventory_app(),
                "default"
            )
            .is_some(),
            want_final,
            "{phase}"
        );
    }
    // A sync that failed on an older revision: Argo CD will sync the new one.
    let mut observed = observed.clone();
    traced(&mut observed, COMMIT, Containment::Lacks);
    assert_eq!(
        final_failure(&observed, &with_commit(LATER), &inventory_app(), "default"),
        None
    );
}

#[test]
fn an_argo_cd_operation_that_failed_before_it_had_a_result_names_what_it_was_asked_to_sync() {
    let mut observed = story("diag-argocd-sync-failed");
    let op = &mut object(&mut observed, "Application", "inventory")["status"]["operationState"];
    op.as_object_mut()
        .expect("operationState")
        .remove("syncResult");
    op["phase"] = json!("Error");
    op["message"] = json!("ComparisonError: failed to load target state: rpc error: yaml: line 12: did not find expected key");
    let failure = final_failure(
        &observed,
        &with_commit("7453f92"),
        &inventory_app(),
        "default",
    )
    .expect("final");
    assert!(failure.ends_with("did not find expected key"), "{failure}");
}

/// Argo CD synced the commit and reports the app Degraded on it.
fn degraded() -> Observed {
    let mut observed = story("argocd-synced-live");
    let app = object(&mut observed, "Application", "inventory");
    app["status"]["health"] =
        json!({"status": "Degraded", "lastTransitionTime": "2026-07-12T10:11:07Z"});
    let resources = app["status"]["resources"]
        .as_array_mut()
        .expect("resources");
    let deployment = resources
        .iter_mut()
        .find(|r| r["kind"] == "Deployment")
        .expect("the Deployment");
    deployment["health"] = json!({"status": "Degraded",
        "message": "Deployment \"inventory\" exceeded its progress deadline"});
    observed
}

#[test]
fn an_argo_cd_app_degraded_on_the_synced_commit_is_final() {
    let failure = final_failure(
        &degraded(),
        &with_commit("7453f92"),
        &inventory_app(),
        "default",
    )
    .expect("final");
    assert_eq!(
        failure,
        format!("argocd/Application/inventory: health Degraded at {COMMIT}: Deployment apps/inventory: Deployment \"inventory\" exceeded its progress deadline")
    );
    // Not when the health was assessed before the sync finished, nor while out of sync.
    let mut stale = degraded();
    object(&mut stale, "Application", "inventory")["status"]["health"]["lastTransitionTime"] =
        json!("2026-07-12T10:00:30Z");
    assert_eq!(
        final_failure(&stale, &with_commit("7453f92"), &inventory_app(), "default"),
        None
    );
    let mut out_of_sync = degraded();
    object(&mut out_of_sync, "Application", "inventory")["status"]["sync"]["status"] =
        json!("OutOfSync");
    assert_eq!(
        final_failure(
            &out_of_sync,
            &with_commit("7453f92"),
            &inventory_app(),
            "default"
        ),
        None
    );
}

/// `observed` with pod `name` crash-looping: its container waiting in CrashLoopBackOff after
/// five restarts, the pod not Ready.
fn crash_looping(observed: &mut Observed, name: &str) {
    let pod = observed
        .pods
        .iter_mut()
        .find(|p| p.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no pod {name}"));
    let mut value = serde_json::to_value(&**pod).expect("a pod");
    let status = &mut value["status"];
    for c in status["containerStatuses"]
        .as_array_mut()
        .expect("container statuses")
    {
        c["ready"] = json!(false);
        c["started"] = json!(false);
        c["restartCount"] = json!(5);
        c["state"] = json!({"waiting": {"reason": "CrashLoopBackOff",
            "message": "back-off 2m40s restarting failed container=inventory"}});
        c["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error",
            "startedAt": "2026-07-12T10:04:51Z", "finishedAt": "2026-07-12T10:04:52Z"}});
    }
    for cond in status["conditions"].as_array_mut().expect("conditions") {
        if cond["type"] == "Ready" || cond["type"] == "ContainersReady" {
            cond["status"] = json!("False");
        }
    }
    *pod = std::sync::Arc::new(serde_json::from_value(value).expect("a pod"));
}

/// Argo CD synced the commit; a pod of the Deployment it leads to crash-loops on the synced
/// template. Argo CD may call the app Healthy or Progressing (its health reads the Deployment's
/// counts, never the pods): the crash loop is final all the same, as for a Deployment named
/// directly — the application is what a pipeline verifies.
#[test]
fn a_crash_loop_in_a_workload_argo_cd_synced_the_commit_to_is_final() {
    let mut observed = story("argocd-synced-live");
    crash_looping(&mut observed, "inventory-6c4d9f8b5w-fs7cm");
    // The Deployment counts it: two of three available.
    let deployment = observed
        .workloads
        .of_mut::<k8s_openapi::api::apps::v1::Deployment>()
        .iter_mut()
        .find(|d| d.metadata.name.as_deref() == Some("inventory"))
        .expect("the Deployment");
    let mut value = serde_json::to_value(&**deployment).expect("a Deployment");
    for (field, n) in [
        ("availableReplicas", 2),
        ("readyReplicas", 2),
        ("unavailableReplicas", 1),
    ] {
        value["status"][field] = json!(n);
    }
    *deployment = std::sync::Arc::new(serde_json::from_value(value).expect("a Deployment"));
    let change = with_commit("7453f92");
    let failure = final_failure(&observed, &change, &inventory_app(), "default").expect("final");
    assert!(
        failure.starts_with(
            "apps/Deployment/inventory: pod inventory-6c4d9f8b5w-fs7cm is crash-looping (inventory CrashLoopBackOff"
        ),
        "{failure}"
    );
    // The judged report agrees: not live, and settled as a failure.
    let report = judge(&observed, &change, &inventory_app(), "default");
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(
        settled(&observed, &change, &inventory_app(), "default", &report),
        Some(Settled::Failed(failure))
    );
    // Argo CD has not synced the commit yet (its sync is at an older one): the pods run what it
    // synced before, and the sync to come replaces them.
    let app = object(&mut observed, "Application", "inventory");
    app["status"]["sync"]["revision"] = json!(OLDER);
    app["status"]["operationState"]["syncResult"]["revision"] = json!(OLDER);
    app["status"]["operationState"]["operation"]["sync"]["revision"] = json!(OLDER);
    traced(&mut observed, OLDER, Containment::Lacks);
    assert_eq!(
        final_failure(&observed, &change, &inventory_app(), "default"),
        None
    );
}

fn hello() -> Vec<Target> {
    target(TargetKind::KnativeService, "web", "hello")
}

#[test]
fn a_knative_revision_failed_for_the_current_spec_is_final() {
    let observed = story("knative-service-latest-created-not-ready");
    let change = since("2026-07-12T10:00:00Z");
    let failure = final_failure(&observed, &change, &hello(), "default").expect("final");
    assert!(
        failure.starts_with("web/Service/hello: ConfigurationsReady=False RevisionFailed: Revision \"hello-00002\" failed"),
        "{failure}"
    );
    // Failed before the change: another spec's failure.
    assert_eq!(
        final_failure(
            &observed,
            &since("2026-07-12T10:05:00Z"),
            &hello(),
            "default"
        ),
        None
    );
    // Knative has not observed the current spec yet.
    let mut behind = observed.clone();
    let ksvc = behind
        .others
        .iter_mut()
        .find(|o| {
            o["kind"] == "Service"
                && o["metadata"]["name"] == "hello"
                && o["apiVersion"] == "serving.knative.dev/v1"
        })
        .expect("the ksvc");
    ksvc["metadata"]["generation"] = json!(3);
    assert_eq!(final_failure(&behind, &change, &hello(), "default"), None);
}

/// `verify` of the story's Deployment at `change`: the report and what settles it.
fn settle(observed: &Observed, change: &Change, targets: &[Target]) -> (Verdict, Option<Settled>) {
    let report = judge(observed, change, targets, "default");
    (
        report.verdict,
        settled(observed, change, targets, "default", &report),
    )
}

fn inventory() -> Vec<Target> {
    target(TargetKind::Deployment, "apps", "inventory")
}

#[test]
fn a_pod_start_tie_the_template_cannot_show_is_undecidable() {
    // The first new pod started at 10:06:25; a restart or ConfigMap change states nothing the
    // template shows.
    let observed = story("expect-env-present-rolled-out");
    let change = Change {
        stated_by: Some("the restart".into()),
        ..since("2026-07-12T10:06:25Z")
    };
    let (verdict, settled) = settle(&observed, &change, &inventory());
    assert_eq!(verdict, Verdict::Unproven);
    let Some(Settled::Undecidable(why)) = settled else {
        panic!("not settled: {settled:?}");
    };
    assert!(
        why.contains("started at 2026-07-12T10:06:25Z, in the change's own second")
            && why.contains("--since"),
        "{why}"
    );
}

#[test]
fn a_tie_the_template_decides_or_a_finer_time_orders_is_not_undecidable() {
    let observed = story("expect-env-present-rolled-out");
    // The template shows the stated image: the tie counts as after, and it is live.
    let image = Change {
        images: vec![
            liveproof_evidence::ExpectedImage::parse("ghcr.io/acme/inventory:1.4.0")
                .expect("image"),
        ],
        ..since("2026-07-12T10:06:25Z")
    };
    assert_eq!(
        settle(&observed, &image, &inventory()),
        (Verdict::Live, None)
    );
    // A change time in the second before: no tie, nothing unknown to settle.
    let before = Change {
        stated_by: Some("the restart".into()),
        ..since("2026-07-12T10:06:24Z")
    };
    assert_eq!(settle(&observed, &before, &inventory()).1, None);
    // An unknown that is not a tie (no change time read from the pods) is not settled here.
    let report = judge(&observed, &Change::default(), &inventory(), "default");
    assert_eq!(report.verdict, Verdict::Unproven);
    assert_eq!(final_unknown(&observed, &Change::default(), &report), None);
}

#[test]
fn a_pod_tie_on_a_rollout_still_under_way_waits_for_the_rollout() {
    // Half-way: old pods still serve (pods_current fails), so the verdict is not_live and
    // only a final failure could end the wait; nothing final here.
    let observed = story("rolling-update-halfway-old-pods-still-ready");
    let report = judge(
        &observed,
        &since("2026-07-12T10:00:00Z"),
        &inventory(),
        "default",
    );
    assert_eq!(report.verdict, Verdict::NotLive);
    assert_eq!(
        settled(
            &observed,
            &since("2026-07-12T10:00:00Z"),
            &inventory(),
            "default",
            &report
        ),
        None
    );
}

#[test]
fn a_release_deployed_in_the_changes_second_is_undecidable() {
    // Revision 35 was deployed at 10:05:58.2; a change time stamped to that second ties.
    let observed = story("release-stored-in-configmap");
    let targets = target(TargetKind::Release, "apps", "inventory");
    let (verdict, settled) = settle(&observed, &since("2026-07-12T10:05:58Z"), &targets);
    assert_eq!(verdict, Verdict::Unproven);
    let Some(Settled::Undecidable(why)) = settled else {
        panic!("not settled: {settled:?}");
    };
    assert!(
        why.starts_with("apps/inventory.v35 was deployed at 2026-07-12T10:05:58.20188431Z, in the change's own second"),
        "{why}"
    );
    // To the sub-second, it is ordered.
    let (_, settled) = settle(&observed, &since("2026-07-12T10:05:58.1Z"), &targets);
    assert!(
        !matches!(settled, Some(Settled::Undecidable(_))),
        "{settled:?}"
    );
}

#[test]
fn a_release_whose_first_pod_started_in_the_changes_second_is_undecidable() {
    let observed = story("release-pod-started-in-the-changes-second-unproven");
    let targets = target(TargetKind::Release, "apps", "inventory");
    let (verdict, settled) = settle(&observed, &since("2026-07-12T10:06:24.1Z"), &targets);
    assert_eq!(verdict, Verdict::Unproven);
    let Some(Settled::Undecidable(why)) = settled else {
        panic!("not settled: {settled:?}");
    };
    assert!(
        why.starts_with("apps/Deployment/inventory: container inventory of pod inventory-7b9fd5c4xk-l9nzd started at 2026-07-12T10:06:24Z"),
        "{why}"
    );
}

#[test]
fn a_condition_tie_is_not_undecidable() {
    // helm-controller's conditions changed at 14:22:06 on 8 July: the next reconcile rewrites
    // them, so the tie may still resolve.
    let observed = story("flux-chartversion-not-bumped");
    let change = since("2026-07-08T14:22:06Z");
    let report = judge(&observed, &change, &inventory_hr(), "default");
    assert!(report.targets[0]
        .evidence
        .iter()
        .any(|e| e.check == liveproof_evidence::Check::ConditionFresh
            && e.status == liveproof_evidence::Status::Unknown));
    assert!(!matches!(
        final_unknown(&observed, &change, &report),
        Some(why) if why.contains("HelmRelease")
    ));
}
