//! The backend contract, as cases any backend must pass, each a function taking the backend or
//! a store opened on it, so a new backend passes the whole suite by adding one line per case.
//! `crates/cairn-lib/tests/contract.rs` runs it on the local directory, memory and a real
//! S3-compatible server (moto), plain and encrypted. Every case goes through the library's
//! public API only, as a front would; the one case that needs the pack writer's insides stays
//! with the store (`crates/cairn-lib/src/store/contract.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_lib::ops::check::CheckOptions;
use cairn_lib::ops::gc::GcOptions;
use cairn_lib::ops::list::ListOptions;
use cairn_lib::ops::remove::RemoveOptions;
use cairn_lib::ops::resolve::CallContext;
use cairn_lib::ops::restore::RestoreOptions;
use cairn_lib::ops::save::{SaveOptions, SaveResult};
use cairn_lib::ops::session::SessionCreateOptions;
use cairn_lib::{Backend, ErrorKind, OpenMode, Repository, SnapshotId, Unlock};

use crate::fixtures::{read_tree, write_tree};

/// put / get / range / list / delete / size, and the versioned writes names rely on.
pub fn objects(backend: &dyn Backend) {
    assert!(backend.put_if_absent("packs/ab/x.pack", b"hello world").unwrap());
    assert!(!backend.put_if_absent("packs/ab/x.pack", b"hello world").unwrap());
    assert_eq!(backend.get("packs/ab/x.pack").unwrap(), b"hello world");
    assert_eq!(backend.get_range("packs/ab/x.pack", 6, 5).unwrap(), b"world");
    assert!(backend.get_range("packs/ab/x.pack", 6, 50).is_err());
    assert_eq!(backend.size("packs/ab/x.pack").unwrap(), Some(11));
    assert_eq!(backend.size("packs/ab/none.pack").unwrap(), None);
    backend.put_if_absent("records/1.json", b"{}").unwrap();
    backend.put_if_absent("packs/cd/y.pack", b"y").unwrap();
    assert_eq!(
        backend.list("packs/").unwrap(),
        vec!["packs/ab/x.pack".to_owned(), "packs/cd/y.pack".to_owned()]
    );
    assert_eq!(backend.list("packs/ab").unwrap(), vec!["packs/ab/x.pack".to_owned()]);
    assert_eq!(
        backend.list_sizes("packs/").unwrap(),
        vec![("packs/ab/x.pack".to_owned(), 11), ("packs/cd/y.pack".to_owned(), 1)]
    );
    assert_eq!(backend.list("").unwrap().len(), 3);
    backend.delete("packs/ab/x.pack").unwrap();
    backend.delete("packs/ab/x.pack").unwrap();
    assert!(backend.get("packs/ab/x.pack").is_err());
    assert_eq!(backend.list("packs/").unwrap(), vec!["packs/cd/y.pack".to_owned()]);

    assert_eq!(backend.get_versioned("names/n").unwrap(), None);
    assert!(backend.put_versioned("names/n", b"one", None).unwrap());
    assert!(!backend.put_versioned("names/n", b"two", None).unwrap(), "a second create loses");
    let first = backend.get_versioned("names/n").unwrap().unwrap();
    assert_eq!(first.data, b"one");
    assert!(backend.put_versioned("names/n", b"two", Some(&first.tag)).unwrap());
    assert!(!backend.put_versioned("names/n", b"three", Some(&first.tag)).unwrap(), "a stale update loses");
    assert_eq!(backend.get_versioned("names/n").unwrap().unwrap().data, b"two");

    // A staged object shows under its key only once published, and never if it is dropped.
    let staged = backend.stage("records/2.json", b"staged").unwrap();
    assert_eq!(staged.key(), "records/2.json");
    assert_eq!(backend.size("records/2.json").unwrap(), None, "staged, not yet published");
    assert!(backend.publish(staged).unwrap());
    assert_eq!(backend.get("records/2.json").unwrap(), b"staged");
    drop(backend.stage("records/3.json", b"dropped").unwrap());
    assert_eq!(backend.size("records/3.json").unwrap(), None, "dropped unpublished");
}

/// A tree saved through the library restores byte for byte into a new directory.
pub fn save_and_restore(store: &Repository, work: &Path) {
    let tree = work.join("tree");
    write_tree(&tree);
    let saved = save(store, &tree, None).unwrap();
    assert_eq!(saved.snapshot.stats.files, 3);
    let out = work.join("out");
    restore(store, saved.snapshot.id, &out);
    assert_eq!(read_tree(&out), read_tree(&tree));
}

/// Two stores on one backend (two machines, each with its own catalog cache): each sees what
/// the other committed, sessions and removals included.
pub fn shared_by_two(backend: Arc<dyn Backend>, work: &Path, unlock: &Unlock) {
    let a = Repository::open_shared_with(
        backend.clone(),
        &work.join("cache-a"),
        OpenMode::CreateIfMissing,
        unlock,
    )
    .unwrap();
    let tree = work.join("tree");
    write_tree(&tree);
    let saved = save(&a, &tree, None).unwrap();
    let fork = SessionCreateOptions { name: Some("fork".into()), from: Some("baseline".into()) };
    a.session_create(&fork, &CallContext::default()).unwrap();

    let b = Repository::open_shared_with(backend.clone(), &work.join("cache-b"), OpenMode::Existing, unlock)
        .unwrap();
    assert_eq!(ids(&b), vec![saved.snapshot.id]);
    let fork = b.find_session("fork").unwrap();
    assert_eq!(fork.snapshot_count, 1);
    let out = work.join("out-b");
    restore(&b, saved.snapshot.id, &out);
    assert_eq!(read_tree(&out), read_tree(&tree));

    // B removes the snapshot from baseline; A sees it gone after reopening, the fork keeps it.
    remove(&b, saved.snapshot.id);
    drop(a);
    let a = Repository::open_shared_with(backend, &work.join("cache-a"), OpenMode::Existing, unlock).unwrap();
    assert!(ids(&a).is_empty());
    assert_eq!(a.find_session("fork").unwrap().snapshot_count, 1);
}

/// gc on a shared store in two phases: the first marks and deletes nothing; a save on another
/// machine then stores the condemned data anew rather than refer to it; the second deletes
/// the condemned pack, and the other machine's snapshot still restores.
pub fn shared_gc(backend: Arc<dyn Backend>, work: &Path, unlock: &Unlock) {
    let open = |name: &str| {
        let mut store = Repository::open_shared_with(
            backend.clone(),
            &work.join(name),
            OpenMode::CreateIfMissing,
            unlock,
        )
        .unwrap();
        let mut config = store.config().clone();
        config.set("gc.grace", "0s").unwrap();
        store.save_config(config).unwrap();
        store
    };
    let tree = work.join("tree");
    write_tree(&tree);
    let a = open("cache-a");
    let first = save(&a, &tree, None).unwrap();
    remove(&a, first.snapshot.id);
    let marked = a.gc(&GcOptions::default()).unwrap();
    assert_eq!(marked.packs_removed, 0, "the first phase only marks");
    assert_eq!(backend.list("gc/").unwrap().len(), 1);

    let b = open("cache-b");
    let second = save(&b, &tree, None).unwrap();
    assert!(second.snapshot.stats.new_bytes > 0, "a save stores condemned data anew");
    drop(a);
    let a = open("cache-a");
    let swept = a.gc(&GcOptions::default()).unwrap();
    assert_eq!(swept.packs_removed, 1, "{swept:?}");
    assert!(backend.list("gc/").unwrap().is_empty());

    drop(b);
    let b = open("cache-b");
    let out = work.join("out");
    restore(&b, second.snapshot.id, &out);
    assert_eq!(read_tree(&out), read_tree(&tree));
    assert!(b.check(&CheckOptions { read_data: true }).unwrap().problems.is_empty());
}

/// Two machines saving at once: both see every commit, and a race on one name has one winner
/// and one clear refusal.
pub fn racing(backend: Arc<dyn Backend>, work: &Path, unlock: &Unlock) {
    let open = |name: &str| {
        Repository::open_shared_with(backend.clone(), &work.join(name), OpenMode::CreateIfMissing, unlock)
            .unwrap()
    };
    let (a, b) = (open("cache-a"), open("cache-b"));
    let trees: Vec<PathBuf> = ["one", "two"].iter().map(|t| work.join(t)).collect();
    for tree in &trees {
        write_tree(tree);
    }
    let results = std::thread::scope(|s| {
        let one = s.spawn(|| save(&a, &trees[0], None).map(|r| r.snapshot.id));
        let two = s.spawn(|| save(&b, &trees[1], None).map(|r| r.snapshot.id));
        [one.join().unwrap().unwrap(), two.join().unwrap().unwrap()]
    });
    // One name for one target, claimed by both at once.
    let named = std::thread::scope(|s| {
        let one = s.spawn(|| save(&a, &trees[0], Some("release")));
        let two = s.spawn(|| save(&b, &trees[0], Some("release")));
        [one.join().unwrap(), two.join().unwrap()]
    });
    let winners = named.iter().filter(|r| r.is_ok()).count();
    assert_eq!(
        winners,
        1,
        "{:?}",
        named.iter().map(|r| r.as_ref().err().map(|e| e.message())).collect::<Vec<_>>()
    );
    let refusal = named.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert_eq!(refusal.kind(), ErrorKind::Conflict, "{}", refusal.message());
    assert!(refusal.message().contains("\"release\""), "{}", refusal.message());
    drop((a, b));
    for cache in ["cache-a", "cache-b"] {
        let store = open(cache);
        let listed = store.list(&ListOptions::default(), &CallContext::default()).unwrap().snapshots;
        let ids: Vec<_> = listed.iter().map(|s| s.id).collect();
        assert_eq!(ids.len(), 3, "{cache}: {ids:?}");
        assert!(results.iter().all(|id| ids.contains(id)), "{cache}");
        assert_eq!(listed.iter().filter(|s| s.name.is_some()).count(), 1);
    }
}

/// Saves `tree` into the store's current session, named `name` if given.
fn save(store: &Repository, tree: &Path, name: Option<&str>) -> cairn_lib::Result<SaveResult> {
    store.save(
        &SaveOptions {
            target: tree.display().to_string(),
            name: name.map(str::to_owned),
            ..Default::default()
        },
        &CallContext::default(),
    )
}

/// Restores snapshot `id` into `to`.
fn restore(store: &Repository, id: SnapshotId, to: &Path) {
    let options =
        RestoreOptions { reference: Some(id.to_string()), to: Some(to.to_path_buf()), ..Default::default() };
    store.restore(&options, &CallContext::default()).unwrap();
}

/// Takes snapshot `id` out of baseline, as `cairn remove` does; the last snapshot of a target
/// also drops its stat cache, so that its data is no longer referenced.
fn remove(store: &Repository, id: SnapshotId) {
    let options = RemoveOptions { refs: vec![id.to_string()], ..Default::default() };
    store.remove(&options, &CallContext::default()).unwrap();
}

/// The ids of the snapshots baseline lists.
fn ids(store: &Repository) -> Vec<SnapshotId> {
    store
        .list(&ListOptions::default(), &CallContext::default())
        .unwrap()
        .snapshots
        .iter()
        .map(|s| s.id)
        .collect()
}
