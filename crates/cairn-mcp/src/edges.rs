//! Protocol edges rmcp leaves to the server: requests whose params do not fit their method, and
//! stdio lines that are not JSON.
//!
//! rmcp parses a request whose params do not deserialize (a `tools/call` with no `name`, or with
//! `arguments` that are not an object) as a custom request, whose default answer is -32601
//! "method not found" with the method as its only text; [`malformed_request`] answers -32602
//! with a sentence instead. rmcp's line transport drops a line that is not JSON without a word
//! (rust-sdk#938, to avoid reply storms); JSON-RPC 2.0 answers it with -32700 and a null id, so
//! [`serve_stdio`] reads stdin itself and replies to such lines before rmcp sees them. A reply
//! with a null id is valid JSON, so a peer echoing it back cannot start a storm.

use std::sync::Arc;

use rmcp::model::{CustomRequest, ErrorCode};
use rmcp::{ErrorData as McpError, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::error::ServeError;
use crate::server::CairnServer;

/// Methods rmcp knows: reaching the custom-request handler with one of these means its params
/// did not parse.
const KNOWN: &[&str] = &[
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// The error for a request rmcp could not match to a method it serves.
pub fn malformed_request(request: &CustomRequest) -> McpError {
    let method = request.method.as_str();
    if method == "tools/call" {
        return McpError::invalid_params(tools_call_problem(request.params.as_ref()), None);
    }
    if KNOWN.contains(&method) {
        return McpError::invalid_params(
            format!("the params of {method} do not fit the method; check them against the MCP specification"),
            None,
        );
    }
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "this server has no method {method:?}; list its tools with tools/list and call them with tools/call"
        ),
        None,
    )
}

/// What is wrong with the params of a `tools/call` rmcp refused, in one sentence.
fn tools_call_problem(params: Option<&Value>) -> String {
    let Some(Value::Object(params)) = params else {
        return "tools/call needs params, an object with name (the tool) and arguments (an object)".into();
    };
    match params.get("name") {
        None => return "tools/call needs params.name, the name of the tool to call (see tools/list)".into(),
        Some(Value::String(_)) => {}
        Some(other) => {
            return format!("tools/call params.name must be a string naming a tool, not {}", kind(other));
        }
    }
    match params.get("arguments") {
        Some(Value::Object(_)) | Some(Value::Null) | None => {
            "the params of tools/call do not fit the method; send name (a string) and arguments (an object)"
                .into()
        }
        Some(other) => format!(
            "tools/call params.arguments must be an object of the tool's arguments, not {}; send {{}} for a tool that takes none",
            kind(other)
        ),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Serves `server` on stdin and stdout until the client goes away, answering lines that are not
/// JSON with -32700. Lines go to the server whole, through a pipe; its replies and the parse
/// errors are written to stdout a whole line at a time, so they never interleave.
pub async fn serve_stdio(server: CairnServer) -> Result<(), ServeError> {
    let (server_io, edge_io) = tokio::io::duplex(1 << 16);
    let (edge_read, mut edge_write) = tokio::io::split(edge_io);
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));

    let out = stdout.clone();
    let replies = tokio::spawn(async move {
        let mut lines = BufReader::new(edge_read);
        let mut line = Vec::new();
        while lines.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
            if write_line(&out, &line).await.is_err() {
                break;
            }
            line.clear();
        }
    });

    let out = stdout.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        while input.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
            let forwarded = match parse_error(&line) {
                Some(reply) => write_line(&out, reply.as_bytes()).await,
                None => edge_write.write_all(&line).await,
            };
            if forwarded.is_err() {
                break;
            }
            line.clear();
        }
        // Closing the pipe tells the server its client has gone.
        let _ = edge_write.shutdown().await;
    });

    let running = server.serve(server_io).await.map_err(|e| ServeError::Transport(e.to_string()))?;
    let waited = running.waiting().await.map_err(|e| ServeError::Transport(e.to_string()));
    let _ = replies.await;
    waited.map(|_| ())
}

/// The -32700 reply for `line`, or `None` when it is JSON (or blank) and goes to the server.
fn parse_error(line: &[u8]) -> Option<String> {
    let text = line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(line);
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let err = serde_json::from_slice::<serde::de::IgnoredAny>(text).err()?;
    // serde_json's own "line 1 column N" would read oddly beside "this line"; say the column.
    let why = match err.classify() {
        serde_json::error::Category::Syntax => format!("a syntax error at column {}", err.column()),
        serde_json::error::Category::Eof => "it ends before the JSON value does".to_owned(),
        _ => return None,
    };
    let reply = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!("this line is not JSON ({why}); send one JSON-RPC message per line"),
        },
    });
    Some(format!("{reply}\n"))
}

async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.flush().await
}
