//! Exporting a writable layer's added and modified files as one tar stream.

use std::io::{Read, Write};

use bollard::query_parameters::{ContainerArchiveInfoOptionsBuilder, DownloadFromContainerOptionsBuilder};

use super::changes::{covered_by, has_changed_child};
use super::stream::blocking_reader;
use super::{ChangeKind, LayerChanges, LayerExport};
use crate::engine::DockerEngine;
use crate::error::{DockerError, Result, api};

/// Go's `os.ModeDir` bit, as the archive stat header reports it.
const GO_MODE_DIR: u32 = 1 << 31;

impl DockerEngine {
    /// Writes the files `changes` lists as added or modified into `out` as one tar
    /// stream, with paths relative to the container's root. Works on a stopped or
    /// running container; pause or stop it first for a consistent copy. Returns the
    /// writer back along with what was written.
    pub async fn export_layer<W: Write + Send + 'static>(
        &self,
        changes: &LayerChanges,
        out: W,
    ) -> Result<(W, LayerExport)> {
        let container = changes.container.clone();
        let added: Vec<&str> =
            changes.changes.iter().filter(|c| c.kind == ChangeKind::Added).map(|c| c.path.as_str()).collect();
        let mut roots = Vec::new();
        let mut modified_directories = Vec::new();
        for c in &changes.changes {
            match c.kind {
                ChangeKind::Deleted => {}
                // Only the topmost new path is fetched; it brings everything below it.
                ChangeKind::Added => {
                    let parent_added = added.iter().any(|a| super::changes::is_below(&c.path, a));
                    if !parent_added {
                        roots.push(c.path.clone());
                    }
                }
                ChangeKind::Modified => {
                    if covered_by(&c.path, added.iter().copied()) {
                        continue;
                    }
                    if has_changed_child(&changes.changes, &c.path)
                        || self.is_dir(&container, &c.path).await?
                    {
                        modified_directories.push(c.path.clone());
                    } else {
                        roots.push(c.path.clone());
                    }
                }
            }
        }
        let deleted = changes
            .changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Deleted)
            .map(|c| c.path.clone())
            .collect();

        let docker = self.docker.clone();
        let what = format!("the writable layer of {container}");
        let name = container.clone();
        let (out, entries, bytes) = tokio::task::spawn_blocking(move || {
            let mut builder = tar::Builder::new(out);
            let mut entries = 0u64;
            let mut bytes = 0u64;
            for root in &roots {
                let options = DownloadFromContainerOptionsBuilder::default().path(root).build();
                let stream = Box::pin(docker.download_from_container(&name, Some(options)));
                let reader = blocking_reader(stream);
                let parent = parent_rel(root);
                let (n, b) = copy_entries(reader, &parent, &mut builder)
                    .map_err(|source| archive_error(&what, root, source))?;
                entries += n;
                bytes += b;
            }
            let out =
                builder.into_inner().map_err(|source| DockerError::Archive { what: what.clone(), source })?;
            Ok::<_, DockerError>((out, entries, bytes))
        })
        .await
        .map_err(|e| DockerError::Archive {
            what: format!("the writable layer of {container}"),
            source: std::io::Error::other(e),
        })??;
        Ok((out, LayerExport { container, entries, bytes, deleted, modified_directories }))
    }

    /// Whether `path` in the container is a directory, from the archive stat header.
    pub(crate) async fn is_dir(&self, container: &str, path: &str) -> Result<bool> {
        let options = ContainerArchiveInfoOptionsBuilder::default().path(path).build();
        let stat = self
            .docker
            .get_container_archive_info(container, Some(options))
            .await
            .map_err(api(format!("stat {path} in container {container}")))?;
        Ok(stat.file_mode & GO_MODE_DIR != 0)
    }
}

/// The engine's own error text hides inside the stream error; keep it in the message.
fn archive_error(what: &str, root: &str, source: std::io::Error) -> DockerError {
    DockerError::Archive { what: format!("{what} (path {root})"), source }
}

/// `/var/lib/x` → `var/lib`; `/x` → empty.
pub(crate) fn parent_rel(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    match trimmed.rfind('/') {
        Some(i) => trimmed[..i].to_string(),
        None => String::new(),
    }
}

fn join_rel(parent: &str, name: &std::path::Path) -> std::path::PathBuf {
    if parent.is_empty() { name.to_path_buf() } else { std::path::Path::new(parent).join(name) }
}

/// Copies every entry of one download into `builder`, moving it under `parent`
/// (the engine names entries relative to the downloaded path's parent).
fn copy_entries<R: Read, W: Write>(
    reader: R,
    parent: &str,
    builder: &mut tar::Builder<W>,
) -> std::io::Result<(u64, u64)> {
    let mut archive = tar::Archive::new(reader);
    let mut entries = 0u64;
    let mut bytes = 0u64;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = join_rel(parent, &entry.path()?);
        let mut header = entry.header().clone();
        let kind = header.entry_type();
        if kind.is_symlink() || kind.is_hard_link() {
            let target = entry.link_name()?.map(|l| l.into_owned()).unwrap_or_default();
            // Hard link targets are archive paths and move with the entries;
            // symlink targets are the container's own business and stay as they are.
            let target = if kind.is_hard_link() { join_rel(parent, &target) } else { target };
            header.set_size(0);
            builder.append_link(&mut header, &path, &target)?;
        } else {
            bytes += header.size()?;
            builder.append_data(&mut header, &path, &mut entry)?;
        }
        entries += 1;
    }
    Ok((entries, bytes))
}

#[cfg(test)]
mod tests {
    use super::parent_rel;

    #[test]
    fn parent_is_relative_to_root() {
        assert_eq!(parent_rel("/var/lib/x"), "var/lib");
        assert_eq!(parent_rel("/x"), "");
        assert_eq!(parent_rel("/x/"), "");
    }
}
