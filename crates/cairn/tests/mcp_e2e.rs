//! `cairn mcp` as agents run it: the real binary as a child process, over stdio and over
//! streamable HTTP on a loopback port, driven by the rmcp client through save → modify → diff
//! → restore.

use std::path::Path;
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

fn cairn(store: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("--store").arg(store).env_remove("CAIRN_SESSION").env_remove("CAIRN_STORE");
    cmd
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else { panic!("arguments must be an object") };
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map)).await.unwrap()
}

async fn ok(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    assert_eq!(result.is_error, Some(false), "{tool}: {:?}", result.content);
    result.structured_content.unwrap()
}

/// The round trip every transport must carry.
async fn save_modify_diff_restore(client: &RunningService<RoleClient, ()>, tree: &Path) {
    std::fs::create_dir_all(tree).unwrap();
    std::fs::write(tree.join("notes.txt"), "original\n").unwrap();
    let saved = ok(client, "snapshot_save", json!({"target": tree, "name": "before"})).await;
    std::fs::write(tree.join("notes.txt"), "edited by the agent\n").unwrap();
    std::fs::write(tree.join("new.txt"), "new\n").unwrap();
    let diff = ok(client, "snapshot_diff", json!({"from": "before"})).await;
    assert_eq!(diff["summary"]["modified"], 1);
    assert_eq!(diff["summary"]["added"], 1);
    let restored = ok(client, "snapshot_restore", json!({"ref": saved["id"]})).await;
    assert_eq!(restored["mode"], "in_place");
    assert_eq!(std::fs::read_to_string(tree.join("notes.txt")).unwrap(), "original\n");
    assert!(!tree.join("new.txt").exists());
}

#[tokio::test]
async fn stdio_child_process_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = cairn(&dir.path().join("store")).configure(|c| {
        c.args(["mcp", "--allow", "restore"]);
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("cairn"));
    save_modify_diff_restore(&client, &dir.path().join("work")).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn http_round_trip_with_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = cairn(&dir.path().join("store"))
        .args(["mcp", "--http", "127.0.0.1:0", "--token", "s3cret", "--allow", "restore"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("the server exited before listening");
        if let Some(url) = line.strip_prefix("cairn mcp: listening on ") {
            break url.to_owned();
        }
    };

    let wrong = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header("wrong"),
    );
    assert!(().serve(wrong).await.is_err(), "a wrong token must be refused");

    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header("s3cret"),
    );
    let client = ().serve(transport).await.unwrap();
    save_modify_diff_restore(&client, &dir.path().join("work")).await;
    client.cancel().await.unwrap();
    child.kill().await.unwrap();
}

#[test]
fn unknown_profiles_are_refused_with_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--store")
        .arg(dir.path().join("store"))
        .args(["mcp", "--profile", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown profile \"nope\"; the profiles are: cairn, codecalc"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn agent_commands_change_what_agents_may_do() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--store")
            .arg(dir.path().join("store"))
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let status: Value = serde_json::from_slice(&out.stdout).unwrap();
        status["capabilities"].as_array().unwrap().iter().find(|c| c["capability"] == "restore").unwrap()
                ["allowed"]
                .clone()
    };
    assert_eq!(run(&["agent", "status"]), json!(false));
    assert_eq!(run(&["agent", "allow", "restore"]), json!(true));
    assert_eq!(run(&["agent", "status"]), json!(true));
    assert_eq!(run(&["agent", "reset", "all"]), json!(false));
}

/// Runs `cairn --store STORE ARGS` to completion.
fn run_cairn(store: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--store")
        .arg(store)
        .args(args)
        .env_remove("CAIRN_SESSION")
        .env_remove("CAIRN_STORE")
        .output()
        .unwrap()
}

/// A store whose config.toml holds `agent.restore = "yes"`, as a user might write by hand.
fn store_with_invalid_agent_setting(dir: &Path) -> std::path::PathBuf {
    let store = dir.join("store");
    assert!(run_cairn(&store, &["agent", "deny", "remove"]).status.success());
    std::fs::write(store.join("config.toml"), "[agent]\nrestore = \"yes\"\n").unwrap();
    store
}

#[test]
fn agent_status_warns_about_an_invalid_setting_and_reset_repairs_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_invalid_agent_setting(dir.path());
    let out = run_cairn(&store, &["agent", "status"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("save               refused"), "{stdout}");
    assert!(stdout.contains("warning: agent.restore = \"yes\""), "{stdout}");
    assert!(stdout.contains("agent reset restore`"), "{stdout}");

    let out = run_cairn(&store, &["--json", "agent", "reset", "restore"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["warnings"], json!([]));
    assert_eq!(status["capabilities"][0]["allowed"], json!(true));
    let file = std::fs::read_to_string(store.join("config.toml")).unwrap();
    assert!(!file.contains("yes"), "{file}");
}

#[test]
fn agent_deny_refuses_save_and_other_keys_still_refuse_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = run_cairn(&store, &["--json", "agent", "deny", "save"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        status["capabilities"][0],
        json!({"capability": "save", "allowed": false, "set": true, "key": "agent.save"})
    );
    std::fs::write(store.join("config.toml"), "[gc]\ngrace = \"10\"\n").unwrap();
    let out = run_cairn(&store, &["agent", "status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gc.grace"));
}

#[tokio::test]
async fn an_invalid_agent_setting_starts_the_server_refuses_gated_calls_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_invalid_agent_setting(dir.path());
    let cmd = cairn(&store).configure(|c| {
        c.arg("mcp");
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().unwrap();
    let client = ().serve(transport).await.unwrap();
    let tree = dir.path().join("work");
    std::fs::create_dir_all(&tree).unwrap();
    let refused = call(&client, "snapshot_save", json!({"target": tree})).await;
    assert_eq!(refused.is_error, Some(true));
    let message = refused.content[0].as_text().unwrap().text.clone();
    assert!(message.contains("agent.restore = \"yes\""), "{message}");
    client.cancel().await.unwrap();
    let mut lines = BufReader::new(stderr.unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap_or_default();
    assert!(first.starts_with("cairn mcp: warning: agent.restore = \"yes\""), "{first}");
    assert!(first.contains("agent reset restore`"), "{first}");
}

/// Starts `cairn mcp --http 127.0.0.1:0 --token s3cret EXTRA` and returns it with its port.
async fn http_server(store: &Path, extra: &[&str]) -> (tokio::process::Child, u16) {
    let mut child = cairn(store)
        .args(["mcp", "--http", "127.0.0.1:0", "--token", "s3cret"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = lines.next_line().await.unwrap().expect("the server exited before listening");
        if let Some(rest) = line.strip_prefix("cairn mcp: listening on http://127.0.0.1:") {
            let port = rest.trim_end_matches("/mcp").parse().unwrap();
            return (child, port);
        }
    }
}

/// The status code of an initialize POST to the server on `port` naming `host` in Host.
fn status_for_host(port: u16, host: &str) -> u16 {
    use std::io::{Read, Write};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

#[tokio::test]
async fn http_checks_the_host_header_and_takes_allowed_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let (mut plain, port) = http_server(&dir.path().join("a"), &[]).await;
    assert_eq!(status_for_host(port, &format!("127.0.0.1:{port}")), 200);
    assert_eq!(status_for_host(port, "evil.example"), 403);
    assert_eq!(status_for_host(port, "myhost.test"), 403);
    plain.kill().await.unwrap();

    let (mut extended, port) = http_server(&dir.path().join("b"), &["--allowed-host", "myhost.test"]).await;
    assert_eq!(status_for_host(port, &format!("myhost.test:{port}")), 200);
    assert_eq!(status_for_host(port, "evil.example"), 403);
    extended.kill().await.unwrap();

    let bad = run_cairn(&dir.path().join("c"), &["mcp", "--http", "127.0.0.1:0", "--allowed-host", "a/b"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--allowed-host \"a/b\""));
}

#[test]
fn http_on_a_non_loopback_address_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_cairn(&dir.path().join("store"), &["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0.0.0.0:0 is reachable from other machines"), "{stderr}");
    assert!(stderr.contains("--token SECRET"), "{stderr}");
}

#[tokio::test]
async fn cairn_session_in_the_environment_pins_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let created = run_cairn(&store, &["session", "create", "pinned"]);
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let cmd = cairn(&store).configure(|c| {
        c.arg("mcp").env("CAIRN_SESSION", "pinned");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let current = ok(&client, "session_current", json!({})).await;
    assert_eq!(current["name"], "pinned", "{current}");
    let refused = call(&client, "session_set", json!({"session": "baseline"})).await;
    assert_eq!(refused.is_error, Some(true));
    let message = refused.content[0].as_text().unwrap().text.clone();
    assert!(message.contains("pinned"), "{message}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn allow_takes_a_comma_separated_list() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = cairn(&dir.path().join("store")).configure(|c| {
        c.args(["mcp", "--allow", "restore,remove"]);
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tree = dir.path().join("work");
    save_modify_diff_restore(&client, &tree).await;
    let removed = ok(&client, "snapshot_remove", json!({"refs": ["before"]})).await;
    assert!(removed.is_object());
    client.cancel().await.unwrap();
}

#[test]
fn codecalc_needs_a_workspace_root() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_cairn(&dir.path().join("store"), &["mcp", "--profile", "codecalc"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the codecalc profile needs --workspace-root DIR"), "{stderr}");
}
