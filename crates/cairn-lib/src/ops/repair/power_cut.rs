//! After a power cut: what the catalog's unflushed commits lost, added back on open.
//!
//! In a store of this machine's own a save's catalog commit is not flushed on its own: its
//! packs and its record object are, before it (`store/catalog/power_cut.rs`). The first open
//! after the machine went down finds the catalog's note of another boot, indexes the packs the
//! catalog does not know from their headers, and adds every snapshot and moment record the
//! catalog lacks and did not remove, in id (so time) order, as `cairn repair` does. What does
//! not read is left for `cairn check` to report and `cairn repair` to recover, as before.

use std::collections::HashSet;

use crate::Repository;
use crate::error::Result;
use crate::ops::live::record_id;
use crate::store::pack;

impl Repository {
    /// Adds back what a power cut took from the catalog; nothing unless the machine went down
    /// since commits that were not flushed. An error leaves the note, for the next open.
    pub fn catch_up_after_power_cut(&self) -> Result<()> {
        if self.is_shared() || !self.catalog().may_have_lost_commits() {
            return Ok(());
        }
        // Beside saves, as a save: not while a gc holds the store alone.
        let _lock =
            crate::store::lock::lock_store(&self.layout().locks(), false, "a catch-up after a power cut")?;
        let known: HashSet<String> = self.catalog().all_pack_keys()?.into_iter().collect();
        for key in self.backend().list("packs/")? {
            if !key.ends_with(".pack") || known.contains(&key) {
                continue;
            }
            let bytes = self.backend().get(&key)?;
            // Renamed into place only once flushed: a header that does not verify is damage,
            // which `repair` recovers blob by blob.
            let Ok(entries) = pack::verify_header(&key, &bytes, self.sealing()) else { continue };
            let (sound, _) = pack::sort_sound(&bytes, entries, self.sealing());
            self.catalog().index_found_pack(&key, bytes.len() as u64, &sound)?;
        }
        let known: HashSet<String> = self.catalog().all_snapshot_ids()?.into_iter().collect();
        let mut lost = Vec::new();
        for key in self.backend().list("records/")? {
            if !known.contains(record_id(&key)) && !self.catalog().seen(&key)? {
                lost.push(key);
            }
        }
        for key in self.backend().list("moments/")? {
            let id = key.trim_start_matches("moments/").trim_end_matches(".json");
            if !id.parse().is_ok_and(|id| self.catalog().has_moment(id).unwrap_or(false)) {
                lost.push(key);
            }
        }
        // Snapshots before the moments that name them; each kind in time order.
        lost.sort_by(|a, b| (a.starts_with("moments/"), a).cmp(&(b.starts_with("moments/"), b)));
        for key in lost {
            // One that does not read stays out, for `check` to report: it never stops an open.
            let _ = self.add_object(&key);
        }
        self.catalog().note_boot()
    }
}
