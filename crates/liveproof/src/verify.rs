//! `liveproof verify`: one cluster's report (the verifier's, or `--snapshot`'s), or a fleet's
//! over several clusters — the model the CLI prints and reads the exit code off.

use liveproof_report::{Render, Verification};

use liveproof_evidence::record::DeploymentRecord;

use crate::config::VerifyConfig;

/// Verifies what `config` says, in one cluster or each of its fleet's.
pub async fn run(config: &VerifyConfig) -> anyhow::Result<Verification> {
    Ok(if config.fleet.is_empty() {
        Verification::One(Box::new(crate::one_cluster::report(config).await?))
    } else {
        Verification::Fleet(Box::new(crate::fleet::report(config).await))
    })
}

/// What `--superseded-ok` says as it turns exit 4 into 0: what replaced the change.
pub fn superseded_notice(verified: &Verification) -> String {
    let targets = match verified {
        Verification::One(report) => &report.targets,
        Verification::Fleet(fleet) => &fleet.targets,
    };
    let by = targets
        .iter()
        .find_map(|t| t.superseded_by.as_ref())
        .map_or_else(
            || "a later change".to_string(),
            |by| format!("{}, {}", by.named(), by.liveness()),
        );
    format!(
        "superseded by {by}: not deployed as such, nothing to roll back (exit 0 for --superseded-ok)"
    )
}

/// Each `--report FILE`: the same result in the format asked for there, each written whole or
/// not at all (after stdout: the report printed is never held back by the file).
pub fn write_report(verified: &Verification, config: &VerifyConfig) -> anyhow::Result<()> {
    for (path, format) in &config.report {
        let mut bytes = Vec::new();
        verified.render(*format, liveproof_report::TextStyle::plain(), &mut bytes)?;
        crate::output::write_report(path, &bytes)?;
    }
    Ok(())
}

/// `--record FILE`: the deployment record of this verification, one line appended (after
/// stdout, as `--report`).
pub fn write_record(verified: &Verification, config: &VerifyConfig) -> anyhow::Result<()> {
    let Some(path) = &config.record else {
        return Ok(());
    };
    let record = match verified {
        Verification::One(report) => DeploymentRecord::of_report(report),
        Verification::Fleet(fleet) => DeploymentRecord::of_fleet(fleet),
    };
    let lines = match config.record_format {
        crate::cli::RecordFormat::Liveproof => Ok(record.line()),
        crate::cli::RecordFormat::Devlake => record
            .devlake(&config.record_to)
            .map(|payload| liveproof_evidence::dora::line(&payload)),
        crate::cli::RecordFormat::Datadog => record.datadog(&config.record_to).map(|events| {
            events
                .iter()
                .map(liveproof_evidence::dora::line)
                .collect::<String>()
        }),
    };
    match lines {
        Ok(lines) => Ok(crate::output::append_record(path, &lines)?),
        Err(unsendable) => {
            crate::say_notice(&format!(
                "--record {}: nothing appended: {unsendable}",
                path.display()
            ));
            Ok(())
        }
    }
}
