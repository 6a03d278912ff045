//! Writing stat caches (`statcache.rs`) back, a directory row at a time: what a capture
//! learned (only the rows of the directories it listed, and only those that changed), a whole
//! cache made by a restore into a new directory, and the amendment after an in-place restore
//! (the rows of the directories it wrote in). A large directory's files are written in parts
//! (`statcache_encode.rs`), and a capture by names or a restore rewrites only the parts holding
//! what they touched.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::journal::{JournalState, at_or_below};
use super::statcache::{
    CacheEntry, DirFiles, HEADER, META, PartIndex, RelPath, RowMeta, Settling, StatCache, StoredFiles,
    encode_column, join, split,
};
use super::statcache_encode::{Entries, FilesWrite, encode_files, reencode_parts};
use crate::error::Result;
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::catalog::{RowWrite, StatCacheWrite};

/// One directory a capture listed, for its row.
pub(crate) struct WalkedDir {
    pub rel: RelPath,
    /// Its files' entries, encoded as soon as the directory is done (a capture of a million
    /// files holds a few dozen bytes per file, not the entries); none when the stored row's
    /// are the same.
    pub files: Option<FilesWrite>,
    /// What the stored row said of the directory.
    pub old_meta: Option<RowMeta>,
    /// What the new row says (set once the capture has summarised every directory).
    pub meta: Option<RowMeta>,
}

/// A row an amendment has read and will encode once the clock has settled.
enum Pending {
    /// A large directory's parts: those not `untouched` are re-encoded from `entries`.
    Parts {
        index: PartIndex,
        untouched: Vec<bool>,
        entries: Entries,
    },
    Whole(Entries),
}

/// The stat cache a capture made, not stored yet: the rows it changes.
pub(crate) struct FreshCache {
    /// The old cache was not read (none, or unreadable): every row is replaced.
    pub replace_all: bool,
    pub dirs: Vec<WalkedDir>,
    /// Directories gone since the last capture: their rows and those below are dropped.
    pub gone: Vec<RelPath>,
    /// Listed directories whose old subdirectories were not known: rows below them other than
    /// under their present subdirectories are dropped.
    pub unknown_children: Vec<(RelPath, Vec<Vec<u8>>)>,
    /// Where the capture stood in the watcher's journal, and whether that moved.
    pub journal: JournalState,
    pub journal_moved: bool,
}

impl FreshCache {
    /// True when storing it would change nothing.
    pub(crate) fn is_unchanged(&self) -> bool {
        !self.replace_all
            && !self.journal_moved
            && self.gone.is_empty()
            && self.unknown_children.is_empty()
            && self.dirs.iter().all(|d| d.files.is_none() && d.meta == d.old_meta)
    }

    /// Stores it as the stat cache of target `key`, in one transaction.
    pub(crate) fn store(self, store: &Store, key: &str) -> Result<()> {
        match self.into_write()? {
            Some(write) => store.catalog().write_stat_cache(key, &write),
            None => Ok(()),
        }
    }

    /// The catalog writes that store it; none when it changes nothing.
    pub(crate) fn into_write(self) -> Result<Option<StatCacheWrite>> {
        if self.is_unchanged() {
            return Ok(None);
        }
        let mut write = StatCacheWrite {
            header: Some(encode_column(HEADER, &self.journal)?),
            replace_all: self.replace_all,
            drop_at_or_below: self.gone,
            drop_below_except: self.unknown_children,
            rows: Vec::new(),
            alike: Vec::new(),
        };
        for d in self.dirs {
            let meta = encode_column(META, &d.meta)?;
            if let Some(files) = d.files {
                write.rows.push((d.rel, files.into_row(meta)));
            } else if d.meta != d.old_meta {
                write.rows.push((d.rel, RowWrite::Meta(meta)));
            }
        }
        Ok(Some(write))
    }
}

/// Groups entries by their directory, each group sorted by name (a later entry of a name wins).
fn by_dir(entries: Vec<(RelPath, CacheEntry)>) -> BTreeMap<RelPath, BTreeMap<Vec<u8>, CacheEntry>> {
    let mut dirs: BTreeMap<RelPath, BTreeMap<Vec<u8>, CacheEntry>> = BTreeMap::new();
    for (path, entry) in entries {
        let (dir, name) = split(&path);
        dirs.entry(dir.to_vec()).or_default().insert(name.to_vec(), entry);
    }
    dirs
}

/// The files a restore wrote, with their new stat, for the stat cache: each one encoded as it
/// is recorded (its path, then its entry), a hundred-odd bytes a file where the entries
/// themselves take three times that, so a restore of a million files holds 150 MB, not 450.
#[derive(Default)]
pub(crate) struct WrittenFiles {
    items: Vec<Box<[u8]>>,
    /// The latest ctime recorded, for [`super::statcache::settling`].
    latest_ctime_ns: Option<i64>,
}

impl WrittenFiles {
    pub(crate) fn push(&mut self, rel: &[u8], entry: &CacheEntry) {
        let mut item = postcard::to_stdvec(rel).unwrap_or_default();
        item = postcard::to_extend(entry, item).unwrap_or_default();
        self.items.push(item.into_boxed_slice());
        self.latest_ctime_ns = self.latest_ctime_ns.max(Some(entry.stamp.ctime_ns));
    }

    /// The latest ctime of the files recorded.
    pub(crate) fn latest_ctime_ns(&self) -> Option<i64> {
        self.latest_ctime_ns
    }

    /// The entry recorded last for `rel`.
    pub(crate) fn last_of(&self, rel: &[u8]) -> Option<CacheEntry> {
        self.items.iter().rev().find_map(|item| match decode(item) {
            Some((path, entry)) if path == rel => Some(entry),
            _ => None,
        })
    }

    /// Every file recorded, in the order recorded.
    pub(crate) fn into_entries(self) -> Vec<(RelPath, CacheEntry)> {
        self.items.iter().filter_map(|item| decode(item)).collect()
    }
}

/// An item of [`WrittenFiles`]: its path, and its entry.
fn decode(item: &[u8]) -> Option<(RelPath, CacheEntry)> {
    let (path, rest): (Vec<u8>, &[u8]) = postcard::take_from_bytes(item).ok()?;
    let entry = postcard::from_bytes(rest).ok()?;
    Some((path, entry))
}

/// The path of an item of [`WrittenFiles`], split into directory and name, without decoding
/// its entry.
fn item_path(item: &[u8]) -> (&[u8], &[u8]) {
    let Ok((len, rest)) = postcard::take_from_bytes::<u32>(item) else { return (&[], &[]) };
    let path = rest.get(..len as usize).unwrap_or_default();
    split(path)
}

/// A restore that wrote more files than this amends the stat cache (see [`StatCache::amend`]).
/// On the benchmark's 50,000-file tree, the amendment after 20 files took 9 ms, where reading
/// them again takes the next save well under one.
const AMEND_ABOVE_FILES: usize = 64;
/// A restore that wrote more bytes than this amends the stat cache.
const AMEND_ABOVE_BYTES: u64 = 4 << 20;

impl StatCache<'_> {
    /// Replaces the cache of `target` with the files a restore into a new directory wrote,
    /// trusted once `settling` has passed, with no journal place (the next save walks). Each
    /// directory's row is encoded from its items alone, so no second copy of them is made.
    /// The rows are encoded while the clock ticks past the writes, and written after.
    pub(crate) fn store_written(
        store: &Store,
        target: &str,
        settling: Settling,
        written: WrittenFiles,
    ) -> Result<()> {
        let scan_started_ns = settling.scan_time();
        let mut items = written.items;
        // Stable: of two items of one path, the later one stays later, and wins below.
        items.sort_by(|a, b| item_path(a).cmp(&item_path(b)));
        let mut write = StatCacheWrite {
            header: Some(encode_column(HEADER, &JournalState::default())?),
            replace_all: true,
            ..StatCacheWrite::default()
        };
        let mut items = items.into_iter().peekable();
        while let Some(first) = items.next() {
            let dir = item_path(&first).0.to_vec();
            let mut entries: Vec<(Vec<u8>, CacheEntry)> = Vec::new();
            for item in
                std::iter::once(first).chain(std::iter::from_fn(|| items.next_if(|i| item_path(i).0 == dir)))
            {
                let Some((path, entry)) = decode(&item) else { continue };
                let name = split(&path).1.to_vec();
                match entries.last_mut() {
                    Some(last) if last.0 == name => last.1 = entry,
                    _ => entries.push((name, entry)),
                }
            }
            let files = encode_files(scan_started_ns, entries)?;
            write.rows.push((dir, files.into_row(encode_column(META, &None::<RowMeta>)?)));
        }
        settling.wait();
        store.catalog().write_stat_cache(target, &write)
    }

    /// Replaces the cache of `target` with `entries` from a scan that started at
    /// `scan_started_ns`, with no journal place (the next save walks).
    pub(crate) fn store(
        store: &Store,
        target: &str,
        scan_started_ns: i64,
        entries: Vec<(Vec<u8>, CacheEntry)>,
    ) -> Result<()> {
        let mut write = StatCacheWrite {
            header: Some(encode_column(HEADER, &JournalState::default())?),
            replace_all: true,
            ..StatCacheWrite::default()
        };
        for (dir, files) in by_dir(entries) {
            let files = encode_files(scan_started_ns, files.into_iter().collect())?;
            write.rows.push((dir, files.into_row(encode_column(META, &None::<RowMeta>)?)));
        }
        store.catalog().write_stat_cache(target, &write)
    }

    /// Amends the cache of `target` after a restore changed `changed` (paths, each with
    /// everything below it) and wrote `written`, trusted once `settling` has passed: the rows
    /// of the directories it touched are rewritten, the rest kept. The rows are read and
    /// encoded while the clock ticks past the writes ([`Settling::scan_time`]), and written
    /// after. Totals of every directory above a change are dropped, and with them what each
    /// row it rewrites says of its subdirectories, so no subtree holding one is taken unseen.
    /// The journal's place stays: the restore's own writes made events, which
    /// the next save asks for. The pairs of trees the plan found `alike` are recorded with the
    /// rows.
    ///
    /// A restore that wrote no more than [`AMEND_ABOVE_FILES`] files and [`AMEND_ABOVE_BYTES`]
    /// bytes records only the pairs: its rows stay as the safety snapshot left them, and the
    /// next save reads those files again, which costs it less than rewriting the rows of every
    /// directory they are in costs the restore. The cache stays true either way: a written
    /// file's new inode and ctime match no entry, and the journal names what it changed.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn amend(
        store: &Store,
        target: &str,
        changed: &[RelPath],
        written: Vec<(RelPath, CacheEntry)>,
        settling: Settling,
        settled_trees: &[(RelPath, ObjectId)],
        alike: &[(ObjectId, ObjectId)],
    ) -> Result<()> {
        let bytes: u64 = written.iter().map(|(_, e)| e.stamp.size).sum();
        if written.len() <= AMEND_ABOVE_FILES && bytes <= AMEND_ABOVE_BYTES {
            let write = StatCacheWrite { alike: alike.to_vec(), ..StatCacheWrite::default() };
            return store.catalog().write_stat_cache(target, &write);
        }
        let cache = StatCache::load(store, target)?;
        // A directory the restore made like the snapshot's: the next save by names takes the
        // entries it did not write from the snapshot's tree, which an in-place restore of that
        // snapshot then finds decoded.
        let settled_trees: HashMap<&[u8], ObjectId> =
            settled_trees.iter().map(|(dir, tree)| (dir.as_slice(), *tree)).collect();
        let moved = |meta: RowMeta, dir: &[u8]| {
            let mut summary = meta.summary;
            let settled = settled_trees.get(dir).copied();
            if let (Some(summary), Some(tree)) = (summary.as_mut(), settled) {
                summary.tree = tree;
            }
            RowMeta { totals: None, summary, tree: settled.or(meta.tree), below: Vec::new(), ..meta }
        };
        if !cache.is_stored() {
            return Self::store(store, target, settling.wait(), written);
        }
        let changed_set: HashSet<&[u8]> = changed.iter().map(Vec::as_slice).collect();
        // The root is never dropped: a change of its own metadata leaves its files alone.
        let dropped: Vec<RelPath> = changed.iter().filter(|c| !c.is_empty()).cloned().collect();
        let under_dropped = |d: &[u8]| dropped.iter().any(|c| at_or_below(d, c));
        let mut written = by_dir(written);
        let mut touched: BTreeSet<RelPath> = written.keys().cloned().collect();
        touched.extend(changed.iter().filter(|c| !c.is_empty()).map(|c| split(c).0.to_vec()));
        let mut write = StatCacheWrite {
            header: Some(encode_column(HEADER, &cache.journal)?),
            drop_at_or_below: dropped.clone(),
            alike: alike.to_vec(),
            ..StatCacheWrite::default()
        };
        let mut above = BTreeSet::new();
        let mut pending = Vec::with_capacity(touched.len());
        for dir in &touched {
            let fresh = under_dropped(dir);
            let (old_meta, old_files) = if fresh { (None, None) } else { cache.row_stored(dir)? };
            let meta = encode_column(META, &old_meta.map(|m| moved(m, dir)))?;
            let new = written.remove(dir).unwrap_or_default();
            let unchanged = |name: &[u8]| !changed_set.contains(join(dir, name).as_slice());
            let files = match old_files {
                // Only the parts holding a name the restore changed or wrote are rewritten.
                Some(StoredFiles::Parts(index)) => {
                    let mut untouched = vec![true; index.parts.len()];
                    for name in new.keys() {
                        untouched[index.part_of(name)] = false;
                    }
                    for path in changed.iter().filter(|c| !c.is_empty() && split(c).0 == dir.as_slice()) {
                        untouched[index.part_of(split(path).1)] = false;
                    }
                    let mut entries: BTreeMap<Vec<u8>, CacheEntry> = BTreeMap::new();
                    for (part, _) in index.parts.iter().zip(&untouched).filter(|(_, u)| !**u) {
                        let stored =
                            cache.part(dir, &part.key)?.map(DirFiles::into_trusted).unwrap_or_default();
                        entries.extend(stored.into_iter().filter(|(name, _)| unchanged(name)));
                    }
                    entries.extend(new);
                    Pending::Parts { index, untouched, entries: entries.into_iter().collect() }
                }
                old_files => {
                    let old = match old_files {
                        Some(StoredFiles::Whole(files)) => files.into_trusted(),
                        _ => Vec::new(),
                    };
                    let mut entries: BTreeMap<Vec<u8>, CacheEntry> =
                        old.into_iter().filter(|(name, _)| unchanged(name)).collect();
                    entries.extend(new);
                    Pending::Whole(entries.into_iter().collect())
                }
            };
            pending.push((dir, meta, files));
            let mut up = dir.as_slice();
            while !up.is_empty() {
                up = split(up).0;
                if !touched.contains(up) && !under_dropped(up) {
                    above.insert(up.to_vec());
                }
            }
        }
        let mut metas = Vec::new();
        for dir in above {
            // A row already naming the snapshot's tree (a second restore of it) is left as it is.
            let moves = |meta: &RowMeta| match (&meta.summary, settled_trees.get(dir.as_slice())) {
                (Some(summary), Some(tree)) => summary.tree != *tree,
                _ => false,
            };
            if let Some(meta) = cache.meta(&dir)?
                && (meta.totals.is_some() || !meta.below.is_empty() || moves(&meta))
            {
                let meta = Some(moved(meta, &dir));
                metas.push((dir, RowWrite::Meta(encode_column(META, &meta)?)));
            }
        }
        let settled_ns = settling.scan_time();
        for (dir, meta, files) in pending {
            let files = match files {
                Pending::Parts { index, untouched, entries } => {
                    let read = |key: &[u8]| cache.part(dir, key);
                    reencode_parts(settled_ns, index, &untouched, entries, read)?
                }
                Pending::Whole(entries) => encode_files(settled_ns, entries)?,
            };
            write.rows.push((dir.clone(), files.into_row(meta)));
        }
        write.rows.extend(metas);
        settling.wait();
        store.catalog().write_stat_cache(target, &write)
    }
}
