//! Issue 13, items 16 to 21: transcripts as the agents themselves read and write them. The
//! session files are written here to the formats of Claude Code 2.0 / 2.1 and Pi (versions 1
//! and 3), as studied from real files and Pi's session manager.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::client::{Client, text};
use crate::{Agents, TestEnv, ids};

fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn age(path: &Path, seconds_ago: u64) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(seconds_ago);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
}

const SESSION: &str = "5f2c7e3a-1111-4222-8333-444455556666";

/// A Claude Code entry of the main chain.
fn claude(kind: &str, uuid: &str, parent: Option<&str>, content: Value) -> Value {
    json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/home/a/proj",
        "sessionId": SESSION, "version": "2.0.14", "type": kind,
        "message": {"role": kind, "content": content}, "uuid": uuid, "timestamp": "2025-10-01T12:00:00.000Z"})
}

/// A subagent's entry, as Claude Code writes it to `agent-<id>.jsonl`.
fn sidechain(uuid: &str, parent: Option<&str>, agent: &str, content: &str) -> Value {
    json!({"parentUuid": parent, "isSidechain": true, "userType": "external", "cwd": "/home/a/proj",
        "sessionId": SESSION, "version": "2.0.14", "agentId": agent, "type": "user",
        "message": {"role": "user", "content": content}, "uuid": uuid, "timestamp": "2025-10-01T12:00:01.000Z"})
}

#[test]
fn transcript_save_passes_over_a_newer_agent_sidechain_file() {
    let env = TestEnv::new();
    let main = env.place("claude_sidechain.jsonl", &format!("{SESSION}.jsonl"));
    age(&main, 60);
    // Claude Code 2.0 keeps each subagent's conversation beside the sessions; here it is the
    // newest file of the directory.
    let agent = env.claude_dir().join("agent-4f1b2c3d.jsonl");
    write_lines(
        &agent,
        &[sidechain("aaaaaaaa-0000-4000-8000-0000000000a1", None, "4f1b2c3d", "Find the login test")],
    );

    let saved = env.json(&["transcript", "save", "checkpoint"]);
    assert_eq!(saved["file"], main.to_str().unwrap());

    // The pi profile picks the same way when no transcript is named.
    env.json(&["agent", "allow", "transcript-save"]);
    let mut client = Client::start(&env, &["mcp", "--profile", "pi"]);
    let (failed, saved) = client.call("snapshot_save", json!({"name": "from-mcp"}));
    assert!(!failed, "{saved}");
    assert_eq!(saved["session_file"], main.to_str().unwrap());

    // Named explicitly, the subagent's file is refused for what it is.
    let err = env.fails(&["transcript", "save", agent.to_str().unwrap(), "agent"], 2);
    assert!(err.contains("is a subagent's transcript"), "{err}");
}

/// A Pi v3 session whose assistant message was glued to the next entry with no newline, and
/// whose last line was torn when the agent was killed.
fn damaged_pi_session(path: &Path) {
    let header = json!({"type": "session", "version": 3, "id": "0193b000-1111-7222-8333-444455556666",
        "timestamp": "2025-02-01T10:00:00.000Z", "cwd": "/home/a/proj"});
    let user = json!({"type": "message", "id": "e0000001", "parentId": null, "timestamp": "2025-02-01T10:00:01.000Z",
        "message": {"role": "user", "content": "Run the tests.", "timestamp": 1738404001000u64}});
    let assistant = json!({"type": "message", "id": "e0000002", "parentId": "e0000001", "timestamp": "2025-02-01T10:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "make test"}}],
        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse", "timestamp": 1738404002000u64}});
    let result = json!({"type": "message", "id": "e0000003", "parentId": "e0000002", "timestamp": "2025-02-01T10:00:03.000Z",
        "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "bash", "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 1738404003000u64}});
    let after = json!({"type": "message", "id": "e0000004", "parentId": "e0000003", "timestamp": "2025-02-01T10:00:04.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "All tests pass."}],
        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": 1738404004000u64}});
    let torn = r#"{"type":"message","id":"e0000005","parentId":"e0000004","timestamp":"2025-02-01T10:00:05.000Z","message":{"role":"user","content":"Now commit"#;
    let text = format!("{header}\n{user}\n{assistant}{result}\n{after}\n{torn}");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn unparsable_lines_are_skipped_as_pi_skips_them_and_reported() {
    let env = TestEnv::new();
    let file = env.pi_dir().join("2025-02-01T10-00-00-000Z_0193b000.jsonl");
    damaged_pi_session(&file);

    let saved = env.json(&["transcript", "save", file.to_str().unwrap(), "damaged"]);
    let lines: Vec<u64> =
        saved["skipped_lines"].as_array().unwrap().iter().map(|s| s["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [3, 5]);
    let skipped = saved["not_covered"]["skipped"].as_array().unwrap();
    let named: Vec<&str> = skipped.iter().map(|s| text(&s["path"])).collect();
    assert!(
        named.contains(&"line 3") && named.contains(&"line 5") && named.contains(&"line 4"),
        "{skipped:?}"
    );
    // The position of the parse error is given inside the line, never as "line 1 column N",
    // which would read as a second line number beside cairn's.
    for entry in skipped {
        assert!(!text(&entry["reason"]).contains("line 1 column"), "{entry}");
    }
    assert!(text(&skipped[0]["reason"]).contains("at character"), "{}", skipped[0]);
    // As Pi walks back from its leaf, the path starts at the entry whose parent was lost.
    let exported = env.json(&["transcript", "export", "damaged", "-o", "out.jsonl"]);
    let written = std::fs::read_to_string(text(&exported["file"])).unwrap();
    let path = cairn_transcript::Transcript::parse_saved("out.jsonl", &written).unwrap().active_path();
    assert_eq!(ids(&path), [Some("e0000004".to_owned())]);

    // The human output says what was skipped.
    let out = env.cairn(&["transcript", "save", file.to_str().unwrap(), "again"]).assert().success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(out.contains("skipped 2 line(s) that are not valid JSON") && out.contains("line 3, 5"), "{out}");

    // --strict keeps the refusal, with the file's line and the position within it.
    let err = env.fails(&["transcript", "save", "--strict", file.to_str().unwrap(), "strict"], 2);
    assert!(err.contains("line 3 is not valid JSON") && err.contains("at character"), "{err}");
    assert!(!err.contains("line 1 column"), "{err}");
}

#[test]
fn the_save_says_how_many_entries_on_other_branches_it_left_out() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    let saved = env.json(&["transcript", "save", file.to_str().unwrap(), "branched"]);
    assert_eq!(saved["off_path"], 2);
    let out =
        env.cairn(&["transcript", "save", file.to_str().unwrap(), "branched", "--force"]).assert().success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(out.contains("left out: 2 entries on other branches"), "{out}");

    // In Claude Code, a `!` command typed at the first prompt branches off it; the answer to
    // the prompt hangs from the prompt too, so the bash exchange is the branch left out.
    let claude_file = env.claude_dir().join(format!("{SESSION}.jsonl"));
    write_lines(
        &claude_file,
        &[
            claude("user", "11111111-0000-4000-8000-000000000001", None, json!("Tidy the README.")),
            claude(
                "user",
                "11111111-0000-4000-8000-000000000002",
                Some("11111111-0000-4000-8000-000000000001"),
                json!("<bash-input>ls</bash-input>"),
            ),
            claude(
                "user",
                "11111111-0000-4000-8000-000000000003",
                Some("11111111-0000-4000-8000-000000000002"),
                json!("<bash-stdout>README.md</bash-stdout><bash-stderr></bash-stderr>"),
            ),
            claude(
                "assistant",
                "11111111-0000-4000-8000-000000000004",
                Some("11111111-0000-4000-8000-000000000001"),
                json!([{"type": "text", "text": "Done."}]),
            ),
        ],
    );
    let saved = env.json(&["transcript", "save", claude_file.to_str().unwrap(), "claude"]);
    assert_eq!(saved["off_path"], 2);
    let skipped = saved["not_covered"]["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s["path"] == "2 entries on other branches"), "{skipped:?}");
}

#[test]
fn the_first_prompt_shown_in_lists_skips_meta_entries() {
    let env = TestEnv::new();
    let file = env.claude_dir().join(format!("{SESSION}.jsonl"));
    let mut caveat = claude(
        "user",
        "22222222-0000-4000-8000-000000000001",
        None,
        json!(
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to."
        ),
    );
    caveat["isMeta"] = json!(true);
    write_lines(
        &file,
        &[
            caveat,
            claude(
                "user",
                "22222222-0000-4000-8000-000000000002",
                Some("22222222-0000-4000-8000-000000000001"),
                json!(
                    "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"
                ),
            ),
            claude(
                "user",
                "22222222-0000-4000-8000-000000000003",
                Some("22222222-0000-4000-8000-000000000002"),
                json!([{"type": "text", "text": "<ide_selection>The user selected the lines 3 to 9 from /home/a/proj/src/login.ts:\nawait page.click()\n\nThis may or may not be related to the current task.</ide_selection>"},
                       {"type": "text", "text": "Why is this click flaky?"}]),
            ),
            claude(
                "assistant",
                "22222222-0000-4000-8000-000000000004",
                Some("22222222-0000-4000-8000-000000000003"),
                json!([{"type": "text", "text": "It does not wait."}]),
            ),
        ],
    );
    env.json(&["transcript", "save", file.to_str().unwrap(), "flaky"]);
    let listed = env.listed();
    assert_eq!(listed[0]["summary"]["first_user_message"], "Why is this click flaky?");
}

#[test]
fn a_file_of_summary_lines_only_is_refused_for_what_it_is() {
    let env = TestEnv::new();
    let file = env.claude_dir().join("3c9d0000-1111-4222-8333-444455556666.jsonl");
    write_lines(
        &file,
        &[
            json!({"type": "summary", "summary": "Login test fix", "leafUuid": "99999999-0000-4000-8000-000000000001"}),
            json!({"type": "summary", "summary": "README tidy", "leafUuid": "99999999-0000-4000-8000-000000000002"}),
        ],
    );
    let err = env.fails(&["transcript", "save", file.to_str().unwrap(), "titles"], 2);
    assert!(err.contains("holds only 2 summary line(s)") && err.contains("no conversation"), "{err}");
    assert!(env.listed().is_empty());
}

#[test]
fn exporting_a_pi_v1_file_keeps_provider_model_and_thinking_level() {
    let env = TestEnv::new();
    let file: PathBuf = env.pi_dir().join("2024-07-01T10-00-00-000Z_0190e000.jsonl");
    write_lines(
        &file,
        &[
            json!({"type": "session", "id": "0190e000-aaaa-7bbb-8ccc-000000000009", "timestamp": "2024-07-01T10:00:00.000Z",
                "cwd": "/home/a/proj", "provider": "anthropic", "modelId": "claude-3-5-sonnet-20240620", "thinkingLevel": "off"}),
            json!({"type": "message", "timestamp": "2024-07-01T10:00:01.000Z", "message": {"role": "user", "content": "Hello", "timestamp": 1719828001000u64}}),
        ],
    );
    env.json(&["transcript", "save", file.to_str().unwrap(), "v1"]);
    let exported = env.json(&["transcript", "export", "v1", "-o", "v1.jsonl"]);
    let written = std::fs::read_to_string(text(&exported["file"])).unwrap();
    let header: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!(
        header,
        json!({"type": "session", "version": 3, "id": "0190e000-aaaa-7bbb-8ccc-000000000009", "timestamp": "2024-07-01T10:00:00.000Z",
            "cwd": "/home/a/proj", "provider": "anthropic", "modelId": "claude-3-5-sonnet-20240620", "thinkingLevel": "off"})
    );
    // A loaded session's new header keeps them too.
    let loaded = env.json(&["transcript", "load", "v1"]);
    let written = std::fs::read_to_string(text(&loaded["file"])).unwrap();
    let header: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!(header["modelId"], "claude-3-5-sonnet-20240620");
    assert_eq!(header["thinkingLevel"], "off");
}

#[test]
fn claude_subagent_transcripts_are_saved_with_the_session_and_loaded_beside_it() {
    let env = TestEnv::new();
    let dir = env.claude_dir();
    let main = dir.join(format!("{SESSION}.jsonl"));
    // One Task result per layout: Claude Code 2.1 (`<session>/subagents/`) and 2.0 (beside).
    let mut first_result = claude(
        "user",
        "33333333-0000-4000-8000-000000000003",
        Some("33333333-0000-4000-8000-000000000002"),
        json!([{"tool_use_id": "toolu_01", "type": "tool_result", "content": [{"type": "text", "text": "tests/login.spec.ts"}]}]),
    );
    first_result["toolUseResult"] = json!({"status": "completed", "prompt": "Find the login test", "agentId": "a96cf8a57447af436",
        "agentType": "general-purpose", "totalDurationMs": 5118, "totalTokens": 17824, "totalToolUseCount": 1});
    let mut second_result = claude(
        "user",
        "33333333-0000-4000-8000-000000000005",
        Some("33333333-0000-4000-8000-000000000004"),
        json!([{"tool_use_id": "toolu_02", "type": "tool_result", "content": [{"type": "text", "text": "no other callers"}]}]),
    );
    second_result["toolUseResult"] =
        json!({"status": "completed", "prompt": "Find callers", "agentId": "4f1b2c3d"});
    write_lines(
        &main,
        &[
            claude(
                "user",
                "33333333-0000-4000-8000-000000000001",
                None,
                json!("Why is the login test flaky?"),
            ),
            claude(
                "assistant",
                "33333333-0000-4000-8000-000000000002",
                Some("33333333-0000-4000-8000-000000000001"),
                json!([{"type": "tool_use", "id": "toolu_01", "name": "Task", "input": {"description": "search", "prompt": "Find the login test", "subagent_type": "general-purpose"}}]),
            ),
            first_result,
            claude(
                "assistant",
                "33333333-0000-4000-8000-000000000004",
                Some("33333333-0000-4000-8000-000000000003"),
                json!([{"type": "tool_use", "id": "toolu_02", "name": "Task", "input": {"description": "callers", "prompt": "Find callers", "subagent_type": "general-purpose"}}]),
            ),
            second_result,
        ],
    );
    let nested = dir.join(SESSION).join("subagents/agent-a96cf8a57447af436.jsonl");
    write_lines(
        &nested,
        &[sidechain(
            "aaaaaaaa-0000-4000-8000-0000000000a1",
            None,
            "a96cf8a57447af436",
            "Find the login test",
        )],
    );
    let meta = dir.join(SESSION).join("subagents/agent-a96cf8a57447af436.meta.json");
    std::fs::write(&meta, r#"{"agentType":"general-purpose"}"#).unwrap();
    let beside = dir.join("agent-4f1b2c3d.jsonl");
    write_lines(
        &beside,
        &[sidechain("bbbbbbbb-0000-4000-8000-0000000000b1", None, "4f1b2c3d", "Find callers")],
    );

    let saved = env.json(&["transcript", "save", main.to_str().unwrap(), "with-agents"]);
    assert_eq!(
        saved["subagent_files"],
        json!([
            format!("{SESSION}/subagents/agent-a96cf8a57447af436.jsonl"),
            format!("{SESSION}/subagents/agent-a96cf8a57447af436.meta.json"),
            "agent-4f1b2c3d.jsonl"
        ])
    );
    assert_eq!(saved["stats"]["files"], 4);

    // The subagents' files come back from the store, under the new session's id.
    std::fs::remove_dir_all(dir.join(SESSION)).unwrap();
    std::fs::remove_file(&beside).unwrap();
    let loaded = env.json(&["transcript", "load", "with-agents"]);
    let new_id = text(&loaded["session_id"]).to_owned();
    let restored = dir.join(&new_id).join("subagents/agent-a96cf8a57447af436.jsonl");
    for file in [&restored, &dir.join("agent-4f1b2c3d.jsonl")] {
        let line: Value =
            serde_json::from_str(std::fs::read_to_string(file).unwrap().lines().next().unwrap()).unwrap();
        assert_eq!(line["sessionId"], new_id.as_str(), "{}", file.display());
        assert_eq!(line["isSidechain"], true);
    }
    let meta_back = dir.join(&new_id).join("subagents/agent-a96cf8a57447af436.meta.json");
    assert_eq!(std::fs::read_to_string(meta_back).unwrap(), r#"{"agentType":"general-purpose"}"#);
    // The loaded session itself holds no trace of how the files were carried.
    let session = std::fs::read_to_string(text(&loaded["file"])).unwrap();
    assert!(!session.contains("cairn-attached-file"), "{session}");
    let exported = env.json(&["transcript", "export", "with-agents", "-o", "out.jsonl"]);
    assert!(!std::fs::read_to_string(text(&exported["file"])).unwrap().contains("cairn-attached-file"));

    // A subagent named on the path whose file is gone is listed in not_covered.
    std::fs::remove_file(dir.join("agent-4f1b2c3d.jsonl")).unwrap();
    let saved = env.json(&["transcript", "save", text(&loaded["file"]), "missing-agent"]);
    let skipped = saved["not_covered"]["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["path"] == "agent-4f1b2c3d.jsonl" && text(&s["reason"]).starts_with("missing")),
        "{skipped:?}"
    );
}
