//! Reading many blobs from a remote store at once: their places are grouped by pack, sorted,
//! and coalesced into ranges (neighbours closer than [`GAP`] are read as one, since a request
//! costs more than the bytes between them; a restore into a new directory fetches whole
//! packs, [`WHOLE_PACKS`]), which are fetched in parallel, [`PARALLEL`] at a
//! time, into the pack cache. Blob reads that follow ([`Store::read_blob`]) are then served
//! from disk. A store of one machine reads its packs directly and fetches nothing.
//!
//! Also the walk that finds every blob of a directory snapshot, one tree level at a time, each
//! level fetched at once, so a restore or copy of a tree of depth d costs about d rounds of
//! parallel requests instead of one request per directory.
//!
//! And the read a `check --read-data` makes ([`Store::read_packs`]): each pack read whole,
//! once (from the pack cache when it holds the whole pack, else one request), its header and
//! every blob checked from that one read, [`PARALLEL`] packs at a time.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Store;
use super::catalog::{BlobLocation, BlobLookups};
use crate::error::Result;
use crate::id::ObjectId;
use crate::tree::parts::Layout;
use crate::tree::{DirRoot, NodeKind};

/// Two blobs of one pack less than this far apart are fetched in one request.
pub const GAP: u64 = 256 * 1024;
/// The "gap" of a restore into a new directory, which reads everything the snapshot holds:
/// each pack it needs anything from is fetched whole, in one request, the first time any of
/// its blobs is asked for, so the deeper tree levels and the content find it cached.
pub const WHOLE_PACKS: u64 = u64::MAX;
/// A coalesced range grows to at most this many bytes.
const MAX_RANGE: u64 = 32 * 1024 * 1024;
/// Requests in flight at once.
const PARALLEL: usize = 8;

/// One pack to read whole for a check: its key, its size as the index has it, and the blobs
/// the index places in it.
pub type PackToRead = (String, Option<u64>, Vec<(ObjectId, BlobLocation)>);

/// What reading one pack whole found.
#[derive(Debug)]
pub struct PackRead {
    /// The pack.
    pub key: String,
    /// Its size as read.
    pub size: u64,
    /// What its header lists, or why the header does not read.
    pub header: std::result::Result<Vec<crate::pack::PackEntry>, String>,
    /// Blobs read from it whose hash checked.
    pub read: Vec<ObjectId>,
    /// Blobs that did not read, each with why.
    pub failed: Vec<(ObjectId, crate::error::Error)>,
}

impl PackRead {
    fn sound(&self) -> bool {
        self.header.is_ok() && self.failed.is_empty()
    }
}

/// One request: a range of one pack.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Span {
    key: String,
    start: u64,
    end: u64,
}

/// Coalesces blob places into requests: grouped by pack, sorted, neighbours merged.
fn coalesce(mut places: Vec<BlobLocation>, gap: u64) -> Vec<Span> {
    places.sort_by(|a, b| (a.pack_key.as_str(), a.offset).cmp(&(b.pack_key.as_str(), b.offset)));
    let mut out: Vec<Span> = Vec::new();
    for p in places {
        let (start, end) = (p.offset, p.offset + p.length);
        if let Some(last) = out.last_mut()
            && last.key == p.pack_key
            && start <= last.end + gap
            && end.max(last.end) - last.start <= MAX_RANGE
        {
            last.end = last.end.max(end);
            continue;
        }
        out.push(Span { key: p.pack_key, start, end });
    }
    out
}

impl Store {
    /// Brings the stored bytes of `ids` into the pack cache (see the module documentation),
    /// as many as fit in half the cache: the rest is read blob by blob when asked for. Ids the
    /// index does not hold are left to the read that needs them to report.
    pub fn prefetch(&self, ids: &[ObjectId], gap: u64) -> Result<()> {
        let Some(cache) = self.pack_cache.as_ref() else { return Ok(()) };
        let mut places = Vec::new();
        let mut budget = cache.max_bytes() / 2;
        // In held read transactions: a lookup in a transaction of its own cost two `fcntl`
        // calls and a stat, 11,000 calls for a restore of 5,000 files.
        let lookups = BlobLookups::new(&self.catalog);
        for id in ids {
            let Some(loc) = lookups.location(id)? else { continue };
            if loc.length > budget {
                break;
            }
            if cache.covers(&loc.pack_key, loc.offset, loc.length)? {
                continue;
            }
            budget -= loc.length;
            places.push(loc);
        }
        let spans = if gap == WHOLE_PACKS { self.whole_packs(places)? } else { coalesce(places, gap) };
        let next = AtomicUsize::new(0);
        let failure: Mutex<Option<crate::error::Error>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..PARALLEL.min(spans.len()) {
                scope.spawn(|| {
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(span) = spans.get(at) else { break };
                        let got = self
                            .backend
                            .get_range(&span.key, span.start, span.end - span.start)
                            .and_then(|bytes| cache.insert(&span.key, span.start, &bytes));
                        if let Err(e) = got {
                            failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                            // The others stop too: the command fails with the first error.
                            next.store(spans.len(), Ordering::Relaxed);
                            break;
                        }
                    }
                });
            }
        });
        match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Reads each of `packs` whole, once, and checks its header and every blob the index
    /// places in it from that one read, [`PARALLEL`] packs at a time. A remote store's pack
    /// comes from the pack cache when one cached range holds all of it, else from one
    /// request, and is kept in the cache (when it takes at most half of it) for the reads
    /// that follow; a cached pack that fails a check is dropped and fetched again, so a
    /// damaged cache file is never taken for a damaged pack. Fails with the first request
    /// that fails.
    pub fn read_packs(&self, packs: &[PackToRead]) -> Result<Vec<PackRead>> {
        let next = AtomicUsize::new(0);
        let found: Mutex<Vec<PackRead>> = Mutex::new(Vec::with_capacity(packs.len()));
        let failure: Mutex<Option<crate::error::Error>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..PARALLEL.min(packs.len()) {
                scope.spawn(|| {
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(pack) = packs.get(at) else { break };
                        match self.read_pack(pack) {
                            Ok(read) => found.lock().unwrap_or_else(|p| p.into_inner()).push(read),
                            Err(e) => {
                                failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                                next.store(packs.len(), Ordering::Relaxed);
                                break;
                            }
                        }
                    }
                });
            }
        });
        if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }

    /// [`Store::read_packs`] for one pack.
    fn read_pack(&self, (key, size, blobs): &PackToRead) -> Result<PackRead> {
        if let (Some(cache), Some(size)) = (&self.pack_cache, size)
            && let Some(bytes) = cache.read_whole(key, *size)?
        {
            let read = self.check_pack_bytes(key, &bytes, blobs);
            if read.sound() {
                return Ok(read);
            }
            // The cached copy may be what is damaged: the bucket decides.
            cache.drop_covering(key, 0, *size)?;
        }
        let bytes = self.backend.get(key)?;
        let read = self.check_pack_bytes(key, &bytes, blobs);
        if let Some(cache) = &self.pack_cache
            && read.sound()
            && bytes.len() as u64 <= cache.max_bytes() / 2
        {
            cache.insert(key, 0, &bytes)?;
        }
        Ok(read)
    }

    /// Checks pack `key`'s header and each of `blobs` against `bytes`, the whole pack.
    fn check_pack_bytes(&self, key: &str, bytes: &[u8], blobs: &[(ObjectId, BlobLocation)]) -> PackRead {
        let header = crate::pack::verify_header(key, bytes, self.sealing());
        let mut read = Vec::with_capacity(blobs.len());
        let mut failed = Vec::new();
        // In pack order, so the members of a shared frame follow each other and each frame is
        // decoded once.
        let mut blobs: Vec<&(ObjectId, BlobLocation)> = blobs.iter().collect();
        blobs.sort_by_key(|(_, loc)| loc.offset);
        for (id, loc) in blobs {
            match self.blob_in(id, loc, bytes) {
                Ok(_) => read.push(*id),
                Err(e) => failed.push((*id, e)),
            }
        }
        PackRead { key: key.to_owned(), size: bytes.len() as u64, header, read, failed }
    }

    /// Blob `id`, placed at `loc`, read from `pack`, the whole of its pack, and hash-checked.
    fn blob_in(&self, id: &ObjectId, loc: &BlobLocation, pack: &[u8]) -> Result<Vec<u8>> {
        let stored = usize::try_from(loc.offset)
            .ok()
            .zip(usize::try_from(loc.offset + loc.length).ok())
            .and_then(|(start, end)| pack.get(start..end))
            .ok_or_else(|| {
                crate::error::Error::corrupt(format!(
                    "pack {} is shorter than the index says: it cannot hold object {id}",
                    loc.pack_key
                ))
            })?;
        if let Some(within) = loc.within {
            let plain = self.frames.get_or_decode(&loc.pack_key, loc.offset, || Ok(stored.to_vec()))?;
            return crate::frame::member(id, &plain, within, loc.raw_length);
        }
        let stored = crate::pack::unseal(self.sealing(), id, stored.to_vec())?;
        crate::pack::decode(id, &stored, loc.compressed, loc.raw_length)
    }

    /// One request per pack that holds any of `places`: the whole pack.
    fn whole_packs(&self, places: Vec<BlobLocation>) -> Result<Vec<Span>> {
        let keys: std::collections::BTreeSet<String> = places.into_iter().map(|p| p.pack_key).collect();
        let mut out = Vec::new();
        for key in keys {
            if let Some(size) = self.catalog.pack_size(&key)? {
                out.push(Span { key, start: 0, end: size });
            }
        }
        Ok(out)
    }

    /// Every blob a directory snapshot whose root document is `root` refers to (its trees and
    /// its files' content), walked one tree level at a time with each level prefetched at
    /// once. Trees come first in the list, then content, in tree order.
    pub fn dir_blobs(&self, root: &ObjectId, gap: u64) -> Result<Vec<ObjectId>> {
        let mut seen = HashSet::new();
        let mut trees = vec![*root];
        let mut content = Vec::new();
        let lookups = BlobLookups::new(&self.catalog);
        self.prefetch(&trees, gap)?;
        let doc: DirRoot = crate::tree::decode(root, &self.read_blob_held(&lookups, root)?)?;
        seen.insert(*root);
        let mut level = Vec::new();
        if let NodeKind::Dir { tree } = doc.top.kind {
            level.push(tree);
        }
        while !level.is_empty() {
            level.retain(|id| seen.insert(*id));
            self.prefetch(&level, gap)?;
            let mut below = Vec::new();
            for id in &level {
                // A parted tree's parts are fetched with the level below, as trees of their own.
                let tree = match crate::tree::parts::layout(id, &self.read_blob_held(&lookups, id)?)? {
                    Layout::Whole(tree) => tree,
                    Layout::Parted(parts) => {
                        below.extend(parts.into_iter().map(|p| p.id));
                        continue;
                    }
                };
                for node in tree.nodes {
                    match node.kind {
                        NodeKind::Dir { tree } => below.push(tree),
                        NodeKind::File { content: blobs, .. } => {
                            content.extend(blobs.into_iter().filter(|b| seen.insert(*b)))
                        }
                        NodeKind::Symlink { .. } => {}
                    }
                }
            }
            trees.append(&mut level);
            level = below;
        }
        trees.append(&mut content);
        Ok(trees)
    }

    /// Fetches what a restore of the directory snapshot `root` reads, when the store is
    /// remote: its trees, then as much of its content as the pack cache holds.
    pub fn prefetch_dir(&self, root: &ObjectId) -> Result<()> {
        if self.pack_cache.is_none() {
            return Ok(());
        }
        let blobs = self.dir_blobs(root, WHOLE_PACKS)?;
        self.prefetch(&blobs, WHOLE_PACKS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::BlobKind;

    fn at(key: &str, offset: u64, length: u64) -> BlobLocation {
        BlobLocation {
            pack_key: key.to_owned(),
            kind: BlobKind::Data,
            offset,
            length,
            raw_length: length as u32,
            compressed: false,
            within: None,
        }
    }

    #[test]
    fn neighbours_in_one_pack_are_one_request_and_far_ones_two() {
        let spans = coalesce(
            vec![
                at("packs/b", 0, 10),
                at("packs/a", 5000, 100),
                at("packs/a", 0, 100),
                at("packs/a", 10_000_000, 5),
            ],
            GAP,
        );
        let as_tuples: Vec<(&str, u64, u64)> =
            spans.iter().map(|s| (s.key.as_str(), s.start, s.end)).collect();
        assert_eq!(
            as_tuples,
            [("packs/a", 0, 5100), ("packs/a", 10_000_000, 10_000_005), ("packs/b", 0, 10)]
        );
    }
}
