//! A save that trusts the watcher's journal captures exactly what a full walk does: thousands of
//! random file-system operations in batches on a real tree watched by a real watcher; after each
//! batch the tree is saved into a store with the watcher and into one without, and the two
//! snapshots hold the same tree, counts and left-out entries. Every ninth batch ends with an
//! in-place restore of an earlier snapshot. A second test does the same in one directory large
//! enough that its stat cache row is kept in parts, which saves by names rewrite one at a time.
//! A third restores a snapshot over a tree where only an mtime moved, which the restore leaves
//! alone, so the directory holding it is not the snapshot's after the restore. A fourth checks
//! that a save by names of a large directory keeps the parts of its tree a change did not touch
//! unread, before and after a restore. In the first, most unchanged subdirectories of the
//! directories a save by names looks at are taken from their parent's stat cache row.

#[path = "../../cairn-watch/tests/churn/mod.rs"]
mod churn;

use cairn_lib::Repository;
use cairn_lib::ops::resolve::CallContext;
use cairn_lib::ops::restore::RestoreOptions;
use cairn_lib::ops::save::SaveOptions;
use cairn_lib::ops::watch::{WatchOptions, WatchStart};
use churn::{Rng, new_batch, operate};

fn save(store: &Repository, tree: &std::path::Path) -> cairn_lib::Snapshot {
    let options = SaveOptions { target: tree.display().to_string(), ..SaveOptions::default() };
    store.save(&options, &CallContext::default()).unwrap().snapshot
}

/// The paths whose kind, mode or bytes differ between two snapshots, restored side by side.
fn differences(
    a: &Repository,
    sa: &cairn_lib::Snapshot,
    b: &Repository,
    sb: &cairn_lib::Snapshot,
    root: &std::path::Path,
) -> String {
    let put = |store: &Repository, snap: &cairn_lib::Snapshot, to: std::path::PathBuf| {
        let options = RestoreOptions {
            reference: Some(snap.id.to_string()),
            to: Some(to.clone()),
            preserve_mtime: true,
            ..RestoreOptions::default()
        };
        store.restore(&options, &CallContext::default()).unwrap();
        let mut entries = std::collections::BTreeMap::new();
        for path in churn::all(&to, false).into_iter().chain(churn::all(&to, true)) {
            let meta = path.symlink_metadata().unwrap();
            let content = if meta.is_file() { std::fs::read(&path).unwrap() } else { Vec::new() };
            use std::os::unix::fs::MetadataExt;
            let mtime = if meta.is_dir() { 0 } else { meta.mtime_nsec() + meta.mtime() * 1_000_000_000 };
            entries.insert(
                path.strip_prefix(&to).unwrap().to_owned(),
                (meta.mode(), content, mtime, meta.nlink()),
            );
        }
        entries
    };
    let (ea, eb) = (put(a, sa, root.join("restored-a")), put(b, sb, root.join("restored-b")));
    let mut out = String::new();
    for path in ea.keys().chain(eb.keys()).collect::<std::collections::BTreeSet<_>>() {
        if ea.get(path) != eb.get(path) {
            out.push_str(&format!(
                "  {}: journal {:?} / walk {:?}\n",
                path.display(),
                ea.get(path).map(|e| (e.0, e.2, e.3)),
                eb.get(path).map(|e| (e.0, e.2, e.3))
            ));
        }
    }
    out
}

#[test]
fn after_every_batch_a_journal_save_equals_a_full_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let tree = root.join("tree");
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    for d in ["a/b/c", "d/e", "f", "ignored-here"] {
        std::fs::create_dir_all(tree.join(d)).unwrap();
        std::fs::write(tree.join(d).join("file"), d).unwrap();
    }
    // Wide enough that a batch leaves most of the tree alone, for the journal to vouch for.
    for i in 0..120 {
        let dir = tree.join(format!("wide/w{}/x{i}", i % 12));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), format!("{i}")).unwrap();
    }
    std::fs::write(tree.join(".gitignore"), "ignored-here/\n*.log\n").unwrap();
    std::fs::write(tree.join("a/.env"), "TOKEN=secret\n").unwrap();
    let watched = Repository::open(&root.join("watched-store")).unwrap();
    let walked = Repository::open(&root.join("walked-store")).unwrap();
    watch(&watched, &tree);

    let (mut ops, mut used, mut restores, mut by_names, mut unread) = (0u64, 0, 0, 0u64, 0u64);
    let mut earlier = vec![save(&watched, &tree).id.to_string()];
    for (seed, batch) in
        [0x0bad_5eed_u64, 0x1234_5678].into_iter().flat_map(|s| (0..40u64).map(move |b| (s, b)))
    {
        let mut rng = Rng(seed ^ (batch + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        new_batch();
        for _ in 0..(1 + rng.below(12)) {
            operate(&mut rng, &tree, &outside, &mut ops);
        }
        if rng.below(5) == 0 {
            // Ignore rules that change say something about every directory below them.
            let rules = if rng.below(2) == 0 { "ignored-here/\n" } else { "*.log\nn1*/\n" };
            std::fs::write(tree.join(".gitignore"), rules).unwrap();
        }
        if batch % 9 == 8 {
            // An in-place restore writes many files; the save after it trusts what it left alone.
            let earlier = earlier.get(rng.below(earlier.len())).cloned().unwrap();
            let options = RestoreOptions { reference: Some(earlier), ..RestoreOptions::default() };
            // Refused when the rules now leave out a directory the snapshot has: nothing written.
            if let Err(e) = watched.restore(&options, &CallContext::default()) {
                assert_eq!(e.kind(), cairn_lib::ErrorKind::Conflict, "{e:?}");
            } else {
                restores += 1;
            }
        }
        let journal = save_both(&watched, &walked, &tree, &root, &format!("seed {seed:#x}, batch {batch}"));
        earlier.push(journal.id.to_string());
        let report = journal.stats.change_journal.clone().expect("the watcher answered");
        used += usize::from(report.used);
        by_names += report.dirs_by_names;
        unread += report.dirs_kept_unread;
    }
    assert!(ops > 400, "only {ops} operations");
    assert!(restores > 3, "only {restores} restores");
    assert!(used > 60, "the journal was used in only {used} of 80 saves");
    assert!(by_names > 100, "only {by_names} directories were looked at by the names of what changed");
    // Most unchanged subdirectories of those were taken from their parent's row, their own unread.
    assert!(unread > 1000, "only {unread} directories were taken from their parent's row");
    watched.watch_stop().unwrap();
}

/// Saves `tree` into both stores and checks that the two snapshots hold the same; returns the
/// journal save's snapshot.
fn save_both(
    watched: &Repository,
    walked: &Repository,
    tree: &std::path::Path,
    root: &std::path::Path,
    what: &str,
) -> cairn_lib::Snapshot {
    let journal = save(watched, tree);
    let full = save(walked, tree);
    let report = journal.stats.change_journal.clone().expect("the watcher answered");
    let what = format!("{what} ({report:?})");
    if journal.root != full.root {
        panic!(
            "{what}: the trees differ:\n{}\n{:?}\n{:?}",
            differences(watched, &journal, walked, &full, root),
            journal.stats,
            full.stats
        );
    }
    let counts = |s: &cairn_lib::Snapshot| (s.stats.files, s.stats.dirs, s.stats.symlinks, s.stats.bytes);
    assert_eq!(counts(&journal), counts(&full), "{what}: the counts differ");
    let left_out = |s: &cairn_lib::Snapshot| serde_json::to_value(&s.not_covered).unwrap();
    assert_eq!(left_out(&journal), left_out(&full), "{what}: what was left out differs");
    assert!(full.stats.change_journal.is_none(), "no watcher runs for the other store");
    journal
}

/// Starts a watcher of `tree` for `store`, on a thread of its own.
fn watch(store: &Repository, tree: &std::path::Path) {
    let WatchStart::Started { watcher, .. } =
        store.watch_start(&WatchOptions { dirs: vec![tree.to_owned()] }).unwrap()
    else {
        panic!("a watcher was already running")
    };
    let own = Repository::open(store.root()).unwrap();
    std::thread::spawn(move || watcher.run(own));
}

#[test]
fn in_a_directory_kept_in_parts_a_journal_save_equals_a_full_walk() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let tree = root.join("tree");
    let big = tree.join("big");
    std::fs::create_dir_all(big.join("sub")).unwrap();
    for i in 0..1500 {
        std::fs::write(big.join(format!("f{i:04}")), format!("file {i}")).unwrap();
    }
    std::fs::write(big.join("sub/inner"), "inner").unwrap();
    std::fs::write(big.join("f0700.key"), format!("-----BEGIN RSA {}-----\n", "PRIVATE KEY")).unwrap();
    std::fs::write(big.join(".env"), "TOKEN=secret\n").unwrap();
    std::os::unix::fs::symlink("f0001", big.join("f0002.link")).unwrap();
    let watched = Repository::open(&root.join("watched-store")).unwrap();
    let walked = Repository::open(&root.join("walked-store")).unwrap();
    watch(&watched, &tree);

    let first = save_both(&watched, &walked, &tree, &root, "first save");
    assert_eq!(first.not_covered.secrets.len(), 2, "{:?}", first.not_covered);
    let mut earlier = vec![first.id.to_string()];
    let (mut by_names, mut restores, mut n) = (0u64, 0, 0u32);
    let mut rng = churn::Rng(0x5eed_0f9a_2701);
    for batch in 0..36 {
        for _ in 0..(1 + rng.below(8)) {
            n += 1;
            let names: Vec<_> = std::fs::read_dir(&big).unwrap().flatten().map(|e| e.path()).collect();
            let file = names[rng.below(names.len())].clone();
            let is_file = file.symlink_metadata().unwrap().is_file();
            let new = big.join(format!("n{n:04}"));
            match rng.below(10) {
                0 if is_file => std::fs::write(&file, format!("rewritten {n}")).unwrap(),
                1 if is_file => {
                    use std::io::Write;
                    std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(b"+").unwrap();
                }
                2 => std::fs::write(&new, format!("new {n}")).unwrap(),
                3 if is_file => std::fs::remove_file(&file).unwrap(),
                4 if is_file => std::fs::rename(&file, &new).unwrap(),
                5 if is_file => std::fs::rename(&file, big.join("sub").join(format!("moved{n}"))).unwrap(),
                6 if is_file => {
                    let mode = if rng.below(2) == 0 { 0o600 } else { 0o755 };
                    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
                }
                7 => std::fs::write(&new, format!("-----BEGIN EC {}-----\n{n}", "PRIVATE KEY")).unwrap(),
                8 => {
                    let tmp = big.join(format!("n{n}.tmp"));
                    std::os::unix::fs::symlink(format!("target-{n}"), &tmp).unwrap();
                    std::fs::rename(&tmp, big.join("f0002.link")).unwrap();
                }
                _ => {
                    // Back from the subdirectory under a name of a part of its own.
                    if let Some(inner) = std::fs::read_dir(big.join("sub")).unwrap().flatten().next() {
                        std::fs::rename(inner.path(), big.join(format!("f{:04}x", rng.below(1500)))).unwrap();
                    }
                }
            }
        }
        if batch % 6 == 5 {
            let earlier = earlier.get(rng.below(earlier.len())).cloned().unwrap();
            let options = RestoreOptions { reference: Some(earlier), ..RestoreOptions::default() };
            watched.restore(&options, &CallContext::default()).unwrap();
            restores += 1;
        }
        let journal = save_both(&watched, &walked, &tree, &root, &format!("batch {batch}"));
        by_names += journal.stats.change_journal.as_ref().map_or(0, |r| r.dirs_by_names);
        earlier.push(journal.id.to_string());
    }
    assert!(restores >= 5, "only {restores} restores");
    assert!(by_names >= 30, "the large directory was looked at by names in only {by_names} saves");
    watched.watch_stop().unwrap();
}

#[test]
fn after_a_restore_that_leaves_an_mtime_alone_a_journal_save_equals_a_full_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let tree = root.join("tree");
    for dir in ["touched", "rewritten"] {
        std::fs::create_dir_all(tree.join(dir)).unwrap();
        for name in ["a", "b", "c"] {
            std::fs::write(tree.join(dir).join(name), format!("{dir}/{name}")).unwrap();
        }
    }
    std::fs::create_dir_all(tree.join("linked")).unwrap();
    std::fs::write(tree.join("linked/a"), "linked/a").unwrap();
    std::os::unix::fs::symlink("a", tree.join("linked/link")).unwrap();
    // And a directory whose stat cache row is kept in parts.
    std::fs::create_dir_all(tree.join("wide")).unwrap();
    for i in 0..1200 {
        std::fs::write(tree.join(format!("wide/f{i:04}")), format!("wide {i}")).unwrap();
    }
    let watched = Repository::open(&root.join("watched-store")).unwrap();
    let walked = Repository::open(&root.join("walked-store")).unwrap();
    watch(&watched, &tree);
    let first = save_both(&watched, &walked, &tree, &root, "first save");

    for round in 0..3 {
        // Only an mtime moves in one directory, which a restore leaves alone; content changes
        // in both, which it puts back.
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + round);
        for path in ["touched/b", "wide/f0700"] {
            std::fs::File::options().write(true).open(tree.join(path)).unwrap().set_modified(old).unwrap();
        }
        // A link's own mtime (`touch -h`), which nothing in the stat cache records.
        let touched = std::process::Command::new("touch")
            .args(["-h", "-d", &format!("@{}", 2_000_000 + round)])
            .arg(tree.join("linked/link"))
            .status()
            .unwrap();
        assert!(touched.success());
        for path in ["touched/a", "rewritten/a", "wide/f0005", "linked/a"] {
            std::fs::write(tree.join(path), format!("changed in round {round}")).unwrap();
        }
        // Past the coarse clock's tick, so the racy-git rule trusts the touched file's entry
        // and only the tree the next save starts from says what its mtime is.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let options = RestoreOptions { reference: Some(first.id.to_string()), ..RestoreOptions::default() };
        watched.restore(&options, &CallContext::default()).unwrap();
        assert_eq!(std::fs::read(tree.join("touched/a")).unwrap(), b"touched/a");
        let journal = save_both(&watched, &walked, &tree, &root, &format!("round {round}"));
        assert!(journal.stats.change_journal.as_ref().is_some_and(|r| r.used), "{:?}", journal.stats);
    }
    watched.watch_stop().unwrap();
}

#[test]
fn in_a_large_directory_a_save_by_names_reads_only_the_parts_a_change_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let tree = root.join("tree");
    let wide = tree.join("wide");
    std::fs::create_dir_all(wide.join("sub")).unwrap();
    for i in 0..8000 {
        std::fs::write(wide.join(format!("f{i:05}")), format!("wide {i}")).unwrap();
    }
    std::os::unix::fs::symlink("f00001", wide.join("f04000.link")).unwrap();
    let watched = Repository::open(&root.join("watched-store")).unwrap();
    let walked = Repository::open(&root.join("walked-store")).unwrap();
    watch(&watched, &tree);
    let first = save_both(&watched, &walked, &tree, &root, "first save");
    let kept = |s: &cairn_lib::Snapshot| s.stats.change_journal.as_ref().map_or(0, |r| r.parts_kept);

    // About 30 parts of about 256 names: a change to two files, one new file and a new link
    // reads and writes three or four of them.
    std::fs::write(wide.join("f00100"), "changed").unwrap();
    std::fs::write(wide.join("f07900"), "changed").unwrap();
    std::fs::write(wide.join("f05000a"), "new").unwrap();
    std::os::unix::fs::symlink("f00002", wide.join("f02000.link")).unwrap();
    let changed = save_both(&watched, &walked, &tree, &root, "four changes");
    assert!(kept(&changed) >= 20, "only {} parts kept unread", kept(&changed));

    // The next save starts from the parts this one wrote.
    std::fs::remove_file(wide.join("f03000")).unwrap();
    let removed = save_both(&watched, &walked, &tree, &root, "one file removed");
    assert!(kept(&removed) >= 20, "only {} parts kept unread", kept(&removed));

    // A restore rewrites the parts of files it wrote in; the save after it reads those again,
    // and the one after that keeps them unread once more.
    let options = RestoreOptions { reference: Some(first.id.to_string()), ..RestoreOptions::default() };
    watched.restore(&options, &CallContext::default()).unwrap();
    let restored = save_both(&watched, &walked, &tree, &root, "after the restore");
    assert!(kept(&restored) >= 20, "only {} parts kept unread", kept(&restored));
    std::fs::write(wide.join("f00100"), "changed again").unwrap();
    let again = save_both(&watched, &walked, &tree, &root, "changed again");
    assert!(kept(&again) >= 20, "only {} parts kept unread", kept(&again));
    watched.watch_stop().unwrap();
}
