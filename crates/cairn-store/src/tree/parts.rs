//! Large directories stored in parts. A directory of tens of thousands of entries would be one
//! tree blob that every save and restore touching one of its files reads, encodes and stores
//! whole. Above [`PARTED_ABOVE`] nodes, a tree is stored as an index of parts instead, each an
//! ordinary tree of a run of its nodes: a change to a few files stores only their parts.
//!
//! Where a part ends depends only on the names: after a node whose name hashes to a multiple
//! of [`AVERAGE`] (once the part holds [`MIN_PART`] nodes), or at [`MAX_PART`] nodes. Equal
//! trees therefore have equal parts and ids, and a name added or removed moves the end of its
//! own part at most, seldom the next one's.
//!
//! The index starts with ten `0xFF` bytes, which no whole tree can start with (its node count
//! is a postcard varint, at most ten bytes, the last without a continuation bit), so an older
//! build reading a parted tree rejects it as damage rather than misreading it.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Node, NodeKind, Tree};
use crate::error::Result;
use crate::id::ObjectId;
use crate::pack::BlobKind;
use crate::writer::BlobWriter;

/// A tree of more nodes than this is stored in parts.
pub const PARTED_ABOVE: usize = 1024;
/// About one name in this many ends a part. A change to one file reads and writes its part of
/// the tree and of the stat cache, so parts are small: a watched in-place restore after 20 edits
/// of the benchmark's tree took 52 ms with parts of about 64 names, 69 ms with about 256.
const AVERAGE: u64 = 64;
/// A part holds at least this many nodes (but the last).
const MIN_PART: usize = 16;
/// A part holds at most this many nodes.
const MAX_PART: usize = 1024;
/// The start of a parted tree's index, then its tag.
const MAGIC: &[u8; 14] = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffTP1\0";

/// One part of a parted tree, as its index lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartRef {
    /// The id of the part's tree.
    pub id: ObjectId,
    /// Its first node's name.
    pub first: Vec<u8>,
    /// How many nodes it holds.
    pub nodes: u32,
    /// How many of them are directories.
    pub dirs: u32,
}

/// How a tree is stored.
pub enum Layout {
    /// One tree holding every node.
    Whole(Tree),
    /// A large tree: the index of its parts.
    Parted(Vec<PartRef>),
}

/// Reads a stored tree's bytes: its nodes, or the index of its parts.
pub fn layout(id: &ObjectId, bytes: &[u8]) -> Result<Layout> {
    let Some(index) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return super::decode(id, bytes).map(Layout::Whole);
    };
    let parts: Vec<PartRef> = postcard::from_bytes(index).map_err(|e| super::invalid(id, e))?;
    let ordered = parts.windows(2).all(|w| w[0].first < w[1].first);
    if parts.is_empty() || !ordered || parts.iter().any(|p| p.nodes == 0 || p.dirs > p.nodes) {
        return Err(super::invalid(id, "its index of parts is out of order"));
    }
    Ok(Layout::Parted(parts))
}

/// Reads a tree whose stored bytes are `bytes`, reading its parts, if it has any, with `read`.
pub fn assemble(
    id: &ObjectId,
    bytes: &[u8],
    read: impl Fn(&ObjectId) -> Result<Vec<u8>> + Sync,
) -> Result<Tree> {
    match layout(id, bytes)? {
        Layout::Whole(tree) => Ok(tree),
        Layout::Parted(parts) => read_parts(id, &parts, read),
    }
}

/// Reads the parts `parts` of tree `id` with `read`, and checks them against the index.
pub fn read_parts(
    id: &ObjectId,
    parts: &[PartRef],
    read: impl Fn(&ObjectId) -> Result<Vec<u8>> + Sync,
) -> Result<Tree> {
    // Each part ends before the next one's first name, so the whole is in order.
    let read: Vec<Vec<Node>> = (0..parts.len())
        .into_par_iter()
        .map(|i| read_part(id, &parts[i], parts.get(i + 1), &read))
        .collect::<Result<_>>()?;
    // One allocation of the final size: growing a list of 18,000 nodes by doubling copied it
    // over and over into fresh pages.
    let mut nodes = Vec::with_capacity(read.iter().map(Vec::len).sum());
    for part in read {
        nodes.extend(part);
    }
    Ok(Tree { nodes })
}

/// Reads part `part` of tree `id` with `read`, and checks it against the index (`next` is the
/// part after it there, when known).
pub fn read_part(
    id: &ObjectId,
    part: &PartRef,
    next: Option<&PartRef>,
    read: impl Fn(&ObjectId) -> Result<Vec<u8>>,
) -> Result<Vec<Node>> {
    let tree: Tree = super::decode(&part.id, &read(&part.id)?)?;
    check_part(id, part, next, &tree.nodes)?;
    Ok(tree.nodes)
}

/// Checks the nodes read for `part` of tree `id` against what its index says of them: their
/// count, directories and first name, their order, and that they end before `next` (the part
/// after it in the index, when known) begins.
pub fn check_part(id: &ObjectId, part: &PartRef, next: Option<&PartRef>, nodes: &[Node]) -> Result<()> {
    let fits = nodes.len() == part.nodes as usize
        && dirs_in(nodes) == part.dirs as usize
        && nodes.first().is_some_and(|n| n.name == part.first)
        && nodes.windows(2).all(|w| w[0].name < w[1].name);
    if !fits {
        return Err(super::invalid(id, format!("part {} does not match its index", part.id)));
    }
    match (nodes.last(), next) {
        (Some(last), Some(next)) if last.name >= next.first => {
            Err(super::invalid(id, format!("part {} runs past the next one", next.id)))
        }
        _ => Ok(()),
    }
}

/// How many of `nodes` are directories.
fn dirs_in(nodes: &[Node]) -> usize {
    nodes.iter().filter(|n| matches!(n.kind, NodeKind::Dir { .. })).count()
}

/// Stores `tree`: whole, or in parts when it is large. Parts the store already holds are not
/// stored again.
pub fn write(writer: &BlobWriter<'_>, tree: &Tree) -> Result<ObjectId> {
    if tree.nodes.len() <= PARTED_ABOVE {
        return writer.write(BlobKind::Tree, &super::encode(tree)?);
    }
    let parts: Vec<PartRef> = split(&tree.nodes)
        .into_par_iter()
        .map(|range| write_part(writer, &tree.nodes[range]))
        .collect::<Result<_>>()?;
    write_index(writer, &parts)
}

/// Stores `nodes` (sorted by name, not empty) as one part.
pub(super) fn write_part(writer: &BlobWriter<'_>, nodes: &[Node]) -> Result<PartRef> {
    let id = writer.write(BlobKind::Tree, &super::encode_nodes(nodes)?)?;
    let (first, dirs) = (nodes[0].name.clone(), dirs_in(nodes) as u32);
    Ok(PartRef { id, first, nodes: nodes.len() as u32, dirs })
}

/// Stores the index of a parted tree whose parts are `parts`, and returns the tree's id.
pub(super) fn write_index(writer: &BlobWriter<'_>, parts: &[PartRef]) -> Result<ObjectId> {
    let mut index = MAGIC.to_vec();
    index.extend(postcard::to_allocvec(parts).map_err(super::unencodable)?);
    writer.write(BlobKind::Tree, &index)
}

/// Where the parts of `nodes` (sorted by name) begin and end.
pub fn split(nodes: &[Node]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::with_capacity(nodes.len() / AVERAGE as usize + 1);
    let mut start = 0;
    for (i, node) in nodes.iter().enumerate() {
        if ends_after(i + 1 - start, &node.name) {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < nodes.len() {
        ranges.push(start..nodes.len());
    }
    ranges
}

/// True when a part that holds `len` nodes ends after its last one, named `name`.
pub(super) fn ends_after(len: usize, name: &[u8]) -> bool {
    len >= MAX_PART || (len >= MIN_PART && ends_part(name))
}

/// True when a part ends after the name `name`. FNV-1a, then a 64-bit finalizer to spread its
/// low bits: stored trees depend on this, so it must never change.
fn ends_part(name: &[u8]) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h.is_multiple_of(AVERAGE)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::Store;
    use crate::error::Error;
    use crate::tree::Extra;

    /// A file node named `name`, whose content is its name.
    pub(in crate::tree) fn node(name: &str, extra: Extra) -> Node {
        Node {
            name: name.as_bytes().to_vec(),
            kind: NodeKind::File { size: 1, content: vec![ObjectId::of(name.as_bytes())] },
            mode: 0o644,
            uid: 0,
            gid: 0,
            mtime_ns: 7,
            extra,
        }
    }

    fn names(n: usize) -> Vec<String> {
        let mut names: Vec<String> = (0..n).map(|i| format!("file-{i:06}.rs")).collect();
        names.sort();
        names
    }

    fn tree_of(names: &[String]) -> Tree {
        Tree { nodes: names.iter().map(|n| node(n, Extra::default())).collect() }
    }

    #[test]
    fn parts_end_where_the_names_say_and_an_insertion_moves_only_its_own() {
        let all = names(20_000);
        let tree = tree_of(&all);
        let ranges = split(&tree.nodes);
        assert_eq!(ranges.iter().map(|r| r.len()).sum::<usize>(), all.len());
        assert!(ranges.iter().all(|r| r.len() <= MAX_PART));
        assert!(ranges[..ranges.len() - 1].iter().all(|r| r.len() >= MIN_PART));
        let average = all.len() / ranges.len();
        assert!((50..120).contains(&average), "{average} nodes a part on average");

        // One name more in the middle: every part but the one it falls in starts and ends on
        // the same names.
        let mut more = all.clone();
        more.push("file-010000.rs~".into());
        more.sort();
        let firsts = |t: &Tree| -> Vec<Vec<u8>> {
            split(&t.nodes).into_iter().map(|r| t.nodes[r.start].name.clone()).collect()
        };
        let (before, after) = (firsts(&tree), firsts(&tree_of(&more)));
        let kept = after.iter().filter(|f| before.contains(f)).count();
        assert!(kept + 2 >= before.len(), "{kept} of {} parts kept", before.len());
    }

    #[test]
    fn a_large_tree_is_stored_in_parts_and_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        let mut tree = tree_of(&names(5_000));
        tree.nodes[3000].extra = Extra { extents: None, xattrs: vec![(b"user.a".to_vec(), b"1".to_vec())] };
        let small = tree_of(&names(PARTED_ABOVE));
        let writer = BlobWriter::new(&store);
        let (id, small_id) = (write(&writer, &tree).unwrap(), write(&writer, &small).unwrap());
        writer.finish().unwrap();

        let bytes = store.read_blob(&id).unwrap();
        let Layout::Parted(parts) = layout(&id, &bytes).unwrap() else { panic!("not parted") };
        assert!(parts.len() > 5);
        assert!(super::super::decode::<Tree>(&id, &bytes).is_err(), "a whole-tree reader rejects the index");
        assert_eq!(crate::tree::read_tree(&store, &id).unwrap(), tree);
        // A tree of up to PARTED_ABOVE nodes keeps the whole form (and the id it always had).
        assert_eq!(small_id, ObjectId::of(&crate::tree::encode(&small).unwrap()));
        assert_eq!(crate::tree::read_tree(&store, &small_id).unwrap(), small);

        // One node changed: one part is new, the rest are the ones stored.
        let mut changed = tree.clone();
        changed.nodes[4000].mtime_ns = 8;
        let writer = BlobWriter::new(&store);
        let changed_id = write(&writer, &changed).unwrap();
        writer.finish().unwrap();
        let index = store.read_blob(&changed_id).unwrap();
        let Layout::Parted(after) = layout(&changed_id, &index).unwrap() else { panic!("not parted") };
        let new: Vec<&PartRef> = after.iter().filter(|p| !parts.contains(p)).collect();
        assert_eq!(new.len(), 1);
        let part = store.read_blob(&new[0].id).unwrap();
        assert_eq!(
            writer.totals().0,
            (index.len() + part.len()) as u64,
            "only the changed part and the index"
        );
    }

    #[test]
    fn a_part_that_does_not_match_its_index_is_damage() {
        let tree = tree_of(&names(3_000));
        let ranges = split(&tree.nodes);
        let blobs: std::collections::HashMap<ObjectId, Vec<u8>> = ranges
            .iter()
            .map(|r| {
                let bytes = crate::tree::encode_nodes(&tree.nodes[r.clone()]).unwrap();
                (ObjectId::of(&bytes), bytes)
            })
            .collect();
        let index = |parts: &[PartRef]| [MAGIC.as_slice(), &postcard::to_allocvec(parts).unwrap()].concat();
        let good: Vec<PartRef> = ranges
            .iter()
            .map(|r| {
                let bytes = crate::tree::encode_nodes(&tree.nodes[r.clone()]).unwrap();
                let first = tree.nodes[r.start].name.clone();
                PartRef { id: ObjectId::of(&bytes), first, nodes: r.len() as u32, dirs: 0 }
            })
            .collect();
        let read = |id: &ObjectId| blobs.get(id).cloned().ok_or_else(|| Error::not_found("no such part"));
        let id = ObjectId::of(b"index");
        assert_eq!(assemble(&id, &index(&good), read).unwrap(), tree);

        let mut miscounted = good.clone();
        miscounted[1].nodes += 1;
        let mut swapped = good.clone();
        swapped.swap(0, 1);
        let mut missing = good.clone();
        missing[0].id = ObjectId::of(b"gone");
        for bad in [miscounted, swapped, missing, Vec::new()] {
            assert!(assemble(&id, &index(&bad), read).is_err());
        }
        assert!(assemble(&id, &MAGIC[..], read).is_err(), "a cut index");
    }
}
