//! `verify --record FILE --record-format devlake|datadog`: the deployment record
//! ([`DeploymentRecord`]) in the shape a DORA tool takes, one JSON document per line, each the
//! body of one POST (docs/metrics.md has the `curl`).
//!
//! - Apache DevLake's incoming webhook: `POST /api/plugins/webhook/connections/:id/deployments`,
//!   body `WebhookDeploymentReq` of `backend/plugins/webhook/api/deployments.go` in
//!   `apache/devlake` (commit 5ff4878d): `id`, `startedDate`, `finishedDate` required (RFC 3339,
//!   DevLake's `ConvertStringToTime`), `result` one of `SUCCESS`, `FAILURE`, `ABORT`, `MANUAL`
//!   (devlake.apache.org/docs/Plugins/webhook), `environment` one of `PRODUCTION`, `STAGING`,
//!   `TESTING`, `DEVELOPMENT`, and `deploymentCommits` non-empty, each with `repoUrl`,
//!   `commitSha`, `startedDate`, `finishedDate` required.
//! - Datadog's DORA Metrics API: `POST /api/v2/dora/deployment`, body
//!   `{"data": {"attributes": DORADeploymentRequestAttributes}}`
//!   (docs.datadoghq.com/api/latest/dora-metrics/send-a-deployment-event): `service`,
//!   `started_at`, `finished_at` required (Unix time; nanoseconds here), optional `env`,
//!   `version`, `id` (16–128 of `[A-Za-z0-9._:-]`) and `git` with both `commit_sha` and
//!   `repository_url`.
//!
//! Only what a record proves is sent: DevLake gets a deployment for a `live`, `not_live` or
//! `superseded` change with a commit; Datadog (whose deployment event has no failed result: it
//! finds failures from rollbacks and incidents) one event per live target. Anything else is
//! [`Unsendable`], which the CLI says instead of writing a line.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::Verdict;
use crate::record::DeploymentRecord;

/// Where the change's commits live and where it was deployed, which the record does not hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destination {
    /// The repository's URL (`deploymentCommits[].repoUrl`, `git.repository_url`).
    pub repo_url: Option<String>,
    /// DevLake's `environment`, Datadog's `env`.
    pub env: Option<String>,
}

/// DevLake's environments (`WebhookDeploymentReq.Environment`'s `oneof`).
pub const DEVLAKE_ENVIRONMENTS: &[&str] = &["PRODUCTION", "STAGING", "TESTING", "DEVELOPMENT"];

/// Why a record has no payload in a format: said on stderr, nothing appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsendable(pub String);

/// A DevLake webhook deployment (`WebhookDeploymentReq`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevLakeDeployment {
    pub id: String,
    pub display_title: String,
    pub result: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    pub started_date: String,
    pub finished_date: String,
    pub deployment_commits: Vec<DevLakeCommit>,
}

/// One of its `deploymentCommits` (`WebhookDeploymentCommitReq`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevLakeCommit {
    pub commit_sha: String,
    pub repo_url: String,
    pub started_date: String,
    pub finished_date: String,
}

/// A Datadog DORA deployment event (`DORADeploymentRequest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatadogDeployment {
    pub data: DatadogData,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatadogData {
    pub attributes: DatadogAttributes,
}

/// `DORADeploymentRequestAttributes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatadogAttributes {
    pub service: String,
    /// Unix time in nanoseconds.
    pub started_at: i64,
    /// Unix time in nanoseconds.
    pub finished_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<DatadogGit>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatadogGit {
    pub commit_sha: String,
    pub repository_url: String,
}

/// When the change was made: its commit's time, else the change time judged against.
fn started(record: &DeploymentRecord) -> Option<&str> {
    record.committed_at.as_deref().or(record.since.as_deref())
}

impl DeploymentRecord {
    /// The DevLake deployment of this record (docs/metrics.md's mapping, field by field).
    pub fn devlake(&self, to: &Destination) -> Result<DevLakeDeployment, Unsendable> {
        let result = match self.verdict {
            Verdict::Live => "SUCCESS",
            Verdict::NotLive => "FAILURE",
            // Neither succeeded nor failed: DevLake keeps it and its metrics leave it out.
            Verdict::Superseded => "ABORT",
            Verdict::Unproven => {
                return Err(Unsendable(
                    "an unproven change proves no deployment: DevLake is sent nothing".into(),
                ))
            }
        };
        let Some(commit) = &self.commit else {
            return Err(Unsendable(
                "DevLake's deploymentCommits needs a commit: give --commit".into(),
            ));
        };
        let Some(started) = started(self) else {
            return Err(Unsendable(
                "DevLake's startedDate needs the change's time: give --since or --commit with --repo".into(),
            ));
        };
        let Some(repo_url) = &to.repo_url else {
            return Err(Unsendable(
                "DevLake's deploymentCommits[].repoUrl needs --record-repo-url".into(),
            ));
        };
        let finished = match self.verdict {
            Verdict::Live => self.live_since.as_deref().unwrap_or(&self.recorded_at),
            _ => &self.recorded_at,
        };
        let short: String = commit.chars().take(7).collect();
        Ok(DevLakeDeployment {
            id: self.id.clone(),
            display_title: format!("liveproof {}: {short}", self.verdict.name()),
            result: result.to_string(),
            environment: to.env.clone(),
            started_date: started.to_string(),
            finished_date: finished.to_string(),
            deployment_commits: vec![DevLakeCommit {
                commit_sha: commit.clone(),
                repo_url: repo_url.clone(),
                started_date: started.to_string(),
                finished_date: finished.to_string(),
            }],
        })
    }

    /// The Datadog deployment events of this record: one per target verified (not the
    /// workloads a release or GitOps target reached), each its own service.
    pub fn datadog(&self, to: &Destination) -> Result<Vec<DatadogDeployment>, Unsendable> {
        if self.verdict != Verdict::Live {
            return Err(Unsendable(format!(
                "a {} change was not deployed: Datadog's deployment event has no failed result (it finds failures from rollbacks), so it is sent nothing",
                self.verdict.name()
            )));
        }
        let Some(started) = started(self).and_then(nanos) else {
            return Err(Unsendable(
                "Datadog's started_at needs the change's time: give --since or --commit with --repo".into(),
            ));
        };
        let git = match (&self.commit, &to.repo_url) {
            (Some(sha), Some(url)) => Some(DatadogGit {
                commit_sha: sha.clone(),
                repository_url: url.clone(),
            }),
            _ => None,
        };
        let mut events = Vec::new();
        for t in self.targets.iter().filter(|t| t.via.is_none()) {
            let finished = t
                .live_since
                .as_deref()
                .or(self.live_since.as_deref())
                .unwrap_or(&self.recorded_at);
            let Some(finished) = nanos(finished) else {
                continue;
            };
            let id = datadog_id(&format!(
                "{}:{}.{}.{}:{}",
                self.commit.as_deref().unwrap_or("-"),
                t.context.as_deref().unwrap_or("_"),
                t.namespace,
                t.name,
                self.recorded_at
            ));
            events.push(DatadogDeployment {
                data: DatadogData {
                    attributes: DatadogAttributes {
                        service: t.name.clone(),
                        started_at: started.min(finished),
                        finished_at: finished,
                        env: to.env.clone(),
                        id,
                        git: git.clone(),
                    },
                },
            });
        }
        if events.is_empty() {
            return Err(Unsendable(
                "no target of the record has a time it went live".into(),
            ));
        }
        Ok(events)
    }
}

/// RFC 3339 as Unix nanoseconds.
fn nanos(at: &str) -> Option<i64> {
    let t: Timestamp = at.parse().ok()?;
    i64::try_from(t.as_nanosecond()).ok()
}

/// Datadog's deployment id: 16–128 characters of `[A-Za-z0-9._:-]`; others become `-`.
fn datadog_id(raw: &str) -> Option<String> {
    let id: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._:-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    (id.len() >= 16).then_some(id)
}

/// A payload as one line of JSON, newline included.
pub fn line<T: Serialize>(payload: &T) -> String {
    // Plain data (strings, numbers): serialising it cannot fail.
    let mut line = serde_json::to_string(payload).unwrap_or_default();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> DeploymentRecord {
        serde_json::from_str(r#"{"schema":"liveproof/record/v1","id":"prod-eu/3f2c1ab9d04e5c7a8b6f1e2d3c4b5a69788f9e0d@2026-07-12T10:08:00Z","recorded_at":"2026-07-12T10:08:00Z","verdict":"live","commit":"3f2c1ab9d04e5c7a8b6f1e2d3c4b5a69788f9e0d","committed_at":"2026-07-12T09:40:00Z","since":"2026-07-12T09:40:00Z","live_since":"2026-07-12T10:07:30Z","lead_time_seconds":1650,"targets":[{"kind":"Deployment","namespace":"apps","name":"inventory","verdict":"live","live_since":"2026-07-12T10:07:30Z"},{"kind":"Deployment","namespace":"apps","name":"inventory-worker","verdict":"live","live_since":"2026-07-12T10:06:00Z","via":"release apps/inventory"}]}"#).expect("a record")
    }

    #[test]
    fn a_live_record_is_a_devlake_success_and_a_datadog_event_per_target() {
        let to = Destination {
            repo_url: Some("https://github.com/acme/shop".into()),
            env: Some("PRODUCTION".into()),
        };
        let devlake = live().devlake(&to).expect("sendable");
        assert_eq!(devlake.result, "SUCCESS");
        assert_eq!(devlake.finished_date, "2026-07-12T10:07:30Z");
        assert_eq!(
            devlake.deployment_commits[0].repo_url,
            "https://github.com/acme/shop"
        );
        let events = live().datadog(&to).expect("sendable");
        assert_eq!(
            events.len(),
            1,
            "the reached workload is not its own service"
        );
        let a = &events[0].data.attributes;
        assert_eq!(a.service, "inventory");
        assert_eq!(a.finished_at, 1_783_850_850_000_000_000);
        assert_eq!(a.started_at, 1_783_849_200_000_000_000);
        let id = a.id.as_deref().expect("an id");
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c)),
            "{id}"
        );
    }

    #[test]
    fn what_a_record_does_not_prove_is_not_sent() {
        let to = Destination {
            repo_url: Some("https://github.com/acme/shop".into()),
            env: None,
        };
        let mut unproven = live();
        unproven.verdict = Verdict::Unproven;
        assert!(unproven.devlake(&to).is_err());
        assert!(unproven.datadog(&to).is_err());
        let mut not_live = live();
        not_live.verdict = Verdict::NotLive;
        assert_eq!(not_live.devlake(&to).expect("a failure").result, "FAILURE");
        assert!(not_live.datadog(&to).is_err());
        let no_url = Destination::default();
        assert!(live().devlake(&no_url).is_err());
        assert!(live().datadog(&no_url).expect("no git").iter().all(|e| e
            .data
            .attributes
            .git
            .is_none()));
    }
}
