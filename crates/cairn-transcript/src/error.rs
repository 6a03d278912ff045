//! Errors of this crate.
//!
//! Rules for every message here:
//! - one sentence that says what is wrong and what the reader can do about it;
//! - a problem inside a transcript names the file and the 1-based line number;
//! - an I/O problem names the path it happened on.

use std::path::PathBuf;

/// Everything that can go wrong while reading, checking or writing a transcript.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// A file or directory could not be read, created or written.
    #[error("cannot {action} {}: {source}; check that the path exists and is accessible", path.display())]
    Io {
        /// What was being done ("read", "create directory", ...).
        action: &'static str,
        /// The path the operation was on.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The file holds no JSON lines at all.
    #[error("{file} is empty; a transcript needs at least a header or one entry")]
    Empty {
        /// The file (or name) that was read.
        file: String,
    },

    /// A line is not a JSON object.
    #[error(
        "{file} line {line} is not valid JSON ({reason}); repair or remove that line, or read the file as the agent does, which skips it"
    )]
    Malformed {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What the JSON parser said.
        reason: String,
    },

    /// The content is neither a Pi session nor a Claude Code transcript.
    #[error(
        "{file} line {line} is neither a Pi session header nor a Claude Code entry; pass a Pi session file or a Claude Code transcript"
    )]
    UnknownFormat {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
    },

    /// A Pi header names a format version this crate does not know.
    #[error(
        "{file} line {line} declares Pi session version {version}, but only versions 1, 2 and 3 are understood; upgrade cairn"
    )]
    UnsupportedVersion {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The version found.
        version: String,
    },

    /// A Pi header lacks its session id.
    #[error("{file} line {line} is a Pi session header without a string \"id\"; the file is damaged")]
    HeaderWithoutId {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
    },

    /// A second Pi session header appears after the first line.
    #[error(
        "{file} line {line} is a second session header; a Pi session file has exactly one, on its first line"
    )]
    SecondHeader {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
    },

    /// An entry has no id although the format requires one.
    #[error("{file} line {line} has no \"{field}\" string; every entry of this format needs one")]
    MissingId {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The id field that is missing (`id` or `uuid`).
        field: &'static str,
    },

    /// Two different entries use the same id.
    #[error("{file} line {line} reuses id {id} already used on line {first_line}; entry ids must be unique")]
    DuplicateId {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number of the second use.
        line: usize,
        /// 1-based line number of the first use.
        first_line: usize,
        /// The id.
        id: String,
    },

    /// An entry names a parent that is not in the file.
    #[error(
        "{file} line {line} names parent {parent}, which is not in the file; the transcript is incomplete"
    )]
    UnknownParent {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The parent id that was not found.
        parent: String,
    },

    /// Following parent links from an entry comes back to it.
    #[error(
        "{file} line {line} is part of a cycle in the parent links (entry {id}); the transcript is damaged"
    )]
    Cycle {
        /// The file (or name) that was read.
        file: String,
        /// 1-based line number of an entry on the cycle.
        line: usize,
        /// The id of that entry.
        id: String,
    },

    /// A Claude Code transcript has no main-chain entry to take as the leaf.
    #[error(
        "{file} is a subagent's transcript: every entry is on a sidechain; save the session that started the subagent, which keeps this file with it"
    )]
    NoConversation {
        /// The file (or name) that was read.
        file: String,
    },

    /// A Claude Code file that holds only `summary` lines (titles of sessions), no entries.
    #[error(
        "{file} holds only {count} summary line(s), the titles Claude Code keeps for sessions, and no conversation; pass the session's own transcript"
    )]
    OnlySummaries {
        /// The file (or name) that was read.
        file: String,
        /// How many summary lines it holds.
        count: usize,
    },

    /// Text that should be a session was refused when written back; nothing was written.
    #[error("refusing to write {}: the produced session does not parse again ({reason}); nothing was written", path.display())]
    WouldBeInvalid {
        /// Where the file would have gone.
        path: PathBuf,
        /// Why the produced text was refused.
        reason: String,
    },

    /// A Gemini CLI session was to be loaded without Gemini CLI's directory.
    #[error("a Gemini CLI session is loaded into Gemini CLI's own directory; pass that directory to load it")]
    GeminiDirNeeded,

    /// A Codex CLI rollout was to be loaded without Codex CLI's home directory.
    #[error(
        "a Codex CLI session is loaded into Codex CLI's own home (CODEX_HOME, by default ~/.codex); pass that directory to load it"
    )]
    CodexDirNeeded,

    /// The path, as cut, holds no prompt: the turn began the conversation. Nothing is written.
    #[error(
        "the conversation from {file} holds no prompt before this point, so there is nothing to resume; nothing was written"
    )]
    NothingToResume {
        /// The file (or name) the path was read from.
        file: String,
    },

    /// The destination of an export exists and overwriting was not asked for.
    #[error("{} already exists; choose another path or allow overwriting", path.display())]
    Exists {
        /// The existing path.
        path: PathBuf,
    },
}

/// Result type of this crate.
pub type Result<T, E = TranscriptError> = std::result::Result<T, E>;

impl TranscriptError {
    /// Wraps an I/O error with the action and path it happened on.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TranscriptError::Io { action, path: path.into(), source }
    }
}
