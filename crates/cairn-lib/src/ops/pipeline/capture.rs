//! Capture-and-commit: a directory captured through the blob writer (stat cache first) and
//! committed as a snapshot record, shared by save, the safety snapshot of a restore, and the
//! recovery snapshot of an interrupted one; and the commit every kind's snapshot goes through.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::id::SnapshotId;
use crate::ops::save::SaveOptions;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::store::catalog::{NewSnapshot, StatCacheWrite};
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
    pub uncovered: Uncovered,
    cache: Option<StatCacheWrite>,
    force: bool,
}

impl PublishedCapture<'_> {
    /// Commits the snapshot record, with the stat cache rows its capture changed.
    pub(crate) fn commit(self) -> Result<DirCapture> {
        let Self { writer, snapshot, uncovered, cache, force } = self;
        writer
            .store()
            .commit_snapshot_with(&snapshot, force, cache.as_ref())
            .inspect_err(|_| writer.abandon())?;
        Ok(DirCapture { snapshot, uncovered })
    }
}

impl Store {
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
            .and_then(|c| writer.finish().map(|()| c))
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
        let cache = captured.cache.into_write().inspect_err(|_| writer.abandon())?;
        Ok(PublishedCapture { writer, snapshot, uncovered: captured.uncovered, cache, force: options.force })
    }

    /// Makes a snapshot durable: its record object first (so the catalog can be rebuilt from
    /// objects), then the catalog row, which is the moment the snapshot exists.
    pub(crate) fn commit_snapshot(&self, snapshot: &Snapshot, force_name: bool) -> Result<()> {
        self.commit_snapshot_with(snapshot, force_name, None)
    }

    /// [`Store::commit_snapshot`], with stat cache rows committed in the same transaction.
    pub(crate) fn commit_snapshot_with(
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
            self.catalog.note_record(&key)?;
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
            self.catalog
                .insert_snapshot_when(NewSnapshot { snapshot, force_name, stat_cache }, record_durable)
        })
    }
}
