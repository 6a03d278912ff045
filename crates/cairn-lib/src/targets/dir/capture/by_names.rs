//! Looking at a directory by the names the watcher's journal gives: the entries that changed
//! are looked at as a listing would, and every other file and link is taken from the tree the
//! last capture wrote, without a `stat`. A directory of 20,000 files with one file written then
//! costs one file, not 20,000.
//!
//! Only what the journal vouches for is taken unseen. Subdirectories are always looked at (their
//! trees change with what is below them), and so is every entry the stat cache cannot vouch for
//! (racy, or not cached). A directory whose ignore files changed, whose last capture was not
//! settled (hard links, skipped entries), or whose old tree or row is gone is listed whole.
//!
//! A large directory's row is in parts: a part that holds no name the journal gives, trusts all
//! its entries, and whose range of the old tree is the one it was written with is not even
//! read; its files' nodes are taken as they were, and the part stays as stored.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ignore::gitignore::Gitignore;
use rayon::prelude::*;

use super::{DirCtx, IGNORE_FILES, PartsCtx, Walk};
use crate::error::Result;
use crate::id::ObjectId;
use crate::targets::dir::journal::{at_or_below, parent};
use crate::targets::dir::statcache::{DirFiles, PartIndex, Stamp, StoredFiles, range_digest};
use crate::targets::dir::statcache_write::in_range;
use crate::tree::{Node, NodeKind, Tree};

impl Walk<'_> {
    /// The tree of directory `rel` from the entries the journal names, or `None` when the
    /// directory must be listed whole.
    pub(super) fn dir_by_names(
        &self,
        abs: &Path,
        rel: &[u8],
        parents: &[Gitignore],
        in_git: bool,
    ) -> Result<Option<ObjectId>> {
        let Some(plan) = &self.journal.plan else { return Ok(None) };
        let Some(changed) = plan.changed_names(rel) else { return Ok(None) };
        if changed.iter().any(|n| IGNORE_FILES.iter().any(|f| f.as_bytes() == n.as_slice())) {
            return Ok(None);
        }
        if self.journal.forced.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|f| at_or_below(rel, f)) {
            return Ok(None);
        }
        let (old_meta, stored) = self.old_cache.row_stored(rel)?;
        let (Some(meta), Some(stored)) = (&old_meta, stored) else { return Ok(None) };
        let Some(summary) = meta.summary.as_ref().filter(|s| s.settled) else { return Ok(None) };
        if !self.writer.vouches_everything()? {
            return Ok(None);
        }
        // An old tree that cannot be read is a reason to look, not to fail the save.
        let Ok(old_tree) = self.writer.read_tree(&summary.tree) else {
            return Ok(None);
        };
        // The last snapshot's tree, which an in-place restore diffs against the live one.
        if self.writer.store().trees.would_keep(old_tree.nodes.len()) {
            self.writer.remember_tree(summary.tree, old_tree.clone());
        }

        let (old_files, parts) = match stored {
            StoredFiles::Whole(files) => (files, None),
            StoredFiles::Parts(index) => {
                let untouched = untouched_parts(&index, &old_tree.nodes, changed);
                let mut read = DirFiles { scan_started_ns: i64::MIN, entries: Vec::new() };
                for part in index.parts.iter().zip(&untouched).filter(|(_, u)| !**u).map(|(p, _)| p) {
                    let Some(files) = self.old_cache.part(rel, &part.key)? else { return Ok(None) };
                    // Each entry kept is trusted under its own part's scan time, so under the latest.
                    read.scan_started_ns = read.scan_started_ns.max(files.scan_started_ns);
                    read.entries.extend(files.into_trusted());
                }
                (read, Some(PartsCtx { index, untouched }))
            }
        };
        let untouched = |name: &[u8]| parts.as_ref().is_some_and(|p| p.untouched[p.index.part_of(name)]);

        // One pass over the old tree and the old row, both sorted by name: a file the journal
        // does not name keeps its node and its cache entry (moved, not copied); every other
        // entry of the row stays in `rest`, for the entries looked at.
        let DirFiles { scan_started_ns: since, entries } = old_files;
        let old_len = entries.len();
        let trusted = |stamp: &Stamp| stamp.mtime_ns < since && stamp.ctime_ns < since;
        let mut look: BTreeSet<Vec<u8>> = changed.iter().cloned().collect();
        let mut entries = entries.into_iter().peekable();
        let (mut rest, mut kept) = (Vec::new(), Vec::with_capacity(entries.len()));
        let mut nodes = Vec::with_capacity(old_tree.nodes.len());
        // Counted here and added once: the shared counters are contended across threads.
        let (mut files, mut bytes, mut symlinks) = (0, 0, 0);
        for node in old_tree.nodes {
            while let Some(earlier) = entries.next_if(|(n, _)| *n < node.name) {
                rest.push(earlier);
            }
            let entry = entries.next_if(|(n, _)| *n == node.name).map(|(_, e)| e);
            // Whether the node is taken as it was, and whether its cache entry is too.
            let (keep_node, keep_entry) = match (&node.kind, &entry) {
                _ if look.contains(&node.name) => (false, false),
                (NodeKind::Dir { .. }, _) => {
                    look.insert(node.name.clone());
                    (false, false)
                }
                // In a part not read: its entry stays where it is stored.
                (NodeKind::File { size, .. }, None) if untouched(&node.name) => {
                    (files, bytes) = (files + 1, bytes + size);
                    (true, false)
                }
                (NodeKind::Symlink { .. }, _) => {
                    symlinks += 1;
                    (true, false)
                }
                (NodeKind::File { size, .. }, Some(e)) if trusted(&e.stamp) && e.stamp.describes(&node) => {
                    (files, bytes) = (files + 1, bytes + size);
                    (true, true)
                }
                (NodeKind::File { .. }, _) => {
                    look.insert(node.name.clone());
                    (false, false)
                }
            };
            match entry {
                Some(e) if keep_entry => kept.push((node.name.clone(), e)),
                Some(e) => rest.push((node.name.clone(), e)),
                None => {}
            }
            if keep_node {
                nodes.push(node);
            }
        }
        rest.extend(entries);
        self.counters.files.fetch_add(files, Ordering::Relaxed);
        self.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.counters.symlinks.fetch_add(symlinks, Ordering::Relaxed);
        let old_files = DirFiles { scan_started_ns: since, entries: rest };

        // What the last capture left out stays left out, unless the journal names it.
        let base = |path: &[u8]| path[parent(path).len()..].strip_prefix(b"/").unwrap_or(path).to_vec();
        for (path, is_dir) in &summary.ignored {
            if !look.contains(&base(path)) {
                self.ignored(path, *is_dir);
            }
        }
        for (path, rule) in &summary.secrets {
            let name = base(path);
            if look.contains(&name) {
                continue;
            }
            match old_files.get(&name) {
                // Left out by its name (nothing was cached), or in a part not read, which
                // trusts every entry it holds.
                None => self.secret(path, rule),
                Some(entry) if trusted(&entry.stamp) => {
                    self.secret(path, rule);
                    kept.push((name, entry.clone()));
                }
                Some(_) => {
                    look.insert(name);
                }
            }
        }
        let ctx = DirCtx {
            old: Some(old_files),
            old_len: Some(old_len),
            new: Mutex::new(kept),
            misses: AtomicU64::new(0),
            parts,
        };
        let matchers = self.matchers(abs, parents, in_git)?;
        let looked: Vec<Option<Node>> = look
            .into_iter()
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|name| match std::fs::symlink_metadata(abs.join(OsStr::from_bytes(&name))) {
                // Removed since the last capture: a listing would not show it either.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                meta => self.entry(abs, rel, name, meta, &matchers, in_git, &ctx),
            })
            .collect::<Result<_>>()?;
        let nodes = merge_by_name(nodes, looked.into_iter().flatten().collect());
        self.journal.by_names.fetch_add(1, Ordering::Relaxed);
        self.finish_dir(rel, Tree { nodes }, ctx, old_meta).map(Some)
    }
}

/// The nodes of `kept` and of `looked`, both sorted by name and with no name in both, as one
/// sorted list. A merge, not a sort: a stable sort of a large directory's nodes took a scratch
/// copy of them all.
fn merge_by_name(kept: Vec<Node>, looked: Vec<Node>) -> Vec<Node> {
    if looked.is_empty() {
        return kept;
    }
    let mut merged = Vec::with_capacity(kept.len() + looked.len());
    let mut looked = looked.into_iter().peekable();
    for node in kept {
        while let Some(earlier) = looked.next_if(|l| l.name < node.name) {
            merged.push(earlier);
        }
        merged.push(node);
    }
    merged.extend(looked);
    merged
}

/// Which parts of a large directory's row need not be read: those that trust every entry,
/// hold no name the journal gives, and whose range of the old tree is the one they were
/// written with.
fn untouched_parts(index: &PartIndex, nodes: &[Node], changed: &[Vec<u8>]) -> Vec<bool> {
    let mut untouched: Vec<bool> = index.parts.iter().map(|p| p.trusted && p.digest.is_some()).collect();
    for name in changed {
        untouched[index.part_of(name)] = false;
    }
    // Only the parts still in the running have their range of the tree hashed.
    for (i, (part, untouched)) in index.parts.iter().zip(&mut untouched).enumerate() {
        if *untouched {
            let next = index.parts.get(i + 1).map(|p| p.key.as_slice());
            *untouched = part.digest == Some(range_digest(in_range(nodes, &part.key, next)));
        }
    }
    untouched
}
