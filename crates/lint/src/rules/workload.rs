//! A workload's pod template as the rules read it — from the parsed object or, in a Helm
//! template, line by line — and what the repository's scripts restart.

use std::collections::{BTreeMap, BTreeSet};

use serde_norway::Value;

use crate::yaml::{self, key_value, Doc};

/// A workload's pod template, from the parsed object or, in a Helm template, line by line.
pub(super) struct Workload<'d, 'a> {
    pub(super) doc: &'d Doc<'a>,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) images: Vec<ImageRef>,
    pub(super) refs: Vec<ConfigRef>,
    /// Pod-template annotation keys and values.
    pub(super) template_annotations: Vec<(String, String)>,
    /// The workload's own annotation keys and values.
    pub(super) annotations: Vec<(String, String)>,
    /// Something in the template changes per build or per upgrade (a substituted or
    /// templated annotation), which rolls the pods by itself.
    pub(super) per_build: bool,
}

pub(super) struct ImageRef {
    pub(super) image: String,
    pub(super) line: usize,
    /// `# {"$imagepolicy": "ns:name"}`: Flux image automation rewrites this line.
    pub(super) automation_marker: bool,
}

pub(super) struct ConfigRef {
    pub(super) kind: &'static str,
    pub(super) name: String,
    pub(super) via: &'static str,
    pub(super) line: usize,
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
    pub(super) fn read(doc: &'d Doc<'a>) -> Option<Workload<'d, 'a>> {
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

    pub(super) fn structured(doc: &'d Doc<'a>, kind: String, name: String, v: &Value) -> Self {
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

    pub(super) fn line_wise(doc: &'d Doc<'a>, kind: String, name: String) -> Self {
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

    pub(super) fn label(&self) -> String {
        format!("{} {}", self.kind, self.doc.display_name())
    }
}

/// What the repository's scripts and CI workflows restart or promote, read in one pass over
/// their lines: `kubectl rollout restart …` lines naming a workload, or `liveproof stale …
/// --restart` (which restarts whatever is stale); `kubectl argo rollouts promote …` lines
/// naming a Rollout, and calls opening a Flagger load tester's gate (`/gate/open`).
#[derive(Default)]
pub(super) struct Restarts {
    pub(super) everything: bool,
    pub(super) tokens: BTreeSet<String>,
    /// The words after `rollouts promote`, lowercased (names, `NS/NAME`, flags).
    pub(super) promoted: BTreeSet<String>,
    pub(super) gate_opened: bool,
}

/// The words of `rest`, stripped of shell quoting and separators, lowercased.
fn command_words(rest: &str) -> impl Iterator<Item = String> + '_ {
    rest.split_whitespace()
        .map(|t| t.trim_matches(['"', '\'', ';', '\\']).to_ascii_lowercase())
}

impl Restarts {
    pub(super) fn read(head: &BTreeMap<String, String>) -> Restarts {
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
                    for token in command_words(rest) {
                        if token == "--all" {
                            r.everything = true;
                        }
                        r.tokens.insert(token);
                    }
                }
                if let Some((_, rest)) = line.split_once("rollouts promote") {
                    r.promoted.extend(command_words(rest));
                }
                if line.contains("/gate/open") {
                    r.gate_opened = true;
                }
            }
        }
        r
    }

    /// Whether the Rollout `name` is promoted by something in the repository.
    pub(super) fn promotes(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.promoted
            .iter()
            .any(|t| *t == name || t.ends_with(&format!("/{name}")))
    }

    pub(super) fn covers(&self, kind: &str, name: &str) -> bool {
        if self.everything {
            return true;
        }
        // Every spelling of the kind a target may use, from the kind table.
        let spec = liveproof_evidence::TargetKind::workload_named(kind, None)
            .unwrap_or(liveproof_evidence::TargetKind::DaemonSet)
            .spec();
        let name = name.to_ascii_lowercase();
        self.tokens.contains(&name)
            || spec
                .spellings()
                .any(|a| self.tokens.contains(&format!("{a}/{name}")))
    }
}
