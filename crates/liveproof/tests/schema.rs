//! `liveproof schema`: the schema it prints is the shape `-o json` really has. Real reports of
//! the story corpus (not_live, live, unproven, a Helm target followed `via` it to its Deployment)
//! validate against it, and a document that breaks the contract does not. So do the error
//! documents `-o json` prints on exit 2.

use liveproof_testkit::binary as common;

use serde_json::Value;

fn schema() -> Value {
    let run = common::liveproof().arg("schema").run_blocking();
    run.expect_code(0).json()
}

fn validator() -> jsonschema::Validator {
    let schema = schema();
    jsonschema::draft202012::new(&schema).expect("the schema is a valid draft 2020-12 schema")
}

/// The story's own arguments, offline on its cluster dump, as JSON.
fn story_report(story: &str) -> Value {
    let run = common::liveproof()
        .story(story)
        .offline()
        .json()
        .run_blocking();
    assert_ne!(run.code, 2, "{story} failed: {}", run.stderr);
    run.json()
}

fn assert_valid(validator: &jsonschema::Validator, story: &str, report: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{story}: the report does not match the schema:\n{}\n{report:#}",
        errors.join("\n")
    );
}

#[test]
fn the_schema_describes_the_liveproof_v1_report() {
    let schema = schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    // A report, or (on exit 2) the error document.
    let report = &schema["oneOf"][0];
    assert_eq!(report["properties"]["schema"]["const"], "liveproof/v1");
    let required: Vec<&str> = report["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for field in ["schema", "verdict", "change", "targets"] {
        assert!(required.contains(&field), "{field} is required");
    }
    let verdicts = &schema["$defs"]["Verdict"]["enum"];
    assert_eq!(
        verdicts,
        &serde_json::json!(["not_live", "unproven", "superseded", "live"])
    );
    let statuses = &schema["$defs"]["Status"]["enum"];
    assert_eq!(
        statuses,
        &serde_json::json!(["pass", "fail", "unknown", "skip"])
    );
    let checks = schema["$defs"]["Check"]["enum"]
        .as_array()
        .expect("the check names");
    assert_eq!(checks.len(), 14, "every check docs/design.md names");
    assert!(checks.contains(&Value::from("traffic_current")));
    assert!(checks.contains(&Value::from("pod_restarted")));
}

#[test]
fn real_reports_validate_against_the_printed_schema() {
    let validator = validator();
    let stories = [
        ("flux-chartversion-not-bumped", "not_live"),
        ("flux-chartversion-bumped-v35-live", "live"),
        ("no-change-time-given-rollout-done", "unproven"),
        ("argocd-synced-but-pods-old", "not_live"),
    ];
    let mut saw_via = false;
    let mut saw_next_step = false;
    for (story, verdict) in stories {
        let report = story_report(story);
        assert_eq!(report["verdict"], verdict, "{story}: {report:#}");
        assert_valid(&validator, story, &report);
        let targets = report["targets"].as_array().expect("targets");
        saw_via |= targets.iter().any(|t| t["via"].is_string());
        saw_next_step |= targets.iter().any(|t| t["next_step"].is_string());
    }
    assert!(saw_via, "a Helm target followed to its workloads (`via`)");
    assert!(saw_next_step, "a not_live target with its next step");
}

#[test]
fn a_report_that_breaks_the_contract_is_rejected() {
    let validator = validator();
    let report = story_report("flux-chartversion-bumped-v35-live");
    assert!(validator.is_valid(&report));

    let mut maybe = report.clone();
    maybe["verdict"] = Value::from("maybe");
    assert!(
        !validator.is_valid(&maybe),
        "\"verdict\": \"maybe\" is no verdict"
    );

    let mut bad_status = report.clone();
    bad_status["targets"][0]["evidence"][0]["status"] = Value::from("ok");
    assert!(
        !validator.is_valid(&bad_status),
        "a status outside pass/fail/unknown/skip"
    );

    let mut unknown_check = report.clone();
    unknown_check["targets"][0]["evidence"][0]["check"] = Value::from("dashboard_green");
    assert!(
        !validator.is_valid(&unknown_check),
        "a check docs/design.md does not name"
    );

    let mut no_source = report.clone();
    if let Some(item) = no_source["targets"][0]["evidence"][0].as_object_mut() {
        item.remove("source");
    }
    assert!(
        !validator.is_valid(&no_source),
        "evidence without where it was read"
    );

    let mut no_source_ref = report.clone();
    if let Some(item) = no_source_ref["targets"][0]["evidence"][0].as_object_mut() {
        item.remove("source_ref");
    }
    assert!(
        !validator.is_valid(&no_source_ref),
        "evidence without where it was read, as data"
    );

    let mut no_field = report.clone();
    if let Some(source_ref) = no_field["targets"][0]["evidence"][0]["source_ref"].as_object_mut() {
        source_ref.remove("field");
    }
    assert!(
        !validator.is_valid(&no_field),
        "a source_ref lacks none of its keys: an empty field says there is none"
    );

    let mut other_schema = report;
    other_schema["schema"] = Value::from("liveproof/v2");
    assert!(!validator.is_valid(&other_schema));
}

/// `liveproof ARGS`, which must exit 2: its stdout, the error document.
fn error_document(args: &[&str]) -> Value {
    let run = common::liveproof().args(args).run_blocking();
    assert_eq!(run.code, 2, "{args:?}");
    run.json()
}

#[test]
fn error_documents_validate_against_the_printed_schema() {
    let validator = validator();
    let missing = liveproof_testkit::story::scenarios_dir().join("no-such-dump.yaml");
    for (what, args) in [
        (
            "a refused --since",
            vec![
                "verify",
                "deploy/inventory",
                "--since",
                "tomorrow",
                "-o",
                "json",
            ],
        ),
        (
            "a flag clap does not know",
            vec!["verify", "deploy/inventory", "--bogus", "-o", "json"],
        ),
        (
            "a --from that does not exist",
            vec![
                "verify",
                "deploy/inventory",
                "--from",
                missing.to_str().expect("utf-8 path"),
                "-o",
                "json",
            ],
        ),
    ] {
        let doc = error_document(&args);
        assert!(doc["error"]["message"].is_string(), "{what}: {doc:#}");
        assert_valid(&validator, what, &doc);
    }

    // Neither a report nor an error: refused.
    let mut both = error_document(&["verify", "deploy/x", "--since", "tomorrow", "-o", "json"]);
    both["error"] = Value::from("a bare string");
    assert!(!validator.is_valid(&both), "an error without a message");
    let mut other_schema = error_document(&["verify", "deploy/x", "--bogus", "-o", "json"]);
    other_schema["schema"] = Value::from("liveproof/v2");
    assert!(!validator.is_valid(&other_schema));
}
