//! `manual-promotion`.
//!
//! Argo Rollouts, `pkg/apis/rollouts/v1alpha1/types.go`: a canary step `pause: {}` without a
//! duration pauses until someone promotes; a blue-green Rollout with `autoPromotionEnabled:
//! false` waits for a promotion ("autoPromotionSeconds … is ignored if autoPromotionEnabled is
//! set to false"); `spec.paused: true` rolls nothing out. Flagger, `pkg/apis/flagger/v1beta1`
//! and its webhooks docs ("manual gating"): a `confirm-rollout`, `confirm-promotion` or
//! `confirm-traffic-increase` webhook holds the canary until it answers 200, and
//! `spec.suspend: true` runs no analysis at all. What we recognise as someone promoting:
//! `kubectl argo rollouts promote NAME` (or `--full`) in the repository's scripts and
//! workflows, and, for Flagger, a call that opens the load tester's gate (`/gate/open`), both
//! read with the restart paths (`Restarts`).

use super::*;

/// The gate a progressive-delivery object puts in front of its change, and the line it is on.
fn gate(doc: &Doc<'_>, kind: &str, v: &Value) -> Option<(usize, String)> {
    let api = doc.api_version().unwrap_or_default();
    let spec = &v["spec"];
    if api.starts_with("argoproj.io/") && kind == "Rollout" {
        if spec["paused"].as_bool() == Some(true) {
            let line = doc.locate(&["spec", "paused"]).unwrap_or(doc.first_line);
            return Some((
                line,
                "spec.paused: true: the controller rolls nothing out".into(),
            ));
        }
        let blue_green = &spec["strategy"]["blueGreen"];
        if blue_green["autoPromotionEnabled"].as_bool() == Some(false) {
            let line = doc
                .locate(&["spec", "strategy", "blueGreen", "autoPromotionEnabled"])
                .unwrap_or(doc.first_line);
            return Some((
                line,
                "blueGreen.autoPromotionEnabled: false: the new pods wait behind the preview \
                 Service until someone promotes them (autoPromotionSeconds is ignored then)"
                    .into(),
            ));
        }
        let steps = spec["strategy"]["canary"]["steps"].as_sequence()?;
        let mut pauses = 0;
        for (index, step) in steps.iter().enumerate() {
            let Some(pause) = step.get("pause") else {
                continue;
            };
            let nth = pauses;
            pauses += 1;
            let timed = pause
                .get("duration")
                .is_some_and(|d| !d.is_null() && d.as_str() != Some(""));
            if !timed {
                let line = doc
                    .find_nth(nth, |l| l.contains("pause:"))
                    .unwrap_or(doc.first_line);
                return Some((
                    line,
                    format!(
                        "canary step {} is a pause without a duration: it holds the canary until \
                         someone promotes it",
                        index + 1
                    ),
                ));
            }
        }
        return None;
    }
    if api.starts_with("flagger.app/") && kind == "Canary" {
        if spec["suspend"].as_bool() == Some(true) {
            let line = doc.locate(&["spec", "suspend"]).unwrap_or(doc.first_line);
            return Some((
                line,
                "spec.suspend: true: Flagger runs no analysis, so the primary never gets the change"
                    .into(),
            ));
        }
        let hooks = spec["analysis"]["webhooks"]
            .as_sequence()
            .or_else(|| spec["canaryAnalysis"]["webhooks"].as_sequence())?;
        // confirm-traffic-increase holds each weight step as the other two hold the start and
        // the promotion (`HookType`).
        let gated = hooks.iter().find_map(|h| {
            let kind = h["type"].as_str()?;
            matches!(
                kind,
                "confirm-rollout" | "confirm-promotion" | "confirm-traffic-increase"
            )
            .then_some(kind)
        })?;
        let line = doc
            .find_nth(0, |l| l.contains(gated))
            .unwrap_or(doc.first_line);
        return Some((
            line,
            format!("a `{gated}` webhook: the canary waits until it answers 200"),
        ));
    }
    None
}

pub(super) fn manual_promotion(ctx: &Context<'_>, doc: &Doc<'_>, findings: &mut Vec<Hazard>) {
    let Some(v) = &doc.value else { return };
    let Some(kind) = doc.kind() else { return };
    let Some((line, what)) = gate(doc, &kind, v) else {
        return;
    };
    let name = doc.display_name();
    let promoted = match kind.as_str() {
        "Rollout" => ctx
            .restarts
            .promotes(v["metadata"]["name"].as_str().unwrap_or_default()),
        _ => ctx.restarts.gate_opened,
    };
    if promoted {
        return;
    }
    let (level, tail) = if ctx.input.changed.contains(doc.file) {
        (
            Level::Error,
            "this change stops there, and nothing in the repository promotes it",
        )
    } else {
        (
            Level::Warning,
            "nothing it runs changed here, but every change to it will stop there until promoted",
        )
    };
    let fix = match kind.as_str() {
        "Rollout" => format!(
            "promote it after the apply (`kubectl argo rollouts promote {}`), or give the \
             pause a duration / enable auto-promotion",
            v["metadata"]["name"].as_str().unwrap_or("NAME")
        ),
        _ => "open the gate after the apply (the load tester's /gate/open), or drop the \
              confirm webhook"
            .to_string(),
    };
    findings.push(Hazard {
        id: MANUAL_PROMOTION.to_string(),
        level,
        file: doc.file.to_string(),
        line,
        message: format!("{kind} {name} has {what}: {tail}"),
        fix,
    });
}
