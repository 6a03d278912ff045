//! A short description of an extracted path, for listings.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ActivePath, Format};
use crate::preview::{claude_prompt, describe, shorten};

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
        let first_user_message =
            self.entries.iter().filter(|e| e.id.is_some()).find_map(|e| first_prompt(self.format, e));
        // Pi keeps both in the header; Claude Code repeats them on every entry, so the
        // leaf's (the last entry that has them) reflect the session as it was saved.
        let fields_from = match self.format {
            Format::Pi | Format::Gemini | Format::Codex => self.header.iter().collect::<Vec<_>>(),
            Format::Claude => self.entries.iter().rev().map(|e| &e.text).collect(),
        };
        let (id_key, cwd_key) = match self.format {
            Format::Pi => ("id", "cwd"),
            Format::Claude | Format::Gemini => ("sessionId", "cwd"),
            // Codex CLI's `session_meta` keeps them in its payload.
            Format::Codex => ("/payload/id", "/payload/cwd"),
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
        let found = if key.starts_with('/') { value.pointer(key) } else { value.get(key) };
        found?.as_str().map(str::to_owned)
    })
}

/// The preview of `entry` when it is a prompt the user typed. Claude Code also writes user
/// entries the user never typed: `isMeta` ones (the "Caveat: The messages below were
/// generated…" preamble of a local command), command echoes, and IDE context wrapped in
/// `<ide_selection>` / `<ide_opened_file>` beside the real prompt. Those are passed over.
fn first_prompt(format: Format, entry: &crate::model::Entry) -> Option<String> {
    match format {
        Format::Pi | Format::Gemini | Format::Codex => {
            let (role, preview) = describe(format, entry);
            (role == "user" && !preview.is_empty()).then_some(preview)
        }
        Format::Claude => {
            if entry.kind != "user" {
                return None;
            }
            let object: Value = serde_json::from_str(&entry.text).ok()?;
            if object.get("isMeta").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            let text = claude_prompt(object.get("message")?.get("content")?)?;
            Some(shorten(&text))
        }
    }
}
