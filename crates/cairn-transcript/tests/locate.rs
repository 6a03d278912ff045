//! Finding session files in the agents' directories.

use std::path::Path;

use cairn_transcript::{AgentDirs, Format, claude_dir_name, newest_session, pi_dir_name};

#[test]
fn directory_names_follow_each_agent() {
    assert_eq!(pi_dir_name("/home/a/proj"), "--home-a-proj--");
    assert_eq!(pi_dir_name("/home/a/my_proj.v2"), "--home-a-my_proj.v2--");
    assert_eq!(claude_dir_name("/home/a/proj"), "-home-a-proj");
    assert_eq!(claude_dir_name("/home/a/my_proj.v2"), "-home-a-my-proj-v2");
    assert_eq!(claude_dir_name("/x/é🙂"), "-x----");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const PI_SESSION: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/home/a/proj\"}\n";
const CLAUDE_SESSION: &str = "{\"parentUuid\":null,\"isSidechain\":false,\"sessionId\":\"s\",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"uuid\":\"u1\"}\n";

fn set_mtime(path: &Path, seconds: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    file.set_modified(time).unwrap();
}

#[test]
fn newest_session_looks_in_both_agents() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    assert_eq!(newest_session(&dirs, "/home/a/proj").unwrap(), None);

    let pi = home.path().join(".pi/agent/sessions/--home-a-proj--/2025-01-10T09-00-00-000Z_x.jsonl");
    let claude = home.path().join(".claude/projects/-home-a-proj/abc.jsonl");
    let other = home.path().join(".claude/projects/-home-a-other/new.jsonl");
    let not_jsonl = home.path().join(".claude/projects/-home-a-proj/notes.txt");
    write(&pi, PI_SESSION);
    for file in [&claude, &other, &not_jsonl] {
        write(file, CLAUDE_SESSION);
    }
    set_mtime(&pi, 1_700_000_000);
    set_mtime(&claude, 1_600_000_000);
    set_mtime(&other, 1_800_000_000);
    set_mtime(&not_jsonl, 1_900_000_000);

    let newest = newest_session(&dirs, "/home/a/proj").unwrap().unwrap();
    assert_eq!(newest.path, pi);
    assert_eq!(newest.format, Format::Pi);
    assert_eq!(newest.modified, "2023-11-14T22:13:20Z");

    set_mtime(&claude, 1_750_000_000);
    let newest = newest_session(&dirs, "/home/a/proj").unwrap().unwrap();
    assert_eq!(newest.path, claude);
    assert_eq!(newest.format, Format::Claude);
}

#[test]
fn long_claude_names_are_found_by_prefix() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let cwd = format!("/{}", "d".repeat(250));
    let shortened = format!("{}-1abc2", &claude_dir_name(&cwd)[..200]);
    let file = home.path().join(".claude/projects").join(shortened).join("s.jsonl");
    write(&file, CLAUDE_SESSION);
    assert_eq!(newest_session(&dirs, &cwd).unwrap().unwrap().path, file);
}
