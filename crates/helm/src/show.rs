//! What `helm get manifest|metadata|values` and `helm history` print, for
//! `liveproof release show`, minus the secrets: rendered Secrets' data and the user's values are
//! redacted unless the caller asks for values.

use std::fmt::Write as _;

use jiff::Timestamp;
use serde_yaml::Value as Yaml;

use crate::manifest::{parse_document, split_documents};
use crate::release::Release;
use crate::storage::StoredRelease;
use crate::values::REDACTED;

/// The first line of redacted values output.
pub const VALUES_REDACTED_HEADER: &str = "# values redacted: pass --show-values to print them";

/// The installed manifest as `helm get manifest` prints it, except that the values under a
/// rendered Secret's `data` and `stringData` are replaced by `<redacted>` (that document is
/// re-serialized; its `# Source:` line is kept).
pub fn manifest(r: &Release) -> String {
    let mut out = String::new();
    for document in split_documents(&r.manifest) {
        let document = document.trim_matches(['\n', '\r']);
        if document.trim().is_empty() {
            continue;
        }
        out.push_str("---\n");
        match redacted_secret(document) {
            Some(redacted) => out.push_str(&redacted),
            None => {
                out.push_str(document);
                out.push('\n');
            }
        }
    }
    out
}

/// `Some(text)` when the document is a Secret, with its data values redacted.
fn redacted_secret(document: &str) -> Option<String> {
    let mut value = parse_document(document)?;
    if value.get("kind").and_then(Yaml::as_str) != Some("Secret") {
        return None;
    }
    let mut redacted_keys = false;
    for field in ["data", "stringData"] {
        if let Some(Yaml::Mapping(map)) = value.get_mut(field) {
            for (_, entry) in map.iter_mut() {
                *entry = Yaml::String(REDACTED.to_owned());
                redacted_keys = true;
            }
        }
    }
    let mut out = String::new();
    for line in document.lines().take_while(|line| line.starts_with('#')) {
        out.push_str(line);
        out.push('\n');
    }
    if redacted_keys {
        out.push_str("# Secret data redacted by liveproof\n");
    }
    // A parsed Value always serializes; the fallback hides the document rather than leak it.
    out.push_str(&serde_yaml::to_string(&value).unwrap_or_else(|_| format!("{REDACTED}\n")));
    Some(out)
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
    line("STORAGE", &r.object);
    out
}

/// `helm get values`: the user-supplied values as YAML, redacted unless `show_values`.
pub fn values(r: &Release, show_values: bool) -> String {
    let mut out = String::new();
    let shown = if show_values {
        r.config.expose().clone()
    } else {
        out.push_str(VALUES_REDACTED_HEADER);
        out.push('\n');
        r.config.redacted()
    };
    out.push_str("USER-SUPPLIED VALUES:\n");
    if r.config.is_empty() {
        out.push_str("{}\n");
    } else {
        match serde_yaml::to_string(&shown) {
            Ok(yaml) => out.push_str(&yaml),
            // Only reachable for a Value serde_yaml cannot write; never fall back to raw text.
            Err(_) => out.push_str("# values could not be rendered as YAML\n"),
        }
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
