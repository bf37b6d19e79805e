//! `argocd-manual-sync` and `argocd-pinned-revision`.
//!
//! Argo CD docs, "Automated Sync Policy": without spec.syncPolicy.automated an Application only
//! shows OutOfSync until someone syncs it. "Tracking and Deployment Strategies": a tag or commit
//! SHA in targetRevision pins what is deployed; only a branch (or HEAD) follows new commits.

use super::*;

pub(super) fn argo_sources(v: &Value) -> Vec<&Value> {
    let mut sources: Vec<&Value> = v["spec"]["sources"]
        .as_sequence()
        .into_iter()
        .flatten()
        .collect();
    if v["spec"]["source"].is_mapping() {
        sources.push(&v["spec"]["source"]);
    }
    sources
}

pub(super) fn argo_paths_changed(ctx: &Context<'_>, v: &Value) -> bool {
    argo_sources(v).iter().any(|s| {
        s["path"].as_str().is_some_and(|p| {
            !ctx.input
                .changed
                .under(&normalize_dir(p), &ctx.input.head)
                .is_empty()
        })
    })
}

fn looks_pinned(revision: &str) -> bool {
    let sha = liveproof_evidence::is_commit_sha(revision);
    let tag = revision
        .strip_prefix('v')
        .unwrap_or(revision)
        .split('.')
        .filter(|p| !p.is_empty())
        .count()
        >= 2
        && revision
            .trim_start_matches('v')
            .starts_with(|c: char| c.is_ascii_digit());
    sha || tag
}

pub(super) fn argocd_sync(ctx: &Context<'_>, doc: &Doc<'_>, findings: &mut Vec<Hazard>) {
    let Some(v) = &doc.value else { return };
    if doc.kind().as_deref() != Some("Application")
        || !doc
            .api_version()
            .is_some_and(|a| a.starts_with("argoproj.io/"))
    {
        return;
    }
    let changed = &ctx.input.changed;
    let automated = &v["spec"]["syncPolicy"]["automated"];
    let manual = automated.is_null() || automated["enabled"].as_bool() == Some(false);
    if manual && (changed.contains(doc.file) || argo_paths_changed(ctx, v)) {
        let line = doc
            .locate(&["spec", "syncPolicy"])
            .or_else(|| doc.locate(&["spec", "source"]))
            .or_else(|| doc.locate(&["spec", "sources"]))
            .unwrap_or(doc.first_line);
        findings.push(Hazard {
            id: ARGOCD_MANUAL_SYNC.to_string(),
            level: Level::Warning,
            file: doc.file.to_string(),
            line,
            message: format!(
                "Application {} has no syncPolicy.automated and covers files this change touches: \
                 it will show OutOfSync and wait for a manual sync",
                doc.display_name()
            ),
            fix: format!(
                "sync it after the merge (`argocd app sync {}`) and verify, or enable \
                 spec.syncPolicy.automated",
                doc.name()
            ),
        });
    }
    for (i, source) in argo_sources(v).iter().enumerate() {
        // A Helm repository chart's targetRevision is its chart version, not a Git revision.
        if !source["chart"].is_null() {
            continue;
        }
        let (Some(revision), Some(path)) =
            (source["targetRevision"].as_str(), source["path"].as_str())
        else {
            continue;
        };
        if !looks_pinned(revision)
            || changed
                .under(&normalize_dir(path), &ctx.input.head)
                .is_empty()
        {
            continue;
        }
        let line = doc
            .find_nth(0, |l| key_value(l, "targetRevision") == Some(revision))
            .unwrap_or(doc.first_line + i);
        findings.push(Hazard {
            id: ARGOCD_PINNED_REVISION.to_string(),
            level: Level::Warning,
            file: doc.file.to_string(),
            line,
            message: format!(
                "Application {} deploys {path} at the fixed revision `{revision}`; files under \
                 {path} changed here, and it will keep deploying `{revision}`",
                doc.display_name()
            ),
            fix: "move targetRevision to the new tag or commit once it exists, or track a branch"
                .to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_revisions() {
        assert!(looks_pinned("v1.4.2"));
        assert!(looks_pinned("1.4"));
        assert!(looks_pinned("3f2c1ab"));
        assert!(!looks_pinned("main"));
        assert!(!looks_pinned("HEAD"));
        assert!(!looks_pinned("release-1"));
    }
}
