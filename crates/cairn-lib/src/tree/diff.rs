//! Differences between two Merkle trees. Equal subtree ids are skipped without being read, so the
//! cost follows the changed subtrees, not the size of the tree.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Node, NodeKind, Tree};
use crate::error::Result;
use crate::id::ObjectId;

/// Reads trees for a diff (from the store, or from a live scan held in memory).
pub(crate) trait TreeSource: Sync {
    /// The tree with id `id` (shared: a large one may be kept for the next read).
    fn tree(&self, id: &ObjectId) -> Result<Arc<Tree>>;
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
    /// Each pair of differing trees compared: the directory's path and the newer side's tree.
    pub descended: std::sync::Mutex<Vec<(Vec<u8>, ObjectId)>>,
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
        Self { source, expand, trees_read: AtomicU64::new(0), descended: Default::default() }
    }

    fn read(&self, id: &ObjectId) -> Result<Arc<Tree>> {
        self.trees_read.fetch_add(1, Ordering::Relaxed);
        self.source.tree(id)
    }

    /// Appends the differences between trees `old` and `new` (below `prefix`) to `out`.
    pub(crate) fn trees(
        &self,
        prefix: &[u8],
        old: &ObjectId,
        new: &ObjectId,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        if old == new {
            return Ok(());
        }
        self.descended.lock().unwrap_or_else(|p| p.into_inner()).push((prefix.to_vec(), *new));
        let (a, b) = (self.read(old)?, self.read(new)?);
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
