//! Saving a sandboxed workspace: a directory save that leaves out the top-level entries its runner owns and refuses links (the codecalc profile of `cairn mcp` serves it).
//!
//! Such a workspace has stricter rules than a plain directory save: some top-level entries
//! belong to the sandbox runner and are never part of a snapshot, and symbolic or hard links
//! are refused outright, since either could make a later restore reach outside the workspace.
//! The capture is the ordinary incremental one; the excluded entries are cut from the top tree
//! before the record is committed, and the links are found in the captured trees, so the
//! workspace is walked once.

use std::path::PathBuf;

use serde::Deserialize;

use crate::Repository;
use crate::error::{Error, Result};
use crate::id::{ObjectId, SnapshotId};
use crate::snapshot::{NotCovered, Snapshot, SnapshotStats};
use crate::store::writer::BlobWriter;
use crate::targets::dir::{capture, statcache::StatCache};
use crate::tree::{self, DirRoot, NodeKind, Tree};

/// What to save, and what to leave out.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WorkspaceSaveOptions {
    /// The workspace directory.
    pub workspace: PathBuf,
    /// Names of top-level entries that are never captured (e.g. `.codecalc-run`).
    pub exclude: Vec<String>,
    /// What the snapshot is being taken before (a free-form label).
    pub description: Option<String>,
    /// The session to save into.
    pub session: Option<String>,
}

impl Repository {
    /// Captures a workspace as a new snapshot, leaving out the excluded top-level entries and
    /// refusing symbolic links and hard links anywhere else in it.
    pub fn save_workspace(
        &self,
        options: &WorkspaceSaveOptions,
        context: &super::resolve::CallContext,
    ) -> Result<Snapshot> {
        let path = crate::targets::canonical_dir(&options.workspace)?;
        self.refuse_overlap(&path)?;
        let session = self.call_session(options.session.as_deref(), context)?;
        let key = path.to_string_lossy().into_owned();
        let _lock = self.lock_target(&key, "a save")?;
        self.refuse_interrupted(&key)?;

        let started = std::time::Instant::now();
        let old_cache = StatCache::load(self, &key)?;
        let writer = BlobWriter::new(self);
        let captured = capture::capture(&writer, &path, &old_cache, capture::Filter::ALL)?;
        drop(old_cache);
        writer.finish()?;

        let full = tree::read_root(self, &captured.root)?;
        let excluded = |name: &[u8]| options.exclude.iter().any(|e| e.as_bytes() == name);
        let under_excluded = |rel: &[u8]| {
            let first = rel.split(|b| *b == b'/').next().unwrap_or(rel);
            excluded(first)
        };
        if let Some(group) = full
            .hardlinks
            .iter()
            .map(|g| g.iter().filter(|p| !under_excluded(p)).collect::<Vec<_>>())
            .find(|g| !g.is_empty())
        {
            let names: Vec<String> = group.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect();
            return Err(Error::invalid(format!(
                "{} is a hard link ({}); workspace snapshots refuse hard links: replace it with a plain copy and save again",
                names[0],
                names.join(", ")
            )));
        }
        // A link whose other names are outside the workspace is a hard link all the same, and
        // the one that could let a restore reach a file elsewhere.
        if let Some(rel) = captured.linked_outside.iter().find(|p| !under_excluded(p)) {
            return Err(Error::invalid(format!(
                "{} is a hard link to a file outside the workspace; workspace snapshots refuse hard links: replace it with a plain copy and save again",
                String::from_utf8_lossy(rel)
            )));
        }
        let NodeKind::Dir { tree: top_tree } = &full.top.kind else {
            return Err(Error::corrupt("a directory snapshot's top entry is not a directory"));
        };
        let mut top = tree::read_tree(self, top_tree)?;
        top.nodes.retain(|n| !excluded(&n.name));
        let mut stats =
            SnapshotStats { dirs: 1, read_bytes: captured.stats.read_bytes, ..SnapshotStats::default() };
        self.count_refusing_links(&top, b"", &mut stats)?;

        let rewriter = BlobWriter::new(self);
        let mut root = DirRoot { top: full.top.clone(), hardlinks: Vec::new() };
        root.top.kind = NodeKind::Dir { tree: tree::write(&rewriter, &top)? };
        let root_id = tree::write_root(&rewriter, &root)?;
        rewriter.finish()?;
        let (new_a, stored_a) = writer.totals();
        let (new_b, stored_b) = rewriter.totals();
        stats.new_bytes = new_a + new_b;
        stats.stored_bytes = stored_a + stored_b;
        stats.duration_ms = started.elapsed().as_millis() as u64;

        let mut not_covered = captured.not_covered;
        not_covered.skipped.retain(|s| !under_excluded(s.path.as_bytes()));
        let snapshot = self.workspace_record(key.clone(), session.id, options, stats, not_covered, root_id);
        self.commit_snapshot(&snapshot, false)?;
        captured.cache.store(self, &key)?;
        Ok(snapshot)
    }

    fn workspace_record(
        &self,
        key: String,
        session: crate::id::SessionId,
        options: &WorkspaceSaveOptions,
        stats: SnapshotStats,
        not_covered: NotCovered,
        root: ObjectId,
    ) -> Snapshot {
        Snapshot {
            id: SnapshotId::new(),
            name: None,
            description: options.description.clone(),
            target: key,
            kind: crate::targets::TargetKind::Dir,
            session,
            created_at: crate::time::now_rfc3339(),
            safety: false,
            stats,
            not_covered,
            details: serde_json::json!({ "no_ignore": true, "excluded": options.exclude }),
            root: Some(root),
        }
    }

    /// Adds the entries under `tree` to `stats`, refusing the first symbolic link.
    fn count_refusing_links(&self, tree: &Tree, prefix: &[u8], stats: &mut SnapshotStats) -> Result<()> {
        for node in &tree.nodes {
            let rel = if prefix.is_empty() { node.name.clone() } else { [prefix, b"/", &node.name].concat() };
            match &node.kind {
                NodeKind::File { size, .. } => {
                    stats.files += 1;
                    stats.bytes += size;
                }
                NodeKind::Dir { tree: id } => {
                    stats.dirs += 1;
                    self.count_refusing_links(&tree::read_tree(self, id)?, &rel, stats)?;
                }
                NodeKind::Symlink { .. } => {
                    return Err(Error::invalid(format!(
                        "{} is a symbolic link; workspace snapshots refuse symlinks: replace it with a plain copy of its target and save again",
                        String::from_utf8_lossy(&rel)
                    )));
                }
            }
        }
        Ok(())
    }
}
