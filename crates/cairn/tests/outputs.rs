//! The whole output of every command, human and `--json`, with its documented refusals and
//! usage errors: stdout, stderr and the exit code of each run, pinned as snapshots
//! (`snapshots/outputs__*.snap`). Ids, times, durations and the temp root are replaced by
//! stable tokens (see `TestEnv::normalize`); `[ID1]` is the same id everywhere in one file.

mod common;

use common::TestEnv;

/// A work tree with a text file, a nested file and an executable.
fn tree(env: &TestEnv) {
    env.write("README", "hello\n");
    env.write("src/main.rs", "fn main() {}\n");
    env.write("run.sh", "#!/bin/sh\necho hi\n");
}

#[test]
fn save_list_and_show() {
    let env = TestEnv::new();
    tree(&env);
    env.write(".gitignore", "*.log\n");
    env.write("build.log", "noise\n");
    assert_cli!(
        env,
        "save",
        [
            ["save"],
            ["--json", "save", "--name", "first", "--description", "before the refactor"],
            ["save", "--name", "first"],
            ["save", "--name", "first", "--force", "--no-ignore"],
            ["save", "--name", "../x"],
            ["save", "missing-dir"],
            ["save", "--session", "nope"],
            ["save", "--bogus"],
        ]
    );
    assert_cli!(
        env,
        "list",
        [
            ["list"],
            ["--json", "list"],
            ["list", "--sort", "asc"],
            ["list", "--sort", "sideways"],
            ["list", "elsewhere"],
            ["ls", "--session", "nope"],
        ]
    );
    assert_cli!(
        env,
        "show",
        [
            ["show", "latest"],
            ["--json", "show", "first"],
            ["show", "nope"],
            ["--json", "show", "nope"],
            ["show", ""]
        ]
    );
}

#[test]
fn restore_in_place_into_a_directory_and_dry_runs() {
    let env = TestEnv::new();
    tree(&env);
    env.ok(&["save", "--name", "base"]);
    env.write("README", "changed\n");
    env.write("new.txt", "new\n");
    std::fs::remove_file(env.work().join("run.sh")).unwrap();
    std::fs::create_dir_all(env.root().join("full")).unwrap();
    env.write("../full/occupied", "x");
    assert_cli!(
        env,
        "restore",
        [
            ["restore", "base", "--dry-run"],
            ["--json", "restore", "base", "--dry-run"],
            ["restore", "base"],
            ["restore", "base"],
            ["restore", "base", "--to", "../copy", "--dry-run"],
            ["--json", "restore", "base", "--to", "../copy"],
            ["restore", "base", "--to", "../full"],
            ["restore", "nope"],
            ["restore"],
        ]
    );
}

#[test]
fn diff_against_the_live_tree_and_between_snapshots() {
    let env = TestEnv::new();
    tree(&env);
    env.write("gone.txt", "bye\n");
    env.ok(&["save", "--name", "a"]);
    env.write("README", "hello\nworld\n");
    env.write("added/file.txt", "new\n");
    std::fs::remove_file(env.work().join("gone.txt")).unwrap();
    assert_cli!(
        env,
        "diff",
        [
            ["diff", "a"],
            ["--json", "diff", "a"],
            ["save", "--name", "b"],
            ["diff", "a", "b"],
            ["diff", "a", "b", "--stat"],
            ["diff", "a", "b", "--patch"],
            ["--json", "diff", "a", "b", "--patch"],
            ["diff", "b", "b"],
            ["diff", "nope"],
            ["diff"],
        ]
    );
}

#[test]
fn remove_by_reference_and_by_retention() {
    let env = TestEnv::new();
    tree(&env);
    for name in ["one", "two", "three"] {
        env.write("README", name);
        env.ok(&["save", "--name", name]);
    }
    assert_cli!(
        env,
        "remove",
        [
            ["remove", "--retain-recent", "1", "--dry-run"],
            ["--json", "remove", "one", "--dry-run"],
            ["remove", "one"],
            ["--json", "rm", "two"],
            ["remove", "one"],
            ["remove"],
            ["remove", "three", "--retain-recent", "1"],
            ["remove", "--retain-for", "forever"],
            ["remove", "--before-date", "yesterday"],
            ["list"],
        ]
    );
}

#[test]
fn sessions_create_set_unset_current_and_delete() {
    let env = TestEnv::new();
    tree(&env);
    env.ok(&["save", "--name", "base"]);
    assert_cli!(
        env,
        "session",
        [
            ["session", "list"],
            ["session", "create", "work", "--from", "baseline"],
            ["--json", "session", "create", "other"],
            ["session", "create", "work"],
            ["session", "create", "bad/name"],
            ["session", "create", "x", "--from", "nope"],
            ["session", "set", "work"],
            ["--json", "session", "current"],
            ["session", "current"],
            ["session", "list"],
            ["--json", "session", "list"],
            ["session", "set", "nope"],
            ["session", "delete", "work"],
            ["session", "delete", "baseline"],
            ["--json", "session", "delete", "work", "--force"],
            ["session", "current"],
            ["session", "set", "other"],
            ["--json", "session", "unset"],
            ["session", "unset"],
            ["session", "delete", "other"],
            ["session", "delete", "other"],
        ]
    );
}

#[test]
fn a_current_session_that_is_gone_is_reported() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "gone"]);
    env.ok(&["session", "set", "gone"]);
    std::fs::write(env.store().join("current_session"), "019a0c2f-4a6d-7e4b-9a2c-1d5e8b7a4c31").unwrap();
    assert_cli!(
        env,
        "session_gone",
        [["session", "current"], ["list"], ["session", "unset"], ["session", "current"]]
    );
}

#[test]
fn gc_and_check() {
    let env = TestEnv::new();
    tree(&env);
    env.ok(&["save", "--name", "a"]);
    env.write("big.bin", common::noise(300_000, 5));
    env.ok(&["save", "--name", "b"]);
    env.ok(&["remove", "b"]);
    assert_cli!(
        env,
        "gc_check",
        [
            ["check"],
            ["check", "--read-data"],
            ["--json", "check", "--read-data"],
            ["gc"],
            ["--json", "gc"],
            ["check"]
        ]
    );
}

#[test]
fn a_damaged_store_is_reported_by_check() {
    let env = TestEnv::new();
    tree(&env);
    env.ok(&["save", "--name", "a"]);
    // Packs live in fan-out directories (objects/packs/ab/ab….pack); losing one loses data.
    let packs = env.store().join("objects/packs");
    for fan in std::fs::read_dir(&packs).unwrap() {
        let fan = fan.unwrap().path();
        if fan.is_dir() && fan.file_name().is_some_and(|n| n.len() == 2) {
            std::fs::remove_dir_all(fan).unwrap();
        }
    }
    assert_cli!(env, "check_damaged", [["check"], ["--json", "check"]]);
}

#[test]
fn config_get_set_and_unset() {
    let env = TestEnv::new();
    assert_cli!(
        env,
        "config",
        [
            ["config", "get"],
            ["--json", "config", "get"],
            ["config", "set", "keep.recent", "5"],
            ["--json", "config", "set", "gc.grace", "2h"],
            ["config", "get", "keep.recent"],
            ["--json", "config", "get", "keep.recent"],
            ["config", "unset", "keep.recent"],
            ["config", "get", "keep.recent"],
            ["config", "get", "no.such"],
            ["config", "set", "keep.recent", "many"],
            ["config", "set", "gc.grace", "10"],
            ["config", "set", "agent.restore", "true"],
            ["config"],
        ]
    );
}

#[test]
fn agent_allow_deny_status_and_reset() {
    let env = TestEnv::new();
    assert_cli!(
        env,
        "agent",
        [
            ["agent", "status"],
            ["agent", "allow", "restore", "remove"],
            ["agent", "deny", "save"],
            ["--json", "agent", "status"],
            ["agent", "reset", "save"],
            ["--json", "agent", "reset", "all"],
            ["agent", "allow", "everything"],
            ["agent", "allow"],
        ]
    );
}

#[test]
fn usage_errors_and_help() {
    let env = TestEnv::new();
    assert_cli!(
        env,
        "usage",
        [[], ["--help"], ["frobnicate"], ["--json", "frobnicate"], ["session"], ["show"]]
    );
}

#[test]
fn compose_and_debug_refusals_that_need_no_engine_or_adapter() {
    let env = TestEnv::new();
    assert_cli!(
        env,
        "compose_debug_refusals",
        [
            ["compose", "list", "cairnoutputsnone"],
            ["--json", "compose", "list", "cairnoutputsnone"],
            ["compose", "rollback", "cairnoutputsnone", "nope"],
            ["compose", "save", "cairnoutputsnone", "--consistency", "sideways"],
            ["debug", "list"],
            ["--json", "debug", "list"],
            ["debug", "delete"],
            ["debug", "delete", "0190ffff-0000-7000-8000-000000000000"],
            ["debug", "diff", "0190ffff-0000-7000-8000-000000000000", "0190ffff-0000-7000-8000-000000000001"],
            ["debug", "run", "loop.py", "--break", "loop.py"],
        ]
    );
}

/// Regression: `config unset` printed `keep.recent =  (default)`, an empty value, where
/// `config get` prints `(unset)`.
#[test]
fn config_unset_printed_an_empty_value_instead_of_unset() {
    let env = TestEnv::new();
    env.ok(&["config", "set", "keep.recent", "5"]);
    let unset = env.ok(&["config", "unset", "keep.recent"]);
    assert_eq!(unset, "keep.recent = (unset)  (default)\n");
    assert_eq!(unset, env.ok(&["config", "get", "keep.recent"]));
}

/// Regression: `cairn --json check` on a damaged store printed its result and then an error
/// object, two JSON documents on stdout; the result, with its problems, is the one.
#[test]
fn check_json_with_problems_printed_two_json_documents() {
    let env = TestEnv::new();
    tree(&env);
    env.ok(&["save"]);
    std::fs::remove_dir_all(env.store().join("objects/packs")).unwrap();
    let out = env.cairn(&["--json", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(result["problems"].as_array().map(Vec::len), Some(2), "{result}");
}

#[test]
fn completions_for_each_shell_cover_every_command() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let script = env.ok(&["completions", shell]);
        // The scripts are thousands of generated lines that change with every flag, so this
        // checks what they must hold rather than pinning them whole.
        for word in ["save", "restore", "session", "transcript", "completions", "store", "json", "dry-run"] {
            assert!(script.contains(word), "the {shell} script misses {word}");
        }
    }
    let bash = env.root().join("cairn.bash");
    std::fs::write(&bash, env.ok(&["completions", "bash"])).unwrap();
    let syntax = std::process::Command::new("bash").arg("-n").arg(&bash).output().unwrap();
    assert!(syntax.status.success(), "{}", String::from_utf8_lossy(&syntax.stderr));
    assert_cli!(env, "completions_refusals", [["completions", "tcsh"], ["completions"]]);
}

#[test]
fn man_writes_one_page_per_command() {
    let env = TestEnv::new();
    assert_cli!(
        env,
        "man",
        [
            ["man", "--out", "../man"],
            ["--json", "man", "--out", "../man"],
            ["man"],
            ["man", "--out", "/dev/null/man"]
        ]
    );
    let page = std::fs::read_to_string(env.root().join("man/cairn-restore.1")).unwrap();
    insta::assert_snapshot!("man_cairn_restore", page);
}

#[test]
fn a_short_id_from_the_list_is_accepted_back_as_a_reference() {
    let env = TestEnv::new();
    tree(&env);
    for _ in 0..3 {
        env.ok(&["save"]);
    }
    let full: Vec<String> = env.json(&["list"])["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    let human = env.ok(&["list"]);
    let shown: Vec<&str> = human.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(shown.len(), 3, "{human}");
    for (short, id) in shown.iter().zip(&full) {
        assert!(short.len() < id.len() && short.replace('-', "").len() >= 8, "{short}");
        assert!(id.starts_with(short), "{short} is not a prefix of {id}");
        assert_eq!(env.json(&["show", short])["id"], id.as_str());
    }
}
