//! Listing a writable layer's changes.

use bollard::models::ChangeType;

use super::{ChangeKind, LayerChange, LayerChanges};
use crate::engine::DockerEngine;
use crate::error::{Result, api};

impl DockerEngine {
    /// Lists the paths `container`'s writable layer changed relative to its image.
    /// Mount points and what lies below them are left out: their contents belong to
    /// volumes and bind mounts, and the engine recreates the mount points itself.
    pub async fn layer_changes(&self, container: &str) -> Result<LayerChanges> {
        let mounts: Vec<String> = self
            .docker
            .inspect_container(container, None)
            .await
            .map_err(api(format!("inspect container {container}")))?
            .mounts
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| m.destination)
            .collect();
        let raw = self
            .docker
            .container_changes(container)
            .await
            .map_err(api(format!("list the changes of container {container}")))?
            .unwrap_or_default();
        let mut changes: Vec<LayerChange> = raw
            .into_iter()
            .filter(|c| !covered_by(&c.path, mounts.iter().map(String::as_str)))
            .map(|c| LayerChange {
                path: c.path,
                kind: match c.kind {
                    ChangeType::_0 => ChangeKind::Modified,
                    ChangeType::_1 => ChangeKind::Added,
                    ChangeType::_2 => ChangeKind::Deleted,
                },
            })
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(LayerChanges { container: container.to_string(), changes })
    }
}

/// True when `path` lies strictly below `dir` (both absolute, no trailing slash).
pub(crate) fn is_below(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path.len() > dir.len() + 1 && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
}

/// True when some path in `dirs` is `path` itself or one of its ancestors.
pub(crate) fn covered_by<'a>(path: &str, dirs: impl IntoIterator<Item = &'a str>) -> bool {
    dirs.into_iter().any(|d| d == path || is_below(path, d))
}

/// Paths of `changes` that have no changed child, i.e. the leaves of the change tree.
pub(crate) fn has_changed_child(changes: &[LayerChange], path: &str) -> bool {
    changes.iter().any(|c| is_below(&c.path, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_means_strictly_inside() {
        assert!(is_below("/tmp/x", "/tmp"));
        assert!(!is_below("/tmp", "/tmp"));
        assert!(!is_below("/tmpx/y", "/tmp"));
        assert!(is_below("/a", "/"));
    }
}
