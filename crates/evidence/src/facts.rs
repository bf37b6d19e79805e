//! Plain data several modules share: what the gather phase hands the judge (a tag's digest,
//! a `--version-url`'s answer, pod logs, decoded Helm releases) and what a change asks of it
//! (the digest policy, a version expectation). Only the types live here, so the snapshot
//! (`observed`) and the change (`change`) name them without importing the modules that read
//! them; those modules keep the functions (`digest`, `checks::server`, `diagnose`,
//! `releases`) and re-export the types at their old paths.

use std::collections::BTreeMap;
use std::sync::Arc;

use liveproof_helm::{ReadRelease, StorageObject};
use liveproof_oci::Platform;
use liveproof_redacted::DisplaySafeUrl;

/// A tag resolved against its registry: its top-level digest and, for an index, the digest of
/// each platform's manifest (attestation entries already left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedTag {
    pub digest: String,
    pub platforms: Vec<(Platform, String)>,
}

/// Which images `image_digest_current` checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DigestPolicy {
    /// Mutable references only: no tag, or `latest` (the default).
    #[default]
    Mutable,
    /// Every tag (`--check-digests`); references pinned by digest are never checked.
    AllTags,
    /// None (`--no-registry`).
    Off,
}

/// One `--version-url URL --expect-version V [--version-json PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionExpectation {
    /// Shown masked (a URL can carry a password or a token); exposed only to be read.
    pub url: DisplaySafeUrl,
    /// The version the server must report.
    pub expect: String,
    /// A dotted path into a JSON body: `.version`, `.build.version`, `.items.0.version`
    /// (array indices as numbers; `items[0]` is accepted too). `None`: search the whole body.
    pub json_path: Option<String>,
}

/// What the gather phase read from one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionReading {
    /// The response body (at most [`MAX_BODY_BYTES`](crate::server::MAX_BODY_BYTES), decoded lossily as UTF-8).
    Body(String),
    /// The JSON field's value as text; `None` when the field is absent or `null`.
    Field(Option<String>),
    /// Why nothing could be read: timeout, connection refused, HTTP status, not JSON, …
    Failed(String),
}

/// Pod logs gathered with `--logs`: `(namespace, pod, container)` → last lines.
pub type Logs = BTreeMap<(String, String, String), Vec<String>>;

/// What decoding one storage object gave: the release, or why it could not be read.
pub type Decoded = Result<Arc<ReadRelease>, String>;

/// Every Helm storage object of a snapshot the gatherer decoded, by object. A storage object
/// the snapshot holds but this does not is unreadable to the judge, never skipped.
#[derive(Debug, Clone, Default)]
pub struct Releases {
    pub(crate) decoded: BTreeMap<StorageObject, Decoded>,
}
