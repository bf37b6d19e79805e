//! The one judge of a running digest (`ResolvedTag::judge`, what `image_digest_current` uses)
//! against what a real registry (CNCF distribution, started per test) resolves: a
//! BuildKit-style multi-arch index with attestations, the tag moved to a new build, and a
//! single-platform image.

use liveproof_evidence::digest::{DigestMatch, Platform, ResolvedTag};
use liveproof_gather::registry::tag_now;
use liveproof_registry::{Digest, DockerConfig};
use liveproof_testkit::registry::{push_multiarch, push_single, RegistryServer};

fn platform(text: &str) -> Platform {
    Platform::parse(text).expect("a platform")
}

fn judge(tag: &ResolvedTag, running: &Digest, node: &Platform) -> DigestMatch {
    tag.judge(&running.to_string(), Some(node))
}

fn stale(want: &Digest) -> DigestMatch {
    DigestMatch::Stale {
        want: want.to_string(),
    }
}

#[tokio::test]
async fn pods_are_judged_per_node_platform_and_go_stale_when_the_tag_moves() {
    let registry = RegistryServer::start();
    let pusher = registry.pusher();
    let old = push_multiarch(&pusher, "team/app", "latest", "build-1").await;
    let client = registry.client(DockerConfig::default());
    let reference = registry.reference("team/app", "latest");
    // What a node's `status.nodeInfo` says: no variant.
    let (amd64, arm64) = (platform("linux/amd64"), platform("linux/arm64"));

    let now = tag_now(client.resolve(&reference, None).await.expect("resolves"));
    for (running, node) in [(&old.amd64.digest, &amd64), (&old.arm64.digest, &arm64)] {
        assert!(
            matches!(judge(&now, running, node), DigestMatch::Current { ref via } if via.contains("entry")),
            "{running} on {node}: {:?}",
            judge(&now, running, node)
        );
    }
    assert_eq!(
        judge(&now, &old.amd64.digest, &arm64),
        stale(&old.arm64.digest),
        "the amd64 entry is not what an arm64 node runs"
    );
    assert_eq!(
        judge(&now, &old.digest, &arm64),
        DigestMatch::Current {
            via: "the tag's digest".into()
        },
        "runtimes that record the index digest are current too"
    );
    assert_eq!(
        judge(&now, &old.attestations[0], &amd64),
        stale(&old.amd64.digest),
        "an attestation's digest is never what runs"
    );

    // A rebuild pushed to the same tag: the pod template is byte-identical, nothing restarts.
    let new = push_multiarch(&pusher, "team/app", "latest", "build-2").await;
    assert_ne!(new.digest, old.digest);
    let moved = tag_now(client.resolve(&reference, None).await.expect("resolves"));
    assert_eq!(moved.digest, new.digest.to_string());
    for (running, node, want) in [
        (&old.amd64.digest, &amd64, &new.amd64.digest),
        (&old.arm64.digest, &arm64, &new.arm64.digest),
        (&old.digest, &amd64, &new.amd64.digest),
        (&old.digest, &arm64, &new.arm64.digest),
    ] {
        assert_eq!(
            judge(&moved, running, node),
            stale(want),
            "{running} on {node}"
        );
    }
    assert!(matches!(
        judge(&moved, &new.arm64.digest, &arm64),
        DigestMatch::Current { .. }
    ));
}

#[tokio::test]
async fn a_single_platform_image_is_current_on_its_own_digest_only() {
    let registry = RegistryServer::start();
    let pusher = registry.pusher();
    let single = push_single(&pusher, "team/single", "latest", "build-1").await;
    let other = push_single(&pusher, "team/other", "latest", "build-2").await;
    let client = registry.client(DockerConfig::default());
    let tag = tag_now(
        client
            .resolve(&registry.reference("team/single", "latest"), None)
            .await
            .expect("resolves"),
    );
    assert!(tag.platforms.is_empty());
    assert_eq!(
        judge(&tag, &single.digest, &platform("linux/arm64")),
        DigestMatch::Current {
            via: "the tag's digest".into()
        }
    );
    assert_eq!(
        judge(&tag, &other.digest, &platform("linux/amd64")),
        stale(&single.digest)
    );
}
