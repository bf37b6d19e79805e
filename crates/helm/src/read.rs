//! A release as the checks read it: decoded, its manifest read into documents as stored and
//! as shown.

use std::ops::Deref;

use serde_json::Value;

use crate::show::CredentialField;
use crate::{DecodeError, Limits, ManifestRead, StoredRelease};

/// One revision of a release, decoded, with its manifest read into documents.
#[derive(Debug, Clone)]
pub struct ReadRelease {
    pub stored: StoredRelease,
    /// The stored manifest's documents.
    pub manifest: ManifestRead,
    /// When the manifest as liveproof shows it differs from the stored one (a rendered
    /// Secret's data redacted, values that look like credentials redacted): that text and its
    /// documents.
    redacted: Option<(String, ManifestRead)>,
    /// The values redacted as looking like credentials (where, never what).
    credentials: Vec<CredentialField>,
}

/// The manifest as liveproof shows it (`release show --manifest`): what `--expect` is
/// matched against, so a regex can never answer yes/no about a Secret's value.
#[derive(Debug, Clone, Copy)]
pub struct VisibleManifest<'a> {
    pub text: &'a str,
    pub read: &'a ManifestRead,
    /// Whether anything was redacted.
    pub redacted: bool,
    /// The values redacted as looking like credentials, outside Secrets: a regex or text not
    /// found in the shown manifest may be in one of them.
    pub credentials: &'a [CredentialField],
}

impl ReadRelease {
    /// `stored`, its manifest's documents, and the manifest as shown when that differs.
    pub fn new(
        stored: StoredRelease,
        manifest: ManifestRead,
        redacted: Option<(String, ManifestRead)>,
    ) -> ReadRelease {
        ReadRelease {
            stored,
            manifest,
            redacted,
            credentials: Vec::new(),
        }
    }

    /// With the values the shown manifest redacted as looking like credentials.
    pub fn with_credentials(mut self, credentials: Vec<CredentialField>) -> ReadRelease {
        self.credentials = credentials;
        self
    }

    pub fn visible(&self) -> VisibleManifest<'_> {
        match &self.redacted {
            Some((text, read)) => VisibleManifest {
                text,
                read,
                redacted: true,
                credentials: &self.credentials,
            },
            None => VisibleManifest {
                text: &self.stored.release.manifest,
                read: &self.manifest,
                redacted: false,
                credentials: &self.credentials,
            },
        }
    }
}

impl Deref for ReadRelease {
    type Target = StoredRelease;

    fn deref(&self) -> &StoredRelease {
        &self.stored
    }
}

/// Decodes the release `obj` stores and reads its manifest (as stored, and as shown) into
/// documents, all within `limits`: documents the deadline leaves are unreadable (unknown, never
/// absent).
pub fn read_release(obj: &Value, limits: &Limits) -> Result<ReadRelease, DecodeError> {
    let stored = crate::decode(obj, limits)?;
    let manifest = crate::read_manifest_until(&stored.release.manifest, limits.deadline);
    let (shown, credentials) = crate::show::manifest_and_credentials(&stored.release);
    let redacted = (shown != stored.release.manifest).then(|| {
        let read = crate::read_manifest_until(&shown, limits.deadline);
        (shown, read)
    });
    Ok(ReadRelease::new(stored, manifest, redacted).with_credentials(credentials))
}
