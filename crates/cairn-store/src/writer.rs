//! The blob writer: hash → dedup → compress → pack, shared by the threads of one capture.
//!
//! A blob the store already holds costs one index lookup, made in a read transaction the
//! writer holds across many lookups (`catalog/lookups.rs`). New blobs are compressed on the
//! calling thread (so compression runs in parallel) and appended to the current pack, which is
//! published (write, flush, rename) once it is large enough: a local store's by a thread of
//! its own (`publisher.rs`), while the capture goes on. A local store's packs are indexed
//! in batches (at the writer's finish, or every [`INDEX_BATCH`] blobs): blob ids are random, so
//! each commit rewrites most of the index's pages, and a first save of 50,000 files that
//! committed its 10 packs one by one wrote 19.5 MB of WAL for a 3 MB table. Small files are
//! gathered into shared frames first (`frame.rs`), one being filled per thread: a thread takes
//! a directory's files in runs, so a frame holds neighbours, which a restore reads together.
//! The thread that fills a frame compresses it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::Store;
use super::catalog::{BlobLookups, Flush};
use super::frame::{self, FrameBuilder};
use super::pack::{self, BlobKind, PackBuilder, TARGET_PACK_SIZE};
use super::publisher::Publisher;
use crate::error::Result;
use crate::id::ObjectId;

#[derive(Default)]
struct State {
    pack: PackBuilder,
    /// Small blobs waiting to share a frame, by the thread that wrote them (only in a local,
    /// unencrypted store).
    frames: HashMap<std::thread::ThreadId, FrameBuilder>,
    /// Ids added by this writer and not yet indexed, so a blob seen twice is stored once.
    pending: HashSet<ObjectId>,
    /// Ids the index places in a pack that is missing or cut short: stored again, their new
    /// place replaces the old one.
    replacing: HashSet<ObjectId>,
    /// Packs this writer published.
    published: Vec<String>,
    /// Packs this writer filled: the next one is published at [`pack_target`] of this.
    filled: u32,
    /// Published packs of a local store not indexed yet (still pending in the catalog, so a
    /// crash leaves them to the next open's recovery).
    unindexed: Vec<Unindexed>,
    /// The first 8 bytes of every id this writer indexed. The held lookups began before, so
    /// they cannot see these: an id found here is looked up afresh.
    indexed: HashSet<u64>,
    /// Trees written again without a lookup, in a store that vouches for everything: those this
    /// writer read back intact (a large directory's parts that did not change), and those a
    /// stat cache row names ([`BlobWriter::vouch_kept`]).
    vouched_trees: HashSet<ObjectId>,
}

/// A local store's pack waiting to be indexed.
struct Unindexed {
    /// The publisher's number for it (0 if written before it was handed over).
    number: u64,
    /// Its key, size and entries.
    pack: (String, u64, Vec<pack::PackEntry>),
}

/// Which unindexed packs [`BlobWriter::index_published`] indexes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    /// Those the publisher has written so far, waiting for none.
    SoFar,
    /// All of them, once written.
    All,
}

/// A local store's published packs are indexed together once they list this many blobs (about
/// 2 MB of entries held), and at the writer's finish. Batches this size are committed while the
/// walk goes on, so the finish commits only the last one: indexing 50,000 blobs at the finish
/// made a first save slower, not faster.
const INDEX_BATCH: usize = 32 * 1024;

/// The size at which a local store's writer publishes the pack after `filled` others: 2 MiB,
/// then twice the last, up to [`TARGET_PACK_SIZE`]. The publisher writes and flushes a pack
/// while the capture goes on, but a save of less than 16 MiB filled none: all of it was written
/// and flushed after the capture, on one thread. Starting small, most of such a save is on disk
/// before its capture ends (a 3,000-file repository's first save: 118 ms before, 106 ms after);
/// a large save makes two packs more (14 MiB in three packs where one held 16).
fn pack_target(filled: u32) -> usize {
    (FIRST_PACK_SIZE << filled.min(16)).min(TARGET_PACK_SIZE)
}

/// The size of a local store writer's first pack (see [`pack_target`]).
const FIRST_PACK_SIZE: usize = 2 * 1024 * 1024;

fn short(id: &ObjectId) -> u64 {
    u64::from_le_bytes(id.0[..8].try_into().expect("an id has 32 bytes"))
}

/// Moves the blobs of an indexed pack from pending to indexed.
fn indexed(state: &mut State, entries: &[pack::PackEntry]) {
    for e in entries {
        state.pending.remove(&e.id);
        state.indexed.insert(short(&e.id));
    }
}

/// What the store cannot vouch for, found once per writer: packs whose file is missing or
/// not the size indexed, and blobs a check found damaged. Usually both are empty, and then
/// dedup and the stat cache cost no extra lookup.
#[derive(Default)]
struct Suspect {
    packs: HashSet<String>,
    blobs: HashSet<ObjectId>,
}

impl Suspect {
    fn find(store: &Store) -> Result<Self> {
        if store.is_shared() {
            // The open's sync listed every pack and indexed it at its listed size, so asking
            // each pack's size again would cost a request per pack for nothing; what a shared
            // store cannot vouch for is what gc condemned.
            return Ok(Self { packs: store.condemned_packs(), blobs: store.catalog.damaged_blobs()? });
        }
        Ok(Self { packs: store.suspect_packs()?, blobs: store.catalog.damaged_blobs()? })
    }

    fn is_empty(&self) -> bool {
        self.packs.is_empty() && self.blobs.is_empty()
    }
}

/// Writes blobs of one capture into the store.
pub struct BlobWriter<'s> {
    store: &'s Store,
    state: Mutex<State>,
    new_bytes: AtomicU64,
    stored_bytes: AtomicU64,
    /// In dry mode (a diff against the live tree) nothing is written: content is only hashed
    /// and trees are kept here, in memory.
    dry: Option<Mutex<HashMap<ObjectId, Vec<u8>>>>,
    /// Found on first use.
    suspect: std::sync::OnceLock<Suspect>,
    lookups: BlobLookups<'s>,
    /// Whether small blobs share frames: not in an encrypted store, which seals each blob
    /// alone, nor in a shared one, whose packs are read by range from afar.
    framing: bool,
    /// Writes a local store's packs off the capture's threads; started by the first pack.
    publisher: std::sync::OnceLock<Option<Publisher>>,
}

impl<'s> BlobWriter<'s> {
    /// A writer into `store`, with nothing written yet.
    pub fn new(store: &'s Store) -> Self {
        Self {
            store,
            state: Mutex::new(State::default()),
            new_bytes: AtomicU64::new(0),
            stored_bytes: AtomicU64::new(0),
            dry: None,
            suspect: std::sync::OnceLock::new(),
            lookups: BlobLookups::new(&store.catalog),
            framing: store.sealing().is_none() && !store.is_shared(),
            publisher: std::sync::OnceLock::new(),
        }
    }

    /// A writer that stores nothing: content is hashed, trees are kept in memory.
    pub fn dry(store: &'s Store) -> Self {
        Self { dry: Some(Mutex::new(HashMap::new())), ..Self::new(store) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `data` unless the store holds it already; returns its id.
    pub fn write(&self, kind: BlobKind, data: &[u8]) -> Result<ObjectId> {
        let id = ObjectId::of(data);
        if let Some(memory) = &self.dry {
            if kind == BlobKind::Tree {
                memory.lock().unwrap_or_else(|p| p.into_inner()).insert(id, data.to_vec());
            }
            return Ok(id);
        }
        let known = {
            let state = self.lock();
            state.pending.contains(&id) || state.vouched_trees.contains(&id)
        };
        if known || self.vouched(&id)? {
            return Ok(id);
        }
        if self.framing && kind == BlobKind::Data && data.len() <= frame::FRAMED_UP_TO {
            return self.write_framed(id, data);
        }
        let encoded = pack::seal(self.store.sealing(), pack::encode(id, kind, data)?);
        let full = {
            let mut state = self.lock();
            if !state.pending.insert(id) {
                return Ok(id);
            }
            self.new_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
            self.stored_bytes.fetch_add(encoded.stored.len() as u64, Ordering::Relaxed);
            state.pack.push(encoded);
            self.take_full(&mut state)
        };
        if let Some(full) = full {
            self.publish(full)?;
        }
        Ok(id)
    }

    /// Adds a small blob to the frame being gathered; the call that fills it packs it.
    fn write_framed(&self, id: ObjectId, data: &[u8]) -> Result<ObjectId> {
        let full = {
            let mut state = self.lock();
            if !state.pending.insert(id) {
                return Ok(id);
            }
            self.new_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
            let frame = state.frames.entry(std::thread::current().id()).or_default();
            if !frame.add(id, data) {
                return Ok(id);
            }
            std::mem::take(frame)
        };
        self.pack_frame(full)?;
        Ok(id)
    }

    /// Compresses a frame (on the calling thread) and appends it to the pack.
    fn pack_frame(&self, frame: FrameBuilder) -> Result<()> {
        let closed = frame.close()?;
        self.stored_bytes.fetch_add(closed.stored_len() as u64, Ordering::Relaxed);
        let full = {
            let mut state = self.lock();
            closed.push_into(&mut state.pack);
            self.take_full(&mut state)
        };
        match full {
            Some(full) => self.publish(full),
            None => Ok(()),
        }
    }

    fn suspect(&self) -> Result<&Suspect> {
        if let Some(s) = self.suspect.get() {
            return Ok(s);
        }
        let found = if self.dry.is_some() { Suspect::default() } else { Suspect::find(self.store)? };
        Ok(self.suspect.get_or_init(|| found))
    }

    /// True when the index holds `id` and the store vouches for it: dedup trusts only that. A
    /// blob in a pack that is missing or cut short, or one a check found damaged, is stored
    /// again, and its new place replaces the old one.
    fn vouched(&self, id: &ObjectId) -> Result<bool> {
        let fresh = self.lock().indexed.contains(&short(id));
        let found = if fresh { self.store.catalog.blob_location(id)? } else { self.lookups.location(id)? };
        let Some(loc) = found else {
            return Ok(false);
        };
        let suspect = self.suspect()?;
        if suspect.packs.contains(&loc.pack_key) || suspect.blobs.contains(id) {
            self.lock().replacing.insert(*id);
            return Ok(false);
        }
        Ok(true)
    }

    /// True when the store holds `id` and vouches for it, or this writer has it pending (a
    /// copy sends only what its destination lacks).
    pub fn holds(&self, id: &ObjectId) -> Result<bool> {
        Ok(self.lock().pending.contains(id) || self.vouched(id)?)
    }

    /// True when the store vouches for every blob of `content` (a stat cache hit reuses it).
    pub fn vouches_all(&self, content: &[ObjectId]) -> Result<bool> {
        if self.suspect()?.is_empty() {
            return Ok(true);
        }
        for id in content {
            if !self.vouched(id)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Takes tree `id`, which a stat cache row names, as stored: written again, it costs no
    /// lookup. gc keeps every tree a local store's stat cache names (another machine's gc does
    /// not know this one's); a store that knows of a missing or damaged pack or blob looks
    /// every tree up.
    pub fn vouch_kept(&self, id: ObjectId) -> Result<()> {
        if self.dry.is_none() && !self.store.is_shared() && self.vouches_everything()? {
            self.lock().vouched_trees.insert(id);
        }
        Ok(())
    }

    /// The store it writes to.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// True when the store knows of no missing or damaged blob, so anything its index holds
    /// may be referred to again unchecked (a subtree taken whole from the last capture).
    pub fn vouches_everything(&self) -> Result<bool> {
        Ok(self.suspect()?.is_empty())
    }

    /// Compresses the frames still being gathered into the pack, so [`BlobWriter::totals`] is
    /// final before [`BlobWriter::finish`] writes it.
    pub fn close_frames(&self) -> Result<()> {
        let frames = std::mem::take(&mut self.lock().frames);
        for frame in frames.into_values().filter(|f| !f.is_empty()) {
            self.pack_frame(frame)?;
        }
        Ok(())
    }

    /// Publishes whatever is still buffered. Call before committing the record that refers to it.
    pub fn finish(&self) -> Result<()> {
        self.close_frames()?;
        let rest = std::mem::take(&mut self.lock().pack);
        if !rest.is_empty() {
            // The only pack of a writer that published none before is written here: nothing
            // is left to overlap its flush with, and starting the publisher for it cost a
            // thread's start and two wake-ups.
            let threaded = self.publisher.get().is_some();
            self.publish_by(rest, threaded)?;
        }
        // What is on disk is indexed while the publisher writes the last pack.
        self.index_published(Written::SoFar)?;
        self.index_published(Written::All)?;
        // Out of the way of the record's commit too.
        self.lookups.pause();
        Ok(())
    }

    /// Marks the packs this writer published as free for gc at once, for a capture that failed
    /// (a full disk): no snapshot of it will ever refer to them, and gc, which still keeps every
    /// blob another snapshot refers to, need not wait for the grace period to free the space.
    pub fn abandon(&self) {
        // Indexed first, so they are ready packs gc may free, as a published pack always was.
        let _ = self.index_published(Written::All);
        let keys = std::mem::take(&mut self.lock().published);
        // Best effort: on a full disk this catalog write may fail too; the grace period then
        // frees them later, as before.
        let _ = self.store.catalog.abandon_packs(&keys);
    }

    /// Plain and stored bytes this writer added.
    pub fn totals(&self) -> (u64, u64) {
        (self.new_bytes.load(Ordering::Relaxed), self.stored_bytes.load(Ordering::Relaxed))
    }

    /// The pack being filled, with an empty one in its place, once it holds its target.
    fn take_full(&self, state: &mut State) -> Option<PackBuilder> {
        let target = if self.store.is_shared() { TARGET_PACK_SIZE } else { pack_target(state.filled) };
        if state.pack.len() < target {
            return None;
        }
        state.filled += 1;
        Some(std::mem::replace(&mut state.pack, self.next_pack()))
    }

    /// An empty pack to fill, in the buffer of a pack written before when there is one.
    fn next_pack(&self) -> PackBuilder {
        match self.publisher.get() {
            Some(Some(publisher)) => publisher.spare().map(PackBuilder::reusing).unwrap_or_default(),
            _ => PackBuilder::default(),
        }
    }

    /// The thread that writes a local store's packs, started on first use; `None` where the
    /// thread could not be started, and the caller writes its packs itself.
    fn publisher(&self) -> Option<&Publisher> {
        self.publisher.get_or_init(|| Publisher::start(self.store.backend_shared())).as_ref()
    }

    fn publish(&self, builder: PackBuilder) -> Result<()> {
        self.publish_by(builder, true)
    }

    /// Publishes a pack: a local store's by the publisher when `threaded` (started on
    /// first use), else on this thread.
    fn publish_by(&self, mut builder: PackBuilder, threaded: bool) -> Result<()> {
        if self.store.is_shared() {
            // A pack is named by its header, so blobs stored anew exactly as a condemned pack
            // held them would name that very pack, and the write would find it there; gc could
            // then delete it under the save. A few random bytes make every pack's name its own.
            let salt = uuid::Uuid::now_v7().into_bytes();
            let salt = pack::encode(ObjectId::of(&salt), BlobKind::Data, &salt)?;
            builder.push(pack::seal(self.store.sealing(), salt));
        }
        let (key, bytes, entries) = builder.finish(self.store.sealing())?;
        // Pending first: if we die after the rename, the next open indexes the pack. In a
        // store of this machine's own, both commits are flushed with the snapshot's (or gc's)
        // that relies on them; a power cut before it leaves a pack no snapshot refers to,
        // which `cairn gc` deletes.
        let flush = if self.store.is_shared() { Flush::Now } else { Flush::WithNext };
        self.store.catalog.begin_pack(&key, flush)?;
        let replaces = {
            let state = self.lock();
            entries.iter().any(|e| state.replacing.contains(&e.id))
        };
        let size = bytes.len() as u64;
        if !self.store.is_shared() && !replaces {
            // Written by the publisher while the capture goes on (or here, if it could not
            // start), then indexed with others: see `index_published`.
            let number = match threaded.then(|| self.publisher()).flatten() {
                Some(publisher) => publisher.send(key.clone(), bytes)?,
                None => {
                    self.store.backend().put_if_absent(&key, &bytes)?;
                    super::fault::kill_at(super::fault::FaultPoint::PackPublished);
                    0
                }
            };
            let batch = {
                let mut state = self.lock();
                state.published.push(key.clone());
                state.unindexed.push(Unindexed { number, pack: (key, size, entries) });
                let listed: usize = state.unindexed.iter().map(|u| u.pack.2.len()).sum();
                listed >= INDEX_BATCH
            };
            return if batch { self.index_published(Written::SoFar) } else { Ok(()) };
        }
        self.store.backend().put_if_absent(&key, &bytes)?;
        super::fault::kill_at(super::fault::FaultPoint::PackPublished);
        // A remote store's pack is kept in this machine's pack cache too, so a restore here
        // reads it from disk rather than fetch what this command just sent.
        self.store.cache_uploaded(&key, &bytes);
        // The held lookups leave their transactions, so this commit's checkpoint can copy the
        // whole WAL back.
        self.lookups.pause();
        if replaces {
            self.store.catalog.reassign_blobs(&key, size, &entries)?;
            self.store.catalog.clear_damaged(&entries)?;
        } else {
            self.store.catalog.commit_pack(&key, size, &entries, flush)?;
        }
        let mut state = self.lock();
        state.published.push(key);
        indexed(&mut state, &entries);
        Ok(())
    }

    /// Indexes, in one transaction, the published packs not indexed yet: those on disk so far,
    /// or all of them once written. A pack is indexed only once it is on disk: another target's
    /// save may dedup against the index at once, and its snapshot must not refer to a pack that
    /// a crash of this process would leave unwritten.
    fn index_published(&self, which: Written) -> Result<()> {
        let written = match self.publisher.get() {
            Some(Some(publisher)) if which == Written::All => {
                publisher.wait()?;
                u64::MAX
            }
            Some(Some(publisher)) => publisher.written()?,
            _ => u64::MAX,
        };
        let packs: Vec<_> = {
            let mut state = self.lock();
            let (ready, later) =
                std::mem::take(&mut state.unindexed).into_iter().partition(|u| u.number <= written);
            state.unindexed = later;
            ready.into_iter().map(|u: Unindexed| u.pack).collect()
        };
        if packs.is_empty() {
            return Ok(());
        }
        self.lookups.pause();
        self.store.catalog.commit_packs(&packs, Flush::WithNext)?;
        let mut state = self.lock();
        for (_, _, entries) in &packs {
            indexed(&mut state, entries);
        }
        Ok(())
    }

    /// Takes back every pack this writer published: their index entries, then their files.
    /// Only safe while the caller holds the store lock alone, so that no other writer can
    /// have deduplicated against the blobs they hold.
    pub fn discard(&self) -> Result<()> {
        let published = {
            let mut state = self.lock();
            state.pack = PackBuilder::default();
            state.frames.clear();
            state.unindexed.clear();
            state.pending.clear();
            std::mem::take(&mut state.published)
        };
        if let Some(Some(publisher)) = self.publisher.get() {
            // Whatever it failed to write is not there to delete.
            let _ = publisher.wait();
        }
        for key in published {
            self.store.catalog.forget_pack(&key)?;
            self.store.backend().delete(&key)?;
        }
        Ok(())
    }
}

impl BlobWriter<'_> {
    /// Reads an object back: from memory in dry mode, else from the store.
    pub fn read_object(&self, id: &ObjectId) -> Result<Vec<u8>> {
        if let Some(memory) = &self.dry
            && let Some(bytes) = memory.lock().unwrap_or_else(|p| p.into_inner()).get(id)
        {
            return Ok(bytes.clone());
        }
        self.store.read_blob(id)
    }
}

impl BlobWriter<'_> {
    /// Keeps `tree`, of id `id`, decoded for this command's diffs, when it is large (a dry
    /// writer's trees are not in the store, so they are not kept for it).
    pub fn remember_tree(&self, id: ObjectId, tree: crate::tree::Tree) {
        if self.dry.is_none() {
            self.store.trees.keep(id, Arc::new(tree));
        }
    }
}

impl BlobWriter<'_> {
    /// Reads a tree back, with its parts: from memory in dry mode, else from the store.
    pub fn read_tree(&self, id: &ObjectId) -> Result<crate::tree::Tree> {
        use crate::tree::parts::{self, Layout};
        let parts = match parts::layout(id, &self.read_object(id)?)? {
            Layout::Whole(tree) => return Ok(tree),
            Layout::Parted(parts) => parts,
        };
        let tree = parts::read_parts(id, &parts, |part| self.read_object(part))?;
        // Each part read passed its hash check; with nothing suspect, it is as good as vouched.
        if self.dry.is_none() && self.vouches_everything()? {
            self.lock().vouched_trees.extend(parts.iter().map(|p| p.id));
        }
        Ok(tree)
    }
}

impl BlobWriter<'_> {
    /// Reads the parts numbered `which` of tree `id`, whose index is `parts`, each checked
    /// against the index: a capture by names reads only the parts of a large directory that a
    /// change touched. While a restore keeps trees, each part is kept too.
    pub fn read_tree_parts(
        &self,
        id: &ObjectId,
        parts: &[crate::tree::parts::PartRef],
        which: &[usize],
    ) -> Result<Vec<Vec<crate::tree::Node>>> {
        use rayon::prelude::*;
        let read = which
            .par_iter()
            .map(|&i| crate::tree::parts::read_part(id, &parts[i], parts.get(i + 1), |p| self.read_object(p)))
            .collect::<Result<Vec<_>>>()?;
        if self.dry.is_none() && self.vouches_everything()? {
            self.lock().vouched_trees.extend(which.iter().map(|&i| parts[i].id));
        }
        // An in-place restore's plan diffs the parts its capture read next.
        for (&i, nodes) in which.iter().zip(&read) {
            if self.store.trees.would_keep(nodes.len()) {
                self.remember_tree(parts[i].id, crate::tree::Tree { nodes: nodes.clone() });
            }
        }
        Ok(read)
    }
}

use crate::tree::diff::Shape;

impl crate::tree::diff::TreeSource for BlobWriter<'_> {
    fn tree(&self, id: &ObjectId) -> Result<Arc<crate::tree::Tree>> {
        match &self.dry {
            Some(_) => Ok(Arc::new(self.read_tree(id)?)),
            None => self.store.tree(id),
        }
    }

    fn shape(&self, id: &ObjectId) -> Result<Shape> {
        match &self.dry {
            Some(_) => shape_of(id, &self.read_object(id)?, |_| {}),
            None => self.store.shape(id),
        }
    }

    fn alike(&self, old: &ObjectId, new: &ObjectId) -> bool {
        self.store.alike(old, new)
    }
}

impl crate::tree::diff::TreeSource for Store {
    fn tree(&self, id: &ObjectId) -> Result<Arc<crate::tree::Tree>> {
        if let Some(tree) = self.trees.get(id) {
            return Ok(tree);
        }
        let tree = Arc::new(crate::tree::read_tree(self, id)?);
        self.trees.keep(*id, Arc::clone(&tree));
        Ok(tree)
    }

    fn shape(&self, id: &ObjectId) -> Result<Shape> {
        // A tree kept decoded is compared as it is; one read from the store, part by part.
        match self.trees.get(id) {
            Some(tree) => Ok(Shape::Whole(tree)),
            None => shape_of(id, &self.read_blob(id)?, |tree| self.trees.keep(*id, tree)),
        }
    }

    fn alike(&self, old: &ObjectId, new: &ObjectId) -> bool {
        // A catalog that cannot say only costs the reads.
        self.catalog.trees_alike(old, new).unwrap_or(false)
    }
}

/// The shape of tree `id`, stored as `bytes`; a whole one is also given to `keep`.
fn shape_of(id: &ObjectId, bytes: &[u8], keep: impl FnOnce(Arc<crate::tree::Tree>)) -> Result<Shape> {
    use crate::tree::parts::{self, Layout};
    Ok(match parts::layout(id, bytes)? {
        Layout::Whole(tree) => {
            let tree = Arc::new(tree);
            keep(Arc::clone(&tree));
            Shape::Whole(tree)
        }
        Layout::Parted(parts) => Shape::Parted(parts),
    })
}

#[cfg(test)]
mod tests;
