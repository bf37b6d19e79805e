//! The report every renderer draws from: one [`Report`], many formats.

use serde::{Deserialize, Serialize};

use crate::ResourceKind;

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
    TrafficCurrent,
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
            Check::TrafficCurrent => "traffic_current",
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
            | Check::ServerVersion
            | Check::TrafficCurrent => Tier::Artifact,
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

/// Ordered worst first, so the overall verdict is the minimum over targets: not_live < unproven <
/// superseded < live (docs/design.md).
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
    // Not live because a later change replaced this one, and the evidence shows it
    // (`TargetReport::superseded_by` names what): nothing to roll back. (A plain comment: a doc
    // comment would split the schema's enum.)
    Superseded,
    Live,
}

impl Verdict {
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::NotLive => "not_live",
            Verdict::Unproven => "unproven",
            Verdict::Superseded => "superseded",
            Verdict::Live => "live",
        }
    }

    /// The process exit code docs/design.md fixes for this verdict.
    pub const fn exit_code(self) -> u8 {
        match self {
            Verdict::Live => 0,
            Verdict::NotLive => 1,
            Verdict::Unproven => 3,
            Verdict::Superseded => 4,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One check's outcome, with where it was read.
// The JSON carries the prose `source` beside `source_ref`, written from it on the way out
// (`EvidenceJson`): one is the other displayed, so they cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(into = "EvidenceJson", from = "EvidenceJson")]
pub struct Evidence {
    pub check: Check,
    pub status: Status,
    pub observed: String,
    pub expected: String,
    /// Which object and field this was read from.
    pub source_ref: SourceRef,
    /// One sentence a person can act on.
    pub detail: String,
}

impl Evidence {
    /// Which object and field this was read from, as prose: `apps/Pod/inventory-7d9c-x2k4
    /// .status.containerStatuses[app].state.running.startedAt`.
    pub fn source(&self) -> String {
        self.source_ref.to_string()
    }
}

/// An evidence item as `-o json` writes it: [`Evidence`] with its prose `source`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct EvidenceJson {
    check: Check,
    status: Status,
    observed: String,
    expected: String,
    /// Which object and field this was read from, as prose, e.g.
    /// `apps/Pod/inventory-7d9c-x2k4 .status.containerStatuses[app].state.running.startedAt`.
    source: String,
    /// The same as data: what a program reads instead of parsing `source`.
    source_ref: SourceRef,
    /// One sentence a person can act on.
    detail: String,
}

impl From<Evidence> for EvidenceJson {
    fn from(e: Evidence) -> EvidenceJson {
        EvidenceJson {
            source: e.source(),
            check: e.check,
            status: e.status,
            observed: e.observed,
            expected: e.expected,
            source_ref: e.source_ref,
            detail: e.detail,
        }
    }
}

/// The prose `source` read is dropped: `source_ref` is what it was written from.
impl From<EvidenceJson> for Evidence {
    fn from(e: EvidenceJson) -> Evidence {
        Evidence {
            check: e.check,
            status: e.status,
            observed: e.observed,
            expected: e.expected,
            source_ref: e.source_ref,
            detail: e.detail,
        }
    }
}

/// Where an evidence item was read, as data: the object (or objects) and the field; `source` is
/// the same in prose, so a program need not parse it.
///
/// Every key is always present; an empty string means "not this part":
/// - `namespace` is empty for what no namespace holds (a `--version-url`), and for a target
///   looked for in every namespace (`-A`) and not found;
/// - `name` is empty when the evidence covers every object of the kind the target selects
///   (each serving pod of a workload: `apps/Pod .spec.containers`), and holds a glob when it
///   covers the objects whose names match it (a Helm release's storage,
///   `sh.helm.release.v1.inventory.v*`): no Kubernetes name contains `*`;
/// - `field` is empty when the evidence is about the object as a whole.
///
/// A `--version-url` reading is kind `URL` with no apiVersion, the URL (credentials masked)
/// as `name` and the `--version-json` path, if any, as `field`.
// Its `Display` is the prose `source`: `Evidence` writes one from the other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceRef {
    /// The object's group/version, as the API serves the kind (`v1`, `apps/v1`,
    /// `helm.toolkit.fluxcd.io/v2`); empty for a URL.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// `Pod`, `Deployment`, `HelmRelease`, …, or `URL`.
    pub kind: String,
    pub namespace: String,
    /// One object's name; empty for every object of the kind the target selects; a glob
    /// (`*`) for the objects whose names match it.
    pub name: String,
    /// The field read, as `.status.observedGeneration`; empty for the object as a whole.
    pub field: String,
}

impl SourceRef {
    /// The kind of a `--version-url` reading.
    pub const URL: &'static str = "URL";

    /// One object: `apps/Deployment/inventory`.
    pub fn object(kind: ResourceKind, namespace: &str, name: &str) -> SourceRef {
        SourceRef {
            api_version: kind.api_version().to_string(),
            kind: kind.kind_name().to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            field: String::new(),
        }
    }

    /// Every object of `kind` in `namespace` the target selects, e.g. each serving pod of a
    /// workload: `apps/Pod`.
    pub fn objects(kind: ResourceKind, namespace: &str) -> SourceRef {
        SourceRef::object(kind, namespace, "")
    }

    /// The objects of `kind` in `namespace` whose names match `glob` (which holds a `*`):
    /// `apps/Secret sh.helm.release.v1.inventory.v*`.
    pub fn matching(kind: ResourceKind, namespace: &str, glob: &str) -> SourceRef {
        debug_assert!(glob.contains('*'), "a glob names what it matches with `*`");
        SourceRef::object(kind, namespace, glob)
    }

    /// What a `--version-url` answered; the URL as shown, never its credentials.
    pub fn url(url: &liveproof_redacted::DisplaySafeUrl) -> SourceRef {
        SourceRef {
            api_version: String::new(),
            kind: SourceRef::URL.to_string(),
            namespace: String::new(),
            name: url.to_string(),
            field: String::new(),
        }
    }

    /// The field read: `.status.observedGeneration`, `.spec.template`.
    pub fn field(mut self, field: impl Into<String>) -> SourceRef {
        self.field = field.into();
        self
    }
}

/// The prose `source`: `NAMESPACE/KIND/NAME FIELD`, `NAMESPACE/KIND FIELD` for every object the
/// target selects, `NAMESPACE/KIND GLOB FIELD` for a glob, `URL FIELD` for a URL; each part only
/// when there is one.
impl std::fmt::Display for SourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.kind == SourceRef::URL {
            f.write_str(&self.name)?;
        } else {
            if !self.namespace.is_empty() {
                write!(f, "{}/", self.namespace)?;
            }
            f.write_str(&self.kind)?;
            if self.name.contains('*') {
                write!(f, " {}", self.name)?;
            } else if !self.name.is_empty() {
                write!(f, "/{}", self.name)?;
            }
        }
        if !self.field.is_empty() {
            write!(f, " {}", self.field)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetReport {
    pub kind: crate::ReportKind,
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
    pub diagnostics: Vec<crate::diagnostic::Diagnostic>,
    /// When not live: the single most useful thing to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<crate::Suggestion>,
    /// When live: the earliest time the evidence shows it live (RFC 3339): the last serving
    /// pod's Ready transition, a progressive rollout's promotion when that came later, or the
    /// moment `--wait` saw it. The `timeline` entry marked `live_since` says where it was read.
    /// Absent when not live, or when a time it needs cannot be read (`live_since_unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_since: Option<String>,
    /// When live but `live_since` cannot be told: why (never guessed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_since_unknown: Option<String>,
    /// What the evidence dates about this target, oldest first, each with where it was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineEntry>,
    /// When superseded: the later change that replaced this one, and whether it is live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<SupersededBy>,
    /// Each revision's pods as the judgement read them, for a report that draws them
    /// (`-o html`). In process only: never serialized, never compared.
    #[serde(skip)]
    pub pods: crate::lanes::PodLanes,
}

/// The later change that replaced the stated one (verdict `superseded`), as the evidence shows
/// it: a workload revision created after the one that carried the change, a newer deployed
/// Helm revision, or a GitOps revision that strictly descends from the commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SupersededBy {
    /// What replaced it, in one sentence a person can act on.
    pub summary: String,
    /// The revision that serves now: a ReplicaSet or ControllerRevision (`apps/promo-6c8d`,
    /// revision 3), a Helm release revision (`inventory.v36`), a GitOps revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The commit of the later change, when a GitOps revision or `--repo` names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The images the later change runs, as its template names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// When the later change was made (RFC 3339): the revision's creation, the Helm deploy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Whether the later change is itself live: judged by the same checks, with itself as the
    /// change; absent when that could not be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<bool>,
    /// Where the later change was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<SourceRef>,
}

impl SupersededBy {
    /// The later change as every format names it after "superseded by": `revision
    /// apps/web-6c8d, commit 9b1e2f3, image ghcr.io/acme/web:1.5.0, made 2026-07-12T11:00:00Z`
    /// (what is known of it, in that order); its summary when none of it is.
    pub fn named(&self) -> String {
        let mut parts = Vec::new();
        if let Some(revision) = &self.revision {
            parts.push(format!("revision {revision}"));
        }
        if let Some(commit) = &self.commit {
            // A full SHA is quoted as people quote it; the JSON keeps it whole.
            let short = if crate::is_commit_sha(commit) {
                commit.chars().take(7).collect()
            } else {
                commit.clone()
            };
            parts.push(format!("commit {short}"));
        }
        match self.images.as_slice() {
            [] => {}
            [one] => parts.push(format!("image {one}")),
            many => parts.push(format!("images {}", many.join(", "))),
        }
        if let Some(at) = &self.at {
            parts.push(format!("made {at}"));
        }
        if parts.is_empty() {
            self.summary.clone()
        } else {
            parts.join(", ")
        }
    }

    /// Whether the later change is itself live, in the words every format uses.
    pub fn liveness(&self) -> &'static str {
        match self.live {
            Some(true) => "itself live",
            Some(false) => "itself not live",
            None => "whether it is live was not established",
        }
    }
}

/// A moment the evidence dates.
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
pub enum Moment {
    /// The change: `--since`, the commit's committer time, or the snapshot's time.
    Change,
    /// The current revision's object was created (a ReplicaSet, a ControllerRevision): the
    /// template was written.
    TemplateWritten,
    /// The Helm release's newest revision was deployed (`info.last_deployed`).
    HelmDeployed,
    /// The GitOps controller applied or synced (Flux `Ready` transition, Argo CD
    /// `operationState.finishedAt`).
    GitopsApplied,
    /// The first serving pod of the current revision became Ready.
    FirstPodReady,
    /// The last serving pod of the current revision became Ready.
    LastPodReady,
    /// A progressive rollout was fully promoted (Argo Rollouts `Completed` turned True).
    Promoted,
    /// `--wait` saw the target live (liveproof's own clock, not the cluster's).
    ObservedLive,
}

impl Moment {
    pub const fn name(self) -> &'static str {
        match self {
            Moment::Change => "change",
            Moment::TemplateWritten => "template_written",
            Moment::HelmDeployed => "helm_deployed",
            Moment::GitopsApplied => "gitops_applied",
            Moment::FirstPodReady => "first_pod_ready",
            Moment::LastPodReady => "last_pod_ready",
            Moment::Promoted => "promoted",
            Moment::ObservedLive => "observed_live",
        }
    }
}

/// One dated moment of a target, with where the time was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineEntry {
    pub event: Moment,
    /// RFC 3339, as recorded.
    pub at: String,
    /// Where the time was read, as prose (`apps/Pod/inventory-6b7f9c8d4-m8q7z
    /// .status.conditions[Ready].lastTransitionTime`, `--since`, `committer time of 3f2c1ab…`).
    pub source: String,
    /// The same as data, when it was read from a cluster object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<SourceRef>,
    /// This is the moment the target's `live_since` is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live_since: bool,
}

impl TimelineEntry {
    /// A moment read from a cluster object's field.
    pub fn read(event: Moment, at: jiff::Timestamp, source: SourceRef) -> TimelineEntry {
        TimelineEntry {
            event,
            at: at.to_string(),
            source: source.to_string(),
            source_ref: Some(source),
            live_since: false,
        }
    }

    /// The time, as recorded; `None` when it does not parse (never a guess).
    pub fn time(&self) -> Option<jiff::Timestamp> {
        self.at.parse().ok()
    }
}

impl TargetReport {
    /// Marks `at` (an entry of the timeline, or a new one) as when the target went live.
    pub fn set_live_since(&mut self, entry: TimelineEntry) {
        for e in &mut self.timeline {
            e.live_since = false;
        }
        self.live_since = Some(entry.at.clone());
        self.live_since_unknown = None;
        match self
            .timeline
            .iter_mut()
            .find(|e| e.event == entry.event && e.at == entry.at && e.source == entry.source)
        {
            Some(e) => e.live_since = true,
            None => self.timeline.push(TimelineEntry {
                live_since: true,
                ..entry
            }),
        }
        self.sort_timeline();
    }

    /// `--wait` saw this target live at `at` (liveproof's clock): a timeline entry, and its
    /// `live_since` when the evidence dates none (a Ready time the cluster did not record).
    pub fn observed_live(&mut self, at: jiff::Timestamp) {
        let entry = TimelineEntry {
            event: Moment::ObservedLive,
            at: at.to_string(),
            source: "liveproof --wait (the clock of the machine it ran on)".to_string(),
            source_ref: None,
            live_since: false,
        };
        if self.verdict == Verdict::Live && self.live_since.is_none() {
            self.set_live_since(entry);
        } else {
            self.timeline.push(entry);
            self.sort_timeline();
        }
    }

    /// Which target this is, across the judgements of one wait: kind, namespace, name, and
    /// what it was reached through.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{} {}",
            self.kind,
            self.namespace,
            self.name,
            self.via.as_deref().unwrap_or_default()
        )
    }

    /// Oldest first; what cannot be parsed last, in its order.
    pub fn sort_timeline(&mut self) {
        self.timeline
            .sort_by_key(|e| (e.time().is_none(), e.time(), e.event));
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit's committer time, when it was read from `--repo` (what `lead_time_seconds`
    /// counts from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub schema: String,
    pub verdict: Verdict,
    pub change: ChangeSummary,
    pub targets: Vec<TargetReport>,
    /// Seconds from the commit (its committer time) to `live_since` of the last target to go
    /// live: only when the verdict is live, the commit's time was read, and every target's
    /// `live_since` is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_time_seconds: Option<i64>,
    /// For `verify --snapshot`: what changed since the snapshot, and what did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotSummary>,
    /// When no target carries it (a report with no target at all): what to check next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<crate::Suggestion>,
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
}

impl Report {
    /// Works `lead_time_seconds` out again from the commit time and the targets' `live_since`
    /// (after `--wait` dated what the judge could not).
    pub fn date_lead_time(&mut self) {
        self.lead_time_seconds = lead_time(
            self.verdict,
            self.change.committed_at.as_deref(),
            self.targets.iter(),
        );
    }
}

/// Seconds from `committed_at` to the latest `live_since` of `targets`: `None` unless the
/// verdict is live, the commit time is known, every target is dated, and the commit came
/// first (a commit after the pods went live dates nothing).
pub fn lead_time<'a>(
    verdict: Verdict,
    committed_at: Option<&str>,
    targets: impl Iterator<Item = &'a TargetReport>,
) -> Option<i64> {
    let committed: jiff::Timestamp = committed_at?.parse().ok()?;
    let seconds = live_since(verdict, targets)?
        .duration_since(committed)
        .as_secs();
    (seconds >= 0).then_some(seconds)
}

/// When the last of `targets` went live: `None` unless the verdict is live and every target
/// is dated.
pub fn live_since<'a>(
    verdict: Verdict,
    targets: impl Iterator<Item = &'a TargetReport>,
) -> Option<jiff::Timestamp> {
    if verdict != Verdict::Live {
        return None;
    }
    let mut last: Option<jiff::Timestamp> = None;
    for t in targets {
        let since: jiff::Timestamp = t.live_since.as_deref()?.parse().ok()?;
        last = Some(last.map_or(since, |l| l.max(since)));
    }
    last
}

#[cfg(test)]
mod tests {
    use super::SourceRef;
    use crate::ResourceKind;
    use liveproof_redacted::DisplaySafeUrl as ShownUrl;

    #[test]
    fn a_source_ref_displays_as_the_prose_source() {
        let cases = [
            (
                SourceRef::object(ResourceKind::Pod, "apps", "inventory-7d9c-x2k4")
                    .field(".status.containerStatuses[app].state.running.startedAt"),
                "apps/Pod/inventory-7d9c-x2k4 .status.containerStatuses[app].state.running.startedAt",
            ),
            (
                SourceRef::objects(ResourceKind::Pod, "apps").field(".spec.containers"),
                "apps/Pod .spec.containers",
            ),
            (SourceRef::objects(ResourceKind::Pod, "apps"), "apps/Pod"),
            (
                SourceRef::object(ResourceKind::Deployment, "apps", "inventory")
                    .field(".spec.template"),
                "apps/Deployment/inventory .spec.template",
            ),
            (
                SourceRef::object(ResourceKind::StatefulSet, "apps", "cache"),
                "apps/StatefulSet/cache",
            ),
            (
                SourceRef::matching(ResourceKind::Secret, "apps", "sh.helm.release.v1.inventory.v*"),
                "apps/Secret sh.helm.release.v1.inventory.v*",
            ),
            (
                SourceRef::object(ResourceKind::HelmRelease, "flux-system", "shop")
                    .field(".status"),
                "flux-system/HelmRelease/shop .status",
            ),
            (
                SourceRef::object(ResourceKind::Secret, "", "sh.helm.release.v1.shop.v3"),
                "Secret/sh.helm.release.v1.shop.v3",
            ),
            (
                SourceRef::url(&ShownUrl::new("https://inventory.example.com/version")),
                "https://inventory.example.com/version",
            ),
            (
                SourceRef::url(&ShownUrl::new("https://inventory.example.com/version"))
                    .field(".build.version"),
                "https://inventory.example.com/version .build.version",
            ),
        ];
        for (source_ref, prose) in cases {
            assert_eq!(source_ref.to_string(), prose, "{source_ref:?}");
        }
    }

    #[test]
    fn the_api_version_is_the_one_the_kind_is_read_at() {
        let api_version = |kind| SourceRef::object(kind, "apps", "x").api_version;
        assert_eq!(api_version(ResourceKind::Pod), "v1");
        assert_eq!(api_version(ResourceKind::Deployment), "apps/v1");
        assert_eq!(api_version(ResourceKind::Secret), "v1");
        assert_eq!(
            api_version(ResourceKind::HelmRelease),
            "helm.toolkit.fluxcd.io/v2"
        );
        assert_eq!(
            api_version(ResourceKind::Application),
            "argoproj.io/v1alpha1"
        );
        let url = SourceRef::url(&ShownUrl::new("https://x.example/v"));
        assert_eq!((url.api_version.as_str(), url.kind.as_str()), ("", "URL"));
    }

    #[test]
    fn a_url_source_never_carries_its_credentials() {
        let source = SourceRef::url(&ShownUrl::new(
            "https://deploy:hunter2@inventory.example.com/version?token=s3cret#frag",
        ))
        .field(".version");
        let json = serde_json::to_string(&source).expect("serialises");
        for secret in ["hunter2", "s3cret", "frag"] {
            assert!(!json.contains(secret), "{json}");
            assert!(!source.to_string().contains(secret), "{source}");
        }
        assert!(source
            .name
            .starts_with("https://deploy:***@inventory.example.com/version"));
    }

    #[test]
    fn a_source_ref_serialises_every_key_by_its_contract_name() {
        let json = serde_json::to_value(
            SourceRef::objects(ResourceKind::Pod, "apps").field(".spec.containers"),
        )
        .expect("serialises");
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": "v1", "kind": "Pod", "namespace": "apps", "name": "",
                "field": ".spec.containers"
            })
        );
    }
}
