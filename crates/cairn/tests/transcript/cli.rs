//! `cairn transcript save|load|export|list|delete` and `cairn diff` of transcript snapshots.

use std::path::{Path, PathBuf};

use cairn_transcript::{ActivePath, Format, Transcript};
use serde_json::Value;

use crate::{Agents, TestEnv, active, files_under, ids, leaf_to_root, mode};

#[test]
fn save_keeps_exactly_the_active_path_of_each_format() {
    let env = TestEnv::new();
    let cases = [
        ("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl", "branched"),
        ("pi_v1_linear.jsonl", "2024-08-01T10-00-00-000Z_0191e000.jsonl", "linear-v1"),
        ("pi_v2.jsonl", "2024-11-02T08-00-00-000Z_0192f000.jsonl", "v2"),
        ("claude_sidechain.jsonl", "5f2c7e3a-1111-4222-8333-444455556666.jsonl", "claude"),
    ];
    for (fixture_name, file_name, name) in cases {
        let file = env.place(fixture_name, file_name);
        let expected = active(&file);
        let saved = env.json(&["transcript", "save", file.to_str().unwrap(), name]);
        assert_eq!(saved["name"], name);
        assert_eq!(saved["kind"], "transcript");
        assert_eq!(saved["target"], format!("transcript:{}", file.display()));
        assert_eq!(saved["stats"]["bytes"], expected.document().len(), "{name}");
        assert_eq!(
            saved["summary"]["entry_count"],
            expected.entries.iter().filter(|e| e.id.is_some()).count()
        );
        assert!(saved["replaced"].is_null());
    }
    // The branched tree: the abandoned branch (b…) is left out, the branch summary and the
    // compaction on the path are kept.
    let branched = env.json(&["transcript", "export", "branched", "-o", "out.jsonl"]);
    let exported = std::fs::read_to_string(branched["file"].as_str().unwrap()).unwrap();
    assert_eq!(
        exported,
        active(&env.pi_dir().join(cases[0].1)).document(),
        "a v3 path is stored line for line"
    );
    assert!(!exported.contains("\"b0000001\"") && exported.contains("\"compaction\""));
    // The Claude Code path leaves the sidechain entries out.
    let claude = env.json(&["transcript", "export", "claude", "-o", "claude.jsonl"]);
    let text = std::fs::read_to_string(claude["file"].as_str().unwrap()).unwrap();
    assert!(!text.contains("\"isSidechain\":true"), "{text}");
    assert_eq!(
        ids(&active(Path::new(claude["file"].as_str().unwrap()))),
        ids(&active(&env.claude_dir().join(cases[3].1)))
    );
    assert_eq!(env.listed().len(), 4);
}

#[test]
fn load_writes_a_pi_session_with_the_same_path_and_private_modes() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl");
    env.json(&["transcript", "save", file.to_str().unwrap(), "baseline"]);
    let before = env.listed();
    let export_before = env.json(&["transcript", "export", "baseline", "-o", "before.jsonl"]);

    let original = active(&file);
    // A session of a directory the agent never ran in: the directories are created 0700.
    std::fs::remove_dir_all(env.home().join(".pi")).unwrap();
    let loaded = env.json(&["transcript", "load", "baseline"]);
    let written = PathBuf::from(loaded["file"].as_str().unwrap());
    assert_eq!(written.parent(), Some(env.pi_dir().as_path()));
    assert_eq!(mode(&written), 0o600);
    for dir in [env.pi_dir(), env.home().join(".pi/agent/sessions")] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    assert_eq!(loaded["format"], "pi");
    assert_eq!(loaded["resume_command"], format!("pi --session {}", written.display()));
    assert_eq!(loaded["fork_command"], format!("pi --fork {}", written.display()));

    let parsed = Transcript::read(&written).unwrap();
    assert_eq!(parsed.format(), Format::Pi);
    assert_eq!(parsed.pi_version(), Some(3));
    assert_eq!(parsed.session_id(), loaded["session_id"].as_str());
    assert_ne!(parsed.session_id(), Some("0193a1f0-4b2c-7d10-9e8f-1a2b3c4d5e6f"));
    assert_eq!(parsed.cwd(), Some(env.cwd().as_str()));
    let header: Value =
        serde_json::from_str(std::fs::read_to_string(&written).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], file.to_str().unwrap());
    assert_eq!(leaf_to_root(&parsed.active_path()), leaf_to_root(&original));
    let texts = |p: &ActivePath| p.entries.iter().map(|e| e.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&parsed.active_path()), texts(&original));

    // Loading leaves the snapshot as it was.
    assert_eq!(env.listed(), before);
    let export_after = env.json(&["transcript", "export", "baseline", "-o", "after.jsonl"]);
    assert_eq!(
        std::fs::read(export_before["file"].as_str().unwrap()).unwrap(),
        std::fs::read(export_after["file"].as_str().unwrap()).unwrap()
    );
}

#[test]
fn load_writes_a_claude_session_with_a_new_session_id_and_records_the_prompt() {
    let env = TestEnv::new();
    let file = env.place("claude_sidechain.jsonl", "5f2c7e3a-1111-4222-8333-444455556666.jsonl");
    env.json(&["transcript", "save", file.to_str().unwrap(), "login-bug"]);
    let loaded = env.json(&["transcript", "load", "login-bug", "--prompt", "/continue with the fix"]);
    let id = loaded["session_id"].as_str().unwrap().to_owned();
    let written = PathBuf::from(loaded["file"].as_str().unwrap());
    assert_eq!(written, env.claude_dir().join(format!("{id}.jsonl")));
    assert_eq!(mode(&written), 0o600);
    assert_eq!(loaded["resume_command"], format!("claude --resume {id}"));

    let parsed = Transcript::read(&written).unwrap();
    assert_eq!(parsed.format(), Format::Claude);
    assert_eq!(parsed.session_id(), Some(id.as_str()));
    assert_eq!(leaf_to_root(&parsed.active_path()), leaf_to_root(&active(&file)));
    for line in std::fs::read_to_string(&written).unwrap().lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if let Some(session) = value.get("sessionId") {
            assert_eq!(session, id.as_str(), "every sessionId is rewritten: {line}");
        }
    }
    // The prompt is returned and kept, literally, in a private sidecar next to the session.
    assert_eq!(loaded["prompt"], "/continue with the fix");
    let sidecar = PathBuf::from(loaded["prompt_file"].as_str().unwrap());
    assert_eq!(sidecar, written.with_extension("prompt"));
    assert_eq!(std::fs::read_to_string(&sidecar).unwrap(), "/continue with the fix");
    assert_eq!(mode(&sidecar), 0o600);
}

#[test]
fn an_existing_name_needs_force_and_force_replaces_it() {
    let env = TestEnv::new();
    let first = env.place("pi_v3_branched.jsonl", "a.jsonl");
    let second = env.place("pi_v2.jsonl", "b.jsonl");
    let old = env.json(&["transcript", "save", first.to_str().unwrap(), "baseline"]);

    for file in [&first, &second] {
        let err = env.fails(&["transcript", "save", file.to_str().unwrap(), "baseline"], 1);
        assert!(err.contains("\"baseline\" already exists") && err.contains("--force"), "{err}");
    }
    assert_eq!(env.listed().len(), 1);

    // The name is one namespace across session files: forcing it from another file replaces.
    let new = env.json(&["transcript", "save", second.to_str().unwrap(), "baseline", "--force"]);
    assert_eq!(new["replaced"]["id"], old["id"]);
    let listed = env.listed();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], new["id"]);
    assert_eq!(listed[0]["file"], second.to_str().unwrap());
    let loaded = env.json(&["transcript", "load", "baseline"]);
    assert_eq!(ids(&active(Path::new(loaded["file"].as_str().unwrap()))), ids(&active(&second)));
}

#[test]
fn names_outside_the_rule_are_refused_and_nothing_is_stored() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "a.jsonl");
    let file = file.to_str().unwrap();
    for bad in ["../x", "a b", "-x", ""] {
        let err = env.fails(&["transcript", "save", "--", file, bad], 2);
        assert!(
            err.contains("invalid snapshot name") && err.contains("begin and end with a letter or digit"),
            "{bad:?}: {err}"
        );
    }
    assert!(env.listed().is_empty());
}

#[test]
fn damaged_transcripts_are_refused_with_their_line_and_nothing_is_stored() {
    let env = TestEnv::new();
    // A line that is not JSON is refused with --strict (without it, it is skipped as the
    // agents skip it); a lost parent with no skipped line to explain it, and a cycle, always.
    let cases = [
        ("bad_malformed.jsonl", "line 3 is not valid JSON"),
        ("bad_missing_parent.jsonl", "line 3 names parent gone0000"),
        ("bad_cycle.jsonl", "line 3 is part of a cycle"),
    ];
    for (name, message) in cases {
        let file = env.place(name, name);
        let err = env.fails(&["transcript", "save", "--strict", file.to_str().unwrap(), "broken"], 2);
        assert!(err.contains(name) && err.contains(message), "{name}: {err}");
    }
    assert!(env.listed().is_empty());
    // No record and no pack reached the store's objects either.
    let objects = env.store().join("objects");
    assert_eq!(files_under(&objects), Vec::<PathBuf>::new());
    let all = env.json(&["list"]);
    assert!(all["snapshots"].as_array().unwrap().is_empty());
}

#[test]
fn export_writes_a_version_3_session_that_pi_can_fork() {
    let env = TestEnv::new();
    let file = env.place("pi_v1_linear.jsonl", "old.jsonl");
    env.json(&["transcript", "save", file.to_str().unwrap(), "old"]);
    let out = env.work().join("fork-me.jsonl");
    let exported = env.json(&["transcript", "export", "old", "-o", out.to_str().unwrap()]);
    assert_eq!(exported["fork_command"], format!("pi --fork {}", out.display()));
    let parsed = Transcript::read(&out).unwrap();
    assert_eq!(parsed.format(), Format::Pi);
    assert_eq!(parsed.pi_version(), Some(3));
    assert_eq!(ids(&parsed.active_path()), ids(&active(&file)));
    assert_eq!(mode(&out), 0o600);
    // An existing file is not replaced without --force.
    let err = env.fails(&["transcript", "export", "old", "-o", out.to_str().unwrap()], 1);
    assert!(err.contains("already exists") && err.contains("--force"), "{err}");
    env.json(&["transcript", "export", "old", "-o", out.to_str().unwrap(), "--force"]);
}

#[test]
fn diff_of_two_transcript_snapshots_shows_entries_with_roles_and_previews() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "s.jsonl");
    env.json(&["transcript", "save", file.to_str().unwrap(), "before"]);
    // The user goes back to the abandoned branch and continues there.
    let entry = r#"{"type":"message","id":"d0000001","parentId":"b0000002","timestamp":"2025-01-10T10:00:00.000Z","message":{"role":"user","content":"Fine, show me the Python version after all.","timestamp":1736503200000}}"#;
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(entry);
    text.push('\n');
    std::fs::write(&file, text).unwrap();
    env.json(&["transcript", "save", file.to_str().unwrap(), "after"]);

    let diff = env.json(&["diff", "before", "after"]);
    let changes = &diff["transcript"];
    let added: Vec<(&str, &str)> = changes["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["role"].as_str().unwrap()))
        .collect();
    assert_eq!(added, [("b0000001", "assistant"), ("b0000002", "user"), ("d0000001", "user")]);
    let removed: Vec<&str> =
        changes["removed"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(removed, ["c0000001", "c0000002", "c0000003", "c0000004", "c0000005"]);
    assert_eq!(changes["unchanged"], 5);
    assert_eq!(changes["added"][2]["preview"], "Fine, show me the Python version after all.");
    assert_eq!(diff["summary"]["added"], 3);

    let human = env.cairn(&["diff", "before", "after"]).assert().success().get_output().stdout.clone();
    let human = String::from_utf8(human).unwrap();
    assert!(human.contains("+ d0000001 user") && human.contains("- c0000002 compaction"), "{human}");
}

#[test]
fn save_without_a_file_takes_the_newest_session_of_the_directory() {
    let env = TestEnv::new();
    let old = env.place("pi_v2.jsonl", "older.jsonl");
    let newest = env.place("claude_sidechain.jsonl", "5f2c7e3a-1111-4222-8333-444455556666.jsonl");
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&old).unwrap().set_modified(past).unwrap();
    let saved = env.json(&["transcript", "save", "latest-work"]);
    assert_eq!(saved["file"], newest.to_str().unwrap());
    assert_eq!(saved["summary"]["format"], "claude");

    // Another directory has no sessions: a clear refusal.
    let elsewhere = env.work().join("sub");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = env.cairn(&["transcript", "save", "x"]).current_dir(&elsewhere).assert().code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("no Pi or Claude Code session") && err.contains("sub"), "{err}");
}

#[test]
fn delete_needs_force_when_not_interactive() {
    let env = TestEnv::new();
    let file = env.place("pi_v2.jsonl", "s.jsonl");
    env.json(&["transcript", "save", file.to_str().unwrap(), "gone-soon"]);
    let err = env.fails(&["transcript", "delete", "gone-soon"], 2);
    assert!(err.contains("needs --force"), "{err}");
    assert_eq!(env.listed().len(), 1);
    let deleted = env.json(&["transcript", "delete", "gone-soon", "--force"]);
    assert_eq!(deleted["removed"]["name"], "gone-soon");
    assert!(env.listed().is_empty());
    let err = env.fails(&["transcript", "delete", "gone-soon", "--force"], 1);
    assert!(err.contains("no transcript snapshot \"gone-soon\""), "{err}");
}

#[test]
fn list_shows_the_store_and_a_summary_of_each_snapshot() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "s.jsonl");
    // Without `--store`, the store is the default one below HOME.
    let human = env.without_store_flag(&["transcript", "list"]).output().unwrap().stdout;
    let human = String::from_utf8(human).unwrap();
    let default_store = env.home().join(".local/share/cairn");
    assert!(human.contains(&default_store.display().to_string()), "{human}");
    env.json(&["transcript", "save", file.to_str().unwrap(), "flag"]);
    let list = env.json(&["transcript", "list"]);
    assert_eq!(list["store"], env.store().to_str().unwrap());
    let entry = &list["snapshots"][0];
    assert_eq!(entry["name"], "flag");
    assert_eq!(entry["summary"]["format"], "pi");
    assert_eq!(entry["summary"]["first_user_message"], "Add a --verbose flag to the build script.");
    assert_eq!(entry["summary"]["leaf_id"], "c0000005");
}

#[test]
fn the_generic_save_accepts_transcript_targets() {
    let env = TestEnv::new();
    let file = env.place("pi_v3_branched.jsonl", "s.jsonl");
    let target = format!("transcript:{}", file.display());
    let saved = env.json(&["save", &target, "--name", "generic"]);
    assert_eq!(saved["kind"], "transcript");
    let listed = env.listed();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["name"], "generic");
    // And the snapshot store files are private.
    let store = env.store();
    assert_eq!(mode(&store), 0o700);
}

#[test]
fn save_reports_entries_with_secret_shaped_strings_and_a_redacted_export_replaces_them() {
    let env = TestEnv::new();
    let token = format!("ghp_{}", "aB3".repeat(12));
    let key = format!("AKIA{}", "Q3".repeat(8));
    let dir = env.pi_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("2025-02-01T10-00-00-000Z_0194b000.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"0194b000-0000-7000-8000-000000000001","timestamp":"2025-02-01T10:00:00.000Z","cwd":"/home/a/proj"}"#.to_owned(),
        r#"{"type":"message","id":"c0000001","parentId":null,"timestamp":"2025-02-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Show me the CI config."}],"timestamp":1738404001000}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"c0000002","parentId":"c0000001","timestamp":"2025-02-01T10:00:02.000Z","message":{{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{{"type":"text","text":"GH_TOKEN={token}\nAWS_KEY={key}"}}],"isError":false,"timestamp":1738404002000}}}}"#
        ),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let saved = env.json(&["transcript", "save", file.to_str().unwrap(), "ci"]);
    assert_eq!(
        saved["secrets"],
        serde_json::json!([{ "line": 3, "entry": "c0000002", "rules": ["github-token", "aws-access-key-id"] }])
    );
    assert_eq!(saved["details"]["secrets"], saved["secrets"]);
    assert!(!saved.to_string().contains(&token), "the report never holds the secret");

    let plain = env.json(&["transcript", "export", "ci", "-o", "plain.jsonl"]);
    let plain = std::fs::read_to_string(plain["file"].as_str().unwrap()).unwrap();
    assert!(plain.contains(&token), "the snapshot keeps the transcript as written");
    let redacted = env.json(&["transcript", "export", "ci", "-o", "redacted.jsonl", "--redact"]);
    let text = std::fs::read_to_string(redacted["file"].as_str().unwrap()).unwrap();
    assert_eq!(
        text,
        plain.replace(&token, "[REDACTED:github-token]").replace(&key, "[REDACTED:aws-access-key-id]")
    );
    Transcript::read(Path::new(redacted["file"].as_str().unwrap())).expect("a redacted export still parses");
}
