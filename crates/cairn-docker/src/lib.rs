//! Everything cairn needs from the Docker engine to capture and roll back a
//! running Docker Compose project: discovery from compose's labels, lifecycle
//! (stop, start, pause, wait until healthy), containers' writable layers, images,
//! and recreating a project with the compose CLI. It knows nothing of cairn's
//! store: volume directories are captured by the caller from their host mountpoints.

#![warn(missing_docs)]

mod compose_cli;
mod engine;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod image;
mod layer;
mod lifecycle;
mod project;

pub use compose_cli::ComposeCli;
pub use engine::DockerEngine;
pub use error::{DockerError, Result};
pub use image::ImageInfo;
pub use layer::{ChangeKind, LayerChange, LayerChanges, LayerExport, LayerImport};
pub use lifecycle::{ChangedContainers, ContainerReadiness, ReadyReport, StopReport};
pub use project::model::{
    BindMount, ContainerInfo, ContainerSpec, ImageRef, MountInfo, MountKind, Project, ProjectList,
    ProjectSummary, Service, VolumeInfo,
};
