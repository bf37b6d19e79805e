//! `liveproof release show`: what it prints, and that values and rendered Secret data stay hidden.

use liveproof_helm::show::{self, VALUES_REDACTED_HEADER};
use liveproof_helm::{decode, encode_secret, Limits, Release, StoredRelease, Values};
use serde_json::{json, Value};

const SECRETS: [&str; 3] = [
    "hunter2-s3cr3t",
    "tok_live_9f8e7d",
    // base64 of hunter2-s3cr3t, as the rendered Secret carries it.
    "aHVudGVyMi1zM2NyM3Q=",
];

fn inventory_json() -> Value {
    serde_json::from_str(include_str!("fixtures/helm3-release-inventory-v34.json"))
        .expect("fixture is JSON")
}

fn stored(release: &Value) -> StoredRelease {
    decode(&encode_secret(release), &Limits::default()).expect("decodes")
}

fn inventory() -> Release {
    stored(&inventory_json()).release
}

fn assert_no_secret(text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} leaked in:\n{text}");
    }
}

#[test]
fn values_debug_and_display_never_show_a_value() {
    let release = inventory();
    assert_no_secret(&format!("{:?}", release.config));
    assert_no_secret(&format!("{:#?}", release.config));
    assert_no_secret(&release.config.to_string());
    assert_eq!(release.config.to_string(), "<redacted>");
    // Nor does the Debug of the whole release (its manifest renders a Secret).
    assert_no_secret(&format!("{release:?}"));
    assert_no_secret(&format!("{:#?}", release.hooks));
}

#[test]
fn redacted_values_keep_every_key_and_array_length() {
    let values = Values::new(json!({
        "database": {"host": "db.apps.svc", "password": "hunter2-s3cr3t", "port": 5432},
        "extraArgs": ["--verbose", "--api-token=tok_live_9f8e7d"],
        "enabled": true,
        "nothing": null,
    }));
    assert_eq!(
        values.redacted(),
        json!({
            "database": {"host": "<redacted>", "password": "<redacted>", "port": "<redacted>"},
            "extraArgs": ["<redacted>", "<redacted>"],
            "enabled": "<redacted>",
            "nothing": "<redacted>",
        })
    );
    assert_eq!(values.expose()["database"]["port"], 5432);
}

#[test]
fn values_are_redacted_unless_asked_for() {
    let release = inventory();
    let redacted = show::values(&release, false);
    assert!(redacted.starts_with(&format!(
        "{VALUES_REDACTED_HEADER}\nUSER-SUPPLIED VALUES:\n"
    )));
    for key in [
        "database:",
        "password:",
        "host:",
        "image:",
        "tag:",
        "replicas:",
        "extraArgs:",
    ] {
        assert!(redacted.contains(key), "{key} missing from:\n{redacted}");
    }
    assert_no_secret(&redacted);
    assert!(!redacted.contains("db.apps.svc"));
    assert!(!redacted.contains("1.8.0"));

    let shown = show::values(&release, true);
    assert!(!shown.contains(VALUES_REDACTED_HEADER));
    assert!(shown.contains("hunter2-s3cr3t"), "{shown}");
    assert!(shown.contains("tok_live_9f8e7d"), "{shown}");
    assert!(shown.contains("db.apps.svc"), "{shown}");
    let yaml = shown.trim_start_matches("USER-SUPPLIED VALUES:\n");
    let parsed: Value = serde_yaml::from_str(yaml).expect("values print as YAML");
    assert_eq!(&parsed, release.config.expose());
}

#[test]
fn empty_values_print_as_an_empty_map() {
    let mut release = inventory_json();
    release.as_object_mut().expect("object").remove("config");
    let release = stored(&release).release;
    assert!(release.config.is_empty());
    assert!(show::values(&release, true).ends_with("USER-SUPPLIED VALUES:\n{}\n"));
}

#[test]
fn metadata_reads_like_helm_get_metadata() {
    assert_eq!(
        show::metadata(&stored(&inventory_json())),
        "NAME: inventory\n\
         CHART: inventory\n\
         VERSION: 0.4.2\n\
         APP_VERSION: 1.8.0\n\
         NAMESPACE: apps\n\
         REVISION: 34\n\
         STATUS: deployed\n\
         DEPLOYED_AT: 2026-07-08T14:21:58Z\n\
         STORAGE: apps/Secret/sh.helm.release.v1.inventory.v34\n"
    );
}

#[test]
fn metadata_says_unknown_for_an_unreadable_deploy_time() {
    let mut release = inventory_json();
    release["info"]["last_deployed"] = json!("");
    assert!(show::metadata(&stored(&release)).contains("DEPLOYED_AT: unknown\n"));
}

#[test]
fn history_is_oldest_first_like_helm_history() {
    let mut revisions = Vec::new();
    for (version, status, chart, at, description) in [
        (
            34,
            "superseded",
            "0.4.2",
            "2026-07-08T14:21:58Z",
            "Upgrade complete",
        ),
        (
            33,
            "superseded",
            "0.4.1",
            "2026-07-01T09:05:00Z",
            "Upgrade complete",
        ),
        (
            35,
            "failed",
            "0.4.3",
            "",
            "Upgrade \"inventory\" failed: \x1b[31mtimed out\x1b[0m",
        ),
    ] {
        let mut release = inventory_json();
        release["version"] = json!(version);
        release["info"]["status"] = json!(status);
        release["info"]["last_deployed"] = json!(at);
        release["info"]["description"] = json!(description);
        release["chart"]["metadata"]["version"] = json!(chart);
        revisions.push(stored(&release));
    }
    let table = show::history(&revisions);
    let expected = "\
REVISION  UPDATED                   STATUS      CHART            APP VERSION  DESCRIPTION
33        Wed Jul  1 09:05:00 2026  superseded  inventory-0.4.1  1.8.0        Upgrade complete
34        Wed Jul  8 14:21:58 2026  superseded  inventory-0.4.2  1.8.0        Upgrade complete
35        -                         failed      inventory-0.4.3  1.8.0        Upgrade \"inventory\" failed: ?[31mtimed out?[0m
";
    assert_eq!(table, expected);
    assert!(
        !table.contains('\x1b'),
        "terminal escapes from storage are neutralised"
    );
}

#[test]
fn manifest_prints_every_document_with_secret_data_redacted() {
    let release = inventory();
    let printed = show::manifest(&release);
    assert!(printed.starts_with("---\n# Source: inventory/templates/secret.yaml\n"));
    assert!(printed.contains("# Secret data redacted by liveproof\n"));
    assert!(printed.contains("password: <redacted>"), "{printed}");
    // Non-Secret documents are printed exactly as rendered.
    let service_start = release
        .manifest
        .find("# Source: inventory/templates/service.yaml")
        .expect("service in manifest");
    assert!(printed.contains(&release.manifest[service_start..]));
    assert_eq!(printed.matches("---\n").count(), 3);
    // The Deployment's inline env value is the chart's own doing and is what `helm get
    // manifest` shows; only Secret objects are redacted here.
    let secret_doc = printed
        .split("---\n")
        .find(|doc| doc.contains("kind: Secret"))
        .expect("secret document");
    assert_no_secret(secret_doc);
}
