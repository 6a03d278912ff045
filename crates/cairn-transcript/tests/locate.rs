//! Finding session files in the agents' directories.

use std::path::Path;

use cairn_transcript::{AgentDirs, Format, claude_dir_name, list_sessions, newest_session, pi_dir_name};

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

/// A 250-character project path: nineteen `project-workspace-NN` levels under `/home/a`, cut.
fn long_cwd() -> String {
    let levels: Vec<String> = (1..20).map(|i| format!("project-workspace-{i:02}")).collect();
    let mut cwd = format!("/home/a/{}", levels.join("/"));
    cwd.truncate(250);
    cwd
}

#[test]
fn long_claude_names_are_cut_to_200_and_hashed_as_claude_codes_node_build_does() {
    let cwd = long_cwd();
    assert_eq!(cwd.len(), 250);
    // Worked out by hand from Claude Code 2.1.88's rule: the first 200 characters of the
    // sanitised path, `-`, and base 36 of |h| where h = h * 31 + unit over the path's UTF-16
    // units in signed 32-bit arithmetic.
    let expected = "-home-a-project-workspace-01-project-workspace-02-project-workspace-03-\
                    project-workspace-04-project-workspace-05-project-workspace-06-\
                    project-workspace-07-project-workspace-08-project-workspace-09-pro-8fmk60";
    assert_eq!(claude_dir_name(&cwd), expected);
    // Exactly 200 characters are kept whole.
    let at_limit = format!("/{}", "d".repeat(199));
    assert_eq!(claude_dir_name(&at_limit), format!("-{}", "d".repeat(199)));
    // With nothing on disk, that is where a forked session goes.
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    assert_eq!(dirs.claude_dir_for(&cwd), home.path().join(".claude/projects").join(expected));
}

#[test]
fn a_long_path_reuses_the_one_directory_claude_code_made_with_its_prefix() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let projects = home.path().join(".claude/projects");
    let cwd = long_cwd();
    let prefix = &claude_dir_name(&cwd)[..200];
    // A directory Claude Code's native build made, with a hash cairn does not compute, and
    // one that only shares the characters without the `-` after them.
    let native = projects.join(format!("{prefix}-2k9x1qz7f0m3"));
    std::fs::create_dir_all(&native).unwrap();
    std::fs::create_dir_all(projects.join(format!("{prefix}x"))).unwrap();
    assert_eq!(dirs.claude_dir_for(&cwd), native);

    // Two candidates: the name cairn computes, which is Claude Code's Node build's.
    let other = projects.join(format!("{prefix}-5v"));
    std::fs::create_dir_all(&other).unwrap();
    assert_eq!(dirs.claude_dir_for(&cwd), projects.join(claude_dir_name(&cwd)));

    // Short paths keep their plain name whatever is on disk.
    assert_eq!(dirs.claude_dir_for("/home/a/proj"), projects.join("-home-a-proj"));
}

#[test]
fn sessions_of_a_long_path_are_read_from_every_directory_with_its_prefix() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let projects = home.path().join(".claude/projects");
    let cwd = long_cwd();
    let prefix = &claude_dir_name(&cwd)[..200];
    let session = |cwd: &str| {
        format!(
            "{{\"parentUuid\":null,\"sessionId\":\"s\",\"cwd\":{},\"type\":\"user\",\"uuid\":\"u1\"}}\n",
            serde_json::Value::from(cwd)
        )
    };
    let native = projects.join(format!("{prefix}-2k9x1qz7f0m3/a.jsonl"));
    let node = projects.join(claude_dir_name(&cwd)).join("b.jsonl");
    // Another path that agrees on the first 200 characters.
    let stranger_cwd = format!("{}-elsewhere", &cwd[..240]);
    let stranger = projects.join(claude_dir_name(&stranger_cwd)).join("c.jsonl");
    write(&native, &session(&cwd));
    write(&node, &session(&cwd));
    write(&stranger, &session(&stranger_cwd));
    set_mtime(&native, 1_700_000_000);
    set_mtime(&node, 1_600_000_000);
    set_mtime(&stranger, 1_800_000_000);

    let found: Vec<_> = list_sessions(&dirs, &cwd).unwrap().into_iter().map(|f| f.path).collect();
    assert_eq!(found, [native.clone(), node]);
    assert_eq!(newest_session(&dirs, &cwd).unwrap().unwrap().path, native);
    let found: Vec<_> = list_sessions(&dirs, &stranger_cwd).unwrap().into_iter().map(|f| f.path).collect();
    assert_eq!(found, [stranger]);
}
