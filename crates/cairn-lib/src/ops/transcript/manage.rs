//! `cairn transcript list` and `delete NAME`.

use std::path::PathBuf;

use cairn_transcript::TranscriptSummary;
use serde::{Deserialize, Serialize};

use super::{KIND, NAMES_LOCK, summary_of};
use crate::error::Result;
use crate::ops::resolve::SessionChoice;
use crate::snapshot::Snapshot;
use crate::store::Store;

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

/// Which transcript snapshot to delete.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct TranscriptDeleteOptions {
    /// The transcript snapshot: a name, an id or a unique id prefix.
    pub name: String,
    /// The cairn session to delete it from.
    #[serde(default)]
    pub session: SessionChoice,
}

/// The snapshot that was deleted.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptDeleteResult {
    /// Its record, as it was.
    pub removed: Snapshot,
}

impl Store {
    /// Lists the transcript snapshots of a session with a summary of each.
    pub fn transcript_list(&self, session: &SessionChoice) -> Result<TranscriptList> {
        let resolved = self.resolve_session(session)?;
        let snapshots = self
            .list_kind(KIND, &SessionChoice::call(Some(resolved.id.to_string())))?
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
    pub fn transcript_delete(&self, options: &TranscriptDeleteOptions) -> Result<TranscriptDeleteResult> {
        let session = self.resolve_session(&options.session)?;
        let _names = self.lock_target(NAMES_LOCK, "a transcript delete")?;
        let snapshot = self.find_transcript(&session, &options.name)?;
        self.catalog.remove_membership(session.id, snapshot.id)?;
        Ok(TranscriptDeleteResult { removed: snapshot })
    }
}
