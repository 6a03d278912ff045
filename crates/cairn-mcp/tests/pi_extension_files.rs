//! Issue 40: snapshot files the Pi extension wrote itself (before the user switched to cairn),
//! through the pi profile as an agent sees it: a save of the same name without `force` is
//! refused as the extension refuses it, the file is restorable, and deleting the snapshot
//! removes the `pi --fork` copy cairn wrote. Each test runs in a process of its own (nextest),
//! so the Pi directory is set in the environment.

mod common;

use common::Harness;
use serde_json::json;

/// A Pi session of two messages, as the extension writes a snapshot (the active path, with
/// the session header Pi's `--fork` reads).
fn pi_session(cwd: &str, words: &str) -> String {
    [
        json!({"type": "session", "version": 3, "id": "0191e000-aaaa-7bbb-8ccc-000000000001", "timestamp": "2026-05-01T10:00:00.000Z", "cwd": cwd}),
        json!({"type": "message", "id": "a1b2c3d4", "parentId": null, "timestamp": "2026-05-01T10:00:01.000Z", "message": {"role": "user", "content": words, "timestamp": 1}}),
        json!({"type": "message", "id": "b2c3d4e5", "parentId": "a1b2c3d4", "timestamp": "2026-05-01T10:00:02.000Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "stop", "timestamp": 2}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

#[tokio::test]
async fn an_extension_snapshot_file_is_protected_restorable_and_removed_with_its_snapshot() {
    let h = Harness::start_with(|o| {
        o.profile = "pi".into();
        o.allow = vec!["transcript-save".into(), "transcript-restore".into()];
    })
    .await;
    let pi = h.dir.path().join("pi-agent");
    let cwd = std::env::current_dir().unwrap().to_string_lossy().into_owned();
    let live = h.dir.path().join("live.jsonl");
    std::fs::write(&live, pi_session(&cwd, "Live work.")).unwrap();
    let extension = pi.join("pi-session-snapshot");
    std::fs::create_dir_all(&extension).unwrap();
    let theirs = extension.join("baseline.jsonl");
    let written = pi_session(&cwd, "Onboarding, saved by the extension.");
    std::fs::write(&theirs, &written).unwrap();
    // SAFETY: nextest runs this test alone in its process; the server reads the Pi directory
    // from the environment at call time, as it does in a real Pi session.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("PI_CODING_AGENT_DIR", &pi);
        std::env::set_var("CAIRN_TRANSCRIPT", &live);
    }

    let refused = h.err("snapshot_save", json!({"name": "baseline"})).await;
    assert_eq!(
        refused,
        format!(
            "a snapshot named \"baseline\" already exists ({}); pick another name, or set force: true to replace it",
            theirs.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), written);

    let restored = h.ok("snapshot_restore", json!({"name": "baseline"})).await;
    let session = std::fs::read_to_string(restored["session_file"].as_str().unwrap()).unwrap();
    assert!(session.contains("Onboarding, saved by the extension."), "{session}");

    // A name of cairn's own: its fork copy goes with the snapshot.
    let saved = h.ok("snapshot_save", json!({"name": "mine"})).await;
    let fork = std::path::PathBuf::from(saved["fork_file"].as_str().unwrap());
    assert!(fork.is_file());
    let store = cairn_lib::Repository::open(&h.dir.path().join("store")).unwrap();
    let options = cairn_lib::ops::transcript::TranscriptDeleteOptions { name: "mine".into(), session: None };
    let deleted = store.transcript_delete(&options, &Default::default()).unwrap();
    assert_eq!(deleted.fork_file_removed.as_deref(), Some(fork.as_path()));
    assert!(!fork.exists());
    assert!(theirs.is_file(), "the extension's own file is left alone");
}
