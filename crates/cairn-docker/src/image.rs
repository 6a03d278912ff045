//! Images: whether one still exists, and saving/loading them as tar streams.

use std::io::{Read, Write};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::engine::DockerEngine;
use crate::error::{DockerError, Result, api, is_not_found};
use crate::layer::stream::{blocking_reader, body_from_reader};

/// What the engine knows about an image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInfo {
    /// The image id (`sha256:...`).
    pub id: String,
    /// Tags pointing at it.
    pub tags: Vec<String>,
    /// Its size in bytes.
    pub size: i64,
}

impl DockerEngine {
    /// Inspects an image by id or reference; `None` when the engine no longer has it.
    pub async fn inspect_image(&self, image: &str) -> Result<Option<ImageInfo>> {
        match self.docker.inspect_image(image).await {
            Ok(i) => Ok(Some(ImageInfo {
                id: i.id.unwrap_or_default(),
                tags: i.repo_tags.unwrap_or_default(),
                size: i.size.unwrap_or(0),
            })),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(api(format!("inspect image {image}"))(e)),
        }
    }

    /// Writes `docker save` of `image` into `out` and returns the writer.
    pub async fn save_image<W: Write + Send + 'static>(&self, image: &str, out: W) -> Result<W> {
        let stream = Box::pin(self.docker.export_image(image));
        let what = format!("image {image}");
        tokio::task::spawn_blocking(move || {
            let mut reader = blocking_reader(stream);
            let mut out = out;
            std::io::copy(&mut reader, &mut out)
                .map_err(|source| DockerError::Archive { what: what.clone(), source })?;
            Ok(out)
        })
        .await
        .map_err(|e| DockerError::Archive {
            what: format!("image {image}"),
            source: std::io::Error::other(e),
        })?
    }

    /// Loads images from a `docker save` tar stream (`docker load`).
    pub async fn load_image<R: Read + Send + 'static>(&self, tar: R) -> Result<()> {
        let options = bollard::query_parameters::ImportImageOptionsBuilder::default().quiet(true).build();
        let mut progress = Box::pin(self.docker.import_image(
            options,
            bollard::body_try_stream(body_from_reader(tar)),
            None,
        ));
        while let Some(item) = progress.next().await {
            item.map_err(api("load an image archive"))?;
        }
        Ok(())
    }
}
