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
    #[error("{0}")]
    Unreadable(String),
}

pub async fn show(args: &ReleaseShowArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let (mut observed, namespace) = match &args.from {
        Some(path) => {
            let ns = args
                .cluster
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            (liveproof_gather::offline::load(path)?, ns)
        }
        None => {
            let cluster = Cluster::connect(&crate::config::cluster_options(&args.cluster)?).await?;
            let ns = cluster.default_namespace().to_string();
            let target = Target::new(TargetKind::Release, Some(&ns), &args.name);
            (cluster.gather(&[target], false).await?, ns)
        }
    };
    observed.release_limits.max_decompressed = args.max_release_size;
    let history = read(&observed, &namespace, &args.name)?;
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
            return Err(ReleaseError::Unreadable(format!("{object}: {error}")).into());
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
    for (i, section) in sections.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        write!(out, "{section}")?;
        if !section.ends_with('\n') {
            writeln!(out)?;
        }
    }
    for (object, _, error) in &history.unreadable {
        tracing::warn!("{object} could not be read: {error}");
    }
    Ok(0)
}

/// The release's revisions; an error when it has none that can be read.
fn read(observed: &Observed, namespace: &str, name: &str) -> Result<ReleaseHistory, ReleaseError> {
    let history = ReleaseHistory::read(observed, namespace, name);
    if history.revisions.is_empty() {
        if let Some((object, _, error)) = history.unreadable.first() {
            return Err(ReleaseError::Unreadable(format!("{object}: {error}")));
        }
        return Err(ReleaseError::NotFound {
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
    }
    Ok(history)
}
