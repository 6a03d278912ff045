//! The store's contract, as one suite run against every backend: the local directory, memory,
//! and a real S3-compatible server on loopback (`moto_server`, started by the test itself;
//! `scripts/deps/s3-server.sh` installs it). Each case is a function taking the backend or a
//! store opened on it, so a new backend passes the same suite by adding one line per case.
//! `mod encrypted` runs it again on encrypted stores (memory, a local directory, S3).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::backend::{Backend, LocalBackend, MemoryBackend};
use super::pack::BlobKind;
use super::writer::BlobWriter;
use super::{OpenMode, Store, Unlock};
use crate::id::ObjectId;
use crate::ops::list::ListOptions;
use crate::ops::resolve::CallContext;
use crate::ops::restore::RestoreOptions;
use crate::ops::save::SaveOptions;

/// put / get / range / list / delete / size, and the versioned writes names rely on.
fn objects(backend: &dyn Backend) {
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
}

/// A pack written by the blob writer reads back blob by blob, and its header by ranges.
fn packs(store: &Store) {
    let small = b"tiny".to_vec();
    let big: Vec<u8> = (0..200_000u32).flat_map(|i| i.wrapping_mul(2654435761).to_le_bytes()).collect();
    let writer = BlobWriter::new(store);
    let ids: Vec<ObjectId> =
        [&small, &big].iter().map(|d| writer.write(BlobKind::Data, d).unwrap()).collect();
    writer.finish().unwrap();
    assert_eq!(store.read_blob(&ids[0]).unwrap(), small);
    assert_eq!(store.read_blob(&ids[1]).unwrap(), big);
    let packs = store.backend().list_sizes("packs/").unwrap();
    assert_eq!(packs.len(), 1);
    let (key, size) = &packs[0];
    let entries = super::pack::read_header_ranged(store.backend(), key, *size, store.sealing()).unwrap();
    // A shared store's pack also holds a few random bytes of its own (see `writer.rs`).
    assert_eq!(entries.len(), if store.is_shared() { 3 } else { 2 });
}

/// A tree saved through the library restores byte for byte into a new directory.
fn save_and_restore(store: &Store, work: &Path) {
    let tree = work.join("tree");
    write_tree(&tree);
    let saved = store
        .save(
            &SaveOptions { target: tree.display().to_string(), ..Default::default() },
            &CallContext::default(),
        )
        .unwrap();
    assert_eq!(saved.snapshot.stats.files, 3);
    let out = work.join("out");
    store
        .restore(
            &RestoreOptions {
                reference: Some(saved.snapshot.id.to_string()),
                to: Some(out.clone()),
                ..Default::default()
            },
            &CallContext::default(),
        )
        .unwrap();
    assert_eq!(read_tree(&out), read_tree(&tree));
}

/// Two stores on one backend (two machines, each with its own catalog cache): each sees what
/// the other committed, sessions and removals included.
fn shared_by_two(backend: Arc<dyn Backend>, work: &Path, unlock: &Unlock) {
    let a =
        Store::open_shared_with(backend.clone(), &work.join("cache-a"), OpenMode::CreateIfMissing, unlock)
            .unwrap();
    let tree = work.join("tree");
    write_tree(&tree);
    let saved = a
        .save(
            &SaveOptions { target: tree.display().to_string(), ..Default::default() },
            &CallContext::default(),
        )
        .unwrap();
    let fork = crate::ops::session::SessionCreateOptions {
        name: Some("fork".into()),
        from: Some("baseline".into()),
    };
    a.session_create(&fork, &CallContext::default()).unwrap();

    let b =
        Store::open_shared_with(backend.clone(), &work.join("cache-b"), OpenMode::Existing, unlock).unwrap();
    let listed = b.list(&ListOptions::default(), &CallContext::default()).unwrap();
    assert_eq!(listed.snapshots.iter().map(|s| s.id).collect::<Vec<_>>(), vec![saved.snapshot.id]);
    let fork = b.find_session("fork").unwrap();
    assert_eq!(fork.snapshot_count, 1);
    let out = work.join("out-b");
    b.restore(
        &RestoreOptions {
            reference: Some(saved.snapshot.id.to_string()),
            to: Some(out.clone()),
            ..Default::default()
        },
        &CallContext::default(),
    )
    .unwrap();
    assert_eq!(read_tree(&out), read_tree(&tree));

    // B removes the snapshot from baseline; A sees it gone after reopening, the fork keeps it.
    b.remove_membership_for_test(saved.snapshot.id);
    drop(a);
    let a = Store::open_shared_with(backend, &work.join("cache-a"), OpenMode::Existing, unlock).unwrap();
    assert!(a.list(&ListOptions::default(), &CallContext::default()).unwrap().snapshots.is_empty());
    assert_eq!(a.find_session("fork").unwrap().snapshot_count, 1);
}

/// gc on a shared store in two phases: the first marks and deletes nothing; a save on another
/// machine then stores the condemned data anew rather than refer to it; the second deletes
/// the condemned pack, and the other machine's snapshot still restores.
fn shared_gc(backend: Arc<dyn Backend>, work: &Path, unlock: &Unlock) {
    let open = |name: &str| {
        let mut store =
            Store::open_shared_with(backend.clone(), &work.join(name), OpenMode::CreateIfMissing, unlock)
                .unwrap();
        let mut config = store.config().clone();
        config.set("gc.grace", "0s").unwrap();
        store.save_config(config).unwrap();
        store
    };
    let tree = work.join("tree");
    write_tree(&tree);
    let save = |store: &Store| {
        store
            .save(
                &SaveOptions { target: tree.display().to_string(), ..Default::default() },
                &CallContext::default(),
            )
            .unwrap()
    };
    let a = open("cache-a");
    let first = save(&a);
    a.remove_membership_for_test(first.snapshot.id);
    let marked = a.gc(&crate::ops::gc::GcOptions::default()).unwrap();
    assert_eq!(marked.packs_removed, 0, "the first phase only marks");
    assert_eq!(backend.list("gc/").unwrap().len(), 1);

    let b = open("cache-b");
    let second = save(&b);
    assert!(second.snapshot.stats.new_bytes > 0, "a save stores condemned data anew");
    drop(a);
    let a = open("cache-a");
    let swept = a.gc(&crate::ops::gc::GcOptions::default()).unwrap();
    assert_eq!(swept.packs_removed, 1, "{swept:?}");
    assert!(backend.list("gc/").unwrap().is_empty());

    drop(b);
    let b = open("cache-b");
    let out = work.join("out");
    b.restore(
        &RestoreOptions {
            reference: Some(second.snapshot.id.to_string()),
            to: Some(out.clone()),
            ..Default::default()
        },
        &CallContext::default(),
    )
    .unwrap();
    assert_eq!(read_tree(&out), read_tree(&tree));
    assert!(b.check(&crate::ops::gc::CheckOptions { read_data: true }).unwrap().problems.is_empty());
}

/// Two machines saving at once: both see every commit, and a race on one name has one winner
/// and one clear refusal.
fn racing(backend: Arc<dyn Backend>, work: &Path, unlock: &Unlock) {
    let open = |name: &str| {
        Store::open_shared_with(backend.clone(), &work.join(name), OpenMode::CreateIfMissing, unlock).unwrap()
    };
    let (a, b) = (open("cache-a"), open("cache-b"));
    let trees: Vec<PathBuf> = ["one", "two"].iter().map(|t| work.join(t)).collect();
    for tree in &trees {
        write_tree(tree);
    }
    let save = |store: &Store, tree: &Path, name: Option<&str>| {
        store.save(
            &SaveOptions {
                target: tree.display().to_string(),
                name: name.map(str::to_owned),
                ..Default::default()
            },
            &CallContext::default(),
        )
    };
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
    assert_eq!(refusal.kind(), crate::error::ErrorKind::Conflict, "{}", refusal.message());
    assert!(refusal.message().contains("\"release\""), "{}", refusal.message());
    drop((a, b));
    for cache in ["cache-a", "cache-b"] {
        let store = open(cache);
        let ids: Vec<_> = store
            .list(&ListOptions::default(), &CallContext::default())
            .unwrap()
            .snapshots
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids.len(), 3, "{cache}: {ids:?}");
        assert!(results.iter().all(|id| ids.contains(id)), "{cache}");
        assert_eq!(
            store
                .list(&ListOptions::default(), &CallContext::default())
                .unwrap()
                .snapshots
                .iter()
                .filter(|s| s.name.is_some())
                .count(),
            1
        );
    }
}

impl Store {
    /// Takes a snapshot out of baseline, and drops the stat caches (as removing a target's
    /// last snapshot does), so that its data is no longer referenced.
    fn remove_membership_for_test(&self, id: crate::id::SnapshotId) {
        self.catalog.remove_membership(crate::id::SessionId::BASELINE, id).unwrap();
        self.catalog.drop_all_stat_caches().unwrap();
    }
}

fn write_tree(root: &Path) {
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(root.join("sub/b.txt"), "beta ".repeat(10_000)).unwrap();
    let noise: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(root.join("sub/deeper/c.bin"), noise).unwrap();
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
}

/// Every entry below `root`: relative path → file bytes or link target.
fn read_tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.push((rel, std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A store directory with its own local objects.
fn local_store(dir: &Path) -> Store {
    Store::open(&dir.join("store")).unwrap()
}

/// A store directory whose objects live in `backend`.
fn store_on(backend: Arc<dyn Backend>, dir: &Path) -> Store {
    Store::open_with(backend, &dir.join("store"), OpenMode::CreateIfMissing).unwrap()
}

fn local_backend(dir: &Path) -> LocalBackend {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    LocalBackend::new(dir.join("objects"), tmp)
}

mod local {
    use super::*;

    #[test]
    fn racing() {
        let dir = tempfile::tempdir().unwrap();
        super::racing(Arc::new(local_backend(&dir.path().join("bucket"))), dir.path(), &Unlock::default());
    }

    #[test]
    fn shared_gc() {
        let dir = tempfile::tempdir().unwrap();
        super::shared_gc(Arc::new(local_backend(&dir.path().join("bucket"))), dir.path(), &Unlock::default());
    }

    #[test]
    fn objects() {
        let dir = tempfile::tempdir().unwrap();
        super::objects(&local_backend(dir.path()));
    }

    #[test]
    fn packs() {
        let dir = tempfile::tempdir().unwrap();
        super::packs(&local_store(dir.path()));
    }

    #[test]
    fn save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        super::save_and_restore(&local_store(dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let dir = tempfile::tempdir().unwrap();
        super::shared_by_two(
            Arc::new(local_backend(&dir.path().join("bucket"))),
            dir.path(),
            &Unlock::default(),
        );
    }
}

mod memory {
    use super::*;

    #[test]
    fn racing() {
        let dir = tempfile::tempdir().unwrap();
        super::racing(Arc::new(MemoryBackend::default()), dir.path(), &Unlock::default());
    }

    #[test]
    fn shared_gc() {
        let dir = tempfile::tempdir().unwrap();
        super::shared_gc(Arc::new(MemoryBackend::default()), dir.path(), &Unlock::default());
    }

    #[test]
    fn objects() {
        super::objects(&MemoryBackend::default());
    }

    #[test]
    fn packs() {
        let dir = tempfile::tempdir().unwrap();
        super::packs(&store_on(Arc::new(MemoryBackend::default()), dir.path()));
    }

    #[test]
    fn save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        super::save_and_restore(&store_on(Arc::new(MemoryBackend::default()), dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let dir = tempfile::tempdir().unwrap();
        super::shared_by_two(Arc::new(MemoryBackend::default()), dir.path(), &Unlock::default());
    }
}

mod s3 {
    use super::*;
    use crate::s3_test_server::Moto;

    #[test]
    fn racing() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        super::racing(Arc::new(moto.backend("racing", "fleet")), dir.path(), &Unlock::default());
    }

    #[test]
    fn shared_gc() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        super::shared_gc(Arc::new(moto.backend("collect", "fleet")), dir.path(), &Unlock::default());
    }

    #[test]
    fn objects() {
        let moto = Moto::start();
        super::objects(&moto.backend("objects", ""));
    }

    #[test]
    fn objects_below_a_prefix() {
        let moto = Moto::start();
        super::objects(&moto.backend("prefixed", "team/stores/one"));
    }

    #[test]
    fn packs() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        super::packs(&store_on(Arc::new(moto.backend("packs", "p")), dir.path()));
    }

    #[test]
    fn save_and_restore() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        super::save_and_restore(&store_on(Arc::new(moto.backend("tree", "")), dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        super::shared_by_two(Arc::new(moto.backend("shared", "fleet")), dir.path(), &Unlock::default());
    }

    #[test]
    fn a_missing_store_is_one_sentence_and_creates_nothing() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(moto.backend("missing", "none"));
        let err = Store::open_shared(backend.clone(), dir.path(), OpenMode::Existing).unwrap_err();
        assert_eq!(err.message(), "there is no store at s3://missing/none");
        assert!(backend.list("").unwrap().is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

/// The same suite on encrypted stores: every object but the packs sealed whole, packs sealed
/// blob by blob and header, names keyed by a keyed hash.
mod encrypted {
    use super::*;
    use crate::store::crypto::RepoKey;
    use crate::store::sealed::SealedBackend;

    pub(super) fn unlock() -> Unlock {
        Unlock::with_secret(crate::store::Secret::password("contract suite")).encrypt_new(true)
    }

    /// An encrypted store on `backend`, its catalog cached below `work`.
    fn store(backend: Arc<dyn Backend>, work: &Path) -> Store {
        Store::open_shared_with(backend, &work.join("cache"), OpenMode::CreateIfMissing, &unlock()).unwrap()
    }

    fn sealed(inner: Arc<dyn Backend>) -> SealedBackend {
        SealedBackend::new(inner, Arc::new(RepoKey::random()))
    }

    #[test]
    fn objects() {
        super::objects(&sealed(Arc::new(MemoryBackend::default())));
    }

    #[test]
    fn packs() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(Arc::new(MemoryBackend::default()), dir.path());
        assert!(store.is_encrypted());
        super::packs(&store);
    }

    #[test]
    fn save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        super::save_and_restore(&store(Arc::new(MemoryBackend::default()), dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let dir = tempfile::tempdir().unwrap();
        super::shared_by_two(Arc::new(MemoryBackend::default()), dir.path(), &unlock());
    }

    #[test]
    fn shared_gc() {
        let dir = tempfile::tempdir().unwrap();
        super::shared_gc(Arc::new(local_backend(&dir.path().join("bucket"))), dir.path(), &unlock());
    }

    #[test]
    fn racing() {
        let dir = tempfile::tempdir().unwrap();
        super::racing(Arc::new(MemoryBackend::default()), dir.path(), &unlock());
    }

    mod s3 {
        use super::*;
        use crate::s3_test_server::Moto;

        #[test]
        fn objects() {
            let moto = Moto::start();
            super::super::objects(&sealed(Arc::new(moto.backend("objects", "sealed"))));
        }

        #[test]
        fn packs_and_a_tree() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            let store = store(Arc::new(moto.backend("packs", "p")), dir.path());
            super::super::packs(&store);
            super::super::save_and_restore(&store, dir.path());
        }

        #[test]
        fn shared_by_two() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            super::super::shared_by_two(Arc::new(moto.backend("shared", "fleet")), dir.path(), &unlock());
        }

        #[test]
        fn shared_gc() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            super::super::shared_gc(Arc::new(moto.backend("collect", "fleet")), dir.path(), &unlock());
        }

        #[test]
        fn racing() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            super::super::racing(Arc::new(moto.backend("racing", "fleet")), dir.path(), &unlock());
        }
    }
}

#[test]
fn a_missing_local_store_is_refused_by_a_reader_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("none");
    let err = Store::open_in(&root, OpenMode::Existing).unwrap_err();
    assert_eq!(err.message(), format!("there is no store at {}", root.display()));
    assert!(!root.exists());
}
