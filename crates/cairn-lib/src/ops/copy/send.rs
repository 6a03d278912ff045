//! The data side of a copy: every blob a snapshot refers to that the destination's index
//! lacks is read from the source (a remote source fetches them in coalesced parallel ranges,
//! a batch at a time) and written through the destination's blob writer, which packs,
//! compresses and publishes them as a save does. Blobs are re-read through their hash check,
//! so a damaged source blob stops the copy instead of spreading.
//!
//! A transcript snapshot bound for a remote store is redacted here: its document with every
//! secret-shaped string replaced by a marker becomes the copied snapshot's root.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Repository;
use crate::error::Result;
use crate::id::ObjectId;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;
use crate::targets::TargetKind;

/// Blobs read from a remote source per prefetch round, by stored bytes.
const BATCH_BYTES: u64 = 64 * 1024 * 1024;

/// Live counts of a copy, for a front end to show while it runs.
#[derive(Debug, Default)]
pub struct CopyProgress {
    blobs: AtomicU64,
    bytes: AtomicU64,
}

impl CopyProgress {
    /// Blobs written to the destination so far.
    pub fn blobs_sent(&self) -> u64 {
        self.blobs.load(Ordering::Relaxed)
    }

    /// Plain bytes of those blobs.
    pub fn bytes_sent(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Sends blobs from one store to another through one blob writer.
pub(super) struct Sender<'a> {
    source: &'a Repository,
    writer: BlobWriter<'a>,
    progress: &'a CopyProgress,
    /// Blobs already sent or found present by this copy.
    done: std::sync::Mutex<HashSet<ObjectId>>,
    sent: AtomicU64,
    present: AtomicU64,
}

impl<'a> Sender<'a> {
    pub(super) fn new(source: &'a Repository, destination: &'a Store, progress: &'a CopyProgress) -> Self {
        Self {
            source,
            writer: BlobWriter::new(destination),
            progress,
            done: Default::default(),
            sent: AtomicU64::new(0),
            present: AtomicU64::new(0),
        }
    }

    /// Sends what `snapshot` refers to; returns the snapshot as the destination will record
    /// it (redacted, when `redact` and it is a transcript holding secrets) and the number of
    /// entries redacted.
    pub(super) fn send_snapshot(&self, mut snapshot: Snapshot, redact: bool) -> Result<(Snapshot, u64)> {
        let Some(root) = snapshot.root else { return Ok((snapshot, 0)) };
        let mut redacted = 0;
        if redact && snapshot.kind == TargetKind::Transcript {
            let document = self.source.read_document(&snapshot)?;
            let text = String::from_utf8_lossy(&document);
            let entries = crate::ops::transcript::secrets::secret_entries(&text).len() as u64;
            if entries > 0 {
                let clean = crate::ops::transcript::secrets::redact(&text);
                let id = crate::targets::document::write_document(&self.writer, clean.as_bytes())?;
                snapshot.root = Some(id);
                snapshot.stats.bytes = clean.len() as u64;
                snapshot.details["redacted_entries"] = serde_json::json!(entries);
                self.count_sent(clean.len() as u64);
                return Ok((snapshot, entries));
            }
            redacted = entries;
        }
        let blobs = match snapshot.kind {
            TargetKind::Dir => self.source.dir_blobs(&root, crate::store::fetch::GAP)?,
            _ => {
                let mut live = HashSet::new();
                crate::targets::referenced_objects(self.source, snapshot.kind.as_str(), &root, &mut live)?;
                live.into_iter().collect()
            }
        };
        self.send(&blobs)?;
        Ok((snapshot, redacted))
    }

    /// Writes each of `ids` the destination lacks, reading a remote source a batch at a time.
    fn send(&self, ids: &[ObjectId]) -> Result<()> {
        let mut missing = Vec::new();
        for id in ids {
            if !self.done.lock().unwrap_or_else(|p| p.into_inner()).insert(*id) {
                continue;
            }
            if self.writer.holds(id)? {
                self.present.fetch_add(1, Ordering::Relaxed);
            } else {
                missing.push(*id);
            }
        }
        let mut batch = Vec::new();
        let mut batch_bytes = 0;
        for id in missing {
            let Some(loc) = self.source.catalog().blob_location(&id)? else {
                // Known lost in the source (a repair listed it): nothing to send.
                continue;
            };
            batch_bytes += loc.length;
            batch.push((id, loc.kind));
            if batch_bytes >= BATCH_BYTES {
                self.send_batch(&std::mem::take(&mut batch))?;
                batch_bytes = 0;
            }
        }
        self.send_batch(&batch)
    }

    fn send_batch(&self, batch: &[(ObjectId, BlobKind)]) -> Result<()> {
        let ids: Vec<ObjectId> = batch.iter().map(|(id, _)| *id).collect();
        self.source.prefetch(&ids, crate::store::fetch::GAP)?;
        for (id, kind) in batch {
            let data = self.source.read_blob(id)?;
            self.writer.write(*kind, &data)?;
            self.count_sent(data.len() as u64);
        }
        Ok(())
    }

    fn count_sent(&self, bytes: u64) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.progress.blobs.fetch_add(1, Ordering::Relaxed);
        self.progress.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Publishes what is still buffered; returns blobs sent, blobs present and bytes stored.
    pub(super) fn finish(&self) -> Result<(u64, u64, u64)> {
        if let Err(e) = self.writer.finish() {
            self.writer.abandon();
            return Err(e);
        }
        let (_, stored) = self.writer.totals();
        Ok((self.sent.load(Ordering::Relaxed), self.present.load(Ordering::Relaxed), stored))
    }
}
