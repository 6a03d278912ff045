//! Blob lookups for one writer's many threads, each made inside a read transaction that is
//! held across many lookups.
//!
//! A lookup on its own begins and ends a read transaction, and in WAL mode each of those takes
//! and drops a lock on the shared-memory index with `fcntl`: two system calls, and often a
//! page re-read, for every blob of a first save. Held transactions see the index as it stood
//! when they began, so a blob indexed since then reads as absent: the caller must know what it
//! added itself (the writer does), and anything else is only stored twice, which the index
//! tolerates.
//!
//! A reader in a transaction keeps the catalog from checkpointing the WAL past what it sees,
//! and readers that always overlap would let the WAL grow without end (it reached 3 GB over a
//! million files). So the writer [pauses](BlobLookups::pause) them before each of its commits:
//! every reader leaves its transaction (at once if idle, else after its lookup) and begins a
//! new one at its next lookup, and the commit's checkpoint finds none in its way.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::Connection;

use super::Catalog;
use super::blobs::{BlobLocation, locate};
use crate::error::Result;
use crate::id::ObjectId;

/// Lookups per read transaction, at most.
const RENEW_AFTER: u32 = 4096;

/// A reader of the pool and its transaction: the pause it began after and the lookups made
/// in it, or none when it is in no transaction.
struct Held {
    conn: Connection,
    txn: Option<(u64, u32)>,
}

/// Readers taken from the catalog's pool and held in read transactions.
pub struct BlobLookups<'c> {
    catalog: &'c Catalog,
    idle: Mutex<Vec<Held>>,
    /// Bumped by each pause: a transaction begun before it is ended.
    pauses: AtomicU64,
}

impl<'c> BlobLookups<'c> {
    /// Lookups in `catalog`, holding no reader yet.
    pub fn new(catalog: &'c Catalog) -> Self {
        Self { catalog, idle: Mutex::new(Vec::new()), pauses: AtomicU64::new(0) }
    }

    /// Where blob `id` is stored, as the index stood when this reader's transaction began.
    pub fn location(&self, id: &ObjectId) -> Result<Option<BlobLocation>> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut held = match idle {
            Some(held) => held,
            None => Held { conn: self.catalog.take_reader()?, txn: None },
        };
        let now = self.pauses.load(Ordering::Acquire);
        let used = match held.txn {
            Some((began, used)) if began == now && used < RENEW_AFTER => used,
            Some(_) => {
                held.conn.execute_batch("COMMIT; BEGIN")?;
                0
            }
            None => {
                held.conn.execute_batch("BEGIN")?;
                0
            }
        };
        held.txn = Some((now, used + 1));
        let found = locate(&held.conn, id);
        // Paused meanwhile: out of the transaction before it goes back.
        if self.pauses.load(Ordering::Acquire) != now && end(&mut held).is_err() {
            return found;
        }
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(held);
        found
    }

    /// Ends every reader's transaction: the idle ones now, the busy ones after their lookup.
    pub fn pause(&self) {
        self.pauses.fetch_add(1, Ordering::AcqRel);
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        // One that cannot leave its transaction is closed rather than kept.
        idle.retain_mut(|held| end(held).is_ok());
    }
}

/// Ends `held`'s transaction, if it is in one.
fn end(held: &mut Held) -> rusqlite::Result<()> {
    if held.txn.take().is_some() {
        held.conn.execute_batch("COMMIT")?;
    }
    Ok(())
}

impl Drop for BlobLookups<'_> {
    fn drop(&mut self) {
        // The readers go back to the catalog's pool out of their transactions.
        for mut held in self.idle.get_mut().unwrap_or_else(|p| p.into_inner()).drain(..) {
            if end(&mut held).is_ok() {
                self.catalog.give_back(held.conn);
            }
        }
    }
}
