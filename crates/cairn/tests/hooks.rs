//! `cairn hooks install|uninstall|status` and `cairn hook AGENT` through the real binary.

mod common;

use std::path::{Path, PathBuf};

use common::{TestEnv, eventually};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cairn-lib/tests/fixtures/agents").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn claude_project_settings(env: &TestEnv) -> PathBuf {
    env.work().join(".claude/settings.json")
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn install_keeps_other_hooks_and_settings_twice_changes_nothing_and_uninstall_restores_the_file() {
    let env = TestEnv::new();
    let path = claude_project_settings(&env);
    let original = fixture("claude_settings_with_hooks.json");
    put(&path, &original);

    let out = env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
    let installed = std::fs::read_to_string(&path).unwrap();
    env.filters().bind(|| {
        insta::assert_snapshot!(out, @"added cairn's claude-code hooks (UserPromptSubmit, PostToolUse, Stop) to [TMP]/work/.claude/settings.json (project scope)");
    });
    // Every byte of the original is still there, in order: the install only inserted text.
    let mut rest = installed.as_str();
    for line in original.lines() {
        let at = rest.find(line).unwrap_or_else(|| panic!("{line:?} is gone or moved:\n{installed}"));
        rest = &rest[at + line.len()..];
    }
    let value: serde_json::Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(value["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
    assert_eq!(
        value["hooks"]["Notification"][0]["hooks"][0]["command"],
        "notify-send 'Claude Code' 'needs you'"
    );

    let again = env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
    env.filters().bind(|| {
        insta::assert_snapshot!(again, @"cairn's claude-code hooks are already there in [TMP]/work/.claude/settings.json (project scope); nothing changed");
    });

    let out = env.ok(&["hooks", "uninstall", "claude-code", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    env.filters().bind(|| {
        insta::assert_snapshot!(out, @"removed cairn's claude-code hooks (PostToolUse, UserPromptSubmit, Stop) from [TMP]/work/.claude/settings.json (project scope)");
    });
}

#[test]
fn a_dry_run_changes_nothing_and_shows_the_change() {
    let env = TestEnv::new();
    let path = env.home().join(".gemini/settings.json");
    let original = "{\n  // mine\n  \"ui\": {\"theme\": \"GitHub\"}\n}\n";
    put(&path, original);
    let out = env.ok(&["hooks", "install", "gemini-cli", "--dry-run"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    env.filters().bind(|| insta::assert_snapshot!("gemini_dry_run", out));

    let json = env.json(&["hooks", "install", "gemini-cli", "--dry-run"]);
    assert_eq!(json["dry_run"], true);
    assert_eq!(json["changed"], true);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[test]
fn status_says_what_is_installed_where() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "claude-code", "--scope", "local"]);
    env.ok(&["hooks", "install", "gemini-cli"]);
    put(&env.home().join(".claude/settings.json"), "{\"hooks\": 3}\n");
    let out = env.ok(&["hooks", "status"]);
    env.filters().bind(|| insta::assert_snapshot!("status_human", out));
    let json = env.json(&["hooks", "status", "gemini-cli"]);
    env.filters().bind(|| insta::assert_json_snapshot!("status_json_gemini", json));
}

#[test]
fn a_malformed_settings_file_is_refused_in_one_line_and_left_alone() {
    let env = TestEnv::new();
    let path = claude_project_settings(&env);
    put(&path, "{\"model\": \"opus\",,}\n");
    let err = env.fails(&["hooks", "install", "claude-code", "--scope", "project"], 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"model\": \"opus\",,}\n");
    let err = env.fails(&["hooks", "install", "gemini-cli", "--scope", "local"], 2);
    env.filters().bind(|| {
        insta::assert_snapshot!(err, @"error: Gemini CLI has no local settings scope; choose the user or project scope");
    });
}

#[test]
fn the_hook_logs_each_event_prints_nothing_and_exits_zero() {
    let env = TestEnv::new();
    env.write("orders.sql", "CREATE TABLE orders(id INTEGER);\n");
    // The recorded events, run over a real project directory (their transcript is not there).
    let here = |name: &str| fixture(name).replace("/home/dev/shop", &env.work().display().to_string());
    for name in ["claude_user_prompt_submit.json", "claude_post_tool_use_bash.json", "claude_stop.json"] {
        let out = env.cairn(&["hook", "claude-code"]).write_stdin(here(name)).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stdout.is_empty(),
            "stdout belongs to the agent: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = env
        .cairn(&["hook", "gemini-cli"])
        .write_stdin(here("gemini_after_tool_replace.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());

    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    let mut lines: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for line in &mut lines {
        assert!(line["time"].as_str().is_some_and(|t| t.ends_with('Z')));
        line["time"] = "[TIME]".into();
    }
    env.filters().bind(|| insta::assert_json_snapshot!("hook_log", lines));
    assert!(!log.contains("migration"), "the log holds no prompt text");
}

#[test]
fn the_hook_exits_zero_with_one_line_on_stderr_when_it_cannot_work() {
    let env = TestEnv::new();
    let mut lines = String::new();
    for (agent, input) in [("claude-code", "not json"), ("codex", "{}"), ("gemini-cli", "")] {
        let out = env.cairn(&["hook", agent]).write_stdin(input).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{agent}");
        assert!(out.stdout.is_empty());
        lines += &format!("{agent}: {}", String::from_utf8_lossy(&out.stderr));
    }
    insta::assert_snapshot!(env.normalize(&lines), @r#"
        claude-code: error: cairn hook: the claude-code hook event is not the JSON object it should be (expected ident at line 1 column 2)
        codex: error: cairn hook: unknown agent "codex"; use claude-code or gemini-cli
        gemini-cli: error: cairn hook: the gemini-cli hook event is not the JSON object it should be (EOF while parsing a value at line 1 column 0)
    "#);
}

#[test]
fn a_checkpoint_the_turn_does_not_wait_for_goes_on_in_the_background() {
    let env = TestEnv::new();
    env.write("orders.sql", "CREATE TABLE orders(id INTEGER);\n");
    env.ok(&["config", "set", "hooks.budget", "0s"]);
    let event = fixture("claude_user_prompt_submit.json")
        .replace("/home/dev/shop", &env.work().display().to_string());
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // The turn went on at once; the checkpoint lands anyway, and says so in the log.
    let log = env.store().join("logs/hooks.log");
    eventually("the checkpoint's log line", || {
        std::fs::read_to_string(&log).is_ok_and(|text| text.contains("saved moment"))
    });
    let moments = env.json(&["moment", "list"]);
    assert_eq!(moments["moments"].as_array().unwrap().len(), 1, "{moments}");
}

#[test]
fn a_checkpoint_of_a_large_workspace_starts_a_watcher_for_it() {
    let env = TestEnv::new();
    env.write("src/lib.rs", "pub fn f() {}\n");
    // "Large" is 1 entry here, so the rule is tested without writing 10,000 files.
    env.ok(&["config", "set", "hooks.watch_from", "1"]);
    let event = fixture("claude_post_tool_use_bash.json")
        .replace("/home/dev/shop", &env.work().display().to_string());
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    eventually("the watcher", || env.json(&["watch", "--status"])["running"] == true);
    // The hook's child logs once the watcher has answered it; stopping the watcher before
    // then would make that start fail.
    let log = env.store().join("logs/hooks.log");
    eventually("the watcher's log line", || {
        std::fs::read_to_string(&log).is_ok_and(|text| text.contains("for the next checkpoints"))
    });
    let status = env.json(&["watch", "--status"]);
    let root = status["roots"][0]["root"].as_str().unwrap().to_owned();
    env.ok(&["watch", "--stop"]);
    assert_eq!(std::fs::canonicalize(root).unwrap(), std::fs::canonicalize(env.work()).unwrap());
}

#[test]
fn a_small_workspace_gets_no_watcher() {
    let env = TestEnv::new();
    env.write("src/lib.rs", "pub fn f() {}\n");
    let event = fixture("claude_post_tool_use_bash.json")
        .replace("/home/dev/shop", &env.work().display().to_string());
    env.cairn(&["hook", "claude-code"]).write_stdin(event).assert().success();
    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    assert!(log.contains("saved moment") && !log.contains("watching"), "{log}");
    assert_eq!(env.json(&["watch", "--status"])["running"], false);
}
