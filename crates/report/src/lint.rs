//! `liveproof lint`'s report, three renderers: text for people, JSON for scripts, SARIF 2.1.0 for
//! code-scanning upload (GitHub `github/codeql-action/upload-sarif`).

use std::io::{self, Write};

use serde_json::{json, Value};

use liveproof_lint::{Level, Linted, RULES};

impl crate::Render for Linted {
    const FORMATS: &'static [crate::Format] = &[
        crate::Format::Text,
        crate::Format::Json,
        crate::Format::Sarif,
    ];

    fn render(
        &self,
        format: crate::Format,
        _: crate::TextStyle,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        match format {
            crate::Format::Text => render_text(self, out),
            crate::Format::Json => render_json(self, out),
            crate::Format::Sarif => render_sarif(self, out),
            _ => Err(crate::unsupported("lint's report", format, Self::FORMATS)),
        }
    }
}

impl crate::Outcome for Linted {
    /// 1 when an error-level finding exists, else 0.
    fn exit_code(&self) -> u8 {
        u8::from(self.has_errors())
    }
}

/// The `schema` field of `-o json`.
pub const JSON_SCHEMA: &str = "liveproof/lint/v1";

/// `file:line: level: message [id]` and its fix, grouped by file; notes first, a count last.
pub fn render_text(report: &Linted, out: &mut dyn Write) -> io::Result<()> {
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    let mut last_file: Option<&str> = None;
    for f in &report.findings {
        if last_file.is_some_and(|l| l != f.file)
            || (last_file.is_none() && !report.notes.is_empty())
        {
            writeln!(out)?;
        }
        last_file = Some(&f.file);
        writeln!(
            out,
            "{}:{}: {}: {} [{}]",
            f.file,
            f.line,
            f.level.as_str(),
            f.message,
            f.id
        )?;
        writeln!(out, "    fix: {}", f.fix)?;
    }
    let count = |level| report.findings.iter().filter(|f| f.level == level).count();
    let (errors, warnings) = (count(Level::Error), count(Level::Warning));
    if !report.findings.is_empty() || !report.notes.is_empty() {
        writeln!(out)?;
    }
    if report.findings.is_empty() {
        writeln!(out, "no findings: nothing here will stay undeployed after the merge, as far as the repository shows")
    } else {
        writeln!(
            out,
            "{errors} error{}, {warnings} warning{}",
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        )
    }
}

/// `{"schema":"liveproof/lint/v1","base":…,"head":…,"findings":[…],"notes":[…]}`.
pub fn render_json(report: &Linted, out: &mut dyn Write) -> io::Result<()> {
    let value = json!({
        "schema": JSON_SCHEMA,
        "base": report.base,
        "head": report.head,
        "findings": report.findings,
        "notes": report.notes,
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}

fn sarif_level(level: Level) -> &'static str {
    level.as_str()
}

/// A relative path as a URI reference: `/` kept, everything outside RFC 3986's unreserved
/// characters percent-encoded.
fn uri(path: &str) -> String {
    let mut s = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// SARIF 2.1.0: every rule in `tool.driver.rules`, a result per finding with its location
/// relative to PATH (`uriBaseId: %SRCROOT%`), notes as tool execution notifications.
pub fn render_sarif(report: &Linted, out: &mut dyn Write) -> io::Result<()> {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": format!("{} Source: {}", r.help, r.source)},
                "helpUri": r.source,
                "defaultConfiguration": {"level": sarif_level(r.level)},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.id,
                "level": sarif_level(f.level),
                "message": {"text": format!("{} Fix: {}.", f.message, f.fix.trim_end_matches('.'))},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(&f.file), "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": f.line.max(1)},
                    }
                }],
            });
            if let Some(index) = RULES.iter().position(|r| r.id == f.id) {
                result["ruleIndex"] = json!(index);
            }
            result
        })
        .collect();
    let notifications: Vec<Value> = report
        .notes
        .iter()
        .map(|n| json!({"level": "note", "message": {"text": n}}))
        .collect();
    let run = json!({
        "tool": {"driver": {
            "name": "liveproof",
            "informationUri": env!("CARGO_PKG_REPOSITORY"),
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }},
        "invocations": [{
            "executionSuccessful": true,
            "toolExecutionNotifications": notifications,
        }],
        "results": results,
    });
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}
