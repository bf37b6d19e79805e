//! `liveproof mcp`: verify, release show and stale served to agents over the Model Context
//! Protocol, on stdio, through the official Rust SDK (`rmcp`): it speaks the protocol (the
//! handshake and version negotiation, ping, cancellation, concurrent calls); this module says
//! what the server is and hands each tool call to `tools`.
//!
//! Each tool call deserialises into the CLI's own argument structs (no command line is built,
//! nothing is parsed twice), is held to what the operator allows (`allow`), and runs through
//! the code the CLI runs — validated there as the CLI's are, clap's rules between arguments
//! included — so a tool's JSON is what `-o json` prints and its errors are the CLI's. stdout
//! carries protocol messages only; logs go to stderr. Read-only unless the server was started
//! with `--allow-writes`; container logs only with `--allow-logs`.

mod allow;
mod release;
mod stale;
mod tools;
mod verify;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use liveproof_evidence::hint::HintedMessage;

use crate::cli::McpArgs;
use crate::progress::ProgressSink;

const INSTRUCTIONS: &str = "\
liveproof answers one question with evidence: is this change live in Kubernetes? \
Call `verify` with the targets and the change (commit or since, plus image/expect/... when \
known). Report a change as deployed only when the verdict is `live`, and quote the evidence \
lines that prove it. On `not_live`, say which check failed and its detail; on `unproven`, say \
what evidence is missing (the report's next_step); on `superseded`, say \"superseded by …, not \
deployed as such, nothing to roll back\", naming the target's `superseded_by` and whether that \
later change is live. `stale` finds workloads running an older build than their mutable tag \
names now. Secret values are never read or returned.";

/// The longest message read from stdin: a longer line is cut there (the SDK then answers it as
/// a parse error) and the rest of it skipped, never held in memory.
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Lines of at most `max` bytes from `inner`: the bytes of a longer line past `max` are dropped
/// up to its newline, which is kept.
struct BoundedLines<R> {
    inner: R,
    max: usize,
    /// Bytes of the current line passed on so far.
    in_line: usize,
}

impl<R> BoundedLines<R> {
    fn new(inner: R, max: usize) -> BoundedLines<R> {
        BoundedLines {
            inner,
            max,
            in_line: 0,
        }
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        loop {
            let mut chunk = vec![0u8; buf.remaining().min(64 * 1024)];
            let mut read = tokio::io::ReadBuf::new(&mut chunk);
            match std::pin::Pin::new(&mut self.inner).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
            let filled = read.filled();
            if filled.is_empty() {
                return Poll::Ready(Ok(()));
            }
            let before = buf.filled().len();
            for &byte in filled {
                if byte == b'\n' {
                    self.in_line = 0;
                    buf.put_slice(&[byte]);
                } else if self.in_line < self.max {
                    self.in_line += 1;
                    buf.put_slice(&[byte]);
                }
            }
            // A chunk wholly dropped is no end of input: read on.
            if buf.filled().len() > before {
                return Poll::Ready(Ok(()));
            }
        }
    }
}

/// The server: which tools it offers and what a call may read.
#[derive(Clone)]
struct Liveproof {
    allow_writes: bool,
    /// The operator's kubeconfigs, the roots files must be under, what `version_url` may
    /// read and whether `logs` may be shown.
    allowed: Arc<allow::AllowList>,
}

/// Serves until stdin closes.
pub async fn serve(args: &McpArgs) -> anyhow::Result<u8> {
    for path in &args.kubeconfig {
        if !path.is_file() {
            return Err(HintedMessage::new(
                format!("--kubeconfig {}: no such file", path.display()),
                "give the kubeconfig files tool calls may name",
            )
            .into());
        }
    }
    let mut roots = Vec::new();
    for path in &args.allow_from {
        match std::fs::canonicalize(path) {
            Ok(root) => roots.push(root),
            Err(e) => {
                return Err(HintedMessage::new(
                    format!("--allow-from {}: {}", path.display(), e.kind()),
                    "give the directories whose manifests tool calls may read",
                )
                .into())
            }
        }
    }
    let mut allowed_urls = Vec::new();
    for given in &args.allow_version_url {
        match liveproof_gather::reach::AllowedUrl::parse(given) {
            Ok(allowed) => allowed_urls.push(allowed),
            Err(why) => {
                return Err(HintedMessage::new(
                    format!(
                        "--allow-version-url {}: {why}",
                        liveproof_redacted::DisplaySafeUrl::new(given)
                    ),
                    "give a URL prefix (https://status.example.com/version) or a host \
                     (status.example.com, status.example.com:8443)",
                )
                .into())
            }
        }
    }
    let server = Liveproof {
        allow_writes: args.allow_writes,
        allowed: Arc::new(allow::AllowList {
            kubeconfigs: allow::allowed_kubeconfigs(&args.kubeconfig),
            roots,
            reach: liveproof_gather::reach::Reach::allow_list(allowed_urls),
            logs: args.allow_logs,
        }),
    };
    tracing::info!(
        "liveproof mcp: serving on stdio ({}{})",
        if args.allow_writes {
            "writes allowed: restart_stale is offered"
        } else {
            "read-only"
        },
        if args.allow_logs {
            "; verify may show container logs"
        } else {
            ""
        }
    );
    let stdin = BoundedLines::new(tokio::io::stdin(), MAX_MESSAGE);
    let running = server
        .serve((stdin, tokio::io::stdout()))
        .await
        .map_err(|e| anyhow::anyhow!("MCP: the session did not start: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("MCP: {e}"))?;
    Ok(0)
}

impl ServerHandler for Liveproof {
    fn get_info(&self) -> ServerInfo {
        let mut info = ServerInfo::new(ServerCapabilities::builder().enable_tools().build());
        let mut implementation = Implementation::new("liveproof", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("liveproof: is this change live?".into());
        info.server_info = implementation;
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools::list(self.allow_writes, true)
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<Tool>, _>>()
            .map_err(|e| ErrorData::internal_error(format!("tool list: {e}"), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.to_string();
        // The SDK keeps a call's `_meta` with its parameters.
        let progress = request
            .meta
            .as_ref()
            .and_then(|meta| meta.get_progress_token())
            .or_else(|| context.meta.get_progress_token())
            .map(|token| progress_notifications(token, &context));
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match tools::prepare(&name, arguments, self.allow_writes) {
            tools::Prepared::Unknown => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool `{name}`; this server offers: {}",
                        tools::names(self.allow_writes).join(", ")
                    ),
                    None,
                ))
            }
            // Bad arguments are a tool error the model can read and correct.
            tools::Prepared::Refused(message) => tools::tool_error(&message),
            tools::Prepared::Ready(call) => match call.refusal(&self.allowed) {
                Some(message) => tools::tool_error(&message),
                // A cancelled call stops here: its future is dropped, and with it the requests
                // it had under way.
                None => tokio::select! {
                    result = tools::run(call, &self.allowed.reach, true, progress) => result,
                    () = context.ct.cancelled() => {
                        return Err(ErrorData::internal_error("cancelled by the client", None))
                    }
                },
            },
        };
        serde_json::from_value(result)
            .map_err(|e| ErrorData::internal_error(format!("tool result: {e}"), None))
    }
}

/// When the client asked for progress (a `progressToken` in the call's `_meta`): a sink that
/// sends each progress message of a `--wait` as a `notifications/progress`, in order, from a
/// task of its own (the wait never blocks on the client). The task ends with the call.
fn progress_notifications(
    token: ProgressToken,
    context: &RequestContext<RoleServer>,
) -> ProgressSink {
    let peer = context.peer.clone();
    let (send, mut receive) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut step = 0.0;
        while let Some(message) = receive.recv().await {
            step += 1.0;
            let mut param = ProgressNotificationParam::new(token.clone(), step);
            param.message = Some(message);
            if let Err(e) = peer.notify_progress(param).await {
                tracing::debug!("progress notification not sent: {e}");
                return;
            }
        }
    });
    ProgressSink::new(move |message| {
        let _ = send.send(message.to_string());
    })
}

#[cfg(test)]
mod tests {
    use super::{BoundedLines, INSTRUCTIONS};
    use tokio::io::AsyncReadExt as _;

    /// The server's instructions tell an agent what to say for each verdict but `live`:
    /// superseded is "not deployed as such, nothing to roll back", naming what superseded it.
    #[test]
    fn the_instructions_say_what_to_say_for_superseded() {
        for said in [
            "`not_live`",
            "`unproven`",
            "`superseded`",
            "superseded by …, not deployed as such, nothing to roll back",
            "`superseded_by`",
        ] {
            assert!(
                INSTRUCTIONS.contains(said),
                "{said} missing: {INSTRUCTIONS}"
            );
        }
    }

    #[tokio::test]
    async fn a_line_past_the_bound_is_cut_and_the_next_one_kept() {
        let input = format!("{}\n{{\"ok\":1}}\n", "x".repeat(100));
        let mut lines = BoundedLines::new(input.as_bytes(), 10);
        let mut out = String::new();
        lines.read_to_string(&mut out).await.expect("reads");
        assert_eq!(out, format!("{}\n{{\"ok\":1}}\n", "x".repeat(10)));
    }
}
