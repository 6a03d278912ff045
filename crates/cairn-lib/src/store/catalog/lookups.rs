//! Blob lookups for one writer's many threads, each made inside a read transaction that is
//! held across many lookups.
//!
//! A lookup on its own begins and ends a read transaction, and in WAL mode each of those takes
//! and drops a lock on the shared-memory index with `fcntl`: two system calls, and often a
//! page re-read, for every blob of a first save. Held transactions see the index as it stood
//! when they began, so a blob indexed since then reads as absent: the caller must know what it
//! added itself (the writer does), and anything else is only stored twice, which the index
//! tolerates. Each transaction is renewed after [`RENEW_AFTER`] lookups, so none keeps the WAL
//! from being checkpointed for long.

use std::sync::Mutex;

use rusqlite::Connection;

use super::Catalog;
use super::blobs::{BlobLocation, locate};
use crate::error::Result;
use crate::id::ObjectId;

/// Lookups per read transaction.
const RENEW_AFTER: u32 = 4096;

/// Readers taken from the catalog's pool, in open read transactions, with the lookups each has
/// made in its current one.
pub(crate) struct BlobLookups<'c> {
    catalog: &'c Catalog,
    idle: Mutex<Vec<(Connection, u32)>>,
}

impl<'c> BlobLookups<'c> {
    pub(crate) fn new(catalog: &'c Catalog) -> Self {
        Self { catalog, idle: Mutex::new(Vec::new()) }
    }

    /// Where blob `id` is stored, as the index stood when this thread's transaction began.
    pub(crate) fn location(&self, id: &ObjectId) -> Result<Option<BlobLocation>> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let (reader, used) = match idle {
            Some((reader, used)) if used < RENEW_AFTER => (reader, used),
            Some((reader, _)) => {
                reader.execute_batch("COMMIT; BEGIN")?;
                (reader, 0)
            }
            None => {
                let reader = self.catalog.take_reader()?;
                reader.execute_batch("BEGIN")?;
                (reader, 0)
            }
        };
        let found = locate(&reader, id);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push((reader, used + 1));
        found
    }
}

impl Drop for BlobLookups<'_> {
    fn drop(&mut self) {
        // The readers go back to the catalog's pool, out of their transactions; one that cannot
        // leave its transaction is closed rather than pooled.
        for (reader, _) in self.idle.get_mut().unwrap_or_else(|p| p.into_inner()).drain(..) {
            if reader.execute_batch("COMMIT").is_ok() {
                self.catalog.give_back(reader);
            }
        }
    }
}
