//! `verify` over several clusters (`--context` repeated, `--all-contexts`): each cluster's
//! report, or why it could not be verified, and the verdict the worst of them.

use serde::{Deserialize, Serialize};

use crate::model::{ChangeSummary, Report, TargetReport, Verdict, SCHEMA};

/// The fleet's report: `liveproof/v1` extended by `clusters` (each cluster's own complete
/// report, or its error). `verdict` and `targets` read as in a one-cluster report, so a
/// consumer of that form still gets the overall answer and every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetReport {
    pub schema: String,
    /// The worst over the clusters (not_live < unproven < superseded < live); a cluster that
    /// could not be verified counts as unproven.
    pub verdict: Verdict,
    pub change: ChangeSummary,
    /// Every cluster's targets, cluster by cluster (`clusters` says which is which).
    pub targets: Vec<TargetReport>,
    /// Seconds from the commit to `live_since` of the last target to go live in any cluster:
    /// only when the fleet is live and every target in every cluster is dated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_time_seconds: Option<i64>,
    pub clusters: Vec<ClusterResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveproof_version: Option<String>,
}

/// One cluster of the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClusterResult {
    /// The kubeconfig context.
    pub context: String,
    /// Its report's verdict; unproven when it could not be verified.
    pub verdict: Verdict,
    /// Why it could not be verified (unreachable, refused credentials, timed out…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its report, as `verify --context CONTEXT -o json` prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
}

impl FleetReport {
    /// The fleet of `results` (context, report or error), in the order given.
    pub fn new(results: Vec<(String, Result<Report, String>)>) -> FleetReport {
        let clusters: Vec<ClusterResult> = results
            .into_iter()
            .map(|(context, result)| match result {
                Ok(report) => ClusterResult {
                    context,
                    verdict: report.verdict,
                    error: None,
                    report: Some(report),
                },
                Err(error) => ClusterResult {
                    context,
                    verdict: Verdict::Unproven,
                    error: Some(error),
                    report: None,
                },
            })
            .collect();
        let reports = || clusters.iter().filter_map(|c| c.report.as_ref());
        let verdict = clusters
            .iter()
            .map(|c| c.verdict)
            .min()
            .unwrap_or(Verdict::Unproven);
        let change: ChangeSummary = reports()
            .next()
            .map(|r| r.change.clone())
            .unwrap_or_default();
        FleetReport {
            schema: SCHEMA.to_string(),
            verdict,
            lead_time_seconds: crate::model::lead_time(
                verdict,
                change.committed_at.as_deref(),
                reports().flat_map(|r| r.targets.iter()),
            ),
            change,
            targets: reports().flat_map(|r| r.targets.iter().cloned()).collect(),
            generated_at: reports().find_map(|r| r.generated_at.clone()),
            liveproof_version: reports().find_map(|r| r.liveproof_version.clone()),
            clusters,
        }
    }

    /// The verdict's exit code; 2 (an operational error) when no cluster could be verified.
    pub fn exit_code(&self) -> u8 {
        if self.clusters.iter().all(|c| c.report.is_none()) {
            2
        } else {
            self.verdict.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: Verdict) -> Report {
        Report {
            schema: SCHEMA.into(),
            verdict,
            change: ChangeSummary::default(),
            targets: Vec::new(),
            lead_time_seconds: None,
            snapshot: None,
            next_step: None,
            generated_at: None,
            liveproof_version: None,
            cluster: None,
            wait: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_verdict_is_the_worst_and_an_unverified_cluster_is_unproven_never_live() {
        let live = FleetReport::new(vec![
            ("a".into(), Ok(report(Verdict::Live))),
            ("b".into(), Ok(report(Verdict::Live))),
        ]);
        assert_eq!((live.verdict, live.exit_code()), (Verdict::Live, 0));

        let one_down = FleetReport::new(vec![
            ("a".into(), Ok(report(Verdict::Live))),
            ("b".into(), Err("cannot reach the API server".into())),
        ]);
        assert_eq!(
            (one_down.verdict, one_down.exit_code()),
            (Verdict::Unproven, 3)
        );
        assert_eq!(
            one_down.clusters[1].error.as_deref(),
            Some("cannot reach the API server")
        );

        let not_live = FleetReport::new(vec![
            ("a".into(), Err("x".into())),
            ("b".into(), Ok(report(Verdict::NotLive))),
        ]);
        assert_eq!(
            (not_live.verdict, not_live.exit_code()),
            (Verdict::NotLive, 1)
        );

        let none = FleetReport::new(vec![("a".into(), Err("x".into()))]);
        assert_eq!(none.exit_code(), 2);
    }

    /// Superseded ranks between unproven and live: a superseded cluster beside live ones makes
    /// the fleet superseded (exit 4); beside a not-live, an unproven or an unreachable one, the
    /// fleet is that.
    #[test]
    fn superseded_ranks_above_unproven_and_below_live() {
        let fleet = |verdicts: &[Result<Verdict, &str>]| {
            FleetReport::new(
                verdicts
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let result = v.map(report).map_err(str::to_string);
                        (format!("c{i}"), result)
                    })
                    .collect(),
            )
        };
        let superseded = fleet(&[Ok(Verdict::Live), Ok(Verdict::Superseded)]);
        assert_eq!(
            (superseded.verdict, superseded.exit_code()),
            (Verdict::Superseded, 4)
        );
        for (worse, code) in [
            (Ok(Verdict::NotLive), 1),
            (Ok(Verdict::Unproven), 3),
            (Err("unreachable"), 3),
        ] {
            let f = fleet(&[Ok(Verdict::Superseded), worse]);
            assert_eq!(f.exit_code(), code, "{worse:?}");
        }
        assert_eq!(superseded.lead_time_seconds, None, "never live as such");
    }

    /// The fleet's lead time runs to the last target of any cluster, and only when the whole
    /// fleet is live.
    #[test]
    fn the_lead_time_runs_to_the_last_target_of_any_cluster() {
        let dated = |verdict: Verdict, since: Option<&str>| {
            let mut r = report(verdict);
            r.change.committed_at = Some("2026-07-12T09:40:00Z".into());
            r.targets.push(TargetReport {
                kind: crate::TargetKind::Deployment.into(),
                namespace: "apps".into(),
                name: "web".into(),
                verdict,
                via: None,
                evidence: Vec::new(),
                diagnostics: Vec::new(),
                next_step: None,
                live_since: since.map(str::to_string),
                live_since_unknown: None,
                timeline: Vec::new(),
                superseded_by: None,
                pods: Default::default(),
            });
            r
        };
        let live = FleetReport::new(vec![
            (
                "a".into(),
                Ok(dated(Verdict::Live, Some("2026-07-12T10:00:00Z"))),
            ),
            (
                "b".into(),
                Ok(dated(Verdict::Live, Some("2026-07-12T10:07:30Z"))),
            ),
        ]);
        assert_eq!(live.lead_time_seconds, Some(1650));
        let one_not_live = FleetReport::new(vec![
            (
                "a".into(),
                Ok(dated(Verdict::Live, Some("2026-07-12T10:00:00Z"))),
            ),
            ("b".into(), Ok(dated(Verdict::NotLive, None))),
        ]);
        assert_eq!(one_not_live.lead_time_seconds, None);
        let one_down = FleetReport::new(vec![
            (
                "a".into(),
                Ok(dated(Verdict::Live, Some("2026-07-12T10:00:00Z"))),
            ),
            ("b".into(), Err("unreachable".into())),
        ]);
        assert_eq!(one_down.lead_time_seconds, None);
    }
}
