//! Comparing the Compose parts of two moments: which volumes and bind mounts changed and which of their
//! files, which containers' writable layers changed, which images and compose files. Read
//! from the two root documents; equal volume trees are skipped without being opened.

use serde::Serialize;

use crate::Repository;
use crate::error::Result;
use crate::ops::diff::ChangeKind;
use crate::snapshot::Snapshot;
use crate::targets::compose;
use crate::targets::compose::record::{ComposeRoot, MountContent, MountData};
use crate::tree::diff::TreeDiff;
use crate::tree::{self, NodeKind};

/// Two compose snapshots compared.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct ComposeDiff {
    /// Volumes and bind mounts that changed, were added or were dropped (unchanged ones are
    /// left out).
    pub volumes: Vec<VolumeDiff>,
    /// Containers whose writable layer changed, was added or was dropped.
    pub layers: Vec<LayerDiff>,
    /// Image ids the newer snapshot runs that the older did not.
    pub images_added: Vec<String>,
    /// Image ids the older snapshot ran that the newer does not.
    pub images_removed: Vec<String>,
    /// Compose files whose captured content changed.
    pub spec_files_changed: Vec<String>,
}

impl ComposeDiff {
    /// True when the two snapshots hold the same state.
    pub fn is_empty(&self) -> bool {
        self.volumes.is_empty()
            && self.layers.is_empty()
            && self.images_added.is_empty()
            && self.images_removed.is_empty()
            && self.spec_files_changed.is_empty()
    }
}

/// One volume or bind mount compared.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VolumeDiff {
    /// The captured object: `volume-named-NAME`, `volume-anonymous-NAME` or `bind-PATH`.
    pub object_id: String,
    /// The volume name, or the host path of a bind mount.
    pub source: String,
    /// `changed`, `added` or `removed`.
    pub change: String,
    /// Each path inside it that was added, removed or modified (for a changed one).
    pub files: Vec<VolumeFileChange>,
}

/// One path inside a volume that differs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VolumeFileChange {
    /// Relative to the volume's top.
    pub path: String,
    /// `added`, `removed`, `modified` or `type_changed`.
    pub change: ChangeKind,
    /// The size before, for files.
    pub old_size: Option<u64>,
    /// The size after, for files.
    pub new_size: Option<u64>,
}

/// One container's writable layer compared.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LayerDiff {
    /// The container.
    pub container: String,
    /// `changed`, `added` or `removed`.
    pub change: String,
    /// Paths the layer changes in the newer snapshot and not in the older, or differently.
    pub paths_added: Vec<String>,
    /// Paths the layer changed in the older snapshot and no longer does.
    pub paths_dropped: Vec<String>,
}

impl Repository {
    /// Compares two Compose snapshots (of one project) layer by layer: what a moment diff
    /// and the UI's diff of two points report for their Compose parts.
    pub fn compose_snapshot_diff(&self, old: &Snapshot, new: &Snapshot) -> Result<ComposeDiff> {
        match (old.root, new.root) {
            (Some(x), Some(y)) if x != y => {
                let (x, y) = (compose::read_root(self, &x)?, compose::read_root(self, &y)?);
                compare(self, &x, &y)
            }
            _ => Ok(ComposeDiff::default()),
        }
    }
}

/// Compares the root documents of two compose snapshots.
pub(crate) fn compare(store: &Repository, old: &ComposeRoot, new: &ComposeRoot) -> Result<ComposeDiff> {
    let mut out = ComposeDiff::default();
    for a in &old.mounts {
        match new.mounts.iter().find(|b| b.object_id == a.object_id) {
            None => out.volumes.push(whole(a, "removed")),
            Some(b) => {
                if let Some(files) = mount_files(store, a, b)? {
                    out.volumes.push(VolumeDiff {
                        object_id: a.object_id.clone(),
                        source: a.source.clone(),
                        change: "changed".into(),
                        files,
                    });
                }
            }
        }
    }
    for b in new.mounts.iter().filter(|b| !old.mounts.iter().any(|a| a.object_id == b.object_id)) {
        out.volumes.push(whole(b, "added"));
    }
    for a in &old.layers {
        let name = &a.changes.container;
        match new.layers.iter().find(|b| &b.changes.container == name) {
            None => out.layers.push(layer(name, "removed", vec![], vec![])),
            Some(b) if a.tar == b.tar && a.changes == b.changes => {}
            Some(b) => {
                let key = |c: &cairn_docker::LayerChange| (c.path.clone(), c.kind);
                let before: Vec<_> = a.changes.changes.iter().map(key).collect();
                let after: Vec<_> = b.changes.changes.iter().map(key).collect();
                let added = after.iter().filter(|c| !before.contains(c)).map(|c| c.0.clone()).collect();
                let dropped = before.iter().filter(|c| !after.contains(c)).map(|c| c.0.clone()).collect();
                out.layers.push(layer(name, "changed", added, dropped));
            }
        }
    }
    for b in
        new.layers.iter().filter(|b| !old.layers.iter().any(|a| a.changes.container == b.changes.container))
    {
        let paths = b.changes.changes.iter().map(|c| c.path.clone()).collect();
        out.layers.push(layer(&b.changes.container, "added", paths, vec![]));
    }
    let ids = |r: &ComposeRoot| r.images.iter().map(|i| i.id.clone()).collect::<Vec<_>>();
    let (before, after) = (ids(old), ids(new));
    out.images_added = after.iter().filter(|i| !before.contains(i)).cloned().collect();
    out.images_removed = before.iter().filter(|i| !after.contains(i)).cloned().collect();
    for b in &new.spec_files {
        let a = old.spec_files.iter().find(|a| a.path == b.path);
        if a.map(|a| a.content) != Some(b.content) {
            out.spec_files_changed.push(b.path.clone());
        }
    }
    Ok(out)
}

fn whole(m: &MountData, change: &str) -> VolumeDiff {
    VolumeDiff {
        object_id: m.object_id.clone(),
        source: m.source.clone(),
        change: change.into(),
        files: vec![],
    }
}

fn layer(container: &str, change: &str, paths_added: Vec<String>, paths_dropped: Vec<String>) -> LayerDiff {
    LayerDiff { container: container.to_owned(), change: change.into(), paths_added, paths_dropped }
}

/// The files that differ between two captures of one mount; `None` when it did not change.
fn mount_files(store: &Repository, a: &MountData, b: &MountData) -> Result<Option<Vec<VolumeFileChange>>> {
    match (&a.content, &b.content) {
        (MountContent::Dir { root: x }, MountContent::Dir { root: y }) => {
            if x == y {
                return Ok(None);
            }
            let (x, y) = (tree::read_root(store, x)?, tree::read_root(store, y)?);
            let mut changes = Vec::new();
            if let (NodeKind::Dir { tree: t1 }, NodeKind::Dir { tree: t2 }) = (&x.top.kind, &y.top.kind) {
                TreeDiff::new(store, true).trees(b"", t1, t2, &mut changes)?;
            }
            let size = |n: Option<&tree::Node>| match n.map(|n| &n.kind) {
                Some(NodeKind::File { size, .. }) => Some(*size),
                _ => None,
            };
            let files = changes
                .iter()
                .map(|c| VolumeFileChange {
                    path: String::from_utf8_lossy(&c.path).into_owned(),
                    change: match (&c.old, &c.new) {
                        (None, _) => ChangeKind::Added,
                        (_, None) => ChangeKind::Removed,
                        (Some(o), Some(n)) if o.kind.label() != n.kind.label() => ChangeKind::TypeChanged,
                        _ => ChangeKind::Modified,
                    },
                    old_size: size(c.old.as_ref()),
                    new_size: size(c.new.as_ref()),
                })
                .collect();
            Ok(Some(files))
        }
        (x, y) => {
            let same = match (x, y) {
                (
                    MountContent::File { content: c1, mode: m1 },
                    MountContent::File { content: c2, mode: m2 },
                ) => c1 == c2 && m1 == m2,
                _ => false,
            };
            Ok((!same).then(Vec::new))
        }
    }
}
