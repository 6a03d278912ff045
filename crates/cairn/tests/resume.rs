//! Handing a turn to another machine: two machines (two HOMEs and catalog caches) on one
//! encrypted store on a real S3 server (`moto_server`). Machine A runs a hook-made Claude Code
//! session; machine B resumes one of its turns into a directory of another path, gets the
//! files, a session of its own Claude Code whose paths name the new directory, and goes on
//! with the turn numbering in the same store.

mod common;

use std::path::Path;

use cairn_test_support::Moto;
use common::{ClaudeSession, contents, machine_on};
use serde_json::Value;

const SESSION: &str = "5b2c1d0e-3f4a-4b5c-8d6e-7f8091a2b3c4";

/// Every string value under `value`.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// `cairn rewind --json` run in `dir`.
fn turns_of(env: &common::TestEnv, dir: &Path) -> Value {
    let run = env.run_in(dir, &["--json", "rewind"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

fn lines(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_turn_resumed_on_another_machine_has_its_files_its_conversation_there_and_numbering_going_on() {
    let moto = Moto::start();
    moto.create_bucket("team");
    let a = machine_on(&moto, "s3://team/cairn");
    let b = machine_on(&moto, "s3://team/cairn");
    let proj = a.root().join("a/proj");
    common::write(&proj, "src/main.rs", "fn main() {}\n");
    let mut agent = ClaudeSession::new(&a, &proj, SESSION, 0xa);
    agent.turn("one", &[("src/main.rs", "fn main() { one(); }\n")]);
    let at_turn_2 = contents(&proj);
    agent.turn("two", &[("src/lib.rs", "pub fn two() {}\n")]);
    agent.turn("three", &[("src/main.rs", "fn main() { three(); }\n")]);
    let a_before = turns_of(&a, &proj);
    let a_proj = proj.display().to_string();

    // B runs in a directory that is not the project: the store's only project is the one meant.
    let work = b.root().join("b/work");
    let out = b.json(&["resume", "2", "--to", work.to_str().unwrap()]);
    let b_work = work.display().to_string();
    assert_eq!(out["from"], a_proj.as_str(), "{out}");
    assert_eq!(out["to"], b_work.as_str(), "{out}");
    assert_eq!(out["moment"]["turn"]["number"], 2, "{out}");
    assert_eq!(contents(&work), at_turn_2, "B's files are A's at turn 2");

    // The session file is where B's Claude Code looks for `b/work`, and names only `b/work`.
    let conversation = &out["conversation"];
    let file = Path::new(conversation["file"].as_str().unwrap()).to_path_buf();
    let claude_dir = b.home().join(".claude/projects").join(cairn_transcript::claude_dir_name(&b_work));
    assert_eq!(file.parent(), Some(claude_dir.as_path()), "{out}");
    let new_session = conversation["session_id"].as_str().unwrap().to_owned();
    assert_eq!(conversation["resume_command"], format!("claude --resume {new_session}"));
    assert_eq!(conversation["forked_from"]["agent_session"], SESSION);
    assert_eq!(conversation["forked_from"]["before_turn"], 2);
    let entries = lines(&file);
    assert!(!entries.is_empty());
    let mut all = Vec::new();
    for entry in &entries {
        assert_eq!(entry["cwd"], b_work.as_str(), "{entry}");
        assert_eq!(entry["sessionId"], new_session.as_str(), "{entry}");
        strings(entry, &mut all);
    }
    assert!(all.iter().all(|s| !s.contains(&a_proj)), "a path still names A's project: {all:?}");
    let written = format!("{b_work}/src/main.rs");
    assert!(all.contains(&written), "the tool call names B's file: {all:?}");
    assert!(all.contains(&format!("File created successfully at: {written}")), "{all:?}");
    let prompts: Vec<&str> = entries
        .iter()
        .filter(|e| e["type"] == "user")
        .filter_map(|e| e["message"]["content"].as_str())
        .collect();
    assert_eq!(prompts, ["one"], "the conversation ends just before turn 2's prompt");
    let parsed = cairn_transcript::Transcript::read(&file).expect("the session parses as Claude Code's");
    assert_eq!(parsed.active_path().entries.len(), entries.len());

    // B goes on: its next turn is checkpointed as turn 2 of the fork, after A's turn 1.
    let mut resumed = ClaudeSession::resumed(&b, &work, &new_session, file, 0xb);
    resumed.turn("two again, elsewhere", &[("src/b.rs", "// B\n")]);
    let listed = turns_of(&b, &work);
    assert_eq!(listed["workspace"], b_work.as_str());
    let turns = common::turn_rows(&listed);
    assert_eq!(turns, [(2, new_session.as_str(), "two again, elsewhere")]);
    assert_eq!(listed["sessions"][0]["forked_from"]["agent_session"], SESSION);
    assert_eq!(listed["sessions"][0]["forked_from"]["before_turn"], 2);

    // A's own line is untouched: its three turns, its files.
    let a_after = turns_of(&a, &proj);
    assert_eq!(a_after["turns"].as_array().unwrap().len(), 3);
    assert_eq!(a_after["turns"], a_before["turns"]);
    assert_eq!(std::fs::read_to_string(proj.join("src/main.rs")).unwrap(), "fn main() { three(); }\n");
}

#[test]
fn resume_into_a_directory_that_is_not_empty_is_refused_before_anything_is_written() {
    let moto = Moto::start();
    moto.create_bucket("team");
    let a = machine_on(&moto, "s3://team/cairn");
    let b = machine_on(&moto, "s3://team/cairn");
    let proj = a.root().join("a/proj");
    common::write(&proj, "x.txt", "x\n");
    let mut agent = ClaudeSession::new(&a, &proj, SESSION, 0xa);
    agent.turn("one", &[("x.txt", "one\n")]);
    agent.turn("two", &[("x.txt", "two\n")]);
    common::write(&b.work(), "mine.txt", "mine\n");
    let run = b.run(&["resume", "2", "--to", b.work().to_str().unwrap()]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    insta::assert_snapshot!(b.normalize(&run.stderr), @"error: [TMP]/work is not empty; a turn is resumed into a new or empty directory; pass --to");
    assert_eq!(std::fs::read_to_string(b.work().join("mine.txt")).unwrap(), "mine\n");
    assert!(!b.home().join(".claude/projects").exists(), "no session was written");
}

#[test]
fn resume_by_moment_says_where_everything_went_and_how_to_go_on() {
    let moto = Moto::start();
    moto.create_bucket("team");
    let a = machine_on(&moto, "s3://team/cairn");
    let b = machine_on(&moto, "s3://team/cairn");
    let proj = a.root().join("a/proj");
    common::write(&proj, "x.txt", "x\n");
    let mut agent = ClaudeSession::new(&a, &proj, SESSION, 0xa);
    agent.turn("one", &[("x.txt", "one\n")]);
    agent.turn("two", &[("x.txt", "two\n")]);
    let moment = turns_of(&a, &proj)["turns"][1]["moment"].as_str().unwrap().to_owned();
    let to = b.root().join("b/work");
    let run = b.run(&["resume", &moment, "--to", to.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = b.normalize(&run.stdout.replace(&a.root().display().to_string(), "[A]"));
    insta::assert_snapshot!(out, @r"
    resumed [ID1]: turn 2: two
      files of [A]/a/proj put in [TMP]/b/work (1 file written)
      conversation written as a new claude-code session: [TMP]/home/.claude/projects/[TMP-AS-NAME]-b-work/[ID2].jsonl
      resume it with: cd [TMP]/b/work && claude --resume [ID2]
    ");
    assert_eq!(std::fs::read_to_string(to.join("x.txt")).unwrap(), "one\n");
}
