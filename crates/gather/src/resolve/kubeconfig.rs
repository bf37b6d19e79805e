//! The kubeconfig's contexts and namespace, read from the file only (nothing is sent): a
//! `--context` it does not have, `--all-contexts`' list, and `--from`'s namespace.

use std::path::PathBuf;

use crate::live::ClusterOptions;

use super::{ResolveError, Source};

/// The first of `wanted` the kubeconfig does not have (its contexts are `known`), as the error
/// that names the contexts it has and the nearest.
pub(super) fn unknown_context(known: &[String], wanted: &[String]) -> Result<(), ResolveError> {
    match wanted.iter().find(|c| !known.contains(c)) {
        None => Ok(()),
        Some(name) => Err(ResolveError::UnknownContext {
            name: name.clone(),
            suggestion: liveproof_evidence::closest(name, known.iter().map(String::as_str))
                .map(str::to_string),
            known: known.iter().take(20).cloned().collect(),
        }),
    }
}

/// `--from` with no `-n`: the namespace of the kubeconfig context live mode would use
/// (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`; `--context` or the current one), and where
/// it came from. Read from the file only; no kubeconfig, or a context that names no namespace,
/// is `None` (the dump then decides). A kubeconfig or context named on the command line must
/// exist, as live.
pub(super) fn offline_namespace(
    kubeconfig: Option<&PathBuf>,
    contexts: &[String],
) -> Result<(Option<String>, Option<String>), ResolveError> {
    if contexts.len() > 1 {
        return Err(ResolveError::FromContexts {
            given: contexts.len(),
        });
    }
    let options = ClusterOptions {
        kubeconfig: kubeconfig.cloned(),
        context: contexts.first().cloned(),
        ..ClusterOptions::default()
    };
    if options.kubeconfig.is_some() || options.context.is_some() {
        let known =
            crate::live::kubeconfig_contexts(&options).map_err(ResolveError::FromKubeconfig)?;
        unknown_context(&known, options.context.as_slice())?;
    }
    Ok(match crate::live::context_namespace(&options) {
        Some(found) => (
            Some(found.namespace),
            Some(format!(
                "the namespace of the kubeconfig context `{}`",
                found.context
            )),
        ),
        None => (None, None),
    })
}

/// The contexts `verify` checks the change in: `--context` given more than once, or every
/// context of the kubeconfig with `--all-contexts`; none for one cluster. (What a fleet's report
/// may be drawn in is the caller's to check.)
pub(super) fn fleet(
    all_contexts: bool,
    given: &[String],
    source: &Source,
) -> Result<Vec<String>, ResolveError> {
    let contexts = if all_contexts {
        let Source::Live(options) = source else {
            return Ok(Vec::new());
        };
        let contexts = crate::live::kubeconfig_contexts(options).map_err(ResolveError::Contexts)?;
        if contexts.is_empty() {
            return Err(ResolveError::NoContexts);
        }
        contexts
    } else if given.len() > 1 {
        let mut contexts = given.to_vec();
        contexts.dedup();
        // A misspelled context is a usage error now, not a cluster error later.
        if let Source::Live(options) = source {
            if let Ok(known) = crate::live::kubeconfig_contexts(options) {
                unknown_context(&known, &contexts)?;
            }
        }
        contexts
    } else {
        return Ok(Vec::new());
    };
    Ok(contexts)
}
