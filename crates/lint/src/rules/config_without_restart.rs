//! `config-without-restart`.
//!
//! Seed 002 check 7: a pod that started before the change runs the configuration it read then.
//! Kubernetes docs (ConfigMaps): "ConfigMaps consumed as environment variables are not updated
//! automatically and require a pod restart". The known fixes: Helm docs "Automatically Roll
//! Deployments" (a `checksum/config` pod-template annotation), Stakater Reloader's annotations,
//! and kustomize generators' hashed names.

use super::*;

/// Annotations Stakater Reloader acts on (github.com/stakater/Reloader README).
const RELOADER: &[&str] = &[
    "reloader.stakater.com/auto",
    "reloader.stakater.com/search",
    "secret.reloader.stakater.com/auto",
    "configmap.reloader.stakater.com/auto",
    "secret.reloader.stakater.com/reload",
    "configmap.reloader.stakater.com/reload",
];

pub(super) fn config_without_restart(
    ctx: &Context<'_>,
    w: &Workload<'_, '_>,
    findings: &mut Vec<Hazard>,
) {
    let refs: Vec<&ConfigRef> = w
        .refs
        .iter()
        .filter(|r| !ctx.kustomize.generates_hashed(w.doc.file, &r.name))
        .collect();
    let Some(first) = refs.first() else { return };
    let checksum = w
        .template_annotations
        .iter()
        .any(|(k, _)| k.starts_with("checksum/"));
    let reloader = w
        .annotations
        .iter()
        .chain(&w.template_annotations)
        .any(|(k, v)| RELOADER.contains(&k.as_str()) && v != "false");
    if checksum || reloader || (w.doc.value.is_none() && w.per_build) {
        return;
    }
    let mut seen = BTreeSet::new();
    let named: Vec<String> = refs
        .iter()
        .filter(|r| seen.insert((r.kind, r.name.clone())))
        .map(|r| format!("{} `{}` ({})", r.kind, r.name, r.via))
        .collect();
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    findings.push(Hazard {
        id: CONFIG_WITHOUT_RESTART.to_string(),
        level: Level::Warning,
        file: w.doc.file.to_string(),
        line: first.line,
        message: format!(
            "{} reads {} at start, and nothing restarts its pods when they change: no \
             checksum/* annotation on the pod template, no Reloader annotation",
            w.label(),
            list(&named, 3)
        ),
        fix: "add a `checksum/config` pod-template annotation over the rendered config, or \
              `reloader.stakater.com/auto: \"true\"`, or generate it with a kustomize \
              configMapGenerator/secretGenerator"
            .to_string(),
    });
}
