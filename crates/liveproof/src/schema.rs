//! `liveproof schema`: the JSON Schema of the `-o json` report, derived from the model types
//! themselves (schemars), so the schema and the report cannot drift apart.

use std::io::Write;

use liveproof_evidence::fleet::ClusterResult;
use liveproof_evidence::{Report, SCHEMA};
use liveproof_report::ErrorReport;
use serde_json::Value;

/// The schema of the `liveproof/v1` report (an MCP tool's output schema, which must describe
/// an object), as a JSON value: one cluster's report, and the
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

/// What `liveproof schema` prints: every document `-o json` prints as `liveproof/v1`, that is
/// the report ([`report_schema`]) or, on exit 2, the error document that says why there is
/// none. One of the two, with one definitions table for both.
pub fn document_schema() -> Value {
    let mut report = report_schema();
    let mut generator = schemars::SchemaGenerator::default();
    let error = generator.subschema_for::<ErrorReport>().to_value();
    let (dialect, mut definitions) = match report.as_object_mut() {
        Some(root) => (
            root.remove("$schema"),
            match root.remove("$defs") {
                Some(Value::Object(defs)) => defs,
                _ => serde_json::Map::new(),
            },
        ),
        None => (None, serde_json::Map::new()),
    };
    definitions.extend(generator.definitions().clone());
    let mut schema = serde_json::json!({
        "$schema": dialect,
        "title": SCHEMA,
        "description": "What `liveproof verify -o json` prints: the report, or on exit 2 (a \
            usage or operational error: bad flags, a cluster that cannot be reached, a --timeout \
            that ran out, a bad snapshot) one document with `error` in its place, saying what \
            was wrong and how to fix it. stale, lint and demo answer an error the same way \
            under -o json.",
        "oneOf": [report, error],
        "$defs": definitions,
    });
    if let Some(field) = schema.pointer_mut("/$defs/ErrorReport/properties/schema") {
        *field = serde_json::json!({
            "description": "The report format and its version.",
            "const": SCHEMA,
        });
    }
    schema
}

pub fn run(_args: &crate::cli::SchemaArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    // Rendered first, so a closed pipe surfaces as the io::Error main() knows to ignore.
    let text = serde_json::to_string_pretty(&document_schema())?;
    writeln!(out, "{text}")?;
    Ok(0)
}
