//! `--wait`'s incremental judge: after a watch event, judging only the targets it touched gives
//! the report the full judge gives, and judges fewer targets.

use std::collections::BTreeMap;

use liveproof_evidence::{
    judge, Change, ExpectedImage, ObjectKind, ObjectRef, Rejudge, Target, TargetKind, Touched,
};
use liveproof_testkit::fleet::{self, observed, touched};
use serde_json::{json, Value};

const NEW: &str = "registry.local/bench-app:2";

fn change() -> Change {
    Change {
        since: Some(fleet::CHANGE_AT.parse().expect("time")),
        images: vec![ExpectedImage::parse(NEW).expect("image")],
        ..Change::default()
    }
}

fn targets(n: usize) -> Vec<Target> {
    (0..n)
        .map(|d| Target::new(TargetKind::Deployment, Some("bench"), &format!("svc-{d}")))
        .collect()
}

fn labels(v: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(v["metadata"]["labels"].clone()).unwrap_or_default()
}

fn index(values: &[Value], kind: &str, name: &str) -> usize {
    values
        .iter()
        .position(|v| v["kind"] == kind && v["metadata"]["name"] == name)
        .expect("object")
}

fn json(report: &liveproof_evidence::Report) -> String {
    serde_json::to_string_pretty(report).expect("json")
}

/// The rolled-out state of svc-`d`'s pod `p`: the new image, started after the change, Ready.
fn rolled(pod: &mut Value) {
    pod["spec"]["containers"][0]["image"] = json!(NEW);
    pod["status"]["startTime"] = json!("2026-07-12T10:05:00Z");
    pod["status"]["containerStatuses"][0]["image"] = json!(NEW);
    pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] =
        json!("2026-07-12T10:05:00Z");
}

/// Each step: a mutation of the cluster and what a watch would say it touched. After each, the
/// incremental report is byte for byte the full one.
#[test]
fn rejudging_the_touched_targets_equals_judging_them_all() {
    let mut values = fleet::deployments("bench", 50, 5, true);
    let targets = targets(50);
    let change = change();
    let mut rejudge = Rejudge::new(&observed(&values), &change, &targets, "bench");
    assert_eq!(rejudge.judged, 50);

    // 1. One pod of svc-3 rolled: one target judged again.
    let i = index(&values, "Pod", "svc-3-h1-0");
    rolled(&mut values[i]);
    let t = Touched::Objects(vec![touched(ObjectKind::Pod, &values[i])]);
    let now = observed(&values);
    let got = json(rejudge.update(&now, &targets, &t));
    assert_eq!(got, json(&judge(&now, &change, &targets, "bench")));
    assert_eq!(rejudge.judged, 51, "one pod among 50 targets re-judges one");

    // 2. svc-7 entirely rolled (its Deployment, ReplicaSet and pods): it turns live.
    let d = index(&values, "Deployment", "svc-7");
    values[d]["spec"]["template"]["spec"]["containers"][0]["image"] = json!(NEW);
    let r = index(&values, "ReplicaSet", "svc-7-h1");
    values[r]["spec"]["template"]["spec"]["containers"][0]["image"] = json!(NEW);
    let mut objects = vec![
        touched(ObjectKind::Workload, &values[d]),
        touched(ObjectKind::ReplicaSet, &values[r]),
    ];
    for p in 0..5 {
        let i = index(&values, "Pod", &format!("svc-7-h1-{p}"));
        rolled(&mut values[i]);
        objects.push(touched(ObjectKind::Pod, &values[i]));
    }
    let now = observed(&values);
    let full = judge(&now, &change, &targets, "bench");
    let got = rejudge
        .update(&now, &targets, &Touched::Objects(objects))
        .clone();
    assert_eq!(json(&got), json(&full));
    assert_eq!(rejudge.judged, 52);
    let svc7 = got
        .targets
        .iter()
        .find(|t| t.name == "svc-7")
        .expect("svc-7");
    assert_eq!(svc7.verdict, liveproof_evidence::Verdict::Live, "{svc7:#?}");

    // 3. A pod of svc-9 deleted: the event carries the labels it had.
    let i = index(&values, "Pod", "svc-9-h1-2");
    let gone = values.remove(i);
    let t = Touched::Objects(vec![touched(ObjectKind::Pod, &gone)]);
    let now = observed(&values);
    let got = json(rejudge.update(&now, &targets, &t));
    assert_eq!(got, json(&judge(&now, &change, &targets, "bench")));

    // 4. A pod relabelled away from svc-11: its old labels still reach svc-11.
    let i = index(&values, "Pod", "svc-11-h1-0");
    let old = labels(&values[i]);
    values[i]["metadata"]["labels"]["app"] = json!("elsewhere");
    let mut object = touched(ObjectKind::Pod, &values[i]);
    object.labels.push(old);
    let now = observed(&values);
    let got = json(rejudge.update(&now, &targets, &Touched::Objects(vec![object])));
    assert_eq!(got, json(&judge(&now, &change, &targets, "bench")));

    // 5. A Service: anything may route through it, so everything is judged.
    values.push(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "bench"},
        "spec": {"selector": {"app": "svc-3"}, "ports": [{"port": 80}]}}));
    let svc = values.last().expect("service").clone();
    let before = rejudge.judged;
    let t = Touched::Objects(vec![touched(ObjectKind::Other, &svc)]);
    let now = observed(&values);
    let got = json(rejudge.update(&now, &targets, &t));
    assert_eq!(got, json(&judge(&now, &change, &targets, "bench")));
    assert_eq!(rejudge.judged, before + 50);

    // 6. A pod a Service routes to: everything too.
    let i = index(&values, "Pod", "svc-3-h1-1");
    rolled(&mut values[i]);
    let before = rejudge.judged;
    let t = Touched::Objects(vec![touched(ObjectKind::Pod, &values[i])]);
    let now = observed(&values);
    let got = json(rejudge.update(&now, &targets, &t));
    assert_eq!(got, json(&judge(&now, &change, &targets, "bench")));
    assert_eq!(rejudge.judged, before + 50);
}

/// The guard the equality rests on: a change the touched set does not name leaves a stale
/// report (which is why a wait confirms with the full judgement before it ends).
#[test]
fn a_change_outside_the_touched_set_is_not_seen() {
    let mut values = fleet::deployments("bench", 3, 2, true);
    let targets = targets(3);
    let change = change();
    let mut rejudge = Rejudge::new(&observed(&values), &change, &targets, "bench");
    for name in ["svc-1-h1-0", "svc-1-h1-1"] {
        let i = index(&values, "Pod", name);
        rolled(&mut values[i]);
    }
    let d = index(&values, "Deployment", "svc-0");
    let t = Touched::Objects(vec![touched(ObjectKind::Workload, &values[d])]);
    let now = observed(&values);
    let got = json(rejudge.update(&now, &targets, &t));
    assert_ne!(got, json(&judge(&now, &change, &targets, "bench")));
    // Everything judged again catches up.
    let got = json(rejudge.update(&now, &targets, &Touched::All));
    assert_eq!(got, json(&judge(&now, &change, &targets, "bench")));
}

/// A corpus story (a Deployment whose image was set twice): a pod touched gives the full report.
#[test]
fn a_corpus_story_rejudged_equals_its_full_judgement() {
    let observed = liveproof_testkit::judge::story("deployment-set-image-twice-superseded");
    let targets: Vec<Target> = observed
        .workloads
        .of::<k8s_openapi::api::apps::v1::Deployment>()
        .iter()
        .map(|d| {
            Target::new(
                TargetKind::Deployment,
                d.metadata.namespace.as_deref(),
                d.metadata.name.as_deref().unwrap_or_default(),
            )
        })
        .collect();
    assert!(!targets.is_empty());
    let change = Change {
        since: Some("2026-07-12T10:00:00Z".parse().expect("time")),
        ..Change::default()
    };
    let mut rejudge = Rejudge::new(&observed, &change, &targets, "default");
    let touched: Vec<ObjectRef> = observed
        .pods
        .iter()
        .map(|p| touched(ObjectKind::Pod, &serde_json::to_value(&**p).expect("json")))
        .collect();
    let got = json(rejudge.update(&observed, &targets, &Touched::Objects(touched)));
    assert_eq!(got, json(&judge(&observed, &change, &targets, "default")));
}

/// What settles a wait, kept per target: a pod that starts crash-looping is found as the full
/// judgement finds it, and one that recovers no longer settles it.
#[test]
fn a_crash_loop_in_a_touched_pod_settles_the_wait_as_the_full_judgement_does() {
    let mut values = fleet::deployments("bench", 20, 3, true);
    let targets = targets(20);
    let change = change();
    let mut rejudge = Rejudge::new(&observed(&values), &change, &targets, "bench");
    assert_eq!(rejudge.settled(&observed(&values)), None);
    let i = index(&values, "Pod", "svc-12-h1-1");
    values[i]["status"]["containerStatuses"][0]["restartCount"] = json!(9);
    values[i]["status"]["containerStatuses"][0]["ready"] = json!(false);
    values[i]["status"]["containerStatuses"][0]["state"] =
        json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}});
    let t = Touched::Objects(vec![touched(ObjectKind::Pod, &values[i])]);
    let now = observed(&values);
    let report = rejudge.update(&now, &targets, &t).clone();
    let full = liveproof_evidence::judgement(&now, &change, &targets, "bench", false);
    assert_eq!(report.verdict, full.report.verdict);
    let settled = rejudge.settled(&now);
    assert!(settled.is_some(), "a crash loop settles the wait");
    assert_eq!(settled, full.stop);
    assert!(settled.expect("settled").reason().contains("svc-12"));

    // It recovers: nothing settles it any more.
    values[i]["status"]["containerStatuses"][0]["state"] =
        json!({"running": {"startedAt": "2026-07-12T09:00:00Z"}});
    values[i]["status"]["containerStatuses"][0]["ready"] = json!(true);
    values[i]["status"]["containerStatuses"][0]["restartCount"] = json!(0);
    let t = Touched::Objects(vec![touched(ObjectKind::Pod, &values[i])]);
    let now = observed(&values);
    rejudge.update(&now, &targets, &t);
    let full = liveproof_evidence::judgement(&now, &change, &targets, "bench", false);
    assert_eq!(rejudge.settled(&now), full.stop);
    assert_eq!(rejudge.settled(&now), None);
}

/// Completion found other targets (a selector's new workload): everything is judged again.
#[test]
fn new_targets_are_all_judged() {
    let values = fleet::deployments("bench", 10, 2, true);
    let change = change();
    let mut rejudge = Rejudge::new(&observed(&values), &change, &targets(5), "bench");
    let now = observed(&values);
    let more = targets(10);
    let got = json(rejudge.update(&now, &more, &Touched::Objects(Vec::new())));
    assert_eq!(got, json(&judge(&now, &change, &more, "bench")));
    assert_eq!(rejudge.judged, 15);
}
