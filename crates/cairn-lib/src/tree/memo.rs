//! Large directory trees kept decoded for the rest of a command. An in-place restore first
//! captures the live tree, which reads the last snapshot's tree of each directory it looks at by
//! names and writes the live one, then diffs the two: for a directory of 20,000 files, decoding
//! both trees again cost as much as the rest of the plan. Trees are content-addressed, so a
//! tree kept under its id is the tree any read of that id would return. Trees are kept only
//! while a [`Keeping`] guard lives (the restore's capture and plan), so no other command holds
//! their memory.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::Tree;
use crate::id::ObjectId;

/// Trees smaller than this decode in less time than keeping them is worth.
const LARGE: usize = 256;
/// The most nodes kept in all (about 15 MB); the oldest trees go first.
const MAX_NODES: usize = 64_000;

#[derive(Default)]
pub(crate) struct TreeMemo {
    /// How many [`Keeping`] guards live: trees are kept while there is one.
    keeping: AtomicUsize,
    held: Mutex<VecDeque<(ObjectId, Arc<Tree>)>>,
}

/// Trees are kept while it lives; when the last one goes, the kept trees go too.
pub(crate) struct Keeping<'m>(&'m TreeMemo);

impl Drop for Keeping<'_> {
    fn drop(&mut self) {
        if self.0.keeping.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.held.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }
}

impl TreeMemo {
    /// Keeps large trees until the guard is dropped.
    pub(crate) fn keeping(&self) -> Keeping<'_> {
        self.keeping.fetch_add(1, Ordering::AcqRel);
        Keeping(self)
    }

    /// True while trees are kept.
    fn is_keeping(&self) -> bool {
        self.keeping.load(Ordering::Acquire) > 0
    }

    /// True when a tree of `nodes` nodes would be kept now (a caller that would copy a tree to
    /// keep it asks first).
    pub(crate) fn would_keep(&self, nodes: usize) -> bool {
        self.is_keeping() && (LARGE..=MAX_NODES).contains(&nodes)
    }

    /// The tree kept under `id`, if any.
    pub(crate) fn get(&self, id: &ObjectId) -> Option<Arc<Tree>> {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.iter().find(|(k, _)| k == id).map(|(_, t)| Arc::clone(t))
    }

    /// Keeps `tree`, the tree of id `id`, when trees are kept and it is large enough to be
    /// worth it.
    pub(crate) fn keep(&self, id: ObjectId, tree: Arc<Tree>) {
        if !self.would_keep(tree.nodes.len()) {
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.iter().any(|(k, _)| *k == id) {
            return;
        }
        held.push_back((id, tree));
        while held.iter().map(|(_, t)| t.nodes.len()).sum::<usize>() > MAX_NODES {
            held.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Extra, Node, NodeKind};

    fn tree(n: usize, tag: u8) -> Arc<Tree> {
        let nodes = (0..n)
            .map(|i| Node {
                name: format!("{i:06}").into_bytes(),
                kind: NodeKind::Symlink { target: vec![tag] },
                mode: 0o777,
                uid: 0,
                gid: 0,
                mtime_ns: 0,
                extra: Extra::default(),
            })
            .collect();
        Arc::new(Tree { nodes })
    }

    #[test]
    fn only_large_trees_are_kept_and_the_oldest_go_past_the_limit() {
        let memo = TreeMemo::default();
        let id = |n: u8| ObjectId::of(&[n]);
        memo.keep(id(9), tree(LARGE, 9));
        assert!(memo.get(&id(9)).is_none(), "not kept without a guard");
        let guard = memo.keeping();
        memo.keep(id(0), tree(LARGE - 1, 0));
        assert!(memo.get(&id(0)).is_none(), "small: not kept");
        memo.keep(id(1), tree(MAX_NODES / 2, 1));
        memo.keep(id(2), tree(MAX_NODES / 2, 2));
        assert_eq!(memo.get(&id(1)).unwrap().nodes[0].kind, NodeKind::Symlink { target: vec![1] });
        memo.keep(id(3), tree(LARGE, 3));
        assert!(memo.get(&id(1)).is_none(), "the oldest went");
        assert!(memo.get(&id(2)).is_some() && memo.get(&id(3)).is_some());
        memo.keep(id(4), tree(MAX_NODES + 1, 4));
        assert!(memo.get(&id(4)).is_none(), "too large to keep");
        drop(guard);
        assert!(memo.get(&id(3)).is_none(), "gone with the guard");
    }
}
