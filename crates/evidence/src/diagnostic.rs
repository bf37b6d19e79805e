//! One piece of "why" a target is not live, as the JSON report carries it (see
//! [`diagnose`](crate::diagnose)).

use serde::{Deserialize, Serialize};

/// One piece of "why", as the JSON report carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnostic {
    /// `container`, `scheduling`, `event`, `logs`, `controller`, `release`.
    pub kind: String,
    /// The object it is about: `apps/Pod/inventory-7d9c-x2k4 [app]`.
    pub object: String,
    pub reason: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

impl Diagnostic {
    /// One line a person reads: `CrashLoopBackOff apps/Pod/x [app]: back-off … (×5, last 10:20)`.
    pub fn summary(&self) -> String {
        let mut line = format!("{} {}", self.reason, self.object);
        if !self.message.is_empty() {
            line.push_str(": ");
            line.push_str(&self.message);
        }
        let mut extra = Vec::new();
        if let Some(n) = self.count.filter(|n| *n > 1) {
            extra.push(format!("×{n}"));
        }
        if let Some(last) = &self.last_seen {
            extra.push(format!("last {last}"));
        }
        if !extra.is_empty() {
            line.push_str(&format!(" ({})", extra.join(", ")));
        }
        line
    }
}

impl Diagnostic {
    pub(crate) fn new(kind: &str, object: String, reason: &str, message: &str) -> Diagnostic {
        Diagnostic {
            kind: kind.to_string(),
            object,
            reason: reason.to_string(),
            message: message.to_string(),
            count: None,
            first_seen: None,
            last_seen: None,
            lines: Vec::new(),
        }
    }
}
