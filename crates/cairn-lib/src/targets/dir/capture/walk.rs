//! The walk: a directory is listed, its entries are looked at in parallel (rayon), and each
//! subdirectory recurses, is taken whole from the last capture (`reuse`), or is looked at by the
//! names the journal gives (`by_names.rs`). Each entry hands back its node, its stat cache entry
//! and what it found; the directory gathers them, writes its tree (`summary.rs`) and hands back
//! its tree and what its subtree found.
//!
//! Reads the file system and the old stat cache; shares only atomic counts between threads.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;

use super::file::Cached;
use super::found::Found;
use super::summary::DirCtx;
use super::{IGNORE_FILES, RelPath, node_of, too_long};
use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::store::writer::BlobWriter;
use crate::targets::dir::Progress;
use crate::targets::dir::journal::Plan;
use crate::targets::dir::statcache::{RowMeta, Stamp, StatCache, StoredFiles, Totals, join};
use crate::targets::dir::xattrs;
use crate::tree::rewrite::Run;
use crate::tree::{Extra, Node, NodeKind};

#[derive(Default)]
pub(super) struct Counters {
    pub files: AtomicU64,
    pub dirs: AtomicU64,
    pub symlinks: AtomicU64,
    pub bytes: AtomicU64,
    pub read_bytes: AtomicU64,
}

/// The journal's part of a walk: the plan, and counts for its report.
pub(super) struct JournalWalk {
    /// Summaries are kept only when a watcher answered: without one the next capture walks.
    pub record: bool,
    pub plan: Option<Plan>,
    /// With a plan: how many directories were read whole, and how many by names.
    pub read_whole: Option<AtomicU64>,
    pub by_names: AtomicU64,
    /// Parts of large directories' trees kept unread.
    pub parts_kept: AtomicU64,
    /// Unchanged subdirectories taken from their parent's row, their own unread.
    pub dirs_kept_unread: AtomicU64,
}

/// One walk of a capture: what every directory reads, and the counts all of them add to.
pub(super) struct Walk<'a> {
    pub writer: &'a BlobWriter<'a>,
    /// When the walk started, for the rows it writes (the racy-entry rule).
    pub scan_started_ns: i64,
    pub old_cache: &'a StatCache<'a>,
    pub no_ignore: bool,
    pub include_secrets: bool,
    pub counters: Counters,
    pub progress: &'a Progress,
    pub journal: JournalWalk,
}

/// What a directory takes from those above it.
pub(super) struct Above<'a> {
    /// The ignore rules in force above it.
    pub matchers: &'a [Gitignore],
    /// Whether it is in a `.git` directory (whose files are never ignored).
    pub in_git: bool,
    /// A directory above whose ignore files changed (none or one): nothing below it is taken
    /// unseen. Only a directory's own ancestors can force it, so this is passed down.
    pub forced: &'a [RelPath],
}

/// The directory whose entries are being looked at.
pub(super) struct At<'a> {
    pub abs: &'a Path,
    pub rel: &'a [u8],
    /// The ignore rules in force in it: its parents' and its own.
    pub matchers: &'a [Gitignore],
    pub in_git: bool,
    /// As in [`Above`], counting the directory itself.
    pub forced: &'a [RelPath],
    pub cache: &'a DirCtx,
    /// Its row as the last capture left it, which says what its subdirectories' rows said.
    pub row: Option<&'a RowMeta>,
}

/// What looking at one entry gives its directory.
pub(super) struct Looked {
    pub node: Option<Node>,
    pub cached: Option<Cached>,
    /// What it found, when anything (a subdirectory always has its row).
    pub found: Option<Box<Found>>,
}

/// Looks at `items` on every core, in order. Each result is written in place into one vector:
/// collecting `Result`s would gather the threads' pieces in lists of vectors and copy them
/// again, which for a small directory's few entries cost more than looking at them.
pub(super) fn look_all<T: Send>(
    items: Vec<T>,
    look: impl Fn(T) -> Result<Looked> + Sync,
) -> Result<Vec<Looked>> {
    let mut looked = Vec::new();
    items.into_par_iter().map(&look).collect_into_vec(&mut looked);
    looked.into_iter().collect()
}

/// Moves the entries' nodes into `nodes`, their cache entries into `files` and what they
/// found into `found`, in the entries' order.
pub(super) fn gather(looked: Vec<Looked>, nodes: &mut Vec<Node>, files: &mut Vec<Cached>, found: &mut Found) {
    // Sized exactly: a directory of subdirectories gets no room for files.
    nodes.reserve(looked.iter().filter(|l| l.node.is_some()).count());
    files.reserve(looked.iter().filter(|l| l.cached.is_some()).count());
    for Looked { node, cached, found: sub } in looked {
        nodes.extend(node);
        files.extend(cached);
        if let Some(sub) = sub {
            found.merge(*sub);
        }
    }
}

impl Walk<'_> {
    /// Captures one directory and returns its tree id, with what its subtree found.
    pub(super) fn dir(
        &self,
        listing: std::fs::ReadDir,
        abs: &Path,
        rel: &[u8],
        above: &Above,
    ) -> Result<(ObjectId, Found)> {
        let mut found = Found::new(self.journal.record);
        if let Some(id) = self.dir_by_names(abs, rel, above, &mut found)? {
            return Ok((id, found));
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
        let mut ctx =
            DirCtx { old, old_len, new: Vec::new(), misses: AtomicU64::new(0), parts: None, stored_index };
        let own_forced: [RelPath; 1];
        let forced = if self.journal.plan.is_some() && self.ignore_rules_changed(&ctx, &names) {
            // One forced directory at or above suffices: all below it is below this one too.
            if above.forced.is_empty() {
                own_forced = [rel.to_vec()];
                &own_forced[..]
            } else {
                above.forced
            }
        } else {
            above.forced
        };
        // The listing says which ignore files there are: no lookup for those that are not.
        let listed = |file: &str| {
            names
                .binary_search_by(|(n, _)| n.as_slice().cmp(file.as_bytes()))
                .is_ok_and(|i| names[i].1.file_type().map_or(true, |t| !t.is_dir()))
        };
        let matchers = self.matchers(abs, above.matchers, above.in_git, &listed)?;
        let at = At {
            abs,
            rel,
            matchers: &matchers,
            in_git: above.in_git,
            forced,
            cache: &ctx,
            row: old_meta.as_ref(),
        };
        let looked = look_all(names, |(name, entry)| self.entry(&at, name, entry.metadata()))?;
        let mut nodes = Vec::new();
        gather(looked, &mut nodes, &mut ctx.new, &mut found);
        let id = self.finish_dir(rel, vec![Run::Nodes(nodes)], ctx, old_meta, &mut found)?;
        Ok((id, found))
    }

    /// The ignore rules in force in directory `abs`: its parents' and its own.
    /// `listed` says whether an ignore file may be in the directory (a listing knows; without
    /// one, every name may be).
    pub(super) fn matchers(
        &self,
        abs: &Path,
        parents: &[Gitignore],
        in_git: bool,
        listed: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<Gitignore>> {
        let mut matchers = parents.to_vec();
        if !self.no_ignore
            && !in_git
            && let Some(m) = self.matcher(abs, listed)?
        {
            matchers.push(m);
        }
        Ok(matchers)
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
    /// `above` is what its parent's row says of it, if anything.
    pub(super) fn reuse(
        &self,
        rel: &[u8],
        forced: &[RelPath],
        above: Option<(ObjectId, Totals)>,
        found: &mut Found,
    ) -> Result<Option<ObjectId>> {
        let Some(plan) = &self.journal.plan else { return Ok(None) };
        let reused = plan.reuse(&|dir: &[u8]| self.old_cache.meta(dir), rel, forced, above)?;
        let Some(r) = reused else { return Ok(None) };
        if r.unread {
            self.journal.dirs_kept_unread.fetch_add(1, Ordering::Relaxed);
        }
        let c = &self.counters;
        c.files.fetch_add(r.files, Ordering::Relaxed);
        c.symlinks.fetch_add(r.symlinks, Ordering::Relaxed);
        c.dirs.fetch_add(r.dirs, Ordering::Relaxed);
        c.bytes.fetch_add(r.bytes, Ordering::Relaxed);
        for (path, is_dir) in &r.ignored {
            found.note_ignored(path, *is_dir);
        }
        for (path, rule) in &r.secrets {
            found.note_secret(path, rule);
        }
        found.reused.push((rel.to_vec(), r.tree, r.totals));
        Ok(Some(r.tree))
    }

    fn matcher(&self, dir: &Path, listed: &dyn Fn(&str) -> bool) -> Result<Option<Gitignore>> {
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        for file in IGNORE_FILES.into_iter().filter(|f| listed(f)) {
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

    /// Looks at entry `name` of directory `at`, whose metadata is `meta`.
    pub(super) fn entry(
        &self,
        at: &At,
        name: Vec<u8>,
        meta: std::io::Result<std::fs::Metadata>,
    ) -> Result<Looked> {
        // Filled on the stack and boxed only when not empty (`Found::boxed`).
        let mut found = Found::new(self.journal.record);
        let (node, cached) = self.look(at, name, meta, &mut found)?;
        Ok(Looked { node, cached, found: found.boxed() })
    }

    fn look(
        &self,
        at: &At,
        name: Vec<u8>,
        meta: std::io::Result<std::fs::Metadata>,
        found: &mut Found,
    ) -> Result<(Option<Node>, Option<Cached>)> {
        let (dir_abs, in_git) = (at.abs, at.in_git);
        let rel = join(at.rel, &name);
        let mut meta = match meta {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                found.skip(&rel, "vanished", false);
                return Ok((None, None));
            }
            Err(e) => return Err(Error::io("inspect", &dir_abs.join(OsStr::from_bytes(&name)), e)),
        };
        let ft = meta.file_type();
        // Most entries are files the stat cache vouches for; they never need their full path.
        if ft.is_file() && (in_git || at.matchers.is_empty()) {
            let (file, cached) = self.file(at, rel, &name, &meta, found)?;
            let node = file.map(|(kind, extra, meta)| Node { extra, ..node_of(name, kind, &meta) });
            return Ok((node, cached));
        }
        let abs: PathBuf = dir_abs.join(OsStr::from_bytes(&name));
        // `.git` is never ignored, whatever the rules say (`.*` would match it): an agent's
        // commits are part of its state.
        if !in_git && name != b".git" && Self::is_ignored(at.matchers, &abs, ft.is_dir()) {
            found.ignored(&rel, ft.is_dir());
            return Ok((None, None));
        }
        let mut extra = Extra::default();
        let mut cached = None;
        let kind = if ft.is_dir()
            && let Some(tree) =
                self.reuse(&rel, at.forced, at.row.and_then(|row| row.subdir(&name)), found)?
        {
            extra.xattrs = self.dir_xattrs(&abs, &rel, found);
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
                    found.skip(&rel, reason, true);
                    return Ok((None, None));
                }
            };
            let in_git = in_git || name == b".git";
            extra.xattrs = self.dir_xattrs(&abs, &rel, found);
            let above = Above { matchers: at.matchers, in_git, forced: at.forced };
            let (tree, below) = self.dir(listing, &abs, &rel, &above)?;
            found.merge(below);
            self.counters.dirs.fetch_add(1, Ordering::Relaxed);
            NodeKind::Dir { tree }
        } else if ft.is_symlink() {
            let target = match std::fs::read_link(&abs) {
                Ok(target) => target,
                Err(e) if too_long(&e) => {
                    found.skip(&rel, "path_too_long", false);
                    return Ok((None, None));
                }
                Err(e) => return Err(Error::io("read the link", &abs, e)),
            };
            self.counters.symlinks.fetch_add(1, Ordering::Relaxed);
            NodeKind::Symlink { target: target.as_os_str().as_bytes().to_vec() }
        } else if ft.is_file() {
            let (file, file_cached) = self.file(at, rel, &name, &meta, found)?;
            cached = file_cached;
            match file {
                Some((kind, read_extra, read)) => {
                    meta = read;
                    extra = read_extra;
                    kind
                }
                None => return Ok((None, cached)),
            }
        } else {
            let reason = if ft.is_fifo() {
                "fifo"
            } else if ft.is_socket() {
                "socket"
            } else {
                "device"
            };
            found.skip(&rel, reason, false);
            return Ok((None, None));
        };
        Ok((Some(Node { extra, ..node_of(name, kind, &meta) }), cached))
    }

    /// The captured extended attributes of directory `abs`; those left out are listed.
    pub(super) fn dir_xattrs(&self, abs: &Path, rel: &[u8], found: &mut Found) -> Vec<(Vec<u8>, Vec<u8>)> {
        match xattrs::of_path(abs) {
            Ok((kept, left_out)) => {
                found.xattrs_left_out(rel, &left_out);
                kept
            }
            Err(_) => {
                found.xattrs_left_out(rel, &["(unreadable)".to_owned()]);
                Vec::new()
            }
        }
    }
}
