//! Registry facts for `image_digest_current` and `liveproof stale`: what the covered tags
//! resolve to now and which platform each node is. Gathered once per run (a `--wait` reuses
//! them on every snapshot: a tag does not move because a pod restarted).

use liveproof_evidence::digest::{DigestPolicy, ResolvedTag};
use liveproof_evidence::{Denied, ImageRef, Observed, ResourceKind};
use liveproof_gather::Cluster;
use liveproof_registry::{Client, ClientOptions, DockerConfig};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default)]
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
        cluster: Option<&Cluster>,
        observed: &Observed,
        expected_digests: &[String],
    ) -> anyhow::Result<RegistryFacts> {
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
        liveproof_gather::registry::resolve_tags(&mut scratch, &client, policy, &pull_secrets)
            .await;
        liveproof_gather::registry::resolve_digests(&mut scratch, &client, expected_digests).await;
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
