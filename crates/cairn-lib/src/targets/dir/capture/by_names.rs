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
//! A large directory's tree and row are in parts, cut at the same names. A part of the tree
//! that holds no directory and no name the journal gives, and whose part of files trusts all
//! its entries and was written with that very part of the tree, is read neither from the tree
//! nor from the row: the new tree keeps it by id (`tree/rewrite.rs`), and its part of files
//! stays as stored. A change to a few files of a directory of 20,000 reads and writes their
//! parts and the two indexes.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::IGNORE_FILES;
use super::file::Cached;
use super::found::Found;
use super::summary::{DirCtx, PartsCtx};
use super::walk::{Above, At, Looked, Walk, gather, look_all};
use crate::error::Result;
use crate::id::ObjectId;
use crate::targets::dir::journal::{at_or_below, parent};
use crate::targets::dir::statcache::{DirFiles, PartIndex, Stamp, StoredFiles};
use crate::tree::parts::{self, Layout};
use crate::tree::rewrite::Run;
use crate::tree::{Node, NodeKind};

impl Walk<'_> {
    /// The tree of directory `rel` from the entries the journal names, or `None` when the
    /// directory must be listed whole; what it finds goes into `found`.
    pub(super) fn dir_by_names(
        &self,
        abs: &Path,
        rel: &[u8],
        above: &Above,
        found: &mut Found,
    ) -> Result<Option<ObjectId>> {
        let Some(plan) = &self.journal.plan else { return Ok(None) };
        let Some(changed) = plan.changed_names(rel) else { return Ok(None) };
        if changed.iter().any(|n| IGNORE_FILES.iter().any(|f| f.as_bytes() == n.as_slice())) {
            return Ok(None);
        }
        if above.forced.iter().any(|f| at_or_below(rel, f)) {
            return Ok(None);
        }
        let (old_meta, stored) = self.old_cache.row_stored(rel)?;
        let (Some(meta), Some(stored)) = (&old_meta, stored) else { return Ok(None) };
        let Some(summary) = meta.summary.as_ref().filter(|s| s.settled) else { return Ok(None) };
        if !self.writer.vouches_everything()? {
            return Ok(None);
        }
        // An old tree that cannot be read is a reason to look, not to fail the save.
        let Ok(Some(Old { nodes: old_nodes, files: old_files, parts, stored_index, skipped })) =
            self.old_of(rel, &summary.tree, stored, changed)
        else {
            return Ok(None);
        };
        // One pass over the old tree and the old row, both sorted by name: a file the journal
        // does not name keeps its node and its cache entry (moved, not copied); every other
        // entry of the row stays in `rest`, for the entries looked at.
        let DirFiles { scan_started_ns: since, entries } = old_files;
        let old_len = entries.len();
        let trusted = |stamp: &Stamp| stamp.mtime_ns < since && stamp.ctime_ns < since;
        let mut look: BTreeSet<Vec<u8>> = changed.iter().cloned().collect();
        let mut entries = entries.into_iter().peekable();
        let (mut rest, mut kept) = (Vec::new(), Vec::with_capacity(entries.len()));
        let mut nodes = Vec::with_capacity(old_nodes.len());
        // Counted here and added once: the shared counters are contended across threads.
        let (mut files, mut bytes, mut symlinks) = (0, 0, 0);
        for node in old_nodes {
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
                found.ignored(path, *is_dir);
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
                None => found.secret(path, rule),
                Some(entry) if trusted(&entry.stamp) => {
                    found.secret(path, rule);
                    kept.push((name, entry.clone()));
                }
                Some(_) => {
                    look.insert(name);
                }
            }
        }
        let mut ctx = DirCtx {
            old: Some(old_files),
            old_len: Some(old_len),
            new: kept.into_iter().map(|entry| Cached::New(Box::new(entry))).collect(),
            misses: AtomicU64::new(0),
            parts,
            stored_index,
        };
        let matchers = self.matchers(abs, above.matchers, above.in_git, &|_| true)?;
        let at = At {
            abs,
            rel,
            matchers: &matchers,
            in_git: above.in_git,
            forced: above.forced,
            cache: &ctx,
            row: old_meta.as_ref(),
        };
        let looked = look_all(look.into_iter().collect(), |name: Vec<u8>| {
            match std::fs::symlink_metadata(abs.join(OsStr::from_bytes(&name))) {
                // Removed since the last capture: a listing would not show it either.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Ok(Looked { node: None, cached: None, found: None })
                }
                meta => self.entry(&at, name, meta),
            }
        })?;
        let mut looked_nodes = Vec::new();
        gather(looked, &mut looked_nodes, &mut ctx.new, found);
        let nodes = merge_by_name(nodes, looked_nodes);
        self.journal.by_names.fetch_add(1, Ordering::Relaxed);
        self.finish_dir(rel, runs(nodes, skipped), ctx, old_meta, found).map(Some)
    }

    /// What the last capture left of directory `rel`, whose tree was `tree` and whose row's
    /// files are `stored`: the nodes and entries to look through, and the parts of a large
    /// directory taken unread. Parts of the tree that hold no directory and no name in
    /// `changed`, and whose part of files vouches for every file in them, are not read.
    fn old_of(
        &self,
        rel: &[u8],
        tree: &ObjectId,
        stored: StoredFiles,
        changed: &[Vec<u8>],
    ) -> Result<Option<Old>> {
        let tree_parts = match parts::layout(tree, &self.writer.read_object(tree)?)? {
            Layout::Whole(old_tree) => {
                // The last snapshot's tree, which an in-place restore diffs against the live one.
                if self.writer.store().trees().would_keep(old_tree.nodes.len()) {
                    self.writer.remember_tree(*tree, old_tree.clone());
                }
                let (files, stored_index) = match stored {
                    StoredFiles::Whole(files) => (Some(files), None),
                    StoredFiles::Parts(index) => {
                        let files =
                            self.old_cache.stored_whole(rel, Some(StoredFiles::Parts(index.clone())))?;
                        (files, Some(index))
                    }
                };
                let Some(files) = files else { return Ok(None) };
                let old =
                    Old { nodes: old_tree.nodes, files, parts: None, stored_index, skipped: Vec::new() };
                return Ok(Some(old));
            }
            Layout::Parted(tree_parts) => tree_parts,
        };
        let index = match stored {
            StoredFiles::Parts(index) => index,
            StoredFiles::Whole(files) => {
                let all: Vec<usize> = (0..tree_parts.len()).collect();
                let nodes = self.writer.read_tree_parts(tree, &tree_parts, &all)?.concat();
                return Ok(Some(Old { nodes, files, parts: None, stored_index: None, skipped: Vec::new() }));
            }
        };

        // The part of files that spans each tree part's range, if it vouches for all of it.
        let vouching: Vec<Option<usize>> = tree_parts
            .iter()
            .enumerate()
            .map(|(j, part)| {
                let key = if j == 0 { &[][..] } else { part.first.as_slice() };
                let next = tree_parts.get(j + 1).map(|p| p.first.as_slice());
                let k = index.part_spanning(key, next)?;
                let files = &index.parts[k];
                let vouches =
                    part.dirs == 0 && files.trusted && files.tree.as_ref().is_some_and(|t| t.id == part.id);
                vouches.then_some(k)
            })
            .collect();
        let mut skip: Vec<bool> = vouching.iter().map(Option::is_some).collect();
        for name in changed {
            let j = tree_parts.partition_point(|p| p.first.as_slice() <= name.as_slice()).saturating_sub(1);
            skip[j] = false;
        }
        let mut unread = vec![false; index.parts.len()];
        let mut kept = HashMap::new();
        let (mut files, mut bytes, mut symlinks) = (0, 0, 0);
        let mut skipped = Vec::new();
        for (j, part) in tree_parts.iter().enumerate() {
            if let (true, Some(k)) = (skip[j], vouching[j])
                && let Some(counts) = &index.parts[k].tree
            {
                unread[k] = true;
                (files, bytes, symlinks) = (
                    files + u64::from(counts.files),
                    bytes + counts.bytes,
                    symlinks + u64::from(counts.symlinks),
                );
                kept.insert(part.id, counts.clone());
                skipped.push(Some(Run::Kept { part: part.clone(), ends_part: j + 1 < tree_parts.len() }));
            } else {
                skipped.push(None);
            }
        }
        let to_read: Vec<usize> = (0..tree_parts.len()).filter(|&j| !skip[j]).collect();
        let nodes = self.writer.read_tree_parts(tree, &tree_parts, &to_read)?.concat();

        let mut read = DirFiles { scan_started_ns: i64::MIN, entries: Vec::new() };
        for part in index.parts.iter().zip(&unread).filter(|(_, u)| !**u).map(|(p, _)| p) {
            let Some(files) = self.old_cache.part(rel, &part.key)? else { return Ok(None) };
            // Each entry kept is trusted under its own part's scan time, so under the latest.
            read.scan_started_ns = read.scan_started_ns.max(files.scan_started_ns);
            read.entries.extend(files.into_trusted());
        }
        self.counters.files.fetch_add(files, Ordering::Relaxed);
        self.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.counters.symlinks.fetch_add(symlinks, Ordering::Relaxed);
        let parts = PartsCtx { index, unread, old_tree: *tree, kept };
        Ok(Some(Old { nodes, files: read, parts: Some(parts), stored_index: None, skipped }))
    }
}

/// What the last capture left of a directory looked at by names.
struct Old {
    /// The old tree's nodes, but those of the parts taken unread.
    nodes: Vec<Node>,
    /// The old row's entries, but those of the parts taken unread.
    files: DirFiles,
    parts: Option<PartsCtx>,
    stored_index: Option<PartIndex>,
    /// For each part of a parted old tree, its run when it is taken unread.
    skipped: Vec<Option<Run>>,
}

/// The new tree's runs: the parts taken unread, in their places among `nodes` (sorted, none in
/// the range of a part taken unread).
fn runs(nodes: Vec<Node>, skipped: Vec<Option<Run>>) -> Vec<Run> {
    if skipped.iter().all(Option::is_none) {
        return vec![Run::Nodes(nodes)];
    }
    let mut runs = Vec::with_capacity(skipped.len());
    let mut nodes = nodes.into_iter().peekable();
    let mut pending = Vec::new();
    for kept in skipped.into_iter().flatten() {
        let Run::Kept { part, .. } = &kept else { continue };
        pending.extend(std::iter::from_fn(|| nodes.next_if(|n| n.name < part.first)));
        if !pending.is_empty() {
            runs.push(Run::Nodes(std::mem::take(&mut pending)));
        }
        runs.push(kept);
    }
    pending.extend(nodes);
    if !pending.is_empty() {
        runs.push(Run::Nodes(pending));
    }
    runs
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
