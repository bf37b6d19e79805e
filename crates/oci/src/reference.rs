//! Image references and digests, normalised the way container runtimes do it
//! (distribution/reference `normalize.go`: `nginx` → `docker.io/library/nginx:latest`).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

/// The registry Docker Hub images are named under.
pub const DOCKER_HUB: &str = "docker.io";
/// The host that actually serves Docker Hub's registry API.
pub const DOCKER_HUB_API: &str = "registry-1.docker.io";
/// The legacy name of Docker Hub ("the Docker Index"), normalised to [`DOCKER_HUB`].
const DOCKER_HUB_LEGACY: &str = "index.docker.io";
const DEFAULT_TAG: &str = "latest";
/// Many clients limit `registry/name` to 255 characters.
const MAX_NAME_LEN: usize = 255;
const MAX_TAG_LEN: usize = 128;

/// Why a string is not an image reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid image reference {input:?}: {reason}")]
pub struct ReferenceError {
    pub input: String,
    pub reason: String,
}

impl ReferenceError {
    fn new(input: &str, reason: impl Into<String>) -> ReferenceError {
        ReferenceError {
            input: input.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A content digest, `sha256:<64 lowercase hex>`. Other algorithms are rejected: every
/// registry and runtime we speak to addresses manifests by sha256.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(String);

impl Digest {
    /// The sha256 digest of `bytes`.
    pub fn sha256_of(bytes: &[u8]) -> Digest {
        let hash = Sha256::digest(bytes);
        let mut hex = String::with_capacity(64);
        for byte in hash {
            hex.push_str(&format!("{byte:02x}"));
        }
        Digest(format!("sha256:{hex}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The hex part, without `sha256:`.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }
}

/// Why a string is not a sha256 digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid digest {input:?}: expected sha256:<64 lowercase hex characters>")]
pub struct DigestError {
    pub input: String,
}

impl FromStr for Digest {
    type Err = DigestError;

    fn from_str(s: &str) -> Result<Digest, DigestError> {
        let valid = s.strip_prefix("sha256:").is_some_and(|hex| {
            hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        if valid {
            Ok(Digest(s.to_owned()))
        } else {
            Err(DigestError {
                input: s.to_owned(),
            })
        }
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.0)
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Digest, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A normalised image reference: `docker.io/library/nginx:latest`,
/// `registry.example.com:5000/team/app@sha256:…`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// The registry as named (`docker.io` for Docker Hub, `host:port` otherwise).
    pub registry: String,
    /// The repository path, `library/nginx`.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<Digest>,
}

impl Reference {
    /// Parses and normalises a reference as container runtimes do.
    pub fn parse(input: &str) -> Result<Reference, ReferenceError> {
        if input.is_empty() {
            return Err(ReferenceError::new(input, "empty"));
        }
        if input.contains(char::is_whitespace) {
            return Err(ReferenceError::new(input, "a reference has no spaces"));
        }
        if input.len() == 64 && input.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ReferenceError::new(
                input,
                "a 64-character hexadecimal string is an image ID, not a repository name",
            ));
        }
        let (name_and_tag, digest) = match input.split_once('@') {
            Some((rest, digest)) => {
                let digest = digest
                    .parse::<Digest>()
                    .map_err(|e| ReferenceError::new(input, e.to_string()))?;
                (rest, Some(digest))
            }
            None => (input, None),
        };
        // The tag follows the last ':' that comes after the last '/', so a port is never a tag.
        let last_slash = name_and_tag.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match name_and_tag[last_slash..].rfind(':') {
            Some(i) => {
                let at = last_slash + i;
                (&name_and_tag[..at], Some(&name_and_tag[at + 1..]))
            }
            None => (name_and_tag, None),
        };
        if let Some(tag) = tag {
            if !valid_tag(tag) {
                return Err(ReferenceError::new(
                    input,
                    format!("tag {tag:?} must match [A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}"),
                ));
            }
        }
        let (registry, repository) = split_registry(name);
        if let Some(registry) = registry.as_deref() {
            if !valid_registry(registry) {
                return Err(ReferenceError::new(
                    input,
                    format!("registry {registry:?} is not a host name, IP address or host:port"),
                ));
            }
        }
        let registry = registry.unwrap_or_else(|| DOCKER_HUB.to_owned());
        let repository = if registry == DOCKER_HUB && !repository.contains('/') {
            format!("library/{repository}")
        } else {
            repository.to_owned()
        };
        if repository.to_lowercase() != repository {
            return Err(ReferenceError::new(
                input,
                format!("repository name {repository:?} must be lowercase"),
            ));
        }
        if !valid_repository(&repository) {
            return Err(ReferenceError::new(
                input,
                format!(
                    "repository name {repository:?} must be path components of lowercase \
                     letters and digits separated by '.', '_', '__' or '-'"
                ),
            ));
        }
        if registry.len() + 1 + repository.len() > MAX_NAME_LEN {
            return Err(ReferenceError::new(
                input,
                format!("name is longer than {MAX_NAME_LEN} characters"),
            ));
        }
        Ok(Reference {
            registry,
            repository,
            tag: tag.map(str::to_owned),
            digest,
        })
    }

    /// The tag, or `latest` when none was written.
    pub fn tag_or_latest(&self) -> &str {
        self.tag.as_deref().unwrap_or(DEFAULT_TAG)
    }

    /// Whether what this reference names can change under it: no digest, and no tag or `latest`.
    pub fn is_mutable(&self) -> bool {
        self.digest.is_none() && self.tag.as_deref().is_none_or(|t| t == DEFAULT_TAG)
    }

    /// The host that serves this registry's API (`registry-1.docker.io` for Docker Hub).
    pub fn api_host(&self) -> &str {
        api_host(&self.registry)
    }

    /// What to ask the registry for: the digest when pinned, else the tag.
    pub fn manifest_reference(&self) -> String {
        match &self.digest {
            Some(digest) => digest.to_string(),
            None => self.tag_or_latest().to_owned(),
        }
    }
}

/// The host that serves a registry's API.
pub fn api_host(registry: &str) -> &str {
    if registry == DOCKER_HUB {
        DOCKER_HUB_API
    } else {
        registry
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        match (&self.tag, &self.digest) {
            (Some(tag), _) => write!(f, ":{tag}")?,
            (None, None) => write!(f, ":{DEFAULT_TAG}")?,
            (None, Some(_)) => {}
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

impl FromStr for Reference {
    type Err = ReferenceError;

    fn from_str(s: &str) -> Result<Reference, ReferenceError> {
        Reference::parse(s)
    }
}

/// Splits `name` into (registry, repository) as `splitDockerDomain` does: the first
/// component is a registry when it is `localhost`, contains `.` or `:`, or has uppercase.
fn split_registry(name: &str) -> (Option<String>, &str) {
    let Some((first, rest)) = name.split_once('/') else {
        return (None, name);
    };
    if first == DOCKER_HUB_LEGACY || first == DOCKER_HUB {
        (Some(DOCKER_HUB.to_owned()), rest)
    } else if first == "localhost" || first.contains(['.', ':']) || first.to_lowercase() != first {
        (Some(first.to_owned()), rest)
    } else {
        (None, name)
    }
}

fn valid_tag(tag: &str) -> bool {
    let mut bytes = tag.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    first_ok
        && tag.len() <= MAX_TAG_LEN
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn valid_registry(registry: &str) -> bool {
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        // [ipv6]:port
        let Some((inside, after)) = rest.split_once(']') else {
            return false;
        };
        if inside.is_empty() || !inside.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
            return false;
        }
        match after.strip_prefix(':') {
            Some(port) => (None, Some(port)),
            None if after.is_empty() => (None, None),
            None => return false,
        }
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(registry), None),
        }
    };
    let host_ok = host.is_none_or(|host| {
        !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
    });
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*`
fn valid_repository(repository: &str) -> bool {
    repository.split('/').all(valid_path_component)
}

fn valid_path_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if !alnum(first) || !alnum(last) {
        return false;
    }
    // Separators between alphanumeric runs: '.', '_', '__', or any run of '-'.
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let sep = &component[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// The repo digest in a container status `imageID`, when it has one.
///
/// Runtimes write it differently: containerd `docker.io/library/nginx@sha256:…`, cri-dockerd
/// `docker-pullable://nginx@sha256:…`, CRI-O `quay.io/x/y@sha256:…`. `docker://sha256:…` and a
/// bare `sha256:…` are image (config) IDs, not what the registry serves, so they give `None`.
pub fn image_id_digest(image_id: &str) -> Option<Digest> {
    let without_scheme = image_id
        .strip_prefix("docker-pullable://")
        .or_else(|| image_id.strip_prefix("docker://"))
        .unwrap_or(image_id);
    let (name, digest) = without_scheme.rsplit_once('@')?;
    if name.is_empty() {
        return None;
    }
    // A digest's hex is lowercase by the OCI grammar; one written in capitals names the same
    // content (the evidence checks always accepted it, the registry side did not: one rule now).
    digest.to_ascii_lowercase().parse().ok()
}

#[cfg(test)]
#[expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first surprise"
)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn references_normalise_like_container_runtimes() {
        let cases: &[(&str, &str, &str, Option<&str>, bool)] = &[
            ("nginx", "docker.io", "library/nginx", None, true),
            (
                "nginx:1.27",
                "docker.io",
                "library/nginx",
                Some("1.27"),
                false,
            ),
            (
                "nginx:latest",
                "docker.io",
                "library/nginx",
                Some("latest"),
                true,
            ),
            ("docker.io/nginx", "docker.io", "library/nginx", None, true),
            ("index.docker.io/x/y", "docker.io", "x/y", None, true),
            (
                "index.docker.io/nginx",
                "docker.io",
                "library/nginx",
                None,
                true,
            ),
            (
                "bitnami/redis:7",
                "docker.io",
                "bitnami/redis",
                Some("7"),
                false,
            ),
            ("host:5000/a/b:tag", "host:5000", "a/b", Some("tag"), false),
            ("localhost/app", "localhost", "app", None, true),
            ("127.0.0.1:5000/app", "127.0.0.1:5000", "app", None, true),
            ("[::1]:5000/app:v1", "[::1]:5000", "app", Some("v1"), false),
            (
                "ghcr.io/org/team/app:main",
                "ghcr.io",
                "org/team/app",
                Some("main"),
                false,
            ),
            ("Registry/app", "Registry", "app", None, true),
            (
                "a/b__c/d-e--f.g",
                "docker.io",
                "a/b__c/d-e--f.g",
                None,
                true,
            ),
        ];
        for (input, registry, repository, tag, mutable) in cases {
            let r = Reference::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(r.registry, *registry, "{input}");
            assert_eq!(r.repository, *repository, "{input}");
            assert_eq!(r.tag.as_deref(), *tag, "{input}");
            assert_eq!(r.digest, None, "{input}");
            assert_eq!(r.is_mutable(), *mutable, "{input}");
        }
        assert_eq!(
            Reference::parse("nginx").unwrap().to_string(),
            "docker.io/library/nginx:latest"
        );
        assert_eq!(
            Reference::parse("nginx").unwrap().api_host(),
            "registry-1.docker.io"
        );
        assert_eq!(
            Reference::parse("host:5000/a/b").unwrap().api_host(),
            "host:5000"
        );
    }

    #[test]
    fn digests_pin_a_reference() {
        let r = Reference::parse(&format!("nginx@sha256:{HEX}")).unwrap();
        assert_eq!(r.digest.as_ref().unwrap().hex(), HEX);
        assert_eq!(r.tag, None);
        assert!(!r.is_mutable());
        assert_eq!(
            r.to_string(),
            format!("docker.io/library/nginx@sha256:{HEX}")
        );
        assert_eq!(r.manifest_reference(), format!("sha256:{HEX}"));

        let r = Reference::parse(&format!("host:5000/a:latest@sha256:{HEX}")).unwrap();
        assert_eq!(r.tag.as_deref(), Some("latest"));
        assert!(!r.is_mutable(), "a digest pins even :latest");
        assert_eq!(r.to_string(), format!("host:5000/a:latest@sha256:{HEX}"));
    }

    #[test]
    fn bad_references_are_rejected_with_a_reason() {
        let bad = [
            "",
            "Nginx",
            "docker.io/Library/nginx",
            "nginx:",
            "nginx:-x",
            "nginx@sha256:abc",
            &format!("nginx@sha512:{HEX}"),
            &format!("nginx@sha256:{}", HEX.to_uppercase()),
            HEX,
            "a//b",
            "a/b/",
            "-a",
            "a..b",
            "host:port/app",
            &format!("nginx:{}", "t".repeat(129)),
        ];
        for input in bad {
            let err = Reference::parse(input).expect_err(input);
            assert!(!err.reason.is_empty());
            assert!(err.to_string().contains("invalid image reference"), "{err}");
        }
        // Said as what it is, not as a capital somewhere in a normalised name.
        let err = Reference::parse("Not An Image").expect_err("spaces");
        assert_eq!(err.reason, "a reference has no spaces");
    }

    #[test]
    fn digest_parsing_and_hashing() {
        assert!(format!("sha256:{HEX}").parse::<Digest>().is_ok());
        assert!("sha256:".parse::<Digest>().is_err());
        assert!(HEX.parse::<Digest>().is_err());
        assert_eq!(
            Digest::sha256_of(b"").to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn image_ids_from_each_runtime() {
        let d = format!("sha256:{HEX}");
        let cases: Vec<(String, Option<&str>)> = vec![
            (format!("docker.io/library/nginx@{d}"), Some(&d)),
            (format!("docker-pullable://nginx@{d}"), Some(&d)),
            (format!("docker-pullable://registry:5000/a/b@{d}"), Some(&d)),
            (format!("quay.io/org/app@{d}"), Some(&d)),
            (format!("localhost:5000/app@{d}"), Some(&d)),
            (
                format!(
                    "quay.io/org/app@{}",
                    d.to_ascii_uppercase().replace("SHA256", "sha256")
                ),
                Some(&d),
            ),
            (format!("docker://{d}"), None),
            (d.clone(), None),
            (format!("@{d}"), None),
            ("docker.io/library/nginx@sha256:short".to_owned(), None),
            (String::new(), None),
        ];
        for (image_id, want) in cases {
            assert_eq!(
                image_id_digest(&image_id).as_ref().map(Digest::as_str),
                want,
                "{image_id}"
            );
        }
    }
}
