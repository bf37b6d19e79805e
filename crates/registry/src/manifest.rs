//! Manifests and indexes as the registry serves them, and judging the digest a pod runs.
//! Pure: no I/O, so every rule here is unit-tested on literal JSON.

use std::fmt;

use serde::Deserialize;

use crate::reference::{Digest, Reference};
pub use liveproof_oci::Platform;

pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_MANIFEST_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// The `Accept` header for a manifest request: every type we can read.
pub const ACCEPT_MANIFESTS: &str = "application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// What kind of manifest a tag points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManifestKind {
    OciIndex,
    DockerManifestList,
    OciManifest,
    DockerManifest,
}

impl ManifestKind {
    pub fn from_media_type(media_type: &str) -> Option<ManifestKind> {
        // Parameters on Content-Type are to be ignored (distribution-spec "Pulling manifests").
        let media_type = media_type.split(';').next().unwrap_or("").trim();
        match media_type {
            OCI_INDEX => Some(ManifestKind::OciIndex),
            DOCKER_MANIFEST_LIST => Some(ManifestKind::DockerManifestList),
            OCI_MANIFEST => Some(ManifestKind::OciManifest),
            DOCKER_MANIFEST => Some(ManifestKind::DockerManifest),
            _ => None,
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            ManifestKind::OciIndex => OCI_INDEX,
            ManifestKind::DockerManifestList => DOCKER_MANIFEST_LIST,
            ManifestKind::OciManifest => OCI_MANIFEST,
            ManifestKind::DockerManifest => DOCKER_MANIFEST,
        }
    }

    /// An index or manifest list: one entry per platform.
    pub fn is_index(self) -> bool {
        matches!(
            self,
            ManifestKind::OciIndex | ManifestKind::DockerManifestList
        )
    }
}

impl fmt::Display for ManifestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ManifestKind::OciIndex => "OCI image index",
            ManifestKind::DockerManifestList => "Docker manifest list",
            ManifestKind::OciManifest => "OCI image manifest",
            ManifestKind::DockerManifest => "Docker image manifest",
        })
    }
}

/// What a tag resolves to now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub reference: Reference,
    /// The tag's top-level digest (the index's, or the single manifest's).
    pub digest: Digest,
    pub kind: ManifestKind,
    /// Index entries by platform; attestation entries are left out. Empty for a single manifest.
    pub platforms: Vec<(Platform, Digest)>,
}

impl Resolved {
    /// The entry a node of `platform` pulls.
    /// An exact match (default variants filled in) wins; failing that, the only entry for the
    /// same OS and architecture, as a runtime falls back to a compatible variant.
    pub fn for_platform(&self, platform: &Platform) -> Option<&Digest> {
        liveproof_oci::platform::select(&self.platforms, platform)
    }
}

/// What tells the kinds apart when the body names no `mediaType` (OCI allows that): an index
/// has `manifests`, an image manifest a `config`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KindProbe {
    schema_version: Option<u32>,
    media_type: Option<String>,
    manifests: Option<serde::de::IgnoredAny>,
    config: Option<serde::de::IgnoredAny>,
}

/// A manifest body parsed into its kind and (for an index) its platform entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedManifest {
    pub kind: ManifestKind,
    pub platforms: Vec<(Platform, Digest)>,
}

/// Parses a manifest body. `content_type` is the response's Content-Type, when it named a type
/// we know; the body's own `mediaType` must agree with it (distribution-spec: clients SHOULD
/// reject a mismatch).
pub fn parse_manifest(
    body: &[u8],
    content_type: Option<ManifestKind>,
) -> Result<ParsedManifest, String> {
    let parsed: KindProbe =
        serde_json::from_slice(body).map_err(|e| format!("the manifest is not valid JSON: {e}"))?;
    if parsed.schema_version != Some(2) {
        return Err(format!(
            "schemaVersion is {}, only 2 is supported",
            parsed
                .schema_version
                .map_or_else(|| "missing".to_owned(), |v| v.to_string())
        ));
    }
    let body_kind = match parsed.media_type.as_deref() {
        Some(media_type) => Some(
            ManifestKind::from_media_type(media_type)
                .ok_or_else(|| format!("unsupported mediaType {media_type:?}"))?,
        ),
        None => None,
    };
    let kind = match (content_type, body_kind) {
        (Some(header), Some(body)) if header != body => {
            return Err(format!(
                "Content-Type says {} but the body's mediaType says {}",
                header.media_type(),
                body.media_type()
            ))
        }
        (Some(kind), _) | (None, Some(kind)) => kind,
        // OCI allows mediaType to be absent; tell an index from a manifest by its fields.
        (None, None) if parsed.manifests.is_some() => ManifestKind::OciIndex,
        (None, None) if parsed.config.is_some() => ManifestKind::OciManifest,
        (None, None) => return Err("neither an index nor an image manifest".to_owned()),
    };
    if !kind.is_index() {
        return Ok(ParsedManifest {
            kind,
            platforms: Vec::new(),
        });
    }
    if parsed.manifests.is_none() {
        return Err(format!("the {kind} has no \"manifests\""));
    }
    // A Docker manifest list has the OCI index's shape (a schema-2 index of descriptors).
    let index: oci_spec::image::ImageIndex = serde_json::from_slice(body)
        .map_err(|e| format!("the {kind} is not a valid index: {e}"))?;
    let mut platforms = Vec::new();
    for entry in index.manifests() {
        let digest: Digest = entry
            .digest()
            .to_string()
            .parse()
            .map_err(|e: crate::reference::DigestError| format!("an index entry has {e}"))?;
        // BuildKit attestation manifests sit in the index as unknown/unknown entries; a pod
        // never runs one, and comparing against one would make everything stale forever.
        let reference_type = entry
            .annotations()
            .as_ref()
            .and_then(|a| a.get("vnd.docker.reference.type"));
        if reference_type.is_some_and(|t| t == "attestation-manifest") {
            continue;
        }
        let Some(p) = entry.platform() else {
            // An entry without a platform (an artifact) is nothing a node pulls.
            continue;
        };
        let platform = Platform::new(
            &p.os().to_string(),
            &p.architecture().to_string(),
            p.variant().as_deref(),
        );
        if platform.is_unknown() {
            continue;
        }
        platforms.push((platform, digest));
    }
    Ok(ParsedManifest { kind, platforms })
}

#[cfg(test)]
#[expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first surprise"
)]
mod tests {
    use super::*;

    fn d(n: u8) -> Digest {
        format!("sha256:{}", format!("{n:02x}").repeat(32))
            .parse()
            .unwrap()
    }

    fn index_json() -> String {
        serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {"mediaType": OCI_MANIFEST, "digest": d(1).to_string(), "size": 1,
                 "platform": {"os": "linux", "architecture": "amd64"}},
                {"mediaType": OCI_MANIFEST, "digest": d(2).to_string(), "size": 1,
                 "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
                {"mediaType": OCI_MANIFEST, "digest": d(3).to_string(), "size": 1,
                 "platform": {"os": "unknown", "architecture": "unknown"},
                 "annotations": {"vnd.docker.reference.type": "attestation-manifest",
                                 "vnd.docker.reference.digest": d(1).to_string()}},
                {"mediaType": OCI_MANIFEST, "digest": d(4).to_string(), "size": 1,
                 "platform": {"os": "unknown", "architecture": "unknown"}}
            ]
        })
        .to_string()
    }

    fn resolved() -> Resolved {
        let parsed = parse_manifest(index_json().as_bytes(), Some(ManifestKind::OciIndex)).unwrap();
        Resolved {
            reference: Reference::parse("app").unwrap(),
            digest: d(9),
            kind: parsed.kind,
            platforms: parsed.platforms,
        }
    }

    #[test]
    fn index_entries_skip_attestations() {
        let r = resolved();
        assert_eq!(
            r.platforms,
            vec![
                (Platform::new("linux", "amd64", None), d(1)),
                (Platform::new("linux", "arm64", Some("v8")), d(2)),
            ]
        );
    }

    #[test]
    fn platforms_match_with_default_variants() {
        let r = resolved();
        let arm64_node = Platform::new("linux", "arm64", None);
        assert_eq!(r.for_platform(&arm64_node), Some(&d(2)));
        assert_eq!(
            r.for_platform(&Platform::parse("linux/aarch64").unwrap()),
            Some(&d(2))
        );
        assert_eq!(
            r.for_platform(&Platform::parse("linux/amd64").unwrap()),
            Some(&d(1))
        );
        assert_eq!(
            r.for_platform(&Platform::parse("linux/x86_64").unwrap()),
            Some(&d(1))
        );
        assert_eq!(
            r.for_platform(&Platform::parse("linux/arm64/v9").unwrap()),
            Some(&d(2)),
            "the only arm64 entry serves an arm64 node of another variant"
        );
        assert_eq!(
            r.for_platform(&Platform::parse("windows/amd64").unwrap()),
            None
        );
        assert!(Platform::parse("linux/arm/7")
            .unwrap()
            .matches(&Platform::parse("linux/arm").unwrap()));
        assert_eq!(
            Platform::new("linux", "arm64", Some("v8")).to_string(),
            "linux/arm64/v8"
        );
    }

    #[test]
    fn single_manifests_have_no_platforms() {
        let body = serde_json::json!({
            "schemaVersion": 2, "mediaType": DOCKER_MANIFEST,
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                       "digest": d(5).to_string(), "size": 2},
            "layers": []
        })
        .to_string();
        let parsed = parse_manifest(body.as_bytes(), Some(ManifestKind::DockerManifest)).unwrap();
        assert_eq!(parsed.kind, ManifestKind::DockerManifest);
        assert!(parsed.platforms.is_empty());
        // A single manifest resolves to its own digest: what a pod on any node must run.
        let r = Resolved {
            reference: Reference::parse("app").unwrap(),
            digest: d(5),
            kind: parsed.kind,
            platforms: parsed.platforms,
        };
        assert_eq!(
            r.for_platform(&Platform::parse("linux/amd64").unwrap()),
            None
        );
    }

    #[test]
    fn malformed_manifests_say_why() {
        let cases: &[(&str, Option<ManifestKind>, &str)] = &[
            ("not json", None, "not valid JSON"),
            (r#"{"schemaVersion": 1}"#, None, "only 2"),
            (
                r#"{"schemaVersion": 2, "mediaType": "text/plain"}"#,
                None,
                "unsupported mediaType",
            ),
            (
                r#"{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": {}}"#,
                Some(ManifestKind::OciIndex),
                "Content-Type says",
            ),
            (
                r#"{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json"}"#,
                None,
                "no \"manifests\"",
            ),
            (
                r#"{"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "size": 1, "digest": "sha256:nope"}]}"#,
                None,
                "not a valid index",
            ),
            (
                // Every descriptor has a size (image-spec); one without is no index.
                r#"{"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000001"}]}"#,
                None,
                "missing field `size`",
            ),
            (r#"{"schemaVersion": 2}"#, None, "neither"),
        ];
        for (body, kind, want) in cases {
            let err = parse_manifest(body.as_bytes(), *kind).unwrap_err();
            assert!(err.contains(want), "{body}: {err}");
        }
    }

    #[test]
    fn content_type_parameters_are_ignored() {
        assert_eq!(
            ManifestKind::from_media_type("application/vnd.oci.image.index.v1+json; charset=utf-8"),
            Some(ManifestKind::OciIndex)
        );
    }
}
