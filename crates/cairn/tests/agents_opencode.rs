//! OpenCode through the real binary: `cairn hooks install opencode` writes cairn's own plugin
//! file (idempotent, removed exactly, an edited copy refused); the command that plugin runs,
//! run as it runs it (cairn's path and `--store`, the payload on stdin, OpenCode's directory),
//! takes a checkpoint each turn of a real project, and `cairn rewind 2 --code` puts the files
//! back. OpenCode's conversations are SQLite rows cairn does not write: code only.
//!
//! Order, as OpenCode 1.x runs it: `chat.message` (awaited, before the message is stored and
//! the model runs), `tool.execute.after` for each tool, then the `session.idle` event.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{TestEnv, contents};
use serde_json::{Value, json};

const SESSION: &str = "ses_2b1f0c3d4e5fAbCdEfGhIjKlMn";

fn files(root: &Path) -> Vec<(PathBuf, String)> {
    contents(root).into_iter().filter(|(_, what)| !what.starts_with("Dir")).collect()
}

fn plugin(env: &TestEnv) -> PathBuf {
    env.work().join(".opencode/plugin/cairn.ts")
}

/// The value of the plugin's `const NAME = ...;` line.
fn constant(text: &str, name: &str) -> Option<String> {
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("const {name} = ")))?;
    serde_json::from_str(line.strip_suffix(';')?).unwrap()
}

#[test]
fn install_writes_the_plugin_twice_changes_nothing_and_uninstall_removes_it() {
    let env = TestEnv::new();
    let path = plugin(&env);
    let change = env.json(&["hooks", "install", "opencode", "--scope", "project"]);
    assert_eq!(change["file_created"], true);
    assert_eq!(change["events"], json!(["chat.message", "tool.execute.after", "session.idle"]));
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written.matches("export ").count(), 1, "exactly one export");
    let again = env.json(&["hooks", "install", "opencode", "--scope", "project"]);
    assert_eq!(again["changed"], false);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
    let status = env.json(&["hooks", "status", "opencode"]);
    assert_eq!(
        status["places"][1]["installed"],
        json!(["chat.message", "tool.execute.after", "session.idle"])
    );
    assert_eq!(status["agents"][0]["layers"], "code_only");
    env.ok(&["hooks", "uninstall", "opencode", "--scope", "project"]);
    assert!(!path.exists());
}

#[test]
fn the_user_plugin_goes_to_opencode_config_dir_when_it_is_set() {
    let env = TestEnv::new();
    let dir = env.root().join("oc-config");
    let env = env.with_var("OPENCODE_CONFIG_DIR", &dir);
    let change = env.json(&["hooks", "install", "opencode"]);
    assert_eq!(change["file"], dir.join("plugin/cairn.ts").display().to_string());
    let default = TestEnv::new();
    let change = default.json(&["hooks", "install", "opencode"]);
    assert_eq!(change["file"], default.home().join(".config/opencode/plugin/cairn.ts").display().to_string());
}

#[test]
fn a_user_edited_plugin_is_neither_replaced_nor_removed() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "opencode", "--scope", "project"]);
    let edited = std::fs::read_to_string(plugin(&env)).unwrap().replace("\"bash\"]", "\"bash\", \"mine\"]");
    std::fs::write(plugin(&env), &edited).unwrap();
    let err = env.fails(&["hooks", "uninstall", "opencode", "--scope", "project"], 2);
    assert!(err.contains("is not the file cairn wrote"), "{err}");
    assert_eq!(std::fs::read_to_string(plugin(&env)).unwrap(), edited);
}

#[test]
fn the_plugin_file_reads_as_written() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "opencode", "--scope", "project"]);
    let text = std::fs::read_to_string(plugin(&env)).unwrap();
    let program = constant(&text, "CAIRN").unwrap();
    let mut settings = env.filters();
    settings.add_filter(&regex::escape(&program), "[CAIRN]");
    settings.bind(|| insta::assert_snapshot!(text));
}

/// Runs the plugin's command as it does: CAIRN `hook opencode [--store S]` in OpenCode's
/// directory, the JSON payload on stdin.
fn fire(env: &TestEnv, event: &str, fields: Value) {
    let text = std::fs::read_to_string(plugin(env)).unwrap();
    let mut args = vec!["hook".to_owned(), "opencode".to_owned()];
    if let Some(store) = constant(&text, "STORE") {
        args.extend(["--store".to_owned(), store]);
    }
    let work = env.work().display().to_string();
    let mut payload = json!({"event": event, "sessionID": SESSION, "directory": work, "worktree": "/"});
    for (k, v) in fields.as_object().unwrap() {
        payload[k] = v.clone();
    }
    let mut child = std::process::Command::new(constant(&text, "CAIRN").unwrap())
        .args(&args)
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(env.work())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(payload.to_string().as_bytes());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn turn(env: &TestEnv, n: u32, prompt: &str, tool: &str, effects: impl FnOnce()) {
    fire(
        env,
        "chat.message",
        json!({"messageID": format!("msg_d4e0c1a2b00{n}AbCdEfGhIjKlMn"), "prompt": prompt}),
    );
    effects();
    fire(env, "tool.execute.after", json!({"tool": tool}));
    fire(env, "session.idle", json!({}));
}

#[test]
fn each_turn_is_checkpointed_and_rewind_2_code_puts_the_files_back_exactly() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "opencode", "--scope", "project"]);
    env.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    env.write("README.md", "# proj\n");

    turn(&env, 1, "add two()", "edit", || {
        env.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    2\n}\n");
    });
    let before_2 = files(&env.work());
    turn(&env, 2, "replace the readme with notes", "bash", || {
        std::fs::remove_file(env.work().join("README.md")).unwrap();
        env.write("docs/notes.md", "notes\n");
    });
    turn(&env, 3, "drop one()", "write", || {
        env.write("src/lib.rs", "pub fn two() -> u32 {\n    2\n}\n");
    });

    let turns = env.json(&["rewind", "--json"]).to_string();
    assert!(turns.contains("\"opencode\"") && turns.contains(SESSION), "{turns}");
    env.ok(&["rewind", "2", "--code"]);
    assert_eq!(files(&env.work()), before_2);
}
