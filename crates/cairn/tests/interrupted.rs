//! In-place restores killed half way: the next command says so, saves the tree as it is found
//! (with whatever was written since the kill) before touching a file, then rolls back or, when
//! asked, finishes; read-only commands report the interrupted restore instead of working on the
//! mixed tree.

mod common;

use std::os::unix::process::ExitStatusExt;

use common::{TestEnv, describe, write};

/// Saves state A as `a`, changes the tree to state B, and kills `restore a` half way through
/// its plan. Returns the tree as B was.
fn interrupted(env: &TestEnv) -> std::collections::BTreeMap<std::path::PathBuf, common::Entry> {
    let w = env.work();
    for i in 0..20 {
        write(&w, &format!("f{i:02}.txt"), format!("A {i}\n"));
    }
    env.ok(&["save", "--name", "a"]);
    for i in 0..20 {
        write(&w, &format!("f{i:02}.txt"), format!("B {i}\n"));
    }
    write(&w, "only-in-b.txt", "B\n");
    env.ok(&["save", "--name", "b"]);
    let b = describe(&w);
    let status = env.process(&["restore", "a"]).env("CAIRN_FAULT_KILL_AT", "restore-half-applied").status();
    assert_eq!(status.unwrap().signal(), Some(9), "the restore was not killed at its fault point");
    let mixed = describe(&w);
    let a_files = mixed
        .keys()
        .filter(|p| std::fs::read_to_string(w.join(p)).is_ok_and(|t| t.starts_with("A ")))
        .count();
    assert!(mixed != b && a_files > 0 && a_files < 20, "the kill did not leave a mixed tree");
    b
}

/// What the user writes after the kill, before the next command.
fn user_writes(env: &TestEnv) {
    write(&env.work(), "written-after-the-kill.txt", "new work\n");
    write(&env.work(), "f19.txt", "edited after the kill\n");
}

fn assert_holds_user_writes(env: &TestEnv, snapshot: &str) {
    let dest = env.root().join(format!("recovered-{snapshot}"));
    env.ok(&["restore", snapshot, "--to", dest.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(dest.join("written-after-the-kill.txt")).unwrap(), "new work\n");
    assert_eq!(std::fs::read_to_string(dest.join("f19.txt")).unwrap(), "edited after the kill\n");
}

#[test]
fn a_killed_restore_then_a_save_keeps_what_was_written_since_in_a_recovery_snapshot() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    let b = interrupted(&env);
    user_writes(&env);
    let out = env.cairn(&["save", "--name", "after"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    env.filters().bind(|| {
        insta::assert_snapshot!(stderr, @"note: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]): saving the tree as it is, then putting back snapshot [ID]");
        insta::assert_snapshot!(stdout.lines().next().unwrap(), @"interrupted restore of [TMP]/work: the tree as found is saved as snapshot [ID]; put back snapshot [ID] (the state before the restore)");
    });
    // Rolled back: the tree is B again, and the save captured it.
    assert_eq!(describe(&env.work()), b);
    let recovery = stdout.split("saved as snapshot ").nth(1).unwrap().split(';').next().unwrap().to_owned();
    assert_holds_user_writes(&env, &recovery);
    env.ok(&["check", "--read-data"]);
}

#[test]
fn check_diff_show_and_a_dry_run_report_an_interrupted_restore_instead_of_using_the_mixed_tree() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    let mixed = describe(&env.work());
    let check = env.cairn(&["check"]).output().unwrap();
    assert_eq!(check.status.code(), Some(1));
    let diff = env.fails(&["diff", "a"], 1);
    let dry = env.fails(&["restore", "a", "--dry-run"], 1);
    let show = env.cairn(&["show", "a"]).output().unwrap();
    assert!(show.status.success());
    env.filters().bind(|| {
        insta::assert_snapshot!(String::from_utf8_lossy(&check.stdout), @r"
        3 snapshot(s), 45 object(s) referenced, 0 read back
        problem: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish it (the restore's continue option) or roll it back (its abort option)
        ");
        insta::assert_snapshot!(diff, @"error: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); finish it (the restore's continue option) or roll it back (its abort option) first");
        assert_eq!(dry, diff);
        insta::assert_snapshot!(String::from_utf8_lossy(&show.stderr), @"note: an interrupted restore of snapshot [ID] left [TMP]/work half restored (its state before was saved as snapshot [ID]); the live tree is not any snapshot");
    });
    // Nothing was touched.
    assert_eq!(describe(&env.work()), mixed);
}

#[test]
fn restore_continue_finishes_and_abort_rolls_back_each_after_saving_the_tree_as_found() {
    if !cfg!(debug_assertions) {
        return;
    }
    for how in ["--continue", "--abort"] {
        let env = TestEnv::new();
        let b = interrupted(&env);
        user_writes(&env);
        let result = env.json(&["restore", how]);
        let found = &result["interrupted_restore"];
        assert_eq!(found["outcome"], if how == "--continue" { "finished" } else { "rolled_back" });
        assert_holds_user_writes(&env, found["recovery_snapshot"].as_str().unwrap());
        if how == "--continue" {
            let a = env.root().join("a");
            env.ok(&["restore", "a", "--to", a.to_str().unwrap()]);
            let (live, want) = (describe(&env.work()), describe(&a));
            let contents = |t: &std::collections::BTreeMap<std::path::PathBuf, common::Entry>| {
                t.iter()
                    .map(|(p, e)| match e {
                        common::Entry::File { content_hash, .. } => (p.clone(), content_hash.clone()),
                        _ => (p.clone(), String::new()),
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(contents(&live), contents(&want));
        } else {
            assert_eq!(describe(&env.work()), b);
        }
        env.ok(&["check", "--read-data"]);
        let again = env.fails(&["restore", how], 1);
        assert!(again.contains("no interrupted restore was found"), "{again}");
    }
}

#[test]
fn a_resolution_killed_after_its_recovery_snapshot_is_resolved_again_by_the_next_command() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    let b = interrupted(&env);
    user_writes(&env);
    let status = env.process(&["save"]).env("CAIRN_FAULT_KILL_AT", "recovery-saved").status();
    assert_eq!(status.unwrap().signal(), Some(9));
    write(&env.work(), "second.txt", "written after the second kill\n");
    let saved = env.json(&["save"]);
    let recovery = saved["interrupted_restore"]["recovery_snapshot"].as_str().unwrap().to_owned();
    assert_holds_user_writes(&env, &recovery);
    let dest = env.root().join("second");
    env.ok(&["restore", &recovery, "--to", dest.to_str().unwrap()]);
    assert!(dest.join("second.txt").exists());
    assert_eq!(describe(&env.work()), b);
    env.ok(&["check", "--read-data"]);
}

/// A restore writes its journal while it commits its safety snapshot, and changes nothing until
/// both are durable: a journal whose safety snapshot never reached the store was left by a
/// restore stopped before its first change, and is dropped without a word.
#[test]
fn a_journal_whose_safety_snapshot_never_reached_the_store_is_dropped_and_the_tree_left_alone() {
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    interrupted(&env);
    let journal_dir = env.store().join("journal");
    let path = std::fs::read_dir(&journal_dir).unwrap().next().unwrap().unwrap().path();
    let mut journal: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    env.ok(&["restore", "--abort"]);
    let b = describe(&env.work());
    // The same journal, but naming a safety snapshot (and root) the store never committed.
    journal["safety"] = "01a235d0-0000-7000-8000-000000000000".into();
    journal["safety_root"] = "ab".repeat(32).into();
    std::fs::write(&path, serde_json::to_vec(&journal).unwrap()).unwrap();
    let out = env.cairn(&["save"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "nothing to say about a restore that changed nothing"
    );
    assert!(!path.exists(), "the journal is gone");
    assert_eq!(describe(&env.work()), b);
    env.ok(&["check"]);
}
