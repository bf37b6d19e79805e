//! The finding builder every check uses: an evidence item and, when it is what stands between
//! the target and `live`, what to do about it.

use crate::{Check, Evidence, Status};

/// An evidence item and, when it is what stands between the target and `live`, what to do.
pub(crate) struct Finding {
    pub(crate) evidence: Evidence,
    pub(crate) next_step: Option<String>,
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
                source: String::new(),
                detail: String::new(),
            },
            next_step: None,
        }
    }
    pub(crate) fn source(mut self, source: impl Into<String>) -> Self {
        self.evidence.source = source.into();
        self
    }
    pub(crate) fn detail(mut self, detail: impl Into<String>) -> Self {
        self.evidence.detail = detail.into();
        self
    }
    pub(crate) fn next(mut self, step: impl Into<String>) -> Self {
        self.next_step = Some(step.into());
        self
    }
}
