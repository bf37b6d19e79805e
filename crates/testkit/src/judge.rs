//! The objects of one scenario story (`test-data/scenarios/<story>/cluster.yaml`), taken into
//! an `Observed` as `--from` would (multi-document YAML, empty documents skipped), and judged:
//! what the evidence crate's tests judge. Those tests name this module `common`
//! (`use liveproof_testkit::judge as common;`).

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
    decoded(observed)
}

/// `observed` with its Helm release storage decoded as the gatherer decodes it (here without
/// a deadline): the judge reads releases only from there.
pub fn decoded(mut observed: Observed) -> Observed {
    observed.decode_releases_with(|obj| {
        liveproof_evidence::releases::decoded(liveproof_helm::read_release(
            obj,
            &liveproof_helm::Limits::default(),
        ))
    });
    observed
}

/// [`liveproof_evidence::judge`] of `observed` after its release storage is decoded again (a
/// test may have edited it after loading).
pub fn judge(
    observed: &Observed,
    change: &liveproof_evidence::Change,
    targets: &[liveproof_evidence::Target],
    namespace: &str,
) -> liveproof_evidence::Report {
    liveproof_evidence::judge(&decoded(observed.clone()), change, targets, namespace)
}
