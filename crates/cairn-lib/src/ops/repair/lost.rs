//! What each snapshot lost: after the index is rebuilt, every snapshot is walked and each
//! path whose content (or, for a directory, whose listing) the index no longer holds is
//! listed; `/` when the whole snapshot is lost. The same walk tells a repair which objects to
//! look for in a pack that lost its header.

use std::collections::{HashMap, HashSet};

use super::DamagedSnapshot;
use crate::Repository;
use crate::error::Result;
use crate::id::ObjectId;
use crate::tree::NodeKind;

impl Repository {
    /// Every snapshot that refers to data the index no longer holds, with what it lost.
    pub(super) fn damaged_snapshots(&self) -> Result<Vec<DamagedSnapshot>> {
        let mut out = Vec::new();
        for (id, target, kind, root) in self.catalog().all_snapshot_roots()? {
            let lost = match (kind.parse::<crate::targets::TargetKind>(), root) {
                (_, None) => vec!["/".to_owned()],
                (Ok(crate::targets::TargetKind::Dir), Some(root)) => self.lost_paths(&root)?,
                (_, Some(root)) => {
                    let mut live = HashSet::new();
                    match crate::targets::referenced_objects(self, &kind, &root, &mut live) {
                        Ok(()) if self.all_indexed(&live)? => Vec::new(),
                        _ => vec!["/".to_owned()],
                    }
                }
            };
            if !lost.is_empty() {
                out.push(DamagedSnapshot { id, target, lost });
            }
        }
        Ok(out)
    }

    /// The objects snapshots refer to that the index lacks, with their plain length when a
    /// tree tells it (a file stored as one blob, without holes): what a search of a pack
    /// without its header looks for.
    pub(super) fn wanted_blobs(&self) -> Result<HashMap<ObjectId, Option<u32>>> {
        let mut wanted = HashMap::new();
        let mut want = |id: &ObjectId, len: Option<u32>| -> Result<()> {
            if self.catalog().blob_location(id)?.is_none() {
                wanted.insert(*id, len);
            }
            Ok(())
        };
        for (_, _, kind, root) in self.catalog().all_snapshot_roots()? {
            let Some(root) = root else { continue };
            if kind.parse::<crate::targets::TargetKind>().ok() != Some(crate::targets::TargetKind::Dir) {
                let mut live = HashSet::new();
                // What cannot be walked is simply not looked for.
                let _ = crate::targets::referenced_objects(self, &kind, &root, &mut live);
                for id in &live {
                    want(id, None)?;
                }
                continue;
            }
            want(&root, None)?;
            let Ok(doc) = crate::tree::read_root(self, &root) else { continue };
            let mut stack = Vec::new();
            if let NodeKind::Dir { tree } = doc.top.kind {
                stack.push(tree);
            }
            while let Some(id) = stack.pop() {
                want(&id, None)?;
                let Ok(tree) = crate::tree::read_tree(self, &id) else { continue };
                for node in tree.nodes {
                    match node.kind {
                        NodeKind::Dir { tree } => stack.push(tree),
                        NodeKind::File { size, content } => {
                            let whole = content.len() == 1 && node.extra.extents.is_none();
                            let len = whole.then(|| u32::try_from(size).ok()).flatten();
                            for id in &content {
                                want(id, len)?;
                            }
                        }
                        NodeKind::Symlink { .. } => {}
                    }
                }
            }
        }
        Ok(wanted)
    }

    fn all_indexed(&self, ids: &HashSet<ObjectId>) -> Result<bool> {
        for id in ids {
            if self.catalog().blob_location(id)?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The paths of a directory snapshot whose data the store no longer holds.
    fn lost_paths(&self, root: &ObjectId) -> Result<Vec<String>> {
        let Ok(doc) = crate::tree::read_root(self, root) else {
            return Ok(vec!["/".to_owned()]);
        };
        let mut lost = Vec::new();
        let mut stack = Vec::new();
        if let NodeKind::Dir { tree } = doc.top.kind {
            stack.push((Vec::new(), tree));
        }
        while let Some((path, id)) = stack.pop() {
            let Ok(tree) = crate::tree::read_tree(self, &id) else {
                lost.push(format!("{}/", String::from_utf8_lossy(&path)));
                continue;
            };
            for node in tree.nodes {
                let child =
                    if path.is_empty() { node.name.clone() } else { [&path[..], b"/", &node.name].concat() };
                match node.kind {
                    NodeKind::Dir { tree } => stack.push((child, tree)),
                    NodeKind::File { content, .. } => {
                        for id in &content {
                            if self.catalog().blob_location(id)?.is_none() {
                                lost.push(String::from_utf8_lossy(&child).into_owned());
                                break;
                            }
                        }
                    }
                    NodeKind::Symlink { .. } => {}
                }
            }
        }
        lost.sort();
        Ok(lost)
    }
}
