//! Platforms: which entry of an image index a node pulls. One rule for the whole workspace —
//! the evidence checks judge pods with it, the registry client and the test kubelet resolve
//! with it — modelled on containerd's platform matcher (aliases, default variants, and the
//! fallback to the only entry of the node's OS and architecture).

use std::fmt;

/// An OS/architecture/variant triple, as in an index entry or a node's `status.nodeInfo`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
}

impl Platform {
    pub fn new(os: &str, architecture: &str, variant: Option<&str>) -> Platform {
        Platform {
            os: os.to_owned(),
            architecture: architecture.to_owned(),
            variant: variant.filter(|v| !v.is_empty()).map(str::to_owned),
        }
    }

    /// Parses `linux/arm64/v8`, `linux/amd64`.
    pub fn parse(s: &str) -> Option<Platform> {
        let mut parts = s.split('/');
        let os = parts.next().filter(|p| !p.is_empty())?;
        let architecture = parts.next().filter(|p| !p.is_empty())?;
        let variant = parts.next();
        if parts.next().is_some() {
            return None;
        }
        Some(Platform::new(os, architecture, variant))
    }

    /// The form containerd compares: lowercase, architecture aliases resolved, and the default
    /// variant filled in (`arm64` is `arm64/v8`, `arm` is `arm/v7`, `amd64` has none).
    pub fn normalized(&self) -> (String, String, Option<String>) {
        let os = self.os.to_ascii_lowercase();
        let arch = self.architecture.to_ascii_lowercase();
        let variant = self.variant.as_deref().map(str::to_ascii_lowercase);
        let (arch, variant) = match (arch.as_str(), variant.as_deref()) {
            ("x86_64" | "x86-64" | "amd64", None | Some("v1")) => ("amd64".to_owned(), None),
            ("x86_64" | "x86-64", v) => ("amd64".to_owned(), v.map(str::to_owned)),
            ("aarch64" | "arm64", None | Some("8" | "v8")) => {
                ("arm64".to_owned(), Some("v8".to_owned()))
            }
            ("aarch64", v) => ("arm64".to_owned(), v.map(str::to_owned)),
            ("armhf", _) => ("arm".to_owned(), Some("v7".to_owned())),
            ("armel", _) => ("arm".to_owned(), Some("v6".to_owned())),
            ("arm", None) => ("arm".to_owned(), Some("v7".to_owned())),
            ("arm", Some(v)) => {
                let v = if v.starts_with('v') {
                    v.to_owned()
                } else {
                    format!("v{v}")
                };
                ("arm".to_owned(), Some(v))
            }
            ("i386", v) => ("386".to_owned(), v.map(str::to_owned)),
            (a, v) => (a.to_owned(), v.map(str::to_owned)),
        };
        (os, arch, variant)
    }

    /// Whether an index entry for `self` is what a node of platform `other` pulls.
    pub fn matches(&self, other: &Platform) -> bool {
        self.normalized() == other.normalized()
    }

    /// BuildKit stores attestation manifests in the index under `unknown/unknown`.
    pub fn is_unknown(&self) -> bool {
        self.os == "unknown" && self.architecture == "unknown"
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(variant) = &self.variant {
            write!(f, "/{variant}")?;
        }
        Ok(())
    }
}

/// The entry of `entries` (an index's platforms) a node of `node` pulls: the exact match once
/// aliases and default variants are resolved; failing that, the only entry for the same OS
/// and architecture (a runtime falls back to a compatible variant). `None` when no entry
/// serves the node, or when several could and none matches exactly.
pub fn select<'a, T>(entries: &'a [(Platform, T)], node: &Platform) -> Option<&'a T> {
    if let Some((_, value)) = entries.iter().find(|(p, _)| p.matches(node)) {
        return Some(value);
    }
    let (os, arch, _) = node.normalized();
    let mut same_arch = entries.iter().filter(|(p, _)| {
        let (p_os, p_arch, _) = p.normalized();
        p_os == os && p_arch == arch
    });
    match (same_arch.next(), same_arch.next()) {
        (Some((_, value)), None) => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Platform {
        Platform::parse(s).expect("a platform")
    }

    #[test]
    fn a_node_pulls_the_entry_of_its_platform_aliases_and_default_variants_resolved() {
        let index = [(p("linux/amd64"), 1), (p("linux/arm64/v8"), 2)];
        let cases = [
            ("linux/arm64", Some(2)),
            ("linux/aarch64", Some(2)),
            ("linux/amd64", Some(1)),
            ("linux/x86_64", Some(1)),
            // The only arm64 entry serves an arm64 node of another variant.
            ("linux/arm64/v9", Some(2)),
            ("windows/amd64", None),
        ];
        for (node, want) in cases {
            assert_eq!(select(&index, &p(node)), want.as_ref(), "node {node}");
        }
    }

    #[test]
    fn a_node_reporting_no_variant_pulls_its_default_variant_not_the_first_entry() {
        // status.nodeInfo names no variant: an `arm` node is arm/v7, and must not be handed
        // the v6 entry that happens to come first.
        let index = [(p("linux/arm/v6"), 6), (p("linux/arm/v7"), 7)];
        assert_eq!(select(&index, &p("linux/arm")), Some(&7));
        // Two candidates and no exact match: which one the node pulls cannot be told.
        let index = [(p("linux/arm/v5"), 5), (p("linux/arm/v6"), 6)];
        assert_eq!(select(&index, &p("linux/arm")), None);
    }

    #[test]
    fn parsing_and_display_round_trip() {
        assert!(p("linux/arm/7").matches(&p("linux/arm")));
        assert_eq!(
            Platform::new("linux", "arm64", Some("v8")).to_string(),
            "linux/arm64/v8"
        );
        assert_eq!(Platform::parse("linux"), None);
        assert_eq!(Platform::parse("linux/arm/v7/x"), None);
    }
}
