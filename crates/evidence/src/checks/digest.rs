//! `image_digest_current` and the rows of `liveproof stale`: the digest each serving container
//! runs against what its tag resolves to now, for its node's platform (seed 001).

use std::collections::BTreeSet;

use crate::pod::Pod;
use serde::{Deserialize, Serialize};

use super::{pods, Finding};
use crate::digest::{image_id_digest, DigestMatch, DigestPolicy, Platform};
use crate::kinds::workload::Workload;
use crate::{Check, ImageRef, Observed, ResourceKind, SourceRef, Status, Target};

/// One container of one workload, over all its serving pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestRow {
    pub kind: String,
    pub namespace: String,
    pub workload: String,
    pub container: String,
    /// The image as the pod spec names it.
    pub image: String,
    /// The digests its pods run (empty when none could be read).
    pub running: Vec<String>,
    /// What the tag resolves to now for those pods' platforms.
    pub current: Vec<String>,
    /// The platforms of the nodes the pods run on.
    pub platforms: Vec<String>,
    pub verdict: RowVerdict,
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowVerdict {
    Stale,
    Unknown,
    Current,
}

impl RowVerdict {
    pub const fn name(self) -> &'static str {
        match self {
            RowVerdict::Stale => "stale",
            RowVerdict::Unknown => "unknown",
            RowVerdict::Current => "current",
        }
    }
}

/// The node platform a pod runs on, from its Node's `status.nodeInfo`.
pub(crate) fn node_platform(observed: &Observed, pod: &Pod) -> Option<Platform> {
    let node = pod.spec.as_ref()?.node_name.as_deref()?;
    let info = observed
        .nodes
        .iter()
        .find(|n| n.metadata.name.as_deref() == Some(node))?
        .status
        .as_ref()?
        .node_info
        .as_ref()?;
    Some(Platform {
        os: info.operating_system.clone(),
        architecture: info.architecture.clone(),
        variant: None,
    })
}

/// The digest rows of one workload: a row per container the policy covers.
pub fn rows(
    observed: &Observed,
    target: &Target,
    namespace: &str,
    policy: DigestPolicy,
) -> Vec<DigestRow> {
    let Some(w) = Workload::find(observed, target.kind, namespace, &target.name) else {
        return Vec::new();
    };
    let serving: Vec<&Pod> = w
        .routed_pods(&w.pods(observed))
        .into_iter()
        .filter(|p| pods::is_serving(p))
        .collect();
    let containers = w.template.spec.iter().flat_map(|s| s.containers.iter());
    let mut out = Vec::new();
    for c in containers {
        let Some(image) = c.image.as_deref() else {
            continue;
        };
        let reference = ImageRef::parse(image);
        if reference.as_ref().is_some_and(|r| !policy.covers(r)) || policy == DigestPolicy::Off {
            continue;
        }
        let mut row = DigestRow {
            kind: w.kind.kind_name().to_string(),
            namespace: namespace.to_string(),
            workload: w.name.to_string(),
            container: c.name.clone(),
            image: image.to_string(),
            running: Vec::new(),
            current: Vec::new(),
            platforms: Vec::new(),
            verdict: RowVerdict::Current,
            why: String::new(),
        };
        // An image no runtime could pull is never a match: what runs it is unknown.
        let Some(reference) = reference else {
            row.verdict = RowVerdict::Unknown;
            row.why = "its image is not a reference a runtime can pull".into();
            out.push(row);
            continue;
        };
        let resolved = reference.tag_key().and_then(|k| observed.tags.get(&k));
        let tag = match resolved {
            None => {
                row.verdict = RowVerdict::Unknown;
                row.why = "its tag was not resolved (registry lookups off, or not reached)".into();
                out.push(row);
                continue;
            }
            Some(Err(why)) => {
                row.verdict = RowVerdict::Unknown;
                row.why = format!("the registry did not say what the tag is now: {why}");
                out.push(row);
                continue;
            }
            Some(Ok(tag)) => tag,
        };
        let (mut running, mut current, mut platforms) =
            (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let (mut stale, mut unknown, mut matched) = (Vec::new(), Vec::new(), Vec::new());
        for pod in &serving {
            let Some(status) = pods::container_statuses(pod)
                .iter()
                .find(|s| s.name == c.name)
            else {
                // A serving pod that records no status for the container: its digest was
                // never read, which is unknown, not a match.
                unknown.push(format!(
                    "{}: no containerStatuses entry for {}",
                    pods::name(pod),
                    c.name
                ));
                continue;
            };
            let node = node_platform(observed, pod);
            if let Some(n) = &node {
                platforms.insert(n.to_string());
                if let Some(d) = tag.for_platform(n) {
                    current.insert(d.to_string());
                }
            } else {
                current.insert(tag.digest.clone());
            }
            let Some(digest) = image_id_digest(status.image_id.as_str()) else {
                unknown.push(format!(
                    "{}: imageID `{}` holds no repo digest",
                    pods::name(pod),
                    status.image_id
                ));
                continue;
            };
            running.insert(digest.clone());
            match tag.judge(&digest, node.as_ref()) {
                DigestMatch::Current { via } => matched.push(via),
                DigestMatch::Stale { want } => stale.push(format!(
                    "{} runs {} where the tag is now {}",
                    pods::name(pod),
                    short(&digest),
                    short(&want)
                )),
                DigestMatch::Unknown { why } => unknown.push(format!("{}: {why}", pods::name(pod))),
            }
        }
        row.running = running.into_iter().collect();
        row.current = current.into_iter().collect();
        row.platforms = platforms.into_iter().collect();
        (row.verdict, row.why) = if !stale.is_empty() {
            (RowVerdict::Stale, stale.join("; "))
        } else if !unknown.is_empty() {
            (RowVerdict::Unknown, unknown.join("; "))
        } else if matched.is_empty() {
            (
                RowVerdict::Unknown,
                "no serving pod of it runs this container".into(),
            )
        } else {
            let via: BTreeSet<String> = matched.into_iter().collect();
            (
                RowVerdict::Current,
                format!(
                    "every pod runs what the tag is now (matched {})",
                    via.into_iter().collect::<Vec<_>>().join(", ")
                ),
            )
        };
        out.push(row);
    }
    out
}

/// `sha256:0123456789ab…` for tables and messages.
pub fn short(digest: &str) -> String {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}…", &hex[..12]),
        _ => digest.to_string(),
    }
}

pub fn image_digest_current(
    observed: &Observed,
    target: &Target,
    namespace: &str,
    policy: DigestPolicy,
) -> Option<Finding> {
    if policy == DigestPolicy::Off {
        return None;
    }
    let rows = rows(observed, target, namespace, policy);
    let source = SourceRef::objects(ResourceKind::Pod, namespace)
        .field(".status.containerStatuses[].imageID");
    if rows.is_empty() {
        return Some(
            Finding::new(Check::ImageDigestCurrent, Status::Skip, "no mutable tag", "running digest = the tag's digest now")
                .source(source)
                .detail("no container uses a mutable tag (none, or :latest); --check-digests checks every tag"),
        );
    }
    let describe = |r: &DigestRow| {
        format!(
            "{} {} ({})",
            r.container,
            r.image,
            r.running
                .iter()
                .map(|d| short(d))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let observed_text = rows.iter().map(describe).collect::<Vec<_>>().join("; ");
    let expected = "each serving container on what its tag resolves to now".to_string();
    let worst = rows
        .iter()
        .map(|r| r.verdict)
        .min()
        .unwrap_or(RowVerdict::Current);
    let whys = |v: RowVerdict| {
        rows.iter()
            .filter(|r| r.verdict == v)
            .map(|r| format!("{}: {}", r.container, r.why))
            .collect::<Vec<_>>()
            .join("; ")
    };
    Some(match worst {
        RowVerdict::Stale => Finding::new(Check::ImageDigestCurrent, Status::Fail, observed_text, expected)
            .source(source)
            .detail(format!(
                "the tag has moved on since these pods pulled it, and nothing restarted them (an identical template triggers no rollout): {}",
                whys(RowVerdict::Stale)
            ))
            .next(
                crate::Suggestion::text("restart only what is stale: ").command(
                    crate::suggestion::Command::liveproof([
                        "stale",
                        &format!("{}/{}", target.kind, target.name),
                        "-n",
                        namespace,
                        "--restart",
                    ]),
                ),
            ),
        RowVerdict::Unknown => Finding::new(Check::ImageDigestCurrent, Status::Unknown, observed_text, expected)
            .source(source)
            .detail(whys(RowVerdict::Unknown))
            .next("make the registry reachable (credentials: docker config or imagePullSecrets; --insecure-registry for plain HTTP), or pass --no-registry to leave digests out"),
        RowVerdict::Current => Finding::new(Check::ImageDigestCurrent, Status::Pass, observed_text, expected)
            .source(source)
            .detail(whys(RowVerdict::Current)),
    })
}
