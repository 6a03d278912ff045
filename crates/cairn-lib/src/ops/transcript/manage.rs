//! `cairn transcript list` and `delete NAME`.
//!
//! A listing also shows the snapshot files the Pi session-snapshot extension wrote itself in
//! `<Pi agent dir>/pi-session-snapshot/` (before the user switched to cairn): the pi profile
//! restores them by name and refuses to save over them without `force`, so the user sees them
//! before either happens. The `pi --fork` copies cairn writes there are not listed again.

use std::path::PathBuf;

use cairn_transcript::TranscriptSummary;
use serde::{Deserialize, Serialize};

use super::{AgentPlaces, Details, KIND, NAMES_LOCK, summary_of};
use crate::Repository;
use crate::error::{Error, IoContext, Result};
use crate::name::validate_name;
use crate::ops::pi_settings::PI_SETTINGS_NAMESPACE;
use crate::ops::resolve::CallContext;
use crate::snapshot::Snapshot;

/// The transcript snapshots of a session, and where they are kept.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptList {
    /// The store that holds them.
    pub store: PathBuf,
    /// False when there is no store there yet (a listing makes none); absent otherwise.
    #[serde(skip_serializing_if = "is_true")]
    pub store_exists: bool,
    /// The cairn session listed (`None` when there is no store).
    pub session: Option<String>,
    /// The snapshots, oldest first.
    pub snapshots: Vec<TranscriptListEntry>,
    /// The snapshot files the Pi extension wrote itself, by name (absent when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extension_files: Vec<ExtensionFile>,
}

fn is_true(value: &bool) -> bool {
    *value
}

/// A snapshot file the Pi session-snapshot extension wrote itself.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ExtensionFile {
    /// Its snapshot name (the file's name without `.jsonl`).
    pub name: String,
    /// The file.
    pub file: PathBuf,
    /// True when a transcript snapshot of the store holds the same name: `cairn transcript
    /// load` and the pi profile's `snapshot_restore` take that one. Otherwise the pi profile
    /// restores the file (taking it into the store first).
    pub in_store: bool,
}

/// One transcript snapshot in a listing.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptListEntry {
    /// The snapshot record.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// The session file it was saved from.
    pub file: String,
    /// What its path holds (absent only for a record written by another tool).
    #[schemars(with = "Option<serde_json::Value>")]
    pub summary: Option<TranscriptSummary>,
}

/// Whose transcript snapshots to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct TranscriptListOptions {
    /// The session to list (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// Where Pi keeps its files, to list the extension's own snapshot files; `None` leaves
    /// them out.
    #[cfg_attr(feature = "clap", arg(skip))]
    #[serde(skip)]
    pub places: Option<AgentPlaces>,
}

/// Which transcript snapshot to delete.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct TranscriptDeleteOptions {
    /// The transcript snapshot: a name, an id or a unique id prefix.
    pub name: String,
    /// The session to delete it from (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// The snapshot that was deleted.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptDeleteResult {
    /// Its record, as it was.
    pub removed: Snapshot,
    /// The `pi --fork` copy its save wrote, now removed with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork_file_removed: Option<PathBuf>,
}

impl TranscriptList {
    /// The listing where there is no store yet: no snapshots, and the extension's files when
    /// `places` is given. Nothing is created.
    pub fn without_store(store: PathBuf, places: Option<&AgentPlaces>) -> Result<Self> {
        let extension_files = match places {
            Some(places) => extension_files(places, &[])?,
            None => Vec::new(),
        };
        Ok(Self { store, store_exists: false, session: None, snapshots: Vec::new(), extension_files })
    }
}

/// The snapshot files in the extension's folder that no snapshot of `listed` wrote as its
/// `pi --fork` copy, by name; a folder that does not exist holds none.
fn extension_files(places: &AgentPlaces, listed: &[TranscriptListEntry]) -> Result<Vec<ExtensionFile>> {
    let folder = places.pi_agent_dir().join(PI_SETTINGS_NAMESPACE);
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", &folder, e)),
    };
    let fork_copies: Vec<PathBuf> = listed
        .iter()
        .filter_map(|e| serde_json::from_value::<Details>(e.snapshot.details.clone()).ok()?.fork_file)
        .collect();
    let mut out = Vec::new();
    for entry in entries {
        let file = entry.at("list", &folder)?.path();
        let Some(name) = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl"))
        else {
            continue;
        };
        // The extension names its files by the same rule; anything else there is not one.
        if validate_name("snapshot", name).is_err() || !file.is_file() || fork_copies.contains(&file) {
            continue;
        }
        let in_store = listed.iter().any(|e| e.snapshot.name.as_deref() == Some(name));
        out.push(ExtensionFile { name: name.to_owned(), file, in_store });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

impl Repository {
    /// Lists the transcript snapshots of a session with a summary of each.
    pub fn transcript_list(
        &self,
        options: &TranscriptListOptions,
        context: &CallContext,
    ) -> Result<TranscriptList> {
        let resolved = self.call_session(options.session.as_deref(), context)?;
        let snapshots: Vec<TranscriptListEntry> = self
            .list_kind(KIND, &resolved)?
            .into_iter()
            .map(|snapshot| TranscriptListEntry {
                file: snapshot.target.trim_start_matches("transcript:").to_owned(),
                summary: summary_of(&snapshot),
                snapshot,
            })
            .collect();
        let extension_files = match &options.places {
            Some(places) => extension_files(places, &snapshots)?,
            None => Vec::new(),
        };
        Ok(TranscriptList {
            store: self.root().to_path_buf(),
            store_exists: true,
            session: Some(resolved.name),
            snapshots,
            extension_files,
        })
    }

    /// Removes a transcript snapshot from the session; its data is reclaimed by `cairn gc`.
    pub fn transcript_delete(
        &self,
        options: &TranscriptDeleteOptions,
        context: &CallContext,
    ) -> Result<TranscriptDeleteResult> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let _names = self.lock_target(NAMES_LOCK, "a transcript delete")?;
        let snapshot = self.find_transcript(&session, &options.name)?;
        self.catalog().remove_membership(session.id, snapshot.id)?;
        let fork_file_removed = self.remove_fork_file(&session, &snapshot)?;
        Ok(TranscriptDeleteResult { removed: snapshot, fork_file_removed })
    }

    /// Removes the `pi --fork` copy `snapshot`'s save wrote, unless another snapshot of the
    /// session wrote the same file since.
    fn remove_fork_file(&self, session: &crate::SessionRef, snapshot: &Snapshot) -> Result<Option<PathBuf>> {
        let fork_file = |s: &Snapshot| {
            serde_json::from_value::<super::Details>(s.details.clone()).ok().and_then(|d| d.fork_file)
        };
        let Some(file) = fork_file(snapshot) else { return Ok(None) };
        let still_used = self
            .list_kind(KIND, session)?
            .iter()
            .any(|other| other.id != snapshot.id && fork_file(other).as_ref() == Some(&file));
        if still_used {
            return Ok(None);
        }
        match std::fs::remove_file(&file) {
            Ok(()) => Ok(Some(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("remove the fork copy", &file, e)),
        }
    }
}
