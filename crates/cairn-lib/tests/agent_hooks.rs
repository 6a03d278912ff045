//! Agent hook integration through the public API: installing cairn's hooks into real settings
//! files (other content kept byte for byte), and classifying hook events of the shapes Claude
//! Code and Gemini CLI send.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_lib::agents::{
    Agent, AgentPlaces, HookCommand, HookEvent, HooksInstallAllOptions, HooksInstallOptions,
    HooksStatusOptions, HooksUninstallOptions, Layers, REJECTED, Scope, install, install_all,
    parse_hook_event, parse_payload, status, uninstall,
};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        Env { dir }
    }
    fn places(&self) -> AgentPlaces {
        AgentPlaces::new(&self.dir.path().join("home"), &self.dir.path().join("proj"))
    }
    fn file(&self, agent: Agent, scope: Scope) -> PathBuf {
        self.places().settings_file(agent, scope).unwrap()
    }
    fn put(&self, agent: Agent, scope: Scope, text: &str) -> PathBuf {
        let path = self.file(agent, scope);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The command as `hooks install` names it: the binary's absolute path and the store's.
fn cmd() -> HookCommand {
    HookCommand::new("/opt/cairn/bin/cairn", Some(PathBuf::from("/var/lib/cairn's store")))
}

fn install_opts(agent: Agent, scope: Scope) -> HooksInstallOptions {
    HooksInstallOptions { agent, scope: Some(scope), dry_run: false }
}

fn uninstall_opts(agent: Agent, scope: Scope) -> HooksUninstallOptions {
    HooksUninstallOptions { agent, scope: Some(scope), dry_run: false }
}

/// Every line of `before` is still in `after`, in order, byte for byte.
fn keeps_every_line(before: &str, after: &str) {
    let mut rest = after.lines();
    for line in before.lines() {
        assert!(rest.any(|l| l == line), "line {line:?} of the original is gone or moved:\n{after}");
    }
}

#[test]
fn claude_install_keeps_other_hooks_and_settings_and_uninstall_gives_the_bytes_back() {
    let env = Env::new();
    let original = fixture("claude_settings_with_hooks.json");
    let path = env.put(Agent::ClaudeCode, Scope::Local, &original);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();

    let change = install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::Local)).unwrap();
    assert!(change.changed);
    assert_eq!(change.events, ["UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"]);
    let installed = std::fs::read_to_string(&path).unwrap();
    keeps_every_line(&original, &installed);
    insta::assert_snapshot!("claude_installed_local", installed);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);

    let again = install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::Local)).unwrap();
    assert!(!again.changed);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);

    let removed = uninstall(&env.places(), &uninstall_opts(Agent::ClaudeCode, Scope::Local)).unwrap();
    assert_eq!(removed.events, ["PostToolUse", "UserPromptSubmit", "PostToolUseFailure", "Stop"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn gemini_install_keeps_comments_and_uninstall_gives_the_bytes_back() {
    let env = Env::new();
    let original = fixture("gemini_settings_with_comments.json");
    let path = env.put(Agent::GeminiCli, Scope::User, &original);

    install(&env.places(), &cmd(), &install_opts(Agent::GeminiCli, Scope::User)).unwrap();
    let installed = std::fs::read_to_string(&path).unwrap();
    keeps_every_line(&original, &installed);
    insta::assert_snapshot!("gemini_installed_user", installed);

    uninstall(&env.places(), &uninstall_opts(Agent::GeminiCli, Scope::User)).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[test]
fn a_file_cairn_created_is_removed_again_on_uninstall() {
    let env = Env::new();
    let path = env.file(Agent::ClaudeCode, Scope::Project);
    let change = install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::Project)).unwrap();
    assert!(change.file_created);
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["hooks"]["PostToolUse"][0]["matcher"], "Write|Edit|MultiEdit|NotebookEdit|Bash");
    assert_eq!(value["hooks"]["PostToolUseFailure"][0]["matcher"], "Write|Edit|MultiEdit|NotebookEdit|Bash");
    assert_eq!(
        value["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        "if [ -x '/opt/cairn/bin/cairn' ]; then '/opt/cairn/bin/cairn' hook claude-code --store '/var/lib/cairn'\\''s store' || true; fi"
    );

    let removed = uninstall(&env.places(), &uninstall_opts(Agent::ClaudeCode, Scope::Project)).unwrap();
    assert!(removed.file_removed);
    assert!(!path.exists());
    assert!(!path.parent().unwrap().exists(), "the .claude directory the install made, left empty, goes too");

    // A directory holding anything else stays.
    install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::Project)).unwrap();
    std::fs::write(path.parent().unwrap().join("agents.md"), "mine\n").unwrap();
    uninstall(&env.places(), &uninstall_opts(Agent::ClaudeCode, Scope::Project)).unwrap();
    assert!(path.parent().unwrap().join("agents.md").exists());
}

#[test]
fn a_dry_run_writes_nothing_and_shows_the_change() {
    let env = Env::new();
    let original = "{\n  \"model\": \"sonnet\"\n}\n";
    let path = env.put(Agent::ClaudeCode, Scope::User, original);
    let options = HooksInstallOptions { dry_run: true, ..install_opts(Agent::ClaudeCode, Scope::User) };
    let change = install(&env.places(), &cmd(), &options).unwrap();
    assert!(change.changed && change.dry_run);
    assert!(change.diff.contains("+  \"hooks\": {"), "{}", change.diff);
    assert!(change.diff.contains("-  \"model\": \"sonnet\"\n+  \"model\": \"sonnet\",\n"), "{}", change.diff);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[test]
fn a_malformed_settings_file_is_refused_in_one_line_and_left_untouched() {
    let env = Env::new();
    let broken = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n";
    let path = env.put(Agent::ClaudeCode, Scope::User, broken);
    let err = install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::User)).unwrap_err();
    let message = err.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert!(message.starts_with(&path.display().to_string()), "{message}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);

    // Comments are Gemini CLI's, not Claude Code's: Claude Code would reject the file itself.
    env.put(Agent::ClaudeCode, Scope::Project, "{ // no\n}\n");
    assert!(install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::Project)).is_err());

    let hooks_not_object = env.put(Agent::GeminiCli, Scope::Project, "{\"hooks\": []}\n");
    let err = install(&env.places(), &cmd(), &install_opts(Agent::GeminiCli, Scope::Project)).unwrap_err();
    assert!(err.to_string().contains("\"hooks\" is not an object"), "{err}");
    assert_eq!(std::fs::read_to_string(&hooks_not_object).unwrap(), "{\"hooks\": []}\n");
}

#[test]
fn a_symlinked_settings_file_is_written_through_to_its_target() {
    let env = Env::new();
    let dotfiles = env.dir.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("claude.json"), "{}\n").unwrap();
    let link = env.file(Agent::ClaudeCode, Scope::User);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("claude.json"), &link).unwrap();
    install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::User)).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(
        std::fs::read_to_string(dotfiles.join("claude.json")).unwrap().contains("hook claude-code --store")
    );
}

#[test]
fn uninstall_leaves_a_group_that_also_holds_someone_elses_hook() {
    let env = Env::new();
    let text = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}, {"type": "command", "command": "/usr/local/bin/cairn hook claude-code"}]}]}}"#;
    let path = env.put(Agent::ClaudeCode, Scope::User, text);
    let change = uninstall(&env.places(), &uninstall_opts(Agent::ClaudeCode, Scope::User)).unwrap();
    assert_eq!(change.events, ["Stop"]);
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}})
    );
}

#[test]
fn status_lists_every_scope_and_what_is_installed() {
    let env = Env::new();
    install(&env.places(), &cmd(), &install_opts(Agent::GeminiCli, Scope::Project)).unwrap();
    env.put(Agent::ClaudeCode, Scope::User, "not json");
    let all = status(&env.places(), &HooksStatusOptions::default()).unwrap();
    let rows: Vec<(String, String, bool, usize, bool)> = all
        .places
        .iter()
        .filter(|p| matches!(p.agent, Agent::ClaudeCode | Agent::GeminiCli))
        .map(|p| (p.agent.to_string(), p.scope.to_string(), p.exists, p.installed.len(), p.error.is_some()))
        .collect();
    assert_eq!(
        rows,
        [
            ("claude-code".into(), "user".into(), true, 0, true),
            ("claude-code".into(), "project".into(), false, 0, false),
            ("claude-code".into(), "local".into(), false, 0, false),
            ("gemini-cli".into(), "user".into(), false, 0, false),
            ("gemini-cli".into(), "project".into(), true, 3, false),
        ]
    );
    let err = install(&env.places(), &cmd(), &install_opts(Agent::GeminiCli, Scope::Local)).unwrap_err();
    assert!(err.to_string().contains("no local settings scope"), "{err}");
}

#[test]
fn claude_code_events_are_classified() {
    let kind = |name: &str| parse_payload(Agent::ClaudeCode, &fixture(name)).unwrap();
    let prompt = kind("claude_user_prompt_submit.json");
    assert_eq!(
        prompt.event,
        HookEvent::PromptSubmitted {
            prompt: "Add a migration for the orders table\nand run the tests".into()
        }
    );
    assert_eq!(prompt.session_id, "4f1c2a9e-7b3d-4e8a-9c51-2d6f0b8e1a73");
    assert_eq!(prompt.cwd.as_deref(), Some(Path::new("/home/dev/shop")));
    assert!(prompt.transcript_path.unwrap().ends_with("4f1c2a9e-7b3d-4e8a-9c51-2d6f0b8e1a73.jsonl"));
    assert_eq!(
        kind("claude_post_tool_use_write.json").event,
        HookEvent::FileToolFinished { tool: "Write".into() }
    );
    assert_eq!(
        kind("claude_post_tool_use_bash.json").event,
        HookEvent::FileToolFinished { tool: "Bash".into() }
    );
    assert_eq!(
        kind("claude_post_tool_use_read.json").event,
        HookEvent::Other { event: "PostToolUse".into() }
    );
    assert_eq!(kind("claude_stop.json").event, HookEvent::TurnEnded);
}

#[test]
fn gemini_cli_events_are_classified() {
    let kind = |name: &str| parse_payload(Agent::GeminiCli, &fixture(name)).unwrap();
    assert_eq!(
        kind("gemini_before_agent.json").event,
        HookEvent::PromptSubmitted { prompt: "Rename the orders column and update the tests".into() }
    );
    assert_eq!(
        kind("gemini_after_tool_replace.json").event,
        HookEvent::FileToolFinished { tool: "replace".into() }
    );
    assert_eq!(
        kind("gemini_after_tool_shell.json").event,
        HookEvent::FileToolFinished { tool: "run_shell_command".into() }
    );
    assert_eq!(
        kind("gemini_after_tool_read_file.json").event,
        HookEvent::Other { event: "AfterTool".into() }
    );
    assert_eq!(kind("gemini_after_agent.json").event, HookEvent::TurnEnded);
    let start = kind("gemini_session_start.json");
    assert_eq!(start.event, HookEvent::Other { event: "SessionStart".into() });
    assert_eq!(start.transcript_path, None, "Gemini CLI sends \"\" when it records no session");
}

#[test]
fn a_payload_that_is_not_json_is_refused_with_a_sentence() {
    let err = parse_payload(Agent::ClaudeCode, "hello").unwrap_err();
    assert_eq!(
        err.to_string(),
        "the claude-code hook event was turned away: it is not JSON (line 1, column 1)"
    );
    assert_eq!(err.code(), Some(REJECTED));
    assert!(
        parse_payload(Agent::GeminiCli, "{\"cwd\": \"/x\"}").is_err(),
        "session_id and hook_event_name are required"
    );
}

/// `text` with cairn's installed command for `agent` written as `old` (JSON-escaped).
fn with_command(text: &str, agent: Agent, old: &str) -> String {
    let new = serde_json::to_string(&cmd().render(agent).unwrap()).unwrap();
    assert!(text.contains(&new), "{text}");
    text.replace(&new, &serde_json::to_string(old).unwrap())
}

/// A user's own Codex CLI `hooks.json` (codex-rs 0.125's shape).
const CODEX_HOOKS: &str = "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\"matcher\": \"apply_patch\", \"hooks\": [{\"type\": \"command\", \"command\": \"cargo fmt --all\", \"timeout\": 120}]}\n    ]\n  }\n}\n";

/// A user's own Cursor `hooks.json` (version 1, flat entries).
const CURSOR_HOOKS: &str = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [\n      { \"command\": \"./format.sh\" }\n    ]\n  }\n}\n";

#[test]
fn an_install_over_an_older_command_replaces_it_and_uninstall_still_gives_the_bytes_back() {
    // GitHub Copilot CLI's commands name their event, so no one command stands for all.
    for agent in [Agent::ClaudeCode, Agent::GeminiCli, Agent::Codex, Agent::Cursor] {
        let env = Env::new();
        let original = match agent {
            Agent::ClaudeCode => fixture("claude_settings_with_hooks.json"),
            Agent::GeminiCli => fixture("gemini_settings_with_comments.json"),
            Agent::Codex => CODEX_HOOKS.to_owned(),
            _ => CURSOR_HOOKS.to_owned(),
        };
        let path = env.put(agent, Scope::User, &original);
        install(&env.places(), &cmd(), &install_opts(agent, Scope::User)).unwrap();
        let fresh = std::fs::read_to_string(&path).unwrap();
        uninstall(&env.places(), &uninstall_opts(agent, Scope::User)).unwrap();

        let bare = format!("cairn hook {agent}");
        let elsewhere = format!("/usr/local/bin/cairn hook {agent} --store /old/store");
        for old in [bare.as_str(), elsewhere.as_str()] {
            // An older cairn's install: its own command in every group cairn writes.
            std::fs::write(&path, with_command(&fresh, agent, old)).unwrap();
            let before = status(&env.places(), &HooksStatusOptions { agent: Some(agent) }).unwrap();
            assert!(before.places[0].missing.is_empty(), "{old}: the older hooks count as installed");

            let change = install(&env.places(), &cmd(), &install_opts(agent, Scope::User)).unwrap();
            assert_eq!(change.replaced, change.events, "{old}");
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                fresh,
                "{old}: one cairn hook per event, the new one"
            );

            std::fs::write(&path, with_command(&fresh, agent, old)).unwrap();
            uninstall(&env.places(), &uninstall_opts(agent, Scope::User)).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), original, "{old}");
        }
    }
}

#[test]
fn install_and_status_warn_when_the_file_turns_hooks_off() {
    let env = Env::new();
    let claude = env.put(Agent::ClaudeCode, Scope::User, "{\n  \"disableAllHooks\": true\n}\n");
    let change = install(&env.places(), &cmd(), &install_opts(Agent::ClaudeCode, Scope::User)).unwrap();
    assert_eq!(
        change.warnings,
        [format!(
            "{} sets \"disableAllHooks\": true, so Claude Code runs none of its hooks (cairn's included); remove that key for checkpoints to be taken",
            claude.display()
        )]
    );
    let rows = status(&env.places(), &HooksStatusOptions { agent: Some(Agent::ClaudeCode) }).unwrap();
    assert_eq!(rows.places[0].warnings, change.warnings);
    assert!(rows.places[1].warnings.is_empty());

    for (text, key) in [
        (
            "{\n  \"hooksConfig\": {\"enabled\": false}\n}\n",
            "hooksConfig.enabled to false, so Gemini CLI 0.26 and later",
        ),
        (
            "{\n  \"hooks\": {\n    \"enabled\": false\n  }\n}\n",
            "hooks.enabled to false, so Gemini CLI 0.24 and 0.25",
        ),
        (
            "{\n  \"tools\": {\"enableHooks\": false}\n}\n",
            "tools.enableHooks to false, so Gemini CLI 0.13 to 0.27",
        ),
        (
            "{\n  \"hooksConfig\": {\"disabled\": [\"cairn\"]}\n}\n",
            "lists cairn's hook in hooksConfig.disabled",
        ),
    ] {
        let path = env.put(Agent::GeminiCli, Scope::Project, text);
        let change = install(&env.places(), &cmd(), &install_opts(Agent::GeminiCli, Scope::Project)).unwrap();
        assert_eq!(change.warnings.len(), 1, "{text}");
        assert!(change.warnings[0].contains(key), "{}", change.warnings[0]);
        uninstall(&env.places(), &uninstall_opts(Agent::GeminiCli, Scope::Project)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "the switches in `hooks` are kept");
    }
    env.put(Agent::GeminiCli, Scope::Project, "{\"hooksConfig\": {\"enabled\": true}}\n");
    let change = install(&env.places(), &cmd(), &install_opts(Agent::GeminiCli, Scope::Project)).unwrap();
    assert!(change.warnings.is_empty());
}

#[test]
fn a_failed_claude_tool_is_a_file_changing_event() {
    let payload = r#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"toolu_1","error":"exit 2","is_interrupt":false}"#;
    let event = parse_payload(Agent::ClaudeCode, payload).unwrap();
    assert_eq!(event.event, HookEvent::FileToolFinished { tool: "Bash".into() });
}

#[test]
fn fields_cairn_does_not_read_never_reject_an_event() {
    let claude = r#"{"session_id":"s1","cwd":"/w","hook_event_name":"PostToolUse","permission_mode":42,"tool_name":"Write","tool_input":"raw","tool_response":"done","tool_use_id":7,"stop_hook_active":"no","transcript_path":null}"#;
    let event = parse_payload(Agent::ClaudeCode, claude).unwrap();
    assert_eq!(event.event, HookEvent::FileToolFinished { tool: "Write".into() });
    assert_eq!(event.cwd.as_deref(), Some(Path::new("/w")));
    let gemini = r#"{"session_id":"s2","cwd":"/w","hook_event_name":"AfterTool","timestamp":1700000000,"tool_name":"replace","tool_response":["x"],"stop_hook_active":1,"permission_mode":{"a":1}}"#;
    let event = parse_payload(Agent::GeminiCli, gemini).unwrap();
    assert_eq!(event.event, HookEvent::FileToolFinished { tool: "replace".into() });
}

#[test]
fn a_rejected_event_is_named_without_quoting_it() {
    for text in [
        "",
        "{\"session_id\": \"s\", \"prompt\": \"my secret plan\"",
        "{\"session_id\": [\"my secret plan\"], \"hook_event_name\": \"UserPromptSubmit\"}",
        "\"my secret plan\"",
        "{\"prompt\": \"my secret plan\", \"hook_event_name\": \"UserPromptSubmit\"}",
    ] {
        let err = parse_payload(Agent::ClaudeCode, text).unwrap_err();
        assert_eq!(err.code(), Some(REJECTED));
        assert!(!err.to_string().contains("secret"), "{err}");
    }
    let err = parse_payload(Agent::GeminiCli, "{\"cwd\": \"/x\", \"hook_event_name\": \"BeforeAgent\"}")
        .unwrap_err();
    assert_eq!(err.to_string(), "the gemini-cli hook event was turned away: it has no `session_id`");
}

#[test]
fn codex_events_are_classified_with_the_thread_as_the_session() {
    let base = r#""session_id":"0199a213-81c0-7800-8aa1-bbab2a035a53","turn_id":"3","transcript_path":"/home/u/.codex/sessions/2026/04/24/rollout-2026-04-24T10-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl","cwd":"/home/u/proj","model":"gpt-5.4","permission_mode":"default""#;
    let kind = |rest: &str| parse_payload(Agent::Codex, &format!("{{{base},{rest}}}")).unwrap();
    let prompt = kind(r#""hook_event_name":"UserPromptSubmit","prompt":"fix the tests""#);
    assert_eq!(prompt.event, HookEvent::PromptSubmitted { prompt: "fix the tests".into() });
    assert_eq!(prompt.session_id, "0199a213-81c0-7800-8aa1-bbab2a035a53");
    assert_eq!(prompt.cwd.as_deref(), Some(Path::new("/home/u/proj")));
    let patch = kind(
        r#""hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"},"tool_response":"Success.","tool_use_id":"call_a""#,
    );
    assert_eq!(patch.event, HookEvent::FileToolFinished { tool: "apply_patch".into() });
    let shell = kind(r#""hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"rm x"}"#);
    assert_eq!(shell.event, HookEvent::FileToolFinished { tool: "Bash".into() });
    let mcp = kind(r#""hook_event_name":"PostToolUse","tool_name":"mcp__docs__search","tool_input":{}"#);
    assert_eq!(mcp.event, HookEvent::Other { event: "PostToolUse".into() });
    let stop = kind(r#""hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":null"#);
    assert_eq!(stop.event, HookEvent::TurnEnded);
    // `transcript_path` may be null (no rollout yet).
    let start = parse_payload(
        Agent::Codex,
        r#"{"session_id":"s","transcript_path":null,"cwd":"/p","hook_event_name":"SessionStart","source":"startup"}"#,
    )
    .unwrap();
    assert_eq!(start.transcript_path, None);
    assert_eq!(Agent::Codex.layers(), Layers::CodeAndConversation);
}

#[test]
fn cursor_events_name_the_conversation_and_the_first_workspace_root() {
    let common = r#""conversation_id":"7c1e0f2a-1111-4a4a-9b9b-0123456789ab","generation_id":"3f9d2c10","model":"default","cursor_version":"3.18.25","workspace_roots":["/home/u/proj","/home/u/lib"],"user_email":null,"transcript_path":null"#;
    let kind = |rest: &str| parse_payload(Agent::Cursor, &format!("{{{common},{rest}}}")).unwrap();
    let prompt = kind(r#""hook_event_name":"beforeSubmitPrompt","prompt":"rename foo","attachments":[]"#);
    assert_eq!(prompt.event, HookEvent::PromptSubmitted { prompt: "rename foo".into() });
    assert_eq!(prompt.session_id, "7c1e0f2a-1111-4a4a-9b9b-0123456789ab");
    assert_eq!(prompt.project_dir.as_deref(), Some(Path::new("/home/u/proj")));
    assert_eq!(prompt.cwd.as_deref(), Some(Path::new("/home/u/proj")));
    assert_eq!(Agent::Cursor.reply(&prompt, None).as_deref(), Some(r#"{"continue":true}"#));
    let edit = kind(r#""hook_event_name":"afterFileEdit","file_path":"/home/u/proj/src/lib.rs","edits":[]"#);
    assert_eq!(edit.event, HookEvent::FileToolFinished { tool: "Write".into() });
    assert_eq!(Agent::Cursor.reply(&edit, None), None, "after* output is ignored: print nothing");
    let shell = kind(
        r#""hook_event_name":"afterShellExecution","command":"make","output":"","duration":3,"sandbox":false"#,
    );
    assert_eq!(shell.event, HookEvent::FileToolFinished { tool: "Shell".into() });
    let stop = kind(r#""hook_event_name":"stop","status":"completed","loop_count":0"#);
    assert_eq!(stop.event, HookEvent::TurnEnded);
    assert_eq!(
        Agent::Cursor.reply(&stop, Some("paused")),
        None,
        "stop reads followup_message: print nothing"
    );
}

#[test]
fn copilot_events_are_named_on_the_command_line_and_tool_args_may_be_a_string() {
    let post = |args: &str| {
        let text = format!(
            r#"{{"sessionId":"a995dbc4","timestamp":1767000004200,"cwd":"/home/u/proj","toolName":"bash","toolArgs":{args},"toolResult":{{"resultType":"success","textResultForLlm":""}}}}"#
        );
        parse_hook_event(Agent::CopilotCli, &text, Some("postToolUse")).unwrap()
    };
    assert_eq!(post(r#"{"command":"npm test"}"#).event, HookEvent::FileToolFinished { tool: "bash".into() });
    assert_eq!(
        post(r#""{\"command\":\"npm test\"}""#).event,
        HookEvent::FileToolFinished { tool: "bash".into() }
    );
    let prompt = parse_hook_event(
        Agent::CopilotCli,
        r#"{"sessionId":"a995dbc4","timestamp":1767000000000,"cwd":"/home/u/proj","prompt":"add a flag"}"#,
        Some("userPromptSubmitted"),
    )
    .unwrap();
    assert_eq!(prompt.event, HookEvent::PromptSubmitted { prompt: "add a flag".into() });
    assert_eq!(prompt.session_id, "a995dbc4");
    assert_eq!(Agent::CopilotCli.reply(&prompt, Some("paused")), None);
    let err = parse_payload(Agent::CopilotCli, r#"{"sessionId":"a","cwd":"/p","prompt":"x"}"#).unwrap_err();
    assert_eq!(err.code(), Some(REJECTED));
    assert!(err.to_string().contains("names no event"), "{err}");
}

#[test]
fn install_all_installs_for_every_agent_set_up_here_at_the_user_scope() {
    let env = Env::new();
    let home = env.dir.path().join("home");
    for dir in [".codex", ".cursor"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    let done = install_all(&env.places(), &cmd(), &HooksInstallAllOptions::default()).unwrap();
    let installed: Vec<Agent> = done.changes.iter().map(|c| c.agent).collect();
    assert_eq!(installed, [Agent::Codex, Agent::Cursor]);
    assert!(done.changes.iter().all(|c| c.scope == Scope::User && c.changed));
    let skipped: Vec<Agent> = done.skipped.iter().map(|s| s.agent).collect();
    assert_eq!(skipped, [Agent::ClaudeCode, Agent::GeminiCli, Agent::CopilotCli, Agent::Pi, Agent::OpenCode]);
    assert!(home.join(".codex/hooks.json").is_file() && home.join(".cursor/hooks.json").is_file());
    assert!(!home.join(".claude").exists());

    let all = status(&env.places(), &HooksStatusOptions::default()).unwrap();
    let agents: Vec<Agent> = all.places.iter().map(|p| p.agent).collect();
    for agent in Agent::ALL {
        assert!(agents.contains(&agent), "{agent} is not listed");
    }
    let layers: Vec<(Agent, Layers)> = all.agents.iter().map(|a| (a.agent, a.layers)).collect();
    assert_eq!(
        layers,
        [
            (Agent::Codex, Layers::CodeAndConversation),
            (Agent::Cursor, Layers::CodeOnly),
            (Agent::CopilotCli, Layers::CodeOnly),
            (Agent::Pi, Layers::CodeAndConversation),
            (Agent::OpenCode, Layers::CodeOnly)
        ]
    );
}

#[test]
fn pi_and_opencode_payloads_of_cairns_own_files_are_classified() {
    let pi = r#"{"event":"before_agent_start","sessionId":"0f8e","sessionFile":"/h/.pi/agent/sessions/--p--/s.jsonl","cwd":"/p","prompt":"add a flag"}"#;
    let prompt = parse_payload(Agent::Pi, pi).unwrap();
    assert_eq!(prompt.event, HookEvent::PromptSubmitted { prompt: "add a flag".into() });
    assert_eq!(prompt.project_dir, Some(PathBuf::from("/p")));
    assert_eq!(prompt.transcript_path, Some(PathBuf::from("/h/.pi/agent/sessions/--p--/s.jsonl")));
    let tool = parse_payload(
        Agent::Pi,
        r#"{"event":"tool_result","sessionId":"0f8e","cwd":"/p","toolName":"read"}"#,
    );
    assert_eq!(tool.unwrap().event, HookEvent::Other { event: "tool_result".into() });
    let end = parse_payload(Agent::Pi, r#"{"event":"agent_end","sessionId":"0f8e","cwd":"/p"}"#).unwrap();
    assert_eq!(end.event, HookEvent::TurnEnded);

    let oc = r#"{"event":"tool.execute.after","sessionID":"ses_1","directory":"/p/sub","worktree":"/p","tool":"bash"}"#;
    let tool = parse_payload(Agent::OpenCode, oc).unwrap();
    assert_eq!(tool.event, HookEvent::FileToolFinished { tool: "bash".into() });
    assert_eq!(tool.project_dir, Some(PathBuf::from("/p")));
    // Outside git, OpenCode's worktree is `/`: the project is its directory.
    let idle = r#"{"event":"session.idle","sessionID":"ses_1","directory":"/q","worktree":"/"}"#;
    let idle = parse_payload(Agent::OpenCode, idle).unwrap();
    assert_eq!((idle.event, idle.project_dir), (HookEvent::TurnEnded, Some(PathBuf::from("/q"))));
    assert_eq!(
        parse_payload(Agent::OpenCode, r#"{"event":"session.idle"}"#).unwrap_err().code(),
        Some(REJECTED)
    );
}

#[test]
fn every_agents_command_is_guarded_and_recognised_for_uninstall() {
    let env = Env::new();
    for agent in [Agent::Codex, Agent::Cursor, Agent::CopilotCli] {
        let change = install(&env.places(), &cmd(), &install_opts(agent, Scope::Project)).unwrap();
        assert!(change.file_created, "{agent}");
        let text = std::fs::read_to_string(&change.file).unwrap();
        assert!(
            text.contains("if [ -x '/opt/cairn/bin/cairn' ]; then '/opt/cairn/bin/cairn' hook"),
            "{text}"
        );
        assert!(text.contains("|| true; fi"), "{text}");
        let rows = status(&env.places(), &HooksStatusOptions { agent: Some(agent) }).unwrap();
        assert!(rows.places.iter().any(|p| p.scope == Scope::Project && p.missing.is_empty()), "{agent}");
        let removed = uninstall(&env.places(), &uninstall_opts(agent, Scope::Project)).unwrap();
        assert!(removed.file_removed, "{agent}");
        assert!(!change.file.exists());
    }
}
