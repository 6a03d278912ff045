//! The case of the backend contract that needs the store's insides, run on every backend: a
//! pack made by the blob writer reads back blob by blob, and its header by ranges. The rest of
//! the suite goes through the public API and lives in `cairn-test-support` (run by
//! `tests/contract.rs`).
//!
//! The S3 cases start `moto_server` through `cairn-test-support`, a dev-dependency that itself
//! depends on this crate: only its plain settings cross over (`Moto::options`), since its own
//! `S3Backend` is a type of the other copy of this crate the test links.

use std::path::Path;
use std::sync::Arc;

use cairn_test_support::Moto;

use super::backend::{Backend, MemoryBackend};
use super::pack::BlobKind;
use super::s3::{S3Backend, S3Settings};
use super::writer::BlobWriter;
use super::{OpenMode, Secret, Store, Unlock};
use crate::id::ObjectId;

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

/// A backend on `s3://BUCKET/PREFIX` of `moto`, made by this crate from moto's settings.
fn s3(moto: &Moto, bucket: &str, prefix: &str) -> S3Backend {
    moto.create_bucket(bucket);
    let settings =
        S3Settings { bucket: bucket.to_owned(), prefix: prefix.to_owned(), options: moto.options() };
    S3Backend::new(&settings).unwrap()
}

/// A store directory whose objects live in `backend`.
fn store_on(backend: Arc<dyn Backend>, dir: &Path) -> Store {
    Store::open_with(backend, &dir.join("store"), OpenMode::CreateIfMissing).unwrap()
}

/// An encrypted store on `backend`, its catalog cached below `work`.
fn encrypted_store(backend: Arc<dyn Backend>, work: &Path) -> Store {
    let unlock = Unlock::with_secret(Secret::password("contract suite")).encrypt_new(true);
    Store::open_shared_with(backend, &work.join("cache"), OpenMode::CreateIfMissing, &unlock).unwrap()
}

mod local {
    use super::*;

    #[test]
    fn packs() {
        let dir = tempfile::tempdir().unwrap();
        super::packs(&Store::open(&dir.path().join("store")).unwrap());
    }
}

mod memory {
    use super::*;

    #[test]
    fn packs() {
        let dir = tempfile::tempdir().unwrap();
        super::packs(&store_on(Arc::new(MemoryBackend::default()), dir.path()));
    }
}

mod s3 {
    use super::*;

    #[test]
    fn packs() {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        super::packs(&store_on(Arc::new(s3(&moto, "packs", "p")), dir.path()));
    }
}

/// Encrypted stores: packs sealed blob by blob and header.
mod encrypted {
    use super::*;

    #[test]
    fn packs() {
        let dir = tempfile::tempdir().unwrap();
        let store = encrypted_store(Arc::new(MemoryBackend::default()), dir.path());
        assert!(store.is_encrypted());
        super::packs(&store);
    }

    mod s3 {
        use super::*;

        #[test]
        fn packs() {
            let moto = Moto::start();
            let dir = tempfile::tempdir().unwrap();
            let store = encrypted_store(Arc::new(s3(&moto, "packs", "p")), dir.path());
            assert!(store.is_encrypted());
            super::super::packs(&store);
        }
    }
}
