//! Storing a directory's tree after a change to a few of its entries, without reading the
//! parts of it the change left alone. A capture that looks at a large directory by names gives
//! the new tree as runs in name order: parts of the old tree it vouches for, unread, and the
//! nodes of the rest.
//!
//! The parts end where [`parts::split`] would end them in the whole list of nodes, so the tree
//! gets the id a capture that read every part would give it: a kept part is taken as it is
//! only where a part begins and where its own end is a part's end (every part of the old tree
//! but its last); anywhere else it is read, and its nodes are split with the rest.

use rayon::prelude::*;

use super::parts::{self, PARTED_ABOVE, PartRef};
use super::{Node, Tree};
use crate::error::Result;
use crate::id::ObjectId;
use crate::pack::BlobKind;
use crate::writer::BlobWriter;

/// A run of a tree given to [`write_runs`].
pub enum Run {
    /// A part of the old tree, unread; `ends_part` is false for the old tree's last part,
    /// which ended with the nodes rather than at a part's end.
    Kept {
        /// The old tree's part.
        part: PartRef,
        /// Whether it ended at a part's end in the old tree, rather than with its nodes.
        ends_part: bool,
    },
    /// Nodes, sorted by name.
    Nodes(Vec<Node>),
}

/// One part of a tree as [`write_runs`] stored it.
pub enum Piece {
    /// A part of the old tree, kept unread.
    Kept(PartRef),
    /// A part written from these nodes.
    Written(PartRef, Vec<Node>),
}

/// A tree as [`write_runs`] stored it.
pub enum Stored {
    /// Stored whole: its id and its tree.
    Whole(ObjectId, Tree),
    /// Stored in parts: the id of its index and its parts.
    Parted(ObjectId, Vec<Piece>),
}

impl Stored {
    /// The id of the stored tree (a parted one's index).
    pub fn id(&self) -> ObjectId {
        match self {
            Stored::Whole(id, _) | Stored::Parted(id, _) => *id,
        }
    }

    /// The nodes it was written from, in order: all of them, unless a part was kept unread.
    pub fn written_nodes(&self) -> impl Iterator<Item = &Node> {
        let (whole, pieces): (&[Node], &[Piece]) = match self {
            Stored::Whole(_, tree) => (&tree.nodes, &[]),
            Stored::Parted(_, pieces) => (&[], pieces),
        };
        let written = pieces.iter().flat_map(|piece| match piece {
            Piece::Written(_, nodes) => nodes.as_slice(),
            Piece::Kept(_) => &[],
        });
        whole.iter().chain(written)
    }

    /// The whole tree, when no part was kept unread.
    pub fn into_tree(self) -> Option<Tree> {
        match self {
            Stored::Whole(_, tree) => Some(tree),
            Stored::Parted(_, pieces) => {
                let mut nodes = Vec::with_capacity(pieces.iter().map(Piece::len).sum());
                for piece in pieces {
                    match piece {
                        Piece::Written(_, part) => nodes.extend(part),
                        Piece::Kept(_) => return None,
                    }
                }
                Some(Tree { nodes })
            }
        }
    }
}

impl Piece {
    /// The part, kept or written.
    pub fn part(&self) -> &PartRef {
        match self {
            Piece::Kept(part) | Piece::Written(part, _) => part,
        }
    }

    fn len(&self) -> usize {
        self.part().nodes as usize
    }
}

/// Stores the tree made of `runs` (in name order, no name twice), reading a kept part with
/// `read` where it cannot be taken as it is.
pub fn write_runs(
    writer: &BlobWriter<'_>,
    runs: Vec<Run>,
    read: impl Fn(&PartRef) -> Result<Vec<Node>>,
) -> Result<Stored> {
    let total: usize = runs
        .iter()
        .map(|run| match run {
            Run::Kept { part, .. } => part.nodes as usize,
            Run::Nodes(nodes) => nodes.len(),
        })
        .sum();
    if total <= PARTED_ABOVE {
        let mut nodes = Vec::with_capacity(total);
        for run in runs {
            match run {
                Run::Kept { part, .. } => nodes.extend(read(&part)?),
                Run::Nodes(run) => nodes.extend(run),
            }
        }
        let tree = Tree { nodes };
        let id = writer.write(BlobKind::Tree, &super::encode(&tree)?)?;
        return Ok(Stored::Whole(id, tree));
    }

    // Parts in order: kept ones, and the nodes of each one to write.
    let mut planned: Vec<Result<PartRef, Vec<Node>>> = Vec::new();
    let mut pending: Vec<Node> = Vec::new();
    let mut runs = runs.into_iter().peekable();
    while let Some(run) = runs.next() {
        let nodes = match run {
            Run::Kept { part, ends_part } if pending.is_empty() && (ends_part || runs.peek().is_none()) => {
                planned.push(Ok(part));
                continue;
            }
            Run::Kept { part, .. } => read(&part)?,
            Run::Nodes(nodes) => nodes,
        };
        for node in nodes {
            let ends = parts::ends_after(pending.len() + 1, &node.name);
            pending.push(node);
            if ends {
                planned.push(Err(std::mem::take(&mut pending)));
            }
        }
    }
    if !pending.is_empty() {
        planned.push(Err(pending));
    }
    let pieces: Vec<Piece> = planned
        .into_par_iter()
        .map(|planned| match planned {
            Ok(kept) => Ok(Piece::Kept(kept)),
            Err(nodes) => Ok(Piece::Written(parts::write_part(writer, &nodes)?, nodes)),
        })
        .collect::<Result<_>>()?;
    let refs: Vec<PartRef> = pieces.iter().map(|p| p.part().clone()).collect();
    Ok(Stored::Parted(parts::write_index(writer, &refs)?, pieces))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Store;
    use crate::error::Error;
    use crate::tree::parts::{Layout, layout, read_part};

    fn node(name: &str, mtime_ns: i64) -> Node {
        Node { mtime_ns, ..crate::tree::parts::tests::node(name, Default::default()) }
    }

    fn names(n: usize, step: usize) -> Vec<String> {
        let mut names: Vec<String> = (0..n).map(|i| format!("f{:07}", i * step)).collect();
        names.sort();
        names
    }

    /// Stores `old`, then `new` as runs that keep every part of `old` whose nodes `new` has
    /// unchanged (as a capture by names would), and checks that the id is the one `new`
    /// stored whole gets. Returns how many parts were kept, and how many of them were read.
    fn rewrite(store: &Store, old: &Tree, new: &Tree) -> (usize, usize) {
        let writer = BlobWriter::new(store);
        let old_id = crate::tree::write(&writer, old).unwrap();
        let whole_id = crate::tree::write(&writer, new).unwrap();
        writer.finish().unwrap();
        let Layout::Parted(old_parts) = layout(&old_id, &store.read_blob(&old_id).unwrap()).unwrap() else {
            panic!("the old tree is not parted")
        };
        let read_count = std::sync::atomic::AtomicUsize::new(0);
        let read = |part: &PartRef| {
            read_count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            read_part(&old_id, part, None, |id| store.read_blob(id))
        };
        // A part is kept when `new` holds exactly its nodes over its range of names.
        let mut runs = Vec::new();
        let mut rest = new.nodes.as_slice();
        let mut kept = 0;
        for (i, part) in old_parts.iter().enumerate() {
            let next = old_parts.get(i + 1).map(|p| p.first.as_slice());
            let old_nodes = read_part(&old_id, part, None, |id| store.read_blob(id)).unwrap();
            let lo = if i == 0 { 0 } else { rest.partition_point(|n| n.name < part.first) };
            let hi = next.map_or(rest.len(), |next| rest.partition_point(|n| n.name.as_slice() < next));
            if lo > 0 {
                runs.push(Run::Nodes(rest[..lo].to_vec()));
            }
            if rest[lo..hi] == old_nodes[..] {
                runs.push(Run::Kept { part: part.clone(), ends_part: next.is_some() });
                kept += 1;
            } else {
                runs.push(Run::Nodes(rest[lo..hi].to_vec()));
            }
            rest = &rest[hi..];
        }
        if !rest.is_empty() {
            runs.push(Run::Nodes(rest.to_vec()));
        }
        let writer = BlobWriter::new(store);
        let stored = write_runs(&writer, runs, read).unwrap();
        writer.finish().unwrap();
        assert_eq!(stored.id(), whole_id, "the same id as the tree stored whole");
        assert_eq!(crate::tree::read_tree(store, &stored.id()).unwrap(), *new);
        (kept, read_count.into_inner())
    }

    #[test]
    fn a_change_keeps_the_untouched_parts_unread_and_the_id_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        let old = Tree { nodes: names(6_000, 2).iter().map(|n| node(n, 1)).collect() };
        let parts = split_count(&old);

        // One file changed: every other part is kept, none read.
        let mut one = old.clone();
        one.nodes[3_000].mtime_ns = 2;
        assert_eq!(rewrite(&store, &old, &one), (parts - 1, 0));

        // A file added at the end, after the old last part (which ended with the nodes).
        let mut appended = old.clone();
        appended.nodes.push(node("g", 1));
        let (kept, read) = rewrite(&store, &old, &appended);
        assert_eq!((kept, read), (parts - 1, 0));

        // Shrunk to a tree stored whole: the kept parts are read.
        let small = Tree { nodes: old.nodes[..900].to_vec() };
        let (kept, read) = rewrite(&store, &old, &small);
        assert_eq!(read, kept);
    }

    fn split_count(tree: &Tree) -> usize {
        parts::split(&tree.nodes).len()
    }

    #[test]
    fn a_kept_part_that_cannot_be_taken_as_it_is_is_read_and_a_failed_read_fails_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        let old = Tree { nodes: names(3_000, 1).iter().map(|n| node(n, 1)).collect() };
        let writer = BlobWriter::new(&store);
        let old_id = crate::tree::write(&writer, &old).unwrap();
        writer.finish().unwrap();
        let Layout::Parted(old_parts) = layout(&old_id, &store.read_blob(&old_id).unwrap()).unwrap() else {
            panic!("not parted")
        };
        // Two nodes before the first kept part: a part is still open when it comes.
        let mut runs = vec![Run::Nodes(vec![node("a", 1), node("b", 1)])];
        runs.extend(
            old_parts
                .iter()
                .enumerate()
                .map(|(i, p)| Run::Kept { part: p.clone(), ends_part: i + 1 < old_parts.len() }),
        );
        let writer = BlobWriter::new(&store);
        let failing = |_: &PartRef| -> Result<Vec<Node>> { Err(Error::not_found("no part")) };
        assert!(write_runs(&writer, runs, failing).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn any_change_gives_the_id_of_the_tree_stored_whole(
            size in 1_100usize..4_000,
            edits in proptest::collection::vec((0usize..4_000, 0u8..3), 0..40),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(&dir.path().join("store")).unwrap();
            let old = Tree { nodes: names(size, 3).iter().map(|n| node(n, 1)).collect() };
            let mut new = old.clone();
            for (at, what) in edits {
                let at = at % new.nodes.len().max(1);
                match what {
                    0 if !new.nodes.is_empty() => { new.nodes.remove(at); }
                    1 if !new.nodes.is_empty() => new.nodes[at].mtime_ns += 1,
                    _ => {
                        let name = format!("{}+", String::from_utf8_lossy(&new.nodes[at].name));
                        if new.nodes.get(at + 1).is_none_or(|n| n.name.as_slice() > name.as_bytes()) {
                            new.nodes.insert(at + 1, node(&name, 1));
                        }
                    }
                }
            }
            rewrite(&store, &old, &new);
        }
    }
}
