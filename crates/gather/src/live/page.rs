//! One page of a LIST, held once and taken apart item by item.
//!
//! kube's `Api::list` collects a response's frames, joins them into one buffer, copies that
//! into a `String` (two copies while both live) and decodes the whole `ObjectList<T>` before
//! anything is kept: at 5,000 objects of the real API server's size, a page was three times
//! over in memory at once. Here each frame is appended to one buffer as it arrives and freed
//! at once (a large buffer grows in place: the allocator remaps it, nothing is copied twice),
//! and the buffer is decoded in place, each item handed to the pager's `keep` the moment it is
//! decoded and counted against [`MAX_ITEMS`](super::pager::MAX_ITEMS) as it comes, so no page
//! is ever a whole `Vec<T>`. What the server answers otherwise (an error Status, a body that
//! is not one, a cut body, JSON that does not decode) is the same `kube::Error` kube's
//! `Api::list` gives, so every message built from it is unchanged.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use bytes::Bytes;
use http_body_util::BodyExt;
use kube::api::{ListMeta, ListParams, ObjectList};
use kube::core::Status;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};

use super::pager::{Page, PageBody, PageError, MAX_ITEMS};

/// A list already decoded (kube's own `ObjectList`, the pager's tests).
impl<T: Clone> PageBody<T> for ObjectList<T> {
    fn empty() -> Self {
        ObjectList {
            types: Default::default(),
            metadata: Default::default(),
            items: Vec::new(),
        }
    }

    fn decode<U>(
        self,
        room: usize,
        keep: &mut impl FnMut(T) -> Option<U>,
        kept: &mut Vec<U>,
    ) -> Result<Page, PageError> {
        let items = self.items.len();
        if items > room {
            return Err(too_many());
        }
        kept.extend(self.items.into_iter().filter_map(keep));
        Ok(Page {
            items,
            continue_: self.metadata.continue_,
        })
    }
}

/// [`MAX_ITEMS`] exceeded, in the pager's words.
fn too_many() -> PageError {
    PageError::Endless(format!("more than {MAX_ITEMS} objects in one list"))
}

/// A LIST response's body, each object a `W` when decoded.
pub(crate) struct JsonList<W> {
    body: Vec<u8>,
    _of: PhantomData<fn() -> W>,
}

impl<W: DeserializeOwned> PageBody<W> for JsonList<W> {
    fn empty() -> Self {
        JsonList {
            body: b"{\"items\":[]}".to_vec(),
            _of: PhantomData,
        }
    }

    fn decode<U>(
        self,
        room: usize,
        keep: &mut impl FnMut(W) -> Option<U>,
        kept: &mut Vec<U>,
    ) -> Result<Page, PageError> {
        let mut over = false;
        let seed = ListSeed {
            room,
            keep,
            kept,
            over: &mut over,
            _of: PhantomData,
        };
        let mut deserializer = serde_json::Deserializer::from_slice(&self.body);
        let decoded = seed
            .deserialize(&mut deserializer)
            .and_then(|page| deserializer.end().map(|()| page));
        match decoded {
            Ok(page) => Ok(page),
            Err(_) if over => Err(too_many()),
            Err(e) => Err(PageError::Api(kube::Error::SerdeError(e))),
        }
    }
}

/// GETs the list `url_path` names with `params`, through `client` (its timeouts, budget and
/// counting), as kube's `Api::list` does, and holds its body as it came.
pub(crate) async fn fetch<W>(
    client: kube::Client,
    url_path: &str,
    params: &ListParams,
) -> Result<JsonList<W>, kube::Error> {
    let mut request = kube::core::Request::new(url_path)
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("list");
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let status = response.status();
    let mut body = response.into_body();
    if status.is_client_error() || status.is_server_error() {
        return Err(api_error(status, body.collect().await?.to_bytes()));
    }
    // Room for the whole body when the server says how long it is (within what the
    // response budget lets through anyway); else it grows as the frames come.
    let length = http_body::Body::size_hint(&body).exact().unwrap_or(0);
    let mut whole = Vec::with_capacity(usize::try_from(length).unwrap_or(0).min(MAX_RESERVED));
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            whole.extend_from_slice(&data);
        }
    }
    Ok(JsonList {
        body: whole,
        _of: PhantomData,
    })
}

/// The most reserved up front from a `Content-Length`: a larger body grows as it comes.
const MAX_RESERVED: usize = 64 * 1024 * 1024;

/// An error response as kube's `handle_api_errors` makes it: its `Status`, or one made up from
/// a body that is not one, with the response's code.
fn api_error(code: http::StatusCode, body: Bytes) -> kube::Error {
    let text = match String::from_utf8(body.to_vec()) {
        Ok(text) => text,
        Err(e) => return kube::Error::FromUtf8(e),
    };
    if let Ok(status) = serde_json::from_str::<Status>(&text) {
        tracing::debug!("Unsuccessful: {status:?}");
        return kube::Error::Api(status.boxed());
    }
    let status =
        Status::failure(text.trim(), "Failed to parse error data").with_code(code.as_u16());
    kube::Error::Api(status.boxed())
}

/// The pager's `fetch` for the list `api` reads: each page as [`fetch`] gets it.
pub(crate) fn lister<W>(api: &kube::Api<W>) -> impl FnMut(ListParams) -> Listed<W>
where
    W: kube::Resource + Clone + 'static,
{
    let url: std::sync::Arc<str> = api.resource_url().into();
    let client = api.clone().into_client();
    move |params: ListParams| {
        let url = url.clone();
        let client = client.clone();
        Box::pin(async move { fetch::<W>(client, &url, &params).await })
    }
}

/// One page on its way, as [`lister`] asks for it.
pub(crate) type Listed<W> =
    std::pin::Pin<Box<dyn Future<Output = Result<JsonList<W>, kube::Error>> + Send>>;

/// A list as kube's `ObjectList<W>` reads it (its `metadata` a `ListMeta`, its `items` a list
/// or null, anything else ignored), each item kept as it is decoded.
struct ListSeed<'a, W, U, K> {
    room: usize,
    keep: &'a mut K,
    kept: &'a mut Vec<U>,
    /// Set when the items went past `room`: the error is then [`too_many`].
    over: &'a mut bool,
    _of: PhantomData<fn() -> W>,
}

impl<'de, W, U, K> DeserializeSeed<'de> for ListSeed<'_, W, U, K>
where
    W: DeserializeOwned,
    K: FnMut(W) -> Option<U>,
{
    type Value = Page;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Page, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, W, U, K> de::Visitor<'de> for ListSeed<'_, W, U, K>
where
    W: DeserializeOwned,
    K: FnMut(W) -> Option<U>,
{
    type Value = Page;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct ObjectList")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Page, A::Error> {
        let mut metadata: Option<ListMeta> = None;
        let mut items: Option<usize> = None;
        let ListSeed {
            room,
            keep,
            kept,
            over,
            ..
        } = self;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "metadata" => {
                    if metadata.is_some() {
                        return Err(de::Error::duplicate_field("metadata"));
                    }
                    metadata = Some(map.next_value()?);
                }
                "items" => {
                    if items.is_some() {
                        return Err(de::Error::duplicate_field("items"));
                    }
                    items = Some(map.next_value_seed(ItemsSeed {
                        room,
                        keep: &mut *keep,
                        kept: &mut *kept,
                        over: &mut *over,
                        _of: PhantomData::<fn() -> W>,
                    })?);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(items) = items else {
            return Err(de::Error::missing_field("items"));
        };
        Ok(Page {
            items,
            continue_: metadata.unwrap_or_default().continue_,
        })
    }
}

/// A list's `items`: null (none) or a list, each item kept as it is decoded; the count.
struct ItemsSeed<'a, W, U, K> {
    room: usize,
    keep: &'a mut K,
    kept: &'a mut Vec<U>,
    over: &'a mut bool,
    _of: PhantomData<fn() -> W>,
}

impl<'de, W, U, K> DeserializeSeed<'de> for ItemsSeed<'_, W, U, K>
where
    W: DeserializeOwned,
    K: FnMut(W) -> Option<U>,
{
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, W, U, K> de::Visitor<'de> for ItemsSeed<'_, W, U, K>
where
    W: DeserializeOwned,
    K: FnMut(W) -> Option<U>,
{
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_none<E: de::Error>(self) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut count = 0usize;
        while let Some(item) = seq.next_element::<W>()? {
            count += 1;
            if count > self.room {
                *self.over = true;
                return Err(de::Error::custom(format!(
                    "more than {MAX_ITEMS} objects in one list"
                )));
            }
            if let Some(kept) = (self.keep)(item) {
                self.kept.push(kept);
            }
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body<W>(text: &str) -> JsonList<W> {
        JsonList {
            body: text.as_bytes().to_vec(),
            _of: PhantomData,
        }
    }

    fn decode(text: &str, room: usize) -> (Result<Page, PageError>, Vec<String>) {
        let mut kept = Vec::new();
        let page = body::<serde_json::Value>(text).decode(
            room,
            &mut |v: serde_json::Value| {
                let name = v["metadata"]["name"].as_str()?.to_string();
                (name != "skip").then_some(name)
            },
            &mut kept,
        );
        (page, kept)
    }

    /// The same body through kube's `ObjectList<W>`, as `Api::list` decodes it.
    fn kube_decodes(text: &str) -> Result<ObjectList<serde_json::Value>, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_page_is_decoded_item_by_item_with_its_continue_token() {
        let text = json!({
            "apiVersion": "v1", "kind": "PodList",
            "metadata": {"resourceVersion": "7", "continue": "next-page", "remainingItemCount": 3},
            "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "skip"}},
                      {"metadata": {"name": "b"}}],
        })
        .to_string();
        let (page, kept) = decode(&text, 10);
        let page = page.expect("a page");
        assert_eq!(page.items, 3, "every item counted, kept or not");
        assert_eq!(page.continue_.as_deref(), Some("next-page"));
        assert_eq!(kept, ["a", "b"]);
        let kube = kube_decodes(&text).expect("kube decodes it");
        assert_eq!(kube.metadata.continue_, page.continue_);
        // The last page: no token; items null or empty is an empty page, as kube reads it.
        for last in [
            json!({"metadata": {}, "items": null}),
            json!({"items": []}),
            json!({"items": [], "metadata": {"continue": ""}}),
        ] {
            let (page, kept) = decode(&last.to_string(), 10);
            let page = page.expect("a page");
            assert_eq!((page.items, kept.len()), (0, 0), "{last}");
            assert!(page.continue_.unwrap_or_default().is_empty());
            assert!(kube_decodes(&last.to_string()).is_ok());
        }
    }

    /// A body cut short, or JSON that is not a list, is the serde error kube's `Api::list`
    /// gives (the message liveproof shows is made from it: kind and position).
    #[test]
    fn a_truncated_or_malformed_body_is_kubes_serde_error() {
        let whole = json!({"metadata": {"continue": "x"},
            "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]})
        .to_string();
        let mut differ = Vec::new();
        for bad in [
            whole[..whole.len() / 2].to_string(),
            whole[..whole.len() - 1].to_string(),
            String::new(),
            "[1, 2]".to_string(),
            "{\"items\": 3}".to_string(),
            "{\"items\": [{\"metadata\": {\"name\": 3}}]}".to_string(),
            "{\"metadata\": {}}".to_string(),
            "{\"items\": []} trailing".to_string(),
            "{\"items\": [], \"items\": []}".to_string(),
        ] {
            type W = k8s_openapi::api::core::v1::ConfigMap;
            let page = body::<W>(&bad).decode(10, &mut Some, &mut Vec::new());
            let Err(PageError::Api(kube::Error::SerdeError(ours))) = page else {
                panic!("{bad:?}: not a serde error: {page:?}");
            };
            let kube =
                serde_json::from_str::<ObjectList<W>>(&bad).expect_err("kube refuses it too");
            let message = |e: &serde_json::Error| e.to_string();
            if (ours.classify(), ours.line(), ours.column(), message(&ours))
                != (kube.classify(), kube.line(), kube.column(), message(&kube))
            {
                differ.push(format!("{bad:?}: ours {ours} / kube's {kube}"));
            }
        }
        assert!(differ.is_empty(), "{differ:#?}");
    }

    /// More objects than the room left is the pager's MAX_ITEMS error, found within the page
    /// (the items past it are never decoded).
    #[test]
    fn max_items_is_counted_within_a_page() {
        let text = json!({"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}},
            {"metadata": {"name": "c"}}]})
        .to_string();
        let (page, kept) = decode(&text, 2);
        let Err(PageError::Endless(why)) = page else {
            panic!("more than the room is an error: {page:?}");
        };
        assert_eq!(why, format!("more than {MAX_ITEMS} objects in one list"));
        assert_eq!(kept, ["a", "b"]);
        let (page, _) = decode(&text, 3);
        assert_eq!(page.expect("exactly the room").items, 3);
    }

    /// The error body of a refused LIST is the Status kube makes of it: its code and reason
    /// (403 names the rule missing; 410 restarts the list), or one made up from a body that
    /// is not a Status.
    #[test]
    fn an_error_response_is_kubes_status() {
        let forbidden = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "pods is forbidden: User \"ci\" cannot list resource \"pods\"",
            "reason": "Forbidden", "code": 403})
        .to_string();
        let kube::Error::Api(status) =
            api_error(http::StatusCode::FORBIDDEN, Bytes::from(forbidden))
        else {
            panic!("a Status");
        };
        assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
        let gone = json!({"kind": "Status", "status": "Failure", "reason": "Expired",
            "message": "The provided continue parameter is too old", "code": 410})
        .to_string();
        let kube::Error::Api(status) = api_error(http::StatusCode::GONE, Bytes::from(gone)) else {
            panic!("a Status");
        };
        assert_eq!(status.code, 410);
        let kube::Error::Api(status) = api_error(
            http::StatusCode::BAD_GATEWAY,
            Bytes::from_static(b"  <html>bad gateway</html>\n"),
        ) else {
            panic!("a Status made up");
        };
        assert_eq!(
            (status.code, status.reason.as_str(), status.message.as_str()),
            (
                502,
                "Failed to parse error data",
                "<html>bad gateway</html>"
            )
        );
    }
}
