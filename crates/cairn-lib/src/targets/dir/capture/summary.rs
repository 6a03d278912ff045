//! Finishing a listed directory: its tree is written, and what the next capture needs of it
//! (its stat cache row, and with a watcher its summary) goes into what the walk found; once the
//! walk is done, the summaries and the subtrees' totals are joined to the rows.
//!
//! Writes trees through the capture's writer and reads the old stat cache; records only into
//! the directory's `Found`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use super::RelPath;
use super::file::Cached;
use super::found::{Found, LeftOut};
use super::walk::Walk;
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::targets::dir::journal::{self, DirSummary};
use crate::targets::dir::statcache::{CacheEntry, DirFiles, PartIndex, RowMeta, Totals, TreePart, join};
use crate::targets::dir::statcache_encode::{Unread, encode_with_tree};
use crate::targets::dir::statcache_write::WalkedDir;
use crate::tree::parts::PartRef as TreeRef;
use crate::tree::rewrite::{self, Piece, Run, Stored};
use crate::tree::{self, NodeKind};

/// The stat cache's part of listing one directory: its stored row, and its new entries.
pub(super) struct DirCtx {
    pub old: Option<DirFiles>,
    /// How many files the stored row held (`old` may hold only some of them).
    pub old_len: Option<usize>,
    /// The new entries: those kept unlooked at, then, once the entries looked at are back,
    /// theirs.
    pub new: Vec<Cached>,
    /// Files the stored row could not vouch for (read again).
    pub misses: AtomicU64,
    /// For a large directory looked at by names, its row's parts: `old` holds the entries of
    /// the parts read, `old_len` counts them, and only those parts are written again.
    pub parts: Option<PartsCtx>,
    /// The stored row's index of parts, when it has one and `parts` does not hold it: a row
    /// not cut where the new tree's parts are is written again even when no entry changed, so
    /// that the next capture by names can take parts unread.
    pub stored_index: Option<PartIndex>,
}

impl DirCtx {
    /// The stored row's index of parts: the one a capture by names read, or the one it holds.
    fn index(&self) -> Option<&PartIndex> {
        self.parts.as_ref().map(|p| &p.index).or(self.stored_index.as_ref())
    }
}

/// A large directory's parts, and which of them a capture by names left unread.
pub(super) struct PartsCtx {
    pub index: PartIndex,
    pub unread: Vec<bool>,
    /// The last capture's tree of the directory, whose parts the runs keep.
    pub old_tree: ObjectId,
    /// What each tree part kept unread holds, by its id, from its part of files.
    pub kept: HashMap<ObjectId, TreePart>,
}

/// True when the parts of files of `index` are cut where the tree's `pieces` are, each naming
/// its tree part.
fn cut_alike(index: &PartIndex, pieces: &[Piece]) -> bool {
    index.parts.len() == pieces.len()
        && index.parts.iter().zip(pieces).enumerate().all(|(j, (files, piece))| {
            let key_matches = if j == 0 { files.key.is_empty() } else { files.key == piece.part().first };
            key_matches && files.tree.as_ref().is_some_and(|t| t.id == piece.part().id)
        })
}

impl Walk<'_> {
    /// Writes the tree of directory `rel` (given as runs: see `tree/rewrite.rs`), and records
    /// its stat cache row and its summary into `found`.
    pub(super) fn finish_dir(
        &self,
        rel: &[u8],
        runs: Vec<Run>,
        ctx: DirCtx,
        old_meta: Option<RowMeta>,
        found: &mut Found,
    ) -> Result<ObjectId> {
        let old_tree = ctx.parts.as_ref().map(|p| p.old_tree);
        let read = |part: &TreeRef| match old_tree {
            Some(tree) => tree::parts::read_part(&tree, part, None, |id| self.writer.read_object(id)),
            None => Err(Error::corrupt(format!("part {} of no tree is kept", part.id))),
        };
        // Most directories make the tree their row names again, and a large one the parts its
        // index names, which then cost no lookup.
        let index = ctx.index();
        let parts = index.into_iter().flat_map(|i| &i.parts).filter_map(|p| p.tree.as_ref().map(|t| t.id));
        for tree in old_meta.as_ref().and_then(|m| m.tree).into_iter().chain(parts) {
            self.writer.vouch_kept(tree)?;
        }
        let stored = rewrite::write_runs(self.writer, runs, read)?;
        let id = stored.id();
        if let Stored::Parted(_, pieces) = &stored {
            let kept = pieces.iter().filter(|p| matches!(p, Piece::Kept(_))).count();
            self.journal.parts_kept.fetch_add(kept as u64, Ordering::Relaxed);
        }
        if self.journal.record {
            found.summaries.push((rel.to_vec(), summary_of(id, &stored, &ctx)?));
        }
        self.row(rel, &stored, ctx, old_meta, found)?;
        // An in-place restore diffs it next: whole, or, with parts kept unread, by the parts it
        // does not share with the snapshot, of which those written here are kept.
        match stored {
            Stored::Parted(_, pieces) if pieces.iter().any(|p| matches!(p, Piece::Kept(_))) => {
                for piece in pieces {
                    if let Piece::Written(part, nodes) = piece {
                        self.writer.remember_tree(part.id, tree::Tree { nodes });
                    }
                }
            }
            stored => {
                if let Some(tree) = stored.into_tree() {
                    self.writer.remember_tree(id, tree);
                }
            }
        }
        Ok(id)
    }

    /// Records the stat cache row of listed directory `rel`, stored as `stored`. A part of its
    /// tree kept unread holds no directory.
    fn row(
        &self,
        rel: &[u8],
        stored: &Stored,
        ctx: DirCtx,
        old_meta: Option<RowMeta>,
        found: &mut Found,
    ) -> Result<()> {
        let children: Vec<Vec<u8>> = stored
            .written_nodes()
            .filter(|n| matches!(n.kind, NodeKind::Dir { .. }))
            .map(|n| n.name.clone())
            .collect();
        match &old_meta {
            Some(old) => {
                let gone = old.children.iter().filter(|c| !children.contains(c)).map(|c| join(rel, c));
                found.gone.extend(gone);
            }
            None if self.old_cache.is_stored() => {
                found.unknown_children.push((rel.to_vec(), children.clone()));
            }
            None => {}
        }
        let files_changed = ctx.misses.load(Ordering::Relaxed) > 0 || ctx.old_len != Some(ctx.new.len());
        let index = ctx.index();
        let aligned = match (stored, index) {
            (Stored::Whole(..), None) => true,
            (Stored::Parted(_, pieces), Some(index)) => cut_alike(index, pieces),
            _ => false,
        };
        let files = if !files_changed && aligned && self.old_cache.is_stored() {
            None
        } else {
            let mut files = entries(ctx.new, ctx.old)?;
            files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            Some(match ctx.parts {
                Some(PartsCtx { index, unread, .. }) => {
                    let read = |key: &[u8]| self.old_cache.part(rel, key);
                    let old = Unread { index: &index, unread: &unread, read: &read };
                    encode_with_tree(self.scan_started_ns, files, stored, Some(old))?
                }
                None => encode_with_tree(self.scan_started_ns, files, stored, None)?,
            })
        };
        let meta = Some(RowMeta {
            summary: None,
            children,
            totals: None,
            tree: Some(stored.id()),
            below: Vec::new(),
        });
        found.rows.push(WalkedDir { rel: rel.to_vec(), files, old_meta, meta });
        Ok(())
    }
}

/// The entries `new` names, those kept moved out of the old row `old` they point into (each
/// file is looked at once, so no place is kept twice).
fn entries(new: Vec<Cached>, old: Option<DirFiles>) -> Result<Vec<(Vec<u8>, CacheEntry)>> {
    let mut old: Vec<Option<_>> = old.map_or_else(Vec::new, |o| o.entries.into_iter().map(Some).collect());
    new.into_iter()
        .map(|cached| match cached {
            Cached::New(entry) => Ok(*entry),
            Cached::Kept(i) => old
                .get_mut(i)
                .and_then(Option::take)
                .ok_or_else(|| Error::corrupt(format!("stat cache entry {i} was kept from no row"))),
        })
        .collect()
}

/// The summary of a directory whose tree `id` was written as `stored`: what it holds, counting
/// the parts kept unread from their parts of files.
fn summary_of(id: ObjectId, stored: &Stored, ctx: &DirCtx) -> Result<DirSummary> {
    let mut summary = DirSummary::new(id);
    for node in stored.written_nodes() {
        match &node.kind {
            NodeKind::File { size, .. } => {
                summary.files += 1;
                summary.bytes += size;
            }
            NodeKind::Dir { .. } => summary.subdirs += 1,
            NodeKind::Symlink { .. } => summary.symlinks += 1,
        }
    }
    if let (Stored::Parted(_, pieces), Some(parts)) = (stored, &ctx.parts) {
        for piece in pieces {
            if let Piece::Kept(part) = piece {
                let counts = parts
                    .kept
                    .get(&part.id)
                    .ok_or_else(|| Error::corrupt(format!("part {} was kept without its counts", part.id)))?;
                summary.files += u64::from(counts.files);
                summary.bytes += counts.bytes;
                summary.symlinks += u64::from(counts.symlinks);
            }
        }
    }
    Ok(summary)
}

/// The listed directories' rows, with their summaries and their subtrees' totals, summed
/// bottom-up from the directories below: listed, or taken whole (`reused`, with their trees).
/// Each row also says what its subdirectories' rows say of them ([`RowMeta::below`]).
pub(super) fn with_totals(
    mut rows: Vec<WalkedDir>,
    mut summaries: BTreeMap<RelPath, DirSummary>,
    reused: HashMap<RelPath, (ObjectId, Totals)>,
) -> Vec<WalkedDir> {
    // A directory sorts before everything below it: backwards, children come first.
    rows.sort_by(|a, b| b.rel.cmp(&a.rel));
    let mut done = reused;
    for row in &mut rows {
        let Some(meta) = row.meta.as_mut() else { continue };
        meta.summary = summaries.remove(&row.rel);
        meta.totals = meta.summary.as_ref().and_then(|s| {
            let mut t = Totals {
                files: s.files,
                symlinks: s.symlinks,
                dirs: s.subdirs,
                bytes: s.bytes,
                settled: s.settled,
                left_out: (s.ignored.len() + s.secrets.len()) as u64,
            };
            for child in &meta.children {
                let (_, c) = done.get(&join(&row.rel, child))?;
                t.files += c.files;
                t.symlinks += c.symlinks;
                t.dirs += c.dirs;
                t.bytes += c.bytes;
                t.settled &= c.settled;
                t.left_out += c.left_out;
            }
            Some(t)
        });
        meta.below = meta
            .children
            .iter()
            .filter_map(|child| done.get(&join(&row.rel, child)).map(|(tree, t)| (child.clone(), *tree, *t)))
            .collect();
        meta.below.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if let (Some(s), Some(t)) = (&meta.summary, meta.totals) {
            done.insert(row.rel.clone(), (s.tree, t));
        }
    }
    rows
}

/// The directory summaries of a capture: what each walked directory recorded, with the entries
/// it left out, and unsettled where a file has several links.
pub(super) fn summarize(
    summaries: Vec<(RelPath, DirSummary)>,
    left_out: Vec<(RelPath, LeftOut)>,
    hardlinks: &[Vec<RelPath>],
    linked_outside: &[RelPath],
) -> BTreeMap<RelPath, DirSummary> {
    let mut dirs: BTreeMap<RelPath, DirSummary> = summaries.into_iter().collect();
    for (path, why) in left_out {
        let Some(s) = dirs.get_mut(journal::parent(&path)) else { continue };
        match why {
            LeftOut::Ignored { is_dir } => s.ignored.push((path, is_dir)),
            LeftOut::Secret(rule) => s.secrets.push((path, rule)),
            LeftOut::Unsettled => s.settled = false,
        }
    }
    for path in hardlinks.iter().flatten().chain(linked_outside) {
        if let Some(s) = dirs.get_mut(journal::parent(path)) {
            s.settled = false;
        }
    }
    for s in dirs.values_mut() {
        s.ignored.sort();
        s.secrets.sort();
    }
    dirs
}
