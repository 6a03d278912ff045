//! Gemini CLI session files: reading the current JSONL log and the legacy single object,
//! taking the active conversation, and writing it back where `gemini --resume` finds it.

use std::path::Path;

use cairn_transcript::{
    AgentDirs, Format, LoadOptions, Transcript, TranscriptError, export_session, gemini_chats_dir,
    gemini_project_hash, load_gemini_session, load_session,
};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn ids(t: &Transcript) -> Vec<String> {
    t.active_path().entries.iter().filter_map(|e| e.id.clone()).collect()
}

#[test]
fn a_jsonl_session_replays_updates_and_rewinds() {
    let t = Transcript::read(&fixture("gemini_session.jsonl")).unwrap();
    assert_eq!(t.format(), Format::Gemini);
    assert_eq!(t.session_id(), Some("b2e7d4c1-93a8-4f6e-8d20-5c1a7e9f3b64"));
    // The tool call's message was appended twice: one entry, the last copy, in the first place;
    // the rewind dropped "Now drop the table" and its answer.
    assert_eq!(
        ids(&t),
        [
            "7c9a1e52-0b6d-4f3a-9e21-3d8f5a6b7c01",
            "e4f2b8a1-6c3d-4e5f-8a9b-0c1d2e3f4a52",
            "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c53",
            "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e56",
            "6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b57",
        ]
    );
    let path = t.active_path();
    assert!(path.entries[1].text.contains("\"status\":\"success\""));
    assert_eq!(path.entries[1].line, 5);
    let header: serde_json::Value = serde_json::from_str(path.header.as_deref().unwrap()).unwrap();
    assert_eq!(header["summary"], "Rename orders column");
    assert_eq!(header["lastUpdated"], "2026-11-30T14:04:09.890Z");
    let summary = path.summary();
    assert_eq!(summary.first_user_message.as_deref(), Some("Rename the orders column note to remark"));
    assert_eq!(summary.entry_count, 5);
    assert_eq!(summary.leaf_id.as_deref(), Some("6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b57"));
}

#[test]
fn the_saved_document_is_itself_a_session_with_the_same_conversation() {
    let t = Transcript::read(&fixture("gemini_session.jsonl")).unwrap();
    let document = t.active_path().document();
    let again = Transcript::parse("saved", &document).unwrap();
    assert_eq!(again.format(), Format::Gemini);
    assert_eq!(ids(&again), ids(&t));
    assert_eq!(
        again.active_path().entries,
        t.active_path()
            .entries
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, mut e)| {
                e.line = i + 2;
                e
            })
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_legacy_session_object_is_read_too() {
    let t = Transcript::read(&fixture("gemini_legacy.json")).unwrap();
    assert_eq!(t.format(), Format::Gemini);
    assert_eq!(ids(&t), ["m-user-1", "m-gemini-1", "m-info-1"]);
    let summary = t.active_path().summary();
    assert_eq!(summary.first_user_message.as_deref(), Some("What does orders.py do?"));
    assert_eq!(summary.session_id.as_deref(), Some("41d5c0e2-8a7b-4c6d-9e5f-0a1b2c3d4e60"));
}

#[test]
fn the_project_hash_is_the_sha256_of_the_path() {
    assert_eq!(
        gemini_project_hash("/home/dev/shop"),
        "e828acfc792e3bbcd2a6c6c35323cb44b7b438741c168c8ec59aefe347f193bb"
    );
}

#[test]
fn a_loaded_session_goes_to_the_projects_registered_directory_with_a_new_id() {
    let gemini = tempfile::tempdir().unwrap();
    let cwd = "/home/dev/shop";
    std::fs::write(gemini.path().join("projects.json"), r#"{"projects": {"/home/dev/shop": "shop"}}"#)
        .unwrap();
    std::fs::create_dir_all(gemini.path().join("tmp/shop")).unwrap();
    std::fs::write(gemini.path().join("tmp/shop/.project_root"), cwd).unwrap();

    let saved = Transcript::read(&fixture("gemini_session.jsonl")).unwrap().active_path();
    let written = load_gemini_session(&saved, gemini.path(), cwd).unwrap();
    assert_eq!(written.path.parent().unwrap(), gemini.path().join("tmp/shop/chats"));
    let name = written.path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("session-") && name.ends_with(&format!("-{}.jsonl", &written.session_id[..8])),
        "{name}"
    );
    assert_eq!(
        written.resume_command.as_deref(),
        Some(format!("gemini --resume {}", written.session_id).as_str())
    );

    let loaded = Transcript::read(&written.path).unwrap();
    assert_eq!(loaded.session_id(), Some(written.session_id.as_str()));
    assert_ne!(written.session_id, "b2e7d4c1-93a8-4f6e-8d20-5c1a7e9f3b64");
    assert_eq!(ids(&loaded), ids(&Transcript::read(&fixture("gemini_session.jsonl")).unwrap()));
    let header: serde_json::Value =
        serde_json::from_str(loaded.active_path().header.as_deref().unwrap()).unwrap();
    assert_eq!(header["projectHash"], gemini_project_hash(cwd));
    assert_eq!(header["summary"], "Rename orders column");
    assert_ne!(header["startTime"], "2026-11-30T14:02:10.221Z");
}

#[test]
fn a_project_gemini_cli_has_not_named_gets_the_hash_directory() {
    let gemini = tempfile::tempdir().unwrap();
    let dir = gemini_chats_dir(gemini.path(), "/home/dev/shop");
    assert_eq!(dir, gemini.path().join("tmp").join(gemini_project_hash("/home/dev/shop")).join("chats"));
    // A marker names the directory even without a registry entry.
    std::fs::create_dir_all(gemini.path().join("tmp/shop-1")).unwrap();
    std::fs::write(gemini.path().join("tmp/shop-1/.project_root"), "/home/dev/shop\n").unwrap();
    assert_eq!(gemini_chats_dir(gemini.path(), "/home/dev/shop"), gemini.path().join("tmp/shop-1/chats"));
}

#[test]
fn export_writes_a_session_and_load_session_asks_for_geminis_directory() {
    let out = tempfile::tempdir().unwrap();
    let saved = Transcript::read(&fixture("gemini_legacy.json")).unwrap().active_path();
    let written = export_session(&saved, &out.path().join("s.jsonl"), false).unwrap();
    assert_eq!(Transcript::read(&written.path).unwrap().format(), Format::Gemini);
    let mut dirs = AgentDirs::from_home(out.path());
    dirs.gemini = None;
    let options = LoadOptions {
        cwd: "/x".into(),
        parent_session: None,
        rewrite_cwd: false,
        attached: Vec::new(),
        note: None,
    };
    assert!(matches!(load_session(&saved, &dirs, &options), Err(TranscriptError::GeminiDirNeeded)));

    // With Gemini CLI's directory named, the session is written where `gemini --resume` looks,
    // and the newest session of the project is that one.
    let dirs = AgentDirs::from_home(out.path());
    let written = load_session(&saved, &dirs, &options).unwrap();
    assert!(written.path.starts_with(out.path().join(".gemini/tmp")), "{}", written.path.display());
    let texts =
        |p: &cairn_transcript::ActivePath| p.entries.iter().map(|e| e.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&Transcript::read(&written.path).unwrap().active_path()), texts(&saved));
    let newest = cairn_transcript::newest_session(&dirs, "/x").unwrap().unwrap();
    assert_eq!((newest.path, newest.format), (written.path, Format::Gemini));
}

#[test]
fn a_message_without_an_id_in_a_checkpoint_is_refused_with_its_line() {
    let text =
        "{\"sessionId\":\"s\",\"projectHash\":\"h\"}\n{\"$set\":{\"messages\":[{\"type\":\"user\"}]}}\n";
    let err = Transcript::parse("f.jsonl", text).unwrap_err();
    assert!(err.to_string().starts_with("f.jsonl line 2 has no \"id\""), "{err}");
}
