//! Encoding a directory's cached files for its stat cache row (`statcache.rs`): whole, or, for a
//! large directory, in parts. A capture cuts the parts where its tree's parts are, each naming
//! the tree part it vouches for, so the next capture by names can keep that tree part unread;
//! files written without a tree (by a restore) are cut every 64 names and name none.

use super::statcache::{CacheEntry, DirFiles, FILES, PARTS, PartIndex, PartRef, TreePart, encode_column};
use crate::error::Result;
use crate::store::catalog::RowWrite;
use crate::tree::parts::PartRef as TreeRef;
use crate::tree::rewrite::{Piece, Stored};
use crate::tree::{Node, NodeKind};

/// A directory's cached files by name, sorted.
pub(crate) type Entries = Vec<(Vec<u8>, CacheEntry)>;

/// A directory written without its tree and with more files than this keeps them in parts (a
/// capture cuts them where the tree's parts are, and its tree is in parts above the same size).
const WHOLE_UP_TO: usize = crate::tree::parts::PARTED_ABOVE;
/// How many files a part holds when a directory is split; a part that grows past twice this
/// is split again.
const PART_ENTRIES: usize = 64;

/// A directory's files, encoded for its row.
pub(crate) enum FilesWrite {
    /// All of them, in the row.
    Whole(Vec<u8>),
    /// The row's index of parts, and the parts that change.
    Parts { index: Vec<u8>, put: Vec<(Vec<u8>, Vec<u8>)>, drop: Vec<Vec<u8>>, replace: bool },
}

impl FilesWrite {
    pub(crate) fn into_row(self, meta: Vec<u8>) -> RowWrite {
        match self {
            FilesWrite::Whole(files) => RowWrite::Full { meta, files },
            FilesWrite::Parts { index, put, drop, replace } => {
                RowWrite::Parts { meta, index, put, drop, replace }
            }
        }
    }
}

/// Encodes every file of a directory written without its tree (by a restore), by a scan that
/// started at `scan_started_ns`: in the row, or in parts of [`PART_ENTRIES`] for a large
/// directory. No part names a part of the tree, so a capture by names reads them all once.
pub(crate) fn encode_files(scan_started_ns: i64, entries: Vec<(Vec<u8>, CacheEntry)>) -> Result<FilesWrite> {
    if entries.len() <= WHOLE_UP_TO {
        return Ok(FilesWrite::Whole(encode_column(FILES, &DirFiles { scan_started_ns, entries })?));
    }
    let mut parts = Vec::new();
    split_into_parts(Vec::new(), entries, &mut parts);
    let mut index = PartIndex { parts: Vec::with_capacity(parts.len()) };
    let mut put = Vec::with_capacity(parts.len());
    for (key, entries) in parts {
        let (part, encoded) = encode_part(scan_started_ns, key.clone(), entries, None)?;
        index.parts.push(part);
        put.push((key, encoded));
    }
    Ok(FilesWrite::Parts { index: encode_column(PARTS, &index)?, put, drop: Vec::new(), replace: true })
}

/// The parts of a directory's stored row that a capture by names did not read (`unread`), and
/// how to read one (by its key) when its entries must be encoded anew after all.
pub(crate) struct Unread<'a> {
    pub index: &'a PartIndex,
    pub unread: &'a [bool],
    pub read: &'a dyn Fn(&[u8]) -> Result<Option<DirFiles>>,
}

/// Encodes the files of a directory a capture stored as `stored`, by a scan that started at
/// `scan_started_ns`: `entries` (sorted) are those it looked at or kept. A directory whose
/// tree is in parts has its files cut where the tree's parts are, one part of files for each,
/// so that the next capture by names can take a tree part unread on its files' part's word.
/// With `old`, the parts the capture left unread stay as stored where the tree kept their
/// part; the entries of any other are read and encoded with the rest.
pub(crate) fn encode_with_tree(
    scan_started_ns: i64,
    entries: Vec<(Vec<u8>, CacheEntry)>,
    stored: &Stored,
    old: Option<Unread<'_>>,
) -> Result<FilesWrite> {
    let pieces: &[Piece] = match stored {
        Stored::Parted(_, pieces) => pieces,
        Stored::Whole(..) => &[],
    };
    let keys: Vec<&[u8]> = pieces
        .iter()
        .enumerate()
        .map(|(j, p)| if j == 0 { &[][..] } else { p.part().first.as_slice() })
        .collect();
    let in_range =
        |key: &[u8], next: Option<&[u8]>, name: &[u8]| name >= key && next.is_none_or(|n| name < n);
    // For each kept piece, the stored part of files that carries over with it: unread, of the
    // same range, written with that tree part, and with no entry of this capture in its range.
    let carried: Vec<Option<usize>> = pieces
        .iter()
        .enumerate()
        .map(|(j, piece)| {
            let (Piece::Kept(part), Some(old)) = (piece, &old) else { return None };
            let next = keys.get(j + 1).copied();
            let k = old.index.part_spanning(keys[j], next)?;
            let same_tree = old.index.parts[k].tree.as_ref().is_some_and(|t| t.id == part.id);
            let start = entries.partition_point(|(n, _)| n.as_slice() < keys[j]);
            let touched = entries.get(start).is_some_and(|(n, _)| in_range(keys[j], next, n));
            (old.unread[k] && same_tree && !touched).then_some(k)
        })
        .collect();
    let mut entries = entries;
    let mut old_keys = Vec::new();
    if let Some(old) = &old {
        let mut extra = Vec::new();
        for (k, part) in old.index.parts.iter().enumerate() {
            old_keys.push(part.key.clone());
            if old.unread[k] && !carried.contains(&Some(k)) {
                extra.extend((old.read)(&part.key)?.map(DirFiles::into_trusted).unwrap_or_default());
            }
        }
        entries = newer_over(entries, extra);
    }
    if pieces.is_empty() {
        return Ok(FilesWrite::Whole(encode_column(FILES, &DirFiles { scan_started_ns, entries })?));
    }

    let mut index = PartIndex { parts: Vec::with_capacity(pieces.len()) };
    let mut put = Vec::new();
    let mut entries = entries.into_iter().peekable();
    for (j, piece) in pieces.iter().enumerate() {
        let next = keys.get(j + 1).copied();
        let group: Entries =
            std::iter::from_fn(|| entries.next_if(|(n, _)| next.is_none_or(|x| n.as_slice() < x))).collect();
        if let (Some(k), Some(old)) = (carried[j], &old) {
            index.parts.push(old.index.parts[k].clone());
            continue;
        }
        let tree = match piece {
            Piece::Written(part, nodes) => Some((part, nodes.as_slice())),
            Piece::Kept(_) => None,
        };
        let (part, encoded) = encode_part(scan_started_ns, keys[j].to_vec(), group, tree)?;
        index.parts.push(part);
        put.push((keys[j].to_vec(), encoded));
    }
    let drop =
        old_keys.into_iter().filter(|k| index.parts.binary_search_by(|p| p.key.cmp(k)).is_err()).collect();
    Ok(FilesWrite::Parts { index: encode_column(PARTS, &index)?, put, drop, replace: old.is_none() })
}

/// `entries` and `older` (each sorted by name) as one sorted list; of a name in both, the entry
/// of `entries` is kept.
fn newer_over(entries: Entries, older: Entries) -> Entries {
    if older.is_empty() {
        return entries;
    }
    let mut merged = Vec::with_capacity(entries.len() + older.len());
    let mut older = older.into_iter().peekable();
    for (name, entry) in entries {
        while let Some(earlier) = older.next_if(|(n, _)| *n < name) {
            merged.push(earlier);
        }
        older.next_if(|(n, _)| *n == name);
        merged.push((name, entry));
    }
    merged.extend(older);
    merged
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

/// Encodes one part of files keyed `key`; with `tree`, the part of the directory's tree of the
/// same range and its nodes, which the part names when each of its files has an entry of its
/// size and mtime.
fn encode_part(
    scan_started_ns: i64,
    key: Vec<u8>,
    entries: Vec<(Vec<u8>, CacheEntry)>,
    tree: Option<(&TreeRef, &[Node])>,
) -> Result<(PartRef, Vec<u8>)> {
    let trusted =
        entries.iter().all(|(_, e)| e.stamp.mtime_ns < scan_started_ns && e.stamp.ctime_ns < scan_started_ns);
    let tree = tree.and_then(|(part, nodes)| {
        let mut by_name = entries.iter().peekable();
        let mut counts = TreePart { id: part.id, files: 0, symlinks: 0, bytes: 0 };
        for node in nodes {
            match node.kind {
                NodeKind::File { size, .. } => {
                    while by_name.next_if(|(n, _)| *n < node.name).is_some() {}
                    if !by_name.peek().is_some_and(|(n, e)| *n == node.name && e.stamp.describes(node)) {
                        return None;
                    }
                    counts.files += 1;
                    counts.bytes += size;
                }
                NodeKind::Symlink { .. } => counts.symlinks += 1,
                NodeKind::Dir { .. } => {}
            }
        }
        Some(counts)
    });
    let part = PartRef { key, entries: entries.len() as u32, trusted, tree };
    Ok((part, encode_column(FILES, &DirFiles { scan_started_ns, entries })?))
}

/// Re-encodes the parts of a large directory's files that are not `untouched`, from `entries`
/// (sorted; the entries of those parts' ranges, by a scan that started at `scan_started_ns`),
/// as a restore does; the untouched parts stay as stored. `read` reads a stored part, for an
/// entry that falls in an untouched one after all (its part is then rewritten with it).
pub(crate) fn reencode_parts(
    scan_started_ns: i64,
    old: PartIndex,
    untouched: &[bool],
    entries: Vec<(Vec<u8>, CacheEntry)>,
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
        for (key, group) in split {
            let (part, encoded) = encode_part(scan_started_ns, key.clone(), group, None)?;
            index.parts.push(part);
            put.push((key, encoded));
        }
    }
    Ok(FilesWrite::Parts { index: encode_column(PARTS, &index)?, put, drop, replace: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ObjectId;
    use crate::targets::dir::statcache::{Stamp, decode_column};
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
        let put = put.into_iter().map(|(k, b)| (k, decode_column::<DirFiles>(FILES, &b).unwrap())).collect();
        Decoded(decode_column(PARTS, &index).unwrap(), put, drop, replace)
    }

    fn names(files: &DirFiles) -> Vec<Vec<u8>> {
        files.entries.iter().map(|(n, _)| n.clone()).collect()
    }

    /// `nodes` as a parted tree written whole, each part of it named by a made-up id.
    fn written(nodes: &[Node]) -> Stored {
        let pieces = crate::tree::parts::split(nodes)
            .into_iter()
            .map(|r| {
                let part = &nodes[r];
                let id = ObjectId::of(&crate::tree::encode_nodes(part).unwrap());
                let tree = TreeRef { id, first: part[0].name.clone(), nodes: part.len() as u32, dirs: 0 };
                Piece::Written(tree, part.to_vec())
            })
            .collect();
        Stored::Parted(ObjectId::of(b"index"), pieces)
    }

    fn tree_ids(stored: &Stored) -> Vec<ObjectId> {
        let Stored::Parted(_, pieces) = stored else { panic!("whole") };
        pieces.iter().map(|p| p.part().id).collect()
    }

    /// `entries` encoded in parts of [`PART_ENTRIES`], however few they are.
    fn encode_files_in_parts(entries: Entries) -> FilesWrite {
        let mut parts = Vec::new();
        split_into_parts(Vec::new(), entries, &mut parts);
        let (mut index, mut put) = (PartIndex { parts: Vec::new() }, Vec::new());
        for (key, entries) in parts {
            let (part, encoded) = encode_part(SCAN, key.clone(), entries, None).unwrap();
            index.parts.push(part);
            put.push((key, encoded));
        }
        FilesWrite::Parts {
            index: encode_column(PARTS, &index).unwrap(),
            put,
            drop: Vec::new(),
            replace: true,
        }
    }

    #[test]
    fn files_written_without_a_tree_are_encoded_whole_or_in_parts_that_name_no_tree_part() {
        let (entries, _) = directory(WHOLE_UP_TO);
        assert!(matches!(encode_files(SCAN, entries).unwrap(), FilesWrite::Whole(_)));
        let (entries, _) = directory(2000);
        let Decoded(index, put, drop, replace) = parts_of(encode_files(SCAN, entries).unwrap());
        assert!(replace && drop.is_empty());
        assert_eq!(index.parts.iter().map(|p| p.entries).sum::<u32>(), 2000);
        assert_eq!(index.parts[1].key, name(PART_ENTRIES));
        assert_eq!(put.len(), index.parts.len());
        assert!(index.parts.iter().all(|p| p.tree.is_none()));
    }

    #[test]
    fn a_capture_s_files_are_cut_where_its_tree_s_parts_are_and_name_the_parts_they_vouch_for() {
        let (mut entries, mut nodes) = directory(3000);
        entries[300].1.stamp.ctime_ns = SCAN; // racy: its part cannot be trusted unread
        nodes[1600] = node(name(1600), 7); // not the size its entry says: its part names no tree part
        let stored = written(&nodes);
        let ids = tree_ids(&stored);
        let write = encode_with_tree(SCAN, entries.clone(), &stored, None).unwrap();
        let Decoded(index, put, drop, replace) = parts_of(write);
        assert!(replace && drop.is_empty());
        let Stored::Parted(_, pieces) = &stored else { unreachable!() };
        assert_eq!(index.parts.len(), pieces.len());
        assert!(index.parts[0].key.is_empty());
        for (j, (files, piece)) in index.parts.iter().zip(pieces).enumerate().skip(1) {
            assert_eq!(files.key, piece.part().first, "part {j} starts where the tree's does");
        }
        assert_eq!(put.len(), pieces.len());
        let holding = |i: usize| index.part_of(&name(i));
        for (k, files) in index.parts.iter().enumerate() {
            assert_eq!(files.trusted, k != holding(300), "part {k}");
            match files.tree.as_ref() {
                _ if k == holding(1600) => assert_eq!(files.tree, None),
                Some(tree) => {
                    assert_eq!(tree.id, ids[k]);
                    assert_eq!(tree.files, files.entries);
                }
                None => panic!("part {k} names no tree part"),
            }
        }
        // From here on, a directory whose every part names its tree part.
        let (entries, nodes) = directory(3000);
        let stored = written(&nodes);
        let Decoded(old, ..) = parts_of(encode_with_tree(SCAN, entries.clone(), &stored, None).unwrap());

        // A capture that kept every part unread but one: the others carry over, unread.
        let changed = holding(2500);
        let Stored::Parted(id, pieces) = written(&nodes) else { unreachable!() };
        let pieces: Vec<Piece> = pieces
            .into_iter()
            .enumerate()
            .map(|(j, p)| if j == changed { p } else { Piece::Kept(p.part().clone()) })
            .collect();
        let unread: Vec<bool> = (0..pieces.len()).map(|k| k != changed).collect();
        let range = |k: usize| {
            let lo = entries.partition_point(|(n, _)| *n < old.parts[k].key);
            let hi =
                old.parts.get(k + 1).map_or(entries.len(), |p| entries.partition_point(|(n, _)| *n < p.key));
            lo..hi
        };
        let mut looked = entries[range(changed)].to_vec();
        looked[5].1 = entry(9_999, 6);
        let unused = |_: &[u8]| -> Result<Option<DirFiles>> { panic!("no part is read") };
        let old_unread = Unread { index: &old, unread: &unread, read: &unused };
        let stored = Stored::Parted(id, pieces);
        let Decoded(new, put, drop, replace) =
            parts_of(encode_with_tree(SCAN, looked, &stored, Some(old_unread)).unwrap());
        assert!(!replace && drop.is_empty());
        assert_eq!(put.len(), 1);
        assert_eq!(put[0].0, old.parts[changed].key);
        assert_eq!(put[0].1.entries[5].1.stamp.size, 9_999);
        for k in (0..old.parts.len()).filter(|k| *k != changed) {
            assert_eq!(new.parts[k], old.parts[k], "part {k} is kept as it was");
        }

        // A kept tree part whose part of files names another one: that part is read and encoded
        // anew, naming none.
        let mut other = old.clone();
        other.parts[0].tree.as_mut().unwrap().id = ObjectId::of(b"another part");
        let read = |key: &[u8]| -> Result<Option<DirFiles>> {
            assert!(key.is_empty(), "only the first part is read");
            Ok(Some(DirFiles { scan_started_ns: SCAN, entries: entries[range(0)].to_vec() }))
        };
        let looked = entries[range(changed)].to_vec();
        let old_unread = Unread { index: &other, unread: &unread, read: &read };
        let Decoded(new, put, ..) =
            parts_of(encode_with_tree(SCAN, looked, &stored, Some(old_unread)).unwrap());
        assert_eq!(
            put.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
            [Vec::new(), old.parts[changed].key.clone()]
        );
        assert_eq!(names(&put[0].1), entries[range(0)].iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
        assert_eq!(new.parts[0].tree, None);
    }

    #[test]
    fn a_capture_that_stores_a_tree_whole_encodes_its_files_whole_with_the_unread_parts_read() {
        let (entries, nodes) = directory(3000);
        let stored = written(&nodes);
        let Decoded(old, ..) = parts_of(encode_with_tree(SCAN, entries.clone(), &stored, None).unwrap());
        // The directory shrank to 900 files; all but the first part were read.
        let unread: Vec<bool> = (0..old.parts.len()).map(|k| k == 0).collect();
        let first = old.parts[1].key.clone();
        let read = |key: &[u8]| -> Result<Option<DirFiles>> {
            assert!(key.is_empty());
            let entries = entries.iter().filter(|(n, _)| *n < first).cloned().collect();
            Ok(Some(DirFiles { scan_started_ns: SCAN, entries }))
        };
        let looked: Vec<_> = entries.iter().filter(|(n, _)| *n >= first && *n < name(900)).cloned().collect();
        let small = Stored::Whole(ObjectId::of(b"tree"), crate::tree::Tree { nodes: nodes[..900].to_vec() });
        let old_unread = Unread { index: &old, unread: &unread, read: &read };
        let FilesWrite::Whole(encoded) = encode_with_tree(SCAN, looked, &small, Some(old_unread)).unwrap()
        else {
            panic!("encoded in parts")
        };
        let files: DirFiles = decode_column(FILES, &encoded).unwrap();
        assert_eq!(names(&files), (0..900).map(name).collect::<Vec<_>>());
    }

    #[test]
    fn reencoding_writes_only_the_touched_parts_and_splits_drops_or_reads_as_it_must() {
        // Four parts, the last a little short.
        let p = PART_ENTRIES;
        let (entries, _) = directory(4 * p - 24);
        let Decoded(index, ..) = parts_of(encode_files_in_parts(entries.clone()));
        assert_eq!(index.parts.len(), 4);
        let unread = |_: &[u8]| -> Result<Option<DirFiles>> { panic!("no part is read") };

        // Part 1 changes one file and gains one; the others stay as stored.
        let mut touched: Vec<_> = entries[p..2 * p].to_vec();
        touched[3].1 = entry(3_000, 6);
        touched.push(([name(p + 10), b"a".to_vec()].concat(), entry(1, 6)));
        touched.sort_by(|a, b| a.0.cmp(&b.0));
        let write = reencode_parts(SCAN, index.clone(), &[true, false, true, true], touched, unread);
        let Decoded(new, put, drop, replace) = parts_of(write.unwrap());
        assert!(!replace && drop.is_empty());
        assert_eq!(put.len(), 1);
        assert_eq!((put[0].0.as_slice(), put[0].1.entries.len()), (name(p).as_slice(), p + 1));
        assert_eq!(new.parts[1].entries as usize, p + 1);
        for i in [0, 2, 3] {
            assert_eq!(new.parts[i], index.parts[i], "part {i} is kept as it was");
        }

        // Part 2 emptied is dropped (part 1's range takes its names); part 0 emptied stays.
        let write = reencode_parts(SCAN, index.clone(), &[false, true, false, true], Vec::new(), unread);
        let Decoded(new, put, drop, _) = parts_of(write.unwrap());
        assert_eq!(drop, [name(2 * p)]);
        assert_eq!(
            put.iter().map(|(k, f)| (k.clone(), f.entries.len())).collect::<Vec<_>>(),
            [(Vec::new(), 0)]
        );
        assert_eq!(
            new.parts.iter().map(|p| p.key.clone()).collect::<Vec<_>>(),
            [Vec::new(), name(p), name(3 * p)]
        );

        // Part 3 grown past twice a part's size is split.
        let grown: Vec<_> = (3 * p..5 * p + p / 2).map(|i| (name(i), entry(i as u64, 5))).collect();
        let write = reencode_parts(SCAN, index.clone(), &[true, true, true, false], grown, unread);
        let Decoded(new, put, ..) = parts_of(write.unwrap());
        assert_eq!(
            put.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
            [name(3 * p), name(4 * p), name(5 * p)]
        );
        assert_eq!(new.parts.len(), 6);

        // An entry that falls in a part thought untouched makes that part be read and merged.
        let stored = DirFiles { scan_started_ns: SCAN, entries: entries[..p].to_vec() };
        let read = |key: &[u8]| -> Result<Option<DirFiles>> {
            assert!(key.is_empty());
            Ok(Some(DirFiles { scan_started_ns: stored.scan_started_ns, entries: stored.entries.clone() }))
        };
        let stray = vec![(name(10), entry(99, 6))];
        let write = reencode_parts(SCAN, index.clone(), &[true, true, true, true], stray, read);
        let Decoded(new, put, ..) = parts_of(write.unwrap());
        assert_eq!(put.len(), 1);
        assert_eq!(names(&put[0].1), names(&stored));
        assert_eq!(put[0].1.entries[10].1.stamp.size, 99, "the newer entry wins");
        assert_eq!(new.parts[0].tree, None, "written without a tree");
    }
}
