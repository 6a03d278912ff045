//! Writing stat caches (`statcache.rs`) back, a directory row at a time: what a capture
//! learned (only the rows of the directories it listed, and only those that changed), a whole
//! cache made by a restore into a new directory, and the amendment after an in-place restore
//! (the rows of the directories it wrote in). A large directory's files are written in parts,
//! and a capture by names or a restore rewrites only the parts holding what they touched.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::journal::{JournalState, at_or_below};
use super::statcache::{
    CacheEntry, DirFiles, FILES, HEADER, META, PARTS, PartIndex, PartRef, RelPath, RowMeta, Settling,
    StatCache, StoredFiles, join, range_digest, seal, split,
};
use crate::error::Result;
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::catalog::{RowWrite, StatCacheWrite};
use crate::tree::{Node, NodeKind};

/// A directory's cached files by name, sorted.
type Entries = Vec<(Vec<u8>, CacheEntry)>;

/// A directory with more files than this keeps them in parts.
const WHOLE_UP_TO: usize = 512;
/// How many files a part holds when a directory is split; a part that grows past twice this
/// is split again.
const PART_ENTRIES: usize = 256;

/// One directory a capture listed, for its row.
pub(crate) struct WalkedDir {
    pub rel: RelPath,
    /// Its files' entries, sealed as soon as the directory is done (a capture of a million
    /// files holds a few dozen bytes per file, not the entries); none when the stored row's
    /// are the same.
    pub files: Option<FilesWrite>,
    /// What the stored row said of the directory.
    pub old_meta: Option<RowMeta>,
    /// What the new row says (set once the capture has summarised every directory).
    pub meta: Option<RowMeta>,
}

/// A directory's files, sealed for its row.
pub(crate) enum FilesWrite {
    /// All of them, in the row.
    Whole(Vec<u8>),
    /// The row's index of parts, and the parts that change.
    Parts { index: Vec<u8>, put: Vec<(Vec<u8>, Vec<u8>)>, drop: Vec<Vec<u8>>, replace: bool },
}

/// A row an amendment has read and will seal once the clock has settled.
enum Pending {
    /// A large directory's parts: those not `untouched` are resealed from `entries`.
    Parts {
        index: PartIndex,
        untouched: Vec<bool>,
        entries: Entries,
    },
    Whole(Entries),
}

impl FilesWrite {
    fn into_row(self, meta: Vec<u8>) -> RowWrite {
        match self {
            FilesWrite::Whole(files) => RowWrite::Full { meta, files },
            FilesWrite::Parts { index, put, drop, replace } => {
                RowWrite::Parts { meta, index, put, drop, replace }
            }
        }
    }
}

/// Seals every file of a directory, written by a scan that started at `scan_started_ns`: in
/// the row, or in parts for a large directory. `nodes` is the directory's tree, when the files
/// were written with one (a capture), for the parts' digests.
pub(crate) fn seal_files(
    scan_started_ns: i64,
    entries: Vec<(Vec<u8>, CacheEntry)>,
    nodes: Option<&[Node]>,
) -> Result<FilesWrite> {
    if entries.len() <= WHOLE_UP_TO {
        return Ok(FilesWrite::Whole(seal(FILES, &DirFiles { scan_started_ns, entries })?));
    }
    let mut parts = Vec::new();
    split_into_parts(Vec::new(), entries, &mut parts);
    let mut index = PartIndex { parts: Vec::with_capacity(parts.len()) };
    let mut put = Vec::with_capacity(parts.len());
    let keys: Vec<Vec<u8>> = parts.iter().map(|(k, _)| k.clone()).collect();
    for (i, (key, entries)) in parts.into_iter().enumerate() {
        let (part, sealed) = seal_part(scan_started_ns, key.clone(), entries, nodes, keys.get(i + 1))?;
        index.parts.push(part);
        put.push((key, sealed));
    }
    Ok(FilesWrite::Parts { index: seal(PARTS, &index)?, put, drop: Vec::new(), replace: true })
}

/// Splits `entries` (sorted), which start at `key`, into parts of [`PART_ENTRIES`]: the first
/// keeps `key`, each other one is keyed by its first name.
fn split_into_parts(key: Vec<u8>, entries: Vec<(Vec<u8>, CacheEntry)>, out: &mut Vec<(Vec<u8>, Entries)>) {
    let mut entries = entries.into_iter().peekable();
    let mut key = Some(key);
    while entries.peek().is_some() || key.is_some() {
        let part: Vec<_> = entries.by_ref().take(PART_ENTRIES).collect();
        let part_key = key.take().unwrap_or_else(|| part[0].0.clone());
        out.push((part_key, part));
    }
}

/// Seals one part, which holds the names from `key` up to `next` (the end when none).
fn seal_part(
    scan_started_ns: i64,
    key: Vec<u8>,
    entries: Vec<(Vec<u8>, CacheEntry)>,
    nodes: Option<&[Node]>,
    next: Option<&Vec<u8>>,
) -> Result<(PartRef, Vec<u8>)> {
    let trusted =
        entries.iter().all(|(_, e)| e.stamp.mtime_ns < scan_started_ns && e.stamp.ctime_ns < scan_started_ns);
    let digest = nodes.and_then(|nodes| {
        let range = in_range(nodes, &key, next.map(Vec::as_slice));
        // Only a range whose every file has its entry, of its size and mtime, can be taken
        // unseen.
        let mut by_name = entries.iter().peekable();
        let whole = range.iter().all(|node| {
            if !matches!(node.kind, NodeKind::File { .. }) {
                return true;
            }
            while by_name.next_if(|(n, _)| *n < node.name).is_some() {}
            by_name.peek().is_some_and(|(n, e)| *n == node.name && e.stamp.describes(node))
        });
        whole.then(|| range_digest(range))
    });
    let part = PartRef { key, entries: entries.len() as u32, trusted, digest };
    Ok((part, seal(FILES, &DirFiles { scan_started_ns, entries })?))
}

/// The nodes (sorted by name) from `key` up to `next`.
pub(crate) fn in_range<'n>(nodes: &'n [Node], key: &[u8], next: Option<&[u8]>) -> &'n [Node] {
    let start = nodes.partition_point(|n| n.name.as_slice() < key);
    let end = next.map_or(nodes.len(), |next| nodes.partition_point(|n| n.name.as_slice() < next));
    &nodes[start..end.max(start)]
}

/// Reseals the parts of a large directory's files that are not `untouched`, from `entries`
/// (sorted; the entries of those parts' ranges, by a scan that started at `scan_started_ns`);
/// the untouched parts stay as stored. `read` reads a stored part, for an entry that falls in an
/// untouched one after all (its part is then rewritten with it).
pub(crate) fn reseal_parts(
    scan_started_ns: i64,
    old: PartIndex,
    untouched: &[bool],
    entries: Vec<(Vec<u8>, CacheEntry)>,
    nodes: Option<&[Node]>,
    read: impl Fn(&[u8]) -> Result<Option<DirFiles>>,
) -> Result<FilesWrite> {
    let mut groups: Vec<Option<Entries>> = untouched.iter().map(|u| (!u).then(Vec::new)).collect();
    for (name, entry) in entries {
        let i = old.part_of(&name);
        let group = match &mut groups[i] {
            Some(group) => group,
            slot => {
                let stored = read(&old.parts[i].key)?.map(DirFiles::into_trusted).unwrap_or_default();
                slot.insert(stored)
            }
        };
        group.push((name, entry));
    }
    let mut index = PartIndex { parts: Vec::with_capacity(old.parts.len()) };
    let (mut put, mut drop) = (Vec::new(), Vec::new());
    let keys: Vec<Vec<u8>> = old.parts.iter().map(|p| p.key.clone()).collect();
    for (i, (part, group)) in old.parts.into_iter().zip(groups).enumerate() {
        let Some(mut group) = group else {
            index.parts.push(part);
            continue;
        };
        // Entries read from a stored part are merged with the new ones: the newer wins.
        group.sort_by(|a, b| a.0.cmp(&b.0));
        group.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        if group.is_empty() && i > 0 {
            drop.push(part.key);
            continue;
        }
        let mut split = Vec::new();
        if group.len() > 2 * PART_ENTRIES {
            split_into_parts(part.key, group, &mut split);
        } else {
            split.push((part.key, group));
        }
        let next = keys.get(i + 1);
        for (j, (key, group)) in split.iter().enumerate() {
            let until = split.get(j + 1).map(|(k, _)| k).or(next);
            let (part, sealed) = seal_part(scan_started_ns, key.clone(), group.clone(), nodes, until)?;
            index.parts.push(part);
            put.push((key.clone(), sealed));
        }
    }
    Ok(FilesWrite::Parts { index: seal(PARTS, &index)?, put, drop, replace: false })
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
            Some(write) => store.catalog.write_stat_cache(key, &write),
            None => Ok(()),
        }
    }

    /// The catalog writes that store it; none when it changes nothing.
    pub(crate) fn into_write(self) -> Result<Option<StatCacheWrite>> {
        if self.is_unchanged() {
            return Ok(None);
        }
        let mut write = StatCacheWrite {
            header: Some(seal(HEADER, &self.journal)?),
            replace_all: self.replace_all,
            drop_at_or_below: self.gone,
            drop_below_except: self.unknown_children,
            rows: Vec::new(),
            alike: Vec::new(),
        };
        for d in self.dirs {
            let meta = seal(META, &d.meta)?;
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
    /// The latest ctime recorded, for [`super::statcache::settle_clock`].
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

impl StatCache<'_> {
    /// Replaces the cache of `target` with the files a restore into a new directory wrote,
    /// settled at `scan_started_ns`, with no journal place (the next save walks). Each
    /// directory's row is sealed from its items alone, so no second copy of them is made.
    pub(crate) fn store_written(
        store: &Store,
        target: &str,
        scan_started_ns: i64,
        written: WrittenFiles,
    ) -> Result<()> {
        let mut items = written.items;
        // Stable: of two items of one path, the later one stays later, and wins below.
        items.sort_by(|a, b| item_path(a).cmp(&item_path(b)));
        let mut write = StatCacheWrite {
            header: Some(seal(HEADER, &JournalState::default())?),
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
            let files = seal_files(scan_started_ns, entries, None)?;
            write.rows.push((dir, files.into_row(seal(META, &None::<RowMeta>)?)));
        }
        store.catalog.write_stat_cache(target, &write)
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
            header: Some(seal(HEADER, &JournalState::default())?),
            replace_all: true,
            ..StatCacheWrite::default()
        };
        for (dir, files) in by_dir(entries) {
            let files = seal_files(scan_started_ns, files.into_iter().collect(), None)?;
            write.rows.push((dir, files.into_row(seal(META, &None::<RowMeta>)?)));
        }
        store.catalog.write_stat_cache(target, &write)
    }

    /// Amends the cache of `target` after a restore changed `changed` (paths, each with
    /// everything below it) and wrote `written`, trusted once `settling` has passed: the rows
    /// of the directories it touched are rewritten, the rest kept. The rows are read before the
    /// wait, and sealed with the settled time after it. Totals of every directory above a
    /// change are dropped, so no subtree holding one is taken unseen. The journal's place
    /// stays: the restore's own writes made events, which the next save asks for. The pairs of
    /// trees the plan found `alike` are recorded with the rows.
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
        let cache = StatCache::load(store, target)?;
        // A directory the restore made like the snapshot's: the next save by names takes the
        // entries it did not write from the snapshot's tree, which an in-place restore of that
        // snapshot then finds decoded.
        let settled_trees: HashMap<&[u8], ObjectId> =
            settled_trees.iter().map(|(dir, tree)| (dir.as_slice(), *tree)).collect();
        let moved = |meta: RowMeta, dir: &[u8]| {
            let mut summary = meta.summary;
            if let (Some(summary), Some(tree)) = (summary.as_mut(), settled_trees.get(dir)) {
                summary.tree = *tree;
            }
            RowMeta { totals: None, summary, ..meta }
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
            header: Some(seal(HEADER, &cache.journal)?),
            drop_at_or_below: dropped.clone(),
            alike: alike.to_vec(),
            ..StatCacheWrite::default()
        };
        let mut above = BTreeSet::new();
        let mut pending = Vec::with_capacity(touched.len());
        for dir in &touched {
            let fresh = under_dropped(dir);
            let (old_meta, old_files) = if fresh { (None, None) } else { cache.row_stored(dir)? };
            let meta = seal(META, &old_meta.map(|m| moved(m, dir)))?;
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
                && (meta.totals.is_some() || moves(&meta))
            {
                let meta = Some(moved(meta, &dir));
                metas.push((dir, RowWrite::Meta(seal(META, &meta)?)));
            }
        }
        let settled_ns = settling.wait();
        for (dir, meta, files) in pending {
            let files = match files {
                Pending::Parts { index, untouched, entries } => {
                    let read = |key: &[u8]| cache.part(dir, key);
                    reseal_parts(settled_ns, index, &untouched, entries, None, read)?
                }
                Pending::Whole(entries) => seal_files(settled_ns, entries, None)?,
            };
            write.rows.push((dir.clone(), files.into_row(meta)));
        }
        write.rows.extend(metas);
        store.catalog.write_stat_cache(target, &write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ObjectId;
    use crate::targets::dir::statcache::{Stamp, unseal};
    use crate::tree::Extra;

    const SCAN: i64 = 1_000_000;

    fn name(i: usize) -> Vec<u8> {
        format!("f{i:05}").into_bytes()
    }

    fn entry(size: u64, mtime_ns: i64) -> CacheEntry {
        CacheEntry {
            stamp: Stamp { dev: 1, ino: size, size, mtime_ns, ctime_ns: mtime_ns, mode: 0o100644 },
            content: vec![ObjectId::of(&size.to_le_bytes())],
            secret: None,
            extra: Extra::default(),
            xattrs_left_out: Vec::new(),
        }
    }

    fn node(name: Vec<u8>, size: u64) -> Node {
        let kind = NodeKind::File { size, content: vec![ObjectId::of(&size.to_le_bytes())] };
        Node { name, kind, mode: 0o644, uid: 0, gid: 0, mtime_ns: 5, extra: Extra::default() }
    }

    /// `n` files, `f00000`…, each of size its number, stamped before the scan.
    fn directory(n: usize) -> (Vec<(Vec<u8>, CacheEntry)>, Vec<Node>) {
        let entries = (0..n).map(|i| (name(i), entry(i as u64, 5))).collect();
        let nodes = (0..n).map(|i| node(name(i), i as u64)).collect();
        (entries, nodes)
    }

    /// A write of parts, decoded: its index, the parts put, the keys dropped, and `replace`.
    struct Decoded(PartIndex, Vec<(Vec<u8>, DirFiles)>, Vec<Vec<u8>>, bool);

    fn parts_of(write: FilesWrite) -> Decoded {
        let FilesWrite::Parts { index, put, drop, replace } = write else { panic!("written whole") };
        let put = put.into_iter().map(|(k, b)| (k, unseal::<DirFiles>(FILES, &b).unwrap())).collect();
        Decoded(unseal(PARTS, &index).unwrap(), put, drop, replace)
    }

    fn names(files: &DirFiles) -> Vec<Vec<u8>> {
        files.entries.iter().map(|(n, _)| n.clone()).collect()
    }

    #[test]
    fn a_small_directory_is_sealed_whole_and_a_large_one_in_parts_with_its_tree_s_digests() {
        let (entries, nodes) = directory(WHOLE_UP_TO);
        assert!(matches!(seal_files(SCAN, entries, Some(&nodes)).unwrap(), FilesWrite::Whole(_)));

        let (mut entries, mut nodes) = directory(1000);
        entries[300].1.stamp.mtime_ns = SCAN; // racy: its part cannot be trusted unread
        nodes[600] = node(name(600), 7); // not the size its entry says: its part is checked
        let Decoded(index, put, drop, replace) = parts_of(seal_files(SCAN, entries, Some(&nodes)).unwrap());
        assert!(replace && drop.is_empty());
        let keys: Vec<Vec<u8>> = index.parts.iter().map(|p| p.key.clone()).collect();
        assert_eq!(keys, [Vec::new(), name(256), name(512), name(768)]);
        assert_eq!(put.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(), keys);
        assert_eq!(index.parts.iter().map(|p| p.entries).collect::<Vec<_>>(), [256, 256, 256, 232]);
        assert_eq!(index.parts.iter().map(|p| p.trusted).collect::<Vec<_>>(), [true, false, true, true]);
        assert_eq!(index.parts[0].digest, Some(range_digest(&nodes[..256])));
        assert_eq!(index.parts[2].digest, None);
        assert_eq!(index.parts[3].digest, Some(range_digest(&nodes[768..])));
        assert_eq!(index.part_of(b"f00255"), 0);
        assert_eq!(index.part_of(b"f00256"), 1);
        assert_eq!(index.part_of(b"zzz"), 3);

        // Written without a tree (by a restore), no part can be taken unread.
        let (entries, _) = directory(1000);
        let Decoded(index, ..) = parts_of(seal_files(SCAN, entries, None).unwrap());
        assert!(index.parts.iter().all(|p| p.digest.is_none()));
    }

    #[test]
    fn resealing_writes_only_the_touched_parts_and_splits_drops_or_reads_as_it_must() {
        let (entries, nodes) = directory(1000);
        let Decoded(index, ..) = parts_of(seal_files(SCAN, entries.clone(), Some(&nodes)).unwrap());
        let unread = |_: &[u8]| -> Result<Option<DirFiles>> { panic!("no part is read") };

        // Part 1 changes one file and gains one; the others stay as stored.
        let mut touched: Vec<_> = entries[256..512].to_vec();
        touched[3].1 = entry(3_000, 6);
        touched.push((b"f00300a".to_vec(), entry(1, 6)));
        touched.sort_by(|a, b| a.0.cmp(&b.0));
        let write =
            reseal_parts(SCAN, index.clone(), &[true, false, true, true], touched, Some(&nodes), unread);
        let Decoded(new, put, drop, replace) = parts_of(write.unwrap());
        assert!(!replace && drop.is_empty());
        assert_eq!(put.len(), 1);
        assert_eq!((put[0].0.as_slice(), put[0].1.entries.len()), (name(256).as_slice(), 257));
        assert_eq!(new.parts[1].entries, 257);
        for i in [0, 2, 3] {
            assert_eq!(new.parts[i], index.parts[i], "part {i} is kept as it was");
        }

        // Part 2 emptied is dropped (part 1's range takes its names); part 0 emptied stays.
        let write = reseal_parts(SCAN, index.clone(), &[false, true, false, true], Vec::new(), None, unread);
        let Decoded(new, put, drop, _) = parts_of(write.unwrap());
        assert_eq!(drop, [name(512)]);
        assert_eq!(
            put.iter().map(|(k, f)| (k.clone(), f.entries.len())).collect::<Vec<_>>(),
            [(Vec::new(), 0)]
        );
        assert_eq!(
            new.parts.iter().map(|p| p.key.clone()).collect::<Vec<_>>(),
            [Vec::new(), name(256), name(768)]
        );

        // Part 3 grown past twice a part's size is split.
        let grown: Vec<_> = (768..1400).map(|i| (name(i), entry(i as u64, 5))).collect();
        let write = reseal_parts(SCAN, index.clone(), &[true, true, true, false], grown, None, unread);
        let Decoded(new, put, ..) = parts_of(write.unwrap());
        assert_eq!(
            put.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
            [name(768), name(1024), name(1280)]
        );
        assert_eq!(new.parts.len(), 6);

        // An entry that falls in a part thought untouched makes that part be read and merged.
        let stored = DirFiles { scan_started_ns: SCAN, entries: entries[..256].to_vec() };
        let read = |key: &[u8]| -> Result<Option<DirFiles>> {
            assert!(key.is_empty());
            Ok(Some(DirFiles { scan_started_ns: stored.scan_started_ns, entries: stored.entries.clone() }))
        };
        let stray = vec![(name(10), entry(99, 6))];
        let write = reseal_parts(SCAN, index.clone(), &[true, true, true, true], stray, Some(&nodes), read);
        let Decoded(new, put, ..) = parts_of(write.unwrap());
        assert_eq!(put.len(), 1);
        assert_eq!(names(&put[0].1), names(&stored));
        assert_eq!(put[0].1.entries[10].1.stamp.size, 99, "the newer entry wins");
        assert_eq!(new.parts[0].digest, None, "its tree range no longer matches its entries");
    }
}
