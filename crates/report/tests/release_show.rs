//! `liveproof release show`'s sections as helm prints them: `helm get metadata`, `helm get
//! values` (redacted unless asked for) and `helm history`, drawn from decoded releases.

use liveproof_report::release::{
    history, metadata, values, Values, ValuesNote, VALUES_REDACTED_HEADER,
};
use liveproof_testkit::helm::{assert_no_secret, inventory, inventory_json, stored};
use serde_json::{json, Value};

#[test]
fn values_are_redacted_unless_asked_for() {
    let release = inventory();
    let redacted = values(&release, Values::Redacted(ValuesNote::ShowValuesFlag));
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

    let shown = values(&release, Values::AsStored);
    assert!(!shown.contains(VALUES_REDACTED_HEADER));
    assert!(shown.contains("hunter2-s3cr3t"), "{shown}");
    assert!(shown.contains("tok_live_9f8e7d"), "{shown}");
    assert!(shown.contains("db.apps.svc"), "{shown}");
    let yaml = shown.trim_start_matches("USER-SUPPLIED VALUES:\n");
    let parsed: Value = serde_norway::from_str(yaml).expect("values print as YAML");
    assert_eq!(&parsed, release.config.expose());
}

#[test]
fn empty_values_print_as_an_empty_map() {
    let mut release = inventory_json();
    release.as_object_mut().expect("object").remove("config");
    let release = stored(&release).release;
    assert!(release.config.is_empty());
    assert!(values(&release, Values::AsStored).ends_with("USER-SUPPLIED VALUES:\n{}\n"));
}

#[test]
fn metadata_reads_like_helm_get_metadata() {
    assert_eq!(
        metadata(&stored(&inventory_json())),
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
    assert!(metadata(&stored(&release)).contains("DEPLOYED_AT: unknown\n"));
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
    let table = history(&revisions);
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
fn values_print_as_yaml_helm_reads_back_the_same() {
    let mut release = inventory_json();
    release["config"] = json!({
        "feature": "on", "legacy": "yes", "No": "n", "time": "1:30", "version": "1.10",
        "image": "registry.example:5000/acme/web:v1", "replicas": 2, "debug": false,
        "empty": "", "nothing": null, "list": ["off", {"a": "b", "c": ["d"]}], "nested": {"k": "line1\nline2"},
        "blank": {}, "none": [],
    });
    let printed = values(&stored(&release).release, Values::AsStored);
    let yaml = printed
        .strip_prefix("USER-SUPPLIED VALUES:\n")
        .expect("heading");
    let expected = "\"No\": \"n\"\nblank: {}\ndebug: false\nempty: \"\"\nfeature: \"on\"\nimage: registry.example:5000/acme/web:v1\nlegacy: \"yes\"\nlist:\n- \"off\"\n- a: b\n  c:\n  - d\nnested:\n  k: \"line1\\nline2\"\nnone: []\nnothing: null\nreplicas: 2\ntime: \"1:30\"\nversion: \"1.10\"\n";
    assert_eq!(yaml, expected);
    // And any YAML reader gets the same values back.
    let back: serde_json::Value = serde_norway::from_str(yaml).expect("YAML");
    assert_eq!(back, release["config"]);
}

/// Over MCP the values are redacted the same, and the first line says they are never shown
/// there: the tool has no `--show-values` to point at.
#[test]
fn over_mcp_the_note_says_values_are_never_shown() {
    let release = inventory();
    let cli = values(&release, Values::Redacted(ValuesNote::ShowValuesFlag));
    let mcp = values(&release, Values::Redacted(ValuesNote::NeverOverMcp));
    assert!(
        mcp.starts_with(
            "# values redacted: they are never shown over MCP\nUSER-SUPPLIED VALUES:\n"
        ),
        "{mcp}"
    );
    assert!(!mcp.contains("--show-values"), "{mcp}");
    assert_no_secret(&mcp);
    // The same values under either first line.
    assert_eq!(
        mcp.split_once('\n').map(|(_, rest)| rest),
        cli.split_once('\n').map(|(_, rest)| rest)
    );
}
