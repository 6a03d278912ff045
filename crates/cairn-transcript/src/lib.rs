//! Agent conversation transcripts: Pi session files, Claude Code transcripts (JSONL), Gemini
//! CLI session files and Codex CLI rollout files.
//!
//! This crate reads a transcript and tells its format from the content, checks it (every line
//! is JSON, every entry has an id, every parent exists, no cycles), extracts the root-to-leaf
//! path the agent is on, compares two extracted paths, summarises them for listings, and
//! writes a saved path back as a new session the agent opens normally. Every line keeps its
//! original text: nothing is reformatted on the way through, except where an older Pi format
//! has to be brought up to version 3 on writing (see [`load_session`]).
//!
//! It is pure and synchronous, knows nothing of cairn's store, and reads no environment
//! variables: callers pass the agents' directories in ([`AgentDirs`]).

mod claude;
mod codex;
mod codex_write;
mod diff;
mod edit;
mod error;
mod file_history;
mod fsio;
mod gemini;
mod gemini_write;
mod graph;
mod jsonl;
mod locate;
mod migrate;
mod model;
mod note;
mod pending;
mod pi;
mod preview;
mod prompt;
mod remap;
mod subagents;
mod summary;
mod transcript;
mod write;

pub use codex_write::{codex_sessions_dir, load_codex_session};
pub use diff::{DiffEntry, TranscriptDiff, diff_paths};
pub use error::{Result, TranscriptError};
pub use gemini_write::{gemini_chats_dir, gemini_project_hash, load_gemini_session};
pub use jsonl::SkippedLine;
pub use locate::{AgentDirs, SessionFile, claude_dir_name, list_sessions, newest_session, pi_dir_name};
pub use model::{ActivePath, Entry, Format};
pub use note::RestoreNote;
pub use prompt::user_prompt_text;
pub use remap::remap_root_line;
pub use subagents::{ATTACHED, AttachedFile, Subagents};
pub use summary::TranscriptSummary;
pub use transcript::Transcript;
pub use write::{LoadOptions, WrittenSession, export_session, load_session};
