//! Capturing a directory: a parallel walk that builds the Merkle tree bottom-up as it goes.
//!
//! Each directory is listed, its entries are handled in parallel (rayon), subdirectories recurse,
//! and the directory's tree is written as soon as its entries are known. A file whose stat
//! matches the stat cache is not opened; only changed files are read, chunked and stored.
//! When the store's watcher runs, a directory its journal does not name is not listed at all:
//! its subtree is taken whole from the last capture (`journal.rs`).
//!
//! Here: the capture's entry points, and the end of a walk, which turns what it found into the
//! snapshot's root, stats and stat cache rows. The walk is in `walk.rs`, one file in `file.rs`,
//! a directory by the journal's names in `by_names.rs`, a directory's tree, row and summary in
//! `summary.rs`, and what a subtree found, handed up the recursion, in `found.rs`.

mod by_names;
mod file;
mod found;
mod summary;
mod walk;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use self::found::Found;
use self::summary::{summarize, with_totals};
use self::walk::{Above, Counters, JournalWalk, Walk};
use super::Progress;
use super::journal::{self, JournalState, Plan};
use super::statcache::{StatCache, Totals, coarse_now_ns};
use super::statcache_write::FreshCache;
use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::snapshot::{JournalReport, NotCovered, SnapshotStats};
use crate::store::writer::BlobWriter;
use crate::tree::{self, DirRoot, Extra, Node, NodeKind};

/// The ignore files honoured in every directory.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".cairnignore"];
/// How many ignored paths `not_covered` lists.
const MAX_LISTED_IGNORED: usize = 50;

/// A path relative to the captured root, as raw bytes.
type RelPath = Vec<u8>;

/// What a capture leaves out besides special files.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Filter {
    /// Capture what `.gitignore` / `.cairnignore` ignore.
    pub no_ignore: bool,
    /// Capture files the secret rules would leave out (`secrets.rs`).
    pub include_secrets: bool,
}

impl Filter {
    /// Everything but special files: for volumes and workspaces that are data, not a user's tree.
    pub(crate) const ALL: Filter = Filter { no_ignore: true, include_secrets: true };

    /// The filter a directory snapshot was taken with, from its details.
    pub(crate) fn of_snapshot(details: &serde_json::Value) -> Self {
        let flag = |key: &str| details.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
        Self { no_ignore: flag("no_ignore"), include_secrets: flag("include_secrets") }
    }
}

/// What a capture produced.
pub(crate) struct Captured {
    /// The id of the [`DirRoot`] document.
    pub root: ObjectId,
    pub stats: SnapshotStats,
    pub not_covered: NotCovered,
    /// The rows of the stat cache this capture changes, with its place in the watcher's journal.
    pub cache: FreshCache,
    /// Every path left out, whole (`not_covered` lists only the first ignored ones).
    pub uncovered: Uncovered,
    /// Files with more links than the tree holds: some of their links are outside it.
    pub linked_outside: Vec<RelPath>,
}

/// Every path a capture left out: ignored, secret, or skipped (special, unreadable, vanished).
/// A restore must leave them alone, so it needs them all, not the few `not_covered` lists.
#[derive(Debug, Default)]
pub(crate) struct Uncovered {
    /// Path → whether it is a directory.
    paths: BTreeMap<RelPath, bool>,
}

impl Uncovered {
    /// The first uncovered path strictly inside directory `dir`, if any.
    pub(crate) fn first_below(&self, dir: &[u8]) -> Option<&[u8]> {
        let prefix = [dir, b"/"].concat();
        let (path, _) =
            self.paths.range::<[u8], _>((Bound::Included(&prefix[..]), Bound::Unbounded)).next()?;
        path.starts_with(&prefix).then_some(path.as_slice())
    }

    /// True when `path` itself is an uncovered directory.
    pub(crate) fn is_dir(&self, path: &[u8]) -> bool {
        self.paths.get(path).copied().unwrap_or(false)
    }
}

/// True for the error of a path longer than the system takes (`PATH_MAX`).
fn too_long(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENAMETOOLONG)
}

/// A file's link count and the paths in the tree that name it.
pub(crate) type LinkGroup = (u64, Vec<RelPath>);

/// Captures the directory `root` through `writer`, reusing `old_cache`.
pub(crate) fn capture(
    writer: &BlobWriter<'_>,
    root: &Path,
    old_cache: &StatCache,
    filter: Filter,
) -> Result<Captured> {
    capture_observed(writer, root, old_cache, filter, &Progress::default())
}

/// [`capture`], counting the files and bytes it scans into `progress` as it goes.
pub(crate) fn capture_observed(
    writer: &BlobWriter<'_>,
    root: &Path,
    old_cache: &StatCache,
    filter: Filter,
    progress: &Progress,
) -> Result<Captured> {
    let scan_started_ns = coarse_now_ns();
    let meta = std::fs::symlink_metadata(root).at("read", root)?;
    if !meta.is_dir() {
        return Err(Error::invalid(format!(
            "{} is not a directory; pass a directory to capture",
            root.display()
        )));
    }
    // Asked after the scan's start time is taken, so any change the answer misses is after it.
    let filter_key = (filter.no_ignore, filter.include_secrets);
    let socket = cairn_watch::server::socket_path(writer.store().root());
    let (token, mut plan, mut report) = journal::ask(&socket, root, &old_cache.journal, filter_key);
    let walk_because = |reason: &str| {
        Some(JournalReport { used: false, reason: Some(reason.into()), ..JournalReport::default() })
    };
    if plan.is_some() && !writer.vouches_everything()? {
        plan = None;
        report = walk_because("the store knows of damaged data, so every file is looked at");
    }
    if plan.is_some()
        && let Some(reason) = old_cache.journal.walk_due(scan_started_ns)
    {
        plan = None;
        report = walk_because(reason);
    }
    if plan.is_none() {
        // Every directory's row will be asked for.
        old_cache.read_ahead()?;
    }
    let setup = Setup { writer, root, meta: &meta, old_cache, filter, progress, scan_started_ns };
    match walk_tree(setup, JournalStart { token, plan, report })? {
        Walked::Done(captured) => Ok(*captured),
        Walked::LinkedIntoReused => {
            let report = walk_because("a file of an unchanged directory has a new hard link");
            let journal = JournalStart { token, plan: None, report };
            match walk_tree(setup, journal)? {
                Walked::Done(captured) => Ok(*captured),
                Walked::LinkedIntoReused => unreachable!("a walk without a plan reuses nothing"),
            }
        }
    }
}

/// The watcher's answer, as a walk starts.
struct JournalStart {
    token: Option<cairn_watch::Token>,
    plan: Option<Plan>,
    report: Option<JournalReport>,
}

/// How a walk ended.
enum Walked {
    Done(Box<Captured>),
    /// A file it saw has a link in a subtree it took unseen: walk again, all of it.
    LinkedIntoReused,
}

/// What each walk of one capture starts from (a capture walks twice when the first walk took a
/// subtree whole that a file it saw links into).
#[derive(Clone, Copy)]
struct Setup<'a> {
    writer: &'a BlobWriter<'a>,
    root: &'a Path,
    meta: &'a std::fs::Metadata,
    old_cache: &'a StatCache<'a>,
    filter: Filter,
    progress: &'a Progress,
    scan_started_ns: i64,
}

/// Walks the tree once: its root, and what the walk found, as a capture.
fn walk_tree(setup: Setup, JournalStart { token, plan, report }: JournalStart) -> Result<Walked> {
    let Setup { writer, root, meta, old_cache, filter, progress, scan_started_ns } = setup;
    let filter_key = (filter.no_ignore, filter.include_secrets);
    let plan_given = plan.is_some();
    let record = token.is_some();
    let walk = Walk {
        writer,
        scan_started_ns,
        old_cache,
        no_ignore: filter.no_ignore,
        include_secrets: filter.include_secrets,
        counters: Counters::default(),
        progress,
        journal: JournalWalk {
            record,
            plan,
            read_whole: plan_given.then(AtomicU64::default),
            by_names: AtomicU64::default(),
            parts_kept: AtomicU64::default(),
            dirs_kept_unread: AtomicU64::default(),
        },
    };
    let mut found = Found::new(record);
    let tree = match walk.reuse(b"", &[], None, &mut found)? {
        Some(tree) => tree,
        None => {
            let listing = std::fs::read_dir(root).at("list", root)?;
            let (tree, below) =
                walk.dir(listing, root, b"", &Above { matchers: &[], in_git: false, forced: &[] })?;
            found.merge(below);
            tree
        }
    };
    let top_xattrs = walk.dir_xattrs(root, b".", &mut found);
    walk.counters.dirs.fetch_add(1, Ordering::Relaxed);
    let links = found.link_groups();
    let reused_totals: HashMap<RelPath, (ObjectId, Totals)> = std::mem::take(&mut found.reused)
        .into_iter()
        .map(|(rel, tree, totals)| (rel, (tree, totals)))
        .collect();
    let reused: HashSet<RelPath> = reused_totals.keys().cloned().collect();
    if old_cache.links_into(&reused, &links)? {
        return Ok(Walked::LinkedIntoReused);
    }
    if let Some(plan) = &walk.journal.plan
        && !reused.is_empty()
    {
        // The directories listed are those summarised (both only when recording, as a plan is).
        let walked: HashSet<RelPath> = found.summaries.iter().map(|(rel, _)| rel.clone()).collect();
        let unseen =
            plan.unwalked_links(root, &walked).into_iter().map(|ino| (ino, (2, Vec::new()))).collect();
        if old_cache.links_into(&reused, &unseen)? {
            return Ok(Walked::LinkedIntoReused);
        }
    }
    let (linked_outside, hardlinks) = link_lists(links);
    let mut top = node_of(Vec::new(), NodeKind::Dir { tree }, meta);
    top.extra.xattrs = top_xattrs;
    let root_id = tree::write_root(writer, &DirRoot { top, hardlinks: hardlinks.clone() })?;
    let c = &walk.counters;
    let mut report = report;
    if let (Some(r), Some(read_whole)) = (report.as_mut(), &walk.journal.read_whole)
        && r.used
    {
        r.dirs_read_whole = read_whole.load(Ordering::Relaxed);
        r.dirs_by_names = walk.journal.by_names.load(Ordering::Relaxed);
        r.parts_kept = walk.journal.parts_kept.load(Ordering::Relaxed);
        r.dirs_kept_unread = walk.journal.dirs_kept_unread.load(Ordering::Relaxed);
    }
    let journal_moved = token.is_some() && report.as_ref().is_none_or(|r| !r.used || r.dirs_listed > 0);
    let Found { not_covered, uncovered, rows, gone, unknown_children, summaries, left_out, .. } = found;
    let summaries = summarize(summaries, left_out, &hardlinks, &linked_outside);
    let (saves_since_walk, walked_at_ns) = match &report {
        Some(JournalReport { used: true, .. }) => {
            (old_cache.journal.saves_since_walk + 1, old_cache.journal.walked_at_ns)
        }
        _ => (0, scan_started_ns),
    };
    Ok(Walked::Done(Box::new(Captured {
        root: root_id,
        stats: SnapshotStats {
            files: c.files.load(Ordering::Relaxed),
            dirs: c.dirs.load(Ordering::Relaxed),
            symlinks: c.symlinks.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            read_bytes: c.read_bytes.load(Ordering::Relaxed),
            change_journal: report,
            ..SnapshotStats::default()
        },
        not_covered: sorted(not_covered),
        cache: FreshCache {
            replace_all: !old_cache.is_stored(),
            dirs: with_totals(rows, summaries, reused_totals),
            gone,
            unknown_children,
            journal: JournalState {
                token,
                filter: filter_key,
                summaries: token.is_some(),
                saves_since_walk,
                walked_at_ns,
            },
            journal_moved,
        },
        uncovered: Uncovered { paths: uncovered.into_iter().collect() },
        linked_outside,
    })))
}

/// The paths of files linked from outside the tree, and the groups of paths that name one
/// file, each sorted.
fn link_lists(links: HashMap<(u64, u64), LinkGroup>) -> (Vec<RelPath>, Vec<Vec<RelPath>>) {
    let groups: Vec<LinkGroup> = links.into_values().collect();
    let mut linked_outside: Vec<RelPath> = groups
        .iter()
        .filter(|(nlink, g)| (g.len() as u64) < *nlink)
        .flat_map(|(_, g)| g.iter().cloned())
        .collect();
    linked_outside.sort();
    let mut hardlinks: Vec<Vec<Vec<u8>>> = groups
        .into_iter()
        .map(|(_, g)| g)
        .filter(|g| g.len() > 1)
        .map(|mut g| {
            g.sort();
            g
        })
        .collect();
    hardlinks.sort();
    (linked_outside, hardlinks)
}

/// `not_covered` in path order: the walk found it in no order.
fn sorted(mut not_covered: NotCovered) -> NotCovered {
    not_covered.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    not_covered.ignored_paths.sort();
    not_covered.secrets.sort_by(|a, b| a.path.cmp(&b.path));
    not_covered
}

fn node_of(name: Vec<u8>, kind: NodeKind, meta: &std::fs::Metadata) -> Node {
    Node {
        name,
        kind,
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
        mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        extra: Extra::default(),
    }
}

fn lossy(rel: &[u8]) -> String {
    String::from_utf8_lossy(rel).into_owned()
}
