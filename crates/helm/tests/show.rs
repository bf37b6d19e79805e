//! `liveproof release show`: the manifest as decoding lets it be shown, and that values and
//! rendered Secret data stay hidden. (The sections' layout is tested in the report crate.)

use liveproof_helm::show;
use liveproof_helm::{Release, Values};
use liveproof_testkit::helm::{assert_no_secret, inventory, inventory_json, stored, SECRETS};
use serde_json::json;

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
fn manifest_prints_every_document_with_secret_data_redacted() {
    let release = inventory();
    let printed = show::manifest(&release);
    assert!(printed.starts_with("---\n# Source: inventory/templates/secret.yaml\n"));
    assert!(printed.contains("# Secret data redacted by liveproof\n"));
    assert!(printed.contains("password: <redacted>"), "{printed}");
    // A document with nothing that looks like a credential is printed exactly as rendered.
    let service_start = release
        .manifest
        .find("# Source: inventory/templates/service.yaml")
        .expect("service in manifest");
    let deployment_start = release
        .manifest
        .find("---\n# Source: inventory/templates/deployment.yaml")
        .expect("deployment in manifest");
    assert!(printed.contains(&release.manifest[service_start..deployment_start]));
    assert_eq!(printed.matches("---\n").count(), 3);
    // The Deployment's inline env value DATABASE_PASSWORD is the chart's own doing and `helm
    // get manifest` shows it; liveproof shows it redacted, its neighbour as rendered.
    assert!(
        printed.contains("# values that look like credentials redacted by liveproof\n"),
        "{printed}"
    );
    assert!(printed.contains("value: db.apps.svc"), "{printed}");
    assert_no_secret(&printed);
    let (_, credentials) = show::manifest_and_credentials(&release);
    let listed: Vec<String> = credentials.iter().map(ToString::to_string).collect();
    assert_eq!(
        listed,
        ["Deployment/inventory .spec.template.spec.containers[0].env[1].value"]
    );
}

/// Issue 32, point 11: values that look like credentials are redacted in every document, not
/// only in Secrets — a DSN's password in a ConfigMap, a config file it holds, an env entry, a
/// flag — and each is listed by where it is; what does not look like one is kept.
#[test]
fn credentials_outside_secrets_are_redacted_where_they_are() {
    let manifest = format!(
        "---\n# Source: web/templates/config.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  DATABASE_URL: postgres://app:{CANARY}@db:5432/shop\n  API_TOKEN: {CANARY}\n  app.yaml: |\n    db:\n      host: db\n      password: {CANARY}\n  LOG_LEVEL: debug\n\
         ---\n# Source: web/templates/job.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\nspec:\n  template:\n    spec:\n      containers:\n      - name: m\n        image: migrate:1\n        args: [\"--db-password\", \"{CANARY}\", \"--dsn=host=db password={CANARY}\"]\n"
    );
    let (printed, credentials) = show::manifest_and_credentials(&release_with_manifest(&manifest));
    assert_no_canary(&printed, "credentials outside Secrets");
    assert!(
        printed.contains("postgres://app:***@db:5432/shop"),
        "{printed}"
    );
    assert!(printed.contains("LOG_LEVEL: debug"), "{printed}");
    assert!(printed.contains("host=db password=***"), "{printed}");
    let listed: Vec<String> = credentials.iter().map(ToString::to_string).collect();
    assert_eq!(
        listed,
        [
            "ConfigMap/web-config .data.DATABASE_URL",
            "ConfigMap/web-config .data.API_TOKEN",
            "ConfigMap/web-config .data[\"app.yaml\"]",
            "Job/migrate .spec.template.spec.containers[0].args[1]",
            "Job/migrate .spec.template.spec.containers[0].args[2]",
        ]
    );
    // A document YAML refuses is printed as rendered, with what looks like a credential in
    // its text masked.
    let refused = format!(
        "---\nkind: ConfigMap\nmetadata:\n  name: x\n  name: y\ndata:\n  url: https://u:{CANARY}@h/\n"
    );
    let printed = show::manifest(&release_with_manifest(&refused));
    assert_no_canary(&printed, "a ConfigMap YAML refuses");
    assert!(printed.contains("https://u:***@h/"), "{printed}");
}

/// A value only a rendered Secret holds, raw (`stringData`) and as `data` carries it.
const CANARY: &str = "c4n4ry-hunter2";
const CANARY_B64: &str = "YzRuNHJ5LWh1bnRlcjI=";

fn release_with_manifest(manifest: &str) -> Release {
    let mut release = inventory_json();
    release["manifest"] = json!(manifest);
    stored(&release).release
}

fn assert_no_canary(printed: &str, shape: &str) {
    for secret in [CANARY, CANARY_B64] {
        assert!(
            !printed.contains(secret),
            "{shape}: {secret} leaked in:\n{printed}"
        );
    }
}

const CONFIGMAP: &str =
    "# Source: inventory/templates/flags.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory-flags\ndata:\n  mode: fast\n";

/// Every shape `release show --manifest` once printed a Secret raw in: whatever cannot be
/// proven not to be a Secret is redacted.
#[test]
fn manifest_redacts_whatever_may_be_a_secret() {
    let secret = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {CANARY_B64}\nstringData:\n  raw: {CANARY}\n"
    );
    let indented = secret.trim_end().replace('\n', "\n    ");
    let bomb = {
        let mut text = format!(
            "kind: Secret\ndata:\n  password: {CANARY_B64}\na0: &a0 [{CANARY_B64}, {CANARY}]\n"
        );
        for i in 1..12 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [prev.as_str(); 9].join(", ")
            ));
        }
        text
    };
    let deep = format!(
        "kind: Secret\ndata:\n  password: {CANARY_B64}\nx: {}{}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    let shapes: Vec<(&str, String, Option<&str>)> = vec![
        ("kind: List", format!("---\n{CONFIGMAP}---\napiVersion: v1\nkind: List\nitems:\n  - {indented}\n"), None),
        ("SecretList items without kind", format!("---\nkind: SecretList\nitems:\n- data: {{password: {CANARY_B64}}}\n  stringData: {{raw: {CANARY}}}\n"), None),
        ("separator with trailing space", format!("---\n{CONFIGMAP}--- \n{secret}"), None),
        ("separator with a comment", format!("---\n{CONFIGMAP}---   # the db secret\n{secret}"), None),
        ("object on the separator line", format!("---\n{CONFIGMAP}--- {{kind: Secret, data: {{password: {CANARY_B64}}}}}\n"), None),
        ("document end marker", format!("---\n{secret}...\n"), None),
        ("bare document after an end marker", format!("---\n{CONFIGMAP}---\nkind: ConfigMap\n...\n{secret}"), Some("not valid YAML")),
        ("kind not a plain string", format!("---\nkind: !Secret Secret\ndata: {{password: {CANARY_B64}}}\n"), None),
        ("no kind at all", format!("---\ndata: {{password: {CANARY_B64}}}\n"), None),
        ("data not a mapping", format!("---\nkind: Secret\ndata: [{CANARY_B64}]\nstringData: {CANARY}\n"), None),
        ("data from a merge key", format!("---\nkind: Secret\n<<: {{data: {{password: {CANARY_B64}}}}}\n"), None),
        ("last-applied annotation", format!("---\nkind: Secret\nmetadata:\n  name: db\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{{\"data\":{{\"password\":\"{CANARY_B64}\"}}}}'\n"), None),
        ("duplicate key", format!("---\n{CONFIGMAP}---\n{secret}data:\n  again: {CANARY_B64}\n"), Some("duplicate key")),
        ("a tab", format!("---\n{CONFIGMAP}---\nkind: Secret\ndata:\n\tpassword: {CANARY_B64}\n"), Some("not valid YAML")),
        ("alias bomb", format!("---\n{CONFIGMAP}---\n{bomb}"), Some("not valid YAML")),
        ("nested past the limit", format!("---\n{CONFIGMAP}---\n{deep}"), Some("nested deeper than 128 levels")),
    ];
    for (shape, manifest, placeholder) in shapes {
        let printed = show::manifest(&release_with_manifest(&manifest));
        assert_no_canary(&printed, shape);
        match placeholder {
            Some(why) => {
                let note = printed
                    .lines()
                    .find(|l| l.starts_with("# liveproof: document "))
                    .unwrap_or_else(|| panic!("{shape}: no placeholder in:\n{printed}"));
                assert!(note.contains(why), "{shape}: {note}");
                assert!(note.contains("not shown"), "{shape}: {note}");
            }
            None => assert!(
                printed.contains("<redacted>"),
                "{shape}: nothing redacted in:\n{printed}"
            ),
        }
        // What is provably not a Secret is still printed as rendered.
        if manifest.contains(CONFIGMAP) {
            assert!(printed.contains(CONFIGMAP), "{shape}:\n{printed}");
        }
    }
}

#[test]
fn plain_secrets_keep_their_redaction_format() {
    let manifest = format!(
        "---\n# Source: inventory/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {CANARY_B64}\n"
    );
    let printed = show::manifest(&release_with_manifest(&manifest));
    assert_eq!(
        printed,
        "---\n# Source: inventory/templates/secret.yaml\n# Secret data redacted by liveproof\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: <redacted>\n"
    );
}

/// A manifest with nothing to redact is printed byte for byte as Helm stored it, blank lines
/// between documents included: `helm get manifest` does, and real Helm leaves one after every
/// template that ends in a newline (found comparing with helm v4.3.2 and v3.21.4).
#[test]
fn manifest_without_secrets_is_printed_as_helm_stored_it() {
    let manifest = format!("---\n{CONFIGMAP}\n---\n# Source: inventory/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n");
    let printed = show::manifest(&release_with_manifest(&manifest));
    assert_eq!(printed, manifest);
}

/// Values print as YAML that Helm (YAML 1.1) reads back as the same values: `"on"` stays a
/// string, not the bool a bare `on` is to Helm (found comparing with `helm get values`).
/// Documents whose text plainly names a kind that is no Secret are printed as rendered without
/// being parsed (what makes a large manifest fast): even one YAML would refuse further in is
/// printed as `helm get manifest` prints it, while a Secret so written is still not shown.
#[test]
fn documents_plainly_not_secrets_are_not_parsed() {
    let refused_further_in = "# Source: inventory/templates/flags.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\n  labels:\n    app: a\n    app: b\ndata:\n  mode: fast\n";
    let printed = show::manifest(&release_with_manifest(&format!(
        "---\n{refused_further_in}"
    )));
    assert_eq!(printed, format!("---\n{refused_further_in}"));

    let secret = refused_further_in
        .replace("kind: ConfigMap", "kind: Secret")
        .replace("mode: fast", &format!("password: {CANARY_B64}"));
    let printed = show::manifest(&release_with_manifest(&format!("---\n{secret}")));
    assert_no_canary(&printed, "a Secret YAML refuses");
    assert!(printed.contains("not shown"), "{printed}");
    assert!(printed.contains("duplicate key"), "{printed}");
}

#[test]
fn the_manifest_written_out_is_the_manifest() {
    let release = inventory();
    let mut out = Vec::new();
    show::write_manifest(&release, &mut out).expect("writes into memory");
    assert_eq!(
        String::from_utf8(out).expect("text"),
        show::manifest(&release)
    );
    let mut empty = inventory_json();
    empty["manifest"] = json!("");
    let release = stored(&empty).release;
    let mut out = Vec::new();
    show::write_manifest(&release, &mut out).expect("writes into memory");
    assert!(out.is_empty());
}

/// A manifest of many 64 KiB pieces is redacted throughout, and what is not a
/// Secret is printed as rendered, in order.
#[test]
fn a_large_manifest_is_redacted_throughout() {
    let secret = format!(
        "# Source: inventory/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {CANARY_B64}\n"
    );
    let redacted = "---\n# Source: inventory/templates/secret.yaml\n# Secret data redacted by liveproof\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: <redacted>\n";
    let mut manifest = format!("---\n{secret}");
    let mut expected = redacted.to_owned();
    let mut i = 0;
    while manifest.len() < 3 << 20 {
        let configmap = CONFIGMAP.replace("inventory-flags", &format!("flags-{i}"));
        manifest.push_str(&format!("---\n{configmap}"));
        expected.push_str(&format!("---\n{configmap}"));
        i += 1;
    }
    manifest.push_str(&format!("---\n{secret}"));
    expected.push_str(redacted);
    let printed = show::manifest(&release_with_manifest(&manifest));
    assert_no_canary(&printed, "a large manifest");
    assert_eq!(printed, expected);
}

/// The manifest pushed a piece at a time, in pieces of any size, is printed as when pushed
/// whole: documents split across pieces, `---` lines cut anywhere (`--- # note`, `---x` which
/// is no separator, CRLF), blank documents, a leading and a trailing `---`, no final newline,
/// Secrets, Lists and a document YAML refuses.
#[test]
fn a_manifest_pushed_in_pieces_prints_as_when_whole() {
    let secret = format!(
        "# Source: x/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {}\n",
        SECRETS[2]
    );
    let manifests = [
        inventory().manifest,
        String::new(),
        "---".to_owned(),
        "---\n".to_owned(),
        format!("---\n{secret}---\n\n--- # note\n{CONFIGMAP}---x: 1\n----\n---\r\n{CONFIGMAP}"),
        format!("{CONFIGMAP}---\n---\n{secret}---"),
        format!(
            "kind: List\nitems:\n- {{kind: Secret, data: {{a: {}}}}}\n---\n{CONFIGMAP}",
            SECRETS[2]
        ),
        format!("{CONFIGMAP}---\nkey: [unclosed\n---\t\n{secret}no newline at the end"),
    ];
    for manifest in manifests {
        let whole = show::manifest(&release_with_manifest(&manifest));
        assert_no_secret(&whole);
        for size in [1, 2, 3, 4, 5, 7, 13, 64, 1000] {
            let mut out = Vec::new();
            let mut writer = show::ManifestWriter::new(&mut out);
            let mut rest = manifest.as_str();
            while !rest.is_empty() {
                let mut at = size.min(rest.len());
                while !rest.is_char_boundary(at) {
                    at += 1;
                }
                writer.push(&rest[..at]).expect("into memory");
                rest = &rest[at..];
            }
            writer.finish().expect("into memory");
            assert_eq!(
                String::from_utf8(out).expect("text"),
                whole,
                "pieces of {size} of {manifest:?}"
            );
        }
    }
}
