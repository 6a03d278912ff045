//! `cairn mcp --profile pi` as an MCP client sees it, over stdio.

use std::path::PathBuf;

use cairn_transcript::{Format, Transcript};
use serde_json::json;

use crate::client::{Client, text};
use crate::{Agents, TestEnv, active, leaf_to_root, mode};

const PI: &[&str] = &["mcp", "--profile", "pi"];

#[test]
fn the_pi_profile_serves_exactly_its_two_tools() {
    let env = TestEnv::new();
    let mut client = Client::start(&env, PI);
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
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    let mut client = Client::start(&env, PI);

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
    // The saved path, then the note that closes a restored session.
    assert_eq!(leaf_to_root(&parsed.active_path())[1..], leaf_to_root(&active(&file))[..]);
    assert_eq!(restored["prompt"], "/go on");
    assert_eq!(std::fs::read_to_string(text(&restored["prompt_file"])).unwrap(), "/go on");

    // Denying again takes effect at once.
    env.json(&["agent", "deny", "transcript-restore"]);
    let (denied, _) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(denied);
}

#[test]
fn invalid_settings_refuse_the_pi_tools_and_warn_naming_the_key() {
    let env = TestEnv::new();
    env.place("pi_v2.jsonl", "s.jsonl");
    env.json(&["agent", "allow", "transcript-save"]);
    let mut client = Client::start(&env, PI);
    // The settings go bad while the server runs: the next call fails closed, and the user is
    // told on stderr which setting is wrong.
    let config = env.store().join("config.toml");
    let valid = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, "[agent]\n\"transcript-save\" = \"yes please\"\n").unwrap();
    let (denied, message) = client.call("snapshot_save", json!({"name": "x"}));
    assert!(denied && text(&message).contains("agent.transcript-save"), "{message}");
    let stderr = client.stderr();
    assert!(
        stderr.contains("warning")
            && stderr.contains("agent.transcript-save")
            && stderr.contains("yes please"),
        "{stderr}"
    );
    std::fs::write(&config, valid).unwrap();
    assert!(env.listed().is_empty());
    // Fixed settings apply to the running server at once.
    let (failed, saved) = client.call("snapshot_save", json!({"name": "x"}));
    assert!(!failed, "{saved}");
}

#[test]
fn settings_invalid_at_start_never_let_a_pi_tool_run() {
    let env = TestEnv::new();
    env.place("pi_v2.jsonl", "s.jsonl");
    env.json(&["agent", "allow", "transcript-save", "transcript-restore"]);
    let config = env.store().join("config.toml");
    std::fs::write(&config, "[agent]\n\"transcript-save\" = \"yes please\"\n").unwrap();
    let mut client = Client::spawn(&env, PI);
    // Whether the server refuses to start or starts and refuses the calls, nothing is saved and
    // stderr names the setting that is wrong.
    if client.initialize().is_some() {
        let (denied, message) = client.call("snapshot_save", json!({"name": "x"}));
        assert!(denied, "{message}");
    } else {
        assert!(!client.wait().success());
    }
    let stderr = client.stderr();
    assert!(stderr.contains("agent.transcript-save") && stderr.contains("yes please"), "{stderr}");
    drop(client);
    std::fs::remove_file(&config).unwrap();
    assert!(env.listed().is_empty());
}

/// The pi profile's whole exchanges, allowed and refused, rendered as the MCP server's own
/// snapshots are (`>>> tool ARGS`, then `<<< ok` with the structured result or `<<< error`).
#[test]
fn pi_profile_exchanges() {
    let env = TestEnv::new();
    env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    env.json(&["agent", "allow", "transcript-save", "transcript-restore"]);
    let mut client = Client::start(&env, PI);
    let mut out = String::new();
    for (tool, args) in [
        ("snapshot_save", json!({"name": "checkpoint"})),
        ("snapshot_save", json!({"name": "checkpoint"})),
        ("snapshot_save", json!({"name": "checkpoint", "force": true})),
        ("snapshot_save", json!({"name": "../bad"})),
        ("snapshot_restore", json!({"name": "checkpoint", "prompt": "/go on"})),
        ("snapshot_restore", json!({"name": "nope"})),
        ("snapshot_restore", json!({})),
    ] {
        let (failed, result) = client.call(tool, args.clone());
        let shown = if failed {
            format!("<<< error\n{}\n", text(&result))
        } else {
            format!("<<< ok\n{}\n", serde_json::to_string_pretty(&result).unwrap())
        };
        out.push_str(&env.normalize(&format!(">>> {tool} {args}\n{shown}\n")));
    }
    insta::with_settings!({omit_expression => true}, {
        insta::assert_snapshot!("pi_profile_exchanges", out);
    });
}
