//! `liveproof demo`: the "merged but never deployed" story around its two verifications, as
//! text or Markdown (paragraphs wrapped to the style's width), or one JSON document.

use std::io::{self, Write};

use liveproof_evidence::Report;

use crate::textutil::wrap;
use crate::{Format, Outcome, Render, TextStyle};

/// What the demo found: the same verification before and after the fix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DemoOutcome {
    /// `liveproof/demo/v1`.
    pub schema: &'static str,
    /// The command both verifications ran, as a person would type it.
    pub command: String,
    /// Before the chart version bump: not_live.
    pub before: Report,
    /// After it (revision 35, new pods): live.
    pub after: Report,
    /// Whether the verdicts came out as the story says.
    pub as_expected: bool,
}

impl Render for DemoOutcome {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json, Format::Markdown];

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Json => {
                serde_json::to_writer_pretty(&mut *out, self)?;
                writeln!(out)
            }
            Format::Text | Format::Markdown => tell(self, format, style, out),
            _ => Err(crate::unsupported("the demo", format, Self::FORMATS)),
        }
    }
}

impl Outcome for DemoOutcome {
    /// 0 when both verdicts came out as they should, else 1.
    fn exit_code(&self) -> u8 {
        u8::from(!self.as_expected)
    }
}

/// The story around the two reports, each paragraph wrapped to the style's width.
fn tell(
    outcome: &DemoOutcome,
    format: Format,
    style: TextStyle,
    out: &mut dyn Write,
) -> io::Result<()> {
    let merged = outcome.before.change.since.clone().unwrap_or_default();
    let commit = outcome.before.change.commit.clone().unwrap_or_default();
    let paragraph = |out: &mut dyn Write, text: &str| -> io::Result<()> {
        for line in wrap(text, style.width) {
            writeln!(out, "{line}")?;
        }
        writeln!(out)
    };
    let fence = |out: &mut dyn Write, open: bool| -> io::Result<()> {
        if format == Format::Markdown {
            writeln!(out, "{}", if open { "```text" } else { "```" })?;
        }
        Ok(())
    };
    if format == Format::Markdown {
        writeln!(
            out,
            "# liveproof demo — the deploy that merged but never deployed\n"
        )?;
    } else {
        writeln!(
            out,
            "liveproof demo — the deploy that merged but never deployed\n"
        )?;
    }
    paragraph(
        out,
        &format!(
            "The PR moving inventory's database password to a secretKeyRef merged at {merged} \
             (commit {commit}). CI is green. Flux says Ready, UpgradeSucceeded. But the chart's \
             templates changed while Chart.yaml's version did not, and with reconcileStrategy \
             ChartVersion helm-controller builds a new chart only when the version changes: \
             nothing was released, and the pods still run what they read four days ago. \
             (A simulated cluster on this machine; nothing leaves it.)"
        ),
    )?;
    fence(out, true)?;
    writeln!(out, "$ {}\n", outcome.command)?;
    fence(out, false)?;
    outcome.before.render(format, style, out)?;
    writeln!(out)?;
    paragraph(
        out,
        "The fix is one line: version 0.4.2 → 0.4.3 in charts/inventory/Chart.yaml. Flux builds \
         the chart, helm-controller upgrades to revision 35, the Deployment rolls out new pods.",
    )?;
    fence(out, true)?;
    writeln!(out, "$ {}\n", outcome.command)?;
    fence(out, false)?;
    outcome.after.render(format, style, out)?;
    writeln!(out)?;
    paragraph(
        out,
        if outcome.as_expected {
            "demo: not_live before the version bump, live after it — as it should be."
        } else {
            "demo: the verdicts did not come out as the story says they should (see above)."
        },
    )
}
