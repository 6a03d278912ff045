//! `cairn mcp --profile pi` as an MCP client sees it: the server runs as a child process over
//! stdio, and this module speaks JSON-RPC to it line by line.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use cairn_transcript::{Format, Transcript};
use serde_json::{Value, json};

use crate::{Env, active, leaf_to_root, mode};

/// A minimal MCP client over a child's stdio.
struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Client {
    fn start(env: &Env) -> Self {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cairn"))
            .args(["mcp", "--profile", "pi"])
            .env_clear()
            .env("HOME", &env.home)
            .current_dir(&env.project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut client = Self { child, input, output, next_id: 1 };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "cairn-tests", "version": "0"}
            }),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    /// Sends a request and returns its response, skipping notifications on the way.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Calls a tool; returns (isError, structured result or the error text).
    fn call(&mut self, tool: &str, arguments: Value) -> (bool, Value) {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &response["result"];
        assert!(result.is_object(), "{response}");
        let is_error = result["isError"].as_bool().unwrap_or(false);
        if is_error {
            (true, result["content"][0]["text"].clone())
        } else {
            (false, result["structuredContent"].clone())
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

#[test]
fn the_pi_profile_serves_exactly_its_two_tools() {
    let env = Env::new();
    let mut client = Client::start(&env);
    let tools = client.request("tools/list", json!({}));
    let mut names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["snapshot_restore", "snapshot_save"]);
    let save =
        tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "snapshot_save").unwrap();
    let properties = save["inputSchema"]["properties"].as_object().unwrap();
    let mut args: Vec<&String> = properties.keys().collect();
    args.sort();
    assert_eq!(args, ["force", "name"]);
}

#[test]
fn pi_tools_are_denied_by_default_and_allowed_each_on_its_own() {
    let env = Env::new();
    let file = env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    let mut client = Client::start(&env);

    let (denied, message) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    assert!(denied, "{message}");
    assert!(text(&message).contains("agent allow transcript-save"), "{message}");
    assert!(env.listed().is_empty());

    // Allowed on the running server: the permission is read on every call.
    env.json(&["agent", "allow", "transcript-save"]);
    let (failed, saved) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    assert!(!failed, "{saved}");
    assert_eq!(saved["name"], "checkpoint");
    assert_eq!(saved["session_file"], file.to_str().unwrap());
    assert_eq!(saved["entries"], 10);
    assert_eq!(saved["replaced"], false);

    // An existing name needs force: true.
    let (refused, message) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    assert!(refused && text(&message).contains("already exists"), "{message}");
    let (failed, forced) = client.call("snapshot_save", json!({"name": "checkpoint", "force": true}));
    assert!(!failed && forced["replaced"] == true, "{forced}");

    // Restoring is a separate permission.
    let (denied, message) =
        client.call("snapshot_restore", json!({"name": "checkpoint", "prompt": "/go on"}));
    assert!(denied && text(&message).contains("agent allow transcript-restore"), "{message}");
    env.json(&["agent", "allow", "transcript-restore"]);
    let (failed, restored) =
        client.call("snapshot_restore", json!({"name": "checkpoint", "prompt": "/go on"}));
    assert!(!failed, "{restored}");
    let session = PathBuf::from(text(&restored["session_file"]));
    assert_eq!(session.parent(), Some(env.pi_dir().as_path()));
    assert_eq!(restored["resume_command"], format!("pi --session {}", session.display()));
    assert_eq!(mode(&session), 0o600);
    let parsed = Transcript::read(&session).unwrap();
    assert_eq!(parsed.format(), Format::Pi);
    assert_eq!(leaf_to_root(&parsed.active_path()), leaf_to_root(&active(&file)));
    assert_eq!(restored["prompt"], "/go on");
    assert_eq!(std::fs::read_to_string(text(&restored["prompt_file"])).unwrap(), "/go on");

    // Denying again takes effect at once.
    env.json(&["agent", "deny", "transcript-restore"]);
    let (denied, _) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(denied);
}

#[test]
fn invalid_settings_refuse_the_pi_tools() {
    let env = Env::new();
    env.place("pi_v2.jsonl", "s.jsonl");
    env.json(&["agent", "allow", "transcript-save"]);
    let mut client = Client::start(&env);
    // The settings go bad while the server runs: the next call fails closed.
    let config = env.home.join(".local/share/cairn/config.toml");
    let valid = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, "[agent]\n\"transcript-save\" = \"yes please\"\n").unwrap();
    let (denied, message) = client.call("snapshot_save", json!({"name": "x"}));
    assert!(denied && text(&message).contains("settings cannot be read"), "{message}");
    std::fs::write(&config, valid).unwrap();
    assert!(env.listed().is_empty());
}
