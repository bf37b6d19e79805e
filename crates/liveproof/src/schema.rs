//! `liveproof schema`: the JSON Schema of the `-o json` report, derived from the model types
//! themselves (schemars), so the schema and the report cannot drift apart.

use std::io::Write;

use liveproof_evidence::fleet::ClusterResult;
use liveproof_evidence::{Report, SCHEMA};
use serde_json::Value;

/// The schema of the `liveproof/v1` report, as a JSON value: one cluster's report, and the
/// fleet's (`verify --context A --context B`, `--all-contexts`), which is the same report with
/// `clusters` added.
pub fn report_schema() -> Value {
    let mut generator = schemars::SchemaGenerator::default();
    let clusters = generator.subschema_for::<Vec<ClusterResult>>().to_value();
    let mut schema = generator.into_root_schema_for::<Report>().to_value();
    if let Some(root) = schema.as_object_mut() {
        root.insert(
            "description".to_string(),
            Value::from(
                "The report of `liveproof verify -o json`. `verdict` is `live` only when artifact \
                 evidence proves the change is running; each evidence item says where it was read. \
                 Over several clusters, `clusters` holds each cluster's own report (or why it \
                 could not be verified), `verdict` is the worst of theirs and `targets` lists \
                 every cluster's targets.",
            ),
        );
    }
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        let mut clusters = clusters;
        if let Some(object) = clusters.as_object_mut() {
            object.insert(
                "description".to_string(),
                Value::from(
                    "Only over several clusters: each cluster, in the order asked, with its \
                     verdict and its report, or the error that kept it from being verified \
                     (then its verdict is unproven).",
                ),
            );
        }
        properties.insert("clusters".to_string(), clusters);
    }
    // The model keeps `schema` a String; the contract fixes its value, for the report and for
    // each cluster's report within it.
    for at in ["/properties/schema", "/$defs/Report/properties/schema"] {
        if let Some(field) = schema.pointer_mut(at) {
            *field = serde_json::json!({
                "description": "The report format and its version.",
                "const": SCHEMA,
            });
        }
    }
    schema
}

pub fn run(_args: &crate::cli::SchemaArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    // Rendered first, so a closed pipe surfaces as the io::Error main() knows to ignore.
    let text = serde_json::to_string_pretty(&report_schema())?;
    writeln!(out, "{text}")?;
    Ok(0)
}
