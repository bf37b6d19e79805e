//! `verify` over several clusters (`--context` repeated, `--all-contexts`): the same
//! verification against each, `--max-concurrency` clusters at a time, each bounded as one cluster's
//! verify is (`--request-timeout`, `--timeout`). A cluster that cannot be verified is an
//! error for that cluster in the fleet's report, never a pass and never a hang.

use std::io::Write;

use futures::StreamExt;
use liveproof_evidence::fleet::FleetReport;
use liveproof_report::Format;

use crate::config::{Source, VerifyConfig};

/// Verifies `config` in each of its fleet's contexts; the fleet's report.
pub async fn report(config: &VerifyConfig) -> FleetReport {
    // Each cluster is a task of its own: their judging (CPU) spreads over the runtime's
    // threads instead of taking turns on one.
    let results = futures::stream::iter(config.fleet.iter().cloned())
        .map(|context| {
            let mut one = config.clone();
            one.fleet.clear();
            // Decoded releases are known by object and resourceVersion, which two clusters
            // can share: each cluster decodes its own. (What git says is the same for all.)
            one.decode_cache = Default::default();
            if let Source::Live(options) = &mut one.source {
                options.context = Some(context.clone());
            }
            let task = tokio::spawn(async move {
                crate::verify::report(&one)
                    .await
                    .map_err(|e| crate::error_text(&e))
            });
            async move {
                let result = task.await.unwrap_or_else(|e| {
                    Err(format!("the verification of this cluster stopped: {e}"))
                });
                if let Err(error) = &result {
                    tracing::warn!("cluster {context}: {error}");
                }
                (context, result)
            }
        })
        .buffered(config.fleet_concurrency)
        .collect::<Vec<_>>()
        .await;
    FleetReport::new(results)
}

/// `verify` with several clusters: the fleet's report rendered (text or JSON: the
/// configuration refused the others), `--report` written; the fleet's exit code.
pub async fn run(config: &VerifyConfig, out: &mut dyn Write) -> anyhow::Result<u8> {
    let fleet = report(config).await;
    render(&fleet, config.format, config.style, out)?;
    if let Some((path, format)) = &config.report {
        let mut bytes = Vec::new();
        render(
            &fleet,
            *format,
            liveproof_report::TextStyle::plain(),
            &mut bytes,
        )?;
        crate::output::write_report(path, &bytes)?;
    }
    Ok(fleet.exit_code())
}

fn render(
    fleet: &FleetReport,
    format: Format,
    style: liveproof_report::TextStyle,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    // Every format named: configuration refuses a fleet in the others (FleetFormat), and a
    // format added later must say how a fleet is drawn, never fall back to text unasked.
    match format {
        Format::Json => liveproof_report::render_fleet_json(fleet, out),
        Format::Text => liveproof_report::render_fleet_text(fleet, style, out),
        Format::Markdown | Format::Junit => Err(std::io::Error::other(format!(
            "a fleet report is drawn as text or JSON, not {}",
            format.name()
        ))),
    }
}
