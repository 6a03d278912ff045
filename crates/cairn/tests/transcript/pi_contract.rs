//! Issue 13, items 11 to 15: the pi profile of `cairn mcp` against the pi-session-snapshot
//! contract, over stdio, with session files placed where Pi keeps them.

use std::path::{Path, PathBuf};

use cairn_transcript::Transcript;
use serde_json::{Value, json};

use crate::client::{Client, text};
use crate::{Agents, TestEnv, active, ids, mode};

const PI: &[&str] = &["mcp", "--profile", "pi"];
const SESSION_FILE: &str = "2025-01-10T09-00-00-000Z_0193a1f0.jsonl";

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

fn global_settings(env: &TestEnv) -> PathBuf {
    env.home().join(".pi/agent/settings.json")
}

fn project_settings(env: &TestEnv) -> PathBuf {
    env.work().join(".pi/settings.json")
}

#[test]
fn pi_settings_decide_the_defaults_and_cairn_agent_still_overrides() {
    let env = TestEnv::new();
    env.place("pi_v3_branched.jsonl", SESSION_FILE);
    write_json(
        &global_settings(&env),
        &json!({"theme": "dark", "pi-session-snapshot": {"agentSaveToolAllowed": true}}),
    );
    let mut client = Client::start(&env, PI);
    let (failed, saved) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    assert!(!failed, "{saved}");
    let (denied, message) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(denied && text(&message).contains("transcript-restore"), "{message}");

    // A project's file overrides field by field; an untrusted one may only turn a tool off.
    write_json(
        &project_settings(&env),
        &json!({"pi-session-snapshot": {"agentSaveToolAllowed": false, "agentRestoreToolAllowed": true}}),
    );
    let (denied, _) = client.call("snapshot_save", json!({"name": "checkpoint", "force": true}));
    assert!(denied);
    let (denied, _) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(denied);
    assert!(client.stderr().contains("the project is not trusted"), "{}", client.stderr());
    drop(client);
    let mut trusted = Client::start_with(&env, PI, &[("CAIRN_PI_TRUST_PROJECT", "1")]);
    let (failed, restored) = trusted.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(!failed, "{restored}");
    drop(trusted);

    // An invalid value fails closed, with a warning naming the file and the key.
    std::fs::remove_file(project_settings(&env)).unwrap();
    write_json(&global_settings(&env), &json!({"pi-session-snapshot": {"agentSaveToolAllowed": "yes"}}));
    let mut client = Client::start(&env, PI);
    let (denied, _) = client.call("snapshot_save", json!({"name": "checkpoint", "force": true}));
    assert!(denied);
    let stderr = client.stderr();
    assert!(
        stderr.contains("pi-session-snapshot.agentSaveToolAllowed") && stderr.contains("settings.json"),
        "{stderr}"
    );

    // The store's own answer wins over Pi's settings, both ways.
    env.json(&["agent", "allow", "transcript-save"]);
    let (failed, saved) = client.call("snapshot_save", json!({"name": "checkpoint", "force": true}));
    assert!(!failed, "{saved}");
    write_json(&global_settings(&env), &json!({"pi-session-snapshot": {"agentSaveToolAllowed": true}}));
    env.json(&["agent", "deny", "transcript-save"]);
    let (denied, _) = client.call("snapshot_save", json!({"name": "checkpoint", "force": true}));
    assert!(denied);
}

#[test]
fn pi_restored_session_ends_with_a_note_the_model_does_not_see() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", SESSION_FILE);
    env.json(&["agent", "allow", "transcript-save", "transcript-restore"]);
    let mut client = Client::start(&env, PI);
    client.call("snapshot_save", json!({"name": "checkpoint"}));
    let (failed, restored) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(!failed, "{restored}");
    let session = std::fs::read_to_string(text(&restored["session_file"])).unwrap();
    let last: Value = serde_json::from_str(session.lines().last().unwrap()).unwrap();
    // A `custom` entry: Pi's session context never sends those to the model.
    assert_eq!(last["type"], "custom");
    assert_eq!(last["customType"], "pi-session-snapshot");
    assert_eq!(last["data"]["message"], "Restored session snapshot \"checkpoint\".");
    assert_eq!(last["parentId"], active(&file).leaf_id().unwrap());
    assert_eq!(text(&last["id"]).len(), 8);
    // Everything before it is the saved path, unchanged.
    let parsed = Transcript::read(Path::new(text(&restored["session_file"]))).unwrap().active_path();
    let mut expected = ids(&active(&file));
    expected.push(Some(text(&last["id"]).to_owned()));
    assert_eq!(ids(&parsed), expected);
}

#[test]
fn pi_save_keeps_the_fork_file_pi_starts_from() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", SESSION_FILE);
    env.json(&["agent", "allow", "transcript-save"]);
    let mut client = Client::start(&env, PI);
    let (failed, saved) = client.call("snapshot_save", json!({"name": "baseline"}));
    assert!(!failed, "{saved}");
    let fork = env.home().join(".pi/agent/pi-session-snapshot/baseline.jsonl");
    assert_eq!(saved["fork_file"], fork.to_str().unwrap());
    assert_eq!(mode(&fork), 0o600);
    assert_eq!(mode(fork.parent().unwrap()), 0o700);
    let forked = Transcript::read(&fork).unwrap();
    assert_eq!(forked.pi_version(), Some(3));
    assert_eq!(ids(&forked.active_path()), ids(&active(&file)));

    // A forced save of the name brings the file up to date.
    let mut text_now = std::fs::read_to_string(&file).unwrap();
    text_now.push_str(r#"{"type":"message","id":"c0000006","parentId":"c0000005","timestamp":"2025-01-10T09:04:00.000Z","message":{"role":"user","content":"Thanks.","timestamp":1736499840000}}"#);
    text_now.push('\n');
    std::fs::write(&file, text_now).unwrap();
    client.call("snapshot_save", json!({"name": "baseline", "force": true}));
    assert_eq!(Transcript::read(&fork).unwrap().leaf_id(), Some("c0000006"));
}

#[test]
fn pi_save_after_restore_keeps_to_the_served_conversation() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", SESSION_FILE);
    env.json(&["agent", "allow", "transcript-save", "transcript-restore"]);
    let mut client = Client::start(&env, PI);
    let (_, first) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    assert_eq!(first["session_file"], file.to_str().unwrap());
    let (failed, restored) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(!failed, "{restored}");
    // The restored copy is now the newest file of the directory; the server still serves its
    // own conversation.
    let (failed, again) = client.call("snapshot_save", json!({"name": "later"}));
    assert!(!failed, "{again}");
    assert_eq!(again["session_file"], file.to_str().unwrap());
}

#[test]
fn pi_save_during_a_run_ends_before_tool_calls_without_results() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", SESSION_FILE);
    // The agent's own call to snapshot_save is the last entry: its result is not written yet.
    let mut session = std::fs::read_to_string(&file).unwrap();
    session.push_str(r#"{"type":"message","id":"c0000006","parentId":"c0000005","timestamp":"2025-01-10T09:04:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Saving a checkpoint."},{"type":"toolCall","id":"call_9","name":"snapshot_save","arguments":{"name":"checkpoint"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":1736499840000}}"#);
    session.push('\n');
    std::fs::write(&file, session).unwrap();
    env.json(&["agent", "allow", "transcript-save"]);
    let mut client = Client::start(&env, PI);
    let (failed, saved) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    assert!(!failed, "{saved}");
    assert_eq!(saved["entries"], 10);
    let skipped = saved["not_covered"]["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| text(&s["reason"]).starts_with("unanswered-tool-call")), "{skipped:?}");
    let fork = Transcript::read(Path::new(text(&saved["fork_file"]))).unwrap();
    assert_eq!(fork.leaf_id(), Some("c0000005"));
}

#[test]
fn pi_restore_takes_names_only() {
    let env = TestEnv::new();
    env.place("pi_v3_branched.jsonl", SESSION_FILE);
    env.json(&["agent", "allow", "transcript-save", "transcript-restore"]);
    let mut client = Client::start(&env, PI);
    let (_, saved) = client.call("snapshot_save", json!({"name": "checkpoint"}));
    let id = text(&saved["snapshot_id"]).to_owned();
    for reference in ["latest", id.as_str(), &id[..8]] {
        let (refused, message) = client.call("snapshot_restore", json!({"name": reference}));
        assert!(refused, "{reference}: {message}");
        let message = text(&message);
        assert!(
            message.contains("no snapshot named") && message.contains("not by id or \"latest\""),
            "{reference}: {message}"
        );
    }
    let (failed, restored) = client.call("snapshot_restore", json!({"name": "checkpoint"}));
    assert!(!failed, "{restored}");
}
