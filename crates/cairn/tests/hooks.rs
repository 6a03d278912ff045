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

/// The test env's filters, and the cairn binary's real path (which the installed command
/// names) as `[CAIRN]`.
fn filters(env: &TestEnv) -> insta::Settings {
    let mut settings = env.filters();
    settings.add_filter(&regex::escape(&cairn_bin().display().to_string()), "[CAIRN]");
    settings
}

fn cairn_bin() -> PathBuf {
    std::fs::canonicalize(assert_cmd::cargo::cargo_bin("cairn")).unwrap()
}

/// The command installed for `event` in the settings file at `path`.
fn installed_command(path: &Path, event: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    value["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().to_owned()
}

/// Runs `command` as the agents do, through a POSIX shell, with `stdin` and a bare
/// environment (no `PATH` to find cairn by, no `CAIRN_STORE`), in the work tree.
fn run_as_agent(env: &TestEnv, shell: &str, command: &str, stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(shell)
        .args(["-c", command])
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(env.work())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A command that does not read its stdin (the binary is gone) closes the pipe early.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
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
    filters(&env).bind(|| {
        insta::assert_snapshot!(out, @"added cairn's claude-code hooks (UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop) to [TMP]/work/.claude/settings.json (project scope)");
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
        insta::assert_snapshot!(out, @"removed cairn's claude-code hooks (PostToolUse, UserPromptSubmit, PostToolUseFailure, Stop) from [TMP]/work/.claude/settings.json (project scope)");
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
    filters(&env).bind(|| insta::assert_snapshot!("gemini_dry_run", out));

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
    for (agent, input) in [("claude-code", "not json"), ("aider", "{}"), ("gemini-cli", "")] {
        let out = env.cairn(&["hook", agent]).write_stdin(input).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{agent}");
        assert!(out.stdout.is_empty());
        lines += &format!("{agent}: {}", String::from_utf8_lossy(&out.stderr));
    }
    insta::assert_snapshot!(env.normalize(&lines), @r#"
        claude-code: error: cairn hook: the claude-code hook event was turned away: it is not JSON (line 1, column 2)
        aider: error: cairn hook: unknown agent "aider"; use claude-code, gemini-cli, codex, cursor, copilot-cli, pi or opencode
        gemini-cli: error: cairn hook: the gemini-cli hook event was turned away: it is empty
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

#[test]
fn the_installed_command_names_the_binary_and_the_store_and_runs_without_path() {
    let env = TestEnv::new();
    env.write("orders.sql", "CREATE TABLE orders(id INTEGER);\n");
    env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
    let command = installed_command(&claude_project_settings(&env), "PostToolUse");
    filters(&env).bind(|| {
        insta::assert_snapshot!(command, @"if [ -x '[CAIRN]' ]; then '[CAIRN]' hook claude-code --store '[TMP]/store' || true; fi");
    });
    let event = fixture("claude_post_tool_use_bash.json")
        .replace("/home/dev/shop", &env.work().display().to_string());
    let out = run_as_agent(&env, "sh", &command, &event);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    assert!(log.contains("saved moment"), "{log}");
}

#[test]
fn the_installed_command_exits_zero_silently_when_the_binary_is_gone() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "gemini-cli"]);
    let command = installed_command(&env.home().join(".gemini/settings.json"), "BeforeAgent");
    let bin = cairn_bin().display().to_string();
    let gone = env.root().join("it's gone/cairn");
    let quoted = format!("'{}'", gone.display().to_string().replace('\'', "'\\''"));
    let moved = command.replace(&format!("'{bin}'"), &quoted);
    assert_ne!(moved, command);
    let event = fixture("gemini_before_agent.json");
    for shell in ["sh", "bash"] {
        if std::process::Command::new(shell).args(["-c", "true"]).status().is_err() {
            continue;
        }
        let out = run_as_agent(&env, shell, &moved, &event);
        assert_eq!(out.status.code(), Some(0), "{shell}: {out:?}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{shell}: {out:?}");
    }
    // A file there that cannot be run (126 from a bare command) is skipped the same way.
    put(&gone, "not a program");
    let out = run_as_agent(&env, "sh", &moved, &event);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert!(!env.store().join("logs/hooks.log").exists(), "nothing ran");
}

#[test]
fn an_install_over_bare_cairn_commands_replaces_them() {
    let env = TestEnv::new();
    let path = claude_project_settings(&env);
    let original = "{\n  \"model\": \"opus\"\n}\n";
    put(&path, original);
    env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
    let fresh = std::fs::read_to_string(&path).unwrap();
    let old = serde_json::to_string(&installed_command(&path, "Stop")).unwrap();
    // What an older cairn wrote: `cairn hook claude-code`, found on PATH.
    put(&path, &fresh.replace(&old, "\"cairn hook claude-code\""));

    let out = env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
    filters(&env).bind(|| {
        insta::assert_snapshot!(out, @r"
        added cairn's claude-code hooks (UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop) to [TMP]/work/.claude/settings.json (project scope)
        an older cairn hook was replaced in UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop
        ");
    });
    assert_eq!(std::fs::read_to_string(&path).unwrap(), fresh);
    env.ok(&["hooks", "uninstall", "claude-code", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[test]
fn install_and_status_warn_when_the_settings_turn_hooks_off() {
    let env = TestEnv::new();
    put(&claude_project_settings(&env), "{\n  \"disableAllHooks\": true\n}\n");
    put(&env.home().join(".gemini/settings.json"), "{\n  \"hooksConfig\": {\"enabled\": false}\n}\n");
    let claude = env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
    let gemini = env.ok(&["hooks", "install", "gemini-cli"]);
    // The rows of the two agents this test is about (status lists every agent).
    let status: String = env
        .ok(&["hooks", "status"])
        .lines()
        .take_while(|line| !line.starts_with("codex"))
        .map(|line| format!("{line}\n"))
        .collect();
    filters(&env).bind(|| {
        insta::assert_snapshot!(claude, @r#"
        added cairn's claude-code hooks (UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop) to [TMP]/work/.claude/settings.json (project scope)
        warning: [TMP]/work/.claude/settings.json sets "disableAllHooks": true, so Claude Code runs none of its hooks (cairn's included); remove that key for checkpoints to be taken
        "#);
        insta::assert_snapshot!(gemini, @r"
        added cairn's gemini-cli hooks (BeforeAgent, AfterTool, AfterAgent) to [TMP]/home/.gemini/settings.json (user scope)
        warning: [TMP]/home/.gemini/settings.json sets hooksConfig.enabled to false, so Gemini CLI 0.26 and later runs no hooks (cairn's included); set it to true for checkpoints to be taken
        ");
        insta::assert_snapshot!(status, @r#"
        claude-code  user     [TMP]/home/.claude/settings.json  not installed (no file)
        claude-code  project  [TMP]/work/.claude/settings.json  installed: UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop
        warning: [TMP]/work/.claude/settings.json sets "disableAllHooks": true, so Claude Code runs none of its hooks (cairn's included); remove that key for checkpoints to be taken
        claude-code  local    [TMP]/work/.claude/settings.local.json  not installed (no file)
        gemini-cli   user     [TMP]/home/.gemini/settings.json  installed: BeforeAgent, AfterTool, AfterAgent
        warning: [TMP]/home/.gemini/settings.json sets hooksConfig.enabled to false, so Gemini CLI 0.26 and later runs no hooks (cairn's included); set it to true for checkpoints to be taken
        gemini-cli   project  [TMP]/work/.gemini/settings.json  not installed (no file)
        "#);
    });
}

#[test]
fn an_event_with_wrongly_typed_fields_cairn_does_not_read_is_checkpointed() {
    let env = TestEnv::new();
    env.write("orders.sql", "CREATE TABLE orders(id INTEGER);\n");
    let mut event: serde_json::Value =
        serde_json::from_str(&fixture("claude_post_tool_use_bash.json")).unwrap();
    event["cwd"] = env.work().display().to_string().into();
    event["tool_response"] = "ok 12 tests".into();
    event["permission_mode"] = 3.into();
    event["tool_use_id"] = serde_json::json!({"id": 1});
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event.to_string()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    assert!(log.contains("saved moment"), "{log}");
}

#[test]
fn a_garbage_event_is_logged_as_rejected_and_the_hook_exits_zero() {
    let env = TestEnv::new();
    let garbage = "{\"session_id\": [\"my secret plan\"], \"hook_event_name\": \"UserPromptSubmit\", \"prompt\": \"my secret plan\"}";
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(garbage).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("secret"), "{stderr}");
    let out = env.cairn(&["hook", "gemini-cli"]).write_stdin("not json").output().unwrap();
    assert_eq!(out.status.code(), Some(0));

    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    assert!(!log.contains("secret"), "{log}");
    let mut lines: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for line in &mut lines {
        line["time"] = "[TIME]".into();
    }
    insta::assert_json_snapshot!(lines, @r#"
    [
      {
        "agent": "claude-code",
        "bytes": 101,
        "cwd": null,
        "event": "",
        "kind": "rejected",
        "outcome": "the claude-code hook event was turned away: it is not an event object, or a field cairn reads has another type (line 1, column 15)",
        "session_id": "",
        "time": "[TIME]",
        "tool": null
      },
      {
        "agent": "gemini-cli",
        "bytes": 8,
        "cwd": null,
        "event": "",
        "kind": "rejected",
        "outcome": "the gemini-cli hook event was turned away: it is not JSON (line 1, column 2)",
        "session_id": "",
        "time": "[TIME]",
        "tool": null
      }
    ]
    "#);
}
