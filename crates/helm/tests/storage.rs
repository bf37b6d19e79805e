//! Decoding Helm's release storage: round trips through the forms Helm writes, and hostile input.

use std::io::Write;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use flate2::write::GzEncoder;
use flate2::Compression;
use jiff::Timestamp;
use liveproof_helm::{
    decode, decode_parts, encode_configmap, encode_secret, encode_secret_uncompressed,
    is_release_storage, labelled_revision, newest, stores_release, Base64Layer, DecodeError,
    Limits, Parts, Release, ReleaseStatus, StorageDriver,
};
use serde_json::{json, Value};

const OBJECT: &str = "apps/Secret/sh.helm.release.v1.inventory.v34";

fn inventory_v34() -> Value {
    let text = include_str!("fixtures/helm3-release-inventory-v34.json");
    serde_json::from_str(text).expect("fixture is JSON")
}

fn ts(text: &str) -> Timestamp {
    text.parse().expect("test timestamp")
}

/// A Secret named like Helm's, whose `data.release` is set to exactly `release` (already the
/// Kubernetes-encoded text), for feeding broken payloads.
fn secret_with(release: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "sh.helm.release.v1.inventory.v34",
            "namespace": "apps",
            "labels": {"owner": "helm", "name": "inventory", "status": "deployed", "version": "34"}
        },
        "type": "helm.sh/release.v1",
        "data": {"release": release}
    })
}

/// A Secret holding `payload` as Helm's inner bytes (gzip or JSON), both base64 layers applied.
fn secret_holding(payload: &[u8]) -> Value {
    secret_with(&B64.encode(B64.encode(payload)))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}

fn decode_err(obj: &Value, limits: &Limits) -> DecodeError {
    match decode(obj, limits) {
        Ok(stored) => panic!("expected an error, decoded {:?}", stored.release),
        Err(err) => err,
    }
}

fn assert_names_object(err: &DecodeError) {
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{OBJECT}: ")),
        "error does not name the object: {message}"
    );
    assert_eq!(err.object(), OBJECT);
}

#[test]
fn a_helm3_release_decodes_through_a_secret_built_the_helm_way() {
    let secret = encode_secret(&inventory_v34());
    assert!(is_release_storage(&secret));
    let stored = decode(&secret, &Limits::default()).expect("decodes");

    assert_eq!(stored.object.driver, StorageDriver::Secret);
    assert_eq!(stored.object.to_string(), OBJECT);
    let release = &stored.release;
    assert_eq!(release.name, "inventory");
    assert_eq!(release.namespace, "apps");
    assert_eq!(release.version, 34);
    assert_eq!(release.info.status, ReleaseStatus::Deployed);
    assert_eq!(release.info.description, "Upgrade complete");
    assert_eq!(
        release.info.first_deployed,
        Some(ts("2025-12-06T09:13:44.518247651Z"))
    );
    // Written with a +02:00 offset; the instant is what matters.
    assert_eq!(
        release.info.last_deployed,
        Some(ts("2026-07-08T14:21:58.734512893Z"))
    );
    assert_eq!(
        release.info.deleted, None,
        "Helm 3 writes a zero time as \"\""
    );
    assert_eq!(release.chart.metadata.name, "inventory");
    assert_eq!(release.chart.metadata.version, "0.4.2");
    assert_eq!(release.chart.metadata.app_version.as_deref(), Some("1.8.0"));
    assert!(release
        .manifest
        .starts_with("---\n# Source: inventory/templates/secret.yaml\n"));
    assert!(!release.manifest.contains("secretKeyRef"));
    assert_eq!(release.hooks.len(), 1);
    assert_eq!(release.hooks[0].name, "inventory-migrate");
    assert_eq!(release.hooks[0].kind, "Job");
    assert_eq!(
        release.hooks[0].path,
        "inventory/templates/migrate-job.yaml"
    );
    assert_eq!(release.hooks[0].events, ["pre-upgrade"]);
    assert_eq!(
        release.config.expose().pointer("/database/password"),
        Some(&json!("hunter2-s3cr3t"))
    );
}

#[test]
fn an_encoded_secret_is_labelled_and_named_like_helms() {
    let secret = encode_secret(&inventory_v34());
    assert_eq!(secret["kind"], "Secret");
    assert_eq!(secret["type"], "helm.sh/release.v1");
    assert_eq!(
        secret["metadata"]["name"],
        "sh.helm.release.v1.inventory.v34"
    );
    assert_eq!(secret["metadata"]["namespace"], "apps");
    let labels = &secret["metadata"]["labels"];
    assert_eq!(labels["owner"], "helm");
    assert_eq!(labels["name"], "inventory");
    assert_eq!(labels["status"], "deployed");
    assert_eq!(labels["version"], "34");
    // A settled revision was last written by Helm's Update, which sets modifiedAt.
    assert_eq!(
        labels["modifiedAt"],
        ts("2026-07-08T14:21:58Z").as_second().to_string()
    );
}

#[test]
fn the_secret_value_is_base64_of_base64_of_gzip() {
    let secret = encode_secret(&inventory_v34());
    let data = secret["data"]["release"].as_str().expect("a string");
    let once = B64.decode(data).expect("Kubernetes layer");
    let helm_text = std::str::from_utf8(&once).expect("Helm's layer is text");
    assert!(helm_text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)));
    let twice = B64.decode(helm_text).expect("Helm layer");
    assert_eq!(&twice[..3], &[0x1f, 0x8b, 0x08]);
}

#[test]
fn a_configmap_has_one_base64_layer_and_round_trips() {
    let configmap = encode_configmap(&inventory_v34());
    assert_eq!(configmap["kind"], "ConfigMap");
    assert!(configmap.get("type").is_none());
    let data = configmap["data"]["release"].as_str().expect("a string");
    assert_eq!(
        &B64.decode(data).expect("Helm layer")[..3],
        &[0x1f, 0x8b, 0x08]
    );

    let stored = decode(&configmap, &Limits::default()).expect("decodes");
    assert_eq!(stored.object.driver, StorageDriver::ConfigMap);
    assert_eq!(
        stored.object.to_string(),
        "apps/ConfigMap/sh.helm.release.v1.inventory.v34"
    );
    assert_eq!(stored.release.version, 34);
    assert_eq!(stored.release.chart.metadata.version, "0.4.2");
}

#[test]
fn plain_json_inside_helms_base64_is_accepted_as_helm_does() {
    let secret = encode_secret_uncompressed(&inventory_v34());
    let data = secret["data"]["release"].as_str().expect("a string");
    let inner = B64.decode(B64.decode(data).expect("k8s")).expect("helm");
    assert_eq!(inner.first(), Some(&b'{'));

    let gzipped = decode(&encode_secret(&inventory_v34()), &Limits::default()).expect("gzip");
    let plain = decode(&secret, &Limits::default()).expect("plain");
    assert_eq!(plain.release, gzipped.release);
}

#[test]
fn the_decoded_release_equals_the_json_read_directly() {
    let direct: Release = serde_json::from_value(inventory_v34()).expect("release JSON");
    let stored = decode(&encode_secret(&inventory_v34()), &Limits::default()).expect("decodes");
    assert_eq!(stored.release, direct);
}

#[test]
fn releases_from_kubectl_yaml_decode_too() {
    // `kubectl get secret -o yaml` of the same object, read back the way `--from` reads files.
    let yaml = serde_norway::to_string(&encode_secret(&inventory_v34())).expect("to yaml");
    let obj: Value = serde_norway::from_str(&yaml).expect("from yaml");
    assert_eq!(
        decode(&obj, &Limits::default())
            .expect("decodes")
            .release
            .version,
        34
    );
}

#[test]
fn helm_labels_alone_identify_storage_but_other_objects_are_refused() {
    let mut labelled = encode_secret(&inventory_v34());
    labelled["type"] = json!("Opaque");
    assert!(is_release_storage(&labelled));
    assert!(decode(&labelled, &Limits::default()).is_ok());

    let mut unlabelled = labelled.clone();
    unlabelled["metadata"]["labels"] = json!({});
    assert!(!is_release_storage(&unlabelled));
    let err = decode_err(&unlabelled, &Limits::default());
    assert!(
        matches!(err, DecodeError::NotReleaseStorage { .. }),
        "{err}"
    );
    assert_names_object(&err);

    let mut deployment = encode_configmap(&inventory_v34());
    deployment["kind"] = json!("Deployment");
    assert!(!is_release_storage(&deployment));
    assert!(!is_release_storage(&json!("not an object")));
    assert!(!is_release_storage(&json!(null)));
}

#[test]
fn string_data_is_not_a_stored_form() {
    let mut secret = secret_with("");
    secret.as_object_mut().expect("object").remove("data");
    secret["stringData"] = json!({"release": "H4sIAAAA"});
    let err = decode_err(&secret, &Limits::default());
    assert!(matches!(err, DecodeError::MissingData { .. }), "{err}");
    assert!(err.to_string().contains("stringData"), "{err}");
    assert_names_object(&err);
}

#[test]
fn missing_non_string_and_empty_data_are_errors() {
    let mut no_data = secret_with("");
    no_data.as_object_mut().expect("object").remove("data");
    let mut number = secret_with("");
    number["data"]["release"] = json!(42);
    for obj in [no_data, number, secret_with("")] {
        let err = decode_err(&obj, &Limits::default());
        assert!(matches!(err, DecodeError::MissingData { .. }), "{err}");
        assert_names_object(&err);
    }
}

#[test]
fn bad_base64_is_reported_per_layer() {
    let err = decode_err(&secret_with("not*base64!"), &Limits::default());
    assert!(
        matches!(
            err,
            DecodeError::Base64 {
                layer: Base64Layer::Kubernetes,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("Kubernetes layer"), "{err}");
    assert_names_object(&err);

    // Valid outside, garbage inside: the Kubernetes layer decodes to text that is not base64.
    let err = decode_err(
        &secret_with(&B64.encode("%%% not helm %%%")),
        &Limits::default(),
    );
    assert!(
        matches!(
            err,
            DecodeError::Base64 {
                layer: Base64Layer::Helm,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("Helm layer"), "{err}");
    assert_names_object(&err);

    // A ConfigMap has only Helm's layer.
    let mut configmap = encode_configmap(&inventory_v34());
    configmap["data"]["release"] = json!("H4sI!!!!");
    let err = decode_err(&configmap, &Limits::default());
    assert!(
        matches!(
            err,
            DecodeError::Base64 {
                layer: Base64Layer::Helm,
                ..
            }
        ),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with("apps/ConfigMap/sh.helm.release.v1.inventory.v34: "));
}

#[test]
fn truncated_gzip_is_an_error_not_a_partial_release() {
    let json = serde_json::to_vec(&inventory_v34()).expect("json");
    let gz = gzip(&json);
    for cut in [3, 10, gz.len() / 2, gz.len() - 4, gz.len() - 1] {
        let err = decode_err(&secret_holding(&gz[..cut]), &Limits::default());
        assert!(
            matches!(err, DecodeError::Gzip { .. }),
            "cut at {cut}: {err}"
        );
        assert!(
            err.to_string().contains("truncated or corrupt gzip"),
            "{err}"
        );
        assert_names_object(&err);
    }
}

#[test]
fn corrupt_gzip_is_an_error() {
    let json = serde_json::to_vec(&inventory_v34()).expect("json");
    let mut gz = gzip(&json);
    let middle = gz.len() / 2;
    gz[middle] ^= 0xff;
    let last = gz.len() - 5; // inside the CRC-32 trailer
    gz[last] ^= 0x01;
    let err = decode_err(&secret_holding(&gz), &Limits::default());
    assert!(matches!(err, DecodeError::Gzip { .. }), "{err}");
    assert_names_object(&err);
}

#[test]
fn bad_json_is_an_error_that_quotes_nothing_stored() {
    let err = decode_err(
        &secret_holding(&gzip(b"{\"name\": \"inventory\", ")),
        &Limits::default(),
    );
    assert!(matches!(err, DecodeError::Json { .. }), "{err}");
    assert_names_object(&err);

    // A type error: serde_json would quote the offending string; it could be anything stored.
    let wrong_type = br#"{"name": "inventory", "version": "hunter2-s3cr3t"}"#;
    let err = decode_err(&secret_holding(&gzip(wrong_type)), &Limits::default());
    assert!(matches!(err, DecodeError::Json { .. }), "{err}");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert_names_object(&err);

    let err = decode_err(&secret_holding(b"not json at all"), &Limits::default());
    assert!(matches!(err, DecodeError::Json { .. }), "{err}");
}

#[test]
fn a_gzip_bomb_stops_at_the_limit() {
    // 200 gzip members of 1 MiB of zeros each: 200 MiB decompressed from a few hundred KiB.
    // Go's gzip reader (and ours) reads concatenated members as one stream.
    // At the best level: how small the fastest level makes it depends on the deflate backend.
    let member = {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        encoder
            .write_all(&vec![0u8; 1024 * 1024])
            .expect("gzip into memory");
        encoder.finish().expect("gzip into memory")
    };
    let bomb: Vec<u8> = member
        .iter()
        .copied()
        .cycle()
        .take(member.len() * 200)
        .collect();
    assert!(
        bomb.len() < 1024 * 1024,
        "the bomb is small: {}",
        bomb.len()
    );
    let limits = Limits {
        max_decompressed: 2 * 1024 * 1024,
        ..Limits::default()
    };

    let started = Instant::now();
    let err = decode_err(&secret_holding(&bomb), &limits);
    let elapsed = started.elapsed();
    assert!(
        matches!(err, DecodeError::DecompressedTooLarge { limit, .. } if limit == 2 * 1024 * 1024),
        "{err}"
    );
    assert_names_object(&err);
    // Generous for a debug build on a shared machine; inflating all 200 MiB would take far longer.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn a_single_member_bomb_stops_at_the_limit() {
    let bomb = gzip(&vec![0u8; 8 * 1024 * 1024]);
    let limits = Limits {
        max_decompressed: 64 * 1024,
        ..Limits::default()
    };
    let err = decode_err(&secret_holding(&bomb), &limits);
    assert!(
        matches!(err, DecodeError::DecompressedTooLarge { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("65536 bytes"), "{err}");
}

#[test]
fn uncompressed_json_obeys_the_decompressed_limit_too() {
    let limits = Limits {
        max_decompressed: 16,
        ..Limits::default()
    };
    let err = decode_err(&encode_secret_uncompressed(&inventory_v34()), &limits);
    assert!(
        matches!(err, DecodeError::DecompressedTooLarge { .. }),
        "{err}"
    );
}

#[test]
fn an_oversized_payload_is_refused_before_decoding() {
    let limits = Limits {
        max_encoded: 1024,
        ..Limits::default()
    };
    // Not even base64: the size check comes first, so this is TooLarge, not Base64.
    let err = decode_err(&secret_with(&"!".repeat(2048)), &limits);
    assert!(
        matches!(
            err,
            DecodeError::TooLarge {
                size: 2048,
                limit: 1024,
                ..
            }
        ),
        "{err}"
    );
    assert_names_object(&err);
    assert!(err.to_string().contains("1 MiB"), "has a hint: {err}");
}

#[test]
fn the_default_limits_fit_anything_the_api_server_accepts() {
    let limits = Limits::default();
    assert_eq!(limits.max_decompressed, 64 * 1024 * 1024);
    assert!(limits.max_encoded >= 1024 * 1024);
}

#[test]
fn wrapped_base64_is_accepted_like_gos_decoder() {
    let secret = encode_configmap(&inventory_v34());
    let data = secret["data"]["release"].as_str().expect("a string");
    let wrapped: String = data
        .as_bytes()
        .chunks(76)
        .map(|line| format!("{}\n", String::from_utf8_lossy(line)))
        .collect();
    let mut configmap = secret.clone();
    configmap["data"]["release"] = json!(wrapped);
    assert_eq!(
        decode(&configmap, &Limits::default())
            .expect("decodes")
            .release
            .version,
        34
    );
}

#[test]
fn random_bytes_never_panic() {
    // xorshift: deterministic, no dependency.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let json = serde_json::to_vec(&inventory_v34()).expect("json");
    let gz = gzip(&json);
    for round in 0..300 {
        let len = (next() % 512) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if round % 3 == 0 {
            // Start like gzip so the decompressor sees the garbage too.
            bytes.splice(0..0, [0x1f, 0x8b, 0x08]);
        }
        if round % 5 == 0 {
            // Real gzip with one byte flipped.
            bytes = gz.clone();
            let at = (next() as usize) % bytes.len();
            bytes[at] ^= (next() as u8) | 1;
        }
        for obj in [
            secret_holding(&bytes),
            secret_with(&String::from_utf8_lossy(&bytes)),
            secret_with(&B64.encode(&bytes)),
        ] {
            if let Err(err) = decode(&obj, &Limits::default()) {
                assert_eq!(err.object(), OBJECT);
            }
        }
    }
}

#[test]
fn helm_zero_times_read_as_none() {
    let release = |info: Value| -> Release {
        serde_json::from_value(json!({"name": "inventory", "version": 1, "info": info}))
            .expect("release JSON")
    };
    // Helm 3 writes "", Helm 4 omits the field, null is Go's nil, and a plain time.Time is year 1.
    for zero in [json!(""), json!(null), json!("0001-01-01T00:00:00Z")] {
        let r = release(json!({"first_deployed": zero, "last_deployed": zero, "deleted": zero}));
        assert_eq!(r.info.first_deployed, None, "{zero}");
        assert_eq!(r.info.last_deployed, None, "{zero}");
        assert_eq!(r.info.deleted, None, "{zero}");
    }
    let r = release(json!({"status": "deployed"}));
    assert_eq!(r.info.last_deployed, None);
    assert_eq!(r.info.status, ReleaseStatus::Deployed);
}

#[test]
fn go_rfc3339nano_times_with_offsets_parse() {
    let r: Release = serde_json::from_value(json!({
        "info": {
            "first_deployed": "2026-07-08T16:22:06.123456789+02:00",
            "last_deployed": "2026-07-08T14:22:06Z",
            "deleted": "2026-07-08T09:22:06.5-05:00"
        }
    }))
    .expect("release JSON");
    assert_eq!(
        r.info.first_deployed,
        Some(ts("2026-07-08T14:22:06.123456789Z"))
    );
    assert_eq!(r.info.last_deployed, Some(ts("2026-07-08T14:22:06Z")));
    assert_eq!(r.info.deleted, Some(ts("2026-07-08T14:22:06.5Z")));
}

#[test]
fn an_unreadable_time_is_an_error_not_a_guess() {
    let mut release = inventory_v34();
    release["info"]["last_deployed"] = json!("last Tuesday");
    let err = decode_err(&encode_secret(&release), &Limits::default());
    assert!(matches!(err, DecodeError::Json { .. }), "{err}");
    assert!(err.to_string().contains("RFC 3339"), "{err}");
}

#[test]
fn statuses_round_trip_their_helm_spelling() {
    for (text, status) in [
        ("deployed", ReleaseStatus::Deployed),
        ("superseded", ReleaseStatus::Superseded),
        ("failed", ReleaseStatus::Failed),
        ("pending-install", ReleaseStatus::PendingInstall),
        ("pending-upgrade", ReleaseStatus::PendingUpgrade),
        ("pending-rollback", ReleaseStatus::PendingRollback),
        ("uninstalling", ReleaseStatus::Uninstalling),
        ("uninstalled", ReleaseStatus::Uninstalled),
        ("unknown", ReleaseStatus::Unknown),
        (
            "requires-upgrade",
            ReleaseStatus::Other("requires-upgrade".into()),
        ),
    ] {
        let parsed: ReleaseStatus = serde_json::from_value(json!(text)).expect("status");
        assert_eq!(parsed, status);
        assert_eq!(parsed.as_str(), text);
        assert_eq!(
            serde_json::to_value(&parsed).expect("serialize"),
            json!(text)
        );
        assert_eq!(parsed.is_pending(), text.starts_with("pending-"), "{text}");
    }
}

#[test]
fn newest_is_the_highest_revision() {
    let mut stored = Vec::new();
    for (version, status) in [
        (33, "superseded"),
        (35, "pending-upgrade"),
        (34, "deployed"),
    ] {
        let mut release = inventory_v34();
        release["version"] = json!(version);
        release["info"]["status"] = json!(status);
        let secret = encode_secret(&release);
        assert_eq!(
            secret["metadata"]["name"],
            format!("sh.helm.release.v1.inventory.v{version}")
        );
        if status == "pending-upgrade" {
            assert!(secret["metadata"]["labels"].get("createdAt").is_some());
        }
        stored.push(decode(&secret, &Limits::default()).expect("decodes"));
    }
    let newest = newest(&stored).expect("some");
    assert_eq!(newest.release.version, 35);
    assert!(newest.release.info.status.is_pending());
    assert!(liveproof_helm::newest(&[]).is_none());
}

/// The whole error as a CLI prints it: the message and every source under it.
fn chain_text(err: &DecodeError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Stored strings are never quoted in a decode error, not even with a redaction that assumes
/// balanced quotes: the error names the field and what is wrong with it.
#[test]
fn decode_errors_name_the_field_never_the_value() {
    const CANARY: &str = "hunter2";
    let unbalanced = format!("x\" db_password={CANARY} \"y");
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "/info/last_deployed",
            json!(unbalanced),
            "`.info.last_deployed` is not an RFC 3339 time",
        ),
        (
            "/info/first_deployed",
            json!(format!("{CANARY}\"")),
            "`.info.first_deployed` is not an RFC 3339 time",
        ),
        (
            "/version",
            json!(unbalanced),
            "`.version` has the wrong type (expected i64)",
        ),
        ("/info", json!(unbalanced), "`.info` has the wrong type"),
        (
            "/chart/metadata/appVersion",
            json!([unbalanced]),
            "`.chart.metadata.appVersion` has the wrong type",
        ),
        (
            "/hooks",
            json!([{"events": unbalanced}]),
            "`.hooks[0].events` has the wrong type",
        ),
        (
            "/info/status",
            json!(7),
            "`.info.status` has the wrong type",
        ),
    ];
    for (pointer, value, expected) in cases {
        let mut release = inventory_v34();
        *release
            .pointer_mut(pointer)
            .expect("field in fixture or its parent") = value;
        let err = decode_err(&encode_secret(&release), &Limits::default());
        assert!(matches!(err, DecodeError::Json { .. }), "{err}");
        // (The object's name carries `.version`, which one case breaks.)
        assert!(
            err.to_string()
                .starts_with("apps/Secret/sh.helm.release.v1.inventory.v"),
            "{err}"
        );
        let text = chain_text(&err);
        assert!(!text.contains(CANARY), "{pointer}: {text}");
        assert!(text.contains(expected), "{pointer}: {text}");
    }
    // Keys under `config` are the user's: the path stops at `.config`.
    let mut release = inventory_v34();
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!({ format!("{CANARY}_key"): deep });
    }
    release["config"] = deep;
    let err = decode_err(&encode_secret(&release), &Limits::default());
    let text = chain_text(&err);
    assert!(!text.contains(CANARY), "{text}");
    assert!(text.contains("recursion limit exceeded"), "{text}");
}

#[test]
fn base64_errors_say_where_not_which_byte() {
    // `*` is byte 42; base64's own message would print it.
    let err = decode_err(&secret_with("abc*defg"), &Limits::default());
    let text = chain_text(&err);
    assert!(text.contains("not base64 at offset 3"), "{text}");
    assert!(!text.contains("42"), "{text}");
}

/// The release with a manifest of `documents` ConfigMaps, each escaped the way Go's encoder
/// writes them (`<`, `>` and `&` as `\u00XX`), so decoding crosses many pieces.
fn large_release(documents: usize) -> Value {
    let mut release = inventory_v34();
    let mut manifest = String::new();
    // A checksum per document, as charts annotate them, so the release does not compress away.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..documents {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        manifest.push_str(&format!(
            "---\n# Source: inventory/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  annotations:\n    checksum/config: {state:016x}{:016x}\ndata:\n  page.html: \"<p class=\\\"x\\\">{i} & more</p>\"\n  path: 'C:\\dir\\n{i}'\n",
            state.rotate_left(29)
        ));
    }
    release["manifest"] = json!(manifest);
    release
}

#[test]
fn a_large_manifest_decodes_to_what_helm_stored() {
    // Over a mebibyte: unescaped in two halves.
    let release = large_release(6_000);
    assert!(release["manifest"].as_str().expect("text").len() > 1 << 20);
    let direct: Release = serde_json::from_value(release.clone()).expect("release JSON");
    let stored = decode(&encode_secret(&release), &Limits::default()).expect("decodes");
    assert_eq!(stored.release, direct);
}

/// Each layer is read as a stream, so an error deep in one is met only when the stream gets
/// there: it must still name its layer and its offset in that layer's text.
#[test]
fn a_base64_error_deep_in_a_layer_names_the_layer_and_offset() {
    let secret = encode_secret(&large_release(3_000));
    let kubernetes = secret["data"]["release"].as_str().expect("a string");
    assert!(kubernetes.len() > 60_000);

    let mut broken = kubernetes.to_owned();
    broken.replace_range(50_001..50_002, "*");
    let err = decode_err(&secret_with(&broken), &Limits::default());
    assert!(
        matches!(
            err,
            DecodeError::Base64 {
                layer: Base64Layer::Kubernetes,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("at offset 50001"), "{err}");
    assert_names_object(&err);

    let helm = String::from_utf8(B64.decode(kubernetes).expect("k8s layer")).expect("text");
    let mut broken = helm.clone();
    broken.replace_range(40_003..40_004, "%");
    let err = decode_err(&secret_with(&B64.encode(&broken)), &Limits::default());
    assert!(
        matches!(
            err,
            DecodeError::Base64 {
                layer: Base64Layer::Helm,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("at offset 40003"), "{err}");

    // Cut short: an error of that layer, whatever gzip made of the bytes before the cut.
    for cut in [1, 2, 3] {
        let short = B64.encode(&helm[..helm.len() - cut]);
        let err = decode_err(&secret_with(&short), &Limits::default());
        assert!(
            matches!(
                err,
                DecodeError::Base64 {
                    layer: Base64Layer::Helm,
                    ..
                }
            ),
            "cut {cut}: {err}"
        );
    }
    let short = B64.encode(&helm[..helm.len() - 3]);
    let err = decode_err(&secret_with(&short), &Limits::default());
    assert!(err.to_string().contains("(truncated?)"), "{err}");
}

#[test]
fn a_secret_wrapped_in_both_layers_decodes() {
    let secret = encode_secret(&inventory_v34());
    let kubernetes = secret["data"]["release"].as_str().expect("a string");
    let helm = String::from_utf8(B64.decode(kubernetes).expect("k8s layer")).expect("text");
    let wrap = |text: &str, eol: &str| -> String {
        text.as_bytes()
            .chunks(76)
            .map(|line| format!("{}{eol}", String::from_utf8_lossy(line)))
            .collect()
    };
    let wrapped = wrap(&B64.encode(wrap(&helm, "\r\n")), "\n");
    let stored = decode(&secret_with(&wrapped), &Limits::default()).expect("decodes");
    assert_eq!(stored.release.version, 34);
}

#[test]
fn a_passed_deadline_stops_decoding() {
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    for secret in [
        encode_secret(&inventory_v34()),
        encode_secret_uncompressed(&inventory_v34()),
    ] {
        let err = decode_err(&secret, &limits);
        assert!(matches!(err, DecodeError::OutOfTime { .. }), "{err}");
        assert_names_object(&err);
    }
}

#[test]
fn a_summary_reads_what_history_shows_and_skips_the_rest() {
    let secret = encode_secret(&inventory_v34());
    let whole = decode(&secret, &Limits::default()).expect("decodes");
    let summary = decode_parts(&secret, &Limits::default(), Parts::Summary).expect("decodes");
    assert_eq!(summary.object, whole.object);
    let (release, summarized) = (&whole.release, &summary.release);
    assert_eq!(
        (&summarized.name, &summarized.namespace, summarized.version),
        (&release.name, &release.namespace, release.version)
    );
    assert_eq!(summarized.info, release.info);
    assert_eq!(summarized.chart, release.chart);
    assert!(summarized.manifest.is_empty() && summarized.hooks.is_empty());
    assert!(summarized.config.is_empty());

    // What a summary skips is checked as JSON only: a manifest of the wrong type is an error
    // for a reader of the manifest, and still JSON to one that skips it.
    let mut release = inventory_v34();
    release["manifest"] = json!({"password": "hunter2-s3cr3t"});
    let secret = encode_secret(&release);
    assert!(decode_parts(&secret, &Limits::default(), Parts::Summary).is_ok());
    let err = decode_err(&secret, &Limits::default());
    assert!(matches!(err, DecodeError::Json { .. }), "{err}");
    let text = chain_text(&err);
    assert!(
        text.contains("`.manifest` has the wrong type (expected a string)"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");

    // Broken JSON is broken for both.
    let broken = secret_holding(&gzip(b"{\"name\": \"inventory\", \"manifest\": \"x"));
    for parts in [Parts::All, Parts::Summary] {
        let err = decode_parts(&broken, &Limits::default(), parts).expect_err("broken JSON");
        assert!(err.to_string().contains("truncated?"), "{err}");
    }
}

#[test]
fn storage_of_a_release_is_found_by_its_labels_as_helm_finds_it() {
    let secret = encode_secret(&inventory_v34());
    assert!(stores_release(&secret, "apps", "inventory"));
    assert_eq!(labelled_revision(&secret), Some(34));
    assert!(!stores_release(&secret, "other", "inventory"));
    assert!(!stores_release(&secret, "apps", "payments"));
    // A dump of one namespace may leave it out.
    let mut no_namespace = secret.clone();
    no_namespace["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("namespace");
    assert!(stores_release(&no_namespace, "apps", "inventory"));
    let mut not_helms = secret.clone();
    not_helms["metadata"]["labels"]["owner"] = json!("someone-else");
    assert!(!stores_release(&not_helms, "apps", "inventory"));
    let mut unlabelled = secret;
    unlabelled["metadata"]["labels"]["version"] = json!("v34");
    assert_eq!(labelled_revision(&unlabelled), None);
}

/// What `write_stored_manifest` prints: the manifest `show::write_manifest` prints of the
/// release read whole.
fn streamed(obj: &Value) -> String {
    let mut out = Vec::new();
    liveproof_helm::write_stored_manifest(obj, &Limits::default(), &mut out).expect("streams");
    String::from_utf8(out).expect("text")
}

fn printed_whole(obj: &Value) -> String {
    liveproof_helm::show::manifest(&decode(obj, &Limits::default()).expect("decodes").release)
}

/// The manifest streamed as it is decoded is the manifest printed from the release read
/// whole, whatever the driver, the size (many 64 KiB pieces, Go's escapes), or where the
/// manifest sits among the fields; and reading everything but the manifest gives the rest of
/// what reading it all gives.
#[test]
fn a_manifest_streamed_as_it_decodes_is_the_manifest_read_whole() {
    let mut releases = vec![inventory_v34(), large_release(3_000)];
    // The manifest first and last among the fields, and a key that only looks like it (in a
    // string, and nested in the chart) before the real one.
    let mut first = json!({"manifest": inventory_v34()["manifest"].clone()});
    let mut last =
        json!({"chart": {"manifest": "not this", "metadata": {"name": "decoy \"manifest\": x"}}});
    for (key, value) in inventory_v34().as_object().expect("an object") {
        if key != "manifest" {
            first[key] = value.clone();
            if key != "chart" {
                last[key] = value.clone();
            }
        }
    }
    last["manifest"] = inventory_v34()["manifest"].clone();
    releases.extend([first, last]);
    for release in &releases {
        let all = decode(&encode_secret(release), &Limits::default()).expect("decodes");
        for storage in [
            encode_secret(release),
            encode_configmap(release),
            encode_secret_uncompressed(release),
        ] {
            assert_eq!(streamed(&storage), printed_whole(&storage));
            let except =
                decode_parts(&storage, &Limits::default(), Parts::ExceptManifest).expect("decodes");
            assert!(except.release.manifest.is_empty());
            let mut whole = all.release.clone();
            whole.manifest.clear();
            assert_eq!(except.release, whole);
        }
    }
    assert!(streamed(&encode_secret(&large_release(3_000))).contains("name: cm-2999\n"));
}

/// A manifest the streaming reader cannot take apart (under a key written with an escape, so
/// only the JSON reader knows it is `manifest`) is still printed, whole; `null` prints nothing;
/// a manifest of the wrong type is the error reading it whole gives, before anything is
/// printed.
#[test]
fn a_manifest_the_stream_cannot_take_apart_is_read_as_when_whole() {
    let release = inventory_v34();
    let text = serde_json::to_string(&release).expect("serializes");
    let escaped_key = text.replacen("\"manifest\":", "\"manif\\u0065st\":", 1);
    assert_ne!(escaped_key, text);
    let storage = secret_holding(&gzip(escaped_key.as_bytes()));
    assert_eq!(streamed(&storage), printed_whole(&storage));
    assert!(streamed(&storage).contains("kind: Deployment"));

    let mut null = inventory_v34();
    null["manifest"] = Value::Null;
    assert_eq!(streamed(&encode_secret(&null)), "");

    let mut wrong = inventory_v34();
    wrong["manifest"] = json!({"password": "hunter2-s3cr3t"});
    let storage = encode_secret(&wrong);
    let err = decode_parts(&storage, &Limits::default(), Parts::ExceptManifest)
        .expect_err("not a string");
    assert_eq!(
        err.to_string(),
        decode_err(&storage, &Limits::default()).to_string()
    );
    assert!(!chain_text(&err).contains("hunter2"));

    // A bad escape deep in the manifest, and a cut-short stream: errors before printing.
    let bad_escape = text.replacen("kind: Deployment", "kind: \\x", 1);
    let cut = gzip(text.as_bytes());
    for storage in [
        secret_holding(&gzip(bad_escape.as_bytes())),
        secret_holding(&cut[..cut.len() / 2]),
    ] {
        let whole = decode_err(&storage, &Limits::default());
        let except =
            decode_parts(&storage, &Limits::default(), Parts::ExceptManifest).expect_err("broken");
        assert_eq!(
            std::mem::discriminant(&except),
            std::mem::discriminant(&whole),
            "{except} / {whole}"
        );
    }
}
