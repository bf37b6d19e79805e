//! The rules: pure functions from an [`Input`] to findings, one file per rule (its id, the
//! document its fact comes from in the file's comment). To add a rule: a file here with its
//! function, its id and description in [`RULES`], and its call in [`lint`]; `workload.rs`
//! reads a workload's pod template for the rules that need one.

mod argocd;
mod chartversion_not_bumped;
mod config_without_restart;
mod gitops_suspended;
mod manual_promotion;
mod mutable_tag_no_restart;
mod workload;

use std::collections::BTreeSet;

use serde_norway::Value;

use crate::gather::{is_chart_yaml, Input};
use crate::kustomize::Kustomizations;
use crate::yaml::{self, key_value, Doc};
use crate::{Hazard, Level, Linted};
use argocd::argocd_sync;
use chartversion_not_bumped::chartversion_not_bumped;
use config_without_restart::config_without_restart;
use gitops_suspended::gitops_suspended;
use manual_promotion::manual_promotion;
use mutable_tag_no_restart::mutable_tag_no_restart;
use workload::{ConfigRef, Restarts, Workload};

/// A rule, as SARIF's `tool.driver.rules` and `--help` describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    /// PascalCase, for SARIF's `name`.
    pub name: &'static str,
    /// The level it usually reports at (some findings are raised or lowered by context).
    pub level: Level,
    pub summary: &'static str,
    pub help: &'static str,
    /// Where the fact the rule depends on is documented.
    pub source: &'static str,
}

pub const CHARTVERSION_NOT_BUMPED: &str = "chartversion-not-bumped";
pub const MUTABLE_TAG_NO_RESTART: &str = "mutable-tag-no-restart";
pub const CONFIG_WITHOUT_RESTART: &str = "config-without-restart";
pub const GITOPS_SUSPENDED: &str = "gitops-suspended";
pub const ARGOCD_MANUAL_SYNC: &str = "argocd-manual-sync";
pub const ARGOCD_PINNED_REVISION: &str = "argocd-pinned-revision";
pub const MANUAL_PROMOTION: &str = "manual-promotion";

pub const RULES: &[Rule] = &[
    Rule {
        id: CHARTVERSION_NOT_BUMPED,
        name: "ChartVersionNotBumped",
        level: Level::Error,
        summary: "A Flux HelmRelease builds its chart from Git with reconcileStrategy ChartVersion, the chart changed, and Chart.yaml's version did not: no new chart is built and no upgrade runs.",
        help: "Bump `version:` in the chart's Chart.yaml in the same change, or set spec.chart.spec.reconcileStrategy: Revision on the HelmRelease.",
        source: "https://fluxcd.io/flux/components/source/helmcharts/#reconcile-strategy",
    },
    Rule {
        id: MUTABLE_TAG_NO_RESTART,
        name: "MutableTagNoRestart",
        level: Level::Warning,
        summary: "A workload's image has no tag or `:latest` and no digest, and nothing in the repository restarts it: a rebuild leaves the pod template byte-identical, so no pod ever pulls the new build.",
        help: "Pin a unique tag or a digest per build (or let Flux image automation write it), or run `liveproof stale --restart` after the apply.",
        source: "https://kubernetes.io/docs/concepts/containers/images/#image-names",
    },
    Rule {
        id: CONFIG_WITHOUT_RESTART,
        name: "ConfigWithoutRestart",
        level: Level::Warning,
        summary: "A pod template reads a Secret or ConfigMap (env, envFrom or a volume) and nothing restarts it when the data changes: no checksum/* annotation, no Reloader annotation. Configuration is read at start.",
        help: "Add a `checksum/config: {{ include (print $.Template.BasePath \"/configmap.yaml\") . | sha256sum }}` pod-template annotation, a `reloader.stakater.com/auto: \"true\"` annotation, or generate the object with a kustomize configMapGenerator/secretGenerator.",
        source: "https://helm.sh/docs/howto/charts_tips_and_tricks/#automatically-roll-deployments",
    },
    Rule {
        id: GITOPS_SUSPENDED,
        name: "GitOpsSuspended",
        level: Level::Error,
        summary: "A Flux object has spec.suspend: true (or an Argo CD Application skips reconciliation): the controller applies nothing, whatever is merged.",
        help: "Remove `suspend: true` (or `flux resume …`), or the Argo CD `argocd.argoproj.io/skip-reconcile` annotation, before relying on the merge.",
        source: "https://fluxcd.io/flux/components/kustomize/kustomizations/#suspend",
    },
    Rule {
        id: ARGOCD_MANUAL_SYNC,
        name: "ArgoCdManualSync",
        level: Level::Warning,
        summary: "An Argo CD Application without syncPolicy.automated covers changed files: it shows OutOfSync and waits for someone to sync it.",
        help: "Sync the Application after the merge (`argocd app sync NAME`), or enable spec.syncPolicy.automated.",
        source: "https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/",
    },
    Rule {
        id: ARGOCD_PINNED_REVISION,
        name: "ArgoCdPinnedRevision",
        level: Level::Warning,
        summary: "An Argo CD Application tracks a fixed tag or commit (targetRevision) while the change is to files under its path: it keeps deploying the pinned revision.",
        help: "Move targetRevision to the new tag or commit in the same change, or track a branch.",
        source: "https://argo-cd.readthedocs.io/en/stable/user-guide/tracking_strategies/",
    },
    Rule {
        id: MANUAL_PROMOTION,
        name: "ManualPromotion",
        level: Level::Error,
        summary: "An Argo Rollout (a canary pause without a duration, blueGreen autoPromotionEnabled: false, spec.paused) or a Flagger Canary (a confirm-rollout, confirm-promotion or confirm-traffic-increase webhook, spec.suspend) holds every change until someone promotes it, and nothing in the repository does.",
        help: "Promote after the apply (`kubectl argo rollouts promote NAME`, or open the Flagger gate) in the pipeline, or give the pause a duration / enable auto-promotion.",
        source: "https://argo-rollouts.readthedocs.io/en/stable/features/specification/",
    },
];

/// Judges `input`. Pure: everything read was read by [`crate::gather`].
pub fn lint(input: &Input) -> Linted {
    let ctx = Context::new(input);
    let mut report = Linted {
        base: input.base_rev.clone(),
        head: input.head_rev.clone(),
        findings: Vec::new(),
        notes: input.notes.clone(),
    };
    for doc in &ctx.docs {
        chartversion_not_bumped(&ctx, doc, &mut report);
        gitops_suspended(&ctx, doc, &mut report.findings);
        argocd_sync(&ctx, doc, &mut report.findings);
        manual_promotion(&ctx, doc, &mut report.findings);
        if let Some(workload) = Workload::read(doc) {
            mutable_tag_no_restart(&ctx, &workload, &mut report.findings);
            config_without_restart(&ctx, &workload, &mut report.findings);
        }
    }
    report
        .findings
        .sort_by(|a, b| (&a.file, a.line, a.level, &a.id).cmp(&(&b.file, b.line, b.level, &b.id)));
    report.findings.dedup();
    report.notes.dedup();
    report
}

struct Context<'a> {
    pub(super) input: &'a Input,
    pub(super) docs: Vec<Doc<'a>>,
    /// Directories holding a Chart.yaml (`""` for the root).
    pub(super) charts: BTreeSet<String>,
    pub(super) kustomize: Kustomizations,
    pub(super) restarts: Restarts,
}

impl<'a> Context<'a> {
    pub(super) fn new(input: &'a Input) -> Context<'a> {
        let charts: BTreeSet<String> = input
            .head
            .keys()
            .filter(|p| is_chart_yaml(p))
            .map(|p| p.rsplit_once('/').map(|(d, _)| d).unwrap_or("").to_string())
            .collect();
        let mut docs = Vec::new();
        for (path, text) in &input.head {
            if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
                continue;
            }
            // Helm templates are not YAML until rendered, and we do not render: read as text.
            let templated = in_chart_templates(&charts, path) || text.contains("{{");
            docs.extend(yaml::split(path, text, templated));
        }
        Context {
            input,
            docs,
            kustomize: Kustomizations::read(&input.head),
            restarts: Restarts::read(&input.head),
            charts,
        }
    }

    /// The same object (kind and name) in the file at base.
    pub(super) fn base_doc(&self, doc: &Doc<'_>) -> Option<Value> {
        let text = self.input.base.as_ref()?.get(doc.file)?;
        let kind = doc.kind()?;
        let name = doc.name();
        yaml::split(doc.file, text, false)
            .into_iter()
            .filter_map(|d| d.value)
            .find(|v| {
                v["kind"].as_str() == Some(&kind) && v["metadata"]["name"].as_str() == Some(&name)
            })
    }
}

pub(super) fn in_chart_templates(charts: &BTreeSet<String>, path: &str) -> bool {
    charts.iter().any(|dir| {
        let prefix = if dir.is_empty() {
            "templates/".to_string()
        } else {
            format!("{dir}/templates/")
        };
        path.starts_with(&prefix)
    })
}

/// `./charts/x/` → `charts/x`.
pub(super) fn normalize_dir(path: &str) -> String {
    let mut p = path.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    let p = p.trim_end_matches('/');
    if p == "." {
        String::new()
    } else {
        p.to_string()
    }
}

/// Files whose change does not change what a chart renders.
pub(super) fn affects_chart(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !(name.ends_with(".md") || name == ".helmignore" || name == "LICENSE")
}

pub(super) fn list(items: &[&str], max: usize) -> String {
    let mut s = items
        .iter()
        .take(max)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        s.push_str(&format!(" and {} more", items.len() - max));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_is_unique_and_sourced() {
        let ids: BTreeSet<_> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
        assert!(RULES.iter().all(|r| r.source.starts_with("https://")));
    }
}
