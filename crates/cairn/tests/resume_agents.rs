//! Handing a turn to another machine, for every agent cairn checkpoints besides Claude Code
//! (`resume.rs`): two machines (two HOMEs and catalog caches) on one encrypted store on a real
//! S3 server (`moto_server`). On machine A each agent's installed hooks are run as the agent
//! runs them (its command, its payload on stdin, the environment of the shell it was started
//! in: the S3 endpoint, keys and the store's password) over three turns in `a/proj`, while the
//! agent's session file grows as the agent writes it; machine B resumes turn 2 into `b/work`.
//!
//! Codex CLI, Gemini CLI and Pi: B's session file sits where B's agent looks for sessions of
//! `b/work`, no string in it names `a/proj`, the tool calls name `b/work`, it parses as the
//! agent's and ends just before turn 2's prompt, and the printed command is the agent's own;
//! B's agent then goes on in that session, and its turn is turn 2 of a fork of A's session.
//! Cursor, Copilot CLI and OpenCode (whose conversations cairn does not save): B gets the
//! files and is told the conversation was not moved.
//!
//! Payloads and files follow the versions the agent tests follow (`agents_codex.rs`,
//! `rewind_orders.rs`, `agents_pi.rs`, `agents_cursor.rs`, `agents_copilot.rs`,
//! `agents_opencode.rs`).

mod common;

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::{Path, PathBuf};

use cairn_test_support::Moto;
use cairn_transcript::{Format, Transcript, user_prompt_text};
use common::{TestEnv, contents, machine_on};
use serde_json::{Value, json};

const STORE: &str = "s3://team/cairn";

/// Two machines on one store on `moto`.
fn machines() -> (Moto, TestEnv, TestEnv) {
    let moto = Moto::start();
    moto.create_bucket("team");
    let a = machine_on(&moto, STORE);
    let b = machine_on(&moto, STORE);
    (moto, a, b)
}

/// The files and links below `root` with their contents and modes (directories left out: an
/// agent's emptied directory holds nothing to lose).
fn files(root: &Path) -> Vec<(PathBuf, String)> {
    contents(root).into_iter().filter(|(_, what)| !what.starts_with("Dir")).collect()
}

/// Runs `program ARGS` as an agent started in a shell of `env`'s machine runs its hooks: that
/// shell's environment (HOME, the S3 endpoint and keys, the store's password) and `extra`, in
/// `dir`, `stdin` on its input. It exits 0 and says nothing on stderr; returns its stdout.
fn run_as_agent(
    env: &TestEnv,
    program: &str,
    args: &[&str],
    extra: &[(&str, &str)],
    dir: &Path,
    stdin: &str,
) -> String {
    let shell = env.without_store_flag(&[]);
    let mut command = std::process::Command::new(program);
    command.args(args).env_clear();
    for (k, v) in shell.get_envs() {
        if let Some(v) = v {
            command.env(k, v);
        }
    }
    command.envs(extra.iter().copied()).current_dir(dir);
    command.stdin(std::process::Stdio::piped());
    command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The installed shell command of `event` in the hooks file `file`, at `pointer` below the
/// event's list (`/0/hooks/0/command`, `/0/bash`, …).
fn installed(file: &Path, event: &str, pointer: &str) -> String {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let at = format!("/hooks/{event}{pointer}");
    value.pointer(&at).and_then(Value::as_str).unwrap_or_else(|| panic!("no {at} in {value}")).to_owned()
}

/// The value of a plugin's or extension's `const NAME = ...;` line.
fn constant(text: &str, name: &str) -> Option<String> {
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("const {name} = ")))?;
    serde_json::from_str(line.strip_suffix(';')?).unwrap()
}

fn append_line(file: &Path, value: &Value) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).unwrap();
    writeln!(f, "{value}").unwrap();
}

/// Writes `content` to `rel` below `dir`, after a pause: a file written in the clock tick a
/// scan starts in is read again (the racy rule), which is not what these tests are about.
fn edit(dir: &Path, rel: &str, content: &str) {
    std::thread::sleep(std::time::Duration::from_millis(30));
    common::write(dir, rel, content);
}

/// Every string value under `value`.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// A project of three turns on machine A, resumed at turn 2 on machine B: what B got.
struct Resumed {
    a_proj: String,
    b_work: PathBuf,
    out: Value,
}

impl Resumed {
    /// Machine B resumes turn 2 into `b/work`, from a directory that is not the project;
    /// checks the files are A's at turn 2. A's project is removed first: B has no such path.
    fn turn_2(a: &TestEnv, b: &TestEnv, proj: &Path, at_turn_2: &[(PathBuf, String)]) -> Self {
        std::fs::remove_dir_all(proj).unwrap();
        let b_work = b.root().join("b/work");
        let out = b.json(&["resume", "2", "--to", b_work.to_str().unwrap()]);
        let a_proj = proj.display().to_string();
        assert_eq!(out["from"], a_proj.as_str(), "{out}");
        assert_eq!(out["to"], b_work.display().to_string(), "{out}");
        assert_eq!(out["moment"]["turn"]["number"], 2, "{out}");
        assert_eq!(files(&b_work), at_turn_2, "B's files are A's at turn 2");
        assert!(a.root() != b.root());
        Self { a_proj, b_work, out }
    }

    /// Checks the conversation B got as a session of `format`: returns its file and id.
    fn conversation(&self, agent: &str, format: Format) -> (PathBuf, String) {
        let out = &self.out;
        let conversation = &out["conversation"];
        assert_eq!(conversation["agent"], agent, "{out}");
        let file = PathBuf::from(conversation["file"].as_str().unwrap_or_else(|| panic!("{out}")));
        let id = conversation["session_id"].as_str().unwrap().to_owned();
        assert_eq!(conversation["forked_from"]["before_turn"], 2, "{out}");
        let b_work = self.b_work.display().to_string();
        let mut all = Vec::new();
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            strings(&serde_json::from_str(line).unwrap(), &mut all);
        }
        assert!(all.iter().all(|s| !s.contains(&self.a_proj)), "a string still names A's project: {all:?}");
        let written = format!("{b_work}/src/main.rs");
        assert!(all.iter().any(|s| s.contains(&written)), "the tool call names B's file: {all:?}");
        let parsed = Transcript::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(parsed.format(), format);
        assert_eq!(parsed.session_id(), Some(id.as_str()));
        let prompts: Vec<String> =
            parsed.active_path().entries.iter().filter_map(|e| user_prompt_text(format, &e.text)).collect();
        assert_eq!(prompts, ["one"], "the conversation ends just before turn 2's prompt");
        (file, id)
    }

    /// Checks B's next turn, in session `id` forked from A's `old`, is checkpointed as turn 2
    /// of the fork and listed by `cairn rewind` in `b/work`.
    fn goes_on(&self, b: &TestEnv, id: &str, old: &str) {
        let run = b.run_in(&self.b_work, &["--json", "rewind"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let listed: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(listed["workspace"], self.b_work.display().to_string(), "{listed}");
        let turns = common::turn_rows(&listed);
        assert_eq!(turns, [(2, id, "two again, elsewhere")], "{listed}");
        assert_eq!(listed["sessions"][0]["forked_from"]["agent_session"], old, "{listed}");
        assert_eq!(listed["sessions"][0]["forked_from"]["before_turn"], 2, "{listed}");
    }
}

// ---------------------------------------------------------------------------------------------
// Codex CLI (codex-rs rust-v0.125.0)

const THREAD: &str = "0199a213-81c0-7800-8aa1-bbab2a035a53";

/// One Codex thread in `dir`: the hooks `cairn hooks install codex` wrote, and its rollout.
struct Codex<'a> {
    env: &'a TestEnv,
    dir: PathBuf,
    rollout: PathBuf,
    thread: String,
    turn: Cell<u32>,
}

impl Codex<'_> {
    fn fire(&self, event: &str, extra: Value) {
        let command = installed(&self.env.home().join(".codex/hooks.json"), event, "/0/hooks/0/command");
        let mut payload = json!({"session_id": self.thread, "turn_id": self.turn.get().to_string(),
            "transcript_path": self.rollout.display().to_string(), "cwd": self.dir.display().to_string(),
            "hook_event_name": event, "model": "gpt-5.4", "permission_mode": "default"});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let out = run_as_agent(self.env, "sh", &["-c", &command], &[], &self.dir, &payload.to_string());
        assert!(out.is_empty(), "{out}");
    }

    fn append(&self, kind: &str, payload: Value) {
        append_line(
            &self.rollout,
            &json!({"timestamp": "2026-04-24T08:00:00.000Z", "type": kind, "payload": payload}),
        );
    }

    /// One turn: the prompt (its hook runs before Codex writes it), the turn's context, a
    /// shell call that writes `rel` (named by its absolute path), its hook and output, the end.
    fn turn(&self, prompt: &str, rel: &str, content: &str) {
        let dir = self.dir.display().to_string();
        self.turn.set(self.turn.get() + 1);
        let turn = self.turn.get().to_string();
        if !self.rollout.exists() {
            self.append(
                "session_meta",
                json!({"id": self.thread, "timestamp": "2026-04-24T08:00:00.000Z", "cwd": dir,
                "originator": "codex_cli_rs", "cli_version": "0.125.0", "source": "cli",
                "model_provider": "openai"}),
            );
        }
        self.fire("UserPromptSubmit", json!({"prompt": prompt}));
        self.append(
            "event_msg",
            json!({"type": "task_started", "turn_id": turn, "model_context_window": 272000}),
        );
        self.append(
            "turn_context",
            json!({"cwd": dir, "approval_policy": "on-request", "model": "gpt-5.4",
                "sandbox_policy": {"type": "workspace-write", "writable_roots": [dir], "network_access": false}}),
        );
        self.append(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        );
        self.append(
            "event_msg",
            json!({"type": "user_message", "message": prompt, "local_images": [], "text_elements": []}),
        );
        let file = format!("{dir}/{rel}");
        let script = format!("cat > {file} <<'EOF'\n{content}EOF");
        let call = format!("call_{turn}");
        let arguments = json!({"command": ["bash", "-lc", script], "workdir": dir}).to_string();
        self.append(
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call}),
        );
        edit(&self.dir, rel, content);
        self.fire(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": script},
            "tool_response": "Exit code: 0\nOutput:\n", "tool_use_id": call}),
        );
        let output = json!({"output": format!("wrote {file}\n"), "metadata": {"exit_code": 0, "duration_seconds": 0.1}});
        self.append(
            "response_item",
            json!({"type": "function_call_output", "call_id": call, "output": output.to_string()}),
        );
        self.append(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}),
        );
        self.fire("Stop", json!({"stop_hook_active": false, "last_assistant_message": "Done."}));
        self.append(
            "event_msg",
            json!({"type": "task_complete", "turn_id": turn, "last_agent_message": "Done."}),
        );
    }
}

#[test]
fn a_codex_turn_resumed_on_another_machine_is_a_rollout_of_b_for_b_work() {
    let (_moto, a, b) = machines();
    std::fs::create_dir_all(a.home().join(".codex")).unwrap();
    a.ok(&["hooks", "install", "codex"]);
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    let codex = Codex {
        env: &a,
        dir: proj.clone(),
        rollout: a
            .home()
            .join(format!(".codex/sessions/2026/04/24/rollout-2026-04-24T10-00-00-{THREAD}.jsonl")),
        thread: THREAD.to_owned(),
        turn: Cell::new(0),
    };
    codex.turn("one", "src/main.rs", "fn main() { one(); }\n");
    let at_turn_2 = files(&proj);
    codex.turn("two", "src/lib.rs", "pub fn two() {}\n");
    codex.turn("three", "src/main.rs", "fn main() { three(); }\n");

    let resumed = Resumed::turn_2(&a, &b, &proj, &at_turn_2);
    let (file, id) = resumed.conversation("codex", Format::Codex);
    assert_eq!(resumed.out["conversation"]["resume_command"], format!("codex resume {id}"));
    assert_eq!(resumed.out["conversation"]["forked_from"]["agent_session"], THREAD);
    // Codex keeps a rollout under the day it was written, and its `session_meta` names the
    // directory the `resume` picker lists it under.
    let sessions = b.home().join(".codex/sessions");
    let day = file.parent().unwrap().strip_prefix(&sessions).unwrap_or_else(|_| panic!("{}", file.display()));
    let parts: Vec<&str> = day.iter().map(|p| p.to_str().unwrap()).collect();
    assert!(
        parts.len() == 3
            && [4, 2, 2].iter().zip(&parts).all(|(n, p)| p.len() == *n && p.parse::<u32>().is_ok()),
        "{}",
        file.display()
    );
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("rollout-") && name.ends_with(&format!("-{id}.jsonl")), "{name}");
    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&file).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "session_meta");
    assert_eq!(first["payload"]["cwd"], resumed.b_work.display().to_string());
    assert_eq!(first["payload"]["id"], id.as_str());

    // B's Codex resumes the rollout (`codex resume ID` appends to it) and takes a turn.
    b.ok(&["hooks", "install", "codex"]);
    let codex =
        Codex { env: &b, dir: resumed.b_work.clone(), rollout: file, thread: id.clone(), turn: Cell::new(1) };
    codex.turn("two again, elsewhere", "src/b.rs", "// B\n");
    resumed.goes_on(&b, &id, THREAD);
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI (0.56 nightly: JSONL sessions, hooks in ~/.gemini/settings.json)

const GEMINI_SESSION: &str = "b2e7d4c1-93a8-4f6e-8d20-5c1a7e9f3b64";

/// One Gemini CLI session of `dir`, registered as Gemini CLI 0.29+ registers a project.
struct Gemini<'a> {
    env: &'a TestEnv,
    dir: PathBuf,
    file: PathBuf,
    session: String,
    n: Cell<u32>,
}

impl<'a> Gemini<'a> {
    fn start(env: &'a TestEnv, dir: &Path) -> Self {
        env.ok(&["hooks", "install", "gemini-cli"]);
        let root = dir.display().to_string();
        let gemini = env.home().join(".gemini");
        std::fs::create_dir_all(gemini.join("tmp/proj/chats")).unwrap();
        std::fs::write(gemini.join("projects.json"), json!({"projects": {&root: "proj"}}).to_string())
            .unwrap();
        std::fs::write(gemini.join("tmp/proj/.project_root"), &root).unwrap();
        let file =
            gemini.join(format!("tmp/proj/chats/session-2026-08-21T10-00-{}.jsonl", &GEMINI_SESSION[..8]));
        append_line(
            &file,
            &json!({"sessionId": GEMINI_SESSION, "projectHash": cairn_transcript::gemini_project_hash(&root),
                "startTime": "2026-08-21T10:00:00.000Z", "lastUpdated": "2026-08-21T10:00:00.000Z", "kind": "main"}),
        );
        Self { env, dir: dir.to_path_buf(), file, session: GEMINI_SESSION.to_owned(), n: Cell::new(0) }
    }

    /// Runs the installed command as Gemini CLI does: `GEMINI_PROJECT_DIR` (and
    /// `CLAUDE_PROJECT_DIR`) set to its directory, the event on stdin.
    fn fire(&self, event: &str, extra: Value) {
        let command = installed(&self.env.home().join(".gemini/settings.json"), event, "/0/hooks/0/command");
        let mut payload = json!({"session_id": self.session, "transcript_path": self.file.display().to_string(),
            "cwd": self.dir.display().to_string(), "hook_event_name": event,
            "timestamp": "2026-08-21T10:00:00.000Z"});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let dir = self.dir.display().to_string();
        let vars = [("GEMINI_PROJECT_DIR", dir.as_str()), ("CLAUDE_PROJECT_DIR", dir.as_str())];
        let out = run_as_agent(self.env, "sh", &["-c", &command], &vars, &self.dir, &payload.to_string());
        assert!(out.is_empty(), "{out}");
    }

    /// A message record, then the metadata patch Gemini CLI writes after each.
    fn record(&self, fields: Value) -> String {
        let n = self.n.get() + 1;
        self.n.set(n);
        let id = format!("00000000-0000-4000-9000-{n:012}");
        let time = format!("2026-08-21T10:00:{n:02}.000Z");
        let mut record = json!({"id": id, "timestamp": time});
        for (k, v) in fields.as_object().unwrap() {
            record[k] = v.clone();
        }
        append_line(&self.file, &record);
        append_line(&self.file, &json!({"$set": {"lastUpdated": time}}));
        id
    }

    /// One turn: `BeforeAgent` (before the message is recorded), the prompt, a `write_file`
    /// of `rel` by its absolute path with `AfterTool`, the answer, `AfterAgent`.
    fn turn(&self, prompt: &str, rel: &str, content: &str) {
        self.fire("BeforeAgent", json!({"prompt": prompt}));
        self.record(json!({"type": "user", "content": [{"text": prompt}]}));
        let file = format!("{}/{rel}", self.dir.display());
        edit(&self.dir, rel, content);
        let said = format!("Successfully created and wrote to new file: {file}.");
        self.fire(
            "AfterTool",
            json!({"tool_name": "write_file", "tool_input": {"file_path": file, "content": content},
            "tool_response": {"llmContent": said, "returnDisplay": said}}),
        );
        let call = format!("write_file-{}", self.n.get());
        self.record(json!({"type": "gemini", "content": "", "toolCalls": [{"id": call, "name": "write_file",
            "args": {"file_path": file, "content": content},
            "result": [{"functionResponse": {"id": call, "name": "write_file", "response": {"output": said}}}],
            "status": "success", "timestamp": "2026-08-21T10:00:00.000Z", "displayName": "WriteFile",
            "description": "Writes content to a file.", "resultDisplay": said, "renderOutputAsMarkdown": true}],
            "thoughts": [], "model": "gemini-2.5-pro"}));
        self.record(json!({"type": "gemini", "content": "Done.", "thoughts": [], "model": "gemini-2.5-pro"}));
        self.fire(
            "AfterAgent",
            json!({"prompt": prompt, "prompt_response": "Done.", "stop_hook_active": false}),
        );
    }
}

#[test]
fn a_gemini_turn_resumed_on_another_machine_is_a_session_of_b_work_where_gemini_looks() {
    let (_moto, a, b) = machines();
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    let gemini = Gemini::start(&a, &proj);
    gemini.turn("one", "src/main.rs", "fn main() { one(); }\n");
    let at_turn_2 = files(&proj);
    gemini.turn("two", "src/lib.rs", "pub fn two() {}\n");
    gemini.turn("three", "src/main.rs", "fn main() { three(); }\n");

    let resumed = Resumed::turn_2(&a, &b, &proj, &at_turn_2);
    let (file, id) = resumed.conversation("gemini-cli", Format::Gemini);
    assert_eq!(resumed.out["conversation"]["resume_command"], format!("gemini --resume {id}"));
    assert_eq!(resumed.out["conversation"]["forked_from"]["agent_session"], GEMINI_SESSION);
    // B's Gemini CLI has not seen `b/work`: the session is under the hash of its path, which
    // Gemini CLI moves to the project's own directory when it first starts there.
    let b_work = resumed.b_work.display().to_string();
    let chats = cairn_transcript::gemini_chats_dir(&b.home().join(".gemini"), &b_work);
    assert_eq!(
        chats,
        b.home().join(".gemini/tmp").join(cairn_transcript::gemini_project_hash(&b_work)).join("chats")
    );
    assert_eq!(file.parent(), Some(chats.as_path()));
    let first: Value =
        serde_json::from_str(std::fs::read_to_string(&file).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["sessionId"], id.as_str());
    assert_eq!(first["projectHash"], cairn_transcript::gemini_project_hash(&b_work));

    // B's Gemini CLI resumes the session and takes a turn (its records numbered past A's).
    b.ok(&["hooks", "install", "gemini-cli"]);
    let gemini =
        Gemini { env: &b, dir: resumed.b_work.clone(), file, session: id.clone(), n: Cell::new(100) };
    gemini.turn("two again, elsewhere", "src/b.rs", "// B\n");
    resumed.goes_on(&b, &id, GEMINI_SESSION);
}

// ---------------------------------------------------------------------------------------------
// Pi (0.58.3: session format version 3, cairn's extension in ~/.pi/agent/extensions/)

const PI_SESSION: &str = "0f8e2c1a-7d0b-4c4e-9a57-3b1b6c2d9e11";

/// Pi's session directory for the project at `root`.
fn pi_dir(home: &Path, root: &str) -> PathBuf {
    home.join(".pi/agent/sessions").join(format!("--{}--", root.trim_start_matches('/').replace('/', "-")))
}

/// One Pi session of `dir`: the file Pi grows and the command cairn's extension runs.
struct Pi<'a> {
    env: &'a TestEnv,
    dir: PathBuf,
    file: PathBuf,
    session: String,
    program: String,
    store: Option<String>,
    last: RefCell<Option<String>>,
    n: Cell<u32>,
    /// Entries Pi holds in memory until the first assistant message is written.
    pending: RefCell<Vec<String>>,
}

impl<'a> Pi<'a> {
    fn start(env: &'a TestEnv, dir: &Path) -> Self {
        let file = pi_dir(&env.home(), &dir.display().to_string())
            .join(format!("2026-03-15T10-00-00-000Z_{PI_SESSION}.jsonl"));
        Self::open(env, dir, file, PI_SESSION)
    }

    /// Session `session` in `file`, which may exist already (a resumed one): it goes on after
    /// its last entry.
    fn open(env: &'a TestEnv, dir: &Path, file: PathBuf, session: &str) -> Self {
        env.ok(&["hooks", "install", "pi"]);
        let text = std::fs::read_to_string(env.home().join(".pi/agent/extensions/cairn.ts")).unwrap();
        let last = std::fs::read_to_string(&file).ok().and_then(|t| {
            t.lines()
                .rev()
                .find_map(|l| serde_json::from_str::<Value>(l).ok()?["id"].as_str().map(str::to_owned))
        });
        let n = if last.is_some() { 100 } else { 0 };
        Self {
            env,
            dir: dir.to_path_buf(),
            file,
            session: session.to_owned(),
            program: constant(&text, "CAIRN").unwrap(),
            store: constant(&text, "STORE"),
            last: RefCell::new(last),
            n: Cell::new(n),
            pending: RefCell::default(),
        }
    }

    /// Runs the extension's command as it does: CAIRN `hook pi [--store S]` in Pi's cwd, with
    /// Pi's environment, the payload on stdin.
    fn fire(&self, event: &str, fields: Value) {
        let mut payload = json!({"event": event, "sessionId": self.session,
            "sessionFile": self.file.display().to_string(), "cwd": self.dir.display().to_string()});
        for (k, v) in fields.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let mut args = vec!["hook", "pi"];
        if let Some(store) = &self.store {
            args.extend(["--store", store.as_str()]);
        }
        let out = run_as_agent(self.env, &self.program, &args, &[], &self.dir, &payload.to_string());
        assert!(out.is_empty(), "{out}");
    }

    fn append(&self, message: Value) {
        let n = self.n.get() + 1;
        self.n.set(n);
        let id = format!("e{n:07x}");
        let line = json!({"type": "message", "id": id, "parentId": *self.last.borrow(),
            "timestamp": format!("2026-03-15T10:{n:02}:00.000Z"), "message": message})
        .to_string();
        *self.last.borrow_mut() = Some(id);
        let mut pending = self.pending.borrow_mut();
        if self.file.exists() {
            let mut f = std::fs::OpenOptions::new().append(true).open(&self.file).unwrap();
            writeln!(f, "{line}").unwrap();
        } else {
            pending.push(line);
            if message["role"] == "assistant" {
                std::fs::create_dir_all(self.file.parent().unwrap()).unwrap();
                let header = json!({"type": "session", "version": 3, "id": self.session,
                    "timestamp": "2026-03-15T10:00:00.000Z", "cwd": self.dir.display().to_string()});
                let mut text = header.to_string() + "\n";
                for l in pending.drain(..) {
                    text.push_str(&l);
                    text.push('\n');
                }
                std::fs::write(&self.file, text).unwrap();
            }
        }
    }

    fn assistant(&self, content: Value, stop: &str) {
        self.append(json!({"role": "assistant", "content": content,
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": stop, "timestamp": 1773568801000u64}));
    }

    /// One turn: `before_agent_start` (awaited before the prompt is appended), the prompt, a
    /// `write` of `rel` by its absolute path with `tool_result`, the answer, `agent_end`.
    fn turn(&self, prompt: &str, rel: &str, content: &str) {
        self.fire("before_agent_start", json!({"prompt": prompt}));
        self.append(json!({"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 1773568800000u64}));
        let call = format!("call_{}", self.n.get());
        let file = format!("{}/{rel}", self.dir.display());
        self.assistant(
            json!([{"type": "toolCall", "id": call, "name": "write", "arguments": {"path": file, "content": content}}]),
            "toolUse",
        );
        edit(&self.dir, rel, content);
        self.fire("tool_result", json!({"toolName": "write"}));
        self.append(json!({"role": "toolResult", "toolCallId": call, "toolName": "write",
            "content": [{"type": "text", "text": format!("Successfully wrote {} bytes to {file}", content.len())}],
            "isError": false, "timestamp": 1773568802000u64}));
        self.assistant(json!([{"type": "text", "text": "Done."}]), "stop");
        self.fire("agent_end", json!({}));
    }
}

#[test]
fn a_pi_turn_resumed_on_another_machine_is_a_pi_session_of_b_work() {
    let (_moto, a, b) = machines();
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    let pi = Pi::start(&a, &proj);
    pi.turn("one", "src/main.rs", "fn main() { one(); }\n");
    let at_turn_2 = files(&proj);
    pi.turn("two", "src/lib.rs", "pub fn two() {}\n");
    pi.turn("three", "src/main.rs", "fn main() { three(); }\n");

    let resumed = Resumed::turn_2(&a, &b, &proj, &at_turn_2);
    let (file, _) = resumed.conversation("pi", Format::Pi);
    let b_work = resumed.b_work.display().to_string();
    assert_eq!(file.parent(), Some(pi_dir(&b.home(), &b_work).as_path()));
    assert_eq!(
        resumed.out["conversation"]["resume_command"],
        format!("pi --session {}", file.display()),
        "{}",
        resumed.out
    );
    let header: Value =
        serde_json::from_str(std::fs::read_to_string(&file).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["type"], "session");
    assert_eq!(header["cwd"], b_work.as_str());

    // B's Pi opens the session (`pi --session FILE`) and takes a turn.
    let id = resumed.out["conversation"]["session_id"].as_str().unwrap().to_owned();
    let pi = Pi::open(&b, &resumed.b_work, file, &id);
    pi.turn("two again, elsewhere", "src/b.rs", "// B\n");
    resumed.goes_on(&b, &id, PI_SESSION);
}

// ---------------------------------------------------------------------------------------------
// Agents whose conversation cairn does not save: the code moves, and B is told.

/// B resumes turn 2 of a project whose turns `agent` took: the files come, no session is
/// written, and the note says the conversation stayed behind.
fn code_only(a: &TestEnv, b: &TestEnv, proj: &Path, at_turn_2: &[(PathBuf, String)], agent: &str) {
    let resumed = Resumed::turn_2(a, b, proj, at_turn_2);
    let out = &resumed.out;
    assert_eq!(out["moment"]["turn"]["agent"], agent, "{out}");
    assert!(out.get("conversation").is_none(), "{out}");
    assert_eq!(
        out["notes"],
        json!([format!(
            "this moment holds no conversation ({agent}'s is not saved by cairn): only the files and environment were moved"
        )]),
        "{out}"
    );
    // Named by A's root, which this machine does not have.
    let again = b.root().join("b/again");
    let run = b.run(&["resume", "2", "--project", &resumed.a_proj, "--to", again.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(&format!("({agent}'s is not saved by cairn)")), "{}", run.stdout);
    assert_eq!(files(&again), at_turn_2);
    assert!(!proj.exists(), "nothing was written where A's project was");
}

const CURSOR_CONVERSATION: &str = "6c1f0a2e-8b7d-4e3c-9a5f-2d4b6e8c0a13";

#[test]
fn a_cursor_turn_resumed_on_another_machine_brings_the_code_and_says_the_conversation_stays() {
    let (_moto, a, b) = machines();
    // Cursor turns off a hooks file naming a URL: the store is named in Cursor's environment.
    let install = a.without_store_flag(&["hooks", "install", "cursor"]).output().unwrap();
    assert!(install.status.success(), "{install:?}");
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    let hooks = a.home().join(".cursor/hooks.json");
    let fire = |generation: u32, event: &str, extra: Value| -> String {
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&hooks).unwrap()).unwrap();
        let command = value["hooks"][event][0]["command"].as_str().unwrap().to_owned();
        let root = proj.display().to_string();
        let mut payload = json!({"hook_event_name": event, "conversation_id": CURSOR_CONVERSATION,
            "generation_id": format!("3f9d2c10-aaaa-4bbb-8ccc-{generation:012}"), "model": "default",
            "cursor_version": "3.18.25", "workspace_roots": [root], "user_email": null});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        run_as_agent(
            &a,
            "sh",
            &["-c", &command],
            &[("CAIRN_STORE", STORE)],
            &a.home().join(".cursor"),
            &payload.to_string(),
        )
    };
    let turn = |n: u32, prompt: &str, rel: &str, content: &str| {
        assert_eq!(
            fire(n, "beforeSubmitPrompt", json!({"prompt": prompt, "attachments": []})),
            "{\"continue\":true}\n"
        );
        edit(&proj, rel, content);
        let file = proj.join(rel).display().to_string();
        let edits = json!({"file_path": file, "edits": [{"old_string": "", "new_string": content}]});
        assert_eq!(fire(n, "afterFileEdit", edits), "");
        assert_eq!(fire(n, "stop", json!({"status": "completed", "loop_count": 0})), "");
    };
    turn(1, "one", "src/main.rs", "fn main() { one(); }\n");
    let at_turn_2 = files(&proj);
    turn(2, "two", "src/lib.rs", "pub fn two() {}\n");
    turn(3, "three", "src/main.rs", "fn main() { three(); }\n");
    code_only(&a, &b, &proj, &at_turn_2, "cursor");
}

const COPILOT_SESSION: &str = "a995dbc4-4649-4073-82de-afcbbc8aec81";

#[test]
fn a_copilot_turn_resumed_on_another_machine_brings_the_code_and_says_the_conversation_stays() {
    let (_moto, a, b) = machines();
    std::fs::create_dir_all(a.home().join(".copilot")).unwrap();
    a.ok(&["hooks", "install", "copilot-cli"]);
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    let hooks = a.home().join(".copilot/hooks/cairn.json");
    let at = Cell::new(0u64);
    let fire = |event: &str, extra: Value| {
        at.set(at.get() + 1);
        let command = installed(&hooks, event, "/0/bash");
        let mut payload = json!({"sessionId": COPILOT_SESSION, "timestamp": 1_767_000_000_000u64 + at.get(),
            "cwd": proj.display().to_string()});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let out =
            run_as_agent(&a, "sh", &["-c", &command], &[("COPILOT_CLI", "1")], &proj, &payload.to_string());
        assert!(out.is_empty(), "{out}");
    };
    let transcript = a.home().join(format!(".copilot/session-state/{COPILOT_SESSION}/events.jsonl"));
    let turn = |prompt: &str, rel: &str, content: &str| {
        fire("userPromptSubmitted", json!({"prompt": prompt}));
        edit(&proj, rel, content);
        fire(
            "postToolUse",
            json!({"toolName": "create", "toolArgs": {"path": proj.join(rel).display().to_string()},
            "toolResult": {"resultType": "success", "textResultForLlm": "Created."}}),
        );
        fire(
            "agentStop",
            json!({"transcriptPath": transcript.display().to_string(), "stopReason": "end_turn", "stop_hook_active": false}),
        );
    };
    turn("one", "src/main.rs", "fn main() { one(); }\n");
    let at_turn_2 = files(&proj);
    turn("two", "src/lib.rs", "pub fn two() {}\n");
    turn("three", "src/main.rs", "fn main() { three(); }\n");
    code_only(&a, &b, &proj, &at_turn_2, "copilot-cli");
}

const OPENCODE_SESSION: &str = "ses_6a1b2c3d4e5fAbCdEfGhIjKlMn";

#[test]
fn an_opencode_turn_resumed_on_another_machine_brings_the_code_and_says_the_conversation_stays() {
    let (_moto, a, b) = machines();
    let change = a.json(&["hooks", "install", "opencode"]);
    let text = std::fs::read_to_string(change["file"].as_str().unwrap()).unwrap();
    let program = constant(&text, "CAIRN").unwrap();
    let store = constant(&text, "STORE");
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    // The plugin's command: CAIRN `hook opencode [--store S]` in OpenCode's directory.
    let fire = |event: &str, fields: Value| {
        let mut args = vec!["hook", "opencode"];
        if let Some(store) = &store {
            args.extend(["--store", store.as_str()]);
        }
        let mut payload = json!({"event": event, "sessionID": OPENCODE_SESSION,
            "directory": proj.display().to_string(), "worktree": "/"});
        for (k, v) in fields.as_object().unwrap() {
            payload[k] = v.clone();
        }
        run_as_agent(&a, &program, &args, &[], &proj, &payload.to_string());
    };
    let turn = |n: u32, prompt: &str, rel: &str, content: &str| {
        fire(
            "chat.message",
            json!({"messageID": format!("msg_d4e0c1a2b00{n}AbCdEfGhIjKlMn"), "prompt": prompt}),
        );
        edit(&proj, rel, content);
        fire("tool.execute.after", json!({"tool": "write"}));
        fire("session.idle", json!({}));
    };
    turn(1, "one", "src/main.rs", "fn main() { one(); }\n");
    let at_turn_2 = files(&proj);
    turn(2, "two", "src/lib.rs", "pub fn two() {}\n");
    turn(3, "three", "src/main.rs", "fn main() { three(); }\n");
    code_only(&a, &b, &proj, &at_turn_2, "opencode");
}
