//! A rewind puts back what the agent changed and leaves everyone else's work alone: a file
//! changed between turns or after the last checkpoint is kept (or merged three-way when the
//! agent changed it too), `--exact` makes the tree the turn's, `--undo` takes back one turn,
//! and a path list narrows a rewind or a restore. Driven through the real hook command with
//! Claude Code's payloads.

mod common;

use std::path::PathBuf;

use common::TestEnv;
use serde_json::json;

const SESSION: &str = "5b2c1d0e-3f4a-4b5c-8d6e-7f8091a2b3c4";

/// An agent session driven through `cairn hook claude-code`, turn by turn.
struct Agent<'a> {
    env: &'a TestEnv,
    transcript: PathBuf,
    line: u32,
}

impl<'a> Agent<'a> {
    fn new(env: &'a TestEnv) -> Self {
        let dir = env
            .home()
            .join(".claude/projects")
            .join(cairn_transcript::claude_dir_name(&env.work().display().to_string()));
        std::fs::create_dir_all(&dir).unwrap();
        Agent { env, transcript: dir.join(format!("{SESSION}.jsonl")), line: 0 }
    }

    fn hook(&self, name: &str, extra: serde_json::Value) {
        let mut event = json!({"session_id": SESSION, "transcript_path": self.transcript.display().to_string(),
            "cwd": self.env.work().display().to_string(), "permission_mode": "default", "hook_event_name": name});
        for (k, v) in extra.as_object().unwrap() {
            event[k] = v.clone();
        }
        let out = self.env.cairn(&["hook", "claude-code"]).write_stdin(event.to_string()).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    fn append(&mut self, kind: &str, text: &str) {
        use std::io::Write;
        self.line += 1;
        let line = common::claude_line(self.env, SESSION, kind, self.line, text);
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.transcript).unwrap();
        file.write_all(line.as_bytes()).unwrap();
    }

    /// One turn: the prompt's hook, then each edit as a Write tool with its hook, then the
    /// answer and the turn's end.
    fn turn(&mut self, prompt: &str, edits: &[(&str, Option<&str>)]) {
        self.hook("UserPromptSubmit", json!({"prompt": prompt}));
        self.append("user", prompt);
        for (path, content) in edits {
            settle();
            match content {
                Some(text) => {
                    self.env.write(path, text);
                }
                None => std::fs::remove_file(self.env.work().join(path)).unwrap(),
            }
            self.hook("PostToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": path}}));
        }
        self.append("assistant", "done");
        self.hook("Stop", json!({"stop_hook_active": false}));
    }
}

fn settle() {
    // Files written in the clock tick a scan starts in are read again (the racy rule).
    std::thread::sleep(std::time::Duration::from_millis(30));
}

fn read(env: &TestEnv, rel: &str) -> Option<String> {
    std::fs::read_to_string(env.work().join(rel)).ok()
}

/// Four turns over `a.txt`, `b.txt` and `notes.txt`, with the user editing `notes.txt`
/// between turns 3 and 4.
fn four_turns(env: &TestEnv) {
    env.write("a.txt", "a0\n");
    env.write("notes.txt", "n0\n");
    let mut agent = Agent::new(env);
    agent.turn("one", &[("a.txt", Some("a1\n"))]);
    agent.turn("two", &[("a.txt", Some("a2\n"))]);
    agent.turn("three", &[("b.txt", Some("b3\n"))]);
    settle();
    env.write("notes.txt", "the user's note\n");
    agent.turn("four", &[("a.txt", Some("a4\n"))]);
}

#[test]
fn a_rewind_puts_back_the_agents_files_and_keeps_the_users() {
    let env = TestEnv::new();
    four_turns(&env);
    let out = env.transcript(&[&["rewind", "2", "--code"]]);
    insta::assert_snapshot!(out, @r"
    $ cairn rewind 2 --code
    exit: 0
    --- stdout
    rewound to [ID1]: turn 2: two
      files of [TMP]/work put back (safety snapshot [ID2])
        notes.txt (kept: changed since by someone other than the agent)
    --- stderr: empty
    ");
    assert_eq!(read(&env, "a.txt").as_deref(), Some("a1\n"));
    assert_eq!(read(&env, "b.txt"), None);
    assert_eq!(read(&env, "notes.txt").as_deref(), Some("the user's note\n"));
}

#[test]
fn a_rewind_after_a_rewind_goes_on_back_without_conflicts() {
    let env = TestEnv::new();
    env.write("notes.txt", "zero\n");
    let mut agent = Agent::new(&env);
    for (prompt, text) in [("one", "one\n"), ("two", "two\n"), ("three", "three\n"), ("four", "four\n")] {
        agent.turn(prompt, &[("notes.txt", Some(text))]);
    }
    env.ok(&["rewind", "4", "--code"]);
    assert_eq!(read(&env, "notes.txt").as_deref(), Some("three\n"));
    let out = env.json(&["rewind", "3", "--code"]);
    assert_eq!(out["parts"][0]["held"], serde_json::Value::Null, "{out}");
    assert_eq!(read(&env, "notes.txt").as_deref(), Some("two\n"));
}

#[test]
fn an_exact_rewind_makes_the_tree_the_turns() {
    let env = TestEnv::new();
    four_turns(&env);
    env.ok(&["rewind", "2", "--code", "--exact"]);
    assert_eq!(read(&env, "a.txt").as_deref(), Some("a1\n"));
    assert_eq!(read(&env, "b.txt"), None);
    assert_eq!(read(&env, "notes.txt").as_deref(), Some("n0\n"));
}

#[test]
fn restoring_an_agents_checkpoint_keeps_the_users_work_unless_exact() {
    let env = TestEnv::new();
    four_turns(&env);
    let turns = env.json(&["rewind"]);
    let turn_2 = turns["turns"][1]["moment"].as_str().unwrap().to_owned();
    env.ok(&["restore", &turn_2, "--only", "dir"]);
    assert_eq!(read(&env, "a.txt").as_deref(), Some("a1\n"));
    assert_eq!(read(&env, "notes.txt").as_deref(), Some("the user's note\n"));
    env.ok(&["restore", &turn_2, "--only", "dir", "--exact"]);
    assert_eq!(read(&env, "notes.txt").as_deref(), Some("n0\n"));
}

#[test]
fn a_file_both_changed_is_merged_or_marked() {
    let env = TestEnv::new();
    env.write("list.txt", "alpha\nbeta\ngamma\ndelta\nepsilon\n");
    env.write("clash.txt", "one\ntwo\nthree\n");
    let mut agent = Agent::new(&env);
    agent.turn("first", &[]);
    agent.turn(
        "edit both",
        &[
            ("list.txt", Some("ALPHA\nbeta\ngamma\ndelta\nepsilon\n")),
            ("clash.txt", Some("one\nTWO\nthree\n")),
        ],
    );
    settle();
    // The user edits both after the agent's turn: one far from the agent's line, one on it.
    env.write("list.txt", "ALPHA\nbeta\ngamma\ndelta\nEPSILON\n");
    env.write("clash.txt", "one\n2\nthree\n");
    let dry = env.transcript(&[&["rewind", "2", "--code", "--dry-run"]]);
    insta::assert_snapshot!(dry, @r"
    $ cairn rewind 2 --code --dry-run
    exit: 0
    --- stdout
    would rewind to [ID1]: turn 2: edit both
      files of [TMP]/work: 2 changes
        rewrite  clash.txt
        rewrite  list.txt
        clash.txt (would conflict: both changed it)
        list.txt (would be merged: your changes kept, the agent's taken back)
    --- stderr: empty
    ");
    let out = env.json(&["rewind", "2", "--code"]);
    let held: Vec<(String, String)> = out["parts"][0]["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap().to_owned(), e["action"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        held,
        [("clash.txt".to_owned(), "conflict".to_owned()), ("list.txt".to_owned(), "merge".to_owned())]
    );
    // The agent's change taken back, the user's kept.
    assert_eq!(read(&env, "list.txt").as_deref(), Some("alpha\nbeta\ngamma\ndelta\nEPSILON\n"));
    insta::assert_snapshot!(read(&env, "clash.txt").unwrap(), @r"
    one
    <<<<<<< ours
    2
    =======
    two
    >>>>>>> theirs
    three
    ");
}

#[test]
fn undo_takes_back_one_turn_and_keeps_the_later_ones() {
    let env = TestEnv::new();
    env.write("log.txt", "start\nmiddle\nend\n");
    let mut agent = Agent::new(&env);
    agent.turn("one", &[("one.txt", Some("1\n"))]);
    agent.turn("two", &[("two.txt", Some("2\n"))]);
    agent.turn("three", &[("three.txt", Some("3\n")), ("log.txt", Some("START\nmiddle\nend\n"))]);
    agent.turn("four", &[("four.txt", Some("4\n")), ("log.txt", Some("START\nmiddle\nend\nfour\n"))]);
    agent.turn("five", &[("five.txt", Some("5\n")), ("one.txt", None)]);
    let out = env.transcript(&[&["rewind", "--undo", "3"]]);
    insta::assert_snapshot!(out, @r"
    $ cairn rewind --undo 3
    exit: 0
    --- stdout
    rewound to [ID1]: turn 3: three
      files of [TMP]/work put back (safety snapshot [ID2])
        log.txt (merged: your changes kept, the agent's taken back)
    --- stderr: empty
    ");
    assert_eq!(read(&env, "three.txt"), None);
    assert_eq!(read(&env, "log.txt").as_deref(), Some("start\nmiddle\nend\nfour\n"));
    for (file, content) in [("two.txt", "2\n"), ("four.txt", "4\n"), ("five.txt", "5\n")] {
        assert_eq!(read(&env, file).as_deref(), Some(content), "{file}");
    }
    assert_eq!(read(&env, "one.txt"), None, "turn 5 removed it, and stays so");
}

#[test]
fn paths_narrow_a_rewind_and_a_restore() {
    let env = TestEnv::new();
    four_turns(&env);
    env.ok(&["rewind", "2", "--code", "--", "b.txt"]);
    assert_eq!(read(&env, "b.txt"), None);
    assert_eq!(read(&env, "a.txt").as_deref(), Some("a4\n"), "not named, so left alone");

    env.write("sub/x.txt", "x0\n");
    env.write("sub/y.txt", "y0\n");
    env.ok(&["save", ".", "--name", "before"]);
    env.write("sub/x.txt", "x1\n");
    env.write("sub/y.txt", "y1\n");
    let sub = env.work().join("sub");
    let out = env.cairn(&["restore", "before", "--", "x.txt"]).current_dir(&sub).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read(&env, "sub/x.txt").as_deref(), Some("x0\n"));
    assert_eq!(read(&env, "sub/y.txt").as_deref(), Some("y1\n"));

    let refused = env.fails(&["restore", "before", "--", "../outside"], 2);
    insta::assert_snapshot!(env.normalize(&refused), @"error: [TMP]/outside is not inside the target [TMP]/work");
}
