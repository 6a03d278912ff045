//! `cairn mcp` as agents run it: the real binary as a child process, over stdio and over
//! streamable HTTP on a loopback port, driven by the rmcp client through save → modify → diff
//! → restore.

mod common;

use std::path::Path;
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use common::{TestEnv, eventually};

/// `cairn --store STORE` in the harness's cleared environment, as a child the client drives.
fn cairn(env: &TestEnv) -> tokio::process::Command {
    tokio::process::Command::from(env.command(&[]))
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
    let env = TestEnv::new();
    let cmd = cairn(&env).configure(|c| {
        c.args(["mcp", "--allow", "restore"]);
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("cairn"));
    save_modify_diff_restore(&client, &env.work()).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn http_round_trip_with_a_token() {
    let env = TestEnv::new();
    let mut child = cairn(&env)
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
    save_modify_diff_restore(&client, &env.work()).await;
    client.cancel().await.unwrap();
    child.kill().await.unwrap();
}

/// Stops the store's watcher when the test ends, however it ends.
struct StopsWatcher<'a>(&'a TestEnv);

impl Drop for StopsWatcher<'_> {
    fn drop(&mut self) {
        let _ = self.0.cairn(&["watch", "--stop"]).output();
    }
}

#[tokio::test]
async fn a_save_of_a_large_directory_starts_a_watcher_unless_mcp_watch_is_off() {
    let env = TestEnv::new();
    let _stop = StopsWatcher(&env);
    env.write("src/lib.rs", "pub fn f() {}\n");
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("a.txt"), "a\n").unwrap();
    // "Large" is 1 entry here, so the rule is tested without writing 10,000 files.
    env.ok(&["config", "set", "hooks.watch_from", "1"]);
    env.ok(&["config", "set", "mcp.watch", "false"]);
    let client = ()
        .serve(
            TokioChildProcess::new(cairn(&env).configure(|c| {
                c.arg("mcp");
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    ok(&client, "snapshot_save", json!({"target": other})).await;
    // The setting is read at each save, so the running server follows it.
    env.ok(&["config", "set", "mcp.watch", "true"]);
    ok(&client, "snapshot_save", json!({"target": env.work()})).await;
    eventually("the watcher", || env.json(&["watch", "--status"])["running"] == true);
    client.cancel().await.unwrap();
    let status = env.json(&["watch", "--status"]);
    let roots: Vec<_> = status["roots"].as_array().unwrap().iter().map(|r| r["root"].clone()).collect();
    assert_eq!(roots.len(), 1, "only the directory saved with mcp.watch on: {status}");
    assert_eq!(
        std::fs::canonicalize(roots[0].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(env.work()).unwrap()
    );
    env.ok(&["watch", "--stop"]);
}

#[test]
fn unknown_profiles_are_refused_with_the_list() {
    let env = TestEnv::new();
    assert_cli!(env, "mcp_unknown_profile", [["mcp", "--profile", "nope"]]);
}

#[test]
fn agent_commands_change_what_agents_may_do() {
    let env = TestEnv::new();
    let run = |args: &[&str]| {
        let status = env.json(args);
        status["capabilities"].as_array().unwrap().iter().find(|c| c["capability"] == "restore").unwrap()
                ["allowed"]
                .clone()
    };
    assert_eq!(run(&["agent", "status"]), json!(false));
    assert_eq!(run(&["agent", "allow", "restore"]), json!(true));
    assert_eq!(run(&["agent", "status"]), json!(true));
    assert_eq!(run(&["agent", "reset", "all"]), json!(false));
}

/// A store whose config.toml holds `agent.restore = "yes"`, as a user might write by hand.
fn with_invalid_agent_setting(env: &TestEnv) {
    env.ok(&["agent", "deny", "remove"]);
    std::fs::write(env.store().join("config.toml"), "[agent]\nrestore = \"yes\"\n").unwrap();
}

#[test]
fn agent_status_warns_about_an_invalid_setting_and_reset_repairs_it() {
    let env = TestEnv::new();
    with_invalid_agent_setting(&env);
    assert_cli!(
        env,
        "agent_invalid_setting",
        [["agent", "status"], ["--json", "agent", "status"], ["--json", "agent", "reset", "restore"]]
    );
    let file = std::fs::read_to_string(env.store().join("config.toml")).unwrap();
    assert!(!file.contains("yes"), "{file}");
}

#[test]
fn agent_deny_refuses_save_and_other_keys_still_refuse_at_load() {
    let env = TestEnv::new();
    env.ok(&["agent", "deny", "save"]);
    std::fs::write(env.store().join("config.toml"), "[gc]\ngrace = \"10\"\n").unwrap();
    assert_cli!(env, "config_invalid_setting", [["agent", "status"], ["--json", "agent", "status"]]);
}

#[tokio::test]
async fn an_invalid_agent_setting_starts_the_server_refuses_gated_calls_and_warns() {
    let env = TestEnv::new();
    with_invalid_agent_setting(&env);
    let cmd = cairn(&env).configure(|c| {
        c.arg("mcp");
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().unwrap();
    let client = ().serve(transport).await.unwrap();
    let tree = env.work();
    std::fs::create_dir_all(&tree).unwrap();
    let refused = call(&client, "snapshot_save", json!({"target": tree})).await;
    assert_eq!(refused.is_error, Some(true));
    let message = refused.content[0].as_text().unwrap().text.clone();
    insta::assert_snapshot!(env.normalize(&message), @r#"saving snapshots is refused because agent.restore = "yes" in [TMP]/store/config.toml is invalid (want true or false), so agents are refused everything until it is fixed; ask the user to run `cairn --store [TMP]/store agent reset restore`, then retry"#);
    client.cancel().await.unwrap();
    let mut lines = BufReader::new(stderr.unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap_or_default();
    insta::assert_snapshot!(env.normalize(&first), @r#"cairn mcp: warning: agent.restore = "yes" in [TMP]/store/config.toml is invalid (want true or false), so agents are refused everything until it is fixed; run `cairn --store [TMP]/store agent reset restore`"#);
}

/// Starts `cairn mcp --http 127.0.0.1:0 --token s3cret EXTRA` and returns it with its port.
async fn http_server(env: &TestEnv, extra: &[&str]) -> (tokio::process::Child, u16) {
    let mut child = cairn(env)
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
    let (a, b) = (TestEnv::new(), TestEnv::new());
    let (mut plain, port) = http_server(&a, &[]).await;
    assert_eq!(status_for_host(port, &format!("127.0.0.1:{port}")), 200);
    assert_eq!(status_for_host(port, "evil.example"), 403);
    assert_eq!(status_for_host(port, "myhost.test"), 403);
    plain.kill().await.unwrap();

    let (mut extended, port) = http_server(&b, &["--allowed-host", "myhost.test"]).await;
    assert_eq!(status_for_host(port, &format!("myhost.test:{port}")), 200);
    assert_eq!(status_for_host(port, "evil.example"), 403);
    extended.kill().await.unwrap();
}

#[test]
fn http_refuses_a_bad_allowed_host_and_a_non_loopback_address_without_a_token() {
    let env = TestEnv::new();
    assert_cli!(
        env,
        "mcp_http_usage_errors",
        [
            ["mcp", "--http", "127.0.0.1:0", "--allowed-host", "a/b"],
            ["mcp", "--http", "0.0.0.0:0"],
            ["mcp", "--profile", "codecalc"],
        ]
    );
}

#[tokio::test]
async fn cairn_session_in_the_environment_pins_the_server() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "pinned"]);
    let cmd = cairn(&env).configure(|c| {
        c.arg("mcp").env("CAIRN_SESSION", "pinned");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let current = ok(&client, "session_current", json!({})).await;
    assert_eq!(current["name"], "pinned", "{current}");
    let refused = call(&client, "session_set", json!({"session": "baseline"})).await;
    assert_eq!(refused.is_error, Some(true));
    let message = refused.content[0].as_text().unwrap().text.clone();
    insta::assert_snapshot!(message, @r#"these calls are pinned to session "pinned", which outranks the current session; pass session or restart the server without the pin"#);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn allow_takes_a_comma_separated_list() {
    let env = TestEnv::new();
    let cmd = cairn(&env).configure(|c| {
        c.args(["mcp", "--allow", "restore,remove"]);
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tree = env.work();
    save_modify_diff_restore(&client, &tree).await;
    let removed = ok(&client, "snapshot_remove", json!({"refs": ["before"]})).await;
    assert!(removed.is_object());
    client.cancel().await.unwrap();
}

/// Regression: `snapshot_save` with `transcript:auto` looked for Gemini CLI's sessions under
/// `~/.gemini` only, where `cairn save` honours `GEMINI_CLI_HOME`; both now take the agents'
/// places from the engine's one reading of the environment.
#[tokio::test]
async fn snapshot_save_of_transcript_auto_finds_a_gemini_session_under_gemini_cli_home() {
    let gemini_home = tempfile::tempdir().unwrap();
    let env = TestEnv::new().with_var("GEMINI_CLI_HOME", gemini_home.path());
    // Gemini CLI keeps a project it has not registered under the SHA-256 of its path.
    let cwd = env.work().display().to_string();
    let chats = gemini_home
        .path()
        .join(".gemini/tmp")
        .join(cairn_transcript::gemini_project_hash(&cwd))
        .join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cairn-transcript/tests/fixtures/gemini_session.jsonl");
    let session = chats.join("session-2025-10-02T09-15-b2e7d4c1.jsonl");
    std::fs::copy(fixture, &session).unwrap();
    env.write("notes.txt", "notes\n");

    let cmd = cairn(&env).configure(|c| {
        c.arg("mcp");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let saved = ok(&client, "snapshot_save", json!({"target": ".", "targets": ["transcript:auto"]})).await;
    client.cancel().await.unwrap();
    let targets: Vec<&str> =
        saved["snapshots"].as_array().unwrap().iter().map(|s| s["target"].as_str().unwrap()).collect();
    let session = std::fs::canonicalize(&session).unwrap();
    assert_eq!(targets[1], format!("transcript:{}", session.display()), "{saved:#}");
}
