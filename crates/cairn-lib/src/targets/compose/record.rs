//! What a compose savepoint records: the public record (what lists, tools and `--json` show)
//! and the stored root document (what a rollback and gc read).

use cairn_docker::MountKind;
use serde::{Deserialize, Serialize};

use crate::id::ObjectId;
use crate::snapshot::{SkippedEntry, Snapshot, SnapshotStats};

/// A compose snapshot as people and agents see it: the snapshot record with the compose
/// details (`stats` per volume, `writable_layers`, `images`, `spec`, `not_covered`) on top.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ComposeSavepoint {
    /// UUIDv7 id.
    pub id: String,
    /// Optional name, unique per session and project.
    pub name: Option<String>,
    /// What the savepoint was taken before.
    pub description: Option<String>,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// The compose project.
    pub project: String,
    /// True for the snapshot a rollback takes of the live state first.
    pub safety: bool,
    /// How the services were held still: `stop`, `pause` or `none`.
    pub consistency: Consistency,
    /// One entry per captured volume or bind mount.
    pub stats: Vec<MountStats>,
    /// Sums over every volume, bind mount and layer.
    pub totals: SnapshotStats,
    /// The files each container wrote into its own writable layer.
    pub writable_layers: Vec<LayerRecord>,
    /// The images the containers ran, by id.
    pub images: Vec<ImageRecord>,
    /// The compose setup the project was started from.
    pub spec: SpecRecord,
    /// What the savepoint does not hold. Report it before relying on the savepoint.
    pub not_covered: ComposeNotCovered,
}

/// How a capture held the services still.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    /// Stopped, then started again: a clean copy (the default).
    #[default]
    Stop,
    /// Frozen by the cgroup freezer and thawed: crash-consistent, no restart.
    Pause,
    /// Left running: a live copy.
    None,
}

word_schema!(Consistency);

impl Consistency {
    /// Reads the consistency option: `stop` (the default), `pause` or `none`.
    pub fn parse(text: Option<&str>) -> crate::error::Result<Self> {
        match text.unwrap_or("stop") {
            "stop" => Ok(Consistency::Stop),
            "pause" => Ok(Consistency::Pause),
            "none" => Ok(Consistency::None),
            other => Err(crate::error::Error::invalid(format!(
                "invalid consistency {other:?}: use stop (the default), pause or none"
            ))),
        }
    }
}

/// The compose part of a snapshot's `details`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ComposeDetails {
    /// The compose project.
    pub project: String,
    /// `stop`, `pause` or `none`.
    pub consistency: Consistency,
    /// Per volume or bind mount.
    pub stats: Vec<MountStats>,
    /// Per container.
    pub writable_layers: Vec<LayerRecord>,
    /// Per image.
    pub images: Vec<ImageRecord>,
    /// The compose setup.
    pub spec: SpecRecord,
    /// What is left out, by reason.
    pub not_covered: ComposeNotCovered,
}

impl ComposeSavepoint {
    /// Builds the record from a compose snapshot's catalog entry.
    pub fn from_snapshot(s: &Snapshot) -> Self {
        let d: ComposeDetails = serde_json::from_value(s.details.clone()).unwrap_or_default();
        Self {
            id: s.id.to_string(),
            name: s.name.clone(),
            description: s.description.clone(),
            created_at: s.created_at.clone(),
            project: s.target.strip_prefix("compose:").unwrap_or(&s.target).to_owned(),
            safety: s.safety,
            consistency: d.consistency,
            stats: d.stats,
            totals: s.stats.clone(),
            writable_layers: d.writable_layers,
            images: d.images,
            spec: d.spec,
            not_covered: d.not_covered,
        }
    }
}

/// One captured volume or bind mount.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MountStats {
    /// Stable name of the captured object: `volume-named-NAME`, `volume-anonymous-NAME` or
    /// `bind-PATH`.
    pub object_id: String,
    /// `named`, `anonymous` or `bind`.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub kind: MountKind,
    /// The volume name, or the host path of a bind mount.
    pub source: String,
    /// Containers that mount it.
    pub used_by: Vec<String>,
    /// Regular files held.
    pub files: u64,
    /// Directories held.
    pub dirs: u64,
    /// Total size of the files.
    pub bytes: u64,
    /// Bytes this capture had to read (files whose stat changed since the last one).
    pub read_bytes: u64,
}

/// One container's writable layer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LayerRecord {
    /// The compose service.
    pub service: String,
    /// The replica number.
    pub replica: u32,
    /// The container's name.
    pub container_name: String,
    /// The image the layer sits on.
    pub image_id: String,
    /// Paths the layer added, changed or deleted.
    pub changes: u64,
    /// Bytes of file content held.
    pub bytes: u64,
    /// Image paths the layer deleted (kept as deletions).
    pub deleted: Vec<String>,
}

/// One image the project runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageRecord {
    /// The image id (`sha256:…`): a rollback never follows a moved tag.
    pub id: String,
    /// The references the containers were created from.
    pub tags: Vec<String>,
    /// Containers running it.
    pub containers: Vec<String>,
    /// True when the image itself is in the store (`--with-images`).
    pub stored: bool,
    /// Size of the stored image archive, 0 when not stored.
    pub stored_bytes: u64,
}

/// The compose setup a project was started from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpecRecord {
    /// Always `compose-yaml`.
    pub format: String,
    /// The directory compose ran in.
    pub working_dir: Option<String>,
    /// The compose files, with what was captured of each.
    pub config_files: Vec<SpecFile>,
    /// Services in start order.
    pub services: Vec<String>,
    /// Networks the containers were attached to.
    pub networks: Vec<String>,
}

/// One compose file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpecFile {
    /// Its path.
    pub path: String,
    /// Its size, 0 when it could not be read.
    pub bytes: u64,
    /// True when its content is in the savepoint.
    pub captured: bool,
}

/// What a compose savepoint does not hold, by reason. Lists are empty, never absent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ComposeNotCovered {
    /// Mounts that were not captured, each with a reason code.
    pub skipped_mounts: Vec<SkippedMount>,
    /// Services none of whose containers has a captured volume or bind mount.
    pub services_without_volumes: Vec<String>,
    /// Containers that ignored their stop signal and were killed at the deadline.
    pub killed_at_stop_deadline: Vec<String>,
    /// Replica numbers missing between a service's replicas.
    pub replica_gaps: Vec<ReplicaGap>,
    /// Images the engine no longer has and the savepoint does not hold.
    pub unresolvable_images: Vec<String>,
    /// Entries inside volumes or bind mounts that were skipped (fifos, sockets, …).
    pub skipped_entries: Vec<SkippedEntry>,
    /// Compose files the project was started from that could not be read (`path`, and
    /// `missing` or `unreadable`): the savepoint holds the containers' configs, not the file.
    #[serde(default)]
    pub config_files: Vec<SkippedEntry>,
}

impl ComposeNotCovered {
    /// The same, flattened into the generic snapshot's `skipped` list, so `cairn list` and
    /// `cairn show` show it for compose snapshots too.
    pub(crate) fn flatten(&self) -> Vec<SkippedEntry> {
        let entry = |path: String, reason: &str| SkippedEntry { path, reason: reason.to_owned() };
        let mut out: Vec<SkippedEntry> = self
            .skipped_mounts
            .iter()
            .map(|m| entry(format!("mount {}:{}", m.container, m.destination), &m.reason))
            .collect();
        out.extend(self.services_without_volumes.iter().map(|s| entry(format!("service {s}"), "no_volume")));
        out.extend(
            self.killed_at_stop_deadline
                .iter()
                .map(|c| entry(format!("container {c}"), "killed_at_stop_deadline")),
        );
        out.extend(self.replica_gaps.iter().flat_map(|g| {
            g.missing.iter().map(move |n| entry(format!("service {} replica {n}", g.service), "replica_gap"))
        }));
        out.extend(
            self.unresolvable_images.iter().map(|i| entry(format!("image {i}"), "image_unresolvable")),
        );
        out.extend(self.skipped_entries.iter().cloned());
        out.extend(self.config_files.iter().map(|f| entry(format!("compose file {}", f.path), &f.reason)));
        out
    }
}

/// One mount a savepoint does not hold.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedMount {
    /// The container that mounts it.
    pub container: String,
    /// The volume name or host path.
    pub source: String,
    /// Where it appears in the container.
    pub destination: String,
    /// `tmpfs`, `unsupported_mount`, `volume_driver`, `system_path`, `special_file`,
    /// `missing`, `store_overlap`.
    pub reason: String,
}

/// Missing replica numbers of one service.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplicaGap {
    /// The service.
    pub service: String,
    /// The numbers below the highest one that have no container.
    pub missing: Vec<u32>,
}

/// The stored root of a compose snapshot: everything a rollback needs, and every object gc
/// must keep. Encoded as JSON (the engine's container configs are JSON-shaped).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ComposeRoot {
    /// Layout version of this document.
    pub version: u32,
    /// The project as discovered: containers with their configs, volumes, binds, images.
    pub project: cairn_docker::Project,
    pub mounts: Vec<MountData>,
    pub layers: Vec<LayerData>,
    pub images: Vec<ImageData>,
    pub spec_files: Vec<SpecFileData>,
}

/// The captured content of one volume or bind mount.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MountData {
    pub object_id: String,
    /// `named`, `anonymous` or `bind`.
    pub kind: MountKind,
    /// Volume name, or host path for a bind.
    pub source: String,
    /// True when compose created the volume for this project.
    pub owned_by_project: bool,
    pub content: MountContent,
}

/// A directory is a Merkle tree of the dir engine; a bind-mounted file is its chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum MountContent {
    Dir { root: ObjectId },
    File { content: Vec<ObjectId>, mode: u32 },
}

/// One container's writable layer: its change list and the export tar, as chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LayerData {
    pub changes: cairn_docker::LayerChanges,
    pub tar: Vec<ObjectId>,
}

/// One image; `tar` is the `docker save` archive when it was stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ImageData {
    pub id: String,
    pub tags: Vec<String>,
    pub tar: Vec<ObjectId>,
}

/// One compose file's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SpecFileData {
    pub path: String,
    pub content: Option<ObjectId>,
}
