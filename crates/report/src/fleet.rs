//! `verify` over several clusters: one section per cluster (its report as one cluster's would
//! read, or why it could not be verified), then the fleet's counts and verdict.

use std::io::{self, Write};

use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::Verdict;

use crate::textutil::terminal_safe;
use crate::TextStyle;

/// JSON: `liveproof/v1` with `clusters[]` (see [`FleetReport`]).
pub fn render_fleet_json(fleet: &FleetReport, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, fleet)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Text: a headed section per cluster, then one line per cluster and the fleet's verdict.
pub fn render_fleet_text(
    fleet: &FleetReport,
    style: TextStyle,
    out: &mut dyn Write,
) -> io::Result<()> {
    for cluster in &fleet.clusters {
        let server = cluster
            .report
            .as_ref()
            .and_then(|r| r.cluster.as_ref())
            .and_then(|c| c.server.as_deref())
            .map(|s| format!(" ({})", terminal_safe(s)))
            .unwrap_or_default();
        writeln!(
            out,
            "=== cluster {}{server}: {} ===\n",
            terminal_safe(&cluster.context),
            label(cluster.verdict, cluster.error.is_some())
        )?;
        match (&cluster.report, &cluster.error) {
            (Some(report), _) => crate::render_text(report, style, out)?,
            (None, Some(error)) => {
                // Line by line: a hint stays on its own line.
                for (i, line) in error.lines().enumerate() {
                    let lead = if i == 0 { "error: " } else { "" };
                    writeln!(out, "{lead}{}", terminal_safe(line))?;
                }
            }
            (None, None) => {}
        }
        writeln!(out)?;
    }
    writeln!(out, "fleet: {} clusters", fleet.clusters.len())?;
    for cluster in &fleet.clusters {
        writeln!(
            out,
            "  {:<12} {}",
            label(cluster.verdict, cluster.error.is_some()),
            terminal_safe(&cluster.context)
        )?;
    }
    let count = |verdict: Verdict| {
        fleet
            .clusters
            .iter()
            .filter(|c| c.error.is_none() && c.verdict == verdict)
            .count()
    };
    let errors = fleet.clusters.iter().filter(|c| c.error.is_some()).count();
    writeln!(
        out,
        "{} live, {} not live, {} unproven, {errors} not verified (error) — fleet verdict: {}",
        count(Verdict::Live),
        count(Verdict::NotLive),
        count(Verdict::Unproven),
        fleet.verdict.name().to_uppercase().replace('_', " ")
    )?;
    out.flush()
}

fn label(verdict: Verdict, error: bool) -> &'static str {
    if error {
        return "ERROR";
    }
    match verdict {
        Verdict::Live => "LIVE",
        Verdict::NotLive => "NOT LIVE",
        Verdict::Unproven => "UNPROVEN",
    }
}
