//! `liveproof mcp`: verify, release show and stale served to agents over the Model Context
//! Protocol — JSON-RPC 2.0, one message per line on stdin/stdout (the MCP stdio transport).
//!
//! Each tool call is turned into the command line it stands for and run through the very code
//! the CLI runs (clap, `VerifyConfig::from_args`, `verify::run`, `release::show`, `stale::run`),
//! so a tool's JSON is byte for byte what `-o json` prints and its errors are the CLI's
//! messages. stdout carries protocol messages only; logs go to stderr. Read-only unless the
//! server was started with `--allow-writes`.

mod protocol;
mod tools;

use std::collections::HashMap;
use std::io::Write;

use futures::future::{AbortHandle, Abortable};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::cli::McpArgs;
use protocol::{Action, Server};

/// The largest message read from stdin; a longer line is refused and skipped.
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// One line from stdin.
enum Frame {
    Message(Vec<u8>),
    TooLarge,
}

/// Serves until stdin closes. Tool calls run concurrently (a `ping` or a cancellation is
/// answered while a `verify` waits); responses are written whole, one per line.
pub async fn serve(args: &McpArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    for path in &args.kubeconfig {
        if !path.is_file() {
            anyhow::bail!(
                "--kubeconfig {}: no such file\nhint: give the kubeconfig files tool calls may name",
                path.display()
            );
        }
    }
    let mut server = Server::new(args.allow_writes)
        .with_kubeconfigs(tools::allowed_kubeconfigs(&args.kubeconfig));
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Frame>(16);
    let reader = tokio::spawn(read_frames(tx));
    let mut running = FuturesUnordered::new();
    let mut aborts: HashMap<String, AbortHandle> = HashMap::new();
    tracing::info!(
        "liveproof mcp: serving on stdio ({})",
        if args.allow_writes {
            "writes allowed: restart_stale is offered"
        } else {
            "read-only"
        }
    );
    // Set when stdin closes: the calls under way are finished and answered, then the server
    // exits (`printf … | liveproof mcp` gets every answer).
    let mut closed = false;
    while !(closed && running.is_empty()) {
        tokio::select! {
            frame = rx.recv(), if !closed => {
                let action = match frame {
                    None => {
                        closed = true;
                        continue;
                    }
                    Some(Frame::TooLarge) => Action::Reply(protocol::error(
                        Value::Null,
                        protocol::INVALID_REQUEST,
                        &format!("message longer than {MAX_MESSAGE} bytes; it was skipped"),
                    )),
                    Some(Frame::Message(bytes)) => server.handle(&bytes),
                };
                match action {
                    Action::Reply(message) => send(out, &message)?,
                    Action::Nothing => {}
                    Action::Cancel(id) => {
                        if let Some(handle) = aborts.remove(&id.to_string()) {
                            tracing::info!("request {id} cancelled by the client");
                            handle.abort();
                        }
                    }
                    Action::Call { id, call } => {
                        let (handle, registration) = AbortHandle::new_pair();
                        aborts.insert(id.to_string(), handle);
                        let structured = server.structured_content();
                        running.push(
                            async move {
                                let result =
                                    Abortable::new(tools::run(call, structured), registration).await;
                                (id, result)
                            }
                            .boxed_local(),
                        );
                    }
                }
            }
            Some((id, result)) = running.next(), if !running.is_empty() => {
                aborts.remove(&id.to_string());
                // A cancelled request gets no response (MCP cancellation).
                if let Ok(result) = result {
                    send(out, &protocol::response(id, result))?;
                }
            }
        }
    }
    reader.abort();
    Ok(0)
}

fn send(out: &mut dyn Write, message: &Value) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, message)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Reads newline-delimited messages from stdin; a line longer than [`MAX_MESSAGE`] is
/// skipped to its end, never held in memory whole.
async fn read_frames(tx: tokio::sync::mpsc::Sender<Frame>) {
    let mut stdin = BufReader::new(tokio::io::stdin());
    loop {
        let mut line = Vec::new();
        let mut oversized = false;
        let ended = loop {
            let chunk = match stdin.fill_buf().await {
                Ok(chunk) => chunk,
                Err(e) => {
                    tracing::warn!("stdin: {e}");
                    break true;
                }
            };
            if chunk.is_empty() {
                break true;
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !oversized {
                line.extend_from_slice(&chunk[..take]);
                if line.len() > MAX_MESSAGE + 1 {
                    oversized = true;
                    line = Vec::new();
                }
            }
            stdin.consume(take);
            if done {
                break false;
            }
        };
        let frame = if oversized {
            Some(Frame::TooLarge)
        } else if line.iter().all(u8::is_ascii_whitespace) {
            // Blank lines (and the last, unterminated empty read) are no messages.
            None
        } else {
            Some(Frame::Message(line))
        };
        if let Some(frame) = frame {
            if tx.send(frame).await.is_err() {
                return;
            }
        }
        if ended {
            return;
        }
    }
}
