//! The report every renderer draws from: one [`Report`], many formats.

use serde::{Deserialize, Serialize};

/// The `schema` field of the JSON report (docs/design.md).
pub const SCHEMA: &str = "liveproof/v1";

/// The checks, named exactly as docs/design.md names them.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    SpecReadback,
    ObservedGeneration,
    ConditionFresh,
    GitopsRevision,
    RolloutComplete,
    ReleaseRevision,
    ReleaseVersion,
    ManifestContains,
    PodsCurrent,
    PodSpec,
    PodRestarted,
    ImageDigestCurrent,
    ServerVersion,
}

/// How much a check can prove. Status-tier checks alone never make a target live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Spec,
    Status,
    Artifact,
}

impl Check {
    pub const fn name(self) -> &'static str {
        match self {
            Check::SpecReadback => "spec_readback",
            Check::ObservedGeneration => "observed_generation",
            Check::ConditionFresh => "condition_fresh",
            Check::GitopsRevision => "gitops_revision",
            Check::RolloutComplete => "rollout_complete",
            Check::ReleaseRevision => "release_revision",
            Check::ReleaseVersion => "release_version",
            Check::ManifestContains => "manifest_contains",
            Check::PodsCurrent => "pods_current",
            Check::PodSpec => "pod_spec",
            Check::PodRestarted => "pod_restarted",
            Check::ImageDigestCurrent => "image_digest_current",
            Check::ServerVersion => "server_version",
        }
    }

    pub const fn tier(self) -> Tier {
        match self {
            Check::SpecReadback => Tier::Spec,
            Check::ObservedGeneration
            | Check::ConditionFresh
            | Check::GitopsRevision
            | Check::RolloutComplete => Tier::Status,
            Check::ReleaseRevision
            | Check::ReleaseVersion
            | Check::ManifestContains
            | Check::PodsCurrent
            | Check::PodSpec
            | Check::PodRestarted
            | Check::ImageDigestCurrent
            | Check::ServerVersion => Tier::Artifact,
        }
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Unknown,
    Skip,
}

impl Status {
    pub const fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Unknown => "unknown",
            Status::Skip => "skip",
        }
    }
}

/// Ordered worst first, so the overall verdict is the minimum over targets.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    NotLive,
    Unproven,
    Live,
}

impl Verdict {
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::NotLive => "not_live",
            Verdict::Unproven => "unproven",
            Verdict::Live => "live",
        }
    }

    /// The process exit code docs/design.md fixes for this verdict.
    pub const fn exit_code(self) -> u8 {
        match self {
            Verdict::Live => 0,
            Verdict::NotLive => 1,
            Verdict::Unproven => 3,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One check's outcome, with where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    pub check: Check,
    pub status: Status,
    pub observed: String,
    pub expected: String,
    /// Which object and field this was read from, e.g.
    /// `apps/Pod/inventory-7d9c-x2k4 .status.containerStatuses[app].state.running.startedAt`.
    pub source: String,
    /// One sentence a person can act on.
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetReport {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub verdict: Verdict,
    /// The GitOps or Helm target this workload was reached from (`helmrelease/apps/inventory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    pub evidence: Vec<Evidence>,
    /// When not live: why, in the cluster's own words (pod reasons, Warning events, logs with
    /// `--logs`, what controllers recorded). Never changes the verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<crate::diagnose::Diagnostic>,
    /// When not live: the single most useful thing to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub schema: String,
    pub verdict: Verdict,
    pub change: ChangeSummary,
    pub targets: Vec<TargetReport>,
    /// For `verify --snapshot`: what changed since the snapshot, and what did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotSummary>,
    /// When no target carries it (a report with no target at all): what to check next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
    /// When the evidence was read (RFC 3339, to the second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_at: Option<String>,
    /// The liveproof version that judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveproof_version: Option<String>,
    /// Where the objects were read: the cluster (context, server URL without credentials), or
    /// the `--from` files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRef>,
    /// With `--wait`: how long it waited, and whether the `--timeout` ran out first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitRecord>,
    /// What a reader should know about how the report was made, e.g. which namespace a
    /// `--from` dump was read in when no `-n` said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// How a `--wait` ended: live, stopped at a failure waiting cannot fix, or at the `--timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WaitRecord {
    /// The `--timeout` ran out before the change was live.
    pub timed_out: bool,
    /// How long the command waited, in whole seconds (rounded).
    pub elapsed_seconds: u64,
}

/// The cluster a report's evidence was read from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClusterRef {
    /// The kubeconfig context (absent in a pod's service account, or offline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The API server's URL, without user info or query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Offline (`--from PATH`): the path the objects were read from instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// What `verify --snapshot` compared against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotSummary {
    pub commit: String,
    pub taken_at: String,
    /// Workloads and releases that changed since (the targets verified).
    pub changed: Vec<String>,
    /// Workloads in scope that did not change.
    pub untouched: Vec<String>,
    /// Workloads in the snapshot that no longer exist.
    pub removed: Vec<String>,
}

impl Report {
    pub fn new(change: ChangeSummary, targets: Vec<TargetReport>) -> Self {
        // No target proves nothing: an empty report is unproven, never live.
        let verdict = targets
            .iter()
            .map(|t| t.verdict)
            .min()
            .unwrap_or(Verdict::Unproven);
        Report {
            schema: SCHEMA.to_string(),
            verdict,
            change,
            targets,
            snapshot: None,
            next_step: None,
            generated_at: None,
            liveproof_version: None,
            cluster: None,
            wait: None,
            notes: Vec::new(),
        }
    }
}
