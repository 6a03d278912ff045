//! Moments through the real binary: several targets saved together, listed, shown, diffed,
//! restored (all of them or `--only` some) and removed as one.

mod common;

use std::path::{Path, PathBuf};

use common::TestEnv;
use serde_json::{Value, json};

const SESSION: &str = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

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
    append(&session, &common::claude_line(&env, SESSION, "user", 1, "Add a migration"));
    append(&session, &common::claude_line(&env, SESSION, "assistant", 2, "Which table?"));
    settle();
    let first = env.transcript(&[&["save", ".", "transcript:auto", "--name", "before-migration"]]);

    env.write("app.py", "print('v2')\n");
    env.write("migration.sql", "ALTER TABLE orders ADD note TEXT;\n");
    std::fs::remove_file(env.work().join("notes/todo.txt")).unwrap();
    append(&session, &common::claude_line(&env, SESSION, "user", 3, "orders"));
    append(&session, &common::claude_line(&env, SESSION, "assistant", 4, "Done."));
    settle();
    let out = first
        + &env.transcript(&[
            &["save", ".", "transcript:auto", "--name", "after-migration"],
            &["moment", "list"],
            &["moment", "show", "before-migration"],
            &["show", "before-migration"],
            &["diff", "before-migration", "after-migration"],
            &["restore", "before-migration", "--only", "dir"],
        ]);
    assert_eq!(std::fs::read_to_string(env.work().join("app.py")).unwrap(), "print('v1')\n");
    assert!(!env.work().join("migration.sql").exists());
    assert_eq!(std::fs::read_to_string(env.work().join("notes/todo.txt")).unwrap(), "migrate\n");

    let restored = env.json(&["restore", "before-migration"]);
    let new_session = PathBuf::from(restored["parts"][1]["file"].as_str().unwrap());
    let text = std::fs::read_to_string(&new_session).unwrap();
    insta::assert_snapshot!(env.normalize(&text), @r#"
        {"cwd":"[TMP]/work","isSidechain":false,"message":{"content":"Add a migration","role":"user"},"parentUuid":null,"sessionId":"[ID9]","timestamp":"[TIME]","type":"user","userType":"external","uuid":"[ID10]","version":"2.0.14"}
        {"cwd":"[TMP]/work","isSidechain":false,"message":{"content":[{"text":"Which table?","type":"text"}],"role":"assistant"},"parentUuid":"[ID10]","sessionId":"[ID9]","timestamp":"[TIME]","type":"assistant","userType":"external","uuid":"[ID11]","version":"2.0.14"}
    "#);

    let out = out
        + &env.transcript(&[
            &["restore", "before-migration", "--only", "compose"],
            &["remove", "after-migration"],
            &["moment", "list"],
            &["save", ".", "transcript:auto", "--name", "before-migration"],
        ]);
    // The transcript holds the temp directory's random name, so its compressed size varies.
    let compressed = regex::Regex::new(r"\(\d+ B after compression\)").unwrap();
    let out = compressed.replace_all(&out, "([N] B after compression)");
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

/// The turns' order of events, as Claude Code sends them (`UserPromptSubmit` before the
/// agent acts, `PostToolUse` after each tool, `Stop` at the end of the answer).
fn hook(env: &TestEnv, event: Value) {
    let out = env.cairn(&["hook", "claude-code"]).write_stdin(event.to_string()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn event(env: &TestEnv, name: &str, extra: Value) -> Value {
    let mut value = json!({"session_id": SESSION, "transcript_path": claude_file(env).display().to_string(),
        "cwd": env.work().display().to_string(), "permission_mode": "default", "hook_event_name": name});
    for (k, v) in extra.as_object().unwrap() {
        value[k] = v.clone();
    }
    value
}

#[test]
fn hooks_checkpoint_each_turn_and_rewind_puts_back_files_and_conversation_before_the_prompt() {
    let env = TestEnv::new();
    let session = claude_file(&env);
    env.write("src/main.rs", "fn main() {}\n");
    env.write("build/out.o", "old object\n");
    settle();

    // Turn 1: the prompt is written to the transcript, then the hook runs.
    append(&session, &common::claude_line(&env, SESSION, "user", 1, "Write a README"));
    hook(&env, event(&env, "UserPromptSubmit", json!({"prompt": "Write a README"})));
    env.write("README.md", "# demo\n");
    hook(
        &env,
        event(&env, "PostToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": "README.md"}})),
    );
    // A read changes nothing: no checkpoint.
    hook(
        &env,
        event(&env, "PostToolUse", json!({"tool_name": "Read", "tool_input": {"file_path": "README.md"}})),
    );
    append(&session, &common::claude_line(&env, SESSION, "assistant", 2, "Wrote README.md."));
    hook(&env, event(&env, "Stop", json!({"stop_hook_active": false})));
    let at_turn_2 = common::contents(&env.work());

    // Turn 2: a Bash tool deletes and creates files.
    append(&session, &common::claude_line(&env, SESSION, "user", 3, "Clean the build\nand add a Makefile"));
    hook(&env, event(&env, "UserPromptSubmit", json!({"prompt": "Clean the build\nand add a Makefile"})));
    std::fs::remove_dir_all(env.work().join("build")).unwrap();
    env.write("Makefile", "all:\n\tcargo build\n");
    settle();
    hook(
        &env,
        event(
            &env,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf build && touch Makefile"}}),
        ),
    );
    // The same tool again with nothing new: no checkpoint.
    hook(&env, event(&env, "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})));
    append(&session, &common::claude_line(&env, SESSION, "assistant", 4, "Cleaned."));
    hook(&env, event(&env, "Stop", json!({"stop_hook_active": false})));

    // Turn 3.
    append(&session, &common::claude_line(&env, SESSION, "user", 5, "Delete main.rs"));
    hook(&env, event(&env, "UserPromptSubmit", json!({"prompt": "Delete main.rs"})));
    std::fs::remove_file(env.work().join("src/main.rs")).unwrap();
    hook(
        &env,
        event(&env, "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "rm src/main.rs"}})),
    );

    let out = env.transcript(&[&["moment", "list"], &["rewind"], &["rewind", "2"]]);
    insta::assert_snapshot!("rewind_turn_2", out);

    // The files are exactly as they were when prompt 2 was submitted.
    assert_eq!(common::contents(&env.work()), at_turn_2);
    // A new session whose active path ends just before prompt 2.
    let dir = session.parent().unwrap();
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| *p != session).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let forked = cairn_transcript::Transcript::read(&files.pop().unwrap()).unwrap().active_path();
    let texts: Vec<String> = forked.entries.iter().map(|e| e.text.clone()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("Write a README") && texts[1].contains("Wrote README.md."), "{texts:?}");
    assert_eq!(forked.leaf_id(), Some("00000000-0000-4000-8000-000000000002"));

    let log = std::fs::read_to_string(env.store().join("logs/hooks.log")).unwrap();
    let outcomes: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["outcome"].as_str().unwrap().to_owned())
        .collect();
    insta::assert_snapshot!("rewind_hook_log", env.normalize(&outcomes.join("\n")));
}

#[test]
fn a_gemini_session_is_saved_without_naming_its_file_and_loaded_where_gemini_resumes() {
    let env = TestEnv::new();
    // Gemini CLI keeps a project it has not registered under the SHA-256 of its path.
    let cwd = env.work().display().to_string();
    let chats =
        env.home().join(".gemini/tmp").join(cairn_transcript::gemini_project_hash(&cwd)).join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cairn-transcript/tests/fixtures/gemini_session.jsonl");
    let session = chats.join("session-2025-10-02T09-15-b2e7d4c1.jsonl");
    std::fs::copy(fixture, &session).unwrap();

    let saved = env.json(&["transcript", "save", "g1"]);
    assert_eq!(saved["file"], session.to_str().unwrap());
    let loaded = env.json(&["transcript", "load", "g1"]);
    let file = PathBuf::from(loaded["file"].as_str().unwrap());
    assert_eq!(file.parent(), Some(chats.as_path()));
    let texts = |f: &Path| {
        let path = cairn_transcript::Transcript::read(f).unwrap().active_path();
        path.entries.into_iter().map(|e| e.text).collect::<Vec<_>>()
    };
    assert_eq!(texts(&file), texts(&session));
    assert_eq!(loaded["format"], "gemini");
}

/// Regression: `cairn save A B --name x --force` dropped `--force` on its way to the moment and
/// refused the taken name; now the second save takes the name and the first moment loses it.
#[test]
fn save_of_several_targets_with_force_moves_the_moment_name() {
    let env = TestEnv::new();
    env.write("a/one.txt", "one\n");
    env.write("b/two.txt", "two\n");
    assert_cli!(
        env,
        "moments_save_force_moves_the_name",
        [
            ["save", "a", "b", "--name", "x"],
            ["save", "a", "b", "--name", "x"],
            ["save", "a", "b", "--name", "x", "--force"],
            ["moment", "list"],
        ]
    );
}

/// The older moment's record object still carries a moved name; a catalog rebuilt from the
/// records gives the name to the newest moment holding it, as the forced save did.
#[test]
fn a_moved_moment_name_stays_with_the_newer_moment_when_the_catalog_is_rebuilt() {
    let env = TestEnv::new();
    env.write("a/one.txt", "one\n");
    env.write("b/two.txt", "two\n");
    let first = env.json(&["save", "a", "b", "--name", "x"]);
    let second = env.json(&["save", "a", "b", "--name", "x", "--force"]);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(env.store().join(format!("catalog.db{suffix}")));
    }
    env.ok(&["repair"]);
    let list = env.json(&["moment", "list"]);
    let name_of = |saved: &Value| {
        let id = &saved["moment"]["id"];
        let moments = list["moments"].as_array().unwrap_or_else(|| panic!("{list:#}"));
        moments.iter().find(|m| &m["id"] == id).unwrap_or_else(|| panic!("{id} in {list:#}"))["name"].clone()
    };
    assert_eq!((name_of(&first), name_of(&second)), (Value::Null, json!("x")), "{list:#}");
}
