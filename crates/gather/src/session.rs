//! One verification's reads of a cluster: a [`Pass`] is everything the judge reads (the
//! objects, releases decoded, registry facts, `--version-url` answers, containment, chart
//! changes), complete before the judge is called; [`Session::diagnostics`] is the read after it,
//! only for a report that is not live. `-l` selects the targets first ([`select`]).

use std::borrow::Cow;

use liveproof_evidence::absent::{absent_targets, Absent};
use liveproof_evidence::{resolve_targets, Observed, Report, Target, TargetKind};

use crate::complete::{Completion, DecodeOutOfTime, Incomplete, UnreadableRelease};
use crate::registry::{FactsError, RegistryFacts};
use crate::{Cluster, GatherError, ObservedStream};

/// A verification's reads of one cluster, for its targets: one [`Pass`], or a watch of them.
pub struct Session<'a> {
    pub cluster: &'a Cluster,
    pub completion: Completion<'a>,
    /// The targets as given (and `-l` selected).
    pub targets: &'a [Target],
    /// `-A`.
    pub all_namespaces: bool,
}

/// One complete snapshot: after it the judge reads nothing but `observed`.
pub struct Pass {
    pub observed: Observed,
    /// What the registries said, asked once and laid onto every later snapshot of a watch.
    pub facts: RegistryFacts,
    /// The targets as the checks judge them.
    pub targets: Vec<Target>,
}

/// Why a pass could not be made. Each variant is an error of its own (with its hint) once
/// handed on.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error(transparent)]
    Gather(#[from] GatherError),
    #[error(transparent)]
    Facts(#[from] FactsError),
    #[error(transparent)]
    Unreadable(#[from] UnreadableRelease),
    #[error(transparent)]
    OutOfTime(#[from] DecodeOutOfTime),
}

impl From<Incomplete> for PassError {
    fn from(e: Incomplete) -> PassError {
        match e {
            Incomplete::Unreadable(e) => e.into(),
            Incomplete::OutOfTime(e) => e.into(),
        }
    }
}

/// Each variant keeps its own hint: an error handed on as a `PassError` says what its cause
/// says.
impl liveproof_evidence::hint::Hinted for PassError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            PassError::Gather(e) => e.hint(),
            PassError::Facts(e) => e.hint(),
            PassError::Unreadable(e) => e.hint(),
            PassError::OutOfTime(e) => e.hint(),
        }
    }
}

impl Completion<'_> {
    /// One pass of objects already read (offline, the `--from` dump; live, a gather): what
    /// the registries say (`cluster`, when live, is asked for nodes and pull secrets too),
    /// what each `--version-url` answers, then the snapshot completed ([`Completion::complete`]).
    pub async fn pass(
        &self,
        cluster: Option<&Cluster>,
        mut observed: Observed,
        given: &[Target],
        default_ns: &str,
        all_namespaces: bool,
    ) -> Result<Pass, PassError> {
        let facts = self.registry_facts(cluster, &observed).await?;
        self.read_versions(&mut observed).await;
        let targets = self
            .complete(&facts, &mut observed, given, default_ns, all_namespaces)
            .await?;
        Ok(Pass {
            observed,
            facts,
            targets,
        })
    }
}

impl Session<'_> {
    /// The namespace targets that name none are read in.
    pub fn default_namespace(&self) -> &str {
        self.cluster.default_namespace()
    }

    /// One pass: the objects gathered, a namespace or target that does not exist refused (an
    /// input error, never a verdict), then the snapshot completed.
    pub async fn pass(&self) -> Result<Pass, PassError> {
        let observed = self
            .cluster
            .gather(self.targets, self.all_namespaces)
            .await?;
        self.check_namespaces(&observed).await?;
        self.check_found(&observed).await?;
        self.completion
            .pass(
                Some(self.cluster),
                observed,
                self.targets,
                self.default_namespace(),
                self.all_namespaces,
            )
            .await
    }

    /// The targets' first snapshot, then one per change (`--wait`).
    pub async fn watch(&self) -> Result<ObservedStream, GatherError> {
        self.cluster.watch(self.targets, self.all_namespaces).await
    }

    /// What the registries say about the images `observed` runs (the cluster is asked for
    /// nodes and pull secrets too).
    pub async fn facts(&self, observed: &Observed) -> Result<RegistryFacts, FactsError> {
        self.completion
            .registry_facts(Some(self.cluster), observed)
            .await
    }

    /// Completes `observed` ([`Completion::complete`]) with `facts` laid on: the targets as
    /// the checks judge them.
    pub async fn complete(
        &self,
        facts: &RegistryFacts,
        observed: &mut Observed,
    ) -> Result<Vec<Target>, Incomplete> {
        self.completion
            .complete(
                facts,
                observed,
                self.targets,
                self.default_namespace(),
                self.all_namespaces,
            )
            .await
    }

    /// A snapshot of the watch (`--wait`) completed with `facts`, asked once, laid on. A
    /// version not read by `until` stays unread: its server is then unknown, and the report is
    /// not live (it never is on the workloads alone).
    pub async fn complete_by(
        &self,
        facts: &RegistryFacts,
        observed: &mut Observed,
        until: tokio::time::Instant,
    ) -> Result<Vec<Target>, PassError> {
        let _ = tokio::time::timeout_at(until, self.completion.read_versions(observed)).await;
        Ok(self.complete(facts, observed).await?)
    }

    /// `deploy/api, sts/db`, for messages.
    pub fn describe(&self) -> String {
        describe(self.targets)
    }

    /// When the command's deadline (`timeout`) cut a read short while a Helm release was being
    /// decoded, that: the time went to the release, and the server is not to blame.
    pub fn decoding_ran_out(&self, timeout: std::time::Duration) -> Option<DecodeOutOfTime> {
        Some(DecodeOutOfTime {
            target: self.describe(),
            object: self.completion.decode_cache.decoding()?,
            timeout,
        })
    }

    /// The cluster as a report names it ([`cluster_ref`]).
    pub fn cluster_ref(&self) -> liveproof_evidence::ClusterRef {
        cluster_ref(self.cluster)
    }

    /// For a report that is not live, what explains it ([`crate::diagnostics::read`]).
    pub async fn diagnostics(
        &self,
        observed: &mut Observed,
        report: &mut Report,
        logs: Option<i64>,
    ) {
        crate::diagnostics::read(
            self.cluster,
            observed,
            report,
            logs,
            self.completion.change.since,
        )
        .await;
    }

    /// Where the targets are looked for, as the checks will judge them.
    pub fn resolved(&self, observed: &Observed) -> Vec<Target> {
        resolve_targets(
            observed,
            self.targets,
            self.default_namespace(),
            self.all_namespaces,
        )
    }

    /// The targets `observed` lacks.
    pub fn absent(&self, observed: &Observed) -> Vec<Absent> {
        absent_targets(observed, &self.resolved(observed))
    }

    /// A target's namespace that does not exist is a usage error (exit 2), with a
    /// did-you-mean: asked only about namespaces where nothing was found.
    pub async fn check_namespaces(&self, observed: &Observed) -> Result<(), GatherError> {
        self.cluster
            .check_namespaces(observed, &self.resolved(observed))
            .await
    }

    /// A target the cluster says does not exist is an input error (exit 2, with a
    /// did-you-mean), never a `not_live` a pipeline would roll back on.
    pub async fn check_found(&self, observed: &Observed) -> Result<(), GatherError> {
        match self.cluster.not_found(&self.absent(observed)).await {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}

/// `deploy/api, sts/db`, for messages.
pub fn describe(targets: &[Target]) -> String {
    if targets.is_empty() {
        return "the targets".to_string();
    }
    targets
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cluster as a report names it: context and server URL, never credentials.
pub fn cluster_ref(cluster: &Cluster) -> liveproof_evidence::ClusterRef {
    liveproof_evidence::ClusterRef {
        context: cluster.context().map(str::to_string),
        // Masked, and without a query: the cluster's URL as it may be shown.
        server: Some(cluster.server().to_string()),
        from: None,
    }
}

/// A `--from` dump as a report names where its evidence was read.
pub fn dump_ref(path: &std::path::Path) -> liveproof_evidence::ClusterRef {
    liveproof_evidence::ClusterRef {
        from: Some(path.display().to_string()),
        ..Default::default()
    }
}

/// `given` with the workloads `-l selector` found (in `namespace`, or every namespace when
/// `None`) added once each; an error when the selector matched nothing.
pub fn select(
    given: &[Target],
    selector: &str,
    namespace: Option<&str>,
    found: Vec<Target>,
) -> Result<Vec<Target>, NothingSelected> {
    if found.is_empty() {
        return Err(NothingSelected::new(selector, namespace));
    }
    tracing::info!("-l {selector}: {} workloads", found.len());
    let mut targets = given.to_vec();
    let mut seen: std::collections::HashSet<Target> = given.iter().cloned().collect();
    for target in found {
        if seen.insert(target.clone()) {
            targets.push(target);
        }
    }
    Ok(targets)
}

/// `-l/--selector` matched nothing: there is nothing to verify, which is not a verdict.
#[derive(Debug, thiserror::Error)]
#[error(
    "no {} {where_} has labels matching `{selector}`",
    TargetKind::workload_kinds("or", false)
)]
pub struct NothingSelected {
    selector: String,
    where_: String,
    scope: String,
    all: &'static str,
}

impl liveproof_evidence::hint::Hinted for NothingSelected {
    fn hint(&self) -> Option<Cow<'_, str>> {
        let NothingSelected { all, scope, .. } = self;
        Some(Cow::Owned(format!(
            "check the labels (kubectl get {} {scope}--show-labels){all}",
            TargetKind::workload_resource_list()
        )))
    }
}

impl NothingSelected {
    /// `selector` found nothing in `namespace` (every namespace when `None`).
    pub fn new(selector: &str, namespace: Option<&str>) -> NothingSelected {
        NothingSelected {
            selector: selector.to_string(),
            where_: match namespace {
                Some(ns) => format!("in namespace {ns}"),
                None => "in any namespace".into(),
            },
            scope: match namespace {
                Some(ns) => format!("-n {ns} "),
                None => "-A ".into(),
            },
            all: if namespace.is_some() {
                ", or look in every namespace with -A"
            } else {
                ""
            },
        }
    }
}
