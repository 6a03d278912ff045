//! The backend contract suite (`cairn_test_support::contract`) run against every backend: the
//! local directory, memory, and a real S3-compatible server on loopback (`moto_server`,
//! started by the test itself; `scripts/deps/s3-server.sh` installs it), plain and encrypted.
//! A new backend passes the same suite by adding one line per case. The pack case, which needs
//! the store's insides, runs in `src/store/contract.rs`.

use std::path::Path;
use std::sync::Arc;

use cairn_lib::{Backend, LocalBackend, MemoryBackend, OpenMode, Repository, Secret, Unlock};
use cairn_test_support::Moto;
use cairn_test_support::contract;

/// A store directory with its own local objects.
fn local_store(dir: &Path) -> Repository {
    Repository::open(&dir.join("store")).unwrap()
}

/// A store directory whose objects live in `backend`.
fn store_on(backend: Arc<dyn Backend>, dir: &Path) -> Repository {
    Repository::open_with(backend, &dir.join("store"), OpenMode::CreateIfMissing).unwrap()
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
        contract::racing(Arc::new(local_backend(&dir.path().join("bucket"))), dir.path(), &Unlock::default());
    }

    #[test]
    fn shared_gc() {
        let dir = tempfile::tempdir().unwrap();
        contract::shared_gc(
            Arc::new(local_backend(&dir.path().join("bucket"))),
            dir.path(),
            &Unlock::default(),
        );
    }

    #[test]
    fn objects() {
        let dir = tempfile::tempdir().unwrap();
        contract::objects(&local_backend(dir.path()));
    }

    #[test]
    fn save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        contract::save_and_restore(&local_store(dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let dir = tempfile::tempdir().unwrap();
        contract::shared_by_two(
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
        contract::racing(Arc::new(MemoryBackend::default()), dir.path(), &Unlock::default());
    }

    #[test]
    fn shared_gc() {
        let dir = tempfile::tempdir().unwrap();
        contract::shared_gc(Arc::new(MemoryBackend::default()), dir.path(), &Unlock::default());
    }

    #[test]
    fn objects() {
        contract::objects(&MemoryBackend::default());
    }

    #[test]
    fn save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        contract::save_and_restore(&store_on(Arc::new(MemoryBackend::default()), dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let dir = tempfile::tempdir().unwrap();
        contract::shared_by_two(Arc::new(MemoryBackend::default()), dir.path(), &Unlock::default());
    }
}

mod s3 {
    use super::*;

    #[test]
    fn racing() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        contract::racing(Arc::new(moto.backend("racing", "fleet")), dir.path(), &Unlock::default());
    }

    #[test]
    fn shared_gc() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        contract::shared_gc(Arc::new(moto.backend("collect", "fleet")), dir.path(), &Unlock::default());
    }

    #[test]
    fn objects() {
        let moto = Moto::start();
        contract::objects(&moto.backend("objects", ""));
    }

    #[test]
    fn objects_below_a_prefix() {
        let moto = Moto::start();
        contract::objects(&moto.backend("prefixed", "team/stores/one"));
    }

    #[test]
    fn save_and_restore() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        contract::save_and_restore(&store_on(Arc::new(moto.backend("tree", "")), dir.path()), dir.path());
    }

    #[test]
    fn shared_by_two() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        contract::shared_by_two(Arc::new(moto.backend("shared", "fleet")), dir.path(), &Unlock::default());
    }

    #[test]
    fn a_missing_store_is_one_sentence_and_creates_nothing() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(moto.backend("missing", "none"));
        let err = Repository::open_shared(backend.clone(), dir.path(), OpenMode::Existing).unwrap_err();
        assert_eq!(err.message(), "there is no store at s3://missing/none; save a snapshot");
        assert!(backend.list("").unwrap().is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

/// The same suite on encrypted stores: every object but the packs sealed whole, packs sealed
/// blob by blob and header, names keyed by a keyed hash.
mod encrypted {
    use super::*;

    pub(super) fn unlock() -> Unlock {
        Unlock::with_secret(Secret::password("contract suite")).encrypt_new(true)
    }

    /// An encrypted store on `backend`, its catalog cached below `work`.
    fn store(backend: Arc<dyn Backend>, work: &Path) -> Repository {
        Repository::open_shared_with(backend, &work.join("cache"), OpenMode::CreateIfMissing, &unlock())
            .unwrap()
    }

    #[test]
    fn objects() {
        contract::objects(cairn_lib::sealed_for_contract(Arc::new(MemoryBackend::default())).as_ref());
    }

    #[test]
    fn save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(Arc::new(MemoryBackend::default()), dir.path());
        assert!(store.is_encrypted());
        contract::save_and_restore(&store, dir.path());
    }

    #[test]
    fn shared_by_two() {
        let dir = tempfile::tempdir().unwrap();
        contract::shared_by_two(Arc::new(MemoryBackend::default()), dir.path(), &unlock());
    }

    #[test]
    fn shared_gc() {
        let dir = tempfile::tempdir().unwrap();
        contract::shared_gc(Arc::new(local_backend(&dir.path().join("bucket"))), dir.path(), &unlock());
    }

    #[test]
    fn racing() {
        let dir = tempfile::tempdir().unwrap();
        contract::racing(Arc::new(MemoryBackend::default()), dir.path(), &unlock());
    }

    mod s3 {
        use super::*;

        #[test]
        fn objects() {
            let moto = Moto::start();
            contract::objects(
                cairn_lib::sealed_for_contract(Arc::new(moto.backend("objects", "sealed"))).as_ref(),
            );
        }

        #[test]
        fn save_and_restore() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            contract::save_and_restore(&store(Arc::new(moto.backend("tree", "t")), dir.path()), dir.path());
        }

        #[test]
        fn shared_by_two() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            contract::shared_by_two(Arc::new(moto.backend("shared", "fleet")), dir.path(), &unlock());
        }

        #[test]
        fn shared_gc() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            contract::shared_gc(Arc::new(moto.backend("collect", "fleet")), dir.path(), &unlock());
        }

        #[test]
        fn racing() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            contract::racing(Arc::new(moto.backend("racing", "fleet")), dir.path(), &unlock());
        }
    }
}

#[test]
fn a_missing_local_store_is_refused_by_a_reader_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("none");
    let err = Repository::open_in(&root, OpenMode::Existing).unwrap_err();
    assert_eq!(err.message(), format!("there is no store at {}; save a snapshot", root.display()));
    assert!(!root.exists());
}
