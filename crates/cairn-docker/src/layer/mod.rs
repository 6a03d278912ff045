//! Containers' writable layers: what changed, exporting it as tar, putting it back.

mod changes;
mod delete;
mod export;
mod import;
pub(crate) mod stream;

use serde::{Deserialize, Serialize};

/// How a path differs from the container's image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The path exists in the image and was changed.
    Modified,
    /// The path is new.
    Added,
    /// The path exists in the image and was deleted.
    Deleted,
}

/// One changed path of a writable layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerChange {
    /// Absolute path inside the container.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
}

/// Every path a container's writable layer changed, sorted by path (`docker diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerChanges {
    /// The container, by id or name as asked.
    pub container: String,
    /// The changes.
    pub changes: Vec<LayerChange>,
}

/// What an export of a writable layer wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerExport {
    /// The container.
    pub container: String,
    /// Tar entries written.
    pub entries: u64,
    /// Bytes of file content written.
    pub bytes: u64,
    /// Paths deleted from the image, which the tar cannot hold; kept in the changes.
    pub deleted: Vec<String>,
    /// Directories of the image whose own metadata changed; their changed contents
    /// are in the tar, but the directory's mode and times are not, since the archive
    /// API can only give a directory together with everything below it.
    pub modified_directories: Vec<String>,
}

/// What putting a writable layer back did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerImport {
    /// The container.
    pub container: String,
    /// Paths copied back from the image because the saved layer had not changed them.
    pub reverted: Vec<String>,
    /// Paths deleted because the saved state lacks them.
    pub deleted: Vec<String>,
}
