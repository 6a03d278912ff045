//! The shapes shared by every part of the crate: the agent format, an entry, an extracted path.

use serde::{Deserialize, Serialize};

/// Which agent wrote a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// A Pi coding agent session file (`~/.pi/agent/sessions/...`).
    Pi,
    /// A Claude Code transcript (`~/.claude/projects/...`).
    Claude,
    /// A Gemini CLI session file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`).
    Gemini,
    /// A Codex CLI rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
}

impl Format {
    /// The lowercase name used in output (`pi`, `claude`, `gemini`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Pi => "pi",
            Format::Claude => "claude",
            Format::Gemini => "gemini",
            Format::Codex => "codex",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of a transcript after the Pi header, with its original text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// 1-based line number in the file it was read from.
    pub line: usize,
    /// The entry id (`id` for Pi, `uuid` for Claude Code). For Pi version 1 files, which have
    /// no ids, this is the id assigned on load. `None` for Claude Code lines that carry no
    /// `uuid` (`summary`, `file-history-snapshot`, ...).
    pub id: Option<String>,
    /// The parent this entry hangs from on the tree, `None` for a root. For Claude Code a null
    /// `parentUuid` falls back to `logicalParentUuid` (set across compaction boundaries) when
    /// that entry is in the file.
    pub parent_id: Option<String>,
    /// The entry's `type` field (`message`, `compaction`, `user`, `summary`, ...).
    pub kind: String,
    /// Whether Claude Code marked the entry `isSidechain: true` (a subagent's conversation).
    pub sidechain: bool,
    /// The line exactly as it was read.
    pub text: String,
}

/// The root-to-leaf path of a transcript: what a snapshot of a conversation holds.
///
/// Only the branch that ends at the leaf is kept; other branches are left out. Entries keep
/// their original text, so [`ActivePath::document`] gives back lines byte-for-byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivePath {
    /// The file (or name) the path was read from; used as `parentSession` when it is loaded.
    pub source: String,
    /// Which agent wrote it.
    pub format: Format,
    /// Pi session format version of the source (1, 2 or 3); `None` for Claude Code.
    pub pi_version: Option<u32>,
    /// The Pi header line, exactly as read; `None` for Claude Code.
    pub header: Option<String>,
    /// The entries from root to leaf. For Claude Code, lines without a `uuid` that belong to
    /// the kept path are placed after the path entry that preceded them in the file.
    pub entries: Vec<Entry>,
}

impl ActivePath {
    /// The id of the last entry with an id: the leaf the agent resumes from.
    pub fn leaf_id(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| e.id.as_deref())
    }

    /// The snapshot document: the header (Pi) and the path's lines in root-to-leaf order,
    /// one per line, each ending with a newline. It parses again as the same format.
    pub fn document(&self) -> String {
        let mut out = String::new();
        for line in self.header.iter().chain(self.entries.iter().map(|e| &e.text)) {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}
