//! The `dir` target: any directory tree, `.git` included.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) mod apply;
pub(crate) mod capture;
pub(crate) mod fsops;
pub(crate) mod journal;
pub(crate) mod materialize;
pub(crate) mod restore;
pub(crate) mod secrets;
pub(crate) mod sparse;
pub(crate) mod statcache;
pub(crate) mod statcache_encode;
pub(crate) mod statcache_write;
pub(crate) mod xattrs;

/// Live counts of a running save or restore, for a progress display: the capture and the
/// materializer add to them as they go, and a front end reads them while the work runs
/// (from another thread; the counts only grow).
#[derive(Debug, Default)]
pub struct Progress {
    scanned_files: AtomicU64,
    scanned_bytes: AtomicU64,
    written_files: AtomicU64,
    written_bytes: AtomicU64,
}

impl Progress {
    /// Files looked at by the capture so far (read or vouched for by the stat cache).
    pub fn scanned_files(&self) -> u64 {
        self.scanned_files.load(Ordering::Relaxed)
    }

    /// Bytes of the files the capture has looked at so far.
    pub fn scanned_bytes(&self) -> u64 {
        self.scanned_bytes.load(Ordering::Relaxed)
    }

    /// Files a restore has written so far.
    pub fn written_files(&self) -> u64 {
        self.written_files.load(Ordering::Relaxed)
    }

    /// Bytes a restore has written so far.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn scanned(&self, bytes: u64) {
        self.scanned_files.fetch_add(1, Ordering::Relaxed);
        self.scanned_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn written(&self, bytes: u64) {
        self.written_files.fetch_add(1, Ordering::Relaxed);
        self.written_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}
