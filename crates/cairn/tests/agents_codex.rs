//! Codex CLI's hooks through the real binary: `cairn hooks install codex` merges into a user's
//! own `hooks.json` and uninstall gives its bytes back; the installed commands, run as Codex
//! runs them (`sh -c`, the event on stdin, in the turn's directory, no extra environment), take
//! a checkpoint each turn of a real project, and `cairn rewind 2 --code` puts the files back.
//!
//! Payloads follow codex-rs `rust-v0.125.0` (`hooks/src/schema.rs`): `UserPromptSubmit` runs
//! before the prompt reaches the rollout file, `PostToolUse` follows `apply_patch` or a shell
//! tool (named `Bash`), `Stop` ends the turn.

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

const THREAD: &str = "0199a213-81c0-7800-8aa1-bbab2a035a53";

/// A user's own `~/.codex/hooks.json`, as Codex's docs shape it: a formatter after patches, a
/// session-start banner, a prompt logger.
const USER_HOOKS: &str = r#"{
    "hooks": {
        "SessionStart": [
            {
                "matcher": "startup|resume",
                "hooks": [{"type": "command", "command": "echo 'welcome back'", "statusMessage": "greeting"}]
            }
        ],
        "PostToolUse": [
            {
                "matcher": "apply_patch",
                "hooks": [{"type": "command", "command": "cargo fmt --all", "timeout": 120}]
            }
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "~/.codex/log-prompt.sh"}]}
        ]
    }
}
"#;

fn codex_dir(env: &TestEnv) -> PathBuf {
    env.home().join(".codex")
}

#[test]
fn install_merges_into_the_users_hooks_twice_changes_nothing_and_uninstall_gives_the_bytes_back() {
    let env = TestEnv::new();
    let path = codex_dir(&env).join("hooks.json");
    std::fs::create_dir_all(codex_dir(&env)).unwrap();
    std::fs::write(&path, USER_HOOKS).unwrap();

    let change = env.json(&["hooks", "install", "codex"]);
    assert_eq!(change["events"], json!(["UserPromptSubmit", "PostToolUse", "Stop"]));
    let installed = std::fs::read_to_string(&path).unwrap();
    let mut rest = installed.as_str();
    for line in USER_HOOKS.lines() {
        let at = rest.find(line).unwrap_or_else(|| panic!("{line:?} is gone or moved:\n{installed}"));
        rest = &rest[at + line.len()..];
    }
    let value: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(value["hooks"]["PostToolUse"][1]["matcher"], "apply_patch|Bash");
    assert_eq!(value["hooks"]["PostToolUse"][1]["hooks"][0]["timeout"], 30);
    assert!(change["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("/hooks")));

    let again = env.json(&["hooks", "install", "codex"]);
    assert_eq!(again["changed"], false);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);

    let removed = env.json(&["hooks", "uninstall", "codex"]);
    assert_eq!(removed["changed"], true);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), USER_HOOKS);
}

#[test]
fn a_project_file_install_created_is_removed_and_codex_hooks_off_is_warned() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_dir(&env)).unwrap();
    std::fs::write(
        codex_dir(&env).join("config.toml"),
        "model = \"gpt-5.4\"\n\n[features]\ncodex_hooks = false\n",
    )
    .unwrap();
    let out = env.ok(&["hooks", "install", "codex"]);
    assert!(out.contains("warning: ") && out.contains("codex_hooks = false"), "{out}");

    let path = env.work().join(".codex/hooks.json");
    let change = env.json(&["hooks", "install", "codex", "--scope", "project"]);
    assert_eq!(change["file_created"], true);
    let removed = env.json(&["hooks", "uninstall", "codex", "--scope", "project"]);
    assert_eq!(removed["file_removed"], true);
    assert!(!path.exists());
}

/// One Codex thread over the work tree: the installed commands and its rollout file.
struct Codex<'a> {
    env: &'a TestEnv,
    rollout: PathBuf,
    turn: std::cell::Cell<u32>,
}

impl Codex<'_> {
    fn command(&self, event: &str) -> String {
        let text = std::fs::read_to_string(codex_dir(self.env).join("hooks.json")).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        value["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().to_owned()
    }

    /// Runs the hook of `event` as Codex does; it exits 0 and prints nothing.
    fn fire(&self, event: &str, extra: Value) {
        let mut payload = json!({"session_id": THREAD, "turn_id": self.turn.get().to_string(),
            "transcript_path": self.rollout.display().to_string(), "cwd": self.env.work().display().to_string(),
            "hook_event_name": event, "model": "gpt-5.4", "permission_mode": "default"});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let out = run_as_agent(self.env, &self.command(event), &payload.to_string(), &self.env.work());
        assert!(out.status.success(), "{out:?}");
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    fn append(&self, kind: &str, payload: Value) {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.rollout).unwrap();
        let line = json!({"timestamp": "2026-04-24T08:00:00.000Z", "type": kind, "payload": payload});
        writeln!(file, "{line}").unwrap();
    }

    /// A prompt: the rollout exists (the hook's `transcript_path` forces it) but the prompt is
    /// written only after the hook.
    fn prompt(&self, text: &str) {
        self.turn.set(self.turn.get() + 1);
        if !self.rollout.exists() {
            std::fs::create_dir_all(self.rollout.parent().unwrap()).unwrap();
            self.append(
                "session_meta",
                json!({"id": THREAD, "timestamp": "2026-04-24T08:00:00.000Z",
                "cwd": self.env.work().display().to_string(), "originator": "codex_cli_rs",
                "cli_version": "0.125.0", "source": "cli", "model_provider": "openai"}),
            );
        }
        self.fire("UserPromptSubmit", json!({"prompt": text}));
        let turn = self.turn.get().to_string();
        self.append(
            "event_msg",
            json!({"type": "task_started", "turn_id": turn, "model_context_window": 272000}),
        );
        self.append(
            "response_item",
            json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}),
        );
        self.append(
            "event_msg",
            json!({"type": "user_message", "message": text, "local_images": [], "text_elements": []}),
        );
    }

    fn patched(&self, patch: &str) {
        self.append(
            "response_item",
            json!({"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch", "input": patch}),
        );
        self.fire("PostToolUse", json!({"tool_name": "apply_patch", "tool_input": {"command": patch},
            "tool_response": "Success. Updated the following files:\nM src/lib.rs\n", "tool_use_id": "call_p"}));
    }

    fn shell(&self, command: &str) {
        self.fire(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": command},
            "tool_response": "Exit code: 0\nOutput:\n", "tool_use_id": "call_s"}),
        );
    }

    fn stop(&self, answer: &str) {
        self.fire("Stop", json!({"stop_hook_active": false, "last_assistant_message": answer}));
        self.append("event_msg", json!({"type": "task_complete", "turn_id": self.turn.get().to_string(), "last_agent_message": answer}));
    }
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

#[test]
fn each_turn_is_checkpointed_and_rewind_2_puts_back_the_files_and_forks_the_rollout() {
    let env = TestEnv::new();
    std::fs::create_dir_all(codex_dir(&env)).unwrap();
    env.ok(&["hooks", "install", "codex"]);
    env.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    env.write("README.md", "# proj\n");
    let codex = Codex {
        env: &env,
        rollout: codex_dir(&env)
            .join(format!("sessions/2026/04/24/rollout-2026-04-24T10-00-00-{THREAD}.jsonl")),
        turn: std::cell::Cell::new(0),
    };

    codex.prompt("add two()");
    env.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    2\n}\n");
    codex.patched("*** Begin Patch\n*** Update File: src/lib.rs\n@@\n+pub fn two() -> u32 {\n+    2\n+}\n*** End Patch\n");
    codex.stop("Added two().");
    let before_2 = files(&env.work());

    codex.prompt("replace the readme with notes, in a docs dir");
    std::fs::remove_file(env.work().join("README.md")).unwrap();
    env.write("docs/notes.md", "notes\n");
    codex.shell("rm README.md && mkdir docs && echo notes > docs/notes.md");
    codex.stop("Done.");

    codex.prompt("drop one()");
    env.write("src/lib.rs", "pub fn two() -> u32 {\n    2\n}\n");
    codex
        .patched("*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-pub fn one() -> u32 {\n*** End Patch\n");
    codex.stop("Dropped.");

    let turns = env.json(&["rewind", "--json"]);
    let text = turns.to_string();
    assert!(text.contains("\"codex\"") && text.contains(THREAD), "{text}");
    env.ok(&["rewind", "2", "--code"]);
    assert_eq!(files(&env.work()), before_2);

    // The conversation: a new rollout of today that ends with turn 1, which `codex resume` takes.
    let rewound = env.json(&["rewind", "2", "--conversation"]);
    let part = &rewound["parts"][0];
    let id = part["session_id"].as_str().unwrap();
    assert_eq!(part["resume_command"], format!("codex resume {id}"));
    let file = PathBuf::from(part["file"].as_str().unwrap());
    assert!(file.starts_with(codex_dir(&env).join("sessions")), "{}", file.display());
    assert!(file.file_name().unwrap().to_str().unwrap().ends_with(&format!("{id}.jsonl")));
    let forked = cairn_transcript::Transcript::read(&file).unwrap();
    assert_eq!(forked.format(), cairn_transcript::Format::Codex);
    let prompts: Vec<String> = forked
        .active_path()
        .entries
        .iter()
        .filter_map(|e| cairn_transcript::user_prompt_text(cairn_transcript::Format::Codex, &e.text))
        .collect();
    assert_eq!(prompts, ["add two()"]);
    assert_eq!(forked.session_id(), Some(id));
}
