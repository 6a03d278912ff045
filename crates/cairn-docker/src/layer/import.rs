//! Putting a saved writable layer back into a container.

use std::collections::HashMap;
use std::io::Read;

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures_util::TryStreamExt;

use super::changes::{covered_by, has_changed_child};
use super::export::parent_rel;
use super::stream::body_from_reader;
use super::{ChangeKind, LayerChanges, LayerImport};
use crate::engine::DockerEngine;
use crate::error::{DockerError, Result, api, is_not_found};

impl DockerEngine {
    /// Makes `saved.container`'s writable layer match a saved one: `tar` is what
    /// [`DockerEngine::export_layer`] wrote for `saved`. Paths the live layer changed
    /// but the saved one did not are put back from the image, new paths the saved
    /// state lacks are deleted, and so are paths the saved state had deleted. The
    /// container may be stopped (preferred) or running.
    pub async fn import_layer<R: Read + Send + 'static>(
        &self,
        saved: &LayerChanges,
        tar: R,
    ) -> Result<LayerImport> {
        let container = saved.container.as_str();
        let live = self.layer_changes(container).await?;
        let saved_kind: HashMap<&str, ChangeKind> =
            saved.changes.iter().map(|c| (c.path.as_str(), c.kind)).collect();

        // New paths go first, all of them: the saved tar brings back the ones it
        // holds, and this way no stale file survives inside a re-added directory.
        let live_added: Vec<&str> =
            live.changes.iter().filter(|c| c.kind == ChangeKind::Added).map(|c| c.path.as_str()).collect();
        let first_delete: Vec<String> = live_added
            .iter()
            .filter(|p| !live_added.iter().any(|a| super::changes::is_below(p, a)))
            .map(|p| p.to_string())
            .collect();

        let mut revert = Vec::new();
        for c in &live.changes {
            let in_saved = saved_kind.get(c.path.as_str()).copied();
            let wanted = match c.kind {
                ChangeKind::Added => false,
                // Saved as deleted: the final deletions take care of it.
                ChangeKind::Deleted => in_saved != Some(ChangeKind::Deleted),
                // A changed file the saved layer did not change; directories follow their children.
                ChangeKind::Modified => in_saved.is_none() && !has_changed_child(&live.changes, &c.path),
            };
            if wanted && !covered_by(&c.path, first_delete.iter().map(String::as_str)) {
                revert.push(c.path.clone());
            }
        }

        self.delete_paths(container, &first_delete).await?;
        if !revert.is_empty() {
            self.copy_from_image(container, &revert).await?;
        }

        let options = UploadToContainerOptionsBuilder::default().path("/").build();
        self.docker
            .upload_to_container(container, Some(options), bollard::body_try_stream(body_from_reader(tar)))
            .await
            .map_err(api(format!("write the saved layer into container {container}")))?;

        let deleted_saved: Vec<String> =
            saved.changes.iter().filter(|c| c.kind == ChangeKind::Deleted).map(|c| c.path.clone()).collect();
        self.delete_paths(container, &deleted_saved).await?;

        let mut deleted =
            first_delete.into_iter().filter(|p| !saved_kind.contains_key(p.as_str())).collect::<Vec<_>>();
        deleted.extend(deleted_saved);
        deleted.sort();
        Ok(LayerImport { container: container.to_string(), reverted: revert, deleted })
    }

    /// Copies `paths` from `container`'s image into the container, through a helper
    /// container that is created from the image, never started, and removed after.
    async fn copy_from_image(&self, container: &str, paths: &[String]) -> Result<()> {
        let inspect = self
            .docker
            .inspect_container(container, None)
            .await
            .map_err(api(format!("inspect container {container}")))?;
        let image = inspect.image.unwrap_or_default();
        let body = ContainerCreateBody {
            image: Some(image.clone()),
            // Never run: any entry point will do, and images without one still create.
            entrypoint: Some(vec!["/cairn-helper-never-started".to_string()]),
            network_disabled: Some(true),
            labels: Some(HashMap::from([("cairn.helper".to_string(), "image-files".to_string())])),
            ..Default::default()
        };
        let helper = self
            .docker
            .create_container(None, body)
            .await
            .map_err(api(format!("create a helper container from image {image}")))?
            .id;
        let result = self.copy_between(&helper, container, paths).await;
        let remove = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
        let removed = self
            .docker
            .remove_container(&helper, Some(remove))
            .await
            .map_err(api(format!("remove helper container {helper}")));
        result.and(removed)
    }

    async fn copy_between(&self, from: &str, to: &str, paths: &[String]) -> Result<()> {
        for path in paths {
            // The path may be absent from the image too (an anonymous mount point).
            match self.is_dir(from, path).await {
                Err(DockerError::Api { source, .. }) if is_not_found(&source) => continue,
                other => other?,
            };
            let download = DownloadFromContainerOptionsBuilder::default().path(path).build();
            let stream =
                self.docker.download_from_container(from, Some(download)).map_err(std::io::Error::other);
            let dest = format!("/{}", parent_rel(path));
            let upload = UploadToContainerOptionsBuilder::default().path(&dest).build();
            self.docker
                .upload_to_container(to, Some(upload), bollard::body_try_stream(stream))
                .await
                .map_err(api(format!("copy {path} from the image into container {to}")))?;
        }
        Ok(())
    }
}
