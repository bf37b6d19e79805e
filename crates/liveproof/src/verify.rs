//! `liveproof verify`: the verifier's report (or `--snapshot`'s), its next steps made whole,
//! rendered; exits with the verdict.

use std::io::Write;

use liveproof_evidence::Report;

use crate::config::VerifyConfig;

pub async fn run(config: &VerifyConfig, out: &mut dyn Write) -> anyhow::Result<u8> {
    if !config.fleet.is_empty() {
        return crate::fleet::run(config, out).await;
    }
    let report = report(config).await?;
    liveproof_report::render(&report, config.format, config.style, out)?;
    if let Some((path, format)) = &config.report {
        write_report(&report, path, *format)?;
    }
    Ok(report.verdict.exit_code())
}

/// The report `verify` prints: the verifier's (or `--snapshot`'s), with its next steps carrying
/// the user's flags.
pub async fn report(config: &VerifyConfig) -> anyhow::Result<Report> {
    let mut report = match &config.snapshot {
        Some(dir) => crate::snapshot::verify(config, dir).await?,
        None => crate::verifier::produce(config).await?,
    };
    crate::next_steps::Invocation::of(config).apply(&mut report);
    Ok(report)
}

/// `--report FILE`: the same report in another format, written whole or not at all.
fn write_report(
    report: &Report,
    path: &std::path::Path,
    format: liveproof_report::Format,
) -> anyhow::Result<()> {
    let mut bytes = Vec::new();
    liveproof_report::render(
        report,
        format,
        liveproof_report::TextStyle::plain(),
        &mut bytes,
    )?;
    Ok(crate::output::write_report(path, &bytes)?)
}
