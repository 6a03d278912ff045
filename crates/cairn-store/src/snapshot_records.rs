//! Committing a snapshot: its record object, its name's claim and its catalog row, in the
//! order that keeps the catalog rebuildable from the objects at every instant.

use crate::Store;
use crate::backend::Staged;
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
        let record = StagedRecord::encode(snapshot)?;
        let claim = self.claim_snapshot(snapshot, force_name)?;
        self.commit_staged_snapshot(snapshot, record, claim, stat_cache)
    }

    /// Writes and flushes `snapshot`'s record without publishing it, so that flush can run
    /// beside the flush of the capture's last pack; [`Store::commit_staged_snapshot`] commits
    /// it. The snapshot must not change in between.
    pub fn stage_snapshot(&self, snapshot: &Snapshot) -> Result<StagedRecord> {
        let mut record = StagedRecord::encode(snapshot)?;
        let bytes = std::mem::take(&mut record.bytes);
        record.staged = Some(self.backend().stage(&record.key, &bytes)?);
        Ok(record)
    }

    /// What must come before `snapshot`'s record is published: its name claimed (in a shared
    /// store) and its record noted. Either may run beside [`Store::stage_snapshot`].
    pub fn claim_snapshot(&self, snapshot: &Snapshot, force_name: bool) -> Result<SnapshotClaim> {
        self.claim_name(snapshot, force_name)?;
        let key = record_key(snapshot);
        // Before the record exists, so a save killed after writing it leaves a record gc can
        // tell from one the catalog lost track of. A shared store's other machines may apply
        // such a record, so there it stays theirs to keep.
        if !self.is_shared() {
            self.catalog().note_record(&key).inspect_err(|_| {
                let _ = self.release_name(snapshot);
            })?;
        }
        Ok(SnapshotClaim { key, force_name })
    }

    /// Publishes `snapshot`'s record while its catalog rows are written, and commits them once
    /// the record is durable, so the catalog can always be rebuilt from the objects: the
    /// moment the snapshot exists.
    pub fn commit_staged_snapshot(
        &self,
        snapshot: &Snapshot,
        record: StagedRecord,
        claim: SnapshotClaim,
        stat_cache: Option<&StatCacheWrite>,
    ) -> Result<()> {
        if record.key != claim.key {
            return Err(Error::invalid(format!(
                "the record staged is {}, the claim {}'s",
                record.key, claim.key
            )));
        }
        std::thread::scope(|scope| {
            let writing = scope.spawn(|| match record.staged {
                Some(staged) => self.backend().publish(staged),
                None => self.backend().put_if_absent(&record.key, &record.bytes),
            });
            let record_durable = || {
                let written = writing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                // The snapshot will never exist: its claim must not hold the name for a save
                // that is retried (best effort; an unreleased claim expires on its own).
                written.map(drop).inspect_err(|_| {
                    let _ = self.release_name(snapshot);
                })
            };
            let new = NewSnapshot { snapshot, force_name: claim.force_name, stat_cache };
            self.catalog().insert_snapshot_when(new, record_durable)
        })
    }
}

/// A snapshot's record, encoded and, once [`Store::stage_snapshot`] wrote it, flushed but not
/// yet published.
pub struct StagedRecord {
    key: String,
    bytes: Vec<u8>,
    staged: Option<Staged>,
}

/// Proof that [`Store::claim_snapshot`] ran for a record.
pub struct SnapshotClaim {
    key: String,
    force_name: bool,
}

impl StagedRecord {
    fn encode(snapshot: &Snapshot) -> Result<Self> {
        let mut record = serde_json::to_value(snapshot)
            .map_err(|e| Error::corrupt(format!("could not encode the snapshot record: {e}")))?;
        record["root"] = serde_json::json!(snapshot.root.map(|r| r.to_hex()));
        let bytes = serde_json::to_vec(&record)
            .map_err(|e| Error::corrupt(format!("could not encode the snapshot record: {e}")))?;
        Ok(Self { key: record_key(snapshot), bytes, staged: None })
    }
}

fn record_key(snapshot: &Snapshot) -> String {
    format!("records/{}.json", snapshot.id)
}
