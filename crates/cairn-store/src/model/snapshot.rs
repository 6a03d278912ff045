//! The snapshot record: what every capture reports and every list shows.

use serde::{Deserialize, Serialize};

use crate::id::{ObjectId, SessionId, SnapshotId};
use crate::model::target_kind::TargetKind;

/// An immutable capture of one target at one moment.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    /// UUIDv7 id; sorts by creation time.
    pub id: SnapshotId,
    /// Optional name, unique per (session, target).
    pub name: Option<String>,
    /// What the snapshot was taken before, in the caller's words.
    pub description: Option<String>,
    /// The captured target: an absolute path for directories, `compose:<project>`, ….
    pub target: String,
    /// The target kind: `dir`, `compose`, `transcript` or `debug`.
    pub kind: TargetKind,
    /// The session this record was listed from.
    pub session: SessionId,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// True for the snapshot cairn takes of the live state before a destructive restore.
    pub safety: bool,
    /// Counts and sizes of the capture.
    pub stats: SnapshotStats,
    /// What this snapshot does not hold, and why. Read it before relying on the snapshot.
    pub not_covered: NotCovered,
    /// Kind-specific details (compose services, debug frame, transcript summary).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub details: serde_json::Value,
    /// The root object: the Merkle tree (or document) the snapshot holds.
    #[serde(skip)]
    pub root: Option<ObjectId>,
}

/// Counts and sizes of one capture.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotStats {
    /// Regular files captured.
    pub files: u64,
    /// Directories captured (the root included).
    pub dirs: u64,
    /// Symbolic links captured (stored as links, never followed).
    pub symlinks: u64,
    /// Total size of the captured files' contents.
    pub bytes: u64,
    /// Bytes of content this capture had to read (files whose stat changed).
    pub read_bytes: u64,
    /// Plain bytes of blobs this capture added to the store (0 when nothing changed).
    pub new_bytes: u64,
    /// Bytes written to the store for those blobs, after compression.
    pub stored_bytes: u64,
    /// Wall time of the capture, in milliseconds.
    pub duration_ms: u64,
    /// How the capture found what changed, when a watcher runs for the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_journal: Option<JournalReport>,
}

impl SnapshotStats {
    /// Entries captured: files, directories and links.
    pub fn entries(&self) -> u64 {
        self.files + self.dirs + self.symlinks
    }
}

/// Whether a capture looked only at what the watcher's journal named, or walked the whole tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JournalReport {
    /// True when only the directories the journal named (and their ancestors) were looked at.
    pub used: bool,
    /// How many directories the journal named.
    pub dirs_listed: u64,
    /// How many directories were read whole, every entry looked at.
    #[serde(default)]
    pub dirs_read_whole: u64,
    /// How many directories were looked at by the names of the entries that changed in them
    /// (and their subdirectories), every other entry taken from the last capture.
    #[serde(default)]
    pub dirs_by_names: u64,
    /// How many parts of large directories' trees were kept unread: in a directory looked at
    /// by names, only the parts holding a change are read and written.
    #[serde(default)]
    pub parts_kept: u64,
    /// How many unchanged subdirectories of the directories looked at were taken whole from
    /// what their parent's stat cache row says of them, their own rows unread.
    #[serde(default)]
    pub dirs_kept_unread: u64,
    /// Why the whole tree was walked, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a snapshot leaves out, each with a reason.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotCovered {
    /// Paths left out by `.gitignore` / `.cairnignore` rules (directories count once).
    pub ignored: u64,
    /// The first ignored paths, for a quick look (at most 50).
    pub ignored_paths: Vec<String>,
    /// Entries skipped: fifos, sockets, devices, unreadable paths, … with a reason code.
    pub skipped: Vec<SkippedEntry>,
    /// Files left out because they hold credentials, each with the rule that matched (never
    /// the secret). The include-secrets option, or a `.cairnignore` negation, captures them.
    #[serde(default)]
    pub secrets: Vec<SecretEntry>,
}

impl NotCovered {
    /// True when the snapshot holds everything the target had.
    pub fn is_empty(&self) -> bool {
        self.ignored == 0 && self.skipped.is_empty() && self.secrets.is_empty()
    }
}

/// One file a capture left out as a secret.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretEntry {
    /// Path relative to the target.
    pub path: String,
    /// The rule that matched: `dotenv`, `ssh-private-key`, `aws-access-key-id`, ….
    pub rule: String,
}

/// One entry a capture could not hold.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedEntry {
    /// Path relative to the target.
    pub path: String,
    /// Reason code: `fifo`, `socket`, `device`, `unreadable`, `vanished`, ….
    pub reason: String,
}
