//! A real Helm 3 release as its storage Secret holds it (`inventory`, revision 34), with the
//! secret values it carries, for the tests of decoding and of `release show`.

use liveproof_helm::{decode, encode_secret, Limits, Release, StoredRelease};
use serde_json::Value;

/// What the release's values and rendered Secret hold, that no view may show.
pub const SECRETS: [&str; 3] = [
    "hunter2-s3cr3t",
    "tok_live_9f8e7d",
    // base64 of hunter2-s3cr3t, as the rendered Secret carries it.
    "aHVudGVyMi1zM2NyM3Q=",
];

/// The release as Helm writes it (before its storage encodes it).
pub fn inventory_json() -> Value {
    serde_json::from_str(include_str!(
        "../../helm/tests/fixtures/helm3-release-inventory-v34.json"
    ))
    .expect("fixture is JSON")
}

/// `release` stored in a Secret as Helm stores it, and decoded back.
pub fn stored(release: &Value) -> StoredRelease {
    decode(&encode_secret(release), &Limits::default()).expect("decodes")
}

/// The release, decoded from its storage.
pub fn inventory() -> Release {
    stored(&inventory_json()).release
}

/// Fails naming the secret when `text` shows any of [`SECRETS`].
pub fn assert_no_secret(text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} leaked in:\n{text}");
    }
}
