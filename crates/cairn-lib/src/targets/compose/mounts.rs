//! Which volumes and bind mounts of a project cairn captures, where they live on the host, and
//! why the others are left out. The same plan names them at capture and at rollback.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_docker::{MountKind, Project};

use super::record::SkippedMount;
use crate::store::Store;

/// A volume or bind mount to capture or restore.
#[derive(Debug, Clone)]
pub(crate) struct PlannedMount {
    /// `volume-named-NAME`, `volume-anonymous-NAME` or `bind-PATH`.
    pub object_id: String,
    /// `named`, `anonymous` or `bind`.
    pub kind: MountKind,
    /// Volume name or host path.
    pub source: String,
    /// The directory (or file, for a bind) on the host.
    pub path: PathBuf,
    /// True for a bind-mounted regular file.
    pub is_file: bool,
    pub owned_by_project: bool,
    pub used_by: Vec<String>,
}

/// The object id of a volume or bind mount.
pub(crate) fn object_id(kind: MountKind, source: &str) -> String {
    match kind {
        MountKind::Bind => format!("bind-{source}"),
        MountKind::Anonymous => format!("volume-anonymous-{source}"),
        // Only volumes and binds are captured; any other kind is named as a volume is.
        MountKind::Named | MountKind::Tmpfs | MountKind::Other => format!("volume-named-{source}"),
    }
}

/// Host paths a bind mount of which is never captured: the machine's own state.
fn system_path(path: &Path) -> bool {
    path == Path::new("/")
        || ["/proc", "/sys", "/dev", "/run", "/var/run"].iter().any(|p| path.starts_with(p))
}

/// Plans the mounts of `project`: what to capture, and what is skipped with a reason code.
pub(crate) fn plan(store: &Store, project: &Project) -> (Vec<PlannedMount>, Vec<SkippedMount>) {
    let mut planned: BTreeMap<String, PlannedMount> = BTreeMap::new();
    let mut skipped = Vec::new();
    for v in &project.volumes {
        let kind = if v.kind == MountKind::Anonymous { MountKind::Anonymous } else { MountKind::Named };
        if v.driver != "local" {
            for c in &v.used_by {
                skipped.push(skip(c, &v.name, "", "volume_driver"));
            }
            continue;
        }
        planned.insert(
            object_id(kind, &v.name),
            PlannedMount {
                object_id: object_id(kind, &v.name),
                kind,
                source: v.name.clone(),
                path: PathBuf::from(&v.mountpoint),
                is_file: false,
                owned_by_project: v.owned_by_project,
                used_by: v.used_by.clone(),
            },
        );
    }
    let store_root = std::fs::canonicalize(store.root()).unwrap_or_else(|_| store.root().to_path_buf());
    for c in &project.containers {
        for m in &c.mounts {
            let reason = match m.kind {
                MountKind::Named | MountKind::Anonymous => continue,
                MountKind::Tmpfs => Some("tmpfs"),
                MountKind::Other => Some("unsupported_mount"),
                MountKind::Bind => None,
            };
            if let Some(reason) = reason {
                skipped.push(skip(&c.name, &m.source, &m.destination, reason));
                continue;
            }
            let path = PathBuf::from(&m.source);
            let id = object_id(MountKind::Bind, &m.source);
            if let Some(p) = planned.get_mut(&id) {
                if !p.used_by.contains(&c.name) {
                    p.used_by.push(c.name.clone());
                }
                continue;
            }
            let meta = std::fs::symlink_metadata(&path);
            let reason = if system_path(&path) {
                Some("system_path")
            } else if store_root.starts_with(&path) || path.starts_with(&store_root) {
                Some("store_overlap")
            } else {
                match &meta {
                    Err(_) => Some("missing"),
                    Ok(m) if m.is_dir() || m.is_file() => None,
                    Ok(_) => Some("special_file"),
                }
            };
            if let Some(reason) = reason {
                skipped.push(skip(&c.name, &m.source, &m.destination, reason));
                continue;
            }
            planned.insert(
                id.clone(),
                PlannedMount {
                    object_id: id,
                    kind: MountKind::Bind,
                    source: m.source.clone(),
                    path,
                    is_file: meta.is_ok_and(|m| m.is_file()),
                    owned_by_project: false,
                    used_by: vec![c.name.clone()],
                },
            );
        }
    }
    (planned.into_values().collect(), skipped)
}

fn skip(container: &str, source: &str, destination: &str, reason: &str) -> SkippedMount {
    SkippedMount {
        container: container.to_owned(),
        source: source.to_owned(),
        destination: destination.to_owned(),
        reason: reason.to_owned(),
    }
}
