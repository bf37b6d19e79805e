//! Decoding the Helm release storage a snapshot holds, before it is judged: off the async
//! runtime, under `--max-release-size` and the command's deadline. The judge then reads
//! decoded releases and never a clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use liveproof_evidence::releases::{Decoded, Releases};
use liveproof_evidence::Observed;
use liveproof_helm::{Limits, StorageObject};
use serde_json::Value;

/// What a command has decoded so far, by storage object and resourceVersion: a `--wait` decodes
/// each revision once, not on every snapshot. Objects without a resourceVersion (files) are
/// decoded each time.
#[derive(Debug, Default)]
pub struct DecodeCache {
    known: Mutex<HashMap<(StorageObject, String), Decoded>>,
    /// The object being decoded right now, if any: when a deadline cuts a gather short, this
    /// says the time went to decoding it, not to a server that did not answer.
    decoding: Arc<Mutex<Option<StorageObject>>>,
}

impl DecodeCache {
    /// The storage object a decode is working on now.
    pub fn decoding(&self) -> Option<StorageObject> {
        self.decoding
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn get(&self, key: &(StorageObject, String)) -> Option<Decoded> {
        self.lock().get(key).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(StorageObject, String), Decoded>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Decodes every Helm storage object among `observed`'s Secrets and ConfigMaps into
/// `observed.releases`, on a blocking thread. A decode the deadline (in `limits`) stops is an
/// unreadable revision; a decoding thread that fails leaves its objects out, which the judge
/// reads as unreadable too.
pub async fn decode(observed: &mut Observed, limits: Limits, cache: &DecodeCache) {
    let mut releases = Releases::default();
    let mut pending: Vec<(StorageObject, Option<String>, Value)> = Vec::new();
    let mut current = std::collections::HashSet::new();
    for (object, obj) in liveproof_evidence::releases::storage(observed) {
        let version = obj
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(v) = &version {
            current.insert((object.clone(), v.clone()));
        }
        let known = version
            .as_ref()
            .and_then(|v| cache.get(&(object.clone(), v.clone())));
        match known {
            Some(decoded) => releases.insert(object, decoded),
            None => pending.push((object, version, obj.clone())),
        }
    }
    if !pending.is_empty() {
        let decoding = Arc::clone(&cache.decoding);
        let working_on = move |object: Option<StorageObject>| {
            *decoding.lock().unwrap_or_else(PoisonError::into_inner) = object;
        };
        let decoded = tokio::task::spawn_blocking(move || {
            let decoded = pending
                .into_iter()
                .map(|(object, version, obj)| {
                    working_on(Some(object.clone()));
                    let decoded = decode_one(&obj, &limits);
                    (object, version, decoded)
                })
                .collect::<Vec<_>>();
            working_on(None);
            decoded
        })
        .await;
        match decoded {
            Ok(decoded) => {
                let mut known = cache.lock();
                for (object, version, decoded) in decoded {
                    if let Some(version) = version {
                        known.insert((object.clone(), version), decoded.clone());
                    }
                    releases.insert(object, decoded);
                }
            }
            Err(e) => tracing::warn!("decoding Helm release storage failed: {e}"),
        }
    }
    // What this snapshot no longer holds (a superseded resourceVersion, a deleted revision)
    // is never asked for again: a long --wait over many upgrades keeps only what is current.
    cache.lock().retain(|key, _| current.contains(key));
    observed.releases = releases;
}

/// One storage object, decoded and its manifest read (as stored and as shown).
pub fn decode_one(obj: &Value, limits: &Limits) -> Decoded {
    liveproof_evidence::releases::decoded(liveproof_helm::read_release(obj, limits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storage(version: i64, resource_version: &str) -> Value {
        let mut secret = liveproof_helm::encode_secret(&json!({
            "name": "web", "namespace": "apps", "version": version,
            "info": {"status": "deployed"},
            "chart": {"metadata": {"name": "web", "version": "1.0.0"}},
            "manifest": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
        }));
        secret["metadata"]["resourceVersion"] = json!(resource_version);
        secret
    }

    fn observed(objects: Vec<Value>) -> Observed {
        let mut observed = Observed::default();
        for o in objects {
            observed.add_value(o, "test").expect("object");
        }
        observed
    }

    #[tokio::test]
    async fn each_revision_is_decoded_once_per_command_and_again_when_it_changes() {
        let cache = DecodeCache::default();
        let mut first = observed(vec![storage(1, "10")]);
        decode(&mut first, Limits::default(), &cache).await;
        let mut second = observed(vec![storage(1, "10")]);
        decode(&mut second, Limits::default(), &cache).await;
        let object = liveproof_evidence::releases::storage(&first)
            .next()
            .expect("storage")
            .0;
        let (Some(Ok(a)), Some(Ok(b))) =
            (first.releases.get(&object), second.releases.get(&object))
        else {
            panic!("decoded: {:?} {:?}", first.releases, second.releases);
        };
        assert!(Arc::ptr_eq(a, b), "the second snapshot decoded it again");
        assert_eq!(a.manifest.objects.len(), 1);
        // A new resourceVersion (helm relabels a superseded revision) is decoded anew.
        let mut third = observed(vec![storage(1, "11")]);
        decode(&mut third, Limits::default(), &cache).await;
        let Some(Ok(c)) = third.releases.get(&object) else {
            panic!("decoded: {:?}", third.releases);
        };
        assert!(!Arc::ptr_eq(a, c));
        // And the superseded one is no longer kept.
        assert_eq!(cache.lock().len(), 1);
    }

    #[tokio::test]
    async fn a_deadline_already_past_leaves_the_manifest_unread_not_empty() {
        let cache = DecodeCache::default();
        let mut snapshot = observed(vec![storage(1, "10")]);
        let past = Limits {
            deadline: Some(std::time::Instant::now()),
            ..Limits::default()
        };
        decode(&mut snapshot, past, &cache).await;
        let object = liveproof_evidence::releases::storage(&snapshot)
            .next()
            .expect("storage")
            .0;
        match snapshot.releases.get(&object) {
            Some(Err(e)) => assert!(e.contains("ran out") || e.contains("time"), "{e}"),
            Some(Ok(r)) => assert!(
                r.manifest.objects.is_empty() && !r.manifest.unreadable.is_empty(),
                "{:?}",
                r.manifest
            ),
            None => panic!("not decoded"),
        }
    }
}
