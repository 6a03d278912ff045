//! A restore into a new directory killed half way leaves a marker in the store naming the
//! incomplete directory, and the next restore into it does the restore again, byte for byte,
//! instead of refusing the directory as not empty.

mod common;

use std::os::unix::process::ExitStatusExt;

use common::{TestEnv, describe, noise, write};

/// Saves a tree of 12 files as `s`, then kills `restore s --to DEST` with two files written and
/// a third cut short. Returns DEST.
fn killed_restore(env: &TestEnv, dest_exists: bool) -> std::path::PathBuf {
    for i in 0..12u64 {
        write(&env.work(), &format!("d{}/f{i:02}.bin", i % 3), noise(20_000 + i as usize * 100, i));
    }
    env.ok(&["save", "--name", "s"]);
    let dest = env.root().join("copy");
    if dest_exists {
        std::fs::create_dir(&dest).unwrap();
    }
    let status = env
        .process(&["restore", "s", "--to", dest.to_str().unwrap()])
        .env("CAIRN_FAULT_KILL_AT", "restore-to-half-written")
        .status()
        .unwrap();
    assert_eq!(status.signal(), Some(9), "the restore was not killed at its fault point");
    assert!(
        std::fs::read_dir(&dest).unwrap().next().is_some(),
        "the kill left {} empty, which is not the case this tests",
        dest.display()
    );
    dest
}

#[test]
fn a_killed_restore_to_leaves_a_marker_and_the_next_restore_to_does_it_again() {
    let env = TestEnv::new();
    let dest = killed_restore(&env, false);
    assert_ne!(describe(&dest), describe(&env.work()), "the killed restore wrote everything");
    // The marker names the destination, for the next restore and for `check`.
    let markers: Vec<_> = std::fs::read_dir(env.store().join("journal")).unwrap().flatten().collect();
    assert_eq!(markers.len(), 1, "{markers:?}");
    let marker = std::fs::read_to_string(markers[0].path()).unwrap();
    assert!(marker.contains(dest.to_str().unwrap()), "{marker}");
    let check = env.json_any(&["check"]);
    assert_eq!(
        check["problems"],
        serde_json::json!([format!(
            "a restore of snapshot {} into {} was interrupted and left it incomplete; restore into it again to finish it, or delete the directory",
            env.json(&["show", "s"])["id"].as_str().unwrap(),
            dest.display()
        )]),
        "{check}"
    );

    let again = env.transcript(&[&["restore", "s", "--to", dest.to_str().unwrap()]]);
    insta::assert_snapshot!(again);
    assert_eq!(describe(&dest), describe(&env.work()), "the restore done again differs");
    let markers: Vec<_> = std::fs::read_dir(env.store().join("journal")).unwrap().flatten().collect();
    assert!(markers.is_empty(), "the marker was left: {markers:?}");
    assert_eq!(env.json(&["check"])["problems"], serde_json::json!([]));
}

#[test]
fn an_empty_directory_given_to_a_killed_restore_is_filled_by_the_next_one() {
    let env = TestEnv::new();
    let dest = killed_restore(&env, true);
    env.ok(&["restore", "s", "--to", dest.to_str().unwrap()]);
    assert_eq!(describe(&dest), describe(&env.work()));
}

#[test]
fn a_directory_made_anew_where_a_killed_restore_wrote_is_refused_and_its_marker_dropped() {
    let env = TestEnv::new();
    let dest = killed_restore(&env, false);
    // The user removes the half-restored directory and puts their own work there.
    std::fs::remove_dir_all(&dest).unwrap();
    write(&dest, "mine.txt", "mine\n");
    let refused = env.fails(&["restore", "s", "--to", dest.to_str().unwrap()], 1);
    insta::assert_snapshot!(env.normalize(&refused), @"error: [TMP]/copy is not empty; pass a new or empty directory, or leave out --to to restore in place");
    assert_eq!(std::fs::read_to_string(dest.join("mine.txt")).unwrap(), "mine\n");
    let markers: Vec<_> = std::fs::read_dir(env.store().join("journal")).unwrap().flatten().collect();
    assert!(markers.is_empty(), "the stale marker was kept: {markers:?}");
}
