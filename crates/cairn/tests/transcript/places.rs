//! Where `cairn transcript save` (without a file) looks for sessions and where `load` writes
//! them: `--pi-dir` / `--claude-dir`, else the agents' own `PI_CODING_AGENT_DIR` /
//! `CLAUDE_CONFIG_DIR`, else the defaults under HOME.

use std::path::{Path, PathBuf};

use cairn_transcript::{Format, Transcript, claude_dir_name, pi_dir_name};
use serde_json::Value;

use crate::{Agents, TestEnv, files_under, fixture, mode};

/// Copies a fixture to `dir/file_name`, creating `dir`.
fn put(fixture_name: &str, dir: &Path, file_name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let dest = dir.join(file_name);
    std::fs::copy(fixture(fixture_name), &dest).unwrap();
    dest
}

/// Makes `file` an hour old, so that any other session is newer.
fn age(file: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(file).unwrap().set_modified(past).unwrap();
}

/// Runs `cairn ARGS --json` with extra environment variables; asserts success.
fn json_with(env: &TestEnv, vars: &[(&str, &Path)], args: &[&str]) -> Value {
    let mut cmd = env.cairn(args);
    for (key, value) in vars {
        cmd.env(key, value);
    }
    let out = cmd.arg("--json").assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

/// Saves the newest session and loads it back, both with `vars` and `flags` saying
/// where the agent keeps its sessions; returns (saved, loaded).
fn save_and_load(env: &TestEnv, vars: &[(&str, &Path)], flags: &[&str]) -> (Value, Value) {
    let mut save = vec!["transcript", "save", "here"];
    save.extend_from_slice(flags);
    let saved = json_with(env, vars, &save);
    let mut load = vec!["transcript", "load", "here"];
    load.extend_from_slice(flags);
    let loaded = json_with(env, vars, &load);
    (saved, loaded)
}

#[test]
fn pi_dir_names_where_pi_sessions_are_read_and_written() {
    let env = TestEnv::new();
    let custom = env.home().with_file_name("pi-sessions");
    let project_dir = custom.join(pi_dir_name(&env.cwd()));
    let session = put("pi_v3_branched.jsonl", &project_dir, "2025-01-10T09-00-00-000Z_a.jsonl");
    age(&session);
    // A newer Pi session in the default place must not be taken.
    let decoy = env.place("pi_v2.jsonl", "decoy.jsonl");

    let (saved, loaded) = save_and_load(&env, &[], &["--pi-dir", custom.to_str().unwrap()]);
    assert_eq!(saved["file"], session.to_str().unwrap());
    let written = PathBuf::from(loaded["file"].as_str().unwrap());
    assert_eq!(written.parent(), Some(project_dir.as_path()));
    assert_eq!(Transcript::read(&written).unwrap().format(), Format::Pi);
    assert_eq!(mode(&written), 0o600);
    assert_eq!(files_under(&env.pi_dir()), [decoy], "nothing is written to the default place");
}

#[test]
fn claude_dir_names_where_claude_sessions_are_read_and_written() {
    let env = TestEnv::new();
    let custom = env.home().with_file_name("claude-projects");
    let project_dir = custom.join(claude_dir_name(&env.cwd()));
    let session = put("claude_sidechain.jsonl", &project_dir, "5f2c7e3a-1111-4222-8333-444455556666.jsonl");
    age(&session);
    let decoy = env.place("claude_sidechain.jsonl", "decoy.jsonl");

    let (saved, loaded) = save_and_load(&env, &[], &["--claude-dir", custom.to_str().unwrap()]);
    assert_eq!(saved["file"], session.to_str().unwrap());
    let id = loaded["session_id"].as_str().unwrap();
    let written = PathBuf::from(loaded["file"].as_str().unwrap());
    assert_eq!(written, project_dir.join(format!("{id}.jsonl")));
    assert_eq!(Transcript::read(&written).unwrap().format(), Format::Claude);
    assert_eq!(files_under(&env.claude_dir()), [decoy], "nothing is written to the default place");
}

#[test]
fn pi_coding_agent_dir_holds_the_sessions_directory() {
    let env = TestEnv::new();
    let agent = env.home().with_file_name("pi-agent");
    let project_dir = agent.join("sessions").join(pi_dir_name(&env.cwd()));
    let session = put("pi_v1_linear.jsonl", &project_dir, "2024-08-01T10-00-00-000Z_b.jsonl");
    age(&session);
    let decoy = env.place("pi_v2.jsonl", "decoy.jsonl");

    let (saved, loaded) = save_and_load(&env, &[("PI_CODING_AGENT_DIR", &agent)], &[]);
    assert_eq!(saved["file"], session.to_str().unwrap());
    let written = PathBuf::from(loaded["file"].as_str().unwrap());
    assert_eq!(written.parent(), Some(project_dir.as_path()));
    assert_eq!(loaded["resume_command"], format!("pi --session {}", written.display()));
    assert_eq!(files_under(&env.pi_dir()), [decoy]);
}

#[test]
fn claude_config_dir_holds_the_projects_directory() {
    let env = TestEnv::new();
    let config = env.home().with_file_name("claude-config");
    let project_dir = config.join("projects").join(claude_dir_name(&env.cwd()));
    let session = put("claude_sidechain.jsonl", &project_dir, "5f2c7e3a-1111-4222-8333-444455556666.jsonl");
    age(&session);
    let decoy = env.place("claude_sidechain.jsonl", "decoy.jsonl");

    let (saved, loaded) = save_and_load(&env, &[("CLAUDE_CONFIG_DIR", &config)], &[]);
    assert_eq!(saved["file"], session.to_str().unwrap());
    let id = loaded["session_id"].as_str().unwrap();
    assert_eq!(loaded["file"], project_dir.join(format!("{id}.jsonl")).to_str().unwrap());
    assert_eq!(files_under(&env.claude_dir()), [decoy]);
}

#[test]
fn a_flag_wins_over_the_agents_variable() {
    let env = TestEnv::new();
    let from_var = env.home().with_file_name("pi-agent");
    let var_session = put("pi_v2.jsonl", &from_var.join("sessions").join(pi_dir_name(&env.cwd())), "v.jsonl");
    let flag_dir = env.home().with_file_name("pi-flag");
    let project_dir = flag_dir.join(pi_dir_name(&env.cwd()));
    let flag_session = put("pi_v3_branched.jsonl", &project_dir, "f.jsonl");
    age(&flag_session);

    let (saved, loaded) =
        save_and_load(&env, &[("PI_CODING_AGENT_DIR", &from_var)], &["--pi-dir", flag_dir.to_str().unwrap()]);
    assert_eq!(saved["file"], flag_session.to_str().unwrap());
    assert_eq!(Path::new(loaded["file"].as_str().unwrap()).parent(), Some(project_dir.as_path()));
    assert_eq!(files_under(var_session.parent().unwrap()), std::slice::from_ref(&var_session));
}
