//! Reading and writing the Kubernetes objects Helm stores releases in
//! (`helm.sh/helm/v3/pkg/storage/driver`: `secrets.go`, `cfgmaps.go`, `util.go`).

use std::fmt;
use std::io::Write;

use base64::Engine as _;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{json, Map, Value};

use crate::payload::{read_release, stream_manifest, StreamError};
use crate::release::Release;
use crate::storage_error::{DecodeError, Parts, StorageDriver};
use crate::Limits;

/// `type` of a Secret Helm 3+ stores a release in.
pub const RELEASE_SECRET_TYPE: &str = "helm.sh/release.v1";
const NAME_PREFIX: &str = "sh.helm.release.v1.";
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A decoded release and the object it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRelease {
    /// The storage object: what evidence cites as its source.
    pub object: StorageObject,
    pub release: Release,
}

/// A Secret or ConfigMap that stores a release, by its parts; displayed `NAMESPACE/KIND/NAME`
/// as [`object_ref`] names any object, e.g. `apps/Secret/sh.helm.release.v1.inventory.v34`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StorageObject {
    pub driver: StorageDriver,
    /// Empty when the object carries none (a dump of one namespace).
    pub namespace: String,
    pub name: String,
}

impl StorageObject {
    /// The storage object `obj` is, when it is a Secret or ConfigMap.
    pub fn of(obj: &Value) -> Option<StorageObject> {
        driver_of(obj).map(|driver| StorageObject::stored_by(driver, obj))
    }

    fn stored_by(driver: StorageDriver, obj: &Value) -> StorageObject {
        StorageObject {
            driver,
            namespace: str_at(obj, &["metadata", "namespace"])
                .unwrap_or_default()
                .to_owned(),
            name: object_name(obj).to_owned(),
        }
    }
}

impl fmt::Display for StorageObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        write!(f, "{}/{}", self.driver, self.name)
    }
}

/// `NAMESPACE/KIND/NAME` of any object, tolerating missing fields.
pub fn object_ref(obj: &Value) -> String {
    let kind = str_at(obj, &["kind"]).unwrap_or("<no kind>");
    let name = object_name(obj);
    match str_at(obj, &["metadata", "namespace"]) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{kind}/{name}"),
        _ => format!("{kind}/{name}"),
    }
}

fn object_name(obj: &Value) -> &str {
    str_at(obj, &["metadata", "name"]).unwrap_or("<no name>")
}

fn str_at<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(obj, |value, key| value.get(key))
        .and_then(Value::as_str)
}

fn driver_of(obj: &Value) -> Option<StorageDriver> {
    match str_at(obj, &["kind"])? {
        "Secret" => Some(StorageDriver::Secret),
        "ConfigMap" => Some(StorageDriver::ConfigMap),
        _ => None,
    }
}

/// True for a Secret of type `helm.sh/release.v1`, or a Secret or ConfigMap labelled
/// `owner=helm` and named `sh.helm.release.v1.*` (how Helm's drivers find their objects).
pub fn is_release_storage(obj: &Value) -> bool {
    storage_mismatch(obj).is_none()
}

/// True when `obj` stores a revision of release `name` in `namespace`, as Helm's drivers find
/// them: labelled `owner=helm` and `name=NAME`, and release storage ([`is_release_storage`]).
/// An object without a namespace (from a dump of one namespace) is taken to be in it.
pub fn stores_release(obj: &Value, namespace: &str, name: &str) -> bool {
    str_at(obj, &["metadata", "namespace"]).unwrap_or(namespace) == namespace
        && str_at(obj, &["metadata", "labels", "name"]) == Some(name)
        && str_at(obj, &["metadata", "labels", "owner"]) == Some("helm")
        && is_release_storage(obj)
}

/// The revision the storage labels say `obj` holds (`version`); the release JSON has the
/// final word, so this only says which object to read first.
pub fn labelled_revision(obj: &Value) -> Option<i64> {
    str_at(obj, &["metadata", "labels", "version"]).and_then(|v| v.parse().ok())
}

fn storage_mismatch(obj: &Value) -> Option<String> {
    let Some(driver) = driver_of(obj) else {
        return Some("only a Secret or ConfigMap can hold a release".to_owned());
    };
    if driver == StorageDriver::Secret && str_at(obj, &["type"]) == Some(RELEASE_SECRET_TYPE) {
        return None;
    }
    let owner = str_at(obj, &["metadata", "labels", "owner"]);
    let name = str_at(obj, &["metadata", "name"]).unwrap_or_default();
    if owner == Some("helm") && name.starts_with(NAME_PREFIX) {
        return None;
    }
    Some(match driver {
        StorageDriver::Secret => format!(
            "neither of type {RELEASE_SECRET_TYPE} nor labelled owner=helm and named {NAME_PREFIX}*"
        ),
        StorageDriver::ConfigMap => {
            format!("not labelled owner=helm and named {NAME_PREFIX}*")
        }
    })
}

/// Decodes the release a storage Secret or ConfigMap holds.
///
/// A Secret's `data.release` is Kubernetes' base64 of Helm's base64 of the gzipped (or, from old
/// Helm, plain) release JSON; a ConfigMap's is Helm's base64 directly. `stringData` is never
/// read: the API server folds it into `data`, so it is not a stored form.
pub fn decode(obj: &Value, limits: &Limits) -> Result<StoredRelease, DecodeError> {
    decode_parts(obj, limits, Parts::All)
}

/// [`decode`], reading only `parts` of the release: a command that shows a summary of every
/// revision need not hold each one's manifest.
pub fn decode_parts(
    obj: &Value,
    limits: &Limits,
    parts: Parts,
) -> Result<StoredRelease, DecodeError> {
    let (object, driver, encoded) = stored_form(obj, limits)?;
    let release = read_release(encoded, driver, limits, &object, parts)?;
    Ok(StoredRelease {
        object: StorageObject::stored_by(driver, obj),
        release,
    })
}

/// Writes the manifest of the release `obj` stores as [`crate::show::write_manifest`] does,
/// decoding it as it is written: the release JSON and the manifest are never held whole, only
/// the document being written. Read the object with [`Parts::ExceptManifest`] first: what it
/// finds wrong is found before anything is written; here, an error is the writer's or the
/// deadline's (an `io::Error` carrying the [`DecodeError`]).
pub fn write_stored_manifest(
    obj: &Value,
    limits: &Limits,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut writer = crate::show::ManifestWriter::new(out);
    stream_stored_manifest(obj, limits, &mut |piece| writer.push(piece))?;
    writer.finish()
}

/// Hands the text of the manifest of the release `obj` stores to `manifest`, a piece at a time
/// (each ends at a line end), as it is decoded: what [`write_stored_manifest`] writes from,
/// for a caller that writes elsewhere than where it decodes. Errors as there.
pub fn stream_stored_manifest(
    obj: &Value,
    limits: &Limits,
    manifest: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (object, driver, encoded) = stored_form(obj, limits).map_err(std::io::Error::other)?;
    stream_manifest(encoded, driver, limits, &object, manifest).map_err(|err| match err {
        StreamError::Decode(err) => std::io::Error::other(err),
        StreamError::Write(err) => err,
    })?;
    Ok(())
}

/// The object's name, its driver and its `data.release`, if it is release storage whose
/// encoded size is within the limit.
fn stored_form<'o>(
    obj: &'o Value,
    limits: &Limits,
) -> Result<(String, StorageDriver, &'o str), DecodeError> {
    let object = object_ref(obj);
    if let Some(reason) = storage_mismatch(obj) {
        return Err(DecodeError::NotReleaseStorage { object, reason });
    }
    let Some(driver) = driver_of(obj) else {
        return Err(DecodeError::NotReleaseStorage {
            object,
            reason: "only a Secret or ConfigMap can hold a release".to_owned(),
        });
    };
    let encoded = match obj.get("data").and_then(|data| data.get("release")) {
        Some(Value::String(encoded)) => encoded,
        Some(_) => {
            return Err(DecodeError::MissingData {
                object,
                detail: "data.release is not a string".to_owned(),
            })
        }
        None => {
            let detail = if obj.pointer("/stringData/release").is_some() {
                "no data.release (stringData is write-only input, not what the API stores; \
                 hint: read the object back from the cluster)"
            } else {
                "no data.release"
            };
            return Err(DecodeError::MissingData {
                object,
                detail: detail.to_owned(),
            });
        }
    };
    if encoded.len() > limits.max_encoded {
        return Err(DecodeError::TooLarge {
            object,
            size: encoded.len(),
            limit: limits.max_encoded,
        });
    }
    Ok((object, driver, encoded))
}

/// Stores `release_json` the way Helm's Secret driver does: JSON, gzip (best compression),
/// Helm's base64, in `data.release` (so the `data` value is Kubernetes' base64 of that text).
pub fn encode_secret(release_json: &Value) -> Value {
    let helm_b64 = B64.encode(gzip(release_json));
    storage_object(StorageDriver::Secret, release_json, &helm_b64)
}

/// Stores `release_json` the way Helm's ConfigMap driver does: like a Secret, one base64 fewer.
pub fn encode_configmap(release_json: &Value) -> Value {
    let helm_b64 = B64.encode(gzip(release_json));
    storage_object(StorageDriver::ConfigMap, release_json, &helm_b64)
}

/// A Secret holding plain JSON under Helm's base64, as releases stored before Helm compressed
/// them were; Helm still reads these.
pub fn encode_secret_uncompressed(release_json: &Value) -> Value {
    let helm_b64 = B64.encode(json_bytes(release_json));
    storage_object(StorageDriver::Secret, release_json, &helm_b64)
}

fn json_bytes(release_json: &Value) -> Vec<u8> {
    // A Value always serializes; the empty fallback is unreachable.
    serde_json::to_vec(release_json).unwrap_or_default()
}

fn gzip(release_json: &Value) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    // Writing into a Vec cannot fail.
    let written = encoder.write_all(&json_bytes(release_json));
    debug_assert!(written.is_ok());
    encoder.finish().unwrap_or_default()
}

fn storage_object(driver: StorageDriver, release_json: &Value, helm_b64: &str) -> Value {
    let name = str_at(release_json, &["name"]).unwrap_or_default();
    let namespace = str_at(release_json, &["namespace"]).unwrap_or_default();
    let version = release_json
        .get("version")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = str_at(release_json, &["info", "status"]).unwrap_or_default();
    let mut labels = Map::new();
    labels.insert("name".into(), name.into());
    labels.insert("owner".into(), "helm".into());
    labels.insert("status".into(), status.into());
    labels.insert("version".into(), version.to_string().into());
    // Helm sets createdAt on Create (a new revision starts pending) and replaces the labels with
    // modifiedAt on Update (when it settles); both are Unix seconds.
    if let Some(at) = str_at(release_json, &["info", "last_deployed"])
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    {
        let label = if status.starts_with("pending-") {
            "createdAt"
        } else {
            "modifiedAt"
        };
        labels.insert(label.into(), at.as_second().to_string().into());
    }
    let mut metadata =
        json!({ "name": format!("{NAME_PREFIX}{name}.v{version}"), "labels": labels });
    if !namespace.is_empty() {
        metadata["namespace"] = namespace.into();
    }
    match driver {
        StorageDriver::Secret => json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata,
            "type": RELEASE_SECRET_TYPE,
            // Kubernetes' own base64 of the Secret's bytes, which are Helm's base64 text.
            "data": { "release": B64.encode(helm_b64) },
        }),
        StorageDriver::ConfigMap => json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata,
            "data": { "release": helm_b64 },
        }),
    }
}

/// The newest revision (highest `version`), which is what is installed unless it is pending
/// or failed.
pub fn newest(releases: &[StoredRelease]) -> Option<&StoredRelease> {
    releases.iter().max_by_key(|stored| stored.release.version)
}
