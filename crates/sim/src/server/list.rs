//! LIST: label and field selectors, and pagination with `limit`/`continue`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;
use serde::ser::{Serialize, SerializeMap as _, Serializer};
use serde_json::{json, Value};

use super::{render, respond, ResourceRequest, Shared};
use crate::lock;
use crate::resource::ResourceInfo;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::{Event, ObjKey, Query};
use crate::table;
use crate::PagingFault;

/// The selection a LIST or WATCH asks for: its resource, namespace and selectors.
pub(super) struct Filter {
    info: ResourceInfo,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    pub(super) fn new(r: &ResourceRequest, q: &HashMap<String, String>) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str))
            .map_err(ApiError::bad_request)?;
        let fields =
            FieldSelector::parse(q.get("fieldSelector").map_or("", String::as_str), &r.info)
                .map_err(ApiError::bad_request)?;
        Ok(Self {
            info: r.info.clone(),
            namespace: r.namespace.clone(),
            labels,
            fields,
        })
    }

    pub(super) fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }

    pub(super) fn covers(&self, ev: &Event) -> bool {
        ev.group == self.info.group
            && ev.plural == self.info.plural
            && self.namespace.as_ref().is_none_or(|n| *n == ev.namespace)
    }

    /// The store query for this selection, resuming after `after` (a continue token's).
    pub(super) fn query<'a>(&'a self, after: Option<&'a (String, String)>) -> Query<'a> {
        Query {
            info: &self.info,
            namespace: self.namespace.as_deref(),
            labels: &self.labels,
            fields: &self.fields,
            after: after.map(|(ns, name)| (ns.as_str(), name.as_str())),
        }
    }
}

/// Where a continued LIST resumes: the resourceVersion its first page was served at and the
/// (namespace, name) the previous page ended at.
#[derive(Debug, PartialEq)]
struct Continue {
    rv: u64,
    after: (String, String),
}

fn encode_continue(rv: u64, ns: &str, name: &str) -> String {
    format!("{rv}\n{ns}\n{name}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_continue(token: &str) -> Option<Continue> {
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| {
            token
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    let s = String::from_utf8(bytes?).ok()?;
    let mut parts = s.splitn(3, '\n');
    let rv = parts.next()?.parse().ok()?;
    let (ns, name) = (parts.next()?, parts.next()?);
    Some(Continue {
        rv,
        after: (ns.to_owned(), name.to_owned()),
    })
}

fn continue_expired() -> ApiError {
    ApiError::new(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result.",
    )
}

/// LIST: the objects the selectors match, one page of them when `limit` is set.
pub(super) fn list(
    sh: &Arc<Shared>,
    r: &ResourceRequest,
    q: &HashMap<String, String>,
    table: bool,
    include: &str,
) -> Result<Response, ApiError> {
    let filter = Filter::new(r, q)?;
    let mut limit = page_limit(q)?;
    let resume = continue_after(q)?;
    let paging = sh.faults.paging(&r.info.plural, resume.is_some());
    match paging {
        Some((_, true)) => return Err(continue_expired()),
        Some((PagingFault::OneObjectPagesFirstContinueGone, false)) => limit = 1,
        _ => {}
    }
    let st = lock(&sh.store);
    // Every page of a list carries the resourceVersion of its first, as the real server's
    // pages (one etcd snapshot) do: a watch from it replays every change made while the pages
    // were read, and a change to an object on a page already read is never lost. (A later page
    // here may show an object newer than that version; the replay converges all the same.)
    // Once history is compacted past it, the token is too old, as etcd's is.
    let rv = match &resume {
        Some(c) if c.rv < st.compacted_rv => return Err(continue_expired()),
        Some(c) => c.rv,
        None => st.rv,
    };
    let mut selected = st.select(filter.query(resume.as_ref().map(|c| &c.after)));
    let page: Vec<(&ObjKey, &Value)> = match (paging, limit) {
        (Some((PagingFault::EndlessContinue, _)), _) => Vec::new(),
        (_, 0) => selected.by_ref().collect(),
        (_, l) => selected.by_ref().take(l).collect(),
    };
    let mut meta = page_metadata(rv, &page, selected, q);
    match paging {
        Some((PagingFault::EndlessContinue, _)) => {
            let n = sh.faults.next_endless_page();
            meta["continue"] = json!(encode_continue(rv, "endless", &format!("page-{n}")));
        }
        Some((PagingFault::RepeatedToken, _)) => {
            meta["continue"] = json!(encode_continue(rv, "repeated", "the-same-token"));
        }
        _ => {}
    }
    if table {
        // Only whole objects need the version they are served at; rows otherwise read fields.
        let rendered: Vec<Value> = match include {
            "Object" => page.iter().map(|(_, o)| render(&r.info, o)).collect(),
            _ => Vec::new(),
        };
        let rows: Vec<&Value> = match include {
            "Object" => rendered.iter().collect(),
            _ => page.iter().map(|(_, o)| *o).collect(),
        };
        return Ok(respond(
            StatusCode::OK,
            &table::table(&r.info, &rows, meta, include),
        ));
    }
    let api_version = r.info.api_version();
    let body = ListBody {
        kind: r.info.list_kind(),
        api_version: api_version.clone(),
        metadata: meta,
        items: page
            .iter()
            .map(|(_, o)| ListItem {
                object: o,
                api_version: &api_version,
                keep_types: sh.list_item_types,
            })
            .collect(),
    };
    Ok(respond(StatusCode::OK, &body))
}

/// `limit`: the page size, 0 (or absent) for all.
fn page_limit(q: &HashMap<String, String>) -> Result<usize, ApiError> {
    match q.get("limit").map(|l| l.parse::<usize>()) {
        Some(Ok(l)) => Ok(l),
        Some(Err(_)) => Err(ApiError::bad_request(
            "limit must be a non-negative integer",
        )),
        None => Ok(0),
    }
}

/// `continue`: where the previous page ended, and the version the list is served at.
fn continue_after(q: &HashMap<String, String>) -> Result<Option<Continue>, ApiError> {
    match q.get("continue").filter(|c| !c.is_empty()) {
        Some(c) => Ok(Some(decode_continue(c).ok_or_else(|| {
            ApiError::bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion",
            )
        })?)),
        None => Ok(None),
    }
}

/// The list's metadata: its resourceVersion and, when the page leaves items out (`rest` is
/// what the selection holds after the page), where the next page starts.
fn page_metadata<'a>(
    rv: u64,
    page: &[(&ObjKey, &Value)],
    mut rest: impl Iterator<Item = (&'a ObjKey, &'a Value)>,
    q: &HashMap<String, String>,
) -> Value {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let (Some((k, _)), Some(_)) = (page.last(), rest.next()) {
        meta["continue"] = json!(encode_continue(rv, &k.2, &k.3));
        // As the API server: a count only for an unfiltered list (with a selector, what is
        // left is not known without reading it all). Found by story 8 of real_cluster.rs.
        let selected = ["labelSelector", "fieldSelector"]
            .iter()
            .any(|k| q.get(*k).is_some_and(|v| !v.is_empty()));
        if !selected {
            meta["remainingItemCount"] = json!(1 + rest.count());
        }
    }
    meta
}

/// A LIST's body, written from the stored objects without copying them.
#[derive(serde::Serialize)]
struct ListBody<'a> {
    kind: String,
    #[serde(rename = "apiVersion")]
    api_version: String,
    metadata: Value,
    items: Vec<ListItem<'a>>,
}

/// An item as a LIST serves it: as `render` serves the object (at the version asked for),
/// without `kind` and `apiVersion` unless the server is set to keep them.
struct ListItem<'a> {
    object: &'a Value,
    api_version: &'a str,
    keep_types: bool,
}

impl Serialize for ListItem<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(fields) = self.object else {
            return self.object.serialize(s);
        };
        let mut map = s.serialize_map(None)?;
        if self.keep_types && !fields.contains_key("apiVersion") {
            map.serialize_entry("apiVersion", self.api_version)?;
        }
        for (k, v) in fields {
            match k.as_str() {
                "apiVersion" if self.keep_types => map.serialize_entry(k, self.api_version)?,
                "apiVersion" | "kind" if !self.keep_types => {}
                _ => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_serialize_as_rendered() {
        let info = crate::resource::builtins().remove(0);
        let pod = json!({"apiVersion": "v0", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}});
        for keep_types in [true, false] {
            let item = ListItem {
                object: &pod,
                api_version: &info.api_version(),
                keep_types,
            };
            let mut want = render(&info, &pod);
            if !keep_types {
                let m = want.as_object_mut().expect("object");
                m.remove("kind");
                m.remove("apiVersion");
            }
            assert_eq!(
                serde_json::to_string(&item).expect("serializes"),
                want.to_string()
            );
        }
    }

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_continue(42, "apps", "inventory-1");
        assert_eq!(
            decode_continue(&t),
            Some(Continue {
                rv: 42,
                after: ("apps".into(), "inventory-1".into())
            })
        );
        assert_eq!(decode_continue("zz"), None);
        assert_eq!(decode_continue(&encode_continue(1, "a", "b")[2..]), None);
    }
}
