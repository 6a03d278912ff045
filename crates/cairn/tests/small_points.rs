//! Small ways a command misled or left clutter, each with the test named after it: refusals of
//! the command line in one line of cairn's words (an empty `--store` among them), a refused
//! restore into the store that leaves nothing there, stats that count only what was captured,
//! and a session fork that waits a moment for a target's lock instead of refusing at once.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{TestEnv, write};

#[test]
fn negative_numbers_get_one_line_in_cairns_words() {
    let env = TestEnv::new();
    let negative = env.fails(&["remove", "--retain-recent", "-1"], 2);
    let unknown = env.fails(&["list", "--bogus"], 2);
    let missing = env.fails(&["restore"], 2);
    env.filters().bind(|| {
        insta::assert_snapshot!(negative, @"error: --retain-recent takes a number of 0 or more, not -1; see `cairn remove --help`");
        insta::assert_snapshot!(unknown, @"error: unexpected argument '--bogus' found (to pass '--bogus' as a value, use '-- --bogus'); see `cairn list --help`");
        insta::assert_snapshot!(missing, @"error: the following required arguments were not provided: <REFERENCE>; see `cairn restore --help`");
    });
}

#[test]
fn a_refused_restore_into_the_store_leaves_nothing_in_the_store() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let saved = env.json(&["save"]);
    let id = saved["id"].as_str().unwrap();
    let objects = env.store().join("objects");
    let before = common::entries(&objects);
    // Named directly, and through a link to the store (only resolved once it exists).
    std::os::unix::fs::symlink(env.store(), env.root().join("link")).unwrap();
    let mut refusals = String::new();
    for dest in [objects.join("x"), env.root().join("link/objects/x/y")] {
        refusals += &env.fails(&["restore", id, "--to", dest.to_str().unwrap()], 2);
        assert_eq!(common::entries(&objects), before, "after a refused restore to {}", dest.display());
    }
    // One line each, in cairn's words, naming the path as given.
    insta::assert_snapshot!(env.normalize(&refusals), @r"
        error: [TMP]/store/objects/x is inside the store [TMP]/store; pick a directory outside it
        error: [TMP]/store/objects/x/y is inside the store [TMP]/store; pick a directory outside it
    ");
}

#[test]
fn skipped_unreadable_files_are_not_counted_in_stats_files() {
    let is_root = std::process::Command::new("id").arg("-u").output().unwrap().stdout.starts_with(b"0\n");
    if !is_root {
        #[allow(clippy::print_stdout)] // the suite prints why this test did nothing
        {
            println!("skipped: running as another user needs root");
        }
        return;
    }
    // Root reads everything: the save runs as nobody, in a directory nobody may use.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    write(&work, "readable.txt", "yes\n");
    write(&work, "secret-ish.txt", "no\n");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(work.join("readable.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(work.join("secret-ish.txt"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("cairn"))
        .arg("--store")
        .arg(dir.path().join("store"))
        .args(["--json", "save"])
        .arg(&work)
        .env_clear()
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let saved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(saved["stats"]["files"], 1, "{saved}");
    assert_eq!(saved["stats"]["bytes"], 4, "{saved}");
    assert_eq!(saved["not_covered"]["skipped"][0]["path"], "secret-ish.txt", "{saved}");
    assert_eq!(saved["not_covered"]["skipped"][0]["reason"], "unreadable", "{saved}");
}

#[test]
fn an_empty_store_flag_is_refused_in_one_line_saying_it_is_empty() {
    let env = TestEnv::new();
    let err = env.without_store_flag(&["--store", "", "list"]).output().unwrap();
    assert_eq!(err.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&err.stderr), @"error: invalid value '' for '--store <PATH>': the store's path is empty; give a directory or s3://BUCKET/PREFIX, or leave out --store to use the default store; see `cairn list --help`");
}

#[test]
fn a_session_fork_waits_for_a_target_lock_held_a_moment_instead_of_refusing() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save"]);
    let locks = env.store().join("locks");
    let target_lock = std::fs::read_dir(&locks)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n != "store.lock"))
        .expect("the target's lock file");
    // Another command holds the target for a second and a half.
    let held = env.root().join("held");
    let mut holder = std::process::Command::new("flock")
        .arg(&target_lock)
        .args(["sh", "-c", &format!("touch {} && sleep 1.5", held.display())])
        .spawn()
        .unwrap();
    common::eventually("the lock to be taken", || held.exists());
    let started = std::time::Instant::now();
    env.ok(&["session", "create", "forked", "--from", "baseline"]);
    assert!(started.elapsed() >= std::time::Duration::from_millis(500), "the fork did not wait");
    holder.wait().unwrap();
}
