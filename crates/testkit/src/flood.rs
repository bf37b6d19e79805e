//! Servers on loopback that answer where an API server should with what no API server sends:
//! a body without end (`{{{…`, or bytes that never end a line), an error page echoing the
//! request it was sent, `Authorization` header and all, or nothing at all (a hung server). Over plain HTTP, or over TLS with the
//! certificate in `test-data/tls` (an in-cluster ServiceAccount speaks only HTTPS).
//!
//! Each flood is bounded, as every load a test sends is: at most [`FLOOD_LIMIT`] bytes and
//! [`FLOOD_TIME`] per connection, then it closes; a silent connection is held at most
//! [`FLOOD_TIME`] too.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the server answers every request with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `200`, `application/json`, then `{` without end: JSON that never closes.
    Braces,
    /// `200`, `application/json`, then `"` and bytes without a newline, without end.
    EndlessLine,
    /// `500 Internal Server Error`, `text/html`: a page quoting the request's head, its
    /// `Authorization` header included, as a misconfigured proxy's debug page does.
    EchoRequest,
    /// Nothing: the connection is accepted and read, and never answered (a hung API server, or
    /// one behind a proxy that swallows requests) until the client gives up.
    Silent,
}

/// The most one connection is sent.
pub const FLOOD_LIMIT: u64 = 8 * 1024 * 1024 * 1024;
/// The longest one connection is flooded.
pub const FLOOD_TIME: Duration = Duration::from_secs(120);

/// A plain-HTTP server answering `answer`; its `http://127.0.0.1:PORT`.
pub fn serve(answer: Answer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            // A silent connection waits for the client at most FLOOD_TIME between reads.
            let _ = stream.set_read_timeout(Some(FLOOD_TIME));
            std::thread::spawn(move || {
                let mut stream = stream;
                respond(&mut stream, answer);
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// [`serve`] over TLS, with the server certificate of `test-data/tls` (for 127.0.0.1); its
/// `https://127.0.0.1:PORT`. [`ca_certificate`] is the authority that signed it.
pub fn serve_tls(answer: Answer) -> String {
    let config = Arc::new(tls_config());
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(tcp) = stream else { continue };
            let _ = tcp.set_read_timeout(Some(FLOOD_TIME));
            let config = Arc::clone(&config);
            std::thread::spawn(move || {
                let Ok(connection) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut stream = rustls::StreamOwned::new(connection, tcp);
                respond(&mut stream, answer);
            });
        }
    });
    format!("https://127.0.0.1:{port}")
}

/// The certificate authority that signed [`serve_tls`]'s certificate.
pub fn ca_certificate() -> PathBuf {
    tls_dir().join("ca.crt")
}

fn tls_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/tls")
}

fn tls_config() -> rustls::ServerConfig {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(tls_dir().join("server.crt"))
            .expect("server.crt")
            .collect::<Result<_, _>>()
            .expect("server.crt is PEM");
    let key = PrivateKeyDer::from_pem_file(tls_dir().join("server.key")).expect("server.key");
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("the test certificate")
}

/// Reads one request's head, then answers it as `answer` says.
fn respond(stream: &mut (impl Read + Write), answer: Answer) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    match answer {
        Answer::Silent => {
            // Read whatever else comes (more requests on a kept-alive connection), answer
            // nothing; end when the client closes, or after FLOOD_TIME.
            let started = Instant::now();
            while started.elapsed() < FLOOD_TIME {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
            return;
        }
        Answer::EchoRequest => {
            let request = String::from_utf8_lossy(&head);
            // The request first: what a short excerpt of the page shows is the credential.
            let body = format!(
                "<pre>{request}</pre>\n<html><head><title>500 Internal Server Error</title>\
                 </head><body>\n<h1>Internal Server Error</h1>\n{}</body></html>\n",
                "<p>upstream failed</p>\n".repeat(20)
            );
            let _ = write!(
                stream,
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Answer::Braces | Answer::EndlessLine => {
            let (first, fill) = match answer {
                Answer::Braces => (b'{', b'{'),
                _ => (b'"', b'a'),
            };
            if stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
                )
                .is_err()
            {
                return;
            }
            let mut chunk = vec![fill; 64 * 1024];
            chunk[0] = first;
            let started = Instant::now();
            let mut sent = 0u64;
            while sent < FLOOD_LIMIT && started.elapsed() < FLOOD_TIME {
                if stream.write_all(&chunk).is_err() {
                    return;
                }
                chunk[0] = fill;
                sent += chunk.len() as u64;
            }
        }
    }
    let _ = stream.flush();
}
