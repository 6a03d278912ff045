//! Putting a compose snapshot's data back into a project's existing volumes, bind mounts and
//! containers, in place: each volume gets the directory engine's plan (a Merkle diff of the
//! live tree and the snapshot), so only what differs is written.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cairn_docker::{MountKind, Project};
use serde::Serialize;

use super::blobs::spill;
use super::capture::cache_key;
use super::docker::Docker;
use super::mounts;
use super::record::{ComposeRoot, MountContent, MountData};
use crate::error::{IoContext, Result};
use crate::store::Store;
use crate::tree;

/// What a rollback did to one volume or bind mount.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestoredMount {
    /// `volume-named-NAME`, `volume-anonymous-NAME` or `bind-PATH`.
    pub object_id: String,
    /// `named`, `anonymous` or `bind`.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub kind: MountKind,
    /// The volume name or host path written.
    pub source: String,
    /// Paths created, rewritten, removed or re-moded.
    pub changes: u64,
    /// Files written.
    pub files_written: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// `restored`, or `kept` when `rollback.leftover_volumes = reuse` left a volume as found.
    pub action: String,
}

/// What a rollback did to one container's writable layer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestoredLayer {
    /// The compose service.
    pub service: String,
    /// The replica number.
    pub replica: u32,
    /// The container.
    pub container_name: String,
    /// The image the layer sits on.
    pub image_id: String,
    /// Paths copied back from the image.
    pub reverted: Vec<String>,
    /// Paths deleted.
    pub deleted: Vec<String>,
}

/// Everything written.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub mounts: Vec<RestoredMount>,
    pub layers: Vec<RestoredLayer>,
}

/// Makes the (stopped) project `live` hold `want`'s data. With `before`, the snapshot of the
/// live state just taken, the plan is computed from it; otherwise the live trees are scanned
/// afresh (a replay after a failure, when nothing about the tree can be trusted).
pub(crate) fn apply(
    store: &Store,
    docker: &Docker,
    key: &str,
    live: &Project,
    want: &ComposeRoot,
    before: Option<&ComposeRoot>,
) -> Result<Applied> {
    let (planned, _) = mounts::plan(store, live);
    let mut applied = Applied::default();
    for m in &want.mounts {
        let path = match planned.iter().find(|p| p.object_id == m.object_id) {
            Some(p) => p.path.clone(),
            // A bind mount whose host path has gone is created again; a volume the live
            // project no longer mounts has nowhere to go.
            None if m.kind == MountKind::Bind => std::path::PathBuf::from(&m.source),
            None => continue,
        };
        let from = before.and_then(|b| b.mounts.iter().find(|x| x.object_id == m.object_id));
        applied.mounts.push(put_mount(store, key, m, &path, from)?);
    }
    for layer in &want.layers {
        let name = &layer.changes.container;
        let Some(c) = live.containers.iter().find(|c| &c.name == name) else { continue };
        let tar = spill(store, &layer.tar, "layer")?;
        let import = docker.run(docker.engine.import_layer(&layer.changes, tar))?;
        applied.layers.push(RestoredLayer {
            service: c.service.clone(),
            replica: c.number,
            container_name: c.name.clone(),
            image_id: c.image_id.clone(),
            reverted: import.reverted,
            deleted: import.deleted,
        });
    }
    Ok(applied)
}

/// Puts one captured mount back at `path`.
pub(crate) fn put_mount(
    store: &Store,
    key: &str,
    m: &MountData,
    path: &Path,
    from: Option<&MountData>,
) -> Result<RestoredMount> {
    let mut out = RestoredMount {
        object_id: m.object_id.clone(),
        kind: m.kind,
        source: m.source.clone(),
        changes: 0,
        files_written: 0,
        bytes_written: 0,
        action: "restored".into(),
    };
    match &m.content {
        MountContent::File { content, mode } => {
            // Written through the same inode: a container sees a bind-mounted file by inode.
            let data = super::blobs::read_all(store, content)?;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .at("write", path)?;
            f.write_all(&data).at("write", path)?;
            f.set_permissions(std::fs::Permissions::from_mode(*mode)).at("set the mode of", path)?;
            (out.changes, out.files_written, out.bytes_written) = (1, 1, data.len() as u64);
        }
        MountContent::Dir { root } => {
            let want = tree::read_root(store, root)?;
            let cache = cache_key(key, &m.object_id);
            std::fs::create_dir_all(path).at("create", path)?;
            match from.map(|f| &f.content) {
                Some(MountContent::Dir { root: live }) => {
                    let live = tree::read_root(store, live)?;
                    let (plan, files, bytes) =
                        crate::targets::dir::apply::apply_plan(store, path, &cache, &live, &want, true)?;
                    (out.changes, out.files_written, out.bytes_written) = (plan.len() as u64, files, bytes);
                }
                // No capture of the live tree to plan from (a project rebuilt from its
                // savepoint): scan it, and report what the scan's plan wrote.
                _ => {
                    (out.changes, out.files_written, out.bytes_written) =
                        crate::targets::dir::apply::replay(store, path, &cache, &want, true)?
                }
            }
        }
    }
    Ok(out)
}
