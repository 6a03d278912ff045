//! The per-target stat cache: a file whose (dev, inode, size, mtime, ctime, mode) all match its
//! cached entry is not read again; its cached content ids are reused.
//!
//! It is kept one row per directory (`store/catalog/statcache.rs`): the directory's files and,
//! apart, what the journal needs of the directory itself (its summary, its subdirectories, its
//! subtree's totals). A capture reads the rows of the directories it lists, one at a time, and
//! writes only the rows that changed (`statcache_write.rs`); a header row holds where the last
//! capture stood in the watcher's journal. A save the journal lets skip a subtree never reads
//! the subtree's rows. A large directory's files are kept in parts of a few hundred names
//! ([`PartIndex`]), so a save that looks at a few of its files by name reads and rewrites only
//! their parts.
//!
//! Racy-git rule: an entry whose mtime or ctime falls at or after the moment the scan that
//! wrote its row started (on the kernel's coarse clock, which stamps file times) is not
//! trusted, because the file may have changed again within the same clock tick. Each row keeps
//! its own scan time, as rows written by different saves sit side by side.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::journal::{DirSummary, JournalState, at_or_below};
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::catalog::{Catalog, StoredDirRows};
use crate::tree::Extra;

/// A path relative to the captured root, as raw bytes.
pub(crate) type RelPath = Vec<u8>;

/// What a file looked like when its content was last read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub mode: u32,
}

impl Stamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            mode: meta.mode(),
        }
    }

    /// Whether tree node `node` is the file as this stamp saw it: a node taken from another
    /// tree (a snapshot an in-place restore put back) may hold another mtime.
    pub(crate) fn describes(&self, node: &crate::tree::Node) -> bool {
        matches!(node.kind, crate::tree::NodeKind::File { size, .. } if size == self.size)
            && self.mtime_ns == node.mtime_ns
    }
}

/// One cached file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CacheEntry {
    pub stamp: Stamp,
    /// The content ids; empty for a file left out as a secret (its bytes were never stored).
    pub content: Vec<ObjectId>,
    /// The secret rule the file's content matched when it was read, so an unchanged secret
    /// stays left out without being read again (`targets/dir/secrets.rs`).
    pub secret: Option<String>,
    /// The file's sparse layout and captured extended attributes, as its node holds them.
    pub extra: Extra,
    /// The extended attributes it had that snapshots leave out (listed in `not_covered`).
    pub xattrs_left_out: Vec<String>,
}

/// What a subtree held at the capture that wrote its row, summed over its directories.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Totals {
    pub files: u64,
    pub symlinks: u64,
    /// Directories strictly below its root.
    pub dirs: u64,
    pub bytes: u64,
    /// False when a directory in it cannot be trusted unseen.
    pub settled: bool,
    /// Entries left out (ignored or secret) anywhere in it.
    pub left_out: u64,
}

/// What a directory's row says of the directory itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RowMeta {
    /// Its summary, when a watcher answered the capture that wrote it.
    pub summary: Option<DirSummary>,
    /// The subdirectories it captured, by name.
    pub children: Vec<Vec<u8>>,
    /// Its subtree's totals: none without a summary, or once a restore changed something in
    /// the subtree.
    pub totals: Option<Totals>,
    /// A tree the store holds for it: the one the capture that wrote the row stored, or the
    /// snapshot's a restore made it like. gc keeps it, so a capture that makes the same tree
    /// again takes it as stored without looking it up.
    pub tree: Option<ObjectId>,
    /// Each subdirectory's tree and totals as its own row held them when this row was written,
    /// by name. A capture by names takes an unchanged subdirectory from here rather than from
    /// its row: a change of a few files then reads the rows of the directories it passes
    /// through, not of every one of their subdirectories too. Every capture that writes this
    /// row writes it anew, the same capture that writes its subdirectories' rows; a restore
    /// that rewrites the row empties it, so only rows read again say it again.
    pub below: Vec<(Vec<u8>, ObjectId, Totals)>,
}

impl RowMeta {
    /// What [`RowMeta::below`] says of subdirectory `name`.
    pub(crate) fn subdir(&self, name: &[u8]) -> Option<(ObjectId, Totals)> {
        let i = self.below.binary_search_by(|(n, _, _)| n.as_slice().cmp(name)).ok()?;
        let (_, tree, totals) = &self.below[i];
        Some((*tree, *totals))
    }
}

/// A directory's cached files, sorted by name, and when the scan that wrote them started.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct DirFiles {
    pub scan_started_ns: i64,
    pub entries: Vec<(Vec<u8>, CacheEntry)>,
}

impl DirFiles {
    /// The cached entry of file `name`, when `stamp` matches and the entry is not racy.
    pub(crate) fn lookup(&self, name: &[u8], stamp: &Stamp) -> Option<&CacheEntry> {
        self.find(name, stamp).map(|(_, entry)| entry)
    }

    /// As [`DirFiles::lookup`], with the entry's place in `entries`.
    pub(crate) fn find(&self, name: &[u8], stamp: &Stamp) -> Option<(usize, &CacheEntry)> {
        let i = self.position(name)?;
        let entry = &self.entries[i].1;
        let racy =
            entry.stamp.mtime_ns >= self.scan_started_ns || entry.stamp.ctime_ns >= self.scan_started_ns;
        (entry.stamp == *stamp && !racy).then_some((i, entry))
    }

    /// The entry of `name`, whatever its stamp.
    pub(crate) fn get(&self, name: &[u8]) -> Option<&CacheEntry> {
        Some(&self.entries[self.position(name)?].1)
    }

    fn position(&self, name: &[u8]) -> Option<usize> {
        self.entries.binary_search_by(|(n, _)| n.as_slice().cmp(name)).ok()
    }

    /// The entries the racy-git rule trusts, to carry into a row rewritten with a later scan
    /// time, under which racy ones would wrongly look safe.
    pub(crate) fn into_trusted(self) -> Vec<(Vec<u8>, CacheEntry)> {
        let since = self.scan_started_ns;
        let mut entries = self.entries;
        entries.retain(|(_, e)| e.stamp.mtime_ns < since && e.stamp.ctime_ns < since);
        entries
    }
}

/// Where a large directory's files are: its parts, in name order. Part `i` holds the names
/// from its key up to the next part's key; the first part's key is empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PartIndex {
    pub parts: Vec<PartRef>,
}

/// One part of a directory's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PartRef {
    pub key: Vec<u8>,
    /// How many entries it holds.
    pub entries: u32,
    /// True when the racy-git rule trusts every entry in it.
    pub trusted: bool,
    /// The part of the directory's tree it was written with, when its range of names is that
    /// part's and each file of that part had an entry describing it then; none when it was
    /// written without a tree (by a restore), so its entries are checked one by one.
    pub tree: Option<TreePart>,
}

/// The part of a directory's tree a part of its files was written with, and what it holds: a
/// capture by names that takes the tree's part unread counts its files from here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TreePart {
    pub id: ObjectId,
    pub files: u32,
    pub symlinks: u32,
    pub bytes: u64,
}

impl PartIndex {
    /// The index of the part that holds `name`.
    pub(crate) fn part_of(&self, name: &[u8]) -> usize {
        self.parts.partition_point(|p| p.key.as_slice() <= name).saturating_sub(1)
    }

    /// The part whose range of names runs from `key` up to `next` exactly (to the end when
    /// none), if there is one.
    pub(crate) fn part_spanning(&self, key: &[u8], next: Option<&[u8]>) -> Option<usize> {
        let i = self.parts.binary_search_by(|p| p.key.as_slice().cmp(key)).ok()?;
        let ends = self.parts.get(i + 1).map(|p| p.key.as_slice());
        (ends == next).then_some(i)
    }
}

/// A directory's files as stored: whole, or the index of its parts.
pub(crate) enum StoredFiles {
    Whole(DirFiles),
    Parts(PartIndex),
}

/// Each stored column (header, summary, files, a large directory's index, or one of its
/// parts, which is a files column of its own) starts with its tag, then the BLAKE3 hash of the
/// rest (zstd of postcard). One whose hash fails (a flipped bit in the catalog) is discarded,
/// never trusted: a wrong stamp or content id in it would reuse content that is not the file's.
/// The `4` forms are the per-directory rows; an older whole-tree cache (`SC3`) is read as none,
/// so the first save after an upgrade reads every file once. The index is `SP5` since its parts
/// are cut where the tree's are; a row with an older one is listed whole once. The summary is
/// `SM6` since it holds its subdirectories' trees and totals; an older one is read as none,
/// which costs the next save with a watcher a walk of the whole tree.
pub(crate) const HEADER: &[u8; 4] = b"SC4\0";
pub(crate) const META: &[u8; 4] = b"SM6\0";
pub(crate) const FILES: &[u8; 4] = b"SF4\0";
pub(crate) const PARTS: &[u8; 4] = b"SP5\0";

/// Encodes `value` as a stored column with `tag`.
pub(crate) fn encode_column<T: Serialize>(tag: &[u8; 4], value: &T) -> Result<Vec<u8>> {
    let raw = postcard::to_allocvec(value)
        .map_err(|e| Error::corrupt(format!("could not encode the stat cache: {e}")))?;
    let packed = crate::store::pack::compress_tree(&raw)
        .map_err(|e| Error::corrupt(format!("could not compress the stat cache: {e}")))?;
    Ok([tag.as_slice(), ObjectId::of(&packed).0.as_slice(), &packed].concat())
}

/// No stored column decodes to more than this (a directory of millions of files stays below it).
const MAX_PART: usize = 1 << 30;

/// Decodes a stored column, or `None` when it is damaged or of another form.
pub(crate) fn decode_column<T: DeserializeOwned>(tag: &[u8; 4], blob: &[u8]) -> Option<T> {
    let rest = blob.strip_prefix(tag.as_slice())?;
    let (hash, packed) = rest.split_at_checked(32)?;
    if ObjectId::of(packed).0.as_slice() != hash {
        return None;
    }
    // The frame says how large it is, so the buffer is allocated once, not grown.
    let size = zstd::zstd_safe::get_frame_content_size(packed).ok()??;
    let raw = crate::store::pack::decompress(packed, usize::try_from(size).ok().filter(|&s| s <= MAX_PART)?)
        .ok()?;
    postcard::from_bytes(&raw).ok()
}

/// A target's stat cache, read a directory at a time, or all at once before a walk of the
/// whole tree ([`StatCache::read_ahead`]).
#[derive(Default)]
pub(crate) struct StatCache<'s> {
    /// Where its rows are; none for a target without a (readable) cache.
    source: Option<(&'s Catalog, String)>,
    /// Where the last capture stood in the watcher's journal.
    pub(crate) journal: JournalState,
    /// Every directory row by directory, once read ahead.
    rows: std::sync::OnceLock<StoredDirRows>,
}

/// The most directory rows [`StatCache::read_ahead`] reads at once. A row holds at most some
/// 128 files' entries, compressed (a larger directory keeps them in parts, read as before), so
/// this bounds the rows held in memory; a walk of more directories takes long enough for a
/// lookup each not to matter.
const READ_AHEAD_ROWS: usize = 4096;

/// The kernel's coarse real-time clock, which stamps file times, in nanoseconds.
pub(crate) fn coarse_now_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// The moment the coarse clock (which stamps file times) must tick past before files written
/// until now are trusted by the racy-git rule: past the last write and past every ctime
/// recorded in `written`. The kernel may stamp an inode whose times were just read with a
/// fine-grained time (multigrain timestamps), up to a tick ahead of the coarse clock, so one
/// tick after the last write is not always enough. Taken now, so work that writes no file can
/// be done before [`Settling::wait`].
pub(crate) fn settling(written: &super::statcache_write::WrittenFiles) -> Settling {
    // ctime only: the kernel sets it to the time of the change, where mtime may be the
    // snapshot's (any date). A ctime far ahead (a clock set back meanwhile) is not waited for.
    let now = coarse_now_ns();
    let latest = written.latest_ctime_ns().filter(|t| *t < now + 1_000_000_000);
    Settling { past: latest.unwrap_or(now).max(now) }
}

/// A coarse clock reading still to be passed: see [`settling`].
pub(crate) struct Settling {
    past: i64,
}

impl Settling {
    /// The earliest time [`Settling::wait`] can return: a row encoded with it as its scan time
    /// before the wait trusts exactly the entries it would trust encoded after it, since every
    /// ctime recorded and every entry carried over lies before the moment. Encoding first lets
    /// the encoding's work pass the wait; the rows are still written only after it.
    pub(crate) fn scan_time(&self) -> i64 {
        self.past + 1
    }

    /// Waits for the coarse clock to pass the moment, and returns its time then.
    pub(crate) fn wait(self) -> i64 {
        loop {
            let now = coarse_now_ns();
            if now > self.past {
                return now;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

impl<'s> StatCache<'s> {
    /// Opens the cache of `target` (empty when there is none or its header cannot be read:
    /// its rows are then not trusted, and the next capture replaces them).
    pub(crate) fn load(store: &'s Store, target: &str) -> Result<Self> {
        let Some(blob) = store.catalog().stat_cache(target)? else {
            return Ok(Self::default());
        };
        Ok(match decode_column::<JournalState>(HEADER, &blob) {
            Some(journal) => Self {
                source: Some((store.catalog(), target.to_owned())),
                journal,
                rows: std::sync::OnceLock::new(),
            },
            None => Self::default(),
        })
    }

    /// True when it was read from the store (its rows may be used).
    pub(crate) fn is_stored(&self) -> bool {
        self.source.is_some()
    }

    /// A stored files column read whole: a row's files, or all its parts put together.
    fn whole(&self, dir: &[u8], blob: &[u8]) -> Result<Option<DirFiles>> {
        self.stored_whole(dir, decode_files(blob))
    }

    /// Directory `dir`'s files as stored, read whole.
    pub(crate) fn stored_whole(&self, dir: &[u8], stored: Option<StoredFiles>) -> Result<Option<DirFiles>> {
        match stored {
            Some(StoredFiles::Whole(files)) => Ok(Some(files)),
            Some(StoredFiles::Parts(index)) => self.assemble(dir, &index),
            None => Ok(None),
        }
    }

    /// Every part of directory `dir`'s files, as one [`DirFiles`]: each part's entries the
    /// racy-git rule trusts under the part's own scan time, under the latest of those times (so
    /// each stays trusted). None when a part is missing or damaged.
    fn assemble(&self, dir: &[u8], index: &PartIndex) -> Result<Option<DirFiles>> {
        let Some((catalog, target)) = &self.source else { return Ok(None) };
        let stored = catalog.stat_cache_parts(target, dir)?;
        if stored.len() != index.parts.len() || stored.iter().zip(&index.parts).any(|((k, _), p)| *k != p.key)
        {
            return Ok(None);
        }
        let mut all = DirFiles { scan_started_ns: i64::MIN, entries: Vec::new() };
        for (_, blob) in stored {
            let Some(part) = decode_column::<DirFiles>(FILES, &blob) else { return Ok(None) };
            all.scan_started_ns = all.scan_started_ns.max(part.scan_started_ns);
            all.entries.extend(part.into_trusted());
        }
        Ok(Some(all))
    }

    /// One part of directory `dir`'s files (none when it is missing or damaged).
    pub(crate) fn part(&self, dir: &[u8], key: &[u8]) -> Result<Option<DirFiles>> {
        let Some((catalog, target)) = &self.source else { return Ok(None) };
        Ok(catalog.stat_cache_part(target, dir, key)?.and_then(|b| decode_column(FILES, &b)))
    }

    /// Reads every directory row at once, where there are few enough: a walk of the whole
    /// tree then reads each from memory, where a query each (a reader from the pool, a read
    /// transaction, a search of the index) was a fifth of a no-change save's walk of 3,000
    /// files. The capture holds the target's lock, so no row changes meanwhile.
    pub(crate) fn read_ahead(&self) -> Result<()> {
        let Some((catalog, target)) = &self.source else { return Ok(()) };
        if self.rows.get().is_some() {
            return Ok(());
        }
        if let Some(rows) = catalog.stat_cache_rows(target, READ_AHEAD_ROWS)? {
            let _ = self.rows.set(rows);
        }
        Ok(())
    }

    /// What the row of directory `dir` says of it, and its files as stored (a large
    /// directory's index, not its parts).
    pub(crate) fn row_stored(&self, dir: &[u8]) -> Result<(Option<RowMeta>, Option<StoredFiles>)> {
        let decode = |meta: &[u8], files: &[u8]| {
            (decode_column::<Option<RowMeta>>(META, meta).flatten(), decode_files(files))
        };
        if let Some(rows) = self.rows.get() {
            return Ok(rows.get(dir).map_or((None, None), |(meta, files)| decode(meta, files)));
        }
        let Some((catalog, target)) = &self.source else { return Ok((None, None)) };
        let Some((meta, files)) = catalog.stat_cache_row(target, dir)? else { return Ok((None, None)) };
        Ok(decode(&meta, &files))
    }

    /// What the row of directory `dir` says of it (none when unknown or damaged).
    pub(crate) fn meta(&self, dir: &[u8]) -> Result<Option<RowMeta>> {
        let Some((catalog, target)) = &self.source else { return Ok(None) };
        Ok(catalog
            .stat_cache_meta(target, dir)?
            .and_then(|b| decode_column::<Option<RowMeta>>(META, &b))
            .flatten())
    }

    /// True when a file of `links` ((device, inode) → link count and paths seen) was cached
    /// under a path below one of `reused`, other than the paths seen: a new link joins a file
    /// that a subtree taken unseen holds, and a write through it made no event there. Reads
    /// the rows of those subtrees, so only when there are links.
    pub(crate) fn links_into(
        &self,
        reused: &HashSet<Vec<u8>>,
        links: &HashMap<(u64, u64), super::capture::LinkGroup>,
    ) -> Result<bool> {
        let Some((catalog, target)) = &self.source else { return Ok(false) };
        if reused.is_empty() || links.is_empty() {
            return Ok(false);
        }
        // Nested roots are read once, through their outermost root.
        let tops = reused.iter().filter(|r| !reused.iter().any(|o| o != *r && at_or_below(r, o)));
        for top in tops {
            for (dir, blob) in catalog.stat_cache_files_at_or_below(target, top)? {
                let Some(files) = self.whole(&dir, &blob)? else { continue };
                for (name, e) in &files.entries {
                    let path = join(&dir, name);
                    if links.get(&(e.stamp.dev, e.stamp.ino)).is_some_and(|(_, seen)| !seen.contains(&path)) {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Every object a stored files column refers to (gc keeps them): the content of a row's or
    /// a part's files, or the tree parts a large directory's index names, which a save that
    /// makes one again takes as stored.
    pub(crate) fn decode_content_ids(blob: &[u8]) -> Vec<ObjectId> {
        match decode_files(blob) {
            Some(StoredFiles::Whole(files)) => {
                files.entries.into_iter().flat_map(|(_, c)| c.content).collect()
            }
            Some(StoredFiles::Parts(index)) => {
                index.parts.into_iter().filter_map(|p| p.tree.map(|t| t.id)).collect()
            }
            None => Vec::new(),
        }
    }

    /// The trees a stored row's meta names (gc keeps them): its own, and its summary's, which a
    /// save with a watcher takes for a whole subtree unseen.
    pub(crate) fn decode_tree_ids(blob: &[u8]) -> impl Iterator<Item = ObjectId> {
        let meta = decode_column::<Option<RowMeta>>(META, blob).flatten();
        meta.into_iter().flat_map(|m| m.tree.into_iter().chain(m.summary.map(|s| s.tree)))
    }
}

/// A stored files column: a whole row's files, or a large directory's index.
fn decode_files(blob: &[u8]) -> Option<StoredFiles> {
    if blob.starts_with(PARTS) {
        // An index must start with the part every name falls in: one that does not is damage.
        decode_column::<PartIndex>(PARTS, blob)
            .filter(|index| index.parts.first().is_some_and(|p| p.key.is_empty()))
            .map(StoredFiles::Parts)
    } else {
        decode_column(FILES, blob).map(StoredFiles::Whole)
    }
}

/// `dir/name`, or `name` at the root.
pub(crate) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() { name.to_vec() } else { [dir, b"/", name].concat() }
}

/// Splits a relative path into its directory and name.
pub(crate) fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCAN: i64 = 1_700_000_000_000_000_000;

    fn stamp(mtime_ns: i64, ctime_ns: i64) -> Stamp {
        Stamp { dev: 1, ino: 42, size: 10, mtime_ns, ctime_ns, mode: 0o100644 }
    }

    fn entry(stamp: Stamp) -> CacheEntry {
        CacheEntry {
            stamp,
            content: vec![ObjectId::of(b"content")],
            secret: None,
            extra: Extra::default(),
            xattrs_left_out: Vec::new(),
        }
    }

    fn files_with(stamp: Stamp) -> DirFiles {
        DirFiles { scan_started_ns: SCAN, entries: vec![(b"f".to_vec(), entry(stamp))] }
    }

    #[test]
    fn rows_read_ahead_are_the_rows_read_one_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        for (path, text) in [("a/b/f", "1"), ("a/g", "2"), ("c/h", "3"), ("top", "4")] {
            std::fs::create_dir_all(tree.join(path).parent().unwrap()).unwrap();
            std::fs::write(tree.join(path), text).unwrap();
        }
        let store = crate::store::Store::open(&dir.path().join("store")).unwrap();
        let key = "tree";
        let writer = crate::store::writer::BlobWriter::new(&store);
        let filter = super::super::capture::Filter { no_ignore: false, include_secrets: false };
        let captured = super::super::capture::capture(&writer, &tree, &StatCache::default(), filter).unwrap();
        writer.finish().unwrap();
        captured.cache.store(&store, key).unwrap();

        let show = |cache: &StatCache<'_>, dir: &[u8]| {
            let (meta, files) = cache.row_stored(dir).unwrap();
            let files = match files {
                Some(StoredFiles::Whole(files)) => format!("{files:?}"),
                Some(StoredFiles::Parts(_)) => "parts".to_owned(),
                None => "none".to_owned(),
            };
            format!("{meta:?} {files}")
        };
        let one_at_a_time = StatCache::load(&store, key).unwrap();
        let ahead = StatCache::load(&store, key).unwrap();
        ahead.read_ahead().unwrap();
        assert!(ahead.rows.get().is_some_and(|rows| rows.len() == 4), "the root, a, a/b and c");
        for dir in [&b""[..], b"a", b"a/b", b"c", b"no-such-dir"] {
            assert_eq!(show(&ahead, dir), show(&one_at_a_time, dir), "{}", String::from_utf8_lossy(dir));
        }
        let Ok((_, Some(StoredFiles::Whole(files)))) = ahead.row_stored(b"a/b") else {
            panic!("a/b has no row")
        };
        assert_eq!(files.entries.iter().map(|(name, _)| name.as_slice()).collect::<Vec<_>>(), [b"f"]);
        assert_eq!(show(&ahead, b"no-such-dir"), "None none");
        // More rows than the limit: none are read ahead.
        assert!(store.catalog().stat_cache_rows(key, 3).unwrap().is_none());
        assert_eq!(store.catalog().stat_cache_rows(key, 4).unwrap().map(|rows| rows.len()), Some(4));
    }

    #[test]
    fn an_entry_older_than_the_scan_is_trusted() {
        let old = stamp(SCAN - 1, SCAN - 1);
        assert!(files_with(old.clone()).lookup(b"f", &old).is_some());
    }

    #[test]
    fn an_entry_whose_mtime_or_ctime_is_at_or_after_the_scan_start_is_racy() {
        for t in [SCAN, SCAN + 1] {
            for racy in [stamp(t, SCAN - 1), stamp(SCAN - 1, t)] {
                assert!(files_with(racy.clone()).lookup(b"f", &racy).is_none(), "{racy:?}");
            }
        }
    }

    #[test]
    fn any_stat_field_that_differs_means_the_file_is_read_again() {
        let cached = stamp(SCAN - 10, SCAN - 10);
        let files = files_with(cached.clone());
        let changes: [fn(&mut Stamp); 6] = [
            |s| s.dev += 1,
            |s| s.ino += 1,
            |s| s.size += 1,
            |s| s.mtime_ns += 1,
            |s| s.ctime_ns += 1,
            |s| s.mode ^= 0o100,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut live = cached.clone();
            change(&mut live);
            assert!(files.lookup(b"f", &live).is_none(), "field {i} changed");
        }
        assert!(files.lookup(b"other", &cached).is_none());
    }

    #[test]
    fn racy_entries_are_not_carried_into_a_rewritten_row() {
        let files = DirFiles {
            scan_started_ns: SCAN,
            entries: vec![
                (b"old".to_vec(), entry(stamp(SCAN - 5, SCAN - 5))),
                (b"racy".to_vec(), entry(stamp(SCAN, SCAN - 5))),
            ],
        };
        let kept: Vec<_> = files.into_trusted().into_iter().map(|(n, _)| n).collect();
        assert_eq!(kept, vec![b"old".to_vec()]);
    }

    #[test]
    fn a_damaged_part_is_read_as_none() {
        let mut blob = encode_column(FILES, &files_with(stamp(1, 1))).unwrap();
        assert!(decode_column::<DirFiles>(FILES, &blob).is_some());
        assert!(decode_column::<DirFiles>(META, &blob).is_none(), "another part's tag");
        let last = blob.len() - 1;
        blob[last] ^= 1;
        assert!(decode_column::<DirFiles>(FILES, &blob).is_none());
    }

    #[test]
    fn a_settled_time_is_past_the_last_write_s_ctime_and_past_the_moment_it_was_taken() {
        let nothing = super::super::statcache_write::WrittenFiles::default();
        let before = coarse_now_ns();
        assert!(settling(&nothing).wait() > before);
        // A ctime a little ahead of the coarse clock, as a fine-grained stamp can be.
        let mut written = super::super::statcache_write::WrittenFiles::default();
        let ahead = coarse_now_ns() + 20_000_000;
        written.push(b"f", &entry(stamp(1, ahead)));
        let settling = settling(&written);
        let scan = settling.scan_time();
        let settled = settling.wait();
        assert!(settled > ahead, "{settled} is not past the write at {ahead}");
        assert!(scan > ahead && scan <= settled, "{scan} is not between {ahead} and {settled}");
    }
}
