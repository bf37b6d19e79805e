//! The finding builder every check uses: an evidence item and, when it is what stands between
//! the target and `live`, what to do about it.

use crate::{Check, Evidence, SourceRef, Status};

/// An evidence item and, when it is what stands between the target and `live`, what to do.
pub(crate) struct Finding {
    pub(crate) evidence: Evidence,
    pub(crate) next_step: Option<crate::Suggestion>,
}

impl Finding {
    pub(crate) fn new(
        check: Check,
        status: Status,
        observed: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        Finding {
            evidence: Evidence {
                check,
                status,
                observed: observed.into(),
                expected: expected.into(),
                // Every check names its source (`Finding::source`); until then, nothing.
                source_ref: SourceRef {
                    api_version: String::new(),
                    kind: String::new(),
                    namespace: String::new(),
                    name: String::new(),
                    field: String::new(),
                },
                detail: String::new(),
            },
            next_step: None,
        }
    }
    /// Where it was read: the prose `source` is this, displayed.
    pub(crate) fn source(mut self, source: SourceRef) -> Self {
        self.evidence.source_ref = source;
        self
    }
    pub(crate) fn detail(mut self, detail: impl Into<String>) -> Self {
        self.evidence.detail = detail.into();
        self
    }
    pub(crate) fn next(mut self, step: impl Into<crate::Suggestion>) -> Self {
        self.next_step = Some(step.into());
        self
    }
}
