//! The `liveproof stale` table: one row per container of each workload, as text or JSON.

use std::io::{self, Write};

use liveproof_evidence::{short_digest, DigestRow, RowVerdict};
use serde_json::json;

use crate::textutil::terminal_safe;

/// Text: a fixed-column table, stale rows first, then the reasons under it.
pub fn render_stale_text(rows: &[DigestRow], out: &mut dyn Write) -> io::Result<()> {
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

/// JSON: `{"schema": "liveproof/stale/v1", "rows": [...]}`.
pub fn render_stale_json(rows: &[DigestRow], out: &mut dyn Write) -> io::Result<()> {
    let doc = json!({"schema": "liveproof/stale/v1", "rows": rows});
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
