//! Secret-shaped strings in a transcript: which entries hold them (reported when a transcript
//! is saved), and the document with each replaced by a marker (for a redacted export).
//!
//! A transcript is kept exactly as the agent wrote it, secrets included, because loading it
//! back must give the agent the same conversation; what leaves the store can be redacted.

use serde::{Deserialize, Serialize};

/// One entry of a transcript that holds secret-shaped strings (never the strings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TranscriptSecret {
    /// The entry's line in the saved path, from 1.
    pub line: u64,
    /// The entry's id (`id` for Pi, `uuid` for Claude Code), when it has one.
    pub entry: Option<String>,
    /// The rules that matched, each once: `github-token`, `private-key`, ….
    pub rules: Vec<String>,
}

/// The entries of `document` (one JSON entry a line) that hold secret-shaped strings.
pub(crate) fn secret_entries(document: &str) -> Vec<TranscriptSecret> {
    let mut out = Vec::new();
    for (i, line) in document.lines().enumerate() {
        let found = crate::secrets::find_all(line.as_bytes());
        if found.is_empty() {
            continue;
        }
        let mut rules: Vec<String> = found.iter().map(|f| f.rule.to_owned()).collect();
        rules.dedup();
        let entry = serde_json::from_str::<serde_json::Value>(line).ok().and_then(|v| {
            ["id", "uuid"].iter().find_map(|k| v.get(k).and_then(|id| id.as_str()).map(str::to_owned))
        });
        out.push(TranscriptSecret { line: i as u64 + 1, entry, rules });
    }
    out
}

/// `document` with every secret-shaped string replaced by `[REDACTED:rule]`. The markers hold
/// no quote or backslash, so every JSON line stays valid.
pub(crate) fn redact(document: &str) -> String {
    crate::secrets::redact(document).0
}
