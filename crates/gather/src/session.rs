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

impl Session<'_> {
    /// The namespace targets that name none are read in.
    pub fn default_namespace(&self) -> &str {
        self.cluster.default_namespace()
    }

    /// One pass: the objects gathered, a namespace or target that does not exist refused (an
    /// input error, never a verdict), then the snapshot completed.
    pub async fn pass(&self) -> Result<Pass, PassError> {
        let mut observed = self
            .cluster
            .gather(self.targets, self.all_namespaces)
            .await?;
        self.check_namespaces(&observed).await?;
        self.check_found(&observed).await?;
        let facts = self.facts(&observed).await?;
        self.completion.read_versions(&mut observed).await;
        let targets = self.complete(&facts, &mut observed).await?;
        Ok(Pass {
            observed,
            facts,
            targets,
        })
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
