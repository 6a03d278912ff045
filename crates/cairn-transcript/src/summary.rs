//! A short description of an extracted path, for listings.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ActivePath, Format};
use crate::preview::describe;

/// What a listing shows about one transcript snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptSummary {
    /// Which agent wrote it.
    pub format: Format,
    /// How many entries with an id are on the path.
    pub entry_count: usize,
    /// The start of the first user message on the path, if there is one.
    pub first_user_message: Option<String>,
    /// The id of the leaf entry.
    pub leaf_id: Option<String>,
    /// The session id (Pi header `id`, Claude Code `sessionId` of the leaf).
    pub session_id: Option<String>,
    /// The working directory recorded in the transcript.
    pub cwd: Option<String>,
}

impl ActivePath {
    /// Summarises the path for a listing.
    pub fn summary(&self) -> TranscriptSummary {
        let first_user_message = self
            .entries
            .iter()
            .filter(|e| e.id.is_some())
            .map(|e| describe(self.format, e))
            .find(|(role, preview)| role == "user" && !preview.is_empty())
            .map(|(_, preview)| preview);
        // Pi keeps both in the header; Claude Code repeats them on every entry, so the
        // leaf's (the last entry that has them) reflect the session as it was saved.
        let fields_from = match self.format {
            Format::Pi | Format::Gemini => self.header.iter().collect::<Vec<_>>(),
            Format::Claude => self.entries.iter().rev().map(|e| &e.text).collect(),
        };
        let (id_key, cwd_key) = match self.format {
            Format::Pi => ("id", "cwd"),
            Format::Claude | Format::Gemini => ("sessionId", "cwd"),
        };
        TranscriptSummary {
            format: self.format,
            entry_count: self.entries.iter().filter(|e| e.id.is_some()).count(),
            first_user_message,
            leaf_id: self.leaf_id().map(str::to_owned),
            session_id: first_string(&fields_from, id_key),
            cwd: first_string(&fields_from, cwd_key),
        }
    }
}

fn first_string(lines: &[&String], key: &str) -> Option<String> {
    lines.iter().find_map(|text| {
        let value: Value = serde_json::from_str(text).ok()?;
        value.get(key)?.as_str().map(str::to_owned)
    })
}
