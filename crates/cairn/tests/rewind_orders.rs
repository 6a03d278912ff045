//! `cairn rewind N` forks exactly before prompt N, whatever order the agent fires its hook and
//! writes its transcript in. Each test installs the real hooks (`cairn hooks install`), runs the
//! installed command through `sh -c` as the agent does, with the agent's environment and JSON
//! on stdin, and writes the agent's session file in that agent's real order:
//!
//! - Claude Code 2.1.88 runs `UserPromptSubmit` before it appends the prompt (and creates the
//!   session file lazily, on the first message); a prompt written before the hook is tested
//!   too (an older or differently driven agent, or a checkpoint that ran late).
//! - Gemini CLI (0.56 nightly) fires `BeforeAgent` before it records the user's message, in a
//!   `session-*.jsonl` file whose metadata line it writes at startup.
//!
//! Each rewind's written session is read back: its active path is the original's up to the
//! entry just before prompt N. A test's first rewind puts the files back too, and checks them;
//! the later ones put back the conversation alone (`--conversation`), which is what these
//! tests are about, leaving the files a first rewind put back out of the rule for files
//! changed since.

mod common;

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::TestEnv;
use serde_json::{Value, json};

const CLAUDE_SESSION: &str = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const GEMINI_SESSION: &str = "b2e7d4c1-93a8-4f6e-8d20-5c1a7e9f3b64";

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Claude,
    Gemini,
}

/// One agent session as its hooks see it: the installed commands, the session file it writes,
/// the project it was started in and the directory its shell is in now.
struct Agent<'a> {
    env: &'a TestEnv,
    kind: Kind,
    session: String,
    file: PathBuf,
    cwd: RefCell<PathBuf>,
    /// The id of the last entry written: the next one's parent (Claude Code).
    last: RefCell<Option<String>>,
    /// How many entries were written, for their ids and times.
    written: Cell<u32>,
}

impl<'a> Agent<'a> {
    /// A Claude Code session of the work tree, with cairn's hooks installed for the project.
    /// Its session file does not exist until its first message is written.
    fn claude(env: &'a TestEnv) -> Self {
        env.ok(&["hooks", "install", "claude-code", "--scope", "project"]);
        let file = claude_dir(env).join(format!("{CLAUDE_SESSION}.jsonl"));
        Self::new(env, Kind::Claude, CLAUDE_SESSION, file)
    }

    /// A Gemini CLI session of the work tree, registered as Gemini CLI 0.29+ does
    /// (`projects.json` and a `.project_root` marker), whose file holds its metadata line from
    /// the start.
    fn gemini(env: &'a TestEnv) -> Self {
        env.ok(&["hooks", "install", "gemini-cli"]);
        let work = env.work().display().to_string();
        let gemini = env.home().join(".gemini");
        std::fs::create_dir_all(gemini.join("tmp/work/chats")).unwrap();
        std::fs::write(gemini.join("projects.json"), json!({"projects": {&work: "work"}}).to_string())
            .unwrap();
        std::fs::write(gemini.join("tmp/work/.project_root"), &work).unwrap();
        let file = gemini_dir(env).join(format!("session-2026-08-21T10-00-{}.jsonl", &GEMINI_SESSION[..8]));
        let agent = Self::new(env, Kind::Gemini, GEMINI_SESSION, file);
        agent.append(&json!({"sessionId": GEMINI_SESSION, "projectHash": cairn_transcript::gemini_project_hash(&work),
            "startTime": "2026-08-21T10:00:00.000Z", "lastUpdated": "2026-08-21T10:00:00.000Z", "kind": "main"}));
        agent
    }

    fn new(env: &'a TestEnv, kind: Kind, session: &str, file: PathBuf) -> Self {
        Self {
            env,
            kind,
            session: session.to_owned(),
            file,
            cwd: RefCell::new(env.work()),
            last: RefCell::new(None),
            written: Cell::new(0),
        }
    }

    /// The same agent resuming session `file` (a fork a rewind wrote), whose last entry is
    /// `leaf`; its entries are numbered from `from`.
    fn resume(&self, file: &Path, leaf: &str, from: u32) -> Agent<'a> {
        let session = file.file_stem().unwrap().to_string_lossy().into_owned();
        let agent = Self::new(self.env, self.kind, &session, file.to_owned());
        *agent.last.borrow_mut() = Some(leaf.to_owned());
        agent.written.set(from);
        agent
    }

    /// The command cairn installed for `event`.
    fn command(&self, event: &str) -> String {
        let settings = match self.kind {
            Kind::Claude => self.env.work().join(".claude/settings.json"),
            Kind::Gemini => self.env.home().join(".gemini/settings.json"),
        };
        let value: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
        value["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().to_owned()
    }

    /// The event `event` as the agent sends it, with `extra` fields.
    fn payload(&self, event: &str, extra: Value) -> String {
        let mut value = json!({"session_id": self.session, "transcript_path": self.file.display().to_string(),
            "cwd": self.cwd.borrow().display().to_string(), "hook_event_name": event});
        match self.kind {
            Kind::Claude => value["permission_mode"] = json!("default"),
            Kind::Gemini => value["timestamp"] = json!("2026-08-21T10:00:00.000Z"),
        }
        for (k, v) in extra.as_object().unwrap() {
            value[k] = v.clone();
        }
        value.to_string()
    }

    /// The installed command for `event`, started as the agent starts it: `sh -c`, the agent's
    /// environment (Claude Code sets `CLAUDE_PROJECT_DIR` to its project root; Gemini CLI sets
    /// `GEMINI_PROJECT_DIR` and, for compatibility, `CLAUDE_PROJECT_DIR` to its working
    /// directory), in the shell's current directory, the event on stdin.
    fn spawn(&self, event: &str, extra: Value) -> std::process::Child {
        let cwd = self.cwd.borrow().clone();
        let mut command = std::process::Command::new("sh");
        command.args(["-c", &self.command(event)]).env_clear().env("HOME", self.env.home());
        command.env("PATH", "/usr/bin:/bin").current_dir(&cwd);
        match self.kind {
            Kind::Claude => command.env("CLAUDE_PROJECT_DIR", self.env.work()),
            Kind::Gemini => command.env("GEMINI_PROJECT_DIR", &cwd).env("CLAUDE_PROJECT_DIR", &cwd),
        };
        command.stdin(std::process::Stdio::piped());
        command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(self.payload(event, extra).as_bytes()).unwrap();
        child
    }

    /// Fires `event` and waits for the hook; it exits 0 and prints nothing on stdout.
    /// Returns its stderr.
    fn fire(&self, event: &str, extra: Value) -> String {
        hook_done(self.spawn(event, extra))
    }

    /// The prompt hook (`UserPromptSubmit`, `BeforeAgent`), which says nothing.
    fn submit(&self, prompt: &str) {
        let stderr = self.fire(self.prompt_event(), json!({"prompt": prompt}));
        assert!(stderr.is_empty(), "{stderr}");
    }

    fn prompt_event(&self) -> &'static str {
        match self.kind {
            Kind::Claude => "UserPromptSubmit",
            Kind::Gemini => "BeforeAgent",
        }
    }

    /// A file-changing tool finished (Claude Code's `Bash`, Gemini CLI's `run_shell_command`).
    fn shell_ran(&self, command: &str) {
        let (event, tool) = match self.kind {
            Kind::Claude => ("PostToolUse", "Bash"),
            Kind::Gemini => ("AfterTool", "run_shell_command"),
        };
        let stderr = self.fire(event, json!({"tool_name": tool, "tool_input": {"command": command}}));
        assert!(stderr.is_empty(), "{stderr}");
    }

    /// The agent writes the user's prompt to its session file; returns the entry's id.
    fn write_prompt(&self, text: &str) -> String {
        self.write_message("user", text)
    }

    /// The agent writes its answer; returns the entry's id.
    fn write_answer(&self, text: &str) -> String {
        self.write_message("assistant", text)
    }

    fn write_message(&self, role: &str, text: &str) -> String {
        let n = self.next();
        match self.kind {
            Kind::Claude => {
                let content =
                    if role == "user" { json!(text) } else { json!([{"type": "text", "text": text}]) };
                self.write_claude(n, json!({"type": role, "message": {"role": role, "content": content}}))
            }
            Kind::Gemini => {
                let id = format!("00000000-0000-4000-9000-{n:012}");
                let time = format!("2026-08-21T10:00:{n:02}.000Z");
                let record = if role == "user" {
                    json!({"id": id, "timestamp": time, "type": "user", "content": [{"text": text}]})
                } else {
                    json!({"id": id, "timestamp": time, "type": "gemini", "content": text, "toolCalls": [],
                        "thoughts": [], "model": "gemini-2.5-pro"})
                };
                self.append(&record);
                // Gemini CLI patches the metadata after every message.
                self.append(&json!({"$set": {"lastUpdated": time}}));
                id
            }
        }
    }

    /// Claude Code's compaction: a `compact_boundary` that starts a new chain (`parentUuid:
    /// null`) naming the entry it continues in `logicalParentUuid`, then the summary as a user
    /// message marked `isCompactSummary`. Returns the summary's id.
    fn compact(&self) -> String {
        let logical = self.last.borrow_mut().take();
        let n = self.next();
        self.write_claude(
            n,
            json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "level": "info", "isMeta": false, "logicalParentUuid": logical,
                "compactMetadata": {"trigger": "manual", "preTokens": 48_000}}),
        );
        let n = self.next();
        self.write_claude(
            n,
            json!({"type": "user", "isCompactSummary": true, "isVisibleInTranscriptOnly": true,
                "message": {"role": "user", "content": "This session is being continued from a previous conversation. Summary: a README was written."}}),
        )
    }

    fn write_claude(&self, n: u32, fields: Value) -> String {
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let mut line = json!({"parentUuid": self.last.borrow().clone(), "isSidechain": false,
            "userType": "external", "cwd": self.cwd.borrow().display().to_string(), "sessionId": self.session,
            "version": "2.1.88", "uuid": uuid, "timestamp": format!("2026-08-21T10:00:{n:02}.000Z")});
        for (k, v) in fields.as_object().unwrap() {
            line[k] = v.clone();
        }
        self.append(&line);
        *self.last.borrow_mut() = Some(uuid.clone());
        uuid
    }

    fn next(&self) -> u32 {
        self.written.set(self.written.get() + 1);
        self.written.get()
    }

    fn append(&self, value: &Value) {
        std::fs::create_dir_all(self.file.parent().unwrap()).unwrap();
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.file).unwrap();
        writeln!(file, "{value}").unwrap();
    }
}

/// Every session file of both agents, in every project directory.
fn session_files(env: &TestEnv) -> BTreeSet<PathBuf> {
    let list = |dir: PathBuf| -> Vec<PathBuf> {
        std::fs::read_dir(dir).map_or_else(|_| Vec::new(), |it| it.map(|e| e.unwrap().path()).collect())
    };
    let claude = list(env.home().join(".claude/projects")).into_iter().flat_map(list);
    let gemini = list(env.home().join(".gemini/tmp")).into_iter().flat_map(|p| list(p.join("chats")));
    claude.chain(gemini).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect()
}

/// Waits for a hook: it exits 0 with nothing on stdout; returns its stderr.
fn hook_done(child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn claude_dir(env: &TestEnv) -> PathBuf {
    env.home()
        .join(".claude/projects")
        .join(cairn_transcript::claude_dir_name(&env.work().display().to_string()))
}

fn gemini_dir(env: &TestEnv) -> PathBuf {
    env.home().join(".gemini/tmp/work/chats")
}

/// The ids of the active path of the session in `file`.
fn path_ids(file: &Path) -> Vec<String> {
    let path = cairn_transcript::Transcript::read(file).unwrap().active_path();
    path.entries.into_iter().filter_map(|e| e.id).collect()
}

/// Runs `rewind ARGS` in `dir` and snapshots its whole output under `name`; returns the
/// session file it wrote, if any.
fn rewind(env: &TestEnv, dir: &Path, name: &str, args: &[&str]) -> Option<PathBuf> {
    let before = session_files(env);
    let mut all = vec!["rewind"];
    all.extend_from_slice(args);
    // Gemini CLI's session files are named after the time they were written.
    let named = regex::Regex::new(r"session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-").unwrap();
    let out = env.transcript_in(dir, &[&all]);
    insta::assert_snapshot!(name, named.replace_all(&out, "session-[TIME]-"));
    let mut new: Vec<PathBuf> = session_files(env).difference(&before).cloned().collect();
    assert!(new.len() <= 1, "{new:?}");
    new.pop()
}

/// Asserts that the session a rewind wrote is `original`'s active path up to and including
/// entry `last`, the entry just before the prompt rewound to.
fn assert_fork_ends_with(fork: &Path, original: &Path, last: &str) {
    let ids = path_ids(original);
    let at = ids.iter().position(|id| id == last).unwrap_or_else(|| panic!("{last} not in {ids:?}"));
    assert_eq!(path_ids(fork), ids[..=at].to_vec(), "{}", std::fs::read_to_string(fork).unwrap());
}

/// The work tree's file `notes.txt`, which each turn's agent edits.
fn notes(env: &TestEnv) -> String {
    std::fs::read_to_string(env.work().join("notes.txt")).unwrap_or_default()
}

/// One turn in Claude Code's order: the hook, then the prompt written, the agent's edit (a
/// shell command), its answer. Returns the ids of the prompt and the answer.
fn turn_prompt_after_hook(agent: &Agent, prompt: &str, edit: &str) -> (String, String) {
    agent.submit(prompt);
    let asked = agent.write_prompt(prompt);
    agent.env.write("notes.txt", edit);
    agent.shell_ran("echo >> notes.txt");
    (asked, agent.write_answer(&format!("Wrote {edit:?}.")))
}

/// One turn with the prompt written before the hook runs.
fn turn_prompt_before_hook(agent: &Agent, prompt: &str, edit: &str) -> (String, String) {
    let asked = agent.write_prompt(prompt);
    agent.submit(prompt);
    agent.env.write("notes.txt", edit);
    agent.shell_ran("echo >> notes.txt");
    (asked, agent.write_answer(&format!("Wrote {edit:?}.")))
}

#[test]
fn claude_prompt_written_after_the_hook_rewinds_before_each_prompt_and_a_fork_continues_the_numbering() {
    let env = TestEnv::new();
    let agent = Agent::claude(&env);
    // The session file does not exist at the first prompt's hook.
    let (_, a1) = turn_prompt_after_hook(&agent, "Add a README", "one\n");
    let (_, a2) = turn_prompt_after_hook(&agent, "continue", "two\n");
    turn_prompt_after_hook(&agent, "continue", "three\n");

    let fork = rewind(&env, &env.work(), "claude_after_rewind_3", &["3"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a2);
    assert_eq!(notes(&env), "two\n");

    // The user resumes the fork and asks again: that prompt is turn 3 of the fork.
    let resumed = agent.resume(&fork, &a2, 100);
    let (_, again) = turn_prompt_after_hook(&resumed, "continue, but in French", "trois\n");
    // The fork is now the current session, its turn 3 below the parent's turns 1 to 3.
    // The fork's id is a UUIDv7, whose first digits (what the list shows) other ids share.
    let list = env.run(&["rewind"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let list = list.stdout.replace(&format!("claude-code {}", &resumed.session[..8]), "claude-code [FORK]");
    insta::assert_snapshot!("claude_after_list_with_the_fork", env.normalize(&list));
    let fork_of_fork =
        rewind(&env, &env.work(), "claude_after_rewind_3_in_the_fork", &["3", "--conversation"])
            .expect("a fork");
    assert_fork_ends_with(&fork_of_fork, &resumed.file, &a2);
    assert!(path_ids(&resumed.file).contains(&again));

    // Turn 2 of the fork is its parent's turn 2.
    let fork = rewind(&env, &env.work(), "claude_after_rewind_2", &["2", "--conversation"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a1);

    // Turn 1 began the conversation, whose file did not exist yet: nothing to write.
    assert_eq!(rewind(&env, &env.work(), "claude_after_rewind_1", &["1", "--conversation"]), None);
}

#[test]
fn claude_prompt_written_before_the_hook_with_a_repeated_first_prompt() {
    let env = TestEnv::new();
    let agent = Agent::claude(&env);
    let (_, a1) = turn_prompt_before_hook(&agent, "continue", "one\n");
    let (_, a2) = turn_prompt_before_hook(&agent, "continue", "two\n");
    turn_prompt_before_hook(&agent, "Now the tests", "three\n");

    let fork = rewind(&env, &env.work(), "claude_before_rewind_3", &["3"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a2);
    assert_eq!(notes(&env), "two\n");
    let fork = rewind(&env, &env.work(), "claude_before_rewind_2", &["2", "--conversation"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a1);
    assert_eq!(rewind(&env, &env.work(), "claude_before_rewind_1", &["1", "--conversation"]), None);
}

#[test]
fn gemini_before_agent_fires_before_the_message_is_written_and_repeated_prompts_stay_apart() {
    let env = TestEnv::new();
    let agent = Agent::gemini(&env);
    // "continue" as prompt 1, twice more later: each is its own turn.
    turn_prompt_after_hook(&agent, "continue", "one\n");
    let (_, a2) = turn_prompt_after_hook(&agent, "Add tests", "two\n");
    let (_, a3) = turn_prompt_after_hook(&agent, "continue", "three\n");
    turn_prompt_after_hook(&agent, "continue", "four\n");

    let fork = rewind(&env, &env.work(), "gemini_rewind_4", &["4"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a3);
    assert_eq!(notes(&env), "three\n");
    let fork = rewind(&env, &env.work(), "gemini_rewind_3", &["3", "--conversation"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a2);
    // Prompt 1 began the conversation: no empty session is written for `gemini --resume`.
    assert_eq!(rewind(&env, &env.work(), "gemini_rewind_1", &["1", "--conversation"]), None);
}

#[test]
fn two_identical_prompt_events_at_once_are_one_turn() {
    let env = TestEnv::new();
    let agent = Agent::claude(&env);
    // The store exists: two first commands at once on a store not created yet are another
    // matter (`Layout::init_or_check` is not safe against that race).
    env.ok(&["config", "set", "hooks.budget", "5s"]);
    // At the first prompt (no session file yet) and at the second, the agent runs two matching
    // hooks in parallel (the user and the project scope both hold cairn's).
    for (prompt, edit) in [("Add a README", "one\n"), ("continue", "two\n")] {
        let first = agent.spawn("UserPromptSubmit", json!({"prompt": prompt}));
        let second = agent.spawn("UserPromptSubmit", json!({"prompt": prompt}));
        assert_eq!(hook_done(first), "");
        assert_eq!(hook_done(second), "");
        agent.write_prompt(prompt);
        env.write("notes.txt", edit);
        agent.shell_ran("echo >> notes.txt");
        agent.write_answer("Done.");
    }
    turn_prompt_after_hook(&agent, "continue", "three\n");
    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    let outcomes: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["outcome"].as_str().unwrap().to_owned())
        .filter(|o| o.contains("turn"))
        .collect();
    // Which of the two deliveries saved is a race; that one of them did is not.
    let mut said = outcomes;
    said[..2].sort();
    said[3..5].sort();
    insta::assert_snapshot!("concurrent_hook_log", env.normalize(&said.join("\n")));
    let fork = rewind(&env, &env.work(), "concurrent_rewind_3", &["3"]).expect("a fork");
    assert_eq!(path_ids(&fork).len(), 4);
    assert_eq!(notes(&env), "two\n");
}

#[test]
fn a_cd_in_the_agents_shell_keeps_the_turns_of_the_project_and_rewind_runs_from_a_subdirectory() {
    let env = TestEnv::new();
    env.write("src/lib.rs", "pub fn f() {}\n");
    // No `.git`: the project is what the agent names in `CLAUDE_PROJECT_DIR`.
    let agent = Agent::claude(&env);
    turn_prompt_after_hook(&agent, "Add a README", "one\n");
    // `cd src` in the agent's Bash tool: the next events' `cwd` is the subdirectory.
    *agent.cwd.borrow_mut() = env.work().join("src");
    agent.shell_ran("cd src");
    let (_, a2) = turn_prompt_after_hook(&agent, "Edit the library", "two\n");
    env.write("src/lib.rs", "pub fn g() {}\n");
    agent.shell_ran("sed -i s/f/g/ lib.rs");
    turn_prompt_after_hook(&agent, "continue", "three\n");

    let src = env.work().join("src");
    let out = env.transcript_in(&src, &[&["rewind"]]);
    insta::assert_snapshot!("cd_rewind_list", out);
    let fork = rewind(&env, &src, "cd_rewind_3", &["3"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a2);
    assert_eq!(std::fs::read_to_string(src.join("lib.rs")).unwrap(), "pub fn g() {}\n");
    assert_eq!(notes(&env), "two\n");
}

/// The fork of a rewind run from a subdirectory belongs with the session it was cut from, in
/// the project's directory of sessions, where `claude --resume ID` run in the project finds it.
#[test]

fn a_rewind_from_a_subdirectory_writes_the_fork_among_the_projects_sessions() {
    let env = TestEnv::new();
    let agent = Agent::claude(&env);
    turn_prompt_after_hook(&agent, "Add a README", "one\n");
    turn_prompt_after_hook(&agent, "continue", "two\n");
    std::fs::create_dir_all(env.work().join("src")).unwrap();
    let before = session_files(&env);
    env.ok(&["rewind", "2", "--conversation"]);
    let from_root: Vec<PathBuf> = session_files(&env).difference(&before).cloned().collect();
    let before = session_files(&env);
    let run = env.run_in(&env.work().join("src"), &["rewind", "2", "--conversation"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let from_src: Vec<PathBuf> = session_files(&env).difference(&before).cloned().collect();
    assert_eq!(from_root.len(), 1);
    assert_eq!(from_src.len(), 1);
    assert_eq!(from_src[0].parent(), from_root[0].parent());
    assert_eq!(from_src[0].parent(), agent.file.parent());
}

#[test]
fn a_compaction_between_turns_keeps_each_turns_place() {
    let env = TestEnv::new();
    let agent = Agent::claude(&env);
    let (_, a1) = turn_prompt_after_hook(&agent, "Add a README", "one\n");
    turn_prompt_after_hook(&agent, "continue", "two\n");
    let summary = agent.compact();
    let (_, a3) = turn_prompt_after_hook(&agent, "continue", "three\n");
    turn_prompt_after_hook(&agent, "Now the tests", "four\n");

    let fork = rewind(&env, &env.work(), "compact_rewind_4", &["4"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a3);
    assert_eq!(notes(&env), "three\n");
    let fork = rewind(&env, &env.work(), "compact_rewind_3", &["3", "--conversation"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &summary);
    let fork = rewind(&env, &env.work(), "compact_rewind_2", &["2", "--conversation"]).expect("a fork");
    assert_fork_ends_with(&fork, &agent.file, &a1);
}

/// Holds the store's lock exclusively, as `cairn gc` or `cairn import` does, until dropped.
struct BusyStore(std::process::Child);

impl BusyStore {
    fn hold(store: &Path) -> Self {
        use std::io::BufRead;
        // `flock -o`: the lock stays with flock, not with the command it runs, which says
        // when the lock is held and then waits for its stdin to close.
        let mut child = std::process::Command::new("flock")
            .args(["-x", "-o"])
            .arg(store.join("locks/store.lock"))
            .args(["sh", "-c", "echo held; exec cat"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "held\n");
        BusyStore(child)
    }
}

impl Drop for BusyStore {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

#[test]
fn a_checkpoint_taken_after_the_agent_went_on_is_refused_naming_the_nearest_exact_turn() {
    let env = TestEnv::new();
    let agent = Agent::claude(&env);
    turn_prompt_after_hook(&agent, "Add a README", "one\n");
    let (_, a2) = turn_prompt_after_hook(&agent, "continue", "two\n");
    env.ok(&["config", "set", "hooks.budget", "1s"]);

    // Prompt 3 arrives while a gc holds the store: the hook gives up after its budget, the
    // agent goes on and edits, and the checkpoint lands only when the store is free.
    let busy = BusyStore::hold(&env.store());
    let stderr = agent.fire("UserPromptSubmit", json!({"prompt": "continue"}));
    assert!(stderr.contains("goes on in the background"), "{stderr}");
    agent.write_prompt("continue");
    env.write("notes.txt", "three\n");
    drop(busy);
    let log = env.store().join("logs/hooks.log");
    common::eventually("the late checkpoint", || {
        std::fs::read_to_string(&log).is_ok_and(|text| text.contains("turn 3: dir + transcript"))
    });
    agent.shell_ran("echo >> notes.txt");
    agent.write_answer("Wrote three.");

    let late = std::fs::read_to_string(&log).unwrap();
    let line = late.lines().find(|l| l.contains("turn 3: dir + transcript")).unwrap();
    assert!(line.contains("marked inexact"), "{line}");
    assert_cli!(env, "late_refused", [["rewind"], ["rewind", "3"]]);
    let fork = rewind(&env, &env.work(), "late_forced", &["3", "--force"]).expect("a fork");
    // The conversation is still cut before prompt 3; the files are what the late checkpoint
    // saw, turn 3's edit included: why the turn is refused unless forced.
    assert_fork_ends_with(&fork, &agent.file, &a2);
    assert_eq!(notes(&env), "three\n");
    let fork = rewind(&env, &env.work(), "late_nearest_exact", &["2", "--conversation"]).expect("a fork");
    assert_eq!(path_ids(&fork).len(), 2);
}
