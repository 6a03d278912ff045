//! Capturing a directory: a parallel walk that builds the Merkle tree bottom-up as it goes.
//!
//! Each directory is listed, its entries are handled in parallel (rayon), subdirectories recurse,
//! and the directory's tree is written as soon as its entries are known. A file whose stat
//! matches the stat cache is not opened; only changed files are read, chunked and stored.
//! When the store's watcher runs, a directory its journal does not name is not listed at all:
//! its subtree is taken whole from the last capture (`journal.rs`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsStr;
use std::io::{Read, Seek};
use std::ops::Bound;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;

use super::Progress;
use super::journal::{self, DirSummary, JournalState, Plan};

mod by_names;
use super::secrets;
use super::sparse::{ExtentReader, data_extents};
use super::statcache::{
    CacheEntry, DirFiles, PartIndex, RowMeta, Stamp, StatCache, StoredFiles, Totals, TreePart, coarse_now_ns,
    join,
};
use super::statcache_encode::{Unread, encode_with_tree};
use super::statcache_write::{FreshCache, WalkedDir};
use super::xattrs;
use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::snapshot::{JournalReport, NotCovered, SecretEntry, SkippedEntry, SnapshotStats};
use crate::store::chunker::{WHOLE_FILE_LIMIT, store_chunks};
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;
use crate::tree::parts::PartRef as TreeRef;
use crate::tree::rewrite::{self, Piece, Run, Stored};
use crate::tree::{self, DirRoot, Extra, Node, NodeKind};

/// The ignore files honoured in every directory.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".cairnignore"];
const MAX_LISTED_IGNORED: usize = 50;
/// How many times a file that changes while it is read is read before it is stored as read.
const MAX_READS: u32 = 3;

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
    fn insert(&mut self, path: &[u8], is_dir: bool) {
        self.paths.insert(path.to_vec(), is_dir);
    }

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

/// A file's content as read: its ids (none when it was left out as a secret), and the secret
/// rule it matched.
struct ReadContent {
    content: Option<Vec<ObjectId>>,
    secret: Option<&'static str>,
    /// The bytes read.
    bytes: u64,
    /// The file's size as the read saw it: the bytes read, or for a sparse file, its extents'
    /// end when every extent read whole.
    size: u64,
}

/// A captured file: its node kind, extras, and the metadata that goes with the content read
/// (a file read again because it changed has newer metadata than the walk saw).
type CapturedFile = (NodeKind, Extra, std::fs::Metadata);

/// Up to `len` bytes of `file` from where it stands, fewer if it ends first.
#[expect(
    clippy::slow_vector_initialization,
    reason = "allocated zeroed, a large buffer costs more: see below"
)]
fn read_up_to(file: &mut std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    // Zeroed here rather than allocated zeroed (`vec![0; len]`): for a large buffer the
    // allocator zeroes by handing pages back to the kernel, and each comes back as a page
    // fault; 2% of a first save's samples went to both. Memory freed by the last file's read is
    // zeroed in place instead.
    let mut data = Vec::with_capacity(len);
    data.resize(len, 0);
    let mut got = 0;
    while got < len {
        match file.read(&mut data[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    data.truncate(got);
    Ok(data)
}

/// True for the error of a path longer than the system takes (`PATH_MAX`).
fn too_long(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENAMETOOLONG)
}

#[derive(Default)]
struct Counters {
    files: AtomicU64,
    dirs: AtomicU64,
    symlinks: AtomicU64,
    bytes: AtomicU64,
    read_bytes: AtomicU64,
}

/// The stat cache's part of listing one directory: its stored row, and its new entries.
struct DirCtx {
    old: Option<DirFiles>,
    /// How many files the stored row held (`old` may hold only some of them).
    old_len: Option<usize>,
    new: Mutex<Vec<(Vec<u8>, CacheEntry)>>,
    /// Files the stored row could not vouch for (read again).
    misses: AtomicU64,
    /// For a large directory looked at by names, its row's parts: `old` holds the entries of
    /// the parts read, `old_len` counts them, and only those parts are written again.
    parts: Option<PartsCtx>,
    /// The stored row's index of parts, when it has one and `parts` does not hold it: a row
    /// not cut where the new tree's parts are is written again even when no entry changed, so
    /// that the next capture by names can take parts unread.
    stored_index: Option<PartIndex>,
}

/// A large directory's parts, and which of them a capture by names left unread.
struct PartsCtx {
    index: PartIndex,
    unread: Vec<bool>,
    /// The last capture's tree of the directory, whose parts the runs keep.
    old_tree: ObjectId,
    /// What each tree part kept unread holds, by its id, from its part of files.
    kept: HashMap<ObjectId, TreePart>,
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

impl DirCtx {
    fn keep(&self, name: &[u8], entry: CacheEntry) {
        self.new.lock().unwrap_or_else(|p| p.into_inner()).push((name.to_vec(), entry));
    }
}

/// A file's link count and the paths in the tree that name it.
pub(crate) type LinkGroup = (u64, Vec<RelPath>);

/// Why an entry of a walked directory was left out, for its directory's summary.
enum LeftOut {
    Ignored {
        is_dir: bool,
    },
    Secret(String),
    /// Skipped or stored while it changed: the next capture looks again.
    Unsettled,
}

/// The journal's part of a walk: the plan, the last capture's summaries, and what this one
/// learns for the next.
struct JournalWalk {
    /// Summaries are kept only when a watcher answered: without one the next capture walks.
    record: bool,
    plan: Option<Plan>,
    summaries: Mutex<Vec<(RelPath, DirSummary)>>,
    left_out: Mutex<Vec<(RelPath, LeftOut)>>,
    /// Directories whose ignore files changed: nothing below them is taken unseen.
    forced: Mutex<Vec<RelPath>>,
    /// Roots of the subtrees taken whole, with their totals.
    reused: Mutex<HashMap<RelPath, Totals>>,
    /// Directories listed by this walk.
    walked: Mutex<HashSet<RelPath>>,
    /// With a plan: how many directories were read whole, and how many by names.
    read_whole: Option<AtomicU64>,
    by_names: AtomicU64,
    /// Parts of large directories' trees kept unread.
    parts_kept: AtomicU64,
}

struct Walk<'a> {
    writer: &'a BlobWriter<'a>,
    /// When the walk started, for the rows it writes (the racy-entry rule).
    scan_started_ns: i64,
    old_cache: &'a StatCache<'a>,
    no_ignore: bool,
    include_secrets: bool,
    counters: Counters,
    not_covered: Mutex<NotCovered>,
    /// The directories listed, for their stat cache rows.
    rows: Mutex<Vec<WalkedDir>>,
    /// Directories gone since the last capture, and listed ones whose old subdirectories were
    /// not known (`FreshCache`).
    gone: Mutex<Vec<RelPath>>,
    unknown_children: Mutex<Vec<(RelPath, Vec<Vec<u8>>)>>,
    /// Paths of files with several links, and their link count, by (device, inode).
    hardlinks: Mutex<HashMap<(u64, u64), LinkGroup>>,
    uncovered: Mutex<Uncovered>,
    progress: &'a Progress,
    journal: JournalWalk,
}

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
    let journal = JournalStart { token, plan, report };
    match walk_tree(writer, root, &meta, old_cache, filter, progress, scan_started_ns, journal)? {
        Walked::Done(captured) => Ok(*captured),
        Walked::LinkedIntoReused => {
            let report = walk_because("a file of an unchanged directory has a new hard link");
            let journal = JournalStart { token, plan: None, report };
            match walk_tree(writer, root, &meta, old_cache, filter, progress, scan_started_ns, journal)? {
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

#[allow(clippy::too_many_arguments)]
fn walk_tree(
    writer: &BlobWriter<'_>,
    root: &Path,
    meta: &std::fs::Metadata,
    old_cache: &StatCache,
    filter: Filter,
    progress: &Progress,
    scan_started_ns: i64,
    JournalStart { token, plan, report }: JournalStart,
) -> Result<Walked> {
    let filter_key = (filter.no_ignore, filter.include_secrets);
    let plan_given = plan.is_some();
    let walk = Walk {
        writer,
        scan_started_ns,
        old_cache,
        no_ignore: filter.no_ignore,
        include_secrets: filter.include_secrets,
        counters: Counters::default(),
        not_covered: Mutex::new(NotCovered::default()),
        rows: Mutex::default(),
        gone: Mutex::default(),
        unknown_children: Mutex::default(),
        hardlinks: Mutex::new(HashMap::new()),
        uncovered: Mutex::new(Uncovered::default()),
        progress,
        journal: JournalWalk {
            record: token.is_some(),
            plan,
            summaries: Mutex::default(),
            left_out: Mutex::default(),
            forced: Mutex::default(),
            reused: Mutex::default(),
            walked: Mutex::default(),
            read_whole: plan_given.then(AtomicU64::default),
            by_names: AtomicU64::default(),
            parts_kept: AtomicU64::default(),
        },
    };
    let tree = match walk.reuse(b"")? {
        Some(tree) => tree,
        None => {
            let listing = std::fs::read_dir(root).at("list", root)?;
            walk.dir(listing, root, b"", &[], false)?
        }
    };
    let top_xattrs = walk.dir_xattrs(root, b".");
    walk.counters.dirs.fetch_add(1, Ordering::Relaxed);
    let links = walk.hardlinks.into_inner().unwrap_or_else(|p| p.into_inner());
    let reused_totals = walk.journal.reused.into_inner().unwrap_or_else(|p| p.into_inner());
    let reused: HashSet<RelPath> = reused_totals.keys().cloned().collect();
    if old_cache.links_into(&reused, &links)? {
        return Ok(Walked::LinkedIntoReused);
    }
    if let Some(plan) = &walk.journal.plan
        && !reused.is_empty()
    {
        let walked = walk.journal.walked.into_inner().unwrap_or_else(|p| p.into_inner());
        let unseen =
            plan.unwalked_links(root, &walked).into_iter().map(|ino| (ino, (2, Vec::new()))).collect();
        if old_cache.links_into(&reused, &unseen)? {
            return Ok(Walked::LinkedIntoReused);
        }
    }
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
    }
    let journal_moved = token.is_some() && report.as_ref().is_none_or(|r| !r.used || r.dirs_listed > 0);
    let summaries = summarize(
        walk.journal.summaries.into_inner().unwrap_or_else(|p| p.into_inner()),
        walk.journal.left_out.into_inner().unwrap_or_else(|p| p.into_inner()),
        &hardlinks,
        &linked_outside,
    );
    let mut not_covered = walk.not_covered.into_inner().unwrap_or_else(|p| p.into_inner());
    not_covered.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    not_covered.ignored_paths.sort();
    not_covered.secrets.sort_by(|a, b| a.path.cmp(&b.path));
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
        not_covered,
        cache: FreshCache {
            replace_all: !old_cache.is_stored(),
            dirs: with_totals(
                walk.rows.into_inner().unwrap_or_else(|p| p.into_inner()),
                summaries,
                reused_totals,
            ),
            gone: walk.gone.into_inner().unwrap_or_else(|p| p.into_inner()),
            unknown_children: walk.unknown_children.into_inner().unwrap_or_else(|p| p.into_inner()),
            journal: JournalState {
                token,
                filter: filter_key,
                summaries: token.is_some(),
                saves_since_walk,
                walked_at_ns,
            },
            journal_moved,
        },
        uncovered: walk.uncovered.into_inner().unwrap_or_else(|p| p.into_inner()),
        linked_outside,
    })))
}

/// The listed directories' rows, with their summaries and their subtrees' totals, summed
/// bottom-up from the directories below: listed, or taken whole (`reused`).
fn with_totals(
    mut rows: Vec<WalkedDir>,
    mut summaries: BTreeMap<RelPath, DirSummary>,
    reused: HashMap<RelPath, Totals>,
) -> Vec<WalkedDir> {
    // A directory sorts before everything below it: backwards, children come first.
    rows.sort_by(|a, b| b.rel.cmp(&a.rel));
    let mut totals = reused;
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
                let c = totals.get(&join(&row.rel, child))?;
                t.files += c.files;
                t.symlinks += c.symlinks;
                t.dirs += c.dirs;
                t.bytes += c.bytes;
                t.settled &= c.settled;
                t.left_out += c.left_out;
            }
            Some(t)
        });
        if let Some(t) = meta.totals {
            totals.insert(row.rel.clone(), t);
        }
    }
    rows
}

/// The directory summaries of a capture: what each walked directory recorded, with the entries
/// it left out, and unsettled where a file has several links.
fn summarize(
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

impl Walk<'_> {
    fn skip(&self, rel: &[u8], reason: &str, is_dir: bool) {
        self.left_out(rel, LeftOut::Unsettled);
        self.uncovered.lock().unwrap_or_else(|p| p.into_inner()).insert(rel, is_dir);
        let mut nc = self.not_covered.lock().unwrap_or_else(|p| p.into_inner());
        nc.skipped.push(SkippedEntry { path: lossy(rel), reason: reason.to_owned() });
    }

    fn ignored(&self, rel: &[u8], is_dir: bool) {
        self.left_out(rel, LeftOut::Ignored { is_dir });
        self.note_ignored(rel, is_dir);
    }

    /// Counts `rel` as ignored (for a subtree taken whole, whose summaries already hold it).
    fn note_ignored(&self, rel: &[u8], is_dir: bool) {
        self.uncovered.lock().unwrap_or_else(|p| p.into_inner()).insert(rel, is_dir);
        let mut nc = self.not_covered.lock().unwrap_or_else(|p| p.into_inner());
        nc.ignored += 1;
        if nc.ignored_paths.len() < MAX_LISTED_IGNORED {
            nc.ignored_paths.push(lossy(rel));
        }
    }

    /// Captures one directory and returns its tree id.
    fn dir(
        &self,
        listing: std::fs::ReadDir,
        abs: &Path,
        rel: &[u8],
        parents: &[Gitignore],
        in_git: bool,
    ) -> Result<ObjectId> {
        if let Some(id) = self.dir_by_names(abs, rel, parents, in_git)? {
            return Ok(id);
        }
        if let Some(report) = &self.journal.read_whole {
            report.fetch_add(1, Ordering::Relaxed);
        }
        let mut names: Vec<(Vec<u8>, std::fs::DirEntry)> = Vec::new();
        for entry in listing {
            let entry = entry.at("list", abs)?;
            names.push((entry.file_name().as_bytes().to_vec(), entry));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let (old_meta, stored) = self.old_cache.row_stored(rel)?;
        let stored_index = match &stored {
            Some(StoredFiles::Parts(index)) => Some(index.clone()),
            _ => None,
        };
        let old = self.old_cache.stored_whole(rel, stored)?;
        let old_len = old.as_ref().map(|o| o.entries.len());
        let ctx = DirCtx {
            old,
            old_len,
            new: Mutex::default(),
            misses: AtomicU64::new(0),
            parts: None,
            stored_index,
        };
        if self.journal.plan.is_some() && self.ignore_rules_changed(&ctx, &names) {
            self.journal.forced.lock().unwrap_or_else(|p| p.into_inner()).push(rel.to_vec());
        }
        let matchers = self.matchers(abs, parents, in_git)?;
        let nodes: Vec<Option<Node>> = names
            .into_par_iter()
            .map(|(name, entry)| self.entry(abs, rel, name, entry.metadata(), &matchers, in_git, &ctx))
            .collect::<Result<_>>()?;
        let nodes = nodes.into_iter().flatten().collect();
        self.finish_dir(rel, vec![Run::Nodes(nodes)], ctx, old_meta)
    }

    /// The ignore rules in force in directory `abs`: its parents' and its own.
    fn matchers(&self, abs: &Path, parents: &[Gitignore], in_git: bool) -> Result<Vec<Gitignore>> {
        let mut matchers = parents.to_vec();
        if !self.no_ignore
            && !in_git
            && let Some(m) = self.matcher(abs)?
        {
            matchers.push(m);
        }
        Ok(matchers)
    }

    /// Writes the tree of directory `rel` (given as runs: see `tree/rewrite.rs`), its stat
    /// cache row and its summary.
    fn finish_dir(
        &self,
        rel: &[u8],
        runs: Vec<Run>,
        ctx: DirCtx,
        old_meta: Option<RowMeta>,
    ) -> Result<ObjectId> {
        let old_tree = ctx.parts.as_ref().map(|p| p.old_tree);
        let read = |part: &TreeRef| match old_tree {
            Some(tree) => tree::parts::read_part(&tree, part, None, |id| self.writer.read_object(id)),
            None => Err(Error::corrupt(format!("part {} of no tree is kept", part.id))),
        };
        let stored = rewrite::write_runs(self.writer, runs, read)?;
        let id = stored.id();
        if let Stored::Parted(_, pieces) = &stored {
            let kept = pieces.iter().filter(|p| matches!(p, Piece::Kept(_))).count();
            self.journal.parts_kept.fetch_add(kept as u64, Ordering::Relaxed);
        }
        if self.journal.record {
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
            if let (Stored::Parted(_, pieces), Some(parts)) = (&stored, &ctx.parts) {
                for piece in pieces {
                    if let Piece::Kept(part) = piece {
                        let counts = parts.kept.get(&part.id).ok_or_else(|| {
                            Error::corrupt(format!("part {} was kept without its counts", part.id))
                        })?;
                        summary.files += u64::from(counts.files);
                        summary.bytes += counts.bytes;
                        summary.symlinks += u64::from(counts.symlinks);
                    }
                }
            }
            self.journal.summaries.lock().unwrap_or_else(|p| p.into_inner()).push((rel.to_vec(), summary));
            self.journal.walked.lock().unwrap_or_else(|p| p.into_inner()).insert(rel.to_vec());
        }
        self.row(rel, &stored, ctx, old_meta)?;
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
    fn row(&self, rel: &[u8], stored: &Stored, ctx: DirCtx, old_meta: Option<RowMeta>) -> Result<()> {
        let children: Vec<Vec<u8>> = stored
            .written_nodes()
            .filter(|n| matches!(n.kind, NodeKind::Dir { .. }))
            .map(|n| n.name.clone())
            .collect();
        match &old_meta {
            Some(old) => {
                let gone = old.children.iter().filter(|c| !children.contains(c)).map(|c| join(rel, c));
                self.gone.lock().unwrap_or_else(|p| p.into_inner()).extend(gone);
            }
            None if self.old_cache.is_stored() => {
                let entry = (rel.to_vec(), children.clone());
                self.unknown_children.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
            }
            None => {}
        }
        let mut files = ctx.new.into_inner().unwrap_or_else(|p| p.into_inner());
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let files_changed = ctx.misses.into_inner() > 0 || ctx.old_len != Some(files.len());
        drop(ctx.old);
        let index = ctx.parts.as_ref().map(|p| &p.index).or(ctx.stored_index.as_ref());
        let aligned = match (stored, index) {
            (Stored::Whole(..), None) => true,
            (Stored::Parted(_, pieces), Some(index)) => cut_alike(index, pieces),
            _ => false,
        };
        let files = match ctx.parts {
            _ if !files_changed && aligned && self.old_cache.is_stored() => None,
            Some(PartsCtx { index, unread, .. }) => {
                let read = |key: &[u8]| self.old_cache.part(rel, key);
                let old = Unread { index: &index, unread: &unread, read: &read };
                Some(encode_with_tree(self.scan_started_ns, files, stored, Some(old))?)
            }
            None => Some(encode_with_tree(self.scan_started_ns, files, stored, None)?),
        };
        let meta = Some(RowMeta { summary: None, children, totals: None });
        let row = WalkedDir { rel: rel.to_vec(), files, old_meta, meta };
        self.rows.lock().unwrap_or_else(|p| p.into_inner()).push(row);
        Ok(())
    }

    /// True when an ignore file of the directory `ctx` lists is new, gone, or changed since
    /// the last capture, so the rules for everything below it may have changed.
    fn ignore_rules_changed(&self, ctx: &DirCtx, names: &[(Vec<u8>, std::fs::DirEntry)]) -> bool {
        IGNORE_FILES.iter().any(|file| {
            let old = ctx.old.as_ref();
            match names.iter().find(|(n, _)| n == file.as_bytes()) {
                Some((_, entry)) => match entry.metadata() {
                    Ok(meta) => old.and_then(|o| o.lookup(file.as_bytes(), &Stamp::of(&meta))).is_none(),
                    Err(_) => true,
                },
                None => old.is_some_and(|o| o.get(file.as_bytes()).is_some()),
            }
        })
    }

    /// The tree of directory `rel` taken whole from the last capture, when the journal says
    /// nothing in it changed; its counts, left-out entries and summaries are carried over.
    fn reuse(&self, rel: &[u8]) -> Result<Option<ObjectId>> {
        let Some(plan) = &self.journal.plan else { return Ok(None) };
        let reused = {
            let forced = self.journal.forced.lock().unwrap_or_else(|p| p.into_inner());
            plan.reuse(&|dir: &[u8]| self.old_cache.meta(dir), rel, &forced)?
        };
        let Some(r) = reused else { return Ok(None) };
        let c = &self.counters;
        c.files.fetch_add(r.files, Ordering::Relaxed);
        c.symlinks.fetch_add(r.symlinks, Ordering::Relaxed);
        c.dirs.fetch_add(r.dirs, Ordering::Relaxed);
        c.bytes.fetch_add(r.bytes, Ordering::Relaxed);
        for (path, is_dir) in &r.ignored {
            self.note_ignored(path, *is_dir);
        }
        for (path, rule) in &r.secrets {
            self.note_secret(path, rule);
        }
        self.journal.reused.lock().unwrap_or_else(|p| p.into_inner()).insert(rel.to_vec(), r.totals);
        Ok(Some(r.tree))
    }

    fn matcher(&self, dir: &Path) -> Result<Option<Gitignore>> {
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        for file in IGNORE_FILES {
            let path = dir.join(file);
            if path.is_file() {
                any = true;
                if let Some(err) = builder.add(&path) {
                    return Err(Error::invalid(format!(
                        "{} has an invalid pattern: {err}; fix it",
                        path.display()
                    )));
                }
            }
        }
        if !any {
            return Ok(None);
        }
        builder
            .build()
            .map(Some)
            .map_err(|e| Error::invalid(format!("the ignore rules in {} are invalid: {e}", dir.display())))
    }

    fn is_ignored(matchers: &[Gitignore], path: &Path, is_dir: bool) -> bool {
        for m in matchers.iter().rev() {
            match m.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn entry(
        &self,
        dir_abs: &Path,
        dir_rel: &[u8],
        name: Vec<u8>,
        meta: std::io::Result<std::fs::Metadata>,
        matchers: &[Gitignore],
        in_git: bool,
        ctx: &DirCtx,
    ) -> Result<Option<Node>> {
        let rel = join(dir_rel, &name);
        let mut meta = match meta {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.skip(&rel, "vanished", false);
                return Ok(None);
            }
            Err(e) => return Err(Error::io("inspect", &dir_abs.join(OsStr::from_bytes(&name)), e)),
        };
        let ft = meta.file_type();
        // Most entries are files the stat cache vouches for; they never need their full path.
        if ft.is_file() && (in_git || matchers.is_empty()) {
            let file = self.file(dir_abs, rel, &name, &meta, matchers, ctx)?;
            return Ok(file.map(|(kind, extra, meta)| Node { extra, ..node_of(name, kind, &meta) }));
        }
        let abs: PathBuf = dir_abs.join(OsStr::from_bytes(&name));
        // `.git` is never ignored, whatever the rules say (`.*` would match it): an agent's
        // commits are part of its state.
        if !in_git && name != b".git" && Self::is_ignored(matchers, &abs, ft.is_dir()) {
            self.ignored(&rel, ft.is_dir());
            return Ok(None);
        }
        let mut extra = Extra::default();
        let kind = if ft.is_dir()
            && let Some(tree) = self.reuse(&rel)?
        {
            extra.xattrs = self.dir_xattrs(&abs, &rel);
            self.counters.dirs.fetch_add(1, Ordering::Relaxed);
            NodeKind::Dir { tree }
        } else if ft.is_dir() {
            let listing = match std::fs::read_dir(&abs) {
                Ok(listing) => listing,
                Err(e) => {
                    let reason = match e.kind() {
                        std::io::ErrorKind::NotFound => "vanished",
                        std::io::ErrorKind::PermissionDenied => "unreadable",
                        _ if too_long(&e) => "path_too_long",
                        _ => return Err(Error::io("list", &abs, e)),
                    };
                    self.skip(&rel, reason, true);
                    return Ok(None);
                }
            };
            let child_in_git = in_git || name == b".git";
            extra.xattrs = self.dir_xattrs(&abs, &rel);
            let tree = self.dir(listing, &abs, &rel, matchers, child_in_git)?;
            self.counters.dirs.fetch_add(1, Ordering::Relaxed);
            NodeKind::Dir { tree }
        } else if ft.is_symlink() {
            let target = match std::fs::read_link(&abs) {
                Ok(target) => target,
                Err(e) if too_long(&e) => {
                    self.skip(&rel, "path_too_long", false);
                    return Ok(None);
                }
                Err(e) => return Err(Error::io("read the link", &abs, e)),
            };
            self.counters.symlinks.fetch_add(1, Ordering::Relaxed);
            NodeKind::Symlink { target: target.as_os_str().as_bytes().to_vec() }
        } else if ft.is_file() {
            match self.file(dir_abs, rel, &name, &meta, matchers, ctx)? {
                Some((kind, read_extra, read)) => {
                    meta = read;
                    extra = read_extra;
                    kind
                }
                None => return Ok(None),
            }
        } else {
            let reason = if ft.is_fifo() {
                "fifo"
            } else if ft.is_socket() {
                "socket"
            } else {
                "device"
            };
            self.skip(&rel, reason, false);
            return Ok(None);
        };
        Ok(Some(Node { extra, ..node_of(name, kind, &meta) }))
    }

    /// The captured extended attributes of directory `abs`; those left out are listed.
    fn dir_xattrs(&self, abs: &Path, rel: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        match xattrs::of_path(abs) {
            Ok((kept, left_out)) => {
                self.xattrs_left_out(rel, &left_out);
                kept
            }
            Err(_) => {
                self.xattrs_left_out(rel, &["(unreadable)".to_owned()]);
                Vec::new()
            }
        }
    }

    /// Lists the extended attributes of `rel` that the snapshot does not hold.
    fn xattrs_left_out(&self, rel: &[u8], names: &[String]) {
        if names.is_empty() {
            return;
        }
        // Listed as skipped, which summaries do not carry: the directory is looked at each time.
        self.left_out(rel, LeftOut::Unsettled);
        let mut nc = self.not_covered.lock().unwrap_or_else(|p| p.into_inner());
        for name in names {
            nc.skipped.push(SkippedEntry { path: lossy(rel), reason: format!("xattr_not_captured: {name}") });
        }
    }

    fn left_out(&self, rel: &[u8], why: LeftOut) {
        if self.journal.record {
            self.journal.left_out.lock().unwrap_or_else(|p| p.into_inner()).push((rel.to_vec(), why));
        }
    }

    /// Records `rel` as left out because secret rule `rule` matched.
    fn secret(&self, rel: &[u8], rule: &str) {
        self.left_out(rel, LeftOut::Secret(rule.to_owned()));
        self.note_secret(rel, rule);
    }

    /// Lists `rel` as a secret left out (for a subtree taken whole).
    fn note_secret(&self, rel: &[u8], rule: &str) {
        self.uncovered.lock().unwrap_or_else(|p| p.into_inner()).insert(rel, false);
        let mut nc = self.not_covered.lock().unwrap_or_else(|p| p.into_inner());
        nc.secrets.push(SecretEntry { path: lossy(rel), rule: rule.to_owned() });
    }

    /// True when a file a secret rule matched is captured anyway.
    fn keeps_secret(&self, matchers: &[Gitignore], dir_abs: &Path, name: &[u8]) -> bool {
        self.include_secrets || secrets::opted_in(matchers, &dir_abs.join(OsStr::from_bytes(name)))
    }

    /// Captures the file `name` of directory `dir_abs`; `rel` is its path in the tree.
    fn file(
        &self,
        dir_abs: &Path,
        rel: Vec<u8>,
        name: &[u8],
        meta: &std::fs::Metadata,
        matchers: &[Gitignore],
        ctx: &DirCtx,
    ) -> Result<Option<CapturedFile>> {
        if let Some(rule) = secrets::by_name(&rel, name)
            && !self.keeps_secret(matchers, dir_abs, name)
        {
            self.secret(&rel, rule);
            return Ok(None);
        }
        let stamp = Stamp::of(meta);
        let mut cached = ctx.old.as_ref().and_then(|old| old.lookup(name, &stamp));
        if let Some(entry) = cached
            && let Some(rule) = &entry.secret
        {
            if !self.keeps_secret(matchers, dir_abs, name) {
                self.secret(&rel, rule);
                ctx.keep(name, entry.clone());
                return Ok(None);
            }
            // Left out last time, so its bytes were never stored: read it now.
            if entry.content.is_empty() && meta.size() > 0 {
                cached = None;
            }
        }
        // A cached file whose content the store can no longer vouch for is read again.
        if let Some(entry) = cached
            && !self.writer.vouches_all(&entry.content)?
        {
            cached = None;
        }
        self.progress.scanned(meta.size());
        if meta.nlink() > 1 {
            let mut links = self.hardlinks.lock().unwrap_or_else(|p| p.into_inner());
            let group = links.entry((meta.dev(), meta.ino())).or_insert_with(|| (meta.nlink(), Vec::new()));
            group.1.push(rel.clone());
        }
        let (content, secret, extra, left_out) = match cached {
            Some(entry) => {
                self.counted(meta.size());
                self.xattrs_left_out(&rel, &entry.xattrs_left_out);
                (
                    entry.content.clone(),
                    entry.secret.clone(),
                    entry.extra.clone(),
                    entry.xattrs_left_out.clone(),
                )
            }
            None => {
                let rel = rel.as_slice();
                let abs = &dir_abs.join(OsStr::from_bytes(name));
                ctx.misses.fetch_add(1, Ordering::Relaxed);
                let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(abs);
                let mut file = match file {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                        self.skip(rel, "unreadable", false);
                        return Ok(None);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        self.skip(rel, "vanished", false);
                        return Ok(None);
                    }
                    Err(e) if too_long(&e) => {
                        self.skip(rel, "path_too_long", false);
                        return Ok(None);
                    }
                    Err(e) => return Err(Error::io("open", abs, e)),
                };
                let keep = || self.keeps_secret(matchers, dir_abs, name);
                // A file that changes while it is read (its size, mtime or ctime moved) is read
                // again, a few times; one that keeps changing is stored as last read, listed in
                // `not_covered`, and not cached, so the next save reads it again.
                let mut before = meta.clone();
                let mut reads = 0;
                loop {
                    reads += 1;
                    let (xattrs, left_out) =
                        xattrs::of_file(&file).at("read the extended attributes of", abs)?;
                    let extents = data_extents(&file, &before).at("find the data extents of", abs)?;
                    let read = match &extents {
                        Some(extents) => self.read_extents(&file, abs, extents, before.size())?,
                        None => self.read_content(&mut file, abs, before.size(), (rel, name), keep)?,
                    };
                    self.counters.read_bytes.fetch_add(read.bytes, Ordering::Relaxed);
                    let after = file.metadata().at("read the metadata of", abs)?;
                    let steady = Stamp::of(&after) == Stamp::of(&before) && read.size == after.size();
                    if steady || reads == MAX_READS {
                        let first_read_steady = steady && reads == 1;
                        let secret = read.secret.map(str::to_owned);
                        let Some(content) = read.content else {
                            // Left out as a secret; cached as such, so an unchanged file is
                            // left out again without being read.
                            self.secret(rel, read.secret.unwrap_or_default());
                            if first_read_steady {
                                let entry = CacheEntry {
                                    stamp,
                                    content: Vec::new(),
                                    secret,
                                    extra: Extra::default(),
                                    xattrs_left_out: Vec::new(),
                                };
                                ctx.keep(name, entry);
                            }
                            return Ok(None);
                        };
                        if !steady {
                            self.changing(rel);
                        }
                        self.xattrs_left_out(rel, &left_out);
                        self.counted(read.size);
                        let extra = Extra { extents, xattrs };
                        if first_read_steady {
                            break (content, secret, extra, left_out);
                        }
                        return Ok(Some((NodeKind::File { size: read.size, content }, extra, after)));
                    }
                    before = after;
                    file.seek(std::io::SeekFrom::Start(0)).at("read", abs)?;
                }
            }
        };
        let entry = CacheEntry {
            stamp,
            content: content.clone(),
            secret,
            extra: extra.clone(),
            xattrs_left_out: left_out,
        };
        ctx.keep(name, entry);
        Ok(Some((NodeKind::File { size: meta.size(), content }, extra, meta.clone())))
    }

    /// Counts a captured file in the snapshot's stats.
    fn counted(&self, size: u64) {
        self.counters.files.fetch_add(1, Ordering::Relaxed);
        self.counters.bytes.fetch_add(size, Ordering::Relaxed);
    }

    /// Lists a file that kept changing while it was read: it is stored as last read.
    fn changing(&self, rel: &[u8]) {
        self.left_out(rel, LeftOut::Unsettled);
        let mut nc = self.not_covered.lock().unwrap_or_else(|p| p.into_inner());
        nc.skipped.push(SkippedEntry { path: lossy(rel), reason: "changed_while_read".to_owned() });
    }

    /// Reads and stores the content of `file`. A file up to the whole-file limit is checked
    /// against the secret content rules before anything is stored; one that matches is stored
    /// only if `keep` says so.
    fn read_content(
        &self,
        file: &mut std::fs::File,
        abs: &Path,
        size: u64,
        (rel, name): (&[u8], &[u8]),
        keep: impl Fn() -> bool,
    ) -> Result<ReadContent> {
        if size <= WHOLE_FILE_LIMIT {
            // The size is known from the walk, so one `read` takes the whole file: no stat to
            // size a buffer, no second read to find the end. A file that grew meanwhile shows
            // a larger size in the stat after the read, and the caller reads it again. A file
            // that says it is empty is read to its end all the same, as some file systems give
            // no size for what they generate.
            let data = if size == 0 {
                let mut data = Vec::new();
                file.by_ref().take(WHOLE_FILE_LIMIT).read_to_end(&mut data).at("read", abs)?;
                data
            } else {
                read_up_to(file, size as usize).at("read", abs)?
            };
            let bytes = data.len() as u64;
            let secret = secrets::by_content(rel, name, &data);
            if secret.is_some() && !keep() {
                return Ok(ReadContent { content: None, secret, bytes, size: bytes });
            }
            let content = Some(vec![self.writer.write(BlobKind::Data, &data)?]);
            return Ok(ReadContent { content, secret, bytes, size: bytes });
        }
        let (ids, read) = store_chunks(self.writer, file).at("read", abs)??;
        Ok(ReadContent { content: Some(ids), secret: None, bytes: read, size: read })
    }

    /// Reads and stores only the data extents of a sparse file of `size` bytes: its holes are
    /// neither read nor stored. A file that shrank under the read reports a short size, so the
    /// caller reads it again.
    fn read_extents(
        &self,
        file: &std::fs::File,
        abs: &Path,
        extents: &[(u64, u64)],
        size: u64,
    ) -> Result<ReadContent> {
        let (ids, read) = store_chunks(self.writer, ExtentReader::new(file, extents)).at("read", abs)??;
        let whole = read == extents.iter().map(|(_, len)| len).sum::<u64>();
        Ok(ReadContent {
            content: Some(ids),
            secret: None,
            bytes: read,
            size: if whole { size } else { read },
        })
    }
}
