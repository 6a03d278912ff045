//! Trees kept decoded for the rest of a command. An in-place restore first captures the live
//! tree, which reads the last snapshot's tree of each directory it looks at by names and writes
//! the live one, then diffs the two: reading each tree again for the diff (a catalog lookup, a
//! pack read, a decompression and a decode each) cost as much as the rest of the plan, for the
//! hundred small trees of a restore as for one large one. Trees are content-addressed, so a
//! tree kept under its id is the tree any read of that id would return. Trees are kept only
//! while a [`Keeping`] guard lives (the restore's capture and plan), so no other command holds
//! their memory.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::Tree;
use crate::id::ObjectId;

/// The most nodes kept in all (about 15 MB); the oldest trees go first.
const MAX_NODES: usize = 64_000;

/// Decoded trees by id, kept while a [`Keeping`] guard lives, the oldest dropped first.
#[derive(Default)]
pub struct TreeMemo {
    /// How many [`Keeping`] guards live: trees are kept while there is one.
    keeping: AtomicUsize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    trees: HashMap<ObjectId, Arc<Tree>>,
    /// The kept ids, oldest first.
    order: VecDeque<ObjectId>,
    nodes: usize,
}

/// Trees are kept while it lives; when the last one goes, the kept trees go too.
pub struct Keeping<'m>(&'m TreeMemo);

impl Drop for Keeping<'_> {
    fn drop(&mut self) {
        if self.0.keeping.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.0.held.lock().unwrap_or_else(|p| p.into_inner()) = Held::default();
        }
    }
}

impl TreeMemo {
    /// Keeps trees until the guard is dropped.
    pub fn keeping(&self) -> Keeping<'_> {
        self.keeping.fetch_add(1, Ordering::AcqRel);
        Keeping(self)
    }

    /// True when a tree of `nodes` nodes would be kept now (a caller that would copy a tree to
    /// keep it asks first).
    pub fn would_keep(&self, nodes: usize) -> bool {
        self.keeping.load(Ordering::Acquire) > 0 && nodes <= MAX_NODES
    }

    /// The tree kept under `id`, if any.
    pub fn get(&self, id: &ObjectId) -> Option<Arc<Tree>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).trees.get(id).cloned()
    }

    /// Keeps `tree`, the tree of id `id`, when trees are kept and it is not too large.
    pub fn keep(&self, id: ObjectId, tree: Arc<Tree>) {
        if !self.would_keep(tree.nodes.len()) {
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let held = &mut *held;
        if held.trees.contains_key(&id) {
            return;
        }
        held.nodes += tree.nodes.len();
        held.trees.insert(id, tree);
        held.order.push_back(id);
        while held.nodes > MAX_NODES {
            let Some(oldest) = held.order.pop_front() else { break };
            if let Some(gone) = held.trees.remove(&oldest) {
                held.nodes -= gone.nodes.len();
            }
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
    fn trees_are_kept_while_a_guard_lives_and_the_oldest_go_past_the_limit() {
        let memo = TreeMemo::default();
        let id = |n: u8| ObjectId::of(&[n]);
        memo.keep(id(9), tree(3, 9));
        assert!(memo.get(&id(9)).is_none(), "not kept without a guard");
        let guard = memo.keeping();
        memo.keep(id(0), tree(3, 0));
        assert!(memo.get(&id(0)).is_some(), "a small tree is kept too");
        memo.keep(id(1), tree(MAX_NODES / 2, 1));
        memo.keep(id(2), tree(MAX_NODES / 2 - 3, 2));
        assert_eq!(memo.get(&id(1)).unwrap().nodes[0].kind, NodeKind::Symlink { target: vec![1] });
        memo.keep(id(3), tree(4, 3));
        assert!(memo.get(&id(0)).is_none() && memo.get(&id(1)).is_none(), "the oldest went");
        assert!(memo.get(&id(2)).is_some() && memo.get(&id(3)).is_some());
        memo.keep(id(4), tree(MAX_NODES + 1, 4));
        assert!(memo.get(&id(4)).is_none(), "too large to keep");
        drop(guard);
        assert!(memo.get(&id(3)).is_none(), "gone with the guard");
    }
}
