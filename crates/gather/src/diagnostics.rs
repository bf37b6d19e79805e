//! After the judge, and only for a report that is not live: what explains it. The reads (Warning
//! events, `--logs` lines) cost a live report nothing; evidence's pure `diagnose::explain` fills each
//! target's diagnostics and never changes a verdict.

use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::{Observed, Report, Verdict};

use crate::Cluster;

/// For a report that is not live: read the Warning events of the namespaces concerned (one
/// LIST per event API and namespace) and, with `--logs`, the not-ready containers' last lines,
/// then explain the report with them ([`liveproof_evidence::diagnose::explain`]). A live report costs no request here.
pub async fn read(
    cluster: &Cluster,
    observed: &mut Observed,
    report: &mut Report,
    logs: Option<i64>,
    since: Option<jiff::Timestamp>,
) {
    let not_live: Vec<&liveproof_evidence::TargetReport> = report
        .targets
        .iter()
        .filter(|t| t.verdict != Verdict::Live && !t.namespace.is_empty())
        .collect();
    if not_live.is_empty() {
        return;
    }
    let mut namespaces: Vec<String> = not_live.iter().map(|t| t.namespace.clone()).collect();
    namespaces.sort();
    namespaces.dedup();
    for ns in &namespaces {
        cluster.gather_warning_events(ns, observed).await;
    }
    if let Some(tail) = logs {
        let wanted: Vec<(String, String, String, bool)> = not_live
            .iter()
            .filter_map(|t| {
                let kind = t.kind.target().filter(|k| k.is_workload())?;
                Some(liveproof_evidence::diagnose::log_requests(
                    observed,
                    &liveproof_evidence::Target::new(kind, Some(&t.namespace), &t.name),
                    &t.namespace,
                ))
            })
            .flatten()
            .collect();
        for (ns, pod, container, previous) in wanted {
            match cluster
                .container_log(&ns, &pod, &container, tail, previous)
                .await
            {
                Ok(lines) => {
                    observed.logs.insert((ns, pod, container), lines);
                }
                Err(e) => tracing::warn!("{}", e.with_hint()),
            }
        }
    }
    liveproof_evidence::diagnose::explain(report, observed, since, logs.is_some());
}
