//! Writing snapshot entries to disk: whole subtrees into new directories, and single entries
//! for an in-place restore. Everything goes through [`DirHandle`], so nothing follows a link.

use std::collections::HashSet;
use std::sync::Mutex;

use rayon::prelude::*;

use super::Progress;
use super::fsops::{DirHandle, Meta, stamp_of};
use super::statcache::CacheEntry;
use super::statcache_write::WrittenFiles;
use crate::error::Result;
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::catalog::BlobLookups;
use crate::store::fault::{self, FaultPoint};
use crate::tree::{self, Extra, Node, NodeKind};

/// Writes entries and records what it wrote.
pub(crate) struct Materializer<'a> {
    pub store: &'a Store,
    /// Keep the snapshot's mtimes (a fresh restore) or give rewritten files the current time.
    pub keep_mtime: bool,
    /// Paths that are hard links of an earlier path; they are linked after the pass.
    pub link_later: HashSet<Vec<u8>>,
    /// Files written, with their new stat, for the stat cache.
    pub written: Mutex<WrittenFiles>,
    pub files_written: std::sync::atomic::AtomicU64,
    pub bytes_written: std::sync::atomic::AtomicU64,
    /// Where a front end watches the files written, if one does.
    progress: Option<&'a Progress>,
    /// Remove captured extended attributes a new entry has that the snapshot lacks: those it
    /// inherited from a default ACL above it. A restore into a directory without one skips it.
    pub strip_inherited: bool,
    /// Where content blobs are, looked up in read transactions held across files.
    lookups: BlobLookups<'a>,
    /// Files begun, for the crash tests' `restore-to-half-written` point.
    begun: std::sync::atomic::AtomicU64,
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    if prefix.is_empty() { name.to_vec() } else { [prefix, b"/", name].concat() }
}

impl<'a> Materializer<'a> {
    pub(crate) fn new(store: &'a Store, keep_mtime: bool, link_later: HashSet<Vec<u8>>) -> Self {
        Self {
            store,
            keep_mtime,
            link_later,
            written: Mutex::new(WrittenFiles::default()),
            files_written: Default::default(),
            bytes_written: Default::default(),
            progress: None,
            strip_inherited: true,
            lookups: BlobLookups::new(store.catalog()),
            begun: Default::default(),
        }
    }

    /// What it wrote, for the stat cache. Its read transactions end here, before the caller
    /// writes to the catalog.
    pub(crate) fn into_written(self) -> WrittenFiles {
        self.written.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts what it writes into `progress` too.
    pub(crate) fn observed(mut self, progress: &'a Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    fn meta(&self, node: &Node, force_mtime: bool) -> Meta {
        Meta {
            mode: node.mode,
            uid: node.uid,
            gid: node.gid,
            mtime_ns: (self.keep_mtime || force_mtime).then_some(node.mtime_ns),
            strip_xattrs: self.strip_inherited,
        }
    }

    /// Creates `node` (which must not exist yet) inside `dir`; `rel` is its path.
    pub(crate) fn create(&self, dir: &DirHandle, rel: &[u8], node: &Node) -> Result<()> {
        match &node.kind {
            NodeKind::Dir { tree } => {
                dir.mkdir(&node.name)?;
                let child = dir.open_dir(&node.name)?;
                self.fill(&child, rel, tree)?;
                // Attributes after the entries: a default ACL set first would be inherited by
                // every entry created below it.
                if !node.extra.xattrs.is_empty() || self.strip_inherited {
                    dir.set_xattrs(&node.name, &node.extra.xattrs)?;
                }
                // Directory times are the snapshot's whatever the mode: writing into it moved them.
                dir.set_meta(&node.name, &self.meta(node, true), false)
            }
            NodeKind::File { content, .. } => {
                if self.link_later.contains(rel) {
                    return Ok(());
                }
                let st = self.write_file(dir, &node.name, content, node)?;
                self.remember_written(rel, &st, content, &node.extra);
                Ok(())
            }
            NodeKind::Symlink { target } => {
                dir.symlink(&node.name, target)?;
                dir.set_meta(&node.name, &self.meta(node, true), true)
            }
        }
    }

    /// Creates every entry of tree `tree` inside `dir`, in parallel.
    pub(crate) fn fill(&self, dir: &DirHandle, rel: &[u8], tree: &ObjectId) -> Result<()> {
        let tree = tree::read_tree(self.store, tree)?;
        tree.nodes.par_iter().try_for_each(|node| self.create(dir, &join(rel, &node.name), node))
    }

    /// Writes file `name` with `content` (it must not exist) and its metadata; returns its stat.
    fn write_file(
        &self,
        dir: &DirHandle,
        name: &[u8],
        content: &[ObjectId],
        node: &Node,
    ) -> Result<rustix::fs::Stat> {
        let size = match &node.kind {
            NodeKind::File { size, .. } => *size,
            _ => 0,
        };
        // The third file begun is where a crash test kills a restore: two files whole, one
        // cut short under its real name, the rest not there yet.
        let third = self.begun.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2;
        dir.create_file(name, &self.meta(node, false), (&node.extra, size), |sink| {
            for id in content {
                let blob = self.store.read_blob_held(&self.lookups, id)?;
                if third {
                    sink(&blob[..blob.len() / 2])?;
                    fault::kill_at(FaultPoint::RestoreToHalfWritten);
                    sink(&blob[blob.len() / 2..])?;
                } else {
                    sink(&blob)?;
                }
            }
            Ok(())
        })
    }

    /// Rewrites an existing file by writing a temp file beside it and renaming it over.
    pub(crate) fn replace_file(
        &self,
        dir: &DirHandle,
        rel: &[u8],
        node: &Node,
        content: &[ObjectId],
    ) -> Result<()> {
        let tmp = format!(".cairn-tmp-{}", uuid::Uuid::now_v7().simple()).into_bytes();
        let result = self.write_file(dir, &tmp, content, node).and_then(|_| dir.rename(&tmp, &node.name));
        if result.is_err() {
            let _ = dir.remove(&tmp);
        }
        result?;
        // Stat after the rename: a rename moves the file's ctime, and the cache must match it.
        let st = dir.stat(&node.name)?;
        self.remember_written(rel, &st, content, &node.extra);
        Ok(())
    }

    /// Counts a written file and records its stat for the stat cache.
    fn remember_written(&self, rel: &[u8], st: &rustix::fs::Stat, content: &[ObjectId], extra: &Extra) {
        use std::sync::atomic::Ordering;
        self.files_written.fetch_add(1, Ordering::Relaxed);
        self.bytes_written.fetch_add(st.st_size as u64, Ordering::Relaxed);
        if let Some(progress) = self.progress {
            progress.written(st.st_size as u64);
        }
        self.remember(rel, st, content, extra);
    }

    /// Records the current stat of an entry whose content was already right (only its
    /// metadata was set), so the next save does not read it.
    pub(crate) fn refresh(
        &self,
        dir: &DirHandle,
        name: &[u8],
        rel: &[u8],
        (content, extra): (&[ObjectId], &Extra),
    ) -> Result<()> {
        let st = dir.stat(name)?;
        self.remember(rel, &st, content, extra);
        Ok(())
    }

    fn remember(&self, rel: &[u8], st: &rustix::fs::Stat, content: &[ObjectId], extra: &Extra) {
        let entry = CacheEntry {
            stamp: stamp_of(st),
            content: content.to_vec(),
            secret: None,
            extra: extra.clone(),
            xattrs_left_out: Vec::new(),
        };
        self.written.lock().unwrap_or_else(|p| p.into_inner()).push(rel, &entry);
    }

    /// Links every later path of each hard-link group to the group's first path, then records
    /// every path of the group again: a new link moves the shared inode's ctime.
    pub(crate) fn link_groups(&self, root: &DirHandle, groups: &[Vec<Vec<u8>>]) -> Result<()> {
        for group in groups {
            let Some((first, rest)) = group.split_first() else { continue };
            let (first_dir, first_name) = split(first);
            let from = root.open_rel(first_dir)?;
            for path in rest {
                let (dir, name) = split(path);
                let to = root.open_rel(dir)?;
                to.remove(name)?;
                to.hardlink(name, &from, first_name)?;
            }
            let first_entry = {
                let written = self.written.lock().unwrap_or_else(|p| p.into_inner());
                written.last_of(first).map(|e| (e.content, e.extra))
            };
            if let Some((content, extra)) = first_entry {
                for path in group {
                    let (dir, name) = split(path);
                    let st = root.open_rel(dir)?.stat(name)?;
                    self.remember(path, &st, &content, &extra);
                }
            }
        }
        Ok(())
    }
}

/// Splits `a/b/c` into (`a/b`, `c`).
pub(crate) fn split(rel: &[u8]) -> (&[u8], &[u8]) {
    match rel.iter().rposition(|b| *b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (&[], rel),
    }
}
