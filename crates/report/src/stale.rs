//! The `liveproof stale` table: one row per container of each workload, as text or JSON.

use std::io::{self, Write};

use liveproof_evidence::{short_digest, DigestRow, RowVerdict};
use serde_json::json;

use crate::textutil::terminal_safe;
use crate::{Format, Outcome, Render, TextStyle};

/// What `liveproof stale` found and, with `--restart`, did.
#[derive(Debug, Clone, Default)]
pub struct StaleOutcome {
    /// One row per container of each workload checked.
    pub rows: Vec<DigestRow>,
    /// With `--restart`: what was restarted (or would be), and the wait's report.
    pub restart: Option<RestartOutcome>,
}

impl Render for StaleOutcome {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Text => render_stale_text(&self.rows, self.restart.as_ref(), style, out),
            Format::Json => render_stale_json(&self.rows, self.restart.as_ref(), out),
            _ => Err(crate::unsupported("stale's table", format, Self::FORMATS)),
        }
    }
}

impl Outcome for StaleOutcome {
    /// 0 nothing stale (or every stale workload restarted, and live with `--wait`); 1 stale
    /// workloads left (a dry run restarts nothing); 3 some digests could not be compared.
    fn exit_code(&self) -> u8 {
        let stale = self.rows.iter().any(|r| r.verdict == RowVerdict::Stale);
        let unknown = self.rows.iter().any(|r| r.verdict == RowVerdict::Unknown);
        let untouched = if stale {
            1
        } else if unknown {
            3
        } else {
            0
        };
        match &self.restart {
            Some(restart) if stale => {
                let live = restart
                    .report
                    .as_ref()
                    .is_none_or(|r| r.verdict == liveproof_evidence::Verdict::Live);
                u8::from(restart.dry_run || !restart.failed.is_empty() || !live)
            }
            _ => untouched,
        }
    }
}

/// Text: a fixed-column table, stale rows first, then the reasons under it.
fn render_rows_text(rows: &[DigestRow], out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    if rows.is_empty() {
        writeln!(
            out,
            "no container uses a mutable tag here (pass --check-digests to check every tag)"
        )?;
        return out.flush();
    }
    let mut sorted: Vec<&DigestRow> = rows.iter().collect();
    sorted.sort_by_key(|r| {
        (
            r.verdict,
            r.namespace.clone(),
            r.workload.clone(),
            r.container.clone(),
        )
    });
    let cells: Vec<[String; 7]> = sorted
        .iter()
        .map(|r| {
            [
                terminal_safe(&format!(
                    "{}/{}/{}",
                    r.kind.to_ascii_lowercase(),
                    r.namespace,
                    r.workload
                )),
                terminal_safe(&r.container),
                terminal_safe(&r.image),
                join_short(&r.running),
                join_short(&r.current),
                terminal_safe(&r.platforms.join(",")),
                r.verdict.name().to_string(),
            ]
        })
        .collect();
    let header = [
        "WORKLOAD",
        "CONTAINER",
        "IMAGE",
        "RUNNING",
        "CURRENT",
        "PLATFORMS",
        "VERDICT",
    ];
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cols: Vec<&str>| {
        cols.iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for row in &cells {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    writeln!(out)?;
    for r in &sorted {
        if r.verdict != RowVerdict::Current {
            writeln!(
                out,
                "{} {}/{} {}: {}",
                r.verdict.name(),
                r.namespace,
                r.workload,
                terminal_safe(&r.container),
                terminal_safe(&r.why)
            )?;
        }
    }
    let count = |v| rows.iter().filter(|r| r.verdict == v).count();
    writeln!(
        out,
        "{} stale, {} current, {} unknown",
        count(RowVerdict::Stale),
        count(RowVerdict::Current),
        count(RowVerdict::Unknown)
    )?;
    out.flush()
}

fn join_short(digests: &[String]) -> String {
    if digests.is_empty() {
        return "-".into();
    }
    digests
        .iter()
        .map(|d| short_digest(d))
        .collect::<Vec<_>>()
        .join(",")
}

/// What `stale --restart` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RestartOutcome {
    pub dry_run: bool,
    /// The restart time written to `kubectl.kubernetes.io/restartedAt` (and, with `--wait`, the
    /// change time the restarted workloads are verified against).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The workloads patched (or that would be), as `KIND/NAMESPACE/NAME`.
    pub patched: Vec<String>,
    /// The workloads a patch failed for, each with the error.
    pub failed: Vec<String>,
    /// The steps, as the lines the text output prints (written by [`RestartOutcome::record`]).
    output: Vec<String>,
    /// With `--wait`: the verification of the restarted workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<liveproof_evidence::Report>,
}

/// One step of `stale --restart`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartStep {
    /// Nothing is stale: no request is sent (`unknown`: some workloads could not be compared).
    NothingStale { unknown: bool },
    /// `--dry-run`: the PATCH that would be sent.
    WouldPatch {
        target: String,
        kind: String,
        namespace: String,
        name: String,
        patch: String,
    },
    /// `--dry-run`, after every PATCH it would send.
    DryRunEnd,
    /// A restart PATCH was accepted.
    Restarted { target: String, patch: String },
    /// A restart PATCH failed.
    Failed { target: String, error: String },
}

impl RestartOutcome {
    /// Records a step: its line of text output, and the workload in `patched` or `failed`.
    pub fn record(&mut self, step: RestartStep) {
        match step {
            RestartStep::NothingStale { unknown } => self.output.push(format!(
                "nothing to restart: every checked workload runs what its tag resolves to now{}",
                if unknown {
                    " (or could not be compared: see above)"
                } else {
                    ""
                }
            )),
            RestartStep::WouldPatch {
                target,
                kind,
                namespace,
                name,
                patch,
            } => {
                self.output.push(format!(
                    "would PATCH {kind} {namespace}/{name} (strategic merge):"
                ));
                self.output.push(format!("  {patch}"));
                self.patched.push(target);
            }
            RestartStep::DryRunEnd => self.output.push("dry run: nothing was sent".into()),
            RestartStep::Restarted { target, patch } => {
                self.output.push(format!("restarted {target}: {patch}"));
                self.patched.push(target);
            }
            RestartStep::Failed { target, error } => {
                self.output
                    .push(format!("could not restart {target}: {error}"));
                self.failed.push(format!("{target}: {error}"));
            }
        }
    }
}

/// JSON: `{"schema": "liveproof/stale/v1", "rows": [...]}`, with `"restart": {...}` after
/// `--restart` — one document, nothing else on stdout.
pub fn render_stale_json(
    rows: &[DigestRow],
    restart: Option<&RestartOutcome>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut doc = json!({"schema": "liveproof/stale/v1", "rows": rows});
    if let Some(restart) = restart {
        doc["restart"] = serde_json::to_value(restart)?;
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// Text: the rows' table, then what `--restart` did, then (with `--wait`) its report.
pub fn render_stale_text(
    rows: &[DigestRow],
    restart: Option<&RestartOutcome>,
    style: crate::TextStyle,
    out: &mut dyn Write,
) -> io::Result<()> {
    render_rows_text(rows, out)?;
    let Some(restart) = restart else {
        return Ok(());
    };
    for line in &restart.output {
        writeln!(out, "{}", terminal_safe(line))?;
    }
    if let Some(report) = &restart.report {
        writeln!(
            out,
            "\nthe restarted workloads, verified (pods started after {}):\n",
            restart.at.as_deref().unwrap_or("the restart")
        )?;
        crate::render_text(report, style, out)?;
    }
    Ok(())
}
