//! One file compared across two snapshots of a directory, side by side: the rows a viewer
//! shows (old line beside new line), grouped into hunks with a few lines of context. Looks the
//! path up through the two Merkle trees (one tree per directory level), reads only that file.

use serde::{Deserialize, Serialize};

use super::diff::{MAX_PATCH_BYTES, looks_binary};
use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Result, echo};
use crate::id::SnapshotId;
use crate::snapshot::Snapshot;
use crate::targets::TargetKind;
use crate::tree::{self, Node, NodeKind};

/// Which file to compare, between which snapshots.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct FileDiffOptions {
    /// The older snapshot.
    pub from: String,
    /// The newer snapshot.
    pub to: String,
    /// The file, relative to the snapshots' directory.
    pub path: String,
    /// Lines of context around each change (3 when omitted).
    #[cfg_attr(feature = "clap", arg(long))]
    pub context: Option<usize>,
    /// The target the references are resolved among.
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// One file side by side.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileDiff {
    /// The file.
    pub path: String,
    /// The older snapshot.
    pub from: SnapshotId,
    /// The newer snapshot.
    pub to: SnapshotId,
    /// Its size in the older snapshot (absent when it did not exist there).
    pub size_before: Option<u64>,
    /// Its size in the newer snapshot.
    pub size_after: Option<u64>,
    /// True when either side is binary: no rows.
    pub binary: bool,
    /// True when either side is over 8 MiB: no rows.
    pub too_large: bool,
    /// The rows, hunk after hunk; a `skip` row stands for the unchanged lines between hunks.
    pub rows: Vec<DiffRow>,
}

/// One row of a side-by-side view.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffRow {
    /// `equal`, `delete` (old side only), `insert` (new side only), `replace` (both, changed)
    /// or `skip` (unchanged lines left out).
    pub tag: String,
    /// The older side's line number, from 1.
    pub old_line: Option<usize>,
    /// The older side's text, without its line end.
    pub old: Option<String>,
    /// The newer side's line number, from 1.
    pub new_line: Option<usize>,
    /// The newer side's text.
    pub new: Option<String>,
}

impl Repository {
    /// Compares one file between two directory snapshots, side by side.
    pub fn file_diff(&self, options: &FileDiffOptions, context: &CallContext) -> Result<FileDiff> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let target = options.target.as_deref().map(super::list::list_target_key).transpose()?;
        let from = self.resolve_snapshot(&session, &options.from, target.as_deref())?;
        let to =
            self.resolve_snapshot(&session, &options.to, Some(target.as_deref().unwrap_or(&from.target)))?;
        if from.kind != TargetKind::Dir || to.target != from.target {
            return Err(Error::invalid(format!(
                "{} and {} are not two snapshots of one directory; compare files of one directory's snapshots",
                from.id, to.id
            )));
        }
        let rel = options.path.trim_matches('/');
        if rel.is_empty() || rel.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
            return Err(Error::invalid(format!(
                "{:?} is not a path inside the directory; give it relative, e.g. src/main.rs",
                echo(&options.path)
            )));
        }
        let old = self.node_at(&from, rel)?;
        let new = self.node_at(&to, rel)?;
        if old.is_none() && new.is_none() {
            return Err(Error::not_found(format!(
                "{:?} is in neither snapshot ({} nor {})",
                echo(rel),
                from.id,
                to.id
            )));
        }
        let size = |n: &Option<Node>| match n.as_ref().map(|n| &n.kind) {
            Some(NodeKind::File { size, .. }) => Some(*size),
            _ => None,
        };
        let mut out = FileDiff {
            path: rel.to_owned(),
            from: from.id,
            to: to.id,
            size_before: size(&old),
            size_after: size(&new),
            binary: false,
            too_large: false,
            rows: Vec::new(),
        };
        if out.size_before.unwrap_or(0).max(out.size_after.unwrap_or(0)) > MAX_PATCH_BYTES {
            out.too_large = true;
            return Ok(out);
        }
        let read = |n: &Option<Node>| match n {
            Some(n) => self.content(n, None, rel.as_bytes()),
            None => Ok(Vec::new()),
        };
        let (before, after) = (read(&old)?, read(&new)?);
        if looks_binary(&before, true) || looks_binary(&after, true) {
            out.binary = true;
            return Ok(out);
        }
        let (a, b) = (String::from_utf8_lossy(&before), String::from_utf8_lossy(&after));
        out.rows = side_by_side(&a, &b, options.context.unwrap_or(3));
        Ok(out)
    }

    /// The bytes of one file of a directory snapshot (up to 8 MiB), for a viewer that shows
    /// it whole (an image beside its other version); `None` when the snapshot has no file
    /// there.
    pub fn file_bytes(
        &self,
        reference: &str,
        path: &str,
        session: Option<&str>,
        context: &CallContext,
    ) -> Result<Option<Vec<u8>>> {
        let session = self.call_session(session, context)?;
        let snapshot = self.resolve_snapshot(&session, reference, None)?;
        let rel = path.trim_matches('/');
        if snapshot.kind != TargetKind::Dir || rel.is_empty() || rel.split('/').any(|c| c == ".." || c == ".")
        {
            return Err(Error::invalid(format!(
                "{:?} is not a path inside directory snapshot {}; give it relative, e.g. img/logo.png",
                echo(path),
                snapshot.id
            )));
        }
        match self.node_at(&snapshot, rel)? {
            Some(node @ Node { kind: NodeKind::File { size, .. }, .. }) => {
                if size > MAX_PATCH_BYTES {
                    return Err(Error::invalid(format!(
                        "{} is over 8 MiB; restore it to look at it",
                        echo(rel)
                    )));
                }
                Ok(Some(self.content(&node, None, rel.as_bytes())?))
            }
            _ => Ok(None),
        }
    }

    /// The entry at `rel` in a directory snapshot, if there is one.
    fn node_at(&self, snapshot: &Snapshot, rel: &str) -> Result<Option<Node>> {
        let root =
            snapshot.root.ok_or_else(|| Error::corrupt(format!("snapshot {} has no root", snapshot.id)))?;
        let mut node = tree::read_root(self, &root)?.top;
        for name in rel.split('/') {
            let NodeKind::Dir { tree: id } = &node.kind else { return Ok(None) };
            let tree = tree::read_tree(self, id)?;
            match tree.nodes.binary_search_by(|n| n.name.as_slice().cmp(name.as_bytes())) {
                Ok(i) => node = tree.nodes[i].clone(),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(node))
    }
}

/// The rows of two texts side by side, in hunks with `context` lines around each change.
fn side_by_side(a: &str, b: &str, context: usize) -> Vec<DiffRow> {
    let diff = similar::TextDiff::from_lines(a, b);
    let (old, new) = (diff.old_slices(), diff.new_slices());
    let line = |s: &str| s.trim_end_matches(['\n', '\r']).to_owned();
    let mut rows = Vec::new();
    for (i, group) in diff.grouped_ops(context).iter().enumerate() {
        if i > 0 {
            rows.push(DiffRow { tag: "skip".into(), old_line: None, old: None, new_line: None, new: None });
        }
        for op in group {
            let (tag, o, n) = op.as_tag_tuple();
            let (olen, nlen) = (o.len(), n.len());
            for k in 0..olen.max(nlen) {
                let oi = (k < olen).then(|| o.start + k);
                let ni = (k < nlen).then(|| n.start + k);
                let tag = match tag {
                    similar::DiffTag::Equal => "equal",
                    similar::DiffTag::Delete => "delete",
                    similar::DiffTag::Insert => "insert",
                    similar::DiffTag::Replace if oi.is_some() && ni.is_some() => "replace",
                    similar::DiffTag::Replace if oi.is_some() => "delete",
                    similar::DiffTag::Replace => "insert",
                };
                rows.push(DiffRow {
                    tag: tag.into(),
                    old_line: oi.map(|i| i + 1),
                    old: oi.map(|i| line(old[i])),
                    new_line: ni.map(|i| i + 1),
                    new: ni.map(|i| line(new[i])),
                });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pair_changed_lines_and_mark_the_gaps_between_hunks() {
        let a: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let b = a.replace("line 2\n", "line two\n").replace("line 19\n", "");
        let rows = side_by_side(&a, &b, 1);
        let tags: Vec<&str> = rows.iter().map(|r| r.tag.as_str()).collect();
        assert_eq!(tags, ["equal", "replace", "equal", "skip", "equal", "delete", "equal"]);
        assert_eq!((rows[1].old.as_deref(), rows[1].new.as_deref()), (Some("line 2"), Some("line two")));
        assert_eq!((rows[5].old_line, rows[5].new_line), (Some(19), None));
    }
}
