//! The rules: pure functions from an [`Input`] to findings. Each rule's comment names the
//! document its fact comes from.

use std::collections::{BTreeMap, BTreeSet};

use serde_norway::Value;

use crate::gather::{is_chart_yaml, Input};
use crate::kustomize::Kustomizations;
use crate::yaml::{self, key_value, Doc};
use crate::{Finding, Level, Report};

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
];

/// Judges `input`. Pure: everything read was read by [`crate::gather`].
pub fn lint(input: &Input) -> Report {
    let ctx = Context::new(input);
    let mut report = Report {
        base: input.base_rev.clone(),
        head: input.head_rev.clone(),
        findings: Vec::new(),
        notes: input.notes.clone(),
    };
    for doc in &ctx.docs {
        chartversion_not_bumped(&ctx, doc, &mut report);
        gitops_suspended(&ctx, doc, &mut report.findings);
        argocd_sync(&ctx, doc, &mut report.findings);
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
    input: &'a Input,
    docs: Vec<Doc<'a>>,
    /// Directories holding a Chart.yaml (`""` for the root).
    charts: BTreeSet<String>,
    kustomize: Kustomizations,
    restarts: Restarts,
}

impl<'a> Context<'a> {
    fn new(input: &'a Input) -> Context<'a> {
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
    fn base_doc(&self, doc: &Doc<'_>) -> Option<Value> {
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

fn in_chart_templates(charts: &BTreeSet<String>, path: &str) -> bool {
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
fn normalize_dir(path: &str) -> String {
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
fn affects_chart(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !(name.ends_with(".md") || name == ".helmignore" || name == "LICENSE")
}

fn list(items: &[&str], max: usize) -> String {
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

// Flux: "ChartVersion (default): a new artifact is produced only when the chart's version in
// Chart.yaml changes; Revision: for every new revision of the source" — source-controller
// HelmChart docs (reconcileStrategy) and helm-controller HelmRelease docs (spec.chart.spec).
// It applies to charts from GitRepository/Bucket sources; a HelmRepository chart is versioned.
fn chartversion_not_bumped(ctx: &Context<'_>, doc: &Doc<'_>, report: &mut Report) {
    let Some(v) = &doc.value else { return };
    if doc.kind().as_deref() != Some("HelmRelease")
        || !doc
            .api_version()
            .is_some_and(|a| a.starts_with("helm.toolkit.fluxcd.io/v2"))
    {
        return;
    }
    let spec = &v["spec"]["chart"]["spec"];
    let strategy = spec["reconcileStrategy"].as_str().unwrap_or("ChartVersion");
    if strategy != "ChartVersion" || spec["sourceRef"]["kind"].as_str() != Some("GitRepository") {
        return;
    }
    let Some(chart) = spec["chart"].as_str() else {
        return;
    };
    let dir = normalize_dir(chart);
    if !ctx.charts.contains(&dir) {
        return;
    }
    let chart_yaml = if dir.is_empty() {
        "Chart.yaml".to_string()
    } else {
        format!("{dir}/Chart.yaml")
    };
    let Some(base) = &ctx.input.base else {
        report.notes.push(format!(
            "{}: HelmRelease {} uses reconcileStrategy ChartVersion for {chart}; without a base \
             revision liveproof cannot tell whether its version was bumped",
            doc.file,
            doc.display_name()
        ));
        return;
    };
    let changed: Vec<&str> = ctx
        .input
        .changed
        .under(&dir, &ctx.input.head)
        .into_iter()
        .filter(|p| affects_chart(p))
        .collect();
    if changed.is_empty() {
        return;
    }
    // The rule verify's diagnosis uses too. A chart that is new at base is installed from its
    // first version: nothing to bump.
    let base_text = base.get(&chart_yaml).map(String::as_str);
    let head_text = ctx.input.head.get(&chart_yaml).map(String::as_str);
    if liveproof_helm::chart_version_changed(base_text, head_text) {
        return;
    }
    let Some(base_version) = base_text.and_then(liveproof_helm::chart_version) else {
        return;
    };
    let line = doc
        .locate(&["spec", "chart", "spec", "reconcileStrategy"])
        .or_else(|| doc.locate(&["spec", "chart", "spec", "chart"]))
        .unwrap_or(doc.first_line);
    let how = if spec["reconcileStrategy"].is_null() {
        "reconcileStrategy unset, so ChartVersion"
    } else {
        "reconcileStrategy: ChartVersion"
    };
    let relative: Vec<&str> = changed
        .iter()
        .map(|p| p.strip_prefix(&format!("{dir}/")).unwrap_or(p))
        .collect();
    report.findings.push(Finding {
        id: CHARTVERSION_NOT_BUMPED.to_string(),
        level: Level::Error,
        file: doc.file.to_string(),
        line,
        message: format!(
            "HelmRelease {} builds {chart} from a GitRepository with {how}: {} changed ({}) but \
             {chart_yaml} still says version {base_version}, so no new chart is built and no \
             upgrade runs",
            doc.display_name(),
            if changed.len() == 1 {
                "1 file".to_string()
            } else {
                format!("{} files", changed.len())
            },
            list(&relative, 4),
        ),
        fix: format!(
            "bump `version: {base_version}` in {chart_yaml} in this change, or set \
             spec.chart.spec.reconcileStrategy: Revision"
        ),
    });
}

/// A workload's pod template, from the parsed object or, in a Helm template, line by line.
struct Workload<'d, 'a> {
    doc: &'d Doc<'a>,
    kind: String,
    name: String,
    images: Vec<ImageRef>,
    refs: Vec<ConfigRef>,
    /// Pod-template annotation keys and values.
    template_annotations: Vec<(String, String)>,
    /// The workload's own annotation keys and values.
    annotations: Vec<(String, String)>,
    /// Something in the template changes per build or per upgrade (a substituted or
    /// templated annotation), which rolls the pods by itself.
    per_build: bool,
}

struct ImageRef {
    image: String,
    line: usize,
    /// `# {"$imagepolicy": "ns:name"}`: Flux image automation rewrites this line.
    automation_marker: bool,
}

struct ConfigRef {
    kind: &'static str,
    name: String,
    via: &'static str,
    line: usize,
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_mapping()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let value = match v {
                        Value::String(s) => s.clone(),
                        other => serde_norway::to_string(other)
                            .unwrap_or_default()
                            .trim()
                            .to_string(),
                    };
                    Some((k.as_str()?.to_string(), value))
                })
                .collect()
        })
        .unwrap_or_default()
}

impl<'d, 'a> Workload<'d, 'a> {
    fn read(doc: &'d Doc<'a>) -> Option<Workload<'d, 'a>> {
        let kind = doc.kind()?;
        if !matches!(kind.as_str(), "Deployment" | "StatefulSet" | "DaemonSet") {
            return None;
        }
        let name = doc.name();
        match &doc.value {
            Some(v) => Some(Self::structured(doc, kind, name, v)),
            None => Some(Self::line_wise(doc, kind, name)),
        }
    }

    fn structured(doc: &'d Doc<'a>, kind: String, name: String, v: &Value) -> Self {
        let spec = &v["spec"]["template"]["spec"];
        let mut nth: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut line_of = |key: &'static str, value: Option<&str>| -> usize {
            let n = nth.entry(key).or_default();
            let at = doc
                .find_nth(*n, |l| match key_value(l, key) {
                    Some(found) => value.is_none_or(|want| found == want),
                    None => false,
                })
                .unwrap_or(doc.first_line);
            *n += 1;
            at
        };
        let mut images = Vec::new();
        let mut refs = Vec::new();
        for key in ["initContainers", "containers"] {
            for c in spec[key].as_sequence().into_iter().flatten() {
                if let Some(image) = c["image"].as_str() {
                    let line = doc
                        .find_nth(
                            images
                                .iter()
                                .filter(|i: &&ImageRef| i.image == image)
                                .count(),
                            |l| key_value(l, "image") == Some(image),
                        )
                        .unwrap_or(doc.first_line);
                    let automation_marker = doc
                        .line_text(line)
                        .is_some_and(|l| l.contains("$imagepolicy"));
                    images.push(ImageRef {
                        image: image.to_string(),
                        line,
                        automation_marker,
                    });
                }
                for e in c["env"].as_sequence().into_iter().flatten() {
                    for (key, kind) in
                        [("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")]
                    {
                        if let Some(name) = e["valueFrom"][key]["name"].as_str() {
                            refs.push(ConfigRef {
                                kind,
                                name: name.to_string(),
                                via: if kind == "Secret" {
                                    "env valueFrom.secretKeyRef"
                                } else {
                                    "env valueFrom.configMapKeyRef"
                                },
                                line: line_of(key, None),
                            });
                        }
                    }
                }
                for e in c["envFrom"].as_sequence().into_iter().flatten() {
                    for (key, kind) in [("secretRef", "Secret"), ("configMapRef", "ConfigMap")] {
                        if let Some(name) = e[key]["name"].as_str() {
                            refs.push(ConfigRef {
                                kind,
                                name: name.to_string(),
                                via: if kind == "Secret" {
                                    "envFrom.secretRef"
                                } else {
                                    "envFrom.configMapRef"
                                },
                                line: line_of(key, None),
                            });
                        }
                    }
                }
            }
        }
        for vol in spec["volumes"].as_sequence().into_iter().flatten() {
            if let Some(name) = vol["secret"]["secretName"].as_str() {
                refs.push(ConfigRef {
                    kind: "Secret",
                    name: name.to_string(),
                    via: "a secret volume",
                    line: line_of("secretName", Some(name)),
                });
            }
            if let Some(name) = vol["configMap"]["name"].as_str() {
                refs.push(ConfigRef {
                    kind: "ConfigMap",
                    name: name.to_string(),
                    via: "a configMap volume",
                    line: line_of("configMap", None),
                });
            }
            for source in vol["projected"]["sources"]
                .as_sequence()
                .into_iter()
                .flatten()
            {
                for (key, kind) in [("secret", "Secret"), ("configMap", "ConfigMap")] {
                    if let Some(name) = source[key]["name"].as_str() {
                        refs.push(ConfigRef {
                            kind,
                            name: name.to_string(),
                            via: "a projected volume",
                            line: line_of(key, None),
                        });
                    }
                }
            }
        }
        let template_annotations = pairs(&v["spec"]["template"]["metadata"]["annotations"]);
        // `${VAR}` (Flux postBuild substitution, envsubst) is replaced at apply time, so such
        // an annotation can change with every build.
        let per_build = template_annotations
            .iter()
            .any(|(_, v)| v.contains("${") || v.contains("{{"));
        Workload {
            doc,
            kind,
            name,
            images,
            refs,
            template_annotations,
            annotations: pairs(&v["metadata"]["annotations"]),
            per_build,
        }
    }

    fn line_wise(doc: &'d Doc<'a>, kind: String, name: String) -> Self {
        let mut images = Vec::new();
        let mut refs = Vec::new();
        let mut annotations = Vec::new();
        let next_name = |i: usize| -> String {
            doc.lines
                .iter()
                .skip(i + 1)
                .take(3)
                .find_map(|l| key_value(l, "name"))
                .unwrap_or("?")
                .to_string()
        };
        for (i, l) in doc.lines.iter().enumerate() {
            let line = doc.first_line + i;
            if l.trim_start().starts_with('#') {
                continue;
            }
            if let Some(image) = key_value(l, "image") {
                // A templated image is decided at render time; only literal ones are judged.
                if !image.is_empty() && !image.contains("{{") {
                    images.push(ImageRef {
                        image: image.to_string(),
                        line,
                        automation_marker: l.contains("$imagepolicy"),
                    });
                }
            }
            for (key, kind, via) in [
                ("secretKeyRef", "Secret", "env valueFrom.secretKeyRef"),
                (
                    "configMapKeyRef",
                    "ConfigMap",
                    "env valueFrom.configMapKeyRef",
                ),
                ("secretRef", "Secret", "envFrom.secretRef"),
                ("configMapRef", "ConfigMap", "envFrom.configMapRef"),
            ] {
                if key_value(l, key).is_some() {
                    refs.push(ConfigRef {
                        kind,
                        name: next_name(i),
                        via,
                        line,
                    });
                }
            }
            if let Some(name) = key_value(l, "secretName") {
                refs.push(ConfigRef {
                    kind: "Secret",
                    name: name.to_string(),
                    via: "a secret volume",
                    line,
                });
            }
            if key_value(l, "configMap") == Some("") {
                refs.push(ConfigRef {
                    kind: "ConfigMap",
                    name: next_name(i),
                    via: "a configMap volume",
                    line,
                });
            }
            for marker in ["checksum/", "reloader.stakater.com/"] {
                if let Some(at) = l.find(marker) {
                    let rest = &l[at..];
                    let (key, value) = rest.split_once(':').unwrap_or((rest, ""));
                    annotations.push((
                        key.trim_matches(['"', '\'']).to_string(),
                        yaml::unquote(value).to_string(),
                    ));
                }
            }
        }
        // Helm's "always roll" idiom (`rollme: {{ randAlphaNum 5 | quote }}`) and friends
        // change the template on every upgrade (Helm docs, "Automatically Roll Deployments").
        let per_build = ["randAlphaNum", ".Release.Revision", "now |", "now }}"]
            .iter()
            .any(|m| doc.contains(m));
        Workload {
            doc,
            kind,
            name,
            images,
            refs,
            template_annotations: annotations.clone(),
            annotations,
            per_build,
        }
    }

    fn label(&self) -> String {
        format!("{} {}", self.kind, self.doc.display_name())
    }
}

/// What the repository's scripts and CI workflows restart: `kubectl rollout restart …` lines
/// naming a workload, or `liveproof stale … --restart` (which restarts whatever is stale).
#[derive(Default)]
struct Restarts {
    everything: bool,
    tokens: BTreeSet<String>,
}

impl Restarts {
    fn read(head: &BTreeMap<String, String>) -> Restarts {
        let mut r = Restarts::default();
        for text in head.values() {
            for line in text.lines() {
                let line = line.trim();
                if line.starts_with('#') {
                    continue;
                }
                if line.contains("liveproof stale") && line.contains("--restart") {
                    r.everything = true;
                }
                if let Some((_, rest)) = line.split_once("rollout restart") {
                    for token in rest.split_whitespace() {
                        let token = token.trim_matches(['"', '\'', ';', '\\']);
                        if token == "--all" {
                            r.everything = true;
                        }
                        r.tokens.insert(token.to_ascii_lowercase());
                    }
                }
            }
        }
        r
    }

    fn covers(&self, kind: &str, name: &str) -> bool {
        if self.everything {
            return true;
        }
        let aliases: &[&str] = match kind {
            "Deployment" => &["deployment", "deployments", "deploy"],
            "StatefulSet" => &["statefulset", "statefulsets", "sts"],
            _ => &["daemonset", "daemonsets", "ds"],
        };
        let name = name.to_ascii_lowercase();
        self.tokens.contains(&name)
            || aliases
                .iter()
                .any(|a| self.tokens.contains(&format!("{a}/{name}")))
    }
}

/// `None` for a pinned image; else how it is mutable.
fn mutable_tag(image: &str) -> Option<&'static str> {
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

// Seed 001: with `:latest` a rebuild leaves the pod template byte-identical; `kubectl apply`
// (and any GitOps controller) sees no change, creates no ReplicaSet and pulls nothing, and
// imagePullPolicy: Always only matters for a pod that starts. Kubernetes docs, "Images":
// a tag other than a digest can move. Restart paths we recognise: Flux image automation
// markers (fluxcd.io/flux/guides/image-update), a per-build annotation, Keel's
// `keel.sh/policy` (keel.sh/docs), `kubectl rollout restart NAME` or `liveproof stale
// --restart` in the repository's scripts and workflows.
fn mutable_tag_no_restart(ctx: &Context<'_>, w: &Workload<'_, '_>, findings: &mut Vec<Finding>) {
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
        findings.push(Finding {
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

/// Annotations Stakater Reloader acts on (github.com/stakater/Reloader README).
const RELOADER: &[&str] = &[
    "reloader.stakater.com/auto",
    "reloader.stakater.com/search",
    "secret.reloader.stakater.com/auto",
    "configmap.reloader.stakater.com/auto",
    "secret.reloader.stakater.com/reload",
    "configmap.reloader.stakater.com/reload",
];

// Seed 002 check 7: a pod that started before the change runs the configuration it read then.
// Kubernetes docs (ConfigMaps): "ConfigMaps consumed as environment variables are not updated
// automatically and require a pod restart". The known fixes: Helm docs "Automatically Roll
// Deployments" (a `checksum/config` pod-template annotation), Stakater Reloader's annotations,
// and kustomize generators' hashed names.
fn config_without_restart(ctx: &Context<'_>, w: &Workload<'_, '_>, findings: &mut Vec<Finding>) {
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
    findings.push(Finding {
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

// Flux docs, Kustomization and HelmRelease `.spec.suspend`: "when set to true the controller
// will stop reconciling"; the same field exists on every source kind. Argo CD docs, "Skip
// Application Reconcile": the `argocd.argoproj.io/skip-reconcile: "true"` annotation.
fn gitops_suspended(ctx: &Context<'_>, doc: &Doc<'_>, findings: &mut Vec<Finding>) {
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
    findings.push(Finding {
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

fn argo_sources(v: &Value) -> Vec<&Value> {
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

fn argo_paths_changed(ctx: &Context<'_>, v: &Value) -> bool {
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

// Argo CD docs, "Automated Sync Policy": without spec.syncPolicy.automated an Application only
// shows OutOfSync until someone syncs it. "Tracking and Deployment Strategies": a tag or commit
// SHA in targetRevision pins what is deployed; only a branch (or HEAD) follows new commits.
fn argocd_sync(ctx: &Context<'_>, doc: &Doc<'_>, findings: &mut Vec<Finding>) {
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
        findings.push(Finding {
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
        findings.push(Finding {
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

    #[test]
    fn pinned_revisions() {
        assert!(looks_pinned("v1.4.2"));
        assert!(looks_pinned("1.4"));
        assert!(looks_pinned("3f2c1ab"));
        assert!(!looks_pinned("main"));
        assert!(!looks_pinned("HEAD"));
        assert!(!looks_pinned("release-1"));
    }

    #[test]
    fn every_rule_id_is_unique_and_sourced() {
        let ids: BTreeSet<_> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
        assert!(RULES.iter().all(|r| r.source.starts_with("https://")));
    }
}
