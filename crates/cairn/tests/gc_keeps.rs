//! gc deletes only what it can prove unreferenced from records it has read: a lost or empty
//! catalog, a pack whose trailer is damaged and a pack file the catalog does not know are kept
//! and reported; a removed snapshot's record and data are still reclaimed; `--prune-orphans`
//! deletes orphans when asked. And a save after index damage that `check` reported stores the
//! lost content again instead of claiming it.

mod common;

use std::path::{Path, PathBuf};

use common::{TestEnv, describe, noise, write};

/// Every file below the store's `objects/`, sorted.
fn objects(env: &TestEnv) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = common::permissions_below(&env.store().join("objects"))
        .into_iter()
        .map(|(p, is_dir, _)| (p, is_dir))
        .filter(|(_, is_dir)| !is_dir)
        .map(|(p, _)| p)
        .collect();
    files.sort();
    files
}

fn packs(env: &TestEnv) -> Vec<PathBuf> {
    objects(env).into_iter().filter(|p| p.extension().is_some_and(|e| e == "pack")).collect()
}

/// Two snapshots, `one` and `two`, each with data of its own in a pack of its own; `two`
/// shares `src/` with `one`.
fn two_snapshots(env: &TestEnv) -> (PathBuf, PathBuf) {
    snapshots_sharing(env, true)
}

/// [`two_snapshots`], with `src/` in `two` too only when `share`.
fn snapshots_sharing(env: &TestEnv, share: bool) -> (PathBuf, PathBuf) {
    env.ok(&["config", "set", "gc.grace", "0s"]);
    write(&env.work(), "a.bin", noise(300_000, 1));
    write(&env.work(), "src/main.rs", "fn main() {}\n");
    env.ok(&["save", "--name", "one"]);
    let first = packs(env);
    std::fs::remove_file(env.work().join("a.bin")).unwrap();
    if !share {
        std::fs::remove_dir_all(env.work().join("src")).unwrap();
    }
    write(&env.work(), "b.bin", noise(300_000, 2));
    env.ok(&["save", "--name", "two"]);
    let second: Vec<PathBuf> = packs(env).into_iter().filter(|p| !first.contains(p)).collect();
    assert_eq!((first.len(), second.len()), (1, 1));
    (first[0].clone(), second[0].clone())
}

fn restores(
    env: &TestEnv,
    reference: &str,
    dest: &str,
) -> std::collections::BTreeMap<PathBuf, common::Entry> {
    let dest = env.root().join(dest);
    env.ok(&["restore", reference, "--to", dest.to_str().unwrap()]);
    describe(&dest)
}

fn lose_catalog(env: &TestEnv, empty: bool) {
    for name in ["catalog.db", "catalog.db-wal", "catalog.db-shm"] {
        let _ = std::fs::remove_file(env.store().join(name));
    }
    if empty {
        std::fs::write(env.store().join("catalog.db"), b"").unwrap();
    }
}

#[test]
fn gc_deletes_nothing_after_the_catalog_is_lost_or_emptied() {
    for empty in [false, true] {
        let env = TestEnv::new();
        two_snapshots(&env);
        let before = objects(&env);
        assert_eq!(before.iter().filter(|p| p.extension().is_some_and(|e| e == "json")).count(), 2);
        lose_catalog(&env, empty);
        let out = env.cairn(&["gc"]).output().unwrap();
        assert_eq!(objects(&env), before, "gc deleted a record or a pack");
        // Whether the store refuses to work on such a catalog or gc keeps everything, one
        // line says why and points to the repair.
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let why: Vec<&str> = text.lines().filter(|l| l.contains("repair")).collect();
        assert_eq!(why.len(), 1, "{text}");
    }
}

#[test]
fn removing_a_snapshot_still_lets_gc_reclaim_its_record_and_its_pack() {
    let env = TestEnv::new();
    let (first, second) = two_snapshots(&env);
    let one = env.json(&["show", "one"])["id"].as_str().unwrap().to_owned();
    let record = env.store().join(format!("objects/records/{one}.json"));
    assert!(record.exists());
    env.ok(&["remove", "one"]);
    assert!(!record.exists(), "remove deletes the record of a snapshot no session holds");
    let gc = env.json(&["gc"]);
    assert!(gc["kept"].is_null(), "{gc}");
    assert!(!first.exists(), "the removed snapshot's pack is deleted");
    assert!(second.exists());
    assert_eq!(restores(&env, "two", "two"), describe(&env.work()));
}

#[test]
fn a_record_left_by_a_removal_is_deleted_on_the_catalogs_proof_and_an_orphan_is_kept() {
    let env = TestEnv::new();
    two_snapshots(&env);
    let one = env.json(&["show", "one"])["id"].as_str().unwrap().to_owned();
    let record = env.store().join(format!("objects/records/{one}.json"));
    let kept = std::fs::read(&record).unwrap();
    env.ok(&["remove", "one"]);
    // What a remove killed between its commit and the record's deletion leaves.
    std::fs::write(&record, &kept).unwrap();
    let gc = env.json(&["gc"]);
    assert_eq!(gc["records_removed"], 1, "{gc}");
    assert!(!record.exists());
    // A record the catalog never committed (lost track of): kept, with what it refers to.
    let two = env.json(&["show", "two"])["id"].as_str().unwrap().to_owned();
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    conn.execute("DELETE FROM memberships WHERE snapshot_id = ?1", [&two]).unwrap();
    conn.execute("DELETE FROM snapshots WHERE id = ?1", [&two]).unwrap();
    conn.execute("DELETE FROM synced WHERE key = ?1", [format!("records/{two}.json")]).unwrap();
    // And the note its save made before writing the record, which a catalog that lost track of
    // the snapshot (an older copy, an emptied one) lacks too.
    conn.execute("DELETE FROM records_begun WHERE key = ?1", [format!("records/{two}.json")]).unwrap();
    drop(conn);
    let before = objects(&env);
    assert_cli!(env, "gc_keeps_an_orphan_record", [["check"], ["gc"]]);
    assert_eq!(objects(&env), before);
}

/// Flips the last byte of `pack`: its magic number.
fn damage_trailer(pack: &Path) {
    let mut bytes = std::fs::read(pack).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(pack, bytes).unwrap();
}

#[test]
fn a_pack_whose_trailer_is_damaged_is_kept_until_orphans_are_pruned() {
    let env = TestEnv::new();
    let (first, _) = snapshots_sharing(&env, false);
    // The blobs stay readable whatever the trailer says: nothing in the pack may be deleted
    // on the strength of an index that a damaged header cannot confirm.
    damage_trailer(&first);
    env.ok(&["remove", "one"]);
    assert_cli!(env, "gc_keeps_a_pack_with_a_damaged_trailer", [["gc"]]);
    assert!(first.exists());
    // The catalog forgets it (as a repair that could not index it did): still kept.
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    let key = format!("packs/{}", first.strip_prefix(env.store().join("objects/packs")).unwrap().display());
    conn.execute("DELETE FROM blobs WHERE pack = (SELECT id FROM packs WHERE key = ?1)", [&key]).unwrap();
    conn.execute("DELETE FROM packs WHERE key = ?1", [&key]).unwrap();
    drop(conn);
    assert_cli!(env, "gc_keeps_an_unknown_pack_with_a_damaged_trailer", [["gc"], ["gc", "--prune-orphans"]]);
    assert!(!first.exists(), "--prune-orphans deletes it");
    assert_eq!(restores(&env, "two", "two"), describe(&env.work()));
}

#[test]
fn gc_keeps_a_pack_file_the_catalog_does_not_know_that_holds_live_data() {
    let env = TestEnv::new();
    let (_, second) = two_snapshots(&env);
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    let key = format!("packs/{}", second.strip_prefix(env.store().join("objects/packs")).unwrap().display());
    conn.execute("DELETE FROM blobs WHERE pack = (SELECT id FROM packs WHERE key = ?1)", [&key]).unwrap();
    conn.execute("DELETE FROM packs WHERE key = ?1", [&key]).unwrap();
    drop(conn);
    let out = env.json(&["gc"]);
    // The second snapshot's root document, and what the stat cache names: the new file's
    // content and the tree of the directory it is in.
    insta::assert_snapshot!(env.normalize(&out["kept"].to_string()), @r#"["gc deleted nothing: 3 object(s) snapshots refer to are whole in pack files but not in the index; repair the store first"]"#);
    assert!(second.exists());
}

#[test]
fn a_save_after_the_index_lost_rows_stores_that_content_again() {
    let env = TestEnv::new();
    for i in 0..4 {
        write(&env.work(), &format!("f{i}.txt"), format!("file {i}\n"));
    }
    write(&env.work(), "big.bin", noise(300_000, 3));
    env.ok(&["save", "--name", "one"]);
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    let lost = conn.execute("DELETE FROM blobs WHERE id IN (SELECT id FROM blobs LIMIT 3)", []).unwrap();
    assert_eq!(lost, 3);
    drop(conn);
    let out = env.cairn(&["check"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Fewer when a lost row was a tree's: the walk stops there.
    assert!(text.contains("is missing"), "{text}");
    write(&env.work(), "f0.txt", "file 0, changed\n");
    env.ok(&["save", "--name", "two"]);
    assert_eq!(restores(&env, "two", "two"), describe(&env.work()));
}

#[test]
fn a_save_after_the_index_points_a_blob_elsewhere_stores_it_again() {
    let env = TestEnv::new();
    write(&env.work(), "a.bin", noise(200_000, 4));
    write(&env.work(), "b.bin", noise(200_000, 5));
    env.ok(&["save", "--name", "one"]);
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    conn.execute("UPDATE blobs SET offset = offset + 7 WHERE id IN (SELECT id FROM blobs LIMIT 2)", [])
        .unwrap();
    drop(conn);
    let out = env.cairn(&["check", "--read-data"]).output().unwrap();
    assert!(!out.status.success());
    env.ok(&["save", "--name", "two"]);
    assert_eq!(restores(&env, "two", "two"), describe(&env.work()));
}

#[test]
fn gc_deletes_nothing_while_a_damaged_pack_the_catalog_lost_may_hold_what_a_snapshot_needs() {
    let env = TestEnv::new();
    // `two` needs `src/`, which is in the first pack.
    let (first, _) = two_snapshots(&env);
    damage_trailer(&first);
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    let key = format!("packs/{}", first.strip_prefix(env.store().join("objects/packs")).unwrap().display());
    conn.execute("DELETE FROM blobs WHERE pack = (SELECT id FROM packs WHERE key = ?1)", [&key]).unwrap();
    conn.execute("DELETE FROM packs WHERE key = ?1", [&key]).unwrap();
    drop(conn);
    let before = objects(&env);
    // `--prune-orphans` would delete it: that is for after a repair, which indexes what it holds.
    assert_cli!(env, "gc_refuses_while_a_lost_pack_may_hold_live_data", [["gc"]]);
    assert_eq!(objects(&env), before);
}

#[test]
fn check_read_data_reads_every_record_back() {
    let env = TestEnv::new();
    two_snapshots(&env);
    let one = env.json(&["show", "one"])["id"].as_str().unwrap().to_owned();
    let record = env.store().join(format!("objects/records/{one}.json"));
    let mut bytes = std::fs::read(&record).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&record, bytes).unwrap();
    // The catalog still holds the snapshot: only reading the record back finds the damage.
    env.ok(&["check"]);
    let out = env.cairn(&["--json", "check", "--read-data"]).output().unwrap();
    assert!(!out.status.success());
    let value: serde_json::Value =
        serde_json::Deserializer::from_slice(&out.stdout).into_iter().next().unwrap().unwrap();
    let problems: Vec<&str> =
        value["problems"].as_array().unwrap().iter().filter_map(|p| p.as_str()).collect();
    // Where the cut falls depends on the record's length, which its timings change.
    let text = problems.join("\n").replace(&one.to_string(), "[ONE]");
    let column = text.find("column ").map_or(text.len(), |at| at + "column ".len());
    let digits = text[column..].chars().take_while(char::is_ascii_digit).count();
    let text = format!("{}[N]{}", &text[..column], &text[column + digits..]);
    insta::assert_snapshot!(text, @"record records/[ONE].json does not decode (EOF while parsing a string at line 1 column [N]); repair the store");
}

#[test]
fn a_blob_the_index_dropped_as_damaged_is_known_lost_and_gc_goes_on() {
    let env = TestEnv::new();
    let (first, second) = snapshots_sharing(&env, false);
    // b.bin's bytes fail their hash check, and the index no longer holds them, as after a
    // repair: the pack's header still lists it, but it is not whole anywhere.
    let mut bytes = std::fs::read(&second).unwrap();
    bytes[1000] ^= 0x55;
    std::fs::write(&second, bytes).unwrap();
    let key = format!("packs/{}", second.strip_prefix(env.store().join("objects/packs")).unwrap().display());
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    let dropped = conn
        .execute(
            "DELETE FROM blobs WHERE length > 100000 AND pack = (SELECT id FROM packs WHERE key = ?1)",
            [&key],
        )
        .unwrap();
    assert_eq!(dropped, 1);
    drop(conn);
    env.ok(&["remove", "one"]);
    let gc = env.json(&["gc"]);
    assert!(gc["kept"].is_null(), "{gc}");
    assert!(!first.exists(), "the removed snapshot's pack is deleted");
}

/// A restore into a new directory leaves a stat cache for it, which names the blobs written
/// there. Once the directory is deleted and the snapshot removed, nothing else holds them: gc
/// drops the cache and frees the data, and keeps the cache of a directory that is still there.
#[test]
fn gc_drops_the_stat_cache_of_a_deleted_restore_destination_and_frees_what_only_it_named() {
    let env = TestEnv::new();
    env.ok(&["config", "set", "gc.grace", "0s"]);
    write(&env.work(), "a.bin", noise(300_000, 7));
    env.ok(&["save", "--name", "one"]);
    let kept = env.root().join("kept");
    let deleted = env.root().join("deleted");
    for dest in [&kept, &deleted] {
        env.ok(&["restore", "one", "--to", dest.to_str().unwrap()]);
    }
    std::fs::remove_dir_all(&deleted).unwrap();
    std::fs::remove_file(env.work().join("a.bin")).unwrap();
    env.ok(&["save", "--name", "two"]);
    env.ok(&["remove", "one"]);

    let gc = env.json(&["gc"]);
    assert_eq!(gc["stat_caches_dropped"], 1, "{gc}");
    assert_eq!(gc["bytes_freed"], 0, "the cache of `kept` still names the data: {gc}");
    let targets = |env: &TestEnv| -> Vec<String> {
        let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
        let mut stmt = conn.prepare("SELECT DISTINCT target FROM stat_cache_dirs ORDER BY target").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap().to_string_lossy().into_owned();
    let left = targets(&env);
    assert!(left.contains(&canonical(&kept)), "{left:?}");
    assert!(left.iter().all(|t| !t.ends_with("/deleted")), "{left:?}");

    std::fs::remove_dir_all(&kept).unwrap();
    let gc = env.json(&["gc"]);
    assert_eq!(gc["stat_caches_dropped"], 1, "{gc}");
    assert!(gc["bytes_freed"].as_u64().unwrap() > 250_000, "the removed snapshot's data is freed: {gc}");
    assert_eq!(restores(&env, "two", "two"), describe(&env.work()));
}
