//! A Helm release (`release/`), read from its storage: its own evidence is the release's
//! history, and it leads to the workloads of its newest revision's manifest.

use super::rules::KindRules;
use crate::checks::finding::Finding;
use crate::checks::release::{self, ReleaseHistory};
use crate::{Change, Observed, Target, TimelineEntry};

pub(crate) struct Rules;

impl KindRules for Rules {
    fn leads_to(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<Target> {
        release::followed(&ReleaseHistory::read(observed, ns, &target.name))
    }

    fn findings(
        &self,
        observed: &Observed,
        change: &Change,
        target: &Target,
        ns: &str,
    ) -> Vec<Finding> {
        let history = ReleaseHistory::read(observed, ns, &target.name);
        release::findings(observed, change, &history, target.kind.actor()).0
    }

    fn dated(&self, observed: &Observed, target: &Target, ns: &str) -> Vec<TimelineEntry> {
        release::deployed(&ReleaseHistory::read(observed, ns, &target.name))
            .into_iter()
            .collect()
    }

    fn helm_release(&self, _observed: &Observed, ns: &str, name: &str) -> Option<(String, String)> {
        Some((ns.to_string(), name.to_string()))
    }
}
