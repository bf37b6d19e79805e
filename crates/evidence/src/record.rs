//! `verify --record FILE`: one line of JSON per verified change, for delivery-metrics tools
//! (a DORA dashboard's deployments and lead time). It is the report cut down to what such a
//! tool keeps: which commit, where, the verdict, when it went live and how long after the
//! commit. A superseded change was never live as such: its record has no live time and no lead
//! time, and each superseded target names the later change that replaced it. docs/metrics.md documents it field by field, with its mapping to Apache DevLake's
//! webhook deployment payload.

use serde::{Deserialize, Serialize};

use crate::fleet::FleetReport;
use crate::model::{live_since, ClusterRef, Report, SupersededBy, TargetReport, Verdict};

/// The `schema` of a record line.
pub const RECORD_SCHEMA: &str = "liveproof/record/v1";

/// One verified change, as `--record` appends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeploymentRecord {
    pub schema: String,
    /// Unique per verification: the commit (or `-`) and when it was judged, and the cluster
    /// context when there is one: `prod-eu/3f2c1ab…@2026-07-12T10:08:00Z`.
    pub id: String,
    /// When the evidence was read (the report's `generated_at`).
    pub recorded_at: String,
    /// The report's verdict, over every target and cluster.
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit's committer time, when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at: Option<String>,
    /// The change time the pods were judged against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// When the last target went live: only when live and every target is dated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_since: Option<String>,
    /// From the commit to `live_since`, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_time_seconds: Option<i64>,
    /// One cluster's report: where it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRef>,
    /// A fleet: each cluster's context and verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<RecordCluster>,
    pub targets: Vec<RecordTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveproof_version: Option<String>,
}

/// A cluster of a fleet, as a record names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordCluster {
    pub context: String,
    pub verdict: Verdict,
}

/// A target, as a record names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordTarget {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_since: Option<String>,
    /// The Helm or GitOps target it was reached from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// In a fleet: the cluster's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// When superseded: the later change that replaced it (as the report names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<SupersededBy>,
}

impl RecordTarget {
    fn of(t: &TargetReport, context: Option<&str>) -> RecordTarget {
        RecordTarget {
            kind: t.kind.name().to_string(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            verdict: t.verdict,
            live_since: t.live_since.clone(),
            via: t.via.clone(),
            context: context.map(str::to_string),
            superseded_by: t.superseded_by.clone(),
        }
    }
}

fn id(context: Option<&str>, commit: Option<&str>, at: &str) -> String {
    let change = format!("{}@{at}", commit.unwrap_or("-"));
    match context {
        Some(c) => format!("{c}/{change}"),
        None => change,
    }
}

impl DeploymentRecord {
    /// The record of one cluster's report.
    pub fn of_report(report: &Report) -> DeploymentRecord {
        let recorded_at = report.generated_at.clone().unwrap_or_default();
        let context = report.cluster.as_ref().and_then(|c| c.context.as_deref());
        DeploymentRecord {
            schema: RECORD_SCHEMA.to_string(),
            id: id(context, report.change.commit.as_deref(), &recorded_at),
            recorded_at,
            verdict: report.verdict,
            commit: report.change.commit.clone(),
            committed_at: report.change.committed_at.clone(),
            since: report.change.since.clone(),
            live_since: live_since(report.verdict, report.targets.iter()).map(|t| t.to_string()),
            lead_time_seconds: report.lead_time_seconds,
            cluster: report.cluster.clone(),
            clusters: Vec::new(),
            targets: report
                .targets
                .iter()
                .map(|t| RecordTarget::of(t, None))
                .collect(),
            liveproof_version: report.liveproof_version.clone(),
        }
    }

    /// The record of a fleet: every cluster's targets, the fleet's verdict and lead time.
    pub fn of_fleet(fleet: &FleetReport) -> DeploymentRecord {
        let recorded_at = fleet.generated_at.clone().unwrap_or_default();
        let reports = || fleet.clusters.iter().filter_map(|c| c.report.as_ref());
        DeploymentRecord {
            schema: RECORD_SCHEMA.to_string(),
            id: id(None, fleet.change.commit.as_deref(), &recorded_at),
            recorded_at,
            verdict: fleet.verdict,
            commit: fleet.change.commit.clone(),
            committed_at: fleet.change.committed_at.clone(),
            since: fleet.change.since.clone(),
            live_since: live_since(fleet.verdict, reports().flat_map(|r| r.targets.iter()))
                .map(|t| t.to_string()),
            lead_time_seconds: fleet.lead_time_seconds,
            cluster: None,
            clusters: fleet
                .clusters
                .iter()
                .map(|c| RecordCluster {
                    context: c.context.clone(),
                    verdict: c.verdict,
                })
                .collect(),
            targets: fleet
                .clusters
                .iter()
                .flat_map(|c| {
                    c.report.iter().flat_map(move |r| {
                        r.targets
                            .iter()
                            .map(move |t| RecordTarget::of(t, Some(&c.context)))
                    })
                })
                .collect(),
            liveproof_version: fleet.liveproof_version.clone(),
        }
    }

    /// The record as one line of JSON, newline included: what `--record` appends.
    pub fn line(&self) -> String {
        // Plain data (strings, numbers, enums): serialising it cannot fail.
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChangeSummary, SCHEMA};

    /// A superseded change records its verdict and what superseded it, and no live time or
    /// lead time: it was never live as such.
    #[test]
    fn a_superseded_change_records_what_superseded_it_and_no_lead_time() {
        let by = SupersededBy {
            summary: "ReplicaSet apps/web-6c8d serves now".into(),
            revision: Some("apps/web-6c8d".into()),
            commit: None,
            images: vec!["ghcr.io/acme/web:1.5.0".into()],
            at: Some("2026-07-12T11:00:00Z".into()),
            live: Some(true),
            source_ref: None,
        };
        let target = TargetReport {
            kind: crate::TargetKind::Deployment.into(),
            namespace: "apps".into(),
            name: "web".into(),
            verdict: Verdict::Superseded,
            via: None,
            evidence: Vec::new(),
            next_step: None,
            diagnostics: Vec::new(),
            // A later change's pods went live: not this change's.
            live_since: None,
            live_since_unknown: None,
            timeline: Vec::new(),
            superseded_by: Some(by.clone()),
            pods: Default::default(),
        };
        let mut report = Report::new(
            ChangeSummary {
                since: Some("2026-07-12T09:40:00Z".into()),
                commit: Some("3f2c1ab9d04e5c7a8b6f1e2d3c4b5a69788f9e0d".into()),
                committed_at: Some("2026-07-12T09:40:00Z".into()),
            },
            vec![target],
        );
        report.generated_at = Some("2026-07-12T11:05:00Z".into());
        report.date_lead_time();
        assert_eq!(report.schema, SCHEMA);
        let record = DeploymentRecord::of_report(&report);
        assert_eq!(record.verdict, Verdict::Superseded);
        assert_eq!(
            (&record.live_since, record.lead_time_seconds),
            (&None, None)
        );
        assert_eq!(record.targets[0].superseded_by, Some(by));
        // And it reads back from its line.
        let line = record.line();
        assert!(line.contains(r#""verdict":"superseded""#), "{line}");
        let back: DeploymentRecord = serde_json::from_str(&line).expect("a record line");
        assert_eq!(back.targets[0].verdict, Verdict::Superseded);
    }
}
