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
