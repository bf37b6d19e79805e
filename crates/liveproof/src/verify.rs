//! `liveproof verify`: gather, judge, render, exit with the verdict.

use std::io::Write;
use std::time::Instant;

use futures::StreamExt;
use liveproof_evidence::{
    final_failure, judge, ChartChange, Check, Observed, ReleaseHistory, Report, ResourceKind,
    Status, Target, TargetKind, Verdict,
};
use liveproof_gather::{resolve_targets, Cluster};

use crate::config::{Source, VerifyConfig};
use crate::digests::RegistryFacts;
use crate::progress::Progress;

pub async fn run(config: &VerifyConfig, out: &mut dyn Write) -> anyhow::Result<u8> {
    let report = match &config.snapshot {
        Some(dir) => crate::snapshot::verify(config, dir).await?,
        None => produce(config).await?,
    };
    liveproof_report::render(&report, config.format, config.style, out)?;
    if let Some((path, format)) = &config.report {
        write_report(&report, path, *format)?;
    }
    Ok(report.verdict.exit_code())
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
        liveproof_report::TextStyle { color: false },
        &mut bytes,
    )?;
    let tmp = path.with_extension("liveproof-tmp");
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| anyhow::anyhow!("--report {}: {e}", path.display()))
}

/// Gathers and judges: the report `run` renders.
pub async fn produce(config: &VerifyConfig) -> anyhow::Result<Report> {
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
            let facts = registry_facts(config, None, &observed).await?;
            judge_snapshot(config, &facts, observed, default_ns)?.0
        }
        Source::Live(options) => {
            let cluster = Cluster::connect(options).await?;
            let report = match config.wait {
                None => {
                    let observed = cluster
                        .gather(&config.targets, config.all_namespaces)
                        .await?;
                    let facts = registry_facts(config, Some(&cluster), &observed).await?;
                    judge_snapshot(config, &facts, observed, cluster.default_namespace())?.0
                }
                Some(timeout) => {
                    wait(config, &cluster, timeout, &|r: &Report| {
                        r.verdict == Verdict::Live
                    })
                    .await?
                }
            };
            tracing::info!("{} API requests", cluster.request_count());
            report
        }
    };
    Ok(report)
}

/// A release whose storage cannot be decoded, when it is all that was asked about: an
/// operational error (exit 2) rather than a report that can only say "unproven".
#[derive(Debug, thiserror::Error)]
#[error("{target}: the release storage cannot be read: {error}\nhint: inspect it with `{inspect}`; `liveproof release show` decodes it the same way")]
pub struct UnreadableRelease {
    target: String,
    /// The kubectl command that shows the storage object.
    inspect: String,
    error: String,
}

/// Judges one snapshot: applies what the flags say about decoding and about the commit, then
/// the checks. Also says whether a failure is final (for `--wait`).
fn judge_snapshot(
    config: &VerifyConfig,
    facts: &RegistryFacts,
    mut observed: Observed,
    default_ns: &str,
) -> Result<(Report, Option<String>), UnreadableRelease> {
    observed.release_limits.max_decompressed = config.max_release_size;
    facts.apply(&mut observed);
    let targets = resolve_targets(
        &observed,
        &config.targets,
        default_ns,
        config.all_namespaces,
    );
    observed.chart_changes = chart_changes(config, &observed, &targets, default_ns);
    if let [only] = targets.as_slice() {
        if let Some((object, error)) = unreadable_release(&observed, only, default_ns) {
            return Err(UnreadableRelease {
                target: only.to_string(),
                inspect: kubectl_get(&object),
                error,
            });
        }
    }
    let report = judge(&observed, &config.change, &targets, default_ns);
    let final_reason = final_failure(&observed, &targets, default_ns);
    Ok((report, final_reason))
}

async fn registry_facts(
    config: &VerifyConfig,
    cluster: Option<&Cluster>,
    observed: &Observed,
) -> anyhow::Result<RegistryFacts> {
    RegistryFacts::gather(
        config.change.digests,
        &config.insecure_registries,
        cluster,
        observed,
    )
    .await
}

/// `apps/Secret/NAME` → `kubectl -n apps get secret NAME -o yaml`.
fn kubectl_get(object: &str) -> String {
    match object.splitn(3, '/').collect::<Vec<_>>().as_slice() {
        [ns, kind, name] => format!(
            "kubectl -n {ns} get {} {name} -o yaml",
            kind.to_ascii_lowercase()
        ),
        _ => format!("kubectl get {object} -o yaml"),
    }
}

/// The newest revision's storage error of a release or HelmRelease target, if any.
fn unreadable_release(
    observed: &Observed,
    target: &Target,
    default_ns: &str,
) -> Option<(String, String)> {
    let ns = target.namespace_or(default_ns);
    let (storage_ns, name) = match target.kind {
        TargetKind::Release => (ns.to_string(), target.name.clone()),
        TargetKind::HelmRelease => {
            let hr = observed.find_other(ResourceKind::HelmRelease, ns, &target.name)?;
            liveproof_evidence::helmrelease_release(hr, ns)
        }
        _ => return None,
    };
    let history = ReleaseHistory::read(observed, &storage_ns, &name);
    history
        .newest_unreadable()
        .map(|(object, _, error)| (object.clone(), error.clone()))
}

/// For HelmRelease targets with `--commit`: what the commit did to the chart, from `--repo`.
/// Without a repository that holds the commit, there is simply no such fact.
fn chart_changes(
    config: &VerifyConfig,
    observed: &Observed,
    targets: &[Target],
    default_ns: &str,
) -> Vec<ChartChange> {
    let Some(commit) = &config.change.commit else {
        return Vec::new();
    };
    targets
        .iter()
        .filter(|t| t.kind == TargetKind::HelmRelease)
        .filter_map(|t| {
            observed.find_other(
                ResourceKind::HelmRelease,
                t.namespace_or(default_ns),
                &t.name,
            )
        })
        .filter_map(|hr| {
            hr.pointer("/spec/chart/spec/chart")
                .and_then(serde_json::Value::as_str)
        })
        .filter_map(|chart| {
            match liveproof_gather::git::chart_change(&config.repo, commit, chart) {
                Ok(c) => Some(c),
                Err(e) => {
                    tracing::info!("no chart facts for {chart} from git: {e}");
                    None
                }
            }
        })
        .collect()
}

/// Watches until `done` holds for the judgement (for verify: live), a failure is final, or the
/// timeout; returns the last judgement.
pub async fn wait(
    config: &VerifyConfig,
    cluster: &Cluster,
    timeout: std::time::Duration,
    done: &dyn Fn(&Report) -> bool,
) -> anyhow::Result<Report> {
    let deadline = Instant::now() + timeout;
    let mut progress = Progress::start("gathering");
    let ns = cluster.default_namespace();
    // Registry facts are asked once, on the first snapshot, and laid onto every later one.
    let mut facts: Option<RegistryFacts> = None;
    let judge_now =
        |facts: &RegistryFacts, observed: Observed| -> Result<(Report, bool), UnreadableRelease> {
            let (report, final_reason) = judge_snapshot(config, facts, observed, ns)?;
            if let Some(reason) = &final_reason {
                tracing::warn!("stopped waiting: {reason}; waiting longer will not fix it");
            }
            let done = done(&report) || final_reason.is_some();
            Ok((report, done))
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
                let observed = observed?;
                if facts.is_none() {
                    facts = Some(registry_facts(config, Some(cluster), &observed).await?);
                }
                let (report, done) = judge_now(
                    facts.as_ref().unwrap_or(&RegistryFacts::default()),
                    observed,
                )?;
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
                    let facts = registry_facts(config, Some(cluster), &observed).await?;
                    last = Some(judge_now(&facts, observed)?.0);
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
