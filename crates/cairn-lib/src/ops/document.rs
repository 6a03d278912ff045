//! Snapshots whose content is one document (a transcript path, a debugger capture): the kinds
//! other than directories store their capture through these two calls, in the layout of
//! `targets/document.rs`.

use crate::Repository;
use crate::error::{Error, Result};
use crate::id::SnapshotId;
use crate::name::validate_name;
use crate::snapshot::{NotCovered, Snapshot, SnapshotStats};
use crate::store::writer::BlobWriter;
use crate::targets::document::{read, write_document};

/// A document to store as a snapshot of a non-directory target.
#[derive(Debug, Clone)]
pub struct DocumentSave {
    /// The target key (`transcript:/path`, `debug:session-id`, …).
    pub target: String,
    /// The target kind (`transcript`, `debug`, …).
    pub kind: crate::targets::TargetKind,
    /// Optional name, unique per session and target.
    pub name: Option<String>,
    /// What the snapshot is being taken before.
    pub description: Option<String>,
    /// Move an existing name to the new snapshot instead of refusing.
    pub force: bool,
    /// Kind-specific details shown with the record.
    pub details: serde_json::Value,
    /// Counts to show with the record (files/bytes are filled in from the document).
    pub stats: SnapshotStats,
    /// What the document leaves out.
    pub not_covered: NotCovered,
    /// The session to save into, resolved by the operation that stores the document.
    pub session: crate::id::SessionId,
}

impl Repository {
    /// Stores `document` as a new snapshot of `save.target`, under the target's lock.
    pub fn save_document(&self, save: &DocumentSave, document: &[u8]) -> Result<Snapshot> {
        if let Some(name) = &save.name {
            validate_name("snapshot", name)?;
        }
        let _lock = self.lock_target(&save.target, &format!("a {} save", save.kind))?;
        let started = std::time::Instant::now();
        let writer = BlobWriter::new(self);
        let root = write_document(&writer, document)?;
        writer.finish()?;
        let (new_bytes, stored_bytes) = writer.totals();
        let mut stats = save.stats.clone();
        stats.bytes = document.len() as u64;
        stats.new_bytes = new_bytes;
        stats.stored_bytes = stored_bytes;
        stats.duration_ms = started.elapsed().as_millis() as u64;
        let snapshot = Snapshot {
            id: SnapshotId::new(),
            name: save.name.clone(),
            description: save.description.clone(),
            target: save.target.clone(),
            kind: save.kind,
            session: save.session,
            created_at: crate::time::now_rfc3339(),
            safety: false,
            stats,
            not_covered: save.not_covered.clone(),
            details: save.details.clone(),
            root: Some(root),
        };
        self.commit_snapshot(&snapshot, save.force)?;
        Ok(snapshot)
    }

    /// Reads back the document a non-directory snapshot holds.
    pub fn read_document(&self, snapshot: &Snapshot) -> Result<Vec<u8>> {
        let root = snapshot
            .root
            .ok_or_else(|| Error::corrupt(format!("snapshot {} holds no document", snapshot.id)))?;
        if snapshot.kind == crate::targets::TargetKind::Dir {
            return Err(Error::invalid(format!(
                "snapshot {} is a directory snapshot, not a document",
                snapshot.id
            )));
        }
        read(self, &root)
    }

    /// Every snapshot of one kind in a session, oldest first (safety snapshots excluded).
    pub fn list_kind(
        &self,
        kind: crate::targets::TargetKind,
        session: &crate::session::SessionRef,
    ) -> Result<Vec<Snapshot>> {
        let filter = crate::store::catalog::SnapshotFilter::default();
        Ok(self
            .catalog()
            .list_snapshots(session.id, &filter)?
            .into_iter()
            .filter(|s| s.kind == kind)
            .collect())
    }
}
