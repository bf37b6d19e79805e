//! `mutable-tag-no-restart`.
//!
//! Seed 001: with `:latest` a rebuild leaves the pod template byte-identical; `kubectl apply`
//! (and any GitOps controller) sees no change, creates no ReplicaSet and pulls nothing, and
//! imagePullPolicy: Always only matters for a pod that starts. Kubernetes docs, "Images":
//! a tag other than a digest can move. Restart paths we recognise: Flux image automation
//! markers (fluxcd.io/flux/guides/image-update), a per-build annotation, Keel's
//! `keel.sh/policy` (keel.sh/docs), `kubectl rollout restart NAME` or `liveproof stale
//! --restart` in the repository's scripts and workflows.

use super::*;

/// `None` for a pinned image; else how it is mutable.
pub(super) fn mutable_tag(image: &str) -> Option<&'static str> {
    // A placeholder is resolved outside the repository; we cannot judge it.
    if image.contains('@') || image.contains("${") || image.contains("{{") {
        return None;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        None => Some("no tag (so `:latest`)"),
        Some((_, "latest")) => Some("`:latest`"),
        Some(_) => None,
    }
}

pub(super) fn mutable_tag_no_restart(
    ctx: &Context<'_>,
    w: &Workload<'_, '_>,
    findings: &mut Vec<Hazard>,
) {
    let restart_known = w.per_build
        || ctx.restarts.covers(&w.kind, &w.name)
        || w.annotations
            .iter()
            .any(|(k, _)| k.starts_with("keel.sh/policy"));
    if restart_known {
        return;
    }
    for image in &w.images {
        let Some(how) = mutable_tag(&image.image) else {
            continue;
        };
        if image.automation_marker || ctx.kustomize.pins_image(w.doc.file, &image.image) {
            continue;
        }
        // The file changed but the pod template did not: the change is a rebuild behind the
        // same tag, which is exactly what never reaches a pod.
        let rebuild_only = ctx.input.base.is_some()
            && ctx.input.changed.contains(w.doc.file)
            && match (&w.doc.value, ctx.base_doc(w.doc)) {
                (Some(head), Some(base)) => head["spec"]["template"] == base["spec"]["template"],
                _ => false,
            };
        let (level, why) = if rebuild_only {
            (
                Level::Error,
                "this change leaves its pod template identical, so nothing rolls out",
            )
        } else {
            (
                Level::Warning,
                "a rebuild leaves the pod template byte-identical, so no pod pulls the new build",
            )
        };
        findings.push(Hazard {
            id: MUTABLE_TAG_NO_RESTART.to_string(),
            level,
            file: w.doc.file.to_string(),
            line: image.line,
            message: format!(
                "{} runs `{}` with {how} and no digest, and nothing in the repository restarts \
                 it: {why}",
                w.label(),
                image.image
            ),
            fix: "pin a unique tag or digest per build (or mark the line for Flux image \
                  automation), or run `liveproof stale --restart` after the apply"
                .to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutable_tags() {
        assert_eq!(mutable_tag("nginx"), Some("no tag (so `:latest`)"));
        assert_eq!(mutable_tag("localhost:5000/app:latest"), Some("`:latest`"));
        assert_eq!(
            mutable_tag("localhost:5000/app"),
            Some("no tag (so `:latest`)")
        );
        assert_eq!(mutable_tag("ghcr.io/a/b:1.2"), None);
        assert_eq!(mutable_tag("ghcr.io/a/b:latest@sha256:00"), None);
        assert_eq!(mutable_tag("ghcr.io/a/b:${TAG}"), None);
    }
}
