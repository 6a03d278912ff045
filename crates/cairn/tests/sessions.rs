//! Sessions, retention refusals, locks and diff, through the real binary.

mod common;

use common::{TestEnv, write};

#[test]
fn baseline_always_exists_and_cannot_be_deleted() {
    let env = TestEnv::new();
    let list = env.json(&["session", "list"]);
    assert_eq!(list["sessions"][0]["name"], "baseline");
    assert_eq!(list["sessions"][0]["id"], "00000000-0000-0000-0000-000000000001");
    assert_eq!(list["sessions"][0]["current"], true);
    let err = env.fails(&["session", "delete", "baseline"], 2);
    assert!(err.contains("baseline cannot be deleted"), "{err}");
}

#[test]
fn a_fork_shares_history_then_diverges() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let base = env.json(&["save", "--name", "base"]);
    let fork = env.json(&["session", "create", "agent-work", "--from", "baseline"]);
    assert_eq!(fork["from"]["session"], "00000000-0000-0000-0000-000000000001");
    assert_eq!(fork["snapshot_count"], 1);
    write(&env.work(), "a.txt", "in the fork\n");
    let in_fork = env.json(&["save", "--session", "agent-work", "--name", "fork-only"]);
    let fork_list = env.json(&["list", "--session", "agent-work"]);
    assert_eq!(fork_list["snapshots"].as_array().unwrap().len(), 2);
    assert_eq!(fork_list["snapshots"][1]["id"], base["id"]);
    let base_list = env.json(&["list"]);
    assert_eq!(base_list["snapshots"].as_array().unwrap().len(), 1);
    assert!(env.fails(&["show", in_fork["id"].as_str().unwrap()], 1).contains("no snapshot"));
    // Removing the shared snapshot from the fork keeps it in baseline.
    env.ok(&["remove", "base", "--session", "agent-work"]);
    assert_eq!(env.json(&["show", "base"])["id"], base["id"]);
}

#[test]
fn the_current_session_is_shared_and_deleting_it_needs_force() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "work"]);
    let set = env.json(&["session", "set", "work"]);
    assert_eq!(set["name"], "work");
    assert_eq!(env.json(&["session", "current"])["name"], "work");
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save"]);
    assert_eq!(env.json(&["session", "list"])["sessions"][0]["snapshot_count"], 1);
    let err = env.fails(&["session", "delete", "work"], 1);
    assert!(err.contains("is the current session") && err.contains("--force"), "{err}");
    let deleted = env.json(&["session", "delete", "work", "--force"]);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(env.json(&["session", "current"])["name"], "baseline");
    // A pointer to a session that is gone is reported, and unset repairs it.
    env.ok(&["session", "create", "gone"]);
    env.ok(&["session", "set", "gone"]);
    std::fs::write(env.store().join("current_session"), "019a0c2f-4a6d-7e4b-9a2c-1d5e8b7a4c31").unwrap();
    let err = env.fails(&["session", "current"], 1);
    assert!(err.contains("no longer exists") && err.contains("session unset"), "{err}");
    assert_eq!(env.json(&["session", "unset"])["name"], "baseline");
}

#[test]
fn cairn_session_pins_the_session_and_refuses_set() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "pinned"]);
    let out = env.cairn(&["session", "set", "baseline"]).env("CAIRN_SESSION", "pinned").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pinned to session \"pinned\"") && err.contains("pass session on each call"),
        "{err}"
    );
    write(&env.work(), "a.txt", "a\n");
    env.cairn(&["save"]).env("CAIRN_SESSION", "pinned").assert().success();
    assert_eq!(env.json(&["list", "--session", "pinned"])["snapshots"].as_array().unwrap().len(), 1);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 0);
}

#[test]
fn remove_refusals_use_the_arcave_wording() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let s = env.json(&["save"]);
    let id = s["id"].as_str().unwrap();
    let err = env.fails(&["remove", id, "--retain-recent", "1"], 2);
    assert_eq!(err, "error: cannot combine savepoint ids with retain-recent/retain-for/before-date\n");
    let err = env.fails(&["remove"], 2);
    assert_eq!(
        err,
        "error: specify savepoint ids, or at least one of retain-recent, retain-for or before-date\n"
    );
    let err = env.fails(&["remove", "--before-date", "2026-06-01"], 2);
    assert!(err.starts_with("error: invalid --before-date \"2026-06-01\": "), "{err}");
    let err = env.fails(&["remove", "--retain-for", "120"], 2);
    assert_eq!(err, "error: --retain-for \"120\": want a unit-bearing value like 2m, 90s or 1h30m\n");
}

#[test]
fn retention_keeps_exactly_n_and_honours_the_cut_off() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let ids: Vec<String> = (0..5).map(|_| env.json(&["save"])["id"].as_str().unwrap().to_owned()).collect();
    let dry = env.json(&["remove", "--retain-recent", "3", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    let would: Vec<&str> =
        dry["removed"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(would, vec![ids[0].as_str(), ids[1].as_str()]);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 5);
    env.ok(&["remove", "--retain-recent", "3"]);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 3);
    // --before-date removes strictly before: a snapshot created exactly at the cut-off stays.
    let third = env.json(&["show", &ids[2]]);
    let cut = third["created_at"].as_str().unwrap();
    let removed = env.json(&["remove", "--before-date", cut]);
    assert_eq!(removed["removed"].as_array().unwrap().len(), 0);
    env.ok(&["remove", "--retain-for", "1h"]);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 3);
}

#[test]
fn the_keep_policy_applies_after_each_save() {
    let env = TestEnv::new();
    env.ok(&["config", "set", "keep.recent", "2"]);
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save"]);
    env.ok(&["save"]);
    let third = env.json(&["save"]);
    assert_eq!(third["removed_by_policy"].as_array().unwrap().len(), 1);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 2);
    let err = env.fails(&["config", "set", "keep.recent", "lots"], 2);
    assert_eq!(err, "error: invalid value \"lots\" for keep.recent: want a whole number\n");
    std::fs::write(env.store().join("config.toml"), "[keep]\nwithin = \"soon\"\n").unwrap();
    let err = env.fails(&["list"], 2);
    assert!(err.contains("keep.within"), "{err}");
}

#[test]
fn safety_snapshots_are_hidden_unless_asked_for() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save", "--name", "s"]);
    write(&env.work(), "a.txt", "b\n");
    env.ok(&["restore", "s"]);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 1);
    let all = env.json(&["list", "--include-safety-snapshots"]);
    assert_eq!(all["snapshots"].as_array().unwrap().len(), 2);
    assert_eq!(all["snapshots"][0]["safety"], true);
}

#[test]
fn two_saves_of_one_target_never_corrupt_the_store() {
    let env = TestEnv::new();
    for i in 0..2000 {
        write(&env.work(), &format!("d{}/f{i}", i % 20), format!("{i}{}", "z".repeat(i % 3000)));
    }
    for round in 0..3 {
        write(&env.work(), "round", format!("{round}"));
        let a = env.cairn(&["save"]).output();
        let children: Vec<_> = (0..2)
            .map(|_| env.process(&["save"]).stderr(std::process::Stdio::piped()).spawn().unwrap())
            .collect();
        drop(a);
        for child in children {
            let out = child.wait_with_output().unwrap();
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("already running") && err.contains("retry when it finishes"), "{err}");
            }
        }
    }
    env.ok(&["check", "--read-data"]);
}

#[test]
fn diff_reports_changes_with_stat_and_patch() {
    let env = TestEnv::new();
    write(&env.work(), "keep.txt", "same\n");
    write(&env.work(), "edit.txt", "one\ntwo\n");
    write(&env.work(), "gone.txt", "bye\n");
    write(&env.work(), "bin.dat", [0u8, 1, 2]);
    let a = env.json(&["save", "--name", "a"]);
    write(&env.work(), "edit.txt", "one\nthree\n");
    std::fs::remove_file(env.work().join("gone.txt")).unwrap();
    write(&env.work(), "new/file.txt", "hello\n");
    write(&env.work(), "bin.dat", [0u8, 9, 9]);
    let live = env.json(&["diff", "a", "--stat"]);
    assert_eq!(live["summary"], serde_json::json!({"added": 1, "removed": 1, "modified": 2, "unchanged": 1}));
    env.json(&["save", "--name", "b"]);
    let stored = env.json(&["diff", "a", "b", "--patch"]);
    assert_eq!(stored["from"]["id"], a["id"]);
    let edit = stored["entries"].as_array().unwrap().iter().find(|e| e["path"] == "edit.txt").unwrap();
    assert_eq!(edit["lines_added"], 1);
    assert!(edit["patch"].as_str().unwrap().contains("-two\n+three\n"));
    let bin = stored["entries"].as_array().unwrap().iter().find(|e| e["path"] == "bin.dat").unwrap();
    assert_eq!(bin["binary"], true);
    let text = env.ok(&["diff", "a", "b"]);
    insta::with_settings!({filters => vec![
        (r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", "[ID]"),
        (r"/tmp/[^\s]+/work", "[WORK]"),
    ]}, {
        insta::assert_snapshot!(text, @r"
        diff [ID] → [ID] of [WORK]
        M bin.dat (content, mtime)
        M edit.txt (content, mtime)
        D gone.txt
        A new/file.txt
        1 added, 1 removed, 2 modified, 1 unchanged
        ");
    });
}
