//! `cairn diff A [B]` of transcript snapshots: the entries one path adds to or drops from the
//! other, with their roles and a preview of each.

use std::path::PathBuf;

use cairn_transcript::{Transcript, TranscriptDiff, diff_paths};
use serde::{Deserialize, Serialize};

use super::transcript_error;
use crate::Repository;
use crate::error::Result;
use crate::ops::diff::{DiffResult, DiffSummary};
use crate::ops::resolve::CallContext;
use crate::session::SessionRef;
use crate::snapshot::Snapshot;

/// What to compare.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct TranscriptDiffOptions {
    /// The older side: a transcript snapshot name, id or unique id prefix.
    pub from: String,
    /// The newer side; `None` compares with the session file the older side was saved from,
    /// as it is now.
    pub to: Option<String>,
    /// The cairn session to look the snapshots up in.
    pub session: Option<String>,
}

/// How two transcript paths differ.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TranscriptDiffResult {
    /// The older snapshot.
    pub from: Snapshot,
    /// The newer snapshot, absent when compared with the live file.
    pub to: Option<Snapshot>,
    /// The live file compared with, when `to` is absent.
    pub live_file: Option<PathBuf>,
    /// Entries added and removed on the path, and how many both hold.
    #[serde(flatten)]
    #[schemars(with = "serde_json::Value")]
    pub changes: TranscriptDiff,
}

impl Repository {
    /// Compares two transcript snapshots, or one with the live file it was saved from.
    pub fn transcript_diff(
        &self,
        options: &TranscriptDiffOptions,
        context: &CallContext,
    ) -> Result<TranscriptDiffResult> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let from = self.find_transcript(&session, &options.from)?;
        self.transcript_diff_from(&session, from, options.to.as_deref())
    }

    /// The diff once the older side is resolved; `Repository::diff` enters here for transcripts.
    pub(crate) fn transcript_diff_from(
        &self,
        session: &SessionRef,
        from: Snapshot,
        to: Option<&str>,
    ) -> Result<TranscriptDiffResult> {
        let old = self.transcript_path(&from)?;
        let (to, live_file, new) = match to {
            Some(reference) => {
                let to = self.find_transcript(session, reference)?;
                let new = self.transcript_path(&to)?;
                (Some(to), None, new)
            }
            None => {
                let file = PathBuf::from(from.target.trim_start_matches("transcript:"));
                let live = Transcript::read_as_agent(&file).map_err(transcript_error)?.active_path();
                (None, Some(file), live)
            }
        };
        Ok(TranscriptDiffResult { changes: diff_paths(&old, &new), from, to, live_file })
    }

    /// `Repository::diff` of a transcript snapshot: the same comparison in the generic result, with
    /// the entries in [`DiffResult::transcript`].
    pub(crate) fn diff_transcript_generic(
        &self,
        session: &SessionRef,
        from: Snapshot,
        to: Option<&str>,
    ) -> Result<DiffResult> {
        let result = self.transcript_diff_from(session, from, to)?;
        let changes = result.changes;
        Ok(DiffResult {
            target: result.from.target.clone(),
            summary: DiffSummary {
                added: changes.added.len() as u64,
                removed: changes.removed.len() as u64,
                modified: 0,
                unchanged: changes.unchanged as u64,
            },
            from: result.from,
            to: result.to,
            entries: Vec::new(),
            trees_read: 0,
            transcript: Some(changes),
        })
    }
}
