//! Capture-and-commit: a directory captured through the blob writer (stat cache first) and
//! committed as a snapshot record, shared by save, the safety snapshot of a restore, and the
//! recovery snapshot of an interrupted one; and the commit every kind's snapshot goes through.

use std::time::Instant;

use crate::Repository;
use crate::error::Result;
use crate::id::SnapshotId;
use crate::ops::save::SaveOptions;
use crate::snapshot::Snapshot;
use crate::store::backend::StagedFile;
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

/// A file to write and flush beside a capture's record once its snapshot is known: an in-place
/// restore's journal, which names its safety snapshot.
pub(crate) type StageBeside<'f> = dyn Fn(&Snapshot) -> Result<StagedFile> + Sync + 'f;

/// A captured directory whose blobs are published and whose snapshot is not yet committed:
/// its trees can be read from the store while the commit is made.
pub(crate) struct PublishedCapture<'a> {
    writer: BlobWriter<'a>,
    pub snapshot: Snapshot,
    record: StagedRecord,
    claim: SnapshotClaim,
    pub uncovered: Uncovered,
    cache: Option<StatCacheWrite>,
    /// What the [`StageBeside`] passed staged: flushed, not yet in place.
    pub beside: Option<StagedFile>,
}

impl PublishedCapture<'_> {
    /// Commits the snapshot record, with the stat cache rows its capture changed.
    pub(crate) fn commit(self) -> Result<DirCapture> {
        let Self { writer, snapshot, record, claim, uncovered, cache, beside: _ } = self;
        writer
            .store()
            .commit_staged_snapshot(&snapshot, record, claim, cache.as_ref())
            .inspect_err(|_| writer.abandon())?;
        Ok(DirCapture { snapshot, uncovered })
    }
}

impl Repository {
    /// Captures directory `path` and publishes its blobs; [`PublishedCapture::commit`] then
    /// commits the record. `beside`, if any, is staged while the record is. The caller holds
    /// the target's lock.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn publish_dir_capture(
        &self,
        path: &std::path::Path,
        key: &str,
        session: crate::id::SessionId,
        options: &SaveOptions,
        safety: bool,
        beside: Option<&StageBeside<'_>>,
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
        // The packs are published and the name claimed, then the record is written and flushed
        // here: on a thread of its own beside the last pack's flush it saved nothing measurable
        // and cost the thread's start and a wake-up. What goes beside it is written and flushed
        // meanwhile on a thread of its own. The record is published once the packs are.
        let store = self.store();
        let (staged, beside) = std::thread::scope(|scope| {
            let besides = beside.map(|stage| scope.spawn(|| stage(&snapshot)));
            let staged = writer
                .finish()
                .and_then(|()| store.claim_snapshot(&snapshot, options.force))
                .and_then(|claim| {
                    // Best effort: an unreleased claim expires on its own.
                    let record = store.stage_snapshot(&snapshot).inspect_err(|_| {
                        let _ = store.release_name(&snapshot);
                    })?;
                    Ok((claim, record))
                });
            (staged, besides.map(joined).transpose())
        });
        let ((claim, record), beside) = match (staged, beside) {
            (Ok(staged), Ok(beside)) => (staged, beside),
            (Ok(_), Err(e)) => {
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
        Ok(PublishedCapture { writer, snapshot, record, claim, uncovered: captured.uncovered, cache, beside })
    }
}

/// What a scoped thread returned; its panic goes on in the caller.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
