//! Deleting paths inside a container. The engine has no API for it: a running
//! container runs `rm` itself; a stopped one (which cannot run anything) is edited
//! on the host through its overlay upper directory, with whiteouts for paths the
//! image holds — the same form the engine's overlay drivers use.

use std::path::{Path, PathBuf};

use bollard::exec::{CreateExecOptions, StartExecResults};
use futures_util::StreamExt;

use crate::engine::DockerEngine;
use crate::error::{DockerError, Result, api};

/// Storage drivers whose containers keep their writable layer in an upper directory.
const OVERLAY_DRIVERS: [&str; 3] = ["overlay2", "overlay", "fuse-overlayfs"];

impl DockerEngine {
    /// Deletes `paths` (absolute, inside the container) and everything below them.
    pub(crate) async fn delete_paths(&self, container: &str, paths: &[String]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let inspect = self
            .docker
            .inspect_container(container, None)
            .await
            .map_err(api(format!("inspect container {container}")))?;
        let running = inspect.state.as_ref().and_then(|s| s.running).unwrap_or(false);
        if running {
            return self.delete_by_exec(container, paths).await;
        }
        let driver = inspect.graph_driver.unwrap_or_default();
        if !OVERLAY_DRIVERS.contains(&driver.name.as_str()) {
            return Err(DockerError::Delete {
                container: container.to_string(),
                path: paths[0].clone(),
                reason: format!(
                    "the container is stopped and its storage driver {:?} is not overlay-based; start it and retry",
                    driver.name
                ),
            });
        }
        let upper = driver.data.get("UpperDir").map(PathBuf::from);
        let lowers: Vec<PathBuf> = driver
            .data
            .get("LowerDir")
            .map(|l| l.split(':').map(PathBuf::from).collect())
            .unwrap_or_default();
        let Some(upper) = upper else {
            return Err(DockerError::Delete {
                container: container.to_string(),
                path: paths[0].clone(),
                reason: "the engine reports no upper directory for it; start the container and retry".into(),
            });
        };
        let paths = paths.to_vec();
        let name = container.to_string();
        tokio::task::spawn_blocking(move || {
            for p in &paths {
                delete_in_upper(&upper, &lowers, p)?;
            }
            Ok::<_, DockerError>(())
        })
        .await
        .map_err(|e| DockerError::Delete {
            container: name,
            path: String::new(),
            reason: format!("{e}; retry"),
        })?
    }

    async fn delete_by_exec(&self, container: &str, paths: &[String]) -> Result<()> {
        let mut cmd = vec!["rm".to_string(), "-rf".to_string(), "--".to_string()];
        cmd.extend(paths.iter().cloned());
        let exec = self
            .docker
            .create_exec(
                container,
                CreateExecOptions {
                    cmd: Some(cmd),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .map_err(api(format!("run rm in container {container}")))?;
        let mut output = String::new();
        if let StartExecResults::Attached { output: mut out, .. } = self
            .docker
            .start_exec(&exec.id, None)
            .await
            .map_err(api(format!("run rm in container {container}")))?
        {
            while let Some(chunk) = out.next().await {
                if let Ok(chunk) = chunk {
                    output.push_str(&chunk.to_string());
                }
            }
        }
        let code = self
            .docker
            .inspect_exec(&exec.id)
            .await
            .map_err(api(format!("inspect rm in container {container}")))?
            .exit_code;
        if code != Some(0) {
            return Err(DockerError::Delete {
                container: container.to_string(),
                path: paths.join(", "),
                reason: format!(
                    "rm exited with {code:?} ({}); the image needs an rm command, or stop the container and retry",
                    output.trim()
                ),
            });
        }
        Ok(())
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DockerError + '_ {
    move |source| DockerError::Io { path: path.to_path_buf(), source }
}

/// Removes `path` from the upper directory and, when a lower layer still holds it,
/// leaves a whiteout (a 0:0 character device) so it stays hidden.
fn delete_in_upper(upper: &Path, lowers: &[PathBuf], path: &str) -> Result<()> {
    let rel = path.trim_start_matches('/');
    if rel.is_empty() || rel.split('/').any(|c| c == "..") {
        return Ok(());
    }
    let target = upper.join(rel);
    match std::fs::symlink_metadata(&target) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&target).map_err(io_err(&target))?,
        Ok(_) => std::fs::remove_file(&target).map_err(io_err(&target))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(&target)(e)),
    }
    let in_lower = lowers.iter().any(|l| std::fs::symlink_metadata(l.join(rel)).is_ok());
    if !in_lower {
        return Ok(());
    }
    if let Some(parent) = target.parent() {
        ensure_upper_dir(upper, lowers, parent)?;
    }
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &target,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::empty(),
        0,
    )
    .map_err(|e| io_err(&target)(e.into()))
}

/// Creates a missing directory of the upper layer with the mode and owner of the
/// lower directory it shadows, so the merged view keeps the image's metadata.
fn ensure_upper_dir(upper: &Path, lowers: &[PathBuf], dir: &Path) -> Result<()> {
    if dir.exists() || dir == upper {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        ensure_upper_dir(upper, lowers, parent)?;
    }
    std::fs::create_dir(dir).map_err(io_err(dir))?;
    let rel = dir.strip_prefix(upper).unwrap_or(dir);
    if let Some(meta) = lowers.iter().find_map(|l| std::fs::symlink_metadata(l.join(rel)).ok()) {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(meta.mode() & 0o7777))
            .map_err(io_err(dir))?;
        std::os::unix::fs::chown(dir, Some(meta.uid()), Some(meta.gid())).map_err(io_err(dir))?;
    }
    Ok(())
}
