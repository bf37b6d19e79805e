//! `liveproof release show`: a Helm release read from its storage, printed as helm would.

use std::io::Write;

use liveproof_evidence::{Observed, ReleaseHistory, Target, TargetKind};
use liveproof_gather::Cluster;

use crate::cli::ReleaseShowArgs;

#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("Helm release {namespace}/{name} not found: no Secret or ConfigMap labelled owner=helm,name={name}\nhint: list the releases there: kubectl -n {namespace} get secrets -l owner=helm")]
    NotFound { namespace: String, name: String },
    #[error("Helm release {namespace}/{name} has no revision {revision} (revisions: {have})")]
    NoRevision {
        namespace: String,
        name: String,
        revision: i64,
        have: String,
    },
    /// The storage error names the object; `inspect` is the kubectl command that shows it.
    #[error("{error}\nhint: inspect it with `{inspect}`; a release larger than --max-release-size ({limit} bytes) is refused, raise it if the release is only large")]
    Unreadable {
        error: String,
        inspect: String,
        limit: usize,
    },
    #[error("Helm release {name} not found in any namespace: no Secret or ConfigMap labelled owner=helm,name={name}\nhint: list the releases: kubectl get secrets -A -l owner=helm")]
    NotFoundAnywhere { name: String },
    #[error("Helm release {name} is installed in several namespaces: {}\nhint: pick one with -n, e.g. -n {}", namespaces.join(", "), namespaces.first().map(String::as_str).unwrap_or_default())]
    Ambiguous {
        name: String,
        namespaces: Vec<String>,
    },
}

/// The namespaces holding storage of release `name` in a `--from` dump.
fn storage_namespaces(observed: &Observed, name: &str) -> Vec<String> {
    observed
        .others
        .iter()
        .filter(|o| matches!(o["kind"].as_str(), Some("Secret" | "ConfigMap")))
        .filter(|o| {
            o.pointer("/metadata/labels/owner").and_then(|v| v.as_str()) == Some("helm")
                && o.pointer("/metadata/labels/name").and_then(|v| v.as_str()) == Some(name)
        })
        .filter_map(|o| o.pointer("/metadata/namespace").and_then(|v| v.as_str()))
        .map(str::to_string)
        .collect()
}

/// `-A`: the one namespace holding release `name`; none or several is an error (exit 2).
fn the_one_namespace(name: &str, mut found: Vec<String>) -> Result<String, ReleaseError> {
    found.sort();
    found.dedup();
    match found.as_slice() {
        [] => Err(ReleaseError::NotFoundAnywhere {
            name: name.to_string(),
        }),
        [one] => Ok(one.clone()),
        _ => Err(ReleaseError::Ambiguous {
            name: name.to_string(),
            namespaces: found,
        }),
    }
}

pub async fn show(args: &ReleaseShowArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    out.write_all(shown(args).await?.as_bytes())?;
    Ok(0)
}

/// What `release show` prints: the chosen sections, as helm prints them, one blank line apart.
pub async fn shown(args: &ReleaseShowArgs) -> anyhow::Result<String> {
    let all_namespaces = args.cluster.all_namespaces;
    let (mut observed, namespace) = match &args.from {
        Some(path) => {
            let observed = liveproof_gather::offline::load(path)?;
            let ns = if all_namespaces {
                let found = storage_namespaces(&observed, &args.name);
                the_one_namespace(&args.name, found)?
            } else {
                crate::config::namespace(&args.cluster).unwrap_or_else(|| "default".into())
            };
            (observed, ns)
        }
        None => {
            let cluster =
                Cluster::connect(&liveproof_gather::ClusterOptions::try_from(&args.cluster)?)
                    .await?;
            let ns = if all_namespaces {
                // Labels only (a metadata LIST): no release data crosses the wire to find it.
                let found: Vec<String> = cluster
                    .release_revisions(None)
                    .await?
                    .into_iter()
                    .filter(|r| r.name == args.name)
                    .map(|r| r.namespace)
                    .collect();
                the_one_namespace(&args.name, found)?
            } else {
                cluster.default_namespace().to_string()
            };
            let target = Target::new(TargetKind::Release, Some(&ns), &args.name);
            let observed = cluster.gather(std::slice::from_ref(&target), false).await?;
            if ReleaseHistory::read(&observed, &ns, &args.name)
                .revisions
                .is_empty()
            {
                // Missing: say so plainly, or that the namespace itself does not exist.
                cluster.check_namespaces(&observed, &[target]).await?;
            }
            (observed, ns)
        }
    };
    observed.release_limits.max_decompressed = args.max_release_size;
    let history = read(&observed, &namespace, &args.name, args.max_release_size)?;
    let chosen = match args.revision {
        None => history.newest(),
        Some(n) => history.revisions.iter().find(|r| r.release.version == n),
    };
    let Some(release) = chosen else {
        if let (Some(revision), Some((object, _, error))) = (
            args.revision,
            history
                .unreadable
                .iter()
                .find(|(_, v, _)| *v == args.revision),
        ) {
            let _ = revision;
            return Err(unreadable(object, error, args.max_release_size).into());
        }
        return Err(ReleaseError::NoRevision {
            namespace,
            name: args.name.clone(),
            revision: args.revision.unwrap_or_default(),
            have: history
                .revisions
                .iter()
                .map(|r| r.release.version.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
        .into());
    };
    let nothing_chosen = !(args.manifest || args.values || args.history || args.metadata);
    let mut sections = Vec::new();
    if args.metadata || nothing_chosen {
        sections.push(liveproof_helm::show::metadata(release));
    }
    if args.history {
        sections.push(liveproof_helm::show::history(&history.revisions));
    }
    if args.values {
        sections.push(liveproof_helm::show::values(
            &release.release,
            args.show_values,
        ));
    }
    if args.manifest {
        sections.push(liveproof_helm::show::manifest(&release.release));
    }
    let mut out = String::new();
    for (i, section) in sections.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(section);
        if !section.ends_with('\n') {
            out.push('\n');
        }
    }
    for (object, _, error) in &history.unreadable {
        tracing::warn!("{object} could not be read: {error}");
    }
    Ok(out)
}

/// The release's revisions; an error when it has none that can be read.
fn read(
    observed: &Observed,
    namespace: &str,
    name: &str,
    limit: usize,
) -> Result<ReleaseHistory, ReleaseError> {
    let history = ReleaseHistory::read(observed, namespace, name);
    if history.revisions.is_empty() {
        // The newest: the revision `release show` was asked for.
        if let Some((object, _, error)) = history.unreadable.iter().max_by_key(|(_, v, _)| *v) {
            return Err(unreadable(object, error, limit));
        }
        return Err(ReleaseError::NotFound {
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
    }
    Ok(history)
}

fn unreadable(object: &str, error: &str, limit: usize) -> ReleaseError {
    ReleaseError::Unreadable {
        error: error.to_string(),
        inspect: crate::verifier::kubectl_get(object),
        limit,
    }
}
