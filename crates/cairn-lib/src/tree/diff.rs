//! Differences between two Merkle trees. Equal subtree ids are skipped without being read, so the
//! cost follows the changed subtrees, not the size of the tree; two large directories stored in
//! parts are compared part by part, and the parts both hold are not read either.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::parts::PartRef;
use super::{Node, NodeKind, Tree};
use crate::error::Result;
use crate::id::ObjectId;

/// Reads trees for a diff (from the store, or from a live scan held in memory).
pub(crate) trait TreeSource: Sync {
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
pub(crate) enum Shape {
    Whole(Arc<Tree>),
    Parted(Vec<PartRef>),
}

/// One difference: the node before and after (absent when added or removed).
#[derive(Debug, Clone)]
pub(crate) struct Change {
    /// Path relative to the root, `/`-separated raw bytes.
    pub path: Vec<u8>,
    pub old: Option<Node>,
    pub new: Option<Node>,
}

/// Walks two trees in step.
pub(crate) struct TreeDiff<'a> {
    pub source: &'a dyn TreeSource,
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
    pub(crate) fn new(source: &'a dyn TreeSource, expand: bool) -> Self {
        Self {
            source,
            expand,
            trees_read: AtomicU64::new(0),
            descended: Default::default(),
            skip_alike: false,
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
    pub(crate) fn trees(
        &self,
        prefix: &[u8],
        old: &ObjectId,
        new: &ObjectId,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        if old == new || (self.skip_alike && self.source.alike(old, new)) {
            return Ok(());
        }
        self.descended.lock().unwrap_or_else(|p| p.into_inner()).push((prefix.to_vec(), *old, *new));
        let (a, b) = match (self.shape(old)?, self.shape(new)?) {
            // A part both sides hold has the same nodes on both: leaving it out of both leaves
            // the same differences, and it is never read.
            (Shape::Parted(a), Shape::Parted(b)) => {
                let in_a: HashSet<&ObjectId> = a.iter().map(|p| &p.id).collect();
                let shared: HashSet<&ObjectId> =
                    b.iter().map(|p| &p.id).filter(|id| in_a.contains(id)).collect();
                (self.unshared(old, &a, &shared)?, self.unshared(new, &b, &shared)?)
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

    /// The nodes of the parts of tree `id` (`parts`) that are not in `shared`, in order. Each
    /// part read is checked against the index, as reading the tree whole checks them all.
    fn unshared(&self, id: &ObjectId, parts: &[PartRef], shared: &HashSet<&ObjectId>) -> Result<Arc<Tree>> {
        let mut nodes: Vec<Node> = Vec::new();
        for part in parts.iter().filter(|p| !shared.contains(&p.id)) {
            let tree = self.read(&part.id)?;
            super::parts::check_part(id, part, &tree.nodes)?;
            if nodes.last().is_some_and(|last| last.name >= part.first) {
                return Err(super::invalid(id, format!("part {} runs past the next one", part.id)));
            }
            nodes.extend(tree.nodes.iter().cloned());
        }
        Ok(Arc::new(Tree { nodes }))
    }

    /// Compares two entries of the same name.
    pub(crate) fn nodes(&self, prefix: &[u8], x: &Node, y: &Node, out: &mut Vec<Change>) -> Result<()> {
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
