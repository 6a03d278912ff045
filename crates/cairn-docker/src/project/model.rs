//! Serde records describing a compose project as the engine sees it.

use std::collections::BTreeMap;

use bollard::models::{ContainerConfig, EndpointSettings, HostConfig};
use serde::{Deserialize, Serialize};

/// One line of a `docker compose ls`-style listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectSummary {
    /// The compose project name.
    pub name: String,
    /// Container counts by state, e.g. `running(2), exited(1)`.
    pub status: String,
    /// How many containers carry the project label.
    pub containers: usize,
    /// How many of them are running.
    pub running: usize,
    /// The compose files the project was started from.
    pub config_files: Vec<String>,
    /// The directory compose ran in, when recorded.
    pub working_dir: Option<String>,
}

/// Every compose project on the engine, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectList {
    /// The projects.
    pub projects: Vec<ProjectSummary>,
}

/// A compose project: what runs, what it stores, and how it was set up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Project {
    /// The compose project name.
    pub name: String,
    /// The directory compose ran in (label `com.docker.compose.project.working_dir`).
    pub working_dir: Option<String>,
    /// The compose files (label `com.docker.compose.project.config_files`).
    pub config_files: Vec<String>,
    /// Services, sorted in start order (dependencies first when known).
    pub services: Vec<Service>,
    /// Containers, in start order.
    pub containers: Vec<ContainerInfo>,
    /// Docker volumes the containers use, named and anonymous, sorted by name.
    pub volumes: Vec<VolumeInfo>,
    /// Host directories and files bind-mounted into containers.
    pub bind_mounts: Vec<BindMount>,
    /// Images the containers run, by id.
    pub images: Vec<ImageRef>,
    /// Networks the containers are attached to, sorted.
    pub networks: Vec<String>,
}

/// One compose service and its replicas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Service {
    /// The service name.
    pub name: String,
    /// How many containers the service has.
    pub replicas: usize,
    /// Their `container-number` labels, sorted; a gap means a missing replica.
    pub container_numbers: Vec<u32>,
    /// Services this one depends on, when compose recorded it.
    pub depends_on: Vec<String>,
}

/// One container of the project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContainerInfo {
    /// The container id.
    pub id: String,
    /// The container name, without the leading slash.
    pub name: String,
    /// The compose service it belongs to.
    pub service: String,
    /// Its replica number (label `com.docker.compose.container-number`).
    pub number: u32,
    /// True for `docker compose run` containers.
    pub oneoff: bool,
    /// The engine's state: created, running, paused, exited, ...
    pub state: String,
    /// Health status when the container has a healthcheck.
    pub health: Option<String>,
    /// The image id the container runs.
    pub image_id: String,
    /// The image reference the container was created from (a tag, or an id).
    pub image_tag: String,
    /// Its mounts.
    pub mounts: Vec<MountInfo>,
    /// What is needed to create the container again.
    pub spec: ContainerSpec,
}

/// The kind of a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MountKind {
    /// A named Docker volume.
    Named,
    /// An anonymous Docker volume (a 64-hex name and no compose volume label).
    Anonymous,
    /// A host path.
    Bind,
    /// A tmpfs, which holds nothing across restarts.
    Tmpfs,
    /// Anything else (npipe, image, cluster).
    Other,
}

/// One mount of one container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    /// The kind of mount.
    pub kind: MountKind,
    /// The volume name, or the host path for a bind mount.
    pub source: String,
    /// Where it appears inside the container.
    pub destination: String,
    /// True when mounted read-only.
    pub read_only: bool,
    /// The part of the volume mounted, when the mount uses `subpath`.
    pub subpath: Option<String>,
}

/// One Docker volume used by the project; always recorded whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeInfo {
    /// The volume name.
    pub name: String,
    /// Named or anonymous.
    pub kind: MountKind,
    /// The volume's directory on the host.
    pub mountpoint: String,
    /// The volume driver (`local` for a plain directory).
    pub driver: String,
    /// True when compose created it for this project (false for external volumes).
    pub owned_by_project: bool,
    /// Containers that mount it, by name.
    pub used_by: Vec<String>,
    /// Subpaths through which some container reaches it.
    pub subpaths: Vec<String>,
}

/// One bind mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindMount {
    /// The container's name.
    pub container: String,
    /// The path on the host.
    pub host_path: String,
    /// Where it appears in the container.
    pub container_path: String,
    /// True when mounted read-only.
    pub read_only: bool,
}

/// One image the project runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// The image id (`sha256:...`).
    pub id: String,
    /// The references containers were created from, e.g. `postgres:16`.
    pub tags: Vec<String>,
    /// Containers that run it, by name.
    pub containers: Vec<String>,
}

/// The engine's own description of a container, enough to create it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContainerSpec {
    /// Image, command, environment, labels, healthcheck, ...
    pub config: Option<ContainerConfig>,
    /// Mounts, restart policy, resources, ...
    pub host_config: Option<HostConfig>,
    /// Network attachments with their aliases, by network name.
    pub networks: BTreeMap<String, EndpointSettings>,
}
