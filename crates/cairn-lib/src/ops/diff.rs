//! `cairn diff A [B]`: what changed between two snapshots of a target, or between a snapshot and
//! the live tree. Walks the Merkle trees, so the cost follows the changed subtrees.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Hint, Operation, Result};
use crate::id::ObjectId;
use crate::snapshot::Snapshot;
use crate::store::writer::BlobWriter;
use crate::targets::TargetKind;
use crate::targets::dir::capture;
use crate::targets::dir::statcache::StatCache;
use crate::tree::diff::{Change, TreeDiff, TreeSource};
use crate::tree::{self, DirRoot, Node, NodeKind};

/// Files larger than this get no patch and no line counts (a line diff holds both sides in
/// memory); they are still told apart as text or binary by their first bytes.
pub(crate) const MAX_PATCH_BYTES: u64 = 8 * 1024 * 1024;

/// How much of a file decides whether it is binary (git looks at the same amount).
const SNIFF_BYTES: usize = 8192;

/// What to compare. The CLI's help is the doc comment of each field; the MCP description,
/// written for an agent, is the `schemars` one.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct DiffOptions {
    /// The older snapshot.
    #[schemars(description = "The older side: a snapshot id, name or \"latest\".")]
    pub from: String,
    /// The newer snapshot; omit it to compare with the live state.
    #[schemars(
        description = "The newer side: a snapshot reference. Omit it to compare with the live files."
    )]
    pub to: Option<String>,
    /// The target the references are resolved among.
    #[schemars(description = "The target the references are looked up among.")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// Show unified diffs of text files.
    #[schemars(description = "Include unified diffs of changed text files.")]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub patch: bool,
    /// Show per-file line counts, like `git diff --stat`.
    #[schemars(description = "Include per-file counts of added and removed lines.")]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub stat: bool,
    /// The session (name or id).
    #[schemars(description = "The session to look in, for this call only (name or id).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Counts of changed entries (files and links; directories only when their mode changed).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct DiffSummary {
    /// Entries only in the newer side.
    pub added: u64,
    /// Entries only in the older side.
    pub removed: u64,
    /// Entries in both that differ.
    pub modified: u64,
    /// Files and links in the newer side that did not change.
    pub unchanged: u64,
}

/// How an entry changed between the older side and the newer one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Only in the newer side.
    Added,
    /// Only in the older side.
    Removed,
    /// In both, with the same kind, and different.
    Modified,
    /// In both, as different kinds (a file that became a directory, …).
    TypeChanged,
}

word_schema!(ChangeKind);

impl ChangeKind {
    /// The word JSON output uses: `added`, `removed`, `modified`, `type_changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Modified => "modified",
            ChangeKind::TypeChanged => "type_changed",
        }
    }
}

/// One changed entry.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffEntry {
    /// Path relative to the target.
    pub path: String,
    /// `file`, `dir` or `symlink` (the newer side's kind, or the older one's when removed).
    pub kind: String,
    /// `added`, `removed`, `modified` or `type_changed`.
    pub change: ChangeKind,
    /// What differs: `content`, `mode`, `owner`, `mtime`, `link_target`, `kind`, `xattrs`, `acl`.
    pub what: Vec<String>,
    /// Size before (files).
    pub size_before: Option<u64>,
    /// Size after (files).
    pub size_after: Option<u64>,
    /// Mode before, octal.
    pub mode_before: Option<String>,
    /// Mode after, octal.
    pub mode_after: Option<String>,
    /// Link target before (symlinks).
    pub link_before: Option<String>,
    /// Link target after (symlinks).
    pub link_after: Option<String>,
    /// Lines added (with `stat` or `patch`; absent for binary and too large files, and for
    /// entries whose content did not change).
    pub lines_added: Option<u64>,
    /// Lines removed (with `stat` or `patch`; absent as for `lines_added`).
    pub lines_removed: Option<u64>,
    /// True when the file is binary (no line counts or patch).
    pub binary: bool,
    /// True when a text file is over 8 MiB: no line counts or patch.
    pub too_large: bool,
    /// Unified diff (with `patch`).
    pub patch: Option<String>,
}

/// The result of a diff.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffResult {
    /// The target compared.
    pub target: String,
    /// The older snapshot.
    pub from: Snapshot,
    /// The newer snapshot, or absent for the live state.
    pub to: Option<Snapshot>,
    /// Counts.
    pub summary: DiffSummary,
    /// The changed entries, sorted by path.
    pub entries: Vec<DiffEntry>,
    /// Trees read to compute the diff (unchanged subtrees are never read).
    pub trees_read: u64,
    /// For transcript snapshots: the conversation entries added and removed on the path.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub transcript: Option<cairn_transcript::TranscriptDiff>,
}

/// Where to read a side's file contents from.
enum Side<'a> {
    Stored,
    Live(&'a Path),
}

impl Repository {
    /// Compares two snapshots, or a snapshot and the live tree.
    pub fn diff(&self, options: &DiffOptions, context: &CallContext) -> Result<DiffResult> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let target =
            options.target.as_deref().map(crate::targets::Target::parse).transpose()?.map(|t| t.key());
        let from = self.resolve_snapshot(&session, &options.from, target.as_deref())?;
        if from.kind == TargetKind::Transcript {
            return self.diff_transcript_generic(&session, from, options.to.as_deref());
        }
        let to = options
            .to
            .as_deref()
            .map(|r| self.resolve_snapshot(&session, r, Some(target.as_deref().unwrap_or(&from.target))))
            .transpose()?;
        if let Some(to) = &to
            && to.target != from.target
        {
            return Err(Error::invalid(format!(
                "{} and {} are snapshots of different targets ({} and {}); diff snapshots of one target",
                from.id, to.id, from.target, to.target
            )));
        }
        match from.kind {
            TargetKind::Dir => {}
            TargetKind::Debug => {
                return Err(Error::invalid("debug captures are compared by the debug diff, not this one")
                    .hint(Hint::Run(Operation::DiffDebugCaptures)));
            }
            TargetKind::Compose | TargetKind::Transcript => {
                return Err(Error::invalid(format!(
                    "{} snapshots cannot be compared yet; only directory snapshots can",
                    from.kind
                )));
            }
        }
        let writer = BlobWriter::dry(self);
        let from_root = tree::read_root(self, &root_of(&from)?)?;
        let (to_root, to_stats, side) = match &to {
            Some(to) => (tree::read_root(self, &root_of(to)?)?, to.stats.clone(), Side::Stored),
            None => {
                self.refuse_interrupted(&from.target)?;
                let path = Path::new(&from.target);
                let filter = capture::Filter::of_snapshot(&from.details);
                let cache = StatCache::load(self, &from.target)?;
                let live = capture::capture(&writer, path, &cache, filter)?;
                let root: DirRoot = tree::decode(&live.root, &writer.read_object(&live.root)?)?;
                (root, live.stats, Side::Live(path))
            }
        };
        let differ = TreeDiff::new(&writer as &dyn TreeSource, true);
        let mut changes = Vec::new();
        if let (NodeKind::Dir { tree: a }, NodeKind::Dir { tree: b }) =
            (&from_root.top.kind, &to_root.top.kind)
        {
            differ.trees(b"", a, b, &mut changes)?;
        }
        let mut summary = DiffSummary::default();
        let mut entries = Vec::new();
        for change in &changes {
            let Some(entry) = self.entry(change, options, &side)? else {
                continue;
            };
            match entry.change {
                ChangeKind::Added => summary.added += 1,
                ChangeKind::Removed => summary.removed += 1,
                ChangeKind::Modified | ChangeKind::TypeChanged => summary.modified += 1,
            }
            entries.push(entry);
        }
        let changed_in_new =
            entries.iter().filter(|e| e.change != ChangeKind::Removed && e.kind != "dir").count() as u64;
        summary.unchanged = (to_stats.files + to_stats.symlinks).saturating_sub(changed_in_new);
        Ok(DiffResult {
            target: from.target.clone(),
            from,
            to,
            summary,
            entries,
            trees_read: differ.trees_read.load(Ordering::Relaxed),
            transcript: None,
        })
    }

    fn entry(&self, change: &Change, options: &DiffOptions, side: &Side<'_>) -> Result<Option<DiffEntry>> {
        let (old, new) = (change.old.as_ref(), change.new.as_ref());
        let is_dir = |n: Option<&Node>| n.is_some_and(|n| matches!(n.kind, NodeKind::Dir { .. }));
        // Directories appear through their contents; a directory of its own counts only
        // when its mode or owner changed.
        if (old.is_none() || new.is_none()) && (is_dir(old) || is_dir(new)) {
            return Ok(None);
        }
        let size = |n: Option<&Node>| match n.map(|n| &n.kind) {
            Some(NodeKind::File { size, .. }) => Some(*size),
            _ => None,
        };
        let mode = |n: Option<&Node>| n.map(|n| format!("{:o}", n.mode));
        let link = |n: Option<&Node>| match n.map(|n| &n.kind) {
            Some(NodeKind::Symlink { target }) => Some(String::from_utf8_lossy(target).into_owned()),
            _ => None,
        };
        let mut what = Vec::new();
        let change_kind = match (old, new) {
            (None, Some(_)) => ChangeKind::Added,
            (Some(_), None) => ChangeKind::Removed,
            (Some(o), Some(n)) => {
                if o.kind.label() != n.kind.label() {
                    what.push("kind".into());
                    ChangeKind::TypeChanged
                } else {
                    match (&o.kind, &n.kind) {
                        (NodeKind::File { content: a, .. }, NodeKind::File { content: b, .. })
                            if a != b || o.extra.extents != n.extra.extents =>
                        {
                            what.push("content".into())
                        }
                        (NodeKind::Symlink { target: a }, NodeKind::Symlink { target: b }) if a != b => {
                            what.push("link_target".into())
                        }
                        _ => {}
                    }
                    if o.mode != n.mode {
                        what.push("mode".into());
                    }
                    if (o.uid, o.gid) != (n.uid, n.gid) {
                        what.push("owner".into());
                    }
                    what.extend(xattr_changes(&o.extra.xattrs, &n.extra.xattrs).map(String::from));
                    if o.mtime_ns != n.mtime_ns && !is_dir(new) {
                        what.push("mtime".into());
                    }
                    ChangeKind::Modified
                }
            }
            (None, None) => return Ok(None),
        };
        let mut entry = DiffEntry {
            path: String::from_utf8_lossy(&change.path).into_owned(),
            kind: new.or(old).map(|n| n.kind.label()).unwrap_or("file").into(),
            change: change_kind,
            what,
            size_before: size(old),
            size_after: size(new),
            mode_before: mode(old),
            mode_after: mode(new),
            link_before: link(old),
            link_after: link(new),
            lines_added: None,
            lines_removed: None,
            binary: false,
            too_large: false,
            patch: None,
        };
        if (options.patch || options.stat)
            && entry.kind == "file"
            && (entry.what.iter().any(|w| w == "content") || change_kind != ChangeKind::Modified)
        {
            self.add_text_diff(&mut entry, change, options.patch, side)?;
        }
        Ok(Some(entry))
    }

    fn add_text_diff(
        &self,
        entry: &mut DiffEntry,
        change: &Change,
        patch: bool,
        side: &Side<'_>,
    ) -> Result<()> {
        let live = match side {
            Side::Stored => None,
            Side::Live(root) => Some(*root),
        };
        let too_big = entry.size_before.unwrap_or(0).max(entry.size_after.unwrap_or(0)) > MAX_PATCH_BYTES;
        if too_big {
            let old_head = change.old.as_ref().map(|n| self.head(n, None, &change.path)).transpose()?;
            let new_head = change.new.as_ref().map(|n| self.head(n, live, &change.path)).transpose()?;
            let binary = [old_head, new_head].iter().flatten().any(|h| looks_binary(h, false));
            entry.binary = binary;
            entry.too_large = !binary;
            if patch {
                entry.patch = Some(if binary {
                    format!("Binary files a/{0} and b/{0} differ\n", entry.path)
                } else {
                    format!("Text files a/{0} and b/{0} differ (too large for a line diff)\n", entry.path)
                });
            }
            return Ok(());
        }
        let before = match &change.old {
            Some(n) => self.content(n, None, &change.path)?,
            None => Vec::new(),
        };
        let after = match &change.new {
            Some(n) => self.content(n, live, &change.path)?,
            None => Vec::new(),
        };
        if looks_binary(&before, true) || looks_binary(&after, true) {
            entry.binary = true;
            if patch {
                entry.patch = Some(format!("Binary files a/{0} and b/{0} differ\n", entry.path));
            }
            return Ok(());
        }
        let (a, b) = (String::from_utf8_lossy(&before), String::from_utf8_lossy(&after));
        let text = similar::TextDiff::from_lines(a.as_ref(), b.as_ref());
        let (mut added, mut removed) = (0, 0);
        for change in text.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        entry.lines_added = Some(added);
        entry.lines_removed = Some(removed);
        if patch {
            let header_a =
                if change.old.is_some() { format!("a/{}", entry.path) } else { "/dev/null".into() };
            let header_b =
                if change.new.is_some() { format!("b/{}", entry.path) } else { "/dev/null".into() };
            entry.patch = Some(text.unified_diff().header(&header_a, &header_b).to_string());
        }
        Ok(())
    }

    /// The first bytes of a file (up to [`SNIFF_BYTES`]), read without loading the rest.
    fn head(&self, node: &Node, live_root: Option<&Path>, rel: &[u8]) -> Result<Vec<u8>> {
        let NodeKind::File { content, .. } = &node.kind else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        if let Some(root) = live_root {
            use std::io::Read;
            use std::os::unix::ffi::OsStrExt;
            let path: PathBuf = root.join(std::ffi::OsStr::from_bytes(rel));
            let file = std::fs::File::open(&path).map_err(|e| Error::io("read", &path, e))?;
            file.take(SNIFF_BYTES as u64).read_to_end(&mut out).map_err(|e| Error::io("read", &path, e))?;
            return Ok(out);
        }
        for id in content {
            out.extend_from_slice(&self.read_blob(id)?);
            if out.len() >= SNIFF_BYTES {
                break;
            }
        }
        Ok(logical(node, out, SNIFF_BYTES))
    }

    pub(crate) fn content(&self, node: &Node, live_root: Option<&Path>, rel: &[u8]) -> Result<Vec<u8>> {
        let NodeKind::File { content, .. } = &node.kind else {
            return Ok(Vec::new());
        };
        if let Some(root) = live_root {
            use std::os::unix::ffi::OsStrExt;
            let path: PathBuf = root.join(std::ffi::OsStr::from_bytes(rel));
            return std::fs::read(&path).map_err(|e| Error::io("read", &path, e));
        }
        let mut out = Vec::new();
        for id in content {
            out.extend_from_slice(&self.read_blob(id)?);
        }
        Ok(logical(node, out, usize::MAX))
    }
}

/// The first `limit` bytes of a stored file whose content (or its head) is `data`: a sparse
/// file's holes, which its content leaves out, read as zeros.
fn logical(node: &Node, mut data: Vec<u8>, limit: usize) -> Vec<u8> {
    use std::io::Read;
    if let (Some(extents), NodeKind::File { size, .. }) = (&node.extra.extents, &node.kind) {
        let mut out = Vec::new();
        // A head of the data ends before the extents do: what was expanded up to there is kept.
        let _ = crate::tree::sparse::Expand::new(&data[..], extents, *size)
            .take(limit as u64)
            .read_to_end(&mut out);
        return out;
    }
    data.truncate(limit);
    data
}

/// Which of `xattrs` (`user.*`) and `acl` (the POSIX ACL attributes) differ between two sorted
/// attribute lists.
fn xattr_changes(a: &[(Vec<u8>, Vec<u8>)], b: &[(Vec<u8>, Vec<u8>)]) -> impl Iterator<Item = &'static str> {
    let is_acl = |name: &[u8]| name.starts_with(b"system.posix_acl_");
    let part = |list: &[(Vec<u8>, Vec<u8>)], acl: bool| -> Vec<(Vec<u8>, Vec<u8>)> {
        list.iter().filter(|(n, _)| is_acl(n) == acl).cloned().collect()
    };
    let user = part(a, false) != part(b, false);
    let acl = part(a, true) != part(b, true);
    [(user, "xattrs"), (acl, "acl")].into_iter().filter(|(on, _)| *on).map(|(_, w)| w)
}

/// True when `bytes` hold a NUL in their first [`SNIFF_BYTES`], or are not UTF-8. When not `complete`, the
/// bytes are a head that may end inside a character; only an invalid sequence before its end counts then.
pub(crate) fn looks_binary(bytes: &[u8], complete: bool) -> bool {
    if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) {
        return true;
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => false,
        Err(e) => complete || e.error_len().is_some(),
    }
}

fn root_of(s: &Snapshot) -> Result<ObjectId> {
    s.root.ok_or_else(|| Error::corrupt(format!("snapshot {} has no root", s.id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_a_nul_or_invalid_utf8_and_a_cut_character_is_not() {
        assert!(!looks_binary(b"plain text\n", true));
        assert!(looks_binary(b"a\0b", true));
        assert!(looks_binary(&[0xff, b'a'], true));
        let cut = &"é".as_bytes()[..1];
        assert!(looks_binary(cut, true));
        assert!(!looks_binary(cut, false));
        assert!(looks_binary(&[0xff, b'a'], false));
    }
}
