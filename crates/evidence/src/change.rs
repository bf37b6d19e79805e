//! The change "live" is about: when it happened and what it must have put in place.

use jiff::Timestamp;

/// Everything the user said about the change. Each expectation given must pass for `live`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// When the change was merged or pushed (`--since`, or the committer time of `--commit`).
    pub since: Option<Timestamp>,
    /// Where `since` came from, as the timeline says it: `--since`, `committer time of SHA in
    /// REPO`, `the snapshot`.
    pub since_source: Option<String>,
    /// The change's commit (a 7+ hex prefix), matched against GitOps revisions.
    pub commit: Option<String>,
    /// The commit's committer time, when `--repo` was read for it: what the lead time counts
    /// from (set whether or not it is also `since`).
    pub commit_time: Option<Timestamp>,
    /// `--image`: the image each container of that repository must run.
    pub images: Vec<ExpectedImage>,
    /// `--expect-env NAME`: env var names the containers must define (values never read).
    pub env: Vec<String>,
    /// `--expect-secret-ref SECRET[/KEY]`.
    pub secret_refs: Vec<SecretRefExpectation>,
    /// `--chart-version V`: the chart version the installed release must carry.
    pub chart_version: Option<String>,
    /// `--expect TEXT` / `--expect re:REGEX`: what the installed manifest must contain.
    pub manifest: Vec<ManifestExpectation>,
    /// Which images `image_digest_current` holds to their tag's current digest.
    pub digests: crate::facts::DigestPolicy,
    /// `-f`: the pod templates the manifests declare; each declared workload's live template
    /// must carry every field declared there.
    pub declared: Vec<DeclaredTemplate>,
    /// What states the change for a workload no flag describes, e.g. `the snapshot` for
    /// `verify --snapshot` (every workload verified there changed since it was taken).
    pub stated_by: Option<String>,
    /// `verify --snapshot`: each workload's pod template hash as the snapshot recorded it
    /// before the apply ([`crate::snapshot::template_hash`]). A template that differs now
    /// shows the change, which decides a pod start in the change's own second.
    pub prior_templates: Vec<(crate::Target, String)>,
    /// `--version-url` / `--expect-version` / `--version-json`, paired: the versions the
    /// servers must report (each judged as a `Server` target).
    pub versions: Vec<crate::facts::VersionExpectation>,
}

/// A workload's pod template as a manifest declares it (`verify -f`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredTemplate {
    /// The workload, with its namespace (the manifest's, or `-n`).
    pub target: crate::Target,
    /// `.spec.template` as declared, as JSON (only the fields the manifest sets).
    pub template: serde_json::Value,
    /// Where it was read: the file, and the commit when read from git.
    pub source: String,
    /// The `-f` path as given, for commands that repeat it.
    pub given: String,
    /// Where it is in `--repo`, when it was read as of `--commit`: the later commits that
    /// touched it are read there too (`superseded`).
    pub repo_path: Option<crate::history::RepoPath>,
}

/// One `--expect`: plain text, or `re:REGEX`.
#[derive(Debug, Clone)]
pub struct ManifestExpectation {
    /// As the user wrote it.
    pub given: String,
    regex: Option<regex::Regex>,
}

impl PartialEq for ManifestExpectation {
    fn eq(&self, other: &Self) -> bool {
        self.given == other.given
    }
}

impl Eq for ManifestExpectation {}

impl ManifestExpectation {
    /// Parses `TEXT` or `re:REGEX`; the error is the regex's own message.
    pub fn parse(given: &str) -> Result<ManifestExpectation, String> {
        let regex = match given.strip_prefix("re:") {
            Some(pattern) => Some(
                regex::RegexBuilder::new(pattern)
                    .multi_line(true)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| e.to_string())?,
            ),
            None => None,
        };
        if given.is_empty() {
            return Err("empty expectation".into());
        }
        Ok(ManifestExpectation {
            given: given.to_string(),
            regex,
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        match &self.regex {
            Some(r) => r.is_match(text),
            None => text.contains(&self.given),
        }
    }
}

impl Change {
    /// Whether any expectation about the running containers was given (`pod_spec`).
    pub fn has_spec_expectations(&self) -> bool {
        !self.images.is_empty() || !self.env.is_empty() || !self.secret_refs.is_empty()
    }

    /// The template `-f` declares for this workload, if any.
    pub fn declared_for(
        &self,
        kind: crate::TargetKind,
        namespace: &str,
        name: &str,
    ) -> Option<&DeclaredTemplate> {
        self.declared.iter().find(|d| {
            d.target.kind == kind
                && d.target.name == name
                && d.target.namespace.as_deref() == Some(namespace)
        })
    }

    /// The template hash the snapshot recorded for this workload before the change, if any.
    pub fn prior_template(
        &self,
        kind: crate::TargetKind,
        namespace: &str,
        name: &str,
    ) -> Option<&str> {
        self.prior_templates
            .iter()
            .find(|(t, _)| {
                t.kind == kind && t.name == name && t.namespace.as_deref() == Some(namespace)
            })
            .map(|(_, hash)| hash.as_str())
    }

    /// The expectations `--image` names by digest (`repo@sha256:…`, `repo:tag@sha256:…`).
    pub fn digest_images(&self) -> impl Iterator<Item = &ExpectedImage> {
        self.images.iter().filter(|i| i.image.digest.is_some())
    }
}

/// The reference as the checks compare it: registry and repository in one name.
impl From<&liveproof_oci::Reference> for ImageRef {
    fn from(r: &liveproof_oci::Reference) -> ImageRef {
        ImageRef {
            repository: format!("{}/{}", r.registry, r.repository),
            tag: r.tag.clone(),
            digest: r.digest.as_ref().map(|d| d.as_str().to_string()),
        }
    }
}

impl ImageRef {
    /// The key `Observed::tags` holds a digest's resolution under: `repository@sha256:…`.
    pub fn digest_key(&self) -> Option<String> {
        self.digest
            .as_ref()
            .map(|d| format!("{}@{d}", self.repository))
    }
}

/// An image reference split the way container runtimes read it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImageRef {
    /// Normalised repository, e.g. `docker.io/library/nginx`, `registry.local:5000/team/app`.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// Parses `nginx`, `nginx:1.27`, `ghcr.io/o/app@sha256:…`, `host:5000/app:tag@sha256:…`.
    /// Returns `None` for an empty string or one with whitespace.
    pub fn parse(reference: &str) -> Option<ImageRef> {
        // One parser for image references: the OCI crate's, as runtimes normalise them.
        liveproof_oci::Reference::parse(reference.trim())
            .ok()
            .map(|r| ImageRef::from(&r))
    }

    /// The key `Observed::tags` uses: `repository:tag`.
    pub fn tag_key(&self) -> Option<String> {
        self.effective_tag()
            .map(|t| format!("{}:{t}", self.repository))
    }

    /// The tag a runtime pulls: the given one, or `latest` when neither tag nor digest is set.
    pub fn effective_tag(&self) -> Option<&str> {
        match (&self.tag, &self.digest) {
            (Some(t), _) => Some(t),
            (None, None) => Some("latest"),
            (None, Some(_)) => None,
        }
    }

    /// Whether `running` (a container's image) satisfies this expectation: same repository,
    /// and the same digest when one is expected, else the same tag.
    pub fn satisfied_by(&self, running: &ImageRef) -> bool {
        if self.repository != running.repository {
            return false;
        }
        match &self.digest {
            Some(d) => running.digest.as_deref() == Some(d.as_str()),
            None => self.effective_tag() == running.effective_tag(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedImage {
    /// As the user wrote it, for messages.
    pub given: String,
    pub image: ImageRef,
}

impl ExpectedImage {
    /// `--image`: a reference as runtimes read it, or why it is none.
    pub fn parse(given: &str) -> Result<ExpectedImage, liveproof_oci::ReferenceError> {
        let image = liveproof_oci::Reference::parse(given.trim())?;
        Ok(ExpectedImage {
            given: given.to_string(),
            image: ImageRef::from(&image),
        })
    }
}

/// `SECRET` or `SECRET/KEY`: a container must reference this Secret (and key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRefExpectation {
    pub secret: String,
    pub key: Option<String>,
}

impl SecretRefExpectation {
    pub fn parse(given: &str) -> Option<SecretRefExpectation> {
        let (secret, key) = match given.split_once('/') {
            Some((s, k)) => (s, Some(k.to_string())),
            None => (given, None),
        };
        if secret.is_empty() || key.as_deref() == Some("") {
            return None;
        }
        Some(SecretRefExpectation {
            secret: secret.to_string(),
            key,
        })
    }
}

impl std::fmt::Display for SecretRefExpectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{}/{k}", self.secret),
            None => f.write_str(&self.secret),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_a_runtime() {
        let r = ImageRef::parse("nginx").expect("parses");
        assert_eq!(r.repository, "docker.io/library/nginx");
        assert_eq!(r.effective_tag(), Some("latest"));
        let r = ImageRef::parse("index.docker.io/acme/app:2").expect("parses");
        assert_eq!(r.repository, "docker.io/acme/app");
        let digest = format!("sha256:{}", "ab".repeat(32));
        let r = ImageRef::parse(&format!("localhost:5000/app:1.2@{digest}")).expect("parses");
        assert_eq!(r.repository, "localhost:5000/app");
        assert_eq!(r.tag.as_deref(), Some("1.2"));
        assert_eq!(r.digest.as_deref(), Some(digest.as_str()));
        let r = ImageRef::parse("registry.local:5000/team/app").expect("parses");
        assert_eq!(
            (r.repository.as_str(), r.tag),
            ("registry.local:5000/team/app", None)
        );
        assert!(ImageRef::parse("app:").is_none());
        assert!(ImageRef::parse("").is_none());
        // What no runtime would pull is no reference: a digest that is not one, a capital.
        assert!(ImageRef::parse("app@sha256:abc").is_none());
        assert!(ImageRef::parse("ghcr.io/Acme/app:1").is_none());
    }

    #[test]
    fn matches_by_repository_then_tag_or_digest() {
        let want = ImageRef::parse("ghcr.io/acme/inventory:1.4.0").expect("parses");
        let old = ImageRef::parse("ghcr.io/acme/inventory:1.3.9").expect("parses");
        assert!(want.satisfied_by(&want.clone()));
        assert!(!want.satisfied_by(&old));
        let other_repo = ImageRef::parse("ghcr.io/acme/other:1.4.0").expect("parses");
        assert!(!want.satisfied_by(&other_repo));
        let digest = format!("sha256:{}", "aa".repeat(32));
        let by_digest =
            ImageRef::parse(&format!("ghcr.io/acme/inventory@{digest}")).expect("parses");
        let running =
            ImageRef::parse(&format!("ghcr.io/acme/inventory:1.4.0@{digest}")).expect("parses");
        assert!(by_digest.satisfied_by(&running));
    }

    #[test]
    fn secret_refs_parse() {
        let s = SecretRefExpectation::parse("db/password").expect("parses");
        assert_eq!(
            (s.secret.as_str(), s.key.as_deref()),
            ("db", Some("password"))
        );
        assert!(SecretRefExpectation::parse("db/").is_none());
    }
}
