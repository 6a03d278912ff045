//! Differences between two Merkle trees. Equal subtree ids are skipped without being read, so the
//! cost follows the changed subtrees, not the size of the tree; two large directories stored in
//! parts are compared part by part, and the parts both hold are not read either.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::parts::PartRef;
use super::{Node, NodeKind, Tree};
use crate::error::Result;
use crate::id::ObjectId;

/// Reads trees for a diff (from the store, or from a live scan held in memory).
pub trait TreeSource: Sync {
    /// The tree with id `id` (shared: a large one may be kept for the next read).
    fn tree(&self, id: &ObjectId) -> Result<Arc<Tree>>;

    /// Tree `id` as it is stored: its nodes, or, for a large directory, the index of its parts,
    /// unread.
    fn shape(&self, id: &ObjectId) -> Result<Shape> {
        self.tree(id).map(Shape::Whole)
    }

    /// Whether trees `old` and `new` are known to differ only in the mtimes of files and
    /// links below them (the store's catalog remembers pairs a restore's plan found so).
    fn alike(&self, _old: &ObjectId, _new: &ObjectId) -> bool {
        false
    }
}

/// A tree as a diff first sees it.
pub enum Shape {
    /// A tree stored whole, decoded.
    Whole(Arc<Tree>),
    /// A large tree stored in parts: the index of its parts, unread.
    Parted(Vec<PartRef>),
}

/// One difference: the node before and after (absent when added or removed).
#[derive(Debug, Clone)]
pub struct Change {
    /// Path relative to the root, `/`-separated raw bytes.
    pub path: Vec<u8>,
    /// The node before (`None` when added).
    pub old: Option<Node>,
    /// The node after (`None` when removed).
    pub new: Option<Node>,
}

/// Walks two trees in step.
pub struct TreeDiff<'a> {
    pub(crate) source: &'a dyn TreeSource,
    /// Report every entry inside an added or removed directory (for people), or only the
    /// directory itself (for a restore plan, which creates or removes it whole).
    pub expand: bool,
    /// Trees read so far: lets tests check that unchanged subtrees were never opened.
    pub trees_read: AtomicU64,
    /// Each pair of differing trees compared: the directory's path, the older side's tree and
    /// the newer side's.
    pub descended: std::sync::Mutex<Vec<(Vec<u8>, ObjectId, ObjectId)>>,
    /// Skip a pair the source knows to differ only in mtimes (for a plan that leaves them alone).
    pub skip_alike: bool,
    /// With `skip_alike`: pairs of parts of the same names, one on each side of a parted
    /// directory, found to differ only in the mtimes of their files and links.
    pub parts_alike: std::sync::Mutex<Vec<(ObjectId, ObjectId)>>,
    /// Directories where a pair of parts known to differ only in mtimes was left out.
    pub left_alike_in: std::sync::Mutex<Vec<Vec<u8>>>,
}

/// The parts of a tree a diff read, by id.
type PartsRead = HashMap<ObjectId, Arc<Tree>>;

/// Pairs of parts, one of `a` and one of `b`, neither in `left_out`, that start at the same name
/// and hold as many nodes and no directory: the pairs that may differ only in mtimes.
fn same_names<'p>(
    a: &'p [PartRef],
    b: &'p [PartRef],
    left_out: &HashSet<&ObjectId>,
) -> Vec<(&'p PartRef, &'p PartRef)> {
    let candidate = |p: &&PartRef| p.dirs == 0 && !left_out.contains(&p.id);
    let by_first: HashMap<&[u8], &PartRef> =
        b.iter().filter(candidate).map(|p| (p.first.as_slice(), p)).collect();
    a.iter()
        .filter(candidate)
        .filter_map(|x| by_first.get(x.first.as_slice()).filter(|y| y.nodes == x.nodes).map(|y| (x, *y)))
        .collect()
}

/// True when `x` and `y` hold the same files and links, but for their mtimes.
fn but_for_mtimes(x: &[Node], y: &[Node]) -> bool {
    x.len() == y.len()
        && x.iter().zip(y).all(|(x, y)| {
            !matches!(x.kind, NodeKind::Dir { .. })
                && (&x.name, &x.kind, x.mode, x.uid, x.gid, &x.extra)
                    == (&y.name, &y.kind, y.mode, y.uid, y.gid, &y.extra)
        })
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    if prefix.is_empty() {
        name.to_vec()
    } else {
        let mut p = Vec::with_capacity(prefix.len() + 1 + name.len());
        p.extend_from_slice(prefix);
        p.push(b'/');
        p.extend_from_slice(name);
        p
    }
}

impl<'a> TreeDiff<'a> {
    /// A diff reading its trees from `source`; `expand` as the field says.
    pub fn new(source: &'a dyn TreeSource, expand: bool) -> Self {
        Self {
            source,
            expand,
            trees_read: AtomicU64::new(0),
            descended: Default::default(),
            skip_alike: false,
            parts_alike: Default::default(),
            left_alike_in: Default::default(),
        }
    }

    fn read(&self, id: &ObjectId) -> Result<Arc<Tree>> {
        self.trees_read.fetch_add(1, Ordering::Relaxed);
        self.source.tree(id)
    }

    /// Tree `id`, or the index of its parts (a read of the tree's own object either way).
    fn shape(&self, id: &ObjectId) -> Result<Shape> {
        self.trees_read.fetch_add(1, Ordering::Relaxed);
        self.source.shape(id)
    }

    /// Appends the differences between trees `old` and `new` (below `prefix`) to `out`.
    pub fn trees(&self, prefix: &[u8], old: &ObjectId, new: &ObjectId, out: &mut Vec<Change>) -> Result<()> {
        if old == new || (self.skip_alike && self.source.alike(old, new)) {
            return Ok(());
        }
        self.descended.lock().unwrap_or_else(|p| p.into_inner()).push((prefix.to_vec(), *old, *new));
        let (a, b) = match (self.shape(old)?, self.shape(new)?) {
            // A part both sides hold has the same nodes on both: leaving it out of both leaves
            // the same differences, and it is never read.
            (Shape::Parted(a), Shape::Parted(b)) => {
                let in_a: HashSet<&ObjectId> = a.iter().map(|p| &p.id).collect();
                let mut left_out: HashSet<&ObjectId> =
                    b.iter().map(|p| &p.id).filter(|id| in_a.contains(id)).collect();
                // So is a pair of parts of the same names known to differ only in mtimes; the
                // other pairs that may are checked once read.
                let mut pairs = Vec::new();
                if self.skip_alike {
                    for (x, y) in same_names(&a, &b, &left_out) {
                        if self.source.alike(&x.id, &y.id) {
                            left_out.extend([&x.id, &y.id]);
                            self.left_alike_in
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(prefix.to_vec());
                        } else {
                            pairs.push((x.id, y.id));
                        }
                    }
                }
                let (a, a_parts) = self.unshared(old, &a, &left_out)?;
                let (b, b_parts) = self.unshared(new, &b, &left_out)?;
                for (x, y) in pairs {
                    if let (Some(x_nodes), Some(y_nodes)) = (a_parts.get(&x), b_parts.get(&y))
                        && but_for_mtimes(&x_nodes.nodes, &y_nodes.nodes)
                    {
                        self.parts_alike.lock().unwrap_or_else(|p| p.into_inner()).push((x, y));
                    }
                }
                (a, b)
            }
            (a, b) => (self.whole(old, a)?, self.whole(new, b)?),
        };
        let (mut i, mut j) = (0, 0);
        while i < a.nodes.len() || j < b.nodes.len() {
            let order = match (a.nodes.get(i), b.nodes.get(j)) {
                (Some(x), Some(y)) => x.name.cmp(&y.name),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            match order {
                std::cmp::Ordering::Less => {
                    self.one_side(prefix, &a.nodes[i], true, out)?;
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    self.one_side(prefix, &b.nodes[j], false, out)?;
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    self.nodes(prefix, &a.nodes[i], &b.nodes[j], out)?;
                    i += 1;
                    j += 1;
                }
            }
        }
        Ok(())
    }

    /// The tree `shape` of id `id` is, with its parts read if it has any.
    fn whole(&self, id: &ObjectId, shape: Shape) -> Result<Arc<Tree>> {
        match shape {
            Shape::Whole(tree) => Ok(tree),
            Shape::Parted(_) => self.read(id),
        }
    }

    /// The nodes of the parts of tree `id` (`parts`) that are not in `left_out`, in order, and
    /// each part read by its id. Each part read is checked against the index, as reading the
    /// tree whole checks them all.
    fn unshared(
        &self,
        id: &ObjectId,
        parts: &[PartRef],
        left_out: &HashSet<&ObjectId>,
    ) -> Result<(Arc<Tree>, PartsRead)> {
        let unshared: Vec<usize> = (0..parts.len()).filter(|&i| !left_out.contains(&parts[i].id)).collect();
        let read: Vec<Arc<Tree>> =
            unshared.par_iter().map(|&i| self.read(&parts[i].id)).collect::<Result<_>>()?;
        let mut nodes: Vec<Node> =
            Vec::with_capacity(unshared.iter().map(|&i| parts[i].nodes as usize).sum());
        let mut by_id = HashMap::with_capacity(unshared.len());
        for (i, tree) in unshared.into_iter().zip(read) {
            let part = &parts[i];
            super::parts::check_part(id, part, parts.get(i + 1), &tree.nodes)?;
            nodes.extend(tree.nodes.iter().cloned());
            by_id.insert(part.id, tree);
        }
        Ok((Arc::new(Tree { nodes }), by_id))
    }

    /// Compares two entries of the same name.
    pub fn nodes(&self, prefix: &[u8], x: &Node, y: &Node, out: &mut Vec<Change>) -> Result<()> {
        if x == y {
            return Ok(());
        }
        let path = join(prefix, &x.name);
        match (&x.kind, &y.kind) {
            (NodeKind::Dir { tree: t1 }, NodeKind::Dir { tree: t2 }) => {
                let meta_changed = x.mode != y.mode || x.uid != y.uid || x.gid != y.gid || x.extra != y.extra;
                if meta_changed {
                    out.push(Change { path: path.clone(), old: Some(x.clone()), new: Some(y.clone()) });
                }
                self.trees(&path, t1, t2, out)
            }
            (NodeKind::Dir { .. }, _) | (_, NodeKind::Dir { .. }) if self.expand => {
                self.one_side(prefix, x, true, out)?;
                self.one_side(prefix, y, false, out)
            }
            _ => {
                out.push(Change { path, old: Some(x.clone()), new: Some(y.clone()) });
                Ok(())
            }
        }
    }

    fn one_side(&self, prefix: &[u8], node: &Node, removed: bool, out: &mut Vec<Change>) -> Result<()> {
        let path = join(prefix, &node.name);
        let (old, new) = if removed { (Some(node.clone()), None) } else { (None, Some(node.clone())) };
        out.push(Change { path: path.clone(), old, new });
        if self.expand
            && let NodeKind::Dir { tree } = &node.kind
        {
            for child in &self.read(tree)?.nodes {
                self.one_side(&path, child, removed, out)?;
            }
        }
        Ok(())
    }
}
