//! The CustomResourceDefinitions the simulator serves for the custom kinds liveproof verifies
//! as targets (Argo Rollouts' Rollout, Flagger's Canary, Knative Serving's Service), each with
//! its real schema: the copies evidence's resource table carries (`Origin::Crd`, the upstream
//! files under `crates/evidence/src/kinds/crds`, gzipped; Flagger's the Canary document of its
//! `crd.yaml`), held byte-identical to the modules pinned in `e2e/peers/crds/go.mod` by
//! `tests/crds.rs`, and to the discovery rows by a test below.

use std::io::Read as _;

use serde::Deserialize as _;
use serde_json::{json, Value};

/// `(the file e2e/build-peers.sh copies out of the pinned module, the simulator's gzipped
/// copy)` of every resource of evidence's table that keeps one, in the table's order.
pub fn copies() -> Vec<(&'static str, &'static [u8])> {
    liveproof_evidence::RESOURCES
        .iter()
        .filter_map(|r| match r.origin {
            liveproof_evidence::Origin::Crd(Some(copy)) => Some((copy.file, copy.gz)),
            liveproof_evidence::Origin::Crd(None) | liveproof_evidence::Origin::Builtin => None,
        })
        .collect()
}

/// A copy's text.
pub fn text(gzipped: &[u8]) -> std::io::Result<String> {
    let mut out = String::new();
    flate2::read::GzDecoder::new(gzipped).read_to_string(&mut out)?;
    Ok(out)
}

/// The CRDs as a server returns them: the file's object, with the status an API server writes
/// once it established the names.
pub(crate) fn objects() -> Result<Vec<Value>, String> {
    copies()
        .into_iter()
        .map(|(name, gz)| {
            let yaml = text(gz).map_err(|e| format!("{name}: {e}"))?;
            let doc = serde_norway::Deserializer::from_str(&yaml)
                .next()
                .ok_or_else(|| format!("{name}: no document"))?;
            let mut crd = Value::deserialize(doc).map_err(|e| format!("{name}: {e}"))?;
            default_names(&mut crd);
            let names = crd.pointer("/spec/names").cloned().unwrap_or(Value::Null);
            let stored: Vec<Value> = crd
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|v| v["storage"] == true)
                .map(|v| v["name"].clone())
                .collect();
            let condition = |type_: &str, reason: &str| {
                json!({"type": type_, "status": "True", "reason": reason,
                       "lastTransitionTime": "2026-01-01T00:00:00Z"})
            };
            crd["status"] = json!({
                "acceptedNames": names,
                "storedVersions": stored,
                "conditions": [
                    condition("NamesAccepted", "NoConflicts"),
                    condition("Established", "InitialNamesAccepted"),
                ],
            });
            Ok(crd)
        })
        .collect()
}

/// What the API server fills into a CRD's names when the file leaves them out (apiextensions'
/// `SetDefaults_CustomResourceDefinitionSpec`): `singular`, the kind in lower case, and
/// `listKind`, the kind and `List`. Knative's Service CRD names neither; story 8 compares.
fn default_names(crd: &mut Value) {
    let Some(names) = crd
        .pointer_mut("/spec/names")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(kind) = names.get("kind").and_then(Value::as_str).map(str::to_owned) else {
        return;
    };
    names
        .entry("singular")
        .or_insert_with(|| Value::from(kind.to_lowercase()));
    names
        .entry("listKind")
        .or_insert_with(|| Value::from(format!("{kind}List")));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::gitops_crds;

    /// Every CRD served names its singular and list kind, as the API server fills them in.
    #[test]
    fn names_the_file_leaves_out_are_filled_in_as_the_api_server_does() {
        for crd in objects().expect("the copies parse") {
            let names = &crd["spec"]["names"];
            let kind = names["kind"].as_str().expect("kind");
            assert_eq!(names["listKind"], format!("{kind}List"), "{kind}");
            assert_eq!(names["singular"], kind.to_lowercase(), "{kind}");
            assert_eq!(crd["status"]["acceptedNames"], *names, "{kind}");
        }
    }

    /// Each CRD names the kind the discovery row serves, in its group and version, with the
    /// same plural, short names and scope: a kubectl reading either sees one resource.
    #[test]
    fn the_crds_and_the_discovery_rows_agree() {
        let rows = gitops_crds();
        let crds = objects().expect("the copies parse");
        assert_eq!(crds.len(), copies().len());
        assert!(!crds.is_empty());
        for crd in crds {
            let group = crd["spec"]["group"].as_str().expect("group");
            let kind = crd["spec"]["names"]["kind"].as_str().expect("kind");
            let row = rows
                .iter()
                .find(|r| r.group == group && r.kind == kind)
                .unwrap_or_else(|| panic!("no discovery row for {kind}.{group}"));
            assert_eq!(
                crd["spec"]["names"]["plural"],
                row.plural.as_str(),
                "{kind}"
            );
            let mut short: Vec<&str> = crd["spec"]["names"]["shortNames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            short.sort_unstable();
            let mut served: Vec<&str> = row.short_names.iter().map(String::as_str).collect();
            served.sort_unstable();
            assert_eq!(short, served, "{kind}");
            assert_eq!(crd["spec"]["scope"], "Namespaced", "{kind}");
            assert!(row.namespaced, "{kind}");
            let served_version = crd["spec"]["versions"]
                .as_array()
                .expect("versions")
                .iter()
                .any(|v| v["name"] == row.version.as_str() && v["served"] == true);
            assert!(served_version, "{kind}: {} not served", row.version);
            assert!(
                crd.pointer("/spec/versions/0/schema/openAPIV3Schema/properties")
                    .is_some(),
                "{kind}: the real schema"
            );
        }
    }
}
