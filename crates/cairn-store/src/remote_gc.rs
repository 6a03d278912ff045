//! gc of a shared store, in two phases, so that it never deletes data a save running on
//! another machine is about to reference, with no lock between machines.
//!
//! Mark: packs that hold no blob any snapshot or stat cache refers to are listed in a mark
//! object `gc/<id>.json`, and nothing is deleted. From then on every save (on any machine,
//! once its sync has read the mark) treats their blobs as absent and stores them again, so no
//! new snapshot comes to depend on a condemned pack. Sweep: a later gc, once a mark is older
//! than the grace period (`gc.grace`, longer than any save), syncs, re-checks each condemned
//! pack against every snapshot committed since (a save that began before the mark may have
//! referenced it), deletes only those still unreferenced, and then the mark. A gc killed at any
//! point leaves a consistent store: a pack is deleted only after its re-check, a mark only
//! after its packs, and a mark left behind is swept again.
//!
//! As on a local store, the caller's mark counts as live the roots of every record object the
//! catalog lacks and has not seen removed, and a walk that stopped short deletes nothing; record
//! objects of removed snapshots are deleted by the caller (`ops/gc.rs`), never here. A
//! condemned pack whose header does not read is kept and reported, and a pack file the catalog
//! does not know is never condemned: another machine may be indexing it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::Store;
use crate::error::{Error, Result};
use crate::model::gc::GcResult;

/// What a mark object holds.
#[derive(Debug, Serialize, Deserialize)]
pub struct Mark {
    /// When it was made, in seconds since the epoch.
    pub at: i64,
    /// The packs it condemns.
    pub packs: Vec<String>,
}

impl Store {
    /// Every gc mark in the objects, by key.
    pub fn gc_marks(&self) -> Result<Vec<(String, Mark)>> {
        let mut out = Vec::new();
        for key in self.backend.list("gc/")? {
            let bytes = self.backend.get(&key)?;
            let mark = serde_json::from_slice(&bytes)
                .map_err(|e| Error::corrupt(format!("gc mark {key} does not decode: {e}")))?;
            out.push((key, mark));
        }
        Ok(out)
    }

    /// gc of a shared store (see the module documentation).
    pub fn gc_shared(&self, live: &HashSet<crate::id::ObjectId>) -> Result<GcResult> {
        let grace = self.config().gc_grace().as_secs() as i64;
        let now = jiff::Timestamp::now().as_second();
        let mut result = GcResult::default();
        let marks = self.gc_marks()?;
        let mut still_condemned = HashSet::new();
        let dead = |key: &str| -> Result<bool> {
            Ok(self.catalog.pack_blobs(key)?.iter().all(|(id, _)| !live.contains(id)))
        };
        for (mark_key, mark) in &marks {
            if now - mark.at < grace {
                still_condemned.extend(mark.packs.iter().cloned());
                continue;
            }
            for key in &mark.packs {
                let Some(size) = self.catalog.pack_size(key)? else { continue };
                // The re-check: a snapshot committed since the mark may refer to it.
                if !dead(key)? {
                    continue;
                }
                if !self.pack_header_sound(key, size) {
                    result.kept.push(format!("kept pack {key}: its header is damaged; repair the store"));
                    continue;
                }
                result.blobs_removed += self.catalog.pack_blobs(key)?.len() as u64;
                self.catalog.forget_pack(key)?;
                self.backend.delete(key)?;
                result.packs_removed += 1;
                result.bytes_freed += size;
            }
            self.backend.delete(mark_key)?;
        }
        let mut condemn = Vec::new();
        for (key, _, created) in self.catalog.ready_packs()? {
            if still_condemned.contains(&key) || now - created < grace || !dead(&key)? {
                continue;
            }
            condemn.push(key);
        }
        if !condemn.is_empty() {
            let mark = Mark { at: now, packs: condemn };
            let bytes = serde_json::to_vec(&mark).map_err(|e| Error::corrupt(e.to_string()))?;
            self.backend.put_if_absent(&format!("gc/{}.json", uuid::Uuid::now_v7()), &bytes)?;
        }
        result.bytes_kept = self.catalog.stored_bytes()?;
        Ok(result)
    }
}
