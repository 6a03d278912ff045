//! Moments through the real binary: several targets saved together, listed, shown, diffed,
//! restored (all of them or `--only` some) and removed as one.

mod common;

use std::path::{Path, PathBuf};

use common::TestEnv;
use serde_json::json;

const SESSION: &str = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

/// A Claude Code line of the main chain (the format of Claude Code 2.0).
fn claude_line(env: &TestEnv, kind: &str, n: u32, text: &str) -> String {
    let uuid = format!("00000000-0000-4000-8000-{n:012}");
    let parent = (n > 1).then(|| format!("00000000-0000-4000-8000-{:012}", n - 1));
    let content = if kind == "user" { json!(text) } else { json!([{"type": "text", "text": text}]) };
    let line = json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": env.work().display().to_string(), "sessionId": SESSION, "version": "2.0.14", "type": kind,
        "message": {"role": kind, "content": content}, "uuid": uuid,
        "timestamp": format!("2025-10-01T12:00:{n:02}.000Z")});
    format!("{line}\n")
}

fn claude_file(env: &TestEnv) -> PathBuf {
    let dir = env
        .home()
        .join(".claude/projects")
        .join(cairn_transcript::claude_dir_name(&env.work().display().to_string()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{SESSION}.jsonl"))
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

fn settle() {
    // Files written in the clock tick a scan starts in are read again (the stat cache's racy
    // rule); waiting keeps the byte counts of the outputs stable.
    std::thread::sleep(std::time::Duration::from_millis(30));
}

#[test]
fn a_moment_of_a_directory_and_a_conversation_is_saved_shown_diffed_restored_and_removed_as_one() {
    let env = TestEnv::new();
    env.write("app.py", "print('v1')\n");
    env.write("notes/todo.txt", "migrate\n");
    let session = claude_file(&env);
    append(&session, &claude_line(&env, "user", 1, "Add a migration"));
    append(&session, &claude_line(&env, "assistant", 2, "Which table?"));
    settle();
    let first = env.transcript(&[&["save", ".", "transcript:auto", "--name", "before-migration"]]);

    env.write("app.py", "print('v2')\n");
    env.write("migration.sql", "ALTER TABLE orders ADD note TEXT;\n");
    std::fs::remove_file(env.work().join("notes/todo.txt")).unwrap();
    append(&session, &claude_line(&env, "user", 3, "orders"));
    append(&session, &claude_line(&env, "assistant", 4, "Done."));
    settle();
    let out = first
        + &env.transcript(&[
            &["save", ".", "transcript:auto", "--name", "after-migration"],
            &["moment", "list"],
            &["moment", "show", "before-migration"],
            &["diff", "before-migration", "after-migration"],
            &["restore", "before-migration", "--only", "dir"],
        ]);
    assert_eq!(std::fs::read_to_string(env.work().join("app.py")).unwrap(), "print('v1')\n");
    assert!(!env.work().join("migration.sql").exists());
    assert_eq!(std::fs::read_to_string(env.work().join("notes/todo.txt")).unwrap(), "migrate\n");

    let restored = env.json(&["restore", "before-migration"]);
    let new_session = PathBuf::from(restored["parts"][1]["file"].as_str().unwrap());
    let text = std::fs::read_to_string(&new_session).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("Which table?") && !text.contains("Done."), "{text}");

    let out = out
        + &env.transcript(&[
            &["restore", "before-migration", "--only", "compose"],
            &["moment", "remove", "after-migration"],
            &["moment", "list"],
            &["save", ".", "transcript:auto", "--name", "before-migration"],
        ]);
    insta::assert_snapshot!("moment_round_trip", out);
}

#[test]
fn a_moment_whose_part_fails_leaves_nothing_behind() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    let out = env.transcript(&[
        &["save", ".", "transcript:auto", "--name", "m"],
        &["save", ".", "transcript:/nowhere/session.jsonl", "--name", "m"],
        &["list"],
        &["moment", "list"],
    ]);
    insta::assert_snapshot!("moment_part_fails", out);
}
