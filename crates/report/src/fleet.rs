//! `verify` over several clusters: one section per cluster (its report as one cluster's would
//! read, or why it could not be verified), then the fleet's counts and verdict.

use std::io::{self, Write};

use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::Verdict;

use crate::textutil::{terminal_safe, verdict_label};
use crate::{Format, Outcome, Render, TextStyle};

/// `verify` over several clusters, in every format one cluster's report is drawn in.
impl Render for FleetReport {
    const FORMATS: &'static [Format] = &[
        Format::Text,
        Format::Json,
        Format::Yaml,
        Format::Name,
        Format::Markdown,
        Format::Junit,
        Format::JsonPath,
    ];

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Text => render_fleet_text(self, style, out),
            Format::Json => render_fleet_json(self, out),
            Format::Yaml => crate::yaml::document(self, out),
            // Every cluster's targets, cluster by cluster: an object verified in two clusters
            // is listed twice, as each was verified.
            Format::Name => crate::render_names(&self.targets, out),
            Format::Markdown => crate::markdown::render_fleet_markdown(self, out),
            Format::Junit => crate::junit::render_fleet_junit(self, out),
            Format::JsonPath => Err(crate::needs_template(format)),
            Format::Wide | Format::Html | Format::Sarif | Format::CustomColumns => {
                Err(crate::unsupported("a fleet report", format, Self::FORMATS))
            }
        }
    }
}

impl Outcome for FleetReport {
    fn exit_code(&self) -> u8 {
        FleetReport::exit_code(self)
    }
}

/// What `verify` produced: one cluster's report, or a fleet's. `-o` offers what one cluster's
/// report is drawn in; with several clusters `verify` refuses what a fleet's is not (exit 2,
/// before any cluster is asked), so a fleet is never drawn as another format.
#[derive(Debug, Clone)]
pub enum Verification {
    One(Box<liveproof_evidence::Report>),
    Fleet(Box<FleetReport>),
}

impl Render for Verification {
    const FORMATS: &'static [Format] = <liveproof_evidence::Report as Render>::FORMATS;
    const ROWS: Option<&'static str> = <liveproof_evidence::Report as Render>::ROWS;

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        match self {
            Verification::One(report) => report.render(format, style, out),
            Verification::Fleet(fleet) => fleet.render(format, style, out),
        }
    }
}

impl Outcome for Verification {
    fn exit_code(&self) -> u8 {
        match self {
            Verification::One(report) => report.exit_code(),
            Verification::Fleet(fleet) => Outcome::exit_code(&**fleet),
        }
    }
}

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
        "{} live, {} not live, {} unproven, {} superseded, {errors} not verified (error) — fleet verdict: {}",
        count(Verdict::Live),
        count(Verdict::NotLive),
        count(Verdict::Unproven),
        count(Verdict::Superseded),
        verdict_label(fleet.verdict)
    )?;
    out.flush()
}

fn label(verdict: Verdict, error: bool) -> &'static str {
    if error {
        return "ERROR";
    }
    verdict_label(verdict)
}
