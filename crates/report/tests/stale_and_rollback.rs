//! `stale` and `rollback` as a person reads them, snapshotted from typed results: the rows'
//! table, what `--restart` did (or would do), and each rollback step and ending.

use liveproof_evidence::{DigestRow, RowVerdict};
use liveproof_report::{
    render_rollback_changed, render_rollback_end, render_rollback_step, render_stale_json,
    render_stale_text, RestartOutcome, RestartStep, RollbackEnd, RollbackStep, TextStyle,
};

fn digest(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

/// Seed 001: `:latest` rebuilt, web and worker still on the old build, api pinned by digest.
fn rows() -> Vec<DigestRow> {
    let row =
        |workload: &str, image: &str, running: char, current: char, verdict, why: &str| DigestRow {
            kind: "Deployment".into(),
            namespace: "shop".into(),
            workload: workload.into(),
            container: "app".into(),
            image: image.into(),
            running: vec![digest(running)],
            current: vec![digest(current)],
            platforms: vec!["linux/amd64".into()],
            verdict,
            why: why.into(),
        };
    vec![
        row(
            "web",
            "ghcr.io/acme/web:latest",
            'a',
            'b',
            RowVerdict::Stale,
            "runs the linux/amd64 entry of an older build",
        ),
        row(
            "worker",
            "ghcr.io/acme/web:latest",
            'a',
            'b',
            RowVerdict::Stale,
            "runs the linux/amd64 entry of an older build",
        ),
        row(
            "api",
            "ghcr.io/acme/api:1.4.0",
            'c',
            'c',
            RowVerdict::Current,
            "the linux/amd64 entry",
        ),
    ]
}

fn restart(dry_run: bool) -> RestartOutcome {
    let mut outcome = RestartOutcome::default();
    outcome.dry_run = dry_run;
    outcome.at = Some("2026-07-12T10:00:00Z".into());
    let patch = r#"{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-07-12T10:00:00Z"}}}}}"#;
    for name in ["web", "worker"] {
        if dry_run {
            outcome.record(RestartStep::WouldPatch {
                target: format!("deployment/shop/{name}"),
                kind: "deployment".into(),
                namespace: "shop".into(),
                name: name.into(),
                patch: patch.into(),
            });
        } else if name == "web" {
            outcome.record(RestartStep::Restarted {
                target: format!("deployment/shop/{name}"),
                patch: patch.into(),
            });
        } else {
            outcome.record(RestartStep::Failed {
                target: format!("deployment/shop/{name}"),
                error: "deployments.apps \"worker\" is forbidden".into(),
            });
        }
    }
    if dry_run {
        outcome.record(RestartStep::DryRunEnd);
    }
    outcome
}

fn text(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    f(&mut out).expect("rendering to a Vec");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn stale_with_restart_as_rendered() {
    let rows = rows();
    let mut rendered = String::new();
    for outcome in [None, Some(restart(true)), Some(restart(false))] {
        rendered.push_str(&text(|o| {
            render_stale_text(&rows, outcome.as_ref(), TextStyle::plain(), o)
        }));
        rendered.push_str("----\n");
    }
    let mut nothing = RestartOutcome::default();
    nothing.record(RestartStep::NothingStale { unknown: true });
    rendered.push_str(&text(|o| {
        render_stale_text(&[], Some(&nothing), TextStyle::plain(), o)
    }));
    insta::assert_snapshot!(rendered);
}

#[test]
fn stale_json_is_one_document_with_what_the_restart_did() {
    let json = text(|o| render_stale_json(&rows(), Some(&restart(false)), o));
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(doc["schema"], "liveproof/stale/v1");
    assert_eq!(doc["rows"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        doc["restart"]["patched"],
        serde_json::json!(["deployment/shop/web"])
    );
    assert_eq!(
        doc["restart"]["failed"],
        serde_json::json!(["deployment/shop/worker: deployments.apps \"worker\" is forbidden"])
    );
    assert_eq!(doc["restart"]["output"].as_array().map(Vec::len), Some(2));
    insta::assert_snapshot!(json);
}

#[test]
fn rollback_steps_and_endings_as_rendered() {
    let mut rendered = text(|o| {
        render_rollback_changed(
            "3f2c1ab",
            &["release/shop/web".into(), "deployment/shop/api".into()],
            o,
        )
    });
    let steps = [
        RollbackStep::Release {
            namespace: "shop".into(),
            name: "web".into(),
            revision: Some(4),
        },
        RollbackStep::Release {
            namespace: "shop".into(),
            name: "new".into(),
            revision: None,
        },
        RollbackStep::NotInSnapshot {
            target: "deployment/shop/fresh".into(),
        },
        RollbackStep::WouldRestore {
            kind: "deployment".into(),
            namespace: "shop".into(),
            name: "api".into(),
            images: vec!["ghcr.io/acme/api:1.3.9".into()],
        },
        RollbackStep::Restored {
            target: "deployment/shop/api".into(),
            images: vec!["ghcr.io/acme/api:1.3.9".into()],
        },
        RollbackStep::RestoreFailed {
            target: "deployment/shop/cart".into(),
            error: "forbidden".into(),
        },
        RollbackStep::Superseded {
            target: "deployment/shop/web".into(),
            by: None,
        },
    ];
    for step in &steps {
        rendered.push_str(&text(|o| render_rollback_step(step, o)));
    }
    let ends = [
        RollbackEnd::NothingChanged {
            commit: "3f2c1ab".into(),
            why: "check that the apply ran".into(),
        },
        RollbackEnd::NothingFailed { unproven: false },
        RollbackEnd::NothingFailed { unproven: true },
        RollbackEnd::DryRun,
        RollbackEnd::Succeeded,
        RollbackEnd::Failed { serving: true },
        RollbackEnd::Failed { serving: false },
    ];
    for end in &ends {
        rendered.push_str(&format!("[exit {}] ", end.exit_code()));
        rendered.push_str(&text(|o| render_rollback_end(end, o)));
    }
    insta::assert_snapshot!(rendered);
}
