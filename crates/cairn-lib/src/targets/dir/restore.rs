//! Restoring a directory snapshot: into a new directory, or in place by applying the plan
//! between the live tree and the snapshot, so the cost follows what differs.

use std::collections::HashSet;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::Progress;
use super::capture::Uncovered;
use super::fsops::{DirHandle, Meta};
use super::materialize::{Materializer, split};
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::Store;
use crate::tree::diff::{Change, TreeDiff, TreeSource};
use crate::tree::parts::Layout;
use crate::tree::{DirRoot, Node, NodeKind};

/// What a restore does to one path.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanEntry {
    /// Path relative to the target.
    pub path: String,
    /// `create`, `rewrite`, `remove`, `replace` (type change) or `chmod`; `keep` for a path an
    /// interrupted restore's continue or abort left as it was written since.
    pub action: String,
    /// The kind the entry will have (`file`, `dir`, `symlink`), or had when removed.
    pub kind: String,
}

/// The plan of an in-place restore: the differences between the live tree and the snapshot.
pub(crate) struct Plan {
    pub changes: Vec<Change>,
    pub top_changed: bool,
    pub relink: bool,
    /// Directories whose entries the plan leaves as the snapshot has them, with their trees
    /// there: every difference the diff found in them is in the plan as found. Once the plan is
    /// applied, each of these trees describes its directory as the live one does, but for the
    /// mtimes of what the apply wrote.
    pub settled_trees: Vec<(Vec<u8>, ObjectId)>,
    /// Pairs of trees (the live one, the snapshot's), whole or parts of a large directory's,
    /// the diff compared and found to differ only in mtimes the plan leaves alone: the next
    /// plan skips them unread.
    pub alike: Vec<(ObjectId, ObjectId)>,
}

impl Plan {
    /// Computes the plan from the live root to the snapshot root. Unless `with_mtimes`, an
    /// entry that differs only in its mtime is left alone: files a restore rewrites carry the
    /// time they were written, so their mtimes differ from the snapshot's by design.
    ///
    /// `uncovered` holds the paths the capture of `live` left out (ignored or skipped): a
    /// directory to be removed that holds some keeps them (only its covered entries go), and a
    /// plan that would have to remove them to change a path's type is refused, before anything
    /// is changed.
    pub(crate) fn between(
        source: &dyn TreeSource,
        live: &DirRoot,
        want: &DirRoot,
        with_mtimes: bool,
        uncovered: &Uncovered,
    ) -> Result<Self> {
        let (NodeKind::Dir { tree: a }, NodeKind::Dir { tree: b }) = (&live.top.kind, &want.top.kind) else {
            return Ok(Self {
                changes: Vec::new(),
                top_changed: false,
                relink: false,
                settled_trees: Vec::new(),
                alike: Vec::new(),
            });
        };
        let mut changes = Vec::new();
        let mut diff = TreeDiff::new(source, false);
        diff.skip_alike = !with_mtimes;
        diff.trees(b"", a, b, &mut changes)?;
        // An mtime left alone leaves the live directory unlike the snapshot's, and so does a
        // difference changed into others (a directory that keeps what the capture left out):
        // such a directory keeps the live tree. Were it to start from the snapshot's, every
        // save by names would look again at each file whose stamp disagrees with the
        // snapshot's node, and read again the parts of its row that hold them, restore after
        // restore, as files left with the time a restore wrote them add up.
        let mut unlike: HashSet<Vec<u8>> = HashSet::new();
        if !with_mtimes {
            changes.retain(|c| match (&c.old, &c.new) {
                (Some(o), Some(n)) => {
                    let differs = o.kind != n.kind
                        || (o.mode, o.uid, o.gid) != (n.mode, n.uid, n.gid)
                        || o.extra != n.extra;
                    if !differs {
                        unlike.insert(split(&c.path).0.to_vec());
                    }
                    differs
                }
                _ => true,
            });
        }
        unlike.extend(diff.left_alike_in.into_inner().unwrap_or_else(|p| p.into_inner()));
        let found: HashSet<Vec<u8>> = changes.iter().map(|c| c.path.clone()).collect();
        let changes = keep_uncovered(source, changes, uncovered)?;
        let planned: HashSet<&[u8]> = changes.iter().map(|c| c.path.as_slice()).collect();
        unlike.extend(found.iter().filter(|p| !planned.contains(p.as_slice())).map(|p| split(p).0.to_vec()));
        let descended = diff.descended.into_inner().unwrap_or_else(|p| p.into_inner());
        let parts_alike = diff.parts_alike.into_inner().unwrap_or_else(|p| p.into_inner());
        // A pair is alike when nothing the plan found below it is more than an mtime: no path
        // found has its directory at or below the pair's.
        let mut holds_found: HashSet<&[u8]> = HashSet::new();
        for path in &found {
            let mut dir = split(path).0;
            while holds_found.insert(dir) && !dir.is_empty() {
                dir = split(dir).0;
            }
        }
        // So is a pair of parts that holds the same names and no directory, but for mtimes.
        let alike = match with_mtimes {
            true => Vec::new(),
            false => descended
                .iter()
                .filter(|(dir, _, _)| !holds_found.contains(dir.as_slice()))
                .map(|(_, old, new)| (*old, *new))
                .chain(parts_alike)
                .collect(),
        };
        let settled_trees = descended
            .into_iter()
            .filter(|(dir, _, _)| !unlike.contains(dir.as_slice()))
            .map(|(dir, _, new)| (dir, new))
            .collect();
        let top_changed = (live.top.mode, live.top.uid, live.top.gid, &live.top.extra)
            != (want.top.mode, want.top.uid, want.top.gid, &want.top.extra);
        Ok(Self { changes, top_changed, relink: live.hardlinks != want.hardlinks, settled_trees, alike })
    }

    /// The plan as entries for people and agents.
    pub(crate) fn entries(&self) -> Vec<PlanEntry> {
        self.changes
            .iter()
            .map(|c| {
                let (action, kind) = match (&c.old, &c.new) {
                    (None, Some(n)) => ("create", n.kind.label()),
                    (Some(o), None) => ("remove", o.kind.label()),
                    (Some(o), Some(n)) if o.kind.label() != n.kind.label() => ("replace", n.kind.label()),
                    (Some(_), Some(n)) if matches!(n.kind, NodeKind::Dir { .. }) => ("chmod", "dir"),
                    (Some(o), Some(n)) if o.kind == n.kind => ("chmod", n.kind.label()),
                    (_, Some(n)) => ("rewrite", n.kind.label()),
                    (None, None) => ("none", "file"),
                };
                PlanEntry {
                    path: String::from_utf8_lossy(&c.path).into_owned(),
                    action: action.into(),
                    kind: kind.into(),
                }
            })
            .collect()
    }

    /// Applies the plan under `root`.
    pub(crate) fn apply(&self, m: &Materializer<'_>, root: &DirHandle, want: &DirRoot) -> Result<()> {
        // A fault point for tests: the process is killed once half the changes are made.
        let made = std::sync::atomic::AtomicUsize::new(0);
        let half = self.changes.len() / 2;
        let made_one = || {
            if made.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == half {
                crate::store::fault::kill_at(crate::store::fault::FaultPoint::RestoreHalfApplied);
            }
        };
        // Files whose content changes are rewritten after every other change, on all cores:
        // each is a file of a directory both trees hold, whose own change (made in order,
        // before its entries') is then done, and no other change depends on one.
        let mut rewrites = Vec::new();
        for change in &self.changes {
            if let Some(rewrite) = rewritten_file(change) {
                // A later member of a hard-link group is linked at the end, not written.
                if m.link_later.contains(&change.path) {
                    made_one();
                } else {
                    rewrites.push(rewrite);
                }
                continue;
            }
            let (parent_rel, name) = split(&change.path);
            let parent = root.open_rel(parent_rel)?;
            match (&change.old, &change.new) {
                (Some(_), None) => parent.remove(name)?,
                (None, Some(node)) => {
                    parent.remove(name)?;
                    m.create(&parent, &change.path, node)?;
                }
                (Some(old), Some(node)) => match (&old.kind, &node.kind) {
                    (NodeKind::Dir { .. }, NodeKind::Dir { .. }) => {
                        let meta = Meta {
                            mode: node.mode,
                            uid: node.uid,
                            gid: node.gid,
                            mtime_ns: None,
                            strip_xattrs: false,
                        };
                        parent.set_meta(name, &meta, false)?;
                        if old.extra.xattrs != node.extra.xattrs {
                            parent.set_xattrs(name, &node.extra.xattrs)?;
                        }
                    }
                    (NodeKind::File { .. }, NodeKind::File { content, .. }) if same_content(old, node) => {
                        // Same content: only metadata moved; keep the file, set mode and owner.
                        let mtime_ns = m.keep_mtime.then_some(node.mtime_ns);
                        let meta = Meta {
                            mode: node.mode,
                            uid: node.uid,
                            gid: node.gid,
                            mtime_ns,
                            strip_xattrs: false,
                        };
                        parent.set_meta(name, &meta, false)?;
                        if old.extra.xattrs != node.extra.xattrs {
                            parent.set_xattrs(name, &node.extra.xattrs)?;
                        }
                        m.refresh(&parent, name, &change.path, (content, &node.extra))?;
                    }
                    _ => {
                        parent.remove(name)?;
                        m.create(&parent, &change.path, node)?;
                    }
                },
                (None, None) => {}
            }
            made_one();
        }
        rewrites.par_iter().try_for_each(|(path, node, content)| {
            m.replace_file(&root.open_rel(split(path).0)?, path, node, content)?;
            made_one();
            Ok::<_, Error>(())
        })?;
        if self.top_changed {
            let meta = Meta {
                mode: want.top.mode,
                uid: want.top.uid,
                gid: want.top.gid,
                mtime_ns: None,
                strip_xattrs: false,
            };
            rustix::fs::fchmod(&root.fd, rustix::fs::Mode::from_raw_mode(meta.mode))
                .map_err(|e| crate::error::Error::io("set the mode of", &root.path, e.into()))?;
            set_top_xattrs(root, want, true)?;
        }
        // A rewritten member of a hard-link group is a new inode: link the group again.
        let linked: HashSet<&[u8]> = want.hardlinks.iter().flatten().map(Vec::as_slice).collect();
        if self.relink || self.changes.iter().any(|c| linked.contains(c.path.as_slice())) {
            m.link_groups(root, &want.hardlinks)?;
        }
        Ok(())
    }
}

/// The path, node and content of a change that rewrites a file's content in place (a file or
/// link that stays or becomes a file, with other content).
fn rewritten_file(change: &Change) -> Option<(&[u8], &Node, &[ObjectId])> {
    let (Some(old), Some(node)) = (&change.old, &change.new) else { return None };
    let NodeKind::File { content, .. } = &node.kind else { return None };
    let rewrite = !matches!(old.kind, NodeKind::Dir { .. }) && !same_content(old, node);
    rewrite.then_some((change.path.as_slice(), node, content.as_slice()))
}

/// Whether file nodes `old` and `new` hold the same bytes in the same layout (only their
/// metadata can differ).
fn same_content(old: &Node, new: &Node) -> bool {
    match (&old.kind, &new.kind) {
        (NodeKind::File { content: a, .. }, NodeKind::File { content: b, .. }) => {
            a == b && old.extra.extents == new.extra.extents
        }
        _ => false,
    }
}

/// Rewrites `changes` so that no path in `uncovered` is removed: a removed directory holding
/// uncovered paths becomes the removal of its covered entries, and a change that would replace
/// such a directory by a file or link is refused.
fn keep_uncovered(
    source: &dyn TreeSource,
    changes: Vec<Change>,
    uncovered: &Uncovered,
) -> Result<Vec<Change>> {
    let mut out = Vec::with_capacity(changes.len());
    for change in changes {
        let lossy = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
        match (&change.old, &change.new) {
            (Some(Node { kind: NodeKind::Dir { tree }, .. }), None)
                if uncovered.first_below(&change.path).is_some() =>
            {
                prune(source, &change.path, tree, uncovered, &mut out)?;
            }
            (Some(Node { kind: NodeKind::Dir { .. }, .. }), Some(new))
                if !matches!(new.kind, NodeKind::Dir { .. }) =>
            {
                if let Some(kept) = uncovered.first_below(&change.path) {
                    return Err(Error::conflict(format!(
                        "the snapshot has a {} at {}, where the live tree has a directory holding {} that snapshots leave out (ignored or skipped); move what is left out of {} elsewhere, then restore again",
                        new.kind.label(),
                        lossy(&change.path),
                        lossy(kept),
                        lossy(&change.path),
                    )));
                }
                out.push(change);
            }
            (None, Some(new)) if uncovered.is_dir(&change.path) => {
                return Err(Error::conflict(format!(
                    "the snapshot has a {} at {}, where the live tree has a directory that snapshots leave out (ignored or skipped); move {} elsewhere, then restore again",
                    new.kind.label(),
                    lossy(&change.path),
                    lossy(&change.path),
                )));
            }
            _ => out.push(change),
        }
    }
    Ok(out)
}

/// Plans the removal of the covered entries of directory `path` (tree `tree`), keeping the
/// directory and every uncovered path below it.
fn prune(
    source: &dyn TreeSource,
    path: &[u8],
    tree: &ObjectId,
    uncovered: &Uncovered,
    out: &mut Vec<Change>,
) -> Result<()> {
    for node in source.tree(tree)?.nodes.iter().cloned() {
        let child = join(path, &node.name);
        match &node.kind {
            NodeKind::Dir { tree } if uncovered.first_below(&child).is_some() => {
                prune(source, &child, tree, uncovered, out)?;
            }
            _ => out.push(Change { path: child, old: Some(node), new: None }),
        }
    }
    Ok(())
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    if prefix.is_empty() { name.to_vec() } else { [prefix, b"/", name].concat() }
}

/// The plan of a restore into a new directory: every entry of the snapshot, created, each
/// directory before its entries.
pub(crate) fn creation_plan(store: &Store, root: &DirRoot) -> Result<Vec<PlanEntry>> {
    fn walk(store: &Store, prefix: &[u8], id: &ObjectId, out: &mut Vec<PlanEntry>) -> Result<()> {
        for node in crate::tree::read_tree(store, id)?.nodes {
            let path = join(prefix, &node.name);
            out.push(PlanEntry {
                path: String::from_utf8_lossy(&path).into_owned(),
                action: "create".into(),
                kind: node.kind.label().into(),
            });
            if let NodeKind::Dir { tree } = &node.kind {
                walk(store, &path, tree, out)?;
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    if let NodeKind::Dir { tree } = &root.top.kind {
        walk(store, b"", tree, &mut out)?;
    }
    Ok(out)
}

/// The later paths of every hard-link group (they are linked, not written).
pub(crate) fn later_links(root: &DirRoot) -> HashSet<Vec<u8>> {
    root.hardlinks.iter().flat_map(|g| g.iter().skip(1).cloned()).collect()
}

/// Files and bytes a fresh restore wrote, and the stat-cache entries of what it wrote.
pub(crate) type Restored = (u64, u64, super::statcache_write::WrittenFiles);

/// Restores `root` into the empty directory `dest` (which exists), keeping the snapshot's
/// times. Returns the files written, for the stat cache of `dest`.
pub(crate) fn restore_fresh(
    store: &Store,
    root: &DirRoot,
    dest: &Path,
    progress: &Progress,
) -> Result<Restored> {
    let handle = DirHandle::open_root(dest)?;
    let mut m = Materializer::new(store, true, later_links(root)).observed(progress);
    // Entries inherit ACLs only from a default ACL of the destination (the ones the restore
    // creates get theirs after their entries): without one there is nothing to strip.
    m.strip_inherited = matches!(xattr::get(dest, "system.posix_acl_default"), Ok(Some(_)));
    if let NodeKind::Dir { tree } = &root.top.kind {
        m.fill(&handle, b"", tree)?;
    }
    m.link_groups(&handle, &root.hardlinks)?;
    set_top_xattrs(&handle, root, m.strip_inherited)?;
    let parent = dest.parent().unwrap_or(Path::new("/"));
    let name = dest.file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default();
    if !name.is_empty() {
        let parent = DirHandle::open_root(parent)?;
        let meta = Meta {
            mode: root.top.mode,
            uid: root.top.uid,
            gid: root.top.gid,
            mtime_ns: Some(root.top.mtime_ns),
            strip_xattrs: false,
        };
        parent.set_meta(&name, &meta, false)?;
    }
    let files = m.files_written.load(std::sync::atomic::Ordering::Relaxed);
    let bytes = m.bytes_written.load(std::sync::atomic::Ordering::Relaxed);
    Ok((files, bytes, m.into_written()))
}

/// Gives the restored top directory the snapshot's extended attributes.
fn set_top_xattrs(root: &DirHandle, want: &DirRoot, strip: bool) -> Result<()> {
    if want.top.extra.xattrs.is_empty() && !strip {
        return Ok(());
    }
    let dir = std::fs::File::from(root.fd.try_clone().map_err(|e| Error::io("open", &root.path, e))?);
    super::xattrs::apply(&dir, &want.top.extra.xattrs, strip)
        .map_err(|e| Error::io("set the extended attributes of", &root.path, e))
}

/// Ids of every object a directory snapshot refers to, added to `live` (for gc and check).
pub(crate) fn referenced(store: &Store, root: &ObjectId, live: &mut HashSet<ObjectId>) -> Result<()> {
    if !live.insert(*root) {
        return Ok(());
    }
    // An object the index does not hold is known lost (a repair dropped it and listed the
    // snapshot): nothing more is reachable through it. One the index holds must read.
    let known_lost = |id: &ObjectId| store.catalog().blob_location(id).map(|l| l.is_none());
    if known_lost(root)? {
        return Ok(());
    }
    let doc = crate::tree::read_root(store, root)?;
    let mut stack = Vec::new();
    if let NodeKind::Dir { tree } = doc.top.kind {
        stack.push(tree);
    }
    while let Some(id) = stack.pop() {
        if !live.insert(id) || known_lost(&id)? {
            continue;
        }
        // A parted tree's parts are trees of their own: each is walked, and kept, as one.
        let tree = match crate::tree::parts::layout(&id, &store.read_blob(&id)?)? {
            Layout::Whole(tree) => tree,
            Layout::Parted(parts) => {
                stack.extend(parts.into_iter().map(|p| p.id));
                continue;
            }
        };
        for node in tree.nodes {
            match node.kind {
                NodeKind::Dir { tree } => stack.push(tree),
                NodeKind::File { content, .. } => live.extend(content),
                NodeKind::Symlink { .. } => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
