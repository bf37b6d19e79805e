//! Helm release storage as the gatherer decoded it: the judge reads releases from here and
//! never decodes one itself, so judging reads no clock (decoding is bounded by the command's
//! deadline) and the same snapshot always gives the same report.

use std::sync::Arc;

use liveproof_helm::StorageObject;
pub use liveproof_helm::{ReadRelease, VisibleManifest};
use serde_json::Value;

pub use crate::facts::{Decoded, Releases};
use crate::{Observed, ResourceKind};

/// [`liveproof_helm::read_release`]'s answer as a snapshot keeps it.
pub fn decoded(read: Result<ReadRelease, liveproof_helm::DecodeError>) -> Decoded {
    read.map(Arc::new).map_err(|e| e.to_string())
}

impl Releases {
    pub fn insert(&mut self, object: StorageObject, decoded: Decoded) {
        self.decoded.insert(object, decoded);
    }

    /// What decoding `object` gave, if it was decoded.
    pub fn get(&self, object: &StorageObject) -> Option<&Decoded> {
        self.decoded.get(object)
    }

    pub fn len(&self) -> usize {
        self.decoded.len()
    }

    pub fn is_empty(&self) -> bool {
        self.decoded.is_empty()
    }
}

/// The Helm release storage among `observed`'s Secrets and ConfigMaps: what the gatherer
/// decodes into [`Observed::releases`].
pub fn storage(observed: &Observed) -> impl Iterator<Item = (StorageObject, &Value)> {
    observed
        .others_of(ResourceKind::Secret)
        .chain(observed.others_of(ResourceKind::ConfigMap))
        .filter(|obj| liveproof_helm::is_release_storage(obj))
        .filter_map(|obj| Some((StorageObject::of(obj)?, obj)))
}

impl Observed {
    /// Fills [`Observed::releases`] with `decode` of each storage object (tests, and callers
    /// with their own bounds; the gatherer decodes off the runtime with the command's).
    pub fn decode_releases_with(&mut self, decode: impl Fn(&Value) -> Decoded) {
        let mut releases = Releases::default();
        for (object, obj) in storage(self) {
            releases.insert(object, decode(obj));
        }
        self.releases = releases;
    }
}

/// The Helm release `target` installs, `(storage namespace, release name)`, as its kind's rules
/// say (a release target is its own; a HelmRelease's is its storage); `None` for a kind that
/// installs none.
pub fn installed_by(
    observed: &Observed,
    target: &crate::Target,
    default_ns: &str,
) -> Option<(String, String)> {
    crate::kinds::rules(target.kind).helm_release(
        observed,
        target.namespace_or(default_ns),
        &target.name,
    )
}

/// The chart `target` deploys, as a path in its source repository (a HelmRelease's
/// `spec.chart.spec.chart`); `None` for a kind that names none.
pub fn chart_path(observed: &Observed, target: &crate::Target, default_ns: &str) -> Option<String> {
    crate::kinds::rules(target.kind).chart_path(
        observed,
        target.namespace_or(default_ns),
        &target.name,
    )
}
