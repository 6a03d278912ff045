//! The blob writer: hash → dedup → compress → pack, shared by the threads of one capture.
//!
//! A blob the store already holds costs one index lookup. New blobs are compressed on the
//! calling thread (so compression runs in parallel) and appended to the current pack, which is
//! published (write, flush, rename) and then indexed once it is large enough.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Store;
use super::pack::{self, BlobKind, PackBuilder, TARGET_PACK_SIZE};
use crate::error::Result;
use crate::id::ObjectId;

#[derive(Default)]
struct State {
    pack: PackBuilder,
    /// Ids added by this writer and not yet indexed, so a blob seen twice is stored once.
    pending: HashSet<ObjectId>,
    /// The packs this writer published, for [`BlobWriter::discard`].
    published: Vec<String>,
}

/// Writes blobs of one capture into the store.
pub(crate) struct BlobWriter<'s> {
    store: &'s Store,
    state: Mutex<State>,
    new_bytes: AtomicU64,
    stored_bytes: AtomicU64,
    /// In dry mode (a diff against the live tree) nothing is written: content is only hashed
    /// and trees are kept here, in memory.
    dry: Option<Mutex<HashMap<ObjectId, Vec<u8>>>>,
}

impl<'s> BlobWriter<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self {
            store,
            state: Mutex::new(State::default()),
            new_bytes: AtomicU64::new(0),
            stored_bytes: AtomicU64::new(0),
            dry: None,
        }
    }

    /// A writer that stores nothing: content is hashed, trees are kept in memory.
    pub(crate) fn dry(store: &'s Store) -> Self {
        Self { dry: Some(Mutex::new(HashMap::new())), ..Self::new(store) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `data` unless the store holds it already; returns its id.
    pub(crate) fn write(&self, kind: BlobKind, data: &[u8]) -> Result<ObjectId> {
        let id = ObjectId::of(data);
        if let Some(memory) = &self.dry {
            if kind == BlobKind::Tree {
                memory.lock().unwrap_or_else(|p| p.into_inner()).insert(id, data.to_vec());
            }
            return Ok(id);
        }
        if self.lock().pending.contains(&id) || self.store.catalog.has_blob(&id)? {
            return Ok(id);
        }
        let encoded = pack::encode(id, kind, data)?;
        let full = {
            let mut state = self.lock();
            if !state.pending.insert(id) {
                return Ok(id);
            }
            self.new_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
            self.stored_bytes.fetch_add(encoded.stored.len() as u64, Ordering::Relaxed);
            state.pack.push(encoded);
            if state.pack.len() >= TARGET_PACK_SIZE { Some(std::mem::take(&mut state.pack)) } else { None }
        };
        if let Some(full) = full {
            self.publish(full)?;
        }
        Ok(id)
    }

    /// Publishes whatever is still buffered. Call before committing the record that refers to it.
    pub(crate) fn finish(&self) -> Result<()> {
        let rest = std::mem::take(&mut self.lock().pack);
        if !rest.is_empty() {
            self.publish(rest)?;
        }
        Ok(())
    }

    /// Plain and stored bytes this writer added.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (self.new_bytes.load(Ordering::Relaxed), self.stored_bytes.load(Ordering::Relaxed))
    }

    fn publish(&self, builder: PackBuilder) -> Result<()> {
        let (key, bytes, entries) = builder.finish()?;
        // Pending first: if we die after the rename, the next open indexes the pack.
        self.store.catalog.begin_pack(&key)?;
        self.store.backend().put_if_absent(&key, &bytes)?;
        super::fault::kill_at(super::fault::FaultPoint::PackPublished);
        self.store.catalog.commit_pack(&key, bytes.len() as u64, &entries)?;
        let mut state = self.lock();
        for e in &entries {
            state.pending.remove(&e.id);
        }
        state.published.push(key);
        Ok(())
    }

    /// Takes back every pack this writer published: their index entries, then their files.
    /// Only safe while the caller holds the store lock alone, so that no other writer can
    /// have deduplicated against the blobs they hold.
    pub(crate) fn discard(&self) -> Result<()> {
        let published = {
            let mut state = self.lock();
            state.pack = PackBuilder::default();
            state.pending.clear();
            std::mem::take(&mut state.published)
        };
        for key in published {
            self.store.catalog.forget_pack(&key)?;
            self.store.backend().delete(&key)?;
        }
        Ok(())
    }
}

impl BlobWriter<'_> {
    /// Reads an object back: from memory in dry mode, else from the store.
    pub(crate) fn read_object(&self, id: &ObjectId) -> Result<Vec<u8>> {
        if let Some(memory) = &self.dry
            && let Some(bytes) = memory.lock().unwrap_or_else(|p| p.into_inner()).get(id)
        {
            return Ok(bytes.clone());
        }
        self.store.read_blob(id)
    }
}

impl crate::tree::diff::TreeSource for BlobWriter<'_> {
    fn tree(&self, id: &ObjectId) -> Result<crate::tree::Tree> {
        crate::tree::decode(id, &self.read_object(id)?)
    }
}

impl crate::tree::diff::TreeSource for Store {
    fn tree(&self, id: &ObjectId) -> Result<crate::tree::Tree> {
        crate::tree::read_tree(self, id)
    }
}
