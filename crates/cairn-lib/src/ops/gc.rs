//! `cairn gc` and `cairn check`: reclaim data no snapshot references; verify what remains.
//!
//! gc takes the store alone (saves and restores hold the store lock shared, so gc waits for
//! none and none races it), marks every object reachable from a snapshot record or a stat
//! cache, then deletes packs that hold only dead blobs and rewrites packs that are mostly
//! dead. Packs younger than `gc.grace` are left alone. A new pack is indexed before the old
//! one is deleted, so a crash at any point loses nothing that is referenced.

use std::collections::HashSet;
use std::time::Instant;

use serde::Serialize;

use crate::error::Result;
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::pack::{EncodedBlob, PackBuilder};
use crate::targets::dir::statcache::StatCache;

/// What gc did.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct GcResult {
    /// Packs deleted because nothing in them was referenced.
    pub packs_removed: u64,
    /// Packs rewritten to drop their unreferenced blobs.
    pub packs_rewritten: u64,
    /// Blobs dropped.
    pub blobs_removed: u64,
    /// Bytes of pack files freed.
    pub bytes_freed: u64,
    /// Bytes of pack files the store holds afterwards.
    pub bytes_kept: u64,
    /// Wall time, in milliseconds.
    pub duration_ms: u64,
}

/// What `check` found.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct CheckResult {
    /// Snapshot records checked.
    pub snapshots: u64,
    /// Objects reachable from them.
    pub objects: u64,
    /// Objects whose bytes were read and hash-checked (with `read_data`).
    pub objects_read: u64,
    /// Problems found; empty when the store is sound.
    pub problems: Vec<String>,
}

/// A pack is rewritten when at least this share of its bytes is dead.
const REWRITE_DEAD_SHARE: f64 = 0.2;

impl Store {
    /// Everything reachable from snapshot records and stat caches.
    fn live_objects(&self) -> Result<HashSet<ObjectId>> {
        let mut live = HashSet::new();
        for (kind, root) in self.catalog.all_roots_with_kind()? {
            crate::targets::referenced_objects(self, &kind, &root, &mut live)?;
        }
        for (_, blob) in self.catalog.all_stat_caches()? {
            live.extend(StatCache::decode_content_ids(&blob));
        }
        Ok(live)
    }

    /// Reclaims unreferenced data.
    pub fn gc(&self) -> Result<GcResult> {
        let started = Instant::now();
        let _lock = self.lock_store_exclusive("cairn gc")?;
        let live = self.live_objects()?;
        let grace = self.config().duration("gc.grace").unwrap_or_default().as_secs() as i64;
        let now = jiff::Timestamp::now().as_second();
        let mut result = GcResult::default();
        for (key, size, created) in self.catalog.ready_packs()? {
            if now - created < grace {
                continue;
            }
            let blobs = self.catalog.pack_blobs(&key)?;
            let dead: Vec<_> = blobs.iter().filter(|(id, _)| !live.contains(id)).collect();
            if dead.is_empty() {
                continue;
            }
            let dead_bytes: u64 = dead.iter().map(|(_, l)| l.length).sum();
            if dead.len() < blobs.len() && (dead_bytes as f64) < size as f64 * REWRITE_DEAD_SHARE {
                continue;
            }
            if dead.len() < blobs.len() {
                let mut builder = PackBuilder::default();
                for (id, loc) in blobs.iter().filter(|(id, _)| live.contains(id)) {
                    let stored = self.backend().get_range(&key, loc.offset, loc.length)?;
                    builder.push(EncodedBlob {
                        id: *id,
                        kind: loc.kind,
                        raw_length: loc.raw_length,
                        stored,
                        compressed: loc.compressed,
                    });
                }
                let (new_key, bytes, entries) = builder.finish()?;
                self.catalog.begin_pack(&new_key)?;
                self.backend().put_if_absent(&new_key, &bytes)?;
                self.catalog.reassign_blobs(&new_key, bytes.len() as u64, &entries)?;
                result.packs_rewritten += 1;
                result.bytes_freed += size.saturating_sub(bytes.len() as u64);
            } else {
                result.packs_removed += 1;
                result.bytes_freed += size;
            }
            result.blobs_removed += dead.len() as u64;
            self.catalog.forget_pack(&key)?;
            self.backend().delete(&key)?;
        }
        let known: HashSet<String> = self.catalog.all_snapshot_ids()?.into_iter().collect();
        for key in self.backend().list("records/")? {
            let id = key.trim_start_matches("records/").trim_end_matches(".json");
            if !known.contains(id) {
                self.backend().delete(&key)?;
            }
        }
        result.bytes_kept = self.catalog.stored_bytes()?;
        result.duration_ms = started.elapsed().as_millis() as u64;
        Ok(result)
    }

    /// Checks that every object a snapshot needs is in the store; with `read_data`, reads and
    /// hash-checks each one.
    pub fn check(&self, read_data: bool) -> Result<CheckResult> {
        let mut result = CheckResult {
            snapshots: self.catalog.all_snapshot_ids()?.len() as u64,
            ..CheckResult::default()
        };
        let mut live = HashSet::new();
        for (kind, root) in self.catalog.all_roots_with_kind()? {
            if let Err(e) = crate::targets::referenced_objects(self, &kind, &root, &mut live) {
                result.problems.push(format!("snapshot root {root}: {e}"));
            }
        }
        result.objects = live.len() as u64;
        for id in &live {
            match self.catalog.blob_location(id)? {
                None => result.problems.push(format!("object {id} is missing")),
                Some(_) if read_data => match self.read_blob(id) {
                    Ok(_) => result.objects_read += 1,
                    Err(e) => result.problems.push(e.to_string()),
                },
                Some(_) => {}
            }
        }
        result.problems.sort();
        Ok(result)
    }
}
