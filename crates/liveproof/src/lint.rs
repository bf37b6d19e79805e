//! `liveproof lint`: the CLI face of `liveproof-lint` (gather, judge, render, exit code).

use std::io::Write;

use crate::cli::{LintArgs, LintFormat};

/// Exit 1 when an error-level finding exists, else 0; errors (exit 2) are returned.
pub fn run(args: &LintArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let options = liveproof_lint::Options {
        path: args.path.clone(),
        base: args.base.clone(),
        head: args.head.clone(),
    };
    let input = liveproof_lint::gather(&options)?;
    let report = liveproof_lint::lint(&input);
    match args.output {
        LintFormat::Text => liveproof_report::render_lint_text(&report, out)?,
        LintFormat::Json => liveproof_report::render_lint_json(&report, out)?,
        LintFormat::Sarif => liveproof_report::render_lint_sarif(&report, out)?,
    }
    Ok(u8::from(report.has_errors()))
}
