//! The JSON-RPC 2.0 and MCP lifecycle side: what each incoming message asks for. No I/O here,
//! so every answer is unit-tested.

use serde_json::{json, Map, Value};

use super::tools::{self, Call};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// The protocol revisions served, newest first. The first is offered when the client asks for
/// one not listed (MCP version negotiation).
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The first revision with `structuredContent` and `outputSchema`.
const STRUCTURED_SINCE: &str = "2025-06-18";

const INSTRUCTIONS: &str = "\
liveproof answers one question with evidence: is this change live in Kubernetes? \
Call `verify` with the targets and the change (commit or since, plus image/expect/... when \
known). Report a change as deployed only when the verdict is `live`, and quote the evidence \
lines that prove it. On `not_live`, say which check failed and its detail; on `unproven`, say \
what evidence is missing (the report's next_step). `stale` finds workloads running an older \
build than their mutable tag names now. Secret values are never read or returned.";

/// What one incoming message asks of the server.
#[derive(Debug)]
pub enum Action {
    /// Send this message now.
    Reply(Value),
    /// A notification, or a response to nothing we asked: nothing to send.
    Nothing,
    /// Run a tool; its result answers `id`.
    Call { id: Value, call: Call },
    /// The client cancelled the request with this id.
    Cancel(Value),
}

#[derive(Debug)]
pub struct Server {
    allow_writes: bool,
    /// The kubeconfigs a tool call may name (the operator's: `mcp --kubeconfig`, $KUBECONFIG,
    /// ~/.kube/config), canonical.
    kubeconfigs: Vec<std::path::PathBuf>,
    /// The negotiated revision; `None` before `initialize`.
    protocol: Option<String>,
}

pub fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl Server {
    pub fn new(allow_writes: bool) -> Server {
        Server {
            allow_writes,
            kubeconfigs: Vec::new(),
            protocol: None,
        }
    }

    /// Accepts tool calls naming these kubeconfigs (and no others).
    pub fn with_kubeconfigs(mut self, allowed: Vec<std::path::PathBuf>) -> Server {
        self.kubeconfigs = allowed;
        self
    }

    /// Whether results carry `structuredContent` (and tools an `outputSchema`): from
    /// 2025-06-18 on, and before any negotiation (a client that skips `initialize`).
    pub fn structured_content(&self) -> bool {
        self.protocol.as_deref().is_none_or(|v| {
            PROTOCOL_VERSIONS
                .iter()
                .position(|known| *known == v)
                .zip(
                    PROTOCOL_VERSIONS
                        .iter()
                        .position(|k| *k == STRUCTURED_SINCE),
                )
                .is_some_and(|(at, since)| at <= since)
        })
    }

    pub fn handle(&mut self, bytes: &[u8]) -> Action {
        let message: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                return Action::Reply(error(
                    Value::Null,
                    PARSE_ERROR,
                    &format!("parse error: {e}"),
                ))
            }
        };
        let Some(object) = message.as_object() else {
            let why = if message.is_array() {
                "JSON-RPC batches are not supported: send one message per line"
            } else {
                "a JSON-RPC message is an object"
            };
            return Action::Reply(error(Value::Null, INVALID_REQUEST, why));
        };
        let id = object.get("id").cloned();
        let valid_id = matches!(id, Some(Value::String(_) | Value::Number(_)));
        let reply_id = if valid_id {
            id.clone().unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Action::Reply(error(
                reply_id,
                INVALID_REQUEST,
                "not a JSON-RPC 2.0 message: \"jsonrpc\": \"2.0\" is required",
            ));
        }
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            // A response: this server sends no requests, so there is nothing to match it to.
            if id.is_some() && (object.contains_key("result") || object.contains_key("error")) {
                return Action::Nothing;
            }
            return Action::Reply(error(
                reply_id,
                INVALID_REQUEST,
                "a request needs a string \"method\"",
            ));
        };
        let params = match object.get("params") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => {
                return match id {
                    None => Action::Nothing,
                    Some(_) => Action::Reply(error(
                        reply_id,
                        INVALID_PARAMS,
                        "\"params\" must be an object",
                    )),
                }
            }
        };
        match id {
            None => self.notification(method, &params),
            Some(_) if !valid_id => Action::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "\"id\" must be a string or a number",
            )),
            Some(id) => self.request(id, method, &params),
        }
    }

    fn notification(&mut self, method: &str, params: &Map<String, Value>) -> Action {
        match method {
            "notifications/cancelled" => match params.get("requestId") {
                Some(id @ (Value::String(_) | Value::Number(_))) => Action::Cancel(id.clone()),
                _ => Action::Nothing,
            },
            "notifications/initialized" => {
                tracing::debug!("client initialized");
                Action::Nothing
            }
            // Unknown notifications are ignored, never answered (JSON-RPC).
            other => {
                tracing::debug!("ignored notification {other}");
                Action::Nothing
            }
        }
    }

    fn request(&mut self, id: Value, method: &str, params: &Map<String, Value>) -> Action {
        match method {
            "initialize" => self.initialize(id, params),
            "ping" => Action::Reply(response(id, json!({}))),
            "tools/list" => Action::Reply(response(
                id,
                json!({"tools": tools::list(self.allow_writes, self.structured_content())}),
            )),
            "tools/call" => self.call(id, params),
            other => Action::Reply(error(
                id,
                METHOD_NOT_FOUND,
                &format!("method not found: {other} (this server offers initialize, ping, tools/list, tools/call)"),
            )),
        }
    }

    fn initialize(&mut self, id: Value, params: &Map<String, Value>) -> Action {
        let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Action::Reply(error(
                id,
                INVALID_PARAMS,
                "initialize needs params.protocolVersion (a string)",
            ));
        };
        let version = PROTOCOL_VERSIONS
            .iter()
            .find(|v| **v == asked)
            .unwrap_or(&PROTOCOL_VERSIONS[0]);
        if *version != asked {
            tracing::info!("client asked for protocol {asked}; offering {version}");
        }
        self.protocol = Some((*version).to_string());
        Action::Reply(response(
            id,
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {
                    "name": "liveproof",
                    "title": "liveproof: is this change live?",
                    "version": env!("CARGO_PKG_VERSION"),
                },
                "instructions": INSTRUCTIONS,
            }),
        ))
    }

    fn call(&mut self, id: Value, params: &Map<String, Value>) -> Action {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Action::Reply(error(
                id,
                INVALID_PARAMS,
                "tools/call needs params.name (a string)",
            ));
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(a @ Value::Object(_)) => a.clone(),
            Some(_) => {
                return Action::Reply(error(
                    id,
                    INVALID_PARAMS,
                    "tools/call params.arguments must be an object",
                ))
            }
        };
        match tools::prepare(name, arguments, self.allow_writes) {
            tools::Prepared::Unknown => Action::Reply(error(
                id,
                INVALID_PARAMS,
                &format!(
                    "unknown tool `{name}`; this server offers: {}",
                    tools::names(self.allow_writes).join(", ")
                ),
            )),
            // Bad arguments are a tool error the model can read and correct (MCP 2025-11-25).
            tools::Prepared::Refused(message) => {
                Action::Reply(response(id, tools::tool_error(&message)))
            }
            tools::Prepared::Ready(call) => match call.kubeconfig_refusal(&self.kubeconfigs) {
                Some(message) => Action::Reply(response(id, tools::tool_error(&message))),
                None => Action::Call { id, call },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(server: &mut Server, line: &str) -> Value {
        match server.handle(line.as_bytes()) {
            Action::Reply(v) => v,
            other => panic!("expected a reply to {line}, got {other:?}"),
        }
    }

    fn code(v: &Value) -> i64 {
        v.pointer("/error/code")
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("no error code in {v}"))
    }

    #[test]
    fn parse_error_answers_with_a_null_id() {
        let mut s = Server::new(false);
        let v = reply(&mut s, "{not json");
        assert_eq!(code(&v), PARSE_ERROR);
        assert_eq!(v["id"], Value::Null);
        assert_eq!(v["jsonrpc"], "2.0");
    }

    #[test]
    fn invalid_requests() {
        let mut s = Server::new(false);
        assert_eq!(code(&reply(&mut s, "[]")), INVALID_REQUEST);
        assert_eq!(code(&reply(&mut s, "42")), INVALID_REQUEST);
        let v = reply(&mut s, r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#);
        assert_eq!((code(&v), v["id"].clone()), (INVALID_REQUEST, json!(3)));
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":4}"#);
        assert_eq!((code(&v), v["id"].clone()), (INVALID_REQUEST, json!(4)));
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
        assert_eq!((code(&v), v["id"].clone()), (INVALID_REQUEST, Value::Null));
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}"#,
        );
        assert_eq!(code(&v), INVALID_PARAMS);
    }

    #[test]
    fn unknown_method_is_not_found_and_unknown_notifications_are_silent() {
        let mut s = Server::new(false);
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":"a","method":"resources/list"}"#,
        );
        assert_eq!((code(&v), v["id"].clone()), (METHOD_NOT_FOUND, json!("a")));
        assert!(matches!(
            s.handle(br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#),
            Action::Nothing
        ));
        assert!(matches!(
            s.handle(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Action::Nothing
        ));
        // A response to a request we never sent is dropped.
        assert!(matches!(
            s.handle(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#),
            Action::Nothing
        ));
    }

    #[test]
    fn initialize_negotiates_the_version() {
        for asked in ["2025-06-18", "2025-03-26", "2024-11-05", "2025-11-25"] {
            let mut s = Server::new(false);
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{asked}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
            );
            let v = reply(&mut s, &line);
            assert_eq!(v["result"]["protocolVersion"], asked);
            assert_eq!(v["result"]["serverInfo"]["name"], "liveproof");
            assert_eq!(
                v["result"]["serverInfo"]["version"],
                env!("CARGO_PKG_VERSION")
            );
            assert!(v["result"]["capabilities"]["tools"].is_object());
            assert_eq!(s.structured_content(), asked >= STRUCTURED_SINCE, "{asked}");
        }
        let mut s = Server::new(false);
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
        );
        assert_eq!(v["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#,
        );
        assert_eq!(code(&v), INVALID_PARAMS);
    }

    #[test]
    fn ping_answers_empty() {
        let mut s = Server::new(false);
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        assert_eq!(v, json!({"jsonrpc":"2.0","id":7,"result":{}}));
    }

    fn tool_names(v: &Value) -> Vec<String> {
        v["result"]["tools"]
            .as_array()
            .expect("tools array")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_string())
            .collect()
    }

    #[test]
    fn tools_list_is_read_only_unless_writes_are_allowed() {
        let mut s = Server::new(false);
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(tool_names(&v), ["verify", "release_show", "stale"]);
        for tool in v["result"]["tools"].as_array().expect("tools") {
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert!(tool["description"].as_str().is_some_and(|d| d.len() > 40));
            assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        }
        let verify = &v["result"]["tools"][0];
        assert_eq!(verify["inputSchema"]["required"], json!(["targets"]));
        assert_eq!(
            verify["outputSchema"]["properties"]["schema"]["const"],
            "liveproof/v1"
        );
        let props = verify["inputSchema"]["properties"]
            .as_object()
            .expect("properties");
        for arg in [
            "targets",
            "namespace",
            "since",
            "commit",
            "image",
            "expect_env",
            "expect_secret_ref",
            "chart_version",
            "expect",
            "kubeconfig",
            "context",
            "from",
            "no_registry",
            "wait_seconds",
        ] {
            assert!(props.contains_key(arg), "verify lacks {arg}");
        }
        let release = &v["result"]["tools"][1];
        assert!(!release["inputSchema"]["properties"]
            .as_object()
            .expect("properties")
            .contains_key("show_values"));

        let mut s = Server::new(true);
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(
            tool_names(&v),
            ["verify", "release_show", "stale", "restart_stale"]
        );
        assert_eq!(
            v["result"]["tools"][3]["annotations"]["readOnlyHint"],
            false
        );
    }

    #[test]
    fn output_schemas_only_from_2025_06_18() {
        let mut s = Server::new(false);
        reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
        );
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        assert!(v["result"]["tools"][0].get("outputSchema").is_none());
    }

    #[test]
    fn calls() {
        let mut s = Server::new(false);
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#,
        );
        assert_eq!(code(&v), INVALID_PARAMS);
        let v = reply(&mut s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#);
        assert_eq!(code(&v), INVALID_PARAMS);
        // Writes refused with the way to enable them, as a tool error.
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"restart_stale","arguments":{}}}"#,
        );
        assert_eq!(v["result"]["isError"], true);
        let text = v["result"]["content"][0]["text"].as_str().expect("text");
        assert!(text.contains("liveproof mcp --allow-writes"), "{text}");
        // Arguments the schema does not know are refused, naming the field.
        let v = reply(
            &mut s,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"verify","arguments":{"targets":["deploy/a"],"bogus":1}}}"#,
        );
        assert_eq!(v["result"]["isError"], true);
        let text = v["result"]["content"][0]["text"].as_str().expect("text");
        assert!(text.contains("bogus"), "{text}");
        match s.handle(
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"verify","arguments":{"targets":["deploy/a"]}}}"#,
        ) {
            Action::Call { id, .. } => assert_eq!(id, json!(4)),
            other => panic!("expected a call, got {other:?}"),
        }
        match s.handle(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
        ) {
            Action::Cancel(id) => assert_eq!(id, json!(4)),
            other => panic!("expected a cancel, got {other:?}"),
        }
    }
}
