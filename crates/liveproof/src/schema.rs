//! `liveproof schema`: the JSON Schema of the `-o json` report, derived from the model types
//! themselves (schemars), so the schema and the report cannot drift apart.

use std::io::Write;

use liveproof_evidence::{Report, SCHEMA};
use serde_json::Value;

/// The schema of the `liveproof/v1` report, as a JSON value.
pub fn report_schema() -> Value {
    let mut schema = schemars::schema_for!(Report).to_value();
    if let Some(root) = schema.as_object_mut() {
        root.insert(
            "description".to_string(),
            Value::from(
                "The report of `liveproof verify -o json`. `verdict` is `live` only when artifact \
                 evidence proves the change is running; each evidence item says where it was read.",
            ),
        );
    }
    // The model keeps `schema` a String; the contract fixes its value.
    if let Some(field) = schema.pointer_mut("/properties/schema") {
        *field = serde_json::json!({
            "description": "The report format and its version.",
            "const": SCHEMA,
        });
    }
    schema
}

pub fn run(_args: &crate::cli::SchemaArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    // Rendered first, so a closed pipe surfaces as the io::Error main() knows to ignore.
    let text = serde_json::to_string_pretty(&report_schema())?;
    writeln!(out, "{text}")?;
    Ok(0)
}
