//! Pi through the real binary: `cairn hooks install pi` writes cairn's own extension file
//! (idempotent, removed exactly, an edited copy refused); the command that extension runs,
//! run as it runs it (cairn's path and `--store`, the payload on stdin, Pi's cwd), takes a
//! checkpoint each turn of a real project while a Pi session file (version 3) grows as Pi
//! writes it; `cairn rewind 2` puts the files back and forks the session before prompt 2.
//!
//! Order, as Pi 0.58.3 runs it: `before_agent_start` (awaited, before the user message is
//! appended), then the user and assistant messages, `tool_result` for each tool (before its
//! toolResult message is appended), then `agent_end`. A new session's file is written with
//! the first assistant message.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{TestEnv, contents};
use serde_json::{Value, json};

const SESSION: &str = "0f8e2c1a-7d0b-4c4e-9a57-3b1b6c2d9e11";

fn files(root: &Path) -> Vec<(PathBuf, String)> {
    contents(root).into_iter().filter(|(_, what)| !what.starts_with("Dir")).collect()
}

fn extension(env: &TestEnv) -> PathBuf {
    env.home().join(".pi/agent/extensions/cairn.ts")
}

/// The value of the extension's `const NAME = ...;` line.
fn constant(text: &str, name: &str) -> Option<String> {
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("const {name} = ")))?;
    serde_json::from_str(line.strip_suffix(';')?).unwrap()
}

#[test]
fn install_writes_the_extension_twice_changes_nothing_and_uninstall_removes_it() {
    let env = TestEnv::new();
    let path = extension(&env);
    let change = env.json(&["hooks", "install", "pi"]);
    assert_eq!(change["file_created"], true);
    assert_eq!(change["events"], json!(["before_agent_start", "tool_result", "agent_end"]));
    let written = std::fs::read_to_string(&path).unwrap();
    let program = constant(&written, "CAIRN").unwrap();
    assert!(Path::new(&program).is_absolute(), "{program}");
    assert_eq!(constant(&written, "STORE"), Some(env.store().display().to_string()));

    let again = env.json(&["hooks", "install", "pi"]);
    assert_eq!(again["changed"], false);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);

    let status = env.json(&["hooks", "status", "pi"]);
    assert_eq!(status["places"][0]["installed"], json!(["before_agent_start", "tool_result", "agent_end"]));
    assert_eq!(status["places"][1]["exists"], false);

    let removed = env.json(&["hooks", "uninstall", "pi"]);
    assert_eq!(removed["file_removed"], true);
    assert!(!path.exists());
    assert!(path.parent().unwrap().is_dir(), "the extensions directory is Pi's, not cairn's");
}

#[test]
fn a_user_edited_extension_is_neither_replaced_nor_removed() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "pi", "--scope", "project"]);
    let path = env.work().join(".pi/extensions/cairn.ts");
    let edited = std::fs::read_to_string(&path).unwrap() + "// mine\n";
    std::fs::write(&path, &edited).unwrap();
    let err = env.fails(&["hooks", "uninstall", "pi", "--scope", "project"], 2);
    assert!(err.contains("is not the file cairn wrote"), "{err}");
    let err = env.fails(&["hooks", "install", "pi", "--scope", "project"], 2);
    assert!(err.contains("is not the file cairn wrote"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    let status = env.json(&["hooks", "status", "pi"]);
    assert!(status["places"][1]["warnings"][0].as_str().unwrap().contains("was changed"), "{status}");
}

#[test]
fn an_older_install_for_another_store_is_replaced() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "pi"]);
    let moved = env.root().join("other-store");
    let first = std::fs::read_to_string(extension(&env)).unwrap();
    let out = env
        .without_store_flag(&["--json", "--store", moved.to_str().unwrap(), "hooks", "install", "pi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let change: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(change["replaced"], json!(["before_agent_start", "tool_result", "agent_end"]));
    let now = std::fs::read_to_string(extension(&env)).unwrap();
    assert_ne!(now, first);
    assert_eq!(constant(&now, "STORE"), Some(moved.display().to_string()));
}

#[test]
fn the_extension_file_reads_as_written() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "pi"]);
    let text = std::fs::read_to_string(extension(&env)).unwrap();
    let program = constant(&text, "CAIRN").unwrap();
    let mut settings = env.filters();
    settings.add_filter(&regex::escape(&program), "[CAIRN]");
    settings.bind(|| insta::assert_snapshot!(text));
}

/// Pi as cairn's extension sees it: the session file it grows and the command it runs.
struct Pi<'a> {
    env: &'a TestEnv,
    file: PathBuf,
    program: String,
    store: Option<String>,
    last: std::cell::RefCell<Option<String>>,
    n: std::cell::Cell<u32>,
    /// Entries Pi holds in memory until the first assistant message is written.
    pending: std::cell::RefCell<Vec<String>>,
}

impl Pi<'_> {
    /// Runs the extension's command with `fields` as it does: spawn CAIRN `hook pi [--store S]`
    /// in Pi's cwd, the JSON payload on stdin, and wait.
    fn fire(&self, event: &str, fields: Value) {
        let mut payload = json!({"event": event, "sessionId": SESSION,
            "sessionFile": self.file.display().to_string(), "cwd": self.env.work().display().to_string()});
        for (k, v) in fields.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let mut args = vec!["hook".to_owned(), "pi".to_owned()];
        if let Some(store) = &self.store {
            args.extend(["--store".to_owned(), store.clone()]);
        }
        let mut child = std::process::Command::new(&self.program)
            .args(&args)
            .env_clear()
            .env("HOME", self.env.home())
            .env("PATH", "/usr/bin:/bin")
            .current_dir(self.env.work())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(payload.to_string().as_bytes());
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    }

    fn append(&self, message: Value) {
        let n = self.n.get() + 1;
        self.n.set(n);
        let id = format!("e{n:07x}");
        let line = json!({"type": "message", "id": id, "parentId": *self.last.borrow(),
            "timestamp": format!("2026-03-15T10:{:02}:00.000Z", n), "message": message})
        .to_string();
        *self.last.borrow_mut() = Some(id);
        let assistant = message_role(&line) == "assistant";
        let mut pending = self.pending.borrow_mut();
        if self.file.exists() {
            let mut f = std::fs::OpenOptions::new().append(true).open(&self.file).unwrap();
            writeln!(f, "{line}").unwrap();
        } else {
            pending.push(line);
            if assistant {
                std::fs::create_dir_all(self.file.parent().unwrap()).unwrap();
                let header = json!({"type": "session", "version": 3, "id": SESSION,
                    "timestamp": "2026-03-15T10:00:00.000Z", "cwd": self.env.work().display().to_string()});
                let mut text = header.to_string() + "\n";
                for l in pending.drain(..) {
                    text.push_str(&l);
                    text.push('\n');
                }
                std::fs::write(&self.file, text).unwrap();
            }
        }
    }

    fn prompt(&self, text: &str) {
        self.fire("before_agent_start", json!({"prompt": text}));
        self.append(json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1773568800000u64}));
    }

    /// A tool call: the assistant asks, `effects` runs it, the hook fires, the result is kept.
    fn tool(&self, name: &str, arguments: Value, effects: impl FnOnce()) {
        let call = format!("call_{}", self.n.get());
        self.append(json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": name, "arguments": arguments}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "toolUse", "timestamp": 1773568801000u64}));
        effects();
        self.fire("tool_result", json!({"toolName": name}));
        self.append(json!({"role": "toolResult", "toolCallId": call, "toolName": name,
            "content": [{"type": "text", "text": "done"}], "isError": false, "timestamp": 1773568802000u64}));
    }

    fn end(&self, answer: &str) {
        self.append(json!({"role": "assistant", "content": [{"type": "text", "text": answer}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 1773568803000u64}));
        self.fire("agent_end", json!({}));
    }
}

fn message_role(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    v["message"]["role"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn each_turn_is_checkpointed_and_rewind_2_puts_back_the_files_and_forks_the_session() {
    let env = TestEnv::new();
    env.ok(&["hooks", "install", "pi"]);
    let text = std::fs::read_to_string(extension(&env)).unwrap();
    let work = env.work().display().to_string();
    let dir = format!("--{}--", work.trim_start_matches('/').replace('/', "-"));
    let pi = Pi {
        env: &env,
        file: env
            .home()
            .join(".pi/agent/sessions")
            .join(dir)
            .join(format!("2026-03-15T10-00-00-000Z_{SESSION}.jsonl")),
        program: constant(&text, "CAIRN").unwrap(),
        store: constant(&text, "STORE"),
        last: Default::default(),
        n: Default::default(),
        pending: Default::default(),
    };
    env.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    env.write("README.md", "# proj\n");

    pi.prompt("add two()");
    pi.tool("edit", json!({"path": "src/lib.rs", "oldText": "", "newText": "pub fn two()"}), || {
        env.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    2\n}\n");
    });
    pi.end("Added two().");
    let before_2 = files(&env.work());

    pi.prompt("replace the readme with notes, in a docs dir");
    pi.tool("bash", json!({"command": "rm README.md && mkdir docs && echo notes > docs/notes.md"}), || {
        std::fs::remove_file(env.work().join("README.md")).unwrap();
        env.write("docs/notes.md", "notes\n");
    });
    pi.end("Done.");

    pi.prompt("drop one()");
    pi.tool("write", json!({"path": "src/lib.rs", "content": "pub fn two()"}), || {
        env.write("src/lib.rs", "pub fn two() -> u32 {\n    2\n}\n");
    });
    pi.end("Dropped.");

    let turns = env.json(&["rewind", "--json"]).to_string();
    assert!(turns.contains("\"pi\"") && turns.contains(SESSION), "{turns}");
    env.ok(&["rewind", "2", "--code"]);
    assert_eq!(files(&env.work()), before_2);

    // The conversation: a Pi session whose path ends with turn 1's answer.
    let rewound = env.json(&["rewind", "2", "--conversation"]);
    let part = &rewound["parts"][0];
    let file = PathBuf::from(part["file"].as_str().unwrap_or_else(|| panic!("{rewound}")));
    assert_ne!(file, pi.file);
    if let Some(resume) = part["resume_command"].as_str() {
        assert!(resume.starts_with("pi "), "{resume}");
    }
    let forked = cairn_transcript::Transcript::read(&file).unwrap();
    assert_eq!(forked.format(), cairn_transcript::Format::Pi);
    let path = forked.active_path();
    let prompts: Vec<String> = path
        .entries
        .iter()
        .filter_map(|e| cairn_transcript::user_prompt_text(cairn_transcript::Format::Pi, &e.text))
        .collect();
    assert_eq!(prompts, ["add two()"]);
    let last: Value = serde_json::from_str(&path.entries.last().unwrap().text).unwrap();
    assert_eq!(last["message"]["content"][0]["text"], "Added two().");
}
