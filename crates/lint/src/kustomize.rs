//! Kustomize folders, read and never built: which files each `kustomization.yaml` takes in
//! (`resources:`, `bases:`, `components:`, transitively), the `images:` it overrides and the
//! ConfigMaps/Secrets it generates.
//!
//! Both matter for the rules: an `images:` entry with `newTag`/`digest` replaces a base's
//! `:latest` (kustomize docs, "images" field), and a `configMapGenerator`/`secretGenerator`
//! appends a content hash to the name, so a config change renames it and rolls the pods by
//! itself (kustomize docs, "configMapGenerator"; unless `disableNameSuffixHash: true`).

use std::collections::{BTreeMap, BTreeSet};

use serde_norway::Value;

#[derive(Debug, Default)]
pub(crate) struct Kustomizations {
    /// For each file, the directories of the kustomizations that take it in.
    included_by: BTreeMap<String, BTreeSet<String>>,
    /// Per kustomization directory.
    images: BTreeMap<String, Vec<ImageOverride>>,
    hashed_names: BTreeMap<String, BTreeSet<String>>,
}

#[derive(Debug)]
struct ImageOverride {
    name: String,
    pins: bool,
}

fn is_kustomization(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    )
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// `dir` joined with a relative `rel`, `..` resolved; `None` when it leaves the tree.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_sequence()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl Kustomizations {
    pub fn read(head: &BTreeMap<String, String>) -> Kustomizations {
        let mut parsed: BTreeMap<String, Value> = BTreeMap::new();
        for (path, text) in head.iter().filter(|(p, _)| is_kustomization(p)) {
            if let Ok(v) = serde_norway::from_str::<Value>(text) {
                parsed.insert(parent(path).to_string(), v);
            }
        }
        let mut k = Kustomizations::default();
        for (dir, v) in &parsed {
            let mut seen = BTreeSet::new();
            for file in files_of(dir, &parsed, head, &mut seen) {
                k.included_by.entry(file).or_default().insert(dir.clone());
            }
            let images = v["images"]
                .as_sequence()
                .map(|s| {
                    s.iter()
                        .filter_map(|i| {
                            let name = i["name"].as_str()?.to_string();
                            let tag = i["newTag"].as_str();
                            let pins = i["digest"].as_str().is_some()
                                || tag.is_some_and(|t| !t.is_empty() && t != "latest");
                            Some(ImageOverride { name, pins })
                        })
                        .collect()
                })
                .unwrap_or_default();
            k.images.insert(dir.clone(), images);
            let global_off = v["generatorOptions"]["disableNameSuffixHash"].as_bool() == Some(true);
            let mut hashed = BTreeSet::new();
            for key in ["configMapGenerator", "secretGenerator"] {
                for g in v[key].as_sequence().into_iter().flatten() {
                    let off = g["options"]["disableNameSuffixHash"]
                        .as_bool()
                        .unwrap_or(global_off);
                    if let (Some(name), false) = (g["name"].as_str(), off) {
                        hashed.insert(name.to_string());
                    }
                }
            }
            k.hashed_names.insert(dir.clone(), hashed);
        }
        k
    }

    fn including(&self, file: &str) -> impl Iterator<Item = &String> {
        self.included_by.get(file).into_iter().flatten()
    }

    /// A kustomization taking `file` in pins `image` (by repository) to a tag or digest.
    pub fn pins_image(&self, file: &str, image: &str) -> bool {
        let repo = image_repository(image);
        self.including(file).any(|dir| {
            self.images
                .get(dir)
                .into_iter()
                .flatten()
                .any(|o| o.pins && o.name == repo)
        })
    }

    /// A kustomization taking `file` in generates `name` with a content-hash suffix.
    pub fn generates_hashed(&self, file: &str, name: &str) -> bool {
        self.including(file)
            .any(|dir| self.hashed_names.get(dir).is_some_and(|n| n.contains(name)))
    }

    /// Whether any kustomization takes `file` in.
    #[cfg(test)]
    pub fn includes(&self, file: &str) -> bool {
        self.included_by.contains_key(file)
    }
}

/// The files a kustomization at `dir` takes in, following nested kustomizations.
fn files_of(
    dir: &str,
    parsed: &BTreeMap<String, Value>,
    head: &BTreeMap<String, String>,
    seen: &mut BTreeSet<String>,
) -> Vec<String> {
    if !seen.insert(dir.to_string()) {
        return Vec::new();
    }
    let Some(v) = parsed.get(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for key in ["resources", "bases", "components"] {
        entries.extend(strings(&v[key]));
    }
    // Patches name the objects they change; they are part of the build too.
    entries.extend(strings(&v["patchesStrategicMerge"]));
    for p in v["patches"].as_sequence().into_iter().flatten() {
        if let Some(path) = p["path"].as_str() {
            entries.push(path);
        }
    }
    for entry in entries {
        // Remote bases (URLs) are not in this tree.
        if entry.contains("://") || entry.starts_with("github.com/") {
            continue;
        }
        let Some(path) = join(dir, entry) else {
            continue;
        };
        if head.contains_key(&path) {
            files.push(path);
        } else if parsed.contains_key(&path) {
            files.extend(files_of(&path, parsed, head, seen));
        }
    }
    files
}

/// `ghcr.io/acme/api:1.2@sha256:…` → `ghcr.io/acme/api`.
pub(crate) fn image_repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    let last_slash = image.rfind('/').map(|i| i + 1).unwrap_or(0);
    match image[last_slash..].find(':') {
        Some(colon) => &image[..last_slash + colon],
        None => image,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_pin_base_images_and_hash_generated_names() {
        let mut head = BTreeMap::new();
        head.insert(
            "base/kustomization.yaml".to_string(),
            "resources:\n- deployment.yaml\n".to_string(),
        );
        head.insert("base/deployment.yaml".to_string(), String::new());
        head.insert(
            "prod/kustomization.yaml".to_string(),
            "resources:\n- ../base\nimages:\n- name: ghcr.io/acme/api\n  newTag: 1.4.2\nconfigMapGenerator:\n- name: api-config\n".to_string(),
        );
        let k = Kustomizations::read(&head);
        assert!(k.includes("base/deployment.yaml"));
        assert!(k.pins_image("base/deployment.yaml", "ghcr.io/acme/api:latest"));
        assert!(!k.pins_image("base/deployment.yaml", "ghcr.io/acme/web"));
        assert!(k.generates_hashed("base/deployment.yaml", "api-config"));
        assert_eq!(
            image_repository("localhost:5000/a/b:1@sha256:x"),
            "localhost:5000/a/b"
        );
    }
}
