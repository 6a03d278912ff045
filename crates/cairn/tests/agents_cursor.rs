//! Cursor's hooks through the real binary: `cairn hooks install cursor` merges into a user's
//! own `hooks.json` (version 1, flat entries) and uninstall gives its bytes back; the installed
//! commands, run as Cursor runs them (`sh -c`, the event on stdin), take a checkpoint each turn
//! of a real project, and `cairn rewind 2 --code` puts the files back.
//!
//! Payloads follow Cursor's hooks docs (snapshot of 2026-08-25): every event carries
//! `conversation_id`, `generation_id` (new per prompt), `hook_event_name`, `workspace_roots`;
//! `afterFileEdit` has no `cwd`; `beforeSubmitPrompt` reads `{"continue": ...}` on stdout.

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

const CONVERSATION: &str = "7c1e0f2a-1111-4a4a-9b9b-0123456789ab";

/// A project's own `.cursor/hooks.json`: a shell guard and a formatter.
const PROJECT_HOOKS: &str = r#"{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [
      { "command": ".cursor/hooks/guard.sh", "matcher": "rm -rf|git push --force", "failClosed": true }
    ],
    "afterFileEdit": [
      { "command": ".cursor/hooks/format.sh", "timeout": 10 }
    ]
  }
}
"#;

#[test]
fn install_merges_into_the_projects_hooks_twice_changes_nothing_and_uninstall_gives_the_bytes_back() {
    let env = TestEnv::new();
    let path = env.work().join(".cursor/hooks.json");
    env.write(".cursor/hooks.json", PROJECT_HOOKS);

    let change = env.json(&["hooks", "install", "cursor", "--scope", "project"]);
    assert_eq!(
        change["events"],
        json!(["beforeSubmitPrompt", "afterFileEdit", "afterShellExecution", "stop"])
    );
    let installed = std::fs::read_to_string(&path).unwrap();
    let mut rest = installed.as_str();
    for line in PROJECT_HOOKS.lines() {
        let at = rest.find(line).unwrap_or_else(|| panic!("{line:?} is gone or moved:\n{installed}"));
        rest = &rest[at + line.len()..];
    }
    let value: Value = serde_json::from_str(&installed).unwrap();
    let keys: Vec<&String> = value["hooks"].as_object().unwrap().keys().collect();
    // Only events Cursor knows: one unknown name turns the whole file off.
    for key in keys {
        assert!(
            ["beforeShellExecution", "afterFileEdit", "beforeSubmitPrompt", "afterShellExecution", "stop"]
                .contains(&key.as_str()),
            "{key}"
        );
    }
    assert_eq!(value["hooks"]["afterFileEdit"][1]["timeout"], 30);
    assert!(value["hooks"]["afterFileEdit"][1]["command"].as_str().unwrap().contains("hook cursor --store"));

    let again = env.json(&["hooks", "install", "cursor", "--scope", "project"]);
    assert_eq!(again["changed"], false);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);

    env.ok(&["hooks", "uninstall", "cursor", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), PROJECT_HOOKS);
}

#[test]
fn a_user_file_install_created_holds_version_1_and_is_removed_again() {
    let env = TestEnv::new();
    let path = env.home().join(".cursor/hooks.json");
    let change = env.json(&["hooks", "install", "cursor"]);
    assert_eq!(change["file_created"], true);
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(value["version"], 1);
    let removed = env.json(&["hooks", "uninstall", "cursor"]);
    assert_eq!(removed["file_removed"], true);
    assert!(!path.exists());
}

#[test]
fn a_store_named_by_a_url_is_refused_since_cursor_would_turn_the_file_off() {
    let env = TestEnv::new().with_store("s3://bucket/cairn");
    let err = env.fails(&["hooks", "install", "cursor", "--scope", "project"], 2);
    assert!(err.contains("URL"), "{err}");
    assert!(!env.work().join(".cursor/hooks.json").exists());
}

/// Runs `command` through `sh -c` with a bare environment in `dir`, `stdin` on its input.
fn run_as_agent(env: &TestEnv, command: &str, stdin: &str, dir: &Path) -> std::process::Output {
    let mut child = std::process::Command::new("sh")
        .args(["-c", command])
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// Fires `event` as Cursor does, from the hooks file's directory (`~/.cursor/` for user hooks);
/// returns the hook's stdout. It exits 0 and says nothing on stderr.
fn fire(env: &TestEnv, generation: u32, event: &str, extra: Value) -> String {
    let text = std::fs::read_to_string(env.home().join(".cursor/hooks.json")).unwrap();
    let hooks: Value = serde_json::from_str(&text).unwrap();
    let command = hooks["hooks"][event][0]["command"].as_str().unwrap();
    let work = env.work().display().to_string();
    let mut payload = json!({"hook_event_name": event, "conversation_id": CONVERSATION,
        "generation_id": format!("3f9d2c10-aaaa-4bbb-8ccc-{generation:012}"), "model": "default",
        "cursor_version": "3.18.25", "workspace_roots": [work], "user_email": null,
        "transcript_path": env.home().join(format!(".cursor/projects/work/agent-transcripts/{CONVERSATION}/{CONVERSATION}.jsonl")).display().to_string()});
    for (k, v) in extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    let out = run_as_agent(env, command, &payload.to_string(), &env.home().join(".cursor"));
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// One turn: the prompt, an edit (`edit` writes it and gives `afterFileEdit`'s fields), a shell
/// command (`shell` runs its effects), the end.
fn turn(env: &TestEnv, n: u32, prompt: &str, edit: impl FnOnce() -> Value, shell: Option<(&str, &dyn Fn())>) {
    let said = fire(env, n, "beforeSubmitPrompt", json!({"prompt": prompt, "attachments": []}));
    assert_eq!(said, "{\"continue\":true}\n");
    let file = edit();
    assert_eq!(fire(env, n, "afterFileEdit", file), "");
    if let Some((command, effects)) = shell {
        effects();
        let work = env.work().display().to_string();
        let extra = json!({"command": command, "output": "", "duration": 12, "sandbox": false, "cwd": work});
        assert_eq!(fire(env, n, "afterShellExecution", extra), "");
    }
    assert_eq!(fire(env, n, "stop", json!({"status": "completed", "loop_count": 0})), "");
}

#[test]
fn each_turn_is_checkpointed_and_rewind_2_code_puts_the_files_back_exactly() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home().join(".cursor")).unwrap();
    env.ok(&["hooks", "install", "cursor"]);
    env.write("src/lib.rs", "fn foo() {}\n");
    env.write("Cargo.toml", "[package]\nname = \"proj\"\n");
    let lib = env.work().join("src/lib.rs");

    turn(
        &env,
        1,
        "rename foo to bar",
        || {
            env.write("src/lib.rs", "fn bar() {}\n");
            json!({"file_path": lib.display().to_string(), "edits": [{"old_string": "fn foo()", "new_string": "fn bar()"}]})
        },
        None,
    );
    let before_2 = files(&env.work());

    turn(
        &env,
        2,
        "add a test and clean the build",
        || {
            env.write("src/lib.rs", "fn bar() {}\n\n#[test]\nfn t() { bar() }\n");
            json!({"file_path": lib.display().to_string(), "edits": [{"old_string": "", "new_string": "#[test]"}]})
        },
        Some(("rm Cargo.toml && mkdir -p target && touch target/x", &|| {
            std::fs::remove_file(env.work().join("Cargo.toml")).unwrap();
            env.write("target/x", "");
        })),
    );

    turn(
        &env,
        3,
        "more",
        || {
            env.write("src/more.rs", "pub fn more() {}\n");
            json!({"file_path": env.work().join("src/more.rs").display().to_string(), "edits": []})
        },
        None,
    );

    let turns = env.json(&["rewind", "--json"]).to_string();
    assert!(turns.contains("\"cursor\"") && turns.contains(CONVERSATION), "{turns}");
    env.ok(&["rewind", "2", "--code"]);
    assert_eq!(files(&env.work()), before_2);
}
