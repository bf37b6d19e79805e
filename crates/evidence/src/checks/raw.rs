//! Reading fields of objects kept as raw JSON (GitOps custom resources, Helm storage).

use jiff::Timestamp;
use serde_json::Value;

pub fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

pub fn i64_at(v: &Value, pointer: &str) -> Option<i64> {
    v.pointer(pointer).and_then(Value::as_i64)
}

/// A time field; an unparsable or empty one is `None` (unknown), never a guess.
pub fn time_at(v: &Value, pointer: &str) -> Option<Timestamp> {
    str_at(v, pointer).and_then(|s| s.parse().ok())
}

pub fn name(v: &Value) -> &str {
    str_at(v, "/metadata/name").unwrap_or("?")
}

/// One entry of `status.conditions`.
pub struct Condition<'a> {
    pub type_: &'a str,
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
    pub last_transition: Option<Timestamp>,
}

pub fn condition<'a>(v: &'a Value, type_: &str) -> Option<Condition<'a>> {
    v.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| str_at(c, "/type") == Some(type_))
        .map(|c| Condition {
            type_: str_at(c, "/type").unwrap_or_default(),
            status: str_at(c, "/status").unwrap_or("Unknown"),
            reason: str_at(c, "/reason").unwrap_or_default(),
            message: str_at(c, "/message").unwrap_or_default(),
            last_transition: time_at(c, "/lastTransitionTime"),
        })
}

/// A controller's message as a report may show it: a URL's userinfo and query, and the
/// credential after an HTTP auth scheme, masked (source-controller's clone errors quote the
/// repository URL as `spec.url` gives it).
pub fn shown(message: &str) -> String {
    let urls = liveproof_redacted::mask_urls(message);
    liveproof_redacted::mask_credentials(&urls, &[]).into_owned()
}

/// The commit part of a GitOps revision: `main@sha1:3f2c…` → `3f2c…`, `main/3f2c…` → `3f2c…`.
pub fn revision_commit(revision: &str) -> &str {
    let after_colon = revision.rsplit(':').next().unwrap_or(revision);
    after_colon.rsplit('/').next().unwrap_or(after_colon)
}

/// Whether `revision` names `commit` (a 7+ hex prefix), case-insensitively.
pub fn revision_matches(revision: &str, commit: &str) -> bool {
    let have = revision_commit(revision).to_ascii_lowercase();
    let want = commit.to_ascii_lowercase();
    !have.is_empty() && (have.starts_with(&want) || want.starts_with(&have) && have.len() >= 7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_in_every_flux_and_argo_form() {
        assert_eq!(revision_commit("main@sha1:3f2c1ab9d0"), "3f2c1ab9d0");
        assert_eq!(revision_commit("main/3f2c1ab9d0"), "3f2c1ab9d0");
        assert_eq!(revision_commit("3f2c1ab9d0"), "3f2c1ab9d0");
        assert!(revision_matches("main@sha1:3F2C1AB9D0", "3f2c1ab"));
        assert!(!revision_matches("main@sha1:aaaaaaa", "3f2c1ab"));
        assert!(!revision_matches("", "3f2c1ab"));
    }
}
