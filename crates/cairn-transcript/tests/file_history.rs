//! A forked Claude Code session takes its file-history backups with it.
//!
//! The fixture follows Claude Code 2.1.88's layout: backups in
//! `<config>/file-history/<session id>/<16 hex digits>@v<N>`, and in the transcript one
//! `file-history-snapshot` line per prompt, keyed by the prompt's uuid.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use cairn_transcript::{ActivePath, AgentDirs, LoadOptions, Transcript, WrittenSession, load_session};
use serde_json::{Value, json};

const OLD: &str = "0197a1b2-0000-7000-8000-00000000a11d";
const CWD: &str = "/home/a/proj";

fn message(uuid: &str, parent: Option<&str>, kind: &str, text: &str) -> String {
    json!({
        "parentUuid": parent, "isSidechain": false, "cwd": CWD, "sessionId": OLD, "type": kind,
        "message": {"role": kind, "content": text}, "uuid": uuid,
        "timestamp": "2026-04-20T10:00:00.000Z"
    })
    .to_string()
}

/// A `file-history-snapshot` line for prompt `prompt`, tracking `(path, backup, version)`.
fn snapshot(prompt: &str, backups: &[(&str, Option<&str>, u32)], update: bool) -> String {
    let tracked: serde_json::Map<String, Value> = backups
        .iter()
        .map(|(path, backup, version)| {
            let entry = json!({"backupFileName": backup, "version": version, "backupTime": "2026-04-20T10:00:00.000Z"});
            ((*path).to_owned(), entry)
        })
        .collect();
    json!({
        "type": "file-history-snapshot", "messageId": prompt,
        "snapshot": {"messageId": prompt, "trackedFileBackups": tracked, "timestamp": "2026-04-20T10:00:00.000Z"},
        "isSnapshotUpdate": update
    })
    .to_string()
}

/// Three prompts. `src/a.rs` is backed up before prompts 1 and 2; `src/new.rs` did not exist
/// before prompt 1; `src/b.rs` is tracked from prompt 2 on, and its backup is gone from disk;
/// prompt 3's snapshot, written just before prompt 3, names `src/c.rs`.
fn lines() -> Vec<String> {
    vec![
        snapshot("u1", &[("src/a.rs", Some("1a2b3c4d5e6f7a8b@v1"), 1)], false),
        message("u1", None, "user", "first"),
        message("a1", Some("u1"), "assistant", "done one"),
        snapshot("u1", &[("src/a.rs", Some("1a2b3c4d5e6f7a8b@v1"), 1), ("src/new.rs", None, 1)], true),
        snapshot(
            "u2",
            &[("src/a.rs", Some("1a2b3c4d5e6f7a8b@v2"), 2), ("src/b.rs", Some("9f8e7d6c5b4a3928@v1"), 1)],
            false,
        ),
        message("u2", Some("a1"), "user", "second"),
        message("a2", Some("u2"), "assistant", "done two"),
        snapshot("u3", &[("src/c.rs", Some("0c0c0c0c0c0c0c0c@v1"), 1)], false),
        message("u3", Some("a2"), "user", "third"),
        message("a3", Some("u3"), "assistant", "done three"),
    ]
}

struct Setup {
    _home: tempfile::TempDir,
    config: PathBuf,
    dirs: AgentDirs,
}

/// A Claude config directory holding the session and every backup but `9f8e…@v1`.
fn setup() -> (Setup, ActivePath) {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".claude");
    let dirs = AgentDirs::from_home(home.path());
    let session = dirs.claude_dir_for(CWD).join(format!("{OLD}.jsonl"));
    std::fs::create_dir_all(session.parent().unwrap()).unwrap();
    std::fs::write(&session, lines().join("\n") + "\n").unwrap();
    let backups = config.join("file-history").join(OLD);
    std::fs::create_dir_all(&backups).unwrap();
    for name in ["1a2b3c4d5e6f7a8b@v1", "1a2b3c4d5e6f7a8b@v2", "0c0c0c0c0c0c0c0c@v1"] {
        std::fs::write(backups.join(name), format!("contents of {name}\n")).unwrap();
    }
    let path = Transcript::read(&session).unwrap().active_path();
    (Setup { _home: home, config, dirs }, path)
}

/// The engine's cut before a prompt: the path ends just before `prompt`'s entry.
fn cut_before(mut path: ActivePath, prompt: &str) -> ActivePath {
    let at = path.entries.iter().position(|e| e.id.as_deref() == Some(prompt)).unwrap();
    path.entries.truncate(at);
    path
}

fn load(setup: &Setup, path: &ActivePath) -> WrittenSession {
    let options = LoadOptions {
        cwd: CWD.to_owned(),
        parent_session: None,
        rewrite_cwd: false,
        note: None,
        attached: vec![],
    };
    load_session(path, &setup.dirs, &options).unwrap()
}

fn snapshots_in(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "file-history-snapshot")
        .collect()
}

fn tracked(snapshot: &Value) -> Vec<String> {
    snapshot["snapshot"]["trackedFileBackups"].as_object().unwrap().keys().cloned().collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

#[test]
fn a_fork_links_the_backups_of_the_prompts_it_keeps_and_drops_the_other_snapshots() {
    let (setup, path) = setup();
    let written = load(&setup, &cut_before(path, "u3"));

    let snapshots = snapshots_in(&written.path);
    let keys: Vec<&str> = snapshots.iter().map(|s| s["messageId"].as_str().unwrap()).collect();
    assert_eq!(keys, ["u1", "u1", "u2"], "prompt 3's snapshot leaves with prompt 3");
    // Lines that lose nothing are written exactly as they were.
    let text = std::fs::read_to_string(&written.path).unwrap();
    assert!(text.lines().any(|l| l == lines()[0]));
    assert!(text.lines().any(|l| l == lines()[3]));

    let old = setup.config.join("file-history").join(OLD);
    let new = setup.config.join("file-history").join(&written.session_id);
    assert_eq!(written.file_history.as_deref(), Some(new.as_path()));
    assert_eq!(names_in(&new), ["1a2b3c4d5e6f7a8b@v1", "1a2b3c4d5e6f7a8b@v2"]);
    for name in names_in(&new) {
        let (was, is) =
            (std::fs::metadata(old.join(&name)).unwrap(), std::fs::metadata(new.join(&name)).unwrap());
        assert_eq!(was.ino(), is.ino(), "{name} is a hard link to the old session's backup");
    }
    assert_eq!(names_in(&old).len(), 3, "the old session keeps its backups");
}

#[test]
fn a_backup_that_is_gone_is_taken_out_of_its_snapshot() {
    let (setup, path) = setup();
    let written = load(&setup, &cut_before(path, "u3"));

    let snapshots = snapshots_in(&written.path);
    let prompt2 = snapshots.iter().find(|s| s["messageId"] == "u2").unwrap();
    assert_eq!(tracked(prompt2), ["src/a.rs"], "src/b.rs's backup is not on disk");
    let a = &prompt2["snapshot"]["trackedFileBackups"]["src/a.rs"];
    assert_eq!(a["backupFileName"], "1a2b3c4d5e6f7a8b@v2");
    assert_eq!(a["version"], 2);
    // A file that did not exist yet (`null`) has no backup to carry and stays.
    let update = snapshots.iter().find(|s| s["isSnapshotUpdate"] == true).unwrap();
    assert_eq!(tracked(update), ["src/a.rs", "src/new.rs"]);

    // Every backup a snapshot of the fork names is in the fork's own directory.
    let new = setup.config.join("file-history").join(&written.session_id);
    for snapshot in &snapshots {
        for backup in snapshot["snapshot"]["trackedFileBackups"].as_object().unwrap().values() {
            if let Some(name) = backup["backupFileName"].as_str() {
                assert!(new.join(name).is_file(), "{name} is carried");
            }
        }
    }
}

#[test]
fn a_fork_whose_backups_are_all_gone_makes_no_backup_directory() {
    let (setup, path) = setup();
    std::fs::remove_dir_all(setup.config.join("file-history").join(OLD)).unwrap();
    let written = load(&setup, &path);
    assert_eq!(written.file_history, None);
    assert_eq!(names_in(&setup.config.join("file-history")), Vec::<String>::new());
    let snapshots = snapshots_in(&written.path);
    assert_eq!(snapshots.len(), 4, "every prompt is kept, so is every snapshot");
    let named: usize =
        snapshots.iter().map(|s| s["snapshot"]["trackedFileBackups"].as_object().unwrap().len()).sum();
    assert_eq!(named, 1, "only src/new.rs's `null` is left");
}
