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

    /// Writes and flushes `snapshot`'s record without publishing it, once its name is claimed
    /// ([`Store::claim_snapshot`]); [`Store::commit_staged_snapshot`] commits it. The snapshot
    /// must not change in between.
    pub fn stage_snapshot(&self, snapshot: &Snapshot) -> Result<StagedRecord> {
        let mut record = StagedRecord::encode(snapshot)?;
        let bytes = std::mem::take(&mut record.bytes);
        record.staged = Some(self.backend().stage(&record.key, &bytes)?);
        Ok(record)
    }

    /// What must come before `snapshot`'s record is published: its name claimed (in a shared
    /// store) and its record noted.
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

    /// Writes `snapshot`'s catalog rows, publishes its record and commits the rows once the
    /// record is durable, so the catalog can always be rebuilt from the objects: the moment the
    /// snapshot exists. A name another snapshot holds is refused before the record is published.
    ///
    /// All on this thread: publishing beside the rows saved nothing measurable (a rename and
    /// one flush against a few rows) and cost a thread's start and two wake-ups, a tenth of a
    /// save that adds nothing.
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
        let StagedRecord { key, bytes, staged } = record;
        let publish = || {
            let written = match staged {
                Some(staged) => self.backend().publish(staged),
                None => self.backend().put_if_absent(&key, &bytes),
            };
            // The snapshot will never exist: its claim must not hold the name for a save that
            // is retried (best effort; an unreleased claim expires on its own).
            written.map(drop).inspect_err(|_| {
                let _ = self.release_name(snapshot);
            })
        };
        let new = NewSnapshot { snapshot, force_name: claim.force_name, stat_cache };
        self.catalog().insert_snapshot_when(new, publish)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::{SessionId, SnapshotId};
    use crate::model::target_kind::TargetKind;

    fn named(name: &str) -> Snapshot {
        Snapshot {
            id: SnapshotId::new(),
            name: Some(name.into()),
            description: None,
            target: "/work".into(),
            kind: TargetKind::Dir,
            session: SessionId::BASELINE,
            created_at: crate::time::now_rfc3339(),
            safety: false,
            stats: Default::default(),
            not_covered: Default::default(),
            details: serde_json::Value::Null,
            root: None,
        }
    }

    #[test]
    fn a_name_another_snapshot_holds_is_refused_before_the_record_shows() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        let first = named("base");
        store.commit_snapshot(&first, false).unwrap();
        // Staged as a save stages it, so its name is checked only by the commit (a command that
        // saved under the same name meanwhile), not by the command's own check beforehand.
        let second = named("base");
        let claim = store.claim_snapshot(&second, false).unwrap();
        let record = store.stage_snapshot(&second).unwrap();
        let refused = store.commit_staged_snapshot(&second, record, claim, None).unwrap_err();
        assert!(refused.to_string().contains("already exists"), "{refused}");
        let record = |s: &Snapshot| store.backend().size(&record_key(s)).unwrap();
        assert!(record(&first).is_some());
        assert_eq!(record(&second), None, "the refused snapshot's record was published");
        let staged = std::fs::read_dir(dir.path().join("store/tmp")).unwrap().count();
        assert_eq!(staged, 0, "the refused snapshot's staged record was left behind");
    }
}
