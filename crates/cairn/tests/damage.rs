//! A damaged store is found, contained and repaired: flipped, truncated and deleted packs, a
//! flipped pack header, a damaged catalog page and a flipped stat cache are each reported by
//! `check`; a save never dedups against data the store cannot vouch for; after `repair` every
//! snapshot restores exactly or is listed with what it lost, and the next save restores exactly.

mod common;

use std::path::{Path, PathBuf};

use common::{TestEnv, describe, noise, write};

/// Two snapshots: `one` (a.bin, src/) in the first pack, `two` adding b.bin in a second.
fn two_packs(env: &TestEnv) -> (PathBuf, PathBuf) {
    write(&env.work(), "a.bin", noise(300_000, 1));
    write(&env.work(), "src/main.rs", "fn main() {}\n");
    env.ok(&["save", "--name", "one"]);
    let first = packs(env);
    write(&env.work(), "b.bin", noise(300_000, 2));
    env.ok(&["save", "--name", "two"]);
    let second: Vec<PathBuf> = packs(env).into_iter().filter(|p| !first.contains(p)).collect();
    assert_eq!((first.len(), second.len()), (1, 1));
    (first[0].clone(), second[0].clone())
}

fn packs(env: &TestEnv) -> Vec<PathBuf> {
    common::permissions_below(&env.store().join("objects/packs"))
        .into_iter()
        .map(|(p, _, _)| p)
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .collect()
}

fn flip(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = at.min(bytes.len() - 1);
    bytes[at] ^= 0x55;
    std::fs::write(path, bytes).unwrap();
}

fn problems(env: &TestEnv) -> Vec<String> {
    let out = env.cairn(&["--json", "check", "--read-data"]).output().unwrap();
    // A failed check prints its result, then the error object.
    let value: serde_json::Value =
        serde_json::Deserializer::from_slice(&out.stdout).into_iter().next().unwrap().unwrap();
    let list: Vec<String> =
        value["problems"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
    assert_eq!(out.status.success(), list.is_empty());
    list
}

/// Restores `reference` into a new directory and returns its description.
fn restored(env: &TestEnv, reference: &str) -> std::collections::BTreeMap<PathBuf, common::Entry> {
    let dest = env.root().join(format!("restored-{}", uuid_like()));
    env.ok(&["restore", reference, "--to", dest.to_str().unwrap()]);
    describe(&dest)
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

/// After damage, without a repair: a save of the same tree does not dedup against what was
/// damaged, so it restores exactly, and it stores that content again, which heals every older
/// snapshot that holds it.
fn healed_by_a_save(env: &TestEnv, damage: &str) {
    let saved = env.json(&["save"]);
    assert_eq!(restored(env, saved["id"].as_str().unwrap()), describe(&env.work()), "{damage}");
    for snapshot in env.json(&["list"])["snapshots"].as_array().unwrap() {
        restored(env, snapshot["id"].as_str().unwrap());
    }
    // A damaged pack that serves nothing now is removed by gc without waiting for the grace
    // period; one that still holds blobs no save stored again stays reported until a repair.
    env.ok(&["gc"]);
    let left = problems(env);
    assert!(
        left.iter().all(|p| p.starts_with("pack ") && p.ends_with("repair the store")),
        "{damage}: {left:?}"
    );
}

/// After damage: `repair` lists what each snapshot lost, gc runs, every other snapshot
/// restores, and the next save restores exactly.
fn repaired(env: &TestEnv, damage: &str) -> serde_json::Value {
    let repair = env.json(&["repair"]);
    env.ok(&["gc"]);
    let damaged: Vec<&str> =
        repair["damaged_snapshots"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    for snapshot in env.json(&["list"])["snapshots"].as_array().unwrap() {
        let id = snapshot["id"].as_str().unwrap();
        if !damaged.contains(&id) {
            restored(env, id);
        }
    }
    let again = env.json(&["save"]);
    assert_eq!(restored(env, again["id"].as_str().unwrap()), describe(&env.work()), "{damage}");
    repair
}

/// Runs `damage` on two fresh stores: one healed by a save, one repaired.
fn both_ways(damage: &str, hurt: impl Fn(&TestEnv, &Path, &Path)) -> serde_json::Value {
    let env = TestEnv::new();
    let (first, second) = two_packs(&env);
    hurt(&env, &first, &second);
    healed_by_a_save(&env, damage);
    let env = TestEnv::new();
    let (first, second) = two_packs(&env);
    hurt(&env, &first, &second);
    let repair = repaired(&env, damage);
    assert_eq!(restored(&env, "one").len(), 3, "{damage}: the first pack's snapshot restores");
    repair
}

#[test]
fn a_flipped_blob_is_reported_and_written_again_or_dropped_by_repair() {
    let repair = both_ways("flipped blob", |env, _, second| {
        flip(second, 1000);
        insta::allow_duplicates! {
            insta::assert_snapshot!(env.normalize(&problems(env).join("\n")), @"blob [HASH] fails its hash check; the store is damaged; check the store");
        }
    });
    assert_eq!(repair["blobs_dropped"].as_array().unwrap().len(), 1, "{repair}");
    assert_eq!(repair["damaged_snapshots"][0]["lost"], serde_json::json!(["b.bin"]), "{repair}");
}

#[test]
fn a_pack_cut_short_or_deleted_is_reported_and_a_save_writes_its_blobs_again() {
    for damage in ["truncate", "delete"] {
        let repair = both_ways(damage, |env, _, second| {
            if damage == "truncate" {
                let bytes = std::fs::read(second).unwrap();
                std::fs::write(second, &bytes[..bytes.len() - 1]).unwrap();
            } else {
                std::fs::remove_file(second).unwrap();
            }
            let found = problems(env);
            let expected = if damage == "truncate" { "pack magic number" } else { "its file is missing" };
            assert!(found.iter().any(|p| p.contains(expected)), "{damage}: {found:?}");
        });
        let lost = repair["damaged_snapshots"].as_array().unwrap();
        if damage == "truncate" {
            // One byte cut off the trailer: the header is found again, and nothing is lost.
            assert_eq!(lost.len(), 0, "{damage}: {repair}");
            assert_eq!(repair["packs_recovered"][0]["whole"], true, "{damage}: {repair}");
        } else {
            assert_eq!(lost.len(), 1, "{damage}: {repair}");
            assert_eq!(lost[0]["lost"], serde_json::json!(["/"]), "{damage}: {repair}");
        }
    }
}

#[test]
fn a_flipped_pack_header_or_magic_number_is_reported() {
    for (damage, from_end, expected) in [("header", 20, "header"), ("magic", 1, "magic number")] {
        let repair = both_ways(damage, |env, _, second| {
            let len = std::fs::metadata(second).unwrap().len() as usize;
            flip(second, len - from_end);
            let found = problems(env);
            assert!(found.iter().any(|p| p.contains(expected)), "{damage}: {found:?}");
        });
        // Recovered, not dropped: a damaged header from the blob index the catalog had (each
        // blob hash-checked where it places it), a damaged magic number from the header itself.
        let how = if damage == "header" { "blobs" } else { "header" };
        assert_eq!(repair["packs_recovered"][0]["recovery"], how, "{damage}: {repair}");
        assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{damage}: {repair}");
    }
}

#[test]
fn a_damaged_catalog_is_reported_by_check_and_rebuilt_by_repair() {
    let env = TestEnv::new();
    two_packs(&env);
    let before = describe(&env.work());
    let catalog = env.store().join("catalog.db");
    let conn = rusqlite::Connection::open(&catalog).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&catalog).unwrap();
    assert!(bytes.len() > 3 * 4096, "the catalog has few pages");
    for b in &mut bytes[4096..2 * 4096] {
        *b = 0xA5;
    }
    std::fs::write(&catalog, bytes).unwrap();
    insta::assert_snapshot!(env.normalize(&env.fails(&["list"], 1)), @"error: the store's catalog is damaged (database disk image is malformed); run `cairn repair`");
    insta::assert_snapshot!(env.normalize(&problems(&env).join("\n")), @"the store's catalog is damaged (database disk image is malformed); run `cairn repair`");
    let repair = env.json(&["repair"]);
    assert!(repair["catalog_set_aside"].is_string(), "{repair}");
    assert_eq!(repair["snapshots_recovered"], 2, "{repair}");
    assert_eq!(repair["damaged_snapshots"], serde_json::json!([]), "{repair}");
    assert_eq!(problems(&env), Vec::<String>::new());
    assert_eq!(restored(&env, "two"), before);
    env.ok(&["gc"]);
    let saved = env.json(&["save"]);
    assert_eq!(restored(&env, saved["id"].as_str().unwrap()), before);
}

#[test]
fn a_flipped_stat_cache_is_discarded_not_trusted() {
    let env = TestEnv::new();
    two_packs(&env);
    // Damage the stat cache row through SQLite itself, as a flipped bit in its page would.
    let conn = rusqlite::Connection::open(env.store().join("catalog.db")).unwrap();
    let data: Vec<u8> = conn.query_row("SELECT data FROM stat_caches", [], |r| r.get(0)).unwrap();
    let mut flipped = data.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x01;
    conn.execute("UPDATE stat_caches SET data = ?1", [flipped]).unwrap();
    drop(conn);
    let saved = env.json(&["save"]);
    assert!(
        saved["stats"]["read_bytes"].as_u64().unwrap() >= 600_000,
        "the damaged cache was trusted: {saved}"
    );
    assert_eq!(restored(&env, saved["id"].as_str().unwrap()), describe(&env.work()));
}
