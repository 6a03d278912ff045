//! `repair` only adds: a lost, empty or garbled catalog gives back every snapshot whose record
//! and data exist; a pack whose trailer is damaged is recovered from its header found again,
//! not dropped; in an encrypted store one damaged record stays one damaged record. In each
//! case `gc` after the repair keeps every snapshot restorable, byte for byte.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{Entry, TestEnv, describe, noise, write};

/// Two snapshots, `one` and `two`, each in a pack of its own; what each holds.
fn two_snapshots(env: &TestEnv) -> Vec<(&'static str, BTreeMap<PathBuf, Entry>)> {
    write(&env.work(), "a.bin", noise(300_000, 1));
    write(&env.work(), "src/main.rs", "fn main() {}\n".repeat(200));
    env.ok(&["save", "--name", "one"]);
    let one = describe(&env.work());
    write(&env.work(), "b.bin", noise(300_000, 2));
    write(&env.work(), "src/lib.rs", "pub fn lib() {}\n".repeat(300));
    env.ok(&["save", "--name", "two"]);
    vec![("one", one), ("two", describe(&env.work()))]
}

/// Every pack file of the store at `store`, oldest first.
fn packs(store: &Path) -> Vec<PathBuf> {
    let dir = if store.join("objects").exists() { store.join("objects/packs") } else { store.join("packs") };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = common::permissions_below(&dir)
        .into_iter()
        .map(|(p, _, _)| p)
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .map(|p| (std::fs::metadata(&p).unwrap().modified().unwrap(), p))
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

fn flip(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x55;
    std::fs::write(path, bytes).unwrap();
}

/// Asserts that every snapshot restores exactly what it held.
fn every_snapshot_restores(env: &TestEnv, snapshots: &[(&str, BTreeMap<PathBuf, Entry>)], when: &str) {
    for (name, held) in snapshots {
        let dest = env.root().join(format!("restored-{name}-{}", when.replace(' ', "-")));
        env.ok(&["restore", name, "--to", dest.to_str().unwrap()]);
        assert_eq!(&describe(&dest), held, "{name} {when}");
    }
}

fn remove_catalog(store: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(store.join(format!("catalog.db{suffix}")));
    }
}

#[test]
fn a_lost_catalog_is_named_by_every_command_and_repair_gives_back_every_snapshot() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    remove_catalog(&env.store());
    assert_cli!(env, "repair_recovers_lost_catalog", [["list"], ["repair"]]);
    let listed = env.json(&["list"]);
    let names: Vec<&str> =
        listed["snapshots"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["two", "one"]);
    every_snapshot_restores(&env, &snapshots, "after repair");
    env.ok(&["gc"]);
    every_snapshot_restores(&env, &snapshots, "after gc");
}

#[test]
fn an_empty_or_garbled_catalog_is_rebuilt_from_the_records() {
    let mut refusals = String::new();
    for damage in ["empty", "garbled"] {
        let env = TestEnv::new();
        let snapshots = two_snapshots(&env);
        remove_catalog(&env.store());
        let catalog = env.store().join("catalog.db");
        std::fs::write(&catalog, if damage == "empty" { Vec::new() } else { noise(64 * 1024, 7) }).unwrap();
        refusals += &format!("{damage}: {}", env.normalize(&env.fails(&["list"], 1)));
        let repair = env.json(&["repair"]);
        assert_eq!(repair["snapshots_recovered"], 2, "{damage}: {repair}");
        assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{damage}: {repair}");
        assert_eq!(repair["catalog_set_aside"].is_string(), damage == "garbled", "{damage}: {repair}");
        assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), 2, "{damage}");
        every_snapshot_restores(&env, &snapshots, &format!("{damage} after repair"));
        env.ok(&["gc"]);
        every_snapshot_restores(&env, &snapshots, &format!("{damage} after gc"));
        let saved = env.json(&["save"]);
        let dest = env.root().join("after-save");
        env.ok(&["restore", saved["id"].as_str().unwrap(), "--to", dest.to_str().unwrap()]);
        assert_eq!(describe(&dest), describe(&env.work()), "{damage}");
    }
    insta::assert_snapshot!(refusals, @r"
        empty: error: the store's catalog lists nothing, but the store holds 2 snapshot record(s): the catalog was lost or emptied, and a repair rebuilds it from them; run `cairn repair`
        garbled: error: the store's catalog is damaged (file is not a database); run `cairn repair`
    ");
}

#[test]
fn a_damaged_pack_trailer_is_recovered_and_gc_keeps_every_snapshot() {
    for damage in ["magic", "length", "cut"] {
        let env = TestEnv::new();
        let snapshots = two_snapshots(&env);
        let pack = packs(&env.store()).pop().unwrap();
        let len = std::fs::metadata(&pack).unwrap().len() as usize;
        match damage {
            "magic" => flip(&pack, len - 1),
            "length" => flip(&pack, len - 12),
            _ => std::fs::write(&pack, &std::fs::read(&pack).unwrap()[..len - 1]).unwrap(),
        }
        let repair = env.json(&["repair"]);
        let recovered = repair["packs_recovered"].as_array().unwrap();
        assert_eq!(recovered.len(), 1, "{damage}: {repair}");
        assert_eq!(recovered[0]["recovery"], "header", "{damage}: {repair}");
        assert_eq!(recovered[0]["whole"], true, "{damage}: {repair}");
        assert_eq!(repair["packs_damaged"], serde_json::json!([]), "{damage}: {repair}");
        assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{damage}: {repair}");
        env.ok(&["gc"]);
        every_snapshot_restores(&env, &snapshots, &format!("{damage} after gc"));
    }
}

#[test]
fn a_damaged_pack_trailer_with_the_catalog_lost_too_is_recovered() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    let pack = packs(&env.store()).pop().unwrap();
    let len = std::fs::metadata(&pack).unwrap().len() as usize;
    flip(&pack, len - 11);
    remove_catalog(&env.store());
    assert_cli!(env, "repair_recovers_damaged_trailer", [["repair"]]);
    env.ok(&["gc"]);
    every_snapshot_restores(&env, &snapshots, "after gc");
}

#[test]
fn a_header_damaged_inside_is_recovered_from_the_catalog_index() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    let pack = packs(&env.store()).pop().unwrap();
    let len = std::fs::metadata(&pack).unwrap().len() as usize;
    flip(&pack, len - 20);
    let repair = env.json(&["repair"]);
    assert_eq!(repair["packs_recovered"][0]["recovery"], "blobs", "{repair}");
    assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{repair}");
    env.ok(&["gc"]);
    every_snapshot_restores(&env, &snapshots, "after gc");
}

/// An encrypted store directory, its catalog cached below the test's HOME.
fn encrypted() -> TestEnv {
    let env = TestEnv::new().with_var("CAIRN_PASSWORD", "local");
    env.ok(&["init", "--encrypt"]);
    env
}

fn cached_catalogs(env: &TestEnv) -> PathBuf {
    env.home().join(".cache/cairn")
}

#[test]
fn an_encrypted_store_with_one_damaged_record_keeps_working() {
    let env = encrypted();
    let snapshots = two_snapshots(&env);
    let listed = env.json(&["list"]);
    let one = listed["snapshots"].as_array().unwrap().iter().find(|s| s["name"] == "one").unwrap().clone();
    let record = env.store().join(format!("records/{}.json", one["id"].as_str().unwrap()));
    let len = std::fs::metadata(&record).unwrap().len() as usize;
    flip(&record, len / 2);
    for round in ["cache kept", "cache rebuilt"] {
        if round == "cache rebuilt" {
            std::fs::remove_dir_all(cached_catalogs(&env)).unwrap();
            // The catalog's catch-up passes the damaged record by: the store works without it,
            // and `check` names it and what puts it right.
            let listed = env.json(&["list"]);
            let ids: Vec<&str> =
                listed["snapshots"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
            assert!(!ids.contains(&one["id"].as_str().unwrap()) && ids.len() == 2, "{listed}");
            let check = env.json_any(&["check"]);
            let problems = check["problems"].to_string().replace(one["id"].as_str().unwrap(), "[ONE]");
            insta::assert_snapshot!(env.normalize(&problems), @r#"["snapshot record records/[ONE].json is not in the catalog; repair the store to add it back"]"#);
        }
        let repair = env.json(&["repair"]);
        let damaged = repair["records_damaged"].as_array().unwrap();
        if round == "cache rebuilt" {
            assert_eq!(damaged.len(), 1, "{round}: {repair}");
            let key = damaged[0]["key"].as_str().unwrap().replace(one["id"].as_str().unwrap(), "[ONE]");
            insta::assert_snapshot!(key, @"records/[ONE].json");
        }
        env.ok(&["list"]);
        // `check` may report the damaged record; it never takes it for a wrong password.
        let check = env.run(&["check"]);
        assert!(check.code == 0 || check.code == 1, "{round}: {}", check.stderr);
        assert!(!check.stderr.contains("does not unlock"), "{round}: {}", check.stderr);
        every_snapshot_restores(&env, &snapshots[1..], round);
        let saved = env.json(&["save"]);
        let dest = env.root().join(format!("saved-{}", round.replace(' ', "-")));
        env.ok(&["restore", saved["id"].as_str().unwrap(), "--to", dest.to_str().unwrap()]);
        assert_eq!(describe(&dest), describe(&env.work()), "{round}");
    }
}

#[test]
fn an_encrypted_store_with_a_damaged_pack_trailer_is_recovered() {
    let env = encrypted();
    let snapshots = two_snapshots(&env);
    let pack = packs(&env.store()).pop().unwrap();
    let len = std::fs::metadata(&pack).unwrap().len() as usize;
    flip(&pack, len - 2);
    let repair = env.json(&["repair"]);
    assert_eq!(repair["packs_recovered"][0]["whole"], true, "{repair}");
    assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{repair}");
    env.ok(&["gc"]);
    every_snapshot_restores(&env, &snapshots, "after gc");
    std::fs::remove_dir_all(cached_catalogs(&env)).unwrap();
    let repair = env.json(&["repair"]);
    assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{repair}");
    every_snapshot_restores(&env, &snapshots, "after the cache was rebuilt");
    // Damaged again with no cache: the catch-up on open passes the pack by, every command
    // still works, `check` names the pack, and a repair recovers it.
    let pack = packs(&env.store()).pop().unwrap();
    let len = std::fs::metadata(&pack).unwrap().len() as usize;
    flip(&pack, len - 30);
    std::fs::remove_dir_all(cached_catalogs(&env)).unwrap();
    assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), snapshots.len());
    let check = env.json_any(&["check"]);
    let name = pack.file_name().unwrap().to_str().unwrap();
    let dir = pack.parent().unwrap().file_name().unwrap().to_str().unwrap();
    let problems = check["problems"].to_string().replace(&format!("{dir}/{name}"), "[DAMAGED PACK]");
    insta::assert_snapshot!(env.normalize(&problems), @r#"["object [HASH] is missing","pack packs/[DAMAGED PACK] has a header that does not read, so nothing is read from it; repair the store to recover what it holds"]"#);
    // Its header is damaged inside and sealed, and no catalog is left that placed its blobs:
    // what it held is lost, and the repair says which snapshots lost it; the rest restore.
    let repair = env.json(&["repair"]);
    let lost: Vec<&str> =
        repair["damaged_snapshots"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    let total = snapshots.len();
    let kept: Vec<_> = snapshots
        .into_iter()
        .filter(|(name, _)| !lost.contains(&env.json(&["show", name])["id"].as_str().unwrap()))
        .collect();
    assert!(kept.len() < total, "{repair}");
    every_snapshot_restores(&env, &kept, "after the repair");
}

#[test]
fn a_lost_format_file_and_a_garbage_config_are_put_right_by_repair() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    std::fs::remove_file(env.store().join("FORMAT")).unwrap();
    std::fs::write(env.store().join("config.toml"), "this is [not toml").unwrap();
    assert_ne!(env.run(&["list"]).code, 0);
    let repair = env.json(&["repair"]);
    assert_eq!(repair["format_rewritten"], true, "{repair}");
    assert!(repair["config_set_aside"].is_string(), "{repair}");
    every_snapshot_restores(&env, &snapshots, "after repair");
}

#[test]
fn an_encrypted_store_that_lost_its_marker_gets_one_back_from_its_keys() {
    let env = encrypted();
    let snapshots = two_snapshots(&env);
    std::fs::remove_file(env.store().join("cairn-store.json")).unwrap();
    assert_ne!(env.run(&["list"]).code, 0);
    let repair = env.json(&["repair"]);
    assert_eq!(repair["marker_rewritten"], true, "{repair}");
    assert_eq!(repair["snapshots_recovered"], 2, "{repair}");
    every_snapshot_restores(&env, &snapshots, "after repair");
    let wrong = TestEnv::new().with_var("CAIRN_PASSWORD", "wrong").with_store(env.store());
    insta::assert_snapshot!(env.normalize(&wrong.fails(&["list"], 1)), @"error: the password does not unlock the store at [TMP]/store (its one key does not match)");
}

#[test]
fn a_lost_catalog_with_packs_but_no_records_is_named_until_repaired() {
    let env = TestEnv::new();
    two_snapshots(&env);
    remove_catalog(&env.store());
    std::fs::remove_dir_all(env.store().join("objects/records")).unwrap();
    std::fs::create_dir(env.store().join("objects/records")).unwrap();
    for _ in 0..2 {
        insta::allow_duplicates! {
            insta::assert_snapshot!(env.normalize(&env.fails(&["list"], 1)), @"error: the store's catalog lists nothing, but the store holds 2 pack(s) of data: the catalog was lost or emptied, and a repair rebuilds it from them; run `cairn repair`");
        }
    }
    let repair = env.json(&["repair"]);
    assert_eq!(repair["packs_indexed"], 2, "{repair}");
    assert_eq!(env.json(&["list"])["snapshots"], serde_json::json!([]));
}

#[test]
fn a_damaged_record_is_listed_and_the_other_snapshots_come_back() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    let listed = env.json(&["list"]);
    let one = listed["snapshots"].as_array().unwrap().iter().find(|s| s["name"] == "one").unwrap().clone();
    let id = one["id"].as_str().unwrap();
    flip(&env.store().join(format!("objects/records/{id}.json")), 10);
    remove_catalog(&env.store());
    let repair = env.json(&["repair"]);
    assert_eq!(repair["snapshots_recovered"], 1, "{repair}");
    assert_eq!(repair["records_damaged"][0]["key"], format!("records/{id}.json"), "{repair}");
    env.ok(&["gc"]);
    every_snapshot_restores(&env, &snapshots[1..], "after gc");
    assert!(env.store().join(format!("objects/records/{id}.json")).exists(), "repair kept the record");
}

#[test]
fn a_damaged_key_object_is_damage_not_a_wrong_password() {
    let env = encrypted();
    env.write("a.txt", "a\n");
    env.ok(&["save"]);
    let keys: Vec<PathBuf> =
        std::fs::read_dir(env.store().join("keys")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(keys.len(), 1);
    let bytes = std::fs::read(&keys[0]).unwrap();
    std::fs::write(&keys[0], &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_dir_all(cached_catalogs(&env)).unwrap();
    insta::assert_snapshot!(env.normalize(&env.fails(&["list"], 1)), @"error: the password does not unlock the store at [TMP]/store (it has no key object that reads), and 1 key object(s) are damaged (first: [ID1]); unlock with another secret of the store, or put back a copy of the key object");
}

#[test]
fn a_pack_whose_header_and_catalog_are_both_lost_gives_back_what_its_snapshots_want() {
    // A byte inside the header (what it still says is checked blob by blob), and its entry
    // count zeroed (it says nothing: frames, then raw blobs the records want, are searched for).
    for damage in ["inside", "count"] {
        let env = TestEnv::new();
        let snapshots = two_snapshots(&env);
        let pack = packs(&env.store()).pop().unwrap();
        let mut bytes = std::fs::read(&pack).unwrap();
        let len = bytes.len();
        if damage == "inside" {
            bytes[len - 20] ^= 0x55;
        } else {
            let header_len = u32::from_le_bytes(bytes[len - 12..len - 8].try_into().unwrap()) as usize;
            bytes[len - 12 - header_len] = 0;
        }
        std::fs::write(&pack, bytes).unwrap();
        remove_catalog(&env.store());
        let repair = env.json(&["repair"]);
        assert_eq!(repair["packs_recovered"][0]["recovery"], "blobs", "{damage}: {repair}");
        assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{damage}: {repair}");
        env.ok(&["gc"]);
        every_snapshot_restores(&env, &snapshots, &format!("{damage} after gc"));
    }
}

#[test]
fn an_encrypted_stores_cache_with_a_damaged_format_file_is_set_aside_and_built_again() {
    let env = encrypted();
    let snapshots = two_snapshots(&env);
    let cache = std::fs::read_dir(cached_catalogs(&env)).unwrap().next().unwrap().unwrap().path();
    for (round, damage) in ["garbled", "deleted"].into_iter().enumerate() {
        match damage {
            "garbled" => std::fs::write(cache.join("FORMAT"), "cairn-storf-format 1\n").unwrap(),
            _ => std::fs::remove_file(cache.join("FORMAT")).unwrap(),
        }
        // The cache is the store's own to rebuild: every command works at once, no repair.
        assert_eq!(env.json(&["list"])["snapshots"].as_array().unwrap().len(), snapshots.len());
        every_snapshot_restores(&env, &snapshots, damage);
        let aside = std::fs::read_dir(cached_catalogs(&env))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".damaged-"))
            .count();
        assert_eq!(aside, round + 1, "each damaged cache is kept aside, not deleted");
    }
}

#[test]
fn a_snapshot_row_damaged_in_place_is_put_right_from_its_record() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    let id = |name: &str| env.json(&["show", name])["id"].as_str().unwrap().to_owned();
    let (one, two) = (id("one"), id("two"));
    // Damage SQLite's own checks cannot see: a value changed in a row, a row gone from a table.
    let catalog = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    catalog.execute("UPDATE snapshots SET root = zeroblob(32) WHERE id = ?1", [&one]).unwrap();
    catalog.execute("DELETE FROM memberships WHERE snapshot_id = ?1", [&two]).unwrap();
    drop(catalog);
    let repair = env.json(&["repair"]);
    let mut corrected: Vec<&str> =
        repair["snapshots_corrected"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    corrected.sort();
    let mut expected = vec![format!("records/{one}.json"), format!("records/{two}.json")];
    expected.sort();
    assert_eq!(corrected, expected, "{repair}");
    assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{repair}");
    every_snapshot_restores(&env, &snapshots, "after the rows were put right");
    // A catalog that agrees with its records is left as it is.
    assert!(env.json(&["repair"]).get("snapshots_corrected").is_none());
}

#[test]
fn a_record_damaged_where_it_still_parses_does_not_overwrite_a_sound_row() {
    let env = TestEnv::new();
    let snapshots = two_snapshots(&env);
    let one = env.json(&["show", "one"])["id"].as_str().unwrap().to_owned();
    let record = env.store().join(format!("objects/records/{one}.json"));
    let text = std::fs::read_to_string(&record).unwrap();
    // Another hash of the same form: the record still parses, and names a root that is not there.
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let root = value["root"].as_str().unwrap();
    // Its first digit changed (a root hash need not hold any one digit: replacing every `a`
    // left about one root in 60 as it was).
    let first = if root.starts_with('0') { "1" } else { "0" };
    let other = format!("{first}{}", &root[1..]);
    assert_ne!(root, other);
    std::fs::write(&record, text.replace(root, &other)).unwrap();
    let repair = env.json(&["repair"]);
    assert!(repair.get("snapshots_corrected").is_none(), "{repair}");
    every_snapshot_restores(&env, &snapshots, "after the repair");
}

#[test]
fn an_encrypted_stores_cache_catalog_cut_short_is_built_again_by_repair() {
    let env = encrypted();
    let snapshots = two_snapshots(&env);
    let cache = std::fs::read_dir(cached_catalogs(&env)).unwrap().next().unwrap().unwrap().path();
    let catalog = cache.join("catalog.db");
    let len = std::fs::metadata(&catalog).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&catalog).unwrap().set_len(len / 2).unwrap();
    env.json(&["repair"]);
    every_snapshot_restores(&env, &snapshots, "after the repair");
}

#[test]
fn a_damaged_pack_this_machine_holds_in_its_pack_cache_is_reported_and_put_back_whole() {
    let env = encrypted();
    let snapshots = two_snapshots(&env);
    // Restores read every pack into the pack cache.
    every_snapshot_restores(&env, &snapshots, "before");
    let pack = packs(&env.store()).pop().unwrap();
    let original = std::fs::read(&pack).unwrap();
    for damage in ["empty", "flip"] {
        let mut bytes = original.clone();
        match damage {
            "empty" => bytes.clear(),
            _ => bytes[original.len() / 3] ^= 0x40,
        }
        std::fs::write(&pack, &bytes).unwrap();
        if damage == "empty" {
            // The stored file is not the size the catalog gives: it is read and checked itself,
            // not the cached copy that would hide its damage.
            let check = env.run(&["check", "--read-data"]);
            assert_eq!(check.code, 1, "{damage}: {}", check.stdout);
        }
        let repair = env.json(&["repair"]);
        let recovered = &repair["packs_recovered"];
        assert_eq!(recovered[0]["recovery"], "cache", "{damage}: {repair}");
        assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{damage}: {repair}");
        assert_eq!(std::fs::read(&pack).unwrap(), original, "{damage}: the pack was not put back as it was");
        env.ok(&["gc"]);
        every_snapshot_restores(&env, &snapshots, &format!("after {damage}"));
        assert_eq!(env.run(&["check", "--read-data"]).code, 0, "{damage}");
    }
}
