//! The `server_version` read against a real HTTP server started by the test: what the server
//! reports is read (plain body, JSON field, nested path, redirect), transient failures are
//! retried a bounded number of times, and anything that is not an answer is `unknown`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use liveproof_evidence::server::{judge, VersionExpectation, VersionReading};
use liveproof_evidence::{Check, Evidence, Status};
use liveproof_gather::reach::{AllowedUrl, Reach};
use liveproof_gather::version::read_versions;

const TIMEOUT: Duration = Duration::from_millis(300);

#[derive(Default)]
struct Hits {
    flaky: AtomicUsize,
    down: AtomicUsize,
    busy: AtomicUsize,
    slow: AtomicUsize,
}

struct Server {
    base: String,
    hits: Arc<Hits>,
}

async fn serve() -> Server {
    let hits = Arc::new(Hits::default());
    let app = Router::new()
        .route("/plain", get(|| async { "inventory 1.4.0 (build 7f3c)\n" }))
        .route(
            "/json",
            get(|| async { json(r#"{"name":"inventory","version":"1.4.0"}"#) }),
        )
        .route(
            "/nested",
            get(|| async {
                json(
                    r#"{"build":{"version":"v1.4.0","commit":"7f3c"},
                        "items":[{"version":"1.3.9"},{"version":"1.4.0"}]}"#,
                )
            }),
        )
        .route(
            "/html",
            get(|| async { "<html><body>inventory 1.4.0</body></html>" }),
        )
        .route(
            "/flaky",
            get(|State(hits): State<Arc<Hits>>| async move {
                if hits.flaky.fetch_add(1, Ordering::SeqCst) < 2 {
                    (StatusCode::INTERNAL_SERVER_ERROR, "warming up").into_response()
                } else {
                    "inventory 1.4.0".into_response()
                }
            }),
        )
        .route(
            "/down",
            get(|State(hits): State<Arc<Hits>>| async move {
                hits.down.fetch_add(1, Ordering::SeqCst);
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "inventory 1.4.0 is broken",
                )
            }),
        )
        .route(
            "/busy",
            get(|State(hits): State<Arc<Hits>>| async move {
                if hits.busy.fetch_add(1, Ordering::SeqCst) == 0 {
                    (
                        StatusCode::TOO_MANY_REQUESTS,
                        [(header::RETRY_AFTER, "1")],
                        "slow down",
                    )
                        .into_response()
                } else {
                    "inventory 1.4.0".into_response()
                }
            }),
        )
        .route(
            "/slow",
            get(|State(hits): State<Arc<Hits>>| async move {
                hits.slow.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(10)).await;
                "inventory 1.4.0"
            }),
        )
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
        .route("/moved", get(|| async { Redirect::temporary("/plain") }))
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route(
            "/big.json",
            get(|| async {
                json(&format!(
                    r#"{{"pad":"{}","version":"1.4.0"}}"#,
                    "x".repeat(100 * 1024)
                ))
            }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    Server {
        base: format!("http://{addr}"),
        hits,
    }
}

fn json(body: &str) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn expectation(url: &str, expect: &str, path: Option<&str>) -> VersionExpectation {
    VersionExpectation {
        url: url.into(),
        expect: expect.to_string(),
        json_path: path.map(str::to_string),
    }
}

/// Reads one URL and judges it: the reading and its evidence.
async fn check(
    url: &str,
    expect: &str,
    path: Option<&str>,
    retries: u32,
) -> (VersionReading, Evidence) {
    let expectations = [expectation(url, expect, path)];
    let readings = read_versions(&expectations, TIMEOUT, retries, &Reach::typed([url])).await;
    assert_eq!(readings.len(), 1);
    assert_eq!(readings[0].0.expose(), url);
    let mut evidence = judge(&expectations, &readings);
    assert_eq!(evidence.len(), 1);
    let evidence = evidence.remove(0);
    assert_eq!(evidence.check, Check::ServerVersion);
    (readings[0].1.clone(), evidence)
}

#[tokio::test]
async fn plain_body_passes_only_for_the_version_it_reports() {
    let server = serve().await;
    let url = format!("{}/plain", server.base);

    let (reading, e) = check(&url, "1.4.0", None, 0).await;
    assert_eq!(
        reading,
        VersionReading::Body("inventory 1.4.0 (build 7f3c)\n".to_string())
    );
    assert_eq!(e.status, Status::Pass, "{e:?}");
    assert_eq!(e.source(), url);

    let (_, e) = check(&url, "1.4.1", None, 0).await;
    assert_eq!(e.status, Status::Fail, "{e:?}");
    assert_eq!(e.expected, "1.4.1");
    assert!(e.observed.contains("1.4.0"), "{e:?}");
    assert!(e.detail.contains("still reports 1.4.0"), "{e:?}");

    // `1.4` is a prefix of what is served, not what is served.
    let (_, e) = check(&url, "1.4", None, 0).await;
    assert_eq!(e.status, Status::Fail, "{e:?}");
}

#[tokio::test]
async fn json_field_and_nested_paths() {
    let server = serve().await;
    let url = format!("{}/json", server.base);
    let (reading, e) = check(&url, "1.4.0", Some(".version"), 0).await;
    assert_eq!(reading, VersionReading::Field(Some("1.4.0".to_string())));
    assert_eq!(e.status, Status::Pass, "{e:?}");
    assert_eq!(e.source(), format!("{url} .version"));

    let (_, e) = check(&url, "1.4.1", Some(".version"), 0).await;
    assert_eq!(e.status, Status::Fail, "{e:?}");
    assert_eq!(e.observed, "1.4.0");

    let nested = format!("{}/nested", server.base);
    let (reading, e) = check(&nested, "1.4.0", Some(".build.version"), 0).await;
    assert_eq!(reading, VersionReading::Field(Some("v1.4.0".to_string())));
    assert_eq!(e.status, Status::Pass, "{e:?}");
    let (_, e) = check(&nested, "1.4.0", Some(".items.1.version"), 0).await;
    assert_eq!(e.status, Status::Pass, "{e:?}");
    let (_, e) = check(&nested, "1.4.0", Some(".items.0.version"), 0).await;
    assert_eq!(e.status, Status::Fail, "{e:?}");
    assert_eq!(e.observed, "1.3.9");
}

#[tokio::test]
async fn missing_field_fails_and_says_it_is_absent() {
    let server = serve().await;
    let url = format!("{}/json", server.base);
    let (reading, e) = check(&url, "1.4.0", Some(".build.version"), 0).await;
    assert_eq!(reading, VersionReading::Field(None));
    assert_eq!(e.status, Status::Fail, "{e:?}");
    assert!(e.observed.contains("absent"), "{e:?}");
    assert!(e.detail.contains("no field .build.version"), "{e:?}");
}

#[tokio::test]
async fn a_json_path_on_a_body_that_is_not_json_is_unknown() {
    let server = serve().await;
    let url = format!("{}/html", server.base);
    let (reading, e) = check(&url, "1.4.0", Some(".version"), 0).await;
    assert!(
        matches!(&reading, VersionReading::Failed(why) if why.starts_with("not JSON")),
        "{reading:?}"
    );
    assert_eq!(e.status, Status::Unknown, "{e:?}");

    // Larger than the body limit: not parsed, even though the field is in there.
    let url = format!("{}/big.json", server.base);
    let (reading, e) = check(&url, "1.4.0", Some(".version"), 0).await;
    assert!(
        matches!(&reading, VersionReading::Failed(why) if why.contains("larger than 64 KiB")),
        "{reading:?}"
    );
    assert_eq!(e.status, Status::Unknown, "{e:?}");
}

#[tokio::test]
async fn server_errors_are_retried_until_it_answers() {
    let server = serve().await;
    let url = format!("{}/flaky", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 3).await;
    assert_eq!(e.status, Status::Pass, "{reading:?} {e:?}");
    // Two 500s, then the answer; no request after it.
    assert_eq!(server.hits.flaky.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn too_many_requests_honours_retry_after() {
    let server = serve().await;
    let url = format!("{}/busy", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 1).await;
    assert_eq!(e.status, Status::Pass, "{reading:?} {e:?}");
    assert_eq!(server.hits.busy.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_server_that_keeps_failing_is_unknown_naming_the_status() {
    let server = serve().await;
    let url = format!("{}/down", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 2).await;
    // The error page mentions the version; it is still no answer.
    assert_eq!(e.status, Status::Unknown, "{e:?}");
    assert!(
        matches!(&reading, VersionReading::Failed(why) if why.contains("HTTP 500 Internal Server Error")
            && why.contains("after 3 attempts")),
        "{reading:?}"
    );
    assert!(e.detail.contains("HTTP 500"), "{e:?}");
    // Bounded: the first attempt and exactly `retries` more.
    assert_eq!(server.hits.down.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let server = serve().await;
    let url = format!("{}/missing", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 3).await;
    assert_eq!(
        reading,
        VersionReading::Failed("HTTP 404 Not Found".to_string())
    );
    assert_eq!(e.status, Status::Unknown, "{e:?}");
}

#[tokio::test]
async fn connection_refused_is_unknown() {
    // A port that was just free: nothing listens there.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let url = format!("http://{addr}/version");
    let (reading, e) = check(&url, "1.4.0", None, 1).await;
    assert_eq!(e.status, Status::Unknown, "{e:?}");
    assert!(
        matches!(&reading, VersionReading::Failed(why) if why.starts_with("could not connect")
            && why.to_lowercase().contains("refused")
            && why.contains("after 2 attempts")),
        "{reading:?}"
    );
    assert!(!e.detail.is_empty());
}

#[tokio::test]
async fn a_slow_server_is_unknown_and_says_it_timed_out() {
    let server = serve().await;
    let url = format!("{}/slow", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 0).await;
    assert_eq!(e.status, Status::Unknown, "{e:?}");
    assert!(
        matches!(&reading, VersionReading::Failed(why) if why.contains("timed out after 300ms")),
        "{reading:?}"
    );
    assert!(e.detail.contains("timed out"), "{e:?}");
    assert_eq!(server.hits.slow.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn redirects_are_followed_but_bounded() {
    let server = serve().await;
    let url = format!("{}/moved", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 0).await;
    assert_eq!(e.status, Status::Pass, "{reading:?} {e:?}");
    // The evidence names the URL that was asked for.
    assert_eq!(e.source(), url);

    let url = format!("{}/loop", server.base);
    let (reading, e) = check(&url, "1.4.0", None, 3).await;
    assert_eq!(e.status, Status::Unknown, "{e:?}");
    assert!(
        matches!(&reading, VersionReading::Failed(why) if why.contains("too many redirects")),
        "{reading:?}"
    );
}

#[tokio::test]
async fn several_urls_are_read_in_order_and_a_bad_one_spoils_only_itself() {
    let server = serve().await;
    let expectations = [
        expectation(&format!("{}/json", server.base), "1.4.0", Some(".version")),
        expectation("not a url", "1.4.0", None),
        expectation(&format!("{}/json", server.base), "1.4.0", Some("..bad")),
        expectation(&format!("{}/plain", server.base), "1.4.0", None),
    ];
    let typed = Reach::typed(expectations.iter().map(|e| e.url.expose()));
    let readings = read_versions(&expectations, TIMEOUT, 0, &typed).await;
    assert_eq!(readings.len(), 4);
    for (reading, exp) in readings.iter().zip(&expectations) {
        assert_eq!(reading.0, exp.url);
    }
    assert!(
        matches!(&readings[1].1, VersionReading::Failed(why) if why.starts_with("invalid URL")),
        "{:?}",
        readings[1]
    );
    assert!(
        matches!(&readings[2].1, VersionReading::Failed(why) if why.contains("empty step")),
        "{:?}",
        readings[2]
    );
    let statuses: Vec<Status> = judge(&expectations, &readings)
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(
        statuses,
        [Status::Pass, Status::Unknown, Status::Unknown, Status::Pass]
    );
}

/// A server on `ip` whose `/credentials` answers a credential and counts its hits, and whose
/// `/to?url=U` redirects to U.
async fn metadata_stand_in(ip: &str) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = Router::new()
        .route(
            "/credentials",
            get(move || async move {
                counted.fetch_add(1, Ordering::SeqCst);
                json(r#"{"AccessKeyId":"canary-reach-7d3e","version":"canary-reach-7d3e"}"#)
            }),
        )
        .route(
            "/to",
            get(
                |axum::extract::Query(q): axum::extract::Query<
                    std::collections::HashMap<String, String>,
                >| async move { Redirect::temporary(&q["url"]) },
            ),
        );
    let listener = tokio::net::TcpListener::bind(format!("{ip}:0"))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (format!("http://{addr}"), hits)
}

/// Issue 32, point 9: an MCP client's `version_url` reads only under the operator's
/// `--allow-version-url`, compared parsed, and a redirect may not take it elsewhere. (Another
/// loopback address stands in for an internal service: no test may reach a real one.)
#[tokio::test]
async fn an_allow_list_is_held_on_every_url_and_redirect() {
    let (allowed, _) = metadata_stand_in("127.0.0.1").await;
    let (internal, internal_hits) = metadata_stand_in("127.0.0.2").await;
    let reach = Reach::allow_list(vec![
        AllowedUrl::parse(&format!("{allowed}/to")).expect("an entry")
    ]);
    let secret = format!("{internal}/credentials");
    let cases = [
        // Straight to it.
        secret.clone(),
        // Through the allowed server's redirect.
        format!("{allowed}/to?url={secret}"),
        // String-prefix tricks: another host under the allowed one's text.
        format!("{allowed}@{}", internal.trim_start_matches("http://")) + "/credentials",
        format!("{allowed}/tox?url={secret}"),
    ];
    for url in &cases {
        let expectations = [expectation(url, "1.4.0", Some(".AccessKeyId"))];
        let readings = read_versions(&expectations, TIMEOUT, 2, &reach).await;
        let reading = &readings[0].1;
        assert!(
            matches!(reading, VersionReading::Failed(why) if why.starts_with("refused:")),
            "{url}: {reading:?}"
        );
        assert!(
            !format!("{reading:?}").contains("canary-reach"),
            "{reading:?}"
        );
    }
    assert_eq!(
        internal_hits.load(Ordering::SeqCst),
        0,
        "the internal service was reached"
    );

    // What is allowed is read, by name too (the resolver checks `localhost`'s addresses).
    let by_name = allowed.replace("127.0.0.1", "localhost");
    let reach = Reach::allow_list(vec![AllowedUrl::parse(&by_name).expect("an entry")]);
    let url = format!("{by_name}/to?url={by_name}/credentials");
    let expectations = [expectation(&url, "1.4.0", Some(".version"))];
    let readings = read_versions(&expectations, TIMEOUT, 0, &reach).await;
    assert!(
        matches!(&readings[0].1, VersionReading::Field(Some(v)) if v.contains("canary-reach")),
        "{:?}",
        readings[0].1
    );
    // Nothing allowed: nothing read.
    let readings = read_versions(&expectations, TIMEOUT, 0, &Reach::allow_list(Vec::new())).await;
    assert!(
        matches!(&readings[0].1, VersionReading::Failed(why) if why.contains("--allow-version-url")),
        "{:?}",
        readings[0].1
    );
}

/// The CLI reads the `--version-url` typed, wherever it points, but a redirect (not typed) may
/// not lead it to a link-local or cloud metadata address. (`fe80::1` without a scope cannot be
/// connected to at all, so even a broken check sends nothing there.)
#[tokio::test]
async fn a_typed_url_may_not_be_redirected_to_a_link_local_address() {
    let (server, _) = metadata_stand_in("127.0.0.1").await;
    let url = format!("{server}/to?url=http://[fe80::1]:9/latest/meta-data/");
    let expectations = [expectation(&url, "1.4.0", None)];
    let readings = read_versions(&expectations, TIMEOUT, 2, &Reach::typed([url.as_str()])).await;
    assert!(
        matches!(&readings[0].1, VersionReading::Failed(why)
            if why.starts_with("refused: a redirect") && why.contains("link-local")),
        "{:?}",
        readings[0].1
    );
}
