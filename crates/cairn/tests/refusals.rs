//! Refusals through the real binary name the CLI's flags and commands, a pin set by
//! CAIRN_SESSION is not mistaken for a pinned server, and echoed input is cut short.

mod common;

use common::{TestEnv, write};

#[test]
fn cli_refusals_name_flags_and_commands() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save", "--name", "first"]);
    let taken = env.fails(&["save", "--name", "first"], 1);
    insta::assert_snapshot!(env.normalize(&taken), @r#"error: a snapshot named "first" already exists for [TMP]/work; pick another name, or pass --force to move the name to the new snapshot"#);
    let missing = env.fails(&["show", "nope"], 1);
    assert_eq!(missing, "error: no snapshot \"nope\" in session \"baseline\"; run `cairn list`\n");
    let busy = env.root().join("busy");
    write(&busy, "b.txt", "b\n");
    let not_empty = env.fails(&["restore", "first", "--to", busy.to_str().unwrap()], 1);
    insta::assert_snapshot!(env.normalize(&not_empty), @"error: [TMP]/busy is not empty; pass a new or empty directory, or leave out --to to restore in place");
    let neither = env.fails(&["remove"], 2);
    assert_eq!(
        neither,
        "error: name the snapshots to remove, or pass --retain-recent, --retain-for or --before-date\n"
    );
}

#[test]
fn a_cli_user_with_cairn_session_set_is_not_told_to_restart_the_server() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "pinned"]);
    let out = env.cairn(&["session", "unset"]).env("CAIRN_SESSION", "pinned").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "error: these calls are pinned to session \"pinned\", which outranks the current session; pass --session or unset CAIRN_SESSION\n"
    );
}

#[test]
fn a_huge_ref_gets_a_short_error() {
    let env = TestEnv::new();
    // `show` on a store that does not exist says only that; make the store first.
    env.ok(&["init"]);
    // One argument may be 128 KiB at most on Linux; that is plenty to show the cut.
    let huge = "x".repeat(100_000);
    let err = env.fails(&["show", &huge], 1);
    insta::assert_snapshot!(err, @r#"error: no snapshot "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" in session "baseline"; run `cairn list`"#);
}
