//! The corpus's Helm storage objects cannot drift from their sources: every story that keeps
//! `releases/NAME.vN.json` has, in its `cluster.yaml`, the storage object Helm would have written
//! for it (made by `cargo run -p liveproof-helm --example encode-release`), and every storage
//! object in the corpus has such a source. A storage object that does not decode must be a
//! truncated copy of its source's, so a corrupt fixture is corrupt on purpose and in one way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use liveproof_helm::{decode, encode_secret, is_release_storage, object_ref, Limits, Release};
use serde::Deserialize;
use serde_json::Value;

/// Fewer sources than this means the corpus lost its Helm stories or was not found.
const MIN_SOURCES: usize = 20;

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data/scenarios")
}

fn story_dirs() -> Vec<PathBuf> {
    let root = scenarios_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.join("cluster.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::Deserializer::from_str(&text)
        .filter_map(|doc| {
            let value = serde_norway::Value::deserialize(doc)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (!value.is_null()).then(|| serde_json::to_value(value).expect("YAML that is JSON"))
        })
        .flat_map(|v| match v.get("items") {
            Some(Value::Array(items))
                if v["kind"].as_str().is_some_and(|k| k.ends_with("List")) =>
            {
                items.clone()
            }
            _ => vec![v],
        })
        .collect()
}

fn label<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer(&format!("/metadata/labels/{key}"))
        .and_then(Value::as_str)
}

/// `releases/*.json` of a story: file name → (raw JSON, as Helm's Go types read it).
fn sources(dir: &Path) -> BTreeMap<String, (Value, Release)> {
    let Ok(entries) = std::fs::read_dir(dir.join("releases")) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable source");
            let raw: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", p.display()));
            let release: Release = serde_json::from_value(raw.clone())
                .unwrap_or_else(|e| panic!("{}: not a Helm release: {e}", p.display()));
            let file = p
                .file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned();
            (file, (raw, release))
        })
        .collect()
}

/// Go's base64 (standard alphabet, padded), for looking under the two layers of a corrupt one.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: byte {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
            let bytes = n.to_be_bytes();
            bytes[1..chunk.len()].to_vec()
        })
        .collect()
}

fn gzip_of_secret(secret: &Value) -> Vec<u8> {
    let outer = secret["data"]["release"].as_str().expect("data.release");
    let helm = String::from_utf8(base64_decode(outer)).expect("Helm's base64 is text");
    base64_decode(&helm)
}

/// Whether `gzip` is the source's release cut short: it inflates to a prefix of the source's
/// JSON (all of it when only the trailer is cut) and then simply ends.
fn is_cut_short(gzip: &[u8], source: &Value) -> bool {
    let whole = serde_json::to_vec(source).expect("a Value serializes");
    match inflate_as_far_as_it_goes(gzip) {
        (inflated, Some(end)) => {
            end.kind() == std::io::ErrorKind::UnexpectedEof && whole.starts_with(&inflated)
        }
        (_, None) => false,
    }
}

#[test]
fn only_a_copy_cut_short_counts_as_cut_short() {
    let source = serde_json::json!({
        "name": "web", "namespace": "apps", "version": 2,
        "info": {"status": "deployed"},
        "manifest": "---\n# Source: web/templates/deployment.yaml\n".repeat(200),
    });
    let whole = gzip_of_secret(&encode_secret(&source));
    assert!(!is_cut_short(&whole, &source), "the whole copy is not cut");
    assert!(is_cut_short(&whole[..whole.len() / 2], &source));
    assert!(
        is_cut_short(&whole[..whole.len() - 9], &source),
        "only the trailer cut"
    );
    let mut changed = whole[..whole.len() / 2].to_vec();
    let at = changed.len() / 2;
    changed[at] ^= 0x55;
    assert!(
        !is_cut_short(&changed, &source),
        "a changed byte is not a cut"
    );
    let other = serde_json::json!({"name": "api", "manifest": "x".repeat(2_000)});
    let theirs = gzip_of_secret(&encode_secret(&other));
    assert!(
        !is_cut_short(&theirs[..theirs.len() / 2], &source),
        "another release's cut"
    );
}

/// What `gzip` inflates to before it fails, and how it failed (None: it did not).
fn inflate_as_far_as_it_goes(gzip: &[u8]) -> (Vec<u8>, Option<std::io::Error>) {
    use std::io::Read;
    let mut decoder = flate2::read::GzDecoder::new(gzip);
    let mut inflated = Vec::new();
    let mut chunk = [0u8; 512];
    loop {
        match decoder.read(&mut chunk) {
            Ok(0) => return (inflated, None),
            Ok(n) => inflated.extend_from_slice(&chunk[..n]),
            Err(e) => return (inflated, Some(e)),
        }
    }
}

/// Why the decoded release differs from its source, field by field; empty when it does not.
fn differences(decoded: &Release, source: &Release) -> Vec<&'static str> {
    let mut out = Vec::new();
    if decoded.name != source.name {
        out.push("name");
    }
    if decoded.namespace != source.namespace {
        out.push("namespace");
    }
    if decoded.version != source.version {
        out.push("version");
    }
    if decoded.info != source.info {
        out.push("info");
    }
    if decoded.chart.metadata != source.chart.metadata {
        out.push("chart.metadata");
    }
    if decoded.manifest != source.manifest {
        out.push("manifest");
    }
    // Compared, never printed: values may hold secrets.
    if decoded.config.expose() != source.config.expose() {
        out.push("config");
    }
    if decoded.hooks != source.hooks {
        out.push("hooks");
    }
    out
}

#[test]
fn every_release_fixture_decodes_to_its_source_and_every_storage_object_has_one() {
    let limits = Limits::default();
    let mut problems = Vec::new();
    let mut checked = 0;
    for dir in story_dirs() {
        let story = dir
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let sources = sources(&dir);
        let mut stored: BTreeMap<String, usize> = BTreeMap::new();
        for obj in documents(&dir.join("cluster.yaml"))
            .iter()
            .filter(|o| is_release_storage(o))
        {
            let object = object_ref(obj);
            let (Some(name), Some(version)) = (label(obj, "name"), label(obj, "version")) else {
                problems.push(format!("{story}: {object} has no name/version labels"));
                continue;
            };
            let file = format!("{name}.v{version}.json");
            *stored.entry(file.clone()).or_default() += 1;
            let Some((raw, source)) = sources.get(&file) else {
                problems.push(format!(
                    "{story}: {object} has no source releases/{file}; make fixtures with the encode-release example"
                ));
                continue;
            };
            checked += 1;
            let want_name = format!("sh.helm.release.v1.{name}.v{version}");
            if obj.pointer("/metadata/name").and_then(Value::as_str) != Some(want_name.as_str())
                || obj.pointer("/metadata/namespace").and_then(Value::as_str)
                    != Some(source.namespace.as_str())
            {
                problems.push(format!(
                    "{story}: {object} is not named {}/{want_name} as Helm names it",
                    source.namespace
                ));
            }
            if label(obj, "status") != Some(source.info.status.as_str()) {
                problems.push(format!(
                    "{story}: {object}'s status label differs from releases/{file}'s info.status"
                ));
            }
            match decode(obj, &limits) {
                Ok(decoded) => {
                    let diff = differences(&decoded.release, source);
                    if !diff.is_empty() {
                        problems.push(format!(
                            "{story}: {object} decodes to a release whose {} differ from releases/{file}; re-encode it",
                            diff.join(", ")
                        ));
                    }
                }
                Err(error) => {
                    // Only a copy cut short is corrupt on purpose: its gzip inflates, as far
                    // as it goes, to a prefix of the source's JSON, then simply ends.
                    // (Inflating is the same for every deflate backend; deflating is not, so
                    // the compressed bytes themselves are not compared.)
                    assert_eq!(
                        error.object(),
                        object,
                        "{story}: the error names the object"
                    );
                    if !is_cut_short(&gzip_of_secret(obj), raw) {
                        problems.push(format!(
                            "{story}: {object} does not decode ({error}) and is not a truncated copy of releases/{file}"
                        ));
                    }
                }
            }
        }
        for file in sources.keys() {
            match stored.get(file).copied().unwrap_or(0) {
                1 => {}
                0 => problems.push(format!(
                    "{story}: releases/{file} has no storage object in cluster.yaml"
                )),
                n => problems.push(format!(
                    "{story}: releases/{file} is stored {n} times in cluster.yaml"
                )),
            }
        }
    }
    assert!(
        checked >= MIN_SOURCES,
        "only {checked} release fixtures checked (at least {MIN_SOURCES} expected)"
    );
    assert!(
        problems.is_empty(),
        "{} release fixture problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn base64_decoder_reads_go_base64() {
    assert_eq!(base64_decode("aGVsbQ=="), b"helm");
    assert_eq!(base64_decode("aGVsbTM="), b"helm3");
    assert_eq!(base64_decode("aGVsbTM0"), b"helm34");
}
