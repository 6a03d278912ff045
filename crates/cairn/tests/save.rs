//! Saving directories: change detection, dedup, names, the store's own rules.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;

use common::{TestEnv, write};

#[test]
fn a_save_with_nothing_changed_reads_and_stores_nothing() {
    let env = TestEnv::new();
    for i in 0..200 {
        write(&env.work(), &format!("d{}/f{i}.txt", i % 7), format!("file {i}\n"));
    }
    let first = env.json(&["save"]);
    assert!(first["stats"]["new_bytes"].as_u64().unwrap() > 0);
    // Let the coarse clock move past the files' times, so none of them is racy.
    std::thread::sleep(std::time::Duration::from_millis(30));
    env.json(&["save"]);
    let third = env.json(&["save"]);
    assert_eq!(third["stats"]["read_bytes"], 0, "{third}");
    assert_eq!(third["stats"]["new_bytes"], 0, "{third}");
    assert_eq!(third["stats"]["files"], 200);
}

#[test]
fn a_save_that_adds_no_data_writes_and_flushes_no_pack() {
    let env = TestEnv::new();
    for i in 0..50 {
        write(&env.work(), &format!("d{}/f{i}.txt", i % 5), format!("file {i}\n"));
    }
    env.json(&["save"]);
    std::thread::sleep(std::time::Duration::from_millis(30));
    // The point sits between the two halves of every pack's temp file, before its flush: a
    // save that reaches it is killed. One that adds nothing must not reach it.
    let unchanged = env.process(&["save"]).env("CAIRN_FAULT_KILL_AT", "pack-half-written").status().unwrap();
    assert!(unchanged.success(), "a save that adds no data wrote a pack: {unchanged:?}");
    // The point is live: the same save with one new file is killed there.
    write(&env.work(), "d0/new.txt", "new content\n");
    let changed = env.process(&["save"]).env("CAIRN_FAULT_KILL_AT", "pack-half-written").status().unwrap();
    assert_eq!(changed.signal(), Some(9), "{changed:?}");
}

#[test]
fn a_1_mb_edit_inside_a_500_mb_file_stores_about_1_mb() {
    let env = TestEnv::new();
    let mut data = common::noise(500 * 1024 * 1024, 0x9E37_79B9_7F4A_7C15);
    write(&env.work(), "big.bin", &data);
    env.json(&["save"]);
    for b in &mut data[250 * 1024 * 1024..251 * 1024 * 1024] {
        *b = b.wrapping_add(1);
    }
    write(&env.work(), "big.bin", &data);
    drop(data);
    let second = env.json(&["save"]);
    let new = second["stats"]["new_bytes"].as_u64().unwrap();
    // The edit itself plus the chunks it cuts at each end (measured: about 1.5 MiB here).
    assert!((1024 * 1024..=2 * 1024 * 1024).contains(&new), "stored {new} bytes for a 1 MiB edit");
}

#[test]
fn names_follow_the_rule_and_are_unique_unless_forced() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let refusals: String = ["../x", "a b", "-x", "", "x-", "a/b"]
        .map(|bad| format!("{bad:?}: {}", env.fails(&["save", &format!("--name={bad}")], 2)))
        .concat();
    insta::assert_snapshot!(refusals, @r#"
        "../x": error: invalid snapshot name "../x": names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters
        "a b": error: invalid snapshot name "a b": names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters
        "-x": error: invalid snapshot name "-x": names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters
        "": error: invalid snapshot name "": names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters
        "x-": error: invalid snapshot name "x-": names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters
        "a/b": error: invalid snapshot name "a/b": names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters
    "#);
    let first = env.json(&["save", "--name", "base"]);
    let err = env.fails(&["save", "--name", "base"], 1);
    insta::assert_snapshot!(env.normalize(&err), @r#"error: a snapshot named "base" already exists for [TMP]/work; pick another name, or pass --force to move the name to the new snapshot"#);
    let second = env.json(&["save", "--name", "base", "--force"]);
    assert_eq!(env.json(&["show", "base"])["id"], second["id"]);
    // The old snapshot stays, by id, without its name.
    let old = env.json(&["show", first["id"].as_str().unwrap()]);
    assert!(old["name"].is_null());
}

#[test]
fn references_resolve_by_id_prefix_name_and_latest() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let a = env.json(&["save", "--name", "first"]);
    let b = env.json(&["save"]);
    assert_eq!(env.json(&["show", "latest"])["id"], b["id"]);
    assert_eq!(env.json(&["show", "first"])["id"], a["id"]);
    let id = b["id"].as_str().unwrap();
    assert_eq!(env.json(&["show", &id[..20]])["id"], b["id"]);
    insta::assert_snapshot!(env.fails(&["show", "nope"], 1), @r#"error: no snapshot "nope" in session "baseline"; run `cairn list`"#);
}

#[test]
fn list_is_newest_first_wrapped_and_refuses_other_sorts() {
    let env = TestEnv::new();
    // A reader refuses a store that does not exist; once it exists, an empty list is `[]`.
    insta::assert_snapshot!(env.normalize(&env.fails(&["list"], 1)), @"error: there is no store at [TMP]/store; run `cairn save`");
    env.ok(&["init"]);
    let empty = env.json(&["list"]);
    assert_eq!(empty, serde_json::json!({ "snapshots": [] }));
    write(&env.work(), "a.txt", "a\n");
    let a = env.json(&["save"]);
    let b = env.json(&["save"]);
    let list = env.json(&["list"]);
    assert_eq!(list["snapshots"][0]["id"], b["id"]);
    assert_eq!(list["snapshots"][1]["id"], a["id"]);
    let asc = env.json(&["list", "--sort", "asc"]);
    assert_eq!(asc["snapshots"][0]["id"], a["id"]);
    insta::assert_snapshot!(env.fails(&["list", "--sort", "sideways"], 2), @r#"error: invalid sort "sideways": use desc (newest first) or asc (oldest first)"#);
}

#[test]
fn every_directory_and_file_of_the_store_is_private() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    write(&env.work(), "big.bin", common::noise(1_500_000, 3));
    let first = env.json(&["save", "--name", "one"]);
    write(&env.work(), "a.txt", "b\n");
    env.ok(&["save"]);
    env.ok(&["config", "set", "gc.grace", "0s"]);
    env.ok(&["remove", first["id"].as_str().unwrap()]);
    env.ok(&["restore", "latest"]);
    env.ok(&["gc"]);
    let all = common::permissions_below(&env.store());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.store()), 0o700);
    for dir in ["objects/packs", "objects/records", "tmp", "locks", "journal"] {
        assert!(all.iter().any(|(p, is_dir, _)| *is_dir && p.ends_with(dir)), "no {dir} in {all:?}");
    }
    assert!(all.iter().any(|(p, _, _)| p.extension().is_some_and(|e| e == "pack")), "{all:?}");
    for (path, is_dir, mode) in &all {
        let want = if *is_dir { 0o700 } else { 0o600 };
        assert_eq!(*mode, want, "{} is {mode:o}", path.display());
    }
}

#[test]
fn a_store_refused_inside_the_tree_is_not_left_behind() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let inner = env.work().join(".cairn-store");
    let out = env.cairn(&["save"]).arg("--store").arg(&inner).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(env.normalize(&String::from_utf8_lossy(&out.stderr)), @"error: the store [TMP]/work/.cairn-store lies inside [TMP]/work; a snapshot must never live inside the tree it captures; choose another store with --store or CAIRN_STORE outside it");
    assert!(!inner.exists(), "a stray store is left in the tree: {:?}", common::entries(&inner));
    // An empty directory the user made for it stays, and stays empty.
    let made = env.work().join("store-here");
    std::fs::create_dir(&made).unwrap();
    let out = env.cairn(&["save"]).arg("--store").arg(&made).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(common::entries(&made), Vec::<String>::new());
    assert_eq!(common::entries(&env.work()), ["a.txt", "store-here"]);
    // A store that holds snapshots is never removed by a refusal.
    env.ok(&["save"]);
    let err = env.fails(&["save", env.store().join("objects").to_str().unwrap()], 2);
    insta::assert_snapshot!(env.normalize(&err), @"error: [TMP]/store/objects is inside the store [TMP]/store; pick a directory outside it");
    assert!(env.store().join("FORMAT").exists());
}

#[test]
fn a_store_of_another_format_version_is_refused_clearly() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.ok(&["save"]);
    std::fs::write(env.store().join("FORMAT"), "cairn-store-format 99\n").unwrap();
    insta::assert_snapshot!(env.normalize(&env.fails(&["list"], 1)), @"error: the store at [TMP]/store has format version 99, and this cairn reads version 1; use a cairn release that reads version 99, or choose another store with --store or CAIRN_STORE");
}

#[test]
fn the_default_store_follows_the_environment() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    let mut cmd = assert_cmd::Command::cargo_bin("cairn").unwrap();
    let out = cmd
        .env_clear()
        .env("HOME", env.home())
        .current_dir(env.work())
        .args(["save", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(env.home().join(".local/share/cairn/FORMAT").exists());
    let xdg = env.root().join("xdg");
    let out = assert_cmd::Command::cargo_bin("cairn")
        .unwrap()
        .env_clear()
        .env("HOME", env.home())
        .env("XDG_DATA_HOME", &xdg)
        .current_dir(env.work())
        .arg("save")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(xdg.join("cairn/FORMAT").exists());
}

#[test]
fn kill_9_during_a_save_leaves_a_usable_store() {
    let env = TestEnv::new();
    for i in 0..3000 {
        write(&env.work(), &format!("d{}/f{i}.txt", i % 50), format!("{i} {}\n", "x".repeat(i % 4000)));
    }
    env.ok(&["save", "--name", "good"]);
    for i in 0..3000 {
        write(
            &env.work(),
            &format!("d{}/f{i}.txt", i % 50),
            format!("changed {i} {}\n", "y".repeat(i % 5000)),
        );
    }
    for delay_ms in [5u64, 20, 60, 150] {
        let mut child = env.process(&["save"]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
    }
    env.ok(&["check", "--read-data"]);
    env.ok(&["save", "--name", "after"]);
    let dest = env.root().join("copy");
    env.ok(&["restore", "good", "--to", dest.to_str().unwrap()]);
    assert!(dest.join("d0/f0.txt").exists());
    env.ok(&["check", "--read-data"]);
    // Nothing half-written is left behind.
    assert_eq!(std::fs::read_dir(env.store().join("tmp")).unwrap().count(), 0);
}

/// The pack files of the store.
fn pack_files(env: &TestEnv) -> Vec<std::path::PathBuf> {
    common::permissions_below(&env.store().join("objects/packs"))
        .into_iter()
        .filter(|(p, _, _)| p.extension().is_some_and(|e| e == "pack"))
        .map(|(p, _, _)| p)
        .collect()
}

fn snapshot_count(env: &TestEnv) -> usize {
    env.json(&["list"])["snapshots"].as_array().unwrap().len()
}

#[test]
fn a_save_killed_at_each_fault_point_is_cleaned_up_by_the_next_command() {
    // The fault points are compiled into debug builds only (the profile tests build with).
    if !cfg!(debug_assertions) {
        return;
    }
    let env = TestEnv::new();
    for i in 0..200 {
        write(&env.work(), &format!("d{}/f{i}.txt", i % 7), format!("file {i}\n"));
    }
    env.ok(&["save", "--name", "good"]);
    let points = ["pack-half-written", "pack-published", "record-written", "snapshot-committed"];
    for (round, point) in points.into_iter().enumerate() {
        // New content every round, so the save has a pack to write.
        write(&env.work(), &format!("round{round}.bin"), common::noise(300_000, round as u64 + 1));
        write(&env.work(), "d0/f0.txt", format!("round {round}\n"));
        let (packs, records, snapshots) =
            (pack_files(&env), common::entries(&env.store().join("objects/records")), snapshot_count(&env));
        let status = env.process(&["save"]).env("CAIRN_FAULT_KILL_AT", point).status().unwrap();
        assert_eq!(
            status.signal(),
            Some(9),
            "{point}: the save was not killed at its fault point ({status})"
        );
        let tmp = env.store().join("tmp");
        // What the kill left behind.
        match point {
            "pack-half-written" => {
                // The half-written pack, and the record staged beside the last pack if its
                // save got that far.
                let left = common::entries(&tmp);
                assert!(matches!(left.len(), 1 | 2), "{point}: no half-written pack in tmp: {left:?}");
                assert_eq!(pack_files(&env), packs);
            }
            "pack-published" => assert_eq!(pack_files(&env).len(), packs.len() + 1, "{point}"),
            "record-written" => {
                let now = common::entries(&env.store().join("objects/records"));
                assert_eq!(now.len(), records.len() + 1, "{point}: {now:?}");
            }
            _ => {}
        }
        // The next command cleans up: temp files go, a published pack is indexed, and the
        // store checks clean, data included.
        let check = env.json(&["check", "--read-data"]);
        assert_eq!(check["problems"], serde_json::json!([]), "{point}: {check}");
        assert_eq!(common::entries(&tmp), Vec::<String>::new(), "{point}");
        let committed = point == "snapshot-committed";
        assert_eq!(snapshot_count(&env), snapshots + usize::from(committed), "{point}");
        if point == "record-written" {
            // The record of a snapshot that never existed is dropped by gc.
            env.ok(&["gc"]);
            assert_eq!(common::entries(&env.store().join("objects/records")), records, "{point}");
        }
        let saved = env.json(&["save"]);
        if point != "pack-half-written" {
            // The killed save's pack was published, so its data was kept (indexed by the save
            // itself, or by recovery): nothing is stored twice.
            assert_eq!(saved["stats"]["new_bytes"], 0, "{point}: {saved}");
        } else {
            assert!(saved["stats"]["new_bytes"].as_u64().unwrap() >= 300_000, "{point}: {saved}");
        }
        let dest = env.root().join(format!("copy-{round}"));
        env.ok(&["restore", saved["id"].as_str().unwrap(), "--to", dest.to_str().unwrap()]);
        assert_eq!(common::describe(&dest), common::describe(&env.work()), "{point}");
    }
    env.ok(&["check", "--read-data"]);
}

#[test]
fn remove_then_gc_reclaims_the_data() {
    let env = TestEnv::new();
    let blob = common::noise(2_000_000, 7);
    write(&env.work(), "blob.bin", &blob);
    let a = env.json(&["save"]);
    std::fs::remove_file(env.work().join("blob.bin")).unwrap();
    write(&env.work(), "small.txt", "small\n");
    env.json(&["save"]);
    env.ok(&["config", "set", "gc.grace", "0s"]);
    let removed = env.json(&["remove", a["id"].as_str().unwrap()]);
    assert_eq!(removed["removed"].as_array().unwrap().len(), 1);
    let gc = env.json(&["gc"]);
    assert!(gc["bytes_freed"].as_u64().unwrap() >= 1_900_000, "{gc}");
    env.ok(&["check", "--read-data"]);
    let err = env.fails(&["show", a["id"].as_str().unwrap()], 1);
    insta::assert_snapshot!(env.normalize(&err), @r#"error: no snapshot "[ID1]" in session "baseline"; run `cairn list`"#);
}

#[test]
fn a_missing_target_is_one_clear_line() {
    let env = TestEnv::new();
    let err = env.fails(&["save", "/does/not/exist"], 1);
    assert_eq!(err, "error: /does/not/exist does not exist; pass an existing directory\n");
}

#[test]
fn gc_rewrites_a_pack_that_is_partly_dead_and_keeps_the_rest_readable() {
    let env = TestEnv::new();
    // Both in the save's first pack, which is published at 2 MiB.
    write(&env.work(), "dead.bin", common::noise(900_000, 11));
    write(&env.work(), "alive.bin", common::noise(900_000, 12));
    let first = env.json(&["save"]);
    std::fs::remove_file(env.work().join("dead.bin")).unwrap();
    let second = env.json(&["save"]);
    env.ok(&["config", "set", "gc.grace", "0s"]);
    env.ok(&["remove", first["id"].as_str().unwrap()]);
    let gc = env.json(&["gc"]);
    assert_eq!(gc["packs_rewritten"], 1, "{gc}");
    assert!(gc["bytes_freed"].as_u64().unwrap() >= 850_000, "{gc}");
    env.ok(&["check", "--read-data"]);
    let dest = env.root().join("copy");
    env.ok(&["restore", second["id"].as_str().unwrap(), "--to", dest.to_str().unwrap()]);
    assert_eq!(std::fs::read(dest.join("alive.bin")).unwrap(), common::noise(900_000, 12));
}
