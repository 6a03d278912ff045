//! What a walk finds in a subtree besides its tree: the paths it left out, the hard links it
//! saw, the directories' stat cache rows and journal summaries, and the subtrees it took whole.
//!
//! Each entry and each directory fills its own `Found` and hands it to its parent, which merges
//! it by moving (`merge`): the walk shares no lock, and what it found comes back up the rayon
//! recursion with the trees. Touches nothing but itself; the walk decides what to record.

use std::os::unix::fs::MetadataExt;

use super::{LinkGroup, MAX_LISTED_IGNORED, RelPath, lossy};
use crate::id::ObjectId;
use crate::snapshot::{NotCovered, SecretEntry, SkippedEntry};
use crate::targets::dir::journal::DirSummary;
use crate::targets::dir::statcache::Totals;
use crate::targets::dir::statcache_write::WalkedDir;

/// Why an entry of a walked directory was left out, for its directory's summary.
pub(super) enum LeftOut {
    Ignored {
        is_dir: bool,
    },
    Secret(String),
    /// Skipped or stored while it changed: the next capture looks again.
    Unsettled,
}

/// What a subtree's walk found; in no order (the capture sorts what it keeps).
pub(super) struct Found {
    /// Whether left-out entries and summaries are kept: only when a watcher answered, as
    /// without one the next capture walks anyway.
    record: bool,
    pub not_covered: NotCovered,
    /// Every path left out, and whether it is a directory (`Uncovered`).
    pub uncovered: Vec<(RelPath, bool)>,
    /// Files with several links: (device, inode), link count, path.
    pub links: Vec<((u64, u64), u64, RelPath)>,
    /// The directories listed, for their stat cache rows.
    pub rows: Vec<WalkedDir>,
    /// Directories gone since the last capture, and listed ones whose old subdirectories were
    /// not known (`FreshCache`).
    pub gone: Vec<RelPath>,
    pub unknown_children: Vec<(RelPath, Vec<Vec<u8>>)>,
    /// With `record`: the listed directories' summaries (so also which were listed), and the
    /// entries they left out.
    pub summaries: Vec<(RelPath, DirSummary)>,
    pub left_out: Vec<(RelPath, LeftOut)>,
    /// Roots of the subtrees taken whole, with their trees and totals.
    pub reused: Vec<(RelPath, ObjectId, Totals)>,
}

/// Appends `more` to `all` by moving: the shorter onto the longer, so an element is moved
/// about as often as the depth of the tree doubles, not once per level.
fn append<T>(all: &mut Vec<T>, mut more: Vec<T>) {
    if more.len() > all.len() {
        std::mem::swap(all, &mut more);
    }
    all.append(&mut more);
}

impl Found {
    /// Nothing found yet; nothing is allocated until something is.
    pub(super) fn new(record: bool) -> Self {
        Self {
            record,
            not_covered: NotCovered::default(),
            uncovered: Vec::new(),
            links: Vec::new(),
            rows: Vec::new(),
            gone: Vec::new(),
            unknown_children: Vec::new(),
            summaries: Vec::new(),
            left_out: Vec::new(),
            reused: Vec::new(),
        }
    }

    /// `self` boxed, or none when it holds nothing: most entries are files that find nothing,
    /// and they pass up one empty pointer.
    pub(super) fn boxed(self) -> Option<Box<Self>> {
        let Self {
            record: _,
            not_covered,
            uncovered,
            links,
            rows,
            gone,
            unknown_children,
            summaries,
            left_out,
            reused,
        } = &self;
        let empty = not_covered.ignored == 0
            && not_covered.skipped.is_empty()
            && not_covered.secrets.is_empty()
            && uncovered.is_empty()
            && links.is_empty()
            && rows.is_empty()
            && gone.is_empty()
            && unknown_children.is_empty()
            && summaries.is_empty()
            && left_out.is_empty()
            && reused.is_empty();
        (!empty).then(|| Box::new(self))
    }

    /// Takes in what `other` found, moving it.
    pub(super) fn merge(&mut self, other: Found) {
        let Found {
            record: _,
            not_covered,
            uncovered,
            links,
            rows,
            gone,
            unknown_children,
            summaries,
            left_out,
            reused,
        } = other;
        let nc = &mut self.not_covered;
        nc.ignored += not_covered.ignored;
        let room = MAX_LISTED_IGNORED.saturating_sub(nc.ignored_paths.len());
        nc.ignored_paths.extend(not_covered.ignored_paths.into_iter().take(room));
        append(&mut nc.skipped, not_covered.skipped);
        append(&mut nc.secrets, not_covered.secrets);
        append(&mut self.uncovered, uncovered);
        append(&mut self.links, links);
        append(&mut self.rows, rows);
        append(&mut self.gone, gone);
        append(&mut self.unknown_children, unknown_children);
        append(&mut self.summaries, summaries);
        append(&mut self.left_out, left_out);
        append(&mut self.reused, reused);
    }

    /// The files with several links, grouped by (device, inode).
    pub(super) fn link_groups(&mut self) -> std::collections::HashMap<(u64, u64), LinkGroup> {
        let mut groups = std::collections::HashMap::new();
        for (key, nlink, rel) in std::mem::take(&mut self.links) {
            groups.entry(key).or_insert_with(|| (nlink, Vec::new())).1.push(rel);
        }
        groups
    }

    /// Notes a file of `meta` at `rel` when it has several links.
    pub(super) fn link(&mut self, meta: &std::fs::Metadata, rel: &[u8]) {
        if meta.nlink() > 1 {
            self.links.push(((meta.dev(), meta.ino()), meta.nlink(), rel.to_vec()));
        }
    }

    pub(super) fn skip(&mut self, rel: &[u8], reason: &str, is_dir: bool) {
        self.left_out(rel, LeftOut::Unsettled);
        self.uncovered.push((rel.to_vec(), is_dir));
        self.not_covered.skipped.push(SkippedEntry { path: lossy(rel), reason: reason.to_owned() });
    }

    pub(super) fn ignored(&mut self, rel: &[u8], is_dir: bool) {
        self.left_out(rel, LeftOut::Ignored { is_dir });
        self.note_ignored(rel, is_dir);
    }

    /// Counts `rel` as ignored (for a subtree taken whole, whose summaries already hold it).
    pub(super) fn note_ignored(&mut self, rel: &[u8], is_dir: bool) {
        self.uncovered.push((rel.to_vec(), is_dir));
        let nc = &mut self.not_covered;
        nc.ignored += 1;
        if nc.ignored_paths.len() < MAX_LISTED_IGNORED {
            nc.ignored_paths.push(lossy(rel));
        }
    }

    /// Records `rel` as left out because secret rule `rule` matched.
    pub(super) fn secret(&mut self, rel: &[u8], rule: &str) {
        self.left_out(rel, LeftOut::Secret(rule.to_owned()));
        self.note_secret(rel, rule);
    }

    /// Lists `rel` as a secret left out (for a subtree taken whole).
    pub(super) fn note_secret(&mut self, rel: &[u8], rule: &str) {
        self.uncovered.push((rel.to_vec(), false));
        self.not_covered.secrets.push(SecretEntry { path: lossy(rel), rule: rule.to_owned() });
    }

    /// Lists a file that kept changing while it was read: it is stored as last read.
    pub(super) fn changing(&mut self, rel: &[u8]) {
        self.left_out(rel, LeftOut::Unsettled);
        let reason = "changed_while_read".to_owned();
        self.not_covered.skipped.push(SkippedEntry { path: lossy(rel), reason });
    }

    /// Lists the extended attributes of `rel` that the snapshot does not hold.
    pub(super) fn xattrs_left_out(&mut self, rel: &[u8], names: &[String]) {
        if names.is_empty() {
            return;
        }
        // Listed as skipped, which summaries do not carry: the directory is looked at each time.
        self.left_out(rel, LeftOut::Unsettled);
        for name in names {
            let reason = format!("xattr_not_captured: {name}");
            self.not_covered.skipped.push(SkippedEntry { path: lossy(rel), reason });
        }
    }

    fn left_out(&mut self, rel: &[u8], why: LeftOut) {
        if self.record {
            self.left_out.push((rel.to_vec(), why));
        }
    }
}
