//! The objects of one scenario story (`test-data/scenarios/<story>/cluster.yaml`), taken into
//! an `Observed` as `--from` would: multi-document YAML, empty documents skipped.

use liveproof_evidence::Observed;

pub fn story(story: &str) -> Observed {
    let path = format!(
        "{}/../../test-data/scenarios/{story}/cluster.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut observed = Observed::default();
    for doc in serde_norway::Deserializer::from_str(&text) {
        let value: serde_json::Value = serde::Deserialize::deserialize(doc).expect("yaml");
        if !value.is_null() {
            observed.add_value(value, &path).expect("object");
        }
    }
    observed
}
