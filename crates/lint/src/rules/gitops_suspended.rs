//! `gitops-suspended`.
//!
//! Flux docs, Kustomization and HelmRelease `.spec.suspend`: "when set to true the controller
//! will stop reconciling"; the same field exists on every source kind. Argo CD docs, "Skip
//! Application Reconcile": the `argocd.argoproj.io/skip-reconcile: "true"` annotation.

use super::argocd::argo_paths_changed;
use super::*;

pub(super) fn gitops_suspended(ctx: &Context<'_>, doc: &Doc<'_>, findings: &mut Vec<Hazard>) {
    let Some(v) = &doc.value else { return };
    let Some(kind) = doc.kind() else { return };
    let api = doc.api_version().unwrap_or_default();
    let changed = &ctx.input.changed;
    let (line, relevant, what) = if api.contains(".toolkit.fluxcd.io/")
        && v["spec"]["suspend"].as_bool() == Some(true)
    {
        let line = doc.locate(&["spec", "suspend"]).unwrap_or(doc.first_line);
        let relevant = changed.contains(doc.file)
            || match kind.as_str() {
                "Kustomization" => {
                    let path = normalize_dir(v["spec"]["path"].as_str().unwrap_or(""));
                    !changed.under(&path, &ctx.input.head).is_empty()
                }
                "HelmRelease" => v["spec"]["chart"]["spec"]["chart"]
                    .as_str()
                    .is_some_and(|c| !changed.under(&normalize_dir(c), &ctx.input.head).is_empty()),
                _ => !changed.is_empty(),
            };
        (
            line,
            relevant,
            "spec.suspend: true: its controller reconciles nothing",
        )
    } else if api.starts_with("argoproj.io/")
        && kind == "Application"
        && v["metadata"]["annotations"]["argocd.argoproj.io/skip-reconcile"].as_str()
            == Some("true")
    {
        let line = doc
            .find_nth(0, |l| l.contains("argocd.argoproj.io/skip-reconcile"))
            .unwrap_or(doc.first_line);
        let relevant = changed.contains(doc.file) || argo_paths_changed(ctx, v);
        (
            line,
            relevant,
            "argocd.argoproj.io/skip-reconcile: \"true\": Argo CD neither refreshes nor syncs it",
        )
    } else {
        return;
    };
    let (level, tail) = if relevant {
        (Level::Error, "so the changes it covers will not deploy")
    } else {
        (
            Level::Warning,
            "nothing it covers changed here, but nothing merged will deploy through it",
        )
    };
    findings.push(Hazard {
        id: GITOPS_SUSPENDED.to_string(),
        level,
        file: doc.file.to_string(),
        line,
        message: format!("{kind} {} has {what}, {tail}", doc.display_name()),
        fix: "remove the suspension (`flux resume …`, or drop the annotation) in this change, \
              or deploy another way and say so"
            .to_string(),
    });
}
