//! Proxies as kubectl uses them: the kubeconfig cluster's `proxy-url` carries every request;
//! `HTTPS_PROXY`/`HTTP_PROXY` from the environment (a CI runner's) never reach a loopback
//! server — the demo and a local simulator work whatever proxy the environment names.

use liveproof_testkit::binary as common;

use liveproof_testkit::SimCluster;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use liveproof::demo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A forward HTTP proxy on loopback: reads a request in absolute form, connects to its host
/// and relays the connection both ways. Counts the connections it relayed.
async fn forward_proxy() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let relayed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&relayed);
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let count = Arc::clone(&count);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match client.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let mut words = line.split_whitespace();
                let (method, uri) = (
                    words.next().unwrap_or_default(),
                    words.next().unwrap_or_default(),
                );
                // CONNECT host:port (a tunnel), or a request in absolute form.
                let target = if method == "CONNECT" {
                    uri.to_string()
                } else {
                    let Some(host) = uri
                        .strip_prefix("http://")
                        .and_then(|rest| rest.split('/').next())
                    else {
                        return;
                    };
                    host.to_string()
                };
                let Ok(mut upstream) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let forwarded = if method == "CONNECT" {
                    client
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await
                } else {
                    upstream.write_all(&head).await
                };
                if forwarded.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                }
            });
        }
    });
    (format!("http://{addr}"), relayed)
}

/// A port nothing listens on: a proxy there fails every connection through it.
const DEAD_PROXY: &str = "http://127.0.0.1:9";

fn story() -> Vec<serde_json::Value> {
    demo::story_before(Timestamp::now() - SignedDuration::from_hours(96))
}

const VERIFY: [&str; 6] = [
    "verify",
    "helmrelease/inventory",
    "--since",
    "1h",
    "-o",
    "json",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubeconfig_proxy_url_carries_every_request() {
    let cluster = SimCluster::start(story(), demo::NS).await;
    let (proxy, relayed) = forward_proxy().await;
    let text = std::fs::read_to_string(&cluster.kubeconfig).expect("kubeconfig");
    let server_line = format!("    server: {}\n", cluster.sim.url());
    assert!(text.contains(&server_line), "{text}");
    std::fs::write(
        &cluster.kubeconfig,
        text.replace(
            &server_line,
            &format!("{server_line}    proxy-url: {proxy}\n"),
        ),
    )
    .expect("write");
    let mut args = VERIFY.to_vec();
    args.extend(["--kubeconfig", cluster.kubeconfig()]);
    let run = common::liveproof().args(&args).run().await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        relayed.load(Ordering::SeqCst) > 0,
        "nothing went through proxy-url"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_environment_proxy_never_takes_a_loopback_server() {
    let cluster = SimCluster::start(story(), demo::NS).await;
    let mut args = VERIFY.to_vec();
    args.extend(["--kubeconfig", cluster.kubeconfig()]);
    let env = [
        ("HTTPS_PROXY", DEAD_PROXY),
        ("HTTP_PROXY", DEAD_PROXY),
        ("https_proxy", DEAD_PROXY),
        ("http_proxy", DEAD_PROXY),
        ("NO_PROXY", "example.invalid"),
    ];
    let run = common::liveproof().args(&args).envs(&env).run().await;
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let demo = common::liveproof().args(&["demo"]).envs(&env).run().await;
    assert_eq!(
        demo.code, 0,
        "the demo never depends on a proxy:\n{}{}",
        demo.stdout, demo.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_proxy_is_named_not_the_api_server() {
    let cluster = SimCluster::start(story(), demo::NS).await;
    let refusing = format!(
        "http://{}",
        common::canned_server(Some(common::http_response("403 Forbidden", &[], b"")))
    );
    let text = std::fs::read_to_string(&cluster.kubeconfig).expect("kubeconfig");
    let server_line = format!("    server: {}\n", cluster.sim.url());
    for (proxy, said) in [
        (
            DEAD_PROXY.to_string(),
            format!("cannot reach the proxy {DEAD_PROXY}/ on the way to the API server at"),
        ),
        (
            refusing.clone(),
            format!("the proxy {refusing}/ would not connect to the API server at"),
        ),
    ] {
        std::fs::write(
            &cluster.kubeconfig,
            text.replace(
                &server_line,
                &format!("{server_line}    proxy-url: {proxy}\n"),
            ),
        )
        .expect("write");
        let mut args = VERIFY.to_vec();
        args.extend(["--kubeconfig", cluster.kubeconfig()]);
        let run = common::liveproof().args(&args).run().await;
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&said),
            "`{said}` not in: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("cannot reach the API server"),
            "{}",
            run.stderr
        );
    }
}
