//! The registry half of the gather phase: what each image tag the digest policy covers
//! resolves to now, into `Observed::tags` — each (registry, repository, tag) asked once.

use std::collections::BTreeMap;

use liveproof_evidence::digest::{DigestPolicy, ResolvedTag};
use liveproof_evidence::{Denied, ImageRef, Observed, ResourceKind};
use liveproof_registry::{
    dockerconfigjson_secret, Client, ClientOptions, Credentials, DockerConfig, Reference,
    ResolveKey,
};
use serde_json::Value;

/// Registry facts could not be gathered: the cluster refused the node or secret reads, or the
/// registry client could not be set up (TLS).
#[derive(Debug, thiserror::Error)]
pub enum FactsError {
    #[error(transparent)]
    Cluster(#[from] crate::GatherError),
    #[error(transparent)]
    Client(#[from] liveproof_registry::RegistryError),
}

/// The cluster's hint; the registry client's errors here (setting it up) have none: its
/// `Unauthorized` hint is written into the evidence it becomes, never into an exit 2.
impl liveproof_evidence::hint::Hinted for FactsError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            FactsError::Cluster(inner) => inner.hint(),
            FactsError::Client(_) => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
/// Registry facts for `image_digest_current` and `liveproof stale`: what the covered tags
/// resolve to now and which platform each node is. Gathered once per run (a `--wait` reuses
/// them on every snapshot: a tag does not move because a pod restarted).
pub struct RegistryFacts {
    tags: BTreeMap<String, Result<ResolvedTag, String>>,
    nodes: Option<Vec<k8s_openapi::api::core::v1::Node>>,
    nodes_denied: Option<Denied>,
}

/// Whether any container image in `observed` is one `policy` holds to its digest.
fn covers_any(observed: &Observed, policy: DigestPolicy) -> bool {
    let templates = observed
        .workloads()
        .filter_map(|(_, _, template)| template?.spec.as_ref());
    templates
        .flat_map(|s| s.containers.iter())
        .filter_map(|c| c.image.as_deref().and_then(ImageRef::parse))
        .any(|r| policy.covers(&r))
}

impl RegistryFacts {
    /// Asks the registries (and, live, the cluster for nodes and pull secrets) about what
    /// `observed` runs. Nothing is asked when the policy is off or covers no image.
    /// `expected_digests` are the `--image` references given by digest: each is resolved too
    /// (an index's entries let a pod on a platform digest match it).
    pub async fn gather(
        policy: DigestPolicy,
        insecure_registries: &[String],
        request_timeout: std::time::Duration,
        cluster: Option<&crate::Cluster>,
        observed: &Observed,
        expected_digests: &[String],
    ) -> Result<RegistryFacts, FactsError> {
        if policy == DigestPolicy::Off
            || (!covers_any(observed, policy) && expected_digests.is_empty())
        {
            return Ok(RegistryFacts::default());
        }
        let docker_config = DockerConfig::load().unwrap_or_else(|e| {
            tracing::warn!("docker config not used: {e}");
            DockerConfig::default()
        });
        let client = Client::new(ClientOptions {
            insecure_registries: insecure_registries.to_vec(),
            docker_config,
            timeout: request_timeout,
            ..ClientOptions::default()
        })?;
        let mut scratch = observed.clone();
        let mut pull_secrets = Vec::new();
        if let Some(cluster) = cluster {
            cluster.gather_nodes(&mut scratch).await?;
            pull_secrets = cluster.pull_secrets(&scratch).await;
        }
        resolve_tags(&mut scratch, &client, policy, &pull_secrets).await;
        resolve_digests(&mut scratch, &client, expected_digests).await;
        tracing::info!("{} registry requests", client.request_count());
        Ok(RegistryFacts {
            tags: scratch.tags,
            nodes: cluster.map(|_| scratch.nodes),
            nodes_denied: scratch
                .denied
                .into_iter()
                .find(|d| d.resource == ResourceKind::Node),
        })
    }

    /// Lays the facts onto a snapshot.
    pub fn apply(&self, observed: &mut Observed) {
        observed.tags.extend(self.tags.clone());
        if let Some(nodes) = &self.nodes {
            observed.nodes = nodes.clone();
            observed.mark_complete("", ResourceKind::Node);
        }
        observed.denied.extend(self.nodes_denied.clone());
    }
}

/// Resolves the tags of every container image in `observed` (workload templates and pods)
/// that `policy` covers. `pull_secrets` are the pods' `imagePullSecrets` Secrets (raw); a
/// pod's own pull secret is tried for its images before the docker config.
pub async fn resolve_tags(
    observed: &mut Observed,
    client: &Client,
    policy: DigestPolicy,
    pull_secrets: &[Value],
) {
    if policy == DigestPolicy::Off {
        return;
    }
    // key in Observed::tags → (registry reference, pull-secret credentials). An image that is
    // no reference is left out: the digest check says so for its container.
    let mut wanted: BTreeMap<String, (Reference, Option<Credentials>)> = BTreeMap::new();
    for (image, namespace, secrets) in images(observed) {
        let Ok(reference) = Reference::parse(&image) else {
            continue;
        };
        let image_ref = ImageRef::from(&reference);
        let Some(key) = image_ref.tag_key().filter(|_| policy.covers(&image_ref)) else {
            continue;
        };
        if wanted.contains_key(&key) {
            continue;
        }
        let credentials =
            pull_secret_credentials(pull_secrets, &namespace, &secrets, &reference.registry);
        wanted.insert(key, (reference, credentials));
    }
    let keys: BTreeMap<ResolveKey, String> = wanted
        .iter()
        .map(|(k, (r, _))| (ResolveKey::of(r), k.clone()))
        .collect();
    let answers = client.resolve_all(wanted.into_values()).await;
    for (resolve_key, result) in answers {
        let Some(key) = keys.get(&resolve_key) else {
            continue;
        };
        observed.tags.insert(key.clone(), resolved_tag(result));
    }
}

/// Resolves each `--image` given by digest (`repo@sha256:…`, `repo:tag@sha256:…`) into
/// `Observed::tags` under `repository@digest`: an index's platform entries are what lets a pod
/// that records a platform digest match the index digest the user gave.
pub async fn resolve_digests(observed: &mut Observed, client: &Client, images: &[String]) {
    let mut wanted = Vec::new();
    let mut keys: BTreeMap<ResolveKey, String> = BTreeMap::new();
    for given in images {
        let Ok(reference) = Reference::parse(given) else {
            continue;
        };
        let Some(key) = ImageRef::from(&reference).digest_key() else {
            continue;
        };
        keys.insert(ResolveKey::of(&reference), key);
        wanted.push((reference, None));
    }
    for (resolve_key, result) in client.resolve_all(wanted).await {
        if let Some(key) = keys.get(&resolve_key) {
            observed.tags.insert(key.clone(), resolved_tag(result));
        }
    }
}

fn resolved_tag(
    result: Result<liveproof_registry::Resolved, liveproof_registry::RegistryError>,
) -> Result<ResolvedTag, String> {
    result.map(tag_now).map_err(|e| e.to_string())
}

/// What the registry said a tag resolves to, as the `image_digest_current` check judges it
/// ([`ResolvedTag::judge`]: the one judge of a running digest against a tag).
pub fn tag_now(resolved: liveproof_registry::Resolved) -> ResolvedTag {
    ResolvedTag {
        digest: resolved.digest.to_string(),
        platforms: resolved
            .platforms
            .into_iter()
            .map(|(platform, digest)| (platform, digest.to_string()))
            .collect(),
    }
}

/// `(image, namespace, pull secret names)` of every container of every workload template and pod.
fn images(observed: &Observed) -> Vec<(String, String, Vec<String>)> {
    use liveproof_evidence::pod::PodSpec;
    let mut out = Vec::new();
    let mut add = |spec: Option<&PodSpec>, ns: Option<&String>| {
        let Some(spec) = spec else { return };
        let secrets: Vec<String> = spec
            .image_pull_secrets
            .iter()
            .flatten()
            .map(|r| r.name.clone())
            .collect();
        for c in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            if let Some(image) = &c.image {
                out.push((
                    image.clone(),
                    ns.cloned().unwrap_or_default(),
                    secrets.clone(),
                ));
            }
        }
    };
    for (_, meta, template) in observed.workloads() {
        // A template is read as a pod is: the fields of its spec the pods keep.
        let spec = template.and_then(|t| t.spec.as_ref()).map(PodSpec::from);
        add(spec.as_ref(), meta.namespace.as_ref());
    }
    for p in &observed.pods {
        add(p.spec.as_ref(), p.metadata.namespace.as_ref());
    }
    out
}

/// Credentials for `registry` from the named pull secrets in `namespace`, if any holds some.
fn pull_secret_credentials(
    pull_secrets: &[Value],
    namespace: &str,
    names: &[String],
    registry: &str,
) -> Option<Credentials> {
    pull_secrets
        .iter()
        .filter(|s| s.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace))
        .filter(|s| {
            s.pointer("/metadata/name")
                .and_then(Value::as_str)
                .is_some_and(|n| names.iter().any(|w| w == n))
        })
        .find_map(|s| match dockerconfigjson_secret(s) {
            Ok(config) => config.credentials_for(registry).ok().flatten(),
            Err(e) => {
                // The error names the Secret, never its content.
                tracing::warn!("{e}");
                None
            }
        })
}
