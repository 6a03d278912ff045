//! `cairn mcp` at the protocol's edges, as a raw client meets them: malformed JSON-RPC lines on
//! stdio, the HTTP bearer secret, and the help text.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use cairn_lib::ops::permissions::Capability;
use common::TestEnv;
use serde_json::{Value, json};

/// `cairn mcp` on stdio, initialized, spoken to in raw lines.
struct RawStdio {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl RawStdio {
    fn start(env: &TestEnv) -> Self {
        Self::start_with(env.process(&["mcp"]))
    }

    fn start_with(mut command: std::process::Command) -> Self {
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut raw = Self { child, stdin, stdout };
        raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
        assert_eq!(raw.reply()["id"], 0);
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn reply(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

impl Drop for RawStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn tools_call_with_non_object_arguments_or_no_name_is_invalid_params_with_a_sentence() {
    let env = TestEnv::new();
    let mut raw = RawStdio::start(&env);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"snapshot_list","arguments":"all"}}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#);
    raw.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"snapshot_list","arguments":[1]}}"#,
    );
    // Calls are served concurrently, so replies may come in any order.
    let mut replies: Vec<Value> = (0..3).map(|_| raw.reply()).collect();
    replies.sort_by_key(|r| r["id"].as_u64());
    insta::assert_json_snapshot!(replies, @r#"
    [
      {
        "error": {
          "code": -32602,
          "message": "tools/call params.arguments must be an object of the tool's arguments, not a string; send {} for a tool that takes none"
        },
        "id": 1,
        "jsonrpc": "2.0"
      },
      {
        "error": {
          "code": -32602,
          "message": "tools/call needs params.name, the name of the tool to call (see tools/list)"
        },
        "id": 2,
        "jsonrpc": "2.0"
      },
      {
        "error": {
          "code": -32602,
          "message": "tools/call params.arguments must be an object of the tool's arguments, not an array; send {} for a tool that takes none"
        },
        "id": 3,
        "jsonrpc": "2.0"
      }
    ]
    "#);
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_reply() {
    let env = TestEnv::new();
    let mut raw = RawStdio::start(&env);
    raw.send("this is not json");
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"#);
    let replies: Vec<Value> = (0..2).map(|_| raw.reply()).collect();
    insta::assert_json_snapshot!(replies, @r#"
    [
      {
        "error": {
          "code": -32700,
          "message": "this line is not JSON (a syntax error at column 2); send one JSON-RPC message per line"
        },
        "id": null,
        "jsonrpc": "2.0"
      },
      {
        "error": {
          "code": -32700,
          "message": "this line is not JSON (it ends before the JSON value does); send one JSON-RPC message per line"
        },
        "id": null,
        "jsonrpc": "2.0"
      }
    ]
    "#);
    // The server still serves after both.
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    assert_eq!(raw.reply(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
}

#[test]
fn http_refuses_an_empty_token() {
    let env = TestEnv::new();
    let out = env
        .process(&["mcp", "--http", "127.0.0.1:0", "--token", ""])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r#"error: --token is empty, and no client could authenticate with an empty secret; pass a secret, e.g. --token "$(openssl rand -hex 16)""#);
}

/// The status of an initialize POST to the server on `port` with `authorization`.
fn status_with_authorization(port: u16, authorization: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

#[test]
fn http_accepts_the_bearer_scheme_in_any_case() {
    let env = TestEnv::new();
    let mut child = env
        .process(&["mcp", "--http", "127.0.0.1:0", "--token", "s3cret"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let port: u16 = loop {
        let line = lines.next().expect("the server exited before listening").unwrap();
        if let Some(rest) = line.strip_prefix("cairn mcp: listening on http://127.0.0.1:") {
            break rest.trim_end_matches("/mcp").parse().unwrap();
        }
    };
    let statuses: Vec<(&str, u16)> =
        ["Bearer s3cret", "bearer s3cret", "BEARER  s3cret", "Bearer wrong", "Basic s3cret", "s3cret"]
            .into_iter()
            .map(|a| (a, status_with_authorization(port, a)))
            .collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        statuses,
        [
            ("Bearer s3cret", 200),
            ("bearer s3cret", 200),
            ("BEARER  s3cret", 200),
            ("Bearer wrong", 401),
            ("Basic s3cret", 401),
            ("s3cret", 401)
        ]
    );
}

#[test]
fn mcp_help_lists_every_capability_allow_accepts() {
    let env = TestEnv::new();
    let out = env.process(&["mcp", "--help"]).stdout(Stdio::piped()).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let allow = help.split("--allow <").nth(1).and_then(|s| s.split("\n      --").next()).unwrap_or_default();
    let words: Vec<&str> = allow.split(|c: char| !c.is_ascii_lowercase() && c != '-').collect();
    let missing: Vec<&str> =
        Capability::ALL.iter().map(|c| c.as_str()).filter(|c| !words.contains(c)).collect();
    assert!(missing.is_empty(), "--allow help leaves out {missing:?}:{allow}");
}

#[test]
fn arcave_session_in_the_environment_pins_an_arcave_server() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "pinned"]);
    let mut command = env.process(&["mcp", "--profile", "arcave"]);
    command.env("ARCAVE_SESSION", "pinned");
    let mut raw = RawStdio::start_with(command);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"session_current","arguments":{}}}"#);
    let current = raw.reply();
    assert_eq!(current["result"]["structuredContent"]["name"], "pinned", "{current}");
    raw.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_unset","arguments":{}}}"#,
    );
    let refused = raw.reply();
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
    insta::assert_snapshot!(env.normalize(text), @r#"this server is pinned to session "[ID1]" by --session or ARCAVE_SESSION, which outranks the current session: pass session on each call, or restart the server without the pin"#);
}
