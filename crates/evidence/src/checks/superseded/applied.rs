//! What the judge does with a workload a GitOps target leads to, and what a GitOps target
//! applied: the types `gitops.rs` and the kinds' rules share.

use super::super::raw::revision_matches;
use crate::history::RepoPath;
use crate::suggestion::Suggestion;
use crate::{Containment, Observed, ResourceKind, SupersededBy};

/// What the judge does with a workload a GitOps target leads to.
pub(crate) enum Followed {
    /// A later revision replaced the stated change in it.
    Superseded(Box<SupersededBy>),
    /// A later revision was applied and the template lacks the stated change, but whether that
    /// revision replaced it cannot be told: unproven, with what would decide.
    Undecided(Suggestion),
}

/// What a GitOps target applied, as its status says, and where its manifests are.
pub(crate) struct Applied<'a> {
    pub(super) resource: ResourceKind,
    /// The revision as the status writes it (`main@sha1:…`), and the field it is in.
    pub(super) revision: &'a str,
    pub(super) field: &'static str,
    /// Its commit, lower case.
    pub(super) commit: String,
    pub(super) path: RepoPath,
    /// Where the objects are applied, whatever namespace they name (Flux's `targetNamespace`),
    /// or where those that name none are (Argo CD's destination).
    pub(super) namespace: Namespace<'a>,
    /// Why what is applied is not the files under `path` as written, when the object says so
    /// itself (Flux `spec.images`, Argo CD's Helm source, …).
    pub(super) built: Option<String>,
}

/// Which namespace a declared object is applied in.
#[derive(Clone, Copy)]
pub(crate) enum Namespace<'a> {
    /// The one it names, else wherever it was applied.
    AsDeclared,
    /// This one, whatever it names.
    Override(&'a str),
    /// The one it names, else this one.
    Default(&'a str),
}

impl<'a> Namespace<'a> {
    /// Where an object that names `declared` is applied (`None`: wherever it was).
    pub(super) fn of<'d>(self, declared: Option<&'d str>) -> Option<&'d str>
    where
        'a: 'd,
    {
        match self {
            Namespace::AsDeclared => declared,
            Namespace::Override(ns) => Some(ns),
            Namespace::Default(ns) => Some(declared.unwrap_or(ns)),
        }
    }
}

impl Applied<'_> {
    /// Whether the applied revision is a descendant of `commit` and not `commit` itself.
    pub(super) fn strictly_after(&self, observed: &Observed, commit: &str) -> bool {
        !revision_matches(self.revision, commit)
            && observed.containment.get(&self.commit) == Some(&Containment::Contains)
    }
}
