//! Moments over a directory, a conversation and a Compose project on the machine's real Docker
//! engine (images from `scripts/deps/docker-images.sh`): all three restored together, and a
//! Compose part that fails leaving the directory and the conversation as they were.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{TestEnv, compose_cli};
use serde_json::json;

const SESSION: &str = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f";

/// A project of one busybox service with a named volume, taken down (volumes too) on drop.
struct Project {
    name: String,
    dir: tempfile::TempDir,
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Project {
    fn up(tag: &str) -> Self {
        let name = format!("cairnmoment{tag}{}", std::process::id());
        let dir = tempfile::Builder::new().prefix("cairn-moment-").tempdir().expect("temp dir");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compose/plain.yml");
        std::fs::copy(fixture, dir.path().join("docker-compose.yml")).expect("fixture");
        let project = Self { name, dir };
        project.compose(&["up", "-d"]);
        project
    }

    fn compose(&self, args: &[&str]) {
        run(compose_cli()
            .args(["-p", &self.name, "-f", "docker-compose.yml"])
            .args(args)
            .current_dir(self.dir.path()));
    }

    fn exec(&self, script: &str) -> String {
        let id = run(Command::new("docker").args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=com.docker.compose.project={}", self.name),
            "--filter",
            "label=com.docker.compose.service=app",
        ]));
        run(Command::new("docker").args(["exec", id.trim(), "sh", "-c", script]))
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = compose_cli()
            .args(["-p", &self.name, "-f", "docker-compose.yml", "down", "-v", "-t", "1"])
            .current_dir(self.dir.path())
            .output();
    }
}

fn claude_dir(env: &TestEnv) -> PathBuf {
    env.home()
        .join(".claude/projects")
        .join(cairn_transcript::claude_dir_name(&env.work().display().to_string()))
}

/// Appends Claude Code line `n` (2.0 format) to the session file.
fn say(env: &TestEnv, kind: &str, n: u32, text: &str) {
    use std::io::Write;
    let parent = (n > 1).then(|| format!("00000000-0000-4000-8000-{:012}", n - 1));
    let line = json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": env.work().display().to_string(), "sessionId": SESSION, "version": "2.0.14", "type": kind,
        "message": {"role": kind, "content": text}, "uuid": format!("00000000-0000-4000-8000-{n:012}"),
        "timestamp": format!("2025-10-01T12:00:{n:02}.000Z")});
    std::fs::create_dir_all(claude_dir(env)).unwrap();
    let path = claude_dir(env).join(format!("{SESSION}.jsonl"));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(format!("{line}\n").as_bytes())
        .unwrap();
}

fn sessions(env: &TestEnv) -> usize {
    std::fs::read_dir(claude_dir(env)).unwrap().count()
}

/// A moment of all three, then everything changed.
fn saved_then_changed(env: &TestEnv, p: &Project) {
    env.write("app.py", "v1\n");
    say(env, "user", 1, "Migrate the orders table");
    p.exec("echo one > /data/state.txt");
    let target = format!("compose:{}", p.name);
    let saved = env.json(&["save", ".", "transcript:auto", &target, "--name", "before"]);
    let kinds: Vec<&str> =
        saved["moment"]["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["dir", "transcript", "compose"], "{saved}");
    env.write("app.py", "v2\n");
    env.write("new.txt", "new\n");
    say(env, "assistant", 2, "Migrated.");
    p.exec("echo two > /data/state.txt");
}

#[test]
fn a_moment_of_a_directory_a_conversation_and_a_compose_project_restores_all_three() {
    let env = TestEnv::new();
    let p = Project::up("all");
    saved_then_changed(&env, &p);
    let target = format!("compose:{}", p.name);
    env.ok(&["save", ".", "transcript:auto", &target, "--name", "after"]);
    let diff = env.json(&["diff", "before", "after"]);
    let compose = diff["parts"].as_array().unwrap().iter().find(|p| p["kind"] == "compose").unwrap().clone();
    assert_eq!(compose["change"], "changed", "{diff}");
    let volume = &compose["compose"]["volumes"][0];
    assert_eq!(volume["change"], "changed", "{diff}");
    assert_eq!(
        volume["files"],
        serde_json::json!([{"path": "state.txt", "change": "modified", "old_size": 4, "new_size": 4}])
    );
    let text = env.ok(&["diff", "before", "after"]);
    assert!(text.contains("modified state.txt"), "{text}");

    let back = env.json(&["restore", "before"]);
    let parts = back["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3, "{back}");
    assert!(
        parts.iter().filter(|p| p["kind"] != "transcript").all(|p| p["safety_snapshot"].is_string()),
        "{back}"
    );
    assert_eq!(std::fs::read_to_string(env.work().join("app.py")).unwrap(), "v1\n");
    assert!(!env.work().join("new.txt").exists());
    assert_eq!(p.exec("cat /data/state.txt"), "one\n");
    let file = PathBuf::from(parts[1]["file"].as_str().unwrap());
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("Migrate the orders table") && !text.contains("Migrated."), "{text}");
    assert_eq!(sessions(&env), 2);
}

#[test]
fn a_moment_whose_compose_part_fails_leaves_the_directory_and_the_conversation_as_they_were() {
    let env = TestEnv::new();
    let p = Project::up("fail");
    saved_then_changed(&env, &p);
    // Down, with its volume left behind: a rollback that must not replace it refuses.
    p.compose(&["down", "-t", "1"]);
    env.ok(&["config", "set", "rollback.leftover_volumes", "refuse"]);

    let err = env.fails(&["restore", "before"], 1);
    let err = env.normalize(&err).replace(&p.name, "[PROJECT]");
    insta::assert_snapshot!("moment_compose_part_fails", err);
    assert_eq!(std::fs::read_to_string(env.work().join("app.py")).unwrap(), "v2\n");
    assert_eq!(std::fs::read_to_string(env.work().join("new.txt")).unwrap(), "new\n");
    assert_eq!(sessions(&env), 1, "the new session file was taken back");
}
