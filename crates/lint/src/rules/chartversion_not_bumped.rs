//! `chartversion-not-bumped`.
//!
//! Flux: "ChartVersion (default): a new artifact is produced only when the chart's version in
//! Chart.yaml changes; Revision: for every new revision of the source" — source-controller
//! HelmChart docs (reconcileStrategy) and helm-controller HelmRelease docs (spec.chart.spec).
//! It applies to charts from GitRepository/Bucket sources; a HelmRepository chart is versioned.

use super::*;

pub(super) fn chartversion_not_bumped(ctx: &Context<'_>, doc: &Doc<'_>, report: &mut Linted) {
    let Some(v) = &doc.value else { return };
    if doc.kind().as_deref() != Some("HelmRelease")
        || !doc
            .api_version()
            .is_some_and(|a| a.starts_with("helm.toolkit.fluxcd.io/v2"))
    {
        return;
    }
    let spec = &v["spec"]["chart"]["spec"];
    let strategy = spec["reconcileStrategy"].as_str().unwrap_or("ChartVersion");
    if strategy != "ChartVersion" || spec["sourceRef"]["kind"].as_str() != Some("GitRepository") {
        return;
    }
    let Some(chart) = spec["chart"].as_str() else {
        return;
    };
    let dir = normalize_dir(chart);
    if !ctx.charts.contains(&dir) {
        return;
    }
    let chart_yaml = if dir.is_empty() {
        "Chart.yaml".to_string()
    } else {
        format!("{dir}/Chart.yaml")
    };
    let Some(base) = &ctx.input.base else {
        report.notes.push(format!(
            "{}: HelmRelease {} uses reconcileStrategy ChartVersion for {chart}; without a base \
             revision liveproof cannot tell whether its version was bumped",
            doc.file,
            doc.display_name()
        ));
        return;
    };
    let changed: Vec<&str> = ctx
        .input
        .changed
        .under(&dir, &ctx.input.head)
        .into_iter()
        .filter(|p| affects_chart(p))
        .collect();
    if changed.is_empty() {
        return;
    }
    // The rule verify's diagnosis uses too. A chart that is new at base is installed from its
    // first version: nothing to bump.
    let base_text = base.get(&chart_yaml).map(String::as_str);
    let head_text = ctx.input.head.get(&chart_yaml).map(String::as_str);
    if liveproof_helm::chart_version_changed(base_text, head_text) {
        return;
    }
    let Some(base_version) = base_text.and_then(liveproof_helm::chart_version) else {
        return;
    };
    let line = doc
        .locate(&["spec", "chart", "spec", "reconcileStrategy"])
        .or_else(|| doc.locate(&["spec", "chart", "spec", "chart"]))
        .unwrap_or(doc.first_line);
    let how = if spec["reconcileStrategy"].is_null() {
        "reconcileStrategy unset, so ChartVersion"
    } else {
        "reconcileStrategy: ChartVersion"
    };
    let relative: Vec<&str> = changed
        .iter()
        .map(|p| p.strip_prefix(&format!("{dir}/")).unwrap_or(p))
        .collect();
    report.findings.push(Hazard {
        id: CHARTVERSION_NOT_BUMPED.to_string(),
        level: Level::Error,
        file: doc.file.to_string(),
        line,
        message: format!(
            "HelmRelease {} builds {chart} from a GitRepository with {how}: {} changed ({}) but \
             {chart_yaml} still says version {base_version}, so no new chart is built and no \
             upgrade runs",
            doc.display_name(),
            if changed.len() == 1 {
                "1 file".to_string()
            } else {
                format!("{} files", changed.len())
            },
            list(&relative, 4),
        ),
        fix: format!(
            "bump `version: {base_version}` in {chart_yaml} in this change, or set \
             spec.chart.spec.reconcileStrategy: Revision"
        ),
    });
}
