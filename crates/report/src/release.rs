//! `liveproof release show`: a Helm release's sections as `helm get metadata|values` and `helm
//! history` print them, and the manifest as decoding lets it be shown (Secrets redacted, see
//! [`liveproof_helm::show`]), one blank line apart.

use std::fmt::Write as _;
use std::io::{self, Write};

use jiff::Timestamp;
use liveproof_helm::show::LastByte;
use liveproof_helm::{Release, StoredRelease};

use crate::{Format, Outcome, Render, TextStyle};

/// The first line of redacted values output, on the command line.
pub const VALUES_REDACTED_HEADER: &str = ValuesNote::ShowValuesFlag.header();

/// How `release show` shows the user-supplied values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// As stored (`--show-values`).
    AsStored,
    /// Redacted, under a first line that says so and how, if at all, they can be shown.
    Redacted(ValuesNote),
}

/// What the first line of redacted values says about showing them: it depends on who asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValuesNote {
    /// The command line, where `--show-values` prints them.
    ShowValuesFlag,
    /// The MCP tool, which has no way to show them.
    NeverOverMcp,
}

impl ValuesNote {
    /// The first line of redacted values output.
    pub const fn header(self) -> &'static str {
        match self {
            ValuesNote::ShowValuesFlag => "# values redacted: pass --show-values to print them",
            ValuesNote::NeverOverMcp => "# values redacted: they are never shown over MCP",
        }
    }
}

/// What `release show` shows: the sections asked for, in this order.
pub struct ReleaseShown<'a> {
    /// `helm get metadata` of the revision shown.
    pub metadata: Option<&'a StoredRelease>,
    /// `helm history`: every revision read.
    pub history: Option<&'a [StoredRelease]>,
    /// `helm get values` of the revision shown, as asked.
    pub values: Option<(&'a Release, Values)>,
    /// The manifest of the revision shown, written as it is decoded (a large one is never
    /// held whole).
    pub manifest: Option<&'a dyn ManifestSource>,
}

/// Where the manifest comes from: decoding writes it to `out` (redacted as
/// [`liveproof_helm::show::ManifestWriter`] redacts), a document at a time.
pub trait ManifestSource {
    fn write_manifest(&self, out: &mut dyn Write) -> io::Result<()>;
}

impl Render for ReleaseShown<'_> {
    const FORMATS: &'static [Format] = &[Format::Text];

    fn render(&self, format: Format, _: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        if format != Format::Text {
            return Err(crate::unsupported("a Helm release", format, Self::FORMATS));
        }
        let mut sections = Sections { out, written: 0 };
        if let Some(stored) = self.metadata {
            sections.text(&metadata(stored))?;
        }
        if let Some(revisions) = self.history {
            sections.text(&history(revisions))?;
        }
        if let Some((release, shown)) = self.values {
            sections.text(&values(release, shown))?;
        }
        if let Some(manifest) = self.manifest {
            sections.write(|out| manifest.write_manifest(out))?;
        }
        Ok(())
    }
}

impl Outcome for ReleaseShown<'_> {
    /// A release that cannot be shown is an error (exit 2), not an outcome.
    fn exit_code(&self) -> u8 {
        0
    }
}

/// Sections one blank line apart, each ending in a newline.
struct Sections<'a> {
    out: &'a mut dyn Write,
    written: usize,
}

impl Sections<'_> {
    fn text(&mut self, text: &str) -> io::Result<()> {
        self.write(|out| out.write_all(text.as_bytes()))
    }

    fn write(&mut self, section: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
        if self.written > 0 {
            self.out.write_all(b"\n")?;
        }
        self.written += 1;
        let mut out = LastByte::new(&mut *self.out);
        section(&mut out)?;
        if out.last() != Some(b'\n') {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// `helm get metadata`: one `KEY: value` per line, plus where the release was read from.
pub fn metadata(r: &StoredRelease) -> String {
    let release = &r.release;
    let chart = &release.chart.metadata;
    let mut out = String::new();
    let mut line = |key: &str, value: &str| {
        let _ = writeln!(out, "{key}: {}", clean(value));
    };
    line("NAME", &release.name);
    line("CHART", &chart.name);
    line("VERSION", &chart.version);
    line("APP_VERSION", chart.app_version.as_deref().unwrap_or(""));
    line("NAMESPACE", &release.namespace);
    line("REVISION", &release.version.to_string());
    line("STATUS", release.info.status.as_str());
    // Helm prints RFC 3339 in seconds; a missing time cannot be read, so say so.
    line(
        "DEPLOYED_AT",
        &release
            .info
            .last_deployed
            .map_or_else(|| "unknown".to_owned(), rfc3339_seconds),
    );
    line("STORAGE", &r.object.to_string());
    out
}

/// `helm get values`: the user-supplied values as YAML, as `shown` says.
pub fn values(r: &Release, shown: Values) -> String {
    let mut out = String::new();
    let shown = match shown {
        Values::AsStored => r.config.expose().clone(),
        Values::Redacted(note) => {
            out.push_str(note.header());
            out.push('\n');
            r.config.redacted()
        }
    };
    out.push_str("USER-SUPPLIED VALUES:\n");
    if r.config.is_empty() {
        out.push_str("{}\n");
    } else {
        out.push_str(&liveproof_helm::yaml::to_yaml_1_1(&shown));
    }
    out
}

/// `helm history`: REVISION, UPDATED, STATUS, CHART, APP VERSION, DESCRIPTION, oldest first.
/// Times are UTC in Go's `time.ANSIC` layout, as Helm prints them; a missing time is `-`.
pub fn history(rs: &[StoredRelease]) -> String {
    let mut sorted: Vec<&StoredRelease> = rs.iter().collect();
    sorted.sort_by_key(|stored| stored.release.version);
    let header = [
        "REVISION",
        "UPDATED",
        "STATUS",
        "CHART",
        "APP VERSION",
        "DESCRIPTION",
    ];
    let mut rows: Vec<[String; 6]> = vec![header.map(str::to_owned)];
    for stored in sorted {
        let release = &stored.release;
        let chart = &release.chart.metadata;
        rows.push([
            release.version.to_string(),
            release
                .info
                .last_deployed
                .map_or_else(|| "-".to_owned(), ansic),
            clean(release.info.status.as_str()),
            clean(&format!("{}-{}", chart.name, chart.version)),
            clean(chart.app_version.as_deref().unwrap_or("")),
            truncate(&clean(&release.info.description), 60),
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let _ = write!(line, "{cell:<width$}");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn rfc3339_seconds(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn ansic(ts: Timestamp) -> String {
    ts.strftime("%a %b %e %H:%M:%S %Y").to_string()
}

/// Stored text is untrusted: keep control characters (terminal escapes) out of the output.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{kept}...")
}
