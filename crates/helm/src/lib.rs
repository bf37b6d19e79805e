//! Helm release storage, read without `helm`.
//!
//! Helm keeps every revision of a release in a Secret (the default driver) or a ConfigMap named
//! `sh.helm.release.v1.NAME.vREVISION`. The installed manifest, chart version and deploy time in
//! there are artifacts, not status: they are what `release_revision`, `release_version` and
//! `manifest_contains` judge. This crate decodes that storage, bounded against hostile input,
//! and renders what `helm get` and `helm history` would print. It does no I/O.

mod chart;
mod manifest;
mod name;
mod payload;
mod read;
mod release;
pub mod show;
mod storage;
mod storage_error;
mod stream;
mod values;
pub mod yaml;

pub use chart::{chart_version, chart_version_changed};
pub use manifest::{
    manifest_objects, read_manifest, read_manifest_until, ManifestObject, ManifestRead,
    UnreadableDocument,
};
pub use name::helm_controller_release_name;
pub use read::{read_release, ReadRelease, VisibleManifest};
pub use release::{Chart, ChartMetadata, Hook, Info, Release, ReleaseStatus};
pub use show::CredentialField;
pub use storage::{
    decode, decode_parts, encode_configmap, encode_secret, encode_secret_uncompressed,
    is_release_storage, labelled_revision, newest, object_ref, stores_release,
    stream_stored_manifest, write_stored_manifest, StorageObject, StoredRelease,
    RELEASE_SECRET_TYPE,
};
pub use storage_error::{Base64Layer, DecodeError, Parts, StorageDriver};
pub use values::Values;

/// Bounds applied before and while decoding, so a corrupt or hostile storage object costs a
/// bounded amount of memory and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest release JSON accepted after gunzip.
    pub max_decompressed: usize,
    /// Largest `data.release` string accepted, checked before any decoding. The API server
    /// refuses Secrets and ConfigMaps over 1 MiB, so anything near this is not from a cluster.
    pub max_encoded: usize,
    /// When decoding must stop (a command's `--timeout`): inflating and reading a manifest's
    /// documents check it as they go, so a large release cannot hold a command past it.
    pub deadline: Option<std::time::Instant>,
}

impl Limits {
    /// Whether the deadline has passed.
    pub fn out_of_time(&self) -> bool {
        self.deadline
            .is_some_and(|at| std::time::Instant::now() >= at)
    }
}

/// The largest decoded release accepted by default (`--max-release-size`): 64 MiB, far above
/// any real release and small enough that a hostile one cannot exhaust memory.
pub const DEFAULT_MAX_RELEASE_SIZE: usize = 64 * 1024 * 1024;

/// The largest decoded release any limit may allow: a bound on what a gzip bomb can make
/// liveproof hold, whatever `--max-release-size` asks for.
pub const MAX_RELEASE_SIZE: usize = 512 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_decompressed: DEFAULT_MAX_RELEASE_SIZE,
            max_encoded: 16 * 1024 * 1024,
            deadline: None,
        }
    }
}
