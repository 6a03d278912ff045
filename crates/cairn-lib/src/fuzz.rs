//! Entry points for the fuzz targets (`crates/cairn-fuzz`): every parser of bytes that reach
//! the engine from outside — archives to import, pack files, snapshot records, trees and stat
//! caches read back from a store someone else may have written. Not part of the supported API.

use crate::Repository;
use crate::id::ObjectId;
use crate::store::writer::BlobWriter;

thread_local! {
    /// One scratch store per thread: the import target writes through a dry writer, so it
    /// stays empty.
    static SCRATCH: Option<(tempfile::TempDir, Repository)> = tempfile::tempdir()
        .ok()
        .and_then(|dir| Repository::open(&dir.path().join("store")).ok().map(|s| (dir, s)));
}

/// Reads `bytes` as an archive to import (plain, gzip or zstd), with every check and limit.
pub fn tar_import(bytes: &[u8]) {
    SCRATCH.with(|scratch| {
        let Some((_, store)) = scratch else { return };
        let writer = BlobWriter::dry(store);
        let reader: Box<dyn std::io::Read + '_> = match bytes {
            [0x1f, 0x8b, ..] => Box::new(flate2::read::MultiGzDecoder::new(bytes)),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => match zstd::Decoder::new(bytes) {
                Ok(d) => Box::new(d),
                Err(_) => return,
            },
            _ => Box::new(bytes),
        };
        let check = crate::ops::archive::checker(1 << 24, 10_000);
        let _ = crate::ops::archive::read_into(&writer, reader, std::path::Path::new("fuzz.tar"), check);
    });
}

/// Reads `bytes` as a pack file: its trailing header, then every blob it lists.
pub fn pack(bytes: &[u8]) {
    let Ok(entries) = crate::store::pack::read_header("fuzz", bytes, None) else { return };
    let _ = crate::store::pack::sort_sound(bytes, entries, None);
}

/// Reads `bytes` as a snapshot record, a tree, a snapshot root and a stat cache.
pub fn record(bytes: &[u8]) {
    let _ = serde_json::from_slice::<crate::snapshot::Snapshot>(bytes);
    let id = ObjectId::of(bytes);
    let _ = crate::tree::decode::<crate::tree::Tree>(&id, bytes);
    // As a parted tree's index whose every part is its own bytes.
    let _ = crate::tree::parts::assemble(&id, bytes, |_| Ok(bytes.to_vec()));
    let _ = crate::tree::decode::<crate::tree::DirRoot>(&id, bytes);
    let _ = crate::targets::dir::statcache::StatCache::decode_content_ids(bytes);
}

/// Decodes `bytes` as JSON arguments of the operations the MCP tools call, the way a tool
/// call's arguments reach them.
pub fn options(bytes: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else { return };
    let _ = serde_json::from_value::<crate::ops::save::SaveOptions>(value.clone());
    let _ = serde_json::from_value::<crate::ops::restore::RestoreOptions>(value.clone());
    let _ = serde_json::from_value::<crate::ops::archive::ExportOptions>(value.clone());
    let _ = serde_json::from_value::<crate::ops::archive::ImportOptions>(value.clone());
    let _ = serde_json::from_value::<crate::ops::transcript::TranscriptSaveOptions>(value);
}

/// Where [`catalog_rebuild`] puts its object, by the input's first byte.
const REBUILD_KEYS: [&str; 5] = [
    "records/0193a1f0-0000-7000-8000-000000000001.json",
    "log/0193a1f0-0000-7000-8000-000000000002.json",
    "packs/ab/ab00000000000000000000000000000000000000000000000000000000000000.pack",
    "gc/0193a1f0-0000-7000-8000-000000000003.json",
    "cairn-store.json",
];

/// Rebuilds a shared store's catalog cache from a bucket that holds one object made of
/// `bytes` after the first, which picks its kind: a snapshot record, an event, a pack, a gc
/// mark or the store marker. The other objects a store needs are valid.
pub fn catalog_rebuild(bytes: &[u8]) {
    use std::sync::Arc;

    use crate::store::{Backend, MemoryBackend, OpenMode};

    let Some((&kind, object)) = bytes.split_first() else { return };
    let key = REBUILD_KEYS[usize::from(kind) % REBUILD_KEYS.len()];
    let Ok(cache) = tempfile::tempdir() else { return };
    let backend = Arc::new(MemoryBackend::default());
    let marker = format!(
        r#"{{"format":{},"id":"0193a1f0-0000-7000-8000-00000000000a"}}"#,
        crate::store::layout::FORMAT_VERSION
    );
    if key != "cairn-store.json" && backend.put_if_absent("cairn-store.json", marker.as_bytes()).is_err() {
        return;
    }
    if backend.put_if_absent(key, object).is_err() {
        return;
    }
    if let Ok(store) = Repository::open_shared(backend, cache.path(), OpenMode::Existing) {
        // What a command does next: read what the rebuilt catalog holds.
        let options = crate::ops::list::ListOptions { include_safety_snapshots: true, ..Default::default() };
        let _ = store.list(&options, &crate::ops::resolve::CallContext::default());
    }
}
