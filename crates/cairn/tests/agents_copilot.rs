//! GitHub Copilot CLI's hooks through the real binary: `cairn hooks install copilot-cli` writes
//! cairn's own hook file (version 1, flat entries, `bash` commands naming their event) beside
//! the user's other hook files and uninstall removes it; the installed commands, run as
//! Copilot CLI runs them (`sh -c`, the camelCase event on stdin, which does not name itself),
//! take a checkpoint each turn of a real project, and `cairn rewind 2 --code` puts the files
//! back.
//!
//! Payloads follow github/docs' CLI hooks reference @ 927566b0 (`sessionId`, `timestamp` in
//! Unix ms, `cwd`, `toolName`, `toolArgs` an object, or a JSON string in older versions) and
//! the observed order `userPromptSubmitted` → (`postToolUse`)* → `agentStop`.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{TestEnv, contents};

/// The work tree's files and links with their contents and modes. A directory the agent made
/// and emptied is left out: the rewind puts back what the agent changed (its default), and an
/// empty directory holds nothing to lose.
fn files(root: &Path) -> Vec<(PathBuf, String)> {
    contents(root).into_iter().filter(|(_, what)| !what.starts_with("Dir")).collect()
}
use serde_json::{Value, json};

const SESSION: &str = "a995dbc4-4649-4073-82de-afcbbc8aec81";

/// A user's own hook file beside cairn's, and what a user may have put in `cairn.json` itself.
const AUDIT_HOOKS: &str = r#"{
  "version": 1,
  "hooks": {
    "preToolUse": [
      { "type": "command", "bash": "./scripts/audit.sh", "cwd": ".", "timeoutSec": 5, "comment": "log every tool" }
    ]
  }
}
"#;

#[test]
fn install_writes_its_own_file_keeps_the_users_entries_and_uninstall_gives_the_bytes_back() {
    let env = TestEnv::new();
    let hooks = env.home().join(".copilot/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("audit.json"), AUDIT_HOOKS).unwrap();

    let change = env.json(&["hooks", "install", "copilot-cli"]);
    assert_eq!(change["file_created"], true);
    assert_eq!(change["events"], json!(["userPromptSubmitted", "postToolUse", "agentStop"]));
    let ours = hooks.join("cairn.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&ours).unwrap()).unwrap();
    assert_eq!(value["version"], 1);
    assert!(value["hooks"].get("preToolUse").is_none(), "never preToolUse: a failing hook denies the tool");
    let post = &value["hooks"]["postToolUse"][0];
    assert_eq!(post["type"], "command");
    assert_eq!(post["timeoutSec"], 30);
    assert!(
        post["bash"].as_str().unwrap().contains("hook copilot-cli --event postToolUse --store"),
        "{post}"
    );
    assert_eq!(std::fs::read_to_string(hooks.join("audit.json")).unwrap(), AUDIT_HOOKS);

    let removed = env.json(&["hooks", "uninstall", "copilot-cli"]);
    assert_eq!(removed["file_removed"], true);
    assert!(!ours.exists());
    assert_eq!(std::fs::read_to_string(hooks.join("audit.json")).unwrap(), AUDIT_HOOKS);

    // A cairn.json holding the user's own entries too keeps them, byte for byte.
    std::fs::write(&ours, AUDIT_HOOKS).unwrap();
    env.ok(&["hooks", "install", "copilot-cli"]);
    let again = std::fs::read_to_string(&ours).unwrap();
    env.ok(&["hooks", "install", "copilot-cli"]);
    assert_eq!(std::fs::read_to_string(&ours).unwrap(), again);
    env.ok(&["hooks", "uninstall", "copilot-cli"]);
    assert_eq!(std::fs::read_to_string(&ours).unwrap(), AUDIT_HOOKS);
}

#[test]
fn the_project_scope_is_github_hooks_and_status_says_the_conversation_is_not_kept() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "copilot-cli", "--scope", "project"]);
    assert!(env.work().join(".github/hooks/cairn.json").is_file());
    let out = env.ok(&["hooks", "status", "copilot-cli"]);
    assert!(out.contains("code only"), "{out}");
    assert!(out.contains("/env"), "{out}");
}

/// Runs `command` through `sh -c` with a bare environment in `dir`, `stdin` on its input.
fn run_as_agent(env: &TestEnv, command: &str, stdin: &str, dir: &Path) -> std::process::Output {
    let mut child = std::process::Command::new("sh")
        .args(["-c", command])
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", "/usr/bin:/bin")
        .env("COPILOT_CLI", "1")
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// Fires `event` as Copilot CLI does; the hook exits 0 and prints nothing.
fn fire(env: &TestEnv, at: u64, event: &str, extra: Value) {
    let text = std::fs::read_to_string(env.home().join(".copilot/hooks/cairn.json")).unwrap();
    let hooks: Value = serde_json::from_str(&text).unwrap();
    let command = hooks["hooks"][event][0]["bash"].as_str().unwrap();
    let mut payload = json!({"sessionId": SESSION, "timestamp": 1_767_000_000_000u64 + at,
        "cwd": env.work().display().to_string()});
    for (k, v) in extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    let out = run_as_agent(env, command, &payload.to_string(), &env.work());
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn stop(env: &TestEnv, at: u64) {
    let transcript = env.home().join(format!(".copilot/session-state/{SESSION}/events.jsonl"));
    fire(
        env,
        at,
        "agentStop",
        json!({"transcriptPath": transcript.display().to_string(),
        "stopReason": "end_turn", "stop_hook_active": false}),
    );
}

#[test]
fn each_turn_is_checkpointed_and_rewind_2_code_puts_the_files_back_exactly() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home().join(".copilot")).unwrap();
    env.ok(&["hooks", "install", "copilot-cli"]);
    env.write("src/main.rs", "fn main() {\n    let v = false;\n}\n");
    env.write("notes/todo.md", "- verbose flag\n");

    fire(&env, 1, "userPromptSubmitted", json!({"prompt": "add a --verbose flag"}));
    env.write("src/main.rs", "fn main() {\n    let v = args.verbose;\n}\n");
    fire(
        &env,
        2,
        "postToolUse",
        json!({"toolName": "edit",
        "toolArgs": {"path": "src/main.rs", "old_str": "let v = false;", "new_str": "let v = args.verbose;"},
        "toolResult": {"resultType": "success", "textResultForLlm": "File src/main.rs updated."}}),
    );
    stop(&env, 3);
    let before_2 = files(&env.work());

    fire(&env, 4, "userPromptSubmitted", json!({"prompt": "done with the todo list; add a changelog"}));
    std::fs::remove_dir_all(env.work().join("notes")).unwrap();
    // An older Copilot CLI sends the arguments as a JSON string.
    fire(
        &env,
        5,
        "postToolUse",
        json!({"toolName": "bash", "toolArgs": "{\"command\":\"rm -r notes\",\"description\":\"clean\"}",
        "toolResult": {"resultType": "success", "textResultForLlm": ""}}),
    );
    env.write("CHANGELOG.md", "## 0.2\n- --verbose\n");
    fire(
        &env,
        6,
        "postToolUse",
        json!({"toolName": "create", "toolArgs": {"path": "CHANGELOG.md"},
        "toolResult": {"resultType": "success", "textResultForLlm": "Created."}}),
    );
    // A tool that changes nothing is not a file tool.
    fire(
        &env,
        7,
        "postToolUse",
        json!({"toolName": "view", "toolArgs": {"path": "CHANGELOG.md"},
        "toolResult": {"resultType": "success", "textResultForLlm": "## 0.2"}}),
    );
    stop(&env, 8);

    fire(&env, 9, "userPromptSubmitted", json!({"prompt": "bump the version"}));
    env.write("CHANGELOG.md", "## 0.3\n");
    fire(
        &env,
        10,
        "postToolUse",
        json!({"toolName": "edit", "toolArgs": {"path": "CHANGELOG.md"},
        "toolResult": {"resultType": "success", "textResultForLlm": "ok"}}),
    );
    stop(&env, 11);

    let turns = env.json(&["rewind", "--json"]).to_string();
    assert!(turns.contains("\"copilot-cli\"") && turns.contains(SESSION), "{turns}");
    env.ok(&["rewind", "2", "--code"]);
    assert_eq!(files(&env.work()), before_2);
}
