//! `liveproof verify`: gather, judge, render, exit with the verdict.

use std::io::Write;
use std::time::Instant;

use futures::StreamExt;
use liveproof_evidence::{final_failure, judge, Check, Observed, Report, Status, Verdict};
use liveproof_gather::{resolve_targets, Cluster};

use crate::config::{Source, VerifyConfig};
use crate::progress::Progress;

pub async fn run(config: &VerifyConfig, out: &mut dyn Write) -> anyhow::Result<u8> {
    if let Some(origin) = &config.since_origin {
        tracing::info!(
            "change time {} ({origin})",
            config
                .change
                .since
                .map(|t| t.to_string())
                .unwrap_or_default()
        );
    }
    let report = match &config.source {
        Source::Offline(path) => {
            let observed = liveproof_gather::offline::load(path)?;
            let default_ns = config.namespace.as_deref().unwrap_or("default");
            let targets = resolve_targets(
                &observed,
                &config.targets,
                default_ns,
                config.all_namespaces,
            );
            judge(&observed, &config.change, &targets, default_ns)
        }
        Source::Live(options) => {
            let cluster = Cluster::connect(options).await?;
            let report = match config.wait {
                None => {
                    let observed = cluster
                        .gather(&config.targets, config.all_namespaces)
                        .await?;
                    let ns = cluster.default_namespace();
                    let targets =
                        resolve_targets(&observed, &config.targets, ns, config.all_namespaces);
                    judge(&observed, &config.change, &targets, ns)
                }
                Some(timeout) => wait(config, &cluster, timeout).await?,
            };
            tracing::info!("{} API requests", cluster.request_count());
            report
        }
    };
    liveproof_report::render(&report, config.format, config.style, out)?;
    Ok(report.verdict.exit_code())
}

/// Watches until live, a final failure, or the timeout; returns the last judgement.
async fn wait(
    config: &VerifyConfig,
    cluster: &Cluster,
    timeout: std::time::Duration,
) -> anyhow::Result<Report> {
    let deadline = Instant::now() + timeout;
    let mut progress = Progress::start("gathering");
    let judge_now = |observed: &Observed| {
        let ns = cluster.default_namespace();
        let targets = resolve_targets(observed, &config.targets, ns, config.all_namespaces);
        let report = judge(
            observed,
            &config.change,
            &targets,
            cluster.default_namespace(),
        );
        let final_reason = final_failure(observed, &targets, ns);
        if let Some(reason) = &final_reason {
            tracing::warn!("stopped waiting: {reason}; waiting longer will not fix it");
        }
        let done = report.verdict == Verdict::Live || final_reason.is_some();
        (report, done)
    };
    let mut updates = Box::pin(
        cluster
            .watch(&config.targets, config.all_namespaces)
            .await?,
    );
    let mut last: Option<Report> = None;
    loop {
        let next = tokio::time::timeout_at(deadline.into(), updates.next()).await;
        match next {
            Ok(Some(observed)) => {
                let (report, done) = judge_now(&observed?);
                progress.say(&waiting_for(&report));
                last = Some(report);
                if done {
                    break;
                }
            }
            // The stream ended or the time is up: report what was seen last.
            Ok(None) | Err(_) => {
                if last.is_none() {
                    let observed = cluster
                        .gather(&config.targets, config.all_namespaces)
                        .await?;
                    last = Some(judge_now(&observed).0);
                }
                if let Some(report) = &last {
                    if report.verdict != Verdict::Live {
                        tracing::warn!(
                            "--timeout {} ended before the change was live",
                            humanize(timeout)
                        );
                    }
                }
                break;
            }
        }
    }
    progress.finish();
    last.ok_or_else(|| anyhow::anyhow!("no observation was made before the timeout"))
}

fn humanize(d: std::time::Duration) -> String {
    jiff::SignedDuration::try_from(d)
        .map(|d| format!("{d:#}"))
        .unwrap_or_else(|_| format!("{}s", d.as_secs()))
}

/// What a waiting person wants to read: per target not yet live, the pods and the first
/// thing still missing.
fn waiting_for(report: &Report) -> String {
    let parts: Vec<String> = report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live)
        .map(|t| {
            let pods = t
                .evidence
                .iter()
                .find(|e| e.check == Check::PodsCurrent)
                .map(|e| e.observed.clone());
            let blocking = t
                .evidence
                .iter()
                .find(|e| {
                    matches!(e.status, Status::Fail | Status::Unknown)
                        && e.check != Check::PodsCurrent
                })
                .map(|e| format!("{}: {}", e.check, e.observed));
            let what: Vec<String> = pods.into_iter().chain(blocking).collect();
            format!("{} {}/{}: {}", t.kind, t.namespace, t.name, what.join("; "))
        })
        .collect();
    if parts.is_empty() {
        "live".to_string()
    } else {
        parts.join(" | ")
    }
}
