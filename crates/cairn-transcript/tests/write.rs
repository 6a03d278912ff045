//! Writing saved paths back: loaded sessions, exports, permissions, refusals.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_transcript::{
    ActivePath, AgentDirs, Format, LoadOptions, Transcript, TranscriptError, export_session, load_session,
};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn saved(name: &str) -> ActivePath {
    Transcript::read(&fixture(name)).unwrap().active_path()
}

fn ids(path: &ActivePath) -> Vec<Option<String>> {
    path.entries.iter().map(|e| e.id.clone()).collect()
}

fn options(cwd: &str) -> LoadOptions {
    LoadOptions {
        cwd: cwd.to_owned(),
        parent_session: None,
        rewrite_cwd: false,
        note: None,
        attached: Vec::new(),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn header_of(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[test]
fn pi_load_writes_a_new_session_with_the_same_path() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let path = saved("pi_v3_branched.jsonl");
    let written = load_session(&path, &dirs, &options("/home/b/work")).unwrap();

    assert_eq!(written.format, Format::Pi);
    let dir = home.path().join(".pi/agent/sessions/--home-b-work--");
    assert_eq!(written.path.parent(), Some(dir.as_path()));
    let name = written.path.file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with(&format!("_{}.jsonl", written.session_id)), "{name}");
    assert_eq!(mode(&written.path), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(
        written.resume_command.as_deref(),
        Some(format!("pi --session {}", written.path.display()).as_str())
    );
    assert_eq!(
        written.fork_command.as_deref(),
        Some(format!("pi --fork {}", written.path.display()).as_str())
    );

    let header = header_of(&written.path);
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert_eq!(header["id"], written.session_id.as_str());
    assert_eq!(header["cwd"], "/home/b/work");
    assert_eq!(header["parentSession"], path.source.as_str());
    assert_ne!(header["id"], "0193a1f0-4b2c-7d10-9e8f-1a2b3c4d5e6f");

    let reloaded = Transcript::read(&written.path).unwrap();
    assert_eq!(reloaded.format(), Format::Pi);
    let again = reloaded.active_path();
    assert_eq!(ids(&again), ids(&path));
    // Entries of a version 3 session are written byte-for-byte.
    let texts = |p: &ActivePath| p.entries.iter().map(|e| e.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&again), texts(&path));
}

#[test]
fn pi_v1_and_v2_are_written_as_version_3() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    for name in ["pi_v1_linear.jsonl", "pi_v2.jsonl"] {
        let path = saved(name);
        let written = load_session(&path, &dirs, &options("/p")).unwrap();
        let reloaded = Transcript::read(&written.path).unwrap();
        assert_eq!(reloaded.pi_version(), Some(3), "{name}");
        assert_eq!(ids(&reloaded.active_path()), ids(&path), "{name}");
        let text = std::fs::read_to_string(&written.path).unwrap();
        assert!(!text.contains("hookMessage"), "{name}: {text}");
        assert!(text.contains(r#""role":"custom""#), "{name}");
    }
    // The version 1 compaction now names the entry its index pointed at.
    let path = saved("pi_v1_linear.jsonl");
    let exported = home.path().join("v1.jsonl");
    export_session(&path, &exported, false).unwrap();
    let reloaded = Transcript::read(&exported).unwrap();
    let compaction = reloaded.entries().iter().find(|e| e.kind == "compaction").unwrap();
    let value: Value = serde_json::from_str(&compaction.text).unwrap();
    assert_eq!(value["firstKeptEntryId"].as_str(), path.entries[1].id.as_deref());
    assert_eq!(header_of(&exported)["id"], "0191e000-aaaa-7bbb-8ccc-000000000001");
}

#[test]
fn claude_load_rewrites_session_ids_only() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let path = saved("claude_sidechain.jsonl");
    let written = load_session(&path, &dirs, &options("/home/a/my_proj.v2")).unwrap();

    let dir = home.path().join(".claude/projects/-home-a-my-proj-v2");
    assert_eq!(written.path, dir.join(format!("{}.jsonl", written.session_id)));
    assert_eq!(written.resume_command, Some(format!("claude --resume {}", written.session_id)));
    assert_eq!(mode(&written.path), 0o600);

    let reloaded = Transcript::read(&written.path).unwrap();
    assert_eq!(reloaded.format(), Format::Claude);
    assert_eq!(reloaded.session_id(), Some(written.session_id.as_str()));
    assert_eq!(reloaded.cwd(), Some("/home/a/proj"));
    let again = reloaded.active_path();
    assert_eq!(ids(&again), ids(&path));
    for (new, old) in again.entries.iter().zip(&path.entries) {
        let expected = old.text.replace("5f2c7e3a-1111-4222-8333-444455556666", &written.session_id);
        assert_eq!(new.text, expected);
    }
}

#[test]
fn claude_load_can_rewrite_cwd() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let mut opts = options("/srv/other");
    opts.rewrite_cwd = true;
    let written = load_session(&saved("claude_sidechain.jsonl"), &dirs, &opts).unwrap();
    let reloaded = Transcript::read(&written.path).unwrap();
    assert!(
        reloaded
            .entries()
            .iter()
            .filter(|e| e.id.is_some())
            .all(|e| e.text.contains(r#""cwd":"/srv/other""#))
    );
}

#[test]
fn export_writes_a_v3_file_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("private/baseline.jsonl");
    let path = saved("pi_v3_branched.jsonl");
    let written = export_session(&path, &dest, false).unwrap();
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), path.document());
    assert_eq!(written.fork_command, Some(format!("pi --fork {}", dest.display())));
    assert_eq!(mode(&dest), 0o600);
    assert_eq!(mode(&dir.path().join("private")), 0o700);

    let err = export_session(&path, &dest, false).unwrap_err();
    assert!(matches!(err, TranscriptError::Exists { .. }), "{err}");
    export_session(&path, &dest, true).unwrap();
}

#[test]
fn a_path_that_would_not_parse_again_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let mut path = saved("pi_v3_branched.jsonl");
    // The root written twice: two entries with one id. (A path that starts at an entry whose
    // parent is gone is written: it comes from a file whose parent line was unreadable.)
    let root = path.entries[0].clone();
    path.entries.push(root);
    let err = load_session(&path, &dirs, &options("/p")).unwrap_err();
    assert!(matches!(err, TranscriptError::WouldBeInvalid { .. }), "{err}");
    assert!(err.to_string().contains("reuses id a0000001"), "{err}");
    assert!(!home.path().join(".pi").exists());
}
