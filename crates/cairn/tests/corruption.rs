//! The corruption test: damage one random file of a store (a flipped byte, a cut, a deletion, an
//! emptied file), then follow the tool's own advice, `check` → `repair` → `gc`, and check that
//! the advice only recovers:
//! - a restore never writes a wrong byte: one that succeeds gives the snapshot exactly;
//! - every snapshot that restored exactly after the damage still does after repair and gc;
//! - damage to the catalog, a record, the settings or the format file loses no snapshot at all
//!   once repaired (everything needed to rebuild them is in the packs);
//! - no command panics: each exits 0 or 1 with a sentence.
//!
//! Run on a plain and an encrypted store. Seeded and bounded: `CAIRN_CORRUPTION_SEED` picks the
//! run, `CAIRN_CORRUPTION_SECONDS` how long each store's loop lasts (15 by default;
//! `scripts/crash-test` runs it longer).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Entry, Rng, Run, TestEnv, describe, noise, write};

/// One way to damage a file.
#[derive(Debug, Clone, Copy)]
enum Damage {
    Flip(u64),
    Cut(u64),
    Delete,
    Empty,
}

/// Every file of the store that holds data or settings (locks and temp files are not state).
fn store_files(store: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = common::permissions_below(store)
        .into_iter()
        .map(|(path, _, _)| path)
        .filter(|path| path.is_file())
        .filter(|path| {
            let rel = path.strip_prefix(store).unwrap();
            !rel.starts_with("locks") && !rel.starts_with("tmp")
        })
        .collect();
    files.sort();
    files
}

fn damage(path: &Path, how: Damage) {
    match how {
        Damage::Flip(at) => {
            let mut bytes = std::fs::read(path).unwrap();
            if bytes.is_empty() {
                return;
            }
            let at = at as usize % bytes.len();
            bytes[at] ^= 0x5a;
            std::fs::write(path, bytes).unwrap();
        }
        Damage::Cut(at) => {
            let len = std::fs::metadata(path).unwrap().len();
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            file.set_len(at % len.max(1)).unwrap();
        }
        Damage::Delete => std::fs::remove_file(path).unwrap(),
        Damage::Empty => std::fs::write(path, b"").unwrap(),
    }
}

/// Whether losing `rel` may cost snapshots: a pack holds their data, and a key object the only
/// way to unlock an encrypted store. Anything else can be rebuilt from the packs and records.
fn may_lose_data(rel: &Path) -> bool {
    rel.components().any(|c| c.as_os_str() == "packs")
        || rel.starts_with("keys")
        || rel.ends_with("cairn-store.json")
}

/// Where the store keeps its state: the store itself, and for an encrypted store the catalog
/// cache under `$HOME/.cache/cairn` (a cache: losing any of it may cost no snapshot).
fn state_dirs(env: &TestEnv) -> Vec<(PathBuf, bool)> {
    let mut dirs = vec![(env.store(), true)];
    let cache = env.home().join(".cache/cairn");
    if cache.exists() {
        dirs.push((cache, false));
    }
    dirs
}

/// A command ended as the rules say: success, or failure with a sentence, never a panic.
fn ended_cleanly(run: &Run, what: &str, context: &str) {
    assert!(
        (run.code == 0 || run.code == 1) && !run.stderr.contains("panicked"),
        "{what} ended with {} ({context}): {}",
        run.code,
        run.stderr
    );
}

/// The snapshots that restore exactly into a new directory; a restore that succeeds with other
/// bytes fails the test on the spot.
fn restorable(
    env: &TestEnv,
    saved: &BTreeMap<String, BTreeMap<PathBuf, Entry>>,
    tag: &str,
    context: &str,
) -> Vec<String> {
    let mut ok = Vec::new();
    for (i, (id, tree)) in saved.iter().enumerate() {
        let dest = env.root().join(format!("{tag}-{i}"));
        let _ = std::fs::remove_dir_all(&dest);
        let run = env.run(&["restore", id, "--to", dest.to_str().unwrap()]);
        ended_cleanly(&run, "restore --to", context);
        if run.code == 0 {
            assert_eq!(&describe(&dest), tree, "snapshot {id} restored other bytes ({context})");
            ok.push(id.clone());
        }
        let _ = std::fs::remove_dir_all(&dest);
    }
    ok
}

fn copy_store(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let status = std::process::Command::new("cp").arg("-a").arg(from).arg(to).status().unwrap();
    assert!(status.success(), "cp -a {} {}", from.display(), to.display());
}

fn corruption_loop(env: &TestEnv, label: &str) {
    let seed = std::env::var("CAIRN_CORRUPTION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(29u64);
    let seconds =
        std::env::var("CAIRN_CORRUPTION_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(15u64);
    let mut rng = Rng(seed.max(1));

    // Four snapshots over small files, a shared directory and files large enough to be cut.
    let mut saved = BTreeMap::new();
    for round in 0..4u64 {
        for i in 0..30 {
            if i % 4 == round as usize || round == 0 {
                write(
                    &env.work(),
                    &format!("src/m{}/f{i}.rs", i % 3),
                    format!("// round {round}\nfn f{i}() {{}}\n"),
                );
            }
        }
        write(&env.work(), &format!("big{round}.bin"), noise(1_200_000 + round as usize * 1000, round + 1));
        let id = env.json(&["save"])["id"].as_str().unwrap().to_owned();
        saved.insert(id, describe(&env.work()));
    }
    let dirs = state_dirs(env);
    let mut files = Vec::new();
    for (i, (dir, _)) in dirs.iter().enumerate() {
        let pristine = env.root().join(format!("pristine-{i}"));
        copy_store(dir, &pristine);
        files.extend(
            store_files(&pristine).into_iter().map(|p| (i, p.strip_prefix(&pristine).unwrap().to_owned())),
        );
    }

    let started = Instant::now();
    let mut round = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) || round < 3 {
        round += 1;
        for (i, (dir, _)) in dirs.iter().enumerate() {
            copy_store(&env.root().join(format!("pristine-{i}")), dir);
        }
        let (which, rel) = &files[rng.below(files.len() as u64) as usize];
        let (dir, holds_data) = &dirs[*which];
        let path = dir.join(rel);
        let len = std::fs::metadata(&path).unwrap().len();
        let how = match rng.below(4) {
            0 => Damage::Flip(rng.below(len)),
            // The end of a file is where its trailer or last page is: cut there as often as anywhere.
            1 if rng.below(2) == 0 => Damage::Cut(len.saturating_sub(1 + rng.below(16))),
            1 => Damage::Cut(rng.below(len)),
            2 => Damage::Delete,
            _ => Damage::Empty,
        };
        damage(&path, how);
        let context = format!("{label} round {round}, seed {seed}: {how:?} of {}", path.display());

        let before = restorable(env, &saved, "before", &context);
        for args in [&["check", "--read-data"][..], &["repair"], &["gc"]] {
            ended_cleanly(&env.run(args), args[0], &context);
        }
        let after = restorable(env, &saved, "after", &context);
        let lost: Vec<&String> = before.iter().filter(|id| !after.contains(id)).collect();
        assert!(lost.is_empty(), "repair and gc lost {lost:?}, which restored before ({context})");
        if !(*holds_data && may_lose_data(rel)) {
            let lost: Vec<&String> = saved.keys().filter(|id| !after.contains(id)).collect();
            assert!(lost.is_empty(), "damage to a rebuildable file lost {lost:?} ({context})");
        }
        // What repair left, the next save builds on.
        let run = env.run(&["save"]);
        ended_cleanly(&run, "save after repair", &context);
    }
}

#[test]
fn repair_and_gc_after_random_damage_to_a_plain_store_lose_nothing_that_restored() {
    let env = TestEnv::new();
    corruption_loop(&env, "plain");
}

#[test]
fn repair_and_gc_after_random_damage_to_an_encrypted_store_lose_nothing_that_restored() {
    let env = TestEnv::new().with_var("CAIRN_PASSWORD", "corruption");
    env.ok(&["init", "--encrypt"]);
    corruption_loop(&env, "encrypted");
}
