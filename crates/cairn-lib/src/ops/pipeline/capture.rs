//! Capture-and-commit: a directory captured through the blob writer (stat cache first) and
//! committed as a snapshot record, shared by save, the safety snapshot of a restore, and the
//! recovery snapshot of an interrupted one; and the commit every kind's snapshot goes through.

use std::time::Instant;

use crate::Repository;
use crate::error::Result;
use crate::id::SnapshotId;
use crate::ops::save::SaveOptions;
use crate::snapshot::Snapshot;
use crate::store::catalog::StatCacheWrite;
use crate::store::snapshot_records::{SnapshotClaim, StagedRecord};
use crate::store::writer::BlobWriter;
use crate::targets::dir::Progress;
use crate::targets::dir::capture::{self, Uncovered};
use crate::targets::dir::statcache::StatCache;

/// A committed directory snapshot (with the stat cache rows its capture changed), and what
/// its capture learned about the live tree.
pub(crate) struct DirCapture {
    pub snapshot: Snapshot,
    /// Every path the capture left out, which a restore must not remove.
    pub uncovered: Uncovered,
}

/// A captured directory whose blobs are published and whose snapshot is not yet committed:
/// its trees can be read from the store while the commit is made.
pub(crate) struct PublishedCapture<'a> {
    writer: BlobWriter<'a>,
    pub snapshot: Snapshot,
    record: StagedRecord,
    claim: SnapshotClaim,
    pub uncovered: Uncovered,
    cache: Option<StatCacheWrite>,
}

impl PublishedCapture<'_> {
    /// Commits the snapshot record, with the stat cache rows its capture changed.
    pub(crate) fn commit(self) -> Result<DirCapture> {
        let Self { writer, snapshot, record, claim, uncovered, cache } = self;
        writer
            .store()
            .commit_staged_snapshot(&snapshot, record, claim, cache.as_ref())
            .inspect_err(|_| writer.abandon())?;
        Ok(DirCapture { snapshot, uncovered })
    }
}

impl Repository {
    /// Captures directory `path` and publishes its blobs; [`PublishedCapture::commit`] then
    /// commits the record. The caller holds the target's lock.
    pub(crate) fn publish_dir_capture(
        &self,
        path: &std::path::Path,
        key: &str,
        session: crate::id::SessionId,
        options: &SaveOptions,
        safety: bool,
        progress: &Progress,
    ) -> Result<PublishedCapture<'_>> {
        let started = Instant::now();
        let old_cache = StatCache::load(self, key)?;
        let writer = BlobWriter::new(self);
        let include_secrets = options.include_secrets || self.config().secrets_include();
        let filter = capture::Filter { no_ignore: options.no_ignore, include_secrets };
        let captured = capture::capture_observed(&writer, path, &old_cache, filter, progress)
            .and_then(|c| writer.close_frames().map(|()| c))
            .inspect_err(|_| writer.abandon())?;
        drop(old_cache);
        let (new_bytes, stored_bytes) = writer.totals();
        let mut stats = captured.stats;
        stats.new_bytes = new_bytes;
        stats.stored_bytes = stored_bytes;
        stats.duration_ms = started.elapsed().as_millis() as u64;
        let snapshot = Snapshot {
            id: SnapshotId::new(),
            name: if safety { None } else { options.name.clone() },
            description: options.description.clone(),
            target: key.to_owned(),
            kind: crate::targets::TargetKind::Dir,
            session,
            created_at: crate::time::now_rfc3339(),
            safety,
            stats,
            not_covered: captured.not_covered,
            details: serde_json::json!({ "no_ignore": options.no_ignore, "include_secrets": include_secrets }),
            root: Some(captured.root),
        };
        // The record is written and flushed while the last pack is, and its name claimed; it is
        // published once the packs it refers to are.
        let store = self.store();
        let (claim, record) = std::thread::scope(|scope| {
            let staging = scope.spawn(|| store.stage_snapshot(&snapshot));
            let claim = writer.finish().and_then(|()| store.claim_snapshot(&snapshot, options.force));
            (claim, staging.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        let (claim, record) = match (claim, record) {
            (Ok(claim), Ok(record)) => (claim, record),
            (Ok(_), Err(e)) => {
                // Best effort: an unreleased claim expires on its own.
                let _ = store.release_name(&snapshot);
                writer.abandon();
                return Err(e);
            }
            (Err(e), _) => {
                writer.abandon();
                return Err(e);
            }
        };
        let cache = captured.cache.into_write().inspect_err(|_| writer.abandon())?;
        Ok(PublishedCapture { writer, snapshot, record, claim, uncovered: captured.uncovered, cache })
    }
}
