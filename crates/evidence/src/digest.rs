//! What a tag resolves to now, and whether a running container is on it — the model the
//! registry client fills and `image_digest_current` / `liveproof stale` judge. Pure.

/// `os/architecture[/variant]` as a node reports it (`status.nodeInfo`) or an index lists it;
/// which entry a node pulls is [`liveproof_oci::platform::select`], the one rule the registry
/// client uses too.
pub use liveproof_oci::Platform;

pub use crate::facts::{DigestPolicy, ResolvedTag};

/// How a running container's digest compares with what its tag resolves to now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DigestMatch {
    /// On the tag's current content: `via` says which digest matched.
    Current { via: String },
    /// On other content: `want` is what its node should run.
    Stale { want: String },
    /// Cannot be told, and why.
    Unknown { why: String },
}

impl ResolvedTag {
    /// The digest a node of `platform` pulls: its index entry, or the top-level digest of a
    /// single-platform image.
    pub fn for_platform(&self, platform: &Platform) -> Option<&str> {
        if self.platforms.is_empty() {
            return Some(&self.digest);
        }
        liveproof_oci::platform::select(&self.platforms, platform).map(String::as_str)
    }

    /// Runtimes record either the index digest or the per-platform digest, so a container is
    /// current when it runs either, and stale only when it runs neither.
    pub fn judge(&self, running: &str, node: Option<&Platform>) -> DigestMatch {
        if running == self.digest {
            return DigestMatch::Current {
                via: "the tag's digest".into(),
            };
        }
        match node {
            Some(node) => match self.for_platform(node) {
                Some(d) if d == running => DigestMatch::Current {
                    via: format!("the {node} entry"),
                },
                Some(d) => DigestMatch::Stale {
                    want: d.to_string(),
                },
                None => DigestMatch::Unknown {
                    why: format!("the tag has no entry for the node's platform {node}"),
                },
            },
            // Without the node's platform, any entry of the index is as good a match as any.
            None => match self.platforms.iter().find(|(_, d)| d == running) {
                Some((p, _)) => DigestMatch::Current {
                    via: format!("the {p} entry (node platform unknown)"),
                },
                None => DigestMatch::Stale {
                    want: self.digest.clone(),
                },
            },
        }
    }
}

/// The repo digest in a container status' `imageID`, in any runtime's form: containerd
/// `docker.io/library/nginx@sha256:…`, cri-dockerd `docker-pullable://nginx@sha256:…`, CRI-O
/// `registry/x@sha256:…`. cri-dockerd's `docker://sha256:…` is an image config ID, not a repo
/// digest, and a bare `sha256:…` is ambiguous: both are `None` (unknown, never stale).
/// The rule is `liveproof_oci::image_id_digest`, the one the registry client uses too.
pub fn image_id_digest(image_id: &str) -> Option<String> {
    liveproof_oci::image_id_digest(image_id).map(|digest| digest.to_string())
}

impl DigestPolicy {
    /// Whether a container image reference is checked under this policy.
    pub fn covers(self, image: &crate::ImageRef) -> bool {
        if image.digest.is_some() {
            return false;
        }
        match self {
            DigestPolicy::Off => false,
            DigestPolicy::AllTags => true,
            DigestPolicy::Mutable => image.effective_tag() == Some("latest"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Platform {
        let mut parts = s.split('/');
        Platform {
            os: parts.next().unwrap_or_default().into(),
            architecture: parts.next().unwrap_or_default().into(),
            variant: parts.next().map(str::to_string),
        }
    }

    fn d(c: char) -> String {
        format!("sha256:{}", c.to_string().repeat(64))
    }

    #[test]
    fn an_arm_node_is_judged_against_its_default_variant_not_the_first_arm_entry() {
        // Nodes report no variant. The rule the checks used (`serves`: a variant named on one
        // side only matches anything) took the first arm entry, v6, for an arm node, and
        // called its pod, on the v7 entry it really pulled, stale. One rule now, the registry
        // client's: an arm node is arm/v7.
        let tag = ResolvedTag {
            digest: d('1'),
            platforms: vec![(p("linux/arm/v6"), d('6')), (p("linux/arm/v7"), d('7'))],
        };
        assert!(
            matches!(
                tag.judge(&d('7'), Some(&p("linux/arm"))),
                DigestMatch::Current { .. }
            ),
            "{:?}",
            tag.judge(&d('7'), Some(&p("linux/arm")))
        );
        assert_eq!(
            tag.judge(&d('6'), Some(&p("linux/arm"))),
            DigestMatch::Stale { want: d('7') }
        );
    }

    #[test]
    fn current_on_index_or_platform_digest_stale_on_neither() {
        let tag = ResolvedTag {
            digest: d('1'),
            platforms: vec![(p("linux/amd64"), d('a')), (p("linux/arm64/v8"), d('b'))],
        };
        assert!(matches!(
            tag.judge(&d('1'), Some(&p("linux/arm64"))),
            DigestMatch::Current { .. }
        ));
        assert!(matches!(
            tag.judge(&d('a'), Some(&p("linux/amd64"))),
            DigestMatch::Current { .. }
        ));
        assert_eq!(
            tag.judge(&d('a'), Some(&p("linux/arm64"))),
            DigestMatch::Stale { want: d('b') }
        );
        assert_eq!(
            tag.judge(&d('9'), Some(&p("linux/amd64"))),
            DigestMatch::Stale { want: d('a') }
        );
        assert!(matches!(
            tag.judge(&d('a'), Some(&p("linux/s390x"))),
            DigestMatch::Unknown { .. }
        ));
        assert!(matches!(
            tag.judge(&d('b'), None),
            DigestMatch::Current { .. }
        ));
        let single = ResolvedTag {
            digest: d('5'),
            platforms: vec![],
        };
        assert_eq!(
            single.judge(&d('6'), Some(&p("linux/amd64"))),
            DigestMatch::Stale { want: d('5') }
        );
    }

    #[test]
    fn image_ids_in_every_runtime_form() {
        let hex = "A".repeat(64);
        let want = Some(format!("sha256:{}", "a".repeat(64)));
        assert_eq!(
            image_id_digest(&format!("docker.io/library/nginx@sha256:{hex}")),
            want
        );
        assert_eq!(
            image_id_digest(&format!("docker-pullable://nginx@sha256:{hex}")),
            want
        );
        assert_eq!(image_id_digest(&format!("quay.io/x/y@sha256:{hex}")), want);
        assert_eq!(image_id_digest(&format!("docker://sha256:{hex}")), None);
        assert_eq!(image_id_digest(&format!("sha256:{hex}")), None);
        assert_eq!(image_id_digest("nginx@sha256:abc"), None);
        assert_eq!(image_id_digest(""), None);
    }

    #[test]
    fn policy_covers_mutable_tags_by_default() {
        let r = |s: &str| crate::ImageRef::parse(s).expect("ref");
        assert!(DigestPolicy::Mutable.covers(&r("nginx")));
        assert!(DigestPolicy::Mutable.covers(&r("nginx:latest")));
        assert!(!DigestPolicy::Mutable.covers(&r("nginx:1.27")));
        assert!(DigestPolicy::AllTags.covers(&r("nginx:1.27")));
        assert!(!DigestPolicy::AllTags.covers(&r(&format!("nginx@sha256:{}", "ab".repeat(32)))));
        assert!(!DigestPolicy::Off.covers(&r("nginx")));
    }
}
