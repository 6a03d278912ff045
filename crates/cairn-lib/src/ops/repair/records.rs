//! Adding back what the catalog lacks from the record objects: every snapshot record, and in a
//! shared store every event and moment it has not applied, in the order of their ids (UUIDv7,
//! so time order) as the catch-up on open applies them. An object that does not read (damaged,
//! or sealed with another key) is listed and left as it is; it never stops the repair.

use super::{DamagedRecord, RepairResult};
use crate::Repository;
use crate::error::{ErrorKind, Result};
use crate::id::{ObjectId, SessionId};
use crate::snapshot::Snapshot;
use crate::store::catalog::NewSnapshot;

impl Repository {
    /// Adds every snapshot record (and, in a shared store, event and moment) the catalog lacks.
    pub(super) fn add_records(&self, result: &mut RepairResult) -> Result<()> {
        let prefixes: &[&str] =
            if self.is_shared() { &["records/", "log/", "moments/"] } else { &["records/"] };
        let mut pending = Vec::new();
        for prefix in prefixes {
            for key in self.backend().list(prefix)? {
                if self.is_shared() && self.catalog().seen(&key)? {
                    continue;
                }
                let id = key.trim_start_matches(prefix).trim_end_matches(".json").to_owned();
                pending.push((id, key));
            }
        }
        pending.sort();
        for (_, key) in pending {
            match self.add_object(&key) {
                Ok(Added::Snapshot) => result.snapshots_recovered += 1,
                Ok(Added::Corrected) => result.snapshots_corrected.push(key.clone()),
                Ok(Added::Nothing) => {}
                Err(problem) => {
                    result.records_damaged.push(DamagedRecord { key: key.clone(), problem: problem.message });
                    // A shared store's catch-up would stop at it on every open: it is marked
                    // applied. A failure to read at all (a network error) is tried again then.
                    if !problem.transient && self.is_shared() {
                        self.catalog().mark_seen(&key)?;
                    }
                }
            }
        }
        if !self.is_shared() {
            self.add_moment_records()?;
        }
        Ok(())
    }

    /// Applies one object; returns what it did to the snapshots.
    pub(super) fn add_object(&self, key: &str) -> std::result::Result<Added, Problem> {
        let bytes = self.backend().get(key).map_err(Problem::read)?;
        if key.starts_with("moments/") {
            self.add_moment_record(&bytes).map_err(Problem::apply)?;
            self.catalog().mark_seen(key).map_err(Problem::apply)?;
            return Ok(Added::Nothing);
        }
        if key.starts_with("log/") {
            let event = serde_json::from_slice(&bytes)
                .map_err(|e| Problem::damage(format!("it does not decode: {e}")))?;
            self.catalog().apply_event(&event).map_err(Problem::apply)?;
            self.catalog().mark_seen(key).map_err(Problem::apply)?;
            return Ok(Added::Nothing);
        }
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Problem::damage(format!("it does not decode: {e}")))?;
        let mut snapshot: Snapshot = serde_json::from_value(value.clone())
            .map_err(|e| Problem::damage(format!("it is not a snapshot record: {e}")))?;
        snapshot.root = value["root"].as_str().and_then(|h| ObjectId::from_hex(h).ok());
        let id = snapshot.id.to_string();
        if self.catalog().has_snapshot(&id).map_err(Problem::apply)? {
            // Neither side proves itself (a record has no checksum of its own): the row is
            // rewritten from the record only when the row does not decode or its root does not
            // read and the record's root does.
            let reads = |root: Option<ObjectId>| root.is_some_and(|r| self.read_blob(&r).is_ok());
            let row_root = self.catalog().sound_row_root(&id).map_err(Problem::apply)?;
            let rewrite = !reads(row_root) && reads(snapshot.root);
            if self
                .catalog()
                .correct_snapshot(&snapshot, rewrite, !self.is_shared())
                .map_err(Problem::apply)?
            {
                return Ok(Added::Corrected);
            }
            return Ok(Added::Nothing);
        }
        if !self.is_shared() {
            // A local store's sessions live in its catalog alone: one the catalog lost comes
            // back under a name of its own. A shared store's come back from their events.
            let name = if snapshot.session == SessionId::BASELINE {
                "baseline".to_owned()
            } else {
                format!("recovered-{}", &snapshot.session.to_string()[..8])
            };
            self.catalog().ensure_session(snapshot.session, &name).map_err(Problem::apply)?;
        }
        // The writer held the name when it committed: in a shared store a later record with the
        // same name moved it there, as it did on the writer's machine.
        let force_name = self.is_shared();
        if self
            .catalog()
            .insert_snapshot(NewSnapshot { snapshot: &snapshot, force_name, stat_cache: None })
            .is_err()
        {
            // Its name is taken in the rebuilt session: keep the snapshot, by id.
            snapshot.name = None;
            self.catalog()
                .insert_snapshot(NewSnapshot { snapshot: &snapshot, force_name, stat_cache: None })
                .map_err(Problem::apply)?;
        }
        Ok(Added::Snapshot)
    }
}

/// What applying one object did to the snapshots.
pub(super) enum Added {
    Nothing,
    /// A snapshot the catalog lacked was added back.
    Snapshot,
    /// The catalog's row of a snapshot was put right from its record.
    Corrected,
}

/// Why an object was not applied.
pub(super) struct Problem {
    message: String,
    /// Whether trying again later may succeed (the object could not be read at all).
    transient: bool,
}

impl Problem {
    fn damage(message: String) -> Self {
        Self { message, transient: false }
    }

    fn read(e: crate::error::Error) -> Self {
        Self { transient: e.kind() != ErrorKind::Corrupt, message: e.message() }
    }

    fn apply(e: crate::error::Error) -> Self {
        Self { transient: false, message: e.message() }
    }
}
