//! Sessions, retention refusals, locks and diff, through the real binary.

mod common;

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;

use common::{TestEnv, noise, write};

#[test]
fn baseline_always_exists_and_cannot_be_deleted() {
    let env = TestEnv::new();
    // Readers never make a store (`session list` on none says to run `cairn save`).
    env.ok(&["init"]);
    let list = env.json(&["session", "list"]);
    assert_eq!(list["sessions"][0]["name"], "baseline");
    assert_eq!(list["sessions"][0]["id"], "00000000-0000-0000-0000-000000000001");
    assert_eq!(list["sessions"][0]["current"], true);
    insta::assert_snapshot!(env.fails(&["session", "delete", "baseline"], 2), @"error: baseline cannot be deleted");
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
    let err = env.fails(&["show", in_fork["id"].as_str().unwrap()], 1);
    insta::assert_snapshot!(env.normalize(&err), @r#"error: no snapshot "[ID1]" in session "baseline"; run `cairn list`"#);
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
    insta::assert_snapshot!(env.fails(&["session", "delete", "work"], 1), @r#"error: session "work" is the current session; pass --force to delete it and clear the pointer (later calls then work in baseline)"#);
    let deleted = env.json(&["session", "delete", "work", "--force"]);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(env.json(&["session", "current"])["name"], "baseline");
    // A pointer to a session that is gone is reported, and unset repairs it.
    env.ok(&["session", "create", "gone"]);
    env.ok(&["session", "set", "gone"]);
    std::fs::write(env.store().join("current_session"), "019a0c2f-4a6d-7e4b-9a2c-1d5e8b7a4c31").unwrap();
    insta::assert_snapshot!(env.normalize(&env.fails(&["session", "current"], 1)), @"error: the current session [ID1] no longer exists; run `cairn session unset` or run `cairn session set SESSION`");
    assert_eq!(env.json(&["session", "unset"])["name"], "baseline");
}

#[test]
fn cairn_session_pins_the_session_and_refuses_set() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "pinned"]);
    let out = env.cairn(&["session", "set", "baseline"]).env("CAIRN_SESSION", "pinned").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r#"error: these calls are pinned to session "pinned", which outranks the current session; pass --session or unset CAIRN_SESSION"#);
    write(&env.work(), "a.txt", "a\n");
    env.cairn(&["save"]).env("CAIRN_SESSION", "pinned").assert().success();
    assert_eq!(env.json(&["list", "--session", "pinned"])["snapshots"].as_array().unwrap().len(), 1);
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 0);
}

#[test]
fn remove_refusals_name_the_cli_flags() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let s = env.json(&["save"]);
    let id = s["id"].as_str().unwrap();
    let err = env.fails(&["remove", id, "--retain-recent", "1"], 2);
    assert_eq!(
        err,
        "error: cannot combine snapshot references with retention rules; give one or the other\n"
    );
    let err = env.fails(&["remove"], 2);
    assert_eq!(
        err,
        "error: name the snapshots to remove, or pass --retain-recent, --retain-for or --before-date\n"
    );
    // A bare date is that day's midnight UTC (it was refused for want of a time).
    let by_date = env.json(&["remove", "--before-date", "2026-06-01", "--dry-run"]);
    assert!(by_date["removed"].is_array(), "{by_date}");
    assert_eq!(
        env.fails(&["remove", "--before-date", "2026-06"], 2),
        "error: invalid --before-date \"2026-06\": failed to parse separator after month: expected `-` separator, but found end of input; use a date such as 2026-06-01 (midnight UTC) or an RFC 3339 time such as 2026-06-01T12:00:00Z\n"
    );
    let err = env.fails(&["remove", "--retain-for", "120"], 2);
    assert_eq!(err, "error: invalid --retain-for \"120\": want a unit-bearing value like 2m, 90s or 1h30m\n");
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
    insta::assert_snapshot!(env.fails(&["config", "set", "keep.recent", "lots"], 2), @r#"error: invalid value "lots" for keep.recent: want a whole number from 0 to 9223372036854775807"#);
    std::fs::write(env.store().join("config.toml"), "[keep]\nwithin = \"soon\"\n").unwrap();
    insta::assert_snapshot!(env.normalize(&env.fails(&["list"], 2)), @r#"error: in [TMP]/store/config.toml: invalid value "soon" for keep.within: want a unit-bearing duration like 90s, 2m, 1h30m or 7d"#);
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
    insta::assert_snapshot!(edit["patch"].as_str().unwrap(), @r"
        --- a/edit.txt
        +++ b/edit.txt
        @@ -1,2 +1,2 @@
         one
        -two
        +three
    ");
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

fn ids(list: &serde_json::Value, key: &str) -> Vec<String> {
    list[key].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
}

/// Regression: `keep.recent 0`, a `keep.max_bytes` below one snapshot or `keep.within 0s`
/// made a save report "saved X" and then "removed by the keep policy: X".
#[test]
fn the_keep_policy_never_removes_the_snapshot_the_save_made() {
    for (key, value) in [("keep.recent", "0"), ("keep.max_bytes", "1"), ("keep.within", "0s")] {
        let env = TestEnv::new();
        env.ok(&["config", "set", key, value]);
        write(&env.work(), "a.txt", "some bytes\n");
        let first = env.json(&["save"]);
        assert_eq!(first["removed_by_policy"], serde_json::json!([]), "{key}");
        let second = env.json(&["save"]);
        assert_eq!(ids(&second, "removed_by_policy"), vec![first["id"].as_str().unwrap()], "{key}");
        assert_eq!(ids(&env.json(&["list"]), "snapshots"), vec![second["id"].as_str().unwrap()], "{key}");
        let text = env.ok(&["save"]);
        let saved = text.lines().next().unwrap().split_whitespace().nth(1).unwrap().to_owned();
        // The save names what it made and what the policy removed: never the same snapshot.
        let text = text.replace(&saved, "[SAVED]").replace(second["id"].as_str().unwrap(), "[SECOND]");
        insta::allow_duplicates! {
            insta::assert_snapshot!(env.normalize(&text), @r"
                saved [SAVED] of [TMP]/work
                  1 files, 1 dirs, 0 links, 11 B; read 0 B, stored 0 B new (0 B after compression) in [DURATION]
                removed by the keep policy: [SECOND]
            ");
        }
        assert_eq!(ids(&env.json(&["list"]), "snapshots"), vec![saved], "{key}");
    }
}

#[test]
fn keep_rules_remove_only_what_every_rule_selects() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    // keep.recent alone would remove, keep.within keeps everything younger than an hour.
    env.ok(&["config", "set", "keep.recent", "1"]);
    env.ok(&["config", "set", "keep.within", "1h"]);
    for _ in 0..3 {
        assert_eq!(env.json(&["save"])["removed_by_policy"], serde_json::json!([]));
    }
    // keep.max_bytes 1 selects every older snapshot; keep.recent 2 keeps the newest two.
    env.ok(&["config", "set", "keep.within", "0s"]);
    env.ok(&["config", "set", "keep.max_bytes", "1"]);
    env.ok(&["config", "set", "keep.recent", "2"]);
    let before = ids(&env.json(&["list", "--sort", "asc"]), "snapshots");
    let saved = env.json(&["save"]);
    assert_eq!(ids(&saved, "removed_by_policy"), before[..2].to_vec());
    let after = ids(&env.json(&["list", "--sort", "asc"]), "snapshots");
    assert_eq!(after, vec![before[2].clone(), saved["id"].as_str().unwrap().to_owned()]);
}

#[test]
fn deleting_a_session_lets_gc_reclaim_its_data() {
    let env = TestEnv::new();
    let data = env.root().join("data");
    write(&data, "big.bin", noise(3 << 20, 7));
    write(&data, "more.bin", noise(1 << 20, 8));
    env.ok(&["session", "create", "x"]);
    env.ok(&["save", data.to_str().unwrap(), "--session", "x"]);
    env.ok(&["session", "set", "x"]);
    let deleted = env.json(&["session", "delete", "x", "--force"]);
    assert_eq!(deleted["freed_bytes"], 4 << 20);
    env.ok(&["config", "set", "gc.grace", "0s"]);
    let gc = env.json(&["gc"]);
    assert!(gc["bytes_freed"].as_u64().unwrap() >= 4 << 20, "{gc}");
    env.ok(&["check", "--read-data"]);
}

/// The lock file of `target`'s writer lock: `<store>/locks/` and the target's hash.
fn lock_file(env: &TestEnv, target: &str) -> std::path::PathBuf {
    let name = &cairn_lib::ObjectId::of(target.as_bytes()).to_hex()[..24];
    env.store().join("locks").join(format!("{name}.lock"))
}

/// Another process holding a target's lock as a cairn command does (an `flock` on its lock
/// file, with the holder record written in it), until it is killed or dropped.
struct LockHolder {
    child: std::process::Child,
    since: String,
}

impl LockHolder {
    fn take(env: &TestEnv, target: &str, command: &str) -> Self {
        let script = r#"use Fcntl qw(:flock); use IO::Handle;
            open(my $f, "+>>", $ARGV[0]) or die $!; flock($f, LOCK_EX) or die $!; truncate($f, 0);
            print $f qq({"command":"$ARGV[1]","pid":$$,"since":"$ARGV[2]"}); $f->flush;
            $| = 1; print "held\n"; sleep 60"#;
        let since = cairn_lib::now_rfc3339();
        let mut child = std::process::Command::new("perl")
            .arg("-e")
            .arg(script)
            .arg(lock_file(env, target))
            .args([command, since.as_str()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("perl runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "held\n", "the lock holder did not take the lock");
        Self { child, since }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_held_target_lock_refuses_save_fork_and_delete_and_names_the_holder() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let target = env.json(&["save"])["target"].as_str().unwrap().to_owned();
    env.ok(&["session", "create", "x"]);
    env.ok(&["save", "--session", "x"]);
    let other = env.root().join("other");
    write(&other, "b.txt", "b\n");

    let held = LockHolder::take(&env, &target, "a restore");
    let expected = format!(
        "error: another cairn command is already running on {target}: a restore (pid {}, since {}) holds its lock; retry when it finishes\n",
        held.pid(),
        held.since
    );
    assert_eq!(env.fails(&["save"], 1), expected);
    assert_eq!(env.fails(&["session", "create", "fork", "--from", "baseline"], 1), expected);
    assert_eq!(env.fails(&["session", "delete", "x"], 1), expected);
    // Nothing was half done, and other targets and lock-free commands go on.
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 1);
    let names: Vec<String> = env.json(&["session", "list"])["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, vec!["x", "baseline"]);
    env.ok(&["save", other.to_str().unwrap()]);
    env.ok(&["session", "create", "empty"]);
    drop(held);

    env.ok(&["save"]);
    assert_eq!(env.json(&["session", "create", "fork", "--from", "baseline"])["snapshot_count"], 3);
    env.ok(&["session", "delete", "x"]);
}

#[test]
fn saves_of_two_targets_run_at_once() {
    let env = TestEnv::new();
    let (a, b) = (env.root().join("a"), env.root().join("b"));
    for i in 0..300 {
        write(&a, &format!("f{i}"), noise(4096, i));
        write(&b, &format!("f{i}"), noise(4096, i + 1000));
    }
    env.ok(&["save", b.to_str().unwrap()]);
    // Holding a's lock does not stop a save of b: locks are per target.
    let target_a = a.to_str().unwrap();
    let held = LockHolder::take(&env, target_a, "cairn save");
    env.ok(&["save", b.to_str().unwrap()]);
    drop(held);
    let children: Vec<_> = [&a, &b]
        .iter()
        .map(|dir| {
            env.process(&["save", dir.to_str().unwrap()])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    env.ok(&["check", "--read-data"]);
}

#[test]
fn a_lock_left_by_a_dead_process_is_taken_over() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let target = env.json(&["save"])["target"].as_str().unwrap().to_owned();
    // Another process takes the lock, then dies by SIGKILL without releasing it.
    let mut holder = LockHolder::take(&env, &target, "cairn save");
    let dead = holder.pid();
    let err = env
        .fails(&["save"], 1)
        .replace(&format!("(pid {dead}, since {})", holder.since), "(pid [DEAD], since [SINCE])");
    insta::assert_snapshot!(env.normalize(&err), @"error: another cairn command is already running on [TMP]/work: cairn save (pid [DEAD], since [SINCE]) holds its lock; retry when it finishes");
    holder.child.kill().unwrap();
    holder.child.wait().unwrap();
    let saved = env.json(&["save"]);
    assert_eq!(saved["target"], target.as_str());
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(lock_file(&env, &target)).unwrap()).unwrap();
    assert_eq!(record["command"], "a save");
    assert_ne!(record["pid"], dead);
}

#[test]
fn safety_snapshots_expire_by_their_own_policy() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save", "--name", "s"]);
    env.ok(&["config", "set", "safety.keep_recent", "2"]);
    let mut safety = Vec::new();
    for i in 0..4 {
        write(&env.work(), "a.txt", format!("change {i}\n"));
        let restored = env.json(&["restore", "s"]);
        safety.push(restored["safety_snapshot"]["id"].as_str().unwrap().to_owned());
    }
    let listed = |env: &TestEnv| -> Vec<String> {
        let all = env.json(&["list", "--include-safety-snapshots", "--sort", "asc"]);
        all["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["safety"] == true)
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(listed(&env), safety[2..].to_vec());
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 1);
    // Either rule removes on its own: keep_within 0s expires all but the newest, whatever
    // keep_recent would keep.
    env.ok(&["config", "set", "safety.keep_recent", "100"]);
    env.ok(&["config", "set", "safety.keep_within", "0s"]);
    write(&env.work(), "a.txt", "last\n");
    let last = env.json(&["restore", "s"]);
    assert_eq!(listed(&env), vec![last["safety_snapshot"]["id"].as_str().unwrap().to_owned()]);
}

#[test]
fn session_list_sorts_and_records_carry_targets_and_size() {
    let env = TestEnv::new();
    env.ok(&["session", "create", "first"]);
    env.ok(&["session", "create", "second"]);
    let names = |list: serde_json::Value| -> Vec<String> {
        list["sessions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(env.json(&["session", "list", "--sort", "asc"])), ["baseline", "first", "second"]);
    assert_eq!(names(env.json(&["session", "list"])), ["second", "first", "baseline"]);
    assert_eq!(names(env.json(&["session", "list", "--sort", "desc"])), ["second", "first", "baseline"]);
    insta::assert_snapshot!(env.fails(&["session", "list", "--sort", "up"], 2), @r#"error: invalid sort "up": use desc (newest first) or asc (oldest first)"#);

    let other = env.root().join("other");
    write(&env.work(), "a.txt", "12345");
    write(&env.work(), "sub/b.txt", "123");
    write(&other, "c.txt", "1234567");
    let a = env.json(&["save", "--session", "first"]);
    let c = env.json(&["save", other.to_str().unwrap(), "--session", "first"]);
    write(&env.work(), "a.txt", "1234567890");
    env.ok(&["save", "--session", "first"]);
    let mut targets =
        vec![a["target"].as_str().unwrap().to_owned(), c["target"].as_str().unwrap().to_owned()];
    targets.sort();
    let first = env.json(&["session", "list", "--sort", "asc"])["sessions"][1].clone();
    assert_eq!(first["name"], "first");
    assert_eq!(first["snapshot_count"], 3);
    assert_eq!(first["targets"], serde_json::json!(targets));
    assert_eq!(first["size_bytes"], 8 + 7 + 13);
    let fork = env.json(&["session", "create", "fork", "--from", "first"]);
    assert_eq!(fork["targets"], first["targets"]);
    assert_eq!(fork["size_bytes"], 28);
    let second = env.json(&["session", "list", "--sort", "asc"])["sessions"][2].clone();
    assert_eq!(second["targets"], serde_json::json!([]));
    assert_eq!(second["size_bytes"], 0);
}

#[test]
fn diff_stat_shows_modes_links_and_large_text_files() {
    let env = TestEnv::new();
    let work = env.work();
    write(&work, "edit.txt", "one\ntwo\n");
    write(&work, "run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink("edit.txt", work.join("link")).unwrap();
    let big_line = "a line of text in a large file\n".repeat(300_000);
    write(&work, "big.txt", &big_line);
    write(&work, "bin.dat", [0u8, 1, 2]);
    env.ok(&["save", "--name", "a"]);
    write(&work, "edit.txt", "one\nthree\nfour\n");
    std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(work.join("link")).unwrap();
    std::os::unix::fs::symlink("run.sh", work.join("link")).unwrap();
    write(&work, "big.txt", format!("{big_line}one more\n"));
    write(&work, "bin.dat", [0u8, 9, 9, 9]);
    env.ok(&["save", "--name", "b"]);
    let text = env.ok(&["diff", "a", "b", "--stat"]);
    env.filters().bind(|| {
        insta::assert_snapshot!(text, @r"
        diff [ID] → [ID] of [TMP]/work
         M big.txt  |   9300000 -> 9300009 bytes, too large for a line count
         M bin.dat  |   Bin 3 -> 4 bytes
         M edit.txt |     3 ++-
         M link     |   link edit.txt -> run.sh
         M run.sh   |   mode 644 -> 755
        0 added, 0 removed, 5 modified, 0 unchanged
        ");
    });
    let json = env.json(&["diff", "a", "b", "--stat"]);
    let big = json["entries"].as_array().unwrap().iter().find(|e| e["path"] == "big.txt").unwrap();
    assert_eq!((big["binary"].clone(), big["too_large"].clone()), (false.into(), true.into()));
    let run = json["entries"].as_array().unwrap().iter().find(|e| e["path"] == "run.sh").unwrap();
    assert_eq!(run["what"], serde_json::json!(["mode"]));
    assert_eq!(run["binary"], false);
}
