//! `cairn transcript list` and `delete NAME`.

use std::path::PathBuf;

use cairn_transcript::TranscriptSummary;
use serde::{Deserialize, Serialize};

use super::{KIND, NAMES_LOCK, summary_of};
use crate::Repository;
use crate::error::Result;
use crate::ops::resolve::CallContext;
use crate::snapshot::Snapshot;

/// The transcript snapshots of a session, and where they are kept.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptList {
    /// The store that holds them.
    pub store: PathBuf,
    /// The cairn session listed.
    pub session: String,
    /// The snapshots, oldest first.
    pub snapshots: Vec<TranscriptListEntry>,
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

impl Repository {
    /// Lists the transcript snapshots of a session with a summary of each.
    pub fn transcript_list(
        &self,
        options: &TranscriptListOptions,
        context: &CallContext,
    ) -> Result<TranscriptList> {
        let resolved = self.call_session(options.session.as_deref(), context)?;
        let snapshots = self
            .list_kind(KIND, &resolved)?
            .into_iter()
            .map(|snapshot| TranscriptListEntry {
                file: snapshot.target.trim_start_matches("transcript:").to_owned(),
                summary: summary_of(&snapshot),
                snapshot,
            })
            .collect();
        Ok(TranscriptList { store: self.root().to_path_buf(), session: resolved.name, snapshots })
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
    fn remove_fork_file(&self, session: &crate::Session, snapshot: &Snapshot) -> Result<Option<PathBuf>> {
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
            Err(e) => Err(crate::error::Error::io("remove the fork copy", &file, e)),
        }
    }
}
