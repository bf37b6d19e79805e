//! Every LIST, page by page: a list is complete only when its last response carries no
//! `continue` token. A partial list taken for the whole one is a false `live` (an old pod that
//! still serves, left out of a page never read), so any response with a token is followed with
//! the same `limit`, and a list that cannot be completed is an error — never a shorter answer.
//!
//! Paging is bounded: a token the server already gave, more than [`MAX_PAGES`] pages or more
//! than [`MAX_ITEMS`] objects is a misbehaving server (an endless `continue` loop once sent
//! 20,240 requests and held 432 MB in 30 s), and ends the list with an error. So is a list
//! that is not whole within its own deadline, [`LIST_FACTOR`] times the request timeout:
//! each page within the request timeout, a fresh token each time, 1.5 s a page, held a
//! command without `--wait` for 25 minutes (8 hours at the default request timeout).

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use kube::api::ListParams;

use super::plan::PAGE_SIZE;

/// What one page held: how many objects it listed (kept or not) and the token of the next.
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) items: usize,
    pub(crate) continue_: Option<String>,
}

/// The answer to one LIST request, to be taken apart by [`PageBody::decode`].
pub(crate) trait PageBody<T>: Sized {
    /// The empty list (a custom resource the server does not serve).
    fn empty() -> Self;

    /// Hands each object to `keep` as it is decoded, pushing what it keeps into `kept`;
    /// more than `room` objects is [`MAX_ITEMS`] exceeded.
    fn decode<U>(
        self,
        room: usize,
        keep: &mut impl FnMut(T) -> Option<U>,
        kept: &mut Vec<U>,
    ) -> Result<Page, PageError>;
}

/// More pages than this is no list a cluster holds: 2.5 million objects at full pages. (A
/// label or field selector may make the server return fewer objects than `limit` per page,
/// even none, so pages are counted separately from objects.)
pub(crate) const MAX_PAGES: usize = 1_000;

/// More objects of one kind than this in one list is beyond what liveproof holds in memory.
pub(crate) const MAX_ITEMS: usize = 500_000;

/// How many request timeouts a whole list may take: a list of [`MAX_ITEMS`] objects is 200
/// full pages, which a healthy API server answers in a second or two each, well within 10
/// times the default 30s request timeout.
pub(crate) const LIST_FACTOR: u32 = 10;

/// Why a list could not be completed.
#[derive(Debug)]
pub(crate) enum PageError {
    /// The server refused or failed a request.
    Api(kube::Error),
    /// The server's paging is not a list's: why, in words.
    Endless(String),
}

impl From<kube::Error> for PageError {
    fn from(e: kube::Error) -> Self {
        PageError::Api(e)
    }
}

/// Lists every page `fetch` answers for `params` (with [`PAGE_SIZE`] as the `limit`), keeping
/// what `keep` keeps of each object as it is decoded ([`PageBody`]: a page's objects are never
/// all decoded at once), all of it within `request_timeout` times
/// [`LIST_FACTOR`]. A `410 Gone` on a continue token (etcd compacted past it) starts the list
/// over once, from the first page, as client-go's pager does; the list that follows obeys the
/// same rules, within the same deadline.
pub(crate) async fn list_pages<T, U, B, F, Fut>(
    params: &ListParams,
    request_timeout: Duration,
    mut fetch: F,
    mut keep: impl FnMut(T) -> Option<U>,
) -> Result<Vec<U>, PageError>
where
    B: PageBody<T>,
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<B, kube::Error>>,
{
    let within = request_timeout.saturating_mul(LIST_FACTOR);
    let deadline = tokio::time::Instant::now() + within;
    let mut pages = 0usize;
    let mut started_over = false;
    'list: loop {
        let mut kept = Vec::new();
        let mut tokens = BTreeSet::new();
        let mut items = 0usize;
        let mut page = params.clone().limit(PAGE_SIZE);
        for _ in 0..MAX_PAGES {
            let Ok(answer) = tokio::time::timeout_at(deadline, fetch(page.clone())).await else {
                return Err(PageError::Endless(format!(
                    "not whole within {} ({LIST_FACTOR} × --request-timeout {}), after {pages} page(s)",
                    super::humanize(within),
                    super::humanize(request_timeout)
                )));
            };
            pages += 1;
            let list = match answer {
                Ok(list) => list,
                Err(kube::Error::Api(status))
                    if status.code == 410 && page.continue_token.is_some() && !started_over =>
                {
                    tracing::debug!("continue token expired (410); listing again from the start");
                    started_over = true;
                    continue 'list;
                }
                Err(e) => return Err(PageError::Api(e)),
            };
            let list = list.decode(MAX_ITEMS - items, &mut keep, &mut kept)?;
            items += list.items;
            match list.continue_ {
                Some(token) if !token.is_empty() => {
                    if !tokens.insert(token.clone()) {
                        return Err(PageError::Endless(format!(
                            "the server gave the same continue token twice, after {} page(s)",
                            tokens.len()
                        )));
                    }
                    page = page.continue_token(&token);
                }
                _ => {
                    kept.shrink_to_fit();
                    return Ok(kept);
                }
            }
        }
        return Err(PageError::Endless(format!(
            "still more after {MAX_PAGES} pages"
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::{ListMeta, ObjectList};
    use std::cell::RefCell;

    fn page(items: Vec<u32>, token: Option<&str>) -> ObjectList<u32> {
        ObjectList {
            types: Default::default(),
            metadata: ListMeta {
                continue_: token.map(str::to_string),
                ..ListMeta::default()
            },
            items,
        }
    }

    fn gone() -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("continue expired", "Expired")
                .with_code(410)
                .boxed(),
        )
    }

    /// Answers the scripted responses in order, recording each request's continue token and
    /// limit.
    async fn run(
        script: Vec<Result<ObjectList<u32>, kube::Error>>,
    ) -> (
        Result<Vec<u32>, PageError>,
        Vec<(Option<String>, Option<u32>)>,
    ) {
        let script = RefCell::new(script.into_iter());
        let asked = RefCell::new(Vec::new());
        let result = list_pages(
            &ListParams::default(),
            Duration::from_secs(30),
            |p: ListParams| {
                asked.borrow_mut().push((p.continue_token.clone(), p.limit));
                let next = script.borrow_mut().next();
                async move { next.unwrap_or_else(|| Ok(page(vec![], None))) }
            },
            Some,
        )
        .await;
        (result, asked.into_inner())
    }

    #[tokio::test]
    async fn every_page_is_followed_with_the_same_limit() {
        let (got, asked) = run(vec![
            Ok(page(vec![1], Some("a"))),
            Ok(page(vec![], Some("b"))),
            Ok(page(vec![2, 3], None)),
        ])
        .await;
        assert_eq!(got.expect("complete"), vec![1, 2, 3]);
        let limit = Some(PAGE_SIZE);
        assert_eq!(
            asked,
            vec![
                (None, limit),
                (Some("a".into()), limit),
                (Some("b".into()), limit)
            ]
        );
    }

    /// The fault: page 2 answers 410; the list is started over, and the answer it gets
    /// then still carries a token, which is followed — never taken as the whole list.
    #[tokio::test]
    async fn a_410_starts_over_and_the_new_list_is_followed_to_its_end() {
        let (got, asked) = run(vec![
            Ok(page(vec![1], Some("a"))),
            Err(gone()),
            Ok(page(vec![1], Some("c"))),
            Ok(page(vec![2], None)),
        ])
        .await;
        assert_eq!(got.expect("complete"), vec![1, 2]);
        assert_eq!(asked.len(), 4);
        assert_eq!(
            asked[2],
            (None, Some(PAGE_SIZE)),
            "started over from page 1"
        );
        // A second 410 is not waited out forever: it is an error.
        let (got, _) = run(vec![
            Ok(page(vec![1], Some("a"))),
            Err(gone()),
            Ok(page(vec![1], Some("c"))),
            Err(gone()),
        ])
        .await;
        assert!(matches!(got, Err(PageError::Api(_))));
    }

    #[tokio::test]
    async fn a_repeated_token_or_endless_pages_end_in_an_error() {
        let (got, asked) = run(vec![
            Ok(page(vec![1], Some("a"))),
            Ok(page(vec![2], Some("b"))),
            Ok(page(vec![3], Some("a"))),
        ])
        .await;
        let Err(PageError::Endless(why)) = got else {
            panic!("a repeated token is no list");
        };
        assert!(why.contains("same continue token"), "{why}");
        assert_eq!(asked.len(), 3);
        let endless: Vec<_> = (0..MAX_PAGES + 5)
            .map(|i| Ok(page(vec![], Some(&format!("t{i}")))))
            .collect();
        let (got, asked) = run(endless).await;
        assert!(matches!(got, Err(PageError::Endless(_))));
        assert_eq!(asked.len(), MAX_PAGES, "bounded");
    }

    /// Issue 32, point 6: pages that each come in time, with a fresh token each time, held a
    /// command for 25 minutes; the whole list has its own deadline, named in the error.
    #[tokio::test(start_paused = true)]
    async fn a_slow_endless_list_ends_at_its_own_deadline() {
        let asked = RefCell::new(0u64);
        let result = list_pages(
            &ListParams::default(),
            Duration::from_secs(2),
            |_: ListParams| {
                *asked.borrow_mut() += 1;
                let token = format!("t{}", asked.borrow());
                async move {
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                    Ok::<_, kube::Error>(page(vec![], Some(&token)))
                }
            },
            Some,
        )
        .await;
        let Err(PageError::Endless(why)) = result else {
            panic!("a list without end is an error");
        };
        assert_eq!(
            why,
            "not whole within 20s (10 × --request-timeout 2s), after 13 page(s)"
        );
        assert_eq!(*asked.borrow(), 14, "the 14th page was cut off");
    }
}
