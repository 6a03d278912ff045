//! Comparing two extracted paths entry by entry.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::model::{ActivePath, Entry};
use crate::preview::describe;

/// How two extracted paths differ, by entry id.
///
/// Lines without an id (Claude Code `summary` and `file-history-snapshot` lines) are
/// bookkeeping rather than conversation and are not compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptDiff {
    /// Entries on the new path only, in path order.
    pub added: Vec<DiffEntry>,
    /// Entries on the old path only, in path order.
    pub removed: Vec<DiffEntry>,
    /// How many entries both paths hold.
    pub unchanged: usize,
}

/// One entry that is on only one side of a [`TranscriptDiff`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffEntry {
    /// The entry id.
    pub id: String,
    /// What the entry is: `user`, `assistant`, `tool_result`, `compaction`, `model_change`, ...
    pub role: String,
    /// The start of its text on one line (text blocks joined, tool calls by tool name).
    pub preview: String,
}

/// Compares `old` with `new`: what `new` adds, what it no longer has, and how much is shared.
pub fn diff_paths(old: &ActivePath, new: &ActivePath) -> TranscriptDiff {
    let old_ids = ids_of(old);
    let new_ids = ids_of(new);
    TranscriptDiff {
        added: only_in(new, &old_ids),
        removed: only_in(old, &new_ids),
        unchanged: new_ids.intersection(&old_ids).count(),
    }
}

fn ids_of(path: &ActivePath) -> HashSet<&str> {
    path.entries.iter().filter_map(|e| e.id.as_deref()).collect()
}

fn only_in(path: &ActivePath, other: &HashSet<&str>) -> Vec<DiffEntry> {
    path.entries
        .iter()
        .filter_map(|entry| {
            let id = entry.id.as_deref()?;
            (!other.contains(id)).then(|| diff_entry(path, entry, id))
        })
        .collect()
}

fn diff_entry(path: &ActivePath, entry: &Entry, id: &str) -> DiffEntry {
    let (role, preview) = describe(path.format, entry);
    DiffEntry { id: id.to_owned(), role, preview }
}
