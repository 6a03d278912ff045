//! Committing a snapshot: its record object, its name's claim and its catalog row, in the
//! order that keeps the catalog rebuildable from the objects at every instant.

use crate::Store;
use crate::catalog::{NewSnapshot, StatCacheWrite};
use crate::error::{Error, Result};
use crate::model::snapshot::Snapshot;

impl Store {
    /// Makes a snapshot durable: its record object first (so the catalog can be rebuilt from
    /// objects), then the catalog row, which is the moment the snapshot exists.
    pub fn commit_snapshot(&self, snapshot: &Snapshot, force_name: bool) -> Result<()> {
        self.commit_snapshot_with(snapshot, force_name, None)
    }

    /// [`Store::commit_snapshot`], with stat cache rows committed in the same transaction.
    pub fn commit_snapshot_with(
        &self,
        snapshot: &Snapshot,
        force_name: bool,
        stat_cache: Option<&StatCacheWrite>,
    ) -> Result<()> {
        let mut record = serde_json::to_value(snapshot)
            .map_err(|e| Error::corrupt(format!("could not encode the snapshot record: {e}")))?;
        record["root"] = serde_json::json!(snapshot.root.map(|r| r.to_hex()));
        let bytes = serde_json::to_vec(&record)
            .map_err(|e| Error::corrupt(format!("could not encode the snapshot record: {e}")))?;
        self.claim_name(snapshot, force_name)?;
        // The record is written while the catalog's rows are; the catalog commits only once the
        // record is durable, so it can always be rebuilt from the objects.
        let key = format!("records/{}.json", snapshot.id);
        // Before the record exists, so a save killed after writing it leaves a record gc can
        // tell from one the catalog lost track of. A shared store's other machines may apply
        // such a record, so there it stays theirs to keep.
        if !self.is_shared() {
            self.catalog().note_record(&key)?;
        }
        std::thread::scope(|scope| {
            let writing = scope.spawn(|| self.backend().put_if_absent(&key, &bytes));
            let record_durable = || {
                let written = writing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                // The snapshot will never exist: its claim must not hold the name for a save
                // that is retried (best effort; an unreleased claim expires on its own).
                written.map(drop).inspect_err(|_| {
                    let _ = self.release_name(snapshot);
                })
            };
            self.catalog()
                .insert_snapshot_when(NewSnapshot { snapshot, force_name, stat_cache }, record_durable)
        })
    }
}
