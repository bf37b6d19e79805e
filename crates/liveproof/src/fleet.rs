//! `verify` over several clusters (`--context` repeated, `--all-contexts`): the same
//! verification against each, `--max-concurrency` clusters at a time, each bounded as one cluster's
//! verify is (`--request-timeout`, `--timeout`). A cluster that cannot be verified is an
//! error for that cluster in the fleet's report, never a pass and never a hang. Each cluster
//! is the verifier's (as one cluster's verify is); `verify` prints the fleet. The clusters
//! read at once share `--max-response-size`: one flooding cluster cannot take the memory
//! the others need (it once took all the machine's 23 GB).

use futures::StreamExt;
use liveproof_evidence::fleet::FleetReport;

use crate::config::{Source, VerifyConfig};

/// Verifies `config` in each of its fleet's contexts; the fleet's report.
pub async fn report(config: &VerifyConfig) -> FleetReport {
    let at_once = config.fleet_concurrency.min(config.fleet.len()).max(1);
    // Each cluster is a task of its own: their judging (CPU) spreads over the runtime's
    // threads instead of taking turns on one.
    let results = futures::stream::iter(config.fleet.iter().cloned())
        .map(|context| {
            let mut one = config.clone();
            one.fleet.clear();
            // Decoded releases are known by object and resourceVersion, which two clusters
            // can share: each cluster decodes its own. (What git says is the same for all.)
            one.decode_cache = Default::default();
            if let Source::Live(options) = &mut one.source {
                options.context = Some(context.clone());
                options.response_budget.shared_by = at_once;
            }
            let task = tokio::spawn(async move {
                crate::one_cluster::report(&one)
                    .await
                    .map_err(|e| crate::error_text(&e))
            });
            async move {
                let result = task.await.unwrap_or_else(|e| {
                    Err(format!("the verification of this cluster stopped: {e}"))
                });
                if let Err(error) = &result {
                    tracing::warn!("cluster {context}: {error}");
                }
                (context, result)
            }
        })
        .buffered(config.fleet_concurrency)
        .collect::<Vec<_>>()
        .await;
    FleetReport::new(results)
}
